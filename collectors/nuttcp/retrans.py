"""The host kernel's TCP retransmit counter (``TcpRetransSegs``), read around a test.

nuttcp before 6.2.9 ("Make retrans info reporting work again on newer Linux distros", nuttcp changelog) reads
the kernel's TCP_INFO with an outdated layout and prints ``retrans=0`` whatever happened; Debian's 6.1.2 is
such a version. Those zeros are reported as unknown (``None``), never as "no loss"; the collector can then
measure them from this counter through an injected :class:`RetransCounter`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from collectors.runner import CommandRunner

# ---------------------------------------------------------------------------
# Kernel retransmit counters
# ---------------------------------------------------------------------------


class RetransCounter(Protocol):
    """Reads the host's cumulative TCP retransmitted-segment counter."""

    def read_retrans_segs(self) -> int | None:
        """Current ``TcpRetransSegs`` value, or ``None`` when it cannot be read."""
        ...


def parse_proc_net_snmp_retrans(text: str) -> int | None:
    """``RetransSegs`` from ``/proc/net/snmp`` (a ``Tcp:`` header line, then a ``Tcp:`` values line)."""
    tcp_lines = [line.split()[1:] for line in text.splitlines() if line.startswith("Tcp:")]
    if len(tcp_lines) < 2:
        return None
    header, values = tcp_lines[0], tcp_lines[1]
    if "RetransSegs" not in header or len(values) != len(header):
        return None
    raw = values[header.index("RetransSegs")]
    return int(raw) if raw.isdigit() else None


def parse_nstat_retrans(text: str) -> int | None:
    """``TcpRetransSegs`` from ``nstat -a -s -z TcpRetransSegs`` output (``#kernel`` then ``name value rate``)."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "TcpRetransSegs":
            return int(parts[1]) if parts[1].isdigit() else None
    return None


@dataclass(frozen=True)
class ProcNetSnmpRetransCounter:
    """:class:`RetransCounter` reading ``<proc_root>/net/snmp`` (the agent's network namespace)."""

    proc_root: Path = Path("/proc")

    def read_retrans_segs(self) -> int | None:
        """Read and parse ``net/snmp``; ``None`` if unreadable."""
        try:
            text = (self.proc_root / "net" / "snmp").read_text()
        except OSError:
            return None
        return parse_proc_net_snmp_retrans(text)


@dataclass(frozen=True)
class NstatRetransCounter:
    """:class:`RetransCounter` running ``nstat`` through a :class:`CommandRunner`.

    ``-a`` absolute values (not deltas since nstat's last run), ``-s`` do not
    update nstat's history file, ``-z`` print the counter even when zero.
    """

    runner: CommandRunner
    binary: str = "nstat"
    timeout_s: float = 10.0

    def read_retrans_segs(self) -> int | None:
        """Run nstat once; ``None`` on any failure."""
        result = self.runner.run([self.binary, "-a", "-s", "-z", "TcpRetransSegs"], self.timeout_s)
        if not result.ok:
            return None
        return parse_nstat_retrans(result.stdout)
