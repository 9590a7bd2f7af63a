"""Inventory writes (HackSoft-style services): keyword-only arguments, validation, one transaction each.

The ``*_upsert`` services follow *merge* semantics, because topology documents are often partial (a
scenario file lists only the part of the network it needs): an argument left at ``UNSET`` leaves the
stored value alone, an argument given (even ``None`` or ``""``) sets it. Each returns the object and a
:class:`Change` saying whether it was created, updated or left unchanged, so that imports can report
counts and prove idempotence.

Paths are versioned: :func:`path_set` never edits the hops or the capacity of a version in force; it
closes it and opens a new one, so that a measurement of last month is still explained by last month's
route.
"""

from __future__ import annotations

import enum
import hmac
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.utils import timezone

from wanmon.core.tokens import token_hash as agent_token_hash
from wanmon.inventory.choices import AgentScope, ContactRole
from wanmon.inventory.constants import (
    AGENT_TOKEN_BYTES,
    AGENT_TOKEN_MAX_LEN,
    AGENT_TOKEN_PREFIX_LEN,
    PATH_HISTORY_START,
)
from wanmon.inventory.models import (
    Agent,
    Carrier,
    Circuit,
    Equipment,
    Host,
    Interface,
    Path,
    PathHop,
    Site,
    SiteContact,
    Trunk,
)

__all__ = [
    "UNSET",
    "Change",
    "ContactSpec",
    "agent_assign_equipment",
    "agent_authenticate",
    "agent_create",
    "agent_mark_seen",
    "agent_revoke",
    "agent_token_hash",
    "agent_token_rotate",
    "carrier_upsert",
    "circuit_upsert",
    "equipment_upsert",
    "host_upsert",
    "interface_upsert",
    "path_close",
    "path_set",
    "site_upsert",
    "trunk_upsert",
]


class Change(enum.StrEnum):
    """What an upsert did to the stored object."""

    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


class _Unset:
    """Marker for "argument not given" (``None`` is a legitimate value: it clears a field)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Any = _Unset()


@dataclass(frozen=True)
class ContactSpec:
    """One site contact as given to :func:`site_upsert`: who gets e-mail for what."""

    email: str
    role: str = ContactRole.NOC
    name: str = ""


# --- helpers -------------------------------------------------------------------------------------------


def _given(**kwargs: Any) -> dict[str, Any]:
    return {name: value for name, value in kwargs.items() if value is not UNSET}


def _same(obj: models.Model, name: str, value: Any) -> bool:
    field = obj._meta.get_field(name)
    if field.is_relation:
        # Compare keys, not instances: avoids a query per foreign key and treats unsaved equals as different.
        return getattr(obj, field.attname) == (value.pk if value is not None else None)
    return getattr(obj, name) == value


def _apply(obj: models.Model, fields: dict[str, Any]) -> bool:
    """Set the fields that differ; True when anything changed."""
    changed = False
    for name, value in fields.items():
        if not _same(obj, name, value):
            setattr(obj, name, value)
            changed = True
    return changed


def _save(obj: models.Model) -> None:
    """Validate (field validators, ``clean()``) and save.

    Django's unique/constraint checks and foreign-key existence checks are skipped on purpose: they cost
    a query each and add nothing here, because related objects are passed in as saved instances, the
    upserts find rows by their natural keys, and the cases a lookup cannot rule out (an ifIndex taken,
    an agent name taken, a path ending before it starts) are checked explicitly with a clear message.
    The database constraints remain the last line of defence. (The API's serializers run the full
    model validation themselves, so its clients get field-level messages.)
    """
    relations = [f.name for f in obj._meta.concrete_fields if f.is_relation]
    obj.full_clean(exclude=relations, validate_unique=False, validate_constraints=False)
    obj.save()


def _upsert(model: type[models.Model], lookup: dict[str, Any], fields: dict[str, Any], *, create_defaults=None):
    obj = model.objects.select_for_update().filter(**lookup).first()
    if obj is None:
        obj = model(**lookup, **{**(create_defaults or {}), **fields})
        _save(obj)
        return obj, Change.CREATED
    if not _apply(obj, fields):
        return obj, Change.UNCHANGED
    _save(obj)
    return obj, Change.UPDATED


def _merge(*changes: Change) -> Change:
    if Change.CREATED in changes:
        return Change.CREATED
    return Change.UPDATED if Change.UPDATED in changes else Change.UNCHANGED


# --- carriers, sites, hosts ----------------------------------------------------------------------------


@transaction.atomic
def carrier_upsert(
    *, code: str, name: str = UNSET, kind: str = UNSET, noc_email: str = UNSET, notes: str = UNSET
) -> tuple[Carrier, Change]:
    """Create or update the carrier ``code``; a new carrier without a name is named after its code."""
    return _upsert(
        Carrier, {"code": code}, _given(name=name, kind=kind, noc_email=noc_email, notes=notes),
        create_defaults={"name": code},
    )


@transaction.atomic
def site_upsert(
    *,
    code: str,
    name: str = UNSET,
    tier: int | None = UNSET,
    region: str = UNSET,
    lat: float | None = UNSET,
    lon: float | None = UNSET,
    notes: str = UNSET,
    contacts: Sequence[ContactSpec] = UNSET,
) -> tuple[Site, Change]:
    """Create or update the site ``code``; ``contacts``, when given, replaces the site's whole contact list."""
    site, change = _upsert(
        Site, {"code": code}, _given(name=name, tier=tier, region=region, lat=lat, lon=lon, notes=notes),
        create_defaults={"name": code},
    )
    if contacts is not UNSET and _site_contacts_replace(site=site, contacts=contacts):
        change = _merge(change, Change.UPDATED)
    return site, change


