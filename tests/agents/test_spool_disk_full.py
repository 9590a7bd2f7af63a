"""The spool on a full file system: what goes to make room is counted, whatever was being written."""

from __future__ import annotations

import errno

from tests.agents.test_spool import make_spool, rec


def test_a_batch_whose_own_chunks_all_go_to_make_room_still_counts_their_records(tmp_path, monkeypatch):
    # given: three records pending, and no room for a batch file
    spool = make_spool(tmp_path / "spool")
    spool.append([rec(n) for n in range(3)])
    write = spool._write_atomic

    def full_for_batches(directory, name, data):
        if directory == spool.batches_dir:
            raise OSError(errno.ENOSPC, "No space left on device")
        return write(directory, name, data)

    monkeypatch.setattr(spool, "_write_atomic", full_for_batches)
    # when: sealing drops the oldest data, the batch's own chunk, until nothing of the batch is left
    assert spool.seal() == 0
    # then: the records are gone, and counted as dropped
    status = spool.status()
    assert (status.records_waiting, status.dropped_records) == (0, 3)
