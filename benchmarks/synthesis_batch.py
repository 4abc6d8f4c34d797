#!/usr/bin/env python3
"""Speaking many sentences: one `xtts synthesize` call per sentence against one
`xtts synthesize --text-file` call, side by side, at two sizes (wall time of the whole commands,
TensorFlow's import and the model's restore included: what a user waits for).

Usage:
    python benchmarks/synthesis_batch.py --run-dir RUN [--sizes 5,20] [--sentences FILE]

RUN is any `xtts train` run directory (e.g. one `benchmarks/speech_quality.py` trained). The
sentences default to the held-out ones of `speech_data.py`'s dataset.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import speech_data  # noqa: E402
import speech_quality  # noqa: E402


def timed(args: list[str]) -> float:
    began = time.perf_counter()
    done = speech_quality.xtts(args, capture_output=True)
    if done.returncode:
        raise SystemExit(f"xtts {' '.join(args[:3])} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", type=Path, required=True)
    parser.add_argument("--sizes", default="5,20")
    parser.add_argument("--sentences", type=Path, default=speech_data.DEFAULT_OUT / "heldout.txt")
    args = parser.parse_args(argv)
    if not args.sentences.is_file():
        from xtts_cli.errors import XttsError

        raise XttsError(
            f"--sentences {args.sentences} is not there: by default the held-out sentences of the dataset "
            "benchmarks/speech_data.py writes",
            hint="python benchmarks/speech_data.py first, or pass --sentences FILE (one sentence a line)",
        )
    sentences = [line for line in args.sentences.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        for size in (int(value) for value in args.sizes.split(",")):
            chosen = [sentences[i % len(sentences)] for i in range(size)]
            separate = sum(
                timed(["synthesize", text, "-r", str(args.run_dir), "-o", str(out / f"one-{i}.wav")])
                for i, text in enumerate(chosen)
            )
            listing = out / f"lines-{size}.txt"
            listing.write_text("\n".join(chosen) + "\n", encoding="utf-8")
            together = timed(
                [
                    "synthesize",
                    "--text-file",
                    str(listing),
                    "--out-dir",
                    str(out / f"many-{size}"),
                    "-r",
                    str(args.run_dir),
                ]
            )
            rows.append((size, separate, together))
    print(f"xtts synthesize, {args.run_dir}: wall seconds of the whole commands")
    print(f"{'sentences':>10}{'separate calls':>16}{'--text-file':>13}{'speed-up':>10}")
    for size, separate, together in rows:
        print(f"{size:10d}{separate:16.1f}{together:13.1f}{separate / together:9.1f}x")
    return 0


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "performance.md"))
