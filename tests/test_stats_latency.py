import math

import numpy as np
import pytest

from xtts_cli.stats.latency import LatencyStats, summarize


def test_matches_numpy_on_a_long_series():
    rng = np.random.default_rng(0)
    series = rng.gamma(2.0, 5.0, 1000)
    stats = summarize(series)
    assert stats.count == 1000
    assert stats.mean == pytest.approx(series.mean())
    assert stats.p50 == pytest.approx(np.median(series))
    assert stats.p95 == pytest.approx(np.percentile(series, 95))
    assert stats.p99 == pytest.approx(np.percentile(series, 99))
    assert stats.max == pytest.approx(series.max())
    assert stats.std == pytest.approx(series.std())
    assert stats.cv == pytest.approx(series.std() / series.mean())
    assert stats.p50 <= stats.p95 <= stats.p99 <= stats.max


def test_one_value_has_no_spread():
    stats = summarize([12.5])
    assert stats == LatencyStats(count=1, mean=12.5, p50=12.5, p95=12.5, p99=12.5, max=12.5, std=0.0, cv=0.0)


def test_two_values_interpolate_the_tail():
    stats = summarize([10.0, 20.0])
    assert stats.count == 2
    assert stats.mean == 15.0
    assert stats.p50 == 15.0
    # Linear interpolation: p95 lies between the values, it does not jump to the larger one.
    assert stats.p95 == pytest.approx(19.5)
    assert stats.max == 20.0
    assert stats.std == pytest.approx(5.0)
    assert stats.cv == pytest.approx(5.0 / 15.0)


def test_zero_mean_gives_zero_cv():
    assert summarize([0.0, 0.0, 0.0]).cv == 0.0


def test_missing_values_are_dropped_not_counted_as_zero():
    stats = summarize([1.0, None, math.nan, 3.0, math.inf])
    assert stats.count == 2
    assert stats.mean == 2.0


def test_empty_series_reports_count_zero():
    stats = summarize([])
    assert stats.count == 0
    assert stats.mean == 0.0 and stats.cv == 0.0
