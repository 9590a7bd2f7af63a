"""perfSONAR reads: which site an endpoint is, parked runs, psconfig tokens and the inputs of a template."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import QuerySet

from wanmon.core.tokens import token_hash
from wanmon.inventory.choices import HostRole
from wanmon.inventory.models import Host, Site
from wanmon.inventory.selectors import path_list_valid_at
from wanmon.maintenance.parsed import impact_normalise
from wanmon.maintenance.selectors import maintenance_in_force, topology_load
from wanmon.perfsonar import constants as k
from wanmon.perfsonar.choices import RunState
from wanmon.perfsonar.models import EndpointAlias, PerfsonarRun, PsconfigToken
from wanmon.perfsonar.pscheduler import endpoint_normalise
from wanmon.perfsonar.psconfig import SiteHosts, TemplateInput

__all__ = [
    "Endpoint",
    "endpoint_resolve",
    "parked_run_list",
    "psconfig_template_input",
    "psconfig_token_get",
    "token_hash",
]


@dataclass(frozen=True)
class Endpoint:
    """A pScheduler endpoint resolved to the inventory: the site, and the host when one is known."""

    site_id: int
    site_code: str
    host: str | None


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def endpoint_resolve(names: Iterable[str]) -> dict[str, Endpoint]:
    """The endpoints among ``names`` (normalised) the inventory knows, by operator alias, host address or host name.

    Order: an alias an operator mapped; a host whose address is the name; a host whose name is the name; a
    host whose name is the first label of the name (``cern-ps01.cern.ch`` -> host ``cern-ps01``) when exactly
    one host has that name.
    """
    wanted = {n for n in (endpoint_normalise(name) for name in names) if n}
    if not wanted:
        return {}
    found: dict[str, Endpoint] = {}
    for alias in EndpointAlias.objects.filter(endpoint__in=wanted).select_related("site", "host"):
        found[alias.endpoint] = Endpoint(alias.site_id, alias.site.code, alias.host.name if alias.host_id else None)
    rest = wanted - found.keys()
    if not rest:
        return found
    hosts = list(Host.objects.select_related("site").only("name", "address", "site__code"))
    by_address = {_ip(h.address): h for h in hosts if h.address}
    by_name: dict[str, list[Host]] = {}
    for h in hosts:
        by_name.setdefault(h.name.lower(), []).append(h)
    for name in rest:
        ip = _ip(name)
        host = by_address.get(ip) if ip is not None else None
        if host is None and ip is None:
            candidates = by_name.get(name) or by_name.get(name.split(".", 1)[0]) or []
            host = candidates[0] if len(candidates) == 1 else None
        if host is not None:
            found[name] = Endpoint(host.site_id, host.site.code, host.name)
    return found


def parked_run_list() -> QuerySet[PerfsonarRun]:
    """Runs waiting for an operator to map their endpoints, oldest first."""
    return (
        PerfsonarRun.objects.filter(state=RunState.PARKED)
        .select_related("agent__site")
        .defer("body")
        .order_by("received_at", "id")
    )


def psconfig_token_get(token: str) -> PsconfigToken | None:
    """The active psconfig token whose secret is ``token`` (compared by hash), or None."""
    if not token or len(token) > k.MAX_TOKEN_LEN:
        return None
    return (
        PsconfigToken.objects.select_related("site", "archive_agent")
        .filter(token_hash=token_hash(token), revoked_at__isnull=True)
        .first()
    )


def _paused_directions(now: datetime) -> dict[tuple[str, str], str]:
    """Directions whose path is under outage maintenance from now to the lookahead: direction -> reference."""
    end = now + timedelta(seconds=k.MAINTENANCE_LOOKAHEAD_S)
    tp = None
    paused: dict[tuple[str, str], str] = {}
    for occ in maintenance_in_force(start=now, end=end):
        if not occ.acts:  # informational work: keep testing as usual
            continue
        tp = tp or topology_load(start=now, end=end)
        for touch in tp.window_touches(occ.targets, occ.start, occ.end):
            if impact_normalise(touch.impact) == "outage":
                paused.setdefault((touch.path.src, touch.path.dst), occ.window.reference)
    return paused


def psconfig_template_input(*, site: Site | None, now: datetime) -> TemplateInput:
    """Sites with their perfSONAR (test) hosts, the directions with a path in force, and the paused ones."""
    hosts: dict[str, list[tuple[str, str]]] = {}
    test_hosts = list(Host.objects.filter(role=HostRole.TEST).select_related("site").order_by("site__code", "name"))
    names = [h.name for h in test_hosts]
    for h in test_hosts:
        # Host names are unique per site only: a name two sites use is qualified by the site's code.
        key = h.name if names.count(h.name) == 1 else f"{h.site.code.lower()}-{h.name}"
        hosts.setdefault(h.site.code, []).append((key, h.address or h.name))
    sites = tuple(
        SiteHosts(code=s.code, tier=s.tier, hosts=tuple(hosts.get(s.code, ()))) for s in Site.objects.order_by("code")
    )
    pairs = frozenset((p.src.code, p.dst.code) for p in path_list_valid_at(at=now))
    return TemplateInput(
        sites=sites,
        pairs=pairs,
        paused=_paused_directions(now),
        site=site.code if site is not None else None,
        generated_at=now,
    )
