"""Every real pScheduler result of the specification's fixtures/pscheduler-real (beside the repository) PUT over
HTTP to the archive endpoint, as the http archiver sends it, into PostgreSQL: each stored row checked against the
document's own numbers, each test type wanmon does not measure answered 200 with the reason it is ignored
(pScheduler retries anything else), and the UDP loss read back through the query API
(docs/perfsonar.md#what-the-real-corpus-becomes)."""

from __future__ import annotations

import base64
import json
import statistics
import urllib.parse
from datetime import datetime

import pytest
from django.db import connection

from collectors.delay import jitter
from tests.perfsonar.conftest import archive_headers, load_real, make_agent, real_corpus, send
from wanmon.inventory.choices import HostRole
from wanmon.inventory.models import Host, Site
from wanmon.perfsonar.choices import RunState
from wanmon.perfsonar.models import PerfsonarRun
from wanmon.perfsonar.pscheduler import iso_duration_s
from wanmon.perfsonar.services import run_batch_id

# What each document becomes: the table its record is stored in, or the test type that is acknowledged and ignored.
STORED = {
    **dict.fromkeys(
        [f"iperf3-parser-main-{n}.json" for n in (1, 2, 3, 4)]
        + ["iperf3-parser-main-1-reverse.json"]
        + [f"iperf2-parser-main-{n}.json" for n in (1, 2, 3, 4, 5)]
        + [f"nuttcp-parser-main-{n}.json" for n in (1, 2, 3)],
        "throughputtest",
    ),
    **dict.fromkeys(
        [
            "latency-result-format-test.json",
            "latencybg-result-format-test.json",
            "otel-latency-twamp-lggram-154500.json",
            "rtt-inputs-result-format.json",
            "otel-rtt-1.1.1.1-20260727-144527.json",
            "otel-rtt-8091.info-20260727-144647.json",
        ],
        "owamptest",
    ),
    **dict.fromkeys(["trace-inputs-result-format.json", "trace-misc-trace-result.json"], "traceroute"),
}
IGNORED = {
    f"{kind}-inputs-result-format.json": kind
    for kind in ("clock", "disk-to-disk", "dns", "dot1x", "http", "idle", "mtu", "netreach", "s3throughput")
} | {"mtu-example-result.json": "mtu"}
UDP = (
    "iperf3-parser-main-2.json", "iperf2-parser-main-3.json", "iperf2-parser-main-4.json", "nuttcp-parser-main-2.json"
)

# The corpus's endpoints (addresses and names) by the site whose toolkit they are in this inventory.
ENDPOINTS = {
    "CERN": ["100.72.1.10", "10.0.2.15", "150.254.208.65", "rit-lima-perfsonar-vm"],
    "FZK": ["100.72.2.10", "10.0.2.4", "140.182.44.177"],
    "RAL": ["100.72.2.11", "163.253.16.5", "rit-8091", "rit-www"],
}
SITE_OF = {name: code for code, names in ENDPOINTS.items() for name in names}


@pytest.fixture
def corpus_topo(db):
    """CERN, FZK and RAL with a host per endpoint of the corpus (by address, or by name for the DNS names), and
    CERN's agent, which is at one end of every measured run."""
    sites = {code: Site.objects.create(code=code, name=code, tier=0 if code == "CERN" else 1) for code in ENDPOINTS}
    for code, names in ENDPOINTS.items():
        for i, name in enumerate(names):
            address = name if name[0].isdigit() else None
            host = name if address is None else f"{code.lower()}-ps{i:02d}"
            Host.objects.create(site=sites[code], name=host, address=address, role=HostRole.TEST)
    _, token = make_agent(sites["CERN"], "cern-perfsonar")
    return token


def stored_row(table: str, run_id: str) -> dict | None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT r.*, ss.code AS src, sd.code AS dst FROM measurements_{table} r JOIN inventory_site ss "
            "ON ss.id = r.src_id JOIN inventory_site sd ON sd.id = r.dst_id WHERE r.batch_id = %s",
            [run_batch_id(run_id)],
        )
        rows = cursor.fetchall()
        names = [c.name for c in cursor.description]
    assert len(rows) <= 1, (table, run_id)
    return dict(zip(names, rows[0], strict=True)) if rows else None


