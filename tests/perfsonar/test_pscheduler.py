"""pScheduler runs -> wire records (pure): every captured pScheduler document, numbers against its own values."""

from __future__ import annotations

import copy
import json
import math
import re
import statistics
from datetime import UTC, datetime

import pytest

from collectors.records import OwampRecord, ThroughputRecord, TracerouteRecord, decode_records
from tests.perfsonar.conftest import load, load_real, toolout
from wanmon.perfsonar.pscheduler import (
    BodyProblem,
    endpoint_normalise,
    iso_duration_s,
    parse_run,
    records_build,
)

NOW = datetime(2026, 11, 29, tzinfo=UTC)  # after the newest run of the captured and the real documents


def convert(body: dict, src="CERN", dst="FZK"):
    run = parse_run(body)
    sources = records_build(run, src=src, dst=dst, src_host="a", dst_host="b")
    records = decode_records([s.data for s in sources], now=NOW)  # the ingest's own validation
    assert len(records) == 1
    return run, records[0], json.loads(records[0].raw_excerpt)["pscheduler"]


def expanded(histogram: dict) -> list[float]:
    return [float(value) for value, count in histogram.items() for _ in range(count)]


def test_iperf3_throughput_becomes_a_throughput_record_with_the_runs_numbers():
    body = load("pscheduler-archiver-http-throughput-1.json")
    summary = body["result"]["summary"]
    run, record, excerpt = convert(body)
    assert isinstance(record, ThroughputRecord)
    assert (record.src, record.dst, record.tool, record.protocol) == ("CERN", "FZK", "iperf3", "tcp")
    assert record.throughput_bps == pytest.approx(942617924.239199)
    assert record.throughput_bps == summary["summary"]["throughput-bits"]
    assert record.retransmits == summary["summary"]["retransmits"] == 7
    assert record.duration_s == pytest.approx(10.001663)
    assert record.rtt_ms == pytest.approx(summary["streams"][0]["rtt"] / 1000) == pytest.approx(5.802)
    assert record.streams == 1
    assert record.mss_bytes == 1448  # iperf3's tcp_mss_default in the run's diagnostics
    assert record.time == datetime(2026, 7, 27, 6, 2, 10, tzinfo=UTC)
    assert record.tool_version == "1.0"
    windows = [s["tcp-window-size"] for i in body["result"]["intervals"] for s in i["streams"]]
    assert excerpt["tcp_window_max_bytes"] == max(windows)
    assert excerpt["receiver_throughput_bps"] == summary["summary"]["receiver-throughput-bits"]
    assert excerpt["run"] == body["id"] == run.run_id
    assert record.error is None


def test_throughput_result_alone_gives_the_same_record():
    envelope = load("pscheduler-archiver-http-throughput-1.json")
    envelope["result"] = load("pscheduler-throughput-result-1.json")
    _, record, _ = convert(envelope)
    assert record.throughput_bps == pytest.approx(942617924.239199)
    assert record.retransmits == 7


def test_twamp_latency_becomes_an_owamp_record_with_histogram_min_median_max():
    body = load("pscheduler-archiver-http-latency-1.json")
    result = body["result"]
    _, record, excerpt = convert(body)
    delays = expanded(result["histogram-latency"])
    assert isinstance(record, OwampRecord)
    assert (record.packets_sent, record.packets_lost) == (100, 0)
    assert (record.duplicates, record.reordered) == (0, 0)
    assert record.delay_min_ms == min(delays) == -15.5
    assert record.delay_max_ms == max(delays) == -11.71
    assert record.delay_median_ms == pytest.approx(statistics.median(delays))
    assert record.clock_error_ms == 27.47
    assert record.tool == "twping"
    # P95 - P50 of the histogram's delays, nearest rank (collectors/delay.py), as owping's jitter
    ordered = sorted(delays)
    p50, p95 = ordered[math.ceil(0.5 * len(ordered)) - 1], ordered[math.ceil(0.95 * len(ordered)) - 1]
    assert record.jitter_ms == pytest.approx(p95 - p50)
    assert record.jitter_ms > 0
    assert excerpt["protocol"] == "twamp"


