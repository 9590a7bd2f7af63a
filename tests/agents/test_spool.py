"""The on-disk spool: durable before upload, stable batch ids, nothing lost or doubled by a crash."""

from __future__ import annotations

import json
import logging
import os
import shutil
import textwrap
import uuid
from pathlib import Path

import msgspec
import pytest

from agents.spool import Spool, SpoolBusyError, SpoolError, records_as_dicts
from tests.agents.conftest import run_agent, run_python
from tests.agents.uploading import host_tcp_record


def rec(n: int) -> dict:
    return host_tcp_record(n, f"2026-03-01T11:{n // 60:02d}:{n % 60:02d}Z")


class Clock:
    """Deterministic nanosecond clock: each reading is 1 s later."""

    def __init__(self, start_ns: int = 1_772_362_800 * 10**9) -> None:
        self.ns = start_ns

    def __call__(self) -> int:
        self.ns += 10**9
        return self.ns


def make_spool(path: Path, **kwargs) -> Spool:
    kwargs.setdefault("clock_ns", Clock())
    return Spool(path, **kwargs).open()


def hosts_of(spool: Spool) -> list[str]:
    return [r["host"] for batch in spool.batches() for r in records_as_dicts(batch)]


def test_append_is_on_disk_and_counted_before_anything_else(tmp_path):
    spool = make_spool(tmp_path / "spool", batch_max_records=100)

    assert spool.append([rec(1), rec(2)], source="host_tcp[0]") == 2
    assert spool.append([rec(3)], source="host_tcp[0]") == 1

    chunks = sorted((tmp_path / "spool" / "pending").iterdir())
    assert len(chunks) == 2
    first = json.loads(chunks[0].read_bytes())
    assert [r["host"] for r in first["records"]] == ["h1", "h2"] and first["source"] == "host_tcp[0]"
    status = spool.status()
    assert (status.pending_records, status.pending_chunks, status.batches, status.records_waiting) == (3, 2, 0, 3)
    assert list((tmp_path / "spool" / "tmp").iterdir()) == []


def test_seal_packs_chunks_oldest_first_within_the_batch_size(tmp_path):
    spool = make_spool(tmp_path, batch_max_records=3)
    spool.append([rec(1), rec(2)])
    spool.append([rec(3), rec(4)])
    spool.append([rec(5)])
    spool.append([rec(6), rec(7), rec(8), rec(9)])  # more than a batch: cut into chunks of <= 3

    spool.seal()

    batches = list(spool.batches())
    assert [b.count for b in batches] == [2, 3, 3, 1]
    assert hosts_of(spool) == [f"h{n}" for n in range(1, 10)]
    assert spool.status().pending_records == 0 and spool.status().batch_records == 9


def test_batch_id_is_stable_across_reopen_and_retries(tmp_path):
    spool = make_spool(tmp_path)
    spool.append([rec(1), rec(2)])
    spool.seal()
    first = spool.next_batch()
    spool.seal()  # nothing pending: no new batch, the old one untouched
    spool.close()

    # a new process after a crash or a timeout
    again = make_spool(tmp_path).next_batch()

    assert again.batch_id == first.batch_id
    assert uuid.UUID(again.batch_id).version == 4
    assert again.records == first.records


def test_ack_removes_only_that_batch(tmp_path):
    spool = make_spool(tmp_path, batch_max_records=1)
    spool.append([rec(1), rec(2)])
    spool.seal()
    oldest = spool.next_batch()

    spool.ack(oldest)

    assert hosts_of(spool) == ["h2"]
    spool.ack(oldest)  # a second ack (duplicate answer) is harmless


_KILLED_BEFORE_RENAME = textwrap.dedent("""
    import os, sys
    from agents.spool import Spool
    spool = Spool(sys.argv[1]).open()
    spool.append([{"n": 1}, {"n": 2}])         # durable
    real_replace = os.replace
    def killed(src, dst):
        os._exit(137)                             # SIGKILL-like: the data is fsync'd, the rename never happens
    os.replace = killed
    spool.append([{"n": 3}])
    print("not reached")
""")


def test_a_kill_between_write_and_rename_leaves_no_partial_record(tmp_path):
    spool_dir = tmp_path / "spool"

    proc = run_python(_KILLED_BEFORE_RENAME, str(spool_dir))

    assert proc.returncode == 137, proc.stderr
    leftovers = list((spool_dir / "tmp").iterdir())
    assert len(leftovers) == 1  # the complete-but-unrenamed third chunk
    spool = make_spool(spool_dir)  # the next start
    assert list((spool_dir / "tmp").iterdir()) == []
    spool.seal()
    assert [r["n"] for b in spool.batches() for r in records_as_dicts(b)] == [1, 2]


