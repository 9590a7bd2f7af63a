"""Findings -> incidents -> e-mails through a real SMTP server (aiosmtpd on loopback) and the real database.

Scenario replays go through `manage.py replay ... --keep --notify` (docs/contracts.md#management-commands) or,
to step through time, through the same replay service with a later `now`; e-mails are sent by the synchronous path.
"""

import html
import json
import re
from datetime import timedelta
from io import StringIO

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client

from tests.alerts.conftest import ASGC, FZK, MAINTENANCE, NOC, SCENARIO_NOW
from wanmon.alerts import policy
from wanmon.alerts.models import Incident, Notification, RoutingRule, Silence, Subscription
from wanmon.alerts.services import (
    NotificationSendError,
    alerts_process,
    alerts_process_now,
    incident_acknowledge,
    notification_send,
)
from wanmon.alerts.silences import silence_create
from wanmon.core.permissions import OPERATOR_GROUP
from wanmon.diagnosis.evidence import RuleFinding
from wanmon.diagnosis.models import Finding, PathEvaluation
from wanmon.diagnosis.replay import scenario_load, scenario_replay
from wanmon.diagnosis.services import findings_sync
from wanmon.inventory.models import Carrier, Equipment, Interface, Site, SiteContact
from wanmon.maintenance.models import MaintenanceAffect, MaintenanceWindow

pytestmark = pytest.mark.django_db
T = SCENARIO_NOW
FZK_SUBJECT = "[wanmon CRITICAL] SHARED_EQUIPMENT_SUSPECT geant-fra: 2 paths degraded (CNAF->CERN, FZK->CERN)"


def replay(*args) -> str:
    """``manage.py replay`` at the file's test interval; with ``--notify`` these tests look at the alerting as of the
    file's end, once, with its timers elapsed (what it decides from the findings the cycles left): the cycles run
    with ``--keep`` and the alerting after them. ``test_replay_notify_runs_the_alerting_after_every_cycle`` runs
    ``--notify`` itself, with the alerting after every cycle in the file's time."""
    out, err = StringIO(), StringIO()
    notify = "--notify" in args
    args = tuple(a for a in args if a != "--notify")
    call_command("replay", *map(str, args), "--step", "auto", stdout=out, stderr=err)
    if notify:
        alerts_process_now(now=scenario_load(str(args[0])).now)
    return out.getvalue()


def replay_at(path, now) -> None:
    """The beat's cycle at ``now`` over the scenario's data (stored once: the batch id derives from the file), its
    paths' results taken as new again: the problem is back (a cycle re-evaluates a path only for a newer test)."""
    scenario = scenario_load(str(path))
    scenario.now = now
    PathEvaluation.objects.update(evidence_until=None)
    scenario_replay(scenario, keep=True, since=now)


def process(now, flush=False):
    """One beat run (timers as configured), then the e-mails it created are sent."""
    result = alerts_process(now=now, flush=flush, dispatch=False)
    for notification_id in result.notifications:
        notification_send(notification_id=notification_id)
    return result


def clear(start):
    """Evaluations that find nothing from ``start`` on, until the stored findings are resolved (three misses over
    10 min: FINDING_CLOSE_ABSENT_*); returns the time of the resolving evaluation."""
    for minutes in (0, 5, 10):
        findings_sync(findings=[], now=start + timedelta(minutes=minutes))
    assert not Finding.objects.exclude(status="resolved").exists()
    return start + timedelta(minutes=10)


def finding(code="PATH_DOWN", src="CERN", dst="RAL", severity="critical", at=T, summary=None):
    return RuleFinding(code=code, severity=severity, subject={"src": src, "dst": dst}, start=at - timedelta(hours=1),
                         end=at, summary=summary or f"{src}->{dst}: {code} for 1 h", explanation="because of x = 1.5",
                         evidence={"x": 1.5}, actions=("look at it",))


# --- the shared-backbone case ---


def test_replay_notify_runs_the_alerting_after_every_cycle(smtp):
    # given the backbone case replayed with the alerting after each of its 5-minute cycles, timers in the file's time
    out = StringIO()
    call_command("replay", str(FZK), "--keep", "--notify", "--step", "auto", "--json", stdout=out, stderr=StringIO())
    doc = json.loads(out.getvalue())
    # then the incident of geant-fra was opened by the first cycle that found it, and its first e-mail went to the
    # NOC one cycle later (group wait 30 s), hours before the file's end -- not once at the end
    (incident,) = [i for i in doc["incidents"] if i["root"]["subject"] == {"equipment": "geant-fra"}]
    first = min(i["opened_at"] for i in doc["incidents"])
    assert incident["opened_at"] == first == "2026-03-01T06:05:00Z"
    firsts = [e for e in incident["emails"] if e["kind"] == "firing"]
    assert [e["recipient"] for e in firsts] == [NOC] and firsts[0]["created_at"] == "2026-03-01T06:10:00Z"
    assert incident["recipients"] == [NOC] and incident["onset"] <= incident["opened_at"]
    assert {m["code"] for m in incident["members"]} >= {"ASYMMETRIC_PATH", "SHARED_EQUIPMENT_SUSPECT"}
    assert smtp.wait_for(len(incident["emails"]), 5)


