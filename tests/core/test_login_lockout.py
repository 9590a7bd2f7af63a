"""Password guessing: lockout on the login page, the admin and API Basic auth; Basic off by default; tokens."""

import base64
from unittest import mock

import pytest
from django.contrib.auth.backends import ModelBackend

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


@pytest.fixture
def mallory(django_user_model):
    """An ordinary account, as anyone at a partner institute may have."""
    return django_user_model.objects.create_user("mallory", password="own-pass-42")


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
    assert response["Retry-After"] == str(15 * 60)  # the cool-off (WANMON_LOGIN_COOLOFF_MIN), restarted by the try
    assert "too many failed logins" in response.content.decode()
    assert client.get("/").status_code == 302  # not logged in


def test_unknown_user_names_count_too(client, lockout, noc):
    for i in range(LIMIT):
        client.post("/accounts/login/", {"username": f"guess{i}", "password": "x"})
    assert client.post("/accounts/login/", {"username": "noc", "password": "s3cret-pass"}).status_code == 429


def test_the_guessed_account_is_locked_from_every_address_other_accounts_are_not(client, lockout, noc, mallory):
    # given guesses at noc's password, one from each of LIMIT addresses (no address reaches the limit)
    for i in range(LIMIT):
        client.post("/accounts/login/", {"username": "noc", "password": "wrong"}, REMOTE_ADDR=f"192.0.2.{i + 1}")
    # then noc is refused from a fresh address, even with the right password, until the cool-off has passed
    fresh = client.post("/accounts/login/", {"username": "noc", "password": "s3cret-pass"}, REMOTE_ADDR="192.0.2.99")
    assert fresh.status_code == 429 and fresh["Retry-After"] == str(15 * 60)
    # and another account from an address that made no guess logs in
    other = client.post("/accounts/login/", {"username": "mallory", "password": "own-pass-42"},
                        REMOTE_ADDR="198.51.100.1")
    assert other.status_code == 302


@pytest.mark.parametrize("login_url", ["/accounts/login/", "/admin/login/?next=/admin/"])
def test_logging_in_to_ones_own_account_between_guesses_does_not_dodge_the_lockout(
        client, lockout, noc, mallory, login_url):
    # given mallory, who has an account, guessing noc's password from one address (the login form or the admin),
    # logging in to her own account after every LIMIT - 1 guesses
    codes = []
    for _ in range(3):
        for _ in range(LIMIT - 1):
            codes.append(client.post(login_url, {"username": "noc", "password": "wrong"}).status_code)
        assert client.post("/accounts/login/", {"username": "mallory", "password": "own-pass-42"}).status_code in (
            302, 429)
        client.logout()
        if 429 in codes:
            break
    # then the guesses still count: from the LIMIT-th guess on they are refused, and so is noc's right password
    assert codes == [200] * (LIMIT - 1) + [429] * (LIMIT - 1)
    assert client.post(login_url, {"username": "noc", "password": "s3cret-pass"}).status_code == 429


def test_a_successful_login_forgets_the_accounts_own_typos(client, lockout, noc):
    # given noc mistyping LIMIT - 1 times, then logging in
    for _ in range(LIMIT - 1):
        client.post("/accounts/login/", {"username": "noc", "password": "typo"})
    assert client.post("/accounts/login/", {"username": "noc", "password": "s3cret-pass"}).status_code == 302
    client.logout()
    # then the next LIMIT - 1 typos start from zero: no lockout
    codes = [client.post("/accounts/login/", {"username": "noc", "password": "typo"}).status_code
             for _ in range(LIMIT - 1)]
    assert codes == [200] * (LIMIT - 1)
    assert client.post("/accounts/login/", {"username": "noc", "password": "s3cret-pass"}).status_code == 302


def test_admin_login_locks_out(client, lockout, noc):
    for _ in range(LIMIT):
        client.post("/admin/login/?next=/admin/", {"username": "noc", "password": "wrong"})
    response = client.post("/admin/login/?next=/admin/", {"username": "noc", "password": "s3cret-pass"})
    assert response.status_code == 429 and response["Retry-After"] == str(15 * 60)


def test_behind_the_proxy_the_forwarded_client_is_locked_out_not_the_proxy(client, lockout, noc, mallory):
    lockout.WANMON_BEHIND_PROXY = True
    for i in range(LIMIT):
        client.post("/accounts/login/", {"username": f"guess{i}", "password": "wrong"},
                    HTTP_X_FORWARDED_FOR="203.0.113.9, 198.51.100.1", REMOTE_ADDR="10.0.0.2")
    other = client.post("/accounts/login/", {"username": "noc", "password": "s3cret-pass"},
                        HTTP_X_FORWARDED_FOR="198.51.100.2", REMOTE_ADDR="10.0.0.2")
    assert other.status_code == 302
    client.logout()
    # The guesser cannot escape by changing what it puts first in X-Forwarded-For.
    again = client.post("/accounts/login/", {"username": "mallory", "password": "own-pass-42"},
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


def test_api_basic_auth_locks_the_guessed_account_whatever_the_addresses_and_good_requests(
        client, lockout, noc, mallory):
    lockout.WANMON_API_BASIC_AUTH = True
    # given guesses at noc's password from LIMIT addresses, each followed by a good request of mallory's own
    for i in range(LIMIT):
        address = f"192.0.2.{i + 1}"
        assert client.get("/api/v1/sites/", REMOTE_ADDR=address, **_basic("noc", "wrong")).status_code in (401, 403)
        assert client.get("/api/v1/sites/", REMOTE_ADDR=address, **_basic("mallory", "own-pass-42")).status_code == 200
    # then noc is refused from a fresh address, right password or not, and told when to come back
    locked = client.get("/api/v1/sites/", REMOTE_ADDR="192.0.2.99", **_basic("noc", "s3cret-pass"))
    assert locked.status_code == 429 and locked["Retry-After"] == str(15 * 60)
    assert client.get("/api/v1/sites/", REMOTE_ADDR="192.0.2.98", **_basic("mallory", "own-pass-42")).status_code == 200


def test_session_login_still_works_with_the_lockout_backend(client, noc):
    assert client.login(username="noc", password="s3cret-pass")
    assert client.get("/api/v1/sites/").status_code == 200
