"""What a suspect's finding says for and against it, in words: read from the evidence its rule stores
(wanmon/diagnosis/rules/correlation.py, interfaces.py, trunk.py). The incident page's suspects and a carrier's
shared page (``wanmon/sharing``) show the same lines; the shared page names fewer paths and elements (``shown``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from wanmon.diagnosis import codes, text

__all__ = ["shown_all", "suspect_evidence"]


def shown_all(name: str) -> bool:
    """Every path and element is named on the incident page (a carrier's shared page names fewer)."""
    return True


def _names(value, shown: Callable[[str], bool] = shown_all) -> str:
    if not isinstance(value, list | tuple):
        return ""
    names = [str(v) for v in value if shown(str(v))]
    hidden = len(value) - len(names)
    return ", ".join(names + ([f"{hidden} not shown here"] if hidden else []))


def _number(value) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def suspect_evidence(code: str, evidence: Mapping, *, shown: Callable[[str], bool] = shown_all
                     ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(what points at the suspect, what speaks against it), read from the evidence its rule stores
    (wanmon/diagnosis/rules/correlation.py, interfaces.py, trunk.py): whatever the finding does not carry is left
    out. ``shown``: whether a path or element may be named (a carrier's shared page counts the others instead)."""
    pro: list[str] = []
    con: list[str] = []
    if code == codes.SHARED_EQUIPMENT_SUSPECT:
        _shared_evidence(evidence, shown, pro, con)
    elif code in (codes.INTERFACE_ERRORS, codes.LINK_CONGESTION):
        _port_evidence(evidence, shown, pro, con)
    elif code == codes.TRUNK_IMBALANCE:
        _trunk_evidence(evidence, shown, pro)
    return tuple(pro), tuple(con)


def _shared_evidence(evidence: Mapping, shown: Callable[[str], bool], pro: list[str], con: list[str]) -> None:
    names = partial(_names, shown=shown)
    if evidence.get("degraded_paths"):
        pro.append(f"crossed by every degraded direction: {names(evidence['degraded_paths'])}")
    if evidence.get("degraded_path") and shown(str(evidence["degraded_path"])):
        pro.append(f"{evidence['degraded_path']} degraded when the load through it rose")
    rise = evidence.get("interface_rise")
    if isinstance(rise, Mapping) and _number(rise.get("before_bps")) is not None:
        pro.append(f"load on {rise.get('interface', '?')} rose from {text.rate(_number(rise.get('before_bps')))} "
                   f"to {text.rate(_number(rise.get('after_bps')))}")
    for other in evidence.get("other_paths") or ():
        if isinstance(other, Mapping) and other.get("path") and shown(str(other["path"])):
            verb = "started" if other.get("started") else "rose"
            pro.append(f"traffic on {other['path']} {verb} ({text.rate(_number(other.get('before_bps')))} -> "
                       f"{text.rate(_number(other.get('after_bps')))})")
    if evidence.get("corroboration"):
        pro.append(f"corroborated by {names(evidence['corroboration'])}")
    if _number(evidence.get("score")) is not None:
        pro.append(f"score {_number(evidence['score']):.2f}")
    if evidence.get("healthy_same_direction"):
        con.append(f"healthy in the same direction: {names(evidence['healthy_same_direction'])}")
    if evidence.get("healthy_other_ports"):
        con.append(f"healthy through other ports: {names(evidence['healthy_other_ports'])}")
    if evidence.get("exonerated_by"):
        con.append(f"healthy through it: {names(evidence['exonerated_by'])}")
    if evidence.get("healthy_reverse"):
        # weighs little: one fibre of a pair can be bad while the other is clean
        con.append(f"healthy only in the opposite direction (weighs little): {names(evidence['healthy_reverse'])}")
    if evidence.get("endpoint"):
        con.append("a path end point (every path of that site crosses it)")


def _port_evidence(evidence: Mapping, shown: Callable[[str], bool], pro: list[str], con: list[str]) -> None:
    names = partial(_names, shown=shown)
    if _number(evidence.get("intervals_with_errors")) is not None:
        pro.append(f"errors or discards in {evidence['intervals_with_errors']} of "
                   f"{evidence.get('intervals', '?')} polls")
    for key, what in (("crc_error_fraction", "CRC errors"), ("discard_fraction", "discards")):
        if _number(evidence.get(key)):
            pro.append(f"{what} {text.loss(_number(evidence[key]))} of the packets")
    if _number(evidence.get("utilisation_median")) is not None:
        direction = f" {evidence['direction']}" if evidence.get("direction") else ""
        pro.append(f"utilisation{direction} {text.pct(_number(evidence['utilisation_median']))} median, "
                   f"{text.pct(_number(evidence.get('utilisation_peak')))} peak"
                   + (f" of {text.rate(_number(evidence['speed_bps']))}" if _number(evidence.get('speed_bps'))
                      else ""))
    if evidence.get("degraded_paths"):
        pro.append(f"paths degraded meanwhile: {names(evidence['degraded_paths'])}")
    elif evidence.get("paths"):
        con.append(f"no path through it degraded meanwhile ({names(evidence['paths'])})")


def _trunk_evidence(evidence: Mapping, shown: Callable[[str], bool], pro: list[str]) -> None:
    members = evidence.get("member_utilisation")
    if isinstance(members, Mapping) and _number(members.get("ratio")) is not None:
        pro.append(f"the least busy member carries {text.pct(_number(members['ratio']))} of the busiest")
    for split in evidence.get("host_splits") or ():
        if isinstance(split, Mapping) and split.get("path") and shown(str(split["path"])):
            pro.append(f"{split.get('slow_parity', '?')} hosts slow on {split['path']} "
                       f"({text.pct(_number(split.get('ratio')))})")
