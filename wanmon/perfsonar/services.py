"""perfSONAR writes: archive a pScheduler run, map an endpoint (and ingest what it unparks), psconfig tokens.

A run goes through the agent ingest: its records are validated by the wire schema (collectors.records)
and stored by ``batch_ingest`` under the run's agent, with a batch id derived from the run id, so a retry
of the same run is a duplicate there too.
"""

from __future__ import annotations

import base64
import hmac
import logging
import re
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DataError, IntegrityError, transaction
from django.utils import timezone

from collectors.records import RecordError, decode_records
from wanmon.inventory.choices import AgentScope
from wanmon.inventory.models import Agent, Host, Site
from wanmon.inventory.services import agent_create
from wanmon.measurements.ingest import IngestError, batch_ingest
from wanmon.perfsonar import constants as k
from wanmon.perfsonar.choices import RunState
from wanmon.perfsonar.models import EndpointAlias, PerfsonarRun, PsconfigToken
from wanmon.perfsonar.pscheduler import (
    MEASURED_TEST_TYPES,
    BodyProblem,
    PsRun,
    endpoint_normalise,
    parse_run,
    records_build,
)
from wanmon.perfsonar.psconfig import archive_spec
from wanmon.perfsonar.selectors import Endpoint, endpoint_resolve, token_hash

logger = logging.getLogger(__name__)

__all__ = [
    "ArchiveError",
    "ArchiveResult",
    "MapResult",
    "PsconfigAccess",
    "perfsonar_endpoint_map",
    "perfsonar_run_archive",
    "psconfig_token_ensure",
    "psconfig_token_mark_used",
    "run_batch_id",
]


class ArchiveError(Exception):
    """A run refused: HTTP status (400 malformed, 403 not the agent's site, 409 conflict) and ``{path, message}``."""

    def __init__(self, status: int, errors: list[dict[str, str]]) -> None:
        self.status = status
        self.errors = errors
        super().__init__("; ".join(f"{e['path'] or '(body)'}: {e['message']}" for e in errors[:5]))


@dataclass
class ArchiveResult:
    """The answer to an archiver (docs/contracts.md#perfsonar-archive), plus why a run was ignored when it was."""

    run_id: str
    accepted: int = 0
    duplicate: bool = False
    parked: bool = False
    ignored: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "run_id": self.run_id,
            "accepted": self.accepted,
            "duplicate": self.duplicate,
            "parked": self.parked,
        }
        if self.ignored:
            out["ignored"] = self.ignored
        return out


def run_batch_id(run_id: str) -> str:
    """The ingest batch id of a run: deterministic, so that a retried run is a duplicate batch."""
    return str(uuid.uuid5(uuid.UUID(k.RUN_NAMESPACE), run_id))


def _decode(body: bytes) -> Any:
    try:
        return msgspec.json.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        message = str(exc).replace("JSON is malformed", "malformed JSON")
        raise ArchiveError(400, [{"path": "", "message": message}]) from None


def perfsonar_run_archive(*, body: bytes, agent: Agent, now: datetime | None = None) -> ArchiveResult:
    """Take one run as pScheduler's http archiver sends it: ingest it, park it, or say it is a duplicate.

    Raises ArchiveError (400 naming the field, 403 when neither endpoint is at the agent's site, 409 when
    the database refuses its data). Runs of test types wanmon does not measure are acknowledged and ignored,
    as are tests between two hosts of one site: pScheduler retries anything that is not a 2xx.
    """
    now = now or timezone.now()
    data = _decode(body)
    try:
        run = parse_run(data)
    except BodyProblem as exc:
        raise ArchiveError(400, exc.errors) from None
    existing = PerfsonarRun.objects.filter(run_id=run.run_id).only("state").first()
    if existing is not None:
        return ArchiveResult(run.run_id, duplicate=True, parked=existing.state == RunState.PARKED)
    if not run.measured:
        stored = ", ".join(sorted(MEASURED_TEST_TYPES))
        return _ignore(run, agent, f"test type {run.test_type!r} is not a measurement wanmon uses (it stores {stored})")
    src, dst, unresolved = _run_ends(run)
    if src is None or dst is None:
        return _park(run, agent, body_data=data, unresolved=unresolved)
    return _ingest(run, agent, src=src, dst=dst, now=now)


