"""Measurement tables. The schema is created by raw SQL in migration 0001 (hypertables, numeric(20,0)
counters, no primary keys on hypertables); these models mirror it for the ORM, the admin and the
test database flush. Writes on the hot path use COPY (ingest.py), reads use selectors.py.
"""

from django.contrib.postgres.fields import ArrayField
from django.db import models


def _counter64() -> models.DecimalField:
    """An SNMP Counter64 column: numeric(20,0) holds every value up to 2**64 - 1 exactly (NULL: not polled)."""
    return models.DecimalField(max_digits=20, decimal_places=0, null=True)


class IngestBatch(models.Model):
    """One accepted upload; its batch_id makes ingest idempotent, per agent (another agent's id is new data)."""

    id = models.BigAutoField(primary_key=True)
    batch_id = models.UUIDField()
    agent = models.ForeignKey("inventory.Agent", null=True, on_delete=models.SET_NULL, related_name="batches")
    source = models.TextField(default="agent")
    received_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True)
    agent_version = models.TextField(default="")
    record_count = models.IntegerField()

    class Meta:
        db_table = "measurements_ingestbatch"
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "batch_id"], name="measurements_ingestbatch_unique_agent_batch", nulls_distinct=False
            )
        ]

    def __str__(self) -> str:
        return str(self.batch_id)


class CounterDiscontinuity(models.Model):
    """A polling interval dropped because the counters restarted or could not be trusted (COUNTER_DISCONTINUITY)."""

    time = models.DateTimeField()
    previous_time = models.DateTimeField()
    interface = models.ForeignKey("inventory.Interface", on_delete=models.CASCADE, related_name="discontinuities")
    code = models.TextField()
    reason = models.TextField()

    class Meta:
        db_table = "measurements_counterdiscontinuity"

    def __str__(self) -> str:
        return f"{self.interface_id} {self.time:%Y-%m-%dT%H:%MZ} {self.code}"


class _Hypertable(models.Model):
    """Rows of a hypertable: (time, id) identifies a row; the database has no primary key constraint."""

    id = models.BigAutoField(primary_key=True)
    time = models.DateTimeField()

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{type(self).__name__} {self.time:%Y-%m-%dT%H:%M:%SZ}"


class SnmpSample(_Hypertable):
    """A raw SNMP poll of one interface; Counter64 values kept losslessly as numeric(20,0)."""

    equipment_id = models.BigIntegerField()
    interface_id = models.BigIntegerField()
    if_index = models.IntegerField(null=True)
    sys_uptime_ticks = models.BigIntegerField(null=True)
    engine_boots = models.BigIntegerField(null=True)
    discontinuity_ticks = models.BigIntegerField(null=True)
    oper_status = models.TextField(null=True)
    speed_mbps = models.FloatField(null=True)  # ifSpeed / 1e6: an E1 is 2.048
    admin_status = models.TextField(null=True)
    host = models.TextField(null=True)
    error = models.TextField(null=True)
    hc_in_octets = _counter64()
    hc_out_octets = _counter64()
    hc_in_ucast_pkts = _counter64()
    hc_out_ucast_pkts = _counter64()
    in_octets = _counter64()
    out_octets = _counter64()
    in_errors = _counter64()
    out_errors = _counter64()
    in_discards = _counter64()
    out_discards = _counter64()
    extra = models.JSONField(null=True)
    batch_id = models.UUIDField(null=True)

    class Meta:
        db_table = "measurements_snmpsample"


class InterfaceRate(_Hypertable):
    """Rates over one polling interval, stamped at its end."""

    interface_id = models.BigIntegerField()
    interval_s = models.FloatField()
    in_bps = models.FloatField(null=True)
    out_bps = models.FloatField(null=True)
    in_pps = models.FloatField(null=True)
    out_pps = models.FloatField(null=True)
    in_errors_per_s = models.FloatField(null=True)
    out_errors_per_s = models.FloatField(null=True)
    in_discards_per_s = models.FloatField(null=True)
    out_discards_per_s = models.FloatField(null=True)
    in_utilisation = models.FloatField(null=True)
    out_utilisation = models.FloatField(null=True)
    oper_status = models.TextField(null=True)

    class Meta:
        db_table = "measurements_interfacerate"


class _PathTest(_Hypertable):
    src_id = models.BigIntegerField()
    dst_id = models.BigIntegerField()
    agent_id = models.BigIntegerField(null=True)
    error = models.TextField(null=True)
    extra = models.JSONField(null=True)
    batch_id = models.UUIDField(null=True)

    class Meta:
        abstract = True


