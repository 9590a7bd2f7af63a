# A carrier's own mailbox: what is imported from it is trusted as the carrier's (wanmon/maintenance/trust.py).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('maintenance', '0004_carrier_notification_site_notice'),
    ]

    operations = [
        migrations.AddField(
            model_name='maintenancesource',
            name='mailbox',
            field=models.CharField(blank=True, help_text="a Maildir (or directory) only this carrier's notifications reach: what is imported from it is the carrier's", max_length=1000),
        ),
    ]
