"""owamp collector: parsers against real OWAMP 5.2.3 output, directions, run_test.

The captures were made on a host whose clock was not NTP-synchronised
(../shared/fixtures/toolout/SOURCES.md), hence ``(unsync)`` and ``SYNC 0`` throughout.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from collectors import ntp, owamp
from collectors.runner import EXIT_NOT_FOUND, CommandResult, FakeCommandRunner, completed
from tests.conftest import shared_fixture

# Real tool output, public third-party data kept beside the repository (../shared/fixtures/toolout/SOURCES.md).
TOOLOUT = ("fixtures", "toolout")
NOW = datetime(2026, 3, 1, 11, 1, tzinfo=UTC)
OWAMP_KEYS = {
    "type",
    "time",
    "src",
    "dst",
    "packets_sent",
    "packets_lost",
    "duplicates",
    "reordered",
    "delay_min_ms",
    "delay_median_ms",
    "delay_max_ms",
    "jitter_ms",
    "clock_error_ms",
}


def fixture(name: str) -> str:
    return shared_fixture(*TOOLOUT, name).read_text()


def ntp_delay_ms(send: int, recv: int) -> float:
    """Delay between two NTP 32.32 timestamps as printed by owping -R, to 1 ns."""
    return round((recv - send) * 1000 / 2**32, 6)


# ---------------------------------------------------------------------------
# -M machine format
# ---------------------------------------------------------------------------


def test_machine_two_directions_back_to_back():
    to_session, from_session = owamp.parse_machine(fixture("owping-M-1.txt"))
    assert (to_session.packets_sent, to_session.packets_lost, to_session.duplicates) == (20, 0, 0)
    assert to_session.reordered == 0
    # seconds in -M, milliseconds here
    assert to_session.delay_min_ms == 0.00905991  # MIN 9.05991e-06
    assert to_session.delay_median_ms == 0.1  # MEDIAN 0.0001 (one 100 us bucket)
    assert to_session.delay_max_ms == 27.7143  # MAX 0.0277143
    assert to_session.jitter_ms == 12.3  # PDV 0.0123
    assert to_session.bucket_width_ms == 0.1
    assert (to_session.ttl_min, to_session.ttl_max, to_session.hops) == (255, 255, 0)
    assert to_session.sid == "7f000001eeacc32318eca686b356c69f"
    assert (to_session.from_host, to_session.to_host) == ("localhost", "127.0.0.1")
    assert to_session.start_time == datetime(2026, 11, 22, 1, 25, 56, 228044, tzinfo=UTC)
    assert to_session.session_finished is True
    assert from_session.delay_min_ms == 0.0367165
    assert from_session.delay_max_ms == 0.613689
    assert from_session.jitter_ms == 0.2
    assert (from_session.from_host, from_session.to_host) == ("127.0.0.1", "localhost")


def test_machine_unsynced_clock_has_no_error_estimate():
    session = owamp.parse_machine(fixture("owping-M-1.txt"))[0]
    assert session.clock_synced is False  # SYNC 0
    assert session.clock_error_ms is None
    assert session.max_error_ms == 4.65661e-07  # MAXERR 4.65661e-10 s: meaningless without sync


def test_machine_ntp_start_time_matches_unix_start_time():
    (session,) = owamp.parse_machine(fixture("owping-M-2.txt"))
    # the same file prints UNIX_START_TIME 1795310789.845675 (owping -U)
    assert session.start_time == datetime.fromtimestamp(1795310789.845675, UTC)
    assert session.bucket_width_ms == 0.01
    assert (session.delay_min_ms, session.delay_median_ms, session.delay_max_ms) == (0.0300407, 0.06, 0.102043)
    assert session.jitter_ms == 0.03


def test_owstats_and_powstream_sum_are_the_same_format():
    (owstats,) = owamp.parse_machine(fixture("owstats-M-1.txt"))
    (powstream,) = owamp.parse_machine(fixture("powstream-sum-1.txt"))
    assert owstats == powstream
    assert (owstats.packets_sent, owstats.packets_lost) == (100, 0)
    assert (owstats.delay_min_ms, owstats.delay_max_ms) == (0.00762939, 0.184059)


def test_machine_rejects_twping_output():
    with pytest.raises(owamp.OwampParseError):
        owamp.parse_machine(fixture("twping-M-1.txt"))


# ---------------------------------------------------------------------------
# default text summary
# ---------------------------------------------------------------------------


def test_summary_two_directions():
    to_session, from_session = owamp.parse_summary(fixture("owping-default-1.txt"))
    assert (to_session.from_host, to_session.from_port, to_session.to_host) == ("localhost", "18826", "127.0.0.1")
    assert (to_session.delay_min_ms, to_session.delay_median_ms, to_session.delay_max_ms) == (0.0143, 0.1, 1.87)
    assert to_session.jitter_ms == 0.1
    assert (to_session.packets_sent, to_session.packets_lost, to_session.duplicates) == (20, 0, 0)
    assert to_session.clock_synced is False  # "(unsync)"
    assert to_session.clock_error_ms is None
    assert to_session.hops == 0  # "hops = 0 (consistently)"
    assert to_session.reordered == 0  # "no reordering"
    assert (from_session.delay_min_ms, from_session.delay_max_ms) == (0.0162, 0.627)
    assert from_session.sid == "7f000001eeacc31a29c10d7bef711631"


def test_summary_percentiles():
    (session,) = owamp.parse_summary(fixture("owping-default-2.txt"))
    assert session.percentiles_ms == {95.0: 0.11, 99.0: 0.13}
    assert (session.delay_min_ms, session.delay_median_ms, session.delay_max_ms) == (0.0353, 0.05, 0.123)
    assert session.jitter_ms == 0.06


def test_summary_verbose_per_packet_block_is_not_a_session():
    # owping -v prints the header twice for the same SID: per-packet lines, then the summary
    (session,) = owamp.parse_summary(fixture("owping-v-1.txt"))
    assert session.sid == "7f000001eeacc33f98ec74321c2bf52f"
    assert (session.delay_min_ms, session.delay_max_ms) == (0.0339, 0.698)  # seq 16 and seq 5


def test_summary_nan_session_from_perfsonar_issue_836():
    (session,) = owamp.parse_summary(fixture("owping-default-nan-issue836-1.txt"))
    assert (session.packets_sent, session.packets_lost) == (0, 0)
    assert (session.delay_min_ms, session.delay_median_ms, session.delay_max_ms) == (None, None, None)
    assert session.jitter_ms is None  # "nan ms"
    assert session.hops is None  # "TTL not reported"
    assert session.loss_pct is None
    # "(err=0 ms)" and "no reordering" on an empty session prove nothing
    assert session.clock_synced is None and session.clock_error_ms is None
    assert session.reordered is None
    assert (session.from_host, session.to_host) == ("lab246.internet2.edu", "ndb1.internet2.edu")


def test_summary_with_error_estimate_and_reordering():
    # Lines in OWAMP 5.2.3's stats.c formats: "(err=%.3g %s)", "%ld-reordering = %f%%", "hops takes ..."
    text = fixture("owping-default-2.txt")
    text = text.replace("0.123 ms, (unsync)", "0.123 ms, (err=0.213 ms)")
    text = text.replace("hops = 0 (consistently)", "hops takes 2 values; min hops = 9, max hops = 11")
    text = text.replace("no reordering", "1-reordering = 10.000000%\nno 2-reordering")
    (session,) = owamp.parse_summary(text)
    assert session.clock_synced is True
    assert session.clock_error_ms == 0.213
    assert (session.hops_min, session.hops_max, session.hops) == (9, 11, None)
    assert (session.ttl_min, session.ttl_max) == (244, 246)
    assert session.reordering_pct == 10.0
    assert session.reordered == 2  # 10 % of the 20 received


def test_summary_units_other_than_ms():
    text = fixture("owping-default-2.txt").replace(
        "min/median/max = 0.0353/0.05/0.123 ms", "min/median/max = 35.3/50/123 us"
    )
    (session,) = owamp.parse_summary(text)
    assert (session.delay_min_ms, session.delay_median_ms, session.delay_max_ms) == (0.0353, 0.05, 0.123)


# ---------------------------------------------------------------------------
# -R raw records
# ---------------------------------------------------------------------------


def test_raw_statistics_computed_from_packets():
    (session,) = owamp.parse_raw(fixture("owping-R-1.txt"))
    assert (session.packets_sent, session.packets_lost, session.duplicates, session.reordered) == (20, 0, 0, 0)
    # seq 0: 17198335804672723210 -> 17198335804689890194 (the first packet is slow)
    assert session.delay_max_ms == ntp_delay_ms(17198335804672723210, 17198335804689890194) == 3.997
    # seq 12: 17198335808984110166 -> 17198335808984264785
    assert session.delay_min_ms == ntp_delay_ms(17198335808984110166, 17198335808984264785) == 0.036
    assert session.delay_median_ms == 0.058  # 10th of 20 (nearest rank)
    assert session.jitter_ms == 0.033  # P95 (19th, 0.091) - P50
    assert session.clock_synced is False  # sync flags 0
    assert session.max_error_ms == 4.65662e-07  # 2 x 2.32831e-10 s
    assert (session.ttl_min, session.hops) == (255, 0)
    assert session.start_time == ntp.ntp_to_datetime(17198335804672723210)


def test_raw_both_directions_concatenated_without_separator():
    to_session, from_session = owamp.parse_raw(fixture("owping-R-2.txt"))
    assert to_session.packets_sent == from_session.packets_sent == 20
    assert (to_session.delay_min_ms, to_session.delay_median_ms, to_session.delay_max_ms) == (0.03, 0.049, 0.14)
    assert (from_session.delay_min_ms, from_session.delay_max_ms) == (0.033, 0.15)


def test_raw_and_machine_of_the_same_stored_session_agree():
    (raw,) = owamp.parse_raw(fixture("owstats-R-1.txt"))
    (machine,) = owamp.parse_machine(fixture("owstats-M-1.txt"))
    assert raw.packets_sent == machine.packets_sent == 100
    # owamp computes delays from doubles (~0.5 us resolution at NTP epoch magnitudes)
    assert raw.delay_min_ms == pytest.approx(machine.delay_min_ms, abs=0.001)
    assert raw.delay_max_ms == pytest.approx(machine.delay_max_ms, abs=0.001)
    assert raw.start_time == datetime(2026, 11, 22, 1, 27, 53, 91152, tzinfo=UTC)


def test_raw_lost_duplicated_and_reordered_packets():
    # owping_out_opts.man: a lost packet has RECVTIME 0; a duplicate repeats seq and send time.
    send, recv = 17198335804672723210, 17198335804689890194
    lines = [
        f"0 {send} 1 1e-06 {recv} 1 2e-06 250",
        f"2 {send + 2000} 1 1e-06 {recv + 2000} 1 2e-06 250",
        f"1 {send + 1000} 1 1e-06 {recv + 1000} 1 2e-06 250",  # arrives after 2: 1-reordered
        f"2 {send + 2000} 1 1e-06 {recv + 2500} 1 2e-06 250",  # duplicate of 2
        f"3 {send + 3000} 1 1e-06 0 1 3e-06 255",  # lost
    ]
    (session,) = owamp.parse_raw("\n".join(lines) + "\n")
    assert (session.packets_sent, session.packets_lost) == (4, 1)
    assert (session.duplicates, session.reordered) == (1, 1)
    assert session.clock_synced is True
    assert session.clock_error_ms == 0.004  # max(SERR + RERR) = 1e-06 + 3e-06 s
    assert (session.hops_min, session.hops_max) == (5, 5)
    assert session.loss_pct == 25.0


def test_raw_rejects_other_text():
    with pytest.raises(owamp.OwampParseError):
        owamp.parse_raw("SUMMARY\t3.00\n")
    with pytest.raises(owamp.OwampParseError):
        owamp.parse_raw(fixture("twping-R-1.txt"))


def test_parse_dispatches_on_format():
    assert [s.output_format for s in owamp.parse(fixture("owping-M-1.txt"))] == ["machine", "machine"]
    assert [s.output_format for s in owamp.parse(fixture("owping-default-1.txt"))] == ["summary", "summary"]
    assert [s.output_format for s in owamp.parse(fixture("owping-R-2.txt"))] == ["raw", "raw"]
    assert owamp.parse(fixture("owping-error-noserver-stderr-1.txt")) == []


# ---------------------------------------------------------------------------
# stderr
# ---------------------------------------------------------------------------


def test_ntp_unsync_warning_is_detected():
    warning = "NTP: Status UNSYNC (clock offset issues likely)"
    assert owamp.ntp_unsynced(fixture("owping-stderr-ntp-unsync-1.txt")) == warning
    assert owamp.ntp_unsynced(fixture("powstream-stderr-1.txt")) == warning
    assert owamp.ntp_unsynced("") is None
    assert owamp.parse_error(fixture("owping-stderr-ntp-unsync-1.txt")) is None  # warnings, not errors


def test_error_messages():
    assert (
        owamp.parse_error(fixture("owping-error-noserver-stderr-1.txt"))
        == "Unable to open control connection to 127.0.0.1:18610."
    )
    # stderr lines mixed into the issue #836 paste, with the FILE=/LINE= prefix of old builds
    assert (
        owamp.parse_error(fixture("owping-default-nan-issue836-1.txt"))
        == "owp_fetch_sid:Server denied request for to session data"
    )


# ---------------------------------------------------------------------------
# directions
# ---------------------------------------------------------------------------


def test_assign_directions_by_printed_order():
    to_session, from_session = owamp.parse_machine(fixture("owping-M-1.txt"))
    assigned = owamp.assign_directions([to_session, from_session], remote_host="127.0.0.1")
    assert assigned == {"to": to_session, "from": from_session}
    assert owamp.assign_directions([from_session], requested=("from",)) == {"from": from_session}


def test_assign_single_session_by_remote_address():
    to_session, from_session = owamp.parse_machine(fixture("owping-M-1.txt"))
    # on a real path the two ends have different addresses
    to_real = replace(to_session, from_addr="192.0.2.10", to_addr="198.51.100.7", from_host="a", to_host="b")
    from_real = replace(from_session, from_addr="198.51.100.7", to_addr="192.0.2.10", from_host="b", to_host="a")
    assert owamp.assign_directions([from_real], remote_host="198.51.100.7") == {"from": from_real}
    assert owamp.assign_directions([to_real], remote_host="198.51.100.7:861") == {"to": to_real}
    assert owamp.assign_directions([to_real], remote_host="[198.51.100.7]:861") == {"to": to_real}


def test_assign_single_session_after_failed_to_fetch():
    text = fixture("owping-default-nan-issue836-1.txt")
    sessions = owamp.parse_summary(text)
    assert owamp.assign_directions(sessions, remote_host="ndb2.example.org", stderr=text) == {"from": sessions[0]}


def test_assign_single_ambiguous_session_is_not_guessed():
    to_session = owamp.parse_machine(fixture("owping-M-1.txt"))[0]  # loopback: both ends 127.0.0.1
    assert owamp.assign_directions([to_session], remote_host="127.0.0.1") == {}


# ---------------------------------------------------------------------------
# argv and config
# ---------------------------------------------------------------------------


def test_build_argv_and_timeout():
    config = owamp.OwampConfig(dst="FZK", host="fzk-owamp.example.org", packets=600)
    assert owamp.build_argv(config) == [
        "owping",
        "-M",
        "-c",
        "600",
        "-i",
        "0.1",
        "-L",
        "10",
        "-b",
        "0.00001",
        "fzk-owamp.example.org",
    ]
    assert config.timeout_s == 600 * 0.1 + 10 + 30
    one_way = owamp.OwampConfig(dst="FZK", host="h:861", directions="to", port_range="8760-9960", bucket_width_s=None)
    assert owamp.build_argv(one_way)[-4:] == ["-P", "8760-9960", "-t", "h:861"]


def test_config_from_contract_example_and_validation():
    config = owamp.OwampConfig.from_mapping(
        {"dst": "FZK", "host": "fzk-owamp.example.org", "interval_s": 300, "packets": 600}
    )
    assert config.requested == ("to", "from")
    with pytest.raises(ValueError, match="pakets"):
        owamp.OwampConfig.from_mapping({"dst": "FZK", "host": "h", "pakets": 1})
    with pytest.raises(ValueError):
        owamp.OwampConfig(dst="FZK", host="h", directions="sideways")


# ---------------------------------------------------------------------------
# run_test
# ---------------------------------------------------------------------------

CONFIG = owamp.OwampConfig(dst="FZK", host="127.0.0.1", packets=20)


def test_run_test_two_directions_with_unsynced_clock():
    runner = FakeCommandRunner(
        {"owping": completed(fixture("owping-M-1.txt"), fixture("owping-stderr-ntp-unsync-1.txt"), duration_s=5.0)}
    )
    to_record, from_record = owamp.run_test(runner, CONFIG, src_site="CERN", dst_site="FZK", now=NOW)
    assert OWAMP_KEYS <= to_record.keys() and OWAMP_KEYS <= from_record.keys()
    assert (to_record["src"], to_record["dst"], to_record["dst_host"]) == ("CERN", "FZK", "127.0.0.1")
    assert (from_record["src"], from_record["dst"], from_record["src_host"]) == ("FZK", "CERN", "127.0.0.1")
    assert to_record["time"] == from_record["time"] == NOW
    assert (to_record["direction"], from_record["direction"]) == ("forward", "reverse")
    assert to_record["type"] == "owamp"
    assert (to_record["packets_sent"], to_record["packets_lost"], to_record["duplicates"]) == (20, 0, 0)
    assert (to_record["delay_min_ms"], to_record["delay_median_ms"], to_record["delay_max_ms"]) == (
        0.00905991,
        0.1,
        27.7143,
    )
    assert to_record["jitter_ms"] == 12.3
    assert from_record["delay_max_ms"] == 0.613689
    # CLOCK_UNSYNC evidence: no error estimate, an explicit flag and owamp's warning
    assert to_record["clock_synced"] is False
    assert to_record["clock_error_ms"] is None
    assert to_record["ntp_warning"] == "NTP: Status UNSYNC (clock offset issues likely)"
    assert (to_record["hops"], to_record["ttl_min"]) == (0, 255)
    assert to_record["sid"] == "7f000001eeacc32318eca686b356c69f"
    assert "error" not in to_record
    assert runner.calls == [(owamp.build_argv(CONFIG), CONFIG.timeout_s)]


def test_run_test_synced_clock_reports_error_estimate():
    # owping-M-2.txt with the fields a synchronised pair prints (SYNC 1, MAXERR in seconds)
    text = fixture("owping-M-2.txt").replace("SYNC\t0", "SYNC\t1").replace("MAXERR\t4.65661e-10", "MAXERR\t0.000213")
    runner = FakeCommandRunner({"owping": completed(text)})
    config = owamp.OwampConfig(dst="FZK", host="127.0.0.1", directions="to")
    (record,) = owamp.run_test(runner, config, src_site="CERN", dst_site="FZK", now=NOW)
    assert record["clock_synced"] is True
    assert record["clock_error_ms"] == 0.213
    assert "ntp_warning" not in record


def test_run_test_no_server_gives_error_records_for_both_directions():
    stderr = fixture("owping-error-noserver-stderr-1.txt")
    runner = FakeCommandRunner({"owping": completed("", stderr, exit_code=1)})
    records = owamp.run_test(runner, CONFIG, src_site="CERN", dst_site="FZK", now=NOW)
    assert [(r["src"], r["dst"]) for r in records] == [("CERN", "FZK"), ("FZK", "CERN")]
    for record in records:
        assert record["error"] == "Unable to open control connection to 127.0.0.1:18610."
        assert record["exit_code"] == 1
        assert record["stderr_excerpt"] == stderr.strip("\n")
        assert record["clock_synced"] is False  # the same stderr says UNSYNC
        assert "packets_sent" not in record


def test_run_test_owping_not_installed():
    runner = FakeCommandRunner(missing_is_not_found=True)
    records = owamp.run_test(runner, CONFIG, src_site="CERN", dst_site="FZK", now=NOW)
    assert len(records) == 2
    assert all(r["error"].startswith("owping is not installed") for r in records)
    assert all(r["exit_code"] == EXIT_NOT_FOUND for r in records)


def test_run_test_timeout():
    result = CommandResult(None, "Approximately 4.9 seconds until results available\n", "", 50.0, "timeout", True)
    records = owamp.run_test(FakeCommandRunner({"owping": result}), CONFIG, src_site="CERN", dst_site="FZK", now=NOW)
    assert [r["error"] for r in records] == ["timeout", "timeout"]


def test_run_test_missing_direction_and_empty_session():
    # The issue #836 output: the "to" session could not be fetched, the "from" one is empty.
    text = fixture("owping-default-nan-issue836-1.txt")
    runner = FakeCommandRunner({"owping": completed(text, exit_code=0)})
    config = owamp.OwampConfig(dst="ND", host="lab246.internet2.edu")
    to_record, from_record = owamp.run_test(runner, config, src_site="I2", dst_site="ND", now=NOW)
    assert to_record["error"] == "owp_fetch_sid:Server denied request for to session data"
    assert "packets_sent" not in to_record
    assert (from_record["src"], from_record["dst"]) == ("ND", "I2")
    assert from_record["packets_sent"] == 0
    assert from_record["error"].startswith("owamp session holds no packets")
    assert from_record["delay_median_ms"] is None and from_record["clock_synced"] is None


def test_run_test_unparseable_output():
    runner = FakeCommandRunner({"owping": completed(fixture("twping-M-1.txt"))})
    records = owamp.run_test(runner, CONFIG, src_site="CERN", dst_site="FZK", now=NOW)
    assert all(r["error"].startswith("unparseable owping output") for r in records)
