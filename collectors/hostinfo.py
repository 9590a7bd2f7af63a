"""Host TCP settings collector (``host_tcp`` records) for the HOST_TCP_TUNING rule.

Reads the Linux sysctls that bound a TCP flow's window and its behaviour on
long fat paths, from a ``/proc`` tree, and an interface's MTU and link speed
from ``/sys`` (the speed caps what a window can achieve: the window advice
never asks for more than fills the NIC).
Both roots are injectable so tests run against a fake tree (and so the agent
can read a host's view from inside a container, e.g. ``/host/proc``).

Values are read in the agent's own network namespace: ``/proc/sys/net`` is
per-namespace, like the TCP flows the agent's tests open.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from collectors.runner import utc_time

DEFAULT_PROC_ROOT = Path("/proc")
DEFAULT_SYS_ROOT = Path("/sys")

# sysctl paths relative to the /proc root.
TCP_RMEM = "sys/net/ipv4/tcp_rmem"
TCP_WMEM = "sys/net/ipv4/tcp_wmem"
RMEM_MAX = "sys/net/core/rmem_max"
WMEM_MAX = "sys/net/core/wmem_max"
CONGESTION_CONTROL = "sys/net/ipv4/tcp_congestion_control"
AVAILABLE_CONGESTION_CONTROL = "sys/net/ipv4/tcp_available_congestion_control"

# Further settings that change long-path TCP behaviour; reported when present.
OPTIONAL_INT_SYSCTLS = {
    "tcp_window_scaling": "sys/net/ipv4/tcp_window_scaling",
    "tcp_timestamps": "sys/net/ipv4/tcp_timestamps",
    "tcp_sack": "sys/net/ipv4/tcp_sack",
    "tcp_mtu_probing": "sys/net/ipv4/tcp_mtu_probing",
    "tcp_no_metrics_save": "sys/net/ipv4/tcp_no_metrics_save",
    "netdev_max_backlog": "sys/net/core/netdev_max_backlog",
}
OPTIONAL_TEXT_SYSCTLS = {"default_qdisc": "sys/net/core/default_qdisc"}

ROUTE_DEFAULT_DESTINATION = "00000000"
RTF_UP = 0x0001  # linux/route.h
RTF_REJECT = 0x0200


@dataclass(frozen=True)
class HostTcpSettings:
    """The host's TCP settings; ``None`` for what could not be read (see ``errors``)."""

    tcp_rmem: tuple[int, int, int] | None
    tcp_wmem: tuple[int, int, int] | None
    rmem_max: int | None
    wmem_max: int | None
    congestion_control: str | None
    available_congestion_control: tuple[str, ...] | None
    interface: str | None = None
    mtu: int | None = None
    nic_speed_mbps: float | None = None
    optional: dict[str, int | str] = field(default_factory=dict)
    errors: tuple[str, ...] = ()


def parse_triple(text: str) -> tuple[int, int, int]:
    """``tcp_rmem``/``tcp_wmem`` content ("min default max", tab separated) in bytes."""
    values = [int(part) for part in text.split()]
    if len(values) != 3:
        raise ValueError(f"expected 3 integers (min default max), got {text.strip()!r}")
    return values[0], values[1], values[2]


def parse_default_route_interface(route_table: str) -> str | None:
    """Interface of the IPv4 default route in ``/proc/net/route`` (lowest metric wins)."""
    best: tuple[int, str] | None = None
    for line in route_table.splitlines()[1:]:  # first line is the column header
        columns = line.split()
        if len(columns) < 8 or columns[1] != ROUTE_DEFAULT_DESTINATION:
            continue
        flags = int(columns[3], 16)
        if not flags & RTF_UP or flags & RTF_REJECT:
            continue
        metric = int(columns[6])
        if best is None or metric < best[0]:
            best = (metric, columns[0])
    return best[1] if best else None


def parse_default_route6_interface(route_table: str) -> str | None:
    """Interface of the IPv6 default route in ``/proc/net/ipv6_route`` (lowest metric wins)."""
    best: tuple[int, str] | None = None
    for line in route_table.splitlines():
        columns = line.split()
        if len(columns) != 10:
            continue
        destination, prefix_length, metric, flags, device = columns[0], columns[1], columns[5], columns[8], columns[9]
        if destination != "0" * 32 or prefix_length != "00":
            continue
        # Skip routes that are not up and the kernel's "unreachable" default on lo.
        if not int(flags, 16) & RTF_UP or int(flags, 16) & RTF_REJECT:
            continue
        metric_value = int(metric, 16)
        if best is None or metric_value < best[0]:
            best = (metric_value, device)
    return best[1] if best else None


def _read(root: Path, relative: str) -> str:
    return (root / relative).read_text()


def parse_nic_speed(text: str) -> float | None:
    """``/sys/class/net/<if>/speed`` in Mbit/s; None when the kernel does not know it (-1 or 0: virtual
    interfaces, no link, a driver that does not say)."""
    speed = int(text.strip())
    return float(speed) if speed > 0 else None