def test_replay_notify_sends_one_email_for_the_shared_backbone_incident(smtp):
    replay(FZK, "--keep", "--notify")

    (mail,) = smtp.wait_for(1, 5)
    assert mail.rcpt_tos == [NOC]
    assert mail.subject == FZK_SUBJECT
    incident = Incident.objects.get()
    assert incident.key == "element:geant-fra" and incident.members.count() == 7
    # the explanation with its numbers, the evidence of every finding, actions, maintenance, the link
    text = mail.text
    assert "2 degraded path directions in overlapping windows" in text and "Score = 2 degraded" in text
    assert "LOSS_LIMITED FZK->CERN: FZK->CERN: 25 Mb/s matches the Mathis rate 19.6 Mb/s for loss 6.79 %" in text
    assert "BDP 1.23 MB; window needed 2.45 MB; loss 6.79 % (owamp); Mathis ceiling 19.6 Mb/s" in text
    assert "1. Ask the operator of geant-fra to check it" in text
    assert "No maintenance window on these elements" in text
    assert f"https://wanmon.example.org/incidents/{incident.id}" in text
    assert f'href="https://wanmon.example.org/incidents/{incident.id}"' in mail.html
    assert "<h3>Evidence</h3>" in mail.html and "Mathis ceiling 19.6 Mb/s" in mail.html
    # the sent-log proves it
    log = Notification.objects.get()
    assert (log.recipient, log.kind, log.status, log.subject) == (NOC, "firing", "sent", FZK_SUBJECT)
    assert log.message_id == mail.message["Message-ID"] and log.sent_at is not None
    assert mail.message["X-Wanmon-Incident"] == str(incident.id)

    # replaying the same scenario again sends nothing new
    replay(FZK, "--keep", "--notify")
    assert len(smtp.wait_for(2, 1)) == 1 and Notification.objects.count() == 1


def test_each_site_noc_gets_the_incident_once_and_routing_rules_and_subscriptions_add_people(smtp):
    call_command("import_topology", str(FZK), stdout=StringIO())
    for code in ("CERN", "FZK", "CNAF", "IN2P3"):
        SiteContact.objects.create(site=Site.objects.get(code=code), email=f"noc@{code.lower()}.test", role="noc")
    SiteContact.objects.create(site=Site.objects.get(code="FZK"), email="boss@fzk.test", role="management")
    RoutingRule.objects.create(name="geant", carriers=["GEANT"], min_severity="critical",
                               recipients=["noc@geant.test"])
    RoutingRule.objects.create(name="outages", codes=["PATH_DOWN"], recipients=["outages@wanmon.test"])
    user = get_user_model().objects.create_user("alice", email="alice@fzk.test", password="pw-alice-1")
    Subscription.objects.create(user=user, sites=["FZK"])

    replay(FZK, "--keep", "--notify")

    messages = smtp.wait_for(5, 5)
    assert sorted(r for m in messages for r in m.rcpt_tos) == sorted(
        ["noc@cern.test", "noc@fzk.test", "noc@cnaf.test", "noc@geant.test", "alice@fzk.test"])
    assert {m.subject for m in messages} == {FZK_SUBJECT}
    reasons = dict(Notification.objects.values_list("recipient", "reason"))
    assert reasons["noc@fzk.test"] == "NOC contact of FZK"
    assert reasons["noc@geant.test"] == "routing rule geant"
    assert reasons["alice@fzk.test"] == "subscription of alice"
    assert "You receive this as NOC contact of FZK" in next(m for m in messages if "noc@fzk.test" in m.rcpt_tos).text


def test_a_rule_replacing_the_defaults_sends_only_to_its_recipients(smtp):
    call_command("import_topology", str(FZK), stdout=StringIO())
    SiteContact.objects.create(site=Site.objects.get(code="FZK"), email="noc@fzk.test", role="noc")
    RoutingRule.objects.create(name="geant-only", carriers=["GEANT"], recipients=["noc@geant.test"],
                               replace_defaults=True)
    replay(FZK, "--keep", "--notify")
    assert [m.rcpt_tos for m in smtp.wait_for(2, 2)] == [["noc@geant.test"]]


def test_window_limited_scenario_is_one_incident_with_the_host_tuning(smtp):
    replay(ASGC, "--keep", "--notify")
    (mail,) = smtp.wait_for(1, 5)
    assert mail.subject == "[wanmon WARNING] WINDOW_LIMITED ASGC<->CERN: 2 paths degraded (ASGC->CERN, CERN->ASGC)"
    assert "HOST_TCP_TUNING ASGC/asgc-dt01" in mail.text and "HOST_TCP_TUNING CERN/cern-dt01" in mail.text
    assert "net.core.rmem_max = 75497472" in mail.text
    assert len(smtp.wait_for(2, 1)) == 1


# --- maintenance ---


def test_no_email_for_a_degradation_inside_a_maintenance_window(smtp):
    out = replay(MAINTENANCE, "--keep", "--notify")
    assert "MAINTENANCE_EXPLAINED" in out
    assert smtp.wait_for(1, 1.5) == []
    assert Notification.objects.count() == 0
    incident = Incident.objects.get()
    assert incident.key == "maintenance:GEANT-CHG-0042" and incident.severity == "info"
    assert incident.muted and "maintenance GEANT-CHG-0042" in incident.mute_reason


def _persisting_variant(tmp_path, **maintenance):
    """The maintenance scenario, but the degradation goes on until 12:00 (past the window's end at 10:00)."""
    doc = yaml.safe_load(MAINTENANCE.read_text())
    doc["scenario"] = f"{doc['scenario']}-persists"
    doc["maintenance"][0].update(maintenance)
    for m in doc["measurements"]:
        if str(m["time"]) >= "2026-03-01T08:00":
            m.update({"throughput_bps": 2.0e7} if m["type"] == "throughput" else {"packets_lost": 200})
    path = tmp_path / "persists.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_when_the_window_ends_and_the_problem_persists_the_email_goes_out_at_once(smtp, tmp_path):
    scenario = _persisting_variant(tmp_path)
    during = T.replace(hour=9, minute=30)
    replay_at(scenario, during)
    process(during)
    assert smtp.wait_for(1, 1) == []

    after = T.replace(hour=11, minute=15)  # past the window and its 30 min grace
    replay_at(scenario, after)
    process(after)  # group_wait (30 s) is not waited for: the window muted it until now

    messages = smtp.wait_for(2, 5)
    assert sorted(r for m in messages for r in m.rcpt_tos) == ["noc@cern.test", "noc@fzk.test"]
    mail = messages[0]
    assert mail.subject.startswith("[wanmon CRITICAL] LOSS_LIMITED CERN<->FZK: 2 paths degraded")
    assert "has ended and the problem persists" in mail.text
    assert "GEANT-CHG-0042 (GEANT): impact outage, confirmed, 08:00 UTC - 10:00 UTC (ended)" in (
        mail.text)


