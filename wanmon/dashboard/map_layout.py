"""Where to draw things on the network map (pure): carrier elements between the sites, and the two
directions of a site pair side by side.

Sites have coordinates; carrier equipment usually has none. An element is placed where the paths
crossing it would put it if each path ran straight from its source to its destination with its
hops evenly spaced: the mean of those points, weighted by 1 / path length (a short path pins an
element down better than an intercontinental one). An element shared by several site pairs lands
between them, which is what the map must make visible. Each direction then bows out to its
right-hand side of travel (the ends stay on the sites), so A->B and B->A are two lines with their
own colours.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Sideways shift of a direction, as a fraction of its source-destination distance, within bounds (degrees).
OFFSET_FRACTION = 0.05
OFFSET_MIN_DEG = 0.08
OFFSET_MAX_DEG = 0.8


@dataclass(frozen=True)
class LayoutHop:
    equipment: str
    site: str | None  # the owning site, or None for carrier equipment


@dataclass(frozen=True)
class LayoutPath:
    src: str
    dst: str
    hops: Sequence[LayoutHop]


def _lerp(a: tuple[float, float], b: tuple[float, float], f: float) -> tuple[float, float]:
    return (a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]))


def element_positions(
    sites: Mapping[str, tuple[float, float]], paths: Sequence[LayoutPath]
) -> dict[str, tuple[float, float]]:
    """(lon, lat) of every equipment on a path whose two ends have coordinates.

    Site equipment sits at its site; other equipment at the mean of its evenly spaced positions
    along the straight lines of the paths that cross it.
    """
    sums: dict[str, list[float]] = {}
    fixed: dict[str, tuple[float, float]] = {}
    for path in paths:
        if path.src not in sites or path.dst not in sites:
            continue
        a, b = sites[path.src], sites[path.dst]
        weight = 1.0 / max(1.0, math.dist(a, b))
        count = len(path.hops)
        for index, hop in enumerate(path.hops):
            if hop.site and hop.site in sites:
                fixed[hop.equipment] = sites[hop.site]
                continue
            f = index / (count - 1) if count > 1 else 0.5
            x, y = _lerp(a, b, f)
            acc = sums.setdefault(hop.equipment, [0.0, 0.0, 0.0])
            acc[0] += weight * x
            acc[1] += weight * y
            acc[2] += weight
    positions = {name: (round(s[0] / s[2], 4), round(s[1] / s[2], 4)) for name, s in sums.items()}
    positions.update(fixed)
    return positions


def path_polyline(
    path: LayoutPath, sites: Mapping[str, tuple[float, float]], positions: Mapping[str, tuple[float, float]]
) -> list[tuple[float, float]]:
    """The points of one direction: source, each hop, destination; the inner points shifted to the
    right of travel, the ends on the sites.

    The shift is perpendicular to the source->destination line, measured in a frame where one
    degree of longitude is cos(latitude) degrees of latitude, so that it looks perpendicular on
    the map's equal-distance axes. A direction without inner points gets one at its middle.
    """
    a, b = sites[path.src], sites[path.dst]
    points = [a, *(positions[h.equipment] for h in path.hops if h.equipment in positions), b]
    # Drop consecutive duplicates (the site's border router sits on the site itself).
    dedup = [points[0]]
    for point in points[1:]:
        if point != dedup[-1]:
            dedup.append(point)
    if len(dedup) < 3:
        dedup = [a, _lerp(a, b, 0.5), b]
    scale = math.cos(math.radians((a[1] + b[1]) / 2)) or 1e-6
    dx, dy = (b[0] - a[0]) * scale, b[1] - a[1]
    length = math.hypot(dx, dy)
    if length == 0:
        return [(round(x, 4), round(y, 4)) for x, y in dedup]
    offset = min(OFFSET_MAX_DEG, max(OFFSET_MIN_DEG, OFFSET_FRACTION * length))
    # right-hand normal of (dx, dy) is (dy, -dx); back to degrees of longitude by dividing by the scale
    nx, ny = dy / length * offset / scale, -dx / length * offset
    inner = [(x + nx, y + ny) for x, y in dedup[1:-1]]
    return [(round(x, 4), round(y, 4)) for x, y in [a, *inner, b]]
