#!/usr/bin/env python3
"""Write tests/data/speech/: espeak-ng sentences the recognizer tests read.

Three sentences from the speech-quality benchmark's generator (benchmarks/speech_data.py), spoken
in its voice (`en-us+klatt`, 165 words/min) and stored at 16 kHz 16-bit mono (the recognizer's own
rate; about 250 kB in all), with `sentences.txt` and the benchmark's sentence grammar
`sentences.jsgf`. Needs espeak-ng and sox; deterministic.

Usage: python scripts/make_speech_fixtures.py [--out DIR]
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "speech")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(2026)
    sentences = []
    while len(sentences) < 3:
        text = speech_data.sentence(rng)
        if 5 <= len(text.split()) <= 9:
            sentences.append(text)
    with tempfile.TemporaryDirectory() as scratch:
        for index, text in enumerate(sentences):
            made = Path(scratch) / f"{index}.wav"
            speech_data.speak(text, speech_data.DEFAULT_VOICE, 165, made, Path(scratch))
            subprocess.run(["sox", "-D", str(made), "-r", "16000", str(args.out / f"sentence-{index}.wav")], check=True)
    (args.out / "sentences.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    (args.out / "sentences.jsgf").write_text(speech_data.sentence_grammar(), encoding="ascii")
    print(f"{args.out}: {len(sentences)} sentences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
