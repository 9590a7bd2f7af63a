"""The lab's WAN emulator: one process forwarding IP packets between the TUN devices of two namespaces.

``python -m tests.lab.emulator CONFIG.json`` (root). The kernel here has no netem, so the path is emulated in user
space: a packet read from site A's device is written to site B's device (and back) after the impairments of its
direction, in this order:

1. MTU: a packet longer than ``mtu`` is dropped (counted as ``mtu``);
2. interface errors: with probability ``error_rate`` the packet is dropped as an input error of the router's
   interface on that side (ifInErrors), the way a dirty fibre corrupts frames;
3. loss -- random (``loss``), periodic (everything for ``periodic_for_s`` every ``periodic_every_s``), bursts
   (Gilbert-Elliott: ``burst_enter`` / ``burst_leave`` per packet) -- restricted, when asked, to TCP
   (``tcp_only``) or to destination addresses whose last bit is 1 (``odd_dst_only``, a LAG member by address);
4. rate limit: a link of ``rate_bps`` with a queue of ``queue_bytes``; a packet that finds the queue full is
   dropped (``queue``, ifOutDiscards);
5. delay ``delay_ms`` plus ``jitter_ms`` (uniform, never reordering: a packet leaves no earlier than the one
   before it), and with probability ``reorder`` an extra ``reorder_ms`` that lets later packets overtake it.

Packets are delivered in batches of BATCH_S (250 us): the loop sleeps that long while anything is due, and
blocks on the devices when nothing is. Every random draw comes from a ``random.Random`` seeded per direction
(``seed`` of the scenario), so a scenario drops the same packets of the same stream every run.

What it did is counted per direction (packets and octets in and out, drops per cause, TCP segments with payload
dropped -- each one a retransmission the sender owes) and served two ways: as IF-MIB counters of an emulated
router (ifIndex 1 faces site A, 2 faces site B) over SNMPv2c inside each site's namespace, and as a JSON status
file (``status``) rewritten every half second and at exit (SIGTERM).
"""

from __future__ import annotations

import heapq
import json
import os
import random
import select
import signal
import socket
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.lab import netns
from tests.lab.snmp_agent import Responder, if_mib

BATCH_S = 250e-6
STATUS_EVERY_S = 0.5
IDLE_WAIT_S = 0.1  # longest block on the devices: the status file and the stop flag are looked at this often
READ_BURST = 256  # packets read from one device before looking at the other (fairness between directions)
PROTO_TCP = 6
DROP_CAUSES = ("mtu", "errors", "random", "periodic", "burst", "queue")


@dataclass(frozen=True)
class Impairment:
    """What one direction of the emulated path does to packets (see the module docstring for the order)."""

    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss: float = 0.0
    periodic_every_s: float | None = None
    periodic_for_s: float = 0.0
    burst_enter: float = 0.0
    burst_leave: float = 1.0
    tcp_only: bool = False
    odd_dst_only: bool = False
    rate_bps: float | None = None
    queue_bytes: int = 256 * 1024
    reorder: float = 0.0
    reorder_ms: float = 0.0
    mtu: int | None = None
    error_rate: float = 0.0


@dataclass
class Counters:
    """Per direction: what arrived, what was delivered, what was dropped and why."""

    in_packets: int = 0
    in_octets: int = 0
    out_packets: int = 0
    out_octets: int = 0
    drops: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DROP_CAUSES, 0))
    tcp_data_drops: int = 0  # dropped TCP segments carrying payload: the sender must retransmit each
    tcp_data_packets: int = 0
    udp_packets: int = 0
    udp_drops: int = 0
    max_queue_bytes: int = 0

    @property
    def dropped(self) -> int:
        return sum(self.drops.values())


def packet_facts(packet: bytes) -> tuple[int, bool, int]:
    """(IP protocol, TCP with payload, last octet of the destination) of an IPv4 packet; (0, False, 0) else."""
    if len(packet) < 20 or packet[0] >> 4 != 4:
        return 0, False, 0
    proto = packet[9]
    dst_last = packet[19]
    if proto != PROTO_TCP:
        return proto, False, dst_last
    ihl = (packet[0] & 0x0F) * 4
    total = int.from_bytes(packet[2:4], "big")
    if len(packet) < ihl + 13:
        return proto, False, dst_last
    data_offset = (packet[ihl + 12] >> 4) * 4
    return proto, total - ihl - data_offset > 0, dst_last


