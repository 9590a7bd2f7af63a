"""Password guessing: lockout on the login page, the admin and API Basic auth; Basic off by default; tokens."""

import base64
from unittest import mock

import pytest
from django.contrib.auth.backends import ModelBackend
from rest_framework.authtoken.models import Token

from wanmon.inventory.models import Site

pytestmark = pytest.mark.django_db

LIMIT = 3


@pytest.fixture
def lockout(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    return settings


@pytest.fixture
def noc(django_user_model):
    return django_user_model.objects.create_user("noc", password="s3cret-pass", is_staff=True)


def _basic(user: str, password: str) -> dict:
    return {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_login_page_locks_out_the_address_after_failures(client, lockout, noc):
    codes = [client.post("/accounts/login/", {"username": "noc", "password": "wrong"}).status_code
             for _ in range(LIMIT)]
    assert codes == [200] * (LIMIT - 1) + [429]  # the failure that reaches the limit is answered with the lockout
    with mock.patch.object(ModelBackend, "authenticate", autospec=True, wraps=ModelBackend.authenticate) as backend:
        # Locked out: even the right password is refused, and no password hash is computed for it.
        response = client.post("/accounts/login/", {"username": "noc", "password": "s3cret-pass"})
        assert response.status_code == 429
        assert backend.call_count == 0
    assert client.get("/").status_code == 302  # not logged in


def test_unknown_user_names_count_too(client, lockout, noc):
    for i in range(LIMIT):
        client.post("/accounts/login/", {"username": f"guess{i}", "password": "x"})
    assert client.post("/accounts/login/", {"username": "noc", "password": "s3cret-pass"}).status_code == 429


def test_other_addresses_are_not_locked_out(client, lockout, noc):
    for _ in range(LIMIT):
        client.post("/accounts/login/", {"username": "noc", "password": "wrong"}, REMOTE_ADDR="192.0.2.7")
    response = client.post("/accounts/login/", {"username": "noc", "password": "s3cret-pass"}, REMOTE_ADDR="192.0.2.8")
    assert response.status_code == 302


def test_admin_login_locks_out(client, lockout, noc):
    for _ in range(LIMIT):
        client.post("/admin/login/?next=/admin/", {"username": "noc", "password": "wrong"})
    response = client.post("/admin/login/?next=/admin/", {"username": "noc", "password": "s3cret-pass"})
    assert response.status_code == 429


def test_behind_the_proxy_the_forwarded_client_is_locked_out_not_the_proxy(client, lockout, noc):
    lockout.WANMON_BEHIND_PROXY = True
    for _ in range(LIMIT):
        client.post("/accounts/login/", {"username": "noc", "password": "wrong"},
                    HTTP_X_FORWARDED_FOR="203.0.113.9, 198.51.100.1", REMOTE_ADDR="10.0.0.2")
    other = client.post("/accounts/login/", {"username": "noc", "password": "s3cret-pass"},
                        HTTP_X_FORWARDED_FOR="198.51.100.2", REMOTE_ADDR="10.0.0.2")
    assert other.status_code == 302
    client.logout()
    # The guesser cannot escape by changing what it puts first in X-Forwarded-For.
    again = client.post("/accounts/login/", {"username": "noc", "password": "s3cret-pass"},
                        HTTP_X_FORWARDED_FOR="192.0.2.99, 198.51.100.1", REMOTE_ADDR="10.0.0.2")
    assert again.status_code == 429


def test_api_basic_auth_is_off_by_default(client, noc):
    Site.objects.create(code="CERN", name="CERN")
    response = client.get("/api/v1/sites/", **_basic("noc", "s3cret-pass"))
    assert response.status_code in (401, 403)


def test_api_basic_auth_when_enabled_is_locked_out_too(client, lockout, noc):
    lockout.WANMON_API_BASIC_AUTH = True
    assert client.get("/api/v1/sites/", **_basic("noc", "s3cret-pass")).status_code == 200
    codes = [client.get("/api/v1/sites/", **_basic("noc", "wrong")).status_code for _ in range(LIMIT)]
    assert codes[0] in (401, 403) and len(set(codes[:-1])) == 1
    with mock.patch.object(ModelBackend, "authenticate", autospec=True, wraps=ModelBackend.authenticate) as backend:
        response = client.get("/api/v1/sites/", **_basic("noc", "s3cret-pass"))
        assert response.status_code == 429 and "Retry-After" in response
        assert backend.call_count == 0


def test_api_token_authentication(client, noc):
    token = Token.objects.create(user=noc)
    response = client.get("/api/v1/sites/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200
    assert client.get("/api/v1/sites/", HTTP_AUTHORIZATION="Token " + "0" * 40).status_code in (401, 403)


def test_session_login_still_works_with_the_lockout_backend(client, noc):
    assert client.login(username="noc", password="s3cret-pass")
    assert client.get("/api/v1/sites/").status_code == 200
