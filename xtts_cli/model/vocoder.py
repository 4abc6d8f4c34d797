"""Griffin-Lim vocoder: log-mel frames back to a waveform, in TensorFlow.

No trained vocoder is needed to listen to what the model has learnt: the mel is mapped back to a
linear magnitude with the filterbank's pseudo-inverse, then the phase is estimated with the fast
Griffin-Lim algorithm (Griffin & Lim 1984; momentum variant of Perraudin et al. 2013, the one
`librosa.griffinlim` implements, with the same default momentum 0.99).

Framing matches librosa's `center=True` and the feature pipeline (`xtts_cli.data.features`): the
signal is reflect-padded by n_fft // 2 on both sides (`pad_mode="reflect"`; zero-padded when it
is too short to reflect), the periodic Hann window of `win_length` is zero-padded to `n_fft` in
the centre, and the inverse STFT divides by the window's summed square
envelope, as `librosa.istft` does, so the edges are exact too. A mel of F frames gives
(F - 1) * hop_length samples.
"""

from __future__ import annotations

import functools
import math
from typing import Optional

import numpy as np
import tensorflow as tf

__all__ = ["griffin_lim", "stft_magnitude"]

# Fast Griffin-Lim's momentum (Perraudin et al. 2013; librosa.griffinlim's default).
DEFAULT_MOMENTUM = 0.99


def _analysis_window(n_fft: int, win_length: int) -> tf.Tensor:
    """Periodic Hann of `win_length`, zero-padded to `n_fft` in the centre (librosa's `pad_center`)."""
    window = tf.signal.hann_window(win_length, periodic=True, dtype=tf.float32)
    left = (n_fft - win_length) // 2
    return tf.pad(window, [[left, n_fft - win_length - left]])


def _pad_mode(samples: int, n_fft: int) -> str:
    """librosa's centring: reflect, or zeros when the signal is too short to reflect."""
    return "REFLECT" if samples > n_fft // 2 else "CONSTANT"