class Direction:
    """The impairments of one direction and its state (queue, last delivery, burst state, random stream)."""

    def __init__(self, impairment: Impairment, seed: int, start_s: float) -> None:
        self.imp = impairment
        self.rng = random.Random(seed)
        self.start_s = start_s
        self.counters = Counters()
        self.link_free_s = 0.0  # when the rate-limited link has sent everything queued so far
        self.last_delivery_s = 0.0
        self.in_burst = False

    def _lossy(self, proto: int, dst_last: int) -> bool:
        imp = self.imp
        if imp.tcp_only and proto != PROTO_TCP:
            return False
        return not (imp.odd_dst_only and dst_last % 2 == 0)

    def admit(self, packet: bytes, now_s: float) -> float | None:
        """When ``packet`` (arrived at ``now_s``) is to be delivered, or None when it is dropped (counted)."""
        imp, c, size = self.imp, self.counters, len(packet)
        proto, tcp_data, dst_last = packet_facts(packet)
        c.in_packets += 1
        c.in_octets += size
        c.tcp_data_packets += tcp_data
        c.udp_packets += proto == 17
        cause = None
        if imp.mtu is not None and size > imp.mtu:
            cause = "mtu"
        elif imp.error_rate and self.rng.random() < imp.error_rate:
            cause = "errors"
        elif self._lossy(proto, dst_last):
            cause = self._loss_cause(now_s)
        if cause is None and imp.rate_bps:
            backlog_s = max(0.0, self.link_free_s - now_s)
            backlog_bytes = backlog_s * imp.rate_bps / 8
            if backlog_bytes + size > imp.queue_bytes + 1e-6:  # (float arithmetic must not drop what fits)
                cause = "queue"
            else:
                c.max_queue_bytes = max(c.max_queue_bytes, int(backlog_bytes + size))
                self.link_free_s = max(now_s, self.link_free_s) + size * 8 / imp.rate_bps
        if cause is not None:
            c.drops[cause] += 1
            c.tcp_data_drops += tcp_data
            c.udp_drops += proto == 17
            return None
        leave_s = self.link_free_s if imp.rate_bps else now_s
        deliver_s = leave_s + imp.delay_ms / 1000
        if imp.jitter_ms:
            deliver_s += self.rng.uniform(0.0, imp.jitter_ms / 1000)
        if imp.reorder and self.rng.random() < imp.reorder:
            return deliver_s + imp.reorder_ms / 1000  # overtaken by what follows; does not hold the others back
        deliver_s = max(deliver_s, self.last_delivery_s)
        self.last_delivery_s = deliver_s
        return deliver_s

    def _loss_cause(self, now_s: float) -> str | None:
        imp = self.imp
        if imp.periodic_every_s and (now_s - self.start_s) % imp.periodic_every_s < imp.periodic_for_s:
            return "periodic"
        if imp.burst_enter:
            if self.in_burst:
                self.in_burst = self.rng.random() >= imp.burst_leave
            else:
                self.in_burst = self.rng.random() < imp.burst_enter
            if self.in_burst:
                return "burst"
        if imp.loss and self.rng.random() < imp.loss:
            return "random"
        return None


@dataclass(frozen=True)
class EmulatorConfig:
    """The JSON file the emulator reads: both sites, both directions, the router's SNMP face."""

    name: str  # the emulated router's sysName
    site_a: dict[str, str]  # {"namespace", "device", "interface"}: interface = the router's port name facing it
    site_b: dict[str, str]
    a_to_b: Impairment
    b_to_a: Impairment
    seed: int
    status: str
    speed_bps: float = 1e9
    snmp_port: int = 1161
    community: str = "public"

    @classmethod
    def load(cls, path: str | Path) -> EmulatorConfig:
        raw = json.loads(Path(path).read_text())
        raw["a_to_b"] = Impairment(**raw["a_to_b"])
        raw["b_to_a"] = Impairment(**raw["b_to_a"])
        return cls(**raw)

    def dump(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1))


