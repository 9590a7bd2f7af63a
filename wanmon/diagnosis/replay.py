"""Scenario replay (docs/scenario-format.md): load a scenario through the real code paths and diagnose it.

The topology goes through the inventory import, the maintenance windows through the maintenance
models, the measurements through the same validation, ingest (COPY), counter-rate and rollup code
the agents' uploads take. The diagnosis then runs over the database as of the scenario's ``now``.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path as FilePath
from typing import Any

import yaml
from django.db import connection, transaction

from collectors.records import RecordError, decode_records
from collectors.records.types import iso_z
from wanmon.core.jsonable import jsonable
from wanmon.diagnosis.codes import SEVERITY_ORDER
from wanmon.diagnosis.evidence import AgentSchedule
from wanmon.diagnosis.models import Finding, FindingEvent
from wanmon.diagnosis.selectors import agent_schedules_declared
from wanmon.diagnosis.shards import diagnosis_cycle_run
from wanmon.inventory.models import Carrier, Circuit, Equipment, Interface, Site, Trunk
from wanmon.inventory.topology import KnownRefs, TopologyInvalid, topology_import, topology_validate
from wanmon.maintenance.choices import Impact
from wanmon.maintenance.models import MaintenanceAffect, MaintenanceWindow
from wanmon.measurements.ingest import IngestError, batch_ingest
from wanmon.measurements.services import measurements_process

TOP_LEVEL_KEYS = {"scenario", "description", "now", "topology", "maintenance", "measurements", "expect", "agents"}
# Production's beat runs the cycle every minute; a replay does the same unless told to coarsen (--step).
DEFAULT_STEP = timedelta(minutes=1)
REPLAY_NAMESPACE = uuid.UUID("0f9a7c52-55b0-4c55-9a1f-6f0d2f0c7e11")
NOT_REPLACED = (
    "a replay does not replace the routes in force of this database: replay the file into a database of its own "
    "(an empty one, or one holding the same topology)"
)


class ScenarioInvalid(Exception):
    """The file cannot be replayed; ``errors`` are (path inside the document, message) pairs."""

    def __init__(self, filename: str, errors: list[tuple[str, str]]):
        self.filename = filename
        self.errors = errors
        super().__init__("\n".join(self.lines()))

    def lines(self) -> list[str]:
        return [
            f"{self.filename}: {path}: {message}" if path else f"{self.filename}: {message}"
            for path, message in self.errors
        ]


@dataclass(frozen=True)
class ReplayedFinding:
    """A finding as the replay's steps left it: what the stored finding says at the scenario's ``now`` (its last
    evaluation), its lifecycle (first and last seen, resolved, status) and the worst severity it ever had."""

    id: int
    code: str
    severity: str
    worst_severity: str
    subject: dict
    rank: int | None
    start: datetime
    end: datetime
    onset: datetime | None
    summary: str
    explanation: str
    evidence: dict
    actions: tuple[str, ...]
    explained_by: tuple[str, ...]
    status: str
    first_seen_at: datetime
    last_seen_at: datetime
    resolved_at: datetime | None

    def to_dict(self) -> dict:
        """The replay JSON object of docs/scenario-format.md#replay."""
        times = ("start", "end", "onset", "first_seen_at", "last_seen_at", "resolved_at")
        data = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "id"}
        data.update({name: iso_z(data[name], utc=True) if data[name] else None for name in times})
        data["actions"], data["explained_by"] = list(self.actions), list(self.explained_by)
        return data


@dataclass
class ReplayResult:
    """What a replay found, as the JSON of docs/scenario-format.md#replay, plus the --check verdict."""

    scenario: str
    now: datetime
    findings: list[ReplayedFinding]
    interface_rates: list[dict]
    steps: int = 0
    step_s: float = 0.0
    incidents: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {
            "scenario": self.scenario,
            "now": iso_z(self.now, utc=True),
            "steps": self.steps,
            "step_s": self.step_s,
            "findings": [f.to_dict() for f in self.findings],
            "incidents": [jsonable(i) for i in self.incidents],
            "interface_rates": self.interface_rates,
        }


def parse_time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return moment if moment.tzinfo else None
    return None


@dataclass
class Scenario:
    """A validated scenario file."""

    name: str
    now: datetime
    first: datetime
    topology: dict
    maintenance: list[dict]
    records: list
    expect: dict
    schedules: tuple[AgentSchedule, ...]
    digest: str


