"""The policy that protects production traffic from tests on demand (pure: no Django, no database).

A test on demand loads a path that carries the experiments' transfers, often while it is already in trouble. Each
request passes five rules; the first that fails refuses it, and the refusal names the rule and says why in numbers:

============== ====== ======================================================================================
rule           status why
============== ====== ======================================================================================
duration_cap   422    a test longer than ``max_duration_s`` (30 s): long tests belong in the agent's schedule
rate_cap       422    a UDP offered rate or TCP rate limit above ``max_rate_bps``
maintenance    409    the path is under announced maintenance that cuts or degrades it: a test would only
                      measure the work (and disturb the carrier's checks)
one_heavy_test 409    a throughput test is already queued or running on this site pair: two would measure
                      each other and double the load
byte_budget    409    the site pair's tests on demand of the last hour plus this one exceed
                      ``budget_bytes_per_hour``
============== ====== ======================================================================================

422: the request itself is out of bounds (ask for less). 409: the path's state forbids it now (ask later).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from wanmon.ondemand.constants import (
    BUDGET_BYTES_PER_HOUR,
    DEFAULT_DURATION_S,
    MAX_DURATION_S,
    MAX_RATE_BPS,
    PROBE_BYTES,
    UNLIMITED_TCP_BPS,
)

__all__ = ["HEAVY_KINDS", "Limits", "PathState", "Refusal", "Rule", "TestRequest", "job_bytes", "policy_check"]

HEAVY_KINDS = frozenset({"throughput"})
"""Kinds that load the path (one at a time per site pair); owamp sends 10 small packets a second, routes a few
dozen probes."""

OWAMP_PACKET_BYTES = 1000  # generous: owamp's packets are ~100 bytes with padding, at 10 per second


class Rule(StrEnum):
    """The rules of the policy, by the name a refusal gives."""

    DURATION_CAP = "duration_cap"
    RATE_CAP = "rate_cap"
    MAINTENANCE = "maintenance"
    ONE_HEAVY_TEST = "one_heavy_test"
    BYTE_BUDGET = "byte_budget"


@dataclass(frozen=True)
class Limits:
    """The policy's numbers (settings WANMON_ONDEMAND_*)."""

    max_duration_s: float = MAX_DURATION_S
    max_rate_bps: float = MAX_RATE_BPS
    budget_bytes_per_hour: int = BUDGET_BYTES_PER_HOUR
    unlimited_tcp_bps: float = UNLIMITED_TCP_BPS


@dataclass(frozen=True)
class TestRequest:
    """What is asked for; ``capacity_bps`` is the path's (None when the inventory does not know it)."""

    __test__ = False  # not a pytest test class

    kind: str
    protocol: str = "tcp"
    duration_s: float | None = None
    rate_bps: float | None = None
    capacity_bps: float | None = None

    @property
    def effective_duration_s(self) -> float:
        return self.duration_s if self.duration_s is not None else DEFAULT_DURATION_S


@dataclass(frozen=True)
class PathState:
    """What the site pair is doing now: bytes its tests on demand used (or reserved) in the last hour, the active
    throughput job on it, the maintenance windows in force that cut or degrade it (their references)."""

    bytes_last_hour: int = 0
    heavy_job_id: int | None = None
    maintenance: tuple[str, ...] = ()


@dataclass(frozen=True)
class Refusal:
    """A request refused: the rule, the HTTP status (422 out of bounds, 409 not now) and the reason in words."""

    rule: Rule
    status: int
    reason: str


def job_bytes(request: TestRequest, limits: Limits) -> int:
    """The bytes a test puts on the path at most, what it counts against the budget.

    A throughput test sends its rate for its duration: the UDP offered rate or the TCP rate limit, else the path's
    capacity (TCP takes what it can), else ``unlimited_tcp_bps``.
    """
    duration_s = request.effective_duration_s
    if request.kind in HEAVY_KINDS:
        rate_bps = request.rate_bps or request.capacity_bps or limits.unlimited_tcp_bps
        return math.ceil(rate_bps * duration_s / 8)
    if request.kind == "owamp":
        return math.ceil(duration_s * 10 * OWAMP_PACKET_BYTES)
    return PROBE_BYTES


def _gb(n_bytes: float) -> str:
    return f"{n_bytes / 1e9:.3g} GB"


def policy_check(request: TestRequest, state: PathState, limits: Limits, *, pair: str) -> Refusal | None:
    """The first rule ``request`` breaks on the site pair ``pair`` ('CERN<->FZK') in ``state``, or None."""
    duration_s = request.effective_duration_s
    if duration_s > limits.max_duration_s:
        return Refusal(
            Rule.DURATION_CAP, 422,
            f"duration_cap: {duration_s:g} s is longer than the {limits.max_duration_s:g} s a test on demand may last",
        )  # fmt: skip
    if request.rate_bps is not None and request.rate_bps > limits.max_rate_bps:
        return Refusal(
            Rule.RATE_CAP, 422,
            f"rate_cap: {request.rate_bps / 1e6:g} Mb/s is above the {limits.max_rate_bps / 1e6:g} Mb/s a test on "
            "demand may send",
        )  # fmt: skip
    if state.maintenance:
        return Refusal(
            Rule.MAINTENANCE, 409,
            f"maintenance: {pair} is under announced maintenance ({', '.join(state.maintenance)}); "
            "a test now would measure the work",
        )  # fmt: skip
    if request.kind in HEAVY_KINDS and state.heavy_job_id is not None:
        return Refusal(
            Rule.ONE_HEAVY_TEST, 409,
            f"one_heavy_test: throughput test {state.heavy_job_id} is already queued or running on {pair}; "
            "one at a time",
        )  # fmt: skip
    needed = job_bytes(request, limits)
    if state.bytes_last_hour + needed > limits.budget_bytes_per_hour:
        return Refusal(
            Rule.BYTE_BUDGET, 409,
            f"byte_budget: {pair} has used {_gb(state.bytes_last_hour)} of its {_gb(limits.budget_bytes_per_hour)} "
            f"per hour for tests on demand; this test needs {_gb(needed)}",
        )  # fmt: skip
    return None
