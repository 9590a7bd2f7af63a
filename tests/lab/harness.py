"""One lab scenario, end to end: namespaces, the emulator, the far end's servers, the site agents; torn down always.

:class:`Lab` is a context manager. Entering it creates the two sites (``wlab-<code>-a``/``-b``: a namespace each,
with one TUN device, the scenario's congestion control as the namespace default), starts the emulator between
them (``python -m tests.lab.emulator``), the nuttcp server and the TWAMP-light reflector in B, a forwarder in each
namespace that carries the agents' HTTPS to the centre on the host's loopback, and one ``wanmon-agent run`` per
site inside its namespace. :meth:`Lab.measure` lets them run the scenario's time, stops the agents (uploading what
they spooled) and collects what the honesty checks need. Leaving the block stops every process it started (each
in its own session, SIGTERM then SIGKILL), closes the forwarders and deletes both namespaces with their devices
-- also when anything in between failed.

The inventory the centre needs (sites, the emulated router with its two ports, both path directions, an agent per
site) is written by :func:`build_inventory`, through the inventory's services.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.collectors.snmpsim.simulator import _die_with_parent
from tests.e2e.chain_harness import ROOT
from tests.lab import netns
from tests.lab.emulator import EmulatorConfig
from tests.lab.scenarios import Scenario
from tests.processes import stop_process, wait_until

NAMESPACE_PREFIX = "wlab-"
# Each run's namespaces carry its process id: two runs on one machine (two checkouts' test suites) never take
# down each other's namespaces; those of a run that died are found by its pid and removed.
RUN_PREFIX = f"{NAMESPACE_PREFIX}{os.getpid()}-"


def leftover_namespaces() -> list[str]:
    """Lab namespaces of runs whose process is gone (killed before its teardown)."""
    out = []
    for name in netns.existing(NAMESPACE_PREFIX):
        pid = name[len(NAMESPACE_PREFIX):].partition("-")[0]
        if not (pid.isdigit() and os.path.exists(f"/proc/{pid}")):
            out.append(name)
    return out
DEVICE = "tun0"
TXQUEUELEN = 10000  # a sender's bursts (slow start) queue in the device, as in a NIC's ring, not dropped by it
SNMP_PORT = 1161
TWAMP_PORT = 862
NUTTCP_CONTROL_PORT = 5000
STARTUP_S = 60.0


def agent_argv(*args: str) -> list[str]:
    from tests.agents.harness import agent_argv as argv

    return argv(*args)


# --- the centre, seen from inside a namespace ----------------------------------------------------------------


class Forwarder:
    """Listens on 127.0.0.1:``port`` inside ``namespace`` and relays each connection to 127.0.0.1:``target``
    of the host's own loopback (bytes only: TLS stays end to end between agent and centre)."""

    def __init__(self, namespace: str, port: int, target: int) -> None:
        self.target = target
        with netns.entered(namespace):
            self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(64)
        self._closed = threading.Event()
        self._threads: list[threading.Thread] = []
        self._accept = threading.Thread(target=self._serve, name=f"forward-{namespace}", daemon=True)
        self._accept.start()

    def _serve(self) -> None:
        while not self._closed.is_set():
            ready, _, _ = select.select([self.listener], [], [], 0.2)
            if not ready:
                continue
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=10)
            except OSError:
                client.close()
                continue
            thread = threading.Thread(target=self._relay, args=(client, upstream), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _relay(self, a: socket.socket, b: socket.socket) -> None:
        peers = {a: b, b: a}
        try:
            while not self._closed.is_set():
                ready, _, _ = select.select(list(peers), [], [], 0.5)
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    peers[sock].sendall(data)
        except OSError:
            return
        finally:
            a.close()
            b.close()

    def close(self) -> None:
        self._closed.set()
        self.listener.close()
        self._accept.join(timeout=5)
        for thread in self._threads:
            thread.join(timeout=5)


# --- inventory ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tokens:
    a: str
    b: str
    agent_a: str
    agent_b: str


def build_inventory(s: Scenario, *, agent_suffix: str = "") -> Tokens:
    """Both sites, the router with ports to-a (ifIndex 1) and to-b (2), both directions of the path over it, an
    agent per site (A's polls the router). Idempotent for the sites, router and paths; the agents are new."""
    from wanmon.inventory import services as inventory

    a, _ = inventory.site_upsert(code=s.site_a, name=f"lab {s.name} A")
    b, _ = inventory.site_upsert(code=s.site_b, name=f"lab {s.name} B")
    router, _ = inventory.equipment_upsert(name=s.router, site=a)
    port_a, _ = inventory.interface_upsert(equipment=router, name="to-a", if_index=1, speed_mbps=s.capacity_mbps)
    port_b, _ = inventory.interface_upsert(equipment=router, name="to-b", if_index=2, speed_mbps=s.capacity_mbps)
    # A->B enters the router on to-a, B->A on to-b: the port whose input errors hit the direction
    inventory.path_set(src=a, dst=b, hops=[(router, port_a)], capacity_mbps=s.capacity_mbps, rtt_ms=s.rtt_ms)
    inventory.path_set(src=b, dst=a, hops=[(router, port_b)], capacity_mbps=s.capacity_mbps, rtt_ms=s.rtt_ms)
    agent_a = f"lab-{s.code.lower()}-a{agent_suffix}"
    agent_b = f"lab-{s.code.lower()}-b{agent_suffix}"
    _, token_a = inventory.agent_create(site=a, name=agent_a, equipment=[router])
    _, token_b = inventory.agent_create(site=b, name=agent_b)
    return Tokens(token_a, token_b, agent_a, agent_b)


# --- one run --------------------------------------------------------------------------------------------------


@dataclass
class Measured:
    """What a run left behind for the honesty checks and the report."""

    scenario: str
    elapsed_s: float = 0.0
    emulator: dict[str, Any] = field(default_factory=dict)  # the final status file
    tx_dropped: dict[str, int] = field(default_factory=dict)  # site -> its TUN device's tx_dropped
    retrans: dict[str, int] = field(default_factory=dict)  # site -> TcpRetransSegs during the run
    out_segs: dict[str, int] = field(default_factory=dict)
    udp_receive_errors: dict[str, int] = field(default_factory=dict)  # site -> UDP datagrams its host dropped
    congestion_control: dict[str, str] = field(default_factory=dict)
    agent_errors: list[str] = field(default_factory=list)


def _addresses(s: Scenario) -> tuple[netns.Site, netns.Site]:
    base = f"10.77.{s.index}"
    a = netns.Site(f"{RUN_PREFIX}{s.code.lower()}-a", DEVICE, f"{base}.1")
    b = netns.Site(f"{RUN_PREFIX}{s.code.lower()}-b", DEVICE, f"{base}.2", extra_addresses=(f"{base}.3",))
    return a, b


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


class Lab:
    """One scenario's emulated WAN and site agents (see the module docstring)."""

    def __init__(
        self, scenario: Scenario, work: Path, *, centre_url: str, ca_file: Path | None, tokens: Tokens,
        jobs_idle_poll_max_s: float | None = None,
    ) -> None:
        self.s = scenario
        # site A's agent asks for jobs at least this often while idle (a diagnosis-driven test is fetched soon)
        self.jobs_idle_poll_max_s = jobs_idle_poll_max_s
        self.work = work
        self.centre_url = centre_url
        self.centre_port = int(centre_url.rsplit(":", 1)[1].split("/")[0])
        self.ca_file = ca_file
        self.tokens = tokens
        self.site_a, self.site_b = _addresses(scenario)
        self.processes: list[subprocess.Popen] = []
        self.forwarders: list[Forwarder] = []
        self.agents: dict[str, subprocess.Popen] = {}
        self.emulator: subprocess.Popen | None = None
        self.status_path = work / "emulator-status.json"
        self.measured = Measured(scenario.name)

    # --- set-up

    def __enter__(self) -> Lab:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _start(self) -> None:
        s = self.s
        self.work.mkdir(parents=True, exist_ok=True)
        for site in (self.site_a, self.site_b):
            netns.delete(site.namespace)  # left by a run that was killed
            netns.create(site, congestion_control=s.congestion_control)
            netns.ip("-n", site.namespace, "link", "set", site.device, "txqueuelen", str(TXQUEUELEN))
        config = EmulatorConfig(
            name=s.router,
            site_a={"namespace": self.site_a.namespace, "device": DEVICE, "interface": "to-a"},
            site_b={"namespace": self.site_b.namespace, "device": DEVICE, "interface": "to-b"},
            a_to_b=s.a_to_b, b_to_a=s.b_to_a, seed=s.seed, status=str(self.status_path),
            speed_bps=s.capacity_mbps * 1e6, snmp_port=SNMP_PORT,
        )  # fmt: skip
        config_path = self.work / "emulator.json"
        config.dump(config_path)
        self.emulator = self._spawn([sys.executable, "-m", "tests.lab.emulator", str(config_path)], "emulator")
        wait_until("the emulator's first status", self.status_path.exists, timeout_s=STARTUP_S, every_s=0.1,
                   diagnose=lambda: self._log_tail("emulator"))  # fmt: skip
        b = self.site_b
        self._spawn(netns.in_netns(b.namespace, ["nuttcp", "-S", "--nofork", f"-P{NUTTCP_CONTROL_PORT}"]), "nuttcp")
        reflector = self._spawn(
            netns.in_netns(b.namespace, [sys.executable, "-m", "tests.lab.reflector", b.address, str(TWAMP_PORT)]),
            "reflector",
        )
        wait_until("the TWAMP reflector", lambda: "reflecting" in self._log_tail("reflector") or reflector.poll(),
                   timeout_s=STARTUP_S, every_s=0.1, diagnose=lambda: self._log_tail("reflector"))  # fmt: skip
        assert reflector.poll() is None, self._log_tail("reflector")
        for site in (self.site_a, self.site_b):
            self.forwarders.append(Forwarder(site.namespace, self.centre_port, self.centre_port))
        self.measured.congestion_control = {
            site.namespace: netns.sysctl_value(site.namespace, "net.ipv4.tcp_congestion_control")
            for site in (self.site_a, self.site_b)
        }
        self._before = {site.namespace: netns.snmp_counters(site.namespace) for site in (self.site_a, self.site_b)}
        for side in ("a", "b"):
            self._start_agent(side, self._agent_config(side))

    def _spawn(self, argv: list[str], name: str) -> subprocess.Popen:
        with (self.work / f"{name}.log").open("ab") as log:
            process = subprocess.Popen(  # noqa: S603 - fixed argv
                argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - a killed test run leaves nothing running
            )  # fmt: skip
        self.processes.append(process)
        return process

    def _log_tail(self, name: str, lines: int = 40) -> str:
        with contextlib.suppress(OSError):
            return "\n".join((self.work / f"{name}.log").read_text(errors="replace").splitlines()[-lines:])
        return ""

    def _agent_config(self, side: str, *, collectors: bool = True) -> Path:
        s = self.s
        site = self.site_a if side == "a" else self.site_b
        code = s.site_a if side == "a" else s.site_b
        token = self.tokens.a if side == "a" else self.tokens.b
        name = self.tokens.agent_a if side == "a" else self.tokens.agent_b
        token_file = self.work / f"token-{side}"
        token_file.write_text(token + "\n")
        token_file.chmod(0o600)
        ca = f'ca_file = "{self.ca_file}"\n' if self.ca_file else ""
        text = (
            f'[central]\nurl = "{self.centre_url}"\ntoken_file = "{token_file}"\n{ca}timeout_s = 30\n\n'
            f'[agent]\nsite = "{code}"\nname = "{name}"\nspool_dir = "{self.work / f"spool-{side}"}"\n'
            "upload_interval_s = 2\nupload_after_collect_s = 1\nstart_jitter_s = 0\nshutdown_grace_s = 15\n"
        )
        if side == "a" and self.jobs_idle_poll_max_s:
            text += f"\n[jobs]\npoll_s = 1\nidle_poll_max_s = {self.jobs_idle_poll_max_s}\n"
        if collectors:
            text += f'\n[[host_tcp]]\ninterval_s = 10\nhost = "{site.address}"\ninterface = "{DEVICE}"\n'
        if collectors and side == "a":
            b = self.site_b
            text += (
                f'\n[[snmp]]\nequipment = "{s.router}"\nhost = "127.0.0.1"\nport = {SNMP_PORT}\nversion = "2c"\n'
                f'community = "public"\ninterval_s = {s.snmp_interval_s}\ntimeout_s = 2\nretries = 1\n'
            )
            for table in s.nuttcp:
                text += f'\n[[nuttcp]]\ndst = "{s.site_b}"\nhost = "{b.address}"\n'
                text += f"control_port = {NUTTCP_CONTROL_PORT}\n"
                text += "".join(f"{key} = {_toml(value)}\n" for key, value in table.items())
            if s.twamp:
                text += f'\n[[twamp]]\ndst = "{s.site_b}"\nhost = "{b.address}"\nport = {TWAMP_PORT}\n'
                text += "".join(f"{key} = {_toml(value)}\n" for key, value in s.twamp.items())
        path = self.work / f"agent-{side}{'' if collectors else '-drain'}.toml"
        path.write_text(text)
        return path

    def _start_agent(self, side: str, config: Path) -> subprocess.Popen:
        site = self.site_a if side == "a" else self.site_b
        process = self._spawn(netns.in_netns(site.namespace, agent_argv("run", "--config", str(config))),
                              f"agent-{side}")  # fmt: skip
        self.agents[side] = process
        return process

    # --- the run

    def check_running(self) -> None:
        """The emulator and the agents are still running (an AssertionError with the log's tail otherwise)."""
        for name, process in [("emulator", self.emulator), *[(f"agent-{k}", p) for k, p in self.agents.items()]]:
            if process is not None and process.poll() is not None:
                raise AssertionError(f"{name} exited with {process.returncode}:\n{self._log_tail(name)}")

    def measure(self, then: Callable[[Lab], None] | None = None) -> Measured:
        """Let the agents measure for the scenario's time (then, while they still run, call ``then``: the
        diagnosis-driven tests are asked for and run); stop them with everything they spooled uploaded."""
        started = time.monotonic()
        while time.monotonic() - started < self.s.run_s:
            self.check_running()
            time.sleep(0.5)
        if then is not None:
            then(self)
        for process in self.agents.values():
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        for side, process in self.agents.items():
            process.wait(timeout=60)
            self._drain(side)
        m = self.measured
        m.elapsed_s = time.monotonic() - started
        for site in (self.site_a, self.site_b):
            after = netns.snmp_counters(site.namespace)
            before = self._before[site.namespace]
            m.retrans[site.namespace] = after["Tcp"]["RetransSegs"] - before["Tcp"]["RetransSegs"]
            m.out_segs[site.namespace] = after["Tcp"]["OutSegs"] - before["Tcp"]["OutSegs"]
            m.udp_receive_errors[site.namespace] = sum(
                after["Udp"][key] - before["Udp"][key] for key in ("RcvbufErrors", "InErrors")
            )
            m.tx_dropped[site.namespace] = netns.link_stats(site.namespace, DEVICE)["tx_dropped"]
        m.emulator = json.loads(self.status_path.read_text())
        for side in self.agents:
            m.agent_errors += self.agent_problems(side)
        return m

    def _spool_waiting(self, side: str) -> int:
        spool = self.work / f"spool-{side}"
        return sum(1 for folder in ("pending", "batches") for _ in (spool / folder).glob("*.json"))

    def _drain(self, side: str) -> None:
        """Upload whatever the stopped agent left in its spool: the same agent, with no collector, until empty."""
        if not self._spool_waiting(side):
            return
        process = self._start_agent(side, self._agent_config(side, collectors=False))
        try:
            wait_until(f"agent {side}'s spool uploaded",
                       lambda: not self._spool_waiting(side) or process.poll() is not None, timeout_s=120,
                       diagnose=lambda: self._log_tail(f"agent-{side}"))  # fmt: skip
            assert process.poll() is None, f"agent {side} exited:\n{self._log_tail(f'agent-{side}')}"
        finally:
            process.terminate()
            process.wait(timeout=60)

    def agent_problems(self, side: str) -> list[str]:
        """Errors the agent logged (failed collector runs) and its warnings about delivery (refused uploads)."""
        problems = []
        for line in self._log_tail(f"agent-{side}", lines=100000).splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                level, logger = entry.get("level"), entry.get("logger", "")
                # errors, and any warning about delivery (a refusal, a parked record); an overrun is only a
                # test queued behind another one
                if level in ("error", "critical") or (level == "warning" and logger in ("agents.uploader",
                                                                                        "agents.spool")):
                    problems.append(f"agent {side}: {entry.get('message')}: {entry}")
        return problems

    # --- tear-down

    def close(self) -> None:
        """Stop everything started (agents first), close the forwarders, delete the namespaces. Idempotent."""
        for process in [*self.agents.values(), *reversed(self.processes)]:
            stop_process(process, timeout_s=10)
        for forwarder in self.forwarders:
            forwarder.close()
        self.forwarders = []
        for site in (self.site_a, self.site_b):
            netns.delete(site.namespace)

    def remove_work(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)
