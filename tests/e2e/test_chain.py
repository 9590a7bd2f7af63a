"""The whole chain as one system, as a site admin deploys it: six real routers, the real agent, the real centre.

snmpsim serves six real IF-MIB captures (``../shared/fixtures/snmprec``); between two polls every data file is
rewritten with counters advanced by known increments (:mod:`tests.e2e.chain_harness`). ``wanmon-agent run``
polls them every ``POLL_S`` seconds with its real scheduler, spool and uploader, over HTTPS (a test CA) to
gunicorn serving the centre on the test database. A real Celery worker computes rates and rollups, runs the
diagnosis when told to (as the beat would) and sends the alert e-mail to aiosmtpd; Chromium shows the path page.

The inventory knows the six devices (named after the captures, assigned to the agent), two sites and a path
RAL->CERN whose hops include the port arista_eos:Ethernet1. On that port the injected fault: ifInErrors rises
by ``ERRORS_PER_POLL`` per poll from the second poll on, and ifOperStatus is down(2) in the last poll.

Numbers asserted: every interface the agent's default selection keeps (``wanmon-agent once --dry-run`` on the
same devices) is stored, per device, and is one the capture has; each stored rate equals the injected counter
delta over the stored poll interval; the 1 h rollup counts exactly the injected errors; the spool is empty;
the diagnosis finds INTERFACE_ERRORS on the port and PATH_DOWN on the path; aiosmtpd receives exactly one
e-mail for the incident; the path page in Chromium lists both findings.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import issue_server_certificate, make_ca
from tests.agents.harness import AgentProcess, agent_argv
from tests.e2e.chain_harness import (
    CAPTURE_NAMES,
    COUNTERS,
    WAIT_S,
    Capture,
    Centre,
    Injection,
    Worker,
    captures_or_skip,
    database_url_for_subprocesses,
    private_redis_url,
    write_version,
)
from tests.mail import SmtpServer
from tests.processes import wait_until

pytest.importorskip("snmpsim", reason="snmpsim (dev extra) is needed for the SNMP simulator")
pytest.importorskip("aiosmtpd", reason="aiosmtpd (dev extra) is needed for the SMTP server")

# django_db (not transactional): it makes pytest-django create the test database; each test only reads, inside a
# transaction rolled back at its end, what the module's chain committed (the chain's processes write it).
pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

POLL_S = 8.0  # the agent's interval_s: a poll of the six devices takes 2-4 s on a loaded 2-core machine
POLLS = 4  # versions 0..3 of the data files: 3 intervals per interface
ERRORS_PER_POLL = 40  # 5 errors/s at POLL_S: far above the diagnosis threshold
FAULT_EQUIPMENT, FAULT_PORT = "arista_eos", "Ethernet1"
SRC, DST = "RAL", "CERN"
NOC = "noc@wanmon.test"
PASSWORD = "chain-test-pass-1"
RATES_WITHIN_S = 120.0  # the agent's first rates must exist this soon after it starts
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
RATE_COLUMNS = {  # stored rate -> the counter it comes from, by preference (collectors.counters.RATE_FIELDS)
    "in_bps": ("hc_in_octets", "in_octets"),
    "out_bps": ("hc_out_octets", "out_octets"),
    "in_pps": ("hc_in_ucast_pkts",),
    "out_pps": ("hc_out_ucast_pkts",),
    "in_errors_per_s": ("in_errors",),
}


# --- the chain ---------------------------------------------------------------------------------------------


@dataclass
class Chain:
    """Everything the chain started, and what the tests read back."""

    work: Path
    captures: dict[str, Capture]
    injection: Injection
    config: Path
    centre: Centre
    worker: Worker
    smtp: SmtpServer
    agent: AgentProcess
    selection: dict[str, list[str]]  # equipment -> interface names the agent's default selection keeps
    agent_started: float  # time.monotonic()
    first_rates_after_s: float | None = None
    all_rates_after_s: float | None = None
    spool_report: dict[str, Any] = field(default_factory=dict)
    diagnosis: dict[str, Any] | None = None

    def logs(self) -> str:
        return (
            f"--- agent (last lines)\n{_tail(self.agent.log_path.read_text(errors='replace'))}\n"
            f"--- gunicorn\n{_tail(self.centre.log())}\n--- worker\n{_tail(self.worker.log())}"
        )


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _rows(sql: str, params: Any = ()) -> list[tuple]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _build_inventory() -> str:
    """Two sites, the six devices at RAL assigned to the agent, the path RAL->CERN over the fault port; a viewer.

    Returns the agent's token.
    """
    from django.contrib.auth.models import Group, User

    from wanmon.core.permissions import VIEWER_GROUP
    from wanmon.inventory import services as inventory

    ral, _ = inventory.site_upsert(code=SRC, name="Rutherford Appleton Laboratory", tier=1)
    cern, _ = inventory.site_upsert(code=DST, name="CERN", tier=0)
    equipment = {name: inventory.equipment_upsert(name=name, site=ral)[0] for name in CAPTURE_NAMES}
    port, _ = inventory.interface_upsert(equipment=equipment[FAULT_EQUIPMENT], name=FAULT_PORT, if_index=1,
                                         speed_mbps=10000)  # fmt: skip
    inventory.path_set(
        src=ral,
        dst=cern,
        hops=[(equipment["junos_rpm"], None), (equipment[FAULT_EQUIPMENT], port), (equipment["timos"], None)],
        capacity_mbps=10000,
        rtt_ms=12.0,
    )
    _, token = inventory.agent_create(site=ral, name="ral-agent-chain", equipment=equipment.values())
    user = User.objects.create_user("noc-chain", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name=VIEWER_GROUP)[0])
    return token


def _agent_config(work: Path, *, centre_url: str, ca_file: Path, token: str, snmp_port: int) -> Path:
    token_file = work / "token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    text = (
        f'[central]\nurl = "{centre_url}"\ntoken_file = "{token_file}"\nca_file = "{ca_file}"\ntimeout_s = 60\n\n'
        f'[agent]\nsite = "{SRC}"\nname = "ral-agent-chain"\nspool_dir = "{work / "spool"}"\n'
        "upload_interval_s = 1\nstart_jitter_s = 0\nshutdown_grace_s = 5\n"
    )
    for name in CAPTURE_NAMES:  # the community is the capture's name (snmpsim)
        text += (
            f'\n[[snmp]]\nequipment = "{name}"\nhost = "127.0.0.1"\nport = {snmp_port}\nversion = "2c"\n'
            f'community = "{name}"\ninterval_s = {POLL_S}\ntimeout_s = 3\nretries = 1\n'
        )
    path = work / "agent.toml"
    path.write_text(text)
    return path


def _dry_run_selection(config: Path) -> dict[str, list[str]]:
    """The interfaces the agent's default selection keeps, per device: ``wanmon-agent once --dry-run``."""
    done = subprocess.run(agent_argv("once", "--config", str(config), "--dry-run"), capture_output=True, text=True,
                          timeout=WAIT_S)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    selection: dict[str, list[str]] = defaultdict(list)
    for line in done.stdout.splitlines():
        record = json.loads(line)
        selection[record["equipment"]].append(record["interface"])
    return dict(selection)


