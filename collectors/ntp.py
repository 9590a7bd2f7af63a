"""64-bit NTP timestamps (RFC 5905, RFC 4656 §4.1.2) as owamp and TWAMP write them."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Final

# 64-bit NTP timestamps: seconds since 1900 in the high 32 bits, the fraction in the low 32.
NTP_FRACTION: Final = 2**32
NTP_UNIX_OFFSET_S: Final = 2_208_988_800

U32: Final = 2**32
_U64: Final = 2**64
_NS_PER_S: Final = 10**9
_NTP_UNIX_OFFSET_NS: Final = NTP_UNIX_OFFSET_S * _NS_PER_S
# Era 0 ends 2036-02-07T06:28:16Z. Timestamps whose seconds field has the top bit clear are read
# as era 1 (RFC 4330 §3 convention): the representable span is 1968-01-20 .. 2104-02-26.
_NTP_PIVOT_SECONDS: Final = 2**31
_UNIX_NS_MIN: Final = (_NTP_PIVOT_SECONDS * _NS_PER_S) - _NTP_UNIX_OFFSET_NS
_UNIX_NS_END: Final = _UNIX_NS_MIN + U32 * _NS_PER_S


def ntp_to_datetime(timestamp: int) -> datetime:
    """OWAMP/NTP 64-bit timestamp (as printed by ``-M``/``-R``) to a UTC datetime."""
    seconds = timestamp / NTP_FRACTION - NTP_UNIX_OFFSET_S
    return datetime.fromtimestamp(seconds, UTC)


def ntp_from_unix_ns(unix_ns: int) -> int:
    """64-bit NTP timestamp (RFC 5905 / RFC 4656 §4.1.2) nearest to a Unix time in nanoseconds.

    The result is within 2^-33 s of the exact value, so ``ntp_to_unix_ns`` recovers ``unix_ns``.
    Times after 2036-02-07 wrap into NTP era 1.
    """
    if not _UNIX_NS_MIN <= unix_ns < _UNIX_NS_END:
        raise ValueError(f"{unix_ns} ns is outside the NTP timestamps this module reads (1968-2104)")
    return (((unix_ns + _NTP_UNIX_OFFSET_NS) * NTP_FRACTION + _NS_PER_S // 2) // _NS_PER_S) % _U64


def ntp_to_unix_ns(ntp: int) -> int:
    """Unix time in nanoseconds (rounded to nearest) of a 64-bit NTP timestamp."""
    if not 0 <= ntp < _U64:
        raise ValueError(f"{ntp} is not a 64-bit NTP timestamp")
    if ntp >> 32 < _NTP_PIVOT_SECONDS:
        ntp += _U64  # era 1
    return (ntp * _NS_PER_S + NTP_FRACTION // 2) // NTP_FRACTION - _NTP_UNIX_OFFSET_NS


def ntp_now() -> int:
    """The current wall-clock time as a 64-bit NTP timestamp."""
    return ntp_from_unix_ns(time.time_ns())


def ntp_diff(later: int, earlier: int) -> int:
    """Signed difference of two NTP timestamps in units of 2^-32 s, across an era boundary too."""
    diff = (later - earlier) % _U64
    return diff - _U64 if diff >= _U64 // 2 else diff


def ntp_units_to_ms(units: int) -> float:
    """Milliseconds in ``units`` of 2^-32 s (correctly rounded: int / int true division)."""
    return units * 1000 / NTP_FRACTION


def ptp_to_ntp(ptp: int) -> int:
    """NTP timestamp of an RFC 8186 PTPv2 truncated timestamp (32-bit Unix seconds, 32-bit ns)."""
    seconds, nanoseconds = divmod(ptp, U32)
    return ntp_from_unix_ns(seconds * _NS_PER_S + nanoseconds)
