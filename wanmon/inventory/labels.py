"""The textual form of hops and trunk members in topology documents and the API (pure functions).

A label is ``equipment`` or ``equipment:interface``. Equipment names cannot contain ``:`` (see
``models.name_validator``) while interface names may (``ge-0/0/0:1`` is a channelised port), so the
first ``:`` separates the two.
"""

from __future__ import annotations

from wanmon.inventory.constants import LABEL_SEPARATOR


def label_split(label: str) -> tuple[str, str | None]:
    """``"geant-par:xe-1/0/0"`` -> ``("geant-par", "xe-1/0/0")``; ``"geant-par"`` -> ``("geant-par", None)``."""
    equipment, sep, interface = label.partition(LABEL_SEPARATOR)
    return (equipment, interface) if sep else (equipment, None)


def label_join(equipment: str, interface: str | None = None) -> str:
    """The inverse of :func:`label_split`."""
    return f"{equipment}{LABEL_SEPARATOR}{interface}" if interface is not None else equipment
