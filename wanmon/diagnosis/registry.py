"""The rules in the order the engine runs them.

Order matters: CLOCK_UNSYNC first (delay rules consult it); element rules
before path rules; WINDOW_LIMITED before HOST_TCP_TUNING (which cites it);
correlation, maintenance and UNEXPLAINED_DEGRADATION last, because they read
the findings of every rule before them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from wanmon.diagnosis import codes
from wanmon.diagnosis.context import RuleContext, SharedConclusions
from wanmon.diagnosis.evidence import EvidenceBundle, RuleFinding
from wanmon.diagnosis.rules import (
    asymmetry,
    clock,
    correlation,
    delay,
    gaps,
    hosts,
    interfaces,
    loss_patterns,
    maintenance,
    mtu,
    outage,
    tcp,
    trunk,
    unexplained,
)


@dataclass(frozen=True)
class Rule:
    """A registered rule: the codes it may emit and the pure function computing them."""

    name: str
    codes: tuple[str, ...]
    func: Callable[[RuleContext], list[RuleFinding]]


RULES: tuple[Rule, ...] = (
    Rule("clock_unsync", (codes.CLOCK_UNSYNC,), clock.clock_unsync),
    Rule("counter_discontinuity", (codes.COUNTER_DISCONTINUITY,), interfaces.counter_discontinuity),
    Rule("path_down", (codes.PATH_DOWN,), outage.path_down),
    Rule("measurement_gap", (codes.MEASUREMENT_GAP,), gaps.measurement_gap),
    Rule("interface_errors", (codes.INTERFACE_ERRORS,), interfaces.interface_errors),
    Rule("link_congestion", (codes.LINK_CONGESTION,), interfaces.link_congestion),
    Rule("trunk_imbalance", (codes.TRUNK_IMBALANCE,), trunk.trunk_imbalance),
    Rule("route_change", (codes.ROUTE_CHANGE,), delay.route_change),
    Rule("delay_level_shift", (codes.DELAY_LEVEL_SHIFT,), delay.delay_level_shift),
    Rule("mtu_mismatch", (codes.MTU_MISMATCH,), mtu.mtu_mismatch),
    Rule("reordering", (codes.REORDERING,), loss_patterns.reordering),
    Rule("window_limited", (codes.WINDOW_LIMITED,), tcp.window_limited),
    Rule("loss_limited", (codes.LOSS_LIMITED,), tcp.loss_limited),
    Rule("tcp_only_degradation", (codes.TCP_ONLY_DEGRADATION,), tcp.tcp_only_degradation),
    Rule("asymmetric_path", (codes.ASYMMETRIC_PATH,), asymmetry.asymmetric_path),
    Rule("periodic_loss", (codes.PERIODIC_LOSS,), loss_patterns.periodic_loss),
    Rule("host_tcp_tuning", (codes.HOST_TCP_TUNING,), hosts.host_tcp_tuning),
    Rule("shared_equipment_suspect", (codes.SHARED_EQUIPMENT_SUSPECT,), correlation.shared_equipment_suspects),
    Rule("maintenance_explained", (codes.MAINTENANCE_EXPLAINED,), maintenance.maintenance_explained),
    Rule("unexplained_degradation", (codes.UNEXPLAINED_DEGRADATION,), unexplained.unexplained_degradation),
)


# Conclusions several rules read, each worked out once per evaluation by the rule module that owns it.
SHARED_CONCLUSIONS: SharedConclusions = {
    "untrusted_delay_pairs": clock.untrusted_pairs,
    "maintenance_matches": maintenance.match_episodes,
}


def rule_context(bundle: EvidenceBundle, now: datetime, findings: Iterable[RuleFinding] = ()) -> RuleContext:
    """The context the rules of one evaluation share, with the registry's shared conclusions."""
    return RuleContext(bundle, now, findings, conclusions=SHARED_CONCLUSIONS)


def rule_named(name: str) -> Rule:
    for r in RULES:
        if r.name == name:
            return r
    raise KeyError(name)
