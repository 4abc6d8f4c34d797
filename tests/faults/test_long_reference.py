"""A reference is decoded only as far as it is used: a long WAV's voice is its first seconds' (read
alone), and a long compressed file, which its decoder reads whole, is refused with the cut to make."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from xtts_cli.config.schema import DataConfig
from xtts_cli.errors import XttsError
from xtts_cli.speech.synthesis import CLONE_WINDOWS, reference_from_audio

CLIP = Path(__file__).resolve().parents[2] / "xtts_cli" / "data" / "sample" / "wavs" / "XTTS001-0001.wav"


def test_a_long_wav_gives_the_voice_of_its_opening_seconds(tmp_path):
    with wave.open(str(CLIP)) as handle:
        rate, frames = handle.getframerate(), handle.readframes(handle.getnframes())
    long = tmp_path / "long.wav"
    with wave.open(str(long), "wb") as handle:  # ten minutes: the clip again and again
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes(frames * int(600 * rate * 2 / len(frames)))
    data = DataConfig()
    whole = reference_from_audio(CLIP, data, windows=CLONE_WINDOWS)
    opening = reference_from_audio(long, data, windows=CLONE_WINDOWS)
    assert opening.shape == (CLONE_WINDOWS, data.reference_frames, data.n_mels)
    np.testing.assert_array_equal(opening[: len(whole) - 1], whole[:-1])  # the clip's own windows, exactly


def test_a_long_compressed_reference_is_refused_with_the_cut_to_make(tmp_path):
    import soundfile  # a runtime dependency (pyproject.toml)

    path = tmp_path / "long.flac"
    soundfile.write(str(path), np.zeros(22050 * 660, np.int16), 22050, subtype="PCM_16")  # 11 quiet minutes
    with pytest.raises(XttsError) as caught:
        reference_from_audio(path, DataConfig(), windows=CLONE_WINDOWS)
    assert "is 11 minutes of flac, which is decoded whole" in caught.value.lines[0]
    assert caught.value.hint.startswith("cut the first minute out: sox ")