def scenario_load(filename: str) -> Scenario:
    """Read and validate a scenario file completely; raise ScenarioInvalid with every problem found."""
    name = str(filename)
    try:
        text = FilePath(filename).read_bytes()
    except OSError as exc:
        raise ScenarioInvalid(name, [("", f"cannot read the file: {exc.strerror or exc}")]) from None
    try:
        # libyaml's loader when PyYAML has it: a 10 000-record scenario loads in 2 s instead of 6.
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ScenarioInvalid(name, [("", f"not valid YAML: {where}{getattr(exc, 'problem', exc)}")]) from None
    if not isinstance(doc, dict):
        raise ScenarioInvalid(name, [("", "a scenario must be a mapping with scenario, topology, measurements ...")])

    errors: list[tuple[str, str]] = []
    for key in doc:
        if key not in TOP_LEVEL_KEYS:
            errors.append((str(key), f"unknown key (expected one of {', '.join(sorted(TOP_LEVEL_KEYS))})"))
    scenario_name = doc.get("scenario")
    if not isinstance(scenario_name, str) or not scenario_name.strip():
        errors.append(("scenario", "required: the scenario's unique name"))
    topology = doc.get("topology") or {}
    try:
        topology_validate(topology, prefix="topology", known=KnownRefs.from_database())
    except TopologyInvalid as exc:
        errors.extend((e.path, e.message) for e in exc.errors)

    raw_measurements = doc.get("measurements")
    records: list = []
    if raw_measurements is None:
        raw_measurements = []
    if not isinstance(raw_measurements, list):
        errors.append(("measurements", "must be a list of measurement records"))
    else:
        try:
            records = decode_records(raw_measurements, path="measurements")
        except RecordError as exc:
            errors.extend((e["path"], e["message"]) for e in exc.errors)

    times = [r.time for r in records]
    now = None
    if doc.get("now") is not None:
        now = parse_time(doc["now"])
        if now is None:
            errors.append(("now", "must be an ISO 8601 time with a zone, e.g. 2026-03-01T12:00:00Z"))
    maintenance = doc.get("maintenance") or []
    errors.extend(_maintenance_errors(maintenance, topology))
    expect = doc.get("expect") or {}
    errors.extend(_expect_errors(expect))
    schedules: list[AgentSchedule] = []
    for i, agent in enumerate(doc.get("agents") or []):
        if not isinstance(agent, dict) or not agent.get("site") or not isinstance(agent.get("interval_s"), int | float):
            errors.append((f"agents[{i}]", "needs site and a numeric interval_s"))
            continue
        schedules.append(
            AgentSchedule(
                agent["site"], agent.get("collector", "host_tcp"), float(agent["interval_s"]), agent.get("host")
            )
        )
    if errors:
        raise ScenarioInvalid(name, errors)
    if now is None:
        if not times:
            raise ScenarioInvalid(name, [("now", "required when the scenario has no measurements")])
        now = max(times)
    return Scenario(
        name=scenario_name,
        now=now,
        first=min(times) if times else now,
        topology=topology,
        maintenance=maintenance,
        records=records,
        expect=expect,
        schedules=tuple(schedules),
        digest=hashlib.sha256(text).hexdigest(),
    )


