"""Enable TimescaleDB: wanmon always runs on PostgreSQL with the timescaledb extension preloaded."""

from django.db import migrations


class Migration(migrations.Migration):
    initial = True
    dependencies: list = []

    operations = [
        migrations.RunSQL(
            sql="CREATE EXTENSION IF NOT EXISTS timescaledb;",
            # Dropping the extension would drop every hypertable with it: never do it on reverse.
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