def _collector_runs(agent: AgentProcess) -> list[dict]:
    return [log for log in agent.logs() if log.get("message") == "collector run"]


def _upload_failures(agent: AgentProcess) -> list[dict]:
    """What the uploader and the spool said beyond "batch uploaded": refusals, retries, splits, parked records."""
    return [
        log for log in agent.logs()
        if log.get("logger") in ("agents.uploader", "agents.spool")
        and (log.get("level") != "info" or log.get("message") != "batch uploaded")
    ]  # fmt: skip


def _rate_coverage() -> tuple[int, int]:
    """(interfaces with samples, interfaces with at least one rate or dropped interval)."""
    ((sampled, rated),) = _rows(
        """SELECT (SELECT count(DISTINCT interface_id) FROM measurements_snmpsample),
                  (SELECT count(*) FROM (SELECT interface_id FROM measurements_interfacerate
                                         UNION SELECT interface_id FROM measurements_counterdiscontinuity) r)"""
    )
    return sampled, rated


@pytest.fixture(scope="module")
def chain(django_db_setup, django_db_blocker, tmp_path_factory):
    """The chain started, driven through POLLS polls with the fault, drained; stopped and the database emptied after."""
    files = captures_or_skip()
    work = tmp_path_factory.mktemp("chain")
    os.chmod(work, 0o755)
    captures = {capture.name: capture for capture in map(Capture, files)}
    injection = Injection(
        poll_s=POLL_S,
        fault_port=(FAULT_EQUIPMENT, captures[FAULT_EQUIPMENT].if_index(FAULT_PORT)),
        errors_per_poll=ERRORS_PER_POLL,
        down_from_version=POLLS - 1,
    )
    from tests.collectors.snmpsim.simulator import SnmpSimulator

    version_0 = work / "captures"
    version_0.mkdir()
    write_version(captures.values(), version_0, 0, injection)

    # One private PKI: the centre's certificate for 127.0.0.1, the CA given to the agent as ca_file.
    ca = make_ca("chain test CA")
    ca_file = ca.write(work / "ca.pem")
    certificate, key = issue_server_certificate(ca, work, stem="centre")

    smtp = SmtpServer()
    started: list[Any] = [smtp]
    with django_db_blocker.unblock():
        env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND")}
        env.update(DATABASE_URL=database_url_for_subprocesses(), REDIS_URL=private_redis_url(),
                   WANMON_LOG_LEVEL="WARNING")  # fmt: skip
        try:
            centre = Centre(certificate=certificate, key=key, ca_file=ca_file, env=env, log_dir=work)
            started.append(centre)
            alerting = {  # e-mail to aiosmtpd; short timers: an e-mail after 1 s, an update possible after 2 s
                "WANMON_EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend", "EMAIL_HOST": "127.0.0.1",
                "EMAIL_PORT": str(smtp.port), "EMAIL_USE_TLS": "false", "DEFAULT_FROM_EMAIL": "wanmon@wanmon.test",
                "WANMON_BASE_URL": centre.url, "ALERTS_DEFAULT_RECIPIENTS": NOC, "ALERTS_GROUP_WAIT_S": "1",
                "ALERTS_GROUP_INTERVAL_S": "2", "ALERTS_CELERY_QUEUE": "",
            }  # fmt: skip
            worker = Worker(env={**env, **alerting}, log_dir=work)
            started.append(worker)
            sim = SnmpSimulator(sorted(version_0.glob("*.snmprec"))).start()
            started.append(sim)
            token = _build_inventory()
            config = _agent_config(work, centre_url=centre.url, ca_file=ca_file, token=token, snmp_port=sim.port)
            selection = _dry_run_selection(config)
            centre.wait_ready()
            worker.wait_ready()

            data_dir = sim.log_path.parent / "data"  # the simulator's private copy of the data files
            agent = AgentProcess(agent_argv("run", "--config", str(config)), work / "agent.log")
            started.append(agent)
            chain = Chain(work, captures, injection, config, centre, worker, smtp, agent, selection,
                          agent_started=time.monotonic())  # fmt: skip
            _drive(chain, data_dir)
            sim.stop()  # later polls time out: nothing more is spooled, the spool can drain to empty
            _wait_for_everything(chain)
            assert agent.terminate() == 0, chain.logs()
            status = subprocess.run(agent_argv("spool", "--config", str(config), "--json"), capture_output=True,
                                    text=True, timeout=WAIT_S)  # fmt: skip
            chain.spool_report = json.loads(status.stdout.splitlines()[-1]) if status.stdout else {}
            yield chain
        finally:
            for part in reversed(started):
                part.close() if isinstance(part, AgentProcess) else part.stop()
            _flush_database()


