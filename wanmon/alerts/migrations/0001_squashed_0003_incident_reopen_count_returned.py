"""alerts 0001-0003 squashed into one (Django's ``replaces``): docs/architecture.md, "Migrations"."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    replaces = [
        ("alerts", "0001_initial"),
        ("alerts", "0002_incident_event_reopened"),
        ("alerts", "0003_incident_reopen_count_returned"),
    ]

    initial = True

    dependencies = [
        ("diagnosis", "0001_squashed_0004_finding_absent_evaluations"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="RoutingRule",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("sites", models.JSONField(blank=True, default=list, help_text="site codes")),
                ("carriers", models.JSONField(blank=True, default=list, help_text="carrier codes")),
                ("codes", models.JSONField(blank=True, default=list, help_text="finding codes")),
                (
                    "min_severity",
                    models.CharField(
                        choices=[("info", "Info"), ("warning", "Warning"), ("critical", "Critical")],
                        default="warning",
                        max_length=10,
                    ),
                ),
                ("is_active", models.BooleanField(default=True)),
                ("name", models.CharField(max_length=100, unique=True)),
                ("recipients", models.JSONField(help_text="e-mail addresses")),
                ("replace_defaults", models.BooleanField(default=False)),
                ("comment", models.TextField(blank=True)),
            ],
            options={
                "ordering": ["name"],
            },
        ),
        migrations.CreateModel(
            name="Incident",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("key", models.CharField(max_length=400)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("element", "Root-cause element (equipment, interface, trunk)"),
                            ("maintenance", "Maintenance window"),
                            ("site", "Many paths of one site"),
                            ("pair", "Both directions of a site pair"),
                            ("single", "A finding of its own"),
                        ],
                        max_length=20,
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
                    "severity",
                    models.CharField(
                        choices=[("info", "Info"), ("warning", "Warning"), ("critical", "Critical")],
                        help_text="highest of its active findings",
                        max_length=10,
                    ),
                ),
                ("code", models.CharField(help_text="code of the root (headline) finding", max_length=40)),
                ("subject_text", models.CharField(help_text="geant-fra, site FZK, CERN<->FZK, ...", max_length=200)),
                ("title", models.CharField(max_length=500)),
                ("sites", models.JSONField(blank=True, default=list)),
                ("paths", models.JSONField(blank=True, default=list, help_text="degraded path directions SRC->DST")),
                (
                    "elements",
                    models.JSONField(blank=True, default=list, help_text="equipment / trunk names at the root"),
                ),
                ("carriers", models.JSONField(blank=True, default=list)),
                (
                    "muted",
                    models.BooleanField(default=False, help_text="every paging finding is silenced or inhibited"),
                ),
                ("mute_reason", models.CharField(blank=True, max_length=500)),
                (
                    "muted_keys",
                    models.JSONField(blank=True, default=list, help_text="code|subject of the muted findings"),
                ),
                ("opened_at", models.DateTimeField()),
                ("changed_at", models.DateTimeField()),
                (
                    "cleared_at",
                    models.DateTimeField(
                        blank=True, help_text="all findings cleared; resolved after the hold", null=True
                    ),
                ),
                ("resolved_at", models.DateTimeField(blank=True, null=True)),
                ("acknowledged_at", models.DateTimeField(blank=True, null=True)),
                ("notify_seq", models.PositiveIntegerField(default=0, help_text="notification rounds so far")),
                ("last_notified_at", models.DateTimeField(blank=True, null=True)),
                ("last_notified_keys", models.JSONField(blank=True, default=list)),
                ("last_notified_severity", models.CharField(blank=True, max_length=10)),
                (
                    "acknowledged_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="acknowledged_incidents",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "merged_into",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="merged",
                        to="alerts.incident",
                    ),
                ),
                (
                    "root_finding",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="diagnosis.finding",
                    ),
                ),
            ],
            options={
                "ordering": ["-opened_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="IncidentEvent",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("time", models.DateTimeField()),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("opened", "Opened"),
                            ("changed", "Findings changed"),
                            ("muted", "Muted"),
                            ("unmuted", "Unmuted"),
                            ("notified", "Notified"),
                            ("acknowledged", "Acknowledged"),
                            ("cleared", "Evidence cleared (resolve hold)"),
                            ("recurred", "Recurred during the resolve hold"),
                            ("resolved", "Resolved"),
                            ("merged", "Merged into another incident"),
                        ],
                        max_length=20,
                    ),
                ),
                ("note", models.TextField(blank=True)),
                ("data", models.JSONField(blank=True, default=dict)),
                (
                    "incident",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="events", to="alerts.incident"
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
        migrations.CreateModel(
            name="IncidentMember",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("root", "Root cause"),
                            ("symptom", "Symptom"),
                            ("related", "Related / corroborating"),
                        ],
                        max_length=10,
                    ),
                ),
                ("added_at", models.DateTimeField()),
                (
                    "finding",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="incident_memberships",
                        to="diagnosis.finding",
                    ),
                ),
                (
                    "incident",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="members", to="alerts.incident"
                    ),
                ),
            ],
            options={
                "ordering": ["incident", "id"],
            },
        ),
        migrations.AddField(
            model_name="incident",
            name="findings",
            field=models.ManyToManyField(
                related_name="incidents", through="alerts.IncidentMember", to="diagnosis.finding"
            ),
        ),
        migrations.CreateModel(
            name="Silence",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("matchers", models.JSONField()),
                ("comment", models.TextField()),
                ("starts_at", models.DateTimeField()),
                ("ends_at", models.DateTimeField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("expired_at", models.DateTimeField(blank=True, null=True)),
                ("reminded_at", models.DateTimeField(blank=True, null=True)),
                (
                    "author",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="alert_silences",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "expired_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "incident",
                    models.ForeignKey(
                        blank=True,
                        help_text="the incident it was created from, if any",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="silences",
                        to="alerts.incident",
                    ),
                ),
            ],
            options={
                "ordering": ["-starts_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="Notification",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("firing", "First notice / problem persists after a mute"),
                            ("update", "New findings or higher severity"),
                            ("repeat", "Still open (repeat interval)"),
                            ("resolved", "Resolved"),
                            ("silence_reminder", "Silence about to expire"),
                        ],
                        max_length=20,
                    ),
                ),
                ("sequence", models.PositiveIntegerField(default=0, help_text="the incident's notification round")),
                ("recipient", models.EmailField(max_length=254)),
                ("reason", models.CharField(blank=True, help_text="why this recipient", max_length=300)),
                ("subject", models.CharField(max_length=300)),
                ("body_text", models.TextField()),
                ("body_html", models.TextField(blank=True)),
                ("message_id", models.CharField(max_length=200)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("sent", "Sent"),
                            ("failed", "Failed (will be retried)"),
                            ("abandoned", "Abandoned after the last retry"),
                        ],
                        default="pending",
                        max_length=20,
                    ),
                ),
                ("created_at", models.DateTimeField()),
                ("dispatched_at", models.DateTimeField(blank=True, help_text="last enqueued for sending", null=True)),
                ("sent_at", models.DateTimeField(blank=True, null=True)),
                ("attempts", models.PositiveSmallIntegerField(default=0)),
                ("last_error", models.TextField(blank=True)),
                (
                    "incident",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="notifications",
                        to="alerts.incident",
                    ),
                ),
                (
                    "silence",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="notifications",
                        to="alerts.silence",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="Subscription",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("sites", models.JSONField(blank=True, default=list, help_text="site codes")),
                ("carriers", models.JSONField(blank=True, default=list, help_text="carrier codes")),
                ("codes", models.JSONField(blank=True, default=list, help_text="finding codes")),
                (
                    "min_severity",
                    models.CharField(
                        choices=[("info", "Info"), ("warning", "Warning"), ("critical", "Critical")],
                        default="warning",
                        max_length=10,
                    ),
                ),
                ("is_active", models.BooleanField(default=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="alert_subscriptions",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["user", "id"],
            },
        ),
        migrations.AddConstraint(
            model_name="incidentmember",
            constraint=models.UniqueConstraint(
                fields=("incident", "finding"), name="alerts_incidentmember_unique_finding"
            ),
        ),
        migrations.AddIndex(
            model_name="incident",
            index=models.Index(fields=["status", "severity"], name="alerts_incident_status_sev"),
        ),
        migrations.AddConstraint(
            model_name="incident",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status", "resolved"), _negated=True),
                fields=("key",),
                name="alerts_incident_unique_active_key",
            ),
        ),
        migrations.AddConstraint(
            model_name="silence",
            constraint=models.CheckConstraint(
                condition=models.Q(("ends_at__gt", models.F("starts_at"))), name="alerts_silence_ends_after_start"
            ),
        ),
        migrations.AddIndex(
            model_name="notification",
            index=models.Index(fields=["status", "dispatched_at"], name="alerts_notification_status"),
        ),
        migrations.AddConstraint(
            model_name="notification",
            constraint=models.UniqueConstraint(
                condition=models.Q(("incident__isnull", False)),
                fields=("incident", "kind", "sequence", "recipient"),
                name="alerts_notification_unique_incident_round",
            ),
        ),
        migrations.AddConstraint(
            model_name="notification",
            constraint=models.UniqueConstraint(
                condition=models.Q(("silence__isnull", False)),
                fields=("silence", "kind", "recipient"),
                name="alerts_notification_unique_silence_kind",
            ),
        ),
        migrations.AddConstraint(
            model_name="notification",
            constraint=models.CheckConstraint(
                condition=models.Q(("incident__isnull", False), ("silence__isnull", False), _connector="OR"),
                name="alerts_notification_about_something",
            ),
        ),
        migrations.AlterField(
            model_name="incidentevent",
            name="kind",
            field=models.CharField(
                choices=[
                    ("opened", "Opened"),
                    ("changed", "Findings changed"),
                    ("muted", "Muted"),
                    ("unmuted", "Unmuted"),
                    ("notified", "Notified"),
                    ("acknowledged", "Acknowledged"),
                    ("cleared", "Evidence cleared (resolve hold)"),
                    ("recurred", "Recurred during the resolve hold"),
                    ("reopened", "Reopened: a finding came back soon after the resolution"),
                    ("resolved", "Resolved"),
                    ("merged", "Merged into another incident"),
                ],
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="incident",
            name="reopen_count",
            field=models.PositiveIntegerField(
                default=0,
                help_text="times its findings came back after its resolution (each lengthens the resolve hold)",
            ),
        ),
        migrations.AlterField(
            model_name="notification",
            name="kind",
            field=models.CharField(
                choices=[
                    ("firing", "First notice / problem persists after a mute"),
                    ("update", "New findings or higher severity"),
                    ("repeat", "Still open (repeat interval)"),
                    ("resolved", "Resolved"),
                    ("returned", "Returned after the resolved notice"),
                    ("silence_reminder", "Silence about to expire"),
                ],
                max_length=20,
            ),
        ),
    ]
