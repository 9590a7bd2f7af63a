"""``wanmon-agent``: the site agent's command line (docs/agent.md).

::

    wanmon-agent run   --config FILE              the daemon (SIGTERM/SIGINT: finish the upload in
                                                  flight, spool what finished collecting, exit 0)
    wanmon-agent once  --config FILE [--dry-run]  every collector once, then one upload pass;
                                                  --dry-run prints the records as JSON lines on
                                                  stdout and touches neither spool nor network
    wanmon-agent spool --config FILE [--json] [--requeue-rejected]
                                                  what waits in the spool, what the centre refused
                                                  (each file in rejected/ and why), and when each
                                                  collector last ran and runs next (read-only, safe
                                                  while the daemon runs); --requeue-rejected puts
                                                  refused batches back in the queue once the cause
                                                  is fixed
    wanmon-agent --version

Exit status: 0 success; 1 ``once`` left records waiting (the centre was unreachable: they are
safe in the spool and go with the next upload) or had records refused, or the spool is in use
by another agent process or not writable; 2 bad configuration (each problem printed on stderr
as ``FILE: key: message``, the token file included) or bad command line.

Logs are JSON lines on stderr (:mod:`agents.logs`); stdout carries only ``--dry-run`` records
and the ``spool`` report.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import msgspec

from agents import __version__
from agents.adapters import build_collectors, close_collectors, describe
from agents.clock import SYSTEM_CLOCK, Clock
from agents.config import EXIT_CONFIG_ERROR, AgentConfig, ConfigError, load_config, read_token
from agents.jobs import DoneJobs, job_collector, jobs_forever
from agents.logs import setup_logging
from agents.polls import POLL_LOG_NAME, PollLog, read_poll_log
from agents.scheduler import Scheduler
from agents.spool import RejectedFile, Spool, SpoolError
from agents.uploader import Backoff, Uploader, drain, upload_forever
from collectors.nuttcp import ProcNetSnmpRetransCounter
from collectors.runner import CommandRunner, SubprocessRunner

__all__ = ["main", "run_daemon"]

logger = logging.getLogger("agents")

EXIT_OK = 0
EXIT_INCOMPLETE = 1
REJECTED_SHOWN = 20  # rejected files listed by `spool`, most recent first (the counts cover them all)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``wanmon-agent`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        _print_errors(exc)
        return EXIT_CONFIG_ERROR
    setup_logging(config.agent.log_level)
    for warning in config.file_warnings:
        logger.warning(warning, extra={"config": config.source})
    try:
        return args.handler(config, args)
    except ConfigError as exc:  # found late: the token file, a [[twamp]] table refused by its module
        _print_errors(exc)
        return EXIT_CONFIG_ERROR
    except SpoolError as exc:  # busy (another agent), or not writable
        logger.error(str(exc))
        return EXIT_INCOMPLETE


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wanmon-agent", description="wanmon site agent")
    parser.add_argument("--version", action="version", version=f"wanmon-agent {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{run,once,spool}")

    run = commands.add_parser("run", help="run the agent daemon")
    run.set_defaults(handler=_run)
    once = commands.add_parser("once", help="run every collector once, then upload")
    once.add_argument("--dry-run", action="store_true", help="print records as JSON lines; no spool, no upload")
    once.set_defaults(handler=_once)
    spool = commands.add_parser("spool", help="show what waits in the spool")
    spool.add_argument("--json", action="store_true", help="one JSON object instead of text")
    spool.add_argument("--requeue-rejected", action="store_true", help="send rejected batches again")
    spool.set_defaults(handler=_spool)
    for command in (run, once, spool):
        command.add_argument("--config", required=True, metavar="FILE", help="agent TOML configuration")
    return parser


def _print_errors(exc: ConfigError) -> None:
    for line in exc.errors:
        sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _open_spool(config: AgentConfig) -> Spool:
    return Spool(
        config.agent.spool_dir,
        max_bytes=config.agent.spool_max_bytes,
        batch_max_records=config.agent.batch_max_records,
    )


def _poll_log(spool: Spool) -> PollLog:
    return PollLog(spool.root / POLL_LOG_NAME)


def _uploader(config: AgentConfig, token: str) -> Uploader:
    return Uploader(
        ingest_url=config.central.ingest_url,
        token=token,
        agent_version=__version__,
        agent_name=config.agent.name,
        ca_file=config.central.ca_file,
        timeout_s=config.central.timeout_s,
    )


# --- once ------------------------------------------------------------------------------------------


def _once(config: AgentConfig, args: argparse.Namespace) -> int:
    if args.dry_run:
        collectors = build_collectors(config)
        try:
            asyncio.run(Scheduler(collectors, sink=_print_records).run_once())
        finally:
            close_collectors(collectors)
        return EXIT_OK
    token = read_token(config)  # before collecting: a missing token is a configuration error (exit 2)
    return _spooled(config, token, _once_async)


def _spooled(config: AgentConfig, token: str, main: Callable[..., Coroutine[Any, Any, int]]) -> int:
    """Run ``main(config, spool, collectors, token)`` with the spool open; the collectors are closed after."""
    collectors = build_collectors(config)
    try:
        with _open_spool(config) as spool:
            return asyncio.run(main(config, spool, collectors, token))
    finally:
        close_collectors(collectors)


def _print_records(collector: Any, records: list[Any]) -> None:
    out = sys.stdout
    for record in records:
        out.write(msgspec.json.encode(record).decode() + "\n")
    out.flush()


async def _once_async(config: AgentConfig, spool: Spool, collectors: list[Any], token: str) -> int:
    results = await Scheduler(
        collectors, sink=lambda c, records: spool.append(records, source=c.name), poll_log=_poll_log(spool)
    ).run_once()
    async with _uploader(config, token) as uploader:
        report = await drain(
            spool, uploader, backoff=Backoff(), split_after_server_errors=config.central.split_after_server_errors
        )
    status = spool.status()
    logger.info(
        "once: done",
        extra={
            "records_collected": sum(len(r.records) for r in results),
            "records_uploaded": report.sent_records,
            "records_waiting": status.records_waiting,
            "batches_rejected": report.rejected_batches,
            "upload_error": report.last_error,
        },
    )
    return EXIT_INCOMPLETE if report.failed or report.rejected_batches else EXIT_OK


# --- run -------------------------------------------------------------------------------------------


def _run(config: AgentConfig, args: argparse.Namespace) -> int:
    return _spooled(config, read_token(config), run_daemon)


async def run_daemon(
    config: AgentConfig,
    spool: Spool,
    collectors: list[Any],
    token: str,
    *,
    stop: asyncio.Event | None = None,
    clock: Clock = SYSTEM_CLOCK,
    job_runner: CommandRunner | None = None,
) -> int:
    """The daemon: collectors on their schedule, the upload loop and the tests on demand ([jobs], agents/jobs.py),
    until SIGTERM/SIGINT or ``stop``.

    With ``stop`` given, the caller decides when it ends and no signal handler is installed
    (tests run the daemon in-process, with a ``clock`` of their own and a ``job_runner`` for the jobs' tools).
    """
    if stop is None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, _request_stop, stop, signum)
    logger.info(
        "agent started",
        extra={
            "version": __version__,
            "site": config.agent.site,
            "agent": config.agent.name,
            "ingest_url": config.central.ingest_url,
            "spool": str(spool.root),
            "collectors": describe(collectors),
            "jobs_url": config.central.jobs_url if config.jobs.enabled else None,
            "spool_status": spool.status().to_dict(),
        },
    )
    if not collectors and not config.jobs.enabled:
        logger.warning("no collector configured: only the spool is uploaded")
    # Set when records are spooled (the sink runs on the event loop) and on stop: the upload loop then
    # sends them upload_after_collect_s later rather than at its next interval.
    wake = asyncio.Event() if config.agent.upload_after_collect_s > 0 else None

    def sink(collector: Any, records: list[Any]) -> None:
        spool.append(records, source=collector.name)
        if wake is not None:
            wake.set()

    async def relay_stop() -> None:
        await stop.wait()
        if wake is not None:
            wake.set()

    scheduler = Scheduler(
        collectors,
        sink=sink,
        start_jitter_s=config.agent.start_jitter_s,
        clock=clock,
        poll_log=_poll_log(spool),
    )
    async with _uploader(config, token) as uploader:
        jobs: list[Coroutine[Any, Any, None]] = []
        if config.jobs.enabled:
            runner, retrans = job_runner or SubprocessRunner(), ProcNetSnmpRetransCounter()
            jobs.append(
                jobs_forever(
                    config,
                    lambda: uploader.fetch_json(config.central.jobs_url),
                    scheduler.run_collector,
                    stop,
                    done=DoneJobs(spool.root),
                    build=lambda job: job_collector(job, config, runner=runner, retrans=retrans),
                    clock=clock,
                )
            )
        await asyncio.gather(
            *jobs,
            scheduler.run_forever(stop, grace_s=config.agent.shutdown_grace_s),
            upload_forever(
                spool,
                uploader,
                stop,
                interval_s=config.agent.upload_interval_s,
                clock=clock,
                split_after_server_errors=config.central.split_after_server_errors,
                wake=wake,
                settle_s=config.agent.upload_after_collect_s,
            ),
            relay_stop(),
        )
    logger.info("agent stopped", extra={"spool_status": spool.status().to_dict()})
    return EXIT_OK


def _request_stop(stop: asyncio.Event, signum: int) -> None:
    logger.info("stop requested", extra={"signal": signal.Signals(signum).name})
    stop.set()


# --- spool -----------------------------------------------------------------------------------------


def _spool(config: AgentConfig, args: argparse.Namespace) -> int:
    spool = _open_spool(config)
    if args.requeue_rejected:
        with spool:
            moved = spool.requeue_rejected()
        logger.info("rejected batches put back in the queue", extra={"batches": moved})
    status = spool.status()
    polls = read_poll_log(spool.root / POLL_LOG_NAME)
    rejected = spool.rejected(limit=REJECTED_SHOWN) if status.rejected_batches else []
    if args.json:
        report = {
            "spool": str(spool.root),
            **status.to_dict(),
            "rejected_files": [r.to_dict() for r in rejected],
            "collectors": polls,
        }
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
        return EXIT_OK
    oldest = "-" if status.oldest_age_s is None else f"{_duration(status.oldest_age_s)} ({status.oldest_age_s:.0f} s)"
    lines = [
        f"spool:            {spool.root}",
        f"records waiting:  {status.records_waiting} "
        f"({status.batch_records} in {status.batches} batches, {status.pending_records} not yet batched)",
        f"batches waiting:  {status.batches}",
        f"oldest waiting:   {oldest}",
        f"rejected:         {status.rejected_batches} batches, {status.rejected_records} records"
        + (f" (see {spool.rejected_dir})" if status.rejected_batches else ""),
    ]
    lines += [f"  {_rejected_line(r)}" for r in rejected]
    if status.rejected_batches > len(rejected):
        lines.append(f"  ... and {status.rejected_batches - len(rejected)} more files in {spool.rejected_dir}")
    lines.append(f"size:             {_size(status.bytes)} of {_size(status.max_bytes)}")
    if status.dropped_records:
        lines.append(f"dropped:          {status.dropped_records} records (spool or disk full, oldest first)")
    if polls:
        lines.append("collectors (last run; next due):")
        lines += [f"  {name}: {_poll_line(entry)}" for name, entry in sorted(polls.items())]
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def _rejected_line(rejected: RejectedFile) -> str:
    if rejected.status is None:
        answer = "not sent"
    else:
        answer = f"HTTP {rejected.status}" + (f" {rejected.attempts} times" if rejected.attempts else "")
    when = f" at {rejected.rejected_at}" if rejected.rejected_at else ""
    return f"{rejected.path.name}: {rejected.records} records, {answer}{when}: {rejected.reason}"


def _poll_line(entry: dict[str, Any]) -> str:
    last = entry.get("last_started")
    if last is None:
        text = "never ran"
    else:
        outcome = "ok" if entry.get("last_error") is None else f"error: {entry['last_error']}"
        text = f"{last}, {entry.get('last_records', 0)} records, {outcome}"
    text += f"; runs {entry.get('runs', 0)}, failed {entry.get('failed_runs', 0)}"
    text += f", skipped {entry.get('skipped_runs', 0)}"
    if entry.get("next_due"):
        text += f"; next {entry['next_due']}"
    return text


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h {minutes:02d}m"
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    return f"{minutes}m {secs:02d}s"


def _size(n_bytes: int) -> str:
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n_bytes} B"


if __name__ == "__main__":
    sys.exit(main())
