"""Host reports carry the speed of the host's test interface (``nic_speed_mbps``, /sys/class/net/<if>/speed): the
window advice never asks for a window that only helps beyond what the NIC can send. Null when unknown (older
agents, virtual interfaces reporting -1). The engineers' view shows it."""

from django.db import migrations, models

VIEW = """
CREATE OR REPLACE VIEW wanmon_host_tcp AS
    SELECT h.time, s.code AS site, h.host, h.tcp_rmem, h.tcp_wmem, h.rmem_max, h.wmem_max,
           h.congestion_control, h.mtu, h.nic_speed_mbps
    FROM measurements_hosttcp h JOIN inventory_site s ON s.id = h.site_id;
"""
SQL = "ALTER TABLE measurements_hosttcp ADD COLUMN nic_speed_mbps double precision NULL;" + VIEW
REVERSE = """
DROP VIEW IF EXISTS wanmon_host_tcp;
CREATE VIEW wanmon_host_tcp AS
    SELECT h.time, s.code AS site, h.host, h.tcp_rmem, h.tcp_wmem, h.rmem_max, h.wmem_max,
           h.congestion_control, h.mtu
    FROM measurements_hosttcp h JOIN inventory_site s ON s.id = h.site_id;
ALTER TABLE measurements_hosttcp DROP COLUMN nic_speed_mbps;
"""


class Migration(migrations.Migration):
    dependencies = [("measurements", "0005_interfacewatermark")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(sql=SQL, reverse_sql=REVERSE)],
            state_operations=[migrations.AddField("hosttcp", "nic_speed_mbps", models.FloatField(null=True))],
        )
    ]
