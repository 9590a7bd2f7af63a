"""Defaults of the tests on demand; each is a setting of the same name (WANMON_ONDEMAND_*) in wanmon/settings.py."""

from __future__ import annotations

from typing import Final

DEFAULT_DURATION_S: Final = 10.0
MAX_DURATION_S: Final = 30.0
"""Duration cap: a test on demand loads a production path; longer tests belong in the schedule."""

MAX_RATE_BPS: Final = 2e9
"""Rate cap of a test on demand (UDP offered rate, or a TCP rate limit)."""

BUDGET_BYTES_PER_HOUR: Final = 50 * 10**9
"""Test bytes allowed per site pair per hour, all tests on demand together (either direction)."""

UNLIMITED_TCP_BPS: Final = 10e9
"""What a TCP test without rate_bps counts against the budget per second when the path's capacity is unknown."""

AGENT_POLL_S: Final = 2.0
"""How soon the agent asks again while it has jobs (the answer's ``poll_s``)."""

OWAMP_PACKETS: Final = 600
"""Packets of an owamp test on demand without a configured table (60 s at 10 per second)."""

PROBE_BYTES: Final = 64 * 1024
"""What a route test costs against the budget (a few dozen probes)."""
