"""The carrier's copy of an alert e-mail, through a real SMTP server (aiosmtpd): it links to the evidence scoped to
the carrier, the link opens without a login, and the sites' NOCs get the internal links as before."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.alerts.conftest import smtp  # noqa: F401 - the fixture
from tests.alerts.test_pipeline import T, process
from tests.mail import smtp_server_fixture  # noqa: F401 - the fixture smtp_server
from tests.sharing.conftest import HIDDEN, shared_faults
from wanmon.sharing.models import ShareAccess, ShareLink

pytestmark = pytest.mark.django_db
BASE = "https://wanmon.example.org"


def test_the_carrier_s_email_carries_a_working_link_and_the_sites_keep_the_internal_links(smtp, settings):  # noqa: F811
    settings.WANMON_BASE_URL = BASE
    settings.ALERTS_DEFAULT_RECIPIENTS = []
    settings.SHARING_EMAIL_LINK_DAYS = 14
    shared_faults()
    process(T, flush=True)
    mails = {tuple(m.rcpt_tos): m for m in smtp.wait_for(7, 5)}

    geant = mails[("noc@geant.test",)]
    urls = set(re.findall(rf"{re.escape(BASE)}[^\s<>\")]+", geant.text))
    (url,) = urls  # the share link and nothing internal
    assert re.fullmatch(rf"{re.escape(BASE)}/share/[A-Za-z0-9_-]{{43}}", url)
    assert "The evidence for GEANT (the verdict per domain, the timeline, your circuit IDs; no login, until " in (
        geant.text)
    assert f'href="{url}"' in geant.html and "/incidents/" not in geant.html
    link = ShareLink.objects.get(carrier__code="GEANT", origin="email")
    assert abs((link.expires_at - link.created_at).total_seconds() - 14 * 86400) < 60
    assert link.incident.key == "element:geant-fra"
    # the CANARIE incident's carrier copy has its own link, for CANARIE
    assert "/share/" in mails[("noc@canarie.test",)].text
    assert ShareLink.objects.get(carrier__code="CANARIE").incident.key == "trunk:canarie-lag"

    # the link opens without a login and shows GEANT's evidence, nothing of the others
    page = Client().get(url.removeprefix(BASE) + "?format=txt", REMOTE_ADDR="198.51.100.7")
    assert page.status_code == 200
    body = page.content.decode()
    assert "- carrier GEANT: SUSPECT (geant-fra, geant-gva)" in body and "GEANT-FRA-GVA-100G" in body
    for name in HIDDEN:
        assert name not in body, name
    assert ShareAccess.objects.get().address == "198.51.100.7"

    # the sites' NOCs: the internal pages as before, no share link
    for site in ("fzk", "cern", "cnaf"):
        text = mails[(f"noc@{site}.test",)].text
        assert "/share/" not in text and f"{BASE}/incidents/" in text and f"{BASE}/paths/" in text, site


def test_a_failure_making_the_link_never_stops_the_email(smtp, settings, monkeypatch):  # noqa: F811
    from wanmon.sharing import services

    def broken(*args, **kwargs):
        raise RuntimeError("inventory unreadable")

    settings.WANMON_BASE_URL = BASE
    settings.ALERTS_DEFAULT_RECIPIENTS = []
    shared_faults()
    monkeypatch.setattr(services, "incident_carriers", broken)
    process(T, flush=True)
    # every e-mail went out; the carrier's copy falls back to the internal links, and no link was made
    received = smtp.wait_for(7, 5)
    assert len(received) == 7  # CERN's NOC gets both incidents
    to_geant = next(m for m in received if m.rcpt_tos == ["noc@geant.test"])
    assert f"{BASE}/incidents/" in to_geant.text and "/share/" not in to_geant.text
    assert not ShareLink.objects.exists()


def test_the_carriers_copy_carries_no_case_memory_and_no_operators_notes(smtp, settings):  # noqa: F811
    # Similar cases name other incidents, their causes, tickets and carriers; notes are the operators' own talk.
    from datetime import timedelta

    from wanmon.alerts.emails import incident_mail_context, render_incident_mail
    from wanmon.alerts.hooks import CarrierLink
    from wanmon.alerts.models import Incident
    from wanmon.alerts.policy import Recipient

    settings.ALERTS_DEFAULT_RECIPIENTS = []
    shared_faults()
    process(T, flush=True)
    smtp.wait_for(7, 5)
    incident = Incident.objects.get(key="element:geant-fra")
    context = incident_mail_context(incident=incident, kind="firing", now=T, members=list(incident.members.all()),
                                    windows=[])
    context["similar_cases"] = [{"url": "/incidents/1", "headline": "dirty patch at geant-gva, cleaned by GEANT",
                                 "incident": 1, "score": 0.9, "ticket": "GEANT-TT-17", "why": ["same suspect"]}]
    context["notes"] = [{"author": "op", "is_hypothesis": True, "confirm_by": "UDP test", "text": "CANARIE's optic?"}]
    link = CarrierLink(carrier="GEANT", url=f"{BASE}/share/x", expires_at=T + timedelta(days=14))
    _, internal_text, internal_html = render_incident_mail(context, Recipient("noc@fzk.test", "site"))
    _, carrier_text, carrier_html = render_incident_mail(context, Recipient("noc@geant.test", "carrier"), shared=link)
    for secret in ("GEANT-TT-17", "CANARIE's optic?"):
        assert secret in internal_text and secret in internal_html.replace("&#x27;", "'"), secret
        assert secret not in carrier_text and secret not in carrier_html.replace("&#x27;", "'"), secret