def _drive(chain: Chain, data_dir: Path) -> None:
    """Rewrite the data files once every device has been polled again: each poll of a device reads a new version.

    (A device polled twice before the slowest one finished reads a version twice: an interval without traffic,
    which the rate checks allow for; they tell each value's version from the value.)
    """
    for version in range(1, POLLS + 1):
        wait_until(
            f"poll {version} of every device",
            lambda v=version: min(_polls_per_device(chain).values()) >= v,
            timeout_s=POLL_S + WAIT_S / 2,
            every_s=0.1,
            diagnose=chain.logs,
        )
        failed = [run for run in _collector_runs(chain.agent) if run.get("error") or not run.get("records")]
        assert failed == [], f"polls of the captures failed: {failed}"
        if version < POLLS:
            write_version(chain.captures.values(), data_dir, version, chain.injection)


def _polls_per_device(chain: Chain) -> dict[str, int]:
    _note_rates(chain)
    refused = _upload_failures(chain.agent)
    assert refused == [], f"the centre refused the agent's uploads: {refused[:3]}\n{chain.logs()}"
    polls = dict.fromkeys(CAPTURE_NAMES, 0)
    for run in _collector_runs(chain.agent):
        polls[run["collector"].split(":", 1)[1]] += 1
    return polls


def _note_rates(chain: Chain) -> None:
    """Record when the first rates, and rates for every polled interface, exist (seconds after the agent started)."""
    if chain.all_rates_after_s is not None:
        return
    sampled, rated = _rate_coverage()
    elapsed = time.monotonic() - chain.agent_started
    if rated and chain.first_rates_after_s is None:
        chain.first_rates_after_s = elapsed
    if sampled and rated >= sum(len(names) for names in chain.selection.values()):
        chain.all_rates_after_s = elapsed


