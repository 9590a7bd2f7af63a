"""What every collector's configuration class shares: it stands for one array table of the agent's TOML file
(docs/agent.md#configuration-toml) and is built from it by one :meth:`TableConfig.from_mapping`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, ClassVar, Self


def field_meta(
    *, ge: float | None = None, le: float | None = None, gt: float | None = None, secret: bool = False
) -> dict[str, Any]:
    """A configuration field's metadata, read by the agent's config validator (agents.config_check): its numeric
    bounds, and whether its value may be echoed in an error message (not for a password or key)."""
    return {"ge": ge, "le": le, "gt": gt, "secret": secret}


class TableConfig:
    """Base of the frozen dataclasses ``[[snmp]]``, ``[[nuttcp]]``, ``[[owamp]]``, ``[[traceroute]]``.

    ``TABLE`` names the table in messages; the dataclass's fields are its keys and its ``__post_init__``
    checks their values.
    """

    TABLE: ClassVar[str]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Self:
        """Build from a TOML table; unknown keys are an error (typos must not pass silently)."""
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown {cls.TABLE} option(s): {', '.join(unknown)}")
        return cls(**dict(data))
