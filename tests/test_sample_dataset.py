"""The sample bundled inside the package: LJSpeech layout, real speech, the promised format."""

from __future__ import annotations

import wave
from importlib import resources


def test_bundled_sample_matches_its_promise() -> None:
    root = resources.files("xtts_cli.data") / "sample"
    lines = (root / "metadata.csv").read_text(encoding="utf-8").splitlines()
    assert 30 <= len(lines) <= 60
    total_bytes = 0
    for line in lines:
        clip_id, text, normalized = line.split("|")
        assert text.strip() and normalized.strip()
        wav = root / "wavs" / f"{clip_id}.wav"
        with wave.open(str(wav)) as handle:
            assert handle.getframerate() == 22050
            assert handle.getnchannels() == 1
            assert handle.getsampwidth() == 2
            duration = handle.getnframes() / handle.getframerate()
        assert 1.0 <= duration <= 6.0
        total_bytes += len(wav.read_bytes())
    assert total_bytes <= 5 * 1024 * 1024
