"""Log-mel features, one TensorFlow function for the tf.data pipeline and for a compiled device step.

Settings follow librosa so features match the tools users check them with:
- centred framing: the signal is reflect-padded by n_fft // 2 on both sides, so a clip of `n` samples
  gives 1 + n // hop_length frames (`DataConfig.mel_frames_for`);
- a periodic Hann window of win_length samples, zero-padded to n_fft at the centre;
- magnitude spectrogram (power = 1), the HiFi-GAN / XTTS convention: log-magnitude mels keep a
  smaller dynamic range than power mels, which a vocoder trained on them expects. The librosa
  equivalent is `librosa.feature.melspectrogram(..., power=1.0, pad_mode="reflect")`;
- the mel filterbank of `librosa.filters.mel`: `slaney` = Slaney's mel scale with area
  normalisation (htk=False, norm="slaney", librosa's default); `htk` = the HTK mel scale with
  unit-peak triangles (htk=True, norm=None, as HTK and torchaudio's default build it);
- natural log of max(mel, 1e-5).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, Optional, Union

import numpy as np

from xtts_cli.config.schema import DataConfig


@dataclass(frozen=True)
class MelFeatures:
    """What a mel frame of a run is: the transform (rate, FFT, hop, window, mels, band, filterbank)
    and what is done to a clip before it (silence trimmed, loudness normalised). One identity read by
    the resume check (run/directory.py), the feature store's fingerprint (feature_cache.py) and a
    vocoder's pairing with an acoustic run (inference/loading.py), so the three cannot disagree."""

    sample_rate: int
    n_fft: int
    hop_length: int
    win_length: int
    n_mels: int
    fmin: float
    fmax: Optional[float]
    mel_filterbank: str
    trim_silence: bool
    normalize_loudness: bool

    # The transform: a vocoder hears a frame through these alone, whatever was done to the clip.
    TRANSFORM: ClassVar[tuple[str, ...]] = (
        "sample_rate",
        "n_fft",
        "hop_length",
        "win_length",
        "n_mels",
        "fmin",
        "fmax",
        "mel_filterbank",
    )

    @classmethod
    def of(cls, data: DataConfig) -> MelFeatures:
        return cls(**{item.name: getattr(data, item.name) for item in fields(cls)})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def top(self) -> float:
        """The band's top, Hz: fmax, or (empty) the Nyquist frequency it stands for."""
        return self.fmax if self.fmax is not None else self.sample_rate / 2

    def transform_mismatch(self, other: MelFeatures) -> list[str]:
        """'name ours against theirs' for each transform setting that differs; an empty fmax is
        the Nyquist frequency it stands for (a run that wrote 11025 at 22050 Hz hears the same frames)."""

        def value(features: MelFeatures, name: str) -> Any:
            return features.top if name == "fmax" else getattr(features, name)

        def said(features: MelFeatures, name: str) -> str:
            empty = name == "fmax" and features.fmax is None
            return f"empty (= {features.top:g} Hz)" if empty else str(getattr(features, name))

        return [
            f"{name} {said(self, name)} against {said(other, name)}"
            for name in self.TRANSFORM
            if value(self, name) != value(other, name)
        ]


def with_band_top(identity: dict[str, Any]) -> dict[str, Any]:
    """A run's identity ("data.fmax": ...) with an empty fmax as the Nyquist frequency it stands for,
    so that a resume writing it out (or leaving it empty) is the same run."""
    if identity.get("data.fmax") is None and isinstance(identity.get("data.sample_rate"), (int, float)):
        return {**identity, "data.fmax": identity["data.sample_rate"] / 2}
    return identity


MEL_FLOOR = 1e-5
LOG_MEL_FLOOR = math.log(MEL_FLOOR)  # also the padding value of mel batches

# Log-mels as the pipeline keeps them, in memory (cache mode) and on disk (the precompute store):
# uint16 steps of 1/MEL_STEPS_PER_UNIT above LOG_MEL_FLOOR, `round((log_mel - LOG_MEL_FLOOR) *
# MEL_STEPS_PER_UNIT)`. Zero steps are the floor, so zero padding scales back to the floor batches
# are padded with. A value is within half a step (0.00049, natural-log units; an amplitude within
# 0.05 %) of the computed one, below the float32 round-off of the computation itself in the
# quietest bins (about 1e-3 against a float64 one). A value more than 64 units above the floor (a
# mel energy e^52 times the floor's, which audio in [-1, 1] does not reach) is kept as the largest
# step.
MEL_STEPS_PER_UNIT = 1024

