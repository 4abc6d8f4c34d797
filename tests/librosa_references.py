"""librosa's answers for the feature and trim tests (`scripts/make_librosa_references.py` writes
them; librosa itself is not installed with the tests), and the inputs both sides build."""

from __future__ import annotations

from pathlib import Path

import numpy as np

FILE = Path(__file__).parent / "data" / "librosa_references.npz"

# The filterbank test's settings (a 16 kHz front end), and the short-window log-mel test's.
FILTERBANK_SETTINGS = dict(
    fmin=30.0, fmax=7600.0, n_mels=64, n_fft=512, win_length=400, hop_length=160, sample_rate=16000
)
SHORT_SETTINGS = dict(n_fft=1024, win_length=800, hop_length=200, fmax=None)
# Griffin-Lim's framing test: the STFT of `speech_like(STFT_SECONDS)` with each window length.
STFT_SAMPLE_RATE, STFT_N_FFT, STFT_HOP, STFT_SECONDS = 22050, 1024, 256, 0.25
STFT_WINDOWS = (1024, 800)


def speech_like(seconds: float = 1.0, sample_rate: int = STFT_SAMPLE_RATE) -> np.ndarray:
    """A glottal-pulse-like harmonic series whose pitch glides 110 -> 220 Hz, with a syllable-rate
    (4 Hz) envelope: the kind of signal a vocoder has to carry, not a single stationary tone."""
    t = np.arange(int(seconds * sample_rate)) / sample_rate
    pitch = 110.0 * 2.0**t
    phase = 2.0 * np.pi * np.cumsum(pitch) / sample_rate
    harmonics = sum(np.sin(k * phase) / k for k in range(1, 30) if k * 220 < sample_rate / 2)
    envelope = 0.6 + 0.4 * np.sin(2.0 * np.pi * 4.0 * t)
    return (0.1 * envelope * harmonics).astype(np.float32)


def trim_input(audio: np.ndarray) -> np.ndarray:
    """A clip with 5,000 and 7,000 samples of near-silence (seeded noise at 1e-4) around it."""
    padded = np.concatenate([np.zeros(5000, np.float32), audio, np.zeros(7000, np.float32)])
    return padded + np.random.default_rng(0).normal(0, 1e-4, padded.shape).astype(np.float32)


def references() -> dict[str, np.ndarray]:
    with np.load(FILE) as stored:
        return {name: stored[name] for name in stored.files}
