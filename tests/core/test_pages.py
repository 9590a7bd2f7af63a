"""Login is required everywhere; the login page renders."""

import pytest

pytestmark = pytest.mark.django_db


def test_home_redirects_to_login(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_login_page_and_login(client, django_user_model):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b"Log in to wanmon" in response.content
    django_user_model.objects.create_user("noc", password="s3cret-pass")
    response = client.post("/accounts/login/", {"username": "noc", "password": "s3cret-pass"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_api_schema_served(admin_client):
    response = admin_client.get("/api/schema/")
    assert response.status_code == 200
    assert b"openapi" in response.content
