"""owamp one-way delay collector (owping), one module per job:

* :mod:`~collectors.owamp.owping`: pure parsers of owping/owstats/powstream output (``-M``, the default
  text, ``-R``);
* :mod:`~collectors.owamp.collector`: sessions to directions, argv, ``owamp`` records, :func:`run_test`;
* :mod:`~collectors.owamp.common`: what all owamp programs share (units, report layouts, TTLs, stderr),
  also read by the twping parsers of :mod:`collectors.twamp`.

Delays and jitter follow collectors/delay.py; NTP timestamps collectors/ntp.py.
"""

from __future__ import annotations

from collectors.owamp.collector import (
    DEFAULT_TIMEOUT_MARGIN_S,
    FROM,
    RECORD_DIRECTION,
    TO,
    TOOL,
    OwampConfig,
    assign_directions,
    build_argv,
    error_record,
    run_test,
    session_to_record,
)
from collectors.owamp.common import OWAMP_SEND_TTL, OwampParseError, ntp_unsynced, parse_error
from collectors.owamp.owping import OwampSession, parse, parse_machine, parse_raw, parse_summary

__all__ = [
    "DEFAULT_TIMEOUT_MARGIN_S",
    "FROM",
    "OWAMP_SEND_TTL",
    "RECORD_DIRECTION",
    "TO",
    "TOOL",
    "OwampConfig",
    "OwampParseError",
    "OwampSession",
    "assign_directions",
    "build_argv",
    "error_record",
    "ntp_unsynced",
    "parse",
    "parse_error",
    "parse_machine",
    "parse_raw",
    "parse_summary",
    "run_test",
    "session_to_record",
]
