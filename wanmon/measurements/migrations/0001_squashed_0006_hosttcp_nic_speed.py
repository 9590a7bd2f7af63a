"""measurements 0001-0006 squashed into one (Django's ``replaces``): docs/architecture.md, "Migrations".

Measurement hypertables (TimescaleDB, Apache-2 features only). Counter64 values go up to 2^64-1, which does not
fit PostgreSQL's bigint (max 2^63-1): raw SNMP counters are stored losslessly as numeric(20,0). Hypertables carry
no primary key (a unique index would have to include `time`); rows are identified by (time, id) where an id is
needed. The schema is raw SQL; the model state mirrors it so that the ORM, the admin and the test-database flush
know the tables. Each column is written once, as SQL, and its state field is read from that SQL (``_field``).
Columns are in the order the replaced migrations left them (one added later comes last): the schemas are the same.
"""

import django.contrib.postgres.fields
import django.db.models.deletion
from django.db import migrations, models

# A frozen copy of wanmon.measurements.constants.SNMP_COUNTERS, not an import of it: these are the columns this
# migration creates, and a counter added to the constant later needs a migration of its own that adds its column.
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

# The state field of each SQL column type; a NULL column's field has null=True.
_FIELDS = {
    "bigint": models.BigIntegerField,
    "integer": models.IntegerField,
    "double precision": models.FloatField,
    "numeric(20,0)": lambda **null: models.DecimalField(max_digits=20, decimal_places=0, **null),
    "text": models.TextField,
    "jsonb": models.JSONField,
    "uuid": models.UUIDField,
    "timestamptz": models.DateTimeField,
    "bigint[]": lambda **null: django.contrib.postgres.fields.ArrayField(
        base_field=models.BigIntegerField(), size=None, **null
    ),
    # A traceroute's hops that did not answer are NULL elements.
    "text[]": lambda **null: django.contrib.postgres.fields.ArrayField(
        base_field=models.TextField(null=True), size=None, **null
    ),
}


def _field(column: str) -> tuple[str, models.Field]:
    """(name, state field) of an SQL column definition such as "rtt_ms double precision NULL".

    A DEFAULT is the database's alone (raw COPY leaves the column out); the models have none.
    """
    name, definition = column.split(" ", 1)
    if definition == "bigserial NOT NULL":
        return name, models.BigAutoField(primary_key=True, serialize=False)
    definition = definition.split(" DEFAULT ")[0]
    if definition.endswith(" NOT NULL"):
        return name, _FIELDS[definition.removesuffix(" NOT NULL")]()
    return name, _FIELDS[definition.removesuffix(" NULL")](null=True)


# What every measurement record has, before and after its own columns (in this order in each table).
_RECORD = ["id bigserial NOT NULL", "time timestamptz NOT NULL"]
_PATH_TEST = [*_RECORD, "src_id bigint NOT NULL", "dst_id bigint NOT NULL", "agent_id bigint NULL"]
_PATH_TEST_END = ["error text NULL", "extra jsonb NULL", "batch_id uuid NULL"]
_ROLLUP = [
    "time timestamptz NOT NULL",
    "interface_id bigint NOT NULL",
    "samples integer NOT NULL",
    "covered_s double precision NOT NULL",
    "in_bps_avg double precision NULL",
    "in_bps_max double precision NULL",
    "in_bps_p95 double precision NULL",
    "out_bps_avg double precision NULL",
    "out_bps_max double precision NULL",
    "out_bps_p95 double precision NULL",
    "in_errors double precision NULL",
    "out_errors double precision NULL",
    "in_discards double precision NULL",
    "out_discards double precision NULL",
    "in_utilisation_max double precision NULL",
    "out_utilisation_max double precision NULL",
]

