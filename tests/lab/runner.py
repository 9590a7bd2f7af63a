"""Run one scenario against a running centre and read back what it produced (used by the tests and scripts/lab).

Needs Django set up against the centre's database (writes the inventory, reads the tests and the diagnosis)
and runs outside any test transaction: gunicorn must see the inventory this writes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.lab import harness
from tests.lab.scenarios import Scenario, predicted_bps
from tests.processes import wait_until

RATES_WAIT_S = 90.0
FINDING_WAIT_S = 40.0  # the cycles after the scenario's time that may find it (results still being uploaded)
CYCLE_EVERY_S = 2.0
VERDICT_WAIT_S = 60.0  # a 4 s test fetched within 2 s, behind at most one scheduled test, uploaded within 2 s


@dataclass
class TestResult:
    """One throughput test as the centre stored it."""

    time: datetime
    direction: str  # "A->B" or "B->A"
    protocol: str
    throughput_bps: float | None
    retransmits: int | None
    rtt_ms: float | None
    packets_sent: int | None
    packets_lost: int | None
    error: str | None


@dataclass
class Outcome:
    scenario: Scenario
    measured: harness.Measured
    tests: list[TestResult] = field(default_factory=list)
    owamp: list[dict[str, Any]] = field(default_factory=list)
    rates: list[dict[str, Any]] = field(default_factory=list)
    findings: list[Any] = field(default_factory=list)  # the diagnosis' findings about this scenario's elements
    started: datetime | None = None
    total_s: float = 0.0
    tested: list[dict[str, Any]] = field(default_factory=list)  # diagnosis-driven tests: Finding.tested + code

    def tcp_bps(self, direction: str = "A->B") -> list[float]:
        return [t.throughput_bps for t in self.tests
                if t.direction == direction and t.protocol == "tcp" and t.throughput_bps and not t.error]  # fmt: skip

    def findings_with(self, code: str) -> list[Any]:
        return [f for f in self.findings if f.code == code]

    def report(self) -> str:
        s, m = self.scenario, self.measured
        rates = self.tcp_bps()
        prediction = predicted_bps(s)
        parts = [f"{s.name}: {s.note}"]
        if rates:
            med = sorted(rates)[len(rates) // 2]
            line = f"TCP A->B {', '.join(f'{r / 1e6:.2f}' for r in rates)} Mb/s (median {med / 1e6:.2f})"
            if prediction:
                line += f" vs predicted {prediction / 1e6:.2f} Mb/s (x{med / prediction:.2f})"
            parts.append(line)
        back = self.tcp_bps("B->A")
        if back:
            parts.append(f"TCP B->A {', '.join(f'{r / 1e6:.3f}' for r in back)} Mb/s")
        for key in ("a_to_b", "b_to_a"):
            e = m.emulator.get(key, {})
            causes = {k: v for k, v in e.get("drops", {}).items() if v}
            parts.append(f"emulator {key}: {e.get('in_packets')} packets, dropped {e.get('dropped')} {causes} "
                         f"(TCP data {e.get('tcp_data_drops')})")  # fmt: skip
        parts.append(f"retransmissions {m.retrans}; TUN tx_dropped {m.tx_dropped}; UDP dropped by the hosts "
                     f"{m.udp_receive_errors}; cc {m.congestion_control}")
        parts.append("findings: " + ("".join(f"\n    {f.severity} {f.code} {dict(f.subject)}: {f.summary[:160]}"
                                             + _figures(f) for f in self.findings) or "none"))  # fmt: skip
        for t in self.tested:
            parts.append(f"tested {t['code']} (finding {t['finding']}, test {t.get('job')}): {t.get('verdict') or '-'} "
                         f"{t.get('line') or t.get('reason')}; {t.get('after_finding_s')} s after the finding "
                         f"(seen here {t.get('seen_after_s')} s after the cycle, which found it "
                         f"{t.get('found_after_run_s')} s after the scenario's time); {t.get('figures')}")  # fmt: skip
        parts.append(f"time: {m.elapsed_s:.0f} s measuring, {self.total_s:.0f} s in all")
        return "\n  ".join(parts)


def _figures(finding: Any) -> str:
    """The figures of a finding's evidence that the lab note quotes (period, Mathis band), when present."""
    keys = ("period_s", "throughput_median_bps", "loss_fraction", "mathis_conservative_bps", "mathis_reno_bps")
    shown = {key: round(finding.evidence[key], 6) for key in keys if isinstance(finding.evidence.get(key), float)}
    return f" {shown}" if shown else ""