def ends(doc: dict) -> tuple[str, str]:
    """The sites of the document's source (else its lead participant) and dest, in the direction data flowed."""
    spec = doc["test"]["spec"]
    source = SITE_OF[spec.get("source") or doc["participants"][0]]
    dest = spec["dest"]
    dest = SITE_OF.get(dest) or SITE_OF[dest.split(".")[0]]
    return (dest, source) if spec.get("reverse") else (source, dest)


def expected_throughput(doc: dict) -> dict:
    """The record's columns read from the document by pScheduler's throughput result schema, field by field."""
    spec, result = doc["test"]["spec"], doc["result"]
    summary, streams = result["summary"]["summary"], result["summary"]["streams"]
    udp = spec.get("udp", False)
    rtts_us = [s["rtt"] for s in streams if s.get("rtt")]
    return {
        "tool": doc["tool"]["name"],
        "protocol": "udp" if udp else "tcp",
        "throughput_bps": summary["throughput-bits"],
        "duration_s": summary["end"] - summary["start"],
        "streams": len(streams),
        "retransmits": None if udp else summary["retransmits"],
        "packets_sent": summary["sent"] if udp else None,
        "packets_lost": summary.get("lost") if udp else None,  # iperf2's client never sees the loss
        "offered_bps": spec.get("bandwidth"),
        "rtt_ms": statistics.fmean(rtts_us) / 1000 if rtts_us else None,  # iperf2 and iperf3 write microseconds
        "mss_bytes": result.get("mss"),
    }


def expected_owamp(doc: dict) -> dict:
    result = doc["result"]
    if doc["test"]["type"] == "rtt":  # half the round trips: one-way estimates (docs/perfsonar.md)
        trips_ms = [iso_duration_s(t["rtt"]) * 1000 for t in result["roundtrips"] if "rtt" in t]
        return {
            "packets_sent": result["sent"],
            "packets_lost": result["lost"],
            "duplicates": result["duplicates"],
            "reordered": result["reorders"],
            "delay_min_ms": iso_duration_s(result["min"]) * 1000 / 2,
            "delay_median_ms": statistics.median(trips_ms) / 2,
            "delay_max_ms": iso_duration_s(result["max"]) * 1000 / 2,
        }
    delays = sorted(float(v) for v, n in result["histogram-latency"].items() for _ in range(n))  # ms: no bucket-width
    return {
        "packets_sent": result["packets-sent"],
        "packets_lost": result["packets-lost"],
        "duplicates": result["packets-duplicated"],
        "reordered": result["packets-reordered"],
        "delay_min_ms": delays[0],
        "delay_median_ms": statistics.median(delays),
        "delay_max_ms": delays[-1],
        "jitter_ms": jitter(delays),
        "clock_error_ms": result["max-clock-error"],
    }


def expected_trace(doc: dict) -> dict:
    hops = doc["result"]["paths"][0]
    return {"hops": [h.get("ip") or (h.get("hostname") or "").rstrip(".").lower() or None for h in hops]}


EXPECTED = {"throughputtest": expected_throughput, "owamptest": expected_owamp, "traceroute": expected_trace}


def differences(name: str, row: dict, expected: dict) -> list[str]:
    out = []
    for column, value in expected.items():
        got = row[column]
        same = got == pytest.approx(value, rel=1e-9, abs=1e-9) if isinstance(value, float) else got == value
        if not same:
            out.append(f"{name}: {column} stored {got!r}, the document says {value!r}")
    return out


def test_the_corpus_is_classified_file_by_file():
    files = {p.name for p in real_corpus().glob("*.json")}
    assert len(files) == 31
    assert files == STORED.keys() | IGNORED.keys()  # a new document must say here what it becomes
    assert not STORED.keys() & IGNORED.keys()


