"""Unit conversions the apps share."""

from __future__ import annotations


def bps_from_mbps(mbps: float | None) -> float | None:
    """A speed or capacity given in Mb/s (inventory, ifHighSpeed) in bit/s; None when unknown (NULL, or the 0 an
    agent and the inventory both use for "not known")."""
    return mbps * 1e6 if mbps else None
