"""SNMP samples keep everything an agent sends: the administrative status (an interface shut down by an
operator is not a failed one), the address polled, the error of a failed poll, and the rest of the record
(tool version, exit code, excerpts) in ``extra``, as the test tables do."""

from django.db import migrations, models

SQL = """
ALTER TABLE measurements_snmpsample
    ADD COLUMN admin_status text NULL,
    ADD COLUMN host text NULL,
    ADD COLUMN error text NULL,
    ADD COLUMN extra jsonb NULL;
"""
REVERSE = """
ALTER TABLE measurements_snmpsample
    DROP COLUMN admin_status, DROP COLUMN host, DROP COLUMN error, DROP COLUMN extra;
"""


class Migration(migrations.Migration):
    dependencies = [("measurements", "0003_speed_float_batch_per_agent")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(sql=SQL, reverse_sql=REVERSE)],
            state_operations=[
                migrations.AddField("snmpsample", "admin_status", models.TextField(null=True)),
                migrations.AddField("snmpsample", "host", models.TextField(null=True)),
                migrations.AddField("snmpsample", "error", models.TextField(null=True)),
                migrations.AddField("snmpsample", "extra", models.JSONField(null=True)),
            ],
        )
    ]
