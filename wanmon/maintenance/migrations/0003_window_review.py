# Windows held for review until an operator accepts them (trust of the notification source).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('maintenance', '0002_bcop_provenance_notices'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='maintenancewindow',
            name='review',
            field=models.CharField(choices=[('accepted', 'Accepted'), ('held', 'Held for review'), ('rejected', 'Rejected')], default='accepted', max_length=10),
        ),
        migrations.AddField(
            model_name='maintenancewindow',
            name='review_note',
            field=models.CharField(blank=True, help_text='why the source was trusted or held', max_length=500),
        ),
        migrations.AddField(
            model_name='maintenancewindow',
            name='reviewed_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='maintenancewindow',
            name='reviewed_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='maintenance_windows_reviewed', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AlterField(
            model_name='maintenanceevent',
            name='kind',
            field=models.CharField(choices=[('created', 'Created'), ('updated', 'Updated'), ('cancelled', 'Cancelled'), ('ignored', 'Older notification ignored'), ('comment', 'Comment'), ('notice', 'Notice sent'), ('held', 'Held for review'), ('reviewed', 'Reviewed')], max_length=20),
        ),
        migrations.AddIndex(
            model_name='maintenancewindow',
            index=models.Index(fields=['review'], name='maintenance_window_review'),
        ),
    ]
