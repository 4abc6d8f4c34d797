#!/usr/bin/env python3
"""Generate the benchmarks' reference dataset: the data docs/PERFORMANCE.md states its figures on.

240 clips of synthetic English speech (espeak-ng + sox), 22.05 kHz 16-bit mono WAV, mean about
5.5 s, each at most 9.5 s (under the default max_audio_duration of 10 s), LJSpeech layout. The
bundled sample (40 clips, mean 2.35 s) is shorter than real TTS corpora (LJSpeech averages 6.6 s);
per-clip work grows with duration and per-batch work does not, so ratios measured on it alone would
misstate what a user sees.

Usage:
    python benchmarks/make_reference_data.py [--out DIR]     (default: /tmp/xtts-reference-data)
    python benchmarks/data_pipeline.py --data-path DIR

Needs `espeak-ng` and `sox` on PATH (Debian: apt-get install -y espeak-ng sox); deterministic.
Each clip speaks two (every third clip: three) consecutive sentences of the sample's sentence list, with the
sample's voices and speaking rates in rotation.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIPS = 240
MAX_SECONDS = 9.5


def sample_script():
    """scripts/make_sample_data.py, for its sentences, voices, speeds and synthesis."""
    spec = importlib.util.spec_from_file_location("make_sample_data", ROOT / "scripts" / "make_sample_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "xtts-reference-data")
    args = parser.parse_args(argv)
    sample = sample_script()
    sample.check_tools()
    wavs = args.out / "wavs"
    wavs.mkdir(parents=True, exist_ok=True)
    sentences = [normalized or text for text, normalized in sample.SENTENCES]
    lines, durations = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for i in range(CLIPS):
            voice = sample.VOICES[i % len(sample.VOICES)]
            speed = sample.SPEEDS[(i // len(sample.VOICES)) % len(sample.SPEEDS)]
            count = 3 if i % 3 == 0 else 2  # two sentences, or three for every third clip
            while True:
                text = " ".join(sentences[(i + j) % len(sentences)] for j in range(count))
                path = wavs / f"REF-{i + 1:04d}.wav"
                sample.synth(text, voice, speed, path, Path(scratch))
                seconds = sample.wav_info(path)[3]
                if seconds <= MAX_SECONDS or count == 1:
                    break
                count -= 1
            lines.append(f"REF-{i + 1:04d}|{text}|{text}")
            durations.append(seconds)
    (args.out / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    total = sum(durations)
    print(
        f"{args.out}: {len(durations)} clips, {total / 60:.1f} min, mean {total / len(durations):.2f} s, "
        f"min {min(durations):.2f} s, max {max(durations):.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