def _site_contacts_replace(*, site: Site, contacts: Sequence[ContactSpec]) -> bool:
    wanted = {(c.role, c.email): c.name for c in contacts}
    current = {(c.role, c.email): c for c in site.contacts.all()}
    if {k: c.name for k, c in current.items()} == wanted:
        return False
    for key, contact in current.items():
        if key not in wanted:
            contact.delete()
        elif contact.name != wanted[key]:
            contact.name = wanted[key]
            _save(contact)
    for (role, email), name in wanted.items():
        if (role, email) not in current:
            _save(SiteContact(site=site, role=role, email=email, name=name))
    return True


@transaction.atomic
def host_upsert(*, site: Site, name: str, address: str | None = UNSET, role: str = UNSET) -> tuple[Host, Change]:
    """Create or update the test/transfer host ``name`` of ``site``."""
    return _upsert(Host, {"site": site, "name": name}, _given(address=address, role=role))


# --- equipment, interfaces, circuits, trunks -----------------------------------------------------------


@transaction.atomic
def equipment_upsert(
    *,
    name: str,
    site: Site | None = UNSET,
    carrier: Carrier | None = UNSET,
    vendor: str = UNSET,
    model: str = UNSET,
    os_version: str = UNSET,
    role: str = UNSET,
    location: str = UNSET,
    backplane_capacity_mbps: int | None = UNSET,
    linecard_capacity_mbps: int | None = UNSET,
    known_reordering: bool = UNSET,
    quirks: str = UNSET,
) -> tuple[Equipment, Change]:
    """Create or update the equipment ``name``.

    Equipment belongs to a site or to a carrier, never both: giving one owner clears the other, giving
    both is an error.
    """
    if site and carrier:
        raise ValidationError(f"equipment {name!r} belongs to a site or to a carrier, not both")
    if site:
        carrier = None
    elif carrier:
        site = None
    fields = _given(
        site=site, carrier=carrier, vendor=vendor, model=model, os_version=os_version, role=role,
        location=location, backplane_capacity_mbps=backplane_capacity_mbps,
        linecard_capacity_mbps=linecard_capacity_mbps, known_reordering=known_reordering, quirks=quirks,
    )
    return _upsert(Equipment, {"name": name}, fields)


