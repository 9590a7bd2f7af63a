"""Interface names as long as the wire schema allows (128 characters: long ifDescr values exist).

PostgreSQL cannot change the type of a column that a view reads, so the measurement views are
dropped and created again around the change, and the SELECT grants they had are given back.
"""

import importlib

from django.db import migrations, models

_views = importlib.import_module("wanmon.measurements.migrations.0001_squashed_0006_hosttcp_nic_speed")


def _views_drop(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, grantee FROM information_schema.role_table_grants "
            "WHERE privilege_type = 'SELECT' AND table_name = ANY(%s) AND grantee <> current_user",
            [list(_views.VIEWS)],
        )
        schema_editor.connection.wanmon_view_grants = cursor.fetchall()
        cursor.execute(_views.DROP)


def _views_create(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(_views.SQL)
        for view, grantee in getattr(schema_editor.connection, "wanmon_view_grants", []):
            cursor.execute(f'GRANT SELECT ON {view} TO "{grantee}"')


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0001_squashed_0002_path_rtt_ms"),
        ("measurements", "0001_squashed_0006_hosttcp_nic_speed"),
    ]
    operations = [
        migrations.RunPython(_views_drop, _views_create),
        migrations.AlterField(model_name="interface", name="name", field=models.CharField(max_length=128)),
        migrations.RunPython(_views_create, _views_drop),
    ]