def read_host_tcp(
    *,
    proc_root: Path = DEFAULT_PROC_ROOT,
    sys_root: Path = DEFAULT_SYS_ROOT,
    interface: str | None = None,
) -> HostTcpSettings:
    """Read the TCP settings under ``proc_root`` and the MTU and speed of ``interface`` under ``sys_root``.

    Without ``interface``, the default-route interface is used (IPv4, then
    IPv6). Never raises for a missing or odd file: the value is ``None`` and
    ``errors`` says why.
    """
    errors: list[str] = []

    def read_value(relative: str, convert: Any) -> Any:
        try:
            return convert(_read(proc_root, relative))
        except (OSError, ValueError) as exc:
            errors.append(f"{relative}: {exc.__class__.__name__}: {exc}")
            return None

    tcp_rmem = read_value(TCP_RMEM, parse_triple)
    tcp_wmem = read_value(TCP_WMEM, parse_triple)
    rmem_max = read_value(RMEM_MAX, lambda text: int(text.strip()))
    wmem_max = read_value(WMEM_MAX, lambda text: int(text.strip()))
    congestion_control = read_value(CONGESTION_CONTROL, lambda text: text.strip() or None)
    available = read_value(AVAILABLE_CONGESTION_CONTROL, lambda text: tuple(text.split()))

    optional: dict[str, int | str] = {}
    for name, relative in OPTIONAL_INT_SYSCTLS.items():
        try:
            optional[name] = int(_read(proc_root, relative).strip())
        except (OSError, ValueError):
            continue  # optional: older kernels or restricted containers lack some
    for name, relative in OPTIONAL_TEXT_SYSCTLS.items():
        try:
            optional[name] = _read(proc_root, relative).strip()
        except OSError:
            continue

    if interface is None:
        try:
            interface = parse_default_route_interface(_read(proc_root, "net/route"))
        except OSError:
            interface = None
        if interface is None:
            try:
                interface = parse_default_route6_interface(_read(proc_root, "net/ipv6_route"))
            except OSError:
                interface = None
    mtu: int | None = None
    nic_speed_mbps: float | None = None
    if interface is None:
        errors.append("no interface given and no default route found: MTU unknown")
    else:
        try:
            mtu = int(_read(sys_root, f"class/net/{interface}/mtu").strip())
        except (OSError, ValueError) as exc:
            errors.append(f"class/net/{interface}/mtu: {exc.__class__.__name__}: {exc}")
        try:
            nic_speed_mbps = parse_nic_speed(_read(sys_root, f"class/net/{interface}/speed"))
        except (OSError, ValueError):
            nic_speed_mbps = None  # no link (reading fails with EINVAL), or no such file: unknown, not an error

    return HostTcpSettings(
        tcp_rmem=tcp_rmem,
        tcp_wmem=tcp_wmem,
        rmem_max=rmem_max,
        wmem_max=wmem_max,
        congestion_control=congestion_control,
        available_congestion_control=available,
        interface=interface,
        mtu=mtu,
        nic_speed_mbps=nic_speed_mbps,
        optional=optional,
        errors=tuple(errors),
    )


def settings_to_record(settings: HostTcpSettings, *, site: str, host: str, time: datetime) -> dict[str, Any]:
    """A ``host_tcp`` record (docs/scenario-format.md#measurement-records) from ``settings``.

    ``tcp_rmem``/``tcp_wmem`` are lists ``[min, default, max]`` in bytes.
    When nothing at all could be read the record carries ``error``.
    """
    record: dict[str, Any] = {
        "type": "host_tcp",
        "time": utc_time(time),
        "site": site,
        "host": host,
        "tcp_rmem": list(settings.tcp_rmem) if settings.tcp_rmem else None,
        "tcp_wmem": list(settings.tcp_wmem) if settings.tcp_wmem else None,
        "rmem_max": settings.rmem_max,
        "wmem_max": settings.wmem_max,
        "congestion_control": settings.congestion_control,
        "mtu": settings.mtu,
        "nic_speed_mbps": settings.nic_speed_mbps,
    }
    if settings.available_congestion_control is not None:
        record["available_congestion_control"] = list(settings.available_congestion_control)
    if settings.interface:
        record["interface"] = settings.interface
    record.update(settings.optional)
    if settings.errors:
        record["read_errors"] = list(settings.errors)
    core = (settings.tcp_rmem, settings.tcp_wmem, settings.rmem_max, settings.wmem_max, settings.congestion_control)
    if all(value is None for value in core):
        record["error"] = "no TCP setting could be read: " + "; ".join(settings.errors)
    return record


def collect(
    *,
    site: str,
    now: datetime,
    host: str | None = None,
    interface: str | None = None,
    proc_root: Path = DEFAULT_PROC_ROOT,
    sys_root: Path = DEFAULT_SYS_ROOT,
) -> list[dict[str, Any]]:
    """Read this host's settings and return its ``host_tcp`` record (never raises for file problems).

    ``host`` defaults to the short host name, which is what the inventory's
    ``hosts[].name`` holds.
    """
    settings = read_host_tcp(proc_root=proc_root, sys_root=sys_root, interface=interface)
    host_name = host or socket.gethostname().split(".")[0]
    return [settings_to_record(settings, site=site, host=host_name, time=now)]
