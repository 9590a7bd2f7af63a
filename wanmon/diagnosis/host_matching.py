"""Which host a test ran on, the latest report of every host, and what its congestion control tolerates."""

from __future__ import annotations

from wanmon.diagnosis import constants as k
from wanmon.diagnosis.evidence import EvidenceBundle, HostTcpEvidence

_LATEST_HOSTS: dict[int, tuple[EvidenceBundle, list[HostTcpEvidence]]] = {}


def latest_hosts(bundle: EvidenceBundle) -> list[HostTcpEvidence]:
    """The latest snapshot of every host (worked out once per bundle: every test of every path asks)."""
    hit = _LATEST_HOSTS.get(id(bundle))
    if hit is None or hit[0] is not bundle:
        _LATEST_HOSTS.clear()  # holds the latest bundle only
        hit = _LATEST_HOSTS[id(bundle)] = (bundle, _latest_hosts(bundle))
    return list(hit[1])


def _latest_hosts(bundle: EvidenceBundle) -> list[HostTcpEvidence]:
    latest: dict[tuple[str, str], HostTcpEvidence] = {}
    for h in bundle.hosts:
        key = (h.site, h.host)
        cur = latest.get(key)
        if cur is None or (h.time and (cur.time is None or h.time > cur.time)):
            latest[key] = h
    return list(latest.values())


def match_host(bundle: EvidenceBundle, site: str, address: str | None, mss_bytes: int | None = None):
    """The host record a test ran on: by address or name; else the site's only host if its MTU fits the MSS."""
    hosts = [h for h in latest_hosts(bundle) if h.site == site]
    if address:
        names = {kh.name for kh in bundle.known_hosts if kh.address == address and kh.site == site}
        for h in hosts:
            if address in (h.address, h.host) or h.host in names:
                return h
        return None
    if len(hosts) == 1:
        h = hosts[0]
        if mss_bytes is None or h.mtu is None or mss_bytes <= h.mtu - k.TCP_IP_HEADER_BYTES:
            return h
    return None


def host_name_for(bundle: EvidenceBundle, site: str, address: str | None) -> str | None:
    """Inventory name of a host address (or the address itself when unknown)."""
    if not address:
        return None
    for kh in bundle.known_hosts:
        if kh.address == address or kh.name == address:
            return kh.name
    for h in bundle.hosts:
        if address in (h.address, h.host):
            return h.host
    return address


# --------------------------------------------------------------------------- congestion control
RENO_LIKE = frozenset({"reno", "newreno", "veno", "westwood", "vegas", "lp"})


def loss_tolerance_factor(congestion_control: str | None) -> float | None:
    """Multiplier on the Reno Mathis ceiling: 1 for Reno-like, 2 for CUBIC and unknown (Linux default), None for BBR."""
    if congestion_control is None:
        return k.CUBIC_LOSS_TOLERANCE_FACTOR
    cc = congestion_control.lower()
    if cc in k.LOSS_INSENSITIVE_CONGESTION_CONTROLS:
        return None
    if cc in RENO_LIKE:
        return 1.0
    return k.CUBIC_LOSS_TOLERANCE_FACTOR