# model -> (table, chunk interval, its index, columns in table order)
HYPERTABLES = {
    "SnmpSample": (
        "measurements_snmpsample",
        "1 day",
        "INDEX measurements_snmpsample_iface_time ON measurements_snmpsample (interface_id, time DESC)",
        [
            *_RECORD,
            "equipment_id bigint NOT NULL",
            "interface_id bigint NOT NULL",
            "if_index integer NULL",
            "sys_uptime_ticks bigint NULL",
            "engine_boots bigint NULL",
            "discontinuity_ticks bigint NULL",
            "oper_status text NULL",
            "speed_mbps double precision NULL",  # ifSpeed / 1e6: an E1 is 2.048
            *(f"{c} numeric(20,0) NULL" for c in COUNTERS),
            "batch_id uuid NULL",
            "admin_status text NULL",
            "host text NULL",
            "error text NULL",
            "extra jsonb NULL",
        ],
    ),
    "InterfaceRate": (
        "measurements_interfacerate",
        "7 days",
        "UNIQUE INDEX measurements_interfacerate_iface_time ON measurements_interfacerate (interface_id, time)",
        [
            *_RECORD,
            "interface_id bigint NOT NULL",
            "interval_s double precision NOT NULL",
            "in_bps double precision NULL",
            "out_bps double precision NULL",
            "in_pps double precision NULL",
            "out_pps double precision NULL",
            "in_errors_per_s double precision NULL",
            "out_errors_per_s double precision NULL",
            "in_discards_per_s double precision NULL",
            "out_discards_per_s double precision NULL",
            "in_utilisation double precision NULL",
            "out_utilisation double precision NULL",
            "oper_status text NULL",
        ],
    ),
    "ThroughputTest": (
        "measurements_throughputtest",
        "30 days",
        "INDEX measurements_throughputtest_path_time ON measurements_throughputtest (src_id, dst_id, time DESC)",
        [
            *_PATH_TEST,
            "tool text NOT NULL DEFAULT 'nuttcp'",
            "protocol text NOT NULL",
            "duration_s double precision NULL",
            "streams integer NULL",
            "window_bytes bigint NULL",
            "mss_bytes integer NULL",
            "throughput_bps double precision NULL",
            "retransmits bigint NULL",
            "rtt_ms double precision NULL",
            "offered_bps double precision NULL",
            "packets_sent bigint NULL",
            "packets_lost bigint NULL",
            "src_host text NULL",
            "dst_host text NULL",
            *_PATH_TEST_END,
        ],
    ),
    "OwampTest": (
        "measurements_owamptest",
        "30 days",
        "INDEX measurements_owamptest_path_time ON measurements_owamptest (src_id, dst_id, time DESC)",
        [
            *_PATH_TEST,
            "packets_sent bigint NULL",
            "packets_lost bigint NULL",
            "duplicates bigint NULL",
            "reordered bigint NULL",
            "delay_min_ms double precision NULL",
            "delay_median_ms double precision NULL",
            "delay_max_ms double precision NULL",
            "jitter_ms double precision NULL",
            "clock_error_ms double precision NULL",
            *_PATH_TEST_END,
        ],
    ),
    "Traceroute": (
        "measurements_traceroute",
        "30 days",
        "INDEX measurements_traceroute_path_time ON measurements_traceroute (src_id, dst_id, time DESC)",
        [*_PATH_TEST, "hops text[] NOT NULL", "pmtu_bytes integer NULL", *_PATH_TEST_END],
    ),
    "HostTcp": (
        "measurements_hosttcp",
        "30 days",
        "INDEX measurements_hosttcp_site_time ON measurements_hosttcp (site_id, host, time DESC)",
        [
            *_RECORD,
            "site_id bigint NOT NULL",
            "agent_id bigint NULL",
            "host text NOT NULL",
            "tcp_rmem bigint[] NULL",
            "tcp_wmem bigint[] NULL",
            "rmem_max bigint NULL",
            "wmem_max bigint NULL",
            "congestion_control text NULL",
            "mtu integer NULL",
            "extra jsonb NULL",
            "batch_id uuid NULL",
            "nic_speed_mbps double precision NULL",
        ],
    ),
}
# Rollups of interface rates, level -> chunk interval: the same columns at each level.
ROLLUPS = {"5m": "30 days", "1h": "30 days", "1d": "365 days"}
HYPERTABLES.update(
    {
        f"InterfaceRate{level}": (
            f"measurements_interfacerate_{level}",
            chunk,
            f"UNIQUE INDEX measurements_interfacerate_{level}_iface_time"
            f" ON measurements_interfacerate_{level} (interface_id, time)",
            _ROLLUP,
        )
        for level, chunk in ROLLUPS.items()
    }
)


def _state_fields(columns: list[str]) -> list[tuple[str, models.Field]]:
    """The state fields of a hypertable's columns; a rollup table has no id column, its model has one for the ORM."""
    fields = [_field(column) for column in columns]
    if fields[0][0] != "id":
        fields.insert(0, _field(_RECORD[0]))
    return fields