@transaction.atomic
def interface_upsert(
    *,
    equipment: Equipment,
    name: str,
    if_index: int | None = UNSET,
    speed_mbps: int | None = UNSET,
    mtu: int | None = UNSET,
    blade: str = UNSET,
    description: str = UNSET,
) -> tuple[Interface, Change]:
    """Create or update the interface ``name`` of ``equipment`` (an ifIndex is unique per equipment)."""
    if if_index not in (UNSET, None):
        clash = (
            Interface.objects.filter(equipment=equipment, if_index=if_index).exclude(name=name)
            .values_list("name", flat=True).first()
        )
        if clash is not None:
            raise ValidationError(f"if_index {if_index} is already used by {equipment.name}:{clash}")
    fields = _given(if_index=if_index, speed_mbps=speed_mbps, mtu=mtu, blade=blade, description=description)
    return _upsert(Interface, {"equipment": equipment, "name": name}, fields)


@transaction.atomic
def circuit_upsert(
    *,
    carrier: Carrier,
    cid: str,
    capacity_mbps: int | None = UNSET,
    a_interface: Interface | None = UNSET,
    z_interface: Interface | None = UNSET,
    status: str = UNSET,
    description: str = UNSET,
) -> tuple[Circuit, Change]:
    """Create or update the circuit ``cid`` of ``carrier`` between its A-end and Z-end interfaces."""
    if a_interface and z_interface and a_interface.pk == z_interface.pk:
        raise ValidationError("a circuit's A and Z ends must be different interfaces")
    fields = _given(
        capacity_mbps=capacity_mbps, a_interface=a_interface, z_interface=z_interface, status=status,
        description=description,
    )
    return _upsert(Circuit, {"carrier": carrier, "cid": cid}, fields)


@transaction.atomic
def trunk_upsert(
    *, name: str, members: Iterable[Interface] = UNSET, description: str = UNSET
) -> tuple[Trunk, Change]:
    """Create or update the trunk (LAG) ``name``; ``members``, when given, replaces the member set."""
    trunk, change = _upsert(Trunk, {"name": name}, _given(description=description))
    if members is not UNSET:
        wanted = {m.pk for m in members}
        if set(trunk.members.values_list("pk", flat=True)) != wanted:
            trunk.members.set(wanted)
            change = _merge(change, Change.UPDATED)
    return trunk, change


# --- paths -----------------------------------------------------------------------------------------------

HopSpec = tuple[Equipment, Interface | None]


def _hop_keys(hops: Sequence[HopSpec]) -> list[tuple[int, int | None]]:
    return [(eq.pk, iface.pk if iface is not None else None) for eq, iface in hops]


