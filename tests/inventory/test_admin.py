"""Django admin: every inventory page renders for a superuser; agents get their token through the service."""

from __future__ import annotations

import re

import pytest
from django.db.models import Count
from django.urls import reverse

from wanmon.inventory.models import Agent, Carrier, Equipment, Path, Site
from wanmon.inventory.services import agent_authenticate, agent_create

pytestmark = pytest.mark.django_db

MODELS = ["carrier", "site", "sitecontact", "host", "equipment", "interface", "circuit", "trunk", "path", "agent"]


@pytest.fixture
def admin(client, superuser, lhc):
    agent_create(site=Site.objects.get(code="CERN"), equipment=Equipment.objects.filter(name="cern-border"))
    client.force_login(superuser)
    return client


def test_every_changelist_and_add_page_renders(admin):
    statuses = {}
    for model in MODELS:
        changelist = admin.get(reverse(f"admin:inventory_{model}_changelist"))
        statuses[model] = (changelist.status_code, b"0 results" in changelist.content,
                           admin.get(reverse(f"admin:inventory_{model}_add")).status_code)
    # every page answers 200 and every list shows rows of the LHC topology (and the one agent)
    assert statuses == {model: (200, False, 200) for model in MODELS}


def test_change_pages_show_inlines(admin):
    path = Path.objects.get(src__code="FZK", dst__code="CERN")
    response = admin.get(reverse("admin:inventory_path_change", args=[path.pk]))
    assert response.status_code == 200 and b"hops-TOTAL_FORMS" in response.content
    response = admin.get(reverse("admin:inventory_equipment_change", args=[Equipment.objects.get(name="geant-fra").pk]))
    assert response.status_code == 200 and b"et-1/1/0" in response.content
    response = admin.get(reverse("admin:inventory_site_change", args=[Site.objects.get(code="RAL").pk]))
    assert response.status_code == 200 and b"noc@ral.example" in response.content


def test_count_columns_show_and_sort_by_the_related_rows(admin):
    """Carriers list their equipment count, sites their contacts; both columns sort (counted by the list's query)."""
    carrier = Carrier.objects.annotate(n=Count("equipment")).order_by("-n", "code").first()
    response = admin.get(reverse("admin:inventory_carrier_changelist"), {"o": "-5"})
    cells = re.findall(rb'<td class="field-equipment_count">(\d+)</td>', response.content)
    assert response.status_code == 200 and int(cells[0]) == carrier.n > 0
    assert [int(c) for c in cells] == sorted((int(c) for c in cells), reverse=True)
    response = admin.get(reverse("admin:inventory_site_changelist"), {"o": "6"})
    cells = [int(c) for c in re.findall(rb'<td class="field-contact_count">(\d+)</td>', response.content)]
    assert cells == sorted(site.contacts.count() for site in Site.objects.all()) and cells[-1] > 0


def test_changelist_search_and_filters(admin):
    response = admin.get(reverse("admin:inventory_path_changelist"), {"q": "geant-fra", "current": "yes"})
    assert response.status_code == 200 and b"FZK-&gt;CERN" in response.content
    response = admin.get(reverse("admin:inventory_equipment_changelist"), {"q": "Force10"})
    assert b"uslhcnet-gva" in response.content and b"geant-fra" not in response.content


def test_adding_an_agent_shows_its_token_once(admin):
    site = Site.objects.get(code="FZK")
    response = admin.post(reverse("admin:inventory_agent_add"), {"site": site.pk, "name": "", "scope": "agent"},
                          follow=True)
    assert response.status_code == 200
    text = response.content.decode()
    match = re.search(r"only a hash is stored\): ([A-Za-z0-9_-]{43})", text)
    assert match, text[:2000]
    agent = agent_authenticate(token=match.group(1))
    assert agent is not None and agent.name == "fzk-agent-1"


def test_revoke_action(admin):
    agent = Agent.objects.get()
    response = admin.post(reverse("admin:inventory_agent_changelist"),
                          {"action": "revoke", "_selected_action": [agent.pk]}, follow=True)
    assert response.status_code == 200
    agent.refresh_from_db()
    assert agent.revoked_at is not None
