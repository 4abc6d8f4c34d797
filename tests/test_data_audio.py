"""In-graph audio decoding: every fixture format through a real tf.data map, checked against
soundfile / librosa (test-only dependencies) and sox's own account of each file."""

from __future__ import annotations

import json
from pathlib import Path

import librosa
import numpy as np
import pytest
import soundfile
import tensorflow as tf

from xtts_cli.config.schema import DataConfig, XttsConfig
from xtts_cli.data.audio import (
    TARGET_RMS,
    decode_audio,
    normalize_loudness,
    polyphase_resampler,
    resample,
    trim_bounds,
)
from xtts_cli.data.pipeline import audio_formats, decoded_audio_dataset, feature_stage
from xtts_cli.data.scan import scan_dataset

DATA = Path(__file__).parent / "data"
FACTS = json.loads((DATA / "fixtures.json").read_text())
CONFIG = XttsConfig(data=dict(dataset_path=str(DATA / "dataset"), max_bad_file_fraction=0.6))


@pytest.fixture(scope="module")
def decoded():
    """{item id: (item, decoded audio)} for every good fixture, decoded by one parallel tf.data map."""
    items = scan_dataset(CONFIG.data).items
    clips = [element["audio"].numpy() for element in decoded_audio_dataset(CONFIG, items)]
    return {item.id: (item, clip) for item, clip in zip(items, clips)}


def reference(path: str) -> tuple[np.ndarray, int]:
    audio, rate = soundfile.read(path, dtype="float32", always_2d=True)
    return audio.mean(axis=1), rate


def best_correlation(a: np.ndarray, b: np.ndarray, max_lag: int) -> tuple[float, int]:
    def corr(lag):
        x, y = (a[lag:], b) if lag >= 0 else (a, b[-lag:])
        n = min(len(x), len(y))
        return float(np.dot(x[:n], y[:n]) / (np.linalg.norm(x[:n]) * np.linalg.norm(y[:n])))

    return max((corr(lag), lag) for lag in range(-max_lag, max_lag + 1))


def test_every_format_decodes_to_the_right_length_at_the_training_rate(decoded):
    assert {item.audio.codec for item, _ in decoded.values()} == {
        "wav_pcm16",
        "wav_pcm8",
        "wav_pcm24",
        "wav_pcm32",
        "wav_float32",
        "flac16",
        "flac24",
        "vorbis",
        "mp3",
    }
    rate = CONFIG.data.sample_rate
    for key, (item, audio) in decoded.items():
        assert audio.dtype == np.float32 and audio.ndim == 1, key
        # Exactly the length the scan planned with (so bucketing is exact) ...
        assert len(audio) == item.audio.num_samples * rate // item.audio.sample_rate, key
        facts = FACTS.get(item.relative_path)
        if facts and item.audio.format != "mp3":
            # ... which is sox's own sample count, converted to the training rate.
            assert len(audio) == facts["samples"] * rate // facts["sample_rate"], key
        assert np.isfinite(audio).all() and 0.01 < np.abs(audio).max() <= 1.0, key


@pytest.mark.parametrize(
    "key", ["pcm16", "pcm24", "pcm32", "pcm8", "float32", "stereo", "flac16", "flac24", "extensible16"]
)
def test_lossless_formats_decode_to_the_same_samples_as_libsndfile(decoded, key):
    item, audio = decoded[key]
    expected, rate = reference(item.audio_path)
    assert rate == 22050
    # Same integers, same scaling (8-bit unsigned offset, 24-bit sign, channel mean): float32 exact.
    np.testing.assert_allclose(audio, expected, atol=1e-6, rtol=0)


@pytest.mark.parametrize("key", ["vorbis", "mp3cbr", "mp3vbr"])
def test_lossy_formats_match_libsndfile(decoded, key):
    item, audio = decoded[key]
    expected, _ = reference(item.audio_path)
    correlation, lag = best_correlation(audio, expected, 1200)
    # Different decoders (minimp3 vs mpg123, two Vorbis builds) agree to float rounding, no offset.
    assert lag == 0 and correlation > 0.9999, (correlation, lag)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["rate16k", "rate44k"])
def test_other_rates_are_resampled_from_the_rate_in_the_header(decoded, key):
    item, audio = decoded[key]
    expected, rate = reference(item.audio_path)
    assert rate == item.audio.sample_rate != 22050
    target = librosa.resample(expected, orig_sr=rate, target_sr=22050, res_type="soxr_hq")
    correlation, lag = best_correlation(audio, target, 100)
    # The polyphase filter is centred: soxr's output, sample for sample, with no delay (tfio's
    # speex kernel lagged 32-44 samples and correlated 0.998). Measured 0.99998 (16 kHz), 0.9999999 (44.1 kHz).
    assert lag == 0 and correlation > 0.9999, (correlation, lag)
    # The mixed-rate graph (a branch per rate the scan found) gives what the one-rate graph gives.
    alone = tf.function(lambda wave: resample(wave, rate, 22050))(tf.constant(expected))
    np.testing.assert_array_equal(audio, alone.numpy())