@pytest.mark.django_db(transaction=True)
def test_every_real_result_is_stored_with_its_numbers_or_ignored_with_the_reason(live_server, corpus_topo):
    archive = f"{live_server.url}/api/v1/perfsonar/archive"
    headers = archive_headers(corpus_topo)
    problems: list[str] = []
    for name in sorted(STORED.keys() | IGNORED.keys()):
        doc = load_real(name)
        status, answer = send(archive, doc, headers)
        if name in IGNORED:
            expected = {"run_id": doc["id"], "accepted": 0, "duplicate": False, "parked": False}
            if status != 200 or {k: answer.get(k) for k in expected} != expected:
                problems.append(f"{name}: answered {status} {answer}")
            elif f"test type {IGNORED[name]!r}" not in answer.get("ignored", ""):
                problems.append(f"{name}: ignored without naming its test type: {answer}")
            continue
        if (status, answer) != (200, {"run_id": doc["id"], "accepted": 1, "duplicate": False, "parked": False}):
            problems.append(f"{name}: answered {status} {answer}")
            continue
        table = STORED[name]
        row = stored_row(table, doc["id"])
        if row is None:
            problems.append(f"{name}: nothing stored in measurements_{table}")
            continue
        problems += differences(name, row, {"src": ends(doc)[0], "dst": ends(doc)[1], "error": None})
        problems += differences(name, row, EXPECTED[table](doc))
        if datetime.fromisoformat(doc["schedule"]["start"]) != row["time"]:
            problems.append(f"{name}: time {row['time']} is not the run's start {doc['schedule']['start']}")
        extra = row["extra"] if isinstance(row["extra"], dict) else json.loads(row["extra"])
        if json.loads(extra["raw_excerpt"])["pscheduler"]["run"] != doc["id"]:
            problems.append(f"{name}: the excerpt does not name the run")
    assert problems == []
    states = dict(PerfsonarRun.objects.values_list("run_id", "state"))
    assert sorted(states.values()).count(RunState.IGNORED) == len(IGNORED) == 10
    assert sorted(states.values()).count(RunState.INGESTED) == len(STORED) == 21
    with connection.cursor() as cursor:  # nothing else stored: one row per measured run, none for the others
        cursor.execute(
            "SELECT (SELECT count(*) FROM measurements_throughputtest), (SELECT count(*) FROM measurements_owamptest),"
            " (SELECT count(*) FROM measurements_traceroute)"
        )
        assert cursor.fetchone() == (13, 6, 2)


@pytest.mark.django_db(transaction=True)
def test_udp_packet_counts_are_stored_and_answer_the_loss_fraction_query(live_server, corpus_topo, settings):
    archive = f"{live_server.url}/api/v1/perfsonar/archive"
    for name in UDP:
        assert send(archive, load_real(name), archive_headers(corpus_topo))[0] == 200, name
    rows = {name: stored_row("throughputtest", load_real(name)["id"]) for name in UDP}
    assert {name: (r["protocol"], r["packets_sent"], r["packets_lost"]) for name, r in rows.items()} == {
        "iperf3-parser-main-2.json": ("udp", 159, 0),
        "iperf2-parser-main-3.json": ("udp", 537, None),  # iperf2 reports its writes, never the loss
        "iperf2-parser-main-4.json": ("udp", 1074, None),
        "nuttcp-parser-main-2.json": ("udp", 259593, 1485),
    }

    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("noc", password="secret-pass")
    settings.WANMON_API_BASIC_AUTH = True
    auth = {"Authorization": "Basic " + base64.b64encode(b"noc:secret-pass").decode()}
    query = urllib.parse.urlencode({
        "metric": "udp_loss_fraction", "src": "CERN", "dst": "FZK", "aggregate": "max", "bucket": "10m",
        "start": "2026-11-28T12:00:00Z", "end": "2026-11-28T14:00:00Z",
    })
    status, answer = send(f"{live_server.url}/api/v1/query?{query}", b"", auth, method="GET")
    assert status == 200, answer
    (series,) = answer["series"]
    by_start = {datetime.fromisoformat(t.replace("Z", "+00:00")): v for t, v in series["points"]}
    loss = {name: by_start[datetime.fromisoformat(load_real(name)["schedule"]["start"])] for name in UDP}
    nuttcp = loss["nuttcp-parser-main-2.json"]
    assert nuttcp == pytest.approx(1485 / 259593) and round(nuttcp, 6) == 0.00572
    assert loss["iperf3-parser-main-2.json"] == 0.0
    # Unknown, not zero: iperf2's client counts what it sent, and the loss is only in the server's report.
    assert loss["iperf2-parser-main-3.json"] is None and loss["iperf2-parser-main-4.json"] is None
