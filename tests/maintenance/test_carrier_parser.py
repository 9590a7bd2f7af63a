"""Carrier e-mails through circuit-maintenance-parser (real carrier notices from its test data), offline."""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import pytest

from tests.maintenance.conftest import CARRIERS
from wanmon.maintenance import carrier_parser
from wanmon.maintenance.carrier_notices import carrier_notice_parse


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a connection to another host fails the test."""
    attempts = []
    real_connect = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if host not in ("127.0.0.1", "::1", "localhost") and not str(host).startswith("/"):
            attempts.append(address)
            raise AssertionError(f"network access to {address!r} while parsing")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: (_ for _ in ()).throw(AssertionError(f"DNS {a[0]}")))
    return attempts


@pytest.mark.parametrize(
    ("name", "provider", "expected"),
    [
        # Colt: times given in GMT in the subject/body
        ("colt3.eml", "colt", [("CRQ1-12345678", utc(2021, 8, 6, 22), utc(2021, 8, 7, 6), "confirmed", "outage",
                                ["C-1234567"])]),
        # Colt cancellation of the rescheduled window
        ("colt5.eml", "colt", [("CRQ1-12345678", utc(2021, 12, 7, 23), utc(2021, 12, 8, 5), "cancelled", "outage",
                                ["C-1234567"])]),
        # Zayo: found by its sender (mr@zayo.com) without being told the provider
        ("zayo4.eml", None, [("TTN-0002345678", utc(2021, 11, 11, 5, 1), utc(2021, 11, 11, 11), "confirmed",
                              "outage", ["/OGYX/123456/   /ZYO /"])]),
        # Zayo "START MAINTENANCE": three nights of one maintenance id, no impact
        ("zayo5.eml", None, [
            ("TTN-0003456789", utc(2021, 11, 1, 6, 1), utc(2021, 11, 1, 11), "in-process", "no-impact",
             ["/OGYX/123456/   /ZYO /", "/OGYX/234567/   /ZYO /"]),
            ("TTN-0003456789 #2", utc(2021, 11, 2, 6, 1), utc(2021, 11, 2, 11), "in-process", "no-impact",
             ["/OGYX/123456/   /ZYO /", "/OGYX/234567/   /ZYO /"]),
            ("TTN-0003456789 #3", utc(2021, 11, 3, 6, 1), utc(2021, 11, 3, 11), "in-process", "no-impact",
             ["/OGYX/123456/   /ZYO /", "/OGYX/234567/   /ZYO /"]),
        ]),
        # Telecom Italia Sparkle: three windows, each with its own id
        ("sparkle1.eml", "sparkle", [
            ("1111111", utc(2021, 8, 10, 3), utc(2021, 8, 10, 11), "confirmed", "outage", ["CIR0000000000001"]),
            ("22222", utc(2021, 8, 11, 3), utc(2021, 8, 11, 11), "confirmed", "outage", ["CIR0000000000001"]),
            ("33333", utc(2021, 8, 12, 3), utc(2021, 8, 12, 11), "confirmed", "outage", ["CIR0000000000001"]),
        ]),
        # GTT (EXA): emergency work
        ("gtt7.eml", "gtt", [("65430585", utc(2021, 12, 2, 5), utc(2021, 12, 2, 10), "confirmed", "outage",
                              ["1098765-12345678"])]),
        # Cogent: local times of a city resolved to a zone from the parser's offline table; "10:00pm CT 11/3/2022"
        # to "5:00am CT 11/4/2022" is month first (US), 7 hours (the library alone reads 11 March to 11 April)
        ("cogent3.eml", "cogent", [("VN12345", utc(2022, 11, 4, 3), utc(2022, 11, 4, 10), "confirmed", "outage",
                                    ["1-300123456"])]),
    ],
)
def test_real_carrier_notices(no_network, name, provider, expected):
    result = carrier_notice_parse((CARRIERS / name).read_bytes(), provider=provider)
    assert result.problems == []
    assert result.parser.startswith(f"circuit-maintenance-parser {carrier_parser.VERSION}")
    got = [(w.reference, w.start, w.end, w.status, w.impact, [o.object_id for o in w.objects]) for w in result.windows]
    assert got == expected
    for w in result.windows:
        # e-mails have no UID/SEQUENCE: the stamp (the carrier's date) orders updates
        assert w.uid == "" and w.sequence is None and w.stamp is not None
        assert w.start.tzinfo is UTC
    assert no_network == []


def test_unknown_city_fails_offline_instead_of_asking_a_geocoder(no_network):
    raw = (CARRIERS / "cogent3.eml").read_bytes().replace(b"Minneapolis, MN", b"Xyzzyville, QQ")
    result = carrier_notice_parse(raw, provider="cogent")
    assert result.windows == []
    assert any("Xyzzyville" in p and "geocoding is disabled" in p for p in result.problems), result.problems
    assert no_network == []


def test_llm_fallback_stays_off_even_when_configured(no_network, monkeypatch):
    monkeypatch.setenv("PARSER_OPENAI_API_KEY", "sk-not-a-real-key")
    raw = (b"From: someone@carrier.example\r\nSubject: hello\r\nDate: Mon, 1 Mar 2026 10:00:00 +0000\r\n\r\n"
           b"no maintenance here\r\n")
    result = carrier_notice_parse(raw, provider="zayo")
    assert result.windows == [] and result.problems
    assert no_network == []


def test_unknown_sender_and_parser_are_reported():
    # Sparkle's e-mail comes from a forwarding address: without its parser, nothing can be read
    result = carrier_notice_parse((CARRIERS / "sparkle1.eml").read_bytes())
    assert result.windows == []
    assert result.problems[0].startswith("no parser for sender")
    result = carrier_notice_parse((CARRIERS / "sparkle1.eml").read_bytes(), provider="no-such-carrier")
    assert result.windows == [] and "unknown parser 'no-such-carrier'" in result.problems[0]


def test_plain_invitation_is_kept_as_a_plain_event_with_a_warning():
    # Colt's e-mail also carries an Outlook invitation without X-MAINTNOTE properties
    result = carrier_notice_parse((CARRIERS / "colt3.eml").read_bytes())
    (w,) = result.windows
    assert w.bcop is False and result.parser == "icalendar (plain event in e-mail)"
    assert w.start == utc(2021, 8, 6, 21) and w.objects == ()
    assert any(p.startswith("no parser for sender change@example.com") for p in result.problems)
