"""Every real carrier notice of ../shared/fixtures/carrier-mail (its SOURCES.md: 86 files from circuit-maintenance-
parser's test data) through the three import paths a site admin uses, into PostgreSQL: the command
``maintenance_import_file``, the upload API and the carrier's own Maildir.

Each file is imported for a carrier of its own, as the carrier a site admin would name: its maintenance source has
the parser of the file's folder (BCOP for ``ical/``, none for ``email/``) and, for the Maildir path, a Maildir
holding that file alone as its mailbox; the circuits the notice announces are in the inventory. What each file must
give is the library's expected result beside it (``*_result.json``) with the corrections in ``EXPECTED``, or, for
the files without one, ``EXPECTED`` alone: its windows (times, status, circuits), held for review with the reason
when its times are doubtful, or a refusal that names what is wrong. Never a crash; never a window with other times.

Each path imports the whole corpus once (a module fixture, one transaction rolled back at the end); the tests
compare one file each.
"""

from __future__ import annotations

import io
import json
import mailbox
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import transaction
from rest_framework.test import APIClient

from tests.conftest import SHARED
from wanmon.inventory.models import Carrier, Circuit
from wanmon.maintenance.choices import CarrierNoticeStatus, Review
from wanmon.maintenance.imports import maintenance_import_maildir
from wanmon.maintenance.models import CarrierNotice, MaintenanceSource, MaintenanceWindow

CORPUS = SHARED / "fixtures" / "carrier-mail"
if not CORPUS.is_dir():
    pytest.skip(f"the carrier-mail corpus is kept outside the repository and is absent ({CORPUS})",
                allow_module_level=True)

FILES = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*")
               if p.is_file() and p.name != "SOURCES.md" and not p.name.endswith(".json"))
# The library's parser for each folder; None: the BCOP reader (ical/) or no parser at all (a stray e-mail).
PARSERS = {"ical": None, "email": None}


@dataclass(frozen=True)
class W:
    """One window a notice announces: its id (None: not compared, the library's own hash), UTC times, status (None:
    the notice gives none, or the expected result does not say), the circuits it names."""

    reference: str | None
    start: str
    end: str
    status: str | None
    circuits: tuple[str, ...] = ()


@dataclass(frozen=True)
class Expect:
    windows: tuple[W, ...] = ()
    refused: str = ""  # a refusal whose reason says this
    held: str = ""  # every window held for review, its doubts saying this
    problem: str = ""  # imported, and the report names this problem of the notice


