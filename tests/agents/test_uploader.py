"""Uploads against a real HTTP server on 127.0.0.1: acks, retries with the same batch_id, 4xx handling."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agents.spool import Spool, records_as_dicts
from agents.uploader import (
    Backoff,
    Outcome,
    Uploader,
    drain,
    envelope_refused,
    parse_retry_after,
    record_indexes,
    upload_forever,
)
from collectors.records import decode_batch
from tests.agents.conftest import (
    TOKEN,
    FakeCentral,
    Reply,
    dead_url,
    issue_server_certificate,
    make_ca,
    make_tls_files,
    running,
)


def host_tcp(n: int) -> dict:
    moment = datetime.now(UTC) - timedelta(minutes=10) + timedelta(seconds=n)
    return {
        "type": "host_tcp",
        "time": moment.isoformat().replace("+00:00", "Z"),
        "site": "RAL",
        "host": f"h{n}",
        "tcp_rmem": [4096, 87380, 4194304],
        "tcp_wmem": [4096, 65536, 4194304],
        "rmem_max": 4194304,
        "wmem_max": 4194304,
        "congestion_control": "cubic",
        "mtu": 9000,
    }


def spool_with(tmp_path, *counts: int, batch_max_records: int = 1000) -> Spool:
    """A spool holding one batch per count, records numbered from 0 in order."""
    spool = Spool(tmp_path / "spool", batch_max_records=batch_max_records).open()
    n = 0
    for count in counts:
        spool.append([host_tcp(n + i) for i in range(count)])
        n += count
        spool.seal()
    return spool


def uploader(url: str, **kwargs) -> Uploader:
    return Uploader(
        ingest_url=url + "/api/v1/ingest", token=TOKEN, agent_version="1.2.3", agent_name="ral-agent-1", **kwargs
    )


def run_drain(spool: Spool, url: str, backoff: Backoff | None = None, split_after_server_errors: int = 3, **kwargs):
    async def go():
        async with uploader(url, **kwargs) as client:
            return await drain(
                spool, client, backoff=backoff or Backoff(), split_after_server_errors=split_after_server_errors
            )

    return asyncio.run(go())


def hosts(records) -> list[str]:
    return [r["host"] for r in records]


def test_a_batch_is_posted_gzipped_authenticated_valid_and_then_forgotten(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 3)
    batch_id = spool.next_batch().batch_id

    report = run_drain(spool, central.url)

    (request,) = central.requests
    assert request.path == "/api/v1/ingest"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["Content-Encoding"] == "gzip" and request.headers["Content-Type"] == "application/json"
    assert request.headers["User-Agent"] == "wanmon-agent/1.2.3 (ral-agent-1)"
    assert len(request.raw) < len(request.body)
    # the body is exactly what the centre's own decoder accepts
    batch = decode_batch(request.body, now=datetime.now(UTC), max_records=20_000)
    assert (batch.batch_id, batch.agent_version, len(batch.records)) == (batch_id, "1.2.3", 3)
    assert (report.sent_batches, report.sent_records, report.failed) == (1, 3, False)
    assert spool.status().records_waiting == 0


def test_batches_go_oldest_first(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 2, 1, 2)

    run_drain(spool, central.url)

    assert [hosts(r.records) for r in central.requests] == [["h0", "h1"], ["h2"], ["h3", "h4"]]


def test_duplicate_true_is_an_acknowledgement(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 2)
    batch_id = spool.next_batch().batch_id
    central.reply(Reply(200, {"batch_id": batch_id, "accepted": 0, "duplicate": True}))

    report = run_drain(spool, central.url)

    assert (report.sent_batches, report.duplicate_batches) == (1, 1)
    assert spool.status().records_waiting == 0


def test_a_timed_out_upload_is_retried_with_the_same_batch_id_and_stored_once(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 2)
    # The centre stores the batch but its answer comes too late: the agent cannot know it was stored.
    central.reply(Reply(delay_s=1.5))

    first = run_drain(spool, central.url, timeout_s=0.5)
    assert first.failed and "Timeout" in first.last_error
    assert spool.status().records_waiting == 2  # kept

    second = run_drain(spool, central.url, timeout_s=5)

    assert [r.batch_id for r in central.requests] == [central.requests[0].batch_id] * 2
    assert (second.sent_batches, second.duplicate_batches) == (1, 1)
    assert hosts(central.stored_records()) == ["h0", "h1"]  # exactly once
    assert spool.status().records_waiting == 0


def test_server_errors_back_off_exponentially_with_jitter_and_keep_the_batch(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 1, 1)
    central.default = Reply(503, {"errors": [{"path": "", "message": "down"}]})
    backoff = Backoff(base_s=2, max_s=30, rng=lambda: 1.0)  # upper end of the jitter range

    delays = [run_drain(spool, central.url, backoff=backoff).retry_in_s for _ in range(6)]

    assert delays == [2, 4, 8, 16, 30, 30]
    assert len(central.requests) == 6 and len({r.batch_id for r in central.requests}) == 1  # never the 2nd batch
    assert spool.status().batches == 2
    central.default = None
    assert run_drain(spool, central.url, backoff=backoff).sent_batches == 2
    assert backoff.failures == 0  # reset by the success


def test_backoff_jitter_stays_within_half_and_full_delay():
    low = Backoff(base_s=4, max_s=100, rng=lambda: 0.0)
    assert [low.next_delay_s() for _ in range(3)] == [2, 4, 8]
    draws = [Backoff(base_s=10, rng=__import__("random").Random(seed).random).next_delay_s() for seed in range(50)]
    assert all(5 <= d <= 10 for d in draws) and len(set(draws)) == 50


def test_a_dead_centre_loses_nothing(tmp_path):
    spool = spool_with(tmp_path, 2)

    report = run_drain(spool, dead_url())

    assert report.failed and "ConnectError" in report.last_error
    assert spool.status().records_waiting == 2


def test_429_retry_after_is_the_wait(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 1)
    central.reply(Reply(429, {"detail": "slow down"}, {"Retry-After": "7"}))

    report = run_drain(spool, central.url, backoff=Backoff(base_s=100))

    assert report.retry_in_s == 7
    assert spool.status().records_waiting == 1


def test_the_daemon_loop_waits_for_retry_after_before_sending_again(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 1)
    central.reply(Reply(429, {"detail": "slow down"}, {"Retry-After": "1"}))

    async def go():
        stop = asyncio.Event()
        async with uploader(central.url) as client:
            task = asyncio.create_task(upload_forever(spool, client, stop, interval_s=60, backoff=Backoff(base_s=0.01)))
            for _ in range(100):
                await asyncio.sleep(0.05)
                if len(central.requests) == 2:
                    break
            stop.set()
            await task

    asyncio.run(go())

    first, second = central.requests
    assert 1.0 <= second.at_monotonic - first.at_monotonic < 3.0
    assert first.batch_id == second.batch_id
    assert spool.status().records_waiting == 0


def test_new_records_are_uploaded_a_settle_time_after_they_are_spooled_not_at_the_next_interval(
    tmp_path, central: FakeCentral
):
    # With a 60 s upload interval, a poll's records used to wait up to a minute: rates of a new device took
    # two polls plus an upload tick (over two minutes with the defaults).
    spool = spool_with(tmp_path, 1)

    async def go():
        stop, wake = asyncio.Event(), asyncio.Event()
        async with uploader(central.url) as client:
            task = asyncio.create_task(
                upload_forever(spool, client, stop, interval_s=60, wake=wake, settle_s=0.3, backoff=Backoff())
            )
            for _ in range(100):  # the first pass sends what is there at start
                await asyncio.sleep(0.02)
                if len(central.requests) == 1:
                    break
            spool.append([host_tcp(100)])
            spooled_at = time.monotonic()
            wake.set()
            for _ in range(200):
                await asyncio.sleep(0.02)
                if len(central.requests) == 2:
                    break
            stop.set()
            wake.set()  # as the daemon relays its stop
            await asyncio.wait_for(task, 5)
            return spooled_at

    spooled_at = asyncio.run(go())

    first, second = central.requests
    assert 0.3 <= second.at_monotonic - spooled_at < 2.0
    assert hosts(second.json["records"]) == ["h100"]
    assert spool.status().records_waiting == 0


def test_a_pending_retry_is_not_cut_short_by_new_records(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 1)
    central.reply(Reply(429, {"detail": "slow down"}, {"Retry-After": "1"}))

    async def go():
        stop, wake = asyncio.Event(), asyncio.Event()
        async with uploader(central.url) as client:
            task = asyncio.create_task(
                upload_forever(spool, client, stop, interval_s=60, wake=wake, settle_s=0.0, backoff=Backoff())
            )
            await asyncio.sleep(0.2)
            wake.set()  # new records while the centre asked to wait
            for _ in range(100):
                await asyncio.sleep(0.05)
                if len(central.requests) == 2:
                    break
            stop.set()
            wake.set()
            await asyncio.wait_for(task, 5)

    asyncio.run(go())

    first, second = central.requests
    assert second.at_monotonic - first.at_monotonic >= 1.0


def test_parse_retry_after_reads_seconds_and_http_dates():
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert parse_retry_after("120") == 120
    assert parse_retry_after("Sun, 01 Mar 2026 12:00:30 GMT", now=now) == 30
    assert parse_retry_after("Sun, 01 Mar 2026 11:00:00 GMT", now=now) == 0
    assert parse_retry_after("999999") == 3600  # capped
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


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


def test_stop_lets_the_upload_in_flight_finish_and_sends_nothing_more(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 1, 1)
    central.reply(Reply(delay_s=0.5))

    async def go():
        stop = asyncio.Event()
        async with uploader(central.url) as client:
            task = asyncio.create_task(drain(spool, client, backoff=Backoff(), stop=stop))
            while not central.request_started.is_set():
                await asyncio.sleep(0.01)
            stop.set()
            return await task

    started = time.monotonic()
    report = asyncio.run(go())

    assert time.monotonic() - started >= 0.5
    assert report.sent_batches == 1 and len(central.requests) == 1
    assert spool.status().batches == 1  # the second batch waits for the next start


def test_record_indexes_only_for_errors_that_all_name_records():
    assert record_indexes({"errors": [{"path": "records[3].x", "message": ""}, {"path": "records[10]"}]}) == {3, 10}
    assert record_indexes({"errors": [{"path": "records[3].x"}, {"path": ""}]}) is None
    assert record_indexes({"errors": []}) is None
    assert record_indexes("<html>") is None
    assert envelope_refused({"errors": [{"path": "records[0].time"}, {"path": "sent_at", "message": "ahead"}]})
    assert not envelope_refused({"errors": [{"path": ""}, {"path": "records"}, {"path": "records[2].sent_at_x"}]})
    assert not envelope_refused("<html>")


def test_uploaded_records_are_the_spooled_bytes(tmp_path, central: FakeCentral):
    spool = spool_with(tmp_path, 2)
    spooled = records_as_dicts(spool.next_batch())

    run_drain(spool, central.url)

    assert central.requests[0].records == spooled
    assert Outcome.ACKED.value == "acked"


def test_tls_is_verified_against_the_configured_ca_file(tmp_path):
    ca_file, cert, key = make_tls_files(tmp_path)
    spool = spool_with(tmp_path, 2)

    with running(FakeCentral(tls=(cert, key))) as central:
        untrusted = run_drain(spool, central.url)  # system CAs do not know the site's private CA
        trusted = run_drain(spool, central.url, ca_file=ca_file)

    assert untrusted.failed and "CERTIFICATE_VERIFY_FAILED" in untrusted.last_error
    assert trusted.sent_records == 2 and not trusted.failed
    assert len(central.requests) == 1  # the unverified attempt never sent the token or the data
    assert spool.status().records_waiting == 0


def test_a_server_certificate_from_another_ca_is_refused_even_with_a_ca_file(tmp_path, caplog):
    ca_file = make_ca("site grid CA").write(tmp_path / "ca.pem")
    foreign = issue_server_certificate(make_ca("another CA"), tmp_path)  # right address, wrong issuer
    spool = spool_with(tmp_path, 2)

    with running(FakeCentral(tls=foreign)) as central, caplog.at_level("WARNING"):
        report = run_drain(spool, central.url, ca_file=ca_file)

    assert report.failed and "CERTIFICATE_VERIFY_FAILED" in report.last_error and report.sent_records == 0
    assert central.requests == []  # no HTTP request: neither the token nor a record left the agent
    assert spool.status().records_waiting == 2 and spool.status().rejected_records == 0  # kept for a retry
    (logged,) = [r for r in caplog.records if r.getMessage() == "upload failed; will retry"]
    assert "CERTIFICATE_VERIFY_FAILED" in logged.error


def parked(spool: Spool) -> list[tuple[list[str], dict]]:
    """(hosts, error file) of every file in rejected/, in name order."""
    return [
        (
            hosts(json.loads(path.read_bytes())["records"]),
            json.loads(path.with_name(path.stem + ".error.json").read_text()),
        )
        for path in sorted(spool.rejected_dir.glob("*.json"))
        if not path.name.endswith(".error.json")
    ]


def drain_until_settled(spool: Spool, url: str, *, passes: int = 30, **kwargs) -> list:
    """Drain passes (each stops at a retryable failure, as the daemon's loop would) until nothing waits."""
    reports = []
    backoff = Backoff(base_s=0.001, max_s=0.001)
    while spool.status().records_waiting and len(reports) < passes:
        reports.append(run_drain(spool, url, backoff=backoff, **kwargs))
    return reports


def spool_left_empty_apart_from_rejected(spool: Spool) -> bool:
    return [p for d in (spool.pending_dir, spool.batches_dir, spool.tmp_dir) for p in d.iterdir()] == []


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


def poison(host: str, status: int, answer) -> object:
    """A centre that refuses (or fails on) every batch holding the record of ``host``."""
    return lambda request: Reply(status, answer) if host in hosts(request.records) else Reply()


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
    assert spool.status().rejected_batches == 3 and spool_left_empty_apart_from_rejected(spool)


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
    assert spool_left_empty_apart_from_rejected(spool)
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
    from tests.agents.conftest import HOST_TCP_LO, ROOT, write_config

    config = write_config(
        tmp_path, url=central.url, body=HOST_TCP_LO, central="timeout_s = 5\nsplit_after_server_errors = 2\n"
    )
    central.default = Reply(500, {"detail": "Internal Server Error"})

    def once() -> int:
        return subprocess.run(
            [sys.executable, "-c", "import sys; from agents.cli import main; sys.exit(main())", "once"]
            + ["--config", str(config)],
            cwd=ROOT,
            capture_output=True,
            timeout=60,
        ).returncode

    # one host_tcp record per run; the 500 count adds up across `once` runs (it is in the spool)
    assert [once(), once()] == [1, 1]

    spool = Spool(tmp_path / "spool")
    status = spool.status()
    assert (status.rejected_records, status.records_waiting) == (1, 1)  # the 2nd run's record: one 500 so far
    assert [r.attempts for r in spool.rejected()] == [2]
    with pytest.raises(ConfigError, match="central.split_after_server_errors"):
        load_config(write_config(tmp_path, url=central.url, central="split_after_server_errors = 0\n", name="bad.toml"))
