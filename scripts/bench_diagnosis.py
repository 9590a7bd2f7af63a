"""The diagnosis benchmark behind `scripts/bench diagnosis` (run with the services scripts/bench started).

Everything here runs production's road: the diagnosis cycle the Celery beat runs every minute, with the stored
findings' lifecycle. First the noise corpus (tests/scenarios/noise) replayed case by case at each case's shortest
test interval, with the alerting after every cycle -- warning or critical findings opened on its healthy meshes and
the incidents that would have been e-mailed, per 100 path-days; the injected faults found with the right code and
subject, the time from each fault's onset to its first warning (minutes and measurement intervals), the error of
the reported onset and the rank-1 localisations; then the regression corpus's nine case studies through the same
road (``replay --check``); then the 12-site mesh's 132 paths with hourly TCP and owamp: `--hours` of them replayed a
cycle a minute after `--history-days` of history, and one cycle that evaluates every path. The corpus's last line is
machine-readable:
    noise_false_warnings_per_100_path_days=<float> noise_incidents_per_100_path_days=<float> ...
and so are the case studies':
    regression_case_studies_passed=<int>/<int> regression_case_study_warnings=<int> ...
and so is the case memory's retrieval (``bench_case_memory``):
    cases_top1=<float> cases_top3=<float> cases_false_suggestions=<float> ...
and the mesh's:
    replay_<hours>h_<paths>_paths_1min_s=<float> cycle_uncached_s=<float> cycle_cached_s=<float>
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


def bench_noise_corpus(names: list[str], corpus_days: float | None = None, notify: bool = True) -> None:
    """Replay the noise corpus (tests/scenarios/noise) on production's road: every case through the ingest, then the
    diagnosis cycle at the case's shortest test interval over its whole timeline, with the findings' lifecycle and
    (``notify``) the alerting after every cycle, as the beat runs both.

    With ``corpus_days`` the cycles cover each healthy mesh's last days and each fault from 12 hours before its
    onset (the rest of the file is history). Each case is replayed in a rolled-back transaction, so the database is
    left as it was. Per case: the warning or critical findings opened on a healthy mesh (false warnings, each with
    its time, summary and evidence) and the incidents the alerting opened for them (what would have been e-mailed);
    for a fault whether it was found with its code and subject, the minutes and measurement intervals (the cycle's
    step, the case's shortest test interval) from its onset to the first warning (time to detect), how far the
    reported onset lies from the true one, and the rank-1 localisations. Last line:
        noise_false_warnings_per_100_path_days=<float> noise_detection_rate=<float> detect_median_min=<float> ...
    With WANMON_NOISE_VERDICTS=FILE every case's verdict is also written there, one JSON object a line.
    """
    import json
    import tempfile

    from tests.scenarios.noise.corpus import CASES, case_named
    from tests.scenarios.noise.verdict import replay_case

    cases = [case_named(n) for n in names] if names else list(CASES.values())
    totals = _NoiseTotals()
    dump = os.environ.get("WANMON_NOISE_VERDICTS")
    out = Path(dump).open("w") if dump else None
    with tempfile.TemporaryDirectory(prefix="wanmon-noise-") as tmp:
        for case in cases:
            t0 = time.perf_counter()
            since_h = None
            if corpus_days is not None:
                since_h = (
                    case.spec.days * 24 - corpus_days * 24
                    if case.healthy
                    else min(f.start_h for f in case.faulty.faults) - 12
                )
            verdict = replay_case(case, Path(tmp), since_h=since_h, notify=notify)
            totals.seconds += time.perf_counter() - t0
            if case.healthy:
                days = case.spec.days if corpus_days is None else min(corpus_days, case.spec.days)
                totals.healthy(case, verdict, days)
            else:
                totals.faulty(case, verdict)
            if out is not None:
                out.write(json.dumps(_verdict_record(case, verdict), default=str) + "\n")
                out.flush()
    if out is not None:
        out.close()
    totals.report(len(cases))


def _verdict_record(case, verdict) -> dict:
    """One case's verdict for WANMON_NOISE_VERDICTS: what an engineer needs to reproduce each false warning or miss."""
    return {
        "case": case.name,
        "healthy": case.healthy,
        "seconds": round(verdict.seconds, 1),
        "steps": verdict.steps,
        "step_min": verdict.step_min,
        "alarms": verdict.alarms,
        "detected": verdict.detected,
        "missed": verdict.missed,
        "detect_min": verdict.detect_min,
        "onset_error_min": verdict.onset_error_min,
        "findings": verdict.findings,
        "incidents": verdict.incidents,
        "onsets": {} if case.healthy else {str(f.start_h): type(f).__name__ for f in case.faulty.faults},
    }


class _NoiseTotals:
    """The operator's measure over the cases replayed so far (healthy path-days, false warnings and incidents,
    detections, times to detect, onset errors, rank-1 localisations)."""

    def __init__(self) -> None:
        self.alarms = self.incidents = self.detected = self.expected = self.ranked = self.ranked_ok = 0
        self.late = self.onsets_within = self.onsets_within_step = 0
        self.path_days = self.seconds = self.step_min = 0.0
        self.detect_min: list[float] = []
        self.detect_intervals: list[float] = []
        self.onset_min: list[float] = []

    def healthy(self, case, verdict, days: float) -> None:
        self.step_min = max(self.step_min, verdict.step_min)
        n = len(case.spec.sites)
        path_days = n * (n - 1) * days
        self.path_days += path_days
        self.alarms += len(verdict.alarms)
        paged = _paged(verdict.incidents)
        self.incidents += len(paged)
        counts: dict[str, int] = {}
        for a in verdict.alarms:
            counts[a["code"]] = counts.get(a["code"], 0) + 1
        detail = " ".join(f"{code}={k}" for code, k in sorted(counts.items())) or "-"
        print(
            f"healthy {case.name:<44} replay_s={verdict.seconds:>6.1f} cycles={verdict.steps} "
            f"step_min={verdict.step_min:g} path_days={path_days:>4.0f} false_warnings={len(verdict.alarms):>3} "
            f"incidents_emailed={len(paged)} {detail}"
        )
        for a in verdict.alarms:
            print(
                f"    {a['first_seen_at']} {a.get('worst_severity')} {a['code']} {_subject(a['subject'])}: "
                f"{a['summary'][:160]}"
            )
        for i in paged:
            print(f"    incident {i.get('opened_at')} {i.get('severity')} {i.get('title')}")

    def faulty(self, case, verdict) -> None:
        self.step_min = max(self.step_min, verdict.step_min)
        injected = len(verdict.detected) + len(verdict.missed)
        self.detected += len(verdict.detected)
        self.expected += injected
        with_rank = [e for e in verdict.detected + verdict.missed if "rank" in e]
        self.ranked += len(with_rank)
        self.ranked_ok += sum(1 for e in with_rank if e in verdict.detected)
        self.detect_min += verdict.detect_min
        self.detect_intervals += verdict.detect_intervals
        self.late += sum(1 for k in verdict.detect_intervals if round(k, 1) > DETECT_GOAL_INTERVALS)
        self.onset_min += verdict.onset_error_min
        self.onsets_within += sum(verdict.onsets_within)
        self.onsets_within_step += sum(1 for m in verdict.onset_error_min if abs(m) <= verdict.step_min)
        missed = " ".join(f"{m['code']}{_subject(m['subject'])}" for m in verdict.missed)
        print(
            f"faulty  {case.name:<44} replay_s={verdict.seconds:>6.1f} cycles={verdict.steps} "
            f"step_min={verdict.step_min:g} found={len(verdict.detected)}/{injected} "
            f"detect_min={_figures(verdict.detect_min)} detect_intervals={_figures(verdict.detect_intervals, 1)} "
            f"onset_error_min={_figures(verdict.onset_error_min)} "
            f"onset_interval_min={_figures(verdict.onset_interval_min)} "
            f"incidents_emailed={len(_paged(verdict.incidents))}"
            f"{' missed: ' + missed if missed else ''}"
        )

    def report(self, cases: int) -> None:
        rate = self.alarms / (self.path_days / 100) if self.path_days else float("nan")
        incidents = self.incidents / (self.path_days / 100) if self.path_days else float("nan")
        detection = self.detected / self.expected if self.expected else float("nan")
        print(
            f"noise corpus: {self.alarms} warning/critical findings opened on {self.path_days:.0f} healthy path-days "
            f"({rate:.2f} per 100), {self.incidents} incidents e-mailed ({incidents:.2f} per 100); {self.detected} of "
            f"{self.expected} faults found with their code and subject; time to detect median "
            f"{_median(self.detect_min):.0f} min = {_median(self.detect_intervals):.1f} intervals (goal "
            f"{DETECT_GOAL_INTERVALS}; {self.late} later); onset error median "
            f"{_median([abs(m) for m in self.onset_min]):.0f} min, {self.onsets_within} of {len(self.onset_min)} "
            f"within one interval of the tests that show the fault ({self.onsets_within_step} within the case's "
            f"shortest test interval); rank-1 localisation {self.ranked_ok}/{self.ranked}"
        )
        print(
            f"noise_false_warnings_per_100_path_days={rate:.2f} noise_incidents_per_100_path_days={incidents:.2f} "
            f"noise_detection_rate={detection:.3f} detect_median_min={_median(self.detect_min):.0f} "
            f"detect_median_intervals={_median(self.detect_intervals):.1f} detect_late={self.late} "
            f"onset_error_median_min={_median(self.onset_min):.0f} "
            f"onset_within_interval={self.onsets_within}/{len(self.onset_min)} "
            f"onset_within_step={self.onsets_within_step}/{len(self.onset_min)} "
            f"rank1_localised={self.ranked_ok}/{self.ranked} false_warnings={self.alarms} "
            f"false_incidents={self.incidents} healthy_path_days={self.path_days:.0f} detected={self.detected} "
            f"injected={self.expected} cases={cases} step_min={self.step_min:g} corpus_replay_s={self.seconds:.1f}"
        )


#: The issue's goal: a fault's first warning within two measurement intervals of its onset.
DETECT_GOAL_INTERVALS = 2


def _paged(incidents: list[dict]) -> list[dict]:
    """The incidents the alerting e-mailed, or would have with recipients configured (a replay's database has
    none): those that reached the paging severity (ALERTS_MIN_SEVERITY, warning; info never pages)."""
    return [i for i in incidents if i.get("emails") or i.get("severity") in ("warning", "critical")]


def _subject(subject: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in subject.items())


def bench_regression_corpus() -> None:
    """The regression corpus's case studies (tests/scenarios/case*.yaml) on the same road: each file's ``expect``
    checked over every cycle (``replay --check --step auto``), with the warning or critical findings it opened.
    Last line: ``regression_case_studies_passed=<int>/<int> ...``"""
    import json

    from tests.replays import corpus_replay

    files = sorted((Path(__file__).resolve().parents[1] / "tests" / "scenarios").glob("case*.yaml"))
    passed = warnings = 0
    started = time.perf_counter()
    for path in files:
        t0 = time.perf_counter()
        code, out, err = corpus_replay(path)
        doc = json.loads(out) if out.strip() else {"findings": []}
        paging = [f for f in doc["findings"] if (f.get("worst_severity") or f["severity"]) != "info"]
        warnings += len(paging)
        passed += code == 0
        print(
            f"case study {path.stem:<44} replay_s={time.perf_counter() - t0:>6.1f} cycles={doc.get('steps')} "
            f"check={'passed' if code == 0 else 'FAILED'} warnings_opened={len(paging)}"
        )
        if code:
            for line in err.strip().splitlines():
                print(f"    {line}")
    print(
        f"regression_case_studies_passed={passed}/{len(files)} regression_case_study_warnings={warnings} "
        f"regression_replay_s={time.perf_counter() - started:.1f}"
    )


def bench_case_memory(names: list[str]) -> None:
    """Retrieval of the case memory (tests/cases/retrieval.py): every problem of the corpus replayed on production's
    road and resolved with its cause, then a perturbed variant of it ranked against the cases: top-1 and top-3
    retrieval of its own problem, and false "looks like" suggestions with its own problem left out. Line:
        cases_top1=<float> cases_top3=<float> cases_false_suggestions=<float> cases_variants=<int> ...
    """
    import json

    from tests.cases.retrieval import NEAR_MISSES, available, measure_retrieval

    problems = [p for p in available() if not names or p.name in names]
    near_misses = tuple(p for p in NEAR_MISSES if not names or p.name in names)
    result = measure_retrieval(problems, near_misses=near_misses, log=print)
    run_dir = os.environ.get("WANMON_BENCH_RUN_DIR")
    if run_dir:  # what was compared, to read beside the figures (WANMON_CASES_FINGERPRINTS: a file to keep)
        target = Path(os.environ.get("WANMON_CASES_FINGERPRINTS") or Path(run_dir) / "case-fingerprints.json")
        target.write_text(json.dumps(result.fingerprints, indent=1, default=str))
        print(f"cases_fingerprints={target}")
    if result.without_incident:
        print(f"cases_without_incident={','.join(result.without_incident)}")
    print(result.line())


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _figures(values: list[float], digits: int = 0) -> str:
    return ",".join(f"{v:.{digits}f}" for v in values) or "-"


def _fill_tests(start: datetime, end: datetime) -> tuple[int, int, int]:
    """TCP and owamp every hour on every directed path over [start, end], each path at its own minute of the hour
    (as agents' schedules spread them); returns row counts."""
    with connection.cursor() as c:
        c.execute("DELETE FROM measurements_throughputtest")
        c.execute("DELETE FROM measurements_owamptest")
        c.execute(
            """INSERT INTO measurements_throughputtest (time, src_id, dst_id, tool, protocol, duration_s, streams,
                         window_bytes, mss_bytes, throughput_bps, retransmits, rtt_ms)
                     SELECT t + (p.id %% 60) * interval '1 minute', p.src_id, p.dst_id, 'nuttcp', 'tcp', 10, 1,
                            268435456, 8948, 9.2e9 + random() * 2e8, 1, 20
                     FROM inventory_path p, generate_series(%s::timestamptz, %s::timestamptz, interval '1 hour') t
                     WHERE p.valid_to IS NULL AND t + (p.id %% 60) * interval '1 minute' <= %s""",
            [start, end, end],
        )
        c.execute(
            """INSERT INTO measurements_owamptest (time, src_id, dst_id, packets_sent, packets_lost, duplicates,
                         reordered, delay_min_ms, delay_median_ms, delay_max_ms, jitter_ms, clock_error_ms)
                     SELECT t + (p.id %% 60) * interval '1 minute', p.src_id, p.dst_id, 600, 0, 0, 0, 10, 10.2,
                            11.5, 0.05, 0.1
                     FROM inventory_path p, generate_series(%s::timestamptz, %s::timestamptz, interval '1 hour') t
                     WHERE p.valid_to IS NULL AND t + (p.id %% 60) * interval '1 minute' <= %s""",
            [start, end, end],
        )
        c.execute(
            "SELECT (SELECT count(*) FROM measurements_throughputtest), (SELECT count(*) FROM "
            "measurements_owamptest), (SELECT count(*) FROM inventory_path WHERE valid_to IS NULL)"
        )
        return c.fetchone()


def bench_diagnosis(hours: int, history_days: int, corpus: list[str] | None, corpus_days: float | None = None,
                    cases: list[str] | None = None, *, regression: bool = True, notify: bool = True,
                    mesh: bool = True) -> None:
    """The noise corpus on production's road (unless skipped), then production's cycle over the 12-site mesh's
    132 paths: `history_days` of hourly TCP and owamp results, then `hours` of them replayed as the beat runs
    them, one cycle a minute (``diagnosis_cycle_run``: only the paths with new evidence or an open finding are
    evaluated), and the cost of one cycle that evaluates every path (baselines learned, then from the cache). The
    regression corpus's case studies (``regression``) between the two."""
    from io import StringIO

    from django.core.management import call_command

    from wanmon.diagnosis.models import DiagnosisCycle, Finding, PathEvaluation
    from wanmon.diagnosis.shards import diagnosis_cycle_run

    # The corpus first: its replays roll back, while the mesh below is kept for the cycle timings.
    if corpus is not None:
        bench_noise_corpus(corpus, corpus_days, notify)
    if regression:
        bench_regression_corpus()
    if cases is not None:
        bench_case_memory(cases)
    if not mesh:
        return
    mesh = Path(__file__).resolve().parents[1] / "tests" / "scenarios" / "healthy-mesh-12.yaml"
    t0 = time.perf_counter()
    call_command("replay", str(mesh), "--keep", "--step", "360", stdout=StringIO())  # its topology, one cycle
    print(f"topology_replay_s={time.perf_counter() - t0:.2f}")
    end = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
    start = end - timedelta(hours=hours)
    tests, sessions, paths = _fill_tests(start - timedelta(days=history_days), end)

    def reset() -> None:
        for model in (Finding, DiagnosisCycle, PathEvaluation):
            model.objects.all().delete()

    # Production's road: a cycle every minute over `hours`, the first one evaluating every path (nothing was
    # evaluated before), the others the paths whose new results arrived.
    reset()
    t0, c0 = time.perf_counter(), time.process_time()
    evaluated = opened = 0
    at = start
    while at < end:
        at += timedelta(minutes=1)
        result = diagnosis_cycle_run(now=at)
        opened += len(result.opened)
    with connection.cursor() as c:
        c.execute("SELECT coalesce(sum(evaluations), 0) FROM diagnosis_pathevaluation")
        evaluated = c.fetchone()[0]
    road_s = time.perf_counter() - t0
    road_cpu = time.process_time() - c0
    cycles = hours * 60
    print(
        f"paths={paths} throughput_tests={tests} owamp_sessions={sessions} history_days={history_days} "
        f"cycles={cycles} path_evaluations={evaluated} findings_opened={opened} road_s={road_s:.1f} "
        f"road_python_cpu_s={road_cpu:.1f} per_cycle_ms={1000 * road_s / cycles:.0f}"
    )

    # One cycle that evaluates all 132 paths: baselines learned from the history (no cache: the first cycle of
    # each hour), then from the hourly cache (the cycles after it).
    from django.test import override_settings

    def full_cycle() -> tuple[float, float]:
        reset()
        t0, c0 = time.perf_counter(), time.process_time()
        diagnosis_cycle_run(now=end)
        return time.perf_counter() - t0, time.process_time() - c0

    with override_settings(CACHES={"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}):
        cold = [full_cycle() for _ in range(3)]
    full_cycle()  # fills the cache
    warm = [full_cycle() for _ in range(3)]
    for name, timed in (("uncached", cold), ("cached", warm)):
        wall, cpu_s = (statistics.median(x) for x in zip(*timed, strict=True))
        print(
            f"paths={paths} history_days={history_days} baselines={name} cycle_all_paths_s_median={wall:.2f} "
            f"cycle_python_cpu_s_median={cpu_s:.2f}"
        )
    print(
        f"replay_{hours}h_{paths}_paths_1min_s={road_s:.1f} "
        f"cycle_uncached_s={statistics.median(t[0] for t in cold):.2f} "
        f"cycle_cached_s={statistics.median(t[0] for t in warm):.2f}"
    )