def test_an_element_under_maintenance_inhibits_its_incident(smtp):
    """Alert-side inhibition: a root-cause element in a window in progress mutes its whole incident."""
    replay_at(FZK, T)
    window = MaintenanceWindow.objects.create(
        reference="GEANT-CHG-7", carrier=Carrier.objects.get(code="GEANT"), impact="degraded",
        start=T - timedelta(minutes=30), end=T + timedelta(hours=1))
    MaintenanceAffect.objects.create(window=window, equipment=Equipment.objects.get(name="geant-fra"))
    process(T, flush=True)
    assert smtp.wait_for(1, 1) == []
    incident = Incident.objects.get(key="element:geant-fra")
    assert incident.muted and incident.mute_reason == "inhibited by maintenance GEANT-CHG-7 on geant-fra"


# --- resolution, flapping ---


def test_resolved_email_when_the_evidence_clears_after_the_hold(smtp):
    replay(FZK, "--keep", "--notify")
    smtp.wait_for(1, 5)
    findings_sync(findings=[], now=T + timedelta(minutes=1))  # the next evaluation finds nothing
    process(T + timedelta(minutes=1))
    assert Incident.objects.get().cleared_at is None  # one miss: the findings stay active (hysteresis)
    cleared = clear(T + timedelta(minutes=2))  # 12:12: three misses, 12 min after the findings were last seen
    process(cleared)
    assert len(smtp.wait_for(2, 1)) == 1  # held (ALERTS_RESOLVE_HOLD_S = 180)
    incident = Incident.objects.get()
    assert incident.status == "open" and incident.cleared_at == cleared

    process(cleared + timedelta(minutes=3))
    messages = smtp.wait_for(2, 5)
    assert len(messages) == 2
    resolved = messages[1]
    assert resolved.rcpt_tos == [NOC]
    assert resolved.subject == FZK_SUBJECT.replace("[wanmon CRITICAL]", "[wanmon RESOLVED]")
    assert "Resolved at 12:15 UTC after 15 min. The problem lasted 06:00 UTC – 12:15 UTC, 6 h 15 min." in resolved.text
    assert resolved.message["In-Reply-To"] == messages[0].message["In-Reply-To"]  # one thread per incident
    incident.refresh_from_db()
    assert incident.status == "resolved"
    assert list(Notification.objects.order_by("id").values_list("kind", flat=True)) == ["firing", "resolved"]


def test_a_flapping_finding_sends_nothing_more(smtp):
    replay(FZK, "--keep", "--notify")
    smtp.wait_for(1, 5)
    incident = Incident.objects.get()
    findings = set(Finding.objects.values_list("id", flat=True))
    for minutes in range(1, 21, 2):  # good, bad, good, bad ... for 20 min
        findings_sync(findings=[], now=T + timedelta(minutes=minutes))
        process(T + timedelta(minutes=minutes))
        replay_at(FZK, T + timedelta(minutes=minutes + 1))
        process(T + timedelta(minutes=minutes + 1))
    assert len(smtp.wait_for(2, 1)) == 1
    assert Incident.objects.get(status="open").id == incident.id
    assert list(incident.events.values_list("kind", flat=True)) == ["opened", "notified"]
    assert set(Finding.objects.values_list("id", flat=True)) == findings  # one finding each, never resolved
    assert not Finding.objects.filter(status="resolved").exists()


def test_a_problem_back_after_its_resolved_email_is_emailed_once_as_returned_in_the_same_thread(
    smtp, client, django_user_model
):
    replay(FZK, "--keep", "--notify")
    smtp.wait_for(1, 5)
    incident = Incident.objects.get()
    findings = set(Finding.objects.values_list("id", flat=True))
    cleared = clear(T + timedelta(minutes=1))  # 12:11
    process(cleared, flush=True)  # resolved: the RESOLVED e-mail goes out
    assert len(smtp.wait_for(2, 5)) == 2
    back = cleared + timedelta(minutes=20)  # within FINDING_REOPEN_WITHIN_S
    replay_at(FZK, back)
    process(back)  # the beat's run: a return is told at once (no group wait) ...
    for later in (timedelta(minutes=1), timedelta(minutes=10), timedelta(hours=1)):
        process(back + later, flush=True)  # ... and once
    assert set(Finding.objects.values_list("id", flat=True)) == findings  # the same findings, reopened
    # (and "updated": over the file's cycles the findings' figures change as results arrive)
    assert {e.kind for f in Finding.objects.all() for e in f.events.all()} - {"updated"} == {
        "opened", "resolved", "reopened"}
    assert Incident.objects.get(status="open").id == incident.id  # no second first notice
    messages = smtp.wait_for(4, 2)
    assert len(messages) == 3
    firing, resolved, returned = messages
    assert returned.rcpt_tos == [NOC]
    assert returned.subject == FZK_SUBJECT + " (returned)"
    assert "The problem is back 20 min after it was reported resolved (12:11 UTC)." in returned.text
    assert "It will be reported resolved again only 30 min after its findings clear." in returned.text
    thread = firing.message["In-Reply-To"]  # one thread per incident
    assert returned.message["In-Reply-To"] == returned.message["References"] == thread
    assert resolved.message["In-Reply-To"] == thread
    assert returned.message["Message-ID"] not in (firing.message["Message-ID"], resolved.message["Message-ID"])
    assert list(Notification.objects.order_by("id").values_list("kind", flat=True)) == [
        "firing", "resolved", "returned"]
    incident.refresh_from_db()
    assert incident.reopen_count == 1
    assert list(incident.events.values_list("kind", flat=True))[-2:] == ["reopened", "notified"]
    client.force_login(django_user_model.objects.create_user("viewer", password="pw-viewer-1"))
    assert client.get(f"/api/v1/incidents/{incident.id}").json()["reopen_count"] == 1
    assert b"came back 1 time(s) after a resolution" in client.get(f"/incidents/{incident.id}").content