@pytest.mark.parametrize("name", ["pscheduler-latency-result-1.json", "pscheduler-latency-result-2.json"])
def test_latency_results_alone(name):
    envelope = load("pscheduler-archiver-http-latency-1.json")
    envelope["result"] = result = load(name)
    _, record, _ = convert(envelope)
    delays = expanded(result["histogram-latency"])
    assert len(delays) == result["packets-received"] == 100
    assert record.delay_min_ms == min(delays)
    assert record.delay_median_ms == pytest.approx(statistics.median(delays))
    assert record.delay_max_ms == max(delays)
    assert record.clock_error_ms == result["max-clock-error"]


def test_latencybg_is_converted_like_latency():
    body = load("pscheduler-archiver-http-latency-1.json")
    body["test"]["type"] = "latencybg"
    body["tool"] = {"name": "powstream", "version": "5.2.3"}
    _, record, _ = convert(body)
    assert isinstance(record, OwampRecord)
    assert record.tool == "powstream" and record.tool_version == "5.2.3"


def test_rtt_becomes_an_owamp_record_of_round_trip_times():
    body = load("pscheduler-archiver-http-rtt-1.json")
    _, record, excerpt = convert(body)
    trips_ms = [iso_duration_s(t["rtt"]) * 1000 for t in body["result"]["roundtrips"]]
    assert isinstance(record, OwampRecord)
    assert record.tool == "twping"
    assert (record.packets_sent, record.packets_lost) == (10, 0)
    # one-way estimates: half the round trips (forward + reverse = the round trip, as owamp would give)
    assert record.delay_min_ms == pytest.approx(0.725 / 2)
    assert record.delay_max_ms == pytest.approx(1.301 / 2)
    assert record.delay_median_ms == pytest.approx(statistics.median(trips_ms) / 2)
    assert excerpt["round_trip"] is True
    assert (excerpt["rtt_min_ms"], excerpt["rtt_max_ms"]) == (pytest.approx(0.725), pytest.approx(1.301))
    assert excerpt["rtt_mean_ms"] == pytest.approx(0.976)


def test_rtt_result_alone():
    envelope = load("pscheduler-archiver-http-rtt-1.json")
    envelope["result"] = result = load("pscheduler-rtt-result-1.json")
    _, record, _ = convert(envelope)
    assert record.packets_sent == result["sent"] == 20
    assert record.delay_min_ms == pytest.approx(0.648 / 2)
    assert record.delay_max_ms == pytest.approx(1.267 / 2)


def test_rtt_with_every_packet_lost_has_no_delays():
    body = load("pscheduler-archiver-http-rtt-failed-1.json")
    run, record, excerpt = convert(body)
    assert run.source_names == ("lima-perfsonar-vm",)  # no source in the spec: the lead participant
    assert (record.packets_sent, record.packets_lost) == (5, 5)
    assert record.delay_min_ms is record.delay_median_ms is record.delay_max_ms is None
    assert excerpt["loss_fraction"] == 1.0
    assert record.tool == "ping"


def test_trace_becomes_a_traceroute_with_null_for_silent_hops():
    body = load("pscheduler-archiver-http-trace-1.json")
    _, record, excerpt = convert(body)
    assert isinstance(record, TracerouteRecord)
    assert record.hops == ["192.168.1.1", None, None, None, None, None, None, "1.1.1.1"]
    assert excerpt["hops"][0]["hostname"] == "ntt.setup"
    assert excerpt["hops"][-1]["as"] == 13335
    assert excerpt["hops"][-1]["rtt_ms"] == pytest.approx(10.1)


def test_trace_result_with_names_and_as_numbers_and_mtu():
    envelope = load("pscheduler-archiver-http-trace-1.json")
    envelope["result"] = result = load("pscheduler-trace-result-1.json")
    hops = result["paths"][0]
    _, record, excerpt = convert(envelope)
    assert record.hops == [h["ip"] for h in hops]
    assert len(record.hops) == 10
    assert [h.get("as") for h in excerpt["hops"]] == [h.get("as", {}).get("number") for h in hops]
    assert excerpt["hops"][1]["hostname"] == "dc-desk-wifi-rtr1.internet2.edu."
    assert record.pmtu_bytes is None  # this tool reported no MTU
    result["paths"][0][3]["mtu"] = 9000
    result["paths"][0][5]["mtu"] = 1500
    _, record, _ = convert(envelope)
    assert record.pmtu_bytes == 1500


