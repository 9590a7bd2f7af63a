"""``manage.py demo_agents --dir DIR [--scenario FILE] [--url URL]``: the simulated site agents of ``scripts/demo``.

Idempotent. From a scenario file (default: the LHC demo, ``wanmon/demo/data/lhc-demo.yaml``):

* imports its topology (the LHC topology of ``demo_data`` plus a few hosts);
* registers one agent per site, ``<site>-demo``, allowed to poll the equipment whose SNMP records
  it will replay (:data:`SNMP_POLLERS`), and writes its token to ``DIR/<SITE>.token`` (mode 600);
  an existing agent keeps its token while ``DIR`` holds it, else it gets a new one;
* writes ``DIR/<SITE>.toml`` (mode 600), a ``wanmon-agent`` configuration with one ``[[replay]]``
  table: the site's part of the scenario's timeline, shifted so that the scenario's end is the
  moment the demo first started (kept in ``DIR/timeline.json``, so that restarts continue the
  same timeline), looping every period;
* enters the scenario's maintenance windows, shifted the same way (and recurring with the loop),
  so that the diagnosis can explain what happens during them.

``wanmon-agent run --config DIR/<SITE>.toml`` then backfills the whole history on its first run
and keeps sending what becomes due.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import yaml
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from agents.replay_collector import ReplayError, timeline_bounds
from collectors.records import PATH_TEST_TYPES
from wanmon.inventory.models import Agent, Carrier, Equipment, Site
from wanmon.inventory.services import agent_assign_equipment, agent_create, agent_token_hash, agent_token_rotate
from wanmon.inventory.topology import TopologyInvalid, topology_import
from wanmon.maintenance.models import MaintenanceWindow
from wanmon.maintenance.services import maintenance_window_create

LHC_DEMO = Path(__file__).resolve().parents[2] / "data" / "lhc-demo.yaml"
# Who polls which shared element in the demo (an agent may only send SNMP of equipment assigned to it).
# Equipment not listed: its own site's agent, else CERN's (the Tier-0 NOC).
SNMP_POLLERS = {
    "geant-gva": "CERN",
    "uslhcnet-gva": "CERN",
    "geant-fra": "FZK",
    "uslhcnet-chi": "FNAL",
    "janet-lon": "RAL",
    "ral-border": "RAL",
    "surf-ams": "SARA",
}
DEFAULT_POLLER = "CERN"
UPLOAD_INTERVAL_S = 10  # the demo wants its backfill and each new record on screen quickly
BATCH_MAX_RECORDS = 5000
REPLAY_INTERVAL_S = 60


def read_scenario(path: Path) -> dict:
    """The scenario document: JSON decoded with msgspec (fast), anything else with PyYAML."""
    raw = path.read_bytes()
    if raw.lstrip()[:1] == b"{":
        try:
            return msgspec.json.decode(raw)
        except msgspec.DecodeError:
            pass
    doc = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader
    if not isinstance(doc, dict):
        raise CommandError(f"{path}: not a scenario file (docs/scenario-format.md)")
    return doc


def _time(value: Any) -> datetime | None:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(UTC)
    return None


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str | Path):
        return json.dumps(str(value))  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(type(value))


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` with mode 600 (also when the file existed with other permissions)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


def _duration(period: timedelta) -> str:
    seconds = round(period.total_seconds())
    return f"{seconds // 3600} h" if seconds % 3600 == 0 else f"{seconds} s"


def _rrule(period: timedelta) -> str:
    # Whole days as DAILY: the maintenance app refuses rules whose FREQ is finer than daily.
    seconds = round(period.total_seconds())
    if seconds % 86400 == 0:
        return f"FREQ=DAILY;INTERVAL={seconds // 86400}"
    if seconds % 3600 == 0:
        return f"FREQ=HOURLY;INTERVAL={seconds // 3600}"
    if seconds % 60 == 0:
        return f"FREQ=MINUTELY;INTERVAL={seconds // 60}"
    return f"FREQ=SECONDLY;INTERVAL={seconds}"


class Timeline:
    """Where the scenario's timeline sits in real time: its end maps to ``anchor``; it repeats every ``period``
    (the agents' replay collector computes the same bounds: ``timeline_bounds``)."""

    def __init__(self, doc: dict, *, anchor: datetime, speed: float, name: str) -> None:
        try:
            _, _, _, end, period = timeline_bounds(doc, name=name)
        except ReplayError as exc:
            raise CommandError(str(exc)) from None
        self.end = datetime.fromtimestamp(end, UTC)
        self.anchor, self.speed = anchor, speed
        self.period = timedelta(seconds=period) / speed

    def shift(self, moment: datetime) -> datetime:
        return self.anchor + (moment - self.end) / self.speed


class Command(BaseCommand):
    help = (
        "Create (idempotently) one simulated agent per site of a scenario, with its token and a wanmon-agent "
        "configuration replaying the site's part of the timeline ([[replay]]), and enter its maintenance windows."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dir", required=True, type=Path, help="where to write <SITE>.toml, tokens and spools")
        parser.add_argument("--scenario", type=Path, default=LHC_DEMO, help=f"scenario file (default: {LHC_DEMO})")
        parser.add_argument(
            "--url",
            default=os.environ.get("WANMON_BASE_URL") or settings.WANMON_BASE_URL or "",
            help="the centre's base URL the agents upload to (default: $WANMON_BASE_URL)",
        )
        parser.add_argument("--speed", type=float, default=1.0, help="scenario seconds per real second (default 1)")
        parser.add_argument("--no-loop", action="store_true", help="stop at the end of the timeline")

    def handle(self, *args, **options):
        scenario: Path = options["scenario"].resolve()
        directory: Path = options["dir"].resolve()
        url = (options["url"] or "http://127.0.0.1:8000").rstrip("/")
        loop = not options["no_loop"]
        speed = options["speed"]
        if speed <= 0:
            raise CommandError("--speed must be positive")
        try:
            doc = read_scenario(scenario)
        except (OSError, yaml.YAMLError) as exc:
            raise CommandError(f"{scenario}: {exc}") from None
        if not isinstance(doc.get("measurements"), list):
            raise CommandError(f"{scenario}: not a scenario file: no measurements (docs/scenario-format.md)")
        directory.mkdir(parents=True, exist_ok=True)
        os.chmod(directory, 0o700)

        try:
            report = topology_import(doc.get("topology") or {}, prefix="topology")
        except TopologyInvalid as exc:
            raise CommandError(f"{scenario}:\n{exc}") from None
        self.stdout.write(f"topology of {scenario.name}: " + "; ".join(report.lines()))

        timeline = Timeline(doc, anchor=self._anchor(directory, doc, scenario), speed=speed, name=str(scenario))
        records, snmp_equipment = self._inventory(doc)
        pollers: dict[str, list[str]] = {}
        for name in sorted(snmp_equipment):
            eq = Equipment.objects.select_related("site").filter(name=name).first()
            if eq is None:
                continue
            site = SNMP_POLLERS.get(name) or (eq.site.code if eq.site_id else DEFAULT_POLLER)
            pollers.setdefault(site, []).append(name)

        codes = {code for code, kind in records if kind != "snmp"} | set(pollers)
        sites = Site.objects.filter(code__in=codes).order_by("code")
        for site in sites:
            equipment = pollers.get(site.code, [])
            agent, how = self._agent(site, directory, equipment)
            if agent is None:
                self.stderr.write(f"{site.code}: {how}; no configuration written")
                continue
            config = directory / f"{site.code}.toml"
            _write_private(config, self._config(site, agent, directory, scenario, url, timeline, loop, equipment))
            count = sum(n for (code, _), n in records.items() if code == site.code) + sum(
                n for (code, kind), n in records.items() if kind == "snmp" and code in equipment
            )
            self.stdout.write(
                f"{site.code}: agent {agent.name} ({how}), {count} records to replay"
                + (f", SNMP of {', '.join(equipment)}" if equipment else "")
                + f" -> {config}"
            )
        for line in self._maintenance(doc, timeline, loop):
            self.stdout.write(line)
        self.stdout.write(
            f"timeline: the scenario's end is {timeline.anchor:%Y-%m-%d %H:%M:%S} UTC"
            + (f", repeating every {_duration(timeline.period)}" if loop else "")
        )

    # -- pieces

    def _anchor(self, directory: Path, doc: dict, scenario: Path) -> datetime:
        """The real time the scenario's end maps to: chosen on the first run, kept in DIR/timeline.json."""
        path = directory / "timeline.json"
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
            anchor = _time(kept.get("anchor"))
            if anchor is not None and kept.get("scenario") == str(scenario):
                return anchor
        except (OSError, ValueError, AttributeError):
            pass
        anchor = timezone.now().astimezone(UTC).replace(microsecond=0)
        state = {"scenario": str(scenario), "name": doc.get("scenario"), "anchor": anchor.isoformat()}
        _write_private(path, json.dumps(state, indent=1) + "\n")
        return anchor

    @staticmethod
    def _inventory(doc: dict) -> tuple[Counter, set[str]]:
        """Records per (site or equipment, kind) that an agent will send, and the equipment with SNMP records."""
        records: Counter = Counter()
        equipment: set[str] = set()
        for m in doc["measurements"]:
            if not isinstance(m, dict):
                continue
            kind = m.get("type")
            if kind in PATH_TEST_TYPES and m.get("src"):
                records[(m["src"], kind)] += 1
            elif kind == "host_tcp" and m.get("site"):
                records[(m["site"], kind)] += 1
            elif kind == "snmp" and m.get("equipment"):
                records[(m["equipment"], kind)] += 1
                equipment.add(m["equipment"])
        return records, equipment

    @transaction.atomic
    def _agent(self, site: Site, directory: Path, equipment_names: list[str]) -> tuple[Agent | None, str]:
        name = f"{site.code.lower()}-demo"
        token_path = directory / f"{site.code}.token"
        token = token_path.read_text(encoding="utf-8").strip() if token_path.exists() else ""
        equipment = list(Equipment.objects.filter(name__in=equipment_names))
        agent = Agent.objects.select_related("site").filter(name=name).first()
        if agent is None:
            try:
                agent, token = agent_create(site=site, name=name, equipment=equipment)
            except ValidationError as exc:
                return None, "; ".join(exc.messages)
            how = "created"
        elif agent.site_id != site.id:
            return None, f"agent {name} exists for site {agent.site.code}"
        elif agent.revoked_at is not None:
            return None, f"agent {name} is revoked (manage.py agent_create --site {site.code} for a new one)"
        elif not token or agent_token_hash(token) != agent.token_hash:
            token = agent_token_rotate(agent=agent)
            how = "new token"
        else:
            how = "unchanged"
        if how != "unchanged":
            _write_private(token_path, token + "\n")
        agent_assign_equipment(agent=agent, equipment=equipment, replace=True)
        return agent, how

    @staticmethod
    def _config(
        site: Site,
        agent: Agent,
        directory: Path,
        scenario: Path,
        url: str,
        timeline: Timeline,
        loop: bool,
        equipment: list[str],
    ) -> str:
        lines = [
            f"# wanmon-agent configuration of the simulated {site.code} agent of scripts/demo.",
            "# Written by `manage.py demo_agents`; run with: wanmon-agent run --config <this file>",
            "[central]",
            f"url = {_toml(url)}",
            f"token_file = {_toml(directory / f'{site.code}.token')}",
            "",
            "[agent]",
            f"site = {_toml(site.code)}",
            f"name = {_toml(agent.name)}",
            f"spool_dir = {_toml(directory / 'spool' / site.code)}",
            f"upload_interval_s = {UPLOAD_INTERVAL_S}",
            f"batch_max_records = {BATCH_MAX_RECORDS}",
            "start_jitter_s = 0",
            'log_level = "INFO"',
            "",
            "[[replay]]",
            f"file = {_toml(scenario)}",
            f"shift = {_toml(timeline.anchor.isoformat().replace('+00:00', 'Z'))}",
            f"speed = {_toml(float(timeline.speed))}",
            f"loop = {_toml(loop)}",
            f"interval_s = {REPLAY_INTERVAL_S}",
            f"equipment = {_toml(equipment)}",
        ]
        return "\n".join(lines) + "\n"

    def _maintenance(self, doc: dict, timeline: Timeline, loop: bool) -> list[str]:
        out = []
        for i, w in enumerate(doc.get("maintenance") or []):
            start, end = (_time(w.get("start")), _time(w.get("end"))) if isinstance(w, dict) else (None, None)
            if not (start and end and w.get("reference")):
                out.append(f"maintenance[{i}]: skipped (needs reference, start and end)")
                continue
            carrier = Carrier.objects.filter(code=w.get("carrier")).first() if w.get("carrier") else None
            reference = str(w["reference"])
            existing = MaintenanceWindow.objects.filter(carrier=carrier, reference=reference).first()
            if existing is not None:
                out.append(f"maintenance {reference}: exists ({existing.start:%Y-%m-%d %H:%M} UTC)")
                continue
            try:
                window = maintenance_window_create(
                    reference=reference,
                    carrier=carrier,
                    start=timeline.shift(start),
                    end=timeline.shift(end),
                    summary=str(w.get("description") or ""),
                    impact=str(w.get("impact") or "outage"),
                    rrule=_rrule(timeline.period) if loop else "",
                    affects=[str(a) for a in w.get("affects") or []],
                )
            except ValidationError as exc:
                out.append(f"maintenance {reference}: not entered: {'; '.join(exc.messages)}")
                continue
            out.append(
                f"maintenance {reference}: {window.start:%Y-%m-%d %H:%M}-{window.end:%H:%M} UTC"
                + (f", every {_duration(timeline.period)}" if loop else "")
            )
        return out
