"""nuttcp collector: parser against real captured output, argv, run_test, runner.

Fixtures are real tool output (../shared/fixtures/toolout/SOURCES.md, beside the repository).
Expected numbers are the ones printed in those files, converted with nuttcp's
units: MB = 2**20 bytes, KB = 1024 bytes, Mbps = 10**6 bit/s.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors import nuttcp
from collectors.runner import (
    CommandResult,
    completed,
)
from tests.conftest import shared_fixture

# Real tool output, public third-party data kept beside the repository (../shared/fixtures/toolout/SOURCES.md).
TOOLOUT = ("fixtures", "toolout")
NOW = datetime(2026, 3, 1, 11, 0, tzinfo=UTC)
MIB = 1_048_576


def fixture(name: str) -> str:
    return shared_fixture(*TOOLOUT, name).read_text()


def version_output(version: str) -> CommandResult:
    """What `nuttcp -V` prints (checked against the Debian 6.1.2 binary: "nuttcp-6.1.2")."""
    return completed(f"nuttcp-{version}\n")


# ---------------------------------------------------------------------------
# parse(): summary figures of every fixture
# ---------------------------------------------------------------------------

# name -> (protocol, format, throughput_bps, transferred_bytes, duration_s, retransmits, rtt_ms, tx/rx cpu)
SUMMARIES = {
    "nuttcp-tcp-fparse-1.txt": ("tcp", "parse", 12_290_358_000.0, 7_680_425_984, 5.0, 77, 0.19, (95, 32)),
    "nuttcp-tcp-fparse-2.txt": ("tcp", "parse", 12_160_395_700.0, 7_598_833_664, 5.0, 72, 0.25, (95, 31)),
    "nuttcp-tcp-fparse-3.txt": ("tcp", "parse", 16_892_301_100.0, 10_557_063_168, 5.0, 175, 0.55, (91, 46)),
    "nuttcp-tcp-fparse-4.txt": ("tcp", "parse", 16_914_026_600.0, 6_344_474_624, 3.0, 16, 2.98, (63, 46)),
    "nuttcp-tcp-fparse-verbose-1.txt": ("tcp", "verbose", 16_355_910_200.0, 6_138_953_728, 3.0, 2, 0.065, (34, 60)),
    "nuttcp-tcp-human-1.txt": ("tcp", "brief", 13_426_458_700.0, 8_389_984_256, 5.0, 114, 0.13, (90, 31)),
    "nuttcp-tcp-human-2.txt": ("tcp", "brief", 11_807_124_300.0, 7_378_567_168, 5.0, 109, 0.10, (95, 30)),
    "nuttcp-tcp-human-3.txt": ("tcp", "brief", 16_373_134_300.0, 10_233_380_864, 5.0, 187, 0.25, (94, 42)),
    # 2197.0657 MiB = 2303790363.4432 bytes: rounded to the nearest byte.
    "nuttcp-tcp-human-pscheduler-1.txt": ("tcp", "brief", 1_842_379_000.0, 2_303_790_363, 10.0, 90, 0.50, (8, 90)),
    "nuttcp-tcp-human-pscheduler-2.txt": ("tcp", "brief", 56_798_700.0, 72_063_700, 10.15, 0, 4.79, (7, 6)),
    "nuttcp-tcp-verbose-1.txt": ("tcp", "verbose", 12_572_199_800.0, 4_713_349_120, 3.0, 70, 0.083, (94, 31)),
    "nuttcp-udp-fparse-1.txt": ("udp", "parse", 823_413_300.0, 514_334_707, 5.0, None, None, (98, 12)),
    "nuttcp-udp-fparse-2.txt": ("udp", "parse", 493_096_600.0, 308_101_094, 5.0, None, None, (99, 8)),
    "nuttcp-udp-human-1.txt": ("udp", "brief", 807_317_900.0, 504_373_235, 5.0, None, None, (98, 12)),
    "nuttcp-udp-human-2.txt": ("udp", "brief", 858_983_300.0, 536_625_126, 5.0, None, None, (99, 12)),
    "nuttcp-udp-human-3.txt": ("udp", "brief", 492_466_800.0, 307_650_521, 5.0, None, None, (93, 6)),
    "nuttcp-udp-human-pscheduler-1.txt": ("udp", "brief", 211_446_200.0, 264_302_599, 10.0, None, None, (99, 50)),
    # nuttcp 6.1.2: its retrans count is always 0 -> unknown
    "nuttcp612-tcp-fparse-1.txt": ("tcp", "parse", 12_130_531_300.0, 7_581_204_480, 5.0, None, 0.11, (92, 31)),
    "nuttcp612-tcp-human-1.txt": ("tcp", "brief", 13_647_519_200.0, 8_528_855_040, 5.0, None, 0.10, (90, 30)),
    "nuttcp612-tcp-human-2.txt": ("tcp", "brief", 18_989_138_700.0, 11_871_387_648, 5.0, None, 0.10, (94, 52)),
    "nuttcp612-tcp-verbose-1.txt": ("tcp", "verbose", 16_972_833_400.0, 6_362_359_975, 3.0, None, 0.068, (20, 75)),
    "nuttcp612-udp-fparse-1.txt": ("udp", "parse", 870_191_200.0, 543_711_193, 5.0, None, None, (98, 13)),
    "nuttcp612-udp-human-1.txt": ("udp", "brief", 857_162_300.0, 535_429_120, 5.0, None, None, (98, 13)),
}


def test_every_nuttcp_fixture_is_covered():
    captures = shared_fixture(*TOOLOUT).glob("nuttcp*.txt")
    names = {path.name for path in captures} - {"nuttcp-error-connrefused-stderr-1.txt"}
    assert names == set(SUMMARIES)


@pytest.mark.parametrize("name", sorted(SUMMARIES))
def test_parse_summary_numbers(name):
    protocol, output_format, bps, transferred, duration, retransmits, rtt, (tx_cpu, rx_cpu) = SUMMARIES[name]
    result = nuttcp.parse(fixture(name))
    assert result.protocol == protocol
    assert result.output_format == output_format
    assert result.throughput_bps == bps  # exact: Mbps text * 10**6 through Decimal
    assert result.transferred_bytes == transferred
    assert result.duration_s == duration
    assert result.retransmits == retransmits
    assert result.rtt_ms == rtt
    assert (result.tx_cpu_pct, result.rx_cpu_pct) == (tx_cpu, rx_cpu)


def test_throughput_conversion_is_exact_not_float_multiplication():
    # nuttcp-tcp-fparse-4.txt: 16914.0266 * 1e6 in binary floating point is 16914026600.000002
    assert 16914.0266 * 1e6 != 16_914_026_600.0
    assert nuttcp.mbps_to_bps("16914.0266") == 16_914_026_600.0
    assert nuttcp.mbps_to_bps("12290.3580") == 12_290_358_000.0
    assert nuttcp.mib_to_bytes("7324.6250") == 7_324 * MIB + 655_360


def test_tcp_fparse_details():
    result = nuttcp.parse(fixture("nuttcp-tcp-fparse-1.txt"))
    assert result.cwnd_bytes == 383 * 1024
    assert result.retransmits_reported == 77
    assert [i.retransmits_reported for i in result.intervals] == [14, 18, 21, 4]
    assert [i.cwnd_bytes for i in result.intervals] == [447 * 1024, 575 * 1024, 959 * 1024, 447 * 1024]
    assert result.intervals[0].throughput_bps == 12_420_323_300.0
    assert result.intervals[0].transferred_bytes == 1_552_613_376
    assert result.intervals[3].throughput_bps == 10_753_969_600.0
    assert result.notes == ()


def test_multistream_interval_lines_have_no_retrans_but_summary_does():
    result = nuttcp.parse(fixture("nuttcp-tcp-fparse-3.txt"))
    assert len(result.intervals) == 4
    assert all(i.retransmits_reported is None and i.cwnd_bytes is None for i in result.intervals)
    assert result.retransmits == 175
    assert result.cwnd_bytes == 1532 * 1024


def test_running_total_columns_are_ignored():
    result = nuttcp.parse(fixture("nuttcp-tcp-fparse-4.txt"))
    assert [i.transferred_bytes for i in result.intervals] == [
        nuttcp.mib_to_bytes("2259.1875"),
        nuttcp.mib_to_bytes("2035.1250"),
    ]
    assert [i.throughput_bps for i in result.intervals] == [18_950_547_700.0, 17_069_356_700.0]


def test_human_brief_intervals():
    result = nuttcp.parse(fixture("nuttcp-tcp-human-1.txt"))
    # the capture printed only 4 of the 5 one-second intervals
    assert len(result.intervals) == 4
    assert [i.retransmits_reported for i in result.intervals] == [23, 17, 28, 21]
    assert result.intervals[2].cwnd_bytes == 383 * 1024
    assert result.cwnd_bytes == 447 * 1024
    pscheduler = nuttcp.parse(fixture("nuttcp-tcp-human-pscheduler-1.txt"))
    assert len(pscheduler.intervals) == 10
    assert sum(i.retransmits_reported for i in pscheduler.intervals) == 90
    assert pscheduler.cwnd_bytes == 237 * 1024


def test_verbose_fparse_uses_receiver_rate_and_transmitter_socket_figures():
    result = nuttcp.parse(fixture("nuttcp-tcp-fparse-verbose-1.txt"))
    # nuttcp-t says 16369.2610 Mbps, nuttcp-r (what arrived) 16355.9102
    assert result.throughput_bps == 16_355_910_200.0
    assert result.retransmits_by_stream == (1, 0, 0, 1)
    assert result.cwnd_bytes == 1980 * 1024
    assert result.mss_bytes == 32741
    assert (result.send_window_bytes, result.receive_window_bytes) == (3_939_840, 131_072)
    assert result.streams == 4
    assert result.tool_version == "8.2.2"


def test_verbose_human_report():
    result = nuttcp.parse(fixture("nuttcp-tcp-verbose-1.txt"))
    assert result.throughput_bps == 12_572_199_800.0  # nuttcp-r line; nuttcp-t says 12568.6964
    assert result.retransmits == 70
    assert result.cwnd_bytes == 447 * 1024
    assert result.mss_bytes == 32741
    assert result.send_window_bytes == 4_194_304
    assert result.streams == 1
    assert result.tool_version == "8.2.2"


@pytest.mark.parametrize(
    ("name", "sent", "lost", "loss_pct", "jitter_ms", "owd_ms"),
    [
        ("nuttcp-udp-fparse-1.txt", 67465, 4680, 6.93693, 9.0222, None),
        ("nuttcp-udp-fparse-2.txt", 38043, 433, 1.13818, 9.2779, 0.0771),
        ("nuttcp-udp-human-1.txt", 67541, 5972, 8.84, 9.3752, None),
        ("nuttcp-udp-human-2.txt", 67991, 2485, 3.65, 12.1132, None),
        ("nuttcp-udp-human-3.txt", 38005, 450, 1.18, 8.2349, 0.0577),
        ("nuttcp-udp-human-pscheduler-1.txt", 259593, 1485, 0.57, 37.2012, None),
        ("nuttcp612-udp-fparse-1.txt", 68665, 2294, 3.34086, None, None),  # 6.1.2 has no -j
        ("nuttcp612-udp-human-1.txt", 68665, 3305, 4.81, None, None),
    ],
)
def test_udp_loss_and_jitter(name, sent, lost, loss_pct, jitter_ms, owd_ms):
    result = nuttcp.parse(fixture(name))
    assert result.protocol == "udp"
    assert (result.packets_sent, result.packets_lost) == (sent, lost)
    assert result.loss_pct == loss_pct
    assert result.jitter_max_ms == jitter_ms
    assert result.owd_avg_ms == owd_ms
    assert result.retransmits is None and result.retransmits_reported is None


def test_udp_interval_lines_with_approximate_loss():
    result = nuttcp.parse(fixture("nuttcp-udp-human-1.txt"))
    first = result.intervals[0]
    assert (first.packets_lost, first.packets_sent, first.loss_pct, first.jitter_max_ms) == (1608, 13555, 11.86, 8.5002)
    pscheduler = nuttcp.parse(fixture("nuttcp-udp-human-pscheduler-1.txt"))
    # small losses are printed with 5 decimals: "0.05021 ~%loss"
    assert pscheduler.intervals[2].loss_pct == 0.05021
    assert pscheduler.intervals[2].packets_lost == 13
    assert sum(i.packets_lost for i in pscheduler.intervals) == 1446  # the summary's 1485 includes the tail
    owd = nuttcp.parse(fixture("nuttcp-udp-human-3.txt"))
    assert [i.owd_avg_ms for i in owd.intervals] == [0.0953, 0.1461, 0.0098, 0.0208]


# ---------------------------------------------------------------------------
# nuttcp 6.1.2 retransmits
# ---------------------------------------------------------------------------


def test_612_retrans_zero_is_unknown_without_version():
    result = nuttcp.parse(fixture("nuttcp612-tcp-fparse-1.txt"))
    assert result.retransmits_reported == 0
    assert result.retransmits is None
    assert "6.1.2" in result.notes[0]


def test_612_retrans_unknown_when_version_given_or_printed():
    assert nuttcp.parse(fixture("nuttcp612-tcp-human-1.txt"), tool_version="6.1.2").retransmits is None
    verbose = nuttcp.parse(fixture("nuttcp612-tcp-verbose-1.txt"))  # prints "nuttcp-t: v6.1.2: socket"
    assert verbose.tool_version == "6.1.2"
    assert verbose.retransmits is None
    assert verbose.retransmits_reported == 0
    assert "fixed in 6.2.9" in verbose.notes[0]


def test_612_multistream_summary_has_no_retrans_at_all():
    result = nuttcp.parse(fixture("nuttcp612-tcp-human-2.txt"))
    assert result.retransmits_reported is None
    assert result.retransmits is None
    assert len(result.intervals) == 5


def test_retrans_zero_trusted_from_a_version_that_counts():
    assert nuttcp.parse(fixture("nuttcp612-tcp-fparse-1.txt"), tool_version="8.2.2").retransmits == 0
    # cwnd is printed only by nuttcp >= 8: a zero next to it is real
    assert nuttcp.parse(fixture("nuttcp-tcp-human-pscheduler-2.txt")).retransmits == 0


def test_retransmits_reliable_threshold():
    assert nuttcp.retransmits_reliable("6.1.2") is False
    assert nuttcp.retransmits_reliable("6.2.9") is True
    assert nuttcp.retransmits_reliable("8.2.2") is True
    assert nuttcp.retransmits_reliable(None) is None


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_connection_refused_is_an_error_not_a_result():
    stderr = fixture("nuttcp-error-connrefused-stderr-1.txt")
    with pytest.raises(nuttcp.NuttcpParseError):
        nuttcp.parse(stderr)
    assert nuttcp.parse_error(stderr) == "connect: Connection refused (errno=111)"
    assert nuttcp.parse_error("nuttcp-t: Info: attempting to switch\n") is None


def test_parse_version_output():
    assert nuttcp.parse_version_output("nuttcp-6.1.2\n") == "6.1.2"
    assert nuttcp.parse_version_output(fixture("nuttcp-error-connrefused-stderr-1.txt")) == "8.2.2"
    assert nuttcp.parse_version_output("") is None


@given(
    megabytes=st.integers(min_value=0, max_value=10**9).map(lambda n: n / 16),
    seconds=st.integers(min_value=1, max_value=100_000).map(lambda n: n / 100),
    mbps=st.decimals(min_value=0, max_value=10**6, places=4),
    tx=st.integers(0, 100),
    rx=st.integers(0, 100),
    retrans=st.integers(0, 10**6),
    cwnd=st.integers(0, 10**6),
    rtt=st.integers(0, 10**6).map(lambda n: n / 100),
)
def test_brief_summary_round_trip(megabytes, seconds, mbps, tx, rx, retrans, cwnd, rtt):
    # nuttcp-8.2.2.c: PERF_FMT_BRIEF + RETRANS_FMT_BRIEF + CWND_FMT_BRIEF + RTT_FMT_BRIEF
    line = (
        f"{megabytes:10.4f} MB / {seconds:6.2f} sec = {mbps:9.4f} Mbps {tx} %TX {rx} %RX"
        f" {retrans} retrans {cwnd} KB-cwnd {rtt:.2f} msRTT"
    )
    result = nuttcp.parse(line + "\n", tool_version="8.2.2")
    assert result.transferred_bytes == int(megabytes * MIB)  # multiples of 1/16 MiB are exact
    assert result.duration_s == float(f"{seconds:.2f}")
    assert result.throughput_bps == float(mbps * 1_000_000)
    assert (result.tx_cpu_pct, result.rx_cpu_pct, result.retransmits) == (tx, rx, retrans)
    assert result.cwnd_bytes == cwnd * 1024
    assert result.rtt_ms == float(f"{rtt:.2f}")


# ---------------------------------------------------------------------------
# argv
# ---------------------------------------------------------------------------


def test_argv_forward_tcp():
    config = nuttcp.NuttcpConfig(dst="FZK", host="fzk-dt01.example.org", window_bytes=8_388_608, streams=4)
    assert nuttcp.build_argv(config) == ["nuttcp", "-fparse", "-T10", "-t", "-w8192", "-N4", "fzk-dt01.example.org"]


def test_argv_reverse_tcp_flips_connection_so_the_agent_opens_it():
    config = nuttcp.NuttcpConfig(dst="FZK", host="h", duration_s=5, control_port=15000, data_port=15001)
    argv = nuttcp.build_argv(config, direction=nuttcp.REVERSE)
    assert argv == ["nuttcp", "-fparse", "-T5", "-r", "-F", "-P15000", "-p15001", "h"]
    no_flip = nuttcp.NuttcpConfig(dst="FZK", host="h", flip_reverse=False)
    assert "-F" not in nuttcp.build_argv(no_flip, direction=nuttcp.REVERSE)


def test_argv_udp_rate_and_jitter_depend_on_version():
    config = nuttcp.NuttcpConfig(dst="FZK", host="h", protocol="udp", rate_bps=900e6, duration_s=5)
    assert nuttcp.build_argv(config, version="8.2.2") == ["nuttcp", "-fparse", "-T5", "-t", "-u", "-j", "-R900000", "h"]
    # 6.1.2 has no -j: it would print its usage and leave a one-shot server hanging
    assert "-j" not in nuttcp.build_argv(config, version="6.1.2")
    assert "-j" not in nuttcp.build_argv(config, version=None)
    reverse = nuttcp.build_argv(config, direction=nuttcp.REVERSE, version="8.2.2")
    assert "-r" in reverse and "-F" not in reverse  # nuttcp refuses -F with UDP


def test_argv_window_in_nearest_kib_and_plain_numbers():
    config = nuttcp.NuttcpConfig(dst="CNAF", host="h", window_bytes=2_900_000, duration_s=2.5, mss_bytes=8948)
    argv = nuttcp.build_argv(config)
    assert "-w2832" in argv  # 2900000 / 1024 = 2832.03
    assert "-T2.5" in argv
    assert "-M8948" in argv
    assert nuttcp.window_kib(4_194_304) == 4096


@pytest.mark.parametrize(
    "bad",
    [
        {"protocol": "sctp"},
        {"protocol": "udp"},  # no rate
        {"streams": 0},
        {"duration_s": 0},
        {"window_bytes": 100},
    ],
)
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        nuttcp.NuttcpConfig(dst="FZK", host="h", **bad)


def test_config_from_mapping_matches_the_contract_example():
    # the [[nuttcp]] example of docs/agent.md#configuration-toml
    config = nuttcp.NuttcpConfig.from_mapping(
        {
            "dst": "FZK",
            "host": "fzk-dt01.example.org",
            "interval_s": 1800,
            "protocol": "tcp",
            "window_bytes": 8388608,
            "duration_s": 10,
            "reverse": True,
        }
    )
    assert config.directions() == (nuttcp.FORWARD, nuttcp.REVERSE)
    with pytest.raises(ValueError, match="windw_bytes"):
        nuttcp.NuttcpConfig.from_mapping({"dst": "FZK", "host": "h", "windw_bytes": 1})