def _wait_for_everything(chain: Chain) -> None:
    """Every poll uploaded (spool empty) and every interval of every kept interface turned into a rate."""
    kept = sum(len(names) for names in chain.selection.values())

    counts: dict[str, int] = {}

    def done() -> bool:
        _note_rates(chain)
        assert _upload_failures(chain.agent) == [], chain.logs()
        ((counts["samples"], counts["rates"], counts["dropped"]),) = _rows(
            """SELECT (SELECT count(*) FROM measurements_snmpsample), (SELECT count(*) FROM measurements_interfacerate),
                      (SELECT count(*) FROM measurements_counterdiscontinuity)"""
        )
        waiting = sum(1 for folder in ("pending", "batches") for _ in (chain.work / "spool" / folder).glob("*.json"))
        return counts["samples"] >= kept * POLLS and counts["rates"] + counts["dropped"] >= kept * (POLLS - 1) and (
            waiting == 0
        )

    wait_until("every poll stored and turned into rates", done, timeout_s=WAIT_S,
               diagnose=lambda: f"kept {kept} x {POLLS} polls; stored {counts}\n{chain.logs()}")  # fmt: skip


def _flush_database() -> None:
    """Leave the test database as transactional tests do (empty), with the role groups migrations created."""
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    from wanmon.core.permissions import ROLE_GROUPS

    call_command("flush", interactive=False, verbosity=0)
    for name in ROLE_GROUPS:
        Group.objects.get_or_create(name=name)


# --- what was stored ---------------------------------------------------------------------------------------


def _stored_interfaces() -> dict[str, dict[str, int]]:
    """equipment -> {interface name: id} of the interfaces that have samples."""
    stored: dict[str, dict[str, int]] = defaultdict(dict)
    for equipment, name, iid in _rows(
        """SELECT e.name, i.name, i.id FROM inventory_interface i JOIN inventory_equipment e ON e.id = i.equipment_id
           WHERE EXISTS (SELECT 1 FROM measurements_snmpsample s WHERE s.interface_id = i.id)"""
    ):
        stored[equipment][name] = iid
    return dict(stored)


