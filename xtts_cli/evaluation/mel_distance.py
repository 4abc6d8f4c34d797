"""Mel-cepstral distortion between two utterances, aligned by dynamic time warping.

MCD (Kubichek 1993) compares the spectral envelopes of two renderings of the same sentence:
(10 / ln 10) x sqrt(2 x sum_d (c_d - c'_d)^2) in dB over cepstral coefficients 1..K (c0, the
energy, left out), averaged over frame pairs. The two renderings need not be the same length, so
frames are paired along the DTW path of least total distance (as ESPnet's `evaluate_mcd.py` does).
Here the cepstrum is the orthonormal DCT-II of the natural-log mel spectrum (the MFCC recipe),
not SPTK's all-pass mel-cepstrum, so figures compare with each other, not with other papers'.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["dtw_path", "mel_cepstral_distortion", "mel_cepstrum"]

MCD_COEFFICIENTS = 13


def mel_cepstrum(log_mel: np.ndarray, coefficients: int = MCD_COEFFICIENTS) -> np.ndarray:
    """[frames, coefficients - 1]: DCT-II (orthonormal) of each log-mel frame, c1..c_{K-1}."""
    log_mel = np.asarray(log_mel, dtype=np.float64)
    bins = log_mel.shape[1]
    k = np.arange(coefficients)[:, None]
    n = np.arange(bins)[None, :]
    basis = np.cos(math.pi * k * (2 * n + 1) / (2 * bins)) * math.sqrt(2.0 / bins)
    basis[0] /= math.sqrt(2.0)
    return (log_mel @ basis.T)[:, 1:]


def dtw_path(cost: np.ndarray) -> list[tuple[int, int]]:
    """The monotonic path from (0, 0) to the last cell of `cost` [N, M] with the least total cost
    (steps: down, right, diagonal)."""
    rows, cols = cost.shape
    total = np.full((rows + 1, cols + 1), np.inf)
    total[0, 0] = 0.0
    for i in range(1, rows + 1):
        row = cost[i - 1]
        previous, current = total[i - 1], total[i]
        best_from_above = np.minimum(previous[1:], previous[:-1])  # up, diagonal
        for j in range(1, cols + 1):
            current[j] = row[j - 1] + min(best_from_above[j - 1], current[j - 1])
    path, i, j = [], rows, cols
    while i > 0 and j > 0:
        path.append((i - 1, j - 1))
        moves = ((total[i - 1, j - 1], i - 1, j - 1), (total[i - 1, j], i - 1, j), (total[i, j - 1], i, j - 1))
        _, i, j = min(moves, key=lambda move: move[0])
    return path[::-1]


def mel_cepstral_distortion(
    log_mel_a: np.ndarray, log_mel_b: np.ndarray, coefficients: int = MCD_COEFFICIENTS
) -> float:
    """MCD in dB between two log-mel spectrograms [frames, n_mels] of the same sentence."""
    a, b = mel_cepstrum(log_mel_a, coefficients), mel_cepstrum(log_mel_b, coefficients)
    if len(a) == 0 or len(b) == 0:
        raise ValueError("both spectrograms need at least one frame")
    cost = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=-1))
    path = dtw_path(cost)
    distances = np.array([cost[i, j] for i, j in path])
    return float((10.0 / math.log(10.0)) * math.sqrt(2.0) * distances.mean())
