"""Personal API tokens: `Authorization: Token <key>`, stored as a hash, expiring, revocable; the command that prints
one; DRF's clear-text keys carried over by the migration."""

from __future__ import annotations

import hashlib
import importlib
import io
from datetime import timedelta

import pytest
from django.apps import apps as django_apps
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

from wanmon.core.models import ApiToken
from wanmon.core.services import api_token_create
from wanmon.inventory.models import Site

pytestmark = pytest.mark.django_db


@pytest.fixture
def noc(django_user_model):
    Site.objects.create(code="CERN", name="CERN")
    return django_user_model.objects.create_user("noc", password="s3cret-pass")


def _get(client, key: str):
    return client.get("/api/v1/sites/", HTTP_AUTHORIZATION=f"Token {key}")


def _refused(response) -> bool:
    """Refused as unauthenticated (403: the session, DRF's first authenticator, sends no WWW-Authenticate)."""
    return response.status_code in (401, 403) and "detail" in response.json()


def _create_token(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("drf_create_token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_drf_create_token_prints_a_token_once_that_the_api_takes_and_stores_only_its_hash(client, noc):
    out, err = _create_token("noc")
    # the line DRF's command printed, so scripts reading it keep working
    assert out.startswith("Generated token ") and out.strip().endswith(" for user noc")
    key = out.split()[2]
    assert "valid until" in err
    assert _get(client, key).status_code == 200
    token = ApiToken.objects.get()
    assert token.token_hash == hashlib.sha256(key.encode()).hexdigest() and token.token_prefix == key[:8]
    assert 89 <= (token.expires_at - timezone.now()).days <= 90  # WANMON_API_TOKEN_DAYS
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM core_apitoken")
        assert all(key not in str(value) for row in cursor.fetchall() for value in row)
    assert token.last_used_at is not None


def test_every_run_makes_a_new_token_and_reset_revokes_the_others(client, noc):
    first = _create_token("noc")[0].split()[2]
    second = _create_token("noc", "--days", "7")[0].split()[2]
    assert first != second and _get(client, first).status_code == 200 and _get(client, second).status_code == 200
    third = _create_token("noc", "-r")[0].split()[2]
    assert _refused(_get(client, first)) and _refused(_get(client, second))
    assert _get(client, third).status_code == 200
    with pytest.raises(CommandError, match="unknown user 'nobody'"):
        _create_token("nobody")
    with pytest.raises(CommandError, match="at least 1 day"):
        _create_token("noc", "--days", "0")


def test_an_expired_token_is_refused_saying_so(client, noc):
    token, key = api_token_create(user=noc, days=1, now=timezone.now() - timedelta(days=2))
    response = _get(client, key)
    assert _refused(response) and "expired" in response.json()["detail"]


def test_unknown_revoked_and_inactive_users_tokens_are_refused(client, noc):
    assert _refused(_get(client, "0" * 40))
    assert _refused(client.get("/api/v1/sites/", HTTP_AUTHORIZATION="Token a b"))
    _, key = api_token_create(user=noc)
    noc.is_active = False
    noc.save()
    assert _refused(_get(client, key))


def test_drfs_clear_text_keys_become_hashed_tokens_and_keep_working(client, noc):
    # given a database from before: DRF's authtoken table with a key in clear, and its migration recorded
    key = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamptz NOT NULL, "
                       "user_id integer NOT NULL UNIQUE REFERENCES auth_user(id))")
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, now(), %s)", [key, noc.pk])
        cursor.execute("INSERT INTO django_migrations (app, name, applied) VALUES ('authtoken', '0001_initial', now())")
    # when the migration runs
    migration = importlib.import_module("wanmon.core.migrations.0003_api_token")
    with connection.schema_editor() as editor:
        migration.tokens_from_authtoken(django_apps, editor)
    # then the key still works, is stored only as its hash, and the clear-text table is gone
    assert _get(client, key).status_code == 200
    token = ApiToken.objects.get()
    assert token.user == noc and token.token_hash == hashlib.sha256(key.encode()).hexdigest()
    assert token.expires_at > timezone.now() + timedelta(days=89)
    assert "authtoken_token" not in connection.introspection.table_names()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM django_migrations WHERE app = 'authtoken'")
        assert cursor.fetchone()[0] == 0
