"""The SNMP counters of the regression corpus: :class:`Counter64Port` advances one interface's Counter64 octets
and packets (modulo 2^64), Counter32 errors and sysUpTime the way a device does, and polls them into a
:class:`~tests.scenarios.regression.builder.Scenario`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from tests.scenarios.regression.builder import Scenario

C64 = 2**64


class Counter64Port:
    """SNMP counters of one interface: Counter64 octets/packets (mod 2^64), Counter32 errors, sysUpTime."""

    def __init__(
        self,
        equipment: str,
        name: str,
        uptime_s: float,
        in_octets: int = 0,
        out_octets: int = 0,
        mean_frame_bytes: float = 900.0,
    ) -> None:
        self.equipment, self.name = equipment, name
        self.uptime_s = uptime_s
        self.c = {
            "hc_in_octets": in_octets % C64,
            "hc_out_octets": out_octets % C64,
            "hc_in_ucast_pkts": in_octets // 1400 % C64,
            "hc_out_ucast_pkts": out_octets // 1400 % C64,
            "in_errors": 0,
            "out_errors": 0,
            "in_discards": 0,
            "out_discards": 0,
        }
        self.frame = mean_frame_bytes
        self.frac = {k: 0.0 for k in self.c}

    def advance(
        self,
        seconds: float,
        in_bps: float,
        out_bps: float,
        in_errors_per_s: float = 0.0,
        out_discards_per_s: float = 0.0,
    ) -> None:
        self.uptime_s += seconds
        for name, amount in (
            ("hc_in_octets", in_bps * seconds / 8),
            ("hc_out_octets", out_bps * seconds / 8),
            ("hc_in_ucast_pkts", in_bps * seconds / 8 / self.frame),
            ("hc_out_ucast_pkts", out_bps * seconds / 8 / self.frame),
            ("in_errors", in_errors_per_s * seconds),
            ("out_discards", out_discards_per_s * seconds),
        ):
            total = self.frac[name] + amount
            whole = int(total)
            self.frac[name] = total - whole
            modulus = C64 if name.startswith("hc_") else 2**32
            self.c[name] = (self.c[name] + whole) % modulus

    def reboot(self, uptime_s: float) -> None:
        """The device booted ``uptime_s`` seconds ago: sysUpTime and every counter restart from zero."""
        self.uptime_s = uptime_s
        for k in self.c:
            self.c[k] = 0
            self.frac[k] = 0.0

    def poll(self, sc: Scenario, t: datetime, oper: str = "up") -> None:
        sc.snmp(t, self.equipment, self.name, round(self.uptime_s * 100) % 2**32, dict(self.c), oper)


def octets_before_wrap(polls: list[datetime], rate_bps: Mapping[datetime, float], wrap_at: datetime) -> int:
    """Where a Counter64 octet counter starts so that the traffic of the 60 s ``polls`` (``rate_bps`` of the
    interval each poll ends) brings it to 2^64 halfway through the interval ending at ``wrap_at``."""
    before = sum(int(rate_bps[t] * 60 / 8) for t in polls[1:] if t < wrap_at)
    return C64 - before - int(rate_bps[wrap_at] * 30 / 8)
