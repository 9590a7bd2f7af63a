"""One bad message never blocks the others: every import path (file command, upload API, Maildir) records a
notice's failure with its reason and goes on. Sender detection ignores case; a notice that matched another carrier's
circuit says so; circuits added to the inventory later are matched by the rematch its change enqueues."""

from __future__ import annotations

import mailbox
import time

import circuit_maintenance_parser as cmp
import pytest
from django.core.management import CommandError, call_command
from django.db import transaction
from rest_framework.test import APIClient

from tests.maintenance.conftest import BCOP, CARRIERS, TOPOLOGY
from wanmon.inventory.models import Carrier, Circuit
from wanmon.inventory.topology import topology_import_file
from wanmon.maintenance import carrier_parser, imports
from wanmon.maintenance.choices import CarrierNoticeStatus, Source
from wanmon.maintenance.imports import carrier_notice_import, maintenance_import_maildir
from wanmon.maintenance.models import CarrierNotice, MaintenanceSource, MaintenanceWindow
from wanmon.maintenance.receivers import rematch_enqueue

# Neither e-mail nor iCalendar: what lands in a mailbox or is picked by mistake (a saved subject line, a zip).
SUBJECT_LINE = b"Fwd: REMINDER - 3rd Party Equinix Network Device Maintenance -02-JUL-2021 [K-293030438574]"
BINARY = b"PK\x03\x04\x14\x00\x00\x00\x08\x00\xa5\x9b\x00\xff garbage"
NOT_A_NOTICE = "neither an iCalendar object (BEGIN:VCALENDAR) nor an e-mail message"


@pytest.fixture
def colt(topology):
    """COLT, whose maintenance source has a parser: a junk file imported for it went to the library and crashed."""
    carrier = Carrier.objects.get(code="COLT")
    MaintenanceSource.objects.create(carrier=carrier, parser="colt", senders=["change@example.com"])
    return carrier


def _maildir(path, messages: dict[str, bytes]):
    mailbox.Maildir(path, create=True)
    for name, raw in messages.items():  # named so that they sort in this order, junk first
        (path / "new" / name).write_bytes(raw)
    return path


@pytest.mark.django_db
def test_junk_first_in_a_carriers_maildir_blocks_nothing_after_it(colt, tmp_path):
    box = _maildir(tmp_path / "colt", {
        "0001.junk": SUBJECT_LINE,
        "0002.zip": BINARY,
        "0003.colt3": (CARRIERS / "colt3.eml").read_bytes(),
        "0004.colt5": (CARRIERS / "colt5.eml").read_bytes(),
    })
    colt.maintenance_sources.update(mailbox=str(box))
    report = maintenance_import_maildir(directory=box)
    junk, zipped, colt3, colt5 = report.notices
    for n in (junk, zipped):
        assert n.status == CarrierNoticeStatus.FAILED and n.windows == []
        assert NOT_A_NOTICE in n.problems[0]
    assert [w.action for w in colt3.windows] == ["created"] and [w.action for w in colt5.windows] == ["updated"]
    window = MaintenanceWindow.objects.get(carrier=colt)
    assert (window.status, window.affects.get().circuit.cid) == ("cancelled", "C-1234567")
    assert CarrierNotice.objects.filter(status=CarrierNoticeStatus.FAILED).count() == 2
    # the next run tries the junk again (it fails again) and skips what was imported
    again = maintenance_import_maildir(directory=box)
    assert [n.status for n in again.notices[:2]] == ["failed", "failed"]
    assert [n.duplicate for n in again.notices[2:]] == [True, True]


@pytest.mark.django_db
def test_the_file_command_reports_a_junk_file_and_imports_the_next(colt, tmp_path, capsys):
    junk = tmp_path / "subject.eml"
    junk.write_bytes(SUBJECT_LINE)
    call_command("maintenance_import_file", str(junk), str(tmp_path / "missing.eml"), str(CARRIERS / "colt3.eml"),
                 "--carrier", "COLT")
    out = capsys.readouterr().out
    assert f"{junk}: failed [no parser; carrier COLT]\n  ! {NOT_A_NOTICE}" in out
    assert f"{tmp_path / 'missing.eml'}: failed [no parser; carrier unknown]\n  ! cannot be read: No such file" in out
    assert "created   CRQ1-12345678 2021-08-06T22:00:00Z -> 2021-08-07T06:00:00Z" in out
    # alone, it is the command's failure (exit status 1), with the reason, and no traceback
    with pytest.raises(CommandError, match="nothing could be imported") as refused:
        call_command("maintenance_import_file", str(junk), "--carrier", "COLT")
    assert refused.value.returncode == 1 and NOT_A_NOTICE in capsys.readouterr().out


