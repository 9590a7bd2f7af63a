"""Measurement hypertables (TimescaleDB, Apache-2 features only).

Counter64 values go up to 2^64-1, which does not fit PostgreSQL's bigint (max 2^63-1): raw SNMP
counters are stored losslessly as numeric(20,0). Hypertables carry no primary key (a unique index
would have to include `time`); rows are identified by (time, id) where an id is needed.
"""

import django.contrib.postgres.fields
import django.db.models.deletion
from django.db import migrations, models

COUNTERS = [
    "hc_in_octets",
    "hc_out_octets",
    "hc_in_ucast_pkts",
    "hc_out_ucast_pkts",
    "in_octets",
    "out_octets",
    "in_errors",
    "out_errors",
    "in_discards",
    "out_discards",
]

SQL = f"""
CREATE TABLE measurements_ingestbatch (
    batch_id uuid PRIMARY KEY,
    agent_id bigint NULL REFERENCES inventory_agent(id) ON DELETE SET NULL,
    source text NOT NULL DEFAULT 'agent',
    received_at timestamptz NOT NULL DEFAULT now(),
    sent_at timestamptz NULL,
    agent_version text NOT NULL DEFAULT '',
    record_count integer NOT NULL
);
CREATE INDEX measurements_ingestbatch_received ON measurements_ingestbatch (received_at);

CREATE TABLE measurements_snmpsample (
    id bigserial NOT NULL,
    time timestamptz NOT NULL,
    equipment_id bigint NOT NULL,
    interface_id bigint NOT NULL,
    if_index integer NULL,
    sys_uptime_ticks bigint NULL,
    engine_boots bigint NULL,
    discontinuity_ticks bigint NULL,
    oper_status text NULL,
    speed_mbps bigint NULL,
    {", ".join(f"{c} numeric(20,0) NULL" for c in COUNTERS)},
    batch_id uuid NULL
);
SELECT create_hypertable('measurements_snmpsample', 'time', chunk_time_interval => interval '1 day');
CREATE INDEX measurements_snmpsample_iface_time ON measurements_snmpsample (interface_id, time DESC);

CREATE TABLE measurements_interfacerate (
    id bigserial NOT NULL,
    time timestamptz NOT NULL,
    interface_id bigint NOT NULL,
    interval_s double precision NOT NULL,
    in_bps double precision NULL,
    out_bps double precision NULL,
    in_pps double precision NULL,
    out_pps double precision NULL,
    in_errors_per_s double precision NULL,
    out_errors_per_s double precision NULL,
    in_discards_per_s double precision NULL,
    out_discards_per_s double precision NULL,
    in_utilisation double precision NULL,
    out_utilisation double precision NULL,
    oper_status text NULL
);
SELECT create_hypertable('measurements_interfacerate', 'time', chunk_time_interval => interval '7 days');
CREATE UNIQUE INDEX measurements_interfacerate_iface_time ON measurements_interfacerate (interface_id, time);

CREATE TABLE measurements_counterdiscontinuity (
    id bigserial PRIMARY KEY,
    time timestamptz NOT NULL,
    previous_time timestamptz NOT NULL,
    interface_id bigint NOT NULL REFERENCES inventory_interface(id) ON DELETE CASCADE,
    code text NOT NULL,
    reason text NOT NULL,
    UNIQUE (interface_id, time)
);

CREATE TABLE measurements_throughputtest (
    id bigserial NOT NULL,
    time timestamptz NOT NULL,
    src_id bigint NOT NULL,
    dst_id bigint NOT NULL,
    agent_id bigint NULL,
    tool text NOT NULL DEFAULT 'nuttcp',
    protocol text NOT NULL,
    duration_s double precision NULL,
    streams integer NULL,
    window_bytes bigint NULL,
    mss_bytes integer NULL,
    throughput_bps double precision NULL,
    retransmits bigint NULL,
    rtt_ms double precision NULL,
    offered_bps double precision NULL,
    packets_sent bigint NULL,
    packets_lost bigint NULL,
    src_host text NULL,
    dst_host text NULL,
    error text NULL,
    extra jsonb NULL,
    batch_id uuid NULL
);
SELECT create_hypertable('measurements_throughputtest', 'time', chunk_time_interval => interval '30 days');
CREATE INDEX measurements_throughputtest_path_time ON measurements_throughputtest (src_id, dst_id, time DESC);

CREATE TABLE measurements_owamptest (
    id bigserial NOT NULL,
    time timestamptz NOT NULL,
    src_id bigint NOT NULL,
    dst_id bigint NOT NULL,
    agent_id bigint NULL,
    packets_sent bigint NULL,
    packets_lost bigint NULL,
    duplicates bigint NULL,
    reordered bigint NULL,
    delay_min_ms double precision NULL,
    delay_median_ms double precision NULL,
    delay_max_ms double precision NULL,
    jitter_ms double precision NULL,
    clock_error_ms double precision NULL,
    error text NULL,
    extra jsonb NULL,
    batch_id uuid NULL
);
SELECT create_hypertable('measurements_owamptest', 'time', chunk_time_interval => interval '30 days');
CREATE INDEX measurements_owamptest_path_time ON measurements_owamptest (src_id, dst_id, time DESC);

CREATE TABLE measurements_traceroute (
    id bigserial NOT NULL,
    time timestamptz NOT NULL,
    src_id bigint NOT NULL,
    dst_id bigint NOT NULL,
    agent_id bigint NULL,
    hops text[] NOT NULL,
    pmtu_bytes integer NULL,
    error text NULL,
    extra jsonb NULL,
    batch_id uuid NULL
);
SELECT create_hypertable('measurements_traceroute', 'time', chunk_time_interval => interval '30 days');
CREATE INDEX measurements_traceroute_path_time ON measurements_traceroute (src_id, dst_id, time DESC);

CREATE TABLE measurements_hosttcp (
    id bigserial NOT NULL,
    time timestamptz NOT NULL,
    site_id bigint NOT NULL,
    agent_id bigint NULL,
    host text NOT NULL,
    tcp_rmem bigint[] NULL,
    tcp_wmem bigint[] NULL,
    rmem_max bigint NULL,
    wmem_max bigint NULL,
    congestion_control text NULL,
    mtu integer NULL,
    extra jsonb NULL,
    batch_id uuid NULL
);
SELECT create_hypertable('measurements_hosttcp', 'time', chunk_time_interval => interval '30 days');
CREATE INDEX measurements_hosttcp_site_time ON measurements_hosttcp (site_id, host, time DESC);
"""

