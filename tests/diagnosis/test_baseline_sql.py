"""The baseline summarised in the database equals the pure summary of the same tests (evidence.summarise_path):
the whole evaluation and the periodic cycle read a week of history this way instead of row by row."""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta

import pytest

from wanmon.diagnosis.evidence import OwampTest, ThroughputTest, TracerouteObservation, summarise_path
from wanmon.diagnosis.selectors import baselines
from wanmon.inventory.models import Site
from wanmon.measurements import models as m

pytestmark = pytest.mark.django_db

END = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
START = END - timedelta(days=7)
# announced work in the middle of the week: its results are left out of the level
WORK = (END - timedelta(days=3, hours=2), END - timedelta(days=3))


def _history(src: Site, dst: Site, seed: int):
    """A noisy week with what the summary must leave out: failed tests, UDP tests, unknown retransmits and
    RTTs, a degraded day, owamp outages and sessions without delays, and results just outside the period."""
    rng = random.Random(seed)
    tput, owamp, routes = [], [], []
    t = START - timedelta(hours=1)
    while t <= END + timedelta(hours=1):
        degraded = END - timedelta(days=6) <= t < END - timedelta(days=5)  # one day of the history (24 h to its end)
        rate = rng.uniform(7e9, 9e9) * (0.3 if degraded else 1.0) * (1.2 if t.hour in (2, 3) else 1.0)
        kind = rng.random()
        tput.append(
            m.ThroughputTest(
                time=t, src_id=src.id, dst_id=dst.id, tool="nuttcp", protocol="udp" if kind < 0.1 else "tcp",
                duration_s=rng.choice([10.0, 20.0, None]), streams=1, mss_bytes=rng.choice([8948, 8948, 1448, None]),
                throughput_bps=None if kind > 0.95 else (0.0 if kind > 0.93 else rate),
                retransmits=rng.choice([None, 0, 3, 250]), rtt_ms=rng.choice([None, 0.0, 20.1, 20.4, 35.0]),
                packets_sent=rng.choice([None, 0, 10_000]), packets_lost=rng.choice([None, 0, 7]),
                error="timeout" if 0.9 < kind < 0.93 else None,
            )
        )
        for minute in range(0, 30, 5):
            sent = rng.choice([600, 600, 600, None, 0])
            owamp.append(
                m.OwampTest(
                    time=t + timedelta(minutes=minute), src_id=src.id, dst_id=dst.id, packets_sent=sent,
                    packets_lost=rng.choice([0, 0, 1, None, 600]), delay_min_ms=rng.choice([10.0, 10.3, None]),
                    delay_median_ms=rng.choice([10.2, 10.9, 11.3, None]), delay_max_ms=12.0,
                )
            )
        if rng.random() < 0.1:
            routes.append(
                m.Traceroute(
                    time=t, src_id=src.id, dst_id=dst.id, hops=["a", None, f"b{rng.randint(0, 2)}"], pmtu_bytes=9000,
                    error=rng.choice([None, None, "unreachable"]),
                )
            )
        t += timedelta(minutes=rng.choice([30, 47, 90]))
    m.ThroughputTest.objects.bulk_create(tput)
    m.OwampTest.objects.bulk_create(owamp)
    m.Traceroute.objects.bulk_create(routes)
    return tput, owamp, routes


def _pure(tput, owamp, routes) -> object:
    """summarise_path over the same rows, read as the selectors read them."""
    tests = [
        ThroughputTest(
            time=r.time, protocol=r.protocol, throughput_bps=r.throughput_bps, duration_s=r.duration_s,
            streams=r.streams or 1, window_bytes=None, mss_bytes=r.mss_bytes, rtt_ms=r.rtt_ms,
            retransmits=r.retransmits, offered_bps=None, packets_sent=r.packets_sent, packets_lost=r.packets_lost,
            src_host=None, dst_host=None, error=r.error, tool=r.tool,
        )
        for r in tput
        if START <= r.time <= END
    ]
    sessions = [
        OwampTest(
            time=r.time, packets_sent=r.packets_sent, packets_lost=r.packets_lost or 0, duplicates=0, reordered=0,
            delay_min_ms=r.delay_min_ms, delay_median_ms=r.delay_median_ms, delay_max_ms=r.delay_max_ms,
            jitter_ms=None, clock_error_ms=None,
        )
        for r in owamp
        if r.packets_sent is not None
    ]
    traces = [TracerouteObservation(r.time, tuple(r.hops), r.pmtu_bytes) for r in routes if r.error is None]
    return summarise_path(tests, sessions, traces, START, END, excluded=(WORK,))


