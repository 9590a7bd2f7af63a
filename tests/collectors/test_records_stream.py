"""decode_batch_stream and the batch-wise checks behind the ingest hot path agree with decode_batch exactly."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.records import Record, RecordError, decode_batch, decode_batch_stream
from collectors.records.checks import records_clean, semantic_errors
from tests.collectors.test_records import ALL_EXAMPLES, NOW, body, snmp
from tests.collectors.test_records_decode import changed_records


def _outcome(decode):
    try:
        return "ok", decode()
    except RecordError as exc:
        return "error", exc.errors


def _streamed(raw: bytes, chunk_records: int, max_records: int = 10) -> list:
    stream = decode_batch_stream(raw, now=NOW, max_records=max_records, chunk_records=chunk_records)
    return [record for chunk in stream.chunks for record in chunk]


def test_chunks_add_up_to_the_batch_in_order():
    records = [make() for make in ALL_EXAMPLES] * 3
    raw = body(records)
    stream = decode_batch_stream(raw, now=NOW, max_records=50, chunk_records=4)
    chunks = list(stream.chunks)
    assert [len(c) for c in chunks] == [1, 4, 4, 4, 4, 1]  # a small first chunk: storing starts sooner
    assert [r for c in chunks for r in c] == decode_batch(raw, now=NOW, max_records=50).records
    assert (stream.batch_id, stream.record_count) == ("6f1c0c8e-1b7e-4c8a-9a53-2f3f1c1d9e01", 18)
    assert stream.decode_s[0] > 0


def test_an_empty_batch_has_no_chunks():
    stream = decode_batch_stream(body([]), now=NOW, max_records=10, chunk_records=4)
    assert (stream.record_count, list(stream.chunks)) == (0, [])


def test_a_bad_record_in_a_late_chunk_raises_the_whole_batch_errors_from_the_iterator():
    records = [snmp() for _ in range(9)]
    records[1]["interface"] = " padded"
    records[7]["counters"] = {"hc_in_octets": 2**64}
    raw = body(records)
    stream = decode_batch_stream(raw, now=NOW, max_records=10, chunk_records=5)
    with pytest.raises(RecordError) as streamed:
        list(stream.chunks)
    with pytest.raises(RecordError) as whole:
        decode_batch(raw, now=NOW, max_records=10)
    assert streamed.value.errors == whole.value.errors
    assert [e["path"] for e in whole.value.errors] == ["records[1].interface", "records[7].counters.hc_in_octets"]


@pytest.mark.parametrize(
    ("changes", "max_records"),
    [({"sent_at": "2026-03-01T11:02:00"}, 10), ({"sent_at": "2026-03-02T11:02:00Z"}, 10), ({"schema_version": 99}, 10),
     ({"batch_id": "x"}, 10), ({"agent_version": " "}, 10), ({}, 2)],
)
def test_envelope_errors_are_raised_at_once_as_decode_batch_words_them(changes, max_records):
    raw = body([snmp(), snmp(), snmp()], **changes)
    with pytest.raises(RecordError) as streamed:
        decode_batch_stream(raw, now=NOW, max_records=max_records)
    with pytest.raises(RecordError) as whole:
        decode_batch(raw, now=NOW, max_records=max_records)
    assert streamed.value.errors == whole.value.errors


@settings(max_examples=400, deadline=None)
@given(changed=changed_records(), chunk=st.integers(min_value=1, max_value=3))
def test_streaming_any_changed_record_gives_what_decode_batch_gives(changed, chunk):
    make, record = changed
    raw = body([snmp(), record, make(), snmp()])

    whole = _outcome(lambda: decode_batch(raw, now=NOW, max_records=10).records)
    streamed = _outcome(lambda: _streamed(raw, chunk))

    assert streamed == whole


@settings(max_examples=400, deadline=None)
@given(changed=changed_records())
def test_batch_wise_checks_accept_exactly_the_records_without_semantic_errors(changed):
    make, record = changed
    try:  # structure only: the semantic layer is what is compared
        decoded = msgspec.json.decode(json.dumps(record), type=Record)
    except (msgspec.DecodeError, RecursionError):
        return
    clean = not semantic_errors(decoded, NOW, finite_checked=True)
    assert records_clean([decoded], NOW) is clean
    assert records_clean([msgspec.json.decode(json.dumps(make()), type=Record), decoded], NOW) is clean