def test_a_failed_run_is_a_record_with_its_error():
    body = load("pscheduler-archiver-http-throughput-1.json")
    body["result"] = {"succeeded": False, "error": "iperf3 returned an error: unable to connect to server",
                      "diags": "iperf3: error - unable to connect"}
    _, record, _ = convert(body)
    assert record.throughput_bps is None
    assert record.error == "iperf3 returned an error: unable to connect to server"
    assert record.stderr_excerpt == "iperf3: error - unable to connect"


def test_udp_throughput_keeps_packets_and_offered_rate():
    # pScheduler's throughput result schema names them `sent` and `lost` (pscheduler-test-throughput validate.py).
    body = load("pscheduler-archiver-http-throughput-1.json")
    body["test"]["spec"].update(udp=True, bandwidth=500000000)
    body["result"]["summary"]["summary"].update({"sent": 43000, "lost": 12, "jitter": 0.05})
    _, record, excerpt = convert(body)
    assert (record.protocol, record.packets_sent, record.packets_lost) == ("udp", 43000, 12)
    assert record.offered_bps == 5e8
    assert record.retransmits is None
    assert excerpt["jitter_ms"] == 0.05


def test_nuttcp_udp_run_keeps_its_sent_and_lost_packets():
    body = load_real("nuttcp-parser-main-2.json")  # nuttcp: 1485 / 259593 drop/pkt 0.57 %loss
    _, record, excerpt = convert(body)
    assert (record.tool, record.protocol) == ("nuttcp", "udp")
    assert (record.packets_sent, record.packets_lost) == (259593, 1485)
    assert record.packets_lost / record.packets_sent == pytest.approx(0.0057205, rel=1e-4)
    assert excerpt["jitter_ms"] == 37.2012  # nuttcp's msMaxJitter


def test_iperf2_udp_counts_its_datagrams_but_not_the_loss():
    body = load_real("iperf2-parser-main-4.json")  # two streams, 537 datagrams each; the client sees no loss
    _, record, _ = convert(body)
    assert (record.streams, record.packets_sent, record.packets_lost) == (2, 1074, None)
    del body["result"]["summary"]["summary"]["sent"]  # no summary count: the streams' sum
    _, record, _ = convert(body)
    assert record.packets_sent == 537 + 537


def test_the_mss_the_tool_reported_is_the_records():
    body = load_real("iperf2-parser-main-5.json")  # iperf2: (icwnd/mss/irtt=.../1460/...)
    _, record, excerpt = convert(body)
    assert record.mss_bytes == body["result"]["mss"] == 1460
    assert excerpt["socket_buffer_bytes"] == 16384  # "TCP window size: 16384 Byte (default)"
    assert record.window_bytes is None  # no window asked for: the default buffer says nothing of the window


def test_nuttcp_without_intervals_takes_the_largest_window_from_its_summary():
    _, _, excerpt = convert(load_real("nuttcp-parser-main-3.json"))
    assert excerpt["tcp_window_max_bytes"] == 94000  # 94 KB-cwnd


def test_a_histogram_of_another_bucket_width_is_scaled_to_milliseconds():
    # owping/twping/powstream write round(delay / bucket-width, 2): with 0.0001 s, 2.51 ms is the key "25.10".
    body = load_real("latency-result-format-test.json")
    _, reference, _ = convert(body)
    histogram = body["result"]["histogram-latency"]
    body["result"]["histogram-latency"] = {f"{float(k) * 10:.2f}": n for k, n in histogram.items()}
    body["test"]["spec"]["bucket-width"] = 0.0001
    _, record, _ = convert(body)
    assert (record.delay_min_ms, record.delay_max_ms) == (2.51, 88.21)
    assert record.delay_median_ms == reference.delay_median_ms == pytest.approx(2.6)
    assert record.jitter_ms == reference.jitter_ms


def _transform_doc() -> dict:
    """The documentation example (not valid JSON: elided with "..."): the smallest repair that parses it."""
    text = toolout("pscheduler-transform-input-doc-1.txt").read_text()
    text = text.replace("[ ...", "[")
    text = re.sub(r",(\s*[}\]])", r"\1", text)
    return json.loads(text)