ROLLUPS = ["5m", "1h", "1d"]
ROLLUP_SQL = "".join(
    f"""
CREATE TABLE measurements_interfacerate_{level} (
    time timestamptz NOT NULL,
    interface_id bigint NOT NULL,
    samples integer NOT NULL,
    covered_s double precision NOT NULL,
    in_bps_avg double precision NULL,
    in_bps_max double precision NULL,
    in_bps_p95 double precision NULL,
    out_bps_avg double precision NULL,
    out_bps_max double precision NULL,
    out_bps_p95 double precision NULL,
    in_errors double precision NULL,
    out_errors double precision NULL,
    in_discards double precision NULL,
    out_discards double precision NULL,
    in_utilisation_max double precision NULL,
    out_utilisation_max double precision NULL
);
SELECT create_hypertable('measurements_interfacerate_{level}', 'time',
                         chunk_time_interval => interval '{"30 days" if level != "1d" else "365 days"}');
CREATE UNIQUE INDEX measurements_interfacerate_{level}_iface_time ON measurements_interfacerate_{level} (interface_id, time);
"""
    for level in ROLLUPS
)

DROP = """
DROP TABLE IF EXISTS measurements_interfacerate_1d, measurements_interfacerate_1h, measurements_interfacerate_5m,
    measurements_hosttcp, measurements_traceroute, measurements_owamptest, measurements_throughputtest,
    measurements_counterdiscontinuity, measurements_interfacerate, measurements_snmpsample, measurements_ingestbatch;
"""


