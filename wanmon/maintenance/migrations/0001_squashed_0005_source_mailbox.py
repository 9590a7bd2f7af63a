"""maintenance 0001-0005 squashed into one (Django's ``replaces``): docs/architecture.md, "Migrations"."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    replaces = [
        ("maintenance", "0001_initial"),
        ("maintenance", "0002_bcop_provenance_notices"),
        ("maintenance", "0003_window_review"),
        ("maintenance", "0004_carrier_notification_site_notice"),
        ("maintenance", "0005_source_mailbox"),
    ]

    initial = True

    dependencies = [
        ("inventory", "0001_squashed_0002_path_rtt_ms"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="MaintenanceWindow",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("reference", models.CharField(help_text="the carrier's maintenance id", max_length=200)),
                ("summary", models.CharField(blank=True, max_length=500)),
                ("start", models.DateTimeField()),
                ("end", models.DateTimeField()),
                ("source_tz", models.CharField(default="UTC", max_length=64)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("tentative", "Tentative"),
                            ("confirmed", "Confirmed"),
                            ("cancelled", "Cancelled"),
                            ("in-process", "In process"),
                            ("completed", "Completed"),
                        ],
                        default="confirmed",
                        max_length=20,
                    ),
                ),
                (
                    "impact",
                    models.CharField(
                        choices=[
                            ("no-impact", "No impact"),
                            ("reduced-redundancy", "Reduced redundancy"),
                            ("at-risk", "At risk"),
                            ("degraded", "Degraded"),
                            ("outage", "Outage"),
                        ],
                        default="outage",
                        max_length=20,
                    ),
                ),
                ("uid", models.CharField(blank=True, max_length=255, verbose_name="iCalendar UID")),
                ("sequence", models.PositiveIntegerField(default=0)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "carrier",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="maintenance_windows",
                        to="inventory.carrier",
                    ),
                ),
            ],
            options={
                "ordering": ["start", "reference"],
            },
        ),
        migrations.CreateModel(
            name="MaintenanceAffect",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "impact",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("no-impact", "No impact"),
                            ("reduced-redundancy", "Reduced redundancy"),
                            ("at-risk", "At risk"),
                            ("degraded", "Degraded"),
                            ("outage", "Outage"),
                        ],
                        max_length=20,
                    ),
                ),
                (
                    "circuit",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="maintenance_affects",
                        to="inventory.circuit",
                    ),
                ),
                (
                    "equipment",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="maintenance_affects",
                        to="inventory.equipment",
                    ),
                ),
                (
                    "interface",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="maintenance_affects",
                        to="inventory.interface",
                    ),
                ),
                (
                    "site",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="maintenance_affects",
                        to="inventory.site",
                    ),
                ),
                (
                    "trunk",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="maintenance_affects",
                        to="inventory.trunk",
                    ),
                ),
                (
                    "window",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="affects",
                        to="maintenance.maintenancewindow",
                    ),
                ),
            ],
        ),
        migrations.AddConstraint(
            model_name="maintenancewindow",
            constraint=models.CheckConstraint(
                condition=models.Q(("end__gt", models.F("start"))), name="maintenance_maintenancewindow_end_after_start"
            ),
        ),
        migrations.AddConstraint(
            model_name="maintenancewindow",
            constraint=models.UniqueConstraint(
                fields=("carrier", "reference"), name="maintenance_maintenancewindow_unique_carrier_reference"
            ),
        ),
        migrations.AddConstraint(
            model_name="maintenanceaffect",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("equipment__isnull", False),
                    ("interface__isnull", False),
                    ("trunk__isnull", False),
                    ("circuit__isnull", False),
                    ("site__isnull", False),
                    _connector="OR",
                ),
                name="maintenance_maintenanceaffect_targets_something",
            ),
        ),
        migrations.CreateModel(
            name="FeedToken",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=200)),
                ("token_hash", models.CharField(max_length=64, unique=True)),
                ("token_prefix", models.CharField(max_length=12)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "ordering": ["name", "id"],
            },
        ),
        migrations.CreateModel(
            name="MaintenanceEvent",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("time", models.DateTimeField()),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("created", "Created"),
                            ("updated", "Updated"),
                            ("cancelled", "Cancelled"),
                            ("ignored", "Older notification ignored"),
                            ("comment", "Comment"),
                            ("notice", "Notice sent"),
                        ],
                        max_length=20,
                    ),
                ),
                ("changes", models.JSONField(blank=True, default=dict, help_text="{field: [before, after]}")),
                ("note", models.TextField(blank=True)),
            ],
            options={
                "ordering": ["time", "id"],
            },
        ),
        migrations.CreateModel(
            name="MaintenanceNotice",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("advance", "Advance notice"),
                            ("changed", "Window changed"),
                            ("cancelled", "Window cancelled"),
                            ("ended-degraded", "Window ended, path still degraded"),
                        ],
                        max_length=20,
                    ),
                ),
                ("recipient", models.EmailField(max_length=254)),
                (
                    "occurrence_start",
                    models.DateTimeField(
                        help_text="the occurrence of a recurring window; 1970-01-01 for single windows (they may move)"
                    ),
                ),
                (
                    "revision",
                    models.PositiveIntegerField(
                        default=0, help_text="key part: the window revision for changes, else 0"
                    ),
                ),
                (
                    "window_revision",
                    models.PositiveIntegerField(default=0, help_text="the window revision the e-mail described"),
                ),
                ("subject", models.CharField(blank=True, max_length=998)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("sent_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "ordering": ["created_at", "id"],
            },
        ),
        migrations.CreateModel(
            name="MaintenanceNotification",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("received_at", models.DateTimeField(auto_now_add=True)),
                (
                    "source",
                    models.CharField(
                        choices=[
                            ("manual", "Entered by hand"),
                            ("api", "REST API"),
                            ("ical-file", "iCalendar file"),
                            ("ical-url", "iCalendar URL"),
                            ("email", "Carrier e-mail"),
                            ("maildir", "Mailbox directory"),
                        ],
                        max_length=20,
                    ),
                ),
                ("origin", models.CharField(blank=True, help_text="file name, URL or mailbox key", max_length=1000)),
                ("content_type", models.CharField(blank=True, max_length=100)),
                ("message_id", models.CharField(blank=True, max_length=998)),
                ("sender", models.CharField(blank=True, max_length=320)),
                ("subject", models.CharField(blank=True, max_length=998)),
                ("raw", models.BinaryField(help_text="the notification exactly as received")),
                (
                    "sha256",
                    models.CharField(help_text="of raw: the same bytes are imported once", max_length=64, unique=True),
                ),
                ("parser", models.CharField(blank=True, help_text="parser that produced the windows", max_length=200)),
                (
                    "status",
                    models.CharField(
                        choices=[("parsed", "Parsed"), ("partial", "Parsed with problems"), ("failed", "Not parsed")],
                        default="parsed",
                        max_length=20,
                    ),
                ),
                (
                    "report",
                    models.JSONField(
                        blank=True, default=dict, help_text="windows created/updated/ignored, unmatched objects"
                    ),
                ),
            ],
            options={
                "ordering": ["-received_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="MaintenanceSource",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "parser",
                    models.CharField(
                        blank=True,
                        help_text="circuit-maintenance-parser provider (e.g. 'zayo', 'colt'); empty: BCOP iCalendar only",
                        max_length=50,
                    ),
                ),
                (
                    "senders",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="e-mail addresses or '@domain' whose messages come from this carrier",
                    ),
                ),
                (
                    "provider_names",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="X-MAINTNOTE-PROVIDER values this carrier uses (e.g. 'example.com')",
                    ),
                ),
                ("url", models.URLField(blank=True, help_text="an iCalendar feed to poll", max_length=1000)),
                ("enabled", models.BooleanField(default=True)),
                ("last_polled_at", models.DateTimeField(blank=True, null=True)),
                ("last_error", models.TextField(blank=True)),
            ],
            options={
                "ordering": ["carrier__code", "id"],
            },
        ),
        migrations.RemoveConstraint(
            model_name="maintenanceaffect",
            name="maintenance_maintenanceaffect_targets_something",
        ),
        migrations.AddField(
            model_name="maintenanceaffect",
            name="altrep",
            field=models.URLField(blank=True, help_text="ALTREP of the object id: where to read more", max_length=1000),
        ),
        migrations.AddField(
            model_name="maintenanceaffect",
            name="object_id",
            field=models.CharField(
                blank=True, help_text="the carrier's identifier (X-MAINTNOTE-OBJECT-ID)", max_length=200
            ),
        ),
        migrations.AddField(
            model_name="maintenanceaffect",
            name="path",
            field=models.ForeignKey(
                blank=True,
                help_text="a path direction (any version of its site pair)",
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="maintenance_affects",
                to="inventory.path",
            ),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="account",
            field=models.CharField(blank=True, help_text="X-MAINTNOTE-ACCOUNT", max_length=200),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="aliases",
            field=models.JSONField(blank=True, default=list, help_text="other maintenance ids (BCOP NON-PRIMARY)"),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="author",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="maintenance_windows_authored",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="behaviour",
            field=models.CharField(
                choices=[
                    ("mute", "Mute: explain degradations, send no alert"),
                    ("skip", "Skip: also pause scheduled tests on the affected paths"),
                    ("run", "Run: keep testing and alerting as usual (informational window)"),
                ],
                default="mute",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="description",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="organizer",
            field=models.CharField(blank=True, max_length=320),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="parser",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="provider",
            field=models.CharField(blank=True, help_text="X-MAINTNOTE-PROVIDER as announced", max_length=200),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="recurrence_end",
            field=models.DateTimeField(
                blank=True, help_text="end of the last occurrence (empty: the rule has no end)", null=True
            ),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="revision",
            field=models.PositiveIntegerField(
                default=0, help_text="counts material changes (times, status, impact...)"
            ),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="rrule",
            field=models.CharField(
                blank=True,
                help_text="RFC 5545 RRULE, applied to the UTC start",
                max_length=500,
                verbose_name="recurrence rule",
            ),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="source",
            field=models.CharField(
                choices=[
                    ("manual", "Entered by hand"),
                    ("api", "REST API"),
                    ("ical-file", "iCalendar file"),
                    ("ical-url", "iCalendar URL"),
                    ("email", "Carrier e-mail"),
                    ("maildir", "Mailbox directory"),
                ],
                default="manual",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="stamp",
            field=models.DateTimeField(blank=True, help_text="DTSTAMP of the notification applied last", null=True),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="unmatched_objects",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="announced objects not found in the inventory: [{object_id, impact}]",
            ),
        ),
        migrations.AddConstraint(
            model_name="maintenanceaffect",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("equipment__isnull", False),
                    ("interface__isnull", False),
                    ("trunk__isnull", False),
                    ("circuit__isnull", False),
                    ("site__isnull", False),
                    ("path__isnull", False),
                    _connector="OR",
                ),
                name="maintenance_maintenanceaffect_targets_something",
            ),
        ),
        migrations.AddField(
            model_name="feedtoken",
            name="carrier",
            field=models.ForeignKey(
                blank=True,
                help_text="restrict the token to this carrier's feed",
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="maintenance_feed_tokens",
                to="inventory.carrier",
            ),
        ),
        migrations.AddField(
            model_name="feedtoken",
            name="created_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="feed_tokens",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="feedtoken",
            name="site",
            field=models.ForeignKey(
                blank=True,
                help_text="restrict the token to this site's feed",
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="maintenance_feed_tokens",
                to="inventory.site",
            ),
        ),
        migrations.AddField(
            model_name="maintenanceevent",
            name="user",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="maintenance_events",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="maintenanceevent",
            name="window",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="events", to="maintenance.maintenancewindow"
            ),
        ),
        migrations.AddField(
            model_name="maintenancenotice",
            name="window",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="notices", to="maintenance.maintenancewindow"
            ),
        ),
        migrations.AddField(
            model_name="maintenancenotification",
            name="uploaded_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="maintenance_notifications",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="maintenanceevent",
            name="notification",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="events",
                to="maintenance.maintenancenotification",
            ),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="notification",
            field=models.ForeignKey(
                blank=True,
                help_text="the notification applied last",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="windows",
                to="maintenance.maintenancenotification",
            ),
        ),
        migrations.AddIndex(
            model_name="maintenancewindow",
            index=models.Index(fields=["start", "end"], name="maintenance_window_span"),
        ),
        migrations.AddConstraint(
            model_name="maintenancewindow",
            constraint=models.UniqueConstraint(
                condition=models.Q(("uid", ""), _negated=True),
                fields=("carrier", "uid"),
                name="maintenance_maintenancewindow_unique_carrier_uid",
            ),
        ),
        migrations.AddField(
            model_name="maintenancesource",
            name="carrier",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="maintenance_sources", to="inventory.carrier"
            ),
        ),
        migrations.AddConstraint(
            model_name="feedtoken",
            constraint=models.CheckConstraint(
                condition=models.Q(("site__isnull", False), ("carrier__isnull", False), _negated=True),
                name="maintenance_feedtoken_site_or_carrier",
            ),
        ),
        migrations.AddConstraint(
            model_name="maintenancenotice",
            constraint=models.UniqueConstraint(
                fields=("window", "kind", "recipient", "occurrence_start", "revision"),
                name="maintenance_maintenancenotice_unique_notice",
            ),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="review",
            field=models.CharField(
                choices=[("accepted", "Accepted"), ("held", "Held for review"), ("rejected", "Rejected")],
                default="accepted",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="review_note",
            field=models.CharField(blank=True, help_text="why the source was trusted or held", max_length=500),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="reviewed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="maintenancewindow",
            name="reviewed_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="maintenance_windows_reviewed",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="maintenanceevent",
            name="kind",
            field=models.CharField(
                choices=[
                    ("created", "Created"),
                    ("updated", "Updated"),
                    ("cancelled", "Cancelled"),
                    ("ignored", "Older notification ignored"),
                    ("comment", "Comment"),
                    ("notice", "Notice sent"),
                    ("held", "Held for review"),
                    ("reviewed", "Reviewed"),
                ],
                max_length=20,
            ),
        ),
        migrations.AddIndex(
            model_name="maintenancewindow",
            index=models.Index(fields=["review"], name="maintenance_window_review"),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameModel(
                    old_name="MaintenanceNotification",
                    new_name="CarrierNotification",
                ),
                migrations.AlterModelTable(
                    name="CarrierNotification",
                    table="maintenance_maintenancenotification",
                ),
                migrations.RenameModel(
                    old_name="MaintenanceNotice",
                    new_name="SiteNotice",
                ),
                migrations.AlterModelTable(
                    name="SiteNotice",
                    table="maintenance_maintenancenotice",
                ),
            ],
        ),
        migrations.AddField(
            model_name="maintenancesource",
            name="mailbox",
            field=models.CharField(
                blank=True,
                help_text="a Maildir (or directory) only this carrier's notifications reach: what is imported from it is the carrier's",
                max_length=1000,
            ),
        ),
    ]
