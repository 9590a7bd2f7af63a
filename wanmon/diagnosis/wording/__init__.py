"""The one explanation layer: a rule's verdict (its code and facts) in words for people.

A rule decides and measures; it hands ``path_finding`` / ``finding`` (``wanmon/diagnosis/context.py``) its
code, subject, window, severity, evidence and the *facts* its wording needs (a plain mapping; each wording
function's docstring lists the keys it reads). ``word(code, facts)`` turns them into the finding's ``summary``,
``explanation`` and ``actions`` with the wording function registered for the code in ``WORDING``: one function
per code, one module per rule family, so a sentence changes here without touching a rule. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from wanmon.diagnosis import codes
from wanmon.diagnosis.wording import (
    availability,
    clock,
    correlation,
    hosts,
    interfaces,
    loss_patterns,
    maintenance,
    paths,
    tcp,
    trunk,
    unexplained,
)

Facts = Mapping[str, Any]


@dataclass(frozen=True)
class Wording:
    """What people read of a finding: one-line summary, the explanation and the actions, in order."""

    summary: str
    explanation: str
    actions: tuple[str, ...]


# The wording of each finding code, in catalogue order (explicit: no registration by import side effect).
WORDING: dict[str, Callable[[Facts], tuple[str, str, list[str] | tuple[str, ...]]]] = {
    codes.WINDOW_LIMITED: tcp.window_limited,
    codes.LOSS_LIMITED: tcp.loss_limited,
    codes.ASYMMETRIC_PATH: paths.asymmetric_path,
    codes.TCP_ONLY_DEGRADATION: tcp.tcp_only_degradation,
    codes.TRUNK_IMBALANCE: trunk.trunk_imbalance,
    codes.SHARED_EQUIPMENT_SUSPECT: correlation.shared_equipment_suspect,
    codes.INTERFACE_ERRORS: interfaces.interface_errors,
    codes.LINK_CONGESTION: interfaces.link_congestion,
    codes.PERIODIC_LOSS: loss_patterns.periodic_loss,
    codes.DELAY_LEVEL_SHIFT: paths.delay_level_shift,
    codes.ROUTE_CHANGE: paths.route_change,
    codes.MTU_MISMATCH: hosts.mtu_mismatch,
    codes.REORDERING: loss_patterns.reordering,
    codes.CLOCK_UNSYNC: clock.clock_unsync,
    codes.COUNTER_DISCONTINUITY: interfaces.counter_discontinuity,
    codes.PATH_DOWN: availability.path_down,
    codes.HOST_TCP_TUNING: hosts.host_tcp_tuning,
    codes.MAINTENANCE_EXPLAINED: maintenance.maintenance_explained,
    codes.UNEXPLAINED_DEGRADATION: unexplained.unexplained_degradation,
    codes.MEASUREMENT_GAP: availability.measurement_gap,
}


def word(code: str, facts: Facts) -> Wording:
    """The summary, explanation and actions of a finding ``code`` with these ``facts``."""
    try:
        writer = WORDING[code]
    except KeyError:
        raise LookupError(f"{code}: no wording registered in wanmon.diagnosis.wording.WORDING") from None
    summary, explanation, actions = writer(facts)
    return Wording(summary=summary, explanation=explanation, actions=tuple(actions))
