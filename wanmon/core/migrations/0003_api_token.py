"""Personal API tokens stored as a hash, with an expiry; DRF's authtoken keys (kept in clear) become such tokens.

A key in ``authtoken_token`` keeps working under its hash until WANMON_API_TOKEN_DAYS from now; the clear-text table,
its migration records and its content types are then dropped (``rest_framework.authtoken`` is no longer installed).
"""

import hashlib
from datetime import timedelta

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.utils import timezone

PREFIX_LEN = 8  # literal copies: a migration must not depend on code that may change later
DEFAULT_DAYS = 90


def tokens_from_authtoken(apps, schema_editor):
    connection = schema_editor.connection
    if "authtoken_token" not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("core", "ApiToken")
    expires_at = timezone.now() + timedelta(days=getattr(settings, "WANMON_API_TOKEN_DAYS", DEFAULT_DAYS))
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, user_id FROM authtoken_token")
        rows = cursor.fetchall()
        ApiToken.objects.bulk_create([
            ApiToken(user_id=user_id, token_hash=hashlib.sha256(key.encode()).hexdigest(), token_prefix=key[:PREFIX_LEN],
                     name="DRF authtoken key", expires_at=expires_at)
            for key, user_id in rows
        ])
        cursor.execute("DROP TABLE authtoken_token")
        cursor.execute("DELETE FROM django_migrations WHERE app = 'authtoken'")
    apps.get_model("contenttypes", "ContentType").objects.filter(app_label="authtoken").delete()


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0002_roles'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ApiToken',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('token_hash', models.CharField(max_length=64, unique=True)),
                ('token_prefix', models.CharField(max_length=12)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('revoked_at', models.DateTimeField(blank=True, null=True)),
                ('last_used_at', models.DateTimeField(blank=True, null=True)),
                ('name', models.CharField(blank=True, help_text='what it is for (a script, a notebook)', max_length=100)),
                ('expires_at', models.DateTimeField()),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='api_tokens', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['user', '-created_at', 'id'],
            },
        ),
        # Hashes cannot be turned back into keys: undone, the tokens are simply gone.
        migrations.RunPython(tokens_from_authtoken, migrations.RunPython.noop),
    ]
