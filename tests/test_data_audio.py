"""Audio decoding in the pipeline: every fixture format through a real tf.data map, checked against
libsndfile's reading, soxr, librosa's trim (stored) and sox's own account of each file, and, where the [tfio] extra's
kernels run, the two compressed-audio decoders against each other."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile
import soxr
import tensorflow as tf
from librosa_references import references, trim_input

from xtts_cli.config.schema import DataConfig, XttsConfig
from xtts_cli.data.audio import (
    TARGET_RMS,
    decode_audio,
    normalize_loudness,
    polyphase_resampler,
    resample,
    trim_bounds,
)
from xtts_cli.data.audio_codecs import COMPRESSED_CODECS, DECODERS, compressed_decoder
from xtts_cli.data.pipeline import audio_formats, decoded_audio_dataset, feature_stage, source_columns
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
    # Through the pipeline (read, decode, crop to the scan's length) as libsndfile reads the file;
    # with the [tfio] extra a different decoder (minimp3, another Vorbis build): agreeing to float
    # rounding, no offset.
    assert lag == 0 and correlation > 0.9999, (correlation, lag)


@pytest.mark.parametrize("key", ["flac16", "vorbis", "mp3cbr", "stereo", "float32"])
def test_a_clip_decodes_the_same_eagerly_as_in_the_pipeline(decoded, key):
    # What `--speaker-wav` and `xtts vocode` do: decode_audio on an eager tensor, outside tf.data
    # (an eager numpy_function hands libsndfile a 0-d array, not bytes).
    item, audio = decoded[key]
    header = item.audio
    eager = decode_audio(
        tf.io.read_file(item.audio_path),
        0,
        header.sample_rate,
        header.channels,
        header.data_offset,
        header.num_samples,
        CONFIG.data,
        codecs=(header.codec,),
    )
    np.testing.assert_array_equal(eager.numpy(), audio)


@pytest.mark.skipif(compressed_decoder() != "tensorflow-io", reason="needs the [tfio] extra (TensorFlow 2.16)")
def test_libsndfile_and_tensorflow_io_decode_the_same_samples():
    # What lets a user move off the [tfio] extra: the features a run was trained on do not change.
    items = [i for i in scan_dataset(CONFIG.data).items if i.audio.codec in COMPRESSED_CODECS]
    assert {i.audio.codec for i in items} == set(COMPRESSED_CODECS)
    formats = audio_formats(items)
    routes = {}
    for decoder in DECODERS:
        stage = feature_stage(CONFIG.data, "audio", formats, decoder)
        source = tf.data.Dataset.from_tensor_slices(source_columns(items, formats.codecs))
        routes[decoder] = [clip.numpy() for clip in source.map(stage)]
    for item, ours, theirs in zip(items, routes["soundfile"], routes["tensorflow-io"]):
        assert ours.shape == theirs.shape, item.id
        # FLAC bit for bit; Vorbis and MP3 within 4e-7 (measured), two decoders' float rounding.
        np.testing.assert_allclose(ours, theirs, atol=0 if item.audio.format == "flac" else 1e-6, err_msg=item.id)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["rate16k", "rate44k"])
def test_other_rates_are_resampled_from_the_rate_in_the_header(decoded, key):
    item, audio = decoded[key]
    expected, rate = reference(item.audio_path)
    assert rate == item.audio.sample_rate != 22050
    target = soxr.resample(expected, rate, 22050, quality="HQ")  # librosa's res_type "soxr_hq"
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


@pytest.mark.slow
def test_a_rate_pair_without_a_small_filter_gets_the_same_filter_per_sample():
    assert polyphase_resampler(22051, 22050) is None
    assert polyphase_resampler(24000, 22050).weights.shape == (160 + 2 * 55 + 1, 147)
    wave = tf.constant(np.sin(np.arange(22051) / 10.0), tf.float32)
    for known in ((), (22051,)):  # a rate the graph does not know, or one it does
        out = tf.function(lambda w, r, known=known: resample(w, r, 22050, known))(wave, tf.constant(22051, tf.int64))
        assert out.shape == (22050,)
        inner = slice(200, 22050 - 200)  # away from the zeros beyond the ends
        np.testing.assert_allclose(
            out.numpy()[inner], np.sin(np.arange(22050) * (22051 / 22050) / 10.0)[inner], atol=1e-3
        )
    # Where both apply, the per-sample weights are the matrix's: the same filter, to float rounding.
    noise = np.random.default_rng(0).normal(0, 0.1, 3 * 24000).astype(np.float32)
    for rate_in, rate_out in [(24000, 22050), (16000, 22050), (22050, 16000)]:
        wave = tf.constant(noise[: 3 * rate_in])
        matrix = tf.function(lambda w, a=rate_in, b=rate_out: resample(w, a, b))(wave).numpy()
        direct = tf.function(lambda w, r, b=rate_out: resample(w, r, b))(wave, tf.constant(rate_in, tf.int64)).numpy()
        assert matrix.shape == direct.shape
        np.testing.assert_allclose(direct, matrix, atol=1e-6)


@pytest.mark.parametrize("decoder", DECODERS)
def test_decoding_ops_are_the_documented_ones(decoder):
    if decoder == "tensorflow-io" and compressed_decoder() != "tensorflow-io":
        pytest.skip("tensorflow-io's kernels do not run here (the [tfio] extra is for TensorFlow 2.16)")
    ops = stage_ops(scan_dataset(CONFIG.data).items, decoder)
    # PCM and float WAV by core ops; a rate the graph knows by its polyphase matrix, one it does not
    # by the same filter computed per sample (BesselI0: its Kaiser window); never tensorflow-io's
    # resampler.
    assert {"DecodeRaw", "MatMul", "BesselI0", "Mean"} <= ops
    assert "IO>AudioResample" not in ops and "IO>AudioDecodeWAV" not in ops
    tfio_ops = {"IO>AudioDecodeFlac", "IO>AudioDecodeVorbis", "IO>AudioDecodeMP3"}
    python_ops = {"PyFunc", "PyFuncStateless", "EagerPyFunc"}
    if decoder == "soundfile":
        assert ops & python_ops == {"PyFuncStateless"} and not ops & tfio_ops
    else:
        assert tfio_ops <= ops and not ops & python_ops


def test_a_wav_only_corpus_decodes_by_graph_ops_alone():
    items = [i for i in scan_dataset(CONFIG.data).items if i.audio.format == "wav"]
    assert {i.audio.codec for i in items} >= {"wav_pcm16", "wav_float32", "wav_pcm24"}
    ops = stage_ops(items)
    assert "DecodeRaw" in ops and not ops & {"PyFunc", "PyFuncStateless", "EagerPyFunc"}
    assert not any(op.startswith("IO>") for op in ops)


def stage_ops(items, decoder=None) -> set[str]:
    stage = feature_stage(CONFIG.data, "audio", audio_formats(items), decoder)
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
    # The clip librosa trimmed (scripts/make_librosa_references.py reads it with libsndfile).
    np.testing.assert_array_equal(audio, reference(item.audio_path)[0])
    padded = trim_input(audio)
    start, end = (int(v) for v in trim_bounds(tf.constant(padded), data))
    assert (start, end) == tuple(references()["trim_bounds"])
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