def test_the_database_summary_equals_the_pure_one(monkeypatch):
    # given two path directions with a noisy week each, and a third direction with no throughput test
    sites = [Site.objects.create(code=code, name=code) for code in ("AAA", "BBB", "CCC")]
    histories = {
        (sites[0].id, sites[1].id): _history(sites[0], sites[1], seed=1),
        (sites[1].id, sites[0].id): _history(sites[1], sites[0], seed=2),
    }
    m.OwampTest.objects.create(time=END, src_id=sites[2].id, dst_id=sites[0].id, packets_sent=600, packets_lost=0)
    monkeypatch.setattr(baselines, "maintenance_periods", lambda start, end: (WORK,))
    # when the database summarises the week
    got = baselines.baseline_summaries([*histories, (sites[2].id, sites[0].id)], START, END)
    # then each summary is the pure one: the same learned level (the same healthy results, the same profile),
    # the same counts, and figures equal up to the order the database adds them in
    assert set(got) == set(histories)
    for key, rows in histories.items():
        want = _pure(*rows)
        have = got[key]
        assert have.tcp_level == want.tcp_level
        assert have.tcp_tests == want.tcp_tests > 100
        assert have.tcp_excluded_tests == want.tcp_excluded_tests > 10
        assert have.tcp_level.by_hour_of_day  # the 02-03 h profile is learned
        assert have.probe_packets == want.probe_packets > 0
        assert have.mss_bytes == want.mss_bytes
        assert None not in (want.tcp_loss_fraction, want.probe_loss_fraction, want.delay_median_ms, want.rtt_ms)
        assert have.traceroute_hops == want.traceroute_hops is not None
        for field in dataclasses.fields(want):
            value = getattr(want, field.name)
            expected = pytest.approx(value, rel=1e-12) if isinstance(value, float) else value
            assert getattr(have, field.name) == expected, field.name


def test_the_whole_evaluation_and_the_cycle_read_the_same_baseline():
    # given a week of history on one direction, ending on the hour (the cycle's period is aligned on it)
    a, b = Site.objects.create(code="AAA", name="A"), Site.objects.create(code="BBB", name="B")
    _history(a, b, seed=3)
    keys = [(a.id, b.id)]
    # then the cycle's cached baseline (read twice: computed, then from the cache) is the evaluation's
    direct = baselines.baseline_summaries(keys, START, END)
    assert baselines.baselines_cached(keys, START, END) == direct
    assert baselines.baselines_cached(keys, START, END) == direct


def test_the_window_owamp_buckets_read_in_binary_give_the_values_of_the_text_read(monkeypatch):
    from wanmon.diagnosis.selectors import common, series

    # given two hours of one-minute sessions, every 17th one losing a packet, one without a delay
    src, dst = Site.objects.create(code="SRCB", name="a"), Site.objects.create(code="DSTB", name="b")
    m.OwampTest.objects.bulk_create(
        m.OwampTest(
            time=END - timedelta(minutes=i, seconds=i % 7), src_id=src.id, dst_id=dst.id, packets_sent=600,
            packets_lost=1 if i % 17 == 0 else 0, duplicates=i % 2, reordered=0, delay_min_ms=10 + i / 1000,
            delay_median_ms=None if i == 40 else 10.2 + i / 7, delay_max_ms=11.5, jitter_ms=0.05 * i,
            clock_error_ms=0.1,
        )
        for i in range(120)
    )
    key = (src.id, dst.id)
    binary = series.owamp_bucketed([key], END - timedelta(hours=2), END, 300)[key]
    # when the same statement is read through the text-format cursor
    monkeypatch.setattr(series, "sql_rows", lambda sql, params, binary=False: common.sql_rows(sql, params))
    text = series.owamp_bucketed([key], END - timedelta(hours=2), END, 300)[key]
    # then every bucket is the same, to the session times and their zone
    assert binary == text
    assert len(binary) == 32 and sum(o.packets_lost for o in binary) == 8  # 24 clean buckets, 8 lossy sessions
    assert [o.time.tzinfo for o in binary] == [o.time.tzinfo for o in text] == [UTC] * 32
    assert sum(len(o.session_times) for o in binary) == 112
