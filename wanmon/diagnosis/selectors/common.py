"""What every evidence read shares: raw SQL rows, the path versions in force, host TCP settings, maintenance."""

from __future__ import annotations

from datetime import datetime

from django.db import connection
from django.db.models import Prefetch, Q

from wanmon.diagnosis.evidence import HostTcpEvidence, MaintenanceWindow
from wanmon.diagnosis.maintenance_windows import maintenance_window_list_for_diagnosis
from wanmon.inventory.models import Path, PathHop


def sql_rows(sql: str, params) -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def pairs_params(keys: list[tuple[int, int]]) -> list[list[int]]:
    return [[k[0] for k in keys], [k[1] for k in keys]]


def paths_valid_at(at: datetime):
    """Path versions in force at ``at`` (route history stays explainable)."""
    return (
        Path.objects.filter(valid_from__lte=at)
        .filter(Q(valid_to__isnull=True) | Q(valid_to__gt=at))
        .select_related("src", "dst")
        .prefetch_related(Prefetch("hops", queryset=PathHop.objects.select_related("equipment", "interface")))
    )


def host_tcp_list(start: datetime, end: datetime, known: dict[str, str | None]) -> list[HostTcpEvidence]:
    return [
        HostTcpEvidence(
            site=r["site"],
            host=r["host"],
            time=r["time"],
            rmem_max=r["rmem_max"],
            wmem_max=r["wmem_max"],
            tcp_rmem=tuple(r["tcp_rmem"]) if r["tcp_rmem"] else None,
            tcp_wmem=tuple(r["tcp_wmem"]) if r["tcp_wmem"] else None,
            congestion_control=r["congestion_control"],
            mtu=r["mtu"],
            address=known.get(r["host"]),
            nic_speed_mbps=r["nic_speed_mbps"],
        )
        for r in sql_rows(
            """SELECT h.time, s.code AS site, h.host, h.rmem_max, h.wmem_max, h.tcp_rmem, h.tcp_wmem,
                      h.congestion_control, h.mtu, h.nic_speed_mbps
               FROM measurements_hosttcp h JOIN inventory_site s ON s.id = h.site_id
               WHERE h.time >= %s AND h.time <= %s ORDER BY h.time""",
            [start, end],
        )
    ]


def maintenance_windows_overlapping(start: datetime, end: datetime) -> list[MaintenanceWindow]:
    """Windows (not cancelled, not informational) that overlap [start, end), with their affected elements as
    topology labels; the maintenance app's matching (circuits as their end ports, one entry per occurrence)."""
    return maintenance_window_list_for_diagnosis(start, end)


def maintenance_periods(start: datetime, end: datetime) -> tuple[tuple[datetime, datetime], ...]:
    """Periods of announced work overlapping [start, end]: not a path's normal state, so left out of every
    baseline (wanmon/diagnosis/baseline.py)."""
    return tuple((w.start, w.end) for w in maintenance_windows_overlapping(start, end))