STATE_OPERATIONS = [
    migrations.CreateModel(
        name="HostTcp",
        fields=[
            ("id", models.BigAutoField(primary_key=True, serialize=False)),
            ("time", models.DateTimeField()),
            ("site_id", models.BigIntegerField()),
            ("agent_id", models.BigIntegerField(null=True)),
            ("host", models.TextField()),
            (
                "tcp_rmem",
                django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(), null=True, size=None),
            ),
            (
                "tcp_wmem",
                django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(), null=True, size=None),
            ),
            ("rmem_max", models.BigIntegerField(null=True)),
            ("wmem_max", models.BigIntegerField(null=True)),
            ("congestion_control", models.TextField(null=True)),
            ("mtu", models.IntegerField(null=True)),
            ("extra", models.JSONField(null=True)),
            ("batch_id", models.UUIDField(null=True)),
        ],
        options={
            "db_table": "measurements_hosttcp",
        },
    ),
    migrations.CreateModel(
        name="InterfaceRate",
        fields=[
            ("id", models.BigAutoField(primary_key=True, serialize=False)),
            ("time", models.DateTimeField()),
            ("interface_id", models.BigIntegerField()),
            ("interval_s", models.FloatField()),
            ("in_bps", models.FloatField(null=True)),
            ("out_bps", models.FloatField(null=True)),
            ("in_pps", models.FloatField(null=True)),
            ("out_pps", models.FloatField(null=True)),
            ("in_errors_per_s", models.FloatField(null=True)),
            ("out_errors_per_s", models.FloatField(null=True)),
            ("in_discards_per_s", models.FloatField(null=True)),
            ("out_discards_per_s", models.FloatField(null=True)),
            ("in_utilisation", models.FloatField(null=True)),
            ("out_utilisation", models.FloatField(null=True)),
            ("oper_status", models.TextField(null=True)),
        ],
        options={
            "db_table": "measurements_interfacerate",
        },
    ),
    migrations.CreateModel(
        name="InterfaceRate1d",
        fields=[
            ("id", models.BigAutoField(primary_key=True, serialize=False)),
            ("time", models.DateTimeField()),
            ("interface_id", models.BigIntegerField()),
            ("samples", models.IntegerField()),
            ("covered_s", models.FloatField()),
            ("in_bps_avg", models.FloatField(null=True)),
            ("in_bps_max", models.FloatField(null=True)),
            ("in_bps_p95", models.FloatField(null=True)),
            ("out_bps_avg", models.FloatField(null=True)),
            ("out_bps_max", models.FloatField(null=True)),
            ("out_bps_p95", models.FloatField(null=True)),
            ("in_errors", models.FloatField(null=True)),
            ("out_errors", models.FloatField(null=True)),
            ("in_discards", models.FloatField(null=True)),
            ("out_discards", models.FloatField(null=True)),
            ("in_utilisation_max", models.FloatField(null=True)),
            ("out_utilisation_max", models.FloatField(null=True)),
        ],
        options={
            "db_table": "measurements_interfacerate_1d",
        },
    ),
    migrations.CreateModel(
        name="InterfaceRate1h",
        fields=[
            ("id", models.BigAutoField(primary_key=True, serialize=False)),
            ("time", models.DateTimeField()),
            ("interface_id", models.BigIntegerField()),
            ("samples", models.IntegerField()),
            ("covered_s", models.FloatField()),
            ("in_bps_avg", models.FloatField(null=True)),
            ("in_bps_max", models.FloatField(null=True)),
            ("in_bps_p95", models.FloatField(null=True)),
            ("out_bps_avg", models.FloatField(null=True)),
            ("out_bps_max", models.FloatField(null=True)),
            ("out_bps_p95", models.FloatField(null=True)),
            ("in_errors", models.FloatField(null=True)),
            ("out_errors", models.FloatField(null=True)),
            ("in_discards", models.FloatField(null=True)),
            ("out_discards", models.FloatField(null=True)),
            ("in_utilisation_max", models.FloatField(null=True)),
            ("out_utilisation_max", models.FloatField(null=True)),
        ],
        options={
            "db_table": "measurements_interfacerate_1h",
        },
    ),
    migrations.CreateModel(
        name="InterfaceRate5m",
        fields=[
            ("id", models.BigAutoField(primary_key=True, serialize=False)),
            ("time", models.DateTimeField()),
            ("interface_id", models.BigIntegerField()),
            ("samples", models.IntegerField()),
            ("covered_s", models.FloatField()),
            ("in_bps_avg", models.FloatField(null=True)),
            ("in_bps_max", models.FloatField(null=True)),
            ("in_bps_p95", models.FloatField(null=True)),
            ("out_bps_avg", models.FloatField(null=True)),
            ("out_bps_max", models.FloatField(null=True)),
            ("out_bps_p95", models.FloatField(null=True)),
            ("in_errors", models.FloatField(null=True)),
            ("out_errors", models.FloatField(null=True)),
            ("in_discards", models.FloatField(null=True)),
            ("out_discards", models.FloatField(null=True)),
            ("in_utilisation_max", models.FloatField(null=True)),
            ("out_utilisation_max", models.FloatField(null=True)),
        ],
        options={
            "db_table": "measurements_interfacerate_5m",
        },
    ),
    migrations.CreateModel(
        name="OwampTest",
        fields=[
            ("id", models.BigAutoField(primary_key=True, serialize=False)),
            ("time", models.DateTimeField()),
            ("src_id", models.BigIntegerField()),
            ("dst_id", models.BigIntegerField()),
            ("agent_id", models.BigIntegerField(null=True)),
            ("error", models.TextField(null=True)),
            ("extra", models.JSONField(null=True)),
            ("batch_id", models.UUIDField(null=True)),
            ("packets_sent", models.BigIntegerField(null=True)),
            ("packets_lost", models.BigIntegerField(null=True)),
            ("duplicates", models.BigIntegerField(null=True)),
            ("reordered", models.BigIntegerField(null=True)),
            ("delay_min_ms", models.FloatField(null=True)),
            ("delay_median_ms", models.FloatField(null=True)),
            ("delay_max_ms", models.FloatField(null=True)),
            ("jitter_ms", models.FloatField(null=True)),
            ("clock_error_ms", models.FloatField(null=True)),
        ],
        options={
            "db_table": "measurements_owamptest",
        },
    ),
    migrations.CreateModel(
        name="SnmpSample",
        fields=[
            ("id", models.BigAutoField(primary_key=True, serialize=False)),
            ("time", models.DateTimeField()),
            ("equipment_id", models.BigIntegerField()),
            ("interface_id", models.BigIntegerField()),
            ("if_index", models.IntegerField(null=True)),
            ("sys_uptime_ticks", models.BigIntegerField(null=True)),
            ("engine_boots", models.BigIntegerField(null=True)),
            ("discontinuity_ticks", models.BigIntegerField(null=True)),
            ("oper_status", models.TextField(null=True)),
            ("speed_mbps", models.BigIntegerField(null=True)),
            ("hc_in_octets", models.DecimalField(decimal_places=0, max_digits=20, null=True)),
            ("hc_out_octets", models.DecimalField(decimal_places=0, max_digits=20, null=True)),
            ("hc_in_ucast_pkts", models.DecimalField(decimal_places=0, max_digits=20, null=True)),
            ("hc_out_ucast_pkts", models.DecimalField(decimal_places=0, max_digits=20, null=True)),
            ("in_octets", models.DecimalField(decimal_places=0, max_digits=20, null=True)),
            ("out_octets", models.DecimalField(decimal_places=0, max_digits=20, null=True)),
            ("in_errors", models.DecimalField(decimal_places=0, max_digits=20, null=True)),
            ("out_errors", models.DecimalField(decimal_places=0, max_digits=20, null=True)),
            ("in_discards", models.DecimalField(decimal_places=0, max_digits=20, null=True)),
            ("out_discards", models.DecimalField(decimal_places=0, max_digits=20, null=True)),
            ("batch_id", models.UUIDField(null=True)),
        ],
        options={
            "db_table": "measurements_snmpsample",
        },
    ),
    migrations.CreateModel(
        name="ThroughputTest",
        fields=[
            ("id", models.BigAutoField(primary_key=True, serialize=False)),
            ("time", models.DateTimeField()),
            ("src_id", models.BigIntegerField()),
            ("dst_id", models.BigIntegerField()),
            ("agent_id", models.BigIntegerField(null=True)),
            ("error", models.TextField(null=True)),
            ("extra", models.JSONField(null=True)),
            ("batch_id", models.UUIDField(null=True)),
            ("tool", models.TextField()),
            ("protocol", models.TextField()),
            ("duration_s", models.FloatField(null=True)),
            ("streams", models.IntegerField(null=True)),
            ("window_bytes", models.BigIntegerField(null=True)),
            ("mss_bytes", models.IntegerField(null=True)),
            ("throughput_bps", models.FloatField(null=True)),
            ("retransmits", models.BigIntegerField(null=True)),
            ("rtt_ms", models.FloatField(null=True)),
            ("offered_bps", models.FloatField(null=True)),
            ("packets_sent", models.BigIntegerField(null=True)),
            ("packets_lost", models.BigIntegerField(null=True)),
            ("src_host", models.TextField(null=True)),
            ("dst_host", models.TextField(null=True)),
        ],
        options={
            "db_table": "measurements_throughputtest",
        },
    ),
    migrations.CreateModel(
        name="Traceroute",
        fields=[
            ("id", models.BigAutoField(primary_key=True, serialize=False)),
            ("time", models.DateTimeField()),
            ("src_id", models.BigIntegerField()),
            ("dst_id", models.BigIntegerField()),
            ("agent_id", models.BigIntegerField(null=True)),
            ("error", models.TextField(null=True)),
            ("extra", models.JSONField(null=True)),
            ("batch_id", models.UUIDField(null=True)),
            ("hops", django.contrib.postgres.fields.ArrayField(base_field=models.TextField(null=True), size=None)),
            ("pmtu_bytes", models.IntegerField(null=True)),
        ],
        options={
            "db_table": "measurements_traceroute",
        },
    ),
    migrations.CreateModel(
        name="CounterDiscontinuity",
        fields=[
            ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
            ("time", models.DateTimeField()),
            ("previous_time", models.DateTimeField()),
            ("code", models.TextField()),
            ("reason", models.TextField()),
            (
                "interface",
                models.ForeignKey(
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="discontinuities",
                    to="inventory.interface",
                ),
            ),
        ],
        options={
            "db_table": "measurements_counterdiscontinuity",
        },
    ),
    migrations.CreateModel(
        name="IngestBatch",
        fields=[
            ("batch_id", models.UUIDField(primary_key=True, serialize=False)),
            ("source", models.TextField(default="agent")),
            ("received_at", models.DateTimeField()),
            ("sent_at", models.DateTimeField(null=True)),
            ("agent_version", models.TextField(default="")),
            ("record_count", models.IntegerField()),
            (
                "agent",
                models.ForeignKey(
                    null=True,
                    on_delete=django.db.models.deletion.SET_NULL,
                    related_name="batches",
                    to="inventory.agent",
                ),
            ),
        ],
        options={
            "db_table": "measurements_ingestbatch",
        },
    ),
]


class Migration(migrations.Migration):
    initial = True
    dependencies = [("core", "0001_timescaledb"), ("inventory", "0001_squashed_0002_path_rtt_ms")]
    # The database schema is the SQL above; the model state (models.py) mirrors it so that the ORM,
    # the admin and the test-database flush know the tables.
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(sql=SQL + ROLLUP_SQL, reverse_sql=DROP)],
            state_operations=STATE_OPERATIONS,
        )
    ]
