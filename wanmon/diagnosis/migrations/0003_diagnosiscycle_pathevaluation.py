import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0002_measurement_gap_code"),
        ("inventory", "0003_interface_name_128"),
    ]

    operations = [
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
            options={"ordering": ["-at"]},
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
    ]