def _stft(signal: tf.Tensor, window: tf.Tensor, n_fft: int, hop_length: int, mode: str = "") -> tf.Tensor:
    # The mode follows from the signal's length (static, or the frame count's), not from the data.
    mode = mode or _pad_mode(signal.shape[0], n_fft)
    padded = tf.pad(signal, [[n_fft // 2, n_fft // 2]], mode=mode)
    frames = tf.signal.frame(padded, n_fft, hop_length)
    return tf.signal.rfft(frames * window, fft_length=[n_fft])


def _istft(spectrum: tf.Tensor, window: tf.Tensor, envelope: tf.Tensor, n_fft: int, hop_length: int) -> tf.Tensor:
    frames = tf.signal.irfft(spectrum, fft_length=[n_fft]) * window
    signal = tf.signal.overlap_and_add(frames, hop_length) / envelope
    return signal[n_fft // 2 : -(n_fft // 2)] if n_fft // 2 else signal


def stft_magnitude(signal, *, n_fft: int, hop_length: int, win_length: int) -> tf.Tensor:
    """|STFT| [frames, n_fft // 2 + 1] with the same centred framing as `griffin_lim`."""
    signal = tf.convert_to_tensor(signal, tf.float32)
    return tf.abs(_stft(signal, _analysis_window(n_fft, win_length), n_fft, hop_length))


def stft_phase(signal, *, n_fft: int, hop_length: int, win_length: int) -> np.ndarray:
    """The angle of the STFT [frames, n_fft // 2 + 1], radians, with `griffin_lim`'s centred framing."""
    signal = tf.convert_to_tensor(signal, tf.float32)
    return np.angle(_stft(signal, _analysis_window(n_fft, win_length), n_fft, hop_length).numpy())


def griffin_lim(
    log_mel,
    mel_basis: np.ndarray,
    *,
    n_fft: int,
    hop_length: int,
    win_length: int,
    n_iter: int = 32,
    momentum: float = DEFAULT_MOMENTUM,
    seed: int = 0,
    max_frames: Optional[int] = None,
    initial_phase: Optional[np.ndarray] = None,
) -> tf.Tensor:
    """Waveform float32 [(frames - 1) * hop_length] from a natural-log mel [frames, n_mels].

    `mel_basis` [n_fft // 2 + 1, n_mels] maps linear magnitude to mel (mel = |STFT| @ mel_basis).
    The initial phase is uniform random from `seed`, so the output is reproducible. A mel whose
    frame count is known only when it runs (a graph's) needs `max_frames`, its most: its phase is
    then the first rows of that many, the same as a mel of that count gets. `initial_phase` [k,
    n_fft // 2 + 1] (radians) holds the first k frames' phase through the search: those of audio
    this mel continues, so that the two agree where they overlap (started from it alone, the
    search drifted to a phase of its own: they had partly cancelled where crossfaded).
    """
    mel_basis = np.asarray(mel_basis, dtype=np.float64)
    n_freq = n_fft // 2 + 1
    if mel_basis.ndim != 2 or mel_basis.shape[0] != n_freq:
        raise ValueError(
            f"mel_basis has shape {mel_basis.shape}; expected [n_fft // 2 + 1, n_mels] = [{n_freq}, n_mels] "
            "(transpose librosa.filters.mel's output)"
        )
    if win_length > n_fft:
        raise ValueError(f"win_length ({win_length}) must be <= n_fft ({n_fft})")
    log_mel = tf.convert_to_tensor(log_mel, tf.float32)
    if log_mel.shape.rank != 2 or log_mel.shape[1] != mel_basis.shape[1]:
        raise ValueError(f"log_mel has shape {log_mel.shape}; expected [frames, {mel_basis.shape[1]}]")
    frame_count = log_mel.shape[0]
    if frame_count is None and max_frames is None:
        raise ValueError("log_mel has None frames; pass max_frames, the most it may have")
    if frame_count is not None and frame_count < 2:
        raise ValueError(f"log_mel has {frame_count} frames; Griffin-Lim needs at least 2")
    rows = int(frame_count) if frame_count is not None else int(max_frames or 0)

    # Least-squares inverse of the filterbank; negative magnitudes it produces between filters are
    # not magnitudes, so they are clipped to 0.
    mel_to_linear = tf.constant(np.linalg.pinv(mel_basis).astype(np.float32))
    random_phase = np.random.default_rng(seed).uniform(0.0, 2.0 * math.pi, size=(rows, n_freq))
    held = 0
    if initial_phase is not None:
        given = np.asarray(initial_phase)[:rows]
        random_phase[: len(given)] = given
        held = len(given)
    locked = tf.constant(held, tf.int32)
    # The same values as a complex64 constant, made of two float32 ones: traced (an export's buffer of
    # 1,000 frames) TensorFlow writes a complex constant element by element in Python, 1.5 s of it.
    angles = tf.complex(
        tf.constant(np.cos(random_phase).astype(np.float32)), tf.constant(np.sin(random_phase).astype(np.float32))
    )
    if frame_count is not None:
        mode = _pad_mode((frame_count - 1) * hop_length, n_fft)
        return _phase_search(n_fft, hop_length, win_length, n_iter, float(momentum), mode)(
            log_mel, mel_to_linear, angles, locked
        )
    frames = tf.shape(log_mel)[0]
    angles = angles[:frames]

    def search(mode: str):
        return lambda: _phase_search(n_fft, hop_length, win_length, n_iter, float(momentum), mode)(
            log_mel, mel_to_linear, angles, locked
        )

    return tf.cond((frames - 1) * hop_length > n_fft // 2, search("REFLECT"), search("CONSTANT"))


@functools.lru_cache(maxsize=16)
def _phase_search(n_fft: int, hop_length: int, win_length: int, n_iter: int, momentum: float, mode: str):
    """The iterations as one graph for any frame count: op by op, Python's dispatch of its ~2,000
    small ops took more time than their FFTs (0.7 s of a 0.8 s sentence on 2 cores)."""

    matrix = tf.TensorSpec([None, None], tf.float32)
    phases = tf.TensorSpec([None, n_fft // 2 + 1], tf.complex64)

    # No autograph: the loop is TensorFlow's own, and converting the functions it calls cost more
    # than tracing them.
    @tf.function(input_signature=[matrix, matrix, phases, tf.TensorSpec([], tf.int32)], autograph=False)
    def search(log_mel, mel_to_linear, angles, locked):
        magnitude = tf.cast(tf.maximum(tf.matmul(tf.exp(log_mel), mel_to_linear), 0.0), tf.complex64)
        window = _analysis_window(n_fft, win_length)
        squares = tf.tile(tf.square(window)[None], [tf.shape(log_mel)[0], 1])
        envelope = tf.signal.overlap_and_add(squares, hop_length)
        # Where no window reaches (only possible with hop > win_length) keep the signal as is.
        envelope = tf.where(envelope > 1e-10, envelope, 1.0)
        step_back = tf.constant(momentum / (1.0 + momentum), tf.complex64)

        held = angles[:locked]  # the first frames' phase, kept (`initial_phase`)

        def iteration(angles, previous):
            signal = _istft(magnitude * angles, window, envelope, n_fft, hop_length)
            rebuilt = _stft(signal, window, n_fft, hop_length, mode)
            angles = rebuilt - step_back * previous
            angles = angles / tf.cast(tf.abs(angles) + 1e-16, tf.complex64)
            return tf.concat([held, angles[locked:]], axis=0), rebuilt

        # A loop in the graph, not 32 copies of the iteration: the first call traced in 4.4-4.9 s
        # unrolled and 0.8-1.1 s looped (200 frames, 2 cores); later calls take the same time.
        angles, _ = tf.while_loop(
            lambda *_: True, iteration, (angles, tf.zeros_like(angles)), maximum_iterations=n_iter
        )
        return _istft(magnitude * angles, window, envelope, n_fft, hop_length)

    return search
