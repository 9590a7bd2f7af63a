"""The NOC pages as an engineer uses them, in system Chromium over the replayed corpus and RAL scenario (the
fixtures of test_dashboard_browser): counters of the right direction, onsets, log toggle and zoom in the URL, a
phone's 390 px, contrast computed from the rendered styles, the 404 page, the explorer's errors and median.
Every load fails on a script error, a refused request or a request leaving 127.0.0.1 (``Browser.check``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.e2e.test_dashboard_browser import AT, SHOTS, Browser, browser, site  # noqa: F401 (fixtures)
from wanmon.diagnosis.models import Finding

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
PHONE = {"width": 390, "height": 844}
ONSET = datetime(2026, 3, 1, 5, 10, tzinfo=UTC)

# WCAG 2 contrast of an element's text on the first opaque background behind it, from the computed styles.
CONTRAST_JS = """(selector) => {
    const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => {
        const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const background = (el) => {
        for (let node = el; node; node = node.parentElement) {
            const c = rgb(getComputedStyle(node).backgroundColor);
            if (c.length === 3 || (c.length === 4 && c[3] === 1)) return c.slice(0, 3);
        }
        return [255, 255, 255];
    };
    return [...document.querySelectorAll(selector)].filter(el => el.offsetParent !== null).map(el => {
        const a = lum(rgb(getComputedStyle(el).color).slice(0, 3)), b = lum(background(el));
        return {text: el.textContent.trim().slice(0, 30), ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)};
    });
}"""


@pytest.fixture
def tab(browser, site):  # noqa: F811 (the imported fixtures)
    Finding.objects.filter(code="LOSS_LIMITED").update(onset=ONSET)
    tab = Browser(browser, site.url, "operator")
    yield tab
    tab.close()


def _trace_names(tab: Browser, chart: str) -> list[str]:
    return [t["name"] for t in tab.figure_data(chart) if t.get("yaxis") != "y2"]


def test_counters_of_the_direction_and_onsets(tab):
    page = tab.page
    # janet-lon:xe-4/0/0 counts 2 CRC errors/s on receive: RAL->CERN arrives by it, CERN->RAL leaves by it
    tab.open(f"/paths/RAL/CERN/?range=6h&end={AT}", shot="noc-path-ral-cern")
    assert "janet-lon:xe-4/0/0 in errors" in _trace_names(tab, "chart-errors")
    assert page.get_attribute('#path-ports tr[data-port="janet-lon:xe-4/0/0"]', "data-side") == "in"
    errors = next(t for t in tab.figure_data("chart-errors") if t["name"] == "janet-lon:xe-4/0/0 in errors")
    assert max(v for v in errors["y"] if v is not None) == pytest.approx(2.0)
    tab.open(f"/paths/CERN/RAL/?range=6h&end={AT}")
    assert not any("errors" in name for name in _trace_names(tab, "chart-errors"))
    assert "No errors or discards" in page.inner_text("#chart-errors")
    assert page.get_attribute('#path-ports tr[data-port="janet-lon:xe-4/0/0"]', "data-side") == "out"
    # the amber CERN->RAL: since 05:10 on the grid (6 h 50 min before 12:00) and on the path page
    tab.open(f"/?at={AT}", shot="noc-overview")
    cell = page.locator('a.cell[data-src="CERN"][data-dst="RAL"]')
    assert cell.get_attribute("data-since") == ONSET.isoformat()
    assert "05:10, 6 h 50 min" in cell.inner_text()
    assert "▲" in cell.inner_text()  # the state without colour
    assert "since 05:10" in page.inner_text("#open-findings")


def test_log_toggle_and_zoom_in_the_address(tab):
    page = tab.page
    tab.open(f"/paths/CERN/RAL/?range=6h&end={AT}")
    chart = "#chart-throughput"
    assert page.evaluate(f"() => document.querySelector('{chart}').layout.yaxis.type") == "linear"
    toggle = page.locator(f"{chart} + .chart-links .log-toggle")
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    assert page.evaluate(f"() => document.querySelector('{chart}').layout.yaxis.type") == "log"
    # explorer and CSV of the same data sit under the chart
    assert page.get_attribute(f"{chart} + .chart-links .chart-explore", "href").startswith("/explore/?metric=")
    # drag across the middle of the plot, as a user zooms: the address gets start and end, no range
    box = page.locator(f"{chart} .nsewdrag").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.25, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.5, y, steps=8)
    page.mouse.up()
    page.wait_for_function("() => new URL(location.href).searchParams.has('start')")
    query = parse_qs(urlsplit(page.url).query)
    assert "range" not in query and query["start"][0] < query["end"][0]
    start, end = query["start"][0], query["end"][0]
    # a quarter to a half of the plot's 06:00-12:00 (the plot area spans the axis): about 07:30 to 09:00
    assert "2026-03-01T07:00" <= start <= "2026-03-01T08:00" and "2026-03-01T08:30" <= end <= "2026-03-01T09:30"
    # the shared address opens at that width
    tab.open(page.url.replace(tab.base, ""))
    shown = page.evaluate(f"() => document.querySelector('{chart}').layout.xaxis.range")
    assert shown[0][:16] == start[:16].replace("T", " ") and shown[1][:16] == end[:16].replace("T", " ")


def test_a_phone_scrolls_no_page_sideways_and_text_keeps_its_contrast(tab):
    page = tab.page
    finding = Finding.objects.filter(code="LOSS_LIMITED").values_list("pk", flat=True).first()
    pages = ["/", f"/?at={AT}", "/map/", "/findings/", f"/findings/{finding}/", "/incidents/", "/maintenance/",
             "/equipment/", "/equipment/janet-lon/", "/equipment/janet-lon/interfaces/xe-4/0/0/", "/trunks/ral-lag/",
             "/explore/", f"/explore/?metric=throughput_bps&aggregate=avg&range=24h&end={AT}&group_by=path",
             f"/paths/CERN/RAL/?end={AT}", f"/paths/CERN/RAL/both/?end={AT}", "/preferences/", "/silences/"]
    page.set_viewport_size(PHONE)
    widths = {}
    for path in pages:
        tab.open(path)
        widths[path] = page.evaluate("() => document.documentElement.scrollWidth")
        # the header wraps: every navigation link lies on the dark bar, inside the screen
        bar = page.locator(".topbar").bounding_box()
        for link in page.locator(".topbar nav a").all():
            b = link.bounding_box()
            assert b["x"] >= 0 and b["x"] + b["width"] <= PHONE["width"], (path, link.inner_text())
            assert b["y"] >= bar["y"] and b["y"] + b["height"] <= bar["y"] + bar["height"], (path, link.inner_text())
    assert {path: w for path, w in widths.items() if w > PHONE["width"]} == {}
    tab.open(f"/paths/CERN/RAL/?end={AT}", shot="noc-phone-path")
    # charts stack: one per row, nearly the screen's width
    boxes = [page.locator(f"#chart-{name}").bounding_box() for name in ("throughput", "loss")]
    assert boxes[0]["width"] > 300 and boxes[1]["y"] > boxes[0]["y"] + boxes[0]["height"] - 1
    tab.open(f"/?at={AT}", shot="noc-phone-overview")
    ratios = page.evaluate(CONTRAST_JS, "a.cell, a.cell span, .topbar nav a, .topbar .tz, .muted, .since, .badge")
    assert len(ratios) > 20
    low = [r for r in ratios if r["ratio"] < 4.5]
    assert low == [], low


def test_the_404_page_and_explorer_errors(tab):
    page = tab.page
    tab.expect_refusal("/paths/CERN/NOWHERE/", 404)
    response = page.goto(f"{tab.base}/paths/CERN/NOWHERE/", wait_until="networkidle")
    assert response.status == 404
    assert page.inner_text("#error-page h1") == "Page not found"
    assert "no path between CERN and NOWHERE" in page.inner_text("#error-page")
    assert page.locator(".topbar nav a").count() >= 5  # in the site's layout, with the navigation
    tab.check("404")
    bad = f"/explore/?metric=throughput_bps&aggregate=avg&range=24h&end={AT}&src=CRN"
    tab.expect_refusal(bad.replace(":", "%3A"), 400)
    tab.expect_refusal(bad, 400)
    response = page.goto(f"{tab.base}{bad}", wait_until="networkidle")
    assert response.status == 400
    assert "src: unknown site 'CRN'" in page.inner_text("#explore-errors")
    assert page.locator("#chart-explore").count() == 0  # no empty chart with a 0-4 b/s axis
    tab.open(f"/explore/?metric=throughput_bps&aggregate=avg&range=2d&end={AT}&src=CERN&dst=RAL&bucket=1h",
             shot="noc-explorer")
    assert page.locator("#explore-series th", has_text="median").count() == 1
    median = page.inner_text('#explore-series td[data-stat="median"]')
    assert median.endswith("Gb/s") and 8.0 <= float(median.split()[0]) <= 9.0  # CERN->RAL: ~8.5 Gb/s
    SHOTS.mkdir(parents=True, exist_ok=True)
