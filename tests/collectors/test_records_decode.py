"""The wire schema beyond the ingest: decode_records (scenario replay), records built by the agent, the schema's
contract with the JSON Schema, and nothing but RecordError for any input."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, timezone

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.counters import COUNTER_SPECS
from collectors.records import (
    RECORD_TYPES,
    Batch,
    Counters,
    OwampRecord,
    RecordError,
    SnmpRecord,
    ThroughputRecord,
    TracerouteRecord,
    batch_json_schema,
    decode_batch,
    decode_records,
    encode_batch,
    record_errors,
)
from collectors.records.schema import _BatchEnvelope
from tests.collectors.test_records import (
    ALL_EXAMPLES,
    BATCH_ID,
    NOW,
    body,
    owamp,
    paths,
    snmp,
    throughput,
)

# --- decode_records (scenario replay) ----------------------------------------------------------


def test_scenario_records_accept_datetimes_and_iso_strings_and_report_their_own_path():
    items = [throughput(time=datetime(2026, 3, 1, 13, tzinfo=timezone(timedelta(hours=2)))), owamp()]

    records = decode_records(items, path="measurements")

    assert records[0].time == datetime(2026, 3, 1, 11, tzinfo=UTC)
    assert isinstance(records[1], OwampRecord)


@pytest.mark.parametrize(
    ("item", "path", "fragment"),
    [
        (throughput(throughput_bps=float("nan")), "measurements[12].throughput_bps", "nan is not allowed"),
        (throughput(rtt_ms=float("inf")), "measurements[12].rtt_ms", "inf is not allowed"),
        (throughput(time=datetime(2026, 3, 1, 11)), "measurements[12].time", "timezone"),
        (throughput(time=date(2026, 3, 1)), "measurements[12].time", "Expected `datetime`, got `date`"),
        (throughput(src="CE\x00RN"), "measurements[12].src", "expected a site code"),
        (throughput(src="CE\ud800RN"), "measurements[12].src", "expected a site code"),
        (throughput(error="stderr:\x00"), "measurements[12].error", "without NUL characters or lone surrogates"),
        (snmp(equipment="geant:par"), "measurements[12].equipment", "without spaces, ':'"),
        (snmp(counters={1: 2}), "measurements[12].counters", "object keys must be strings"),
        (throughput(window_bytes="4e6"), "measurements[12].window_bytes", "got `str`"),  # ints stay strict
        (throughput(src="1e9"), None, None),  # a string field keeps its string
        (throughput(throughput_bps=".nan"), "measurements[12].throughput_bps", "got `str`"),
        (throughput(throughput_bps=True), "measurements[12].throughput_bps", "got `bool`"),
        (snmp(counters={"hc_in_octets": 2**64}), "measurements[12].counters.hc_in_octets", "Counter64 maximum"),
        ("not a record", "measurements[12]", "Expected `object`, got `str`"),
    ],
)
def test_scenario_records_are_checked_with_paths_under_the_given_prefix(item, path, fragment):
    items = [throughput()] * 12 + [item]

    if path is None:
        assert decode_records(items)[12].src == "1e9"
        return
    with pytest.raises(RecordError) as caught:
        decode_records(items, path="measurements")
    assert paths(caught.value.errors) == [path]
    assert fragment in caught.value.errors[0]["message"]


def test_yaml_1_1_exponent_strings_are_numbers_in_float_fields():
    # PyYAML reads `throughput_bps: 9.0e8` (YAML 1.1 wants a signed exponent) as the string "9.0e8".
    record = decode_records([throughput(throughput_bps="9.0e8", rtt_ms="1.25E+1")])[0]

    assert record.throughput_bps == 9.0e8 and record.rtt_ms == 12.5


def test_scenario_times_may_be_in_the_future_unless_now_is_given():
    item = throughput(time="2030-01-01T00:00:00Z")

    assert decode_records([item])[0].time.year == 2030
    with pytest.raises(RecordError, match="ahead of the receiver's clock"):
        decode_records([item], now=NOW)


def test_decode_records_accepts_a_json_array_and_refuses_other_documents():
    assert len(decode_records(json.dumps([throughput(), snmp()]).encode())) == 2
    with pytest.raises(RecordError) as caught:
        decode_records(b'{"type": "snmp"}', path="measurements")
    assert caught.value.errors == [{"path": "measurements", "message": "Expected `array`, got `object`"}]
    with pytest.raises(RecordError):
        decode_records({"type": "snmp"})  # a mapping is not a list of records
    with pytest.raises(RecordError, match="more than the limit of 1"):
        decode_records([throughput(), throughput()], max_records=1)


# --- records built by the agent ----------------------------------------------------------------


def test_record_errors_checks_a_record_built_in_code():
    good = ThroughputRecord(time=NOW, src="CERN", dst="FZK", tool="nuttcp", protocol="tcp", duration_s=10,
                            throughput_bps=9e8)
    lossy = OwampRecord(time=NOW, src="CERN", dst="FZK", packets_sent=10, packets_lost=20, duplicates=0, reordered=0)
    nan = ThroughputRecord(time=NOW, src="CERN", dst="FZK", tool="nuttcp", protocol="tcp", duration_s=10,
                           throughput_bps=float("nan"))
    bad_counter = SnmpRecord(time=NOW, equipment="geant-par", interface="xe-1/0/0", sys_uptime_ticks=1,
                             oper_status="up", counters=Counters(in_octets=2**32))

    assert record_errors(good) == []
    assert paths(record_errors(lossy)) == ["packets_lost"]
    assert record_errors(nan, path="records[7]") == [
        {"path": "records[7].throughput_bps", "message": "nan is not allowed: numbers must be finite"}]
    assert paths(record_errors(bad_counter)) == ["counters.in_octets"]


def test_a_naive_time_in_code_is_refused_not_taken_as_local_time():
    record = ThroughputRecord(time=datetime(2026, 3, 1, 11), src="CERN", dst="FZK", tool="nuttcp", protocol="tcp",
                              duration_s=10, throughput_bps=9e8)

    assert record.time.tzinfo is None
    assert paths(record_errors(record)) == ["time"]


def test_encode_batch_refuses_what_the_centre_would_refuse():
    nan = ThroughputRecord(time=NOW, src="CERN", dst="FZK", tool="nuttcp", protocol="tcp", duration_s=10,
                           throughput_bps=float("nan"))
    loop = TracerouteRecord(time=NOW, src="CERN", dst="CERN", hops=["cern-border"])

    with pytest.raises(RecordError) as caught:
        encode_batch(Batch(batch_id=BATCH_ID, agent_version="1.0.0", sent_at=NOW, records=[loop, nan]), now=NOW)
    assert paths(caught.value.errors) == ["records[1].throughput_bps"]  # NaN first: it would travel as null
    with pytest.raises(RecordError) as caught:
        encode_batch(Batch(batch_id=BATCH_ID, agent_version="1.0.0", sent_at=NOW, records=[loop]), now=NOW)
    assert paths(caught.value.errors) == ["records[0].dst"]
    unchecked = encode_batch(Batch(batch_id=BATCH_ID, agent_version="1.0.0", sent_at=NOW, records=[loop]),
                             validate=False)
    assert json.loads(unchecked)["records"][0]["dst"] == "CERN"


# --- schema contract ---------------------------------------------------------------------------


def test_counters_struct_and_counter_arithmetic_know_the_same_counters():
    assert set(Counters.__struct_fields__) == set(COUNTER_SPECS)


def test_the_decoding_envelope_matches_the_batch():
    assert Batch.__struct_fields__ == _BatchEnvelope.__struct_fields__


def test_json_schema_describes_every_record_type():
    schema = json.dumps(batch_json_schema())

    for tag in RECORD_TYPES:
        assert f'"{tag}"' in schema


# --- never anything but RecordError ------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)


def _field_values(example):
    return st.sampled_from(sorted(example)).flatmap(lambda key: st.tuples(st.just(key), _json_values))


@st.composite
def changed_records(draw) -> tuple[Callable[[], dict], dict]:
    """An example record of any kind with one field set to any JSON value: (the example's maker, the record)."""
    make = draw(st.sampled_from(ALL_EXAMPLES))
    record = make()
    key, value = draw(_field_values(record))
    record[key] = value
    return make, record


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(max_size=300))
def test_arbitrary_bytes_give_a_batch_or_a_record_error(raw):
    try:
        decode_batch(raw, now=NOW, max_records=10)
    except RecordError as exc:
        assert exc.errors and all(set(e) == {"path", "message"} for e in exc.errors)


@settings(max_examples=500, deadline=None)
@given(changed=changed_records())
def test_any_value_in_any_field_gives_a_batch_or_a_record_error(changed):
    _, record = changed

    try:
        batch = decode_batch(body([record]), now=NOW, max_records=1)
    except RecordError as exc:
        assert exc.errors and all(e["path"] == "" or e["path"].startswith("records[0]") for e in exc.errors)
    else:
        assert record_errors(batch.records[0], now=NOW) == []  # what decodes also re-validates
        assert msgspec.json.decode(encode_batch(batch, now=NOW)) is not None
