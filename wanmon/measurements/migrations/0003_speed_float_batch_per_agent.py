"""ifSpeed is not a whole number of Mbit/s below 1 Mb/s (an E1 is 2.048): SNMP samples keep the exact
value in double precision. Batch ids are unique per agent, not globally: another agent's batch that
happens to reuse an id (a cloned spool, a copied VM) is new data, not a duplicate."""

import django.db.models.deletion
from django.db import migrations, models

SQL = """
ALTER TABLE measurements_snmpsample ALTER COLUMN speed_mbps TYPE double precision;
ALTER TABLE measurements_ingestbatch DROP CONSTRAINT measurements_ingestbatch_pkey;
ALTER TABLE measurements_ingestbatch ADD COLUMN id bigserial PRIMARY KEY;
ALTER TABLE measurements_ingestbatch ADD CONSTRAINT measurements_ingestbatch_unique_agent_batch
    UNIQUE NULLS NOT DISTINCT (agent_id, batch_id);
"""
REVERSE = """
ALTER TABLE measurements_ingestbatch DROP CONSTRAINT measurements_ingestbatch_unique_agent_batch;
ALTER TABLE measurements_ingestbatch DROP COLUMN id;
ALTER TABLE measurements_ingestbatch ADD PRIMARY KEY (batch_id);
ALTER TABLE measurements_snmpsample ALTER COLUMN speed_mbps TYPE bigint USING round(speed_mbps);
"""


class Migration(migrations.Migration):
    dependencies = [("measurements", "0002_sql_views"), ("inventory", "0001_squashed_0002_path_rtt_ms")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(sql=SQL, reverse_sql=REVERSE)],
            state_operations=[
                migrations.AlterField(model_name="snmpsample", name="speed_mbps", field=models.FloatField(null=True)),
                migrations.AlterField(model_name="ingestbatch", name="batch_id", field=models.UUIDField()),
                migrations.AddField(
                    model_name="ingestbatch",
                    name="id",
                    field=models.BigAutoField(primary_key=True, serialize=False),
                    preserve_default=False,
                ),
                migrations.AlterField(
                    model_name="ingestbatch",
                    name="agent",
                    field=models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="batches",
                        to="inventory.agent",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="ingestbatch",
                    constraint=models.UniqueConstraint(
                        fields=("agent", "batch_id"),
                        name="measurements_ingestbatch_unique_agent_batch",
                        nulls_distinct=False,
                    ),
                ),
            ],
        )
    ]
