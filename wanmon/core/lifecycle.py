"""Operator actions on a row with the open -> acknowledged -> resolved ``Lifecycle`` (findings and incidents)."""

from __future__ import annotations

from datetime import datetime
from typing import TypeVar

from django.db import models

from wanmon.core.choices import Lifecycle

M = TypeVar("M", bound=models.Model)


def lifecycle_acknowledge(obj: M, *, user, now: datetime) -> M:
    """Lock ``obj``'s row and mark it acknowledged by ``user`` at ``now`` (status, acknowledged_at and
    acknowledged_by saved); the locked row is returned. A resolved row raises ValueError.

    Call it inside the transaction that also writes the acknowledgement to the row's trail, so the lock covers both.
    """
    row = type(obj)._default_manager.select_for_update().get(pk=obj.pk)
    if row.status == Lifecycle.RESOLVED:
        raise ValueError(f"a resolved {row._meta.verbose_name} cannot be acknowledged")
    row.status = Lifecycle.ACKNOWLEDGED
    row.acknowledged_at = now
    row.acknowledged_by = user
    row.save(update_fields=["status", "acknowledged_at", "acknowledged_by"])
    return row
