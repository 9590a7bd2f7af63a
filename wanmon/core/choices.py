"""One way to write a choice set: a table of stored value -> label."""

from __future__ import annotations

import sys

from django.db import models


def text_choices(name: str, labels: dict[str, str], *, doc: str | None = None) -> type[models.TextChoices]:
    """The ``TextChoices`` enum ``name`` with a member per entry of ``labels`` (stored value -> label).

    A member is named after its value in upper case with '-' as '_' (``"no-impact"`` -> ``NO_IMPACT``), so the
    table is all there is to write; ``doc`` is the enum's docstring.
    """
    members = [(value.upper().replace("-", "_"), (value, label)) for value, label in labels.items()]
    # The caller's module, as a class statement would give it (pickling and repr find the enum there).
    module = sys._getframe(1).f_globals["__name__"]
    choices = models.TextChoices(name, members, module=module, qualname=name)
    choices.__doc__ = doc
    return choices


Lifecycle = text_choices(
    "Lifecycle",
    {
        "open": "Open",
        "acknowledged": "Acknowledged",
        "resolved": "Resolved",
    },
    doc="Where a finding or an incident stands: open -> acknowledged (an operator took it in hand) -> resolved.",
)


# Findings and incidents in these statuses are active: they still count, notify and block a duplicate.
ACTIVE_LIFECYCLE = (Lifecycle.OPEN, Lifecycle.ACKNOWLEDGED)
