"""Answers the fuzzing found wrong (the API's and the pages'), each pinned: a 500 or a body that broke the schema."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("value", ["2026-13-01T00:00:00Z", "2026-03-01T25:00:00Z", "0001-01-01T00:00:00+01:00"])
def test_impossible_maintenance_window_times_are_400(admin_client, value):
    for name in ("start", "end"):
        response = admin_client.get("/api/v1/maintenance/windows", {name: value})
        assert response.status_code == 400, (name, value, response.content[:300])
        assert name in response.json()


@pytest.mark.parametrize("value", ["2026-06-04T16:21:19-21:14", "2026-03-01T12:00:00+23:59"])
def test_maintenance_window_times_with_offsets_postgresql_refuses_are_read_in_utc(admin_client, value):
    # Python accepts zone offsets up to 23:59, PostgreSQL only to 15:59: passed on as they were, a 500.
    for name in ("start", "end"):
        assert admin_client.get("/api/v1/maintenance/windows", {name: value}).status_code == 200


NULLABLE = {
    "FeedToken": ("site", "carrier", "created_by"), "FeedTokenCreated": ("site", "carrier", "created_by"),
    "WindowList": ("carrier",), "WindowDetail": ("carrier", "author", "carrier_notice", "notification"),
    "Event": ("user", "carrier_notice", "notification"),
    "CarrierNotice": ("uploaded_by",), "FindingList": ("acknowledged_by",), "FindingDetail": ("acknowledged_by",),
    "FindingEvent": ("user",), "IncidentList": ("acknowledged_by",), "IncidentEvent": ("user",),
    "Silence": ("author", "expired_by"),
}


def test_fields_that_can_be_empty_are_nullable_in_the_schema(admin_client):
    # A window without a carrier, a token for every site, a finding nobody acknowledged answer null where the
    # schema said "string": clients generated from the schema would refuse these answers.
    schema = admin_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    wrong = [(component, name) for component, names in NULLABLE.items() for name in names
             if schema["components"]["schemas"][component]["properties"][name].get("nullable") is not True]
    assert wrong == []
    created = admin_client.post("/api/v1/maintenance/feed-tokens", {"name": "all sites"},
                                content_type="application/json")
    assert created.status_code == 201 and created.json()["site"] is None
    window = admin_client.post("/api/v1/maintenance/windows", {
        "reference": "CHG-9", "start": "2026-03-01T00:00:00Z", "end": "2026-03-01T02:00:00Z"},
        content_type="application/json")
    assert window.status_code == 201, window.content[:300]
    assert window.json()["carrier"] is None


def test_a_routing_rule_recipient_that_is_not_text_is_a_400(admin_client):
    # validate_email() raised TypeError on a number: a 500.
    response = admin_client.post("/api/v1/routing-rules", {"name": "noc", "recipients": [42]},
                                 content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert "recipients" in response.json()


def test_a_malformed_maintenance_affect_is_a_400_naming_the_format(admin_client):
    # The error message held "{label, impact}", which DRF's str.format took for a placeholder: a KeyError, a 500.
    response = admin_client.post("/api/v1/maintenance/windows", {
        "reference": "CHG-1", "start": "2026-03-01T00:00:00Z", "end": "2026-03-01T02:00:00Z", "affects": [7]},
        content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert "must be a label or {label, impact}" in str(response.json()["affects"])
    response = admin_client.post("/api/v1/maintenance/windows", {
        "reference": "CHG-2", "start": "2026-03-01T00:00:00Z", "end": "2026-03-01T02:00:00Z",
        "affects": ["geant\x00par"]}, content_type="application/json")
    assert response.status_code == 400, response.content[:300]


def test_a_path_hop_with_a_nul_byte_is_a_400(admin_client):
    from wanmon.inventory.models import Site

    Site.objects.create(code="CERN", name="CERN")
    Site.objects.create(code="FZK", name="KIT")
    # PostgreSQL text cannot hold NUL: looking the hop up failed in the database, a 500.
    response = admin_client.post("/api/v1/paths/", {"src": "CERN", "dst": "FZK", "hops": ["geant\x00par"]},
                                 content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert any(name.startswith("hops") for name in response.json())  # hops[0], from the JSON parser


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "a\x00b"])
def test_dates_at_the_edges_and_nul_bytes_in_parameters_are_a_400_naming_them(admin_client, value):
    # year 1 or 9999: a range or lead time computed from them overflowed (OverflowError); NUL: a DataError
    response = admin_client.get("/api/v1/maintenance/windows", {"start": value})
    assert response.status_code == 400 and "start" in response.json()
    page = admin_client.get("/maintenance/", {"date": value})
    assert page.status_code == 400 and "?date" in page.content.decode()


@pytest.mark.parametrize("duration_s", [2**64, 2**62, 1e300])
def test_a_silence_too_long_to_compute_is_a_400_naming_duration_s(admin_client, duration_s):
    response = admin_client.post("/api/v1/silences", {"matchers": {"site": "CERN"},
                                                      "comment": "fuzz", "duration_s": duration_s},
                                 content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert "duration_s" in response.json()


def test_deeply_nested_json_is_a_400(admin_client):
    response = admin_client.post("/api/v1/silences", "[" * 100_000 + "]" * 100_000, content_type="application/json")
    assert response.status_code == 400 and "nested deeper than 64" in response.json()["detail"]
    response = admin_client.post("/api/v1/silences", '{"a":' * 70 + "1" + "}" * 70, content_type="application/json")
    assert response.status_code == 400 and "nested deeper than 64" in str(response.json())


GUARD = "wanmon.core.guard.InputGuardMiddleware"


@pytest.mark.parametrize(("url", "others", "name", "value", "year"), [
    ("/", {}, "at", "0001-01-01T00:00:00+01:00", 1),
    ("/map/", {}, "at", "9999-12-31T23:59:59-14:00", 9999),
    ("/explore/", {"metric": "throughput_bps", "aggregate": "avg"}, "start", "0001-01-01T00:00:00+01:00", 1),
    ("/explore/", {"metric": "throughput_bps", "aggregate": "avg"}, "end", "9999-12-31T23:59:59-14:00", 9999),
    ("/maintenance/", {}, "date", "0001-01-01", 1),
    ("/maintenance/", {"view": "month"}, "date", "9999-12-31", 9999),
])
@pytest.mark.parametrize("guarded", [True, False])
def test_pages_refuse_dates_at_the_edges_themselves_with_a_400_naming_them(settings, admin_client, url, others, name,
                                                                             value, year, guarded):
    # The input guard answers these first; a page reads its own dates and refuses them too (in UTC year 1 at
    # +01:00 is year 0, 9999 at -14:00 year 10000: an OverflowError, a 500, where the guard is not in front).
    if not guarded:
        settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != GUARD]
    response = admin_client.get(url, {**others, name: value})
    assert response.status_code == 400, response.content[:300]
    text = response.content.decode()
    assert name in text and f"year {year} is outside the years wanmon accepts" in text


def test_a_time_in_the_basic_iso_format_at_the_edges_is_a_400(admin_client):
    # Python reads 99991231T235959-14:00 as well as 9999-12-31T23:59:59-14:00, the guard did not: a 500 on the
    # overview, whose ``at`` it is.
    for value in ("99991231T235959-14:00", "00010101T000000+01:00"):
        response = admin_client.get("/", {"at": value})
        assert response.status_code == 400, response.content[:300]
        assert "?at" in response.content.decode()


def test_a_silence_the_service_refuses_is_shown_on_the_page_form(admin_client):
    # The service refused the matchers (an unknown finding code), a name the page's form has no field for: Django's
    # add_error raised ValueError, a 500.
    response = admin_client.post("/silences/", {"code": "NO_SUCH_CODE", "comment": "fuzz", "duration_s": 3600})
    assert response.status_code == 200
    assert "matchers: unknown finding code &#x27;NO_SUCH_CODE&#x27;" in response.content.decode()


@pytest.mark.parametrize("target", ["1", "home", "https://evil.example/x", "//evil.example/x"])
def test_a_next_that_is_not_a_path_of_the_site_goes_back_to_the_pages_own_place(admin_client, target):
    # "Test now" redirected to next=1 with Django's redirect(), which took the bare word for a view name: a 500.
    # Every form with a way back reads it through core.pages.next_url: a path of this site, or the page's fallback.
    tested = admin_client.post("/tests/now", {"next": target, "pair": "no pair", "kind": "throughput"})
    assert (tested.status_code, tested["Location"]) == (302, "/")
    preferences = admin_client.post("/preferences/", {"next": target, "time_zone": "UTC"})
    assert (preferences.status_code, preferences["Location"]) == (302, "/")
    assert admin_client.post("/tests/now", {"next": "/paths/CERN/FZK/", "pair": "x"})["Location"] == "/paths/CERN/FZK/"