ATT = W("1234567", "2025-03-31T14:00:00Z", "2025-03-31T15:00:00Z", "confirmed", ("23/HCGS/123456/SC",))
BCOP_EXAMPLE = ("WorkOrder-31415", "2015-10-10T08:00:00Z", "2015-10-10T10:00:00Z", "tentative")
BCOP_CLOSED = ("WorkOrder-31415", "2015-10-12T08:00:00Z", "2015-10-12T10:00:00Z", "completed")
ACME = ("acme-widgets-as-a-service",)
NO_DATE = "the message has no Date header, which the bso parser needs"
NOT_A_NOTICE = "neither an iCalendar object (BEGIN:VCALENDAR) nor an e-mail message"
# What a file must give where the library's expected result is absent, wrong, or of the library's own making.
EXPECTED = {
    # The test data put bodies of other years in e-mails dated 2021: such a window is held, its times as written.
    "apple/apple1.eml": Expect(held="the window starts 613 days after the notice's date (2021-08-26)"),
    "aquacomms/aquacomms1.eml": Expect(held="the window ended 317 days before the notice's date (2021-08-26)"),
    "aws/aws3.eml": Expect(held="the window starts 957 days after the notice's date (2021-05-06)"),
    "equinix/equinix1.eml": Expect(
        windows=(W("K-293030438574", "2021-07-02T10:00:00Z", "2021-07-02T15:00:00Z", "confirmed", (
            "10101", "10108", "10001", "09999000-B", "09999020-B", "09999045-B", "09999063-B", "09999022-B",
            "09999064-B", "09999069-B", "09999057-B", "09999058-B", "09999052-B")),),
        held="the window ended 109 days before the notice's date (2021-10-19)"),
    "equinix/equinix5.eml": Expect(held="the window starts 330 days after the notice's date (2021-12-06)"),
    # AT&T's circuits are in an Excel attachment (the library's xlsx extra); its expected results are not in the copy.
    "att/att1.eml": Expect(windows=(ATT,)),
    "att/att2.eml": Expect(windows=(ATT,)),
    "att/att3.eml": Expect(windows=(ATT,)),
    # The anonymised BSO e-mails lost their Date header, which the BSO parser needs.
    **{f"bso/{name}": Expect(refused=NO_DATE) for name in (
        "bso1_first.eml", "bso2_start.eml", "bso3_update.eml", "bso4_end.eml", "bso5_reminder_multiple_ts.eml",
        "bso6_cancel.eml", "bso7_backup_ts.eml")},
    # "Start time: 10:00pm CT 11/3/2022 ... End time: 5:00am CT 11/4/2022": 7 hours, the text says (the expected
    # result has a start of its own and the end the library reads, 11 April).
    "cogent/cogent3.eml": Expect(windows=(
        W("VN12345", "2022-11-04T03:00:00Z", "2022-11-04T10:00:00Z", "confirmed", ("1-300123456",)),)),
    # An Outlook invitation without X-MAINTNOTE: a plain event known by its UID, at the times it gives.
    "colt/colt1": Expect(
        windows=(W("MS00NDE1Mjc5NDc3NTM4ODE4MTFJbXBhY3RlZA==", "2021-08-06T21:00:00Z", "2021-08-07T05:00:00Z", None),),
        problem="not a BCOP maintenance event"),
    "email/test_sample_message.eml": Expect(refused="no parser for sender mlemos@acm.org"),
    # A subject line saved alone (the expected result is of the library's subject parser).
    "equinix/equinix2.eml": Expect(refused=NOT_A_NOTICE),
    "globalcloudxchange/globalcloudxchange1_subject.eml": Expect(refused=NOT_A_NOTICE),
    "eunetworks/eunetworks_cancel.eml": Expect(
        windows=(W("02345678", "2023-10-06T23:00:00Z", "2023-10-07T17:00:00Z", "cancelled"),),
        problem="no X-MAINTNOTE-OBJECT-ID"),
    # The expected result describes hgc1's e-mail; hgc2 announces 8 July 2021, 17:00-18:00 UTC, on CIR0000001.
    "hgc/hgc2.eml": Expect(windows=(
        W("TIC000000000000001", "2021-07-08T17:00:00Z", "2021-07-08T18:00:00Z", "confirmed", ("CIR0000001",)),)),
    # The library's broken calendars: without times, refused; without anything else, imported naming what is missing.
    "ical/ical_no_start": Expect(refused="no DTSTART, skipped"),
    "ical/ical_no_end": Expect(refused="neither DTEND nor DURATION, skipped"),
    "ntt/ntt2": Expect(refused="no DTSTART, skipped"),
    "ical/ical_no_account": Expect(windows=(W(*BCOP_EXAMPLE, ACME),), problem="no X-MAINTNOTE-ACCOUNT"),
    "ical/ical_no_maintenance_id": Expect(windows=(W("42", *BCOP_EXAMPLE[1:], ACME),),
                                          problem="no X-MAINTNOTE-MAINTENANCE-ID; the maintenance is known by its UID"),
    "ical/ical_no_object_id": Expect(windows=(W(*BCOP_EXAMPLE),), problem="no X-MAINTNOTE-OBJECT-ID"),
    "ical/ical_no_organizer": Expect(windows=(W(*BCOP_CLOSED, ACME),)),
    "ical/ical_no_provider": Expect(windows=(W(*BCOP_CLOSED, ACME),), problem="no X-MAINTNOTE-PROVIDER"),
    "ical/ical_no_stamp": Expect(windows=(W(*BCOP_EXAMPLE, ACME),), problem="no DTSTAMP"),
}
# The library's status words as wanmon stores them (NO-CHANGE: the notice changes none).
STATUSES = {"RE-SCHEDULED": "confirmed", "NO-CHANGE": None}


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def expected(name: str) -> Expect:
    """The library's expected result beside the file, with the corrections of EXPECTED."""
    override = EXPECTED.get(name, Expect())
    if override.windows or override.refused:
        return override
    result = CORPUS / f"{name.removesuffix('.eml')}_result.json"
    assert result.exists(), f"{name}: neither an expected result nor an entry in EXPECTED"
    windows, seen = [], {}
    for m in json.loads(result.read_text()):
        # wanmon numbers the windows of one maintenance id (Zayo's three nights): "TTN-1", "TTN-1 #2", ...
        ref = m.get("maintenance_id")
        seen[ref] = seen.get(ref, 0) + 1
        if ref is not None and seen[ref] > 1:
            ref = f"{ref} #{seen[ref]}"
        status = STATUSES.get(m["status"], m["status"].lower()) if "status" in m else None
        windows.append(W(None if name.startswith("aws/") else ref, _iso(m["start"]), _iso(m["end"]), status,
                         tuple(dict.fromkeys(c["circuit_id"] for c in m.get("circuits", [])))))
    return Expect(windows=tuple(windows), held=override.held, problem=override.problem)


