"""Numbers with units read the same on every page."""

import math

import pytest

from wanmon.dashboard.formatting import (
    format_bps,
    format_by_name,
    format_bytes,
    format_duration_s,
    format_fraction,
    format_percent,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [(906253068, "906 Mb/s"), (1e9, "1 Gb/s"), (27741089.7, "27.7 Mb/s"), (950, "950 b/s"), (None, "–"),
     (math.inf, "unlimited"), (math.nan, "–"), (2.84e10, "28.4 Gb/s")],
)
def test_format_bps(value, text):
    assert format_bps(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(4194304, "4 MiB"), (37.2e6, "37.2 MB"), (1225000.0000000002, "1.23 MB"), (8948, "8.95 kB"), (512, "512 B"),
     # 400 MB is 390625 KiB exactly: the decimal form, as its reverse direction's 400 MB reads
     (400_000_000, "400 MB"), (400 * 2**20, "400 MiB")],
)
def test_format_bytes(value, text):
    assert format_bytes(value) == text


@pytest.mark.parametrize(
    ("value", "text"), [(0.0397, "3.97 %"), (2.3e-05, "0.0023 %"), (0, "0"), (0.001, "0.1 %"), ("x", "–"),
                        (0.00671, "0.671 %"), (3.9e-06, "0.00039 %")]
)
def test_format_fraction(value, text):
    assert format_fraction(value) == text


def test_format_percent_and_duration():
    assert format_percent(0.906) == "91 %"
    assert format_duration_s(0.94) == "940 ms"
    assert format_duration_s(3834) == "63.9 min"
    assert format_duration_s(5.4e3 * 2) == "3 h"
    assert format_duration_s(30) == "30 s"


def test_format_by_name_uses_the_unit_suffix():
    assert format_by_name("mathis_ceiling_bps", 21679201.27) == "21.7 Mb/s"
    assert format_by_name("required_window_bytes", 2.9e6) == "2.9 MB"
    assert format_by_name("probe_loss_fraction", 0.0339726) == "3.4 %"
    assert format_by_name("rtt_ms", 11.6) == "11.6 ms"
    assert format_by_name("in_errors_per_s", 2.0) == "2/s"
    assert format_by_name("responsiveness_s", 0.9398) == "940 ms"
    assert format_by_name("loss_asymmetric", True) == "yes"
    assert format_by_name("reason", "loss") == "loss"
    assert format_by_name("score", 1.5) == "1.5"
    assert format_by_name("packets", 43800) == "43,800"
    # a loss needed for a target: 2.2e-9 is no "0"
    assert format_by_name("loss_needed_for_target", 2.2e-9) == "2.2e-07 %"
    assert format_by_name("score", 3e-9) == "3e-09"

