#!/usr/bin/env python3
"""A source for `data_scale.py` with LJSpeech's spread of lengths: clips of 1.3-9.8 s (mean about
5.6 s; LJSpeech: 1-10 s, mean 6.6 s), each one clip of `speech_data.py`'s set or two joined.

`speech_data.py`'s clips are 1.5-8 s, mean 4.1 s: the length buckets of an epoch are narrower than
a real corpus's. This set checks that the real-size figures hold with wider ones. Clips stay within
the default length limits (10 s, 200 characters), so none is left out. Seeded: the same set on every
run.

Usage:
    python benchmarks/longer_clips.py [--source /tmp/xtts-speech-data] [--out /tmp/xtts-longer-clips] [--clips 293]
    python benchmarks/data_scale.py --source /tmp/xtts-longer-clips --out /tmp/xtts-scale-longer --sizes 13100

Needs `sox` on PATH and the set `speech_data.py` writes.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

MAX_SECONDS = 9.8
MAX_CHARACTERS = 195


def seconds(path: Path) -> float:
    with wave.open(str(path)) as audio:
        return audio.getnframes() / audio.getframerate()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=Path(tempfile.gettempdir()) / "xtts-speech-data")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "xtts-longer-clips")
    parser.add_argument("--clips", type=int, default=293)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    if shutil.which("sox") is None:
        raise SystemExit("sox is not on PATH: install it (Debian: apt-get install -y sox)")
    metadata = args.source / "metadata.csv"
    if not metadata.is_file():
        raise SystemExit(f"no {metadata}: make the source with `python benchmarks/speech_data.py` first")
    rows = [line.split("|") for line in metadata.read_text(encoding="utf-8").splitlines() if line]
    length = {row[0]: seconds(args.source / "wavs" / f"{row[0]}.wav") for row in rows}
    (args.out / "wavs").mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    lines: list[str] = []
    while len(lines) < args.clips:
        picks = rng.sample(rows, rng.choices([1, 2], [45, 55])[0])
        text = " ".join(row[1] for row in picks)
        if sum(length[row[0]] for row in picks) > MAX_SECONDS or len(text) > MAX_CHARACTERS:
            continue
        name = f"L{len(lines):04d}"
        inputs = [str(args.source / "wavs" / f"{row[0]}.wav") for row in picks]
        subprocess.run(["sox", *inputs, str(args.out / "wavs" / f"{name}.wav")], check=True)
        lines.append(f"{name}|{text}|{text}")
    (args.out / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    spans = sorted(seconds(args.out / "wavs" / f"L{i:04d}.wav") for i in range(len(lines)))
    print(
        f"{len(lines)} clips in {args.out}: {spans[0]:.1f}-{spans[-1]:.1f} s, mean {sum(spans) / len(spans):.1f} s, "
        f"median {spans[len(spans) // 2]:.1f} s"
    )
    return 0


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "data_at_scale.md"))
