"""nuttcp collector: run_test against a fake command runner (records, errors, retransmits measured by the kernel),
and the kernel's retransmit counters."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from collectors import nuttcp
from collectors.runner import (
    EXIT_NOT_FOUND,
    CommandResult,
    FakeCommandRunner,
    SubprocessRunner,
    completed,
    excerpt,
    utc_time,
)
from tests.collectors.test_nuttcp import NOW, fixture, version_output
from tests.processes import free_port

# ---------------------------------------------------------------------------
# run_test
# ---------------------------------------------------------------------------

TCP_KEYS = {
    "type",
    "time",
    "src",
    "dst",
    "tool",
    "protocol",
    "duration_s",
    "streams",
    "window_bytes",
    "mss_bytes",
    "throughput_bps",
    "retransmits",
    "rtt_ms",
}


def nuttcp_runner(*tests: CommandResult, version: str = "8.2.2") -> FakeCommandRunner:
    """A runner whose nuttcp answers ``-V`` with ``version``, then each test run with the next of ``tests``."""
    return FakeCommandRunner({"nuttcp": [version_output(version), *tests]})


def run_cern_to_fzk(runner: FakeCommandRunner, config: nuttcp.NuttcpConfig, **kwargs) -> list[dict]:
    """run_test from CERN to FZK at NOW (``kwargs`` override)."""
    return nuttcp.run_test(runner, config, **{"src_site": "CERN", "dst_site": "FZK", "now": NOW, **kwargs})


def test_run_test_forward_tcp_record():
    runner = nuttcp_runner(completed(fixture("nuttcp-tcp-fparse-1.txt"), duration_s=5.2))
    config = nuttcp.NuttcpConfig(dst="FZK", host="fzk-dt01.example.org", window_bytes=4_194_304)
    records = run_cern_to_fzk(runner, config)
    assert len(records) == 1
    record = records[0]
    assert TCP_KEYS <= record.keys()
    assert record["type"] == "throughput"
    assert record["time"] == NOW and record["time"].tzinfo is not None
    assert (record["src"], record["dst"], record["dst_host"]) == ("CERN", "FZK", "fzk-dt01.example.org")
    assert record["throughput_bps"] == 12_290_358_000.0
    assert record["retransmits"] == 77
    assert record["retransmits_source"] == "nuttcp"
    assert record["rtt_ms"] == 0.19
    assert record["duration_s"] == 5.0
    assert record["window_bytes"] == 4_194_304
    assert record["streams"] == 1
    assert record["transferred_bytes"] == 7_680_425_984
    assert record["tool_version"] == "8.2.2"
    assert record["command"] == "nuttcp -fparse -T10 -t -w4096 fzk-dt01.example.org"
    assert "error" not in record
    assert runner.calls[0] == (["nuttcp", "-V"], 10.0)
    assert runner.calls[1][1] == config.timeout_s == 55.0


def test_run_test_reverse_gives_two_records_one_per_direction():
    runner = nuttcp_runner(
        completed(fixture("nuttcp-tcp-human-1.txt"), duration_s=6.5),
        completed(fixture("nuttcp-tcp-human-2.txt"), duration_s=6.0),
    )
    config = nuttcp.NuttcpConfig(dst="FZK", host="fzk-dt01", reverse=True, duration_s=5)
    forward, reverse = run_cern_to_fzk(runner, config)
    assert (forward["src"], forward["dst"], forward["direction"]) == ("CERN", "FZK", "forward")
    assert (reverse["src"], reverse["dst"], reverse["direction"]) == ("FZK", "CERN", "reverse")
    assert reverse["src_host"] == "fzk-dt01" and "dst_host" not in reverse
    assert forward["time"] == NOW
    assert reverse["time"] == NOW + timedelta(seconds=6.5)  # it started when the first test ended
    assert forward["throughput_bps"] == 13_426_458_700.0
    assert reverse["throughput_bps"] == 11_807_124_300.0
    assert reverse["retransmits"] == 109  # non-zero: a working counter on the server
    assert runner.calls[2][0] == ["nuttcp", "-fparse", "-T5", "-r", "-F", "fzk-dt01"]


class StubCounter:
    """RetransCounter returning scripted TcpRetransSegs readings."""

    def __init__(self, *values):
        self.values = list(values)

    def read_retrans_segs(self):
        return self.values.pop(0)


def test_run_test_612_uses_kernel_counter_for_forward_and_leaves_reverse_unknown():
    test = completed(fixture("nuttcp612-tcp-fparse-1.txt"), duration_s=5.1)
    runner = nuttcp_runner(test, test, version="6.1.2")
    counter = StubCounter(1000, 1042)
    config = nuttcp.NuttcpConfig(dst="FZK", host="h", reverse=True, duration_s=5)
    forward, reverse = run_cern_to_fzk(runner, config, retrans_counter=counter)
    assert forward["retransmits"] == 42
    assert forward["retransmits_source"] == "host_counter"
    assert forward["retransmits_reported"] == 0
    assert forward["host_retrans_segs"] == 42
    assert forward["tool_version"] == "6.1.2"
    # in reverse the server transmits: this host's counters say nothing about it
    assert reverse["retransmits"] is None
    assert "retransmits_source" not in reverse
    assert counter.values == []  # read only around the forward test


def test_run_test_kernel_counter_not_used_when_nuttcp_count_is_good():
    runner = nuttcp_runner(completed(fixture("nuttcp-tcp-fparse-2.txt")))
    config = nuttcp.NuttcpConfig(dst="FZK", host="h")
    (record,) = run_cern_to_fzk(runner, config, retrans_counter=StubCounter(5, 80))
    assert record["retransmits"] == 72
    assert record["retransmits_source"] == "nuttcp"
    assert record["host_retrans_segs"] == 75  # kept as a cross-check


def test_run_test_connection_refused_is_an_error_record():
    stderr = fixture("nuttcp-error-connrefused-stderr-1.txt")
    runner = nuttcp_runner(completed("", stderr, exit_code=1))
    config = nuttcp.NuttcpConfig(dst="FZK", host="h", window_bytes=4_194_304)
    (record,) = run_cern_to_fzk(runner, config)
    assert record["type"] == "throughput"
    assert record["error"] == "connect: Connection refused (errno=111)"
    assert record["exit_code"] == 1
    assert record["stderr_excerpt"] == stderr.strip("\n")
    assert (record["src"], record["dst"], record["window_bytes"], record["duration_s"]) == ("CERN", "FZK", 4194304, 10)
    assert "throughput_bps" not in record and "retransmits" not in record


def test_run_test_reverse_failure_yields_two_error_records():
    stderr = fixture("nuttcp-error-connrefused-stderr-1.txt")
    failure = completed("", stderr, exit_code=1, duration_s=0.01)
    runner = nuttcp_runner(failure, failure)
    config = nuttcp.NuttcpConfig(dst="FZK", host="h", reverse=True)
    records = run_cern_to_fzk(runner, config)
    assert [(r["src"], r["dst"], r["exit_code"]) for r in records] == [("CERN", "FZK", 1), ("FZK", "CERN", 1)]


def test_run_test_nuttcp_not_installed():
    runner = FakeCommandRunner(missing_is_not_found=True)
    config = nuttcp.NuttcpConfig(dst="FZK", host="h", reverse=True)
    records = run_cern_to_fzk(runner, config)
    assert len(records) == 2
    assert all("nuttcp is not installed" in r["error"] for r in records)
    assert all(r["exit_code"] == EXIT_NOT_FOUND for r in records)
    assert runner.programs_called() == ["nuttcp"]  # only the -V probe


def test_run_test_timeout_is_an_error_record():
    partial = "megabytes=1480.6875 real_sec=1.00 rate_Mbps=12420.3233 retrans=14 cwnd=447\n"
    timed_out = CommandResult(None, partial, "", 55.0, error="timeout after 55 s: nuttcp killed", timed_out=True)
    runner = nuttcp_runner(timed_out)
    (record,) = run_cern_to_fzk(runner, nuttcp.NuttcpConfig(dst="FZK", host="h"))
    assert record["error"] == "timeout after 55 s: nuttcp killed"
    assert record["exit_code"] is None
    assert record["raw_excerpt"] == partial.strip()


def test_run_test_unparseable_output_is_an_error_record():
    runner = nuttcp_runner(completed("something else\n"))
    (record,) = run_cern_to_fzk(runner, nuttcp.NuttcpConfig(dst="FZK", host="h"))
    assert record["error"].startswith("unparseable nuttcp output")
    assert record["exit_code"] == 0


def test_run_test_udp_record():
    runner = nuttcp_runner(completed(fixture("nuttcp-udp-fparse-1.txt")))
    config = nuttcp.NuttcpConfig(dst="FZK", host="h", protocol="udp", rate_bps=900e6, duration_s=5)
    (record,) = run_cern_to_fzk(runner, config)
    assert record["protocol"] == "udp"
    assert record["offered_bps"] == 900e6
    assert record["throughput_bps"] == 823_413_300.0
    assert (record["packets_sent"], record["packets_lost"]) == (67465, 4680)
    assert record["jitter_max_ms"] == 9.0222
    assert "retransmits" not in record and "window_bytes" not in record
    assert "-j" in runner.calls[1][0]


def test_run_test_converts_now_to_utc_and_refuses_naive_times():
    runner = nuttcp_runner(completed(fixture("nuttcp-tcp-fparse-2.txt")))
    cet = timezone(timedelta(hours=1))
    (record,) = run_cern_to_fzk(runner, nuttcp.NuttcpConfig(dst="FZK", host="h"), now=NOW.astimezone(cet))
    assert record["time"] == NOW and record["time"].utcoffset() == timedelta(0)
    with pytest.raises(ValueError, match="timezone-aware"):
        nuttcp.run_test(
            runner, nuttcp.NuttcpConfig(dst="FZK", host="h"), src_site="A", dst_site="B", now=datetime(2026, 1, 1)
        )


# ---------------------------------------------------------------------------
# Kernel retransmit counters
# ---------------------------------------------------------------------------

# Captured from /proc/net/snmp on the development VM (Debian 12 kernel).
TCP_HEADER = (
    "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab"
    " InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors"
)
PROC_NET_SNMP = (
    f"{TCP_HEADER}\n"
    "Tcp: 1 200 120000 -1 131 69 11 5 34 8958 5590 17 0 84 0\n"
    "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
    "Udp: 1 2 0 3 0 0 0 0 0\n"
)
# `nstat -a -s -z TcpRetransSegs` output format (captured: value 0, here 17)
NSTAT_OUTPUT = "#kernel\nTcpRetransSegs                  17                 0.0\n"


def test_parse_retrans_counters():
    assert nuttcp.parse_proc_net_snmp_retrans(PROC_NET_SNMP) == 17
    assert nuttcp.parse_proc_net_snmp_retrans("Ip: 1 2\n") is None
    assert nuttcp.parse_nstat_retrans(NSTAT_OUTPUT) == 17
    assert nuttcp.parse_nstat_retrans("#kernel\n") is None


def test_proc_net_snmp_counter_reads_a_proc_tree(tmp_path):
    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "snmp").write_text(PROC_NET_SNMP)
    assert nuttcp.ProcNetSnmpRetransCounter(tmp_path).read_retrans_segs() == 17
    assert nuttcp.ProcNetSnmpRetransCounter(tmp_path / "missing").read_retrans_segs() is None


def test_proc_net_snmp_counter_reads_this_machine():
    value = nuttcp.ProcNetSnmpRetransCounter().read_retrans_segs()
    assert isinstance(value, int) and value >= 0


def test_nstat_counter_through_runner():
    runner = FakeCommandRunner({"nstat": completed(NSTAT_OUTPUT)})
    assert nuttcp.NstatRetransCounter(runner).read_retrans_segs() == 17
    assert runner.calls[0][0] == ["nstat", "-a", "-s", "-z", "TcpRetransSegs"]
    assert nuttcp.NstatRetransCounter(FakeCommandRunner(missing_is_not_found=True)).read_retrans_segs() is None


@pytest.mark.skipif(shutil.which("nstat") is None, reason="nstat (iproute2) not installed")
def test_nstat_counter_real_binary():
    value = nuttcp.NstatRetransCounter(SubprocessRunner()).read_retrans_segs()
    assert isinstance(value, int) and value >= 0


# ---------------------------------------------------------------------------
# runner.py (the transport every collector uses)
# ---------------------------------------------------------------------------


def test_subprocess_runner_captures_output_and_exit_code():
    runner = SubprocessRunner()
    code = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"
    result = runner.run([sys.executable, "-c", code], 30)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert result.error is None and not result.ok and not result.timed_out
    assert result.duration_s > 0


def test_subprocess_runner_forces_c_locale():
    result = SubprocessRunner().run([sys.executable, "-c", "import os; print(os.environ['LC_ALL'])"], 30)
    assert result.stdout == "C\n"


def test_subprocess_runner_missing_binary_does_not_raise():
    result = SubprocessRunner().run(["/nonexistent/nuttcp", "-V"], 5)
    assert result.exit_code == EXIT_NOT_FOUND
    assert result.error == "command not found: /nonexistent/nuttcp"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still "exists"; it is dead for our purpose
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


def test_subprocess_runner_timeout_kills_the_whole_process_group():
    # The parent starts a grandchild (like nuttcp forking), prints its pid, then both sleep.
    script = textwrap.dedent(
        """\
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print(child.pid, flush=True)
        time.sleep(60)
        """
    )
    started = time.monotonic()
    result = SubprocessRunner().run([sys.executable, "-c", script], 1.0)
    assert time.monotonic() - started < 15
    assert result.timed_out and result.exit_code is None
    assert result.error == f"timeout after 1 s: {sys.executable} killed"
    grandchild = int(result.stdout.split()[0])
    deadline = time.monotonic() + 5
    while _pid_alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _pid_alive(grandchild)


def test_fake_runner_scripts_and_records_calls():
    runner = FakeCommandRunner({"a": [completed("1"), completed("2")], "b": completed("x")})
    assert runner.run(["/usr/bin/a"], 1).stdout == "1"
    assert runner.run(["a"], 2).stdout == "2"
    assert runner.run(["b"], 3).stdout == runner.run(["b"], 3).stdout == "x"
    assert runner.programs_called() == ["a", "a", "b", "b"]
    with pytest.raises(AssertionError):
        runner.run(["a"], 1)  # exhausted


def test_utc_time_and_excerpt_helpers():
    assert utc_time(datetime(2026, 1, 1, 1, tzinfo=timezone(timedelta(hours=1)))) == datetime(2026, 1, 1, tzinfo=UTC)
    assert excerpt("") is None
    assert excerpt("abcdef", 3) == "...def"
    assert excerpt("abcdef", 3, tail=False) == "abc..."


def test_collectors_do_not_import_django_wanmon_or_celery():
    code = textwrap.dedent(
        """\
        import sys
        import collectors.runner, collectors.nuttcp, collectors.owamp, collectors.traceroute, collectors.hostinfo
        bad = sorted(m for m in sys.modules if m.split('.')[0] in {'django', 'wanmon', 'celery'})
        print(','.join(bad))
        """
    )
    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


# ---------------------------------------------------------------------------
# Real nuttcp on loopback (the Debian 6.1.2 binary when installed)
# ---------------------------------------------------------------------------


def _listening(port: int) -> bool:
    """Whether some socket LISTENs on ``port`` (state 0A in /proc/net/tcp{,6})."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            columns = line.split()
            if columns[3] == "0A" and int(columns[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


@pytest.mark.skipif(shutil.which("nuttcp") is None, reason="nuttcp not installed")
def test_run_test_against_a_real_loopback_nuttcp_server():
    control_port, data_port = free_port(), free_port()
    server = subprocess.Popen(
        ["nuttcp", "-S", "-1", "--nofork", f"-P{control_port}", f"-p{data_port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Wait for LISTEN without connecting: a probe connection would use up the one-shot server.
        deadline = time.monotonic() + 10
        while not _listening(control_port) and time.monotonic() < deadline:
            time.sleep(0.05)
        config = nuttcp.NuttcpConfig(
            dst="LOOP", host="127.0.0.1", duration_s=1, control_port=control_port, data_port=data_port
        )
        (record,) = nuttcp.run_test(SubprocessRunner(), config, src_site="HERE", dst_site="LOOP", now=NOW)
    finally:
        server.kill()
        server.wait()
    if "error" in record:
        pytest.skip(f"loopback nuttcp run failed here: {record['error']}")
    assert record["throughput_bps"] > 0
    version = record["tool_version"]
    if nuttcp.retransmits_reliable(version) is False:
        assert record["retransmits"] is None  # e.g. Debian's 6.1.2
