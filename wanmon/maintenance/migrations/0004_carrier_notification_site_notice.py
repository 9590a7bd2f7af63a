# Incoming and outgoing get names that say which is which: MaintenanceNotification (a carrier's e-mail or
# calendar, received) becomes CarrierNotification, MaintenanceNotice (an e-mail sent to a site) SiteNotice.
# Only the model state changes: the tables, their constraints and every API field keep their names.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("maintenance", "0003_window_review"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameModel("MaintenanceNotification", "CarrierNotification"),
                migrations.AlterModelTable("CarrierNotification", "maintenance_maintenancenotification"),
                migrations.RenameModel("MaintenanceNotice", "SiteNotice"),
                migrations.AlterModelTable("SiteNotice", "maintenance_maintenancenotice"),
            ],
            database_operations=[],
        ),
    ]
