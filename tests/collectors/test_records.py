"""The wire schema: what the ingest accepts, what it refuses, and the error paths it reports."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from collectors.records import (
    MAX_REPORTED_ERRORS,
    RECORD_TYPES,
    SCHEMA_VERSION,
    Batch,
    RecordError,
    decode_batch,
    decode_records,
    encode_batch,
    record_to_dict,
)
from tests.conftest import shared_fixture

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
BATCH_ID = "6f1c0c8e-1b7e-4c8a-9a53-2f3f1c1d9e01"
SCENARIO_FORMAT_DOC = Path(__file__).resolve().parents[2] / "docs" / "scenario-format.md"


# The measurement examples of the scenario format specification, as JSON.
def throughput(**changes):
    return {"type": "throughput", "time": "2026-03-01T11:00:00Z", "src": "CERN", "dst": "FZK", "tool": "nuttcp",
            "protocol": "tcp", "duration_s": 10, "streams": 1, "window_bytes": 4194304, "mss_bytes": 1448,
            "throughput_bps": 9.0e8, "retransmits": 3, "rtt_ms": 12.5, "src_host": "192.0.2.10",
            "dst_host": "192.0.2.11", **changes}


def udp(**changes):
    return {"type": "throughput", "time": "2026-03-01T11:00:30Z", "src": "CERN", "dst": "FZK", "tool": "nuttcp",
            "protocol": "udp", "duration_s": 10, "offered_bps": 5.0e8, "throughput_bps": 4.99e8,
            "packets_sent": 78116, "packets_lost": 0, **changes}


def owamp(**changes):
    return {"type": "owamp", "time": "2026-03-01T11:01:00Z", "src": "FZK", "dst": "CERN", "packets_sent": 600,
            "packets_lost": 2, "duplicates": 0, "reordered": 0, "delay_min_ms": 6.1, "delay_median_ms": 6.3,
            "delay_max_ms": 9.0, "jitter_ms": 0.2, "clock_error_ms": 0.5, **changes}


def snmp(**changes):
    return {"type": "snmp", "time": "2026-03-01T11:01:00Z", "equipment": "geant-par", "interface": "xe-1/0/0",
            "sys_uptime_ticks": 883412200, "oper_status": "up",
            "counters": {"hc_in_octets": 18446744073000000000, "hc_out_octets": 12, "in_errors": 0,
                         "in_discards": 0, "out_discards": 0}, **changes}


def traceroute(**changes):
    return {"type": "traceroute", "time": "2026-03-01T11:02:00Z", "src": "CERN", "dst": "FZK",
            "hops": ["cern-border", "geant-gva", "geant-par", "dfn-fra", "fzk-border"], "pmtu_bytes": 9000,
            **changes}


def host_tcp(**changes):
    return {"type": "host_tcp", "time": "2026-03-01T11:00:00Z", "site": "ASGC", "host": "asgc-dt01",
            "tcp_rmem": [4096, 87380, 4194304], "tcp_wmem": [4096, 65536, 4194304], "rmem_max": 4194304,
            "wmem_max": 4194304, "congestion_control": "reno", "mtu": 1500, **changes}


ALL_EXAMPLES = [throughput, udp, owamp, snmp, traceroute, host_tcp]


def body(records, **changes) -> bytes:
    envelope = {"batch_id": BATCH_ID, "agent_version": "1.0.0", "sent_at": "2026-03-01T11:02:00Z",
                "records": records, **changes}
    return json.dumps(envelope).encode()


def batch_errors(raw: bytes, *, max_records: int = 100) -> list[dict]:
    with pytest.raises(RecordError) as caught:
        decode_batch(raw, now=NOW, max_records=max_records)
    return caught.value.errors


def paths(errors) -> list[str]:
    return [e["path"] for e in errors]


# --- valid input -------------------------------------------------------------------------------


def test_format_md_examples_decode_with_their_values():
    # when
    batch = decode_batch(body([make() for make in ALL_EXAMPLES]), now=NOW, max_records=10)

    # then
    assert [type(r).__name__ for r in batch.records] == [
        "ThroughputRecord", "ThroughputRecord", "OwampRecord", "SnmpRecord", "TracerouteRecord", "HostTcpRecord"]
    tcp, udp_test, one_way, poll, trace, host = batch.records
    assert tcp.throughput_bps == 9.0e8 and tcp.retransmits == 3 and tcp.window_bytes == 4194304
    assert udp_test.retransmits is None  # unknown, not zero
    assert one_way.delay_median_ms == 6.3
    assert poll.counters.hc_in_octets == 18446744073000000000  # above 2^63: needs the full uint64 range
    assert poll.counters.in_octets is None
    assert trace.hops[2] == "geant-par"
    assert host.tcp_rmem == [4096, 87380, 4194304]
    assert batch.sent_at == datetime(2026, 3, 1, 11, 2, tzinfo=UTC)


def _measurements_block(markdown: str) -> list:
    """The ``measurements`` list of the first YAML example in ``markdown`` that has one (not a ``[...]``)."""
    yaml = pytest.importorskip("yaml")
    for block in markdown.split("```yaml")[1:]:
        document = yaml.safe_load(block.split("```", 1)[0])
        measurements = document.get("measurements") if isinstance(document, dict) else None
        if isinstance(measurements, list) and measurements and all(isinstance(m, dict) for m in measurements):
            return measurements
    raise AssertionError("no YAML example with a measurements list")


def test_the_measurements_example_of_the_specification_validates():
    text = shared_fixture("scenarios", "FORMAT.md").read_text()

    records = decode_records(_measurements_block(text))

    assert {type(r) for r in records} == set(RECORD_TYPES.values())


def test_the_measurements_example_of_docs_scenario_format_validates():
    # docs/scenario-format.md shows one record of every type: each must be what the ingest accepts.
    records = decode_records(_measurements_block(SCENARIO_FORMAT_DOC.read_text()), path="measurements")

    assert [type(r) for r in records] == list(RECORD_TYPES.values())
    assert records[2].counters.hc_in_octets == 18446744073000000000
    assert records[3].hops == ["192.0.2.1", "geant-gva", None, "fzk-border"]


def test_times_with_an_offset_are_stored_in_utc():
    batch = decode_batch(body([throughput(time="2026-03-01T13:00:00+02:00")], sent_at="2026-03-01T06:02:00-05:00"),
                         now=NOW, max_records=1)

    assert batch.records[0].time == datetime(2026, 3, 1, 11, 0, tzinfo=UTC)
    assert batch.records[0].time.tzinfo is UTC
    assert batch.sent_at == datetime(2026, 3, 1, 11, 2, tzinfo=UTC)


def test_encode_then_decode_gives_the_same_batch_and_lowercases_the_batch_id():
    records = decode_records([make() for make in ALL_EXAMPLES])
    batch = Batch(batch_id=BATCH_ID.upper(), agent_version="1.0.0", sent_at=NOW, records=records)

    raw = encode_batch(batch, now=NOW)
    decoded = decode_batch(raw, now=NOW, max_records=10)

    assert decoded == batch
    assert decoded.batch_id == BATCH_ID
    assert json.loads(raw)["schema_version"] == SCHEMA_VERSION


def test_record_to_dict_is_json_ready_and_omits_absent_fields():
    record = decode_records([udp()])[0]

    data = record_to_dict(record)

    assert data == {**udp(), "duration_s": 10.0}  # ints in float fields come back as floats
    assert list(data)[:2] == ["type", "time"]
    assert "retransmits" not in data
    assert json.loads(json.dumps(data)) == data


def test_failed_test_is_a_record_with_error_and_no_throughput():
    failed = throughput(throughput_bps=None, error="connect: Connection refused", exit_code=1,
                        stderr_excerpt="nuttcp-t: Info: attempting to switch into server mode\nerrno=111")
    del failed["retransmits"]

    record = decode_batch(body([failed]), now=NOW, max_records=1).records[0]

    assert record.throughput_bps is None and record.exit_code == 1


def test_negative_one_way_delays_are_data_not_errors():
    # Unsynchronised clocks show as negative one-way delays: CLOCK_UNSYNC needs to see them.
    record = decode_records([owamp(delay_min_ms=-3.2, delay_median_ms=-3.0, delay_max_ms=-1.0)])[0]

    assert record.delay_min_ms == -3.2


def test_star_hops_are_stored_as_null():
    record = decode_records([traceroute(hops=["cern-border", "*", None, "fzk-border"])])[0]

    assert record.hops == ["cern-border", None, None, "fzk-border"]


def test_owamp_with_every_packet_lost_has_no_delays():
    record = decode_records([owamp(packets_lost=600, delay_min_ms=None, delay_median_ms=None, delay_max_ms=None,
                                   jitter_ms=None)])[0]

    assert record.delay_median_ms is None


def test_snmp_sample_of_a_view_without_sysuptime_is_valid():
    # IF-MIB-only SNMP views have no sysUpTime.0: the sample is kept, restart detection is the centre's problem.
    batch = decode_batch(body([snmp(sys_uptime_ticks=None)]), now=NOW, max_records=10)

    assert batch.records[0].sys_uptime_ticks is None
    assert batch.records[0].counters.hc_in_octets is not None


def test_unknown_extra_fields_are_ignored_but_unknown_counters_are_not():
    # Agents may send extras the centre does not know yet (docs/contracts.md#ingest-api); a counter name
    # we do not know would be silently left out of every rate, so it is refused.
    raw = body([throughput(direction="forward", cwnd_bytes=1_000_000, hop_rtts_ms=[1.0, None]),
                snmp(ifAlias="to FZK")], site="CERN")

    batch = decode_batch(raw, now=NOW, max_records=2)

    assert "direction" not in record_to_dict(batch.records[0])
    assert paths(batch_errors(body([snmp(counters={"in_crc_errors": 5})]))) == ["records[0].counters.in_crc_errors"]


@pytest.mark.parametrize(
    "record",
    [
        pytest.param({"type": "owamp", "time": "2026-03-01T11:01:00Z", "src": "FZK", "dst": "CERN", "tool": "owping",
                      "error": "owping: FILE=owping.c, LINE=1010, Unable to contact a server"}, id="owamp-no-server"),
        pytest.param({"type": "traceroute", "time": "2026-03-01T11:02:00Z", "src": "CERN", "dst": "FZK",
                      "tool": "tracepath", "error": "tracepath is not installed", "exit_code": 127},
                     id="no-traceroute"),
        pytest.param({"type": "host_tcp", "time": "2026-03-01T11:00:00Z", "site": "ASGC", "host": "asgc-dt01",
                      "tcp_rmem": None, "error": "no TCP setting could be read"}, id="host-tcp-unreadable"),
        pytest.param({"type": "snmp", "time": "2026-03-01T11:01:00Z", "equipment": "geant-par",
                      "interface": "xe-1/0/0", "counters": {}, "error": "timeout after 5 retries"}, id="snmp-timeout"),
        pytest.param(host_tcp(tcp_wmem=None, mtu=None, congestion_control=None), id="host-tcp-partial"),
        pytest.param(owamp(duplicates=None, reordered=None), id="owamp-without-duplicates"),
    ],
)
def test_failed_or_partial_collections_are_records_too(record):
    assert len(decode_batch(body([record]), now=NOW, max_records=1).records) == 1


def test_exactly_five_minutes_ahead_is_still_accepted():
    decode_batch(body([throughput(time="2026-03-01T12:05:00Z")]), now=NOW, max_records=1)


# --- structural rejections ---------------------------------------------------------------------

GOOD = body([throughput()])


@pytest.mark.parametrize(
    ("raw", "path", "fragment"),
    [
        pytest.param(b'{"batch_id": ', "", "malformed JSON", id="truncated-json"),
        pytest.param(b"", "", "malformed JSON", id="empty-body"),
        pytest.param(b"[]", "", "Expected `object`, got `array`", id="array-body"),
        pytest.param(b"null", "", "Expected `object`, got `null`", id="null-body"),
        pytest.param(b'"records"', "", "Expected `object`, got `str`", id="string-body"),
        pytest.param(GOOD.replace(b"900000000.0", b"NaN"), "", "malformed JSON", id="nan"),
        pytest.param(GOOD.replace(b"900000000.0", b"Infinity"), "", "malformed JSON", id="infinity"),
        pytest.param(GOOD.replace(b"900000000.0", b"-Infinity"), "", "malformed JSON", id="minus-infinity"),
        pytest.param(GOOD.replace(b"900000000.0", b"1e400"), "records[0].throughput_bps", "out of range",
                     id="float-overflow"),
        pytest.param(GOOD.replace(b"900000000.0", b"1e14"), "records[0].throughput_bps", "<=", id="rate-too-big"),
        pytest.param(GOOD.replace(b'"CERN"', b'"CE\\u0000RN"'), "records[0].src", "expected a site code",
                     id="nul-in-site"),
        pytest.param(GOOD.replace(b'"CERN"', b'"CERN\\n"'), "records[0].src", "expected a site code",
                     id="trailing-newline"),
        pytest.param(GOOD.replace(b'"CERN"', b'""'), "records[0].src", "length >= 1", id="empty-site"),
        pytest.param(GOOD.replace(b'"CERN"', b'"' + b"X" * 33 + b'"'), "records[0].src", "length <= 32",
                     id="long-site"),
        pytest.param(GOOD.replace(b'"CERN"', b'"CE\\ud800RN"'), "", "malformed JSON", id="lone-surrogate"),
        pytest.param(GOOD.replace(b'"CERN"', b'"CE\\udc00RN"'), "", "surrogate", id="lone-low-surrogate"),
        pytest.param(GOOD.replace(b'"CERN"', b'"CE\xffRN"'), "records[0]", "not valid UTF-8",
                     id="invalid-utf8"),
        pytest.param(GOOD.replace(b'"streams": 1', b'"streams": "1"'), "records[0].streams",
                     "Expected `int | null`, got `str`", id="string-for-int"),
        pytest.param(GOOD.replace(b'"retransmits": 3', b'"retransmits": 99999999999999999999999'),
                     "records[0].retransmits", "<=", id="huge-int"),
        pytest.param(GOOD.replace(b'"retransmits": 3', b'"retransmits": -3'), "records[0].retransmits", ">= 0",
                     id="negative-count"),
        pytest.param(GOOD.replace(b'"streams": 1', b'"streams": 1.5'), "records[0].streams", "got `float`",
                     id="float-for-int"),
        pytest.param(GOOD.replace(b'"protocol": "tcp"', b'"protocol": "sctp"'), "records[0].protocol",
                     "Invalid enum value 'sctp'", id="bad-enum"),
        pytest.param(GOOD.replace(b'"type": "throughput"', b'"type": "ping"'), "records[0].type",
                     "unknown record type 'ping'; expected one of: throughput, owamp", id="unknown-type"),
        pytest.param(GOOD.replace(b'"type": "throughput", ', b""), "records[0].type", "required field is missing",
                     id="missing-type"),
        pytest.param(GOOD.replace(b'"tool": "nuttcp", ', b""), "records[0].tool", "required field is missing",
                     id="missing-field"),
        pytest.param(body(throughput()), "records", "Expected `array`, got `object`", id="records-not-a-list"),
        pytest.param(body([42]), "records[0]", "Expected `object`, got `int`", id="record-not-an-object"),
        pytest.param(body([[throughput()]]), "records[0]", "Expected `object`, got `array`", id="record-in-a-list"),
        pytest.param(body([throughput()], batch_id="batch-1"), "batch_id", "expected a UUID", id="bad-batch-id"),
        pytest.param(body([throughput()], sent_at="2026-03-01T11:02:00"), "sent_at", "timezone", id="naive-sent-at"),
        pytest.param(body([throughput(time="2026-03-01T11:00:00")]), "records[0].time",
                     "Expected `datetime` with a timezone component", id="naive-time"),
        pytest.param(body([throughput(time="2026-03-01")]), "records[0].time", "Invalid RFC3339", id="date-only"),
        pytest.param(body([throughput(time=1772362800)]), "records[0].time", "Expected `datetime`, got `int`",
                     id="epoch-time"),
        pytest.param(b'{"records": [' + b"[" * 5000 + b"]" * 5000 + b"]}", "", "nested too deeply", id="deep-nesting"),
    ],
)
def test_malformed_bodies_are_refused_with_a_path_and_a_reason(raw, path, fragment):
    errors = batch_errors(raw)

    assert len(errors) == 1, errors
    assert errors[0]["path"] == path
    assert fragment in errors[0]["message"]


@pytest.mark.parametrize(
    ("counters", "path", "fragment"),
    [
        ({"in_errors": -1}, "records[0].counters.in_errors", ">= 0"),
        ({"in_octets": 2**32}, "records[0].counters.in_octets", "<= 4294967295"),
        ({"hc_in_octets": 2**64 - 1}, None, None),
        ({"hc_in_octets": 2**64}, "records[0].counters.hc_in_octets", "above the Counter64 maximum"),
        ({"hc_in_octets": 10**30}, "records[0].counters.hc_in_octets", "above the Counter64 maximum"),
        ({"hc_in_octets": -1}, "records[0].counters.hc_in_octets", ">= 0"),
        ({"in_crc_errors": 5}, "records[0].counters.in_crc_errors", "unknown field"),
        ([1, 2], "records[0].counters", "Expected `object`, got `array`"),
        ({"in_errors": 1.0}, "records[0].counters.in_errors", "got `float`"),
    ],
)
def test_snmp_counters_are_bounded_to_their_width(counters, path, fragment):
    raw = body([snmp(counters=counters)])

    if path is None:
        assert decode_batch(raw, now=NOW, max_records=1).records[0].counters.hc_in_octets == 2**64 - 1
        return
    errors = batch_errors(raw)
    assert paths(errors) == [path]
    assert fragment in errors[0]["message"]


@pytest.mark.parametrize(
    ("time", "fragment"),
    [
        ("2026-03-01T12:05:01Z", "301 s ahead of the receiver's clock"),
        ("2026-03-01T14:00:00+01:00", "3600 s ahead"),
        ("1999-12-31T23:59:59Z", "before 2000-01-01"),
        ("0001-01-01T00:00:00+01:00", "before 2000-01-01"),
        ("9999-12-31T23:59:59-23:59", "ahead of the receiver's clock"),
    ],
)
def test_times_outside_the_window_are_refused(time, fragment):
    errors = batch_errors(body([throughput(time=time)]))

    assert paths(errors) == ["records[0].time"]
    assert fragment in errors[0]["message"]


def test_sent_at_in_the_future_is_refused():
    errors = batch_errors(body([throughput()], sent_at="2026-03-01T13:00:00Z"))

    assert paths(errors) == ["sent_at"]


def test_too_many_records_are_refused_before_decoding_them():
    # the records are invalid too, but the count alone decides
    errors = batch_errors(body([{"type": "nonsense"}] * 11), max_records=10)

    assert errors == [{"path": "records", "message": "11 records, more than the limit of 10"}]


def test_a_newer_schema_version_is_refused_with_advice():
    errors = batch_errors(body([throughput()], schema_version=SCHEMA_VERSION + 1))

    assert paths(errors) == ["schema_version"]
    assert "upgrade the central service" in errors[0]["message"]


def test_decode_batch_requires_an_aware_now():
    with pytest.raises(TypeError):
        decode_batch(GOOD, now=datetime(2026, 3, 1, 12), max_records=1)


# --- semantic rejections -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (throughput(dst="CERN"), {"records[0].dst": "dst equals src (CERN)"}),
        (throughput(throughput_bps=None), {"records[0].throughput_bps": "required unless `error`"}),
        (udp(packets_lost=78117), {"records[0].packets_lost": "78117 lost is more than the 78116 packets sent"}),
        (udp(packets_sent=None), {"records[0].packets_sent": "required when packets_lost is given"}),
        (udp(retransmits=0), {"records[0].retransmits": "UDP has no retransmissions"}),
        (owamp(packets_lost=601), {"records[0].packets_lost": "601 lost is more than the 600 packets sent"}),
        (owamp(packets_sent=None), {"records[0].packets_sent": "required unless `error`"}),
        (host_tcp(tcp_rmem=None, tcp_wmem=None, rmem_max=None, wmem_max=None, congestion_control=None, mtu=None),
         {"records[0].tcp_rmem": "no setting given"}),
        (owamp(reordered=599), {"records[0].reordered": "599 reordered is more than the 598 packets received"}),
        (owamp(delay_min_ms=7.0), {"records[0].delay_median_ms": "median 6.3 ms is below the minimum 7.0 ms"}),
        (owamp(delay_max_ms=6.2), {"records[0].delay_max_ms": "maximum 6.2 ms is below the median 6.3 ms"}),
        (owamp(delay_median_ms=None, delay_max_ms=6.0), {"records[0].delay_median_ms": "required: 598 packets",
                                                         "records[0].delay_max_ms": "below the minimum 6.1 ms"}),
        (owamp(packets_lost=600), {"records[0].delay_min_ms": "must be null: no packet was received",
                                   "records[0].delay_median_ms": "must be null",
                                   "records[0].delay_max_ms": "must be null"}),
        (snmp(sys_uptime_ticks=None, oper_status=None), {"records[0].oper_status": "required unless `error`"}),
        (traceroute(hops=[]), {"records[0].hops": "at least one hop"}),
        (traceroute(src="FZK"), {"records[0].dst": "dst equals src (FZK)"}),
        (host_tcp(tcp_rmem=[4096, 87380, 65536]), {"records[0].tcp_rmem": "[4096, 87380, 65536] must be ascending"}),
        (host_tcp(tcp_wmem=[4096, 65536]), {"records[0].tcp_wmem": "Expected `array` of length >= 3"}),
        (host_tcp(tcp_wmem=[4096, 65536, -1]), {"records[0].tcp_wmem[2]": ">= 0"}),
        (host_tcp(mtu=65537), {"records[0].mtu": "<= 65536"}),
    ],
)
def test_inconsistent_records_are_refused_with_every_problem(record, expected):
    errors = batch_errors(body([record]))

    assert {e["path"]: e["message"] for e in errors}.keys() == expected.keys()
    for error in errors:
        assert expected[error["path"]] in error["message"]


def test_errors_of_all_records_are_reported_not_just_the_first():
    records = [throughput(), throughput(dst="CERN"), {"type": "owamp"}, udp(packets_lost=10**6), owamp(),
               host_tcp(tcp_rmem=[3, 2, 1])]

    errors = batch_errors(body(records))

    assert paths(errors) == ["records[1].dst", "records[2].time", "records[3].packets_lost", "records[5].tcp_rmem"]


def test_semantic_and_time_errors_of_one_record_are_all_reported():
    record = owamp(time="1999-01-01T00:00:00Z", dst="FZK", packets_lost=700)

    errors = batch_errors(body([record]))

    assert paths(errors) == ["records[0].time", "records[0].dst", "records[0].packets_lost"]


def test_the_error_list_is_capped_and_says_how_many_were_left_out():
    errors = batch_errors(body([throughput(dst="CERN")] * (MAX_REPORTED_ERRORS + 50), ), max_records=1000)

    assert len(errors) == MAX_REPORTED_ERRORS + 1
    assert errors[-1] == {"path": "", "message": "... and 50 more errors not shown"}


def test_record_error_is_a_value_error_whose_text_names_paths():
    with pytest.raises(ValueError, match=r"records\[0\]\.dst: dst equals src"):
        decode_batch(body([throughput(dst="CERN")]), now=NOW, max_records=1)
