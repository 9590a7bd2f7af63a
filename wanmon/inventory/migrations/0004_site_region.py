from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0003_interface_name_128"),
    ]

    operations = [
        migrations.AddField(
            model_name="site",
            name="region",
            field=models.CharField(blank=True, max_length=64),
        ),
    ]
