"""Is a latency or utilisation series cycling, and with what period?

The users' symptom is GPU utilisation that swings 2-40 % "in a cycle that keeps repeating": the GPU
idles while the host prepares the next batch, then bursts. The same cycle shows in step times (a slow
batch every k steps) and in NVML samples. This module names it from the numbers alone.

The rule (every constant below is a module constant a test can read):

1. Take the finite values; fewer than `MIN_SAMPLES` -> not detected.
2. Coefficient of variation of the raw series (std / |mean|) below `CV_FLOOR` -> not detected:
   a series that stays within ~10 % of its mean is steady, whatever its shape. 0.1 is the bar
   PERFORMANCE.md holds a healthy GPU to ("CV <= 0.1"), so "steady" means the same thing in both.
3. Remove the least-squares line (a slow drift is not a cycle) and take the autocorrelation
   r(k) = sum x(t) x(t+k) / sum x(t)^2 (the biased estimator: it shrinks long lags, which are
   estimated from few pairs, towards 0).
4. A candidate period is a lag k with 2 <= k <= n/2 (so at least two full periods lie in the
   series) where r has a local maximum, and:
   - r(k) >= max(ACF_THRESHOLD, NOISE_SIGMAS / sqrt(n)). For white noise r(k) is roughly
     normal with standard deviation 1/sqrt(n) (Bartlett), so on short series the fixed 0.3 alone
     would let noise through; and
   - r(k) rises at least `MIN_PROMINENCE` above the lowest r at a shorter lag: the series must
     first fall out of step with itself, then come back. A slowly decaying r (red noise, smooth
     drift) has no such dip; and
   - folding the series at k (averaging the samples that share a phase t mod k) explains at least
     `FOLD_MIN_EXPLAINED` of the variance that chance would leave unexplained. Folding noise into k
     phases explains (k-1)/(n-1) of its variance by chance alone, so the bar is
     chance + FOLD_MIN_EXPLAINED * (1 - chance). Two large random hiccups k samples apart give a high
     r(k) but do not repeat, and fail here. Measured at n=128 on 1000 seeded series each, this cut
     false detections on random spikes from 11 % to 1.6 % and on AR(1) noise (phi 0.9) from 7 % to
     4 %, with no loss on square, saw-tooth or spike-train cycles of 3-12 samples plus noise.
5. Detected when a candidate exists. The period is the shortest candidate whose r is at least
   `HARMONIC_RATIO` of the strongest (multiples of the period are candidates too, a little weaker),
   refined to a fraction of a sample by a parabola through r(k-1), r(k), r(k+1). `strength` is r at
   that lag: 1 is a perfect repeat.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Optional

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from xtts_cli.stats.latency import finite_values

MIN_SAMPLES = 8
CV_FLOOR = 0.1
ACF_THRESHOLD = 0.3
NOISE_SIGMAS = 3.0
MIN_PROMINENCE = 0.3
FOLD_MIN_EXPLAINED = 0.5
HARMONIC_RATIO = 0.8
METHOD = "autocorrelation"


class Oscillation(BaseModel):
    """`period` is in samples of the series given (batches for step times, samples for NVML)."""

    model_config = ConfigDict(frozen=True)

    detected: bool = Field(
        description="A repeating cycle stands out of the series (autocorrelation peak over `threshold`)."
    )
    period: Optional[float] = Field(
        None,
        description="Its period in samples of the series (batches for step times, readings for NVML); empty: none.",
    )
    strength: float = Field(0.0, description="The autocorrelation at that period (0-1).")
    method: str = Field(METHOD, description="How it was judged: autocorrelation.")
    samples: int = Field(0, description="Samples in the series judged.")
    cv: float = Field(0.0, description="The series' coefficient of variation (std / mean).")
    threshold: float = Field(ACF_THRESHOLD, description="The autocorrelation a peak must reach to count.")
    reason: str = Field("", description="Why it is, or is not, called an oscillation, in words.")


def autocorrelation(x: np.ndarray) -> np.ndarray:
    """Biased autocorrelation r(0..n-1) of a zero-mean series, r(0) == 1 (via FFT: O(n log n), so an
    hour of 10 Hz samples costs milliseconds)."""
    n = x.size
    spectrum = np.fft.rfft(x, 2 * n)  # zero-padded to 2n: linear, not circular, correlation
    acf = np.fft.irfft(spectrum * np.conj(spectrum), 2 * n)[:n]
    return acf / acf[0]


def detect_oscillation(series: Iterable[Optional[float]]) -> Oscillation:
    values = finite_values(series)
    n = int(values.size)
    if n < MIN_SAMPLES:
        return Oscillation(detected=False, samples=n, reason=f"{n} samples; at least {MIN_SAMPLES} needed")

    mean = float(values.mean())
    cv = float(values.std() / abs(mean)) if mean != 0 else 0.0
    threshold = max(ACF_THRESHOLD, NOISE_SIGMAS / math.sqrt(n))
    if cv < CV_FLOOR:
        return Oscillation(
            detected=False,
            samples=n,
            cv=cv,
            threshold=threshold,
            reason=f"steady: coefficient of variation {cv:.3f} < {CV_FLOOR}",
        )

    t = np.arange(n, dtype=np.float64)
    slope, intercept = np.polyfit(t, values, 1)
    x = values - (slope * t + intercept)
    # What remains after removing a line may be rounding noise only (a pure ramp).
    if float(np.sum(x * x)) <= 1e-12 * float(np.sum(values * values)):
        return Oscillation(detected=False, samples=n, cv=cv, threshold=threshold, reason="a straight trend, no cycle")

    r = autocorrelation(x)
    max_lag = n // 2
    candidates: list[tuple[int, float]] = []
    strongest_peak = 0.0
    for k in range(2, max_lag + 1):
        if not (r[k] > r[k - 1] and r[k] >= r[k + 1]):
            continue
        strongest_peak = max(strongest_peak, float(r[k]))
        if (
            r[k] >= threshold
            and r[k] - float(np.min(r[1:k])) >= MIN_PROMINENCE
            and folded_share(x, k) >= _fold_bar(n, k)
        ):
            candidates.append((k, float(r[k])))

    if not candidates:
        reason = f"no repeating autocorrelation peak >= {threshold:.2f} at lags 2..{max_lag}"
        if strongest_peak >= threshold:  # a peak tall enough, but not standing out, or not repeating
            reason = (
                f"the strongest autocorrelation peak ({strongest_peak:.2f}) rises less than {MIN_PROMINENCE} "
                "above the dip before it, or the series does not repeat at its lag"
            )
        return Oscillation(
            detected=False, samples=n, cv=cv, threshold=threshold, strength=max(strongest_peak, 0.0), reason=reason
        )

    best = max(value for _, value in candidates)
    lag, strength = next((k, v) for k, v in candidates if v >= HARMONIC_RATIO * best)
    return Oscillation(
        detected=True,
        period=_refine(r, lag),
        strength=strength,
        samples=n,
        cv=cv,
        threshold=threshold,
        reason=f"autocorrelation {strength:.2f} at lag {lag}",
    )


def folded_share(x: np.ndarray, k: int) -> float:
    """Share of the variance of `x` explained by its mean profile over phases t mod k."""
    centred = x - x.mean()
    total = float(np.sum(centred * centred))
    if total == 0.0:
        return 0.0
    phase = np.arange(x.size) % k
    counts = np.bincount(phase, minlength=k)
    profile = np.bincount(phase, weights=centred, minlength=k) / counts
    return float(np.sum(counts * profile * profile)) / total


def _fold_bar(n: int, k: int) -> float:
    chance = (k - 1) / (n - 1)
    return chance + FOLD_MIN_EXPLAINED * (1.0 - chance)


def _refine(r: np.ndarray, k: int) -> float:
    """Vertex of the parabola through r(k-1), r(k), r(k+1): the period between whole samples."""
    left, centre, right = float(r[k - 1]), float(r[k]), float(r[k + 1])
    curvature = left - 2.0 * centre + right
    if curvature >= 0:
        return float(k)
    offset = 0.5 * (left - right) / curvature
    return float(k + max(-0.5, min(0.5, offset)))
