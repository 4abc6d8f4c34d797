#!/usr/bin/env python3
"""Start-up at real size: the dataset scan on LJSpeech-size and LibriTTS-size sets, first and second start.

Builds, under --out, datasets of 13,100 and 131,000 clips whose audio files are hard links to the
clips of --source (an LJSpeech-layout folder; default: the bundled sample), each in the LJSpeech
layout, and with --layouts also in the LibriTTS and VCTK layouts (one transcript file per clip).
Then, per set, times `scan_dataset` in a fresh Python process with an empty scan cache (first
start) and again with the cache the first left (second start): the time `xtts train` spends before
it builds the pipeline.

Usage:
    python benchmarks/data_scale.py [--source DIR] [--out DIR] [--sizes 13100,131000] [--layouts]

Only the scan half of issue 14's table so far: the pipeline rates per mode, peak RSS and the time to
the first training step are not measured here yet.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "xtts_cli" / "data" / "sample"

TIMED = """
import json, sys, time
from xtts_cli.config.schema import DataConfig
from xtts_cli.data.scan import scan_dataset
start = time.perf_counter()
report = scan_dataset(DataConfig(dataset_path=sys.argv[1]))
print(json.dumps({"seconds": time.perf_counter() - start, "items": len(report.items)}))
"""


def build(source: Path, out: Path, size: int, layouts: bool) -> dict[str, Path]:
    """Hard-linked sets of `size` clips; reused when already there."""
    rows = [line.split("|") for line in (source / "metadata.csv").read_text(encoding="utf-8").splitlines() if line]
    clips = [(source / "wavs" / f"{row[0]}.wav", row[-1]) for row in rows]
    sets = {"ljspeech": out / f"ljspeech-{size}"}
    if layouts:
        sets.update(libritts=out / f"libritts-{size}", vctk=out / f"vctk-{size}")
    if all((path / ".complete").is_file() for path in sets.values()):
        return sets
    for path in sets.values():
        shutil.rmtree(path, ignore_errors=True)
    (sets["ljspeech"] / "wavs").mkdir(parents=True)
    metadata = []
    for index in range(size):
        audio, text = clips[index % len(clips)]
        os.link(audio, sets["ljspeech"] / "wavs" / f"c{index:06d}.wav")
        metadata.append(f"c{index:06d}|{text}")
        if layouts:
            speaker, chapter = str(100 + index // 100), str(1000 + index // 20 % 5)
            folder = sets["libritts"] / speaker / chapter
            folder.mkdir(parents=True, exist_ok=True)
            stem = f"{speaker}_{chapter}_{index:06d}_000000"
            os.link(audio, folder / f"{stem}.wav")
            (folder / f"{stem}.normalized.txt").write_text(text, encoding="utf-8")
            vspeaker = f"p{100 + index // 400}"
            for sub in ("txt", "wav48"):
                (sets["vctk"] / sub / vspeaker).mkdir(parents=True, exist_ok=True)
            (sets["vctk"] / "txt" / vspeaker / f"{vspeaker}_{index:05d}.txt").write_text(text, encoding="utf-8")
            os.link(audio, sets["vctk"] / "wav48" / vspeaker / f"{vspeaker}_{index:05d}.wav")
    (sets["ljspeech"] / "metadata.csv").write_text("\n".join(metadata) + "\n", encoding="utf-8")
    for path in sets.values():
        (path / ".complete").write_text("")
    return sets


def timed_scan(path: Path, cache: Path) -> dict:
    import json

    env = dict(os.environ, XDG_CACHE_HOME=str(cache), TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run([sys.executable, "-c", TIMED, str(path)], env=env, capture_output=True, text=True,
                            cwd=ROOT, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=SAMPLE)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "xtts-scale")
    parser.add_argument("--sizes", default="13100,131000")
    parser.add_argument("--layouts", action="store_true", help="also the LibriTTS and VCTK layouts")
    args = parser.parse_args(argv)

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; source {args.source}")
    print(f"{'set':24} {'clips':>8} {'first start (s)':>16} {'second start (s)':>17}")
    for size in (int(value) for value in args.sizes.split(",")):
        for layout, path in build(args.source, args.out, size, args.layouts).items():
            with tempfile.TemporaryDirectory() as cache:
                first = timed_scan(path, Path(cache))
                second = timed_scan(path, Path(cache))
            print(f"{layout + '-' + str(size):24} {first['items']:8d} {first['seconds']:16.2f} {second['seconds']:17.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
