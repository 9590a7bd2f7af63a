"""Real tool output -> the collector's own code -> the agent's batch -> POST /api/v1/ingest -> PostgreSQL -> back.

The captured outputs are ../shared/fixtures/toolout (SOURCES.md there says where each comes from).
Each collector turns them into records with the functions the agent runs (``run_test`` with the
captured text as the tool's answer, the parsers and record builders where no command is involved);
the agent's validation keeps them, the centre stores them, and every stored value must be what the
wire carried: counters to the last digit, floats bit for bit, absent as NULL, the rest in ``extra``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from datetime import UTC, datetime, timedelta

import pytest

from collectors import nuttcp as nuttcp_collector
from collectors import owamp, traceroute, twamp
from collectors.runner import FakeCommandRunner, SubprocessRunner, completed
from tests.collectors.test_twamp import twping_raw_packets
from tests.contract.wire import agent_records, assert_stored, deliver, shared_fixture

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

SCHEDULE_S = 1800.0  # the agent's period for these tests: set on every path record, kept in `extra`


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)


def _text(name: str) -> str:
    return shared_fixture("toolout", name).read_text()


def centre_ready(output, now: datetime) -> list:
    """The agent's check of one collector run (the scheduler passes the collector's period)."""
    return agent_records(output, now=now + timedelta(minutes=1), schedule_interval_s=SCHEDULE_S)


# --- nuttcp --------------------------------------------------------------------------------------------


def _nuttcp_files() -> list[str]:
    folder = shared_fixture("toolout")
    return sorted(p.name for p in folder.glob("nuttcp*.txt") if "error" not in p.name)


def _nuttcp_config(name: str, **options) -> nuttcp_collector.NuttcpConfig:
    protocol = "udp" if "-udp-" in name else "tcp"
    return nuttcp_collector.NuttcpConfig(
        dst="FZK",
        host="fzk-dt01.example.org",
        protocol=protocol,
        duration_s=5.0,
        rate_bps=9e8 if protocol == "udp" else None,
        control_port=15000,
        data_port=15001,
        **options,
    )


def test_every_nuttcp_output_is_stored_as_sent(client, centre):
    # given every captured nuttcp run, as the answer of the tool the collector runs
    now = _now()
    records = []
    for name in _nuttcp_files():
        version = "6.1.2" if name.startswith("nuttcp612") else "8.2.2"
        runner = FakeCommandRunner({"nuttcp": [completed(f"nuttcp-{version}\n"), completed(_text(name), duration_s=5)]})
        output = nuttcp_collector.run_test(runner, _nuttcp_config(name), src_site="CERN", dst_site="FZK", now=now)
        records += centre_ready(output, now)
    # and a reverse test (the far end transmits) and a refused connection
    runner = FakeCommandRunner(
        {
            "nuttcp": [
                completed("nuttcp-8.2.2\n"),
                completed(_text("nuttcp-tcp-human-1.txt"), duration_s=5),
                completed(_text("nuttcp-tcp-human-2.txt"), duration_s=5),
            ]
        }
    )
    config = _nuttcp_config("tcp", reverse=True, window_bytes=8 * 2**20, mss_bytes=8948)
    records += centre_ready(nuttcp_collector.run_test(runner, config, src_site="CERN", dst_site="FZK", now=now), now)
    refused = completed(stderr=_text("nuttcp-error-connrefused-stderr-1.txt"), exit_code=1)
    runner = FakeCommandRunner({"nuttcp": [completed("nuttcp-8.2.2\n"), refused]})
    records += centre_ready(
        nuttcp_collector.run_test(runner, _nuttcp_config("tcp"), src_site="CERN", dst_site="FZK", now=now), now
    )

    # when the agent uploads them
    batch = deliver(client, centre.token, records)

    # then each is one row, every field as sent
    assert assert_stored(batch, agent_id=centre.agent.id) == {"throughput": len(_nuttcp_files()) + 3}
    udp = [r for r in batch.wire if r["protocol"] == "udp"]
    assert udp and all(r["packets_sent"] > 0 and "retransmits" not in r for r in udp)
    assert any(r.get("error") and r.get("exit_code") == 1 for r in batch.wire)


# --- owamp: owping, owstats, powstream -------------------------------------------------------------------

OWPING_OUTPUTS = [
    "owping-M-1.txt",
    "owping-M-2.txt",
    "owping-R-1.txt",
    "owping-R-2.txt",
    "owping-default-1.txt",
    "owping-default-2.txt",
    "owping-default-nan-issue836-1.txt",
    "owping-v-1.txt",
]


def test_every_owping_output_is_stored_as_sent(client, centre):
    now = _now()
    unsync = _text("owping-stderr-ntp-unsync-1.txt")
    records = []
    for name in OWPING_OUTPUTS:
        text = _text(name)
        both = len(owamp.parse(text)) >= 2
        config = owamp.OwampConfig(dst="FZK", host="127.0.0.1:18610", packets=20, directions="both" if both else "to")
        runner = FakeCommandRunner({"owping": completed(text, unsync)})
        records += centre_ready(owamp.run_test(runner, config, src_site="CERN", dst_site="FZK", now=now), now)
    failed = completed(stderr=_text("owping-error-noserver-stderr-1.txt"), exit_code=1)
    config = owamp.OwampConfig(dst="FZK", host="[2001:db8::1]:861")
    records += centre_ready(
        owamp.run_test(FakeCommandRunner({"owping": failed}), config, src_site="CERN", dst_site="FZK", now=now), now
    )
    # powstream's .sum files and owstats reports: the same parser and record builder
    warning = owamp.ntp_unsynced(_text("powstream-stderr-1.txt"))
    for name in ("powstream-sum-1.txt", "owstats-M-1.txt", "owstats-R-1.txt"):
        (session,) = owamp.parse(_text(name))
        record = owamp.session_to_record(
            session,
            direction=owamp.TO,
            src_site="CERN",
            dst_site="FZK",
            host="127.0.0.1",
            time=now,
            ntp_warning=warning,
        )
        records += centre_ready([record], now)

    batch = deliver(client, centre.token, records)

    assert assert_stored(batch, agent_id=centre.agent.id) == {"owamp": len(records)}
    assert {r["src"] for r in batch.wire} == {"CERN", "FZK"}  # both directions of the two-way captures
    assert any(r.get("error") for r in batch.wire) and any(r.get("packets_sent") == 100 for r in batch.wire)


# --- twping and TWAMP-light ------------------------------------------------------------------------------


def test_twping_and_a_live_twamp_light_session_are_stored_as_sent(client, centre):
    now = _now()
    # twping -R: the collector's statistics and records from the real packets
    stats = twamp.compute_stats(*twping_raw_packets(_text("twping-R-1.txt")))
    records = centre_ready(
        twamp.stats_to_records(stats, "CERN", "FZK", now, src_host="127.0.0.1", dst_host="fzk-owamp.example.org"), now
    )

    # a real TWAMP-light session against the collector's reflector on 127.0.0.1
    async def session():
        transport = await twamp.serve_reflector("127.0.0.1", 0)
        try:
            port = transport.get_extra_info("sockname")[1]
            return await twamp.run_session("127.0.0.1", port, packets=20, interval_s=0.005, timeout_s=0.3)
        finally:
            transport.close()

    live = asyncio.run(session())
    records += centre_ready(twamp.stats_to_records(live, "CERN", "FZK", now, dst_host="127.0.0.1"), now)

    batch = deliver(client, centre.token, records)

    assert assert_stored(batch, agent_id=centre.agent.id) == {"owamp": 4}
    assert [r["packets_sent"] for r in batch.wire] == [20, 20, 20, 20]
    assert {r["tool"] for r in batch.wire} == {"twamp-light"}


# --- traceroute ----------------------------------------------------------------------------------------


def test_pscheduler_traces_and_a_real_trace_to_loopback_are_stored_as_sent(client, centre):
    now = _now()
    records = []
    for name in ("pscheduler-trace-result-1.json", "pscheduler-archiver-http-trace-1.json"):
        result = traceroute.parse_pscheduler_trace(json.loads(_text(name)))
        record = traceroute.result_to_record(
            result, src_site="CERN", dst_site="FZK", host="fzk-ps.example.org", time=now
        )
        records += centre_ready([record], now)
    tools = [tool for tool in (traceroute.TRACEPATH, traceroute.TRACEROUTE) if shutil.which(tool)]
    for tool in tools:
        config = traceroute.TracerouteConfig(dst="FZK", host="127.0.0.1", tool=tool, fallback=None, max_hops=4)
        output = traceroute.run_test(SubprocessRunner(), config, src_site="CERN", dst_site="FZK", now=now)
        assert "error" not in output[0], output
        records += centre_ready(output, now)
    if not tools:
        print("neither tracepath nor traceroute installed: only the pScheduler traces are sent")  # noqa: T201

    batch = deliver(client, centre.token, records)

    assert assert_stored(batch, agent_id=centre.agent.id) == {"traceroute": 2 + len(tools)}
    assert all(r["hops"][-1] == "127.0.0.1" for r in batch.wire[2:])
    assert any(None in r["hops"] for r in batch.wire[:2])  # pScheduler's silent hops are stored as NULL
