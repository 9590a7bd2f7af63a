"""SNMP benchmark: OIDs per second of the agent's poller against net-snmp's snmpbulkwalk, same snmpsim, one run.

Both read the same snmpsim agent on 127.0.0.1 in the same run (one simulated device per
community; each has ``--interfaces`` interfaces with ifTable + ifXTable). What is timed:

* agent: ``SnmpPoller.poll_devices`` of all N devices (warm poller, as in the agent daemon: the
  one-off SnmpEngine start-up is reported separately): per device one GET of sysUpTime.0 +
  snmpEngineBoots.0, then one GETBULK walk per column of ``collectors.snmp.PRIMARY_COLUMNS``;
* net-snmp, the same requests as commands: per device ``snmpget`` of the two scalars and one
  ``snmpbulkwalk -On -Cr<max_repetitions>`` per column, with the same timeout/retries, run
  - parallel: one worker per device (all devices at once), each running its device's commands one
    after the other (what ``xargs -P N`` over a device list gives): this is the baseline of the
    ratio;
  - sequential: every command one after the other (a plain shell loop), reported for context.

OIDs are counted on both sides as the varbinds each actually retrieved inside the requested
scalars and columns (the agent through a counting wrapper around its pysnmp transport, net-snmp
as the lines it printed): the two counts, and the OID sets of every device, must be equal, and
ifHCInOctets of every interface must agree, or the run fails. Throughput is OIDs of one round
divided by the median wall time of a round (``--repeat`` rounds per side), with the CPU seconds
per round of the client side (agent process / net-snmp processes) and of the simulator: on
loopback snmpsim, a single-threaded Python agent, usually dominates the wall time of both.

The last line is machine-readable (ratio = agent OIDs/s over net-snmp OIDs/s: higher is better,
1.0 is parity; the issue's target is >= 0.5):

    snmp_ratio_vs_netsnmp=<float> agent_oids_per_s=<float> netsnmp_oids_per_s=<float> oids=<int> \
        agent_s=<float> netsnmp_s=<float> devices=<N> interfaces=<N>

Run: ``scripts/bench snmp [--devices 20] [--interfaces 48] [--repeat 3]`` or
``.venv/bin/python -m scripts.bench_snmp``. Needs snmpsim (dev extra) and net-snmp's tools.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from collectors.snmp import (
    IF_HC_IN_OCTETS,
    PRIMARY_COLUMNS,
    SCALAR_OIDS,
    SnmpDeviceConfig,
    SnmpPoller,
    SnmpTransport,
    SnmpValue,
)
from tests.collectors.snmpsim.simulator import SnmpSimulator

IF = "1.3.6.1.2.1.2.2.1"
IFX = "1.3.6.1.2.1.31.1.1.1"


def device_rows(device: int, interfaces: int, rng: random.Random) -> list[tuple[str, int, object]]:
    """snmprec rows (OID, tag, value) of one router with ``interfaces`` 10G/100G ports."""
    rows: list[tuple[str, int, object]] = [
        ("1.3.6.1.2.1.1.1.0", 4, f"bench router {device}"),
        ("1.3.6.1.2.1.1.3.0", 67, rng.randrange(1, 2**32)),
        ("1.3.6.1.2.1.2.1.0", 2, interfaces),
        ("1.3.6.1.6.3.10.2.1.2.0", 2, rng.randrange(1, 50)),
    ]
    for i in range(1, interfaces + 1):
        speed_mbps = rng.choice((10000, 100000))
        rows += [
            (f"{IF}.1.{i}", 2, i),
            (f"{IF}.2.{i}", 4, f"et-0/0/{i}"),
            (f"{IF}.4.{i}", 2, 9192),
            (f"{IF}.5.{i}", 66, 4294967295),
            (f"{IF}.7.{i}", 2, 1),
            (f"{IF}.8.{i}", 2, rng.choice((1, 1, 1, 2))),
            (f"{IF}.10.{i}", 65, rng.randrange(2**32)),
            (f"{IF}.13.{i}", 65, rng.randrange(1000)),
            (f"{IF}.14.{i}", 65, rng.randrange(1000)),
            (f"{IF}.16.{i}", 65, rng.randrange(2**32)),
            (f"{IF}.19.{i}", 65, rng.randrange(1000)),
            (f"{IF}.20.{i}", 65, rng.randrange(1000)),
            (f"{IFX}.1.{i}", 4, f"et-0/0/{i}"),
            (f"{IFX}.6.{i}", 70, rng.randrange(2**64)),  # half of them above 2^63
            (f"{IFX}.7.{i}", 70, rng.randrange(2**60)),
            (f"{IFX}.10.{i}", 70, rng.randrange(2**64)),
            (f"{IFX}.11.{i}", 70, rng.randrange(2**60)),
            (f"{IFX}.15.{i}", 66, speed_mbps),
            (f"{IFX}.18.{i}", 4, f"bench link {device}-{i}"),
            (f"{IFX}.19.{i}", 67, 0),
        ]
    return sorted(rows, key=lambda row: tuple(int(part) for part in row[0].split(".")))


def write_devices(directory: Path, devices: int, interfaces: int, seed: int) -> list[Path]:
    rng = random.Random(seed)
    paths = []
    for device in range(1, devices + 1):
        path = directory / f"bench{device:03d}.snmprec"
        path.write_text("".join(f"{oid}|{tag}|{value}\n" for oid, tag, value in device_rows(device, interfaces, rng)))
        paths.append(path)
    return paths


class OidCounter:
    """Varbinds the agent's transport returned: a total per round, and each device's OIDs when ``keep``."""

    def __init__(self) -> None:
        self.count = 0
        self.keep = False
        self.oids: dict[str, set[str]] = {}

    def add(self, equipment: str, rows: dict[str, SnmpValue]) -> None:
        self.count += len(rows)
        if self.keep:
            self.oids.setdefault(equipment, set()).update(rows)


class CountingTransport:
    """The poller's own pysnmp transport, counting what each request brought back."""

    def __init__(self, inner: SnmpTransport, equipment: str, counter: OidCounter) -> None:
        self._inner, self._equipment, self._counter = inner, equipment, counter

    async def get(self, oids: Sequence[str]) -> dict[str, SnmpValue]:
        rows = await self._inner.get(oids)
        self._counter.add(self._equipment, rows)
        return rows

    async def bulk_walk(self, oid: str) -> dict[str, SnmpValue]:
        rows = await self._inner.bulk_walk(oid)
        self._counter.add(self._equipment, rows)
        return rows


