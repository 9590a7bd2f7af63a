"""The dashboard in a real browser (system Chromium driven by Playwright) against a live server.

Data comes from the scenario corpus replayed with ``--keep`` (reverse-path loss through a shared
carrier, window-limited ASGC) plus a CERN <-> RAL scenario with SNMP counters, a trunk, maintenance
and a route change, the incidents the alerting pipeline makes of them and a silence. Every page load
(and every click that loads something) records every request, console message and uncaught exception
and fails on a console error, an exception, a failed request, an answer >= 400 that the test did not
provoke on purpose, or a request that leaves 127.0.0.1/localhost. Screenshots at 1366x768 go to
``$WANMON_ARTIFACTS_DIR/screenshots`` (default ``var/screenshots``) for the CI artifacts.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from tests.dashboard import scenario_ral
from wanmon.core.permissions import ROLE_GROUPS
from wanmon.dashboard import constants as k

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1366, "height": 768}
SHOTS = Path(os.environ.get("WANMON_ARTIFACTS_DIR") or ROOT / "var") / "screenshots"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
AT = "2026-03-01T12:00:00Z"
# Generous: on a loaded 2-core CI machine plotly.js alone can take seconds to parse and draw.
TIMEOUT_MS = 30_000
PASSWORD = "browser-test-pass-1"
CORPUS = [ROOT / "tests" / "scenarios" / "reverse-path-loss-fzk.yaml", ROOT / "tests" / "scenarios" /
          "window-limited-asgc.yaml"]

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing: run scripts/setup (as root)"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture(scope="module")
def browser(django_db_blocker) -> Iterator:
    # Playwright's sync API keeps an event loop in this thread; the ORM calls of the tests are sync code.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        yield chromium
    finally:
        chromium.close()
        playwright.stop()
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous
        # Transactional tests end with a flush, which also empties the role groups that migration
        # core/0002_roles created: give them back to the test modules that follow.
        with django_db_blocker.unblock():
            for name in ROLE_GROUPS:
                Group.objects.get_or_create(name=name)


@pytest.fixture
def site(live_server, tmp_path, django_user_model):
    """The corpus and the RAL scenario replayed with --keep, their incidents, a silence; an operator and a viewer."""
    from wanmon.alerts.services import alerts_process
    from wanmon.alerts.silences import silence_create

    for scenario in [*CORPUS, scenario_ral.write(tmp_path)]:
        call_command("replay", str(scenario), "--keep", "--step", "30", stdout=io.StringIO())  # as tests/dashboard
    users = {}
    for name, group in (("operator", "operator"), ("viewer", "viewer")):
        users[name] = django_user_model.objects.create_user(name, password=PASSWORD)
        users[name].groups.add(Group.objects.get_or_create(name=group)[0])
    # The alerting pipeline groups the open findings into incidents (no e-mail: nothing dispatched).
    alerts_process(now=datetime(2026, 3, 1, 12, 1, tzinfo=UTC), flush=True, dispatch=False)
    silence_create(author=users["operator"], matchers={"code": "TRUNK_IMBALANCE"}, now=timezone.now(),
                   duration_s=86400, comment="ticket NOC-41: Janet rebalancing ral-lag")
    return live_server


class Browser:
    """A logged-in tab that records every request URL, every script error and every failed request.

    ``check`` (run by ``open`` and after every click that loads something) fails on a console error, an
    uncaught exception, a request that failed or was answered >= 400 (except refusals announced with
    ``expect_refusal``) and a request that left 127.0.0.1/localhost.
    """

    def __init__(self, chromium, base_url: str, username: str):
        self.base = base_url
        self.context = chromium.new_context(viewport=VIEWPORT, locale="en-GB", timezone_id="UTC")
        self.context.set_default_timeout(TIMEOUT_MS)
        self.context.set_default_navigation_timeout(TIMEOUT_MS)
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.expected: dict[str, int] = {}  # URL -> status of a refusal the test provokes on purpose
        self.refused: list[tuple[str, int]] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        self.page.on("console", self._console)
        self.page.on("requestfailed", self._failed)
        self.page.on("response", self._response)
        self.page.goto(f"{self.base}/accounts/login/")
        self.page.fill("#id_username", username)
        self.page.fill("#id_password", PASSWORD)
        self.page.click("button[type=submit]")
        self.page.wait_for_url(f"{self.base}/")
        self.page.wait_for_load_state("networkidle")
        self.check("login")

    def _console(self, msg) -> None:
        if msg.type != "error":
            return
        # Chromium logs "Failed to load resource: ... 403" for a refusal the test asked for: that one is expected.
        if (msg.location or {}).get("url") in self.expected:
            return
        self.errors.append(f"console: {msg.text} ({(msg.location or {}).get('url')})")

    def _failed(self, request) -> None:
        failure = request.failure or ""
        # The minute refresh fetch can be in flight when a test navigates away: the browser aborts it.
        if "ERR_ABORTED" in failure and "format=json" in request.url:
            return
        self.errors.append(f"request failed: {request.method} {request.url}: {failure}")

    def _response(self, response) -> None:
        if response.status < 400:
            return
        if self.expected.get(response.url) == response.status:
            self.refused.append((response.url, response.status))
            return
        self.errors.append(f"HTTP {response.status}: {response.request.method} {response.url}")

    def expect_refusal(self, path: str, status: int) -> None:
        """Answers ``status`` to ``path`` are provoked by the test (it asserts them in ``refused``), not faults."""
        self.expected[f"{self.base}{path}"] = status

    def check(self, what: str) -> None:
        """No script error, no failed or refused request, nothing fetched from another host (since the last check)."""
        errors, self.errors = self.errors, []
        assert errors == [], f"{what}: {errors}"
        self.assert_all_local(what)

    def open(self, path: str, shot: str | None = None):
        """Load a page, wait for its charts, check that nothing failed or left this machine; screenshot it."""
        self.requests.clear()
        response = self.page.goto(f"{self.base}{path}", wait_until="networkidle")
        assert response is not None and response.status == 200, f"{path}: HTTP {response and response.status}"
        self.wait_for_charts()
        self.check(path)
        if shot:
            self.page.screenshot(path=str(SHOTS / f"{shot}.png"))
            self.page.screenshot(path=str(SHOTS / f"{shot}-full.png"), full_page=True)
        return response

    def wait_for_charts(self) -> None:
        self.page.wait_for_function(
            "() => [...document.querySelectorAll('[data-figure]')].every(el => el.hasAttribute('data-drawn'))",
            timeout=TIMEOUT_MS,
        )

    def assert_all_local(self, what: str) -> None:
        assert self.requests, f"{what}: no request recorded"
        foreign = sorted({url for url in self.requests if urlsplit(url).hostname not in LOCAL_HOSTS})
        assert foreign == [], f"{what}: requests left 127.0.0.1: {foreign}"

    def figure_data(self, element_id: str) -> list[dict]:
        return self.page.evaluate(f"() => document.getElementById('{element_id}').data")

    def charts(self) -> dict[str, dict]:
        """Per chart: data points in its traces (time marks aside) and the marks plotly drew for them."""
        return self.page.evaluate(
            """() => Object.fromEntries([...document.querySelectorAll('[data-figure]')].map(el => [el.id, {
                points: (el.data || []).filter(t => t.yaxis !== 'y2')
                    .reduce((n, t) => n + (t.y || []).filter(v => v !== null && Number.isFinite(v)).length, 0),
                drawn: el.querySelectorAll('.scatterlayer .trace .js-line, .scatterlayer .trace .point, '
                                           + '.barlayer .point').length,
                svg: el.querySelector('.main-svg') !== null,
            }]))"""
        )

    def click_mark(self, chart_id: str, kind: str, url: str) -> None:
        """Click with the mouse (as a user does) on the marker of the time mark linking to ``url``."""
        box = self.page.evaluate(
            """([id, kind, url]) => {
                const el = document.getElementById(id);
                for (const group of el.querySelectorAll('.scatterlayer .trace')) {
                    const trace = group.__data__ && group.__data__[0] && group.__data__[0].trace;
                    if (!trace || trace.meta !== kind) continue;
                    const index = trace.customdata.indexOf(url);
                    const point = group.querySelectorAll('path.point')[index];
                    if (index < 0 || !point) return null;
                    const r = point.getBoundingClientRect();
                    return {x: r.x + r.width / 2, y: r.y + r.height / 2};
                }
                return null;
            }""",
            [chart_id, kind, url],
        )
        assert box is not None, f"{chart_id}: no {kind} marker for {url}"
        self.page.mouse.move(box["x"], box["y"])
        self.page.mouse.click(box["x"], box["y"])

    def close(self):
        self.context.close()


@pytest.fixture
def operator_tab(browser, site):
    tab = Browser(browser, site.url, "operator")
    yield tab
    tab.close()


@pytest.fixture
def viewer_tab(browser, site):
    tab = Browser(browser, site.url, "viewer")
    yield tab
    tab.close()


def _rows(sql: str, params=()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _tcp_values(src: str, dst: str, start: str, end: str) -> list[float]:
    return [r[0] for r in _rows(
        """SELECT throughput_bps FROM measurements_throughputtest t JOIN inventory_site s ON s.id = t.src_id
           JOIN inventory_site d ON d.id = t.dst_id
           WHERE s.code = %s AND d.code = %s AND t.protocol = 'tcp' AND t.error IS NULL
             AND t.time >= %s AND t.time < %s ORDER BY t.time, t.id""", [src, dst, start, end])]


def _rgb(colour: str) -> str:
    value = colour.lstrip("#")
    return "rgb({}, {}, {})".format(*(int(value[i : i + 2], 16) for i in (0, 2, 4)))


def test_every_page_shows_the_data_and_loads_nothing_from_outside(operator_tab):
    finding_id = _rows("SELECT id FROM diagnosis_finding WHERE code = 'SHARED_EQUIPMENT_SUSPECT' AND rank = 1")[0][0]
    incident_id = _rows("SELECT id FROM alerts_incident WHERE code = 'SHARED_EQUIPMENT_SUSPECT'")[0][0]
    window_id = _rows("SELECT id FROM maintenance_maintenancewindow WHERE reference = 'JANET-CHG-1001'")[0][0]
    # page name, URL, charts that must show data points (every chart on the page must be drawn)
    pages = [
        ("overview", f"/?at={AT}", set()),
        ("map", f"/map/?at={AT}", {"chart-map"}),
        # FZK->CERN names no port on its hops: its utilisation and error charts say "no data"
        ("path-fzk-cern", f"/paths/FZK/CERN/?end={AT}", {"chart-throughput", "chart-loss", "chart-delay"}),
        ("path-cern-asgc-both", f"/paths/CERN/ASGC/both/?end={AT}", {"chart-throughput", "chart-loss",
                                                                      "chart-delay"}),
        ("path-cern-ral-6h", f"/paths/CERN/RAL/?range=6h&end={AT}", {"chart-throughput", "chart-loss", "chart-delay",
                                                                     "chart-utilisation"}),
        # janet-lon:xe-4/0/0's receive errors are RAL->CERN's, which arrives by it
        ("path-ral-cern-6h", f"/paths/RAL/CERN/?range=6h&end={AT}", {"chart-throughput", "chart-delay",
                                                                     "chart-utilisation", "chart-errors"}),
        ("path-cern-ral-both-7d", f"/paths/CERN/RAL/both/?range=7d&end={AT}", {"chart-throughput", "chart-loss",
                                                                               "chart-delay", "chart-utilisation"}),
        ("equipment-janet-lon", f"/equipment/janet-lon/?range=6h&end={AT}", {"chart-traffic", "chart-errors"}),
        ("interface-janet-lon-xe-4-0-0", f"/equipment/janet-lon/interfaces/xe-4/0/0/?range=6h&end={AT}",
         {"chart-traffic", "chart-utilisation", "chart-errors"}),
        ("trunk-ral-lag", f"/trunks/ral-lag/?range=6h&end={AT}", {"chart-members", "chart-utilisation",
                                                                  "chart-errors"}),
        ("equipment-list", "/equipment/", set()),
        ("findings", "/findings/", set()),
        ("finding-detail", f"/findings/{finding_id}/", set()),
        ("explore", f"/explore/?metric=throughput_bps&aggregate=avg&range=24h&end={AT}&group_by=path",
         {"chart-explore"}),
        ("preferences", "/preferences/", set()),
        ("incidents", "/incidents/", set()),
        # its charts come from the dashboard (/incidents/<id>/charts/), fetched by the page
        ("incident-detail", f"/incidents/{incident_id}", {"chart-pair-0-throughput", "chart-pair-0-loss",
                                                          "chart-pair-1-throughput", "chart-pair-1-loss"}),
        ("incident-charts", f"/incidents/{incident_id}/charts/", {"chart-pair-0-throughput", "chart-pair-0-loss"}),
        ("silences", "/silences/", set()),
        ("maintenance-calendar", "/maintenance/?view=month&date=2026-03-01", set()),
        ("maintenance-window", f"/maintenance/{window_id}/", set()),
    ]
    for name, path, with_data in pages:
        operator_tab.open(path, shot=name)  # fails on a script error, a failed request or one leaving the host
        # the page itself, its stylesheet, script and (with charts) plotly.js were all fetched locally
        assert any("/static/css/wanmon.css" in url for url in operator_tab.requests), name
        charts = operator_tab.charts()
        assert set(charts) >= with_data, name
        if charts:
            assert any(url.endswith("/static/vendor/plotly/plotly.min.js") for url in operator_tab.requests), name
        for chart, state in charts.items():
            assert state["svg"], f"{name}: {chart} not drawn"
            if state["points"]:
                assert state["drawn"] > 0, f"{name}: {chart} has {state['points']} points but none drawn"
        assert {chart for chart, state in charts.items() if state["points"]} >= with_data, (name, charts)
    # the alerting and maintenance pages show the data too
    page = operator_tab.page
    operator_tab.open("/silences/")
    assert "NOC-41" in page.inner_text("main")
    operator_tab.open("/maintenance/?view=month&date=2026-03-01")
    assert "JANET-CHG-1001" in page.inner_text("main")
    operator_tab.open("/incidents/")
    assert "geant-fra" in page.inner_text("main")

    # with data on every page: some numbers that must be there
    operator_tab.open(f"/paths/CERN/RAL/?range=6h&end={AT}")
    assert "Bandwidth-delay product\t50.5 MB" in page.inner_text("#derived")
    util = {t["name"]: t for t in operator_tab.figure_data("chart-utilisation")}
    assert max(v for v in util["janet-lon:xe-4/0/0 out"]["y"] if v is not None) > 0.65
    operator_tab.open(f"/explore/?metric=throughput_bps&aggregate=avg&range=24h&end={AT}&group_by=path")
    assert {t["name"] for t in operator_tab.figure_data("chart-explore")} >= {"CERN→FZK", "FZK→CERN", "CERN→RAL"}
    csv = page.request.get(operator_tab.base + page.get_attribute("#csv-download", "href"))
    assert csv.ok and csv.text().startswith("time,src,dst,throughput_bps_avg")

    # the time zone is explicit and follows the user's preference
    assert page.inner_text(".topbar .tz") == "Times in UTC"
    operator_tab.open("/preferences/")
    page.select_option("#id_time_zone", "Europe/Zurich")
    page.click("#preferences-form button[type=submit]")
    page.wait_for_load_state("networkidle")
    operator_tab.open(f"/paths/FZK/CERN/?range=6h&end={AT}")
    assert page.inner_text(".topbar .tz") == "Times in Europe/Zurich"
    layout = page.evaluate("() => document.getElementById('chart-throughput').layout")
    assert layout["xaxis"]["title"]["text"] == "time (Europe/Zurich)"
    assert layout["xaxis"]["range"] == ["2026-03-01 07:00:00", "2026-03-01 13:00:00"]


# Expected colours as of 12:00, from the scenarios' numbers (capacity 1 Gb/s unless noted):
EXPECTED_STATUS = {
    ("CERN", "FZK"): k.OK,  # ~900 Mb/s, no loss, no finding
    ("CERN", "CNAF"): k.OK,  # ~950 Mb/s
    ("CERN", "IN2P3"): k.OK,
    ("IN2P3", "CERN"): k.OK,
    ("FZK", "CERN"): k.CRITICAL,  # tens of Mb/s and 3.4 % probe loss
    ("CNAF", "CERN"): k.CRITICAL,  # 4 % of capacity, ASYMMETRIC_PATH and LOSS_LIMITED
    ("CERN", "ASGC"): k.WARNING,  # 107 Mb/s (11 %), WINDOW_LIMITED
    ("ASGC", "CERN"): k.WARNING,
    ("CERN", "RAL"): k.WARNING,  # 8.5 of 20 Gb/s (42 %), LOSS_LIMITED warning
    ("RAL", "CERN"): k.OK,  # 12 of 20 Gb/s
}


def test_grid_colours_match_the_data(operator_tab):
    operator_tab.open(f"/?at={AT}", shot="overview-grid")
    page = operator_tab.page
    cells = page.query_selector_all("#health-grid a.cell")
    seen = {}
    for cell in cells:
        key = (cell.get_attribute("data-src"), cell.get_attribute("data-dst"))
        status = cell.get_attribute("data-status")
        seen[key] = status
        background = cell.evaluate("el => getComputedStyle(el).backgroundColor")
        assert background == _rgb(k.STATUS_STYLE[status][0]), key
        latest = _rows(
            """SELECT throughput_bps FROM measurements_throughputtest t JOIN inventory_site s ON s.id = t.src_id
               JOIN inventory_site d ON d.id = t.dst_id WHERE s.code = %s AND d.code = %s AND protocol = 'tcp'
               AND t.time <= %s ORDER BY t.time DESC, t.id DESC LIMIT 1""", [*key, AT])
        assert float(cell.get_attribute("data-throughput-bps")) == pytest.approx(latest[0][0], abs=1), key
    assert seen == EXPECTED_STATUS
    # the legend shows the same colours the cells use
    for status in set(seen.values()):
        swatch = page.query_selector(f'#grid-legend [data-status="{status}"] .sw')
        assert swatch.evaluate("el => getComputedStyle(el).backgroundColor") == _rgb(k.STATUS_STYLE[status][0])
    # a click on a cell opens that path at the grid's time
    page.click('#health-grid a.cell[data-src="FZK"][data-dst="CERN"]')
    page.wait_for_url(re.compile(r"/paths/FZK/CERN/\?end=2026-03-01T12"))
    operator_tab.wait_for_charts()
    operator_tab.check("grid click")
    assert page.get_attribute('[data-direction="FZK-CERN"] [data-status]', "data-status") == k.CRITICAL


def test_chart_traces_match_the_data(operator_tab):
    operator_tab.open(f"/paths/FZK/CERN/?end={AT}")
    traces = {t["name"]: t for t in operator_tab.figure_data("chart-throughput")}
    start = "2026-02-28T12:00:00Z"
    assert traces["FZK→CERN"]["y"] == _tcp_values("FZK", "CERN", start, AT)
    assert len(traces["FZK→CERN"]["y"]) >= 12
    probes = [r[0] / r[1] for r in _rows(
        """SELECT packets_lost, packets_sent FROM measurements_owamptest t JOIN inventory_site s ON s.id = t.src_id
           JOIN inventory_site d ON d.id = t.dst_id WHERE s.code = 'FZK' AND d.code = 'CERN' AND packets_sent > 0
           AND t.time >= %s AND t.time < %s ORDER BY t.time, t.id""", [start, AT])]
    loss = {t["name"]: t for t in operator_tab.figure_data("chart-loss")}
    assert loss["FZK→CERN one-way probes"]["y"] == pytest.approx(probes)
    markers = {t.get("meta"): t for t in operator_tab.figure_data("chart-throughput") if t.get("yaxis") == "y2"}
    assert "ASYMMETRIC_PATH" in markers["finding"]["text"]

    operator_tab.open(f"/paths/CERN/ASGC/both/?end={AT}")
    names = {t["name"] for t in operator_tab.figure_data("chart-throughput")}
    assert {"CERN→ASGC", "ASGC→CERN"} <= names

    operator_tab.open(f"/map/?at={AT}")
    lines = {t["meta"]: t["line"]["color"] for t in operator_tab.figure_data("chart-map") if t.get("mode") == "lines"}
    assert {key: lines[f"{key[0]}->{key[1]}"] for key in EXPECTED_STATUS} == {
        key: k.STATUS_STYLE[status][0] for key, status in EXPECTED_STATUS.items()}
    assert operator_tab.page.inner_text("#shared-elements").count("geant-fra") == 1

    operator_tab.open(f"/trunks/ral-lag/?range=6h&end={AT}")
    bars = {t["name"]: dict(zip(t["x"], t["y"], strict=True)) for t in operator_tab.figure_data("chart-members")}
    assert bars["out"]["janet-lon:xe-4/0/0"] == pytest.approx(0.70, abs=0.02)
    assert bars["out"]["janet-lon:xe-4/1/0"] == pytest.approx(0.10, abs=0.01)


def test_operator_acknowledges_and_viewer_is_refused(operator_tab, viewer_tab):
    finding_id = _rows("SELECT id FROM diagnosis_finding WHERE code = 'TRUNK_IMBALANCE'")[0][0]
    detail = f"/findings/{finding_id}/"

    viewer_tab.open(detail, shot="finding-detail-viewer")
    assert viewer_tab.page.query_selector("#acknowledge") is None
    assert "operator role" in viewer_tab.page.inner_text("#acknowledge-refused")
    viewer_tab.expect_refusal(f"{detail}acknowledge/", 403)
    status = viewer_tab.page.evaluate(
        """async (url) => {
            const token = document.cookie.split('; ').find(c => c.startsWith('csrftoken=')).split('=')[1];
            const r = await fetch(url, {method: 'POST', headers: {'X-CSRFToken': token,
                'Content-Type': 'application/x-www-form-urlencoded'}, body: 'note=viewer', credentials: 'same-origin'});
            return r.status;
        }""",
        f"{detail}acknowledge/",
    )
    assert status == 403
    assert viewer_tab.refused == [(f"{viewer_tab.base}{detail}acknowledge/", 403)]
    viewer_tab.check("refused acknowledge")  # the refusal was the only error
    assert _rows("SELECT status FROM diagnosis_finding WHERE id = %s", [finding_id])[0][0] == "open"

    operator_tab.open(detail)
    page = operator_tab.page
    page.fill("#id_note", "ticket NOC-42, Janet informed")
    page.click("#acknowledge")
    page.wait_for_load_state("networkidle")
    assert page.inner_text("#finding-status") == "acknowledged"
    assert "acknowledged" in page.inner_text(".messages")
    assert "ticket NOC-42" in page.inner_text("#events")
    operator_tab.check("acknowledge")
    page.screenshot(path=str(SHOTS / "finding-acknowledged.png"))
    assert _rows("""SELECT f.status, u.username FROM diagnosis_finding f JOIN auth_user u ON u.id = f.acknowledged_by_id
                    WHERE f.id = %s""", [finding_id]) == [("acknowledged", "operator")]


def _acknowledge_here(tab: Browser, finding_id: int, note: str, shot: str) -> None:
    """On a finding's page: the operator acknowledges it; the page and the database say so."""
    page = tab.page
    assert page.get_attribute("#finding-detail", "data-finding") == str(finding_id)
    assert page.inner_text("#finding-status") == "open"
    page.fill("#id_note", note)
    with page.expect_navigation(url=re.compile(rf"/findings/{finding_id}/$")):
        page.click("#acknowledge")
    page.wait_for_load_state("networkidle")
    tab.check(f"acknowledge {finding_id}")
    assert page.inner_text("#finding-status") == "acknowledged"
    assert note in page.inner_text("#events")
    page.screenshot(path=str(SHOTS / f"{shot}.png"))
    assert _rows("""SELECT f.status, u.username, f.acknowledged_at IS NOT NULL FROM diagnosis_finding f
                    JOIN auth_user u ON u.id = f.acknowledged_by_id WHERE f.id = %s""",
                 [finding_id]) == [("acknowledged", "operator", True)]


