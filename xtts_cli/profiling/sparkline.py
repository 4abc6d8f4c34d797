"""One-line pictures of a series for terminal reports.

`sparkline` draws heights with the eight block glyphs; `timeline` draws busy/idle the way users
sketch GPU utilisation by hand in their notes (`GPU:    ██    ░░    ██    ░░`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Optional

import numpy as np

BARS = "▁▂▃▄▅▆▇█"
BUSY = "█"
IDLE = "░"
LEVEL = "▒"
MISSING = " "


def _as_floats(values: Sequence[Optional[float]]) -> np.ndarray:
    return np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)


def resample(values: Sequence[Optional[float]], width: int) -> np.ndarray:
    """At most `width` points: the mean of each of `width` near-equal consecutive buckets, ignoring
    missing values (a bucket with none left is NaN). Shorter series come back unchanged."""
    if width < 1:
        raise ValueError(f"width ({width}) must be a positive number of characters")
    data = _as_floats(values)
    if data.size <= width:
        return data
    edges = np.linspace(0, data.size, width + 1).round().astype(int)
    out = np.full(width, math.nan)
    for i in range(width):
        bucket = data[edges[i] : edges[i + 1]]
        bucket = bucket[np.isfinite(bucket)]
        if bucket.size:
            out[i] = bucket.mean()
    return out


def _scale(data: np.ndarray, lo: Optional[float], hi: Optional[float]) -> tuple[float, float]:
    finite = data[np.isfinite(data)]
    low = float(lo) if lo is not None else (float(finite.min()) if finite.size else 0.0)
    high = float(hi) if hi is not None else (float(finite.max()) if finite.size else 0.0)
    return low, high


def sparkline(
    values: Sequence[Optional[float]], width: int = 60, lo: Optional[float] = None, hi: Optional[float] = None
) -> str:
    """Heights of `values` between `lo` and `hi` (default: the series' own min and max; values out of
    range are clipped). None and NaN draw as a space. A flat series with no range given draws at
    mid height, so it reads as "level", not as "zero"."""
    data = resample(values, width)
    low, high = _scale(data, lo, hi)
    chars = []
    for value in data:
        if not math.isfinite(value):
            chars.append(MISSING)
        elif high <= low:
            chars.append(BARS[len(BARS) // 2 - 1])
        else:
            share = min(max((value - low) / (high - low), 0.0), 1.0)
            chars.append(BARS[int(round(share * (len(BARS) - 1)))])
    return "".join(chars)


def timeline(
    label: str,
    values: Sequence[Optional[float]],
    width: int = 60,
    lo: Optional[float] = None,
    hi: Optional[float] = None,
    busy_at: Optional[float] = None,
    label_width: int = 0,
    unit: str = "",
) -> str:
    """`label: ` then one glyph per bucket: █ at or above `busy_at`, ░ below, space when missing.

    `busy_at` defaults to the midpoint of `lo`..`hi` (themselves defaulting to the series' range).
    For utilisation pass lo=0, hi=100, so 10-40 % draws as all idle rather than half busy. A flat
    series with no scale given has nothing to split into busy and idle and draws as ▒.
    With `unit`, the observed range is appended (`  2-40 %`).
    """
    data = resample(values, width)
    low, high = _scale(data, lo, hi)
    no_scale = busy_at is None and high <= low
    threshold = float(busy_at) if busy_at is not None else (low + high) / 2.0
    chars = []
    for value in data:
        if not math.isfinite(value):
            chars.append(MISSING)
        elif no_scale:
            chars.append(LEVEL)
        else:
            chars.append(BUSY if value >= threshold else IDLE)
    line = f"{label + ':':<{label_width + 1}} {''.join(chars)}"
    finite = _as_floats(values)
    finite = finite[np.isfinite(finite)]
    if unit and finite.size:
        line += f"  {finite.min():.0f}-{finite.max():.0f} {unit}"
    return line