def _rows(sql: str, params: Any = ()) -> list[tuple]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def run_scenario(
    s: Scenario, work: Path, *, centre_url: str, ca_file: Path | None, agent_suffix: str = "", tests: bool = False
) -> Outcome:
    """Inventory, the lab run, the centre's view of it (tests, rates) and the diagnosis as of the end.

    ``tests``: after the scenario's time, with the agents still running, the cycle runs with the diagnosis-driven
    tests on (as the beat does with WANMON_DIAGNOSIS_TESTS): the findings ask for their tests, site A's agent
    fetches and runs them, and the run waits for their verdicts (``Outcome.tested``)."""
    from django.utils import timezone

    t0 = time.monotonic()
    started = timezone.now()
    tokens = harness.build_inventory(s, agent_suffix=agent_suffix)
    lab = harness.Lab(s, work, centre_url=centre_url, ca_file=ca_file, tokens=tokens,
                      jobs_idle_poll_max_s=2.0 if tests else None)  # fmt: skip
    tested: list[dict[str, Any]] = []
    with lab:
        measured = lab.measure(then=(lambda running: tested.extend(_tested(s, running))) if tests else None)
    outcome = Outcome(s, measured, started=started, tested=tested)
    outcome.tests = _tests(s, started)
    outcome.owamp = _owamp(s, started)
    if s.name == "INTERFACE_ERRORS":  # every interval between two stored polls turned into a rate by the worker
        wait_until("rates of the router's ports", lambda: len(_rates(s, started)) >= _samples(s, started) - 2,
                   timeout_s=RATES_WAIT_S)  # fmt: skip
    outcome.rates = _rates(s, started)
    outcome.findings = diagnose(s)
    outcome.total_s = time.monotonic() - t0
    return outcome


def _tested(s: Scenario, lab: harness.Lab) -> list[dict[str, Any]]:
    """Run the cycle with the diagnosis-driven tests on, and wait (the agents running) until each test it asked
    for has its verdict, or failed or was refused; the findings' ``tested`` entries, with their code."""
    from wanmon.diagnosis.models import Finding
    from wanmon.ondemand.models import Job
    from wanmon.ondemand.probes import PROBE_CODES

    # the beat's cycle, every CYCLE_EVERY_S instead of every minute, until one finds what has a discriminating test
    # (the agents are still running: a test being run or uploaded now arrives in a few seconds)
    first_cycle = time.monotonic()
    deadline = first_cycle + FINDING_WAIT_S
    while True:
        findings = diagnose(s, tests=True)
        if any(f.code in PROBE_CODES for f in findings):
            break
        if time.monotonic() > deadline:
            from django.utils import timezone

            found = [(f.code, dict(f.subject)) for f in findings]
            stored = _tests(s, timezone.now() - timedelta(minutes=10))
            raise AssertionError(f"no finding with a discriminating test: {found}; tests stored: {stored}")
        lab.check_running()
        time.sleep(CYCLE_EVERY_S)
    cycle_done = time.monotonic()
    found_after_s = round(cycle_done - first_cycle, 1)  # beyond the scenario's run_s
    ids = [f.pk for f in findings]

    def settled() -> bool:
        lab.check_running()
        jobs = list(Job.objects.filter(finding_id__in=ids).exclude(probe=""))
        return bool(jobs) and all(j.status in ("done", "failed", "refused") and (j.verdict or j.status != "done")
                                  for j in jobs)  # fmt: skip

    def state() -> str:
        from wanmon.inventory.models import Agent

        found = [(f.code, dict(f.subject), f.tested) for f in Finding.objects.filter(pk__in=ids)]
        polled = list(Agent.objects.filter(site__code__in=[s.site_a, s.site_b]).values_list("name", "jobs_polled_at"))
        return f"findings {found}\njobs {list(Job.objects.filter(finding_id__in=ids).values())}\nagents {polled}"

    wait_until("the verdicts of the diagnosis-driven tests", settled, timeout_s=VERDICT_WAIT_S, every_s=0.25,
               diagnose=state)  # fmt: skip
    seen_after_s = round(time.monotonic() - cycle_done, 1)
    out = []
    for finding in Finding.objects.filter(pk__in=ids).order_by("pk"):
        out += [{"code": finding.code, "finding": finding.pk, "seen_after_s": seen_after_s,
                 "found_after_run_s": found_after_s, **t}
                for t in finding.tested]  # fmt: skip
    return out