def _maintenance_errors(maintenance: Any, topology: dict) -> list[tuple[str, str]]:
    if not isinstance(maintenance, list):
        return [("maintenance", "must be a list of windows")]
    errors = []
    impacts = {c.value for c in Impact}
    for i, w in enumerate(maintenance):
        path = f"maintenance[{i}]"
        if not isinstance(w, dict):
            errors.append((path, "must be a mapping"))
            continue
        if not w.get("reference"):
            errors.append((f"{path}.reference", "required: the carrier's maintenance id"))
        start, end = parse_time(w.get("start")), parse_time(w.get("end"))
        if start is None:
            errors.append((f"{path}.start", "required: an ISO 8601 time with a zone"))
        if end is None:
            errors.append((f"{path}.end", "required: an ISO 8601 time with a zone"))
        if start and end and end <= start:
            errors.append((f"{path}.end", "must be after start"))
        if w.get("impact", "outage") not in impacts:
            errors.append((f"{path}.impact", f"must be one of {', '.join(sorted(impacts))}"))
        affects = w.get("affects") or []
        if not isinstance(affects, list) or not affects:
            errors.append((f"{path}.affects", "must list at least one element (equipment, equipment:interface, trunk)"))
            continue
        known_eq = {e.get("name") for e in topology.get("equipment") or [] if isinstance(e, dict)}
        known_eq |= set(Equipment.objects.values_list("name", flat=True))
        known_trunks = {t.get("name") for t in topology.get("trunks") or [] if isinstance(t, dict)}
        known_trunks |= set(Trunk.objects.values_list("name", flat=True))
        known_sites = {s.get("code") for s in topology.get("sites") or [] if isinstance(s, dict)}
        known_sites |= set(Site.objects.values_list("code", flat=True))
        for j, label in enumerate(affects):
            label = str(label)
            if label.startswith("site:"):
                ok = label[5:] in known_sites
            elif label.startswith("circuit:"):
                ok = Circuit.objects.filter(cid=label[8:]).exists() or any(
                    c.get("cid") == label[8:] for c in topology.get("circuits") or [] if isinstance(c, dict)
                )
            else:
                ok = label in known_eq or label in known_trunks or label.partition(":")[0] in known_eq
            if not ok:
                errors.append((f"{path}.affects[{j}]", f"unknown element {label!r}"))
        carrier = w.get("carrier")
        if (
            carrier
            and carrier not in {c.get("code") for c in topology.get("carriers") or [] if isinstance(c, dict)}
            and not Carrier.objects.filter(code=carrier).exists()
        ):
            errors.append((f"{path}.carrier", f"unknown carrier {carrier!r}"))
    return errors


def _expect_errors(expect: Any) -> list[tuple[str, str]]:
    if not isinstance(expect, dict):
        return [("expect", "must be a mapping with findings and/or absent")]
    errors = []
    from wanmon.diagnosis import codes

    for part in ("findings", "absent"):
        for i, e in enumerate(expect.get(part) or []):
            if not isinstance(e, dict) or not codes.is_known(str(e.get("code"))):
                errors.append(
                    (
                        f"expect.{part}[{i}].code",
                        f"unknown finding code {e.get('code') if isinstance(e, dict) else e!r}",
                    )
                )
    return errors


def _maintenance_apply(windows: list[dict]) -> None:
    for w in windows:
        carrier = Carrier.objects.filter(code=w["carrier"]).first() if w.get("carrier") else None
        window, _ = MaintenanceWindow.objects.update_or_create(
            carrier=carrier,
            reference=str(w["reference"]),
            defaults={
                "start": parse_time(w["start"]),
                "end": parse_time(w["end"]),
                "impact": w.get("impact", "outage"),
                "summary": str(w.get("description") or ""),
            },
        )
        window.affects.all().delete()
        for label in w.get("affects") or []:
            label = str(label)
            target: dict[str, Any] = {}
            if label.startswith("site:"):
                target["site"] = Site.objects.get(code=label[5:])
            elif label.startswith("circuit:"):
                target["circuit"] = Circuit.objects.filter(cid=label[8:]).first()
            elif Trunk.objects.filter(name=label).exists():
                target["trunk"] = Trunk.objects.get(name=label)
            elif ":" in label and not Equipment.objects.filter(name=label).exists():
                eq_name, _, if_name = label.partition(":")
                eq = Equipment.objects.get(name=eq_name)
                target["interface"], _ = Interface.objects.get_or_create(equipment=eq, name=if_name)
            else:
                target["equipment"] = Equipment.objects.get(name=label)
            MaintenanceAffect.objects.create(window=window, **target)


