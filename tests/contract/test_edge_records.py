"""Records at the edges of the wire schema, generated: each batch is stored exactly, or refused naming its record.

For every record type, Hypothesis builds batches of one to three records with values at the bounds
the schema allows (Counter64 2^64-1, Counter32 2^32-1, 0, 2^63-1 counts, 5e-324 and 1e13 rates,
the smallest and largest speeds), floats where the store has integers, null for every optional
field, 128-character and non-ASCII names. The real ingest view must answer 200 and store every
value as sent (read back with SQL), or 400 with errors that each name a record (``records[i]...``)
and nothing stored. A 500 (an exception in the view) or a 503 fails the test.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from tests.contract.wire import ERROR_PATH, agent_batch, assert_stored, batch_stored, post_batch, stored_rows

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

EXAMPLES = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

U32_MAX, U63_MAX, U64_MAX = 2**32 - 1, 2**63 - 1, 2**64 - 1
NOW = datetime.now(UTC)

# --- values ----------------------------------------------------------------------------------------


def optional(values: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.none(), values)


def edge_ints(low: int, high: int, *more: int) -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from([low, high, *more]), st.integers(low, high))


def edge_floats(low: float, high: float, *more: float) -> st.SearchStrategy[float]:
    return st.one_of(st.sampled_from([low, high, *more]), st.floats(low, high, allow_nan=False, allow_infinity=False))


@st.composite
def floats_for_ints(draw, record: dict) -> dict:
    """Now and then one integer of the record sent as a JSON float (5.0): the schema refuses it (400)."""
    ints = [k for k, v in record.items() if type(v) is int]
    ints += [f"counters.{k}" for k, v in record.get("counters", {}).items() if type(v) is int]
    if not ints or draw(st.integers(0, 9)):
        return record
    field = draw(st.sampled_from(sorted(ints)))
    if field.startswith("counters."):
        name = field.removeprefix("counters.")
        return {**record, "counters": {**record["counters"], name: float(record["counters"][name])}}
    return {**record, field: float(record[field])}


_recent = st.builds(
    lambda back_s, micro, offset: (NOW - timedelta(seconds=back_s, microseconds=micro)).astimezone(offset).isoformat(),
    st.integers(60, 6 * 3600),
    st.integers(0, 999_999),
    st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]),
)
# The first instant the schema accepts, and a clock running 4 minutes ahead (5 are tolerated).
times = st.one_of(
    _recent, _recent, _recent, st.sampled_from(["2000-01-01T00:00:00Z", (NOW + timedelta(minutes=4)).isoformat()])
)

# Names: no control characters or surrogates (the schema refuses them); non-ASCII, astral planes, 128 long.
_NAME_CHARS = st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp"), blacklist_characters=":\x85\u180e")


def names(max_size: int, *, inner_spaces: bool = False) -> st.SearchStrategy[str]:
    edges = ["x" * max_size, "é" * max_size, "\U0001d53e" * max_size, "Gi0/0/0.100-ëth☃"[:max_size]]
    if inner_spaces:
        edges.append("Serial0/0/0:1 E1 to FZK"[:max_size].replace(":", "."))
        edges.append(("A " * max_size)[: max_size - 1] + "Z")
    return st.one_of(st.sampled_from(edges), st.text(_NAME_CHARS, min_size=1, max_size=max_size))


labels = st.one_of(
    st.sampled_from(["nuttcp", "owping", "twamp-light", "bbr", "x" * 64]),
    st.from_regex(r"\A[a-z0-9][a-z0-9_.+-]{0,20}\Z"),
)
host_names = st.one_of(st.sampled_from(["2001:db8::1", "192.0.2.1", "h" * 255, "ü" * 255]), names(255))
texts = st.one_of(
    st.sampled_from(["", "Error: connect: Connection refused\nerrno=111", "ø" * 8192]),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=200),
)


def common_fields(*, error: st.SearchStrategy | None = None) -> dict[str, st.SearchStrategy]:
    return {
        "time": times,
        "tool_version": optional(names(128, inner_spaces=True)),
        "error": error if error is not None else optional(texts),
        "exit_code": optional(edge_ints(-(2**31), 2**31 - 1, 0, 1, 127)),
        "stderr_excerpt": optional(texts),
        "raw_excerpt": optional(texts),
    }


@st.composite
def path_fields(draw) -> dict:
    src, dst = draw(st.sampled_from([("CERN", "FZK"), ("FZK", "CERN")]))
    return {
        "src": src,
        "dst": dst,
        "src_host": draw(optional(host_names)),
        "dst_host": draw(optional(host_names)),
        "schedule_interval_s": draw(optional(edge_floats(5e-324, 7 * 86400.0, 60.0, 1800.0))),
    }


@st.composite
def lost_of(draw, sent: int | None) -> int | None:
    if sent is None:
        return None
    return draw(st.one_of(st.sampled_from([0, sent]), st.integers(0, sent)))


# --- records ---------------------------------------------------------------------------------------

counter64 = optional(edge_ints(0, U64_MAX, 2**32, U63_MAX, 2**63))
counter32 = optional(edge_ints(0, U32_MAX))


@st.composite
def snmp_records(draw, equipment: st.SearchStrategy[str]) -> dict:
    counters = {
        **{
            name: draw(counter64) for name in ("hc_in_octets", "hc_out_octets", "hc_in_ucast_pkts", "hc_out_ucast_pkts")
        },
        **{name: draw(counter32) for name in ("in_octets", "out_octets", "in_errors", "out_errors")},
        **{name: draw(counter32) for name in ("in_discards", "out_discards")},
    }
    return {
        "type": "snmp",
        **{k: draw(v) for k, v in common_fields().items()},
        "equipment": draw(equipment),
        "interface": draw(names(128, inner_spaces=True)),
        "counters": {k: v for k, v in counters.items() if v is not None or draw(st.booleans())},
        "if_index": draw(optional(edge_ints(1, 2**31 - 1))),
        "host": draw(optional(host_names)),
        "sys_uptime_ticks": draw(optional(edge_ints(0, U32_MAX))),
        "snmp_engine_boots": draw(optional(edge_ints(0, 2**31 - 1))),
        "counter_discontinuity_ticks": draw(optional(edge_ints(0, U32_MAX))),
        "oper_status": draw(st.sampled_from([None, "up", "up", "down", "lowerLayerDown", "notPresent", "dormant"])),
        "admin_status": draw(optional(st.sampled_from(["up", "down", "testing"]))),
        # ifHighSpeed whole Mbit/s (sent as int or float), an E1's 2.048, ifSpeed/1e6 of a slow serial line
        "speed_mbps": draw(
            optional(
                st.one_of(edge_floats(0.0, 1e7, 5e-324, 1e-9, 0.064, 2.048, 4294.967295, 10000.0), edge_ints(0, 10**7))
            )
        ),
    }


@st.composite
def throughput_records(draw) -> dict:
    protocol = draw(st.sampled_from(["tcp", "udp"]))
    sent = draw(optional(edge_ints(0, U63_MAX)))
    record = {
        "type": "throughput",
        **{k: draw(v) for k, v in common_fields().items()},
        **draw(path_fields()),
        "tool": draw(labels),
        "protocol": protocol,
        "duration_s": draw(edge_floats(5e-324, 86400.0, 10.0, 10.5)),
        "throughput_bps": draw(optional(edge_floats(0.0, 1e13, 5e-324, 9.41e9))),
        "streams": draw(optional(edge_ints(1, 4096))),
        "window_bytes": draw(optional(edge_ints(0, 2**40))),
        "mss_bytes": draw(optional(edge_ints(1, 65535))),
        "retransmits": draw(optional(edge_ints(0, U63_MAX))) if protocol == "tcp" else None,
        "rtt_ms": draw(optional(edge_floats(0.0, 3.6e6, 5e-324))),
        "offered_bps": draw(optional(edge_floats(0.0, 1e13))),
        "packets_sent": sent,
        "packets_lost": draw(lost_of(sent if isinstance(sent, int) else None)),
    }
    if record["throughput_bps"] is None and record["error"] is None:
        record["error"] = "nuttcp: connect: Connection refused"
    return record


@st.composite
def owamp_records(draw) -> dict:
    sent = draw(edge_ints(0, U63_MAX, 1, 600))
    lost = draw(lost_of(sent))
    received = sent - lost
    delays = sorted(draw(st.lists(edge_floats(-3.6e6, 3.6e6, 0.0, 5e-324, -5e-324), min_size=3, max_size=3)))
    record = {
        "type": "owamp",
        **{k: draw(v) for k, v in common_fields().items()},
        **draw(path_fields()),
        "packets_sent": sent,
        "packets_lost": lost,
        "duplicates": draw(optional(edge_ints(0, U63_MAX))),
        "reordered": draw(optional(st.integers(0, received))),
        "delay_min_ms": delays[0] if received else None,
        "delay_median_ms": delays[1] if received else None,
        "delay_max_ms": delays[2] if received else None,
        "jitter_ms": draw(optional(edge_floats(0.0, 3.6e6))),
        "clock_error_ms": draw(optional(edge_floats(0.0, 3.6e6, 4.7e-7))),
        "tool": draw(optional(labels)),
        "packet_interval_s": draw(optional(edge_floats(5e-324, 7 * 86400.0, 0.1))),
        "packet_size_bytes": draw(optional(edge_ints(1, 65535))),
    }
    return record


hops = st.one_of(st.none(), st.just("*"), host_names)


@st.composite
def traceroute_records(draw) -> dict:
    record = {
        "type": "traceroute",
        **{k: draw(v) for k, v in common_fields().items()},
        **draw(path_fields()),
        "hops": draw(st.one_of(st.lists(hops, min_size=1, max_size=8), st.lists(hops, min_size=255, max_size=255))),
        "pmtu_bytes": draw(optional(edge_ints(68, 65535, 1500, 9000))),
        "tool": draw(optional(labels)),
    }
    return record


triple = st.lists(edge_ints(0, 2**40), min_size=3, max_size=3).map(sorted)


@st.composite
def host_tcp_records(draw) -> dict:
    record = {
        "type": "host_tcp",
        **{k: draw(v) for k, v in common_fields().items()},
        "site": "CERN",
        "host": draw(host_names),
        "tcp_rmem": draw(optional(triple)),
        "tcp_wmem": draw(optional(triple)),
        "rmem_max": draw(optional(edge_ints(0, 2**40))),
        "wmem_max": draw(optional(edge_ints(0, 2**40))),
        "congestion_control": draw(optional(labels)),
        "mtu": draw(optional(edge_ints(68, 65536, 1500, 9000))),
        "interface": draw(optional(names(128, inner_spaces=True))),
    }
    if all(record[k] is None for k in ("tcp_rmem", "tcp_wmem", "rmem_max", "wmem_max", "congestion_control", "mtu")):
        record["error"] = record["error"] or "every sysctl hidden"
    return record


def batches(records: st.SearchStrategy[dict], *, min_size: int = 1, max_size: int = 3) -> st.SearchStrategy[list[dict]]:
    return st.lists(records.flatmap(floats_for_ints), min_size=min_size, max_size=max_size)


# --- the property ----------------------------------------------------------------------------------


def stored_exactly_or_refused_by_record(client, centre, records: list[dict]) -> None:
    batch = agent_batch(records)
    response = post_batch(client, centre.token, batch)
    note(f"{response.status_code} {response.content[:2000]!r}")
    event(f"HTTP {response.status_code}")
    if response.status_code == 400:
        event(response.json()["errors"][0]["message"][:60])
    assert response.status_code in (200, 400), (response.status_code, response.content[:2000])
    if response.status_code == 200:
        assert response.json()["accepted"] == len(records)
        assert_stored(batch, agent_id=centre.agent.id)
        return
    errors = response.json()["errors"]
    assert errors
    for error in errors:
        match = ERROR_PATH.match(error["path"])
        assert match and int(match[1]) < len(records), f"an error that names no record: {error}"
        assert error["message"]
    assert not batch_stored(batch.batch_id)
    assert not any(stored_rows(batch.batch_id).values())


# Equipment names exist in the inventory (at most 100 characters there, see test_wire_schema_columns).
equipment_names = st.one_of(
    st.sampled_from(["e" * 100, "ü" * 100, "\U0001d53e" * 100, "cern-border"]),
    st.text(_NAME_CHARS, min_size=1, max_size=100),
)


@given(records=batches(snmp_records(equipment_names)))
@EXAMPLES
def test_snmp_samples_at_the_edges(client, centre, records):
    for record in records:
        centre.equipment(record["equipment"])
    stored_exactly_or_refused_by_record(client, centre, records)


@pytest.mark.parametrize(
    "records_of",
    [throughput_records, owamp_records, traceroute_records, host_tcp_records],
    ids=["throughput-tests", "owamp-sessions", "traceroutes", "host-tcp-settings"],
)
@given(data=st.data())
@EXAMPLES
def test_records_of_each_kind_at_the_edges(client, centre, records_of, data):
    stored_exactly_or_refused_by_record(client, centre, data.draw(batches(records_of()), label="records"))


@given(
    records=batches(
        st.one_of(
            snmp_records(st.just("cern-border")),
            throughput_records(),
            owamp_records(),
            traceroute_records(),
            host_tcp_records(),
        ),
        min_size=2,
        max_size=6,
    )
)
@EXAMPLES
def test_mixed_batches_at_the_edges(client, centre, settings, records):
    # Streamed in chunks of two records (the first of one): errors must still name the batch's record.
    settings.WANMON_INGEST_STREAM_CHUNK_RECORDS = 2
    centre.equipment("cern-border")
    stored_exactly_or_refused_by_record(client, centre, records)
