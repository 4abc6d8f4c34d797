#!/usr/bin/env python3
"""`xtts vocode` of many clips in one call: a vocoder run against Griffin-Lim, at two sizes.

Each row is the wall time of one whole `xtts vocode CLIPS... --out-dir DIR` command (TensorFlow's
import, the vocoder run's restore and every clip included: what a user waits for), the median of
`--repeat` runs, with a vocoder run and with `--vocoder griffin-lim` side by side. The difference
at one clip is what loading the vocoder run costs; the bar is that it costs at most 1 s, and that
at ten clips the vocoder is the faster.

Usage:
    python benchmarks/vocode_many.py --vocoder RUN --clips DIR [--sizes 1,10] [--repeat 3] [--no-doc]

RUN is a vocoder run (`configs/vocoder-cpu.yaml`); DIR a folder of WAV clips of its rate (e.g. a
`benchmarks/voices_data.py` voice's `heldout/` clips).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import speech_quality  # noqa: E402
from results_page import cpu_name, publish  # noqa: E402


def timed(clips: list[Path], vocoder: str) -> float:
    with tempfile.TemporaryDirectory() as out:
        began = time.perf_counter()
        done = speech_quality.xtts(
            ["vocode", *map(str, clips), "--vocoder", vocoder, "--out-dir", out], capture_output=True
        )
        seconds = time.perf_counter() - began
    if done.returncode:
        raise SystemExit(f"xtts vocode failed: {done.stderr[-400:]}")
    return seconds


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocoder", required=True)
    parser.add_argument("--clips", type=Path, required=True)
    parser.add_argument("--sizes", default="1,10")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    clips = sorted(args.clips.rglob("*.wav"))
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; vocoder run {args.vocoder}")
    print()
    print("| clips in one call | vocoder run (s) | griffin-lim (s) | vocoder - griffin-lim |")
    print("|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        chosen = clips[:size]
        if len(chosen) < size:
            raise SystemExit(f"{args.clips} holds {len(clips)} clips, fewer than {size}")
        pairs = [(timed(chosen, args.vocoder), timed(chosen, "griffin-lim")) for _ in range(args.repeat)]
        neural = statistics.median(p[0] for p in pairs)
        griffin = statistics.median(p[1] for p in pairs)
        print(f"| {size} | {neural:.2f} | {griffin:.2f} | {neural - griffin:+.2f} s |")
    return 0


if __name__ == "__main__":
    raise SystemExit(publish(main, "vocoder.md"))
