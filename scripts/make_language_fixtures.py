#!/usr/bin/env python3
"""Write tests/data/persian/: a few short Persian sentences in espeak-ng's `fa` voice.

The second language of the tests' two-language run (beside the bundled English sample): eight
sentences from the voices benchmark's Persian generator (benchmarks/voices_data.py), one with
Persian digits, in the LJSpeech layout (`metadata.csv`: id|text|text), 16 kHz 16-bit mono (the
pipeline resamples to 22.05 kHz; about 550 kB in all). Needs espeak-ng and sox; deterministic.

Usage: python scripts/make_language_fixtures.py [--out DIR]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import speech_data  # noqa: E402
import voices_data  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "persian")
    args = parser.parse_args(argv)
    (args.out / "wavs").mkdir(parents=True, exist_ok=True)
    rng = random.Random(43)
    sentences: list[str] = []
    while len(sentences) < 7:
        text = voices_data.persian_sentence(rng)
        if 3 <= len(text.split()) <= 6 and text not in sentences:
            sentences.append(text)
    sentences.append("سال ۱۴۰۴ بود.")  # digits: read out as words by the Persian normaliser
    lines = []
    with tempfile.TemporaryDirectory() as scratch:
        for index, text in enumerate(sentences):
            clip = f"FA-{index + 1:02d}"
            made = Path(scratch) / f"{clip}.wav"
            speech_data.speak(text, "fa", 165, made, Path(scratch))
            subprocess.run(["sox", "-D", str(made), "-r", "16000", str(args.out / "wavs" / f"{clip}.wav")], check=True)
            lines.append(f"{clip}|{text}|{text}")
    (args.out / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(sentences)} sentences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
