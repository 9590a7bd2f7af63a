"""Plotly figure dicts: built without a database, JSON-safe, data identical to what was measured."""

import json
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from wanmon.dashboard import constants as k
from wanmon.dashboard import figures as fig

T0 = datetime(2026, 3, 1, 6, 0, tzinfo=UTC)
START, END = T0, T0 + timedelta(hours=6)


def times(n, step_min=30):
    return [T0 + timedelta(minutes=step_min * i) for i in range(n)]


def strict_json(figure):
    return json.loads(json.dumps(figure, allow_nan=False))


def test_series_keep_the_stored_values_and_units():
    values = [9.0e8, 8.8e8, None, float("nan"), float("inf")]
    figure = fig.throughput_figure(series=[fig.Series("CERN→FZK", times(5), values, colour="#123456")],
                                   start=START, end=END, tz=UTC, levels=[fig.Level(1e9, "capacity 1 Gb/s")])
    trace = strict_json(figure)["data"][0]
    assert trace["name"] == "CERN→FZK"
    assert trace["y"] == [9.0e8, 8.8e8, None, None, None]  # gaps, never NaN/Infinity in JSON
    assert trace["x"][0] == "2026-03-01 06:00:00"
    assert figure["layout"]["yaxis"]["ticksuffix"] == "b/s"
    assert figure["layout"]["shapes"][-1]["y0"] == 1e9
    assert figure["layout"]["xaxis"]["range"] == ["2026-03-01 06:00:00", "2026-03-01 12:00:00"]
    assert figure["layout"]["xaxis"]["title"]["text"] == "time (UTC)"


def test_times_are_shown_in_the_users_zone_and_the_axis_names_it():
    zurich = ZoneInfo("Europe/Zurich")
    figure = fig.delay_figure(series=[fig.Series("min", times(2), [5.0, 5.1])], start=START, end=END, tz=zurich)
    assert figure["data"][0]["x"] == ["2026-03-01 07:00:00", "2026-03-01 07:30:00"]
    assert figure["layout"]["xaxis"]["title"]["text"] == "time (Europe/Zurich)"


def test_band_traces_for_bucketed_tests():
    figure = fig.throughput_figure(series=[fig.Series("A→B", times(2), [5e8, 6e8], band_low=[4e8, 5e8],
                                                      band_high=[6e8, 7e8])], start=START, end=END, tz=UTC)
    low, high, line = figure["data"][:3]
    assert low["y"] == [4e8, 5e8] and high["fill"] == "tonexty" and line["y"] == [5e8, 6e8]
    assert not low["showlegend"] and not high["showlegend"]


def test_time_marks_become_shapes_and_clickable_markers_clipped_to_the_range():
    marks = [
        fig.TimeMark("maintenance", T0 - timedelta(hours=1), T0 + timedelta(hours=1), "Maintenance GEANT-1",
                     "GEANT outage: geant-par"),
        fig.TimeMark("finding", T0 + timedelta(hours=2), T0 + timedelta(hours=6), "ASYMMETRIC_PATH",
                     severity="critical", url="/findings/3/"),
        fig.TimeMark("route", T0 + timedelta(hours=4), label="Route change"),
        fig.TimeMark("finding", T0 - timedelta(days=2), T0 - timedelta(days=1), "OLD", severity="warning"),
    ]
    figure = fig.loss_figure(series=[], start=START, end=END, tz=UTC, marks=marks)
    shapes = figure["layout"]["shapes"]
    band = next(s for s in shapes if s["type"] == "rect" and s["y1"] == 1 and s["y0"] == 0)
    assert band["x0"] == "2026-03-01 06:00:00" and band["x1"] == "2026-03-01 07:00:00"  # clipped
    markers = {t["meta"]: t for t in figure["data"] if t.get("yaxis") == "y2"}
    assert set(markers) == {"maintenance", "finding", "route"}  # the old finding is outside the range
    assert markers["finding"]["customdata"] == ["/findings/3/"]
    assert markers["finding"]["marker"]["color"] == [k.SEVERITY_COLOURS["critical"]]
    assert markers["maintenance"]["x"] == ["2026-03-01 06:00:00"]
    assert "GEANT outage" in markers["maintenance"]["hovertext"][0]
    # the empty chart says so
    assert figure["layout"]["annotations"][-1]["text"] == "No data in this time range"