@transaction.atomic
def path_set(
    *,
    src: Site,
    dst: Site,
    hops: Sequence[HopSpec],
    capacity_mbps: int | None = UNSET,
    rtt_ms: float | None = UNSET,
    note: str = UNSET,
    at: datetime | None = None,
    replace: bool = True,
) -> tuple[Path, Change]:
    """Make ``hops`` (and ``capacity_mbps``) the route of the path ``src``->``dst`` from ``at`` on.

    - No version in force: a new version is created. It starts at ``at``, or, when ``at`` is not given
      and the pair has no history at all, at ``PATH_HISTORY_START`` (the route is taken to have always
      been there, so that measurements older than the import are still explained).
    - The version in force has the same hops and capacity: nothing changes, except ``rtt_ms`` and
      ``note``, which are estimates and remarks and are updated in place.
    - Otherwise the version in force is closed at ``at`` (default now) and a new one starts then; with
      ``replace=False`` that is refused instead (ValidationError naming both routes): the caller may add
      routes and confirm them, never replace one in force.

    Returns the version in force afterwards and what happened (a new version counts as UPDATED).
    """
    if src.pk == dst.pk:
        raise ValidationError(f"src and dst are the same site {src.code!r}")
    hops = [(eq, iface) for eq, iface in hops]
    if not hops:
        raise ValidationError("a path needs at least one hop")
    for eq, iface in hops:
        if iface is not None and iface.equipment_id != eq.pk:
            raise ValidationError(f"interface {iface} does not belong to equipment {eq.name!r}")

    current = Path.objects.select_for_update().filter(src=src, dst=dst, valid_to__isnull=True).first()
    if current is not None:
        capacity = current.capacity_mbps if capacity_mbps is UNSET else capacity_mbps
        current_keys = list(current.hops.order_by("position").values_list("equipment_id", "interface_id"))
        if current_keys == _hop_keys(hops) and capacity == current.capacity_mbps:
            if _apply(current, _given(rtt_ms=rtt_ms, note=note)):
                _save(current)
                return current, Change.UPDATED
            return current, Change.UNCHANGED
        if not replace:
            given = _route_text(capacity, [_hop_label(eq, iface) for eq, iface in hops])
            raise ValidationError(f"{src.code}->{dst.code}: {given} would replace {_in_force_text(current)}")
        start = at or timezone.now()
        if start <= current.valid_from:
            raise ValidationError(
                f"the new route of {src.code}->{dst.code} must start after the version in force "
                f"(valid from {current.valid_from.isoformat()}), not at {start.isoformat()}"
            )
        current.valid_to = start
        current.save(update_fields=["valid_to"])
        fields = {
            "capacity_mbps": capacity,
            "rtt_ms": current.rtt_ms if rtt_ms is UNSET else rtt_ms,
            "note": current.note if note is UNSET else note,
        }
    else:
        last_end = (
            Path.objects.filter(src=src, dst=dst).order_by("-valid_to").values_list("valid_to", flat=True).first()
        )
        start = at or (timezone.now() if last_end else PATH_HISTORY_START)
        if last_end and start < last_end:
            raise ValidationError(
                f"the new route of {src.code}->{dst.code} must not start before the end of the last version "
                f"({last_end.isoformat()})"
            )
        fields = {
            "capacity_mbps": None if capacity_mbps is UNSET else capacity_mbps,
            "rtt_ms": None if rtt_ms is UNSET else rtt_ms,
            "note": "" if note is UNSET else note,
        }
    path = Path(src=src, dst=dst, valid_from=start, **fields)
    _save(path)
    PathHop.objects.bulk_create(
        PathHop(path=path, position=position, equipment=eq, interface=iface)
        for position, (eq, iface) in enumerate(hops)
    )
    return path, (Change.UPDATED if current is not None else Change.CREATED)


def _hop_label(eq: Equipment, iface: Interface | None) -> str:
    return f"{eq.name}:{iface.name}" if iface is not None else eq.name


def _in_force_text(path: Path) -> str:
    since = "" if path.valid_from == PATH_HISTORY_START else f" since {path.valid_from:%Y-%m-%d %H:%M} UTC"
    labels = [_hop_label(h.equipment, h.interface) for h in path.hops.select_related("equipment", "interface")]
    return f"the route in force{since}, {_route_text(path.capacity_mbps, labels)}"


def _route_text(capacity_mbps: int | None, labels: Sequence[str]) -> str:
    capacity = f"{capacity_mbps} Mb/s" if capacity_mbps else "capacity unknown"
    return f"{capacity} over {', '.join(labels)}"


@transaction.atomic
def path_close(*, path: Path, at: datetime | None = None) -> Path:
    """End the version in force of a path at ``at`` (default now): the pair has no route from then on."""
    if path.valid_to is not None:
        raise ValidationError(f"this version of {path} already ended at {path.valid_to.isoformat()}")
    end = at or timezone.now()
    if end <= path.valid_from:
        raise ValidationError(f"a version must end after it starts ({path.valid_from.isoformat()})")
    path.valid_to = end
    path.save(update_fields=["valid_to"])
    return path