def _hypertable_sql(table: str, chunk: str, index: str, columns: list[str]) -> str:
    """CREATE TABLE, create_hypertable on ``time`` with its chunk interval, and the table's index."""
    return (
        f"CREATE TABLE {table} (\n    " + ",\n    ".join(columns) + "\n);\n"
        f"SELECT create_hypertable('{table}', 'time', chunk_time_interval => interval '{chunk}');\n"
        f"CREATE {index};\n"
    )


# Batch ids are unique per agent: another agent's batch reusing an id (a cloned spool, a copied VM) is new data.
TABLES_SQL = """
CREATE TABLE measurements_ingestbatch (
    batch_id uuid NOT NULL,
    agent_id bigint NULL REFERENCES inventory_agent(id) ON DELETE SET NULL,
    source text NOT NULL DEFAULT 'agent',
    received_at timestamptz NOT NULL DEFAULT now(),
    sent_at timestamptz NULL,
    agent_version text NOT NULL DEFAULT '',
    record_count integer NOT NULL,
    id bigserial PRIMARY KEY,
    CONSTRAINT measurements_ingestbatch_unique_agent_batch UNIQUE NULLS NOT DISTINCT (agent_id, batch_id)
);
CREATE INDEX measurements_ingestbatch_received ON measurements_ingestbatch (received_at);

CREATE TABLE measurements_counterdiscontinuity (
    id bigserial PRIMARY KEY,
    time timestamptz NOT NULL,
    previous_time timestamptz NOT NULL,
    interface_id bigint NOT NULL REFERENCES inventory_interface(id) ON DELETE CASCADE,
    code text NOT NULL,
    reason text NOT NULL,
    UNIQUE (interface_id, time)
);
""" + "".join(_hypertable_sql(*table) for table in HYPERTABLES.values())
# One table a statement: TimescaleDB refuses to drop a hypertable along with other objects.
TABLES_DROP = "".join(
    f"DROP TABLE IF EXISTS {table};\n"
    for table in [
        "measurements_counterdiscontinuity",
        "measurements_ingestbatch",
        *(t for t, *_ in HYPERTABLES.values()),
    ]
)