def _run_ends(run: PsRun) -> tuple[Endpoint | None, Endpoint | None, list[str]]:
    """The run's source and destination as the inventory knows them (None for an end it does not know), and the
    names an operator must map: the first name of each unknown end."""
    ends = endpoint_resolve((*run.source_names, *run.dest_names))
    src = next((ends[n] for n in run.source_names if n in ends), None)
    dst = next((ends[n] for n in run.dest_names if n in ends), None)
    return src, dst, [*(run.source_names[:1] if src is None else ()), *(run.dest_names[:1] if dst is None else ())]


def _endpoint_label(names: tuple[str, ...]) -> str:
    return (names[0] if names else "")[:255]


def _save_new(row: PerfsonarRun) -> bool:
    """Insert ``row``; False when another request stored the same run meanwhile (then it is a duplicate).

    A value PostgreSQL cannot store (a NUL character, a lone surrogate in the kept body) is the body's fault:
    ArchiveError 400, not a database outage.
    """
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError:
        return False
    except DataError as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ArchiveError(400, [{"path": "", "message": f"the database cannot store this run: {message}"}]) from None
    return True


def _ignore(run: PsRun, agent: Agent, reason: str) -> ArchiveResult:
    row = _row(run, agent, RunState.IGNORED)
    row.error = reason
    if not _save_new(row):
        return ArchiveResult(run.run_id, duplicate=True)
    return ArchiveResult(run.run_id, ignored=reason)


def _row(run: PsRun, agent: Agent | None, state: str) -> PerfsonarRun:
    return PerfsonarRun(
        run_id=run.run_id,
        agent=agent,
        state=state,
        test_type=run.test_type[:50],
        tool=(run.tool or "")[:100],
        tool_version=(run.tool_version or "")[:100],
        run_start=run.start,
        source=_endpoint_label(run.source_names),
        dest=_endpoint_label(run.dest_names),
    )


def _park(run: PsRun, agent: Agent, *, body_data: Any, unresolved: list[str]) -> ArchiveResult:
    row = _row(run, agent, RunState.PARKED)
    row.unresolved = unresolved
    row.body = body_data
    if not _save_new(row):
        return ArchiveResult(run.run_id, duplicate=True, parked=True)
    logger.info("perfSONAR run %s parked: unknown endpoints %s", run.run_id, ", ".join(unresolved))
    return ArchiveResult(run.run_id, parked=True)


_RECORD_PATH = re.compile(r"^records\[(?P<index>\d+)\](?:\.(?P<field>[\w.]+))?")


def _body_errors(errors: list[dict[str, str]], sources, prefix: str) -> list[dict[str, str]]:
    """Record errors (``records[0].throughput_bps``) as errors about the body's field the value came from."""
    out = []
    for error in errors:
        match = _RECORD_PATH.match(error["path"])
        if match is None:
            out.append(error)
            continue
        name = (match["field"] or "").split(".")[0]
        source = sources[int(match["index"])] if int(match["index"]) < len(sources) else None
        path = (source.paths.get(name) if source else None) or f"{prefix}result"
        out.append({"path": path, "message": f"{error['message']} (wanmon field {name or 'record'})"})
    return out


def _ingest(
    run: PsRun,
    agent: Agent,
    *,
    src: Endpoint,
    dst: Endpoint,
    now: datetime,
    row: PerfsonarRun | None = None,
) -> ArchiveResult:
    """Validate the run's records and store them through ``batch_ingest`` (``row``: a parked run being released)."""
    if run.reversed:
        src, dst = dst, src
    if src.site_id == dst.site_id:
        reason = f"both endpoints are at site {src.site_code}: not a wide-area test"
        if row is None:
            return _ignore(run, agent, reason)
        _row_finish(row, RunState.IGNORED, error=reason)
        return ArchiveResult(run.run_id, ignored=reason)
    if agent.site_id not in (src.site_id, dst.site_id):
        raise ArchiveError(
            403,
            [
                {
                    "path": f"{run.prefix}test.spec",
                    "message": f"agent {agent.name!r} of site {agent.site.code} may not archive runs between "
                    f"{src.site_code} and {dst.site_code}: neither endpoint is at its site",
                }
            ],
        )
    sources = records_build(run, src=src.site_code, dst=dst.site_code, src_host=src.host, dst_host=dst.host)
    try:
        records = decode_records([s.data for s in sources], path="records", now=now)
    except RecordError as exc:
        raise ArchiveError(400, _body_errors(exc.errors, sources, run.prefix)) from None
    batch_id = run_batch_id(run.run_id)
    try:
        with transaction.atomic():
            if row is None:
                row = _row(run, agent, RunState.INGESTED)
                if not _save_new(row):
                    return ArchiveResult(run.run_id, duplicate=True)
            result = batch_ingest(
                batch_id=batch_id,
                records=records,
                agent=agent,
                # batch_ingest records this as the agent's version: an agent's own stays (source tells them apart).
                agent_version=agent.version or k.AGENT_VERSION_PREFIX,
                sent_at=now,
                source=k.BATCH_SOURCE,
            )
            _row_finish(row, RunState.INGESTED, batch_id=batch_id, accepted=result.accepted, now=now)
    except IngestError as exc:
        raise ArchiveError(exc.status, _body_errors(exc.errors, sources, run.prefix)) from None
    return ArchiveResult(run.run_id, accepted=result.accepted, duplicate=result.duplicate)