def _carrier_code(index: int) -> str:
    return f"CM{index:02d}"


@pytest.fixture(scope="module")
def corpus_db(django_db_setup, django_db_blocker, tmp_path_factory):
    """Per file: its carrier (with the folder's parser, and a Maildir of its own) and the circuits it announces.

    Everything the module does happens in one transaction, rolled back at the end.
    """
    boxes = tmp_path_factory.mktemp("carrier-mail")
    with django_db_blocker.unblock(), transaction.atomic():
        carriers = {}
        for i, name in enumerate(FILES):
            carrier = Carrier.objects.create(code=_carrier_code(i), name=name)
            box = mailbox.Maildir(boxes / carrier.code, create=True)
            box.add((CORPUS / name).read_bytes())
            folder = name.split("/")[0]
            MaintenanceSource.objects.create(carrier=carrier, parser=PARSERS.get(folder, folder) or "",
                                             mailbox=str(boxes / carrier.code))
            Circuit.objects.bulk_create([Circuit(carrier=carrier, cid=cid) for cid in dict.fromkeys(
                c for w in expected(name).windows for c in w.circuits)])
            carriers[name] = carrier
        yield carriers, boxes
        transaction.set_rollback(True)


def _snapshot(carrier: Carrier) -> list[dict]:
    return [
        {"id": w.pk, "start": w.start, "end": w.end, "status": w.status, "review": w.review, "note": w.review_note,
         "circuits": sorted(a.circuit.cid for a in w.affects.select_related("circuit") if a.circuit_id)}
        for w in MaintenanceWindow.objects.filter(carrier=carrier).order_by("pk")
    ]


def _outcome(carrier: Carrier, report: dict) -> dict:
    return {"report": report, "windows": _snapshot(carrier),
            "stored": CarrierNotice.objects.filter(pk=report.get("notice_id")).first()}


@pytest.fixture(scope="module")
def by_command(corpus_db):
    """``manage.py maintenance_import_file FILE --carrier CODE --json``, file by file."""
    carriers, _ = corpus_db
    outcomes = {}
    for name, carrier in carriers.items():
        out = io.StringIO()
        try:
            call_command("maintenance_import_file", str(CORPUS / name), "--carrier", carrier.code, "--json", stdout=out)
        except CommandError as exc:  # nothing could be imported: exit status 1, after the report
            assert exc.returncode == 1
        (report,) = json.loads(out.getvalue())["notices"]
        outcomes[name] = _outcome(carrier, report)
    return outcomes