def test_every_interface_the_agent_keeps_is_stored(chain):
    stored = _stored_interfaces()
    print("\ndevice               capture ifIndexes  agent keeps  stored")
    for name in CAPTURE_NAMES:
        capture = chain.captures[name]
        print(f"{name:20} {len(capture.interfaces):17}  {len(chain.selection.get(name, [])):11}  "
              f"{len(stored.get(name, {})):6}")  # fmt: skip
    print(f"first rates {chain.first_rates_after_s} s, rates for every interface {chain.all_rates_after_s} s "
          f"after the agent started (poll interval {POLL_S:g} s)")  # fmt: skip

    assert sorted(chain.selection) == sorted(CAPTURE_NAMES), "a device gave no interface in the dry run"
    for name in CAPTURE_NAMES:
        capture_names = {i.name for i in chain.captures[name].interfaces.values()}
        kept = chain.selection[name]
        assert len(kept) == len(set(kept)), f"{name}: an interface reported twice"
        assert set(kept) <= capture_names, f"{name}: interfaces the capture does not have: {set(kept) - capture_names}"
        assert sorted(stored.get(name, {})) == sorted(kept), f"{name}: stored interfaces differ from the agent's"
    # All the interfaces with octet counters in the captures, nothing without a name
    with_octets = {
        name: sum(1 for i in capture.interfaces.values() if {"hc_in_octets", "in_octets"} & i.counters.keys())
        for name, capture in chain.captures.items()
    }
    for name in CAPTURE_NAMES:
        assert len(stored[name]) >= with_octets[name], f"{name}: {len(stored[name])} stored of {with_octets[name]}"
    assert chain.all_rates_after_s is not None and chain.all_rates_after_s < RATES_WITHIN_S


def _version(capture: Capture, counter: str, if_index: int, value: int, injection: Injection) -> int | None:
    """Which version of the data files ``value`` comes from (None: the counter does not move)."""
    step = capture.increment(counter, if_index, injection)
    if not step:
        return None
    bits = COUNTERS[counter][1]
    advanced = (value - capture.interfaces[if_index].counters[counter]) % 2**bits
    assert advanced % step == 0, f"{capture.name} ifIndex {if_index} {counter}={value}: not an injected value"
    return advanced // step