def test_a_half_written_leftover_is_ignored_and_cleaned_at_start(tmp_path, caplog):
    spool = make_spool(tmp_path)
    spool.append([rec(1)])
    spool.close()
    (tmp_path / "tmp" / "00000000000000000001-abcdef012345-n5.json.999.1.tmp").write_bytes(b'{"records": [{"ty')
    (tmp_path / "pending" / "notes.txt").write_text("not a spool file")  # foreign files are left alone

    with caplog.at_level(logging.WARNING, logger="agents.spool"):
        spool = make_spool(tmp_path)

    assert spool.status().records_waiting == 1
    assert list((tmp_path / "tmp").iterdir()) == []
    assert any(getattr(r, "tmp_removed", 0) == 1 for r in caplog.records)


def test_a_crash_after_forming_a_batch_does_not_send_records_twice(tmp_path):
    spool = make_spool(tmp_path)
    spool.append([rec(1)])
    spool.append([rec(2)])
    saved = tmp_path.parent / "saved-chunks"
    shutil.copytree(tmp_path / "pending", saved)
    spool.seal()
    spool.close()
    # the crash: the batch file was written, the chunks were not deleted yet
    for chunk in saved.iterdir():
        shutil.copy(chunk, tmp_path / "pending" / chunk.name)

    spool = make_spool(tmp_path)
    spool.seal()

    assert sorted(hosts_of(spool)) == ["h1", "h2"]
    assert spool.status().batches == 1


def test_split_halves_with_ids_derived_from_the_parent(tmp_path):
    spool = make_spool(tmp_path, batch_max_records=10)
    spool.append([rec(n) for n in range(5)])
    spool.append([rec(9)])
    spool.seal()
    (parent,) = list(spool.batches())
    spool.append([rec(50)])  # newer data, formed into a later batch
    spool.seal()

    children = spool.split(parent)

    assert [c.count for c in children] == [3, 3]
    assert [c.batch_id for c in children] == [
        str(uuid.uuid5(uuid.UUID(parent.batch_id), f"split-{i}-of-2")) for i in (1, 2)
    ]
    assert not parent.path.exists()
    waiting = list(spool.batches())
    # the halves keep the parent's place in the queue: before the newer batch
    assert {b.batch_id for b in waiting[:2]} == {c.batch_id for c in children}
    assert sorted(hosts_of(spool)) == sorted(["h0", "h1", "h2", "h3", "h4", "h9", "h50"])
    with pytest.raises(ValueError):
        spool.split(next(b for b in waiting if b.count == 1))


def test_a_crash_during_a_split_resplits_to_the_same_ids(tmp_path):
    spool = make_spool(tmp_path)
    spool.append([rec(n) for n in range(4)])
    spool.seal()
    parent = spool.next_batch()
    parent_bytes = parent.path.read_bytes()
    children = spool.split(parent)
    parent.path.write_bytes(parent_bytes)  # the crash: children written, parent not yet deleted
    children[1].path.unlink()  # ... and only the first child had reached the disk
    spool.close()

    spool = make_spool(tmp_path)

    assert [b.batch_id for b in spool.batches()] == [parent.batch_id]  # the lone child is gone
    again = spool.split(spool.next_batch())
    assert [c.batch_id for c in again] == [c.batch_id for c in children]
    assert [c.records for c in again] == [c.records for c in children]


def test_a_rejected_batch_is_kept_with_the_servers_answer(tmp_path):
    spool = make_spool(tmp_path)
    spool.append([rec(1), rec(2)])
    spool.seal()
    batch = spool.next_batch()
    answer = {"errors": [{"path": "", "message": "sent_at is 900 s ahead of the receiver's clock"}]}

    assert spool.reject(batch, status=400, response=answer) is None

    assert spool.next_batch() is None
    kept = tmp_path / "rejected" / batch.path.name
    assert json.loads(kept.read_bytes())["batch_id"] == batch.batch_id
    error = json.loads((tmp_path / "rejected" / batch.path.name.replace(".json", ".error.json")).read_bytes())
    assert (error["status"], error["response"], error["batch_id"]) == (400, answer, batch.batch_id)
    status = spool.status()
    assert (status.rejected_batches, status.rejected_records, status.records_waiting) == (1, 2, 0)

    # after the cause is fixed, an operator re-queues it: same batch id again
    assert spool.requeue_rejected() == 1
    assert spool.next_batch().batch_id == batch.batch_id
    assert spool.status().rejected_batches == 0


