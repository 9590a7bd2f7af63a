"""The read time limit (wanmon/core/middleware.py) for every role, whatever cursor a page's first query uses."""

import pytest
from django.contrib.auth.models import Group
from django.db import connection

from wanmon.core.permissions import OPERATOR_GROUP
from wanmon.inventory.models import Carrier, Site

pytestmark = pytest.mark.django_db

PAGES = ["/maintenance/new/", "/maintenance/import/", "/maintenance/feeds/"]


@pytest.fixture(params=["staff", "superuser", "operator"])
def role_client(request, client, django_user_model):
    """A client logged in as a staff user, a superuser or a member of the operator group."""
    user = django_user_model.objects.create_user(f"noc-{request.param}", is_staff=request.param == "staff",
                                                 is_superuser=request.param == "superuser")
    if request.param == "operator":
        user.groups.add(Group.objects.get_or_create(name=OPERATOR_GROUP)[0])
    client.force_login(user)
    return client


@pytest.mark.parametrize("path", PAGES)
def test_maintenance_forms_open_for_every_role_under_the_statement_timeout(role_client, settings, path):
    # A form's carrier or site choices are the page's first query for staff and superusers, read through a
    # server-side cursor (QuerySet.iterator()); the SET that limits the request went through it: a 500.
    settings.WANMON_WEB_STATEMENT_TIMEOUT_MS = 30_000
    Carrier.objects.create(code="GEANT", name="GEANT")
    Site.objects.create(code="CERN", name="CERN")
    response = role_client.get(path)
    assert response.status_code == 200, response.content[:500]
    assert b"GEANT" in response.content or b"CERN" in response.content


def test_the_limit_set_with_a_server_side_first_read_holds_and_is_reset_after(admin_client, settings, monkeypatch):
    settings.WANMON_WEB_STATEMENT_TIMEOUT_MS = 1234
    seen = []
    from wanmon.maintenance import views

    real_render = views.render

    def render(request, template, context=None, *args, **kwargs):
        response = real_render(request, template, context, *args, **kwargs)  # reads the choices: the first query
        with connection.cursor() as cursor:
            cursor.execute("SHOW statement_timeout")
            seen.append(cursor.fetchone()[0])
        return response

    monkeypatch.setattr(views, "render", render)
    Carrier.objects.create(code="GEANT", name="GEANT")
    assert admin_client.get("/maintenance/new/").status_code == 200
    assert seen == ["1234ms"]
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "0"
