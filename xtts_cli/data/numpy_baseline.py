"""The old input path, kept as the measured baseline: decode and mel in Python via tf.numpy_function.

`data.use_tf_native_loading: false` selects it. It computes the same features as the TF-native
path (same filterbank, window, framing, trim and loudness rules) so a benchmark compares like with
like; what it costs is the Python call per clip, the GIL and the numpy hand-off. WAV is decoded
with numpy from the header facts the scan read; FLAC / Ogg / MP3 need the `soundfile` package.
Resampling is linear interpolation (librosa is a test-only dependency here): a baseline for speed,
not a reference for quality.
"""

from __future__ import annotations

import numpy as np

from xtts_cli.config.schema import DataConfig
from xtts_cli.data.audio import PEAK_LIMIT, TARGET_RMS, TRIM_TOP_DB
from xtts_cli.data.audio_codecs import CODECS, note_decode_failure
from xtts_cli.data.features import MEL_FLOOR, analysis_window, mel_filterbank
from xtts_cli.errors import XttsError


def require_decoders(codecs: set[str]) -> None:
    """Fail before training if the baseline cannot decode a codec the dataset uses."""
    needs_soundfile = sorted(c for c in codecs if not c.startswith("wav_"))
    if not needs_soundfile:
        return
    try:
        import soundfile  # noqa: F401
    except ImportError:
        raise XttsError(
            f"data.use_tf_native_loading: false cannot decode {', '.join(needs_soundfile)} without the soundfile package",
            hint="pip install soundfile, or set data.use_tf_native_loading: true (the default)",
        ) from None


_WAV_SAMPLE_BYTES = {"wav_pcm8": 1, "wav_pcm16": 2, "wav_pcm24": 3, "wav_pcm32": 4, "wav_float32": 4}


def decode_file(path: str, codec: str, channels: int, data_offset: int, num_samples: int) -> np.ndarray:
    """float32 [samples, channels] in [-1, 1]."""
    if codec.startswith("wav_"):
        with open(path, "rb") as handle:
            handle.seek(data_offset)
            # Exactly the data chunk: chunks after it (LIST, id3) are not audio.
            raw = handle.read(num_samples * channels * _WAV_SAMPLE_BYTES[codec])
        if codec == "wav_pcm16":
            samples = np.frombuffer(raw[: len(raw) // 2 * 2], "<i2").astype(np.float32) / 32768.0
        elif codec == "wav_pcm8":
            samples = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128.0) / 128.0
        elif codec == "wav_pcm24":
            triples = np.frombuffer(raw[: len(raw) // 3 * 3], np.uint8).reshape(-1, 3).astype(np.int32)
            value = triples[:, 0] | (triples[:, 1] << 8) | (triples[:, 2] << 16)
            samples = ((value << 8) >> 8).astype(np.float32) / 8388608.0  # sign-extend 24 -> 32 bits
        elif codec == "wav_pcm32":
            samples = np.frombuffer(raw[: len(raw) // 4 * 4], "<i4").astype(np.float32) / 2.0**31
        else:
            samples = np.frombuffer(raw[: len(raw) // 4 * 4], "<f4").astype(np.float32)
        return samples[: len(samples) // channels * channels].reshape(-1, channels)
    import soundfile

    audio, _ = soundfile.read(path, dtype="float32", always_2d=True)
    return audio


def resample_linear(audio: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    if rate_in == rate_out:
        return audio
    count = len(audio) * rate_out // rate_in  # the same length tfio.audio.resample returns
    positions = np.arange(count) * (rate_in / rate_out)
    return np.interp(positions, np.arange(len(audio)), audio).astype(np.float32)


def trim_silence(audio: np.ndarray, data: DataConfig) -> np.ndarray:
    frame, hop = data.n_fft, data.hop_length
    padded = np.pad(audio, frame // 2)
    count = 1 + (len(padded) - frame) // hop
    frames = np.lib.stride_tricks.as_strided(padded, (count, frame), (padded.strides[0] * hop, padded.strides[0]))
    power = np.mean(np.square(frames, dtype=np.float64), axis=1)
    db = 10 * np.log10(np.maximum(power, 1e-10))
    loud = np.flatnonzero(db > 10 * np.log10(max(power.max(), 1e-10)) - TRIM_TOP_DB)
    if loud.size == 0:
        return audio
    return audio[loud[0] * hop : min(len(audio), (loud[-1] + 1) * hop)]


def normalize_loudness(audio: np.ndarray) -> np.ndarray:
    rms = float(np.sqrt(np.mean(np.square(audio, dtype=np.float64)))) if audio.size else 0.0
    if rms <= 1e-6:
        return audio
    peak = float(np.abs(audio).max())
    return (audio * min(TARGET_RMS / rms, PEAK_LIMIT / peak)).astype(np.float32)


def log_mel(audio: np.ndarray, data: DataConfig, filterbank: np.ndarray, window: np.ndarray) -> np.ndarray:
    pad = data.n_fft // 2
    if len(audio) <= pad:
        audio = np.pad(audio, (0, pad + 1 - len(audio)))
    padded = np.pad(audio, pad, mode="reflect")
    count = 1 + (len(padded) - data.n_fft) // data.hop_length
    frames = np.lib.stride_tricks.as_strided(
        padded, (count, data.n_fft), (padded.strides[0] * data.hop_length, padded.strides[0])
    )
    magnitude = np.abs(np.fft.rfft(frames * window, axis=1)).astype(np.float32)
    return np.log(np.maximum(magnitude @ filterbank, MEL_FLOOR)).astype(np.float32)


def make_loader(data: DataConfig, output: str):
    """A Python function (path, codec_index, rate, channels, offset, num_samples) -> float32 features,
    for tf.numpy_function."""
    filterbank = mel_filterbank(data)
    window = analysis_window(data)

    def load(path, codec_index, rate, channels, offset, num_samples):
        codec = CODECS[int(codec_index)]
        try:
            audio = decode_file(path.decode("utf-8"), codec, int(channels), int(offset), int(num_samples)).mean(axis=1)
        except Exception as error:  # corrupt frames the scan's header read could not see: skipped, and named
            note_decode_failure(path.decode("utf-8", "replace"), str(error) or type(error).__name__)
            raise
        audio = resample_linear(audio.astype(np.float32), int(rate), data.sample_rate)
        if data.trim_silence:
            audio = trim_silence(audio, data)
        if data.normalize_loudness:
            audio = normalize_loudness(audio)
        if output == "audio":
            return audio.astype(np.float32)
        num_frames = 1 + len(audio) // data.hop_length
        return log_mel(audio.astype(np.float32), data, filterbank, window)[:num_frames]

    return load
