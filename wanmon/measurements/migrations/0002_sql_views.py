"""Read-only SQL views for engineers (psql, pandas, Grafana): measurements with names instead of ids.

Documented in docs/data-mining.md; `manage.py create_readonly_role` grants SELECT on exactly these.
"""

from django.db import migrations

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
               h.congestion_control, h.mtu
        FROM measurements_hosttcp h JOIN inventory_site s ON s.id = h.site_id""",
}
for level in ("5m", "1h", "1d"):
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
    dependencies = [("measurements", "0001_hypertables"), ("inventory", "0001_squashed_0002_path_rtt_ms")]
    operations = [migrations.RunSQL(sql=SQL, reverse_sql=DROP)]