# --- agents ----------------------------------------------------------------------------------------------


def _agent_token_new() -> tuple[str, str, str]:
    token = secrets.token_urlsafe(AGENT_TOKEN_BYTES)
    return token, agent_token_hash(token), token[:AGENT_TOKEN_PREFIX_LEN]


def _agent_default_name(site: Site) -> str:
    base = f"{site.code.lower()}-agent-"
    taken = set(Agent.objects.filter(name__startswith=base).values_list("name", flat=True))
    n = 1
    while f"{base}{n}" in taken:
        n += 1
    return f"{base}{n}"


@transaction.atomic
def agent_create(
    *, site: Site, name: str | None = None, equipment: Iterable[Equipment] = (), scope: str = AgentScope.AGENT
) -> tuple[Agent, str]:
    """Register an agent for ``site`` and return it with its API token.

    The token is returned here and never again: only its SHA-256 (and a short prefix, to recognise it)
    is stored. The default name is ``<site code in lower case>-agent-<n>`` with the first free ``n``.
    ``scope`` ``archive``: the token is accepted by the perfSONAR archive only.
    """
    name = name or _agent_default_name(site)
    if Agent.objects.filter(name=name).exists():
        raise ValidationError(f"an agent named {name!r} already exists")
    token, digest, prefix = _agent_token_new()
    agent = Agent(site=site, name=name, token_hash=digest, token_prefix=prefix, scope=scope)
    _save(agent)
    equipment = list(equipment)
    if equipment:
        agent.equipment.set(equipment)
    return agent, token


@transaction.atomic
def agent_revoke(*, agent: Agent, at: datetime | None = None) -> Agent:
    """Revoke an agent's token at once (idempotent: an already revoked agent keeps its revocation time)."""
    if agent.revoked_at is None:
        agent.revoked_at = at or timezone.now()
        agent.save(update_fields=["revoked_at"])
    return agent


@transaction.atomic
def agent_token_rotate(*, agent: Agent) -> str:
    """Give an active agent a new token (returned once); the old token stops working immediately."""
    if agent.revoked_at is not None:
        raise ValidationError(f"agent {agent.name!r} is revoked; create a new agent instead")
    token, agent.token_hash, agent.token_prefix = _agent_token_new()
    agent.save(update_fields=["token_hash", "token_prefix"])
    return token


def agent_authenticate(*, token: str) -> Agent | None:
    """The active agent holding ``token``, or None (unknown, revoked, empty or absurdly long token).

    The lookup is by hash, so the database never compares secrets; the final comparison of the two
    digests is constant-time all the same.
    """
    if not token or len(token) > AGENT_TOKEN_MAX_LEN:
        return None
    digest = agent_token_hash(token)
    agent = Agent.objects.select_related("site").filter(token_hash=digest, revoked_at__isnull=True).first()
    if agent is None or not hmac.compare_digest(agent.token_hash, digest):
        return None
    return agent


@transaction.atomic
def agent_assign_equipment(*, agent: Agent, equipment: Iterable[Equipment], replace: bool = False) -> Agent:
    """Allow ``agent`` to poll ``equipment`` via SNMP (added to its list, or replacing it with ``replace``)."""
    equipment = list(equipment)
    if replace:
        agent.equipment.set(equipment)
    else:
        agent.equipment.add(*equipment)
    return agent


def agent_mark_seen(*, agent: Agent, version: str = UNSET, at: datetime | None = None) -> None:
    """Record that ``agent`` just talked to the centre (and the software version it reported)."""
    fields: dict[str, Any] = {"last_seen_at": at or timezone.now()}
    if version is not UNSET:
        fields["version"] = (version or "")[: Agent._meta.get_field("version").max_length]
    Agent.objects.filter(pk=agent.pk).update(**fields)
    for name, value in fields.items():
        setattr(agent, name, value)
