# A finding's episode start, kept across evaluations; existing findings start from their stored start.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('diagnosis', '0001_squashed_0004_finding_absent_evaluations'),
    ]

    operations = [
        migrations.AddField(
            model_name='finding',
            name='onset',
            field=models.DateTimeField(blank=True, help_text='start of the episode: its first bad observation, kept as the window slides (null: not known)', null=True),
        ),
        migrations.RunSQL("UPDATE diagnosis_finding SET onset = start", migrations.RunSQL.noop),
    ]
