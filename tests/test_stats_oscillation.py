import time

import numpy as np

from xtts_cli.stats import oscillation
from xtts_cli.stats.oscillation import detect_oscillation


def square_wave(n, period, low=2.0, high=40.0):
    t = np.arange(n)
    return np.where((t % period) < period / 2, high, low)


def test_square_wave_with_noise_has_its_period():
    rng = np.random.default_rng(1)
    series = square_wave(96, 8) + rng.normal(0, 3.0, 96)
    result = detect_oscillation(series)
    assert result.detected, result.reason
    assert abs(result.period - 8) <= 1
    assert result.strength >= oscillation.ACF_THRESHOLD
    assert result.method == "autocorrelation"


def test_saw_tooth_with_noise_has_its_period():
    rng = np.random.default_rng(2)
    t = np.arange(120)
    series = 5.0 + 4.0 * (t % 8) + rng.normal(0, 2.0, 120)
    result = detect_oscillation(series)
    assert result.detected, result.reason
    assert abs(result.period - 8) <= 1


def test_the_fundamental_wins_over_its_multiples():
    # Lags 8, 16, 24 all correlate; the period is the shortest of them.
    result = detect_oscillation(square_wave(200, 8))
    assert result.detected
    assert abs(result.period - 8) < 0.5


def test_white_noise_is_not_a_cycle():
    rng = np.random.default_rng(3)
    for n in (16, 64, 256):
        result = detect_oscillation(10.0 + 3.0 * rng.standard_normal(n))
        assert not result.detected, (n, result)
        assert result.period is None


def test_constant_series_is_steady():
    result = detect_oscillation([25.0] * 100)
    assert not result.detected
    assert result.cv == 0.0
    assert "steady" in result.reason


def test_small_cycle_around_a_high_mean_is_steady():
    # 90-100 % utilisation in a cycle: CV ~0.05, under the 0.1 floor, so not a problem cycle.
    result = detect_oscillation(square_wave(100, 10, low=90.0, high=100.0))
    assert result.cv < oscillation.CV_FLOOR
    assert not result.detected


def test_drift_alone_is_not_a_cycle():
    assert not detect_oscillation(np.linspace(10.0, 50.0, 80)).detected


def test_two_hiccups_do_not_make_a_cycle():
    # Two large stalls 12 steps apart correlate strongly at lag 12 but never repeat: the fold test
    # (step 4 of the rule) rejects them.
    rng = np.random.default_rng(4)
    series = 10.0 + rng.normal(0, 1.0, 64)
    series[20] += 200.0
    series[32] += 200.0
    assert not detect_oscillation(series).detected


def test_at_least_two_full_periods_are_needed():
    # One and a half periods of 16 in 24 samples: the lag would exceed n/2.
    assert not detect_oscillation(square_wave(24, 16)).detected


def test_too_few_samples():
    result = detect_oscillation([1.0, 9.0, 1.0, 9.0])
    assert not result.detected
    assert result.samples == 4


def test_missing_samples_are_ignored():
    series = list(square_wave(64, 8))
    series.append(None)
    series.append(float("nan"))
    result = detect_oscillation(series)
    assert result.detected and result.samples == 64


def test_timed_python_loop_with_a_slow_fifth_iteration_has_period_five():
    durations_ms = []
    for i in range(60):
        start = time.perf_counter()
        time.sleep(0.012 if i % 5 == 4 else 0.002)
        durations_ms.append((time.perf_counter() - start) * 1e3)
    result = detect_oscillation(durations_ms)
    assert result.detected, result.reason
    assert round(result.period) == 5


def test_a_peak_tall_enough_that_does_not_repeat_is_said_so_not_called_too_low():
    # A random walk (seeded): its autocorrelation has a peak over the bar that is no cycle.
    rng = np.random.default_rng(0)
    walks = (np.cumsum(rng.normal(size=40)) + 20 for _ in range(177))
    found = [detect_oscillation(walk) for walk in walks][-1]
    assert not found.detected and found.strength >= found.threshold
    assert found.reason.startswith(f"the strongest autocorrelation peak ({found.strength:.2f}) rises less than")
