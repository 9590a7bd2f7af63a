"""Upload spooled batches to ``POST /api/v1/ingest`` (docs/contracts.md#ingest-api), oldest first.

What each answer means for the spool:

=====================  =====================================================================
200 naming the batch   stored, or ``duplicate: true`` (stored by an earlier try whose answer
                       was lost): acknowledged, the batch file is deleted. Only an answer
                       with this batch's ``batch_id`` and an integer ``accepted`` counts: a
                       proxy's ``{}`` or a captive portal's page is retried like a 503
400, 403, 409          refused (409: conflicts with what the centre stores). Errors that all
                       name records (``records[3].x``): those records go to ``rejected/``
                       with the answer, the others are re-sent in a new batch. Any other
                       path (``""``, ``records``...): the batch is split in halves and each
                       half sent, down to single records, so that only the refused records
                       are parked. An error about the envelope (``sent_at``, ``batch_id``,
                       ``agent_version``, ``schema_version``): the whole batch is parked,
                       as every half would carry the same envelope. A refusal without the
                       ingest's ``errors`` list (a proxy's or firewall's page) is retried
413                    too large: the batch is split in halves (a single record: rejected)
500                    retried like a 503; after ``split_after_server_errors`` (3) 500s in a
                       row for the same batch (counted in the spool, across restarts) it is
                       split in halves, so that one record the centre fails on does not hold
                       back the rest; a single record answered 500 that often is parked
429, 502, 503, 504     the centre is unavailable: wait Retry-After when given (else the
                       backoff), then retry the same batch
network errors,        retry the same batch (same batch_id) after an exponential backoff with
timeouts               jitter; later batches wait, so the centre receives data in order
401, other 4xx         retry with backoff too: a revoked token or a wrong URL is fixed by a
                       human, and the data must still be there when it is
=====================  =====================================================================

Parked records stay in the spool's ``rejected/`` folder with the answer next to them
(``wanmon-agent spool`` lists them; ``--requeue-rejected`` sends them again).

Bodies are gzip-compressed JSON. TLS is verified against ``ca_file`` when configured, else
against the system's CA store (not a bundle shipped with Python packages: sites install their
grid CAs in the system store).
"""

from __future__ import annotations

import asyncio
import email.utils
import gzip
import logging
import random
import re
import ssl
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

import httpx
import msgspec

from agents.clock import SYSTEM_CLOCK, Clock
from agents.spool import Spool, SpooledBatch
from collectors.records import schema_version_needed
from collectors.records.types import iso_z

__all__ = [
    "SPLIT_AFTER_SERVER_ERRORS",
    "Backoff",
    "DrainReport",
    "Outcome",
    "UploadResult",
    "Uploader",
    "build_body",
    "drain",
    "envelope_refused",
    "parse_retry_after",
    "record_indexes",
    "upload_forever",
]

logger = logging.getLogger(__name__)

# An idle connection is reused for this long at most. Servers close idle keep-alive connections after a few
# seconds (gunicorn's threaded workers after 2 s); a POST sent on one the server is closing at that moment fails
# with "Server disconnected without sending a response" (httpx does not resend a POST). Batches of one drain pass
# follow each other within this, so they still share a connection; the next pass opens a new one.
KEEPALIVE_EXPIRY_S = 1.0
GZIP_LEVEL = 6  # JSON records compress ~10x; higher levels cost CPU for little gain
MAX_RETRY_AFTER_S = 3600.0  # a wrong Retry-After must not park the agent for days
SPLIT_AFTER_SERVER_ERRORS = 3  # 500s in a row for one batch before it is bisected
REFUSED_STATUSES = (400, 403, 409)
# Halving a batch does not change these: an error about them is about every half.
ENVELOPE_FIELDS = frozenset({"batch_id", "agent_version", "sent_at", "schema_version"})
_RECORD_PATH = re.compile(r"^records\[(\d+)\]")
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")
_ENCODER = msgspec.json.Encoder()


class Outcome(StrEnum):
    """What to do with a batch after one attempt."""

    ACKED = "acked"  # 200 naming the batch, new or duplicate
    REJECTED = "rejected"  # 400/403/409 with the ingest's errors: park the named records, or bisect
    TOO_LARGE = "too_large"  # 413: split
    SERVER_ERROR = "server_error"  # 500: retry; bisect after SPLIT_AFTER_SERVER_ERRORS in a row
    RETRY = "retry"  # anything else: keep it, try again later


