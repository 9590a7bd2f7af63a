"""The case memory over HTTP: resolve with a cause, similar cases on GET /api/v1/incidents/{id}, the page and the
e-mail, notes and hypotheses carried by the next e-mail of the thread. Real PostgreSQL, real SMTP (aiosmtpd)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import yaml

from tests.alerts.conftest import ASGC, FZK, SCENARIO_NOW
from tests.alerts.test_pipeline import replay
from tests.cases.retrieval import perturb
from wanmon.alerts.models import Incident
from wanmon.alerts.services import alerts_process_now
from wanmon.cases.models import Case, IncidentNote
from wanmon.cases.similarity import SUGGEST_THRESHOLD

pytestmark = pytest.mark.django_db


@pytest.fixture
def fzk(smtp):
    replay(FZK, "--keep", "--notify")
    smtp.wait_for(1, 5)
    return Incident.objects.get()


def _resolve(client, incident_id: int, **body):
    return client.post(f"/api/v1/incidents/{incident_id}/resolve", body, content_type="application/json")


GOOD = {
    "cause": "dirty patch at geant-fra",
    "fix": "cleaned by GEANT",
    "ticket": "GEANT-TT-4711",
    "responsible": "carrier:GEANT",
}


def test_resolve_is_for_operators_and_names_bad_fields(client, operator, viewer, fzk):
    assert _resolve(client, fzk.id, **GOOD).status_code in (401, 403)  # anonymous
    client.force_login(viewer)
    assert _resolve(client, fzk.id, **GOOD).status_code == 403
    client.force_login(operator)
    assert _resolve(client, 999999, **GOOD).status_code == 404
    missing = _resolve(client, fzk.id, fix="cleaned")
    assert missing.status_code == 400 and "cause" in missing.json()
    for responsible in ("carrier:NOPE", "router:geant-fra", "GEANT", "equipment:"):
        bad = _resolve(client, fzk.id, **{**GOOD, "responsible": responsible})
        assert bad.status_code == 400 and "responsible" in bad.json(), (responsible, bad.content)
    assert not Case.objects.exists() and Incident.objects.get().status == "open"


def test_resolving_an_open_incident_stores_its_case_and_the_reopen_logic_applies(client, operator, fzk):
    client.force_login(operator)
    response = _resolve(client, fzk.id, **GOOD)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["id"] == fzk.id and body["status"] == "resolved" and body["similar_cases"] == []
    assert body["events"][-1]["kind"] == "resolved" and "dirty patch at geant-fra" in body["events"][-1]["note"]
    case = Case.objects.get(incident=fzk)
    assert (case.cause, case.fix, case.ticket, case.responsible) == (
        "dirty patch at geant-fra",
        "cleaned by GEANT",
        "GEANT-TT-4711",
        "carrier:GEANT",
    )
    fp = case.fingerprint
    assert fp["root_code"] == "SHARED_EQUIPMENT_SUSPECT" and fp["root_element"] == "geant-fra"
    assert fp["root_element_kind"].startswith("carrier") and fp["root_operator"] == "GEANT"
    assert {"ASYMMETRIC_PATH", "SHARED_EQUIPMENT_SUSPECT"} <= set(fp["codes"])
    assert fp["paths"] == ["CNAF->CERN", "FZK->CERN"] and fp["direction"] == "one-way" and fp["converging"]
    assert fp["loss_fraction"] > 0.005 and fp["rtt_ms"] > 5 and fp["mss_bytes"] > 1000
    # Its findings are still evidenced: the alerting's next run reopens it (reopen_count 1), the case stays.
    alerts_process_now(now=SCENARIO_NOW + timedelta(minutes=1))
    fzk.refresh_from_db()
    assert fzk.status == "open" and fzk.reopen_count == 1 and Case.objects.filter(incident=fzk).exists()
    # Resolving again updates the one case.
    assert _resolve(client, fzk.id, **{**GOOD, "fix": "cleaned again by GEANT"}).status_code == 200
    assert Case.objects.get().fix == "cleaned again by GEANT"


def test_a_new_incident_of_the_same_problem_shows_the_case_and_a_different_one_does_not(
    client, operator, viewer, fzk, smtp, tmp_path
):
    client.force_login(operator)
    assert _resolve(client, fzk.id, **GOOD).status_code == 200
    case = Case.objects.get()
    smtp.clear()
    # Three days later the same fault elsewhere: other sites, another GEANT router, other RTTs and rates.
    variant = tmp_path / "variant.yaml"
    variant.write_text(yaml.safe_dump(perturb(yaml.safe_load(FZK.read_text()), seed="api"), sort_keys=False))
    replay(variant, "--keep", "--notify")
    new = Incident.objects.exclude(pk=fzk.pk).get(code="SHARED_EQUIPMENT_SUSPECT")
    assert new.elements[0] == "geant-fra-b" and "FZK->CERN" not in new.paths
    client.force_login(viewer)
    similar = client.get(f"/api/v1/incidents/{new.id}").json()["similar_cases"]
    assert [s["incident"] for s in similar] == [fzk.id]
    first = similar[0]
    assert first["score"] >= SUGGEST_THRESHOLD and first["case"] == case.id
    assert (first["cause"], first["fix"], first["ticket"]) == (GOOD["cause"], GOOD["fix"], GOOD["ticket"])
    assert "same headline finding SHARED_EQUIPMENT_SUSPECT" in first["why"]
    assert any(w.startswith("root is a carrier") for w in first["why"])
    assert first["headline"].startswith(f"looks like case {case.id}: dirty patch at geant-fra, cleaned by GEANT")
    # The e-mail of the new incident says so, and its page too.
    mail = next(m for m in smtp.wait_for(1, 5) if "geant-fra-b" in m.subject)
    assert f"Looks like case {case.id}: dirty patch at geant-fra, cleaned by GEANT" in mail.text
    page = client.get(f"/incidents/{new.id}").content.decode()
    assert f"Looks like case {case.id}" in page and "same headline finding" in page
    # A window-limited path resembles nothing in the memory: the API says [] and the page says so.
    replay(ASGC, "--keep", "--notify")
    other = Incident.objects.get(code="WINDOW_LIMITED")
    assert client.get(f"/api/v1/incidents/{other.id}").json()["similar_cases"] == []
    assert "Nothing in the case memory resembles this incident" in client.get(f"/incidents/{other.id}").content.decode()


def test_notes_and_hypotheses_go_out_with_the_next_email_of_the_thread(client, operator, viewer, fzk, smtp):
    url = f"/api/v1/incidents/{fzk.id}/notes"
    note = {
        "text": "GEANT sees CRC errors on the Frankfurt patch",
        "is_hypothesis": True,
        "confirm_by": "INTERFACE_ERRORS on geant-fra",
    }
    assert client.post(url, note, content_type="application/json").status_code in (401, 403)
    client.force_login(viewer)
    assert client.post(url, note, content_type="application/json").status_code == 403
    assert client.get(url).status_code == 200
    client.force_login(operator)
    assert client.post("/api/v1/incidents/999999/notes", note, content_type="application/json").status_code == 404
    empty = client.post(url, {"text": " "}, content_type="application/json")
    assert empty.status_code == 400 and "text" in empty.json()
    unconfirmed = client.post(url, {"text": "x", "confirm_by": "a test"}, content_type="application/json")
    assert unconfirmed.status_code == 400 and "confirm_by" in unconfirmed.json()
    unknown = client.post(
        url, {"text": "x", "is_hypothesis": True, "confirm_by": "DIRTY_FIBRE"}, content_type="application/json"
    )
    assert unknown.status_code == 400 and "confirm_by" in unknown.json()
    created = client.post(url, note, content_type="application/json")
    assert created.status_code == 201 and created.json()["author"] == "op" and created.json()["mailed_at"] is None
    assert client.post(url, {"text": "called GEANT NOC"}, content_type="application/json").status_code == 201
    # The next e-mail of the thread (here: still open and not acknowledged, 5 h later) carries both notes, once.
    smtp.clear()
    alerts_process_now(now=SCENARIO_NOW + timedelta(hours=5), flush=False)
    mail = smtp.wait_for(1, 5)[0]
    assert "(still open)" in mail.subject
    assert "op (hypothesis, confirmed by INTERFACE_ERRORS on geant-fra): GEANT sees CRC errors" in mail.text
    assert "op: called GEANT NOC" in mail.text
    assert IncidentNote.objects.filter(mailed_at__isnull=True).count() == 0
    # The page lists them, with the forms for operators; the forms go through the same services.
    page = client.get(f"/incidents/{fzk.id}").content.decode()
    assert "GEANT sees CRC errors" in page and 'id="note-form"' in page and 'id="resolve-form"' in page
    added = client.post(f"/incidents/{fzk.id}/notes", {"text": "GEANT opened TT-99", "is_hypothesis": ""})
    assert added.status_code == 302 and IncidentNote.objects.filter(text="GEANT opened TT-99").exists()
    refused = client.post(
        f"/incidents/{fzk.id}/resolve",
        {"cause": "dirty patch", "fix": "cleaned", "responsible": "site:NOWHERE"},
        follow=True,
    )
    assert "no site &#x27;NOWHERE&#x27; in the inventory" in refused.content.decode() and not Case.objects.exists()
    resolved = client.post(
        f"/incidents/{fzk.id}/resolve",
        {"cause": "dirty patch", "fix": "cleaned", "responsible": "equipment:geant-fra"},
        follow=True,
    )
    assert f"Incident #{fzk.id} resolved" in resolved.content.decode()
    assert Case.objects.get().responsible == "equipment:geant-fra"
    client.force_login(viewer)
    page = client.get(f"/incidents/{fzk.id}").content.decode()
    assert 'id="resolve-form"' not in page and "Resolved with its cause" in page
    assert client.post(f"/incidents/{fzk.id}/notes", {"text": "x"}).status_code == 403