def test_each_rate_is_the_injected_delta_over_the_poll_interval(chain):
    stored = _stored_interfaces()
    names = list(RATE_COLUMNS)
    counter_columns = list(COUNTERS)
    samples: dict[int, list[tuple]] = defaultdict(list)
    for row in _rows(f"""SELECT interface_id, time, if_index, speed_mbps, {", ".join(counter_columns)}
                         FROM measurements_snmpsample ORDER BY interface_id, time"""):  # noqa: S608
        samples[row[0]].append(row[1:])
    rates = {(r[0], r[1]): r[2:] for r in _rows(f"""SELECT interface_id, time, interval_s, {", ".join(names)}
                                                    FROM measurements_interfacerate""")}  # noqa: S608
    drops = _rows("SELECT interface_id, time, code, reason FROM measurements_counterdiscontinuity")
    assert drops == [], f"intervals dropped as counter discontinuities: {drops[:5]}"
    inventory_speed = dict(_rows("SELECT id, speed_mbps FROM inventory_interface"))

    checked = defaultdict(int)
    versions_seen: set[int] = set()
    for equipment, interfaces in stored.items():
        capture = chain.captures[equipment]
        for name, iid in interfaces.items():
            rows = samples[iid]
            assert len(rows) >= POLLS, f"{equipment}:{name}: {len(rows)} samples for {POLLS} polls"
            if_index = rows[0][1]
            for prev, cur in zip(rows, rows[1:], strict=False):
                interval_s = (cur[0] - prev[0]).total_seconds()
                stored_rate = rates.get((iid, cur[0]))
                assert stored_rate is not None, f"{equipment}:{name}: no rate for the interval ending {cur[0]}"
                assert stored_rate[0] == pytest.approx(interval_s, abs=1e-6)
                assert POLL_S / 2 < interval_s < 3 * POLL_S, f"{equipment}:{name}: polled {interval_s} s apart"
                prev_values = dict(zip(counter_columns, prev[3:], strict=True))
                cur_values = dict(zip(counter_columns, cur[3:], strict=True))
                speed_mbps = inventory_speed.get(iid) or cur[2] or prev[2]
                for column, value in zip(names, stored_rate[1:], strict=True):
                    counter = next((c for c in RATE_COLUMNS[column] if cur_values[c] is not None
                                    and prev_values[c] is not None), None)  # fmt: skip
                    if counter is None:
                        assert value is None, f"{equipment}:{name} {column}={value} without a counter"
                        continue
                    v_prev = _version(capture, counter, if_index, int(prev_values[counter]), chain.injection)
                    v_cur = _version(capture, counter, if_index, int(cur_values[counter]), chain.injection)
                    step = capture.increment(counter, if_index, chain.injection)
                    delta = (v_cur - v_prev) * step if step else 0
                    if counter.startswith("hc_in_octets"):
                        versions_seen.add(v_cur)
                    scale = 8 if counter.endswith("octets") else 1
                    bits = COUNTERS[counter][1]
                    ambiguous = (  # a Counter32 octet counter that can wrap twice in the interval (counters.py)
                        bits == 32 and counter.endswith("octets") and speed_mbps
                        and float(speed_mbps) * 1e6 * 1.1 * (interval_s + 1) / 8 >= 2**32
                    )
                    expected = None if ambiguous else delta * scale / interval_s
                    assert value == (None if expected is None else pytest.approx(expected, rel=1e-9)), (
                        f"{equipment}:{name} {column}: stored {value}, injected {delta} {counter} in {interval_s} s"
                    )
                    checked[column] += value is not None
    print(f"\nrates checked against the injected deltas: {dict(checked)}")
    # Version 0 may be read twice (a device polled again before the slowest finished: an interval without traffic,
    # checked above like any other); every later version must have been read.
    assert set(range(1, POLLS)) <= versions_seen, f"polls read versions {sorted(versions_seen)} (harness too slow?)"
    kept = sum(len(v) for v in chain.selection.values())
    assert checked["in_bps"] >= (kept - 20) * (POLLS - 1)  # all but the ambiguous Counter32 ones

    # The rollups count exactly the injected errors of the fault port.
    port = stored[FAULT_EQUIPMENT][FAULT_PORT]
    ((errors, polls),) = _rows("SELECT sum(in_errors), sum(samples) FROM measurements_interfacerate_1h "
                               "WHERE interface_id = %s", [port])  # fmt: skip
    assert polls == len(samples[port]) - 1
    assert errors == pytest.approx(ERRORS_PER_POLL * (POLLS - 1), rel=1e-9)


def test_the_spool_is_empty_at_the_end(chain):
    report = chain.spool_report
    assert report, "wanmon-agent spool --json printed nothing"
    assert report["records_waiting"] == 0 and report["batches_waiting"] == 0, report
    assert report["rejected_batches"] == 0 and report["rejected_records"] == 0, report
    uploaded = sum(log.get("records", 0) for log in chain.agent.messages("batch uploaded"))
    collected = sum(run["records"] for run in _collector_runs(chain.agent))
    assert uploaded == collected >= POLLS * sum(len(v) for v in chain.selection.values())


# --- the injected fault: diagnosis, one e-mail, the path page ------------------------------------------------