def _row_finish(
    row: PerfsonarRun,
    state: str,
    *,
    batch_id: str | None = None,
    accepted: int = 0,
    error: str = "",
    now: datetime | None = None,
) -> None:
    row.state = state
    row.batch_id = batch_id
    row.accepted = accepted
    row.error = error
    row.unresolved = [] if state != RunState.PARKED else row.unresolved
    if state != RunState.PARKED:
        row.body = None
    row.ingested_at = now if state == RunState.INGESTED else None
    row.save()


# --- mapping ------------------------------------------------------------------------------------------


@dataclass
class MapResult:
    """What mapping one endpoint did: the alias, and the parked runs it released (by outcome)."""

    alias: EndpointAlias
    ingested: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)  # run id -> why
    ignored: list[str] = field(default_factory=list)
    still_parked: int = 0


@transaction.atomic
def perfsonar_endpoint_map(
    *, endpoint: str, site: Site, host: Host | None = None, user=None, now: datetime | None = None
) -> MapResult:
    """Map a perfSONAR endpoint (address or name) to a site (and host), then ingest the parked runs it resolves.

    The released runs go through the same path as a fresh archive (validation, site scoping against the
    agent that sent them, ``batch_ingest``); one that fails there is kept as rejected with the reason.
    """
    now = now or timezone.now()
    name = endpoint_normalise(endpoint)
    if name is None:
        raise ValidationError({"endpoint": "expected a host name or an IP address"})
    if host is not None and host.site_id != site.pk:
        raise ValidationError({"host": f"host {host.name} is at site {host.site.code}, not {site.code}"})
    alias, _ = EndpointAlias.objects.update_or_create(
        endpoint=name, defaults={"site": site, "host": host, "created_by": user}
    )
    result = MapResult(alias=alias)
    for row in PerfsonarRun.objects.filter(state=RunState.PARKED).select_for_update().order_by("received_at", "id"):
        try:
            run = parse_run(row.body)
        except BodyProblem as exc:  # cannot happen for a body accepted once; kept out of the way if it does
            _row_finish(row, RunState.REJECTED, error=str(exc))
            result.rejected[row.run_id] = str(exc)
            continue
        src, dst, unresolved = _run_ends(run)
        if src is None or dst is None:
            result.still_parked += 1
            if unresolved != row.unresolved:  # the page lists only what is still to map
                row.unresolved = unresolved
                row.save(update_fields=["unresolved"])
            continue
        if row.agent is None or row.agent.revoked_at is not None:
            reason = "the agent that archived this run no longer exists or was revoked"
            _row_finish(row, RunState.REJECTED, error=reason)
            result.rejected[row.run_id] = reason
            continue
        try:
            with transaction.atomic():
                outcome = _ingest(run, row.agent, src=src, dst=dst, now=now, row=row)
        except ArchiveError as exc:
            reason = "; ".join(f"{e['path']}: {e['message']}" for e in exc.errors)
            row.refresh_from_db()
            _row_finish(row, RunState.REJECTED, error=reason)
            result.rejected[row.run_id] = reason
            continue
        (result.ignored if outcome.ignored else result.ingested).append(row.run_id)
    return result


# --- psconfig tokens ------------------------------------------------------------------------------------


def _derived(salt: str, nonce: str) -> str:
    """A 256-bit secret derived from the server's secret key: printable again, never stored."""
    digest = hmac.new(settings.SECRET_KEY.encode(), f"{salt}:{nonce}".encode(), "sha256").digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


@dataclass
class PsconfigAccess:
    """A psconfig token with its secret, and the archive it puts in the template (None for the mesh)."""

    token: PsconfigToken
    secret: str
    created: bool
    archive_token: str | None
    note: str


def psconfig_secret(token: PsconfigToken) -> str:
    """The URL secret of a psconfig token."""
    return _derived(k.PSCONFIG_TOKEN_SALT, token.nonce)


