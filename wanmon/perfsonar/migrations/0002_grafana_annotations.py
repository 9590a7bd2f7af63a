"""Read-only SQL views of findings, incidents and maintenance windows as Grafana annotations.

Each has the columns a Grafana annotation query reads: ``time``, ``timeend`` (timestamptz, UTC), ``text`` and
``tags`` (comma-separated), plus an id and a few columns to filter on. Documented in docs/data-mining.md.

PostgreSQL refuses to change the type of a column a view reads: a later migration doing so to
diagnosis_finding, alerts_incident or maintenance_maintenancewindow drops these views first and creates
them again after (``VIEWS`` below holds their text).
"""

from django.db import migrations

VIEWS = {
    "wanmon_finding_annotations": """
        SELECT f.first_seen_at AS time,
               coalesce(f.resolved_at, f.last_seen_at) AS timeend,
               f.code || ' (' || f.severity || ', ' || f.status || '): ' || coalesce(nullif(f.summary, ''), f.subject_key)
                   AS text,
               concat_ws(',', 'finding', f.code, f.severity, f.status,
                         'src:' || (f.subject ->> 'src'), 'dst:' || (f.subject ->> 'dst'),
                         'equipment:' || (f.subject ->> 'equipment'), 'trunk:' || (f.subject ->> 'trunk'),
                         'site:' || (f.subject ->> 'site')) AS tags,
               f.id AS finding_id, f.code, f.severity, f.status, f.subject_key
        FROM diagnosis_finding f""",
    "wanmon_incident_annotations": """
        SELECT i.opened_at AS time,
               coalesce(i.cleared_at, i.changed_at) AS timeend,
               i.title || ' [' || i.severity || ', ' || i.status || ']' AS text,
               concat_ws(',', 'incident', i.code, i.severity, i.status, i.kind,
                         nullif(array_to_string(ARRAY(SELECT 'site:' || s FROM jsonb_array_elements_text(
                             CASE WHEN jsonb_typeof(i.sites) = 'array' THEN i.sites ELSE '[]'::jsonb END) s), ','), ''))
                   AS tags,
               i.id AS incident_id, i.code, i.severity, i.status, i.subject_text
        FROM alerts_incident i""",
    "wanmon_maintenance_annotations": """
        SELECT w.start AS time,
               w."end" AS timeend,
               coalesce(c.code || ' ', '') || w.reference || ' (' || w.impact || ', ' || w.status || ')'
                   || coalesce(': ' || nullif(w.summary, ''), '') AS text,
               concat_ws(',', 'maintenance', c.code, w.impact, w.status, w.behaviour,
                         CASE WHEN w.rrule <> '' THEN 'recurring' END) AS tags,
               w.id AS window_id, c.code AS carrier, w.reference, w.impact, w.status, w.rrule
        FROM maintenance_maintenancewindow w
        LEFT JOIN inventory_carrier c ON c.id = w.carrier_id""",
}


class Migration(migrations.Migration):
    dependencies = [
        ("perfsonar", "0001_initial"),
        ("diagnosis", "0001_squashed_0004_finding_absent_evaluations"),
        ("alerts", "0001_squashed_0003_incident_reopen_count_returned"),
        ("maintenance", "0001_squashed_0005_source_mailbox"),
        ("inventory", "0001_squashed_0002_path_rtt_ms"),
    ]

    operations = [
        migrations.RunSQL(sql=f"CREATE OR REPLACE VIEW {name} AS {body}", reverse_sql=f"DROP VIEW IF EXISTS {name}")
        for name, body in VIEWS.items()
    ]