def _diagnose(chain: Chain) -> dict[str, Any]:
    """Run the diagnosis on the worker (as the beat does), then the alerting until the e-mail arrives."""
    if chain.diagnosis is not None:
        return chain.diagnosis
    from wanmon.diagnosis.models import Finding

    def findings() -> dict[str, Finding]:
        return {f.code: f for f in Finding.objects.exclude(status="resolved")}

    chain.worker.send("wanmon.diagnosis.tasks.diagnosis_run_task")
    wait_until("the diagnosis' findings", lambda: {"INTERFACE_ERRORS", "PATH_DOWN"} <= findings().keys(),
               timeout_s=WAIT_S, diagnose=lambda: f"findings: {sorted(findings())}\n{chain.logs()}")  # fmt: skip

    def mail() -> list:
        chain.worker.send("wanmon.alerts.tasks.alerts_process_task")
        return chain.smtp.received()

    first = wait_until("the alert e-mail", mail, timeout_s=WAIT_S, every_s=1.0, diagnose=chain.logs)
    # The beat goes on: another diagnosis and alerting runs past the 2 s group interval send nothing more (the
    # incident did not change).
    chain.worker.send("wanmon.diagnosis.tasks.diagnosis_run_task")
    for _ in range(4):
        time.sleep(1.0)
        chain.worker.send("wanmon.alerts.tasks.alerts_process_task")
    time.sleep(2.0)
    chain.diagnosis = {"findings": findings(), "first": first, "mails": chain.smtp.received()}
    return chain.diagnosis


def test_the_fault_gives_its_findings_and_exactly_one_email(chain):
    from wanmon.alerts.models import Incident

    result = _diagnose(chain)
    found = result["findings"]
    errors, down = found["INTERFACE_ERRORS"], found["PATH_DOWN"]
    assert errors.subject == {"equipment": FAULT_EQUIPMENT, "interface": FAULT_PORT}
    assert errors.evidence["intervals_with_errors"] == POLLS - 1
    assert errors.evidence["in_errors_per_s_median"] == pytest.approx(ERRORS_PER_POLL / POLL_S, rel=0.25)
    assert down.subject == {"src": SRC, "dst": DST}
    assert [d["element"] for d in down.evidence["interfaces_down"]] == [f"{FAULT_EQUIPMENT}:{FAULT_PORT}"]

    mails = result["mails"]
    print(f"\n{errors.severity} {errors.code}: {errors.summary}\n{down.severity} {down.code}: {down.summary}")
    print("e-mails: " + "; ".join(f"{m.subject} -> {m.rcpt_tos}" for m in mails))
    assert len(mails) == 1, [m.subject for m in mails]
    (mail,) = mails
    assert mail.rcpt_tos == [NOC]
    assert "INTERFACE_ERRORS" in mail.subject and FAULT_EQUIPMENT in mail.subject, mail.subject
    assert "PATH_DOWN" in mail.text and f"{SRC}->{DST}" in mail.text
    incidents = list(Incident.objects.all())
    assert len(incidents) == 1, [i.key for i in incidents]
    assert {f.code for f in incidents[0].findings.all()} >= {"INTERFACE_ERRORS", "PATH_DOWN"}


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing: run scripts/setup (as root)")
def test_the_path_page_shows_the_findings(chain):
    _diagnose(chain)
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API keeps an event loop in this thread
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # The centre's certificate comes from the test CA, which this browser profile does not know.
        context = browser.new_context(ignore_https_errors=True, viewport={"width": 1366, "height": 768})
        context.set_default_timeout(30_000)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{chain.centre.url}/accounts/login/")
        page.fill("#id_username", "noc-chain")
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{chain.centre.url}/")
        response = page.goto(f"{chain.centre.url}/paths/{SRC}/{DST}/", wait_until="networkidle")
        assert response is not None and response.status == 200
        codes = page.locator("#path-details a.code").all_inner_texts()
        details = page.locator("#path-details").inner_text()
        browser.close()
    finally:
        playwright.stop()
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous
    assert {"INTERFACE_ERRORS", "PATH_DOWN"} <= set(codes), codes
    assert f"{FAULT_EQUIPMENT}" in details and FAULT_PORT in details
    assert errors == []