class CountingPoller(SnmpPoller):
    """``SnmpPoller`` whose devices' transports count the varbinds they retrieve."""

    def __init__(self, counter: OidCounter) -> None:
        super().__init__()
        self.counter = counter

    async def _pysnmp_transport(self, config: SnmpDeviceConfig) -> SnmpTransport:
        return CountingTransport(await super()._pysnmp_transport(config), config.equipment, self.counter)


def agent_configs(sim: SnmpSimulator, args: argparse.Namespace) -> list[SnmpDeviceConfig]:
    return [
        SnmpDeviceConfig(
            equipment=community,
            host=sim.host,
            port=sim.port,
            community=community,
            timeout_s=args.timeout_s,
            retries=args.retries,
            max_repetitions=args.max_repetitions,
        )
        for community in sim.communities
    ]


def netsnmp_commands(sim: SnmpSimulator, community: str, args: argparse.Namespace) -> list[list[str]]:
    common = ["-v2c", "-c", community, "-On", "-Oe", "-t", f"{args.timeout_s:g}", "-r", str(args.retries)]
    target = f"{sim.host}:{sim.port}"
    commands = [["snmpget", *common, target, *SCALAR_OIDS]]
    commands += [["snmpbulkwalk", *common, f"-Cr{args.max_repetitions}", target, column] for column in PRIMARY_COLUMNS]
    return commands


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds a running process has used so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # finished children: the net-snmp commands
    return usage.ru_utime + usage.ru_stime


def run_command(argv: list[str]) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120)  # noqa: S603 - fixed argv
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.strip()}")
    return result.stdout


async def run_device_commands(commands: list[list[str]]) -> list[str]:
    outputs = []
    for argv in commands:
        process = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        stdout, stderr = await process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({process.returncode}): {stderr.decode().strip()}")
        outputs.append(stdout.decode())
    return outputs