@dataclass(frozen=True)
class UploadResult:
    """One attempt's outcome. ``response`` is the decoded JSON body (or text) of the answer."""

    outcome: Outcome
    status: int | None = None
    response: Any = None
    retry_after_s: float | None = None
    error: str | None = None
    accepted: int | None = None
    duplicate: bool = False
    server_timing: str | None = None  # the centre's Server-Timing header: where the upload's time went


class Backoff:
    """Exponential backoff with jitter: ``base_s * factor**n`` capped at ``max_s``, then drawn in
    [d/2, d] so that many agents retrying after one central outage do not return in lockstep."""

    def __init__(
        self, *, base_s: float = 2.0, max_s: float = 300.0, factor: float = 2.0, rng: Callable[[], float] | None = None
    ) -> None:
        self.base_s = base_s
        self.max_s = max_s
        self.factor = factor
        self.failures = 0
        self._rng = rng or random.random

    def next_delay_s(self) -> float:
        """The delay before the next attempt; each call counts one more failure."""
        ceiling = min(self.max_s, self.base_s * self.factor**self.failures)
        self.failures += 1
        return ceiling / 2 + self._rng() * ceiling / 2

    def reset(self) -> None:
        """After a success: the next failure starts again from ``base_s``."""
        self.failures = 0


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date), capped; None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), MAX_RETRY_AFTER_S)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    delay_s = (when - (now or datetime.now(UTC))).total_seconds()
    return min(max(delay_s, 0.0), MAX_RETRY_AFTER_S)


def build_body(batch: SpooledBatch, *, agent_version: str, sent_at: datetime) -> bytes:
    """The JSON ingest body of ``batch`` (records byte-for-byte as spooled)."""
    envelope = {
        "batch_id": batch.batch_id,
        "agent_version": agent_version,
        "sent_at": iso_z(sent_at.astimezone(UTC)),
        "schema_version": schema_version_needed(batch.records),
        "records": batch.records,
    }
    return _ENCODER.encode(envelope)


def record_indexes(response: Any) -> set[int] | None:
    """Indexes of the records a 400/403/409 answer names; None when an error names no record."""
    errors = response.get("errors") if isinstance(response, dict) else None
    if not isinstance(errors, list) or not errors:
        return None
    indexes: set[int] = set()
    for error in errors:
        path = error.get("path") if isinstance(error, dict) else None
        match = _RECORD_PATH.match(path) if isinstance(path, str) else None
        if match is None:
            return None  # "", "sent_at", "records": not one record's fault
        indexes.add(int(match.group(1)))
    return indexes


def envelope_refused(response: Any) -> bool:
    """True when an error of the answer is about the envelope (``sent_at``...), not about records."""
    for error in _errors(response) or ():
        path = error.get("path") if isinstance(error, dict) else None
        match = _FIELD.match(path) if isinstance(path, str) else None
        if match is not None and match.group(0) in ENVELOPE_FIELDS:
            return True
    return False


def _errors(response: Any) -> list[Any] | None:
    """The ingest's ``errors`` list, or None when the answer is not the ingest's (a proxy's page)."""
    errors = response.get("errors") if isinstance(response, dict) else None
    return errors if isinstance(errors, list) and errors else None


def _acknowledges(content: Any, batch_id: str) -> bool:
    """Whether a 200's body is the ingest's acknowledgement of ``batch_id``."""
    if not isinstance(content, dict):
        return False
    accepted = content.get("accepted")
    if not isinstance(accepted, int) or isinstance(accepted, bool):
        return False
    answered = content.get("batch_id")
    if answered == batch_id:
        return True
    try:  # the same UUID written otherwise (upper case, no hyphens) is the same batch
        return isinstance(answered, str) and uuid.UUID(answered) == uuid.UUID(batch_id)
    except ValueError:
        return False


def _excerpt(content: Any, limit: int = 200) -> str:
    text = content if isinstance(content, str) else _ENCODER.encode(content).decode()
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


