"""The nuttcp collector: one ``[[nuttcp]]`` table's configuration, its argv, its records, one run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any, ClassVar

from collectors.nuttcp.output import (
    BPS_PER_KBPS,
    BYTES_PER_KIB,
    DEFAULT_TIMEOUT_MARGIN_S,
    FORWARD,
    JITTER_OPTION_SINCE,
    PROTOCOLS,
    REVERSE,
    TOOL,
    NuttcpParseError,
    NuttcpResult,
    parse,
    parse_error,
    parse_version,
    parse_version_output,
)
from collectors.nuttcp.retrans import RetransCounter
from collectors.runner import (
    EXIT_NOT_FOUND,
    CommandResult,
    CommandRunner,
    endpoints,
    failed_run_record,
    output_fields,
    plain_number,
    record_head,
    utc_time,
)
from collectors.table import TableConfig

# ---------------------------------------------------------------------------
# Configuration and argv
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NuttcpConfig(TableConfig):
    """One ``[[nuttcp]]`` block of the agent configuration (docs/agent.md#configuration-toml).

    ``dst`` is the site code of the far end, ``host`` its nuttcp server.
    ``reverse`` also measures dst -> src with ``-r`` (the server transmits);
    for TCP ``flip_reverse`` adds ``-F`` so that the agent, not the server,
    opens the data connection (site firewalls usually allow outbound only).
    ``rate_bps`` is the UDP offered rate (required for UDP: nuttcp's own
    default is 1 Mbit/s) or an optional TCP rate cap.
    ``jitter``: ``None`` adds ``-j`` to UDP tests when the local nuttcp
    supports it.
    """

    TABLE: ClassVar[str] = "nuttcp"

    dst: str
    host: str
    protocol: str = "tcp"
    duration_s: float = 10.0
    window_bytes: int | None = None
    streams: int = 1
    reverse: bool = False
    rate_bps: float | None = None
    mss_bytes: int | None = None
    control_port: int | None = None
    data_port: int | None = None
    flip_reverse: bool = True
    jitter: bool | None = None
    interval_report_s: float | None = None
    interval_s: float | None = None  # scheduling period, used by the agent's scheduler
    binary: str = "nuttcp"
    timeout_margin_s: float = DEFAULT_TIMEOUT_MARGIN_S

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"nuttcp protocol must be one of {PROTOCOLS}, got {self.protocol!r}")
        if self.duration_s <= 0:
            raise ValueError("nuttcp duration_s must be > 0")
        if self.streams < 1:
            raise ValueError("nuttcp streams must be >= 1")
        if self.window_bytes is not None and self.window_bytes < BYTES_PER_KIB:
            raise ValueError("nuttcp window_bytes must be >= 1024 (nuttcp sets windows in KiB)")
        if self.protocol == "udp" and not self.rate_bps:
            raise ValueError("nuttcp UDP tests need rate_bps (nuttcp's default rate is only 1 Mbit/s)")
        if self.rate_bps is not None and self.rate_bps <= 0:
            raise ValueError("nuttcp rate_bps must be > 0")

    @property
    def timeout_s(self) -> float:
        """Deadline for one nuttcp run."""
        return self.duration_s + self.timeout_margin_s

    def directions(self) -> tuple[str, ...]:
        """Directions one test cycle measures."""
        return (FORWARD, REVERSE) if self.reverse else (FORWARD,)


def window_kib(window_bytes: int) -> int:
    """nuttcp's ``-w`` takes KiB: the nearest whole KiB (at least 1)."""
    return max(1, int((Decimal(window_bytes) / BYTES_PER_KIB).to_integral_value(rounding=ROUND_HALF_EVEN)))


def jitter_supported(version: str | None) -> bool:
    """Whether this nuttcp understands ``-j`` (unknown version: assume not, it would hang 6.1.2)."""
    parsed = parse_version(version)
    return parsed is not None and parsed >= JITTER_OPTION_SINCE


def build_argv(config: NuttcpConfig, *, direction: str = FORWARD, version: str | None = None) -> list[str]:
    """nuttcp client argv for one direction of ``config``.

    Options use nuttcp's classic attached form (``-T10``), understood by
    every version. ``version`` is the local nuttcp's version (for ``-j``).
    """
    if direction not in (FORWARD, REVERSE):
        raise ValueError(f"direction must be {FORWARD!r} or {REVERSE!r}")
    argv = [config.binary, "-fparse", f"-T{plain_number(config.duration_s)}"]
    if direction == FORWARD:
        argv.append("-t")
    else:
        argv.append("-r")
        if config.protocol == "tcp" and config.flip_reverse:
            argv.append("-F")  # nuttcp refuses -F with UDP
    if config.protocol == "udp":
        argv.append("-u")
        if config.jitter or (config.jitter is None and jitter_supported(version)):
            argv.append("-j")
    if config.window_bytes is not None:
        argv.append(f"-w{window_kib(config.window_bytes)}")
    if config.streams > 1:
        argv.append(f"-N{config.streams}")
    if config.rate_bps is not None:
        argv.append(f"-R{plain_number(config.rate_bps / BPS_PER_KBPS)}")
    if config.mss_bytes is not None and config.protocol == "tcp":
        argv.append(f"-M{config.mss_bytes}")
    if config.interval_report_s is not None:
        argv.append(f"-i{plain_number(config.interval_report_s)}")
    if config.control_port is not None:
        argv.append(f"-P{config.control_port}")
    if config.data_port is not None:
        argv.append(f"-p{config.data_port}")
    argv.append(config.host)
    return argv


def detect_version(runner: CommandRunner, binary: str = "nuttcp", timeout_s: float = 10.0) -> CommandResult:
    """Run ``nuttcp -V``; the version is ``parse_version_output(result.stdout)``."""
    return runner.run([binary, "-V"], timeout_s)


# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------


def _record_fields(config: NuttcpConfig, direction: str, *, src_site: str, dst_site: str) -> dict[str, Any]:
    """What a ``throughput`` record of ``config``'s test in ``direction`` says besides its type, time and tool (the
    :func:`record_head` arguments, measured or failed): its ends, the test settings, the direction."""
    settings: dict[str, Any] = {"protocol": config.protocol, "duration_s": config.duration_s}
    if config.protocol == "tcp":
        settings["streams"] = config.streams
        settings["window_bytes"] = config.window_bytes
        settings["mss_bytes"] = config.mss_bytes
    else:
        settings["offered_bps"] = float(config.rate_bps) if config.rate_bps is not None else None
        if config.streams > 1:
            settings["streams"] = config.streams
    ends = endpoints(direction == FORWARD, src_site=src_site, dst_site=dst_site, host=config.host)
    return {"ends": ends, **settings, "direction": direction}


def result_to_record(
    result: NuttcpResult,
    config: NuttcpConfig,
    *,
    direction: str,
    src_site: str,
    dst_site: str,
    time: datetime,
    host_retrans_segs: int | None = None,
) -> dict[str, Any]:
    """A ``throughput`` record (docs/scenario-format.md#measurement-records) from a parsed run.

    ``host_retrans_segs`` is the host-wide ``TcpRetransSegs`` increase during
    the test; it stands in for ``retransmits`` when nuttcp's count is unknown.
    It counts every TCP flow of the host, so it is an upper bound.
    """
    fields = _record_fields(config, direction, src_site=src_site, dst_site=dst_site)
    record = record_head("throughput", tool=TOOL, time=time, **fields)
    record["duration_s"] = result.duration_s
    record["throughput_bps"] = result.throughput_bps
    record["transferred_bytes"] = result.transferred_bytes
    if result.protocol == "tcp":
        retransmits, source = result.retransmits, "nuttcp" if result.retransmits is not None else None
        if retransmits is None and host_retrans_segs is not None:
            retransmits, source = host_retrans_segs, "host_counter"
        record["retransmits"] = retransmits
        record["rtt_ms"] = result.rtt_ms
        if result.mss_bytes is not None:
            record["mss_bytes"] = result.mss_bytes
        extras: dict[str, Any] = {
            "retransmits_source": source,
            "retransmits_reported": result.retransmits_reported,
            "host_retrans_segs": host_retrans_segs,
            "cwnd_bytes": result.cwnd_bytes,
            "rate_limit_bps": float(config.rate_bps) if config.rate_bps is not None else None,
        }
    else:
        record["packets_sent"] = result.packets_sent
        record["packets_lost"] = result.packets_lost
        extras = {
            "loss_pct": result.loss_pct,
            "jitter_max_ms": result.jitter_max_ms,
            "owd_avg_ms": result.owd_avg_ms,
        }
    extras.update({"tx_cpu_pct": result.tx_cpu_pct, "rx_cpu_pct": result.rx_cpu_pct})
    record.update({key: value for key, value in extras.items() if value is not None})
    if result.tool_version:
        record["tool_version"] = result.tool_version
    if result.notes:
        record["notes"] = list(result.notes)
    return record


def error_record(
    config: NuttcpConfig,
    *,
    direction: str,
    src_site: str,
    dst_site: str,
    time: datetime,
    error: str,
    command: CommandResult | None = None,
    argv: list[str] | None = None,
    tool_version: str | None = None,
) -> dict[str, Any]:
    """A ``throughput`` record for a test that produced no measurement.

    It carries the test parameters and ``error``; measurement fields are
    absent. ``PATH_DOWN`` needs these: a test that cannot connect is evidence.
    """
    fields = _record_fields(config, direction, src_site=src_site, dst_site=dst_site)
    record = failed_run_record("throughput", tool=TOOL, time=time, error=error, command=command, argv=argv, **fields)
    if tool_version:
        record["tool_version"] = tool_version
    return record


@dataclass
class _Clock:
    """Start time of successive tests within one cycle: each starts when the previous ended."""

    start: datetime
    elapsed_s: float = 0.0

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.elapsed_s)