def netsnmp_parallel(all_commands: Sequence[list[list[str]]]) -> tuple[float, list[list[str]]]:
    async def run() -> list[list[str]]:
        return list(await asyncio.gather(*(run_device_commands(commands) for commands in all_commands)))

    started = time.perf_counter()
    outputs = asyncio.run(run())
    return time.perf_counter() - started, outputs


def netsnmp_sequential(all_commands: Sequence[list[list[str]]]) -> float:
    started = time.perf_counter()
    for commands in all_commands:
        for argv in commands:
            run_command(argv)
    return time.perf_counter() - started


def netsnmp_oids(outputs: list[str]) -> set[str]:
    """The OIDs one device's commands printed (``-On``: one ``.1.3.6... = TYPE: value`` line each)."""
    oids = set()
    for output in outputs:
        for line in output.splitlines():
            oid, sep, _ = line.partition(" = ")
            if sep and oid.startswith("."):
                oids.add(oid[1:])
    return oids


def netsnmp_count(outputs: list[str]) -> int:
    return sum(1 for output in outputs for line in output.splitlines() if line.startswith(".") and " = " in line)


def hc_in_from_netsnmp(outputs: list[str]) -> dict[int, int]:
    """ifIndex -> ifHCInOctets from the device's snmpbulkwalk output of that column."""
    column = 1 + PRIMARY_COLUMNS.index(IF_HC_IN_OCTETS)  # outputs[0] is the snmpget
    values = {}
    for line in outputs[column].splitlines():
        oid, _, value = line.partition(" = Counter64: ")
        values[int(oid.rsplit(".", 1)[1])] = int(value)
    return values


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/bench snmp", description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=20)
    parser.add_argument("--interfaces", type=int, default=48, help="interfaces per device")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-repetitions", type=int, default=25)
    parser.add_argument("--timeout-s", type=float, default=5.0)
    parser.add_argument("--retries", type=int, default=1)
    parser.add_argument("--no-sequential", action="store_true", help="skip the sequential net-snmp run")
    parser.add_argument("--seed", type=int, default=20260301)
    args = parser.parse_args(argv)

    missing = [tool for tool in ("snmpget", "snmpbulkwalk") if shutil.which(tool) is None]
    if missing:
        print(f"net-snmp tools missing: {', '.join(missing)} (Debian: apt-get install snmp)", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="wanmon-bench-snmp-") as tmp:
        data_files = write_devices(Path(tmp), args.devices, args.interfaces, args.seed)
        with SnmpSimulator(data_files) as sim:
            return run(sim, args)


