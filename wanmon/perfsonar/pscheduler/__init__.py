"""pScheduler runs as its ``http`` archiver sends them -> the wire records an agent would send (pure, no Django).

One body is one run of one pScheduler task: ``id`` (the run's UUID), ``schedule``, ``test{type, spec}``,
``tool{name, version}``, ``participants``, ``run``, ``result`` and ``reference``. ``parse_run`` checks what
the conversion needs and names the offending field (``test.spec.dest``, ``result.summary.summary.throughput-bits``);
everything else of the body is ignored, so a newer pScheduler keeps being accepted.

What each test type becomes (docs/perfsonar.md):

- ``throughput`` (iperf3, iperf2, nuttcp, ethr) -> one ``throughput`` record in the direction data flowed
  (``reverse`` swaps source and dest): sender throughput, retransmissions, streams, the socket window asked for,
  the MSS (the tool's, else the one asked for), the mean RTT of the streams (iperf3 and iperf2 report
  microseconds); UDP: packets ``sent`` and ``lost`` as pScheduler's throughput result schema names them (iperf2
  never reports the loss), the rate asked for;
- ``latency`` and ``latencybg`` (owping, twping, powstream) -> one ``owamp`` record: packets sent, lost,
  duplicated and reordered, min/median/max of ``histogram-latency`` (keys are delays divided by the spec's
  ``bucket-width``, 1 ms by default), ``max-clock-error``, and ``jitter_ms``, P95 - P50 of the histogram's
  delays (the one definition, collectors/delay.py);
- ``rtt`` (ping, twping, tcpping) -> one ``owamp`` record whose tool is the rtt tool (``ping``...) and whose
  delays are half the round-trip times (min, median of the round trips or else the mean, max): a symmetric
  one-way estimate, so that forward plus reverse gives the round trip as owamp would and no rule reads a
  doubled delay (or an unsynchronised clock) into it. The round trips themselves are in the excerpt, marked
  ``"round_trip": true``; the loss it measures is the path's loss (both directions), which the loss rules use;
- ``trace`` (traceroute, tracepath, paris-traceroute) -> one ``traceroute`` record: hops by address, or by
  name when the hop gave no address, non-answering hops null; ``pmtu_bytes`` is the smallest MTU reported.

Every record keeps the tool's version (``tool_version``) and, in ``raw_excerpt``, a JSON excerpt naming the
pScheduler run (``{"pscheduler": {"run": ..., "test": ..., "tool": ...}}``) plus the numbers that have no
column (receiver throughput, largest TCP window, UDP jitter, hop names and AS numbers). A failed run
(``succeeded: false``) is a record with ``error`` (and the diagnostics in ``stderr_excerpt``).

The package: ``runs`` (reading and checking a run), ``records`` (the records it becomes). Import from here.
"""

from __future__ import annotations

from wanmon.perfsonar.pscheduler.records import records_build
from wanmon.perfsonar.pscheduler.runs import (
    MAX_DIAGS_CHARS,
    MAX_EXCERPT_CHARS,
    MEASURED_TEST_TYPES,
    US_PER_MS,
    BodyProblem,
    PsRun,
    RecordSource,
    endpoint_normalise,
    iso_duration_s,
    parse_run,
)

__all__ = [
    "BodyProblem",
    "MAX_DIAGS_CHARS",
    "MAX_EXCERPT_CHARS",
    "MEASURED_TEST_TYPES",
    "PsRun",
    "RecordSource",
    "US_PER_MS",
    "endpoint_normalise",
    "iso_duration_s",
    "parse_run",
    "records_build",
]