class ThroughputTest(_PathTest):
    """A nuttcp test in one direction (TCP or UDP). retransmits NULL means unknown."""

    tool = models.TextField()
    protocol = models.TextField()
    duration_s = models.FloatField(null=True)
    streams = models.IntegerField(null=True)
    window_bytes = models.BigIntegerField(null=True)
    mss_bytes = models.IntegerField(null=True)
    throughput_bps = models.FloatField(null=True)
    retransmits = models.BigIntegerField(null=True)
    rtt_ms = models.FloatField(null=True)
    offered_bps = models.FloatField(null=True)
    packets_sent = models.BigIntegerField(null=True)
    packets_lost = models.BigIntegerField(null=True)
    src_host = models.TextField(null=True)
    dst_host = models.TextField(null=True)

    class Meta:
        db_table = "measurements_throughputtest"


class OwampTest(_PathTest):
    """A one-way delay/loss session (owamp or TWAMP-light) in one direction."""

    packets_sent = models.BigIntegerField(null=True)
    packets_lost = models.BigIntegerField(null=True)
    duplicates = models.BigIntegerField(null=True)
    reordered = models.BigIntegerField(null=True)
    delay_min_ms = models.FloatField(null=True)
    delay_median_ms = models.FloatField(null=True)
    delay_max_ms = models.FloatField(null=True)
    jitter_ms = models.FloatField(null=True)
    clock_error_ms = models.FloatField(null=True)

    class Meta:
        db_table = "measurements_owamptest"


class Traceroute(_PathTest):
    """The hop list seen from src towards dst (NULL for hops that did not answer)."""

    hops = ArrayField(models.TextField(null=True))
    pmtu_bytes = models.IntegerField(null=True)

    class Meta:
        db_table = "measurements_traceroute"


class HostTcp(_Hypertable):
    """TCP settings of a transfer host as its agent read them."""

    site_id = models.BigIntegerField()
    agent_id = models.BigIntegerField(null=True)
    host = models.TextField()
    tcp_rmem = ArrayField(models.BigIntegerField(), null=True)
    tcp_wmem = ArrayField(models.BigIntegerField(), null=True)
    rmem_max = models.BigIntegerField(null=True)
    wmem_max = models.BigIntegerField(null=True)
    congestion_control = models.TextField(null=True)
    mtu = models.IntegerField(null=True)
    nic_speed_mbps = models.FloatField(null=True)  # the test interface's speed; null when the host could not tell
    extra = models.JSONField(null=True)
    batch_id = models.UUIDField(null=True)

    class Meta:
        db_table = "measurements_hosttcp"


class _Rollup(models.Model):
    id = models.BigAutoField(primary_key=True)  # ORM only: the table has (interface_id, time) unique
    time = models.DateTimeField()
    interface_id = models.BigIntegerField()
    samples = models.IntegerField()
    covered_s = models.FloatField()
    in_bps_avg = models.FloatField(null=True)
    in_bps_max = models.FloatField(null=True)
    in_bps_p95 = models.FloatField(null=True)
    out_bps_avg = models.FloatField(null=True)
    out_bps_max = models.FloatField(null=True)
    out_bps_p95 = models.FloatField(null=True)
    in_errors = models.FloatField(null=True)
    out_errors = models.FloatField(null=True)
    in_discards = models.FloatField(null=True)
    out_discards = models.FloatField(null=True)
    in_utilisation_max = models.FloatField(null=True)
    out_utilisation_max = models.FloatField(null=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{type(self).__name__} {self.interface_id} {self.time:%Y-%m-%dT%H:%MZ}"


class InterfaceRate5m(_Rollup):
    """5-minute rollup of interface rates."""

    class Meta:
        db_table = "measurements_interfacerate_5m"


class InterfaceRate1h(_Rollup):
    """1-hour rollup of interface rates."""

    class Meta:
        db_table = "measurements_interfacerate_1h"


class InterfaceRate1d(_Rollup):
    """1-day rollup of interface rates."""

    class Meta:
        db_table = "measurements_interfacerate_1d"


class InterfaceWatermark(models.Model):
    """How far the rates and rollups of one interface are computed: every SNMP sample at or before
    ``processed_until`` has its rate and its rollups. Written only by ``services.measurements_process``, in the
    transaction that writes the rates, so it never runs ahead of them; the catch-up (``measurements_catch_up``)
    recomputes interfaces whose samples are newer, which is how work lost in the broker is redone."""

    interface = models.OneToOneField(
        "inventory.Interface", on_delete=models.CASCADE, primary_key=True, related_name="measurements_watermark"
    )
    processed_until = models.DateTimeField(null=True)
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "measurements_interfacewatermark"

    def __str__(self) -> str:
        return f"{self.interface_id} up to {self.processed_until:%Y-%m-%dT%H:%M:%SZ}" if self.processed_until else ""