def test_only_the_named_records_are_rejected_and_the_rest_goes_on(tmp_path):
    spool = make_spool(tmp_path)
    spool.append([rec(n) for n in range(5)])
    spool.seal()
    batch = spool.next_batch()
    answer = {
        "errors": [
            {"path": "records[1].site", "message": "unknown site 'RAL'"},
            {"path": "records[3]", "message": "may not send"},
        ]
    }

    rest = spool.reject(batch, status=403, response=answer, record_indexes={1, 3})

    assert rest.batch_id == str(uuid.uuid5(uuid.UUID(batch.batch_id), "accepted-part"))
    assert [r["host"] for r in records_as_dicts(rest)] == ["h0", "h2", "h4"]
    assert hosts_of(spool) == ["h0", "h2", "h4"]
    (rejected,) = [p for p in (tmp_path / "rejected").iterdir() if not p.name.endswith(".error.json")]
    assert [r["host"] for r in json.loads(rejected.read_bytes())["records"]] == ["h1", "h3"]
    error = json.loads(rejected.with_name(rejected.name.replace(".json", ".error.json")).read_bytes())
    assert error["record_indexes"] == [1, 3] and error["response"] == answer and error["status"] == 403


def test_the_spool_is_bounded_and_drops_the_oldest_with_a_count(tmp_path, caplog):
    spool = make_spool(tmp_path, max_bytes=10**9)
    spool.append([rec(0)])
    chunk_bytes = next((tmp_path / "pending").iterdir()).stat().st_size
    spool.max_bytes = chunk_bytes * 5 + chunk_bytes // 2  # room for 5 such chunks

    with caplog.at_level(logging.WARNING, logger="agents.spool"):
        for n in range(1, 8):
            spool.append([rec(n)])

    spool.seal()
    assert sorted(hosts_of(spool)) == ["h3", "h4", "h5", "h6", "h7"]  # the 3 oldest are gone
    dropped = [r for r in caplog.records if r.getMessage() == "spool full: dropped the oldest data"]
    assert sum(r.dropped_records for r in dropped) == 3
    assert spool.status().bytes <= spool.max_bytes


def test_rejected_data_is_dropped_before_data_still_to_send(tmp_path):
    spool = make_spool(tmp_path, max_bytes=10**9)
    spool.append([rec(0), rec(1)])
    spool.seal()
    spool.reject(spool.next_batch(), status=400, response={"errors": []})
    spool.append([rec(2)])
    spool.max_bytes = spool.status().bytes + 10  # full

    spool.append([rec(3)])

    assert spool.status().rejected_batches == 0
    spool.seal()
    assert sorted(hosts_of(spool)) == ["h2", "h3"]


def test_one_writer_at_a_time_but_status_reads_alongside(tmp_path):
    writer = make_spool(tmp_path)
    writer.append([rec(1)])

    with pytest.raises(SpoolBusyError, match=f"pid {os.getpid()}"):
        Spool(tmp_path).open()
    assert Spool(tmp_path).status().records_waiting == 1  # `wanmon-agent spool` while the daemon runs

    writer.close()
    Spool(tmp_path).open().close()  # released


def test_an_unreadable_batch_file_is_quarantined_not_deleted(tmp_path):
    spool = make_spool(tmp_path)
    spool.append([rec(1)])
    spool.seal()
    batch = spool.next_batch()
    batch.path.write_bytes(b"\x00garbage")  # disk corruption
    spool.close()

    spool = make_spool(tmp_path)

    assert spool.next_batch() is None
    assert (tmp_path / "rejected" / batch.path.name).read_bytes() == b"\x00garbage"
    assert (
        "unreadable batch file" in (tmp_path / "rejected" / batch.path.name.replace(".json", ".error.json")).read_text()
    )


def test_status_reports_the_age_of_the_oldest_waiting_data(tmp_path):
    clock = Clock()
    spool = make_spool(tmp_path, clock_ns=clock)
    assert spool.status().oldest_age_s is None
    spool.append([rec(1)])
    written_ns = clock.ns
    spool.append([rec(2)])

    status = spool.status(now_ns=written_ns + 3600 * 10**9)

    assert status.oldest_age_s == pytest.approx(3600.0)
    assert msgspec.json.decode(msgspec.json.encode(status.to_dict()))["records_waiting"] == 2


def test_an_unusable_spool_directory_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")

    with pytest.raises(SpoolError, match=f"cannot use spool {blocker / 'spool'}: Not a directory"):
        Spool(blocker / "spool").open()


def error_file(path: Path) -> Path:
    return path.with_name(path.name.replace(".json", ".error.json"))


