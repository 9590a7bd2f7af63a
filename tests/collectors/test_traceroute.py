"""Route collector: tracepath / traceroute / pScheduler trace parsing, run_test.

Inputs are real output where it could be captured (loopback on the
development VM, Debian 12: iputils-tracepath 20221126, traceroute 2.1.2; a
real 8-hop traceroute kept in a pScheduler archiver document), and otherwise
lines printed with the tools' own format strings (iputils tracepath.c,
traceroute.c print_probe) for multi-hop paths that cannot be traced here.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime

import pytest

from collectors import traceroute
from collectors.runner import EXIT_NOT_FOUND, FakeCommandRunner, SubprocessRunner, completed
from tests.conftest import shared_fixture

# Real tool output, public third-party data kept beside the repository (../shared/fixtures/toolout/SOURCES.md).
TOOLOUT = ("fixtures", "toolout")
NOW = datetime(2026, 3, 1, 11, 2, tzinfo=UTC)

# --- Real captures: `tracepath -n 127.0.0.1`, `-l 9000`, `-n -b`, `tracepath -n ::1` ---------------
TRACEPATH_LOOPBACK = (
    " 1:  127.0.0.1                                             0.344ms reached\n"
    "     Resume: pmtu 65535 hops 1 back 1 \n"
)
TRACEPATH_LOOPBACK_9000 = (
    " 1:  127.0.0.1                                             0.249ms reached\n"
    "     Resume: pmtu 9000 hops 1 back 1 \n"
)
TRACEPATH_BOTH_NAMES = (
    " 1:  127.0.0.1 (localhost)                                 0.198ms reached\n"
    "     Resume: pmtu 65535 hops 1 back 1 \n"
)
TRACEPATH_IPV6_LOOPBACK = (
    " 1?: [LOCALHOST]                        0.242ms pmtu 65536\n"
    " 1:  ::1                                                   0.187ms reached\n"
    " 1:  ::1                                                   0.007ms reached\n"
    "     Resume: pmtu 65536 hops 1 back 1 \n"
)
# --- Real captures: `traceroute -n 127.0.0.1`, `traceroute -n -q 1 -m 3 127.0.0.2` ------------------
TRACEROUTE_LOOPBACK = (
    "traceroute to 127.0.0.1 (127.0.0.1), 30 hops max, 60 byte packets\n 1  127.0.0.1  0.062 ms  0.003 ms  0.023 ms\n"
)
TRACEROUTE_ONE_QUERY = "traceroute to 127.0.0.2 (127.0.0.2), 3 hops max, 60 byte packets\n 1  127.0.0.2  0.143 ms\n"


def tracepath_hop(ttl: int, host: str, ms: float, tail: str, *, guess: bool = False) -> str:
    """One tracepath line exactly as iputils prints it.

    tracepath.c: ``"%2d:  "`` (or ``"%2d?: "``), print_host() pads the host to
    HOST_COLUMN_SIZE (52), ``"%3lld.%03ldms "``, then the reply kind.
    """
    prefix = f"{ttl:2d}?: " if guess else f"{ttl:2d}:  "
    whole_ms, fraction = divmod(round(ms * 1000), 1000)
    return f"{prefix}{host.ljust(52)}{whole_ms:3d}.{fraction:03d}ms {tail}\n"


# A jumbo-frame site whose path drops to 1500 at hop 2, one silent router, an asymmetric return path.
TRACEPATH_WAN = (
    f" 1?: {'[LOCALHOST]':<32}   0.031ms pmtu 9000\n"
    + tracepath_hop(1, "192.0.2.1", 0.412, "")
    + tracepath_hop(1, "192.0.2.1", 0.388, "")
    + tracepath_hop(2, "198.51.100.1", 1.021, "pmtu 1500")
    + tracepath_hop(2, "198.51.100.1", 1.130, "")
    + " 3:  no reply\n"
    + tracepath_hop(4, "203.0.113.9", 11.21, "asymm  5 ")
    + tracepath_hop(5, "203.0.113.20", 11.902, "reached")
    + "     Resume: pmtu 1500 hops 5 back 5 \n"
)


def fixture(name: str) -> str:
    return shared_fixture(*TOOLOUT, name).read_text()


def real_multihop_traceroute() -> str:
    """The traceroute output pScheduler kept in its diags (tool traceroute, -q 1, real Internet path)."""
    envelope = json.loads(fixture("pscheduler-archiver-http-trace-1.json"))
    return envelope["run"]["result-full"][0]["diags"]


# ---------------------------------------------------------------------------
# tracepath
# ---------------------------------------------------------------------------


def test_tracepath_real_loopback_capture():
    result = traceroute.parse_tracepath(TRACEPATH_LOOPBACK)
    assert result.addresses == ["127.0.0.1"]
    assert result.pmtu_bytes == 65535
    assert result.reached is True
    assert result.hops[0].rtts_ms == (0.344,)
    assert result.hops_back == 1
    assert traceroute.parse_tracepath(TRACEPATH_LOOPBACK_9000).pmtu_bytes == 9000
    assert traceroute.parse_tracepath(TRACEPATH_BOTH_NAMES).addresses == ["127.0.0.1"]


def test_tracepath_localhost_line_is_not_a_hop_and_repeated_replies_merge():
    result = traceroute.parse_tracepath(TRACEPATH_IPV6_LOOPBACK)
    assert result.addresses == ["::1"]
    assert result.hops[0].rtts_ms == (0.187, 0.007)
    assert result.pmtu_bytes == 65536


def test_tracepath_wan_path_with_pmtu_drop_silent_hop_and_asymmetry():
    result = traceroute.parse_tracepath(TRACEPATH_WAN)
    assert result.addresses == ["192.0.2.1", "198.51.100.1", None, "203.0.113.9", "203.0.113.20"]
    assert result.pmtu_bytes == 1500
    assert result.reached is True
    assert result.destination == "203.0.113.20"
    assert result.hops[3].annotations == ("asymm 5",)
    assert result.hops[4].annotations == ("reached",)
    assert result.hops[1].rtts_ms == (1.021, 1.13)


def test_tracepath_cut_short_keeps_last_pmtu_and_is_not_reached():
    text = "".join(TRACEPATH_WAN.splitlines(keepends=True)[:4])
    result = traceroute.parse_tracepath(text)
    assert result.addresses == ["192.0.2.1", "198.51.100.1"]
    assert result.pmtu_bytes == 1500
    assert result.reached is False


def test_tracepath_too_many_hops():
    text = tracepath_hop(1, "192.0.2.1", 0.5, "") + " 2:  no reply\n     Too many hops: pmtu 1500\n"
    text += "     Resume: pmtu 1500 \n"
    result = traceroute.parse_tracepath(text)
    assert result.addresses == ["192.0.2.1", None]
    assert result.reached is False
    assert result.pmtu_bytes == 1500


def test_tracepath_rejects_empty_output():
    with pytest.raises(traceroute.TraceParseError):
        traceroute.parse_tracepath("tracepath: nosuchhost.invalid: Name or service not known\n")


# ---------------------------------------------------------------------------
# traceroute
# ---------------------------------------------------------------------------


def test_traceroute_real_loopback_capture():
    result = traceroute.parse_traceroute(TRACEROUTE_LOOPBACK)
    assert result.addresses == ["127.0.0.1"]
    assert result.hops[0].rtts_ms == (0.062, 0.003, 0.023)
    assert result.reached is True
    assert result.pmtu_bytes is None  # traceroute does not discover it
    assert traceroute.parse_traceroute(TRACEROUTE_ONE_QUERY).addresses == ["127.0.0.2"]


def test_traceroute_real_multihop_with_silent_hops():
    text = real_multihop_traceroute()
    assert text.startswith("traceroute -q 1 -4 -N 30 -n 1.1.1.1\n")  # pScheduler's command line first
    result = traceroute.parse_traceroute(text)
    assert result.addresses == ["192.168.1.1", None, None, None, None, None, None, "1.1.1.1"]
    assert result.hops[0].rtts_ms == (1.472,)
    assert result.hops[7].rtts_ms == (10.185,)
    assert result.destination == "1.1.1.1"
    assert result.reached is True


def test_traceroute_probe_formats():
    # traceroute.c print_probe(): " *" for no answer, the address only when it changes,
    # "  %.3f ms" per answer, then an ICMP annotation such as " !H".
    text = (
        "traceroute to 203.0.113.20 (203.0.113.20), 30 hops max, 60 byte packets\n"
        " 1  192.0.2.1  0.412 ms  0.388 ms  0.401 ms\n"
        " 2  * * *\n"
        " 3  198.51.100.9  10.123 ms * 198.51.100.10  10.456 ms\n"
        " 4  203.0.113.20  11.902 ms !H  11.870 ms !H *\n"
    )
    result = traceroute.parse_traceroute(text)
    assert result.addresses == ["192.0.2.1", None, "198.51.100.9", "203.0.113.20"]
    assert result.hops[2].addresses == ("198.51.100.9", "198.51.100.10")
    assert result.hops[2].rtts_ms == (10.123, 10.456)
    assert result.hops[3].annotations == ("!H", "!H")
    assert result.reached is True


def test_traceroute_with_names_and_fragmentation_needed():
    text = (
        "traceroute to fzk-dt01.example.org (203.0.113.20), 30 hops max, 9000 byte packets\n"
        " 1  gw.example.org (192.0.2.1)  0.412 ms  0.388 ms  0.401 ms\n"
        " 2  core.example.net (198.51.100.1)  1.021 ms !F-1500  1.130 ms !F-1500  1.100 ms !F-1500\n"
    )
    result = traceroute.parse_traceroute(text)
    assert result.addresses == ["192.0.2.1", "198.51.100.1"]
    assert result.pmtu_bytes == 1500
    assert result.reached is False


def test_traceroute_without_header_is_rejected():
    with pytest.raises(traceroute.TraceParseError):
        traceroute.parse_traceroute(" 1  192.0.2.1  0.4 ms\n")


# ---------------------------------------------------------------------------
# pScheduler
# ---------------------------------------------------------------------------


def test_pscheduler_trace_result():
    result = traceroute.parse_pscheduler_trace(fixture("pscheduler-trace-result-1.json"))
    assert result.addresses == [
        "10.0.2.2",
        "192.52.179.65",
        "206.196.177.29",
        "206.196.177.5",
        "198.71.45.8",
        "192.122.183.45",
        "198.108.22.98",
        "198.108.22.137",
        "192.122.200.45",
        "207.75.164.248",
    ]
    assert result.hops[0].rtts_ms == (0.2,)  # "PT0.0002S"
    assert result.hops[2].rtts_ms == (21.4,)
    assert result.hops[1].hostname == "dc-desk-wifi-rtr1.internet2.edu"
    assert result.hops[9].annotations == ("communication-administratively-prohibited",)
    assert result.pmtu_bytes is None
    assert result.reached is True


def test_pscheduler_archiver_envelope_with_silent_hops():
    envelope = json.loads(fixture("pscheduler-archiver-http-trace-1.json"))
    result = traceroute.parse_pscheduler_trace(envelope)
    assert result.addresses == ["192.168.1.1", None, None, None, None, None, None, "1.1.1.1"]
    # the same path as the traceroute text pScheduler kept in its diags
    assert result.addresses == traceroute.parse_traceroute(real_multihop_traceroute()).addresses
    with pytest.raises(traceroute.TraceParseError):
        traceroute.parse_pscheduler_trace({"succeeded": True})


# ---------------------------------------------------------------------------
# argv, config, run_test
# ---------------------------------------------------------------------------


def test_argv():
    assert traceroute.tracepath_argv("fzk-dt01") == ["tracepath", "-n", "-m", "30", "fzk-dt01"]
    assert traceroute.traceroute_argv("fzk-dt01", max_hops=20, queries=1, wait_s=1.5) == [
        "traceroute",
        "-n",
        "-q",
        "1",
        "-w",
        "1.5",
        "-m",
        "20",
        "fzk-dt01",
    ]
    with pytest.raises(ValueError):
        traceroute.TracerouteConfig(dst="FZK", host="h", tool="mtr")
    with pytest.raises(ValueError, match="max_hop"):
        traceroute.TracerouteConfig.from_mapping({"dst": "FZK", "host": "h", "max_hop": 3})


def test_run_test_tracepath_record():
    runner = FakeCommandRunner({"tracepath": completed(TRACEPATH_WAN, duration_s=4.2)})
    config = traceroute.TracerouteConfig(dst="FZK", host="203.0.113.20")
    (record,) = traceroute.run_test(runner, config, src_site="CERN", dst_site="FZK", now=NOW)
    assert record["type"] == "traceroute"
    assert (record["time"], record["src"], record["dst"]) == (NOW, "CERN", "FZK")
    assert record["hops"] == ["192.0.2.1", "198.51.100.1", None, "203.0.113.9", "203.0.113.20"]
    assert record["pmtu_bytes"] == 1500
    assert record["tool"] == "tracepath"
    assert record["reached"] is True
    assert record["hop_rtts_ms"] == [0.412, 1.021, None, 11.21, 11.902]
    assert record["hops_back"] == 5
    assert record["command"] == "tracepath -n -m 30 203.0.113.20"
    assert "error" not in record


def test_run_test_falls_back_to_traceroute_when_tracepath_is_missing():
    runner = FakeCommandRunner({"traceroute": completed(real_multihop_traceroute())}, missing_is_not_found=True)
    config = traceroute.TracerouteConfig(dst="CF", host="1.1.1.1")
    (record,) = traceroute.run_test(runner, config, src_site="HOME", dst_site="CF", now=NOW)
    assert runner.programs_called() == ["tracepath", "traceroute"]
    assert record["tool"] == "traceroute"
    assert record["hops"] == ["192.168.1.1", None, None, None, None, None, None, "1.1.1.1"]
    assert record["pmtu_bytes"] is None


def test_run_test_no_tool_installed():
    runner = FakeCommandRunner(missing_is_not_found=True)
    config = traceroute.TracerouteConfig(dst="FZK", host="h")
    (record,) = traceroute.run_test(runner, config, src_site="CERN", dst_site="FZK", now=NOW)
    assert record["error"].startswith("no route tool installed (tracepath / traceroute)")
    assert record["exit_code"] == EXIT_NOT_FOUND
    assert "hops" not in record


def test_run_test_tool_failure_is_an_error_record():
    # tracepath.c: error(1, 0, "%s: %s", destination, gai_strerror(status))
    stderr = "tracepath: nosuchhost.invalid: Name or service not known\n"
    runner = FakeCommandRunner({"tracepath": completed("", stderr, exit_code=1)})
    config = traceroute.TracerouteConfig(dst="FZK", host="nosuchhost.invalid")
    (record,) = traceroute.run_test(runner, config, src_site="CERN", dst_site="FZK", now=NOW)
    assert record["error"] == "tracepath: nosuchhost.invalid: Name or service not known"
    assert record["exit_code"] == 1


@pytest.mark.skipif(shutil.which("tracepath") is None, reason="tracepath not installed")
def test_run_test_real_tracepath_on_loopback():
    config = traceroute.TracerouteConfig(dst="LOOP", host="127.0.0.1", max_hops=3, timeout_s=30)
    (record,) = traceroute.run_test(SubprocessRunner(), config, src_site="HERE", dst_site="LOOP", now=NOW)
    assert "error" not in record, record
    assert record["hops"] == ["127.0.0.1"]
    assert record["reached"] is True
    assert record["pmtu_bytes"] >= 1280
