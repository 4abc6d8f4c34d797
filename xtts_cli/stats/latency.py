"""Summary statistics of a series of durations (ms): the figures every profiler report shares."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Optional

import numpy as np
from pydantic import BaseModel, ConfigDict, Field


class LatencyStats(BaseModel):
    """Count, centre, tail and spread of a series of durations in milliseconds.

    `std` is the population standard deviation (ddof=0) so that a series of one value has a
    defined spread (0) instead of NaN; `cv` = std / mean, and 0 when the mean is 0. An empty
    series gives `count == 0` and every figure 0: check `count` before reading the rest.
    """

    model_config = ConfigDict(frozen=True)

    count: int = Field(description="How many durations (0: an empty series, every figure below 0).")
    mean: float = Field(description="Mean, ms.")
    p50: float = Field(description="Median, ms.")
    p95: float = Field(description="95th percentile, ms.")
    p99: float = Field(description="99th percentile, ms.")
    max: float = Field(description="Longest, ms.")
    std: float = Field(description="Population standard deviation (ddof 0), ms.")
    cv: float = Field(description="std / mean (0 when the mean is 0): the spread, comparable across sizes.")


def finite_values(series: Iterable[Optional[float]]) -> np.ndarray:
    """The finite numbers of `series` as float64; None, NaN and inf are dropped (a missing sample is
    not a duration of zero)."""
    values = np.array([math.nan if v is None else float(v) for v in series], dtype=np.float64)
    return values[np.isfinite(values)]


def summarize(series: Iterable[Optional[float]]) -> LatencyStats:
    values = finite_values(series)
    if values.size == 0:
        return LatencyStats(count=0, mean=0.0, p50=0.0, p95=0.0, p99=0.0, max=0.0, std=0.0, cv=0.0)
    # Linear interpolation between order statistics (numpy's default, like pandas): with n=2 the
    # p95 lies between the two values instead of jumping to the larger one.
    p50, p95, p99 = np.percentile(values, [50.0, 95.0, 99.0])
    mean = float(values.mean())
    std = float(values.std())
    return LatencyStats(
        count=int(values.size),
        mean=mean,
        p50=float(p50),
        p95=float(p95),
        p99=float(p99),
        max=float(values.max()),
        std=std,
        cv=std / abs(mean) if mean != 0 else 0.0,
    )