def run(sim: SnmpSimulator, args: argparse.Namespace) -> int:
    configs = agent_configs(sim, args)
    commands = [netsnmp_commands(sim, community, args) for community in sim.communities]
    per_device = len(commands[0])
    print(
        f"snmpsim on {sim.host}:{sim.port}: devices={args.devices} interfaces_per_device={args.interfaces} "
        f"requests per device: 1 GET + {len(PRIMARY_COLUMNS)} GETBULK walks (max-repetitions {args.max_repetitions})"
    )

    assert sim.process is not None
    simulator_pid = sim.process.pid

    counter = OidCounter()

    async def agent_runs() -> tuple[float, list[float], list, list[int]]:
        cold_started = time.perf_counter()
        async with CountingPoller(counter) as poller:
            warmup = await poller.poll_devices(configs)
            cold_s = time.perf_counter() - cold_started
            times, polls, counts = [], warmup, []
            for round_index in range(args.repeat):
                counter.count, counter.keep = 0, round_index == args.repeat - 1
                started = time.perf_counter()
                polls = await poller.poll_devices(configs)
                times.append(time.perf_counter() - started)
                counts.append(counter.count)
            return cold_s, times, polls, counts

    cpu_before, sim_before = time.process_time(), process_cpu_s(simulator_pid)
    cold_s, agent_times, polls, agent_counts = asyncio.run(agent_runs())
    # Per timed round (the warm-up round is a round too).
    agent_cpu_s = (time.process_time() - cpu_before) / (args.repeat + 1)
    agent_sim_cpu_s = (process_cpu_s(simulator_pid) - sim_before) / (args.repeat + 1)
    failed = [p for p in polls if not p.ok]
    if failed:
        print("agent poll failed: " + "; ".join(str(p.error) for p in failed), file=sys.stderr)
        return 1
    records = sum(len(p.records) for p in polls)
    if len(set(agent_counts)) != 1:
        print(f"agent retrieved a different number of OIDs in each round: {agent_counts}", file=sys.stderr)
        return 1
    oids = agent_counts[0]
    agent_s = statistics.median(agent_times)
    agent_rate = oids / agent_s
    print(
        f"agent (pysnmp asyncio, one engine, all devices concurrent): {oids} OIDs, {records} records per round; "
        f"runs {', '.join(f'{t:.3f}' for t in agent_times)} s, median {agent_s:.3f} s = {agent_rate:.0f} OIDs/s; "
        f"first poll incl. engine start-up {cold_s:.3f} s; CPU per round: agent {agent_cpu_s:.2f} s, "
        f"snmpsim {agent_sim_cpu_s:.2f} s"
    )

    netsnmp_parallel(commands[:1])  # warm-up: page cache of the binaries and MIB files
    parallel_times, outputs, netsnmp_counts = [], [], []
    cpu_before, sim_before = children_cpu_s(), process_cpu_s(simulator_pid)
    for _ in range(args.repeat):
        elapsed, outputs = netsnmp_parallel(commands)
        parallel_times.append(elapsed)
        netsnmp_counts.append(sum(netsnmp_count(device_outputs) for device_outputs in outputs))
    netsnmp_cpu_s = (children_cpu_s() - cpu_before) / args.repeat
    netsnmp_sim_cpu_s = (process_cpu_s(simulator_pid) - sim_before) / args.repeat
    netsnmp_s = statistics.median(parallel_times)
    netsnmp_rate = oids / netsnmp_s
    print(
        f"net-snmp parallel ({args.devices} workers, one per device, {per_device} commands each in sequence): "
        f"{netsnmp_counts[-1]} OIDs per round; runs {', '.join(f'{t:.3f}' for t in parallel_times)} s, "
        f"median {netsnmp_s:.3f} s = {netsnmp_rate:.0f} OIDs/s; CPU per round: "
        f"net-snmp processes {netsnmp_cpu_s:.2f} s, snmpsim {netsnmp_sim_cpu_s:.2f} s"
    )
    if not args.no_sequential:
        sequential_s = netsnmp_sequential(commands)
        print(
            f"net-snmp sequential ({args.devices * per_device} commands one after another): {sequential_s:.3f} s "
            f"= {oids / sequential_s:.0f} OIDs/s"
        )

    # Same work on both sides: the same number of OIDs, the same OIDs per device, the same values.
    if set(netsnmp_counts) != {oids}:
        print(f"OID COUNT MISMATCH: agent {oids} per round, net-snmp {netsnmp_counts}", file=sys.stderr)
        return 1
    for poll, device_outputs in zip(polls, outputs, strict=True):
        agent_set, netsnmp_set = counter.oids.get(poll.equipment, set()), netsnmp_oids(device_outputs)
        if agent_set != netsnmp_set:
            print(
                f"OID MISMATCH on {poll.equipment}: only agent {sorted(agent_set - netsnmp_set)[:5]}, "
                f"only net-snmp {sorted(netsnmp_set - agent_set)[:5]}",
                file=sys.stderr,
            )
            return 1
    checked = 0
    for poll, device_outputs in zip(polls, outputs, strict=True):
        expected = hc_in_from_netsnmp(device_outputs)
        got = {r.if_index: r.counters.hc_in_octets for r in poll.records}
        if got != expected:
            print(f"MISMATCH on {poll.equipment}: agent {got} vs net-snmp {expected}", file=sys.stderr)
            return 1
        checked += len(expected)
    above = sum(1 for p in polls for r in p.records if (r.counters.hc_in_octets or 0) >= 2**63)
    print(
        f"same work: {oids} OIDs per round on both sides, the same OIDs on each of {len(polls)} devices; "
        f"ifHCInOctets agree on {checked} interfaces ({above} above 2^63)"
    )

    print(
        f"snmp_ratio_vs_netsnmp={agent_rate / netsnmp_rate:.3f} agent_oids_per_s={agent_rate:.1f} "
        f"netsnmp_oids_per_s={netsnmp_rate:.1f} oids={oids} agent_s={agent_s:.3f} netsnmp_s={netsnmp_s:.3f} "
        f"devices={args.devices} interfaces={args.interfaces}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