def run_test(
    runner: CommandRunner,
    config: NuttcpConfig,
    *,
    src_site: str,
    dst_site: str,
    now: datetime,
    retrans_counter: RetransCounter | None = None,
    directions: tuple[str, ...] | None = None,
) -> list[dict[str, Any]]:
    """Run the configured nuttcp test(s) and return one record per direction.

    ``directions`` (default: the configuration's) picks them: a test on demand of the reverse direction alone
    measures ``(REVERSE,)``.

    Never raises for anything the tool, the network or the far end does:
    failures become error records. ``now`` is the start of the first test;
    the reverse test's ``time`` is when it started (after the first ended).
    ``retrans_counter`` (optional) reads the host's ``TcpRetransSegs`` before
    and after forward TCP tests, where this host is the transmitter.
    """
    clock = _Clock(utc_time(now))
    version_result = detect_version(runner, config.binary)
    local_version = parse_version_output(version_result.stdout + version_result.stderr)
    records: list[dict[str, Any]] = []
    for direction in directions or config.directions():
        started = clock.now()
        if version_result.exit_code == EXIT_NOT_FOUND and version_result.error:
            records.append(
                error_record(
                    config,
                    direction=direction,
                    src_site=src_site,
                    dst_site=dst_site,
                    time=started,
                    error=f"nuttcp is not installed ({version_result.error})",
                    command=version_result,
                )
            )
            continue
        argv = build_argv(config, direction=direction, version=local_version)
        measure_host = retrans_counter is not None and config.protocol == "tcp" and direction == FORWARD
        before = retrans_counter.read_retrans_segs() if measure_host and retrans_counter else None
        result = runner.run(argv, config.timeout_s)
        after = retrans_counter.read_retrans_segs() if measure_host and retrans_counter else None
        clock.elapsed_s += result.duration_s
        host_retrans = after - before if before is not None and after is not None and after >= before else None
        records.append(
            _record_from_run(
                config,
                result,
                argv,
                direction=direction,
                src_site=src_site,
                dst_site=dst_site,
                time=started,
                # Only the transmitter's version decides whether retrans can be
                # trusted; in reverse the transmitter is the (unknown) server.
                transmitter_version=local_version if direction == FORWARD else None,
                local_version=local_version,
                host_retrans_segs=host_retrans,
            )
        )
    return records


def _record_from_run(
    config: NuttcpConfig,
    result: CommandResult,
    argv: list[str],
    *,
    direction: str,
    src_site: str,
    dst_site: str,
    time: datetime,
    transmitter_version: str | None,
    local_version: str | None,
    host_retrans_segs: int | None,
) -> dict[str, Any]:
    common = {"direction": direction, "src_site": src_site, "dst_site": dst_site, "time": time}
    if result.error is not None or result.exit_code != 0:
        message = result.error or parse_error(result.stderr, result.stdout)
        message = message or f"nuttcp exited with status {result.exit_code}"
        return error_record(config, **common, error=message, command=result, argv=argv, tool_version=local_version)
    try:
        parsed = parse(result.stdout, tool_version=transmitter_version)
    except NuttcpParseError as exc:
        message = parse_error(result.stderr, result.stdout) or f"unparseable nuttcp output: {exc}"
        return error_record(config, **common, error=message, command=result, argv=argv, tool_version=local_version)
    record = result_to_record(parsed, config, **common, host_retrans_segs=host_retrans_segs)
    if local_version and "tool_version" not in record:
        record["tool_version"] = local_version
    record.update(output_fields(result, argv, exit_code=False))
    return record
