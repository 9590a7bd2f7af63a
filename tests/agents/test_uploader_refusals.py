"""Uploads against a real HTTP server on 127.0.0.1: the centre's refusals (4xx), answers that acknowledge nothing,
and batches bisected until only the bad records are parked in rejected/."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from agents.spool import Spool
from agents.uploader import Backoff, envelope_refused, record_indexes
from tests.agents.conftest import FakeCentral, Reply
from tests.agents.uploading import drain_until_settled, hosts, only_rejected_left, parked, poison, run_drain, spool_with


def test_400_rejects_the_named_records_and_sends_the_others(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 4)
    answer = {"errors": [{"path": "records[2].site", "message": "unknown site 'RAL'"}]}
    central.reply(Reply(400, answer))

    report = run_drain(spool, central.url)

    first, second = central.requests
    assert second.batch_id == str(uuid.uuid5(uuid.UUID(first.batch_id), "accepted-part"))
    assert hosts(second.records) == ["h0", "h1", "h3"]
    assert hosts(central.stored_records()) == ["h0", "h1", "h3"]
    (rejected,) = [p for p in spool.rejected_dir.iterdir() if not p.name.endswith(".error.json")]
    assert hosts(json.loads(rejected.read_bytes())["records"]) == ["h2"]
    error = json.loads(rejected.with_name(rejected.name.replace(".json", ".error.json")).read_text())
    assert error["status"] == 400 and error["response"] == answer
    assert (report.rejected_batches, report.sent_records, spool.status().records_waiting) == (1, 3, 0)


def test_a_batch_level_400_rejects_the_whole_batch_and_never_retries_it(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 2, 1)
    central.reply(Reply(400, {"errors": [{"path": "sent_at", "message": "ahead of the receiver's clock"}]}))

    run_drain(spool, central.url)
    run_drain(spool, central.url)

    assert len(central.requests) == 2  # the refused batch once, then the next batch; no retry loop
    assert hosts(central.stored_records()) == ["h2"]
    status = spool.status()
    assert (status.rejected_batches, status.rejected_records, status.records_waiting) == (1, 2, 0)


def test_403_naming_every_record_rejects_the_batch(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 2)
    central.reply(
        Reply(
            403,
            {
                "errors": [
                    {"path": "records[0]", "message": "may not send"},
                    {"path": "records[1]", "message": "may not send"},
                ]
            },
        )
    )

    report = run_drain(spool, central.url)

    assert report.rejected_batches == 1 and len(central.requests) == 1
    assert spool.status().rejected_records == 2


def test_413_splits_in_halves_until_the_batches_fit(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 7)
    too_big = Reply(413, {"errors": [{"path": "", "message": "body too large"}]})
    central.default = lambda request: too_big if len(request.records) > 2 else Reply()

    report = run_drain(spool, central.url)

    sizes = [len(r.records) for r in central.requests]
    assert sizes[0] == 7 and max(sizes[1:]) <= 7 // 2 + 1
    assert sorted(hosts(central.stored_records())) == [f"h{n}" for n in range(7)]  # each exactly once
    assert len(central.stored_records()) == 7
    assert report.split_batches == 3 and spool.status().records_waiting == 0


def test_413_for_a_single_record_rejects_it(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 1)
    central.reply(Reply(413, {"errors": [{"path": "", "message": "body too large"}]}))

    report = run_drain(spool, central.url)

    assert report.rejected_batches == 1 and spool.status().rejected_records == 1


@pytest.mark.parametrize("status", [401, 404, 500])
def test_other_refusals_keep_the_batch_for_a_retry(tmp_path, central: FakeCentral, status):
    spool = spool_with(tmp_path, 1)
    central.reply(Reply(status, {"detail": "no"}))

    report = run_drain(spool, central.url)

    assert report.failed and report.last_error == f"HTTP {status}"
    assert spool.status().records_waiting == 1 and spool.status().rejected_batches == 0


def test_a_200_that_is_not_an_ingest_answer_is_not_an_ack(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 1)
    central.reply(Reply(200, b"<html>captive portal</html>"))

    report = run_drain(spool, central.url)

    assert report.failed and spool.status().records_waiting == 1


def test_record_indexes_only_for_errors_that_all_name_records():
    assert record_indexes({"errors": [{"path": "records[3].x", "message": ""}, {"path": "records[10]"}]}) == {3, 10}
    assert record_indexes({"errors": [{"path": "records[3].x"}, {"path": ""}]}) is None
    assert record_indexes({"errors": []}) is None
    assert record_indexes("<html>") is None
    assert envelope_refused({"errors": [{"path": "records[0].time"}, {"path": "sent_at", "message": "ahead"}]})
    assert not envelope_refused({"errors": [{"path": ""}, {"path": "records"}, {"path": "records[2].sent_at_x"}]})
    assert not envelope_refused("<html>")


@pytest.mark.parametrize(
    "answer",
    [
        {},  # a proxy's empty JSON
        {"status": "ok", "portal": "login required"},  # a captive portal's JSON
        {"batch_id": "{batch_id}"},  # no accepted count
        {"batch_id": "{batch_id}", "accepted": "2"},  # not an integer
        {"batch_id": "{batch_id}", "accepted": True},
        {"batch_id": "6f1c0c8e-1b7e-4c8a-9a53-2f3f1c1d9e01", "accepted": 2, "duplicate": False},  # another batch
    ],
    ids=["empty", "portal", "no-accepted", "accepted-text", "accepted-bool", "other-batch"],
)
def test_a_200_that_does_not_acknowledge_this_batch_keeps_it(tmp_path, central: FakeCentral, caplog, answer):
    spool = spool_with(tmp_path, 2)
    batch_id = spool.next_batch().batch_id
    central.reply(Reply(200, json.loads(json.dumps(answer).replace("{batch_id}", batch_id))))

    with caplog.at_level("INFO"):
        report = run_drain(spool, central.url)

    assert report.failed and (report.sent_batches, report.sent_records) == (0, 0)
    assert spool.status().records_waiting == 2 and spool.next_batch().batch_id == batch_id
    assert [r.getMessage() for r in caplog.records if r.name == "agents.uploader"] == [
        "upload answered 200 but not acknowledged (not the centre's ingest answer); will retry"
    ]
    assert report.last_error.startswith("200 without an acknowledgement of this batch: ")
    # the next pass, answered by the ingest, sends the same batch and then forgets it
    assert run_drain(spool, central.url).sent_records == 2
    assert [r.batch_id for r in central.requests] == [batch_id, batch_id]


def test_an_acknowledgement_with_the_batch_id_written_in_capitals_counts(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 1)
    batch_id = spool.next_batch().batch_id
    central.reply(Reply(200, {"batch_id": batch_id.upper(), "accepted": 1, "duplicate": False}))

    assert run_drain(spool, central.url).sent_batches == 1
    assert spool.status().records_waiting == 0


def test_a_400_naming_no_record_is_bisected_until_only_the_bad_record_is_parked(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 4)
    answer = {"errors": [{"path": "", "message": "could not store the batch"}]}
    central.default = poison("h2", 400, answer)

    reports = drain_until_settled(spool, central.url)

    assert len(reports) == 1 and not reports[0].failed  # refusals never wait: one pass
    assert sorted(hosts(central.stored_records())) == ["h0", "h1", "h3"]
    assert len(central.stored_records()) == 3
    # [4] -> [2]+[2] -> [1]+[1]: five requests, none repeated
    assert sorted(len(r.records) for r in central.requests) == [1, 1, 2, 2, 4]
    assert len({r.batch_id for r in central.requests}) == 5
    ((parked_hosts, error),) = parked(spool)
    assert parked_hosts == ["h2"] and (error["status"], error["response"]) == (400, answer)
    assert (reports[0].sent_records, reports[0].split_batches, reports[0].rejected_batches) == (3, 2, 1)
    status = spool.status()
    assert (status.rejected_batches, status.rejected_records, status.records_waiting) == (1, 1, 0)


def test_a_400_about_records_as_a_whole_parks_every_record_one_by_one(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 3)
    central.default = Reply(400, {"errors": [{"path": "records", "message": "refused"}]})

    drain_until_settled(spool, central.url)

    assert central.stored_records() == []
    assert sorted(h for hs, _ in parked(spool) for h in hs) == ["h0", "h1", "h2"]
    assert spool.status().rejected_batches == 3 and only_rejected_left(spool)


def test_409_naming_a_record_parks_it_and_sends_the_others(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 4)
    answer = {"errors": [{"path": "records[1].interface", "message": "ifIndex 501 is held by xe-0/0/1"}]}
    central.reply(Reply(409, answer))

    report = run_drain(spool, central.url)

    assert len(central.requests) == 2
    assert hosts(central.stored_records()) == ["h0", "h2", "h3"]
    ((parked_hosts, error),) = parked(spool)
    assert parked_hosts == ["h1"] and (error["status"], error["response"]) == (409, answer)
    assert (report.rejected_batches, report.sent_records, spool.status().records_waiting) == (1, 3, 0)


def test_a_409_naming_no_record_is_bisected_too(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 2)
    central.default = poison("h0", 409, {"errors": [{"path": "", "message": "conflicts with stored data"}]})

    drain_until_settled(spool, central.url)

    assert hosts(central.stored_records()) == ["h1"]
    assert [hs for hs, _ in parked(spool)] == [["h0"]]


def test_a_refusal_page_without_the_ingests_errors_is_retried_not_parked(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 3)
    central.reply(Reply(403, b"<html>Forbidden by the site firewall</html>"), Reply(400, {"detail": "bad"}))

    first = run_drain(spool, central.url)
    second = run_drain(spool, central.url)

    assert first.failed and "Forbidden by the site firewall" in first.last_error
    assert second.failed and second.last_error.startswith("HTTP 400 without the ingest's errors")
    assert spool.status().rejected_batches == 0 and spool.status().records_waiting == 3
    assert len({r.batch_id for r in central.requests}) == 1  # the same batch, whole, each time


def test_repeated_500s_on_a_poison_record_let_the_others_through_and_park_it(tmp_path, central: FakeCentral, caplog):
    spool = spool_with(tmp_path, 4, 2)  # the poison h2 is in the first batch; h4, h5 wait behind it
    central.default = poison("h2", 500, {"detail": "Internal Server Error"})

    with caplog.at_level("INFO"):
        reports = drain_until_settled(spool, central.url)

    assert sorted(hosts(central.stored_records())) == ["h0", "h1", "h3", "h4", "h5"]
    assert len(central.stored_records()) == 5
    ((parked_hosts, error),) = parked(spool)
    assert parked_hosts == ["h2"]
    assert (error["status"], error["attempts"], error["response"]) == (500, 3, {"detail": "Internal Server Error"})
    assert only_rejected_left(spool)
    status = spool.status()
    assert (status.rejected_records, status.records_waiting) == (1, 0)
    # each of [h0..h3], its half holding h2 and [h2] alone: 3 attempts, then bisected or parked
    failing = [r for r in central.requests if "h2" in hosts(r.records)]
    assert [len(r.records) for r in failing] == [4, 4, 4, 2, 2, 2, 1, 1, 1]
    assert len(central.requests) == 9 + 2 + 1  # + the good halves [h0, h1] and [h3], + [h4, h5]
    assert hosts(central.requests[-1].records) == ["h4", "h5"]  # later data waited for its turn
    assert sum(r.failed for r in reports) == 6  # two retries per level before the third 500 decides
    (parked_log,) = [r for r in caplog.records if r.getMessage().startswith("the centre refused records")]
    parked_file = Path(parked_log.rejected_file)  # the log says where the record went
    assert parked_file.parent == spool.rejected_dir and hosts(json.loads(parked_file.read_bytes())["records"]) == ["h2"]
    assert parked_log.attempts == 3


@pytest.mark.parametrize("status", [502, 503, 504])
def test_unavailable_answers_are_retried_on_the_same_batch_and_never_split(tmp_path, central: FakeCentral, status):
    spool = spool_with(tmp_path, 4, 1)
    central.default = Reply(status, {"errors": [{"path": "", "message": "unavailable"}]})

    reports = [run_drain(spool, central.url, backoff=Backoff(base_s=0.001)) for _ in range(6)]

    assert all(r.failed for r in reports) and sum(r.split_batches for r in reports) == 0
    assert [len(r.records) for r in central.requests] == [4] * 6
    assert len({r.batch_id for r in central.requests}) == 1
    assert (spool.status().batches, spool.status().rejected_batches) == (2, 0)


def test_only_500s_in_a_row_count_towards_a_split(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 2)
    fail, down = Reply(500, {"detail": "boom"}), Reply(503, {"detail": "down"}, {"Retry-After": "0"})
    central.reply(fail, fail, down, fail, fail, fail)

    reports = [run_drain(spool, central.url, backoff=Backoff(base_s=0.001)) for _ in range(6)]

    # 500, 500, 503 (the run is broken), 500, 500: still the whole batch; the 3rd 500 in a row splits it
    assert [len(r.records) for r in central.requests[:6]] == [2] * 6
    assert [r.split_batches for r in reports] == [0, 0, 0, 0, 0, 1]
    assert sorted(hosts(central.stored_records())) == ["h0", "h1"]


def test_the_500_count_survives_a_restart_and_is_configurable(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 2)
    central.default = Reply(500, {"detail": "boom"})

    run_drain(spool, central.url, split_after_server_errors=2)
    spool.close()
    spool = Spool(tmp_path / "spool").open()  # a restart (or the next `once`)
    report = run_drain(spool, central.url, split_after_server_errors=2)

    assert report.split_batches == 1 and len(central.requests) == 3
    assert [len(r.records) for r in central.requests] == [2, 2, 1]


def test_once_parks_a_record_after_the_configured_number_of_500s(tmp_path, central: FakeCentral):
    from agents.config import ConfigError, load_config
    from tests.agents.conftest import HOST_TCP_LO, run_agent, write_config

    config = write_config(
        tmp_path, url=central.url, body=HOST_TCP_LO, central="timeout_s = 5\nsplit_after_server_errors = 2\n"
    )
    central.default = Reply(500, {"detail": "Internal Server Error"})

    def once() -> int:
        return run_agent("once", "--config", str(config)).returncode

    # one host_tcp record per run; the 500 count adds up across `once` runs (it is in the spool)
    assert [once(), once()] == [1, 1]

    spool = Spool(tmp_path / "spool")
    status = spool.status()
    assert (status.rejected_records, status.records_waiting) == (1, 1)  # the 2nd run's record: one 500 so far
    assert [r.attempts for r in spool.rejected()] == [2]
    with pytest.raises(ConfigError, match="central.split_after_server_errors"):
        load_config(write_config(tmp_path, url=central.url, central="split_after_server_errors = 0\n", name="bad.toml"))
