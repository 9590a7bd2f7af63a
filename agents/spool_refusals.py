"""What the spool does with the centre's refusals: splitting a batch, parking records in ``rejected/``, counting
repeated server errors, putting parked batches back (a part of :class:`agents.spool.Spool`)."""

from __future__ import annotations

import contextlib
import os
from typing import Any

import msgspec

from agents.spool_files import (
    SPOOL_ENCODER,
    BatchFile,
    RejectedFile,
    SpooledBatch,
    batch_name,
    derived_id,
    error_file_name,
    error_path,
    fsync_dir,
    iso_of_ns,
    logger,
    mtime_of,
    refusal_reason,
    unlink_quietly,
)


class SpoolRefusals:
    """The refusal handling of :class:`~agents.spool.Spool`, which provides the directories, the lock and the
    atomic writes these methods use."""

    def rejected(self, *, limit: int | None = None) -> list[RejectedFile]:
        """What ``rejected/`` holds, most recently parked first (at most ``limit``), with the reason.

        Read-only, safe while the daemon runs; only the error files of the listed entries are read.
        """
        entries = self._entries(self.rejected_dir)
        entries.sort(key=lambda e: max((mtime_of(p) for p in (e.path, *e.extra)), default=0.0), reverse=True)
        listed: list[RejectedFile] = []
        for entry in entries[:limit] if limit is not None else entries:
            error: Any = None
            with contextlib.suppress(OSError, msgspec.DecodeError):
                error = msgspec.json.decode(error_path(entry.path).read_bytes())
            if not isinstance(error, dict):
                listed.append(RejectedFile(entry.path, entry.count, None, "no error file next to it"))
                continue
            status = error.get("status")
            attempts = error.get("attempts")
            listed.append(
                RejectedFile(
                    path=entry.path,
                    records=entry.count,
                    status=status if isinstance(status, int) else None,
                    reason=refusal_reason(error),
                    attempts=attempts if isinstance(attempts, int) else None,
                    rejected_at=error.get("rejected_at") if isinstance(error.get("rejected_at"), str) else None,
                )
            )
        return listed

    def split(self, batch: SpooledBatch, *, reason: str = "too large for the centre (413)") -> list[SpooledBatch]:
        """Replace ``batch`` by its two halves; ids are derived from the parent's.

        Used after a 413, and to find the records the centre refuses (or fails on) when its answer
        names none: bisecting isolates them while the others are stored. A batch of one record
        cannot be split: the caller rejects it instead.
        """
        if batch.count < 2:
            raise ValueError("a batch of one record cannot be split")
        half = batch.count // 2
        with self._mutex:
            if not batch.path.exists():
                return []  # dropped by the size bound while it was being sent
            children = [
                self._child(batch, batch.records[:half], "split-1-of-2"),
                self._child(batch, batch.records[half:], "split-2-of-2"),
            ]
            self._leave_queue(batch)
        logger.info(
            "batch split in two",
            extra={
                "batch_id": batch.batch_id,
                "records": batch.count,
                "reason": reason,
                "into": [c.batch_id for c in children],
                "into_records": [c.count for c in children],
            },
        )
        return children

    def reject(
        self,
        batch: SpooledBatch,
        *,
        status: int | None,
        response: Any,
        record_indexes: set[int] | None = None,
        attempts: int | None = None,
    ) -> SpooledBatch | None:
        """Move refused records to ``rejected/`` with the server's answer next to them.

        With ``record_indexes`` (the records the server named), only those are rejected and
        the others go on in a new batch (returned): one bad record must not cost a batch's
        worth of good measurements. Without it, or when it names every record, the whole
        batch is rejected. ``attempts``: how many times the centre gave that answer (repeated
        500s), kept in the error file.
        """
        with self._mutex:
            if not batch.path.exists():
                return None
            named = {i for i in (record_indexes or set()) if 0 <= i < batch.count}
            now_ns = self._clock_ns()
            error = {
                "status": status,
                "response": response,
                "batch_id": batch.batch_id,
                "rejected_at": iso_of_ns(now_ns),
            }
            if attempts is not None:
                error["attempts"] = attempts
            if not named or len(named) == batch.count:
                name = batch.path.name
                self._write_atomic(self.rejected_dir, error_file_name(name), SPOOL_ENCODER.encode(error))
                os.replace(batch.path, self.rejected_dir / name)
                fsync_dir(self.rejected_dir)
                rest = None
                rejected_count = batch.count
            else:
                bad = [batch.records[i] for i in sorted(named)]
                good = [r for i, r in enumerate(batch.records) if i not in named]
                _, name, body = _derived_file(batch, bad, "rejected")
                error["record_indexes"] = sorted(named)  # positions in the batch the server's paths refer to
                self._write_atomic(self.rejected_dir, error_file_name(name), SPOOL_ENCODER.encode(error))
                self._write_atomic(self.rejected_dir, name, body)
                rest = self._child(batch, good, "accepted-part")
                rejected_count = len(bad)
            self._leave_queue(batch)
        logger.error(
            "the centre refused records; kept in the spool's rejected/ folder",
            extra={
                "batch_id": batch.batch_id,
                "status": status,
                "records_rejected": rejected_count,
                "records_resent": 0 if rest is None else rest.count,
                "rejected_file": str(self.rejected_dir / name),
                "response": response,
                **({"attempts": attempts} if attempts is not None else {}),
            },
        )
        return rest

    def note_server_error(self, batch: SpooledBatch, *, status: int | None, response: Any) -> int:
        """Count one more server error (500) in a row for ``batch``; returns the count so far.

        Kept on disk next to the batch (``<name>.error.json``, with the last answer) so that the
        count survives a restart and adds up across ``once`` runs. 0 if the batch is gone.
        """
        with self._mutex:
            if not batch.path.exists():
                return 0
            previous = 0
            with contextlib.suppress(OSError, msgspec.DecodeError, TypeError, ValueError):
                previous = int(msgspec.json.decode(error_path(batch.path).read_bytes()).get("attempts", 0))
            attempts = previous + 1
            error = {
                "status": status,
                "response": response,
                "batch_id": batch.batch_id,
                "attempts": attempts,
                "last_at": iso_of_ns(self._clock_ns()),
            }
            self._write_atomic(self.batches_dir, error_path(batch.path).name, SPOOL_ENCODER.encode(error))
            return attempts

    def clear_server_errors(self, batch: SpooledBatch) -> None:
        """Any other answer breaks a run of 500s: the next 500 counts from one again."""
        with self._mutex:
            if unlink_quietly(error_path(batch.path)):
                fsync_dir(self.batches_dir)

    def requeue_rejected(self) -> int:
        """Put every rejected batch back in the queue (after the cause was fixed); returns how many."""
        moved = 0
        with self._mutex:
            for entry in self._entries(self.rejected_dir):
                os.replace(entry.path, self.batches_dir / entry.path.name)
                for extra in entry.extra:
                    unlink_quietly(extra)
                moved += 1
            if moved:
                fsync_dir(self.batches_dir)
                fsync_dir(self.rejected_dir)
        return moved

    # -- internals ----------------------------------------------------------------------------

    def _child(self, parent: SpooledBatch, records: list[msgspec.Raw], role: str) -> SpooledBatch:
        batch_id, name, body = _derived_file(parent, records, role)
        path = self._write_atomic(self.batches_dir, name, body)
        return SpooledBatch(
            batch_id=batch_id, path=path, created_ns=parent.created_ns, records=records, split_from=parent.batch_id
        )

    def _leave_queue(self, batch: SpooledBatch) -> None:
        """``batch`` (unless already moved away) and its count of 500s leave ``batches/``.

        The count goes after the batch itself: a crash in between keeps a count, not a batch.
        """
        unlink_quietly(batch.path)
        unlink_quietly(error_path(batch.path))
        fsync_dir(self.batches_dir)


def _derived_file(parent: SpooledBatch, records: list[msgspec.Raw], role: str) -> tuple[str, str, bytes]:
    """(id, file name, contents) of a batch of some of ``parent``'s records: its id derived from the parent's for
    ``role``, its time the parent's (it keeps its place in the queue)."""
    batch_id = derived_id(parent.batch_id, role)
    body = BatchFile(
        batch_id=batch_id, created_at=iso_of_ns(parent.created_ns), split_from=parent.batch_id, records=records
    )
    return batch_id, batch_name(parent.created_ns, batch_id, len(records)), SPOOL_ENCODER.encode(body)
