"""Durations written as Go and cert-manager write them (``2160h``, ``90m``, ``1h30m``, ``45s``),
plus days (``90d``), so that a certificate lifetime reads the same in the chart's values, on the
command line and in cert-manager's Certificate of the other mode."""

from __future__ import annotations

import re

UNITS = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|d|h|m|s)")


def parse_duration(text: str) -> float:
    """Seconds in ``text``; ValueError with the accepted form when it is not a duration."""
    compact = text.strip()
    parts = _PART.findall(compact)
    if not compact or "".join(number + unit for number, unit in parts) != compact:
        raise ValueError(f"{text!r} is not a duration such as 2160h, 90d, 1h30m or 45s")
    return sum(float(number) * UNITS[unit] for number, unit in parts)

