"""TimescaleDB features beyond the Apache-2 edition, used when the running database offers them.

The Debian build of TimescaleDB (what ``scripts/setup`` compiles) is Apache-licensed: hypertables, ``time_bucket``
and ``drop_chunks`` only, which is all wanmon needs (rollups are hypertables filled by the ingest's follow-up,
retention is a daily ``drop_chunks``). The Timescale-licensed (community) build, e.g. the compose image, adds
native compression: older chunks stored column-wise, typically 10-20x smaller. ``storage_policies_apply``
detects the edition at run time (``timescaledb.license``) and, on the community edition, enables compression of
the raw tables once their chunks are older than the period in which late data still arrives. Compression is
transparent to queries (same SQL, same results), so nothing else changes; on the Apache edition nothing is done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.db import connection

# Chunks older than this are compressed (community edition only). Late samples are refused after
# INGEST_MAX_SAMPLE_LAG_S and rates are recomputed only from the earliest new sample, so a week-old chunk is
# no longer written to in practice (TimescaleDB >= 2.11 still accepts writes into compressed chunks).
COMPRESS_AFTER: dict[str, timedelta] = {
    "measurements_snmpsample": timedelta(days=2),
    "measurements_interfacerate": timedelta(days=7),
    "measurements_owamptest": timedelta(days=7),
    "measurements_throughputtest": timedelta(days=7),
    "measurements_traceroute": timedelta(days=7),
    "measurements_interfacerate_5m": timedelta(days=30),
}
# Segment by the series key: a query for one interface or one path decompresses only its own segments.
SEGMENT_BY: dict[str, str] = {
    "measurements_snmpsample": "interface_id",
    "measurements_interfacerate": "interface_id",
    "measurements_owamptest": "src_id, dst_id",
    "measurements_throughputtest": "src_id, dst_id",
    "measurements_traceroute": "src_id, dst_id",
    "measurements_interfacerate_5m": "interface_id",
}


@dataclass
class StorageReport:
    """What the database offers and what was enabled."""

    license: str | None
    compression: list[str] = field(default_factory=list)

    @property
    def community(self) -> bool:
        return self.license == "timescale"


def timescale_license() -> str | None:
    """'apache' or 'timescale' (the community edition), None when TimescaleDB is not loaded."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('timescaledb.license', true)")
        value = cursor.fetchone()[0]
    return value or None


def storage_policies_apply() -> StorageReport:
    """Enable compression policies when the edition has them (idempotent); report the edition either way."""
    report = StorageReport(license=timescale_license())
    if not report.community:
        return report
    with connection.cursor() as cursor:
        for table, after in COMPRESS_AFTER.items():
            cursor.execute(
                f"ALTER TABLE {table} SET (timescaledb.compress, timescaledb.compress_segmentby = %s, "
                "timescaledb.compress_orderby = 'time DESC')",
                [SEGMENT_BY[table]],
            )
            cursor.execute(
                "SELECT add_compression_policy(%s, compress_after => %s, if_not_exists => true)", [table, after]
            )
            report.compression.append(table)
    return report