@pytest.mark.parametrize(
    "rate_in, rate_out", [(24000, 22050), (48000, 22050), (44100, 22050), (16000, 22050), (22050, 16000)]
)
def test_resampling_keeps_what_the_new_rate_holds_and_removes_what_it_cannot(rate_in, rate_out):
    seconds = 2.0
    t_in = np.arange(int(seconds * rate_in)) / rate_in
    t_out = np.arange(len(t_in) * rate_out // rate_in) / rate_out
    nyquist = min(rate_in, rate_out) / 2
    convert = tf.function(lambda wave: resample(wave, rate_in, rate_out))

    def tone(freq, t, phase=0.3):
        return np.sin(2 * np.pi * freq * t + phase)

    # Below 90 % of the lower Nyquist frequency: the tone at the new rate, in phase (no delay).
    kept = [0.0, 440.0, 0.85 * nyquist]
    wave = 0.25 + sum(0.2 * tone(f, t_in) for f in kept[1:])
    out = convert(tf.constant(wave, tf.float32)).numpy()
    assert len(out) == len(t_out)
    inner = slice(400, len(out) - 400)  # the filter's reach from either end, where the clip's zeros enter
    expected = 0.25 + sum(0.2 * tone(f, t_out) for f in kept[1:])
    assert np.abs(out[inner] - expected[inner]).max() < 1e-3
    if rate_in > rate_out:
        # Above the new Nyquist frequency: nothing folds back into the band above -75 dB.
        for freq in (nyquist * 1.001, (nyquist + rate_in / 2) / 2, rate_in / 2 * 0.99):  # up to the old one
            folded = convert(tf.constant(tone(freq, t_in), tf.float32)).numpy()
            assert 20 * np.log10(np.sqrt(2 * np.mean(folded[inner] ** 2)) + 1e-12) < -75, freq


def test_a_rate_pair_without_a_small_filter_goes_to_the_kernel_at_the_same_length():
    assert polyphase_resampler(22051, 22050) is None
    assert polyphase_resampler(24000, 22050).weights.shape == (160 + 2 * 55 + 1, 147)
    wave = tf.constant(np.sin(np.arange(22051) / 10.0), tf.float32)
    for known in ((), (22051,)):  # a rate the graph does not know, or one it does
        out = tf.function(lambda w, r, known=known: resample(w, r, 22050, known))(wave, tf.constant(22051, tf.int64))
        assert out.shape == (22050,)


def test_decoding_ops_are_the_documented_ones():
    ops = stage_ops(scan_dataset(CONFIG.data).items)
    assert {
        "DecodeRaw",
        "IO>AudioDecodeWAV",
        "IO>AudioDecodeFlac",
        "IO>AudioDecodeVorbis",
        "IO>AudioDecodeMP3",
        "IO>AudioResample",  # a rate the graph does not know
        "MatMul",  # the polyphase filter of each rate it knows
        "Mean",
    } <= ops
    assert not ops & {"PyFunc", "EagerPyFunc", "NumpyFunction"}


def stage_ops(items) -> set[str]:
    stage = feature_stage(CONFIG.data, "audio", audio_formats(items))
    spec = {
        "path": tf.TensorSpec([], tf.string),
        "codec": tf.TensorSpec([], tf.int32),
        "rate": tf.TensorSpec([], tf.int64),
        "channels": tf.TensorSpec([], tf.int32),
        "offset": tf.TensorSpec([], tf.int64),
        "num_samples": tf.TensorSpec([], tf.int64),
    }
    graph = tf.function(stage).get_concrete_function(spec).graph.as_graph_def()
    return {node.op for node in graph.node} | {n.op for f in graph.library.function for n in f.node_def}


def test_clips_sharing_mono_and_the_training_rate_skip_downmix_and_resample(decoded):
    items = [
        item
        for item in scan_dataset(CONFIG.data).items
        if item.audio.channels == 1 and item.audio.sample_rate == CONFIG.data.sample_rate
    ]
    assert len({item.audio.codec for item in items}) >= 3
    formats = audio_formats(items)
    assert (formats.channels, formats.rate, formats.rates) == (1, CONFIG.data.sample_rate, [CONFIG.data.sample_rate])
    ops = stage_ops(items)
    assert "DecodeRaw" in ops and not ops & {"IO>AudioResample", "MatMul", "Mean", "If", "StatelessIf", "Case"}
    # The same samples as the general graph (downmix of one channel, resample check) gives.
    for item, element in zip(items, decoded_audio_dataset(CONFIG, items)):
        np.testing.assert_array_equal(element["audio"].numpy(), decoded[item.id][1])


def test_silence_trim_matches_librosa(decoded):
    item, audio = decoded["pcm16"]
    data = DataConfig()
    padded = np.concatenate([np.zeros(5000, np.float32), audio, np.zeros(7000, np.float32)])
    noise = np.random.default_rng(0).normal(0, 1e-4, padded.shape).astype(np.float32)
    padded = padded + noise
    start, end = (int(v) for v in trim_bounds(tf.constant(padded), data))
    _, (ref_start, ref_end) = librosa.effects.trim(
        padded, top_db=45, frame_length=data.n_fft, hop_length=data.hop_length
    )
    assert (start, end) == (ref_start, ref_end)
    assert start >= 4000 and end <= len(padded) - 6000


def test_trim_and_loudness_inside_decode():
    data = DataConfig(trim_silence=True, normalize_loudness=True)
    path = str(DATA / "dataset" / "wavs" / "pcm16.wav")
    item = next(i for i in scan_dataset(CONFIG.data).items if i.id == "pcm16")
    audio = decode_audio(
        tf.io.read_file(path), 0, 22050, 1, item.audio.data_offset, item.audio.num_samples, data, ["wav_pcm16"]
    ).numpy()
    assert len(audio) < item.audio.num_samples  # the 50 ms pads the fixture script left are gone
    rms = float(np.sqrt(np.mean(audio.astype(np.float64) ** 2)))
    peak = float(np.abs(audio).max())
    assert rms == pytest.approx(TARGET_RMS, rel=1e-3) or peak == pytest.approx(0.999, rel=1e-4)
    silent = normalize_loudness(tf.zeros([100])).numpy()
    assert not silent.any()
