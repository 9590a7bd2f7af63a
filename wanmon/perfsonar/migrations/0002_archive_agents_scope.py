"""The archive agents of pSConfig templates archive perfSONAR runs only (their token is in the template)."""

from django.db import migrations


def archive_agents_scope(apps, schema_editor):
    Agent = apps.get_model("inventory", "Agent")
    PsconfigToken = apps.get_model("perfsonar", "PsconfigToken")
    ids = PsconfigToken.objects.exclude(archive_agent=None).values_list("archive_agent_id", flat=True)
    Agent.objects.filter(pk__in=list(ids)).update(scope="archive")


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0005_agent_scope"),
        ("perfsonar", "0001_squashed_0002_grafana_annotations"),
    ]

    # Undone, the column goes with inventory 0005: nothing to reverse here.
    operations = [migrations.RunPython(archive_agents_scope, migrations.RunPython.noop)]