def test_a_batchs_500_count_is_kept_on_disk_across_restarts_and_goes_with_the_batch(tmp_path):
    spool = make_spool(tmp_path)
    spool.append([rec(n) for n in range(4)])
    spool.seal()
    batch = spool.next_batch()
    answer = {"detail": "Internal Server Error"}

    assert [spool.note_server_error(batch, status=500, response=answer) for _ in range(2)] == [1, 2]
    spool.close()
    spool = make_spool(tmp_path)  # a restart, or the next `wanmon-agent once`
    batch = spool.next_batch()
    assert spool.note_server_error(batch, status=500, response=answer) == 3

    count = json.loads(error_file(batch.path).read_bytes())
    assert (count["status"], count["attempts"], count["response"], count["batch_id"]) == (
        500,
        3,
        answer,
        batch.batch_id,
    )
    status = spool.status()
    assert (status.batches, status.batch_records) == (1, 4)  # the count file is not a batch...
    assert status.bytes == batch.path.stat().st_size + error_file(batch.path).stat().st_size  # ...but takes room

    spool.clear_server_errors(batch)  # another answer (503, a timeout) broke the run
    assert not error_file(batch.path).exists()
    assert spool.note_server_error(batch, status=500, response=answer) == 1

    first, second = spool.split(batch, reason="HTTP 500 3 times in a row")
    # the halves start from zero: the parent's count went with it
    assert sorted(os.listdir(tmp_path / "batches")) == sorted([first.path.name, second.path.name])
    spool.note_server_error(first, status=500, response=answer)
    spool.ack(first)
    spool.note_server_error(second, status=500, response=answer)
    assert spool.reject(second, status=500, response=answer, attempts=3) is None

    assert os.listdir(tmp_path / "batches") == []
    parked_error = json.loads(error_file(tmp_path / "rejected" / second.path.name).read_bytes())
    assert (parked_error["status"], parked_error["attempts"], parked_error["response"]) == (500, 3, answer)


def test_start_up_removes_a_500_count_whose_batch_is_gone(tmp_path, caplog):
    spool = make_spool(tmp_path)
    spool.append([rec(1)])
    spool.seal()
    spool.append([rec(2)])
    spool.seal()
    gone, kept = list(spool.batches())
    for batch in (gone, kept):
        spool.note_server_error(batch, status=500, response="boom")
    gone.path.unlink()  # the crash: the batch was acknowledged, its count not yet deleted
    spool.close()

    with caplog.at_level(logging.WARNING, logger="agents.spool"):
        spool = make_spool(tmp_path)

    assert sorted(os.listdir(tmp_path / "batches")) == sorted([kept.path.name, error_file(kept.path).name])
    (recovered,) = [r for r in caplog.records if r.getMessage() == "spool recovered from an interrupted run"]
    assert recovered.error_files_removed == 1
    assert spool.note_server_error(kept, status=500, response="boom") == 2


def test_every_parked_file_is_listed_with_the_reason_by_the_spool_command(tmp_path):
    from tests.agents.conftest import write_config

    config = write_config(tmp_path, url="http://127.0.0.1:9")
    spool = make_spool(tmp_path / "spool")
    for n in range(3):
        spool.append([rec(10 * n), rec(10 * n + 1)])
        spool.seal()
    refused, failing, readable = list(spool.batches())
    answer = {"errors": [{"path": "", "message": "conflicts with stored data"}, {"path": "", "message": "again"}]}
    spool.reject(refused, status=409, response=answer)
    spool.reject(failing, status=500, response="<h1>Server Error (500)</h1>", attempts=3)
    readable.path.write_bytes(b"\x00")  # unreadable: quarantined on the next read
    assert spool.next_batch() is None
    spool.close()

    listed = {r.path.name: r for r in Spool(tmp_path / "spool").rejected()}

    assert listed[refused.path.name].reason == "(batch): conflicts with stored data (and 1 more)"
    assert (listed[refused.path.name].status, listed[refused.path.name].records) == (409, 2)
    assert (listed[failing.path.name].status, listed[failing.path.name].attempts) == (500, 3)
    assert listed[failing.path.name].reason == "<h1>Server Error (500)</h1>"
    assert listed[readable.path.name].status is None and "unreadable batch file" in listed[readable.path.name].reason
    out = run_agent("spool", "--config", str(config), check=True).stdout
    assert f"rejected:         3 batches, 6 records (see {tmp_path / 'spool' / 'rejected'})" in out
    assert f"  {refused.path.name}: 2 records, HTTP 409 at " in out
    assert f"  {failing.path.name}: 2 records, HTTP 500 3 times at " in out
    as_json = json.loads(run_agent("spool", "--config", str(config), "--json", check=True).stdout)
    assert sorted(r["file"] for r in as_json["rejected_files"]) == sorted(
        str(tmp_path / "spool" / "rejected" / b.path.name) for b in (refused, failing, readable)
    )
