"""The diagnosis benchmark behind `scripts/bench diagnosis` (run with the services scripts/bench started).

The noise corpus (tests/scenarios/noise) replayed case by case -- false alarms (warning or critical findings) per
100 path-days on its healthy meshes and the share of injected faults found with the right code and subject; then
the 12-site healthy mesh and the evaluation time of its 132 paths over a 24 h window: without history, with 7 days
of history before it (``diagnosis_evaluate``, baselines learned every time), and as the periodic cycle reads it
(one shard of all the paths) with its baselines learned from the history (uncached: the first cycle of each hour)
and from the hourly cache (the cycles after it). The corpus's last line is machine-readable:
    noise_false_alarms_per_100_path_days=<float> noise_detection_rate=<float> ...
and so is the evaluation's:
    evaluation_132_paths_uncached_s=<float> cycle_uncached_s=<float> cycle_cached_s=<float>
"""

from __future__ import annotations

import os
import statistics
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wanmon.settings")
import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402


def bench_noise_corpus(names: list[str]) -> None:
    """Replay the noise corpus (tests/scenarios/noise): false alarms on the healthy meshes, detections of the faults.

    Each case is replayed in a rolled-back transaction, so the database is left as it was. Last line:
        noise_false_alarms_per_100_path_days=<float> noise_detection_rate=<float> ...
    """
    import tempfile

    from tests.scenarios.noise.corpus import CASES, case_named
    from tests.scenarios.noise.verdict import replay_case

    cases = [case_named(n) for n in names] if names else list(CASES.values())
    alarms = path_days = detected = expected = 0
    total_s = 0.0
    with tempfile.TemporaryDirectory(prefix="wanmon-noise-") as tmp:
        for case in cases:
            t0 = time.perf_counter()
            verdict = replay_case(case, Path(tmp))
            total_s += time.perf_counter() - t0
            if case.healthy:
                alarms += len(verdict.alarms)
                path_days += case.path_days
                counts: dict[str, int] = {}
                for a in verdict.alarms:
                    counts[a["code"]] = counts.get(a["code"], 0) + 1
                detail = " ".join(f"{code}={n}" for code, n in sorted(counts.items())) or "-"
                alarm_count = len(verdict.alarms)
                print(
                    f"healthy {case.name:<40} replay_s={verdict.seconds:>5.1f} path_days={case.path_days:>4.0f} "
                    f"alarms={alarm_count:>3} {detail}"
                )
            else:
                detected += len(verdict.detected)
                expected += len(verdict.detected) + len(verdict.missed)
                missed = " ".join(f"{m['code']}{m['subject']}".replace(" ", "") for m in verdict.missed)
                injected = len(verdict.detected) + len(verdict.missed)
                print(
                    f"faulty  {case.name:<40} replay_s={verdict.seconds:>5.1f} found={len(verdict.detected)}/{injected}"
                    f"{' missed: ' + missed if missed else ''}"
                )
    rate = alarms / (path_days / 100) if path_days else float("nan")
    detection = detected / expected if expected else float("nan")
    print(
        f"noise_false_alarms_per_100_path_days={rate:.2f} noise_detection_rate={detection:.3f} "
        f"alarms={alarms} healthy_path_days={path_days:.0f} detected={detected} injected={expected} "
        f"cases={len(cases)} corpus_replay_s={total_s:.1f}"
    )


def _fill_tests(start: datetime, end: datetime) -> tuple[int, int, int]:
    """TCP every 30 min and owamp every 5 min on every directed path over [start, end]; returns row counts."""
    with connection.cursor() as c:
        c.execute("DELETE FROM measurements_throughputtest")
        c.execute("DELETE FROM measurements_owamptest")
        c.execute(
            """INSERT INTO measurements_throughputtest (time, src_id, dst_id, tool, protocol, duration_s, streams,
                         window_bytes, mss_bytes, throughput_bps, retransmits, rtt_ms)
                     SELECT t, p.src_id, p.dst_id, 'nuttcp', 'tcp', 10, 1, 268435456, 8948,
                            9.2e9 + random() * 2e8, 1, 20
                     FROM inventory_path p, generate_series(%s::timestamptz, %s::timestamptz, interval '30 min') t
                     WHERE p.valid_to IS NULL""",
            [start, end],
        )
        c.execute(
            """INSERT INTO measurements_owamptest (time, src_id, dst_id, packets_sent, packets_lost, duplicates,
                         reordered, delay_min_ms, delay_median_ms, delay_max_ms, jitter_ms, clock_error_ms)
                     SELECT t, p.src_id, p.dst_id, 600, 0, 0, 0, 10, 10.2, 11.5, 0.05, 0.1
                     FROM inventory_path p, generate_series(%s::timestamptz, %s::timestamptz, interval '5 min') t
                     WHERE p.valid_to IS NULL""",
            [start, end],
        )
        c.execute(
            "SELECT (SELECT count(*) FROM measurements_throughputtest), (SELECT count(*) FROM "
            "measurements_owamptest), (SELECT count(*) FROM inventory_path WHERE valid_to IS NULL)"
        )
        return c.fetchone()