def psconfig_archive_token(token: PsconfigToken) -> str | None:
    """The agent token a site's template puts in its archive, or None when there is no usable archive agent."""
    agent = token.archive_agent
    if token.site_id is None or agent is None or agent.revoked_at is not None or not token.archive_nonce:
        return None
    secret = _derived(k.ARCHIVE_TOKEN_SALT, token.archive_nonce)
    # A changed secret key derives another token: the agent's hash must match what the template says.
    return secret if hmac.compare_digest(agent.token_hash, token_hash(secret)) else None


@transaction.atomic
def psconfig_token_ensure(*, site: Site | None) -> PsconfigAccess:
    """The active read-only token of a site's template (None: the mesh's), created if needed.

    A site's token also holds the agent whose token the template's http archive sends: a new agent of the
    site named ``<code>-perfsonar`` (``-2``, ``-3``... when taken), created when missing or revoked, its token
    derived from the secret
    key (re-derived when the key changed) so that the template can be served again at any time. The mesh
    template carries no archive: one agent token cannot be right for every site.
    """
    token = PsconfigToken.objects.select_for_update().filter(site=site, revoked_at__isnull=True).order_by("id").first()
    created = token is None
    if created:
        nonce = secrets.token_hex(16)
        secret = _derived(k.PSCONFIG_TOKEN_SALT, nonce)
        token = PsconfigToken.objects.create(
            site=site, nonce=nonce, token_hash=token_hash(secret), token_prefix=secret[: k.TOKEN_PREFIX_LEN]
        )
    else:
        secret = psconfig_secret(token)
        if token.token_hash != token_hash(secret):  # the secret key changed: the printed URL is the valid one
            token.token_hash, token.token_prefix = token_hash(secret), secret[: k.TOKEN_PREFIX_LEN]
            token.save(update_fields=["token_hash", "token_prefix"])
    if site is None:
        return PsconfigAccess(token, secret, created, None, "the mesh template has no archive: "
                              "each site archives with its own token (manage.py psconfig_url --site CODE)")
    note = f"archived with the token of agent {{name}} of site {site.code}"
    agent = token.archive_agent
    if agent is None or agent.revoked_at is not None:
        # Always a new agent: taking over an existing one would replace a token someone may be using.
        base = f"{site.code.lower()}{k.ARCHIVE_AGENT_SUFFIX}"
        taken = set(Agent.objects.filter(name__startswith=base).values_list("name", flat=True))
        name = next(n for n in (base, *(f"{base}-{i}" for i in range(2, len(taken) + 3))) if n not in taken)
        agent, _ = agent_create(site=site, name=name, scope=AgentScope.ARCHIVE)
        note += " (created now)"
        token.archive_agent = agent
        token.archive_nonce = secrets.token_hex(16)
    archive_secret = _derived(k.ARCHIVE_TOKEN_SALT, token.archive_nonce)
    if agent.token_hash != token_hash(archive_secret) or agent.scope != AgentScope.ARCHIVE:
        # The agent's token is the derived one (its own random token, printed nowhere, is replaced), and it archives
        # perfSONAR runs only: whoever fetches the template reads it.
        Agent.objects.filter(pk=agent.pk).update(
            token_hash=token_hash(archive_secret), token_prefix=archive_secret[: k.TOKEN_PREFIX_LEN],
            scope=AgentScope.ARCHIVE,
        )
        agent.refresh_from_db()
    token.save(update_fields=["archive_agent", "archive_nonce"])
    return PsconfigAccess(token, secret, created, archive_secret, note.format(name=agent.name))


def psconfig_token_mark_used(*, token: PsconfigToken, now: datetime | None = None) -> None:
    """Remember when a template was last fetched (shows that the toolkit's pSConfig agent reads it)."""
    PsconfigToken.objects.filter(pk=token.pk).update(last_used_at=now or timezone.now())


def psconfig_archive(token: PsconfigToken) -> tuple[dict[str, Any] | None, str]:
    """The archive spec a token's template carries, or None with the reason written into the template."""
    if token.site_id is None:
        return None, ("no archive in the mesh template: each site archives to wanmon with its own agent token "
                      "(manage.py psconfig_url --site CODE, or docs/perfsonar.md)")
    secret = psconfig_archive_token(token)
    if secret is None:
        return None, (f"no usable agent token for site {token.site.code}: its archive agent is missing or revoked; "
                      f"run manage.py psconfig_url --site {token.site.code} on the wanmon server")
    url = f"{settings.WANMON_BASE_URL.rstrip('/')}{k.ARCHIVE_PATH}"
    return archive_spec(url=url, token=secret), f"archived to wanmon as agent {token.archive_agent.name}"
