"""A partial index of the SNMP samples whose oper status is not 'up': the diagnosis reads a window's changes of
status from them (and index probes) instead of every poll of the window (wanmon/diagnosis/selectors/series.py)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("measurements", "0001_squashed_0006_hosttcp_nic_speed")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS measurements_snmpsample_not_up ON measurements_snmpsample "
            "(interface_id, time) WHERE lower(oper_status) <> 'up'",
            "DROP INDEX IF EXISTS measurements_snmpsample_not_up",
        ),
    ]