def test_a_problem_back_after_a_resolution_nobody_was_told_of_is_not_emailed_as_returned(smtp, settings):
    settings.ALERTS_SEND_RESOLVED = False
    replay(FZK, "--keep", "--notify")
    smtp.wait_for(1, 5)
    process(clear(T + timedelta(minutes=1)), flush=True)
    back = T + timedelta(minutes=30)
    replay_at(FZK, back)
    process(back, flush=True)
    assert len(smtp.wait_for(2, 1)) == 1  # the first notice only: for its recipients the problem never went away
    incident = Incident.objects.get(status="open")
    assert incident.reopen_count == 1


def back_muted(*, silence_min):
    """First notice and resolved notice e-mailed, then the problem back 20 min later under a silence of
    ``silence_min`` minutes on its element; returns when it came back."""
    replay(FZK, "--keep", "--notify")
    process(clear(T + timedelta(minutes=1)), flush=True)  # 12:11: resolved, e-mailed
    back = T + timedelta(minutes=31)
    silence_create(author=None, matchers={"equipment": "geant-fra"}, comment="GEANT ticket 4711", now=back,
                   duration_s=silence_min * 60)
    replay_at(FZK, back)
    process(back, flush=True)
    assert Incident.objects.get(status="open").muted  # nothing is sent while muted
    return back


def test_a_problem_back_under_a_silence_until_it_clears_sends_no_second_resolved_email(smtp):
    back = back_muted(silence_min=120)
    process(clear(back + timedelta(minutes=1)), flush=True)  # resolved again, still muted
    assert [m.subject.split("]")[0] for m in smtp.wait_for(3, 2)] == ["[wanmon CRITICAL", "[wanmon RESOLVED"]
    incident = Incident.objects.get()
    assert incident.status == "resolved" and incident.reopen_count == 1
    assert list(Notification.objects.order_by("id").values_list("kind", flat=True)) == ["firing", "resolved"]
    assert "its last e-mail already said it was resolved" in incident.events.filter(kind="resolved").last().note


def test_a_problem_back_under_a_silence_that_ends_before_it_clears_is_emailed_as_returned(smtp):
    back = back_muted(silence_min=30)
    replay_at(FZK, back + timedelta(minutes=31))
    process(back + timedelta(minutes=31))  # the silence ended 1 min ago and the problem persists: at once
    process(clear(back + timedelta(minutes=32)), flush=True)
    messages = smtp.wait_for(5, 2)
    assert [m.subject.split("]")[0] for m in messages] == [
        "[wanmon CRITICAL", "[wanmon RESOLVED", "[wanmon CRITICAL", "[wanmon RESOLVED"]
    returned = messages[2]
    assert returned.subject == FZK_SUBJECT + " (returned)" and returned.rcpt_tos == [NOC]
    assert ("The problem is back 20 min after it was reported resolved (12:11 UTC); a silence or "
            "maintenance window muted it until now.") in returned.text
    assert list(Notification.objects.order_by("id").values_list("kind", flat=True)) == [
        "firing", "resolved", "returned", "resolved"]


def test_a_problem_back_below_the_paging_severity_is_emailed_as_returned_when_it_pages_again(smtp, settings):
    settings.ALERTS_MIN_SEVERITY = "critical"
    findings_sync(findings=[finding()], now=T)
    process(T, flush=True)
    process(clear(T + timedelta(minutes=1)), flush=True)  # 12:11: resolved, e-mailed
    back = T + timedelta(minutes=31)
    findings_sync(findings=[finding(severity="warning", at=back)], now=back)
    process(back, flush=True)  # reopened, but a warning does not page: nothing
    findings_sync(findings=[finding(at=back + timedelta(minutes=5))], now=back + timedelta(minutes=5))
    process(back + timedelta(minutes=5))
    firing, resolved, returned = smtp.wait_for(4, 2)
    assert returned.subject == "[wanmon CRITICAL] PATH_DOWN CERN->RAL: PATH_DOWN for 1 h (returned)"
    assert "back 20 min after it was reported resolved (12:11 UTC); it pages only now." in returned.text


# Evidence bad and good by turns, minutes each (bad first): 2 h 2 min of a problem flapping every 10-15 min.
FLAPS_MIN = (10, 15, 12, 14, 10, 13, 11, 15, 12, 10)