def test_click_through_grid_path_finding_acknowledge(operator_tab):
    page = operator_tab.page
    # a red cell of the grid ...
    operator_tab.open(f"/?at={AT}")
    cell = '#health-grid a.cell[data-src="CNAF"][data-dst="CERN"]'
    assert page.get_attribute(cell, "data-status") == k.CRITICAL
    assert page.eval_on_selector(cell, "el => getComputedStyle(el).backgroundColor") == _rgb(
        k.STATUS_STYLE[k.CRITICAL][0])
    page.click(cell)
    # ... opens its path at the grid's time, charts drawn ...
    page.wait_for_url(re.compile(r"/paths/CNAF/CERN/\?end=2026-03-01T12"))
    page.wait_for_load_state("networkidle")
    operator_tab.wait_for_charts()
    operator_tab.check("path from the grid")
    assert operator_tab.charts()["chart-throughput"]["points"] > 0
    page.screenshot(path=str(SHOTS / "click-through-path.png"))
    # ... which lists the path's findings: the open LOSS_LIMITED one opens its page ...
    finding_id = _rows("""SELECT id FROM diagnosis_finding WHERE code = 'LOSS_LIMITED' AND status = 'open'
                          AND subject->>'src' = 'CNAF' AND subject->>'dst' = 'CERN'""")[0][0]
    page.click(f'#path-details a.code[href="/findings/{finding_id}/"]')
    page.wait_for_url(re.compile(rf"/findings/{finding_id}/$"))
    page.wait_for_load_state("networkidle")
    operator_tab.check("finding from the path")
    # ... where the operator acknowledges it.
    _acknowledge_here(operator_tab, finding_id, "ticket NOC-43, CNAF informed", "click-through-acknowledged")

    # The same from a chart: a click on a finding's marker on the time axis opens that finding.
    operator_tab.open(f"/paths/CERN/RAL/?range=6h&end={AT}")
    errors_id = _rows("SELECT id FROM diagnosis_finding WHERE code = 'INTERFACE_ERRORS'")[0][0]
    operator_tab.click_mark("chart-throughput", "finding", f"/findings/{errors_id}/")
    page.wait_for_url(re.compile(rf"/findings/{errors_id}/$"))
    page.wait_for_load_state("networkidle")
    operator_tab.check("finding from a chart marker")
    _acknowledge_here(operator_tab, errors_id, "ticket NOC-44, optics cleaned", "marker-click-acknowledged")


