"""The spool's files: their names, formats and the small values read from them (agents/spool.py)."""

from __future__ import annotations

import errno
import logging
import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from collectors.records.types import iso_z

SPOOL_FORMAT = 1
PENDING_DIR, BATCHES_DIR, REJECTED_DIR, TMP_DIR = "pending", "batches", "rejected", "tmp"
BATCH_NAME_RE = re.compile(r"^(?P<ns>\d{20})-(?P<key>[0-9a-f-]{8,36})-n(?P<count>\d+)\.json\Z")
ERROR_SUFFIX = ".error.json"
DROPPED_FILE = "dropped.json"
DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)

logger = logging.getLogger("agents.spool")  # the spool's one logger, whichever of its modules logs


class SpoolError(RuntimeError):
    """The spool directory cannot be used (permissions, read-only or missing file system...)."""


class SpoolBusyError(SpoolError):
    """Another process (a running ``wanmon-agent run``) holds the spool's lock."""


class ChunkFile(msgspec.Struct, kw_only=True):
    format: int = SPOOL_FORMAT
    created_at: str
    source: str
    records: list[msgspec.Raw]


class BatchFile(msgspec.Struct, kw_only=True):
    format: int = SPOOL_FORMAT
    batch_id: str
    created_at: str
    chunks: list[str] = []
    split_from: str | None = None
    records: list[msgspec.Raw]


SPOOL_ENCODER = msgspec.json.Encoder()
CHUNK_DECODER = msgspec.json.Decoder(ChunkFile)
BATCH_DECODER = msgspec.json.Decoder(BatchFile)


@dataclass(frozen=True)
class SpooledBatch:
    """A batch on disk: ``records`` are the exact JSON bytes of each record, as spooled."""

    batch_id: str
    path: Path
    created_ns: int
    records: list[msgspec.Raw]
    split_from: str | None = None

    @property
    def count(self) -> int:
        """Number of records in the batch."""
        return len(self.records)


@dataclass(frozen=True)
class SpoolStatus:
    """What waits in the spool. ``oldest_age_s`` is None when nothing waits."""

    pending_records: int
    pending_chunks: int
    batch_records: int
    batches: int
    oldest_age_s: float | None
    rejected_batches: int
    rejected_records: int
    bytes: int
    max_bytes: int
    dropped_records: int = 0  # since the spool was created: dropped for its size bound or a full disk

    @property
    def records_waiting(self) -> int:
        """Records not yet acknowledged by the centre (pending chunks and formed batches)."""
        return self.pending_records + self.batch_records

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``wanmon-agent spool --json``)."""
        return {
            "records_waiting": self.records_waiting,
            "batches_waiting": self.batches,
            "pending_records": self.pending_records,
            "pending_chunks": self.pending_chunks,
            "batch_records": self.batch_records,
            "oldest_age_s": None if self.oldest_age_s is None else round(self.oldest_age_s, 3),
            "rejected_batches": self.rejected_batches,
            "rejected_records": self.rejected_records,
            "bytes": self.bytes,
            "max_bytes": self.max_bytes,
            "dropped_records": self.dropped_records,
        }


@dataclass(frozen=True)
class RejectedFile:
    """A file in ``rejected/`` and why it is there (read from the ``.error.json`` next to it)."""

    path: Path
    records: int
    status: int | None
    reason: str
    attempts: int | None = None
    rejected_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``wanmon-agent spool --json``)."""
        return {
            "file": str(self.path),
            "records": self.records,
            "status": self.status,
            "reason": self.reason,
            "attempts": self.attempts,
            "rejected_at": self.rejected_at,
        }


@dataclass
class SpoolEntry:
    """One spool file, described by its name (and size, for the size bound)."""

    path: Path
    created_ns: int
    count: int
    size_bytes: int
    extra: list[Path] = field(default_factory=list)  # files that go with it (a rejected batch's .error.json)


# --- helpers -------------------------------------------------------------------------------------


def batch_name(created_ns: int, batch_id: str, count: int) -> str:
    return f"{created_ns:020d}-{batch_id}-n{count}.json"


def error_file_name(name: str) -> str:
    return name.removesuffix(".json") + ERROR_SUFFIX


def error_path(path: Path) -> Path:
    """The ``.error.json`` that goes with a batch file, in the same directory."""
    return path.with_name(error_file_name(path.name))


def batch_of_error(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(ERROR_SUFFIX) + ".json")


def derived_id(parent_id: str, role: str) -> str:
    """A stable child id: re-splitting the same parent after a crash gives the same ids."""
    return str(uuid.uuid5(uuid.UUID(parent_id), role))


def iso_of_ns(ns: int) -> str:
    return iso_z(datetime.fromtimestamp(ns / 1e9, UTC))


def list_dir(directory: Path) -> list[Path]:
    try:
        return [Path(item.path) for item in os.scandir(directory)]
    except FileNotFoundError:
        return []


def unlink_quietly(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def refusal_reason(error: Mapping[str, Any]) -> str:
    """One line saying why a file was parked: the server's first error, or the spool's own reason."""
    if isinstance(error.get("reason"), str):
        return error["reason"]
    response = error.get("response")
    errors = response.get("errors") if isinstance(response, dict) else None
    if isinstance(errors, list) and errors:
        first = errors[0] if isinstance(errors[0], dict) else {}
        text = f"{first.get('path') or '(batch)'}: {first.get('message', '')}"
        return text + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
    if response is None:
        return "no answer recorded"
    text = response if isinstance(response, str) else SPOOL_ENCODER.encode(response).decode()
    return " ".join(text.split())[:200] or "empty answer"


def mtime_of(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return 0.0


def size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def records_as_dicts(batch: SpooledBatch) -> list[Mapping[str, Any]]:
    """The batch's records decoded (for tests and the ``spool`` command)."""
    return [msgspec.json.decode(raw) for raw in batch.records]
