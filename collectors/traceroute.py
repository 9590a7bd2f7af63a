"""Route collector: ``tracepath -n`` / ``traceroute -n`` argv, pure parsers, test runner.

Formats are those of Debian bookworm's tools, read from their sources:

* iputils ``tracepath`` (20221126): one line per reply,
  ``"%2d:  <addr padded to 52>%3d.%03dms <reached|pmtu N|asymm N|!H...>"``,
  ``"%2d?: [LOCALHOST] ... pmtu N"`` for the local MTU, ``"%2d:  no reply"``,
  and a final ``"     Resume: pmtu N hops H back B "``. tracepath is the one
  that discovers the path MTU, hence ``pmtu_bytes``.
* Dmitry Butskoy's ``traceroute`` (2.1.x): a header
  ``traceroute to NAME (ADDR), N hops max, M byte packets``, then per TTL
  ``"%2u "`` followed by each probe: ``" *"`` (no answer) or
  ``" ADDR"`` (printed when it differs from the previous probe's), then
  ``"  %.3f ms"`` and an optional ``" !H"``-style annotation.
* pScheduler ``trace`` results (JSON): ``paths[0]`` is a list of hops,
  ``{}`` for a hop that did not answer.

A hop is an address, or ``None`` for a TTL that nobody answered (``*``).
The hop list includes the destination itself when it answered.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar

from collectors.runner import (
    EXIT_NOT_FOUND,
    CommandResult,
    CommandRunner,
    endpoints,
    excerpt,
    failed_run_record,
    record_head,
    utc_time,
)
from collectors.table import TableConfig

TRACEPATH = "tracepath"
TRACEROUTE = "traceroute"
TOOLS = (TRACEPATH, TRACEROUTE)

DEFAULT_MAX_HOPS = 30
# tracepath sends up to 3 probes per TTL with a 1 s wait, traceroute 3 probes
# with a 5 s wait by default; an unreachable destination costs max_hops of them.
DEFAULT_TIMEOUT_S = 180.0


class TraceParseError(ValueError):
    """The text is not output of the expected route tool."""


@dataclass(frozen=True)
class Hop:
    """One TTL of a trace.

    ``address`` is the first responder (``None`` when no probe was
    answered); ``addresses`` every distinct responder (load-balanced paths
    answer from several). ``annotations`` keeps tool markers such as
    ``reached``, ``!H``, ``asymm 5``.
    """

    ttl: int
    address: str | None
    addresses: tuple[str, ...] = ()
    rtts_ms: tuple[float, ...] = ()
    annotations: tuple[str, ...] = ()
    hostname: str | None = None


@dataclass(frozen=True)
class TraceResult:
    """A parsed trace: the hops in TTL order, the path MTU when known."""

    tool: str
    hops: tuple[Hop, ...]
    pmtu_bytes: int | None = None
    reached: bool = False
    destination: str | None = None
    hops_back: int | None = None

    @property
    def addresses(self) -> list[str | None]:
        """Hop addresses in TTL order, ``None`` for unanswered TTLs."""
        return [hop.address for hop in self.hops]


def _hops_in_order(by_ttl: Mapping[int, Hop]) -> tuple[Hop, ...]:
    """Fill TTL gaps with empty hops so position = TTL - 1."""
    if not by_ttl:
        return ()
    return tuple(by_ttl.get(ttl, Hop(ttl=ttl, address=None)) for ttl in range(1, max(by_ttl) + 1))


# ---------------------------------------------------------------------------
# tracepath
# ---------------------------------------------------------------------------

_TP_LINE = re.compile(r"^\s*(?P<ttl>\d+)(?P<guess>\??):\s+(?P<rest>.*?)\s*$")
_TP_RTT = re.compile(r"(?P<ms>\d+\.\d+)ms\b")
_TP_PMTU = re.compile(r"\bpmtu (?P<pmtu>\d+)")
_TP_ASYMM = re.compile(r"\basymm\s+(?P<hops>\d+)")
_TP_RESUME = re.compile(r"^\s*Resume: pmtu (?P<pmtu>\d+)(?: hops (?P<hops>\d+))?(?: back (?P<back>\d+))?")
_TP_TOO_MANY = re.compile(r"^\s*Too many hops: pmtu (?P<pmtu>\d+)")
_TP_NO_ADDRESS = ("no reply", "send failed", "reply received 8)", "[LOCALHOST]")


def parse_tracepath(text: str) -> TraceResult:
    """Parse iputils ``tracepath -n`` output.

    ``pmtu_bytes`` is the final ``Resume: pmtu``; if tracepath was cut short,
    the last ``pmtu N`` it printed.
    """
    hops: dict[int, dict[str, Any]] = {}
    pmtu: int | None = None
    reached = False
    hops_back: int | None = None
    seen_any = False
    for line in text.splitlines():
        if match := _TP_RESUME.match(line):
            pmtu = int(match["pmtu"])
            hops_back = int(match["back"]) if match["back"] else None
            seen_any = True
            continue
        if match := _TP_TOO_MANY.match(line):
            pmtu = int(match["pmtu"])
            seen_any = True
            continue
        match = _TP_LINE.match(line)
        if not match:
            continue
        seen_any = True
        ttl, rest = int(match["ttl"]), match["rest"]
        if pmtu_match := _TP_PMTU.search(rest):
            pmtu = int(pmtu_match["pmtu"])
        if rest.startswith("[LOCALHOST]"):
            continue  # the local host's own MTU report, not a hop
        hop = hops.setdefault(ttl, {"addresses": [], "rtts": [], "annotations": []})
        if rest.startswith(_TP_NO_ADDRESS):
            continue
        address = rest.split()[0]
        if address not in hop["addresses"]:
            hop["addresses"].append(address)
        if rtt := _TP_RTT.search(rest):
            hop["rtts"].append(float(rtt["ms"]))
        tail = rest[rtt.end() :] if rtt else rest[len(address) :]
        for marker in ("reached", "!H", "!N", "!A", "!P"):
            if re.search(rf"(?<!\S){re.escape(marker)}(?!\S)", tail) and marker not in hop["annotations"]:
                hop["annotations"].append(marker)
        if asymm := _TP_ASYMM.search(tail):
            note = f"asymm {asymm['hops']}"
            if note not in hop["annotations"]:
                hop["annotations"].append(note)
        if "reached" in tail:
            reached = True
    if not seen_any:
        raise TraceParseError("no tracepath output")
    by_ttl = {
        ttl: Hop(
            ttl=ttl,
            address=data["addresses"][0] if data["addresses"] else None,
            addresses=tuple(data["addresses"]),
            rtts_ms=tuple(data["rtts"]),
            annotations=tuple(data["annotations"]),
        )
        for ttl, data in hops.items()
    }
    ordered = _hops_in_order(by_ttl)
    return TraceResult(
        tool=TRACEPATH,
        hops=ordered,
        pmtu_bytes=pmtu,
        reached=reached,
        destination=ordered[-1].address if reached and ordered else None,
        hops_back=hops_back,
    )


# ---------------------------------------------------------------------------
# traceroute
# ---------------------------------------------------------------------------

_TR_HEADER = re.compile(r"^traceroute to (?P<name>\S+) \((?P<addr>[^)]+)\), (?P<max>\d+) hops max")
_TR_HOP = re.compile(r"^\s*(?P<ttl>\d+)\s+(?P<rest>.*?)\s*$")
_TR_MTU = re.compile(r"^(?:F=|!F-)(?P<mtu>\d+)$")


def _traceroute_hop(ttl: int, rest: str) -> tuple[Hop, int | None]:
    tokens = rest.split()
    addresses: list[str] = []
    rtts: list[float] = []
    annotations: list[str] = []
    mtu: int | None = None
    index = 0
    while index < len(tokens):
        token = tokens[index]
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if token == "*":
            pass
        elif following == "ms" and re.fullmatch(r"\d+(?:\.\d+)?", token):
            rtts.append(float(token))
            index += 1
        elif token.startswith("!") or token.startswith("F="):
            annotations.append(token)
            if mtu_match := _TR_MTU.match(token):
                mtu = int(mtu_match["mtu"])
        elif token.startswith(("[", "<", "'")):
            pass  # AS path, ICMP extension, back-hops: not needed here
        else:
            address = token
            # Without -n traceroute prints "name (addr)": keep the address.
            if following and following.startswith("(") and following.endswith(")"):
                address = following[1:-1]
                index += 1
            if address not in addresses:
                addresses.append(address)
        index += 1
    hop = Hop(
        ttl=ttl,
        address=addresses[0] if addresses else None,
        addresses=tuple(addresses),
        rtts_ms=tuple(rtts),
        annotations=tuple(annotations),
    )
    return hop, mtu


def parse_traceroute(text: str) -> TraceResult:
    """Parse ``traceroute -n`` output (Butskoy's traceroute 2.x, as on Debian).

    ``reached`` is true when the last hop is the destination address of the
    header. ``pmtu_bytes`` is only known from ``--mtu`` (``F=N``) or a
    fragmentation-needed reply (``!F-N``).
    """
    destination: str | None = None
    by_ttl: dict[int, Hop] = {}
    pmtu: int | None = None
    for line in text.splitlines():
        if header := _TR_HEADER.match(line.strip()):
            destination = header["addr"]
            continue
        match = _TR_HOP.match(line)
        if not match or destination is None:
            continue
        hop, mtu = _traceroute_hop(int(match["ttl"]), match["rest"])
        by_ttl[hop.ttl] = hop
        if mtu is not None:
            pmtu = mtu if pmtu is None else min(pmtu, mtu)
    if destination is None:
        raise TraceParseError("no 'traceroute to ...' header")
    hops = _hops_in_order(by_ttl)
    reached = bool(hops) and destination in hops[-1].addresses
    return TraceResult(tool=TRACEROUTE, hops=hops, pmtu_bytes=pmtu, reached=reached, destination=destination)


# ---------------------------------------------------------------------------
# pScheduler trace results
# ---------------------------------------------------------------------------


def _iso_duration_ms(value: str | None) -> float | None:
    """pScheduler RTTs such as ``PT0.0214S`` to milliseconds (seconds-only durations)."""
    if not value:
        return None
    match = re.fullmatch(r"P(?:0D)?T(?P<s>\d+(?:\.\d+)?)S", value)
    return float(Decimal(match["s"]) * 1000) if match else None


def parse_pscheduler_trace(document: str | Mapping[str, Any]) -> TraceResult:
    """Parse a pScheduler ``trace`` result (the result object or an archiver envelope)."""
    data: Any = json.loads(document) if isinstance(document, str) else document
    if "paths" not in data:
        if isinstance(data.get("result"), Mapping) and "paths" in data["result"]:
            data = data["result"]
        elif isinstance(data.get("run"), Mapping) and "paths" in (data["run"].get("result-merged") or {}):
            data = data["run"]["result-merged"]
        else:
            raise TraceParseError("no 'paths' in the pScheduler trace document")
    paths = data.get("paths") or [[]]
    by_ttl: dict[int, Hop] = {}
    mtus: list[int] = []
    for ttl, raw_hop in enumerate(paths[0], start=1):
        address = raw_hop.get("ip")
        rtt = _iso_duration_ms(raw_hop.get("rtt"))
        annotations = (raw_hop["error"],) if raw_hop.get("error") else ()
        if raw_hop.get("mtu"):
            mtus.append(int(raw_hop["mtu"]))
        by_ttl[ttl] = Hop(
            ttl=ttl,
            address=address,
            addresses=(address,) if address else (),
            rtts_ms=(rtt,) if rtt is not None else (),
            annotations=annotations,
            hostname=(raw_hop.get("hostname") or "").rstrip(".") or None,
        )
    hops = _hops_in_order(by_ttl)
    return TraceResult(
        tool="pscheduler",
        hops=hops,
        pmtu_bytes=min(mtus) if mtus else None,
        reached=bool(data.get("succeeded")) and bool(hops) and hops[-1].address is not None,
        destination=hops[-1].address if hops else None,
    )


# ---------------------------------------------------------------------------
# argv, config, records, run_test
# ---------------------------------------------------------------------------


def tracepath_argv(host: str, *, max_hops: int = DEFAULT_MAX_HOPS, binary: str = TRACEPATH) -> list[str]:
    """``tracepath -n -m MAX host`` (numeric output: hops are addresses)."""
    return [binary, "-n", "-m", str(max_hops), host]


def traceroute_argv(
    host: str, *, max_hops: int = DEFAULT_MAX_HOPS, queries: int = 3, wait_s: float = 2.0, binary: str = TRACEROUTE
) -> list[str]:
    """``traceroute -n -q Q -w W -m MAX host``."""
    return [
        binary,
        "-n",
        "-q",
        str(queries),
        "-w",
        format(Decimal(str(wait_s)).normalize(), "f"),
        "-m",
        str(max_hops),
        host,
    ]


@dataclass(frozen=True)
class TracerouteConfig(TableConfig):
    """One route test: ``tool`` is ``tracepath`` (gives the path MTU) or ``traceroute``.

    ``fallback`` is tried when the first tool is not installed.
    """

    TABLE: ClassVar[str] = "traceroute"

    dst: str
    host: str
    tool: str = TRACEPATH
    fallback: str | None = TRACEROUTE
    max_hops: int = DEFAULT_MAX_HOPS
    queries: int = 3
    wait_s: float = 2.0
    interval_s: float | None = None  # scheduling period, used by the agent's scheduler
    timeout_s: float = DEFAULT_TIMEOUT_S

    def __post_init__(self) -> None:
        for tool in (self.tool, self.fallback):
            if tool is not None and tool not in TOOLS:
                raise ValueError(f"route tool must be one of {TOOLS}, got {tool!r}")
        if not 1 <= self.max_hops <= 255:
            raise ValueError("max_hops must be within 1..255")

    def argv(self, tool: str) -> list[str]:
        """argv for ``tool`` with this configuration."""
        if tool == TRACEPATH:
            return tracepath_argv(self.host, max_hops=self.max_hops)
        return traceroute_argv(self.host, max_hops=self.max_hops, queries=self.queries, wait_s=self.wait_s)


PARSERS = {TRACEPATH: parse_tracepath, TRACEROUTE: parse_traceroute}


def result_to_record(result: TraceResult, *, src_site: str, dst_site: str, host: str, time: datetime) -> dict[str, Any]:
    """A ``traceroute`` record (docs/scenario-format.md#measurement-records): hop addresses and the path MTU."""
    record = record_head(
        "traceroute",
        tool=result.tool,
        ends=endpoints(True, src_site=src_site, dst_site=dst_site, host=host),
        time=time,
        hops=result.addresses,
        pmtu_bytes=result.pmtu_bytes,
        reached=result.reached,
        hop_rtts_ms=[hop.rtts_ms[0] if hop.rtts_ms else None for hop in result.hops],
    )
    if result.destination:
        record["destination_address"] = result.destination
    if result.hops_back is not None:
        record["hops_back"] = result.hops_back
    multipath = {str(hop.ttl): list(hop.addresses) for hop in result.hops if len(hop.addresses) > 1}
    if multipath:
        record["hop_alternatives"] = multipath
    return record


def error_record(
    *,
    tool: str,
    src_site: str,
    dst_site: str,
    host: str,
    time: datetime,
    error: str,
    command: CommandResult | None = None,
    argv: list[str] | None = None,
) -> dict[str, Any]:
    """A ``traceroute`` record for a trace that produced nothing usable (no ``hops``)."""
    ends = endpoints(True, src_site=src_site, dst_site=dst_site, host=host)
    return failed_run_record("traceroute", tool=tool, ends=ends, time=time, error=error, command=command, argv=argv)


def run_test(
    runner: CommandRunner,
    config: TracerouteConfig,
    *,
    src_site: str,
    dst_site: str,
    now: datetime,
) -> list[dict[str, Any]]:
    """Trace the route to ``config.host`` and return one ``traceroute`` record.

    Never raises for what the tool does; failures are error records.
    """
    time = utc_time(now)
    common = {"src_site": src_site, "dst_site": dst_site, "host": config.host, "time": time}
    tools = [config.tool] + ([config.fallback] if config.fallback and config.fallback != config.tool else [])
    tool = tools[0]
    argv = config.argv(tool)
    result = runner.run(argv, config.timeout_s)
    for fallback in tools[1:]:
        if result.exit_code != EXIT_NOT_FOUND:
            break
        tool, argv = fallback, config.argv(fallback)
        result = runner.run(argv, config.timeout_s)
    if result.error is not None or result.exit_code != 0:
        message = result.error or _stderr_message(result.stderr) or f"{tool} exited with status {result.exit_code}"
        if result.exit_code == EXIT_NOT_FOUND:
            message = f"no route tool installed ({' / '.join(tools)}): {message}"
        return [error_record(tool=tool, **common, error=message, command=result, argv=argv)]
    try:
        trace = PARSERS[tool](result.stdout)
    except TraceParseError as exc:
        return [error_record(tool=tool, **common, error=f"unparseable {tool} output: {exc}", command=result, argv=argv)]
    record = result_to_record(trace, **common)
    record["command"] = shlex.join(argv)
    raw = excerpt(result.stdout)
    if raw:
        record["raw_excerpt"] = raw
    return [record]


def _stderr_message(stderr: str) -> str | None:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[0] if lines else None