def diagnose(s: Scenario, *, tests: bool = False) -> list[Any]:
    """The diagnosis of everything the centre holds now, narrowed to this scenario's sites and router (``tests``:
    the findings ask for their discriminating tests, as with WANMON_DIAGNOSIS_TESTS in production)."""
    from django.utils import timezone

    from wanmon.diagnosis.choices import ACTIVE_STATUSES
    from wanmon.diagnosis.models import Finding
    from wanmon.diagnosis.shards import diagnosis_cycle_run

    now = timezone.now() + timedelta(seconds=1)
    diagnosis_cycle_run(now=now, tests=tests)  # the beat's cycle, as production runs it
    mine = {s.site_a, s.site_b, s.router}
    active = Finding.objects.filter(status__in=ACTIVE_STATUSES)
    return [f for f in active if mine & {str(v) for v in f.subject.values()}]


def _site_ids(s: Scenario) -> dict[int, str]:
    return {pk: code for pk, code in _rows("SELECT id, code FROM inventory_site WHERE code IN (%s, %s)",
                                           (s.site_a, s.site_b))}  # fmt: skip


def _tests(s: Scenario, since: datetime) -> list[TestResult]:
    sites = _site_ids(s)
    out = []
    for row in _rows(
        """SELECT time, src_id, protocol, throughput_bps, retransmits, rtt_ms, packets_sent, packets_lost, error
           FROM measurements_throughputtest WHERE src_id = ANY(%s) AND time >= %s ORDER BY time""",
        (list(sites), since),
    ):
        direction = "A->B" if sites[row[1]] == s.site_a else "B->A"
        out.append(TestResult(row[0], direction, *row[2:]))
    return out


def _owamp(s: Scenario, since: datetime) -> list[dict[str, Any]]:
    sites = _site_ids(s)
    return [
        {"time": r[0], "direction": "A->B" if sites[r[1]] == s.site_a else "B->A", "sent": r[2], "lost": r[3],
         "delay_min_ms": r[4]}
        for r in _rows("""SELECT time, src_id, packets_sent, packets_lost, delay_min_ms FROM measurements_owamptest
                          WHERE src_id = ANY(%s) AND time >= %s ORDER BY time""", (list(sites), since))
    ]  # fmt: skip


def _samples(s: Scenario, since: datetime) -> int:
    ((count,),) = _rows(
        """SELECT count(*) FROM measurements_snmpsample x JOIN inventory_interface i ON i.id = x.interface_id
           JOIN inventory_equipment e ON e.id = i.equipment_id WHERE e.name = %s AND x.time >= %s""",
        (s.router, since),
    )
    return count


def _rates(s: Scenario, since: datetime) -> list[dict[str, Any]]:
    return [
        {"time": r[0], "interface": r[1], "in_bps": r[2], "in_errors_per_s": r[3]}
        for r in _rows(
            """SELECT r.time, i.name, r.in_bps, r.in_errors_per_s FROM measurements_interfacerate r
               JOIN inventory_interface i ON i.id = r.interface_id JOIN inventory_equipment e ON e.id = i.equipment_id
               WHERE e.name = %s AND r.time >= %s ORDER BY r.time""",
            (s.router, since),
        )
    ]