def test_reverse_throughput_measures_dest_to_source():
    body = _transform_doc()
    run = parse_run(body)
    assert run.reversed and run.source_names == ("ps1.example.net",) and run.dest_names == ("ps2.example.net",)
    summary = body["result"]["summary"]["summary"]
    _, record, excerpt = convert(body, src="FZK", dst="CERN")  # the caller swaps the sites of a reversed run
    assert record.throughput_bps == summary["throughput-bits"]
    assert excerpt["reverse"] is True


def test_the_archiver_plugin_input_is_read_and_its_test_type_is_not_measured():
    run = parse_run(load("pscheduler-archiver-plugin-input-1.json"))
    assert run.prefix == "result."
    assert (run.run_id, run.test_type, run.tool) == ("d206c24d-f44d-4d0a-a13c-0ab5eed91313", "simplestream",
                                                     "simplestreamer")
    assert run.participants == ("dev9", "dev8")
    assert not run.measured


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda b: b["test"]["spec"].pop("dest"), "test.spec.dest"),
        (lambda b: b.pop("id"), "id"),
        (lambda b: b["test"].pop("type"), "test.type"),
        (lambda b: b.update(result=[1]), "result"),
        (lambda b: (b["schedule"].pop("start"), b["run"].pop("start-time")), "schedule.start"),
        (lambda b: b.update(tool=5), "tool"),
    ],
)
def test_a_malformed_body_names_the_field(mutate, path):
    body = copy.deepcopy(load("pscheduler-archiver-http-throughput-1.json"))
    mutate(body)
    with pytest.raises(BodyProblem) as info:
        parse_run(body)
    assert path in [e["path"] for e in info.value.errors]


def test_endpoint_names_are_compared_without_case_port_or_trailing_dot():
    assert endpoint_normalise("PS1.Example.NET.") == "ps1.example.net"
    assert endpoint_normalise("ps1.example.net:443") == "ps1.example.net"
    assert endpoint_normalise("[2001:DB8::1]:861") == "2001:db8::1"
    assert endpoint_normalise("2001:db8::1") == "2001:db8::1"
    assert endpoint_normalise("192.0.2.1:5201") == "192.0.2.1"
    assert endpoint_normalise("  ") is None and endpoint_normalise(7) is None


def test_iso_durations():
    assert iso_duration_s("PT0.001301S") == pytest.approx(0.001301)
    assert iso_duration_s("PT19S") == 19 and iso_duration_s("P0D") == 0 and iso_duration_s("PT1H2M") == 3720
    assert iso_duration_s("1 hour") is None and iso_duration_s("PT") is None


def _nodes(value, path=(), depth=0):
    """Every (path, value) of a document down to a depth, leaving out pScheduler's long diagnostic texts."""
    yield path, value
    if depth >= 5:
        return
    items = value.items() if isinstance(value, dict) else enumerate(value[:3]) if isinstance(value, list) else ()
    for key, sub in items:
        if key in ("result-full", "result-merged", "task", "limit-diags", "diags"):
            continue
        yield from _nodes(sub, (*path, key), depth + 1)


@pytest.mark.parametrize("name", ["pscheduler-archiver-http-throughput-1.json",
                                  "pscheduler-archiver-http-latency-1.json",
                                  "pscheduler-archiver-http-rtt-1.json",
                                  "pscheduler-archiver-http-trace-1.json"])
def test_any_field_of_the_wrong_type_is_a_named_error_or_a_record_never_a_crash(name):
    from collectors.records import RecordError

    original = load(name)
    tried = 0
    for path, _ in list(_nodes(original)):
        if not path:
            continue
        for replacement in (None, "x", -1, 1e308, [], {"a": 1}, True, "PT-1S", "9" * 400):
            body = copy.deepcopy(original)
            target = body
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = replacement
            tried += 1
            try:
                run = parse_run(body)
            except BodyProblem as exc:
                assert exc.errors and all(e["path"] is not None and e["message"] for e in exc.errors)
                continue
            if not run.measured:
                continue
            sources = records_build(run, src="CERN", dst="FZK")
            try:
                decode_records([s.data for s in sources], now=NOW)
            except RecordError as exc:
                fields = {e["path"].split(".", 1)[-1].split(".")[0] for e in exc.errors}
                assert fields <= set(sources[0].paths) | {"records[0]"}, (path, replacement, exc.errors)
    assert tried > 200