def _interface_rates(interface_ids: list[int], until: datetime) -> list[dict]:
    if not interface_ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT e.name, i.name, r.time, r.in_bps, r.out_bps, r.in_errors_per_s, r.in_discards_per_s
               FROM measurements_interfacerate r JOIN inventory_interface i ON i.id = r.interface_id
               JOIN inventory_equipment e ON e.id = i.equipment_id
               WHERE r.interface_id = ANY(%s) AND r.time <= %s ORDER BY e.name, i.name, r.time""",
            [interface_ids, until],
        )
        return [
            {
                "equipment": eq,
                "interface": iface,
                "time": iso_z(t, utc=True),
                "in_bps": in_bps,
                "out_bps": out_bps,
                "in_errors_per_s": errs,
                "in_discards_per_s": disc,
            }
            for eq, iface, t, in_bps, out_bps, errs, disc in cursor.fetchall()
        ]


def finding_matches(finding, expected: dict) -> bool:
    """Expectation semantics: same code, every subject key the expectation gives is equal, rank if given."""
    if finding.code != expected.get("code"):
        return False
    for key, value in (expected.get("subject") or {}).items():
        if finding.subject.get(key) != value:
            return False
    return "rank" not in expected or finding.rank == expected["rank"]


def expect_check(findings: list, expect: dict) -> list[str]:
    """Every missing expected finding and every forbidden one present, as readable lines. Over a replay's
    findings (every finding opened at any step) a forbidden one is one that some step opened."""
    problems = []
    for e in expect.get("findings") or []:
        if not any(finding_matches(f, e) for f in findings):
            problems.append(f"missing: {_describe(e)}")
    for e in expect.get("absent") or []:
        for f in findings:
            if finding_matches(f, e):
                when = f" opened at {iso_z(f.first_seen_at, utc=True)}" if isinstance(f, ReplayedFinding) else ""
                problems.append(f"forbidden: {_describe(e)} (found {f.code} {dict(f.subject)}{when})")
    return problems


def _describe(e: dict) -> str:
    subject = ", ".join(f"{k}={v}" for k, v in (e.get("subject") or {}).items())
    rank = f" rank {e['rank']}" if "rank" in e else ""
    return f"{e.get('code')}{' {' + subject + '}' if subject else ''}{rank}"


def replay_steps(first: datetime, now: datetime, step: timedelta, since: datetime | None = None) -> list[datetime]:
    """The times the replay runs a cycle at: every ``step`` after the scenario's first measurement (or after
    ``since``), ending exactly at its ``now`` (pure)."""
    if step <= timedelta(0):
        raise ValueError("the step must be positive")
    begin = max(first, since) if since is not None else first
    times = []
    at = now
    while at > begin:
        times.append(at)
        at -= step
    return times[::-1] or [now]


def shortest_test_interval(records: list) -> timedelta:
    """The shortest measurement interval of the scenario's path tests: for each direction and kind of test the
    median spacing of its results, the least of those (pure). A replay stepping at most this far apart sees every
    round of its most frequent test as production's beat would; a scenario without repeated tests gives the
    beat's minute."""
    series: dict[tuple, list[datetime]] = {}
    for r in records:
        if getattr(r, "src", None) is not None and getattr(r, "dst", None) is not None:
            series.setdefault((type(r).__name__, r.src, r.dst), []).append(r.time)
    spacings = []
    for times in series.values():
        times.sort()
        gaps = sorted((b - a).total_seconds() for a, b in zip(times, times[1:], strict=False) if b > a)
        if gaps:
            spacings.append(gaps[len(gaps) // 2])
    if not spacings:
        return DEFAULT_STEP
    return max(DEFAULT_STEP, timedelta(seconds=min(spacings)))


def replayed_findings(ids: set[int]) -> list[ReplayedFinding]:
    """The stored findings the replay opened or reopened, as the steps left them, the worst severity of each read
    from its events (pure read)."""
    worst: dict[int, str] = {}
    for finding_id, data in FindingEvent.objects.filter(finding_id__in=ids).values_list("finding_id", "data"):
        severity = (data or {}).get("severity")
        if severity in SEVERITY_ORDER and SEVERITY_ORDER[severity] > SEVERITY_ORDER.get(worst.get(finding_id), -1):
            worst[finding_id] = severity
    out = []
    for f in Finding.objects.filter(id__in=ids).order_by("first_seen_at", "code", "subject_key"):
        out.append(
            ReplayedFinding(
                id=f.id,
                code=f.code,
                severity=f.severity,
                worst_severity=max(worst.get(f.id, f.severity), f.severity, key=SEVERITY_ORDER.__getitem__),
                subject=dict(f.subject),
                rank=f.rank,
                start=f.start,
                end=f.end,
                onset=f.onset,
                summary=f.summary,
                explanation=f.explanation,
                evidence=dict(f.evidence or {}),
                actions=tuple(f.actions or ()),
                explained_by=tuple(f.explained_by or ()),
                status=f.status,
                first_seen_at=f.first_seen_at,
                last_seen_at=f.last_seen_at,
                resolved_at=f.resolved_at,
            )
        )
    return out


def scenario_store(scenario: Scenario) -> list[int]:
    """Store what the scenario describes as a live centre would have received it: the topology through the
    inventory import, the maintenance windows, the measurements through the agents' ingest (validation, COPY,
    counter rates, rollups). Returns the polled interfaces' ids. Raises ScenarioInvalid for data the ingest
    refuses. A file stored before stores nothing twice (its batch id derives from its content).

    The topology adds to the inventory and never re-routes it: a path of the file whose route or capacity
    differs from the version in force in this database (another network's, e.g. the demo's LHC topology under
    ``scripts/manage``) raises ScenarioInvalid. Imported, it would be the version in force from the real now
    on, for the live cycles too (the demo's measurements judged with the file's capacities, and e-mailed), while
    the replay's own cycles, at the file's times, would still judge the routes in force then."""
    try:
        topology_import(scenario.topology, prefix="topology", replace_paths=False)
    except TopologyInvalid as exc:
        raise ScenarioInvalid(
            scenario.name,
            [*((e.path, e.message) for e in exc.errors), ("", NOT_REPLACED)],
        ) from None
    _maintenance_apply(scenario.maintenance)
    if not scenario.records:
        return []
    batch_id = str(uuid.uuid5(REPLAY_NAMESPACE, f"{scenario.name}:{scenario.digest}"))
    try:
        ingested = batch_ingest(
            batch_id=batch_id, records=scenario.records, source="replay", error_prefix="measurements"
        )
    except IngestError as exc:
        raise ScenarioInvalid(scenario.name, [(e["path"], e["message"]) for e in exc.errors]) from None
    measurements_process(interface_since=ingested.interface_since)
    if ingested.duplicate:
        return _scenario_interface_ids(scenario)
    return sorted(ingested.interface_since)


def scenario_replay(
    scenario: Scenario,
    *,
    keep: bool = False,
    step: timedelta | None = None,
    since: datetime | None = None,
    after_step: Callable[[datetime], Any] | None = None,
    incidents: Callable[[set[int]], list[dict]] | None = None,
) -> ReplayResult:
    """Load the scenario into the database and run production's diagnosis cycle over its timeline.

    The measurements go in through the real ingest first; then ``diagnosis_cycle_run`` (the code the Celery beat
    runs every minute: plan, shards, findings' lifecycle with its hysteresis, resolution and reopening) runs every
    ``step`` (default: the scenario's shortest test interval, ``shortest_test_interval``) from the scenario's first
    measurement (or ``since``) to its ``now``, each cycle seeing what production
    would have seen at that time (measurements up to it, the last 6 hours against the 21 days before). After each
    cycle ``after_step(time)`` runs (``--notify``: the alerting). The result lists every finding opened or
    reopened on the way, with its lifecycle.

    Without ``keep`` everything happens in one transaction that is rolled back: the database is left
    as it was. With ``keep`` the data and the findings are committed (demo data, incident archives);
    replaying the same file again stores nothing twice (the batch id derives from the file's content).
    """
    with transaction.atomic():
        interface_ids = scenario_store(scenario)
        step = step or shortest_test_interval(scenario.records)
        times = replay_steps(scenario.first, scenario.now, step, since)
        touched: set[int] = set()
        with agent_schedules_declared(scenario.schedules):
            for at in times:
                cycle = diagnosis_cycle_run(now=at)
                touched.update(cycle.opened, cycle.reopened)
                if after_step is not None:
                    after_step(at)
        findings = replayed_findings(touched)
        result = ReplayResult(
            scenario=scenario.name,
            now=scenario.now,
            findings=findings,
            interface_rates=_interface_rates(interface_ids, scenario.now),
            steps=len(times),
            step_s=step.total_seconds(),
            incidents=incidents(touched) if incidents is not None else [],
        )
        result.problems = expect_check(findings, scenario.expect)
        if not keep:
            transaction.set_rollback(True)
    return result


def _scenario_interface_ids(scenario: Scenario) -> list[int]:
    wanted = {(r.equipment, r.interface) for r in scenario.records if hasattr(r, "counters")}
    return sorted(i.id for i in Interface.objects.select_related("equipment") if (i.equipment.name, i.name) in wanted)