# Audio samples as the pipeline keeps them (what it hands over in a data-GPU / model-GPU split):
# int16 steps of 1/AUDIO_STEPS_PER_UNIT, `round(sample * AUDIO_STEPS_PER_UNIT)`. Those are a 16-bit
# PCM file's own steps (its samples decode as k / 32768), so a 16-bit clip at the run's sample rate
# is kept exactly; a resampled, 24-bit, float or compressed one within half a step (-96 dB of full
# scale, the rounding every 16-bit recording has). A sample at full scale or beyond is kept as the
# end step. Zero steps are silence, the padding value of audio batches.
AUDIO_STEPS_PER_UNIT = 32768

# Bytes of one kept value, in the cache or the store: a 16-bit step, of a log-mel or a sample.
KEPT_VALUE_BYTES = 2
KEPT_DTYPES = {"mel": np.dtype("<u2"), "audio": np.dtype("<i2")}


# What the decode and feature ops read: a whole data config, or a run's mel identity alone (the
# pipeline's shared feature stage is built from the latter, see data/pipeline.py `feature_stage`).
MelSettings = Union[DataConfig, MelFeatures]


def kept_bytes(frames: int, data: DataConfig, output: str) -> int:
    """Bytes `frames` frames of features take as the pipeline keeps them (cache mode in memory, the
    store on disk before its framing): n_mels 16-bit log-mel steps a frame, or hop_length 16-bit
    samples (the audio a data-GPU / model-GPU split hands over)."""
    per_frame = data.n_mels if output == "mel" else data.hop_length
    return frames * per_frame * KEPT_VALUE_BYTES


def _step_range(output: str) -> tuple[float, float]:
    info = np.iinfo(KEPT_DTYPES[output])
    return float(info.min), float(info.max)


def kept_steps(values, output: str):
    """float32 features -> the 16-bit steps the pipeline keeps (graph ops): uint16 log-mel steps
    (see MEL_STEPS_PER_UNIT) or int16 samples (AUDIO_STEPS_PER_UNIT). `stored_steps` is the same
    on numpy arrays, bit for bit."""
    import tensorflow as tf

    if output == "mel":
        steps = tf.round((values - LOG_MEL_FLOOR) * float(MEL_STEPS_PER_UNIT))
    else:
        steps = tf.round(values * float(AUDIO_STEPS_PER_UNIT))
    low, high = _step_range(output)
    return tf.cast(tf.clip_by_value(steps, low, high), tf.uint16 if output == "mel" else tf.int16)


def stored_steps(values: np.ndarray, output: str) -> np.ndarray:
    """`kept_steps` on a numpy array, little-endian (the store's byte order)."""
    if output == "mel":
        steps = np.rint((values - np.float32(LOG_MEL_FLOOR)) * np.float32(MEL_STEPS_PER_UNIT))
    else:
        steps = np.rint(values * np.float32(AUDIO_STEPS_PER_UNIT))
    low, high = _step_range(output)
    return np.clip(steps, low, high).astype(KEPT_DTYPES[output])


def values_from_steps(steps, output: str):
    """Kept 16-bit steps -> float32 features (graph ops); zero steps (padding) give the log-mel
    floor, or silence."""
    import tensorflow as tf

    values = tf.cast(steps, tf.float32)
    if output == "mel":
        return values * (1.0 / MEL_STEPS_PER_UNIT) + LOG_MEL_FLOOR
    return values * (1.0 / AUDIO_STEPS_PER_UNIT)


def as_values(batch: dict) -> dict:
    """`batch` with its features as float32 values (graph ops): a pipeline that keeps 16-bit steps
    (cache and precompute modes) hands them over as such, and they are scaled here, where the
    batch is used (inside the training step, on the model's device, or the split's data device):
    half the bytes to hand over, and the scale fused into the step's first use of the features.
    In the pipeline, a map of its own, it cost the cached first epoch about 2 % of its rate (four
    side-by-side runs against runtime mode, docs/data_at_scale.md). float32 features pass as
    they are."""
    import tensorflow as tf

    out = dict(batch)
    for output in ("mel", "audio"):
        if output in batch and batch[output].dtype in (tf.uint16, tf.int16):
            out[output] = values_from_steps(batch[output], output)
    return out


def _hz_to_mel(hz: np.ndarray | float, htk: bool) -> np.ndarray:
    hz = np.asanyarray(hz, dtype=np.float64)
    if htk:
        return 2595.0 * np.log10(1.0 + hz / 700.0)
    # Slaney (Auditory Toolbox): linear below 1 kHz, logarithmic above.
    f_sp = 200.0 / 3
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    mels = hz / f_sp
    return np.where(hz >= min_log_hz, min_log_mel + np.log(np.maximum(hz, 1e-10) / min_log_hz) / logstep, mels)


def _mel_to_hz(mels: np.ndarray, htk: bool) -> np.ndarray:
    mels = np.asanyarray(mels, dtype=np.float64)
    if htk:
        return 700.0 * (10.0 ** (mels / 2595.0) - 1.0)
    f_sp = 200.0 / 3
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    return np.where(mels >= min_log_mel, min_log_hz * np.exp(logstep * (mels - min_log_mel)), f_sp * mels)