TABLES_STATE = [
    migrations.CreateModel(
        name="IngestBatch",
        fields=[
            ("id", models.BigAutoField(primary_key=True, serialize=False)),
            ("batch_id", models.UUIDField()),
            (
                "agent",
                models.ForeignKey(
                    null=True,
                    on_delete=django.db.models.deletion.SET_NULL,
                    related_name="batches",
                    to="inventory.agent",
                ),
            ),
            ("source", models.TextField(default="agent")),
            ("received_at", models.DateTimeField()),
            ("sent_at", models.DateTimeField(null=True)),
            ("agent_version", models.TextField(default="")),
            ("record_count", models.IntegerField()),
        ],
        options={
            "db_table": "measurements_ingestbatch",
            "constraints": [
                models.UniqueConstraint(
                    fields=("agent", "batch_id"),
                    name="measurements_ingestbatch_unique_agent_batch",
                    nulls_distinct=False,
                )
            ],
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
        options={"db_table": "measurements_counterdiscontinuity"},
    ),
    *(
        migrations.CreateModel(
            name=name,
            fields=_state_fields(columns),
            options={"db_table": table},
        )
        for name, (table, _chunk, _index, columns) in HYPERTABLES.items()
    ),
]

# The documented read-only views for engineers (psql, pandas, Grafana): measurements with names instead of ids
# (docs/data-mining.md; `manage.py create_readonly_role` grants SELECT on exactly these). inventory 0003 drops and
# creates them again around a column type change: it reads VIEWS, SQL and DROP here by these names (it runs after
# this migration, so what it creates again are these views as they are now).
VIEWS = {
    "wanmon_interface_rates": """
        SELECT r.time, s.code AS site, c.code AS carrier, e.name AS equipment, i.name AS interface,
               i.speed_mbps, r.interval_s, r.in_bps, r.out_bps, r.in_pps, r.out_pps,
               r.in_errors_per_s, r.out_errors_per_s, r.in_discards_per_s, r.out_discards_per_s,
               r.in_utilisation, r.out_utilisation, r.oper_status
        FROM measurements_interfacerate r
        JOIN inventory_interface i ON i.id = r.interface_id
        JOIN inventory_equipment e ON e.id = i.equipment_id
        LEFT JOIN inventory_site s ON s.id = e.site_id
        LEFT JOIN inventory_carrier c ON c.id = e.carrier_id""",
    "wanmon_counter_discontinuities": """
        SELECT d.time, d.previous_time, e.name AS equipment, i.name AS interface, d.code, d.reason
        FROM measurements_counterdiscontinuity d
        JOIN inventory_interface i ON i.id = d.interface_id
        JOIN inventory_equipment e ON e.id = i.equipment_id""",
    "wanmon_throughput_tests": """
        SELECT t.time, ss.code AS src, sd.code AS dst, t.tool, t.protocol, t.duration_s, t.streams,
               t.window_bytes, t.mss_bytes, t.throughput_bps, t.retransmits, t.rtt_ms, t.offered_bps,
               t.packets_sent, t.packets_lost, t.src_host, t.dst_host, t.error, t.extra
        FROM measurements_throughputtest t
        JOIN inventory_site ss ON ss.id = t.src_id JOIN inventory_site sd ON sd.id = t.dst_id""",
    "wanmon_owamp_tests": """
        SELECT t.time, ss.code AS src, sd.code AS dst, t.packets_sent, t.packets_lost,
               t.packets_lost::float8 / nullif(t.packets_sent, 0) AS loss_fraction, t.duplicates, t.reordered,
               t.delay_min_ms, t.delay_median_ms, t.delay_max_ms, t.jitter_ms, t.clock_error_ms, t.error, t.extra
        FROM measurements_owamptest t
        JOIN inventory_site ss ON ss.id = t.src_id JOIN inventory_site sd ON sd.id = t.dst_id""",
    "wanmon_traceroutes": """
        SELECT t.time, ss.code AS src, sd.code AS dst, t.hops, t.pmtu_bytes, t.error
        FROM measurements_traceroute t
        JOIN inventory_site ss ON ss.id = t.src_id JOIN inventory_site sd ON sd.id = t.dst_id""",
    "wanmon_host_tcp": """
        SELECT h.time, s.code AS site, h.host, h.tcp_rmem, h.tcp_wmem, h.rmem_max, h.wmem_max,
               h.congestion_control, h.mtu, h.nic_speed_mbps
        FROM measurements_hosttcp h JOIN inventory_site s ON s.id = h.site_id""",
}
for level in ROLLUPS:
    VIEWS[f"wanmon_interface_rates_{level}"] = f"""
        SELECT r.time, s.code AS site, c.code AS carrier, e.name AS equipment, i.name AS interface,
               i.speed_mbps, r.samples, r.covered_s, r.in_bps_avg, r.in_bps_max, r.in_bps_p95,
               r.out_bps_avg, r.out_bps_max, r.out_bps_p95, r.in_errors, r.out_errors, r.in_discards,
               r.out_discards, r.in_utilisation_max, r.out_utilisation_max
        FROM measurements_interfacerate_{level} r
        JOIN inventory_interface i ON i.id = r.interface_id
        JOIN inventory_equipment e ON e.id = i.equipment_id
        LEFT JOIN inventory_site s ON s.id = e.site_id
        LEFT JOIN inventory_carrier c ON c.id = e.carrier_id"""

SQL = "".join(f"CREATE OR REPLACE VIEW {name} AS {body};\n" for name, body in VIEWS.items())
DROP = "".join(f"DROP VIEW IF EXISTS {name};\n" for name in VIEWS)


class Migration(migrations.Migration):
    replaces = [
        ("measurements", "0001_hypertables"),
        ("measurements", "0002_sql_views"),
        ("measurements", "0003_speed_float_batch_per_agent"),
        ("measurements", "0004_snmpsample_status_host_error_extra"),
        ("measurements", "0005_interfacewatermark"),
        ("measurements", "0006_hosttcp_nic_speed"),
    ]

    initial = True

    # Not inventory 0003 (which the replaced 0005 named): inventory 0003 depends on this migration's views.
    dependencies = [("core", "0001_timescaledb"), ("inventory", "0001_squashed_0002_path_rtt_ms")]

    # The replaced 0005 started each interface's watermark at its newest rate: a database that runs this
    # migration has no rates yet, so there is nothing to start.
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(sql=TABLES_SQL, reverse_sql=TABLES_DROP)],
            state_operations=TABLES_STATE,
        ),
        migrations.CreateModel(
            name="InterfaceWatermark",
            fields=[
                (
                    "interface",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="measurements_watermark",
                        serialize=False,
                        to="inventory.interface",
                    ),
                ),
                ("processed_until", models.DateTimeField(null=True)),
                ("updated_at", models.DateTimeField()),
            ],
            options={"db_table": "measurements_interfacewatermark"},
        ),
        migrations.RunSQL(sql=SQL, reverse_sql=DROP),
    ]
