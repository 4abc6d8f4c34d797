"""Griffin-Lim: framing matches librosa's (stored by scripts/make_librosa_references.py), and a
real signal survives mel -> waveform -> mel."""

from __future__ import annotations

import numpy as np
import pytest
from librosa_references import STFT_HOP, STFT_N_FFT, STFT_SECONDS, STFT_WINDOWS, references, speech_like

tf = pytest.importorskip("tensorflow")

from xtts_cli.config.schema import DataConfig  # noqa: E402
from xtts_cli.data.features import mel_filterbank  # noqa: E402
from xtts_cli.model.vocoder import griffin_lim, stft_magnitude  # noqa: E402

SAMPLE_RATE, N_FFT, HOP, N_MELS = 22050, STFT_N_FFT, STFT_HOP, 80


def sweep(seconds: float = 1.0) -> np.ndarray:
    """An exponential sine sweep from 110 Hz to 4 kHz (librosa.chirp's default shape)."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    rate = np.log(4000.0 / 110.0) / seconds
    return (0.5 * np.cos(2.0 * np.pi * 110.0 * (np.exp(rate * t) - 1.0) / rate)).astype(np.float32)


def mel_basis() -> np.ndarray:
    # librosa.filters.mel's (tests/test_data_features.py checks the two agree).
    return mel_filterbank(DataConfig(sample_rate=SAMPLE_RATE, n_fft=N_FFT, n_mels=N_MELS, fmax=8000.0))


def log_mel(signal, win_length: int = N_FFT) -> np.ndarray:
    magnitude = stft_magnitude(signal, n_fft=N_FFT, hop_length=HOP, win_length=win_length).numpy()
    return np.log(np.maximum(magnitude @ mel_basis(), 1e-5))


def spectral_convergence(reference_log_mel, estimate_log_mel) -> float:
    reference, estimate = np.exp(reference_log_mel), np.exp(estimate_log_mel)
    return float(np.linalg.norm(reference - estimate) / np.linalg.norm(reference))


@pytest.mark.parametrize("win_length", STFT_WINDOWS)
def test_stft_framing_matches_librosa_center_true_reflect(win_length):
    ours = stft_magnitude(speech_like(STFT_SECONDS), n_fft=N_FFT, hop_length=HOP, win_length=win_length).numpy()
    theirs = references()[f"stft_{win_length}"]
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, atol=1e-3 * theirs.max())


@pytest.mark.parametrize("make_signal", [sweep, speech_like], ids=["sweep", "speech-like"])
def test_griffin_lim_reproduces_the_mel(make_signal):
    target = log_mel(make_signal())
    waveform = griffin_lim(target, mel_basis(), n_fft=N_FFT, hop_length=HOP, win_length=N_FFT, n_iter=32)
    assert waveform.dtype == tf.float32
    assert waveform.shape == ((target.shape[0] - 1) * HOP,)
    convergence = spectral_convergence(target, log_mel(waveform))
    random_phase = spectral_convergence(
        target, log_mel(griffin_lim(target, mel_basis(), n_fft=N_FFT, hop_length=HOP, win_length=N_FFT, n_iter=0))
    )
    # Measured on this machine: 0.10 (sweep) and 0.12 (speech-like) after 32 iterations, 0.08 and
    # 0.12 after 100 (GLA has converged: the rest is the pseudo-inverse's clipping and the
    # inconsistency of a magnitude read back through a mel filterbank), against 0.59 and 0.62
    # with random phase. 0.2 leaves room for float and platform differences while a broken phase
    # update, which stays near the random-phase figure, fails.
    assert convergence < 0.2
    assert convergence < 0.4 * random_phase


def test_griffin_lim_is_reproducible_and_checks_its_inputs():
    target = log_mel(sweep(0.3))
    first = griffin_lim(target, mel_basis(), n_fft=N_FFT, hop_length=HOP, win_length=N_FFT, n_iter=4)
    second = griffin_lim(target, mel_basis(), n_fft=N_FFT, hop_length=HOP, win_length=N_FFT, n_iter=4)
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    # Two frames: a signal too short to reflect-pad still comes back at (frames - 1) * hop.
    assert griffin_lim(target[:2], mel_basis(), n_fft=N_FFT, hop_length=HOP, win_length=N_FFT, n_iter=2).shape == (HOP,)
    with pytest.raises(ValueError, match="transpose"):
        griffin_lim(target, mel_basis().T, n_fft=N_FFT, hop_length=HOP, win_length=N_FFT)
