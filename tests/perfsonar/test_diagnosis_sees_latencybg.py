"""A perfSONAR latencybg series is evidence like an agent's owamp sessions: 1 % loss in one direction of a
path, archived by pScheduler, gives the diagnosis exactly the findings the same numbers give as owamp."""

from __future__ import annotations

import copy
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from collectors.records import decode_records
from tests.perfsonar.conftest import load
from tests.perfsonar.test_archive_api import put
from wanmon.diagnosis.choices import ACTIVE_STATUSES
from wanmon.diagnosis.models import DiagnosisCycle, Finding, PathEvaluation
from wanmon.diagnosis.shards import diagnosis_cycle_run
from wanmon.inventory.models import Path as InventoryPath
from wanmon.measurements.ingest import batch_ingest

pytestmark = pytest.mark.django_db

CERN, FZK = "192.168.1.104", "192.168.1.101"  # the toolkits of ps_topo
SESSIONS = 12  # one every 10 minutes: two hours
SENT, LOST = 600, 6  # 1 % loss: far above owamp's detection limit for 600 packets (~2e-3)
# one-way delays around 5 ms, as a histogram of milliseconds -> packets
HISTOGRAM = {"5.10": 100, "5.20": 200, "5.30": 150, "5.40": 100, "5.60": 44}


def _latencybg(src: str, dst: str, start, lost: int) -> dict:
    body = copy.deepcopy(load("pscheduler-archiver-http-latency-1.json"))
    body["id"] = str(uuid.uuid4())
    body["test"] = {"type": "latencybg", "spec": {"schema": 1, "source": src, "dest": dst}}
    body["tool"] = {"name": "powstream", "version": "5.0.0"}
    iso = start.isoformat()
    body["schedule"] = {"start": iso, "duration": "PT60S"}
    body["run"].update({"start-time": iso, "end-time": (start + timedelta(seconds=60)).isoformat()})
    histogram = dict(HISTOGRAM)
    histogram["5.60"] -= lost
    body["result"] = {
        "schema": 1, "succeeded": True, "packets-sent": SENT, "packets-lost": lost, "packets-received": SENT - lost,
        "packets-duplicated": 0, "packets-reordered": 0, "max-clock-error": 0.5, "histogram-latency": histogram,
    }
    return body


def _owamp(src: str, dst: str, start, lost: int) -> dict:
    return {"type": "owamp", "time": start.isoformat(), "src": src, "dst": dst, "tool": "powstream",
            "packets_sent": SENT, "packets_lost": lost, "duplicates": 0, "reordered": 0,
            "delay_min_ms": 5.1, "delay_median_ms": 5.3, "delay_max_ms": 5.6, "clock_error_ms": 0.5}


def _findings(now) -> set[tuple]:
    """What the beat's cycle at ``now`` finds, as a centre that never evaluated anything before would."""
    for model in (Finding, DiagnosisCycle, PathEvaluation):
        model.objects.all().delete()
    diagnosis_cycle_run(now=now)
    active = Finding.objects.filter(status__in=ACTIVE_STATUSES)
    return {(f.code, f.severity, tuple(sorted(f.subject.items()))) for f in active}


def _sessions(now):
    return [now - timedelta(minutes=10 * (SESSIONS - i)) for i in range(SESSIONS)]


def test_latencybg_loss_in_one_direction_gives_the_findings_owamp_gives(client, ps_topo):
    # CERN<->FZK as the inventory knows it: 10 Gb/s, 10 ms (what makes 1 % loss fatal for TCP)
    InventoryPath.objects.filter(src__code__in=("CERN", "FZK"), dst__code__in=("CERN", "FZK")).update(
        capacity_mbps=10_000, rtt_ms=10.0
    )
    now = timezone.now().replace(microsecond=0)
    # given: FZK->CERN loses 1 %, CERN->FZK nothing, as archived by pScheduler
    for start in _sessions(now):
        assert put(client, _latencybg(FZK, CERN, start, LOST), ps_topo["cern_token"]).status_code == 200
        assert put(client, _latencybg(CERN, FZK, start, 0), ps_topo["cern_token"]).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), sum(packets_lost) FROM measurements_owamptest")
        assert cursor.fetchone() == (2 * SESSIONS, SESSIONS * LOST)
    from_perfsonar = _findings(now)

    # when: the same numbers arrive as an agent's owamp sessions instead
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM measurements_owamptest")
    records = [
        r
        for start in _sessions(now)
        for r in (_owamp("FZK", "CERN", start, LOST), _owamp("CERN", "FZK", start, 0))
    ]
    batch_ingest(batch_id=str(uuid.uuid4()), records=decode_records(records), agent=ps_topo["cern_agent"])
    from_owamp = _findings(now)

    # then: the diagnosis sees the same thing, and it is about the lossy direction
    assert from_perfsonar == from_owamp
    assert any(("dst", "CERN") in subject and ("src", "FZK") in subject for _, _, subject in from_perfsonar), (
        from_perfsonar
    )