class Emulator:
    """Holds both devices and forwards between them until SIGTERM."""

    def __init__(self, config: EmulatorConfig) -> None:
        self.config = config
        self.started_s = time.monotonic()
        self.started_unix = time.time()
        self.fd_a = netns.open_tun(config.site_a["namespace"], config.site_a["device"])
        self.fd_b = netns.open_tun(config.site_b["namespace"], config.site_b["device"])
        self.a_to_b = Direction(config.a_to_b, config.seed * 2 + 1, self.started_s)
        self.b_to_a = Direction(config.b_to_a, config.seed * 2 + 2, self.started_s)
        self.write_errors = 0
        self.stopping = False
        sockets = [self._snmp_socket(site["namespace"]) for site in (config.site_a, config.site_b)]
        self.snmp = Responder(sockets, config.community, self.mib)

    def _snmp_socket(self, namespace: str) -> socket.socket:
        with netns.entered(namespace):
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", self.config.snmp_port))
        return sock

    # --- the router's counters ----------------------------------------------------------------------------

    def mib(self) -> dict:
        """IF-MIB of the emulated router: port 1 faces A (traffic A->B comes in there), port 2 faces B."""
        ab, ba = self.a_to_b.counters, self.b_to_a.counters
        speed = self.config.speed_bps
        rows = []
        for index, site, incoming, outgoing in ((1, self.config.site_a, ab, ba), (2, self.config.site_b, ba, ab)):
            rows.append({
                "ifIndex": index, "ifDescr": site["interface"], "ifName": site["interface"], "ifType": 6,
                "ifMtu": 1500, "ifSpeed": min(speed, 2**32 - 1), "ifHighSpeed": int(speed // 1_000_000),
                "ifAdminStatus": 1, "ifOperStatus": 1, "ifAlias": f"to {site['namespace']}",
                "ifInOctets": incoming.in_octets, "ifHCInOctets": incoming.in_octets,
                "ifInUcastPkts": incoming.in_packets, "ifHCInUcastPkts": incoming.in_packets,
                "ifInErrors": incoming.drops["errors"], "ifInDiscards": 0,
                "ifOutOctets": outgoing.out_octets, "ifHCOutOctets": outgoing.out_octets,
                "ifOutUcastPkts": outgoing.out_packets, "ifHCOutUcastPkts": outgoing.out_packets,
                "ifOutDiscards": outgoing.drops["queue"], "ifOutErrors": 0,
            })  # fmt: skip
        uptime_ticks = int((time.monotonic() - self.started_s) * 100) + 100
        return if_mib(self.config.name, uptime_ticks, rows)

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "started_unix": self.started_unix,
            "elapsed_s": time.monotonic() - self.started_s,
            "write_errors": self.write_errors,
            "snmp_requests": self.snmp.requests,
            "snmp_errors": self.snmp.errors,
            "a_to_b": {**asdict(self.a_to_b.counters), "dropped": self.a_to_b.counters.dropped},
            "b_to_a": {**asdict(self.b_to_a.counters), "dropped": self.b_to_a.counters.dropped},
        }

    def write_status(self) -> None:
        path = Path(self.config.status)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.status()))
        os.replace(temporary, path)

    # --- forwarding -----------------------------------------------------------------------------------------

    def run(self) -> None:
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        self.snmp.start()
        poller = select.epoll()
        poller.register(self.fd_a, select.EPOLLIN)
        poller.register(self.fd_b, select.EPOLLIN)
        routes = {self.fd_a: (self.a_to_b, self.fd_b), self.fd_b: (self.b_to_a, self.fd_a)}
        pending: list[tuple[float, int, int, bytes]] = []  # (deliver at, sequence, out fd, packet)
        sequence = 0
        next_status = 0.0
        self.write_status()
        while not self.stopping:
            now = time.monotonic()
            if pending and pending[0][0] <= now + BATCH_S:
                timeout = 0.0
            elif pending:
                timeout = min(pending[0][0] - now, IDLE_WAIT_S)
            else:
                timeout = IDLE_WAIT_S
            if timeout > 0.002:
                events = poller.poll(timeout - 0.001)  # epoll has ms resolution: wake early, then fine sleeps
            else:
                events = poller.poll(0)
                if not events and timeout > 0:
                    time.sleep(min(timeout, BATCH_S))
            for fd, _ in events:
                direction, out_fd = routes[fd]
                for _ in range(READ_BURST):
                    try:
                        packet = os.read(fd, 65536)
                    except BlockingIOError:
                        break
                    arrived = time.monotonic()
                    deliver = direction.admit(packet, arrived)
                    if deliver is not None:
                        sequence += 1
                        heapq.heappush(pending, (deliver, sequence, out_fd, packet))
            now = time.monotonic()
            while pending and pending[0][0] <= now + BATCH_S / 2:
                _, _, out_fd, packet = heapq.heappop(pending)
                direction = self.a_to_b if out_fd == self.fd_b else self.b_to_a
                try:
                    os.write(out_fd, packet)
                except OSError:
                    self.write_errors += 1
                    continue
                direction.counters.out_packets += 1
                direction.counters.out_octets += len(packet)
            if now >= next_status:
                self.write_status()
                next_status = now + STATUS_EVERY_S
        self.snmp.stop()
        self.write_status()

    def _stop(self, *_: object) -> None:
        self.stopping = True


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tests.lab.emulator CONFIG.json", file=sys.stderr)  # noqa: T201
        return 2
    Emulator(EmulatorConfig.load(argv[0])).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
