"""``wanmon-agent`` as a site admin runs it: real processes, a fake nuttcp, the host's real /proc."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import agents
from agents.spool import Spool
from collectors.records import HostTcpRecord, ThroughputRecord, decode_batch, decode_records
from tests.agents.conftest import (
    AGENT_MAIN,
    HOST_TCP_LO,
    ROOT,
    TOKEN,
    FakeCentral,
    Reply,
    dead_url,
    fake_nuttcp,
    run_agent,
    run_python,
    write_config,
)


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def nuttcp_table(tmp_path: Path) -> str:
    return (
        f'[[nuttcp]]\ndst = "FZK"\nhost = "fzk-dt01.example.org"\nbinary = "{fake_nuttcp(tmp_path)}"\n'
        "duration_s = 5\nreverse = true\ninterval_s = 1800\n"
    )


def test_version():
    result = run_agent("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"wanmon-agent {agents.__version__}"


def test_once_dry_run_prints_valid_records_as_json_lines_and_touches_nothing(tmp_path):
    config = write_config(tmp_path, url=dead_url(), body=nuttcp_table(tmp_path) + HOST_TCP_LO)

    result = run_agent("once", "--config", str(config), "--dry-run")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    records = decode_records(lines and "[" + ",".join(lines) + "]", now=datetime.now(UTC))  # the centre's checks
    by_type = {}
    for record in records:
        by_type.setdefault(type(record), []).append(record)
    forward, reverse = sorted(by_type[ThroughputRecord], key=lambda r: r.src != "RAL")
    # nuttcp's captured -fparse summary: 7324.6250 MB in 5.00 s at 12290.3580 Mbps, retrans=77
    assert (forward.src, forward.dst, forward.dst_host) == ("RAL", "FZK", "fzk-dt01.example.org")
    assert (reverse.src, reverse.dst, reverse.src_host) == ("FZK", "RAL", "fzk-dt01.example.org")
    assert forward.throughput_bps == 12_290_358_000.0 and forward.retransmits == 77 and forward.rtt_ms == 0.19
    assert forward.schedule_interval_s == 1800.0 and forward.tool_version == "8.2.2"
    (settings,) = by_type[HostTcpRecord]
    rmem = [int(v) for v in Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split()]
    assert settings.tcp_rmem == rmem and settings.site == "RAL"
    assert settings.congestion_control == Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    assert settings.interface == "lo" and settings.mtu == int(Path("/sys/class/net/lo/mtu").read_text())
    assert not (tmp_path / "spool").exists()  # nothing spooled
    logs = json_lines(result.stderr)  # logs are JSON lines on stderr, one per collector run here
    assert {log["collector"] for log in logs if log["message"] == "collector run"} == {"nuttcp[0]:FZK", "host_tcp[0]"}


def test_once_uploads_to_the_centre_and_never_logs_the_token(tmp_path, central: FakeCentral):
    config = write_config(tmp_path, url=central.url, body=nuttcp_table(tmp_path) + HOST_TCP_LO)

    result = run_agent("once", "--config", str(config))

    assert result.returncode == 0, result.stderr
    (request,) = central.requests
    batch = decode_batch(request.body, now=datetime.now(UTC), max_records=20_000)
    assert sorted(r.__struct_config__.tag for r in batch.records) == ["host_tcp", "throughput", "throughput"]
    assert batch.agent_version == agents.__version__
    assert Spool(tmp_path / "spool").status().records_waiting == 0
    assert TOKEN not in result.stderr and TOKEN not in result.stdout
    done = [log for log in json_lines(result.stderr) if log["message"] == "once: done"]
    assert done[0]["records_uploaded"] == 3 and done[0]["records_waiting"] == 0


def test_once_with_the_centre_down_spools_and_says_so(tmp_path):
    config = write_config(tmp_path, url=dead_url(), body=HOST_TCP_LO)

    first = run_agent("once", "--config", str(config))
    second = run_agent("once", "--config", str(config))

    assert (first.returncode, second.returncode) == (1, 1)
    status = run_agent("spool", "--config", str(config), "--json")
    assert status.returncode == 0
    report = json.loads(status.stdout)
    assert (report["records_waiting"], report["batches_waiting"], report["rejected_batches"]) == (2, 2, 0)
    assert report["oldest_age_s"] >= 0
    # when the collector polled (spool_dir/polls.json), kept across runs
    (polled,) = report["collectors"].values()
    assert (polled["runs"], polled["failed_runs"], polled["last_records"], polled["next_due"]) == (2, 0, 1, None)
    last_run = [log for log in json_lines(second.stderr) if log["message"] == "collector run"][0]
    assert polled["last_started"] == last_run["started"]
    text = run_agent("spool", "--config", str(config)).stdout
    assert "records waiting:  2 (2 in 2 batches, 0 not yet batched)" in text
    assert f"  host_tcp[0]: {last_run['started']}, 1 records, ok; runs 2, failed 0, skipped 0" in text


def test_spool_requeue_rejected(tmp_path, central: FakeCentral):
    config = write_config(tmp_path, url=central.url, body=HOST_TCP_LO)
    central.reply(Reply(403, {"errors": [{"path": "records[0]", "message": "may not send host_tcp of site RAL"}]}))
    assert run_agent("once", "--config", str(config)).returncode == 1  # refused: kept in rejected/
    assert "rejected:         1 batches, 1 records" in run_agent("spool", "--config", str(config)).stdout

    requeued = run_agent("spool", "--config", str(config), "--requeue-rejected", "--json")
    assert json.loads(requeued.stdout)["batches_waiting"] == 1
    assert run_agent("once", "--config", str(config)).returncode == 0  # the centre's inventory was fixed
    assert [r.batch_id for r in central.requests[1:]] == [central.requests[0].batch_id, central.requests[2].batch_id]
    assert len(central.stored_records()) == 2  # the requeued record and the new one


def test_run_collects_uploads_and_on_sigterm_finishes_the_upload_in_flight(tmp_path, central: FakeCentral):
    config = write_config(
        tmp_path,
        url=central.url,
        body=HOST_TCP_LO.replace("[[host_tcp]]", "[[host_tcp]]\ninterval_s = 1"),
        agent="upload_interval_s = 1",
    )
    central.default = lambda request: Reply(delay_s=1.5)  # every answer takes 1.5 s
    proc = subprocess.Popen(
        [sys.executable, "-c", AGENT_MAIN, "run", "--config", str(config)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert central.request_started.wait(20), "no upload started"
        time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)  # while the centre is still answering
        stdout, stderr = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()

    assert proc.returncode == 0, stderr
    messages = [log["message"] for log in json_lines(stderr)]
    assert "stop requested" in messages and messages[-1] == "agent stopped"
    assert "batch uploaded" in messages  # the answer to the upload in flight was awaited and handled
    uploaded = len(central.stored_records())
    status = Spool(tmp_path / "spool").status()
    assert uploaded >= 1
    # whatever was collected and not yet uploaded is still in the spool: nothing lost
    assert uploaded + status.records_waiting == messages.count("collector run")
    assert json_lines(stderr)[0]["message"] == "agent started"
    assert TOKEN not in stderr


def test_a_second_agent_on_the_same_spool_is_refused(tmp_path):
    config = write_config(tmp_path, url=dead_url(), body=HOST_TCP_LO)
    holder = Spool(tmp_path / "spool").open()
    try:
        result = run_agent("once", "--config", str(config))
    finally:
        holder.close()
    assert result.returncode == 1
    assert f"in use by another wanmon-agent (pid {os.getpid()})" in json_lines(result.stderr)[-1]["message"]


def test_an_unavailable_snmp_module_skips_only_the_snmp_tables(tmp_path):
    config = write_config(
        tmp_path,
        url=dead_url(),
        body=HOST_TCP_LO + '[[snmp]]\nequipment = "ral-border"\nhost = "192.0.2.1"\ncommunity = "c"\n',
    )
    # simulate a site install without collectors.snmp (or pysnmp)
    code = "import sys; sys.modules['collectors.snmp'] = None; from agents.cli import main; sys.exit(main())"
    result = run_python(code, "once", "--config", str(config), "--dry-run")

    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["type"] for line in result.stdout.splitlines()] == ["host_tcp"]
    errors = [log for log in json_lines(result.stderr) if log["level"] == "error"]
    assert errors[0]["message"] == "SNMP collector unavailable: [[snmp]] tables skipped"
    assert errors[0]["equipment"] == ["ral-border"]
