"""The demo's login: created once, never reset by a later scripts/demo (that would log everyone out)."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def _run(monkeypatch, password: str) -> str:
    monkeypatch.setenv("DJANGO_SUPERUSER_USERNAME", "admin")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", password)
    out = io.StringIO()
    call_command("demo_user", stdout=out)
    return out.getvalue()


def test_an_existing_admin_keeps_its_password_and_sessions(monkeypatch, client):
    assert "created user admin" in _run(monkeypatch, "first-demo-pass")
    admin = get_user_model().objects.get(username="admin")
    admin.set_password("chosen-by-the-noc")
    admin.save()
    client.login(username="admin", password="chosen-by-the-noc")
    assert client.get("/findings/").status_code == 200
    out = _run(monkeypatch, "first-demo-pass")
    assert "has another password" in out
    admin.refresh_from_db()
    assert admin.check_password("chosen-by-the-noc") and admin.is_superuser and admin.is_staff
    # the session survives: a reset password would have ended it (the session hash changes)
    assert client.get("/findings/").status_code == 200
    assert "kept user admin and its password" in _run(monkeypatch, "chosen-by-the-noc")
