"""The closed vocabulary of finding codes (docs/diagnosis.md#finding-codes) and their defaults.

The engine, the API, the replay, e-mails and the dashboard all use exactly these
codes; nothing else may create a Finding with another code.
"""

from __future__ import annotations

from dataclasses import dataclass

INFO = "info"
WARNING = "warning"
CRITICAL = "critical"
SEVERITIES = (INFO, WARNING, CRITICAL)
SEVERITY_ORDER = {INFO: 0, WARNING: 1, CRITICAL: 2}

WINDOW_LIMITED = "WINDOW_LIMITED"
LOSS_LIMITED = "LOSS_LIMITED"
ASYMMETRIC_PATH = "ASYMMETRIC_PATH"
TCP_ONLY_DEGRADATION = "TCP_ONLY_DEGRADATION"
TRUNK_IMBALANCE = "TRUNK_IMBALANCE"
SHARED_EQUIPMENT_SUSPECT = "SHARED_EQUIPMENT_SUSPECT"
INTERFACE_ERRORS = "INTERFACE_ERRORS"
LINK_CONGESTION = "LINK_CONGESTION"
PERIODIC_LOSS = "PERIODIC_LOSS"
DELAY_LEVEL_SHIFT = "DELAY_LEVEL_SHIFT"
ROUTE_CHANGE = "ROUTE_CHANGE"
MTU_MISMATCH = "MTU_MISMATCH"
REORDERING = "REORDERING"
CLOCK_UNSYNC = "CLOCK_UNSYNC"
COUNTER_DISCONTINUITY = "COUNTER_DISCONTINUITY"
PATH_DOWN = "PATH_DOWN"
HOST_TCP_TUNING = "HOST_TCP_TUNING"
MAINTENANCE_EXPLAINED = "MAINTENANCE_EXPLAINED"
UNEXPLAINED_DEGRADATION = "UNEXPLAINED_DEGRADATION"
MEASUREMENT_GAP = "MEASUREMENT_GAP"

# Subject kinds (keys of Finding.subject).
PATH = "path"  # {src, dst}
EQUIPMENT = "equipment"  # {equipment} or {equipment, interface}
INTERFACE = "interface"  # {equipment, interface}
TRUNK = "trunk"  # {trunk}, or {trunk, member} for a member out of its bundle
SITE = "site"  # {site} or {site, host}


@dataclass(frozen=True)
class CodeInfo:
    """Default severity, subject kinds and one-line meaning of a code."""

    code: str
    severity: str
    subjects: tuple[str, ...]
    meaning: str


CODES: dict[str, CodeInfo] = {
    info.code: info
    for info in (
        CodeInfo(WINDOW_LIMITED, WARNING, (PATH,), "window/buffers too small for the bandwidth-delay product"),
        CodeInfo(LOSS_LIMITED, WARNING, (PATH,), "packet loss, not the window, limits the TCP rate"),
        CodeInfo(ASYMMETRIC_PATH, CRITICAL, (PATH,), "one direction of a site pair is much worse than the other"),
        CodeInfo(TCP_ONLY_DEGRADATION, WARNING, (PATH,), "TCP far below prediction while UDP is clean"),
        CodeInfo(TRUNK_IMBALANCE, WARNING, (TRUNK,), "broken load sharing / hashing on a bundled link"),
        CodeInfo(SHARED_EQUIPMENT_SUSPECT, WARNING, (EQUIPMENT, INTERFACE, TRUNK), "element common to degraded paths"),
        CodeInfo(INTERFACE_ERRORS, WARNING, (INTERFACE,), "input errors / CRC / discards on an interface"),
        CodeInfo(LINK_CONGESTION, WARNING, (INTERFACE,), "link utilisation near capacity while paths degrade"),
        CodeInfo(PERIODIC_LOSS, WARNING, (PATH, SITE), "loss events recur with a stable period"),
        CodeInfo(DELAY_LEVEL_SHIFT, INFO, (PATH,), "minimum delay jumps between levels without a route change"),
        CodeInfo(ROUTE_CHANGE, INFO, (PATH,), "the traceroute hop list changed"),
        CodeInfo(MTU_MISMATCH, WARNING, (PATH,), "path MTU below the endpoints' MTU"),
        CodeInfo(REORDERING, WARNING, (PATH,), "packets arrive out of order"),
        CodeInfo(CLOCK_UNSYNC, WARNING, (SITE, PATH), "one-way delay data not trustworthy (NTP)"),
        CodeInfo(COUNTER_DISCONTINUITY, INFO, (INTERFACE,), "counter reset: interval discarded"),
        CodeInfo(PATH_DOWN, CRITICAL, (PATH,), "outage"),
        CodeInfo(HOST_TCP_TUNING, WARNING, (SITE,), "host TCP settings unfit for the site's long paths"),
        CodeInfo(MAINTENANCE_EXPLAINED, INFO, (EQUIPMENT, INTERFACE, TRUNK), "degradation during scheduled work"),
        CodeInfo(UNEXPLAINED_DEGRADATION, WARNING, (PATH,), "worse than baseline and no rule explains it"),
        CodeInfo(MEASUREMENT_GAP, WARNING, (PATH, SITE), "the monitoring is blind here (tests missing or failing)"),
    )
}

#: Display and sort order of the codes (the catalogue order).
CODE_ORDER = {code: i for i, code in enumerate(CODES)}


def default_severity(code: str) -> str:
    """Default severity of ``code``; raises KeyError for a code outside the vocabulary."""
    return CODES[code].severity


def is_known(code: str) -> bool:
    """True when ``code`` belongs to the closed vocabulary."""
    return code in CODES