def mel_filterbank(data: MelSettings) -> np.ndarray:
    """Filterbank [n_fft // 2 + 1, n_mels], float32, as `librosa.filters.mel(...).T` builds it."""
    htk = data.mel_filterbank == "htk"
    fmax = data.fmax if data.fmax is not None else data.sample_rate / 2.0
    fft_freqs = np.fft.rfftfreq(data.n_fft, d=1.0 / data.sample_rate)
    mel_points = np.linspace(_hz_to_mel(data.fmin, htk), _hz_to_mel(fmax, htk), data.n_mels + 2)
    mel_freqs = _mel_to_hz(mel_points, htk)
    spacing = np.diff(mel_freqs)
    ramps = mel_freqs[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / spacing[:-1, None]
    upper = ramps[2:] / spacing[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    if not htk:
        weights *= (2.0 / (mel_freqs[2 : data.n_mels + 2] - mel_freqs[: data.n_mels]))[:, None]
    return weights.T.astype(np.float32)


def analysis_window(data: MelSettings) -> np.ndarray:
    """Periodic Hann of win_length, centred in n_fft zeros (librosa's `get_window` + `pad_center`)."""
    n = np.arange(data.win_length)
    window = 0.5 - 0.5 * np.cos(2.0 * np.pi * n / data.win_length)
    left = (data.n_fft - data.win_length) // 2
    return np.pad(window, (left, data.n_fft - data.win_length - left)).astype(np.float32)


def mel_frames(num_samples, hop_length: int):
    """Frames of a clip of `num_samples` (int or tensor) with centred framing."""
    return 1 + num_samples // hop_length


_GRADIENT_FLOOR = 1e-12


def log_mel(audio, data: MelSettings, *, differentiable: bool = False):
    """Log-mel of `audio` [..., samples] float32 -> [..., 1 + samples // hop, n_mels] float32.

    Plain TensorFlow ops only: usable in a tf.data map, in `tf.function(jit_compile=True)` and on
    any device. With a static audio shape (the XLA case) the padding amounts are Python numbers.
    `differentiable`: for a loss on generated audio, each magnitude is sqrt(|z|^2 + 1e-12), whose
    gradient is finite where the audio is exactly silent (sqrt's is not at 0); the features of the
    pipeline are computed without it.
    """
    import tensorflow as tf

    audio = tf.convert_to_tensor(audio, tf.float32)
    rank = audio.shape.rank
    pad = data.n_fft // 2
    static = audio.shape[-1]
    num_samples = static if static is not None else tf.shape(audio)[-1]
    frames = mel_frames(num_samples, data.hop_length)
    # Reflect padding needs more samples than it mirrors; a clip shorter than n_fft / 2 (only
    # possible with min_audio_duration near 0) is first extended with zeros.
    keep = [[0, 0]] * (rank - 1)
    if static is None:
        audio = tf.pad(audio, keep + [[0, tf.maximum(pad + 1 - num_samples, 0)]])
    elif static <= pad:
        audio = tf.pad(audio, keep + [[0, pad + 1 - static]])
    audio = tf.pad(audio, keep + [[pad, pad]], mode="REFLECT")
    window = tf.constant(analysis_window(data))
    spectrum = tf.signal.stft(
        audio,
        frame_length=data.n_fft,
        frame_step=data.hop_length,
        fft_length=data.n_fft,
        window_fn=lambda length, dtype: window,
        pad_end=False,
    )
    # Only the FFT bins some mel filter weighs: with fmax 8 kHz at 22.05 kHz that is 371 of 513,
    # so the magnitude and the filterbank product skip the rest. |z| as sqrt(re^2 + im^2): the
    # complex abs kernel is a hypot per bin, slower for the same float32 result.
    weights = mel_filterbank(data)
    low, high = _weighted_bins(weights)
    band = spectrum[..., :frames, low:high]
    real, imag = tf.math.real(band), tf.math.imag(band)
    magnitude = tf.sqrt(real * real + imag * imag + (_GRADIENT_FLOOR if differentiable else 0.0))
    mel = tf.tensordot(magnitude, tf.constant(weights[low:high]), axes=1)
    return tf.math.log(tf.maximum(mel, MEL_FLOOR))


def _weighted_bins(weights: np.ndarray) -> tuple[int, int]:
    """[low, high): the FFT bins where some filter of `weights` [bins, n_mels] is non-zero."""
    used = np.flatnonzero(weights.any(axis=1))
    return (int(used[0]), int(used[-1]) + 1) if used.size else (0, weights.shape[0])


def log_mel_batch(audio, audio_lengths, data: DataConfig):
    """Log-mel of a padded audio batch [B, S] -> (mel [B, 1 + S // hop, n_mels], mel_lengths [B]).

    For a trainer that receives `output="audio"` batches and computes features on its own device.
    Frames past each clip's length are set to the padding value, as in mel batches. The last
    ~n_fft / (2 * hop) real frames of a clip see the batch's zero padding where a per-clip
    computation reflects the clip's own end, so they differ slightly from `log_mel` of the clip.
    """
    import tensorflow as tf

    mel = log_mel(audio, data)
    lengths = tf.cast(mel_frames(tf.cast(audio_lengths, tf.int32), data.hop_length), tf.int32)
    valid = tf.sequence_mask(lengths, tf.shape(mel)[1])
    return tf.where(valid[:, :, None], mel, tf.cast(LOG_MEL_FLOOR, mel.dtype)), lengths


def with_reference(batch: dict, data: DataConfig, seed=None, *, prefix: int = 0) -> dict:
    """`batch` as the model reads it: its features as float32 values (`as_values`), plus ref_mel
    [B, R, n_mels] / ref_lengths [B], R = data.reference_frames: the speaker reference the model
    is conditioned on, a crop of a clip's mel.

    `prefix`: conditioning ids before each text (`Tokenizer.prefix_length`): they are taken off
    `text_ids` into `language_ids` and `speaker_ids` [B] int32.

    With `seed` (a stateless seed, shape [2]) each crop starts at random inside its clip; without
    it, at the first frame. With a seed and speaker ids, `data.reference_from_other_clips` of the
    clips take their crop from another clip of the same speaker in the batch, drawn at random
    (their own when the batch holds no other): the model must then find the voice in the
    reference, not copy the words it is about to say. A clip shorter than R starts at 0, and the
    frames past its end read as the floor value, like mel padding. Runs inside the compiled
    training step, on the model's device: as a per-batch map in tf.data it cost a cached epoch
    about 40 % of its speed.
    """
    import tensorflow as tf

    batch = as_values(batch)
    out = dict(batch)
    if prefix:
        text_ids = batch["text_ids"]
        out["language_ids"] = tf.cast(text_ids[:, 0], tf.int32)
        out["speaker_ids"] = tf.cast(text_ids[:, 1], tf.int32)
        out["text_ids"] = text_ids[:, prefix:]
        out["text_lengths"] = batch["text_lengths"] - tf.cast(prefix, batch["text_lengths"].dtype)
    crop = data.reference_frames
    mel, lengths = batch["mel"], tf.cast(batch["mel_lengths"], tf.int32)
    # The batch's padding holds the floor value; a batch padded shorter than R gets more of it.
    padded = tf.pad(
        mel,
        [[0, 0], [0, tf.maximum(crop - tf.shape(mel)[1], 0)], [0, 0]],
        constant_values=tf.cast(LOG_MEL_FLOOR, mel.dtype),
    )
    if seed is None:
        ref = padded[:, :crop]
        ref_lengths = tf.minimum(lengths, crop)
    else:
        source = tf.range(tf.shape(lengths)[0])
        if prefix and data.reference_from_other_clips > 0:
            source = _other_clip_of_speaker(out["speaker_ids"], data.reference_from_other_clips, seed)
            padded = tf.gather(padded, source)
            lengths = tf.gather(lengths, source)
        span = tf.cast(tf.maximum(lengths - crop + 1, 1), tf.float32)
        uniform = tf.random.stateless_uniform(tf.shape(lengths), seed=seed)
        starts = tf.cast(uniform * span, tf.int32)  # uniform < 1: the start stays below span
        ref = tf.gather(padded, starts[:, None] + tf.range(crop)[None, :], batch_dims=1)
        ref_lengths = tf.minimum(lengths, crop)
    out["ref_mel"] = tf.ensure_shape(ref, [None, crop, data.n_mels])
    out["ref_lengths"] = ref_lengths
    return out


def _other_clip_of_speaker(speaker_ids, share: float, seed):
    """[B] int32: for each clip, with probability `share`, a random other clip of the batch with the
    same (known, >= 0) speaker id, else the clip itself."""
    import tensorflow as tf

    size = tf.shape(speaker_ids)[0]
    same = tf.equal(speaker_ids[:, None], speaker_ids[None, :]) & (speaker_ids >= 0)[:, None]
    same &= ~tf.eye(size, dtype=tf.bool)
    scores = tf.random.stateless_uniform([size, size], seed=seed + tf.constant([0, 1], seed.dtype))
    other = tf.argmax(tf.where(same, scores, -1.0), axis=1, output_type=tf.int32)
    chosen = tf.random.stateless_uniform([size], seed=seed + tf.constant([0, 2], seed.dtype)) < share
    return tf.where(chosen & tf.reduce_any(same, axis=1), other, tf.range(size))
