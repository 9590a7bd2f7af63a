"""What a NOC engineer relies on: onsets, answered parameters, error pages, the explorer's numbers, static weight."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.test import RequestFactory, override_settings

from wanmon.dashboard import constants as k
from wanmon.dashboard.figures import Series, throughput_figure
from wanmon.diagnosis.models import Finding

pytestmark = pytest.mark.django_db
AT = "2026-03-01T12:00:00Z"
# The episode began before the evaluation window that keeps the finding open (06:00-12:00).
ONSET = datetime(2026, 3, 1, 5, 10, tzinfo=UTC)


def test_grid_cell_and_lists_say_since_when(ral_data, operator_client):
    finding = Finding.objects.get(code="LOSS_LIMITED")
    Finding.objects.filter(pk=finding.pk).update(onset=ONSET)
    response = operator_client.get("/", {"at": AT})
    cell = response.context["data"].cells[("CERN", "RAL")]
    assert cell.health.status == k.WARNING and cell.since == ONSET
    html = response.content.decode()
    assert 'data-since="2026-03-01T05:10:00+00:00"' in html
    assert "05:10, 6 h 50 min" in html  # the cell: since 05:10, 6 h 50 min before the grid's instant (12:00)
    # the overview's findings list and the findings page show the onset, not the evaluation window's start
    assert f'data-onset="{ONSET.isoformat()}"' in html
    listing = operator_client.get("/findings/", {"code": "LOSS_LIMITED"}).content.decode()
    assert f'data-onset="{ONSET.isoformat()}"' in listing and "since 01 Mar 05:10" in listing
    detail = operator_client.get(f"/findings/{finding.pk}/").content.decode()
    assert 'id="finding-onset" data-onset="2026-03-01T05:10:00+00:00">2026-03-01 05:10' in detail
    # the path page says since when its direction is amber
    path = operator_client.get("/paths/CERN/RAL/", {"range": "6h", "end": AT}).content.decode()
    assert 'class="since" data-since="2026-03-01T05:10:00+00:00"' in path
    # a finding without onset falls back to its window's start
    other = Finding.objects.get(code="TRUNK_IMBALANCE")
    assert other.onset is None or other.onset <= other.start


def test_bad_parameters_are_answered_in_the_sites_layout(ral_data, operator_client):
    for url, params, text in (
        ("/paths/CERN/RAL/", {"range": "2x"}, "range: &#x27;2x&#x27; is not a span"),
        ("/paths/CERN/RAL/", {"end": "yesterday"}, "end: &#x27;yesterday&#x27; is not a time"),
        ("/", {"site": "CRN"}, "site: unknown site &#x27;CRN&#x27;"),
        ("/", {"at": "noon"}, "at: &#x27;noon&#x27; is not a time"),
        ("/paths/CERN/RAL/", {"start": "2026-03-01T12:00:00Z", "end": "2026-03-01T11:00:00Z"}, "start: must be"),
    ):
        response = operator_client.get(url, params)
        assert response.status_code == 400, (url, params)
        html = response.content.decode()
        assert text in html, (url, params)
        assert 'class="topbar"' in html and 'href="/findings/"' in html  # the navigation
    missing = operator_client.get("/paths/CERN/NOWHERE/")
    assert missing.status_code == 404
    html = missing.content.decode()
    assert "Page not found" in html and 'class="topbar"' in html and "no path between CERN and NOWHERE" in html
    assert len(html) > 1000  # not Django's bare 179-byte page
    api = operator_client.get("/api/v1/no-such-endpoint")
    assert api.status_code == 404 and api["Content-Type"] == "application/json"


def test_any_span_and_exact_start_end(ral_data, operator_client):
    two_days = operator_client.get("/paths/CERN/RAL/", {"range": "2d", "end": AT})
    assert two_days.status_code == 200
    assert two_days.context["range"].bucket_s == 900 or two_days.context["range"].bucket_s == 3600
    zoom = operator_client.get("/paths/CERN/RAL/", {"start": "2026-03-01T10:00:00Z", "end": "2026-03-01T11:00:00Z"})
    figure = zoom.context["figures"]["throughput"]
    assert figure["layout"]["xaxis"]["range"] == ["2026-03-01 10:00:00", "2026-03-01 11:00:00"]
    tcp = next(t for t in figure["data"] if t["name"] == "CERN→RAL")
    assert len(tcp["y"]) == 2  # the tests at 10:00 and 10:30, each drawn (1-minute buckets)
    assert zoom.context["range"].bucket_s == 60
    # the explorer and CSV of the chart cover exactly that hour
    links = figure["layout"]["meta"]["links"]
    assert "start=2026-03-01T10%3A00%3A00Z" in links["explore"] and "end=2026-03-01T11%3A00%3A00Z" in links["csv"]
    assert operator_client.get(links["csv"]).content.decode().count("\n") == 1 + 2


def test_explorer_errors_name_the_unknown_and_summaries_have_the_median(ral_data, operator_client):
    bad = operator_client.get("/explore/", {"metric": "throughput_bps", "aggregate": "avg", "range": "24h", "end": AT,
                                            "src": "CRN"})
    assert bad.status_code == 400
    assert "unknown site &#x27;CRN&#x27;" in bad.content.decode() and "chart-explore" not in bad.content.decode()
    good = operator_client.get("/explore/", {"metric": "throughput_bps", "aggregate": "avg", "range": "2d", "end": AT,
                                             "src": "CERN", "dst": "RAL", "bucket": "1h"})
    assert good.status_code == 200
    (summary,) = good.context["summaries"]
    values = sorted(v for _, v in good.context["result"].series[0]["points"] if v is not None)
    assert summary["median"] == pytest.approx((values[2] + values[3]) / 2)  # six hourly averages
    assert 'data-stat="median"' in good.content.decode()
    started = operator_client.get("/explore/", {"metric": "throughput_bps", "aggregate": "avg",
                                                "start": "2026-03-01T09:00:00Z",
                                                "end": AT, "src": "CERN", "dst": "RAL", "bucket": "1h"})
    assert [p[0].hour for p in started.context["result"].series[0]["points"]] == [9, 10, 11]


def test_log_axis_where_values_span_decades():
    times = [datetime(2026, 3, 1, h, tzinfo=UTC) for h in range(3)]
    # window-limited ASGC: 108 Mb/s under a 10 Gb/s capacity
    from wanmon.dashboard.figures import Level

    asgc = throughput_figure(series=[Series("CERN→ASGC", times, [108e6, 110e6, 0.0])], start=times[0],
                             end=times[-1], tz=UTC, levels=[Level(10e9, "capacity")])
    assert asgc["layout"]["yaxis"]["type"] == "log" and asgc["layout"]["meta"]["log_default"] is True
    healthy = throughput_figure(series=[Series("CERN→FZK", times, [93e9, 91e9, 92e9])], start=times[0],
                                end=times[-1], tz=UTC, levels=[Level(100e9, "capacity")])
    assert "type" not in healthy["layout"]["yaxis"] and healthy["layout"]["meta"]["log_toggle"] is True


def test_collected_static_files_are_hashed_compressed_and_cached_for_a_year(tmp_path):
    with override_settings(STATIC_ROOT=tmp_path, WHITENOISE_USE_FINDERS=False, STORAGES={
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }):
        call_command("collectstatic", "--noinput", verbosity=0)
        from django.templatetags.static import static
        from whitenoise.middleware import WhiteNoiseMiddleware

        url = static("vendor/plotly/plotly.min.js")
        assert url.startswith("/static/vendor/plotly/plotly.min.") and url.endswith(".js") and url.count(".") == 3
        css = static("css/wanmon.css")
        assert css != "/static/css/wanmon.css"
        middleware = WhiteNoiseMiddleware(lambda request: None)
        response = middleware(RequestFactory().get(url, HTTP_ACCEPT_ENCODING="gzip, deflate"))
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert response["Content-Encoding"] == "gzip"
        assert len(body) < 1_600_000  # 4.8 MB of plotly.js on the wire
        assert len(gzip.decompress(body)) > 4_000_000
        max_age = int(response["Cache-Control"].split("max-age=")[1].split(",")[0])
        assert max_age >= 365 * 86400 and "immutable" in response["Cache-Control"]


def test_derived_figures_leave_out_the_maintenance_periods(ral_data, operator_client):
    from django.db import connection

    # during JANET-CHG-1001 (08:00-08:45 on janet-lon, crossed by CERN->RAL) the probes lose 5 %
    with connection.cursor() as cursor:
        cursor.execute("""UPDATE measurements_owamptest SET packets_lost = 30
                          WHERE time >= '2026-03-01T08:00Z' AND time < '2026-03-01T08:45Z'""")
        assert cursor.rowcount > 0
    response = operator_client.get("/paths/CERN/RAL/", {"range": "6h", "end": AT})
    rows = response.context["directions"][0]["derived"]
    derived = {label: value for label, value, _ in rows}
    notes = {label: note for label, _, note in rows}
    # the planned work's loss is not the path's: what is left is the UDP tests' own few datagrams (0-2 of 139 000
    # a test), the loss the diagnosis's estimator leads with
    assert derived["Probe loss"] == "0.00072 %" and "UDP" in notes["Probe loss"]
    mathis = [level for level in response.context["figures"]["throughput"]["layout"]["annotations"]
              if "Mathis" in level.get("text", "")]
    # the line is the UDP loss's (925 Mb/s a stream), never the ~11 Mb/s of the planned work's 5 %
    assert [round(level["y"] / 1e6) for level in mathis] == [925], mathis
