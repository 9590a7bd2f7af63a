"""Human-readable numbers with units (pure functions): rates, sizes, loss fractions, durations.

Used by the template filters and by the figure builders' hover texts, so that a number reads the
same on every page. Times and onsets ("since 13:10, 12 h"): :mod:`wanmon.core.times`, shared with the alerts.
"""

from __future__ import annotations

import functools
import math

_RATE_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def finite(value) -> float | None:
    """A number JSON can carry and a page can print: NaN, infinities and what is no number become None."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _numeric(format_number):
    """``format_number`` (of a finite float) for any value: what is no finite number reads ``empty``."""

    @functools.wraps(format_number)
    def format_value(value, *args, empty: str = "–") -> str:
        number = finite(value)
        return empty if number is None else format_number(number, *args)

    return format_value


def _trim(number: float, digits: int = 3) -> str:
    """``number`` with ``digits`` significant digits and no trailing zeros: 906.2 -> 906, 1.05 -> 1.05."""
    if number == 0:
        return "0"
    text = f"{number:.{digits}g}"
    if "e" in text and abs(number) >= 1:  # large integers come back in exponent form from %g
        text = f"{number:.0f}"
    return text


def format_bps(value, empty: str = "–") -> str:
    """Bit rate with an SI prefix: 906253068 -> ``906 Mb/s``; ``inf`` -> ``unlimited``."""
    if isinstance(value, float) and math.isinf(value):
        return "unlimited"
    return _format_finite_bps(value, empty=empty)


@_numeric
def _format_finite_bps(number: float) -> str:
    for factor, prefix in _RATE_PREFIXES:
        if abs(number) >= factor:
            return f"{_trim(number / factor)} {prefix}b/s"
    return f"{_trim(number)} b/s"


@_numeric
def format_bytes(number: float) -> str:
    """Size in bytes, decimal (like BDP figures: 37.2 MB) with the binary form for exact multiples of a binary
    unit below 1024 of it (4 MiB; 400 000 000 reads 400 MB, not 390625 KiB)."""
    for exponent, unit in ((3, "GiB"), (2, "MiB"), (1, "KiB")):
        if 1024**exponent <= number < 1024 ** (exponent + 1) and number % (1024**exponent) == 0:
            return f"{int(number // 1024**exponent)} {unit}"
    for factor, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(number) >= factor:
            return f"{_trim(number / factor)} {unit}"
    return f"{_trim(number)} B"


@_numeric
def format_fraction(number: float) -> str:
    """A loss or utilisation fraction, always as a percentage: 0.0397 -> ``3.97 %``; 2.3e-05 -> ``0.0023 %``;
    0 -> ``0`` (one form on every page, e-mail and table, whatever the size)."""
    if number == 0:
        return "0"
    if abs(number) >= 1e-3:
        return f"{_trim(number * 100)} %"
    return f"{number * 100:.2g} %"


@_numeric
def format_percent(number: float) -> str:
    """A ratio as a whole percentage: 0.906 -> ``91 %``."""
    return f"{number * 100:.0f} %"


@_numeric
def format_ms(number: float) -> str:
    return f"{_trim(number)} ms"


@_numeric
def format_duration_s(number: float) -> str:
    """Seconds as the largest sensible unit: 0.94 -> ``940 ms``, 3834 -> ``63.9 min``, 1.1e5 -> ``1.27 d``."""
    if number < 1:
        return f"{_trim(number * 1000)} ms"
    for factor, unit in ((86400 * 365, "y"), (86400, "d"), (3600, "h"), (60, "min")):
        if number >= factor * 1.5 or (unit == "min" and number >= 60):
            return f"{_trim(number / factor)} {unit}"
    return f"{_trim(number)} s"


@_numeric
def format_rate(number: float, unit: str = "/s") -> str:
    """Events per second (errors, discards): 0.25 -> ``0.25/s``."""
    return f"{_trim(number)}{unit}"


def format_by_name(name: str, value) -> str:
    """Format ``value`` by the unit its name ends in (the project's naming rule): ``_bps``, ``_bytes``, ..."""
    if isinstance(value, bool) or value is None:
        return "–" if value is None else ("yes" if value else "no")
    if not isinstance(value, int | float):
        return str(value)
    if name.endswith("_bps"):
        return format_bps(value)
    if name.endswith("_bytes"):
        return format_bytes(value)
    if (name.endswith(("_fraction", "_limit")) or name.startswith("loss_")
            or name in {"efficiency", "reverse_efficiency", "coverage"}):
        return format_fraction(value)
    if name.endswith("_ms"):
        return format_ms(value)
    if name.endswith("_per_s"):
        return format_rate(value)
    if name.endswith("_s"):
        return format_duration_s(value)
    if isinstance(value, float):
        return _trim(value, 4)
    return f"{value:,}"

