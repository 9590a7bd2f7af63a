"""Carrier notifications are carrier notices: CarrierNotification -> CarrierNotice, and the foreign keys to it
``notification`` -> ``carrier_notice``; a window's site notices are ``site_notices``.

The rows stay where they are: the model keeps its table (``maintenance_maintenancenotification``, set in its
Meta, so the rename runs no SQL), and the two foreign key columns are renamed in place (``notification_id`` ->
``carrier_notice_id``). The rest changes labels and help texts only.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("maintenance", "0001_squashed_0005_source_mailbox"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RenameModel(old_name="CarrierNotification", new_name="CarrierNotice"),
        migrations.RenameField(model_name="maintenancewindow", old_name="notification", new_name="carrier_notice"),
        migrations.RenameField(model_name="maintenanceevent", old_name="notification", new_name="carrier_notice"),
        migrations.AlterField(
            model_name="carriernotice",
            name="raw",
            field=models.BinaryField(help_text="the notice exactly as received"),
        ),
        migrations.AlterField(
            model_name="carriernotice",
            name="uploaded_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="carrier_notices",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="maintenancewindow",
            name="carrier_notice",
            field=models.ForeignKey(
                blank=True,
                help_text="the carrier notice applied last",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="windows",
                to="maintenance.carriernotice",
            ),
        ),
        migrations.AlterField(
            model_name="maintenancewindow",
            name="stamp",
            field=models.DateTimeField(blank=True, help_text="DTSTAMP of the carrier notice applied last", null=True),
        ),
        migrations.AlterField(
            model_name="maintenanceevent",
            name="kind",
            field=models.CharField(
                choices=[
                    ("created", "Created"),
                    ("updated", "Updated"),
                    ("cancelled", "Cancelled"),
                    ("ignored", "Older carrier notice ignored"),
                    ("comment", "Comment"),
                    ("notice", "Site notice sent"),
                    ("held", "Held for review"),
                    ("reviewed", "Reviewed"),
                ],
                max_length=20,
            ),
        ),
        migrations.AlterField(
            model_name="maintenancesource",
            name="mailbox",
            field=models.CharField(
                blank=True,
                help_text="a Maildir (or directory) only this carrier's notices reach: what is imported from it is the "
                "carrier's",
                max_length=1000,
            ),
        ),
        migrations.AlterField(
            model_name="sitenotice",
            name="window",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="site_notices",
                to="maintenance.maintenancewindow",
            ),
        ),
    ]
