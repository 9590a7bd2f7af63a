"""Uploads against a real HTTP server on 127.0.0.1: acks, retries with the same batch_id, backoff,
the daemon's loop, TLS."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agents.spool import records_as_dicts
from agents.uploader import KEEPALIVE_EXPIRY_S, Backoff, Outcome, drain, parse_retry_after, upload_forever
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
from tests.agents.uploading import host_tcp, hosts, requests_reach, run_drain, spool_with, uploader


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
            await requests_reach(central, 2, every_s=0.05, tries=100)
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
            await requests_reach(central, 1, every_s=0.02, tries=100)  # the first pass sends what is there at start
            spool.append([host_tcp(100)])
            spooled_at = time.monotonic()
            wake.set()
            await requests_reach(central, 2, every_s=0.02, tries=200)
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
            await requests_reach(central, 2, every_s=0.05, tries=100)
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


def test_a_connection_idle_past_the_keepalive_expiry_is_not_reused(tmp_path):
    # A keep-alive server (HTTP/1.1, as gunicorn's threaded workers are) that notes the client port of each POST.
    # Reusing a connection the server may be closing at that instant fails the upload ("Server disconnected
    # without sending a response"); gunicorn closes after 2 s idle, so the agent reuses one for 1 s at most.
    ports: list[int] = []

    class KeepAlive(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.rfile.read(int(self.headers["Content-Length"]))
            ports.append(self.client_address[1])
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), KeepAlive)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    batch = spool_with(tmp_path, 1).next_batch()

    async def go() -> None:
        async with uploader(f"http://127.0.0.1:{server.server_port}") as client:
            for pause_s in (0.0, 0.2, KEEPALIVE_EXPIRY_S + 0.5):
                await asyncio.sleep(pause_s)
                assert (await client.send(batch)).outcome is Outcome.RETRY

    try:
        asyncio.run(go())
    finally:
        server.shutdown()
        server.server_close()
    assert ports[0] == ports[1], "batches sent one after the other share a connection"
    assert ports[2] != ports[1], f"a connection idle {KEEPALIVE_EXPIRY_S + 0.5} s was reused"