@pytest.fixture(scope="module")
def by_api(corpus_db):
    """``POST /api/v1/maintenance/imports/file`` by an operator, file by file (each for its carrier)."""
    carriers, _ = corpus_db
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_user("corpus-op", is_staff=True))
    outcomes = {}
    for name, carrier in carriers.items():
        with open(CORPUS / name, "rb") as fh:
            response = client.post("/api/v1/maintenance/imports/file", {"file": fh, "carrier": carrier.code})
        (report,) = response.json()["notices"]
        report["http_status"] = response.status_code
        outcomes[name] = _outcome(carrier, report)
    return outcomes


@pytest.fixture(scope="module")
def by_maildir(corpus_db):
    """``maintenance_import_maildir`` of each carrier's own Maildir (its maintenance source's mailbox)."""
    carriers, boxes = corpus_db
    outcomes = {}
    for name, carrier in carriers.items():
        (report,) = maintenance_import_maildir(directory=boxes / carrier.code).as_dict()["notices"]
        outcomes[name] = _outcome(carrier, report)
    return outcomes


def check(name: str, outcome: dict, *, vouched: bool) -> None:
    want, report, stored = expected(name), outcome["report"], outcome["windows"]
    problems = " | ".join(report["problems"])
    assert outcome["stored"] is not None, f"{name}: the notice was not kept"
    if want.refused:
        assert report["status"] == CarrierNoticeStatus.FAILED and report["windows"] == [] and stored == []
        assert want.refused in problems, problems
        assert outcome["stored"].status == CarrierNoticeStatus.FAILED
        return
    if want.problem:
        assert want.problem in problems, problems
    got = [W(w["reference"], w["start"], w["end"], w["status"], tuple(c.removeprefix("circuit:") for c in w["matched"]))
           for w in report["windows"]]
    assert [w.reference for w in got] == [w.reference or g.reference for w, g in zip(want.windows, got, strict=True)]
    assert [(w.start, w.end) for w in got] == [(w.start, w.end) for w in want.windows]
    assert [w.status for w in got] == [w.status or g.status for w, g in zip(want.windows, got, strict=True)]
    assert [w.circuits for w in got] == [w.circuits for w in want.windows]
    assert all(w["unmatched"] == [] and w["action"] == "created" for w in report["windows"]), report["windows"]
    # The database holds what the report says, held for review when the times are doubtful (and for trust).
    assert len(stored) == len(want.windows)
    for w, row in zip(report["windows"], stored, strict=True):
        assert row["id"] == w["window_id"]
        assert (row["start"].isoformat().replace("+00:00", "Z"), row["end"].isoformat().replace("+00:00", "Z")) == (
            w["start"], w["end"])
        assert row["circuits"] == sorted(c.removeprefix("circuit:") for c in w["matched"])
        if want.held:
            assert w["doubts"] == [want.held] and row["review"] == Review.HELD
            assert row["note"] == f"times doubtful: {want.held}"
        else:
            assert w["doubts"] == []
            trusted = vouched or report["trusted"]
            assert row["review"] == (Review.ACCEPTED if trusted else Review.HELD), (row, report["trust"])
            assert row["note"] == report["trust"]


@pytest.mark.django_db
@pytest.mark.parametrize("name", FILES)
def test_file_command(by_command, name):
    check(name, by_command[name], vouched=True)


@pytest.mark.django_db
@pytest.mark.parametrize("name", FILES)
def test_upload_api(by_api, name):
    outcome = by_api[name]
    check(name, outcome, vouched=True)
    # A notice nothing could be read from is a 422 with the reason, never a 500.
    assert outcome["report"]["http_status"] == (422 if expected(name).refused else 200)


@pytest.mark.django_db
@pytest.mark.parametrize("name", FILES)
def test_carrier_maildir(by_maildir, name):
    check(name, by_maildir[name], vouched=False)


def test_the_corpus_is_all_there():
    assert len(FILES) == 86, FILES
    assert len({f.split("/")[0] for f in FILES}) == 26
    assert set(EXPECTED) <= set(FILES)
