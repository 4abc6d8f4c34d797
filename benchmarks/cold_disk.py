#!/usr/bin/env python3
"""A first start and runtime epochs on a cold disk: the scan's read-ahead and runtime mode's own pool.

`data_scale.py`'s sets are hard links to a few hundred files, which stay in the page cache. A real
corpus is as many files as clips, and on a first start (or a corpus larger than memory) they are
read from disk. This builds a set of distinct files (copies, not links: 13,100 clips of
`speech_data.py`'s set take 2.3 GB), and times each case in a fresh process, with the page cache
dropped before (`/proc/sys/vm/drop_caches`, so it needs root) and with the files cached:

- a first start's scan (no scan cache), with the read-ahead and with it switched off;
- runtime mode, `--batches` batches after 5, with its own thread pool and in TensorFlow's shared
  pool (the page cache dropped after the pipeline is built, so that only the clips are cold);
- the precompute pass that writes the store (into a fresh folder beside the set), its clips read
  in the feature map's own thread pool and in the shared one.

Before the cached cases every file is read whole, so that they do not find only what the cold
cases left in the page cache.

Usage:
    python benchmarks/cold_disk.py [--source /tmp/xtts-speech-data] [--out /tmp/xtts-cold-disk]
                                   [--size 13100] [--batches 300] [--runs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data_scale import run, source_clips  # noqa: E402

DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def drop_page_cache() -> None:
    os.sync()
    DROP_CACHES.write_text("3\n")


def build(source: Path, out: Path, size: int) -> Path:
    """`size` distinct files, copies of --source's clips in turn; reused when made from it before."""
    path = out / f"ljspeech-{size}"
    made_from = str(source.resolve())
    marker = path / ".complete"
    if marker.is_file() and marker.read_text() == made_from:
        return path
    shutil.rmtree(path, ignore_errors=True)
    (path / "wavs").mkdir(parents=True)
    clips = source_clips(source)
    metadata = []
    for index in range(size):
        audio, text = clips[index % len(clips)]
        shutil.copyfile(audio, path / "wavs" / f"c{index:06d}.wav")
        metadata.append(f"c{index:06d}|{text}")
    (path / "metadata.csv").write_text("\n".join(metadata) + "\n", encoding="utf-8")
    marker.write_text(made_from)
    return path


def read_all(path: Path) -> None:
    """Every file of the set read whole, into the page cache."""
    for file in sorted((path / "wavs").iterdir()):
        file.read_bytes()


def worker(job: dict) -> dict:
    """One timing, in this (fresh) process."""
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data import pipeline, read_ahead
    from xtts_cli.data.run_data import prepare
    from xtts_cli.data.scan import scan_dataset

    if not job["variant"]:  # the read-ahead never starts / runtime mode in the shared pool
        read_ahead.ReadAhead.COLD_READ_SECONDS = float("inf")
        pipeline.pipeline_threads = lambda data: 0  # 0: TensorFlow's shared pool
    data = {"dataset_path": job["path"], "scan_cache": False, "preprocessing_mode": "runtime"}
    config = XttsConfig(data=data)
    if job["kind"] == "scan":
        if job["cold"]:
            drop_page_cache()
        start = time.perf_counter()
        scan_dataset(config.data)
        return {"seconds": time.perf_counter() - start}
    import numpy as np

    run_data = prepare(config)
    items = run_data.scan.train  # the scan's training share, as before (not the epoch's weighted clips)
    if job["kind"] == "pass":
        store = Path(job["path"]).parent / "store"
        shutil.rmtree(store, ignore_errors=True)
        config = XttsConfig(data={**data, "preprocessing_mode": "precompute", "feature_cache_dir": str(store)})
        precompute = run_data.with_config(config)
        if job["cold"]:
            drop_page_cache()
        start = time.perf_counter()
        precompute.pipeline(items=items)
        return {"seconds": time.perf_counter() - start}
    dataset, _ = run_data.pipeline(items=items)
    if job["cold"]:
        drop_page_cache()
    iterator = iter(dataset)
    for _ in range(5):
        next(iterator)
    latencies = []
    for _ in range(job["batches"]):
        tick = time.perf_counter()
        next(iterator)
        latencies.append(time.perf_counter() - tick)
    values = np.asarray(latencies)
    return {"rate": len(values) * config.data.batch_size / values.sum(), "cv": float(values.std() / values.mean())}


def span(values: list[float], digits: int) -> str:
    low, high = min(values), max(values)
    return f"{low:,.{digits}f}" if low == high else f"{low:,.{digits}f}-{high:,.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=Path(tempfile.gettempdir()) / "xtts-speech-data")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "xtts-cold-disk")
    parser.add_argument("--size", type=int, default=13100)
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--runs", type=int, default=2, help="runs of each case, alternating")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    if not os.access(DROP_CACHES, os.W_OK):
        raise SystemExit(f"cannot write {DROP_CACHES}: run as root (it drops the page cache before each cold case)")
    source_clips(args.source)  # a source that cannot be used ends the run here, in one line
    path = build(args.source, args.out, args.size)
    cache = args.out / "cache"
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; {args.size:,} distinct files"
    )
    cases = [
        ("scan", "first-start scan, s", "read-ahead", "none"),
        ("epoch", f"runtime mode, clips/s ({args.batches} batches)", "own pool", "shared pool"),
        ("pass", "precompute pass (the store's build), s", "own pool", "shared pool"),
    ]
    for kind, what, on, off in cases:
        print(f"\n{what:44} {'cold: ' + on:>22} {'cold: ' + off:>22} {'cached: ' + on:>22} {'cached: ' + off:>22}")
        cells: list[list[dict]] = [[] for _ in range(4)]  # cold/cached x on/off, in the columns' order
        for _ in range(args.runs):
            for index, (cold, variant) in enumerate((c, v) for c in (True, False) for v in (True, False)):
                if not cold and variant:
                    read_all(path)  # the cached cases find every file cached, not those the cold ones left
                job = {"kind": kind, "path": str(path), "cold": cold, "variant": variant, "batches": args.batches}
                cells[index].append(run(job, cache, __file__))
        key, digits = ("rate", 0) if kind == "epoch" else ("seconds", 2)
        row = [span([figure[key] for figure in cell], digits) for cell in cells]
        print(f"{'':44} {row[0]:>22} {row[1]:>22} {row[2]:>22} {row[3]:>22}")
        if kind == "epoch":
            cvs = [span([figure["cv"] for figure in cell], 2) for cell in cells]
            print(f"{'  batch-latency CV':44} {cvs[0]:>22} {cvs[1]:>22} {cvs[2]:>22} {cvs[3]:>22}")
    return 0


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "data_at_scale.md"))