def bench_diagnosis(hours: int, history_days: int, corpus: list[str] | None) -> None:
    """The noise corpus (unless skipped), then the 12-site healthy mesh (~9 000 records) and the evaluation of its
    132 paths over `hours` of evidence: without history, then with `history_days` of baseline before the window."""
    from io import StringIO

    from django.core.management import call_command

    from wanmon.diagnosis.services import diagnosis_evaluate

    # The corpus first: its replays roll back, while the mesh below is kept for the evaluation timings.
    if corpus is not None:
        bench_noise_corpus(corpus)
    mesh = Path(__file__).resolve().parents[1] / "tests" / "scenarios" / "healthy-mesh-12.yaml"
    t0 = time.perf_counter()
    call_command("replay", str(mesh), "--keep", stdout=StringIO())
    replay_s = time.perf_counter() - t0
    end = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
    start = end - timedelta(hours=hours)
    tests, sessions, paths = _fill_tests(start, end)
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        findings = diagnosis_evaluate(now=end, window_start=start, baseline_start=start, baseline_end=end)
        runs.append(time.perf_counter() - t0)
    print(f"replay_records=8988 replay_s={replay_s:.2f}")
    print(
        f"paths={paths} throughput_tests={tests} owamp_sessions={sessions} hours={hours} "
        f"findings={len(findings)} evaluate_s_median={statistics.median(runs):.2f}"
    )
    # Production shape: the window judged against the days before it (services.DEFAULT_BASELINE). The whole
    # evaluation (diagnosis_evaluate, manage.py replay) learns every baseline from the history each time: uncached.
    baseline_start = start - timedelta(days=history_days)
    tests, sessions, paths = _fill_tests(baseline_start, end)
    runs, cpu = [], []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        findings = diagnosis_evaluate(now=end, window_start=start, baseline_start=baseline_start, baseline_end=start)
        runs.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    uncached = statistics.median(runs)
    print(
        f"paths={paths} throughput_tests={tests} owamp_sessions={sessions} hours={hours} "
        f"history_days={history_days} findings={len(findings)} evaluate_with_history_s_median={uncached:.2f} "
        f"evaluate_with_history_python_cpu_s_median={statistics.median(cpu):.2f}"
    )
    # The periodic cycle's evaluation of the same paths: set-based loading of one shard holding all 132 paths
    # (wanmon/diagnosis/shards.py), then the engine; baselines learned from the history (no cache: the first
    # cycle of each hour), then summarised once an hour (the cycles after it).
    from django.test import override_settings

    from wanmon.diagnosis import engine
    from wanmon.diagnosis.selectors import evidence_bundle_for_paths
    from wanmon.inventory.selectors import path_list_valid_at

    ids = [p.id for p in path_list_valid_at(at=end)]

    def cycle() -> tuple[float, float, float, int]:
        t0, c0 = time.perf_counter(), time.process_time()
        bundle = evidence_bundle_for_paths(
            path_ids=ids,
            now=end,
            window_start=start,
            baseline_start=baseline_start,
            baseline_end=start,
            unpathed_interfaces=True,
        )
        t1 = time.perf_counter()
        found = engine.diagnose(bundle, end)
        return t1 - t0, time.perf_counter() - t0, time.process_time() - c0, len(found)

    # wall time depends on what else runs on the machine; the CPU time of this process (Python: decoding rows,
    # the engine) does not, PostgreSQL's share is the difference
    with override_settings(CACHES={"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}):
        cold = [cycle() for _ in range(3)]
    cycle()  # fills the cache
    warm = [cycle() for _ in range(3)]
    for name, timed in (("uncached", cold), ("cached", warm)):
        load, total, cpu_s, found = (statistics.median(x) for x in zip(*timed, strict=True))
        print(
            f"paths={len(ids)} hours={hours} history_days={history_days} baselines={name} findings={found:.0f} "
            f"cycle_load_s_median={load:.2f} cycle_evaluate_s_median={total:.2f} "
            f"cycle_python_cpu_s_median={cpu_s:.2f}"
        )
    print(
        f"evaluation_132_paths_uncached_s={uncached:.2f} "
        f"cycle_uncached_s={statistics.median(t[1] for t in cold):.2f} "
        f"cycle_cached_s={statistics.median(t[1] for t in warm):.2f}"
    )