@pytest.mark.django_db
def test_the_upload_api_answers_422_with_the_reason(colt, api_operator, tmp_path):
    junk = tmp_path / "subject.eml"
    junk.write_bytes(SUBJECT_LINE)
    with open(junk, "rb") as fh:
        r = api_operator.post("/api/v1/maintenance/imports/file", {"file": fh, "carrier": "COLT"})
    assert r.status_code == 422 and NOT_A_NOTICE in r.json()["notices"][0]["problems"][0]
    with open(junk, "rb") as a, open(CARRIERS / "colt3.eml", "rb") as b:
        r = api_operator.post("/api/v1/maintenance/imports/file", {"file": [a, b], "carrier": "COLT"})
    assert r.status_code == 200
    assert [n["status"] for n in r.json()["notices"]] == ["failed", "parsed"]


@pytest.mark.django_db
def test_a_parsers_crash_is_that_messages_failure(topology, tmp_path, monkeypatch):
    class Broken:
        def get_maintenances(self, data):
            raise ZeroDivisionError("division by zero in a parser")

    monkeypatch.setattr(carrier_parser.cmp, "init_provider", lambda name: Broken())
    zayo = Carrier.objects.get(code="ZAYO")
    MaintenanceSource.objects.create(carrier=zayo, parser="zayo")
    box = _maildir(tmp_path / "box", {"1": (CARRIERS / "zayo4.eml").read_bytes(),
                                      "2": (BCOP / "1-initial.ics").read_bytes()})
    crashed, calendar = maintenance_import_maildir(directory=box, carrier=zayo).notices
    assert crashed.status == "failed"
    assert crashed.problems == [f"circuit-maintenance-parser {carrier_parser.VERSION} (zayo): the zayo parser failed: "
                                "ZeroDivisionError: division by zero in a parser"]
    assert [w.action for w in calendar.windows] == ["created"]


@pytest.mark.django_db
def test_an_unexpected_error_is_recorded_with_the_notice_and_the_import_goes_on(colt, tmp_path, monkeypatch):
    real_apply = imports._window_apply

    def once_broken(parsed, **kwargs):
        if parsed.reference == "CRQ1-12345678":
            raise RuntimeError("the database said no")
        return real_apply(parsed, **kwargs)

    monkeypatch.setattr(imports, "_window_apply", once_broken)
    box = _maildir(tmp_path / "box", {"1": (CARRIERS / "colt3.eml").read_bytes(), "2": (CARRIERS / "zayo4.eml")
                                      .read_bytes()})
    broken, zayo = maintenance_import_maildir(directory=box).notices
    assert (broken.status, broken.problems) == ("failed", ["could not be imported: RuntimeError: the database said no"])
    kept = CarrierNotice.objects.get(pk=broken.notice_id)
    assert kept.status == "failed" and bytes(kept.raw) == (CARRIERS / "colt3.eml").read_bytes()
    assert not MaintenanceWindow.objects.filter(reference="CRQ1-12345678").exists()  # nothing half-applied
    assert zayo.windows[0].action == "created"


@pytest.mark.parametrize("provider", [p for p in cmp.SUPPORTED_PROVIDERS if p.get_provider_type() != "genericprovider"],
                         ids=lambda p: p.get_provider_type())
def test_every_providers_sender_is_found_whatever_its_case(provider):
    sender = provider.get_default_organizer().removeprefix("mailto:")
    found = {carrier_parser.provider_for_sender(s) for s in (sender, sender.lower(), sender.upper())}
    assert len(found) == 1
    # the same parser, or the first of two that share the address (Arelion/Telia, Seaborn/Turkcell)
    assert cmp.get_provider_class(found.pop()).get_default_organizer().lower().endswith(sender.lower())