def flap_then_quiet(*, quiet_min=40):
    """The diagnosis evaluates every minute while the evidence flaps (FLAPS_MIN), then for ``quiet_min`` minutes of
    good evidence; the beat runs the alerting after each evaluation. Returns the incident's e-mails as
    (minutes after T, kind)."""
    at = T
    for index, minutes in enumerate((*FLAPS_MIN, quiet_min)):
        bad = index % 2 == 0 and index < len(FLAPS_MIN)
        for _ in range(minutes):
            findings_sync(findings=[finding(at=at)] if bad else [], now=at)
            process(at)
            at += timedelta(minutes=1)
    incident = Incident.objects.get()
    return [(int((e.time - T).total_seconds() // 60), e.data["kind"])
            for e in incident.events.filter(kind="notified").order_by("time", "id")]


def test_two_hours_of_flapping_send_four_emails(smtp):
    # given a link whose problem shows and hides every 10-15 min for 2 h
    sent = flap_then_quiet()
    # then: first notice, resolved after the first 13 quiet minutes (10 min of diagnosis hold + 3 of alerting hold),
    # returned, and the final resolved 40 min after the last bad evidence (10 + REOPENED_RESOLVE_HOLD_S)
    assert sent == [(1, "firing"), (22, "resolved"), (25, "returned"), (121 + 30, "resolved")]
    messages = smtp.wait_for(5, 2)
    assert [m.subject.split("] ")[0] for m in messages] == [
        "[wanmon CRITICAL", "[wanmon RESOLVED", "[wanmon CRITICAL", "[wanmon RESOLVED"]
    assert messages[2].subject.endswith("(returned)")
    assert Incident.objects.get().reopen_count == 1


def test_without_the_longer_hold_after_a_return_the_same_flapping_sends_ten_emails(smtp, monkeypatch):
    monkeypatch.setattr(policy, "REOPENED_RESOLVE_HOLD_S", 180.0)
    monkeypatch.setattr(policy, "REOPENED_RESOLVE_HOLD_MAX_S", 180.0)
    sent = flap_then_quiet(quiet_min=15)
    assert [kind for _, kind in sent] == ["firing", *["resolved", "returned"] * 4, "resolved"]


# --- silences ---


def test_silence_mutes_reminds_and_renotifies_at_once_when_it_ends_while_the_problem_persists(smtp, settings):
    settings.ALERTS_SILENCE_REMINDER_S = 15 * 60
    replay(FZK, "--keep", "--notify")
    smtp.wait_for(1, 5)
    author = get_user_model().objects.create_user("op", email="op@wanmon.test", password="pw-op-1")
    silence = silence_create(author=author, matchers={"equipment": "geant-fra"}, comment="GEANT ticket 4711",
                             now=T, duration_s=3600)

    for minutes in (5, 30):  # the problem persists, silenced
        replay_at(FZK, T + timedelta(minutes=minutes))
        process(T + timedelta(minutes=minutes))
    assert len(smtp.wait_for(2, 1)) == 1
    incident = Incident.objects.get(status="open")
    assert incident.muted and incident.mute_reason.startswith("silence #")

    replay_at(FZK, T + timedelta(minutes=50))
    process(T + timedelta(minutes=50))  # 10 min before the end: the author is reminded, once
    process(T + timedelta(minutes=52))
    reminder = smtp.wait_for(2, 5)[1]
    assert reminder.rcpt_tos == ["op@wanmon.test"]
    assert reminder.subject == f"[wanmon] silence #{silence.id} (equipment=geant-fra) ends in 10 min"
    assert f"#{incident.id} [critical] SHARED_EQUIPMENT_SUSPECT" in reminder.text

    replay_at(FZK, T + timedelta(minutes=61))
    process(T + timedelta(minutes=61))  # ended 1 min ago, still degraded: at once, not after 4 h
    messages = smtp.wait_for(3, 5)
    assert len(messages) == 3
    assert messages[2].subject == FZK_SUBJECT and messages[2].rcpt_tos == [NOC]
    assert "has ended and the problem persists" in messages[2].text
    assert [e for e in incident.events.values_list("kind", flat=True)].count("unmuted") == 1


def test_resolved_is_sent_for_a_muted_incident_unless_configured_otherwise(smtp, settings):
    replay(FZK, "--keep", "--notify")
    smtp.wait_for(1, 5)
    silence_create(author=None, matchers={"site": "CERN"}, comment="works at CERN", now=T, duration_s=7200)
    process(T + timedelta(minutes=1))
    process(clear(T + timedelta(minutes=2)), flush=True)
    messages = smtp.wait_for(2, 5)
    assert [m.subject.split("]")[0] for m in messages] == ["[wanmon CRITICAL", "[wanmon RESOLVED"]


def test_resolved_is_not_sent_for_a_muted_incident_when_disabled(smtp, settings):
    settings.ALERTS_SEND_RESOLVED_WHEN_MUTED = False
    replay(FZK, "--keep", "--notify")
    smtp.wait_for(1, 5)
    silence_create(author=None, matchers={"equipment": "geant-fra"}, comment="known", now=T, duration_s=7200)
    process(T + timedelta(minutes=1))
    process(clear(T + timedelta(minutes=2)), flush=True)
    assert len(smtp.wait_for(2, 1)) == 1
    assert Incident.objects.get().status == "resolved"


def test_a_silence_on_one_site_does_not_mute_the_other_sites_paths(smtp):
    replay_at(FZK, T)
    silence_create(author=None, matchers={"site": "FZK"}, comment="FZK only", now=T, duration_s=3600)
    process(T, flush=True)
    (mail,) = smtp.wait_for(1, 5)
    assert "(muted)" in mail.text  # the FZK findings are shown as muted, CNAF's still page
    assert not Incident.objects.get().muted


# --- timers and severities ---


def test_group_wait_group_interval_repeat_and_acknowledge(smtp, settings):
    settings.ALERTS_REPEAT_INTERVAL_S = 3600
    findings_sync(findings=[finding()], now=T)
    process(T)
    process(T + timedelta(seconds=29))
    assert smtp.wait_for(1, 0.5) == []
    process(T + timedelta(seconds=30))
    first = smtp.wait_for(1, 5)[0]
    assert first.subject == "[wanmon CRITICAL] PATH_DOWN CERN->RAL: PATH_DOWN for 1 h"

    # the reverse direction joins the pair incident: an update, but only after the group interval
    findings_sync(findings=[finding(), finding(src="RAL", dst="CERN")], now=T + timedelta(minutes=1))
    process(T + timedelta(minutes=1))
    process(T + timedelta(seconds=329))
    assert len(smtp.wait_for(2, 0.5)) == 1
    process(T + timedelta(seconds=330))
    update = smtp.wait_for(2, 5)[1]
    assert update.subject == "[wanmon CRITICAL] PATH_DOWN CERN<->RAL: 2 paths degraded (CERN->RAL, RAL->CERN) (updated)"
    assert "New since the last e-mail: PATH_DOWN dst=CERN;src=RAL" in update.text

    process(T + timedelta(seconds=330 + 3599))
    process(T + timedelta(seconds=330 + 3600))
    repeat = smtp.wait_for(3, 5)[2]
    assert repeat.subject.endswith("(still open)")

    incident = Incident.objects.get()
    incident_acknowledge(incident=incident, user=None, note="on it", now=T + timedelta(hours=2))
    process(T + timedelta(hours=5))
    assert len(smtp.wait_for(4, 0.5)) == 3
    assert set(Finding.objects.values_list("status", flat=True)) == {"acknowledged"}


def test_info_findings_never_page(smtp, settings):
    settings.ALERTS_MIN_SEVERITY = "info"  # even if asked to
    findings_sync(findings=[finding(code="ROUTE_CHANGE", severity="info")], now=T)
    process(T, flush=True)
    assert smtp.wait_for(1, 0.5) == []
    assert Incident.objects.get().severity == "info"


def test_many_failing_pairs_of_one_site_are_one_site_email(smtp):
    findings_sync(findings=[finding(src="FZK", dst=d) for d in ("CERN", "RAL", "CNAF", "IN2P3")], now=T)
    process(T, flush=True)
    (mail,) = smtp.wait_for(1, 5)
    assert mail.subject == ("[wanmon CRITICAL] PATH_DOWN site FZK: 4 paths degraded "
                            "(FZK->CERN, FZK->CNAF, FZK->IN2P3, FZK->RAL)")


def test_findings_moving_to_a_root_cause_close_the_old_incident_silently(smtp):
    """A path incident e-mailed first, then the shared-equipment analysis explains it: one new incident, which
    names the one it supersedes; no resolved notice for the old one (the problem is not over)."""
    call_command("import_topology", str(FZK), stdout=StringIO())
    asym = finding(code="ASYMMETRIC_PATH", src="FZK", dst="CERN")
    findings_sync(findings=[asym], now=T)
    process(T, flush=True)
    old = Incident.objects.get()
    replay_at(FZK, T + timedelta(minutes=1))
    process(T + timedelta(minutes=1), flush=True)
    old.refresh_from_db()
    new = Incident.objects.get(status="open")
    assert old.status == "resolved" and old.merged_into_id == new.id
    messages = smtp.wait_for(3, 3)
    assert [m.subject.split(" ")[2] for m in messages] == ["ASYMMETRIC_PATH", "SHARED_EQUIPMENT_SUSPECT"]
    assert f"Supersedes incident(s) #{old.id}." in messages[1].text


# --- sending ---


def test_two_dispatch_attempts_of_the_same_notification_send_one_email(smtp):
    replay_at(FZK, T)
    result = alerts_process(now=T, flush=True, dispatch=False)
    (notification_id,) = result.notifications
    assert notification_send(notification_id=notification_id) == "sent"
    assert notification_send(notification_id=notification_id) == "sent"
    assert len(smtp.wait_for(2, 1)) == 1
    assert Notification.objects.get().attempts == 1


def test_an_smtp_failure_is_logged_and_the_retry_sends_it(smtp, settings, smtp_server):
    replay_at(FZK, T)
    (notification_id,) = alerts_process(now=T, flush=True, dispatch=False).notifications
    settings.EMAIL_PORT = smtp_server[1] + 1 if smtp_server[1] < 65535 else 1  # nothing listens there
    with pytest.raises(NotificationSendError):
        notification_send(notification_id=notification_id)
    failed = Notification.objects.get()
    assert failed.status == "failed" and failed.attempts == 1 and "Connection refused" in failed.last_error
    settings.EMAIL_PORT = smtp_server[1]
    assert notification_send(notification_id=notification_id) == "sent"
    assert len(smtp.wait_for(1, 5)) == 1
    assert Notification.objects.get().attempts == 2


def test_silence_validation(smtp, settings):
    with pytest.raises(Exception, match="comment"):
        silence_create(author=None, matchers={"site": "FZK"}, comment=" ", now=T, duration_s=60)
    with pytest.raises(Exception, match="at most 7 days"):
        silence_create(author=None, matchers={"site": "FZK"}, comment="x", now=T, duration_s=8 * 86400)
    with pytest.raises(Exception, match="unknown matcher"):
        silence_create(author=None, matchers={"colour": "red"}, comment="x", now=T, duration_s=60)
    with pytest.raises(Exception, match="unknown finding code"):
        silence_create(author=None, matchers={"code": "BAD_LUCK"}, comment="x", now=T, duration_s=60)
    assert Silence.objects.count() == 0


# --- two faults at once: each incident to its own people, the carrier included ---

TWO_FAULTS_TOPOLOGY = {
    "carriers": [
        {"code": "GEANT", "name": "GEANT", "kind": "backbone", "noc_email": "noc@geant.test"},
        {"code": "CANARIE", "name": "CANARIE", "kind": "backbone", "noc_email": "noc@canarie.test"},
    ],
    "sites": [{"code": c, "name": c, "tier": 0 if c == "CERN" else 1,
               "contacts": [{"email": f"noc@{c.lower()}.test", "role": "noc"},
                            {"email": f"transfers@{c.lower()}.test", "role": "transfer"}]}
              for c in ("CERN", "FZK", "CNAF", "TRIUMF", "RAL")],
    "equipment": [
        {"name": "geant-fra", "carrier": "GEANT"}, {"name": "geant-gva", "carrier": "GEANT"},
        {"name": "canarie-mtl", "carrier": "CANARIE"}, {"name": "cern-border", "site": "CERN"},
    ],
    "interfaces": [
        {"equipment": "geant-fra", "name": "et-1/1/0", "speed_mbps": 100000},
        {"equipment": "geant-gva", "name": "et-1/0/0", "speed_mbps": 100000},
        {"equipment": "geant-gva", "name": "et-1/1/0", "speed_mbps": 100000},
        {"equipment": "canarie-mtl", "name": "xe-0/0/0", "speed_mbps": 10000},
        {"equipment": "canarie-mtl", "name": "xe-0/0/1", "speed_mbps": 10000},
    ],
    "circuits": [
        {"carrier": "GEANT", "cid": "GEANT-FRA-GVA-100G", "a_interface": "geant-fra:et-1/1/0",
         "z_interface": "geant-gva:et-1/0/0", "capacity_mbps": 100000},
        {"carrier": "GEANT", "cid": "GEANT-GVA-CERN", "a_interface": "geant-gva:et-1/1/0", "capacity_mbps": 100000},
    ],
    "trunks": [{"name": "canarie-lag", "members": ["canarie-mtl:xe-0/0/0", "canarie-mtl:xe-0/0/1"]}],
    "paths": [
        *({"src": s, "dst": "CERN", "capacity_mbps": 100000, "rtt_ms": 12.0,
           "hops": ["geant-fra:et-1/1/0", "geant-gva:et-1/1/0", "cern-border"]} for s in ("FZK", "CNAF")),
        {"src": "TRIUMF", "dst": "CERN", "capacity_mbps": 20000, "rtt_ms": 150.0,
         "hops": ["canarie-mtl:xe-0/0/0", "geant-gva:et-1/1/0", "cern-border"]},
        {"src": "RAL", "dst": "CERN", "capacity_mbps": 100000, "rtt_ms": 20.0, "hops": ["geant-gva:et-1/1/0",
                                                                                         "cern-border"]},
    ],
}


def two_faults(onset=T - timedelta(minutes=50)) -> None:
    """The two faults at once as the diagnosis reports them at T: CRC errors on the GEANT Frankfurt-Geneva link
    (counted at its far end, geant-gva) degrading FZK->CERN and CNAF->CERN; a failing member of a CANARIE trunk
    on TRIUMF->CERN. Both began at ``onset``."""
    from wanmon.inventory.topology import topology_import

    topology_import(TWO_FAULTS_TOPOLOGY, as_of=T - timedelta(days=30))

    def at(code, subject, severity="critical", **evidence):
        return RuleFinding(code=code, severity=severity, subject=subject, start=onset, end=T,
                             summary=f"{code} here", explanation="x", evidence=evidence, actions=(f"Check {code}",))

    eu = ["FZK->CERN", "CNAF->CERN"]
    findings_sync(findings=[
        *(at("LOSS_LIMITED", {"src": p.split("->")[0], "dst": "CERN"}) for p in eu),
        at("SHARED_EQUIPMENT_SUSPECT", {"equipment": "geant-fra"}, degraded_paths=eu),
        at("INTERFACE_ERRORS", {"equipment": "geant-gva", "interface": "et-1/0/0"}, "warning"),
        at("LOSS_LIMITED", {"src": "TRIUMF", "dst": "CERN"}),
        at("TRUNK_IMBALANCE", {"trunk": "canarie-lag"}, "warning"),
    ], now=T)


def test_two_faults_at_once_reach_their_own_sites_and_their_carrier_with_the_onset_and_the_circuit(smtp):
    onset = T - timedelta(minutes=50)
    two_faults(onset)
    process(T, flush=True)

    incidents = {i.key: i for i in Incident.objects.all()}
    assert set(incidents) == {"element:geant-fra", "trunk:canarie-lag"}
    fra, lag = incidents["element:geant-fra"], incidents["trunk:canarie-lag"]
    assert {m.finding.code for m in fra.members.all()} == {"LOSS_LIMITED", "SHARED_EQUIPMENT_SUSPECT",
                                                            "INTERFACE_ERRORS"}
    assert fra.root_finding.subject == {"equipment": "geant-fra"} and fra.onset == onset
    assert {m.finding.code for m in lag.members.all()} == {"LOSS_LIMITED", "TRUNK_IMBALANCE"}
    # who got which e-mail: the sites whose paths cross the root element, and its carrier; nobody else
    sent = {(n.incident_id, n.recipient): n for n in Notification.objects.all()}
    assert {r for i, r in sent if i == fra.id} == {"noc@cern.test", "noc@cnaf.test", "noc@fzk.test",
                                                   "noc@geant.test"}
    assert {r for i, r in sent if i == lag.id} == {"noc@cern.test", "noc@triumf.test", "noc@canarie.test"}
    assert sent[(fra.id, "noc@geant.test")].reason == "operator of geant-fra (carrier GEANT)"
    messages = smtp.wait_for(7, 5)
    assert len(messages) == 7
    to_geant = next(m for m in messages if m.rcpt_tos == ["noc@geant.test"])
    body = to_geant.text
    assert "Since 11:10 UTC, 50 min, ongoing as of 12:00 UTC." in body
    assert "Operated by: carrier GEANT (noc@geant.test)" in body
    assert "Circuits on the suspect link: GEANT GEANT-FRA-GVA-100G (geant-fra:et-1/1/0 - geant-gva:et-1/0/0)" in body
    assert "First action: Check SHARED_EQUIPMENT_SUSPECT" in body
    # the carrier cannot open the internal pages: its copy links to the evidence scoped to it (docs/sharing.md)
    assert re.search(r"^https://wanmon\.example\.org/share/[A-Za-z0-9_-]{43}\r?$", body, re.MULTILINE)
    assert "/paths/" not in body and "/equipment/" not in body and "/incidents/" not in body
    # the sites' NOCs get the internal links, as before
    to_fzk = next(m for m in messages if m.rcpt_tos == ["noc@fzk.test"]).text
    assert "https://wanmon.example.org/paths/FZK/CERN/" in to_fzk and "/share/" not in to_fzk
    assert "Suspect geant-fra: https://wanmon.example.org/equipment/geant-fra/" in to_fzk


def test_a_trunk_member_down_is_grouped_under_its_bundle_and_emailed_to_the_bundles_operator(smtp):
    # given the CANARIE bundle on TRIUMF->CERN losing a member, reported as the rule reports it (a finding about
    # {trunk, member}), while TRIUMF->CERN degrades across it
    from wanmon.inventory.topology import topology_import

    topology_import(TWO_FAULTS_TOPOLOGY, as_of=T - timedelta(days=30))
    onset = T - timedelta(minutes=50)
    member = {"trunk": "canarie-lag", "member": "canarie-mtl:xe-0/0/1"}
    findings_sync(findings=[
        RuleFinding(code="TRUNK_IMBALANCE", severity="critical", subject=member, start=onset, end=T,
                    summary="canarie-lag: member canarie-mtl:xe-0/0/1 down since 11:10, 10 of 20 Gb/s left",
                    explanation="x", evidence={"member_down": {"member": member["member"]}},
                    actions=("Check canarie-mtl:xe-0/0/1 on canarie-mtl",)),
        RuleFinding(code="LOSS_LIMITED", severity="critical", subject={"src": "TRIUMF", "dst": "CERN"}, start=onset,
                    end=T, summary="LOSS_LIMITED here", explanation="x", evidence={}, actions=("Check loss",)),
    ], now=T)
    process(T, flush=True)
    # then one incident, the bundle's, rooted at the member down
    [incident] = Incident.objects.all()
    assert incident.key == "trunk:canarie-lag"
    assert incident.root_finding.subject == member
    assert {m.finding.code for m in incident.members.all()} == {"TRUNK_IMBALANCE", "LOSS_LIMITED"}
    # e-mailed to the sites of the paths across it and to the bundle's operator, CANARIE, named as such
    sent = {n.recipient: n for n in Notification.objects.filter(incident=incident)}
    assert set(sent) == {"noc@cern.test", "noc@triumf.test", "noc@canarie.test"}
    assert sent["noc@canarie.test"].reason == "operator of canarie-lag (carrier CANARIE)"
    messages = smtp.wait_for(3, 5)
    to_canarie = next(m for m in messages if m.rcpt_tos == ["noc@canarie.test"]).text
    assert "Operated by: carrier CANARIE (noc@canarie.test)" in to_canarie
    assert "canarie-lag: member canarie-mtl:xe-0/0/1 down since 11:10, 10 of 20 Gb/s left" in to_canarie
    to_triumf = next(m for m in messages if m.rcpt_tos == ["noc@triumf.test"]).text
    assert "Suspect canarie-lag: https://wanmon.example.org/trunks/canarie-lag/" in to_triumf


def test_a_crawl_from_every_alert_emails_links_reaches_the_findings_both_path_pages_and_the_suspect(smtp, client):
    # given the two faults at once, e-mailed through the real SMTP server
    test_two_faults_at_once_reach_their_own_sites_and_their_carrier_with_the_onset_and_the_circuit(smtp)
    operator = get_user_model().objects.create_user("oncall", password="not-used-9x")
    operator.groups.add(Group.objects.get_or_create(name=OPERATOR_GROUP)[0])
    client.force_login(operator)
    base = "https://wanmon.example.org"
    for mail in smtp.wait_for(7, 5):
        incident = Incident.objects.get(pk=int(mail.message["X-Wanmon-Incident"]))
        shared = re.findall(rf"{re.escape(base)}(/share/[A-Za-z0-9_-]+)", mail.text)
        if shared:  # a carrier's copy: its one link opens without a login (tests/sharing cover what it shows)
            assert set(re.findall(rf"{re.escape(base)}[^\s<>\")]+", mail.text)) == {base + shared[0]}
            assert Client().get(shared[0]).status_code == 200
            continue
        # when an engineer opens every link of the e-mail, then every link of the pages it opened
        reached: set[str] = set()
        failed: list[str] = []
        seen: set[str] = set()
        frontier = [u.removeprefix(base) for u in re.findall(rf"{re.escape(base)}[^\s<>\")]+", mail.text)]
        for depth in range(2):
            following = []
            for url in dict.fromkeys(frontier):
                if url in seen or not url.startswith("/") or url.startswith(("/api/", "/static/", "/accounts/")):
                    continue
                seen.add(url)
                response = client.get(url)
                if response.status_code != 200:
                    failed.append(f"{url}: {response.status_code}")
                    continue
                reached.add(url.split("?")[0])
                if depth == 0 and "html" in response.get("Content-Type", ""):
                    following += [html.unescape(h) for h in re.findall(r'href="(/[^"#]*)"', response.content.decode())]
            frontier = following
        # then every page answered, and they include every finding, both directions of every path and the suspect
        assert failed == []
        wanted = {f"/findings/{m.finding_id}/" for m in incident.members.all()}
        for path in incident.paths:
            src, dst = path.split("->")
            wanted |= {f"/paths/{src}/{dst}/", f"/paths/{dst}/{src}/"}
        root = incident.root_finding.subject
        wanted.add(f"/trunks/{root['trunk']}/" if "trunk" in root else f"/equipment/{root['equipment']}/")
        assert wanted <= reached, sorted(wanted - reached)


def test_a_finding_judged_on_a_route_no_longer_in_force_is_emailed_only_once_a_cycle_confirms_it(smtp):
    from wanmon.inventory.services import path_set
    from wanmon.inventory.topology import topology_import

    topology_import(TWO_FAULTS_TOPOLOGY, as_of=T - timedelta(days=30))
    lossy = finding("LOSS_LIMITED", "FZK", "CERN", at=T)
    findings_sync(findings=[lossy], now=T)
    # the inventory changes after the finding was last seen: FZK->CERN is now a 10 Gb/s route
    fzk, cern = Site.objects.get(code="FZK"), Site.objects.get(code="CERN")
    route = [(Equipment.objects.get(name=e), Interface.objects.get(equipment__name=e, name=i) if i else None)
             for e, i in (("geant-fra", "et-1/1/0"), ("geant-gva", "et-1/1/0"), ("cern-border", None))]
    path_set(src=fzk, dst=cern, hops=route, capacity_mbps=10000, at=T + timedelta(minutes=1))
    process(T + timedelta(minutes=2), flush=True)
    assert Incident.objects.count() == 1 and not Notification.objects.exists()  # grouped, not e-mailed
    # the next cycle judges it on the route in force: now it is told
    findings_sync(findings=[finding("LOSS_LIMITED", "FZK", "CERN", at=T + timedelta(minutes=3))],
                  now=T + timedelta(minutes=3))
    process(T + timedelta(minutes=3), flush=True)
    assert Notification.objects.filter(kind="firing").count() == 2  # the NOCs of CERN and FZK