def test_auto_refresh_updates_the_page_without_a_reload(operator_tab):
    from wanmon.diagnosis.models import Finding

    operator_tab.open(f"/?at={AT}")
    page = operator_tab.page
    navigations: list[str] = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url) if frame == page.main_frame else None)
    page.evaluate("() => { window.__notReloaded = true; }")
    assert page.get_attribute('#health-grid a.cell[data-src="RAL"][data-dst="CERN"]', "data-status") == k.OK
    # the diagnosis finds something new meanwhile
    seen = datetime(2026, 3, 1, 11, 55, tzinfo=UTC)
    Finding.objects.create(
        code="PATH_DOWN", severity="critical", subject={"src": "RAL", "dst": "CERN"}, subject_key="dst=CERN;src=RAL",
        start=seen - timedelta(minutes=10), end=seen, summary="RAL->CERN: tests cannot connect",
        first_seen_at=seen, last_seen_at=seen,
    )
    operator_tab.requests.clear()
    assert page.evaluate("() => window.wanmon.refresh()") is True
    assert page.evaluate("() => window.__notReloaded") is True
    assert navigations == []
    assert page.get_attribute("#overview", "data-refreshes") == "1"
    assert page.get_attribute('#health-grid a.cell[data-src="RAL"][data-dst="CERN"]', "data-status") == k.CRITICAL
    assert "PATH_DOWN" in page.inner_text("#open-findings")
    assert page.inner_text("#refresh-status").startswith("updated ")
    assert [urlsplit(u).query for u in operator_tab.requests] == [f"at={AT.replace(':', '%3A')}&format=json"]
    operator_tab.check("refresh")