@pytest.mark.django_db
def test_a_gtt_mail_is_read_by_gtts_parser_from_its_sender(topology, tmp_path):
    # InfraCo.CM@exainfra.net: GTT's parser was never found (the address was lowercased, the lookup is exact)
    box = _maildir(tmp_path / "box", {"1": (CARRIERS / "gtt7.eml").read_bytes()})
    (n,) = maintenance_import_maildir(directory=box).notices
    assert n.parser.endswith("(gtt)") and n.carrier == "GTT"
    assert [(w.reference, w.start, w.matched) for w in n.windows] == [
        ("65430585", "2021-12-02T05:00:00Z", ["circuit:1098765-12345678"])]


@pytest.mark.django_db
def test_a_notice_that_matched_another_carriers_circuit_says_so(topology, capsys):
    call_command("maintenance_import_file", str(CARRIERS / "gtt7.eml"), "--carrier", "COLT", "--parser", "gtt")
    assert "matched: circuit:1098765-12345678\n            note: circuit:1098765-12345678 is GTT's circuit, " \
           "not COLT's" in capsys.readouterr().out
    r = carrier_notice_import(raw=(CARRIERS / "gtt7.eml").read_bytes() + b"\n", source=Source.EMAIL,
                                    carrier=Carrier.objects.get(code="GTT"), parser="gtt")
    assert r.windows[0].notes == []  # its own carrier's


def _unmatched_window() -> MaintenanceWindow:
    raw = (BCOP / "1-initial.ics").read_bytes().replace(b"acme-widgets-as-a-service", b"GEANT-CCT-0099")
    carrier_notice_import(raw=raw, source=Source.ICAL_FILE, carrier=Carrier.objects.get(code="GEANT"))
    window = MaintenanceWindow.objects.get()
    assert window.unmatched_objects == [{"object_id": "GEANT-CCT-0099", "impact": ""}]
    return window


@pytest.mark.django_db
def test_circuit_changes_enqueue_one_rematch_per_transaction(django_capture_on_commit_callbacks):
    geant = Carrier.objects.create(code="GEANT", name="GEANT")
    with django_capture_on_commit_callbacks() as callbacks, transaction.atomic():
        topology_import_file(TOPOLOGY)  # a topology import saves many circuits
        for i in range(3):
            Circuit.objects.create(carrier=geant, cid=f"GEANT-NEW-{i}")
    assert callbacks == [rematch_enqueue]


@pytest.mark.django_db
def test_a_circuit_saved_without_its_id_or_carrier_enqueues_nothing(django_capture_on_commit_callbacks):
    (circuit,) = Circuit.objects.bulk_create([Circuit(carrier=Carrier.objects.create(code="X", name="X"), cid="X-1")])
    with django_capture_on_commit_callbacks() as callbacks:
        circuit.description = "only the description"
        circuit.save(update_fields=["description"])
    assert callbacks == []
    with django_capture_on_commit_callbacks() as callbacks:
        circuit.cid = "X-2"
        circuit.save(update_fields=["cid"])  # renamed
    assert callbacks == [rematch_enqueue]


@pytest.mark.django_db(transaction=True)
def test_a_circuit_added_through_the_api_matches_the_waiting_window(celery_worker_process, django_user_model):
    topology_import_file(TOPOLOGY)
    window = _unmatched_window()
    # an operator adds the circuit the notice named (as GEANT's, in another spelling): the worker matches it
    api = APIClient()
    api.force_authenticate(django_user_model.objects.create_user("staff", is_staff=True))  # no group: flushed DB
    r = api.post("/api/v1/circuits/", {"carrier": "GEANT", "cid": "geant-cct-0099"}, format="json")
    assert r.status_code == 201, r.json()
    deadline = time.monotonic() + 30
    while window.unmatched_objects and time.monotonic() < deadline:
        time.sleep(0.2)
        window.refresh_from_db()
    assert window.unmatched_objects == [] and window.affects.get().circuit.cid == "geant-cct-0099"
    assert window.events.filter(note="matched to the inventory after a change").count() == 1
