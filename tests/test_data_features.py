"""Log-mel features against librosa's (stored by scripts/make_librosa_references.py), in tf.data and under XLA."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile
import tensorflow as tf
from librosa_references import FILTERBANK_SETTINGS, SHORT_SETTINGS, references

from xtts_cli.config.schema import DataConfig
from xtts_cli.data.features import LOG_MEL_FLOOR, log_mel, log_mel_batch, mel_filterbank, mel_frames

CLIP = Path(__file__).parent / "data" / "dataset" / "wavs" / "persian.wav"
LIBROSA = references()

# Tolerance in the natural-log domain. The only difference from librosa is float32 arithmetic in
# TF's FFT and matmul (librosa computes the STFT in float32 too, but sums the filterbank product
# in a different order): relative error of a few float32 ulps times sqrt(n_fft) accumulation
# ~1e-5 of a frame's peak, i.e. at most ~3e-4 in log at bins 1e-5 below the peak (measured: 2.7e-4
# slaney, 1.5e-4 htk on this clip). 1e-3 is a 0.1 % magnitude error, far below anything a model sees.
LOG_TOLERANCE = 1e-3


@pytest.fixture(scope="module")
def clip() -> np.ndarray:
    audio, rate = soundfile.read(CLIP, dtype="float32")
    assert rate == 22050
    return audio


@pytest.mark.parametrize("kind", ["slaney", "htk"])
def test_filterbank_matches_librosa(kind):
    ours = mel_filterbank(DataConfig(mel_filterbank=kind, **FILTERBANK_SETTINGS))
    expected = LIBROSA[f"filterbank_{kind}"]
    assert ours.shape == (257, 64) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("kind", ["slaney", "htk"])
def test_log_mel_matches_librosa_inside_tf_data(clip, kind):
    data = DataConfig(mel_filterbank=kind)
    ours = next(iter(tf.data.Dataset.from_tensors(clip).map(lambda a: log_mel(a, data)))).numpy()
    expected = LIBROSA[f"log_mel_{kind}"]
    assert ours.shape == expected.shape == (mel_frames(len(clip), data.hop_length), data.n_mels)
    assert ours.shape[0] == data.mel_frames_for(len(clip) / data.sample_rate)
    np.testing.assert_allclose(ours, expected, atol=LOG_TOLERANCE, rtol=0)


def test_log_mel_with_short_window_and_odd_length(clip):
    ours = log_mel(clip[:12345], DataConfig(**SHORT_SETTINGS)).numpy()
    np.testing.assert_allclose(ours, LIBROSA["log_mel_short"], atol=LOG_TOLERANCE, rtol=0)


def test_log_mel_compiles_with_xla_and_batches(clip):
    data = DataConfig()
    compiled = tf.function(lambda audio: log_mel(audio, data), jit_compile=True)
    batch = np.stack([clip[:40000], clip[10000:50000]])
    ours = compiled(tf.constant(batch)).numpy()
    assert ours.shape == (2, 1 + 40000 // 256, 80)
    for row, audio in zip(ours, batch):
        np.testing.assert_allclose(row, log_mel(audio, data).numpy(), atol=1e-5, rtol=0)
    # The XLA program really was built (not a silent fallback to the TF graph).
    assert compiled.experimental_get_compiler_ir(tf.constant(batch))(stage="hlo")


def test_very_short_clip_still_gives_one_frame_per_hop():
    data = DataConfig()
    assert log_mel(np.zeros(100, np.float32), data).shape == (1, 80)
    out = next(iter(tf.data.Dataset.from_tensors(np.ones(300, np.float32)).map(lambda a: log_mel(a, data))))
    assert out.shape == (2, 80)


def test_log_mel_batch_masks_padding(clip):
    data = DataConfig()
    audio = np.zeros((2, 20000), np.float32)
    audio[0] = clip[:20000]
    audio[1, :9000] = clip[:9000]
    mel, lengths = log_mel_batch(tf.constant(audio), tf.constant([20000, 9000]), data)
    assert lengths.numpy().tolist() == [1 + 20000 // 256, 1 + 9000 // 256]
    assert np.all(mel.numpy()[1, lengths[1] :] == np.float32(LOG_MEL_FLOOR))
    # Away from the clip's end the batch computation equals the per-clip one.
    np.testing.assert_allclose(mel.numpy()[1, :30], log_mel(clip[:9000], data).numpy()[:30], atol=1e-5)
