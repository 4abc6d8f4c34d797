#!/usr/bin/env python3
"""What the scan's look for silent clips costs a first start: the scan of an LJSpeech-layout set of
13,100 and 131,000 clips (hard links to --source's, as `data_scale.py` makes them: their pages
cached, so this is the look's own work, not the disk's), each run in a fresh process with an empty
scan cache, with the look (`_check_sound`: a window of each WAV read, more only when it is quiet) and
with headers alone (`_check_sound` replaced by a no-op in that process), the two taking turns --runs times.

With --cold (root: it writes /proc/sys/vm/drop_caches), the set is distinct files (copies, not
links) and the page cache is dropped before each scan: a first start on a cold disk, where the look
is a second read of each file (the scan's read-ahead reads it with the header).

Usage:
    python benchmarks/scan_sound.py [--source DIR] [--out DIR] [--sizes 13100,131000] [--runs 3] [--cold]

Prints a markdown table: per size, each side's scan seconds (min-max of the runs), the difference
of their medians, and that difference per clip.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data_scale import SAMPLE, build  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def worker(path: str, look: bool) -> dict:
    """One first-start scan of `path` in this (fresh) process."""
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data import audio_headers, read_ahead
    from xtts_cli.data.scan import scan_dataset

    if not look:  # headers alone, as before the look: none looked at, nor read ahead for it
        audio_headers._check_sound = lambda descriptor, header: None
        read_ahead.ReadAhead.MIDDLE_BYTES = 0
    start = time.perf_counter()
    report = scan_dataset(XttsConfig(data={"dataset_path": path}).data)
    return {"seconds": time.perf_counter() - start, "items": len(report.items), "bad": len(report.bad)}


DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def distinct(linked: Path, out: Path) -> Path:
    """A copy of the hard-linked set `linked` whose files are each their own (reused once made)."""
    copy = out / f"distinct-{linked.name}"
    if (copy / ".complete").is_file():
        return copy
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(linked, copy, copy_function=shutil.copyfile)
    (copy / ".complete").write_text(str(linked))
    return copy


def run(path: Path, look: bool, cache: Path, cold: bool = False) -> dict:
    if cold:
        os.sync()
        DROP_CACHES.write_text("3\n")
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), TF_CPP_MIN_LOG_LEVEL="3")
    job = json.dumps({"path": str(path), "look": look})
    done = subprocess.run(
        [sys.executable, __file__, "--worker", job], env=env, capture_output=True, text=True, cwd=ROOT, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"the scan of {path} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def cpu_name() -> str:
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=SAMPLE)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "xtts-scale")
    parser.add_argument("--sizes", default="13100,131000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="distinct files, the page cache dropped before each scan")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        job = json.loads(args.worker)
        print(json.dumps(worker(job["path"], job["look"])))
        return 0
    sizes = [int(size) for size in args.sizes.split(",")]
    disk = "distinct files, the page cache dropped before each scan" if args.cold else "hard links, cached"
    print(f"{cpu_name()}, {os.cpu_count()} CPUs; {disk}; {args.runs} runs a side, taking turns\n")
    print("| clips | with the look (s) | headers alone (s) | difference of medians | per clip |")
    print("|---|---|---|---|---|")
    for size in sizes:
        path = build(args.source, args.out, size, layouts=False)["ljspeech"]
        path = distinct(path, args.out) if args.cold else path
        times: dict[bool, list[float]] = {True: [], False: []}
        with tempfile.TemporaryDirectory(prefix="xtts-scan-sound-") as scratch:
            for index in range(args.runs):
                for look in (index % 2 == 0, index % 2 == 1):  # each side first in turn
                    cache = Path(scratch) / f"{look}-{index}"  # empty: a first start
                    result = run(path, look, cache, args.cold)
                    assert result["items"] + result["bad"] == size, result
                    times[look].append(result["seconds"])
        looked, alone = statistics.median(times[True]), statistics.median(times[False])
        print(
            f"| {size:,} | {looked:.2f} ({min(times[True]):.2f}-{max(times[True]):.2f}) "
            f"| {alone:.2f} ({min(times[False]):.2f}-{max(times[False]):.2f}) "
            f"| {looked - alone:+.2f} s | {(looked - alone) / size * 1e6:+.0f} us |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
