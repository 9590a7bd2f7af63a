"""pSConfig templates from the inventory (pure: plain data in, the template as a dict out).

The groups follow the inventory's paths: the star between the Tier-0 hub and the sites it has paths with,
and the mesh of the other sites among which paths exist. A direction without a path, or whose path is
under outage maintenance (``paused``), is left out through the group's ``excludes``: a test would only
measure the outage. A site's template holds only the tests its own hosts take part in; the mesh template
holds every test. Addresses are the sites' perfSONAR (test) hosts. The shape follows the pSConfig schema
and examples (fixtures/psconfig): ``addresses``, ``groups``, ``tests``, ``schedules``, ``archives``, ``tasks``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from collectors.records.types import iso_z
from wanmon.perfsonar import constants as k

__all__ = ["SiteHosts", "TemplateInput", "archive_spec", "template_build"]

ARCHIVE_NAME = "wanmon"
_SRC = "{% address[0] %}"
_DST = "{% address[1] %}"


@dataclass(frozen=True)
class SiteHosts:
    """A site and its perfSONAR hosts as (address name, address or DNS name)."""

    code: str
    tier: int | None
    hosts: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class TemplateInput:
    """Everything a template is made of: sites, directed site pairs with a path, and what is paused."""

    sites: Sequence[SiteHosts]
    pairs: frozenset[tuple[str, str]]
    paused: Mapping[tuple[str, str], str] = field(default_factory=dict)  # direction -> maintenance reference
    site: str | None = None  # None: the whole mesh
    archive: Mapping[str, Any] | None = None
    archive_note: str | None = None
    generated_at: datetime | None = None


def archive_spec(*, url: str, token: str) -> dict[str, Any]:
    """The http archive of a run to wanmon (docs/contracts.md#perfsonar-archive) with the recommended retry policy."""
    return {
        "archiver": "http",
        "data": {
            "schema": 2,
            "_url": url,
            "op": "put",
            "_headers": {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            "retry-policy": [dict(step) for step in k.ARCHIVE_RETRY_POLICY],
        },
        "ttl": k.ARCHIVE_TTL,
    }


def _selectors(names: Sequence[str]) -> list[dict[str, str]]:
    return [{"name": n} for n in names]


def _excludes(implied: set[tuple[str, str]], allowed: set[tuple[str, str]]) -> list[dict[str, Any]]:
    """``excludes`` entries (local address -> targets) for the host pairs a group implies but must not test."""
    out: dict[str, list[str]] = {}
    for local, target in sorted(implied - allowed):
        out.setdefault(local, []).append(target)
    return [{"local-address": {"name": local}, "target-addresses": _selectors(t)} for local, t in out.items()]


def template_build(spec: TemplateInput) -> dict[str, Any]:
    """The pSConfig template: a site's (``spec.site``) or the whole mesh's."""
    sites = {s.code: s for s in spec.sites if s.hosts}
    hubs = {code for code, s in sites.items() if s.tier == 0}
    pairs = {p for p in spec.pairs if p[0] in sites and p[1] in sites and p[0] != p[1]}
    if spec.site is not None:
        pairs = {p for p in pairs if spec.site in p}
    allowed_sites = pairs - set(spec.paused)
    host_site = {name: code for code, s in sites.items() for name, _ in s.hosts}

    def hosts(codes) -> list[str]:
        return [name for code in sorted(codes) for name, _ in sites[code].hosts]

    def allowed_hosts(members: set[str]) -> set[tuple[str, str]]:
        return {
            (a, b)
            for a in members
            for b in members
            if (host_site[a], host_site[b]) in allowed_sites
        }

    groups: dict[str, Any] = {}
    star = {p for p in pairs if (p[0] in hubs) != (p[1] in hubs)}
    if star:
        hub_sites = {c for p in star for c in p if c in hubs}
        spoke_sites = {c for p in star for c in p if c not in hubs}
        a, b = hosts(hub_sites), hosts(spoke_sites)
        implied = {(x, y) for x in a for y in b} | {(y, x) for x in a for y in b}
        group: dict[str, Any] = {"type": "disjoint", "a-addresses": _selectors(a), "b-addresses": _selectors(b)}
        excludes = _excludes(implied, allowed_hosts(set(a) | set(b)))
        if excludes:
            group["excludes"] = excludes
        groups["wanmon-star"] = group
    mesh = {p for p in pairs if p[0] not in hubs and p[1] not in hubs}
    if mesh:
        members = {c for p in mesh for c in p}
        if spec.site is not None:
            a, b = hosts({spec.site}), hosts(members - {spec.site})
            implied = {(x, y) for x in a for y in b} | {(y, x) for x in a for y in b}
            group = {"type": "disjoint", "a-addresses": _selectors(a), "b-addresses": _selectors(b)}
        else:
            names = hosts(members)
            implied = {(x, y) for x in names for y in names if host_site[x] != host_site[y]}
            group = {"type": "mesh", "addresses": _selectors(names)}
        excludes = _excludes(implied, allowed_hosts({h for pair in implied for h in pair}))
        if excludes:
            group["excludes"] = excludes
        groups["wanmon-mesh"] = group

    used = sorted({n for g in groups.values() for key in ("a-addresses", "b-addresses", "addresses")
                   for n in (s["name"] for s in g.get(key, ()))})
    addresses = {
        name: {"address": address, "_meta": {"site": code}}
        for code, s in sorted(sites.items())
        for name, address in s.hosts
        if name in used
    }
    tests = {
        "wanmon-throughput": {
            "type": "throughput",
            "spec": {"source": _SRC, "dest": _DST, "duration": k.THROUGHPUT_DURATION},
        },
        "wanmon-latencybg": {"type": "latencybg", "spec": {"source": _SRC, "dest": _DST}},
        "wanmon-trace": {"type": "trace", "spec": {"source": _SRC, "dest": _DST}},
    }
    schedules = {
        "wanmon-every-6h": {"repeat": k.THROUGHPUT_REPEAT, "sliprand": True, "slip": k.THROUGHPUT_REPEAT},
        "wanmon-every-1h": {"repeat": k.TRACE_REPEAT, "sliprand": True, "slip": k.TRACE_REPEAT},
    }
    schedule_of = {"wanmon-throughput": "wanmon-every-6h", "wanmon-trace": "wanmon-every-1h"}
    tasks: dict[str, Any] = {}
    for group_name in groups:
        for test_name in tests:
            task: dict[str, Any] = {"group": group_name, "test": test_name}
            if test_name in schedule_of:
                task["schedule"] = schedule_of[test_name]
            if spec.archive is not None:
                task["archives"] = [ARCHIVE_NAME]
            tasks[f"{group_name}-{test_name.removeprefix('wanmon-')}"] = task

    meta: dict[str, Any] = {
        "display-name": f"wanmon {spec.site}" if spec.site else "wanmon mesh",
        "wanmon": {
            "site": spec.site,
            "generated_at": iso_z(spec.generated_at),
            "paused": [
                {"path": f"{src}->{dst}", "maintenance": ref}
                for (src, dst), ref in sorted(spec.paused.items())
                if (src, dst) in pairs
            ],
        },
    }
    if spec.archive_note:
        meta["wanmon"]["archive"] = spec.archive_note
    template: dict[str, Any] = {
        "_meta": meta,
        "addresses": addresses,
        "groups": groups,
        "tests": tests,
        "schedules": schedules,
        "tasks": tasks,
    }
    if spec.archive is not None:
        template["archives"] = {ARCHIVE_NAME: dict(spec.archive)}
    return template
