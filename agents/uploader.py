"""Upload spooled batches to ``POST /api/v1/ingest`` (CONTRACTS.md §3), oldest first.

What each answer means for the spool:

=====================  =====================================================================
200                    stored, or ``duplicate: true`` (stored by an earlier try whose answer
                       was lost): acknowledged, the batch file is deleted
400, 403               refused: the records the server names go to ``rejected/`` with its
                       answer; the other records of the batch are re-sent in a new batch
413                    too large: the batch is split in halves (a single record: rejected)
429, 503 + Retry-After wait at least that long, then retry the same batch
5xx, network errors,   retry the same batch (same batch_id) after an exponential backoff with
timeouts               jitter; later batches wait, so the centre receives data in order
401, other 4xx         retry with backoff too: a revoked token or a wrong URL is fixed by a
                       human, and the data must still be there when it is
=====================  =====================================================================

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
from collectors.records import SCHEMA_VERSION

__all__ = [
    "Backoff",
    "DrainReport",
    "Outcome",
    "UploadResult",
    "Uploader",
    "build_body",
    "drain",
    "parse_retry_after",
    "record_indexes",
    "upload_forever",
]

logger = logging.getLogger(__name__)

GZIP_LEVEL = 6  # JSON records compress ~10x; higher levels cost CPU for little gain
MAX_RETRY_AFTER_S = 3600.0  # a wrong Retry-After must not park the agent for days
_RECORD_PATH = re.compile(r"^records\[(\d+)\]")
_ENCODER = msgspec.json.Encoder()


class Outcome(StrEnum):
    """What to do with a batch after one attempt."""

    ACKED = "acked"  # 200, new or duplicate
    REJECTED = "rejected"  # 400/403: move (the named records) to rejected/
    TOO_LARGE = "too_large"  # 413: split
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
        "sent_at": sent_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "schema_version": SCHEMA_VERSION,
        "records": batch.records,
    }
    return _ENCODER.encode(envelope)


def record_indexes(response: Any) -> set[int] | None:
    """Indexes of the records a 400/403 answer names; None when an error is about the whole batch."""
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
                verify=verify, timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)), headers=headers
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
            if isinstance(content, dict) and content.get("batch_id", batch.batch_id) == batch.batch_id:
                return UploadResult(
                    Outcome.ACKED,
                    status,
                    content,
                    accepted=content.get("accepted"),
                    duplicate=bool(content.get("duplicate")),
                    server_timing=response.headers.get("Server-Timing"),
                )
            # A 200 that is not the ingest's answer (a captive portal, a proxy page): not an ack.
            return UploadResult(Outcome.RETRY, status, content, error="200 without an ingest acknowledgement")
        if status in (400, 403):
            return UploadResult(Outcome.REJECTED, status, content)
        if status == 413:
            return UploadResult(Outcome.TOO_LARGE, status, content)
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        return UploadResult(Outcome.RETRY, status, content, retry_after_s=retry_after, error=f"HTTP {status}")


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
) -> DrainReport:
    """Upload waiting batches, oldest first, until the spool is empty, a retryable failure, or ``stop``.

    A batch in flight when ``stop`` is set is finished (its answer handled) before returning.
    """
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
        elif result.outcome is Outcome.TOO_LARGE and batch.count > 1:
            spool.split(batch)
            report.split_batches += 1
        elif result.outcome in (Outcome.REJECTED, Outcome.TOO_LARGE):
            indexes = record_indexes(result.response) if result.outcome is Outcome.REJECTED else None
            spool.reject(batch, status=result.status, response=result.response, record_indexes=indexes)
            report.rejected_batches += 1
        else:
            # The server said when (429, 503): exactly then, not earlier, not needlessly later.
            delay_s = result.retry_after_s if result.retry_after_s is not None else backoff.next_delay_s()
            report.retry_in_s = delay_s
            report.last_error = result.error
            level = logging.ERROR if result.status == 401 else logging.WARNING
            message = "upload refused: agent token not accepted" if result.status == 401 else "upload failed"
            logger.log(level, message + "; will retry", extra={**extra, "error": result.error, "retry_in_s": delay_s})
            break
    return report


async def upload_forever(
    spool: Spool,
    uploader: Uploader,
    stop: asyncio.Event,
    *,
    interval_s: float,
    backoff: Backoff | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> None:
    """The daemon's upload loop: drain now, then every ``interval_s``; after a failure wait as the
    backoff or the server's Retry-After says (waits on ``clock``). Returns when ``stop`` is set
    (after the batch in flight)."""
    backoff = backoff or Backoff()
    while not stop.is_set():
        try:
            report = await drain(spool, uploader, backoff=backoff, stop=stop)
            delay_s = report.retry_in_s if report.retry_in_s is not None else interval_s
        except Exception:  # e.g. a spool file system error: keep the agent alive, try again later
            delay_s = backoff.next_delay_s()
            logger.exception("upload pass failed", extra={"retry_in_s": delay_s})
        await clock.wait(stop, delay_s)
