"""What the uploader tests share: spools of numbered host_tcp records, a drain against the fake centre, and
what a drain left behind (the records parked in rejected/)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

from agents.spool import Spool
from agents.uploader import Backoff, Uploader, drain
from collectors.records.types import iso_z
from tests.agents.conftest import TOKEN, Reply


def host_tcp_record(n: int, time: str) -> dict:
    """A JSON-ready host_tcp record of host ``h<n>`` (the spool stores what it is given; validation is earlier)."""
    return {
        "type": "host_tcp",
        "time": time,
        "site": "RAL",
        "host": f"h{n}",
        "tcp_rmem": [4096, 87380, 4194304],
        "tcp_wmem": [4096, 65536, 4194304],
        "rmem_max": 4194304,
        "wmem_max": 4194304,
        "congestion_control": "cubic",
        "mtu": 9000,
    }


def host_tcp(n: int) -> dict:
    """Record ``n``, taken ten minutes ago plus ``n`` seconds (recent enough for the centre to store)."""
    moment = datetime.now(UTC) - timedelta(minutes=10) + timedelta(seconds=n)
    return host_tcp_record(n, iso_z(moment))


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


async def requests_reach(central, count: int, *, every_s: float, tries: int) -> None:
    """Wait until the fake centre has had ``count`` requests, looking every ``every_s`` at most ``tries`` times
    (the test's own assertions then say what went wrong if it never did)."""
    for _ in range(tries):
        await asyncio.sleep(every_s)
        if len(central.requests) == count:
            return


def hosts(records) -> list[str]:
    return [r["host"] for r in records]


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


def only_rejected_left(spool: Spool) -> bool:
    """Nothing waits in the spool any more: every record was sent or parked in rejected/."""
    return [p for d in (spool.pending_dir, spool.batches_dir, spool.tmp_dir) for p in d.iterdir()] == []


def poison(host: str, status: int, answer) -> object:
    """A centre that refuses (or fails on) every batch holding the record of ``host``."""
    return lambda request: Reply(status, answer) if host in hosts(request.records) else Reply()
