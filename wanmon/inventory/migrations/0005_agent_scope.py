from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0004_site_region"),
    ]

    operations = [
        migrations.AddField(
            model_name="agent",
            name="scope",
            field=models.CharField(
                choices=[
                    ("agent", "Site agent: measurement batches and perfSONAR runs"),
                    ("archive", "perfSONAR runs only (a pSConfig template's archive)"),
                ],
                default="agent",
                max_length=20,
            ),
        ),
    ]
