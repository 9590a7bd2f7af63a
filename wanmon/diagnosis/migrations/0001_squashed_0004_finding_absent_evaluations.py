"""diagnosis 0001-0004 squashed into one (Django's ``replaces``): docs/architecture.md, "Migrations"."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    replaces = [
        ("diagnosis", "0001_initial"),
        ("diagnosis", "0002_measurement_gap_code"),
        ("diagnosis", "0003_diagnosiscycle_pathevaluation"),
        ("diagnosis", "0004_finding_absent_evaluations"),
    ]

    initial = True

    dependencies = [
        ("inventory", "0003_interface_name_128"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Finding",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "code",
                    models.CharField(
                        choices=[
                            ("WINDOW_LIMITED", "Window Limited"),
                            ("LOSS_LIMITED", "Loss Limited"),
                            ("ASYMMETRIC_PATH", "Asymmetric Path"),
                            ("TCP_ONLY_DEGRADATION", "Tcp Only Degradation"),
                            ("TRUNK_IMBALANCE", "Trunk Imbalance"),
                            ("SHARED_EQUIPMENT_SUSPECT", "Shared Equipment Suspect"),
                            ("INTERFACE_ERRORS", "Interface Errors"),
                            ("LINK_CONGESTION", "Link Congestion"),
                            ("PERIODIC_LOSS", "Periodic Loss"),
                            ("DELAY_LEVEL_SHIFT", "Delay Level Shift"),
                            ("ROUTE_CHANGE", "Route Change"),
                            ("MTU_MISMATCH", "Mtu Mismatch"),
                            ("REORDERING", "Reordering"),
                            ("CLOCK_UNSYNC", "Clock Unsync"),
                            ("COUNTER_DISCONTINUITY", "Counter Discontinuity"),
                            ("PATH_DOWN", "Path Down"),
                            ("HOST_TCP_TUNING", "Host Tcp Tuning"),
                            ("MAINTENANCE_EXPLAINED", "Maintenance Explained"),
                            ("UNEXPLAINED_DEGRADATION", "Unexplained Degradation"),
                        ],
                        max_length=40,
                    ),
                ),
                (
                    "severity",
                    models.CharField(
                        choices=[("info", "Info"), ("warning", "Warning"), ("critical", "Critical")], max_length=10
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[("open", "Open"), ("acknowledged", "Acknowledged"), ("resolved", "Resolved")],
                        default="open",
                        max_length=20,
                    ),
                ),
                (
                    "subject",
                    models.JSONField(help_text="{src, dst} | {equipment[, interface]} | {trunk} | {site[, host]}"),
                ),
                ("subject_key", models.CharField(help_text="canonical subject, for deduplication", max_length=400)),
                ("rank", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("start", models.DateTimeField(help_text="start of the evidence window")),
                ("end", models.DateTimeField(help_text="end of the evidence window")),
                ("summary", models.TextField(blank=True)),
                ("explanation", models.TextField(blank=True)),
                ("evidence", models.JSONField(blank=True, default=dict)),
                ("actions", models.JSONField(blank=True, default=list)),
                ("explained_by", models.JSONField(blank=True, default=list, help_text="e.g. maintenance references")),
                ("first_seen_at", models.DateTimeField()),
                ("last_seen_at", models.DateTimeField()),
                ("acknowledged_at", models.DateTimeField(blank=True, null=True)),
                ("resolved_at", models.DateTimeField(blank=True, null=True)),
                (
                    "acknowledged_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="acknowledged_findings",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-last_seen_at", "code"],
            },
        ),
        migrations.CreateModel(
            name="FindingEvent",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("time", models.DateTimeField()),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("opened", "Opened"),
                            ("updated", "Updated"),
                            ("acknowledged", "Acknowledged"),
                            ("resolved", "Resolved"),
                            ("reopened", "Reopened"),
                        ],
                        max_length=20,
                    ),
                ),
                ("note", models.TextField(blank=True)),
                ("data", models.JSONField(blank=True, default=dict)),
                (
                    "finding",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="events", to="diagnosis.finding"
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["time", "id"],
            },
        ),
        migrations.AddIndex(
            model_name="finding",
            index=models.Index(fields=["status", "code"], name="diagnosis_finding_status_code"),
        ),
        migrations.AddConstraint(
            model_name="finding",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status", "resolved"), _negated=True),
                fields=("code", "subject_key"),
                name="diagnosis_finding_unique_active",
            ),
        ),
        migrations.AlterField(
            model_name="finding",
            name="code",
            field=models.CharField(
                choices=[
                    ("WINDOW_LIMITED", "Window Limited"),
                    ("LOSS_LIMITED", "Loss Limited"),
                    ("ASYMMETRIC_PATH", "Asymmetric Path"),
                    ("TCP_ONLY_DEGRADATION", "Tcp Only Degradation"),
                    ("TRUNK_IMBALANCE", "Trunk Imbalance"),
                    ("SHARED_EQUIPMENT_SUSPECT", "Shared Equipment Suspect"),
                    ("INTERFACE_ERRORS", "Interface Errors"),
                    ("LINK_CONGESTION", "Link Congestion"),
                    ("PERIODIC_LOSS", "Periodic Loss"),
                    ("DELAY_LEVEL_SHIFT", "Delay Level Shift"),
                    ("ROUTE_CHANGE", "Route Change"),
                    ("MTU_MISMATCH", "Mtu Mismatch"),
                    ("REORDERING", "Reordering"),
                    ("CLOCK_UNSYNC", "Clock Unsync"),
                    ("COUNTER_DISCONTINUITY", "Counter Discontinuity"),
                    ("PATH_DOWN", "Path Down"),
                    ("HOST_TCP_TUNING", "Host Tcp Tuning"),
                    ("MAINTENANCE_EXPLAINED", "Maintenance Explained"),
                    ("UNEXPLAINED_DEGRADATION", "Unexplained Degradation"),
                    ("MEASUREMENT_GAP", "Measurement Gap"),
                ],
                max_length=40,
            ),
        ),
        migrations.CreateModel(
            name="DiagnosisCycle",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("at", models.DateTimeField(help_text="the evaluation's 'now'", unique=True)),
                ("planned", models.PositiveIntegerField(default=0, help_text="path directions planned")),
                ("shards", models.PositiveIntegerField(default=0)),
                ("evaluated", models.PositiveIntegerField(default=0, help_text="path directions evaluated so far")),
                ("elements_done", models.BooleanField(default=False, help_text="the elements shard has run")),
                ("closed_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "ordering": ["-at"],
            },
        ),
        migrations.CreateModel(
            name="PathEvaluation",
            fields=[
                (
                    "path",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="inventory.path",
                    ),
                ),
                ("cycle_at", models.DateTimeField(help_text="the 'now' of the last evaluation")),
                (
                    "evaluations",
                    models.PositiveBigIntegerField(default=0, help_text="evaluations since the path was created"),
                ),
                (
                    "worker",
                    models.CharField(blank=True, help_text="the Celery worker of the last evaluation", max_length=200),
                ),
                (
                    "cycle",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="diagnosis.diagnosiscycle",
                    ),
                ),
            ],
        ),
        migrations.AddField(
            model_name="finding",
            name="absent_evaluations",
            field=models.PositiveIntegerField(
                default=0, help_text="consecutive evaluations that did not report it (resolved after a few)"
            ),
        ),
        migrations.AddIndex(
            model_name="finding",
            index=models.Index(
                condition=models.Q(("status", "resolved")),
                fields=["subject_key", "code", "resolved_at"],
                name="diagnosis_finding_resolved_key",
            ),
        ),
    ]