def test_a_loss_chart_of_zeros_keeps_a_small_scale():
    figure = fig.loss_figure(series=[fig.Series("A→B", times(3), [0.0, 0.0, 0.0])], start=START, end=END, tz=UTC)
    assert figure["layout"]["yaxis"]["range"] == [0, 0.001]
    lossy = fig.loss_figure(series=[fig.Series("A→B", times(2), [0.0, 0.03])], start=START, end=END, tz=UTC)
    assert "range" not in lossy["layout"]["yaxis"]


def test_errors_chart_says_no_errors_when_counters_exist():
    figure = fig.errors_figure(title="e", series=[], start=START, end=END, tz=UTC, polled=True)
    assert figure["layout"]["annotations"][-1]["text"] == "No errors or discards in this time range"


def test_the_legend_gets_room_for_many_series():
    few = fig.utilisation_figure(title="u", series=[fig.Series("a", times(1), [0.1])], start=START, end=END, tz=UTC)
    many = fig.utilisation_figure(title="u", series=[fig.Series(str(i), times(1), [0.1]) for i in range(9)],
                                  start=START, end=END, tz=UTC)
    assert many["layout"]["height"] == few["layout"]["height"] + 2 * fig.LEGEND_ROW_PX


def test_map_colours_each_direction_by_its_status_and_links_it():
    data = fig.MapData(
        sites=[fig.MapSite("CERN", "CERN", 6.05, 46.23, 0), fig.MapSite("FZK", "KIT", 8.43, 49.09, 1)],
        paths=[fig.MapPath("CERN", "FZK", [(6.05, 46.23), (7.3, 47.6), (8.43, 49.09)], k.OK, "ok", "/paths/CERN/FZK/"),
               fig.MapPath("FZK", "CERN", [(8.43, 49.09), (7.1, 47.7), (6.05, 46.23)], k.CRITICAL, "bad",
                           "/paths/FZK/CERN/")],
        elements=[fig.MapElement("geant-fra", "GEANT", 7.2, 47.6, ("CERN->FZK", "FZK->CERN", "CNAF->CERN"),
                                 suspect=True, url="/equipment/geant-fra/")],
        views=[fig.MapView("Europe", (0, 15), (40, 52))],
    )
    figure = strict_json(fig.map_figure(data))
    lines = {t["meta"]: t for t in figure["data"] if t.get("mode") == "lines"}
    assert lines["CERN->FZK"]["line"]["color"] == k.STATUS_STYLE[k.OK][0]
    assert lines["FZK->CERN"]["line"]["color"] == k.STATUS_STYLE[k.CRITICAL][0]
    by_meta = {t.get("meta"): t for t in figure["data"]}
    assert by_meta["paths"]["customdata"] == ["/paths/CERN/FZK/", "/paths/FZK/CERN/"]
    assert by_meta["elements"]["marker"]["color"] == ["#d64545"]
    assert by_meta["elements"]["text"] == ["geant-fra"]  # shared by two site pairs: labelled
    assert by_meta["sites"]["customdata"] == ["", ""]
    assert figure["layout"]["xaxis"]["range"] == [0, 15]  # the first view is the initial one
    assert "geo" not in figure["layout"]  # no basemap: nothing to fetch from a CDN
    assert all(t["type"] == "scatter" for t in figure["data"])


def test_trunk_members_side_by_side():
    figure = fig.trunk_members_figure(trunk="ral-lag", members=[
        fig.MemberShare("janet-lon:xe-4/0/0", 0.14, 0.70), fig.MemberShare("janet-lon:xe-4/1/0", 0.02, 0.10)])
    bars = {t["name"]: t for t in figure["data"]}
    assert bars["out"]["x"] == ["janet-lon:xe-4/0/0", "janet-lon:xe-4/1/0"]
    assert bars["out"]["y"] == [0.70, 0.10]
    assert figure["layout"]["barmode"] == "group"


def test_explorer_one_line_per_series_with_the_metric_unit():
    series = [{"key": {"src": "CERN", "dst": "FZK"}, "points": [[T0, 9e8], [T0 + timedelta(hours=1), 8e8]]},
              {"key": {"src": "FZK", "dst": "CERN"}, "points": [[T0, 3e7]]}]
    figure = fig.explorer_figure(metric="throughput_bps", aggregate="avg", series=series, start=START, end=END,
                                 tz=UTC, source="source: measurements_throughputtest")
    assert [t["name"] for t in figure["data"]] == ["CERN→FZK", "FZK→CERN"]
    assert figure["data"][0]["y"] == [9e8, 8e8]
    assert figure["layout"]["yaxis"]["ticksuffix"] == "b/s"
    assert figure["layout"]["title"]["subtitle"]["text"] == "source: measurements_throughputtest"
    assert fig.unit_for_metric("loss_fraction") == "fraction"
    assert fig.unit_for_metric("out_utilisation") == "utilisation"
    assert fig.unit_for_metric("in_errors_per_s") == "per_s"
    assert fig.unit_for_metric("retransmits") == "count"
    assert fig.series_name({"equipment": "janet-lon", "interface": "xe-4/0/0"}) == "janet-lon:xe-4/0/0"
    assert fig.series_name({"equipment": "janet-lon"}) == "janet-lon"
    assert fig.series_name({}) == "all"


