"""Network namespaces and persistent TUN devices for the lab (Linux, root).

A site of the lab is a network namespace with one persistent TUN device (``ip tuntap add ... mode tun``). The
emulator process attaches to each device by entering the namespace on its own thread (``setns(2)`` through ctypes),
opening ``/dev/net/tun`` with ``IFF_TUN | IFF_NO_PI`` and returning: a file descriptor stays bound to the
namespace it was opened in, so one process holds a device in every namespace. Sockets behave the same way, which
is how the SNMP responder of the emulated router and the centre's forwarder listen inside a site's namespace.

Only ``ip`` and ``/proc`` are used; every name this module creates starts with the prefix its caller gives, and
``delete`` removes a namespace with everything in it (its devices go with it).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import struct
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
NETNS_DIR = "/run/netns"

_libc = ctypes.CDLL(None, use_errno=True)


def unavailable_reason() -> str | None:
    """Why the lab cannot run here (not root, no /dev/net/tun, no ``ip``, no nuttcp), or None."""
    if os.geteuid() != 0:
        return "the lab needs root (network namespaces and TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun is absent"
    for tool in ("ip", "nuttcp"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``ip ARGS`` (fixed argv); a failure raises with ip's own message when ``check``."""
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)  # noqa: S603, S607
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def in_netns(namespace: str, argv: Sequence[str]) -> list[str]:
    """argv run inside ``namespace`` (``ip netns exec``)."""
    return ["ip", "netns", "exec", namespace, *argv]


@contextlib.contextmanager
def entered(namespace: str) -> Iterator[None]:
    """Run the block with this thread inside ``namespace``; back in the thread's own namespace after it.

    setns(2) moves only the calling thread, and any descriptor opened meanwhile stays in ``namespace``.
    """
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"{NETNS_DIR}/{namespace}", os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {namespace}")
        try:
            yield
        finally:
            if _libc.setns(own, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(target)
        os.close(own)


def open_tun(namespace: str, device: str) -> int:
    """A non-blocking descriptor of the persistent TUN ``device`` of ``namespace`` (raw IP packets, no header)."""
    with entered(namespace):
        fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
        try:
            fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", device.encode(), IFF_TUN | IFF_NO_PI))
        except OSError:
            os.close(fd)
            raise
    return fd


@dataclass(frozen=True)
class Site:
    """One namespace of the lab: its TUN device and the address of its host on it."""

    namespace: str
    device: str
    address: str  # the host's address (prefix length PREFIX on the device)
    extra_addresses: tuple[str, ...] = ()


PREFIX = 24


def create(site: Site, *, mtu: int = 1500, congestion_control: str | None = None) -> None:
    """The namespace with loopback up, IPv6 off (only the test traffic crosses the emulator), the TUN device
    up with the host's addresses, and ``congestion_control`` as the namespace's default (reno or bbr: the ones
    Linux lets a namespace choose; new namespaces inherit the host's otherwise)."""
    ip("netns", "add", site.namespace)
    ns = site.namespace
    ip("-n", ns, "link", "set", "lo", "up")
    for key in ("all", "default"):
        _sysctl(ns, f"net.ipv6.conf.{key}.disable_ipv6", "1")
    ip("-n", ns, "tuntap", "add", "dev", site.device, "mode", "tun")
    ip("-n", ns, "link", "set", site.device, "mtu", str(mtu), "up")
    for address in (site.address, *site.extra_addresses):
        ip("-n", ns, "addr", "add", f"{address}/{PREFIX}", "dev", site.device)
    if congestion_control:
        _sysctl(ns, "net.ipv4.tcp_congestion_control", congestion_control)


def _sysctl(namespace: str, key: str, value: str) -> None:
    done = subprocess.run(in_netns(namespace, ["sysctl", "-qw", f"{key}={value}"]), capture_output=True,  # noqa: S603
                          text=True, timeout=30)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{namespace}: sysctl {key}={value}: {done.stderr.strip()}")


def sysctl_value(namespace: str, key: str) -> str:
    done = subprocess.run(in_netns(namespace, ["sysctl", "-n", key]), capture_output=True, text=True,  # noqa: S603
                          timeout=30, check=True)  # fmt: skip
    return done.stdout.strip()


def delete(namespace: str) -> None:
    """Remove the namespace (and the devices in it); nothing when it does not exist."""
    if os.path.exists(f"{NETNS_DIR}/{namespace}"):
        ip("netns", "delete", namespace, check=False)


def existing(prefix: str) -> list[str]:
    """Namespaces whose name starts with ``prefix`` (what a killed earlier run may have left)."""
    with contextlib.suppress(FileNotFoundError):
        return sorted(name for name in os.listdir(NETNS_DIR) if name.startswith(prefix))
    return []


def link_stats(namespace: str, device: str) -> dict[str, int]:
    """The device's counters (``ip -s -j link``): rx/tx packets, bytes, dropped, errors."""
    done = ip("-n", namespace, "-s", "-j", "link", "show", "dev", device)
    stats = json.loads(done.stdout)[0]["stats64"]
    return {f"{side}_{key}": int(stats[side][key]) for side in ("rx", "tx") for key in stats[side]
            if isinstance(stats[side][key], int)}  # fmt: skip


def snmp_counters(namespace: str) -> dict[str, dict[str, int]]:
    """The namespace's MIB counters of ``/proc/net/snmp`` by protocol: ``["Tcp"]["RetransSegs"]``,
    ``["Udp"]["RcvbufErrors"]``, ..."""
    done = subprocess.run(in_netns(namespace, ["cat", "/proc/net/snmp"]), capture_output=True, text=True,  # noqa: S603
                          timeout=30, check=True)  # fmt: skip
    out: dict[str, dict[str, int]] = {}
    lines = [line.split() for line in done.stdout.splitlines()]
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names and values and names[0] == values[0]:
            out[names[0].rstrip(":")] = {n: int(v) for n, v in zip(names[1:], values[1:], strict=True)}
    return out
