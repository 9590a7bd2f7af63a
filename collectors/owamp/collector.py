"""The owamp collector: owping's sessions mapped to directions, its argv, its records, one run.

``owping`` runs two sessions by default and prints the "to" session (this host -> remote) before the
"from" session (remote -> this host): see ``owping.c``. :func:`assign_directions` maps sessions to
directions, and :func:`run_test` turns them into per-direction ``owamp`` records
(docs/scenario-format.md#measurement-records) with ``src``/``dst`` site codes.

Clock synchronisation matters for the CLOCK_UNSYNC diagnosis. OWAMP only reports an error estimate
(``err=``/``MAXERR``) that means something when both clocks are NTP-synchronised; otherwise it prints
``(unsync)`` / ``SYNC 0``. Records then carry ``clock_synced: false`` and ``clock_error_ms: null``
(unknown, not small).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from collectors.owamp.common import OwampParseError, ntp_unsynced, parse_error
from collectors.owamp.owping import OwampSession, parse
from collectors.runner import (
    CommandResult,
    CommandRunner,
    endpoints,
    excerpt,
    failed_run_record,
    host_part,
    plain_number,
    record_head,
    utc_time,
)
from collectors.table import TableConfig

TOOL = "owping"

TO = "to"  # session sent by this host to the remote host (src -> dst)
FROM = "from"  # session sent by the remote host to this host (dst -> src)
# Record "direction" values, shared with the nuttcp collector.
RECORD_DIRECTION = {TO: "forward", FROM: "reverse"}

# owping's default packet interval is exponential with this mean; with -L the
# loss timeout. The results arrive after the last packet plus the timeout.
DEFAULT_TIMEOUT_MARGIN_S = 30.0


def _direction_by_address(session: OwampSession, remote: str) -> str | None:
    remote_is_sender = remote in (session.from_host, session.from_addr)
    remote_is_receiver = remote in (session.to_host, session.to_addr)
    if remote_is_receiver and not remote_is_sender:
        return TO
    if remote_is_sender and not remote_is_receiver:
        return FROM
    return None


def assign_directions(
    sessions: Sequence[OwampSession],
    *,
    requested: Sequence[str] = (TO, FROM),
    remote_host: str | None = None,
    stderr: str = "",
) -> dict[str, OwampSession]:
    """Map owping's printed sessions to ``"to"`` (src -> dst) and ``"from"`` (dst -> src).

    owping prints the "to" session first, then the "from" session. When a
    session is missing (its data could not be fetched) the remaining one is
    identified by the remote host's name/address in its FROM/TO fields, or by
    owping's "Unable to fetch data" message, which only the "to" session
    path prints. If it still cannot be told, nothing is assigned: a wrong
    direction would blame the wrong path.
    """
    expected = [direction for direction in (TO, FROM) if direction in requested]
    if len(sessions) >= len(expected):
        return dict(zip(expected, sessions, strict=False))
    if not sessions:
        return {}
    assigned: dict[str, OwampSession] = {}
    remote = host_part(remote_host) if remote_host else None
    for session in sessions:
        direction = _direction_by_address(session, remote) if remote else None
        if direction is None and len(sessions) == 1 and len(expected) == 2:
            if "Unable to fetch data" in stderr or "for to session" in stderr:
                direction = FROM
        if direction in expected and direction not in assigned:
            assigned[direction] = session
    return assigned


@dataclass(frozen=True)
class OwampConfig(TableConfig):
    """One ``[[owamp]]`` block of the agent configuration (docs/agent.md#configuration-toml).

    ``host`` is the remote owampd (``name``, ``name:port`` or ``[v6]:port``).
    ``packets`` per session, ``packet_interval_s`` mean gap between packets,
    ``loss_timeout_s`` after which a packet counts as lost, ``bucket_width_s``
    the histogram resolution of medians (owping's default is 100 µs).
    ``directions``: ``"both"``, ``"to"`` (src -> dst only) or ``"from"``.
    """

    TABLE: ClassVar[str] = "owamp"

    dst: str
    host: str
    packets: int = 100
    packet_interval_s: float = 0.1
    loss_timeout_s: float = 10.0
    bucket_width_s: float | None = 0.00001
    port_range: str | None = None
    source_address: str | None = None
    padding_bytes: int | None = None
    directions: str = "both"
    interval_s: float | None = None  # scheduling period, used by the agent's scheduler
    binary: str = "owping"
    timeout_margin_s: float = DEFAULT_TIMEOUT_MARGIN_S

    def __post_init__(self) -> None:
        if self.packets < 1:
            raise ValueError("owamp packets must be >= 1")
        if self.packet_interval_s <= 0 or self.loss_timeout_s <= 0:
            raise ValueError("owamp packet_interval_s and loss_timeout_s must be > 0")
        if self.directions not in ("both", TO, FROM):
            raise ValueError("owamp directions must be 'both', 'to' or 'from'")

    @property
    def requested(self) -> tuple[str, ...]:
        """Session directions owping is asked for, in the order it prints them."""
        return (TO, FROM) if self.directions == "both" else (self.directions,)

    @property
    def timeout_s(self) -> float:
        """Deadline for one owping run: the packets, the loss timeout, then a margin."""
        return self.packets * self.packet_interval_s + self.loss_timeout_s + self.timeout_margin_s


def build_argv(config: OwampConfig) -> list[str]:
    """owping argv for ``config``, asking for the ``-M`` machine-readable report."""
    argv = [
        config.binary,
        "-M",
        "-c",
        str(config.packets),
        "-i",
        plain_number(config.packet_interval_s),
        "-L",
        plain_number(config.loss_timeout_s),
    ]
    if config.bucket_width_s is not None:
        argv += ["-b", plain_number(config.bucket_width_s)]
    if config.port_range:
        argv += ["-P", config.port_range]
    if config.source_address:
        argv += ["-S", config.source_address]
    if config.padding_bytes is not None:
        argv += ["-s", str(config.padding_bytes)]
    if config.directions == TO:
        argv.append("-t")
    elif config.directions == FROM:
        argv.append("-f")
    argv.append(config.host)
    return argv


def session_to_record(
    session: OwampSession,
    *,
    direction: str,
    src_site: str,
    dst_site: str,
    host: str,
    time: datetime,
    ntp_warning: str | None = None,
) -> dict[str, Any]:
    """An ``owamp`` record (docs/scenario-format.md#measurement-records) for one session.

    ``direction`` is ``"to"`` (src_site -> dst_site) or ``"from"`` (reverse).
    ``ntp_warning`` is owamp's stderr UNSYNC line: it marks the clock as
    unsynchronised even if the session data did not.
    """
    ends = endpoints(direction == TO, src_site=src_site, dst_site=dst_site, host=host_part(host))
    synced = session.clock_synced
    if ntp_warning:
        synced = False
    record = record_head(
        "owamp",
        tool=TOOL,
        ends=ends,
        time=time,
        **session.figures(),
        clock_error_ms=session.clock_error_ms if synced else None,
        clock_synced=synced,
        direction=RECORD_DIRECTION[direction],
    )
    extras = {
        "hops": session.hops,
        "hops_min": session.hops_min,
        "hops_max": session.hops_max,
        "ttl_min": session.ttl_min,
        "ttl_max": session.ttl_max,
        "max_error_ms": session.max_error_ms,
        "bucket_width_ms": session.bucket_width_ms,
        "sid": session.sid,
        "ntp_warning": ntp_warning,
    }
    record.update({key: value for key, value in extras.items() if value is not None})
    if session.packets_sent == 0:
        record["error"] = "owamp session holds no packets (0 sent): no data for this direction"
    return record


def error_record(
    *,
    direction: str,
    src_site: str,
    dst_site: str,
    host: str,
    time: datetime,
    error: str,
    command: CommandResult | None = None,
    argv: list[str] | None = None,
) -> dict[str, Any]:
    """An ``owamp`` record for a direction that produced no session (no measurement fields)."""
    ends = endpoints(direction == TO, src_site=src_site, dst_site=dst_site, host=host_part(host))
    record = failed_run_record(
        "owamp",
        tool=TOOL,
        ends=ends,
        time=time,
        error=error,
        command=command,
        argv=argv,
        direction=RECORD_DIRECTION[direction],
    )
    warning = ntp_unsynced(command.stderr) if command is not None else None
    if warning:
        record["clock_synced"] = False
        record["ntp_warning"] = warning
    return record


def run_test(
    runner: CommandRunner,
    config: OwampConfig,
    *,
    src_site: str,
    dst_site: str,
    now: datetime,
) -> list[dict[str, Any]]:
    """Run owping once and return one ``owamp`` record per requested direction.

    Never raises for what owping or the network does: a missing binary, a
    timeout, an unreachable server or a missing session become error records.
    """
    time = utc_time(now)
    argv = build_argv(config)
    result = runner.run(argv, config.timeout_s)
    common = {"src_site": src_site, "dst_site": dst_site, "host": config.host, "time": time}

    if result.error is not None:
        message = result.error
        if result.exit_code == 127:
            message = f"owping is not installed ({result.error})"
        return [error_record(direction=d, **common, error=message, command=result, argv=argv) for d in config.requested]

    try:
        sessions = parse(result.stdout)
    except OwampParseError as exc:
        return [
            error_record(direction=d, **common, error=f"unparseable owping output: {exc}", command=result, argv=argv)
            for d in config.requested
        ]
    assigned = assign_directions(
        sessions, requested=config.requested, remote_host=config.host, stderr=result.stderr + result.stdout
    )
    ntp_warning = ntp_unsynced(result.stderr)
    records: list[dict[str, Any]] = []
    for direction in config.requested:
        session = assigned.get(direction)
        if session is None:
            message = parse_error(result.stderr) or parse_error(result.stdout)
            if message is None:
                message = f"owping printed no {direction!r} session (exit status {result.exit_code})"
            records.append(error_record(direction=direction, **common, error=message, command=result, argv=argv))
            continue
        record = session_to_record(session, direction=direction, ntp_warning=ntp_warning, **common)
        record["command"] = shlex.join(argv)
        record["packets_requested"] = config.packets
        if result.exit_code != 0:
            record["exit_code"] = result.exit_code
        stderr_excerpt = excerpt(result.stderr)
        if stderr_excerpt:
            record["stderr_excerpt"] = stderr_excerpt
        records.append(record)
    return records