EVIL = '<a href="https://evil.example/x">%{y}</a>'


def test_names_from_devices_are_shown_as_text_not_markup():
    # Plotly renders a subset of HTML in trace names, legends, hover and tick labels: an interface named
    # '<a href=...>' became a clickable link in the legend, and %{y} in a hover template a variable.
    figure = strict_json(fig.utilisation_figure(title="u", series=[fig.Series(f"geant-par:{EVIL}", times(2), [0.1, 0.2],
                                                band_low=[0.0, 0.1], band_high=[0.2, 0.3])], start=START, end=END,
                                                tz=UTC))
    shown = [t["name"] for t in figure["data"]] + [t.get("hovertemplate", "") for t in figure["data"]]
    assert all("<a" not in text and "%{y}" not in text for text in shown)
    assert figure["data"][-1]["name"] == "geant-par:&lt;a href=\"https://evil.example/x\"&gt;&#37;&#123;y}&lt;/a&gt;"
    trunk = fig.trunk_members_figure(trunk="ral-lag", members=[fig.MemberShare(EVIL, 0.5, 0.4)])
    assert all("<a" not in label for trace in trunk["data"] for label in trace["x"])
    assert fig.plotly_text("xe-1/0/0 & <b>") == "xe-1/0/0 &amp; &lt;b&gt;"


def test_texts_from_agents_carriers_and_sites_are_shown_as_text_not_markup():
    # Hover texts, mark labels, titles and map labels carry what agents report (a receiving host, a test's error,
    # traceroute hops), carriers send (a maintenance reference) and operators type (a site's name): Plotly drew
    # them as markup, a link on the chart.
    shown = "&lt;a href=\"https://evil.example/x\"&gt;&#37;&#123;y}&lt;/a&gt;"
    throughput = strict_json(fig.throughput_figure(
        series=[fig.Series("CERN→RAL", times(2), [9e8, 0.0], hover=[f"to {EVIL}", f"error: {EVIL}"])],
        marks=[fig.TimeMark("maintenance", T0, T0 + timedelta(hours=1), label=f"Maintenance {EVIL}",
                            detail=f"GEANT outage: {EVIL}"),
               fig.TimeMark("route", T0, label="Route change", detail=f"was: a → {EVIL}\nnow: a → b")],
        levels=[fig.Level(1e9, EVIL)], start=START, end=END, tz=UTC, source=EVIL))
    line, maintenance, route = throughput["data"]
    assert line["text"] == [f"to {shown}", f"error: {shown}"]
    assert maintenance["text"] == [f"Maintenance {shown}"]
    assert maintenance["hovertext"] == [f"<b>Maintenance {shown}</b><br>GEANT outage: {shown}"]
    assert route["hovertext"] == [f"<b>Route change</b><br>was: a → {shown}<br>now: a → b"]  # its line break kept
    assert throughput["layout"]["annotations"][0]["text"] == shown
    assert throughput["layout"]["title"]["subtitle"]["text"] == shown
    trunk = fig.trunk_members_figure(trunk=EVIL, members=[fig.MemberShare("janet-lon:xe-4/0/0", 0.5, 0.4)])
    assert trunk["layout"]["title"]["text"] == f"Trunk {shown}: members side by side (average utilisation)"
    figure = fig.map_figure(fig.MapData(
        sites=[fig.MapSite(EVIL, EVIL, 6.05, 46.23), fig.MapSite("RAL", "RAL", -1.31, 51.57)],
        paths=[fig.MapPath(EVIL, "RAL", [(6.05, 46.23), (-1.31, 51.57)], k.OK, summary=EVIL)],
        elements=[fig.MapElement(EVIL, EVIL, 2.35, 48.86, paths=(f"{EVIL}->RAL",), suspect=True)]))
    texts = json.dumps([[t.get("text"), t.get("hovertext")] for t in figure["data"]])
    assert "<a" not in texts and "%{y}" not in texts
    assert texts.count(json.dumps(shown)[1:-1]) == 9  # sites 3, path 2, element 4 (its label, name, owner, path)
