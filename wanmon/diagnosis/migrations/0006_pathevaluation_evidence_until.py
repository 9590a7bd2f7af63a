# The newest test a path's last evaluation saw: a cycle plans the path again only for a newer one.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('diagnosis', '0005_finding_onset'),
    ]

    operations = [
        migrations.AddField(
            model_name='pathevaluation',
            name='evidence_until',
            field=models.DateTimeField(blank=True, help_text='the newest test of the path the last evaluation saw: a later one is new evidence', null=True),
        ),
    ]