class Uploader:
    """Sends one batch per call over a kept-alive HTTPS connection. The token stays in here."""

    def __init__(
        self,
        *,
        ingest_url: str,
        token: str,
        agent_version: str,
        agent_name: str = "",
        ca_file: Path | None = None,
        timeout_s: float = 30.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.ingest_url = ingest_url
        self.agent_version = agent_version
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Content-Encoding": "gzip",
            "User-Agent": f"wanmon-agent/{agent_version}" + (f" ({agent_name})" if agent_name else ""),
        }
        if client is None:
            verify = ssl.create_default_context(cafile=str(ca_file) if ca_file else None)
            client = httpx.AsyncClient(
                verify=verify,
                timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
                headers=headers,
                limits=httpx.Limits(keepalive_expiry=KEEPALIVE_EXPIRY_S),
            )
        else:
            client.headers.update(headers)
        self._client = client

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()

    async def __aenter__(self) -> Uploader:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def fetch_json(self, url: str) -> tuple[int | None, Any, str | None]:
        """GET ``url`` on the same connection pool and token (the centre's job list, agents/jobs.py): (status,
        decoded body, error). Never raises for network or server trouble: status None and the error then."""
        try:
            response = await self._client.get(url, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            return None, None, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        content = _decoded(response)
        return response.status_code, content, None if response.status_code == 200 else f"HTTP {response.status_code}"

    async def send(self, batch: SpooledBatch) -> UploadResult:
        """POST ``batch`` once and classify the answer; never raises for network or server trouble."""
        body = gzip.compress(
            build_body(batch, agent_version=self.agent_version, sent_at=datetime.now(UTC)), compresslevel=GZIP_LEVEL
        )
        try:
            response = await self._client.post(self.ingest_url, content=body)
        except httpx.HTTPError as exc:  # connection refused, DNS, TLS, timeouts...
            return UploadResult(Outcome.RETRY, error=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        status = response.status_code
        content = _decoded(response)
        if status == 200:
            if _acknowledges(content, batch.batch_id):
                return UploadResult(
                    Outcome.ACKED,
                    status,
                    content,
                    accepted=content.get("accepted"),
                    duplicate=bool(content.get("duplicate")),
                    server_timing=response.headers.get("Server-Timing"),
                )
            # A 200 that is not the ingest's answer for this batch (a captive portal, a proxy's {}):
            # deleting the batch on it would lose data the centre never stored.
            error = f"200 without an acknowledgement of this batch: {_excerpt(content)}"
            return UploadResult(Outcome.RETRY, status, content, error=error)
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        if status in REFUSED_STATUSES:
            if _errors(content) is not None:
                return UploadResult(Outcome.REJECTED, status, content)
            # Not the ingest's verdict on the data (a proxy's or firewall's page): parking records on
            # it would park everything; it is fixed by a human, like a 401.
            error = f"HTTP {status} without the ingest's errors: {_excerpt(content)}"
            return UploadResult(Outcome.RETRY, status, content, retry_after_s=retry_after, error=error)
        if status == 413:
            return UploadResult(Outcome.TOO_LARGE, status, content)
        outcome = Outcome.SERVER_ERROR if status == 500 else Outcome.RETRY
        return UploadResult(outcome, status, content, retry_after_s=retry_after, error=f"HTTP {status}")


def _decoded(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text[:2000]


@dataclass
class DrainReport:
    """What one pass over the spool did. ``retry_in_s`` is set when it stopped on a retryable failure."""

    sent_batches: int = 0
    sent_records: int = 0
    duplicate_batches: int = 0
    rejected_batches: int = 0
    split_batches: int = 0
    retry_in_s: float | None = None
    last_error: str | None = None

    @property
    def failed(self) -> bool:
        """True when batches are left waiting for a retry."""
        return self.retry_in_s is not None


async def drain(
    spool: Spool,
    uploader: Uploader,
    *,
    backoff: Backoff,
    stop: asyncio.Event | None = None,
    split_after_server_errors: int = SPLIT_AFTER_SERVER_ERRORS,
) -> DrainReport:
    """Upload waiting batches, oldest first, until the spool is empty, a retryable failure, or ``stop``.

    A batch in flight when ``stop`` is set is finished (its answer handled) before returning.
    A batch answered 500 ``split_after_server_errors`` times in a row is bisected (module docstring).
    """
    if split_after_server_errors < 1:
        raise ValueError("split_after_server_errors must be >= 1")
    report = DrainReport()
    spool.seal()
    while stop is None or not stop.is_set():
        batch = spool.next_batch()
        if batch is None:
            break
        result = await uploader.send(batch)
        extra = {"batch_id": batch.batch_id, "records": batch.count, "status": result.status}
        if result.outcome is Outcome.ACKED:
            spool.ack(batch)
            backoff.reset()
            report.sent_batches += 1
            report.sent_records += batch.count
            report.duplicate_batches += int(result.duplicate)
            logger.info(
                "batch uploaded", extra={**extra, "duplicate": result.duplicate, "server_timing": result.server_timing}
            )
            continue
        if result.outcome is Outcome.TOO_LARGE:
            _split_or_park(spool, batch, result, report, reason="too large for the centre (413)")
            continue
        if result.outcome is Outcome.REJECTED:
            indexes = record_indexes(result.response)
            if indexes is not None or envelope_refused(result.response):
                spool.reject(batch, status=result.status, response=result.response, record_indexes=indexes)
                report.rejected_batches += 1
            else:
                reason = f"HTTP {result.status} naming no record: halves sent to find the refused records"
                _split_or_park(spool, batch, result, report, reason=reason)
            continue
        if result.outcome is Outcome.SERVER_ERROR:
            in_a_row = spool.note_server_error(batch, status=result.status, response=result.response)
            extra["server_errors_in_a_row"] = in_a_row
            if in_a_row >= split_after_server_errors:
                reason = f"HTTP {result.status} {in_a_row} times in a row: halves sent to find the failing records"
                _split_or_park(spool, batch, result, report, reason=reason, attempts=in_a_row)
                continue
        else:
            spool.clear_server_errors(batch)  # a run of 500s is broken by any other answer
        # The server said when (429, 503): exactly then, not earlier, not needlessly later.
        delay_s = result.retry_after_s if result.retry_after_s is not None else backoff.next_delay_s()
        report.retry_in_s = delay_s
        report.last_error = result.error
        level = logging.ERROR if result.status == 401 else logging.WARNING
        if result.status == 401:
            message = "upload refused: agent token not accepted"
        elif result.status == 200:
            message = "upload answered 200 but not acknowledged (not the centre's ingest answer)"
        else:
            message = "upload failed"
        logger.log(level, message + "; will retry", extra={**extra, "error": result.error, "retry_in_s": delay_s})
        break
    return report


def _split_or_park(
    spool: Spool,
    batch: SpooledBatch,
    result: UploadResult,
    report: DrainReport,
    *,
    reason: str,
    attempts: int | None = None,
) -> None:
    """Bisect ``batch`` so that its halves are sent next; a single record goes to ``rejected/``."""
    if batch.count > 1:
        spool.split(batch, reason=reason)
        report.split_batches += 1
    else:
        spool.reject(batch, status=result.status, response=result.response, attempts=attempts)
        report.rejected_batches += 1


async def upload_forever(
    spool: Spool,
    uploader: Uploader,
    stop: asyncio.Event,
    *,
    interval_s: float,
    backoff: Backoff | None = None,
    clock: Clock = SYSTEM_CLOCK,
    split_after_server_errors: int = SPLIT_AFTER_SERVER_ERRORS,
    wake: asyncio.Event | None = None,
    settle_s: float = 5.0,
) -> None:
    """The daemon's upload loop: drain now, then every ``interval_s``; after a failure wait as the
    backoff or the server's Retry-After says (waits on ``clock``). Returns when ``stop`` is set
    (after the batch in flight).

    ``wake``, set by whoever spools new records (and when ``stop`` is set), starts the next pass
    ``settle_s`` after it instead of at the interval, unless a retry is pending: then the backoff
    or Retry-After is honoured, whatever arrives meanwhile.
    """
    if split_after_server_errors < 1:
        raise ValueError("split_after_server_errors must be >= 1")
    backoff = backoff or Backoff()
    while not stop.is_set():
        retrying = True
        try:
            report = await drain(
                spool, uploader, backoff=backoff, stop=stop, split_after_server_errors=split_after_server_errors
            )
            retrying = report.retry_in_s is not None
            delay_s = report.retry_in_s if retrying else interval_s
        except Exception:  # e.g. a spool file system error: keep the agent alive, try again later
            delay_s = backoff.next_delay_s()
            logger.exception("upload pass failed", extra={"retry_in_s": delay_s})
        if wake is None or retrying:
            await clock.wait(stop, delay_s)
            continue
        await clock.wait(wake, delay_s)  # idle until the interval, or new records
        if wake.is_set() and not stop.is_set():
            wake.clear()
            await clock.wait(stop, settle_s)
