"""perfsonar 0001-0002 squashed into one (Django's ``replaces``): docs/architecture.md, "Migrations".

The pScheduler runs, endpoint aliases and pSConfig tokens; and read-only SQL views of findings, incidents and
maintenance windows as Grafana annotations. Each view has the columns a Grafana annotation query reads:
``time``, ``timeend`` (timestamptz, UTC), ``text`` and ``tags`` (comma-separated), plus an id and a few columns to
filter on. Documented in docs/data-mining.md.

PostgreSQL refuses to change the type of a column a view reads: a later migration doing so to
diagnosis_finding, alerts_incident or maintenance_maintenancewindow drops these views first and creates
them again after (``VIEWS`` below holds their text).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

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
    replaces = [("perfsonar", "0001_initial"), ("perfsonar", "0002_grafana_annotations")]

    initial = True

    dependencies = [
        ("inventory", "0003_interface_name_128"),
        ("diagnosis", "0001_squashed_0004_finding_absent_evaluations"),
        ("alerts", "0001_squashed_0003_incident_reopen_count_returned"),
        ("maintenance", "0001_squashed_0005_source_mailbox"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="EndpointAlias",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("endpoint", models.CharField(max_length=255, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "host",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="perfsonar_aliases",
                        to="inventory.host",
                    ),
                ),
                (
                    "site",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="perfsonar_aliases",
                        to="inventory.site",
                    ),
                ),
            ],
            options={
                "ordering": ["endpoint"],
            },
        ),
        migrations.CreateModel(
            name="PerfsonarRun",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("run_id", models.CharField(max_length=200, unique=True)),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("ingested", "Ingested"),
                            ("parked", "Parked: an endpoint is not in the inventory"),
                            ("rejected", "Refused when its endpoints were mapped"),
                            ("ignored", "Ignored: not a measurement wanmon uses"),
                        ],
                        max_length=20,
                    ),
                ),
                ("test_type", models.CharField(max_length=50)),
                ("tool", models.CharField(blank=True, max_length=100)),
                ("tool_version", models.CharField(blank=True, max_length=100)),
                ("run_start", models.DateTimeField(blank=True, null=True)),
                (
                    "source",
                    models.CharField(blank=True, help_text="the source endpoint as the run names it", max_length=255),
                ),
                ("dest", models.CharField(blank=True, max_length=255)),
                (
                    "unresolved",
                    models.JSONField(blank=True, default=list, help_text="endpoint names the inventory does not know"),
                ),
                ("body", models.JSONField(blank=True, help_text="the archived body, kept while parked", null=True)),
                ("batch_id", models.UUIDField(blank=True, help_text="the ingest batch of its records", null=True)),
                ("accepted", models.PositiveIntegerField(default=0)),
                ("error", models.TextField(blank=True)),
                ("received_at", models.DateTimeField(auto_now_add=True)),
                ("ingested_at", models.DateTimeField(blank=True, null=True)),
                (
                    "agent",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="perfsonar_runs",
                        to="inventory.agent",
                    ),
                ),
            ],
            options={
                "ordering": ["-received_at", "-id"],
                "indexes": [models.Index(fields=["state", "received_at"], name="perfsonar_run_state")],
            },
        ),
        migrations.CreateModel(
            name="PsconfigToken",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("nonce", models.CharField(max_length=64)),
                ("token_hash", models.CharField(max_length=64, unique=True)),
                ("token_prefix", models.CharField(max_length=12)),
                ("archive_nonce", models.CharField(blank=True, max_length=64)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                (
                    "archive_agent",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="psconfig_tokens",
                        to="inventory.agent",
                    ),
                ),
                (
                    "site",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="psconfig_tokens",
                        to="inventory.site",
                    ),
                ),
            ],
            options={
                "ordering": ["site__code", "id"],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("revoked_at__isnull", True)),
                        fields=("site",),
                        name="perfsonar_psconfigtoken_unique_active_site",
                        nulls_distinct=False,
                    )
                ],
            },
        ),
        *(
            migrations.RunSQL(sql=f"CREATE OR REPLACE VIEW {name} AS {body}", reverse_sql=f"DROP VIEW IF EXISTS {name}")
            for name, body in VIEWS.items()
        ),
    ]
