"""Per-interface watermark of rates and rollups: how far each interface is computed, so that work lost in the
broker (a Redis restart, Redis down at ingest, retries exhausted during a database outage) is found and redone
by the catch-up. Existing interfaces start at their newest stored rate: what is computed stays computed."""

import django.db.models.deletion
from django.db import migrations, models

INITIAL = """
INSERT INTO measurements_interfacewatermark (interface_id, processed_until, updated_at)
SELECT r.interface_id, max(r.time), now()
FROM measurements_interfacerate r JOIN inventory_interface i ON i.id = r.interface_id
GROUP BY r.interface_id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0003_interface_name_128"),
        ("measurements", "0004_snmpsample_status_host_error_extra"),
    ]

    operations = [
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
        migrations.RunSQL(sql=INITIAL, reverse_sql=migrations.RunSQL.noop),
    ]
