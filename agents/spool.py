"""The agent's durable on-disk spool: nothing collected is lost to a crash or a central outage.

Layout under ``spool_dir``::

    pending/   chunks of records as collected, not yet in a batch
               <created_ns:020d>-<random>-n<records>.json
    batches/   batches formed from chunks, each with its batch_id, waiting for the centre's ack
               <created_ns:020d>-<batch_id>-n<records>.json
               <same name>.error.json while the centre answers that batch 500 (count, last answer)
    rejected/  batches (or the records of a batch) the centre refused (400/403/409, 413 for a
               single record, 500 repeated for a single record) or that could not be read,
               each with the server's answer next to it: <same name>.error.json
    tmp/       files being written; anything here at start is a half-written leftover
    lock       held (flock) by the one process that writes: `run` or `once`

Invariants, and why they hold across a crash at any instruction:

* A record is on disk before anything is uploaded: :meth:`Spool.append` writes the chunk to
  ``tmp/``, fsyncs it, renames it into ``pending/`` (atomic) and fsyncs the directory before
  it returns. A crash before the rename leaves only a ``tmp/`` file, removed at the next start.
* A batch keeps its ``batch_id`` for life: the id is stored in the batch file, which is only
  ever renamed or deleted, never rewritten. A retry after a timeout or a crash re-sends the
  same id, and the centre answers ``duplicate: true`` if it had stored it already.
* Forming a batch writes the batch file (listing its source chunks) and only then deletes
  the chunks; :meth:`Spool.recover` deletes chunks still listed by a batch, so a record is
  never in two batches.
* Splitting a batch (413; a refusal that names no record; repeated 500s; keeping the good
  records of a refused batch) derives the new ids from the parent's id (uuid5), writes the
  children, then deletes the parent. If the
  parent still exists at start, its children are deleted and it is split again, to the same
  ids and contents: nothing is sent twice under two different ids.
* A batch's 500 count (``.error.json`` next to it in ``batches/``) is on disk, so that a
  restart or a ``once`` run every few minutes still gets to split it; it goes with its batch,
  and :meth:`Spool.recover` deletes one whose batch is gone.
* Files leave ``batches/`` only after a 200 (``duplicate: true`` included), or into
  ``rejected/`` with the reason: never silently.
* The spool is bounded (``max_bytes``): beyond it the OLDEST data is dropped, rejected
  batches first (they will not be sent anyway), and the number of records dropped is logged.
  A file system that fills up before that (ENOSPC, EDQUOT) is handled the same way: the oldest
  data makes room for the new, one file at a time, never a crash. Records dropped either way are
  counted in ``dropped.json`` (``wanmon-agent spool`` shows the total).

Times in file names are nanoseconds since the epoch, zero-padded so that name order is age
order. Record counts are in the names too, so :meth:`Spool.status` never reads file contents.

The file names, formats and the values read from them are in agents/spool_files.py. The spool also handles the
centre's refusals: it splits a batch, parks refused records in ``rejected/``, counts repeated server errors and
puts parked batches back.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec

from agents.spool_files import (
    BATCH_DECODER,
    BATCH_NAME_RE,
    BATCHES_DIR,
    CHUNK_DECODER,
    DISK_FULL_ERRNOS,
    DROPPED_FILE,
    ERROR_SUFFIX,
    PENDING_DIR,
    REJECTED_DIR,
    SPOOL_ENCODER,
    SPOOL_FORMAT,
    TMP_DIR,
    BatchFile,
    ChunkFile,
    RejectedFile,
    SpoolBusyError,
    SpooledBatch,
    SpoolEntry,
    SpoolError,
    SpoolStatus,
    batch_name,
    batch_of_error,
    derived_id,
    error_file_name,
    error_path,
    fsync_dir,
    iso_of_ns,
    list_dir,
    logger,
    mtime_of,
    records_as_dicts,
    refusal_reason,
    size_of,
    unlink_quietly,
)

__all__ = [
    "SPOOL_FORMAT",
    "RejectedFile",
    "Spool",
    "SpoolBusyError",
    "SpoolError",
    "SpoolStatus",
    "SpooledBatch",
    "records_as_dicts",
]


class Spool:
    """The on-disk queue between the collectors and the uploader (see the module docstring).

    ``clock_ns`` returns nanoseconds since the epoch (injectable for tests). Methods are
    thread-safe; one process at a time may write (:meth:`lock`), any may read :meth:`status`.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_bytes: int = 1024**3,
        batch_max_records: int = 1000,
        clock_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        if batch_max_records < 1:
            raise ValueError("batch_max_records must be >= 1")
        self.root = Path(root)
        self.pending_dir = self.root / PENDING_DIR  # chunks appended, not yet in a batch
        self.batches_dir = self.root / BATCHES_DIR  # batches waiting for the centre
        self.rejected_dir = self.root / REJECTED_DIR  # records the centre refused, with its answer
        self.tmp_dir = self.root / TMP_DIR  # files being written (renamed into place when complete)
        self.max_bytes = max_bytes
        self.batch_max_records = batch_max_records
        self._clock_ns = clock_ns
        self._mutex = threading.RLock()
        self._lock_fd: int | None = None

    # -- set-up -------------------------------------------------------------------------------

    def open(self) -> Spool:
        """Take the write lock, create the directories and recover from any crash. Returns self."""
        try:
            for directory in (self.root, self.pending_dir, self.batches_dir, self.rejected_dir, self.tmp_dir):
                directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.lock()
            self.recover()
        except SpoolError:
            raise
        except OSError as exc:
            self.close()
            raise SpoolError(f"cannot use spool {self.root}: {exc.strerror or exc}") from exc
        return self

    def close(self) -> None:
        """Release the write lock."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = None

    def __enter__(self) -> Spool:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def lock(self) -> None:
        """Become the spool's only writer, or raise SpoolBusyError naming the holder."""
        if self._lock_fd is not None:
            return
        path = self.root / "lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise SpoolBusyError(f"spool {self.root} is in use by another wanmon-agent (pid {holder})") from None
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def recover(self) -> dict[str, int]:
        """Repair what a crash may have left (module docstring); returns counts of what was done."""
        with self._mutex:
            done = {
                "tmp_removed": 0,
                "chunks_already_batched": 0,
                "split_children_removed": 0,
                "quarantined": 0,
                "error_files_removed": 0,
            }
            for leftover in list_dir(self.tmp_dir):
                unlink_quietly(leftover)
                done["tmp_removed"] += 1
            headers: dict[Path, BatchFile] = {}
            for entry in self._entries(self.batches_dir):
                try:
                    headers[entry.path] = BATCH_DECODER.decode(entry.path.read_bytes())
                except (OSError, msgspec.DecodeError) as exc:
                    self._quarantine(entry.path, f"unreadable batch file: {exc}")
                    done["quarantined"] += 1
            ids = {header.batch_id for header in headers.values()}
            for path, header in headers.items():
                for chunk in header.chunks:
                    if unlink_quietly(self.pending_dir / chunk):
                        done["chunks_already_batched"] += 1
                if header.split_from is not None and header.split_from in ids:
                    unlink_quietly(path)  # the parent is still here: it will be split again, to the same ids
                    done["split_children_removed"] += 1
            # A 500 count whose batch is gone (acked, split or rejected just before a crash) is stale.
            for sidecar in list_dir(self.batches_dir):
                if sidecar.name.endswith(ERROR_SUFFIX) and not batch_of_error(sidecar).exists():
                    unlink_quietly(sidecar)
                    done["error_files_removed"] += 1
            # Chunks are not read here (start-up stays fast with a large spool): an unreadable one is
            # quarantined when seal() reads it.
            for directory in (self.tmp_dir, self.pending_dir, self.batches_dir):
                fsync_dir(directory)
            if any(done.values()):
                logger.warning("spool recovered from an interrupted run", extra={"spool": str(self.root), **done})
            return done

    # -- writing ------------------------------------------------------------------------------

    def append(self, records: Sequence[Any], *, source: str = "") -> int:
        """Durably store ``records`` (Records or JSON-ready dicts); returns how many were stored.

        Returns only after the data is fsync'd and renamed into ``pending/``. Large lists are
        cut into chunks of at most ``batch_max_records`` so a chunk always fits in a batch.
        """
        if not records:
            return 0
        encoded = [msgspec.Raw(SPOOL_ENCODER.encode(record)) for record in records]
        with self._mutex:
            now_ns = self._clock_ns()
            created_at = iso_of_ns(now_ns)
            for part_index, start in enumerate(range(0, len(encoded), self.batch_max_records)):
                part = encoded[start : start + self.batch_max_records]
                body = SPOOL_ENCODER.encode(ChunkFile(created_at=created_at, source=source, records=part))
                # +1 ns per part: names sort in record order even within one call
                name = f"{now_ns + part_index:020d}-{uuid.uuid4().hex[:12]}-n{len(part)}.json"
                self._write_making_room(self.pending_dir, lambda name=name, body=body: (name, body))
            self._enforce_limit()
        return len(encoded)

    def _write_making_room(
        self,
        directory: Path,
        make: Callable[[], tuple[str, bytes] | None],
        dropping: Callable[[SpoolEntry], None] = lambda entry: None,
    ) -> Path | None:
        """:meth:`_write_atomic` of the file ``make()`` gives (name, bytes; None: nothing left to write). When the
        file system is full, drop the oldest data one file at a time (rejected first, as for ``max_bytes``), tell
        ``dropping`` which (the file may have to be made again without it) and try again. Raises only when nothing
        is left to drop."""
        dropped: list[tuple[SpoolEntry, bool]] = []
        uncounted = 0  # records dropped but not yet in dropped.json: the count is written first, in the room made
        try:
            while (made := make()) is not None:
                try:
                    if uncounted:
                        self._dropped_store(self._dropped_total() + uncounted)
                        uncounted = 0
                    return self._write_atomic(directory, *made)
                except OSError as exc:
                    if exc.errno not in DISK_FULL_ERRNOS:
                        raise
                    oldest = next(self._drop_order(), None)
                    if oldest is None:
                        raise
                    self._drop(oldest[0])
                    dropped.append(oldest)
                    uncounted += 0 if oldest[1] else oldest[0].count
                    dropping(oldest[0])
            return None
        finally:
            if uncounted:
                # Nothing was written after the last drops (all the file was made of went with them, or the
                # disk stayed full): their records are counted all the same, if the count fits.
                with contextlib.suppress(OSError):
                    self._dropped_store(self._dropped_total() + uncounted)
            if dropped:
                self._dropped_report(dropped, reason="file system full: dropped the oldest data", stored=True)

    def seal(self) -> int:
        """Pack pending chunks, oldest first, into batches of at most ``batch_max_records``.

        Returns the number of batches formed. A batch takes the creation time of its oldest
        chunk, so batches are uploaded in the order their data was collected.
        """
        with self._mutex:
            chunks = self._entries(self.pending_dir)
            formed = 0
            group: list[SpoolEntry] = []
            for chunk in chunks:
                if group and sum(c.count for c in group) + chunk.count > self.batch_max_records:
                    formed += self._form_batch(group)
                    group = []
                group.append(chunk)
            if group:
                formed += self._form_batch(group)
            return formed

    def _form_batch(self, chunks: list[SpoolEntry]) -> int:
        parts: list[tuple[SpoolEntry, list[msgspec.Raw]]] = []
        for chunk in chunks:
            try:
                parts.append((chunk, CHUNK_DECODER.decode(chunk.path.read_bytes()).records))
            except FileNotFoundError:
                continue  # dropped by the size bound meanwhile
            except (OSError, msgspec.DecodeError) as exc:
                self._quarantine(chunk.path, f"unreadable chunk file: {exc}")
                continue
        batch_id = str(uuid.uuid4())
        created_ns = chunks[0].created_ns
        names: list[str] = []

        def make() -> tuple[str, bytes] | None:
            records = [record for _, chunk_records in parts for record in chunk_records]
            if not records:
                return None
            names[:] = [entry.path.name for entry, chunk_records in parts if chunk_records]
            body = BatchFile(batch_id=batch_id, created_at=iso_of_ns(created_ns), chunks=names, records=records)
            return batch_name(created_ns, batch_id, len(records)), SPOOL_ENCODER.encode(body)

        def dropping(victim: SpoolEntry) -> None:
            # A full disk: the batch needs room while its chunks still exist. The oldest data goes, as for
            # append(); a chunk of this very batch that goes leaves the batch with it.
            parts[:] = [p for p in parts if p[0].path != victim.path]

        if self._write_making_room(self.batches_dir, make, dropping) is None:
            return 0
        # Only now may the chunks go: until here a crash leaves them pending (not lost); after the
        # batch file exists, recover() deletes any chunk it lists (never in two batches).
        for name in names:
            unlink_quietly(self.pending_dir / name)
        fsync_dir(self.pending_dir)
        return 1

    # -- reading ------------------------------------------------------------------------------

    def batches(self) -> Iterator[SpooledBatch]:
        """Waiting batches, oldest first (read one at a time; unreadable ones are quarantined)."""
        for entry in self._entries(self.batches_dir):
            batch = self._read_batch(entry)
            if batch is not None:
                yield batch

    def next_batch(self) -> SpooledBatch | None:
        """The oldest waiting batch, or None."""
        with self._mutex:
            return next(self.batches(), None)

    def _read_batch(self, entry: SpoolEntry) -> SpooledBatch | None:
        try:
            data = BATCH_DECODER.decode(entry.path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, msgspec.DecodeError) as exc:
            self._quarantine(entry.path, f"unreadable batch file: {exc}")
            return None
        return SpooledBatch(
            batch_id=data.batch_id,
            path=entry.path,
            created_ns=entry.created_ns,
            records=data.records,
            split_from=data.split_from,
        )

    def status(self, *, now_ns: int | None = None) -> SpoolStatus:
        """Counts from file names only: cheap, read-only, safe while the daemon runs."""
        now_ns = self._clock_ns() if now_ns is None else now_ns
        pending = self._entries(self.pending_dir)
        batches = self._entries(self.batches_dir)
        rejected = self._entries(self.rejected_dir)
        waiting = pending + batches
        oldest = min((e.created_ns for e in waiting), default=None)
        total = sum(e.size_bytes + sum(size_of(p) for p in e.extra) for e in (*waiting, *rejected))
        return SpoolStatus(
            pending_records=sum(e.count for e in pending),
            pending_chunks=len(pending),
            batch_records=sum(e.count for e in batches),
            batches=len(batches),
            oldest_age_s=None if oldest is None else max(0.0, (now_ns - oldest) / 1e9),
            rejected_batches=len(rejected),
            rejected_records=sum(e.count for e in rejected),
            bytes=total,
            max_bytes=self.max_bytes,
            dropped_records=self._dropped_total(),
        )

    # -- outcomes of an upload ----------------------------------------------------------------

    def ack(self, batch: SpooledBatch) -> None:
        """The centre stored the batch (or had it already): forget it."""
        with self._mutex:
            removed = unlink_quietly(batch.path)
            if unlink_quietly(error_path(batch.path)) or removed:
                fsync_dir(self.batches_dir)

    def _write_atomic(self, directory: Path, name: str, data: bytes) -> Path:
        """Write ``data`` under ``directory/name`` so that the file is either absent or complete."""
        tmp = self.tmp_dir / f"{name}.{os.getpid()}.{threading.get_ident()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            unlink_quietly(tmp)
            raise
        os.close(fd)
        target = directory / name
        os.replace(tmp, target)  # atomic within one file system: tmp/ is inside the spool
        fsync_dir(directory)  # the rename itself must survive a power cut
        return target

    def _entries(self, directory: Path) -> list[SpoolEntry]:
        entries: list[SpoolEntry] = []
        try:
            scanned = list(os.scandir(directory))
        except FileNotFoundError:
            return entries
        names = {item.name for item in scanned}
        for item in scanned:
            match = BATCH_NAME_RE.match(item.name)
            if match is None:
                continue
            try:
                size = item.stat().st_size
            except FileNotFoundError:
                continue
            extra = []
            error_name = error_file_name(item.name)
            if error_name in names:
                extra.append(Path(directory, error_name))
            entries.append(SpoolEntry(Path(item.path), int(match["ns"]), int(match["count"]), size, extra))
        entries.sort(key=lambda e: e.path.name)
        return entries

    def _quarantine(self, path: Path, reason: str) -> None:
        """An unreadable file is moved aside with the reason, never deleted: a human may rescue it."""
        name = path.name if BATCH_NAME_RE.match(path.name) else f"{self._clock_ns():020d}-{uuid.uuid4()}-n0.json"
        if path.parent == self.batches_dir:
            unlink_quietly(error_path(path))  # a 500 count of the unreadable batch means nothing now
        with contextlib.suppress(FileNotFoundError):
            os.replace(path, self.rejected_dir / name)
            self._write_atomic(
                self.rejected_dir, error_file_name(name), SPOOL_ENCODER.encode({"status": None, "reason": reason})
            )
            logger.error("unreadable spool file moved to rejected/", extra={"file": str(path), "reason": reason})

    def _drop_order(self) -> Iterator[tuple[SpoolEntry, bool]]:
        """Files in the order they are dropped when space runs out: rejected first, then the oldest waiting."""
        yield from ((e, True) for e in self._entries(self.rejected_dir))
        waiting = self._entries(self.batches_dir) + self._entries(self.pending_dir)
        yield from ((e, False) for e in sorted(waiting, key=lambda e: (e.created_ns, e.path.name)))

    def _drop(self, entry: SpoolEntry) -> None:
        for path in (entry.path, *entry.extra):
            unlink_quietly(path)
        fsync_dir(entry.path.parent)

    def _enforce_limit(self) -> None:
        """Drop the oldest data until the spool fits ``max_bytes`` (rejected first, then waiting)."""
        order = list(self._drop_order())
        total = sum(e.size_bytes + sum(size_of(p) for p in e.extra) for e, _ in order)
        if total <= self.max_bytes:
            return
        dropped: list[tuple[SpoolEntry, bool]] = []
        for entry, is_rejected in order:
            if total <= self.max_bytes:
                break
            total -= entry.size_bytes + sum(size_of(p) for p in entry.extra)
            self._drop(entry)
            dropped.append((entry, is_rejected))
        self._dropped_report(dropped, reason="spool full: dropped the oldest data")

    def _dropped_report(self, dropped: list[tuple[SpoolEntry, bool]], *, reason: str, stored: bool = False) -> None:
        """Log what was dropped and (unless ``stored`` already) add it to the running total in ``dropped.json``."""
        records = sum(e.count for e, rejected in dropped if not rejected)
        oldest = min((e.created_ns for e, rejected in dropped if not rejected), default=None)
        total = self._dropped_total() + (0 if stored else records)
        if not stored:
            with contextlib.suppress(OSError):  # the count must never cost the data it reports on
                self._dropped_store(total)
        logger.warning(
            reason,
            extra={
                "dropped_records": records,
                "dropped_rejected_records": sum(e.count for e, rejected in dropped if rejected),
                "dropped_files": len(dropped),
                "oldest_dropped": None if oldest is None else iso_of_ns(oldest),
                "dropped_records_total": total,
                "max_bytes": self.max_bytes,
            },
        )

    def _dropped_store(self, total: int) -> None:
        self._write_atomic(self.root, DROPPED_FILE, SPOOL_ENCODER.encode({"dropped_records": total}))

    def _dropped_total(self) -> int:
        try:
            value = msgspec.json.decode((self.root / DROPPED_FILE).read_bytes())
        except (OSError, msgspec.DecodeError):
            return 0
        count = value.get("dropped_records") if isinstance(value, dict) else None
        return count if isinstance(count, int) else 0

    # -- the centre's refusals: split a batch, park records in rejected/, count server errors, requeue ------------

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
