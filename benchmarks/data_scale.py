#!/usr/bin/env python3
"""Real size: the input pipeline and start-up on LJSpeech-size and LibriTTS-size sets.

Builds, under --out, datasets of 13,100 and 131,000 clips whose audio files are hard links to the
clips of --source (an LJSpeech-layout folder; default: the bundled sample), each in the LJSpeech
layout, and with --layouts also in the LibriTTS and VCTK layouts (one transcript file per clip).
Then prints, per size, each figure from its own fresh Python process:

- scan time and peak RSS, first start (empty scan cache) and second start (the cache the first left);
- a second start of a runtime-mode training pipeline to its first batch, stage by stage (scan,
  vocabulary, plan, TensorFlow's import, pipeline, first batch), and its peak RSS (--scan-only
  stops here);
- time to the first training step with default settings (the tiny model): first start (which
  pays the precompute pass when `auto` chooses precompute) and second start;
- per preprocessing mode (runtime, cache, precompute, precompute read from the shards every epoch
  (`streamed`: a memory limit that holds no store), and the default `auto`): first-epoch samples/s,
  CV and p95 of the batch latency, the steady rate (the later epochs, from one iterator over the
  repeated dataset as the trainer draws them, after as many batches as the first epoch's warm-up)
  and that iterator's first batch, peak RSS, and the pipeline build time (for precompute: the pass
  that writes the store, and reading it into memory when it fits the budget);
- the default's first epoch, and the precompute store's later epochs, against runtime mode again,
  --interleaved times each, interleaved: the two pipelines in two processes, each stopped
  (SIGSTOP) while the other's batches are timed, taking turns in windows until runtime mode has had
  --batches timed, --window batches a window (the faster side as many times more as it is faster,
  by the rows, so that the two windows take about as long). Both sample the same minutes of the
  machine, whose speed drifts by tens of percent between jobs run minutes apart (and in spells of
  seconds), so their ratio has the machine's drift taken out; the same done with runtime mode on
  both sides is printed as the method's check (it should read 1.00x); and, after the last size,
  runtime mode on the smallest and the largest set side by side, the same way;
- what CV the machine gives a pipeline of identical batches (each the same work, the store's decode
  repeated) at the default's pace and at runtime mode's, three runs each: the floor under a CV
  measured at that pace, which is the machine's (its threads' scheduling), not the pipeline's;
- how fast one thread copies the store's files into a buffer (page cache, nothing else done): the
  ceiling of any reader of the store on this machine; how fast tf.data's record reader alone reads
  their records, one file after the other and counted inside tf.data (the ceiling of any reader
  built on it); how fast the plainest tf.data chain reads them (records, shuffle, batch, decode:
  tf.data's record machinery alone); and how fast tf.data reads their bytes at all, in blocks of 16
  clips' worth with nothing parsed or decoded (the ceiling of any tf.data reader of the store,
  whatever its format): what the store read from its shards is measured against.
Then the issue's bars, side by side.

Usage:
    python benchmarks/data_scale.py [--source DIR] [--out DIR] [--sizes 13100,131000] [--layouts]
                                    [--batches 600] [--warmup 20] [--interleaved 3] [--window 40]
                                    [--scan-only]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "xtts_cli" / "data" / "sample"

STARTED = time.perf_counter()
MODES = ("runtime", "cache", "precompute", "streamed", "auto")
# Each row's preprocessing mode and its data settings beyond the set's. `streamed`: precompute with a
# memory budget too small to hold the store, so its epochs read the shards (what `auto` does with a
# store over the budget, as at 131,000 clips).
ROWS = {mode: (mode, {}) for mode in MODES} | {"streamed": ("precompute", {"cache_memory_limit": 1})}


def source_clips(source: Path) -> list[tuple[Path, str]]:
    """(audio file, transcript) of each clip of --source, an LJSpeech-layout folder; exits with one
    line naming what is missing."""
    metadata = source / "metadata.csv"
    if not metadata.is_file():
        raise SystemExit(
            f"--source {source}: no metadata.csv; pass an LJSpeech-layout folder (metadata.csv with id|text "
            "lines, audio in wavs/<id>.wav), e.g. the one `python benchmarks/speech_data.py` makes"
        )
    lines = metadata.read_text(encoding="utf-8").splitlines()
    rows = [(number, line.split("|")) for number, line in enumerate(lines, 1) if line.strip()]
    for number, row in rows:
        if len(row) < 2:
            raise SystemExit(f"--source {source}: metadata.csv line {number} has no '|' (id|text expected): {row[0]!r}")
    clips = [(source / "wavs" / f"{row[0]}.wav", row[-1]) for _, row in rows]
    missing = [path for path, _ in clips if not path.is_file()]
    if not clips or missing:
        what = (
            f"{len(missing)} of its {len(clips)} clips have no audio file, e.g. {missing[0]}"
            if missing
            else "no id|text line"
        )
        raise SystemExit(f"--source {source}: {what}; pass an LJSpeech-layout folder whose clips are all there")
    return clips


def build(source: Path, out: Path, size: int, layouts: bool) -> dict[str, Path]:
    """Hard-linked sets of `size` clips; reused when already made from the same source."""
    clips = source_clips(source)
    sets = {"ljspeech": out / f"ljspeech-{size}"}
    if layouts:
        sets.update(libritts=out / f"libritts-{size}", vctk=out / f"vctk-{size}")
    made_from = str(source.resolve())
    if all((path / ".complete").is_file() and (path / ".complete").read_text() == made_from for path in sets.values()):
        return sets  # made from this source before
    for path in sets.values():
        shutil.rmtree(path, ignore_errors=True)
    (sets["ljspeech"] / "wavs").mkdir(parents=True)
    # Links to a copy, never to --source: a new link changes a file's ctime, and a precompute store
    # keys each clip by it (a training of --source meanwhile would find its store stale).
    copies = out / "source-copies"
    shutil.rmtree(copies, ignore_errors=True)
    copies.mkdir(parents=True)
    for index, (audio, text) in enumerate(clips):
        clips[index] = (Path(shutil.copyfile(audio, copies / f"{index:06d}.wav")), text)
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
        (path / ".complete").write_text(made_from)
    return sets


def worker(job: dict) -> dict:
    """One measurement, in this (fresh) process."""
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data.scan import scan_dataset
    from xtts_cli.errors import XttsError

    if job["kind"] == "store_chain":
        return store_chain(Path(job["features"]), job["bytes_per_clip"])
    if job["kind"] == "cv_floor":
        return {"floors": cv_floor(job["ms"], job["batches"], job["warmup"])}

    data = {"dataset_path": job["path"], "feature_cache_dir": job.get("features")}
    if job["kind"] == "scan":
        start = time.perf_counter()
        report = scan_dataset(XttsConfig(data=data).data)
        return {"seconds": time.perf_counter() - start, "items": len(report.items), "rss_gb": peak_rss_gb()}

    if job["kind"] == "start":
        return start_stages(XttsConfig(data={**data, "preprocessing_mode": "runtime"}))

    if job["kind"] == "first_step":
        from xtts_cli.training.controller import Controller
        from xtts_cli.training.trainer import Trainer

        config = XttsConfig(data=data, model={"model_size": "tiny"}, training={"max_steps": 1})
        trainer = Trainer(config, run_dir=Path(job["run"]), fresh=True)
        parts = trainer.setup()
        # The first step as training takes it: the training loop itself, with no action beside it.
        Controller(trainer).run_steps(parts, [], trainer.new_result(), steps=1)
        store = parts.input.info.feature_cache
        return {
            "seconds": time.perf_counter() - STARTED,
            "mode": parts.input.info.preprocessing_mode,
            "built": store.built if store else 0,
        }

    from xtts_cli.data.run_data import prepare

    config = XttsConfig(data={**data, **job.get("data", {}), "preprocessing_mode": job["mode"]})
    run_data = prepare(config)
    try:
        plan = run_data.plan(items=run_data.scan.train)  # the scan's training share, as before
    except XttsError as error:
        return {"refused": str(error).splitlines()[0]}
    start = time.perf_counter()
    dataset, info = run_data.pipeline(plan=plan)
    built = time.perf_counter() - start

    iterator = iter(dataset)
    if job["kind"] == "serve":
        if job.get("steady"):  # the later epochs: the first drawn whole, then one iterator as the trainer's
            for _ in iterator:
                pass
            del iterator
            iterator = iter(dataset.repeat())
        draw(iterator, job["warmup"])
        serve(
            iterator,
            {"ready": info.preprocessing_mode, "batch_size": config.data.batch_size, "epoch": info.batches_per_epoch},
        )
        return {}
    draw(iterator, job["warmup"])
    first = stats(draw(iterator, job["batches"]), config.data.batch_size)
    steady, restart_ms = first, None
    if info.preprocessing_mode != "runtime":
        if info.preprocessing_mode == "cache":  # finish epoch 1, which fills the cache
            for _ in iterator:
                pass
        # Released first, as a trainer's next epoch would: left alive, it kept its threads and buffers
        # beside the epochs timed next.
        del iterator
        # The later epochs come from one iterator over the repeated dataset, as the trainer draws them;
        # made once per run, so its start (the first batch, and as many more as the first epoch's
        # warm-up) is not in the steady rate but printed beside it: it was in the rate until a later
        # stop, where it took 0.1-0.3 s of the 2 s timed (the store held in memory at 13,100 clips).
        tick = time.perf_counter()
        repeated = iter(dataset.repeat())
        next(repeated)
        restart_ms = (time.perf_counter() - tick) * 1000
        draw(repeated, job["warmup"])
        steady = stats(draw(repeated, job["batches"], min_seconds=2.0), config.data.batch_size)
    return {
        "mode": info.preprocessing_mode,
        "items": info.num_items,
        "build_s": built,
        "first": first,
        "steady": steady,
        "restart_ms": restart_ms,
        "feature_bytes": info.feature_bytes_estimate,
        "budget": info.cache_memory_limit_bytes,
        "in_memory_bytes": info.store_in_memory_bytes if info.store_in_memory else None,
        "rss_gb": peak_rss_gb(),
    }


def serve(iterator, ready: dict) -> None:
    """Says it is ready (`ready`: its mode, batch size and batches an epoch), then for each count read
    from stdin, draws that many batches and prints the seconds each took (one JSON line): one side
    of `interleave`."""
    print(json.dumps(ready), flush=True)
    for line in sys.stdin:
        print(json.dumps(draw(iterator, int(line))), flush=True)


def interleave(jobs: list[dict], cache: Path, windows: list[int], turns: int) -> list[dict]:
    """The pipelines of `jobs`, each in its own process and warmed up, timed in turns: one draws a
    window of batches (job i: `windows[i]`) while the others are stopped (SIGSTOP: no thread of
    theirs runs, so none prefetches in another's window), `turns` windows each. The order alternates
    from one round to the next. A side timing a first epoch draws no more than the epoch holds: its
    window is made smaller where it would not. Returns each job's latencies and its rate (samples/s)
    per window."""
    windows = list(windows)
    sides = []
    try:
        for job in jobs:  # started one after the other: a build is not timed, but not contended either
            errors = tempfile.TemporaryFile(mode="w+")
            process = subprocess.Popen(
                [sys.executable, __file__, "--worker", json.dumps(job)],
                env=dict(os.environ, XDG_CACHE_HOME=str(job.get("cache", cache)), TF_CPP_MIN_LOG_LEVEL="3"),
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )
            sides.append({"process": process, "errors": errors, "latencies": [], "windows": []})
            ready = json.loads(answer(sides[-1], job))
            if "refused" in ready:
                raise SystemExit(f"serve {job['mode']} on {job['path']}: {ready['refused']}")
            sides[-1] |= {"mode": ready["ready"], "batch_size": ready["batch_size"]}
            os.kill(process.pid, signal.SIGSTOP)
            if not job.get("steady"):
                i = len(sides) - 1
                windows[i] = min(windows[i], (ready["epoch"] - job["warmup"]) // turns)
                if windows[i] < 1:
                    raise SystemExit(f"{job['path']}: an epoch of {ready['epoch']} batches is too few to interleave")
        for turn in range(turns):
            for side in sides if turn % 2 == 0 else sides[::-1]:
                os.kill(side["process"].pid, signal.SIGCONT)
                side["process"].stdin.write(f"{windows[sides.index(side)]}\n")
                side["process"].stdin.flush()
                latencies = json.loads(answer(side, jobs[sides.index(side)]))
                os.kill(side["process"].pid, signal.SIGSTOP)
                side["latencies"] += latencies
                side["windows"].append(len(latencies) * side["batch_size"] / sum(latencies))
    finally:
        for side in sides:
            os.kill(side["process"].pid, signal.SIGCONT)
            side["process"].stdin.close()
            side["process"].wait()
            side["errors"].close()
    return [{key: side[key] for key in ("mode", "batch_size", "latencies", "windows")} for side in sides]


def answer(side: dict, job: dict) -> str:
    """The next line `side`'s process prints, or the end of the run with its error."""
    line = side["process"].stdout.readline()
    if not line:
        side["errors"].seek(0)
        raise SystemExit(f"serve {job['mode']} on {job['path']} failed:\n{side['errors'].read()[-3000:]}")
    return line


def draw(iterator, count: int, min_seconds: float = 0.0) -> list[float]:
    """Seconds each of `count` batches (and more, until `min_seconds` have passed) took to come."""
    latencies = []
    began = time.perf_counter()
    while len(latencies) < count or time.perf_counter() - began < min_seconds:
        tick = time.perf_counter()
        next(iterator)
        latencies.append(time.perf_counter() - tick)
    return latencies


def stats(latencies: list[float], batch_size: int) -> dict:
    import numpy as np

    values = np.asarray(latencies)
    return {
        "rate": len(values) * batch_size / values.sum(),
        "mean_ms": float(values.mean() * 1000),
        "cv": float(values.std() / values.mean()),
        "p95_ms": float(np.percentile(values, 95) * 1000),
    }


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


def start_stages(config) -> dict:
    """Seconds of each stage of a training pipeline's start, to its first batch (runtime mode, so
    that no store is written: the start of every mode but the store's pass), and the peak RSS."""
    from xtts_cli.data.run_data import prepare
    from xtts_cli.data.scan import scan_dataset

    stages: dict[str, float] = {}
    tick = time.perf_counter()

    def done(stage: str) -> None:
        nonlocal tick
        now = time.perf_counter()
        stages[stage], tick = now - tick, now

    # The scan timed on its own, then handed to prepare: its stage is the epoch's clips and the vocabulary.
    report = scan_dataset(config.data)
    done("scan")
    run_data = prepare(config, scan=report)
    done("vocabulary")
    plan = run_data.plan(items=report.train)
    done("plan")
    import tensorflow  # noqa: F401

    done("TensorFlow import")
    dataset, _ = run_data.pipeline(plan=plan)
    done("pipeline")
    next(iter(dataset))
    done("first batch")
    return {"stages": stages, "rss_gb": peak_rss_gb()}


def run(job: dict, cache: Path, script: str = __file__) -> dict:
    """`job` done by `script --worker` in a fresh process, with `cache` as its XDG cache folder."""
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, script, "--worker", json.dumps(job)], env=env, capture_output=True, text=True, cwd=ROOT
    )
    if result.returncode != 0:
        raise SystemExit(f"{job['kind']} {job.get('mode', '')} on {job['path']} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def gb(count) -> str:
    return "-" if count is None else f"{count / 1e9:.1f} GB"


def measure_size(path: Path, size: int, args, work: Path) -> dict:
    """Every figure for one set, each from a fresh process."""
    cache, features = work / f"scan-{size}", work / f"features-{size}"
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(features, ignore_errors=True)
    figures = {"scan": [run({"kind": "scan", "path": str(path)}, cache) for _ in range(2)]}
    figures["start"] = run({"kind": "start", "path": str(path)}, cache)  # a second start: the scan is remembered
    if args.scan_only:
        return figures
    base = {"path": str(path), "features": str(features)}
    figures["first_step"] = []
    for n in range(2):
        # The first start may have written a store of many GB; the kernel writes it back for a
        # while after, with CPU and disk that the second start (and each mode below) would share.
        os.sync()
        # A fresh run directory each time: `fresh=True` would move an earlier one aside, and they would pile up.
        for old in work.glob(f"run-{size}-{n}*"):
            shutil.rmtree(old)
        figures["first_step"].append(run({**base, "kind": "first_step", "run": str(work / f"run-{size}-{n}")}, cache))
    for row, (mode, settings) in ROWS.items():
        if row == "streamed" and not figures["precompute"].get("in_memory_bytes"):
            figures[row] = {**figures["precompute"], "same_as": "precompute"}  # the store was read from its shards
            continue
        os.sync()  # after the mode before, which may have written the store
        job = {**base, "kind": "pipeline", "mode": mode, "data": settings}
        figures[row] = run({**job, "batches": args.batches, "warmup": args.warmup}, cache)
    # The machine's speed drifts by tens of percent from one minute to the next (a runtime job read
    # 1,285 and 876 clips/s a few minutes apart, same data) and in spells of seconds, and the rows above
    # run minutes apart. So the default's first epoch is also timed against runtime mode interleaved,
    # the two sampling the same minutes; which one starts first alternates.
    # Each side's window takes about as long as the other's: a side faster than runtime mode (by the
    # rows above) draws as many times more batches a window. With windows of as many batches, a store
    # 11x faster ran 15 windows of 40 ms, and the batches it had ready at each resume split its
    # latencies (CV 0.46-0.56 against 0.40 on its row, at 131,000 clips).
    job = {**base, "kind": "serve", "warmup": args.warmup}
    turns = -(-args.batches // args.window)

    def windows(modes, rate):
        faster = max(rate / figures["runtime"]["first"]["rate"], 1.0)
        return [args.window if mode == "runtime" else round(args.window * faster) for mode in modes]

    figures["interleaved"] = []
    for n in range(args.interleaved):
        modes = ("runtime", "auto") if n % 2 == 0 else ("auto", "runtime")
        rate = figures["auto"]["first"]["rate"]
        sides = interleave([{**job, "mode": mode} for mode in modes], cache, windows(modes, rate), turns)
        figures["interleaved"].append({mode: interleaved(side) for mode, side in zip(modes, sides)})
    # The method's check: runtime mode on both sides. Whatever makes this ratio differ from 1 is the
    # method's own, and is in the ratios above too.
    sides = interleave([{**job, "mode": "runtime"}] * 2, cache, windows(["runtime"] * 2, 0), turns)
    figures["interleaved_check"] = [interleaved(side) for side in sides]
    # The precompute store's later epochs against runtime mode, the same way.
    store = {**job, "mode": "precompute", "steady": True}
    figures["interleaved_store"] = []
    for n in range(args.interleaved):
        jobs = [{**job, "mode": "runtime"}, store][:: 1 if n % 2 == 0 else -1]
        rate = figures["precompute"]["steady"]["rate"]
        sides = interleave(jobs, cache, windows([side["mode"] for side in jobs], rate), turns)
        figures["interleaved_store"].append({side["mode"]: interleaved(got) for side, got in zip(jobs, sides)})
    # What CV the machine gives a pipeline of identical batches at the default's pace, and at runtime
    # mode's: the floor under the default's CV. After the side-by-side runs, so that those start as
    # they did before it was added. Batches of the same work read CV 0.34-0.45 here at
    # 0.8 ms a batch (the store's pace at 131,000 clips) and 0.06-0.15 at 11 ms (runtime mode's).
    paces = [figures[row]["first"]["mean_ms"] for row in ("auto", "runtime")]
    figures["cv_floor"] = run({"kind": "cv_floor", "ms": paces, "batches": args.batches, "warmup": args.warmup}, cache)[
        "floors"
    ]
    figures["store_read"] = store_read(features)
    read = figures["store_read"]
    per_clip = read["bytes"] // read["clips"] if read["clips"] else 0
    figures["store_chain"] = run({"kind": "store_chain", "features": str(features), "bytes_per_clip": per_clip}, cache)
    return figures


def interleaved(side: dict) -> dict:
    """One side of an interleaved run: its rate, CV and p95 over all its windows, and each window's rate."""
    return {
        **stats(side["latencies"], side["batch_size"]),
        "mode": side["mode"],
        "windows": side["windows"],
        "window": len(side["latencies"]) // max(len(side["windows"]), 1),
    }


def store_read(features: Path) -> dict:
    """How fast one thread copies the store's shard files into a buffer (from the page cache: the
    second of two passes): the ceiling of any reader that reads them, before it batches anything."""
    files = sorted(features.glob("*/shard-*.tfrecord"))
    sizes = [path.stat().st_size for path in files]
    clips = 0
    for path, size in zip(files, sizes):
        with open(path, "rb") as handle:  # the index record ends: count (int64), per-frame (int32), magic, CRC
            handle.seek(size - 4 - 8 - 4 - 8)
            clips += int.from_bytes(handle.read(8), "little")
    view = memoryview(bytearray(max(sizes, default=0)))
    seconds = 0.0
    for _ in range(2):
        start = time.perf_counter()
        for path, size in zip(files, sizes):
            with open(path, "rb", buffering=0) as handle:
                handle.readinto(view[:size])
        seconds = time.perf_counter() - start
    return {"bytes": sum(sizes), "clips": clips, "seconds": seconds}


def store_chain(features: Path, bytes_per_clip: int) -> dict:
    """Three tf.data readers of the store's shards, best of 3 epochs each.

    `records_per_s`: `TFRecordDataset` over the files one after the other, its clip records counted
    inside tf.data (no Python per record): the record reader alone, a ceiling for any pipeline on it.
    `clips_per_s`: the plainest chain, with none of the pipeline's buckets, token ids or merge:
    records of four files interleaved, a shuffle of 160, batches of 16, one `decode_raw` each (600
    frames of 80 mels, about 7 s) and its scale to float32: tf.data's record machinery alone.
    `blocks_clips_per_s`: the files' bytes alone, as fixed-length blocks of 16 clips' worth (four
    files interleaved; no record framing, shuffle, batching or decode): what tf.data reads the same
    bytes at, so a ceiling for any store format read through it."""
    from xtts_cli.data.features import MEL_STEPS_PER_UNIT
    from xtts_cli.data.host_memory import keep_freed_memory

    keep_freed_memory()  # as every process that builds a pipeline does
    import tensorflow as tf

    files = sorted(str(path) for path in features.glob("*/shard-*.tfrecord"))
    if not files:
        return {"records_per_s": 0.0, "clips_per_s": 0.0, "blocks_clips_per_s": 0.0}
    reader = tf.data.TFRecordDataset(files, buffer_size=1 << 20)
    most = 0.0
    for _ in range(3):
        start = time.perf_counter()
        records = int(reader.reduce(tf.constant(0, tf.int64), lambda count, _record: count + 1))
        # Every file ends with its index record: not a clip.
        most = max(most, (records - len(files)) / (time.perf_counter() - start))
    ds = tf.data.Dataset.from_tensor_slices(files).interleave(
        lambda path: tf.data.TFRecordDataset(path, buffer_size=1 << 20), cycle_length=4
    )
    steps = 600 * 80  # the store's log-mels: uint16 steps, scaled back to float32 log-mels
    scale = 1.0 / MEL_STEPS_PER_UNIT
    ds = (
        ds.shuffle(160)
        .batch(16)
        .map(lambda records: tf.cast(tf.io.decode_raw(records, tf.uint16, fixed_length=2 * steps), tf.float32) * scale)
    )
    best = 0.0
    for _ in range(3):
        start, clips = time.perf_counter(), 0
        for batch in ds:
            clips += int(batch.shape[0])
        best = max(best, clips / (time.perf_counter() - start))
    block = 16 * bytes_per_clip
    tails = [os.path.getsize(path) % block for path in files]  # the last part block of each file, skipped
    blocks = tf.data.Dataset.from_tensor_slices((files, tf.constant(tails, tf.int64))).interleave(
        lambda path, tail: tf.data.FixedLengthRecordDataset(path, block, footer_bytes=tail, buffer_size=block),
        cycle_length=4,
    )
    fastest = 0.0
    for _ in range(3):
        start, count = time.perf_counter(), 0
        for _block in blocks:
            count += 1
        fastest = max(fastest, 16 * count / (time.perf_counter() - start))
    return {"records_per_s": most, "clips_per_s": best, "blocks_clips_per_s": fastest}


def cv_floor(targets_ms: list[float], batches: int, warmup: int, runs: int = 3) -> list[dict]:
    """The CV this machine gives a pipeline whose every batch is the same work, at each of
    `targets_ms` milliseconds a batch: the floor under any pipeline's CV at that pace.

    Each batch is the store's decode (`decode_raw` of 16 records of 340 frames of 80 mels, the mean
    clip here) done `repeats` times in a loop, on one map thread, behind the pipeline's final
    prefetch, drawn and timed as every row's batches are (`draw`). `repeats` is set from two
    calibration runs (1 and 40 repeats: a line through their mean batch times) and corrected from a
    third at the repeats that gives, so the mean lands near the target; each result says the mean
    it got. `runs` runs of `batches` (and at least 2 s) each."""
    from xtts_cli.data.host_memory import keep_freed_memory

    keep_freed_memory()  # as every process that builds a pipeline does
    import numpy as np
    import tensorflow as tf

    width = 340 * 80 * 2
    records = tf.constant([b"\x01" * width] * 16)

    def timed(repeats: int, count: int, seconds: float) -> list[float]:
        def work(records):
            def body(i, total):
                # `i` in the sum keeps each pass's decode in the loop (a decode of the same input
                # every pass could otherwise be hoisted out of it).
                steps = tf.io.decode_raw(records, tf.uint16, fixed_length=width)
                return i + 1, total + tf.cast(steps[0, 0], tf.int64) + tf.cast(i, tf.int64)

            start = (tf.constant(0), tf.constant(0, tf.int64))
            return tf.while_loop(lambda i, _total: i < repeats, body, start)[1]

        ds = tf.data.Dataset.from_tensors(records).repeat().map(work, num_parallel_calls=1)
        iterator = iter(ds.prefetch(tf.data.AUTOTUNE))
        draw(iterator, warmup)
        return draw(iterator, count, min_seconds=seconds)

    one, many = (float(np.mean(timed(repeats, 200, 0.5))) * 1000 for repeats in (1, 40))
    per_repeat = max((many - one) / 39, 1e-6)
    results = []
    for target in targets_ms:
        repeats = max(1, round(1 + (target - one) / per_repeat))
        # Once more from where that landed: the line's slope is a few tens of percent off at times.
        got = float(np.mean(timed(repeats, 200, 0.5))) * 1000
        if got > one:
            repeats = max(1, round(1 + (repeats - 1) * (target - one) / (got - one)))
        cvs, means = [], []
        for _ in range(runs):
            latencies = np.asarray(timed(repeats, batches, 2.0))
            means.append(float(latencies.mean()) * 1000)
            cvs.append(float(latencies.std() / latencies.mean()))
        results.append({"target_ms": target, "repeats": repeats, "mean_ms": means, "cv": cvs})
    return results


def stored_clips(path: Path) -> list[bytes]:
    """The clip records of one shard file (TFRecord framing read here; the last record, the shard's
    index, left out)."""
    data = path.read_bytes()
    records, offset = [], 0
    while offset < len(data):
        length = int.from_bytes(data[offset : offset + 8], "little")
        records.append(data[offset + 12 : offset + 12 + length])
        offset += 12 + length + 4
    return records[:-1]


def report(size: int, figures: dict) -> None:
    first, second = figures["scan"]
    print(f"\n== {size:,} clips ({first['items']:,} scanned) ==")
    print(
        f"scan: first start {first['seconds']:.2f} s (peak RSS {first['rss_gb']:.2f} GB), second start "
        f"{second['seconds']:.2f} s ({second['rss_gb']:.2f} GB)"
    )
    start = figures["start"]
    stages = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in start["stages"].items())
    print(
        f"a second start to the first batch (runtime mode), {sum(start['stages'].values()):.1f} s: {stages}; "
        f"peak RSS {start['rss_gb']:.2f} GB"
    )
    if "first_step" not in figures:
        return
    cold, warm = figures["first_step"]
    print(
        f"time to the first training step (defaults, tiny model, {cold['mode']} mode): first start "
        f"{cold['seconds']:.1f} s ({cold['built']:,} clips precomputed), second start {warm['seconds']:.1f} s"
    )
    auto = figures["auto"]
    print(f"features {gb(auto['feature_bytes'])}, cache budget {gb(auto['budget'])}: auto chose {auto['mode']}")
    print(
        f"{'mode':22} {'first epoch /s':>14} {'CV':>5} {'p95 ms':>7} {'steady /s':>10} {'restart ms':>10} "
        f"{'peak RSS':>9} {'build s':>8}"
    )
    for mode in MODES:
        row = figures[mode]
        if "same_as" in row:
            continue
        name = f"auto ({row.get('mode', 'refused')})" if mode == "auto" else mode
        if mode == "precompute" and row.get("in_memory_bytes"):
            name = "precompute (held)"
        elif mode == "streamed":
            name = "precompute (streamed)"
        if "refused" in row:
            print(f"{name:22} refused: {row['refused']}")
            continue
        restart = "-" if row.get("restart_ms") is None else f"{row['restart_ms']:.0f}"
        print(
            f"{name:22} {row['first']['rate']:14.0f} {row['first']['cv']:5.2f} {row['first']['p95_ms']:7.1f} "
            f"{row['steady']['rate']:10.0f} {restart:>10} {row['rss_gb']:8.2f}G {row['build_s']:8.1f}"
        )
    for n, turns in enumerate(figures.get("interleaved", []), 1):
        first = next(iter(turns))
        windows = [a / r for a, r in zip(turns["auto"]["windows"], turns["runtime"]["windows"])]
        print(
            f"interleaved {n} ({first} first, {len(turns['auto']['windows'])} windows each, of "
            f"{turns['runtime']['window']} and {turns['auto']['window']} batches): runtime "
            f"{turns['runtime']['rate']:,.0f} clips/s, default ({turns['auto']['mode']}) {turns['auto']['rate']:,.0f} "
            f"(CV {turns['auto']['cv']:.2f}, p95 {turns['auto']['p95_ms']:.1f} ms): "
            f"{turns['auto']['rate'] / turns['runtime']['rate']:.2f}x, window by window {min(windows):.2f}x-"
            f"{max(windows):.2f}x; runtime's windows {min(turns['runtime']['windows']):,.0f}-"
            f"{max(turns['runtime']['windows']):,.0f} clips/s"
        )
    for n, turns in enumerate(figures.get("interleaved_store", []), 1):
        first = next(iter(turns))
        store = turns["precompute"]
        print(
            f"interleaved store {n} ({first} first, {len(store['windows'])} windows each, of "
            f"{turns['runtime']['window']} and {store['window']} batches): runtime "
            f"{turns['runtime']['rate']:,.0f} clips/s, precompute's later epochs {store['rate']:,.0f} "
            f"(CV {store['cv']:.2f}): {store['rate'] / turns['runtime']['rate']:.1f}x"
        )
    if "interleaved_check" in figures:
        one, other = figures["interleaved_check"]
        print(
            f"interleaved check, runtime against runtime: {one['rate']:,.0f} and {other['rate']:,.0f} clips/s, "
            f"{other['rate'] / one['rate']:.2f}x (1.00x: the method would favour neither side)"
        )
    for floor, row in zip(figures.get("cv_floor", []), ("default", "runtime mode")):
        print(
            f"identical batches at the {row}'s pace ({floor['target_ms']:.2f} ms a batch; each the store's decode "
            f"{floor['repeats']} times, one map thread), {len(floor['cv'])} runs: mean "
            f"{', '.join(f'{ms:.2f}' for ms in floor['mean_ms'])} ms, CV {', '.join(f'{cv:.2f}' for cv in floor['cv'])} "
            "(the floor under a CV at that pace on this machine)"
        )
    read = figures["store_read"]
    if read["clips"]:
        print(
            f"store files copied by one thread (page cache -> buffer): {read['bytes'] / read['seconds'] / 1e9:.2f} GB/s, "
            f"{read['clips'] / read['seconds']:,.0f} clips/s ({read['clips']:,} clips, {gb(read['bytes'])})"
        )
        print(
            "tf.data's record reader alone over the store (one file after the other): "
            f"{figures['store_chain']['records_per_s']:,.0f} clips/s"
        )
        print(
            "the plainest tf.data chain over the store (records, shuffle, batch, decode_raw): "
            f"{figures['store_chain']['clips_per_s']:,.0f} clips/s; tf.data reading the same files as "
            f"blocks of 16 clips' bytes, nothing parsed: {figures['store_chain']['blocks_clips_per_s']:,.0f} clips/s"
        )


def bars(results: dict[int, dict], across: list[dict]) -> None:
    """The issue's bars; `across`: runtime mode on the smallest and largest set side by side."""
    print("\n== bars ==")
    for size, figures in results.items():
        if "auto" not in figures:
            continue
        auto, runtime = figures["auto"], figures["runtime"]
        ratio = auto["first"]["rate"] / runtime["first"]["rate"]
        floor = ""
        if figures.get("cv_floor"):
            cvs = figures["cv_floor"][0]["cv"]
            floor = f"; identical batches at its pace, {auto['first']['mean_ms']:.2f} ms a batch: CV {min(cvs):.2f}-{max(cvs):.2f}"
        print(
            f"{size:>7,}: default first epoch {ratio:.2f}x runtime (bar >= 0.9), CV {auto['first']['cv']:.2f} "
            f"(bar <= 0.5{floor})"
        )
        runs = figures.get("interleaved", [])
        if runs:
            ratios = [turns["auto"]["rate"] / turns["runtime"]["rate"] for turns in runs]
            each = ", ".join(f"{ratio:.3f}x (CV {turns['auto']['cv']:.2f})" for ratio, turns in zip(ratios, runs))
            one, other = figures["interleaved_check"]
            print(
                f"{size:>7,}: the same interleaved, {len(runs)} runs: {each}; the lowest {min(ratios):.3f}x "
                f"(bar >= 0.9; the method's check, runtime against runtime: {other['rate'] / one['rate']:.2f}x)"
            )
    sizes = sorted(size for size in results if "runtime" in results[size])
    if len(sizes) >= 2:
        small, large = sizes[0], sizes[-1]
        ratio = results[large]["runtime"]["first"]["rate"] / results[small]["runtime"]["first"]["rate"]
        print(f"runtime rate at {large:,} / at {small:,}: {ratio:.2f} (bar >= 0.9)")
        if across:
            ratios = [turns[large]["rate"] / turns[small]["rate"] for turns in across]
            print(
                f"the same side by side, {len(across)} runs: {', '.join(f'{ratio:.2f}' for ratio in ratios)}; "
                f"the lowest {min(ratios):.2f} (bar >= 0.9)"
            )
        auto = results[large]["auto"]
        print(f"{large:,} with defaults: {auto['mode']} (bar: not cache), peak RSS {auto['rss_gb']:.2f} GB (bar < 4)")
    if sizes:
        small = sizes[0]
        pre, runtime = results[small]["precompute"], results[small]["runtime"]
        streamed = results[small]["streamed"]
        held = f"held in memory, {gb(pre['in_memory_bytes'])}" if pre.get("in_memory_bytes") else "read from the shards"
        read = results[small]["store_read"]
        ceiling = read["clips"] / read["seconds"] / runtime["first"]["rate"] if read["clips"] else float("nan")
        chain = results[small]["store_chain"]
        print(
            f"{small:,}: precompute epochs {pre['steady']['rate'] / runtime['first']['rate']:.1f}x runtime ({held}; "
            f"first epoch {pre['first']['rate'] / runtime['first']['rate']:.1f}x) (bar >= 30); read from the shards "
            f"every epoch: {streamed['steady']['rate'] / runtime['first']['rate']:.1f}x (first epoch "
            f"{streamed['first']['rate'] / runtime['first']['rate']:.1f}x) ("
            f"copying the store's files alone, one thread: {ceiling:.1f}x; tf.data's record reader alone: "
            f"{chain['records_per_s'] / runtime['first']['rate']:.1f}x; the plainest tf.data chain over them: "
            f"{chain['clips_per_s'] / runtime['first']['rate']:.1f}x; tf.data reading their bytes alone: "
            f"{chain['blocks_clips_per_s'] / runtime['first']['rate']:.1f}x)"
        )
        # The runtime row may have run in one of this machine's slow spells (see the README): against
        # the fastest runtime job of the size, the row and every interleaved run's, the ratio is the strictest.
        jobs = [runtime["first"]] + [turns["runtime"] for turns in results[small].get("interleaved", [])]
        jobs += results[small].get("interleaved_check", [])
        fastest = max(job["rate"] for job in jobs)
        print(
            f"{small:,}: precompute epochs against the fastest of its {len(jobs)} runtime jobs "
            f"({fastest:,.0f} clips/s): {pre['steady']['rate'] / fastest:.1f}x (bar >= 30)"
        )
        runs = results[small].get("interleaved_store", [])
        if runs:
            ratios = [turns["precompute"]["rate"] / turns["runtime"]["rate"] for turns in runs]
            print(
                f"{small:,}: precompute epochs against runtime mode interleaved, {len(runs)} runs: "
                f"{', '.join(f'{ratio:.1f}x' for ratio in ratios)}; the lowest {min(ratios):.1f}x (bar >= 30)"
            )
    largest = max(results)
    scans = {"ljspeech": results[largest]["scan"], **results[largest].get("layout_scans", {})}
    seconds = ", ".join(f"{layout} {pair[1]['seconds']:.2f} s" for layout, pair in scans.items())
    print(f"{largest:,}: second-start scan {seconds} (bar < 5)")


def counting(least: int):
    """An argparse type: a whole number of at least `least`, or a one-line error naming the value."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of at least {least}")
        return value

    return parse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=SAMPLE)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "xtts-scale")
    parser.add_argument("--sizes", default="13100,131000")
    parser.add_argument("--layouts", action="store_true", help="also the LibriTTS and VCTK layouts (scan only)")
    parser.add_argument("--batches", type=counting(1), default=600, help="batches timed per mode")
    parser.add_argument("--warmup", type=counting(0), default=20, help="batches drawn before timing")
    parser.add_argument(
        "--interleaved",
        type=counting(0),
        default=3,
        help="interleaved runs per size of the default, and of the store, against runtime mode",
    )
    parser.add_argument(
        "--window", type=counting(1), default=40, help="batches an interleaved side runs before the other"
    )
    parser.add_argument(
        "--scan-only", action="store_true", help="only the start-up figures: the scans and a runtime pipeline's start"
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        figures = worker(json.loads(args.worker))
        if figures:  # a served pipeline has printed its own lines
            print(json.dumps(figures))
        return 0
    source_clips(args.source)  # a source that cannot be used ends the run here, in one line

    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; source {args.source}; "
        f"batch 16, {args.batches} batches timed after {args.warmup}"
    )
    results: dict[int, dict] = {}
    work = args.out / "work"
    paths = {}
    for size in (int(value) for value in args.sizes.split(",")):
        sets = build(args.source, args.out, size, args.layouts)
        paths[size] = sets["ljspeech"]
        results[size] = measure_size(sets["ljspeech"], size, args, work)
        report(size, results[size])
        for layout in sorted(set(sets) - {"ljspeech"}):
            shutil.rmtree(work / f"scan-{layout}-{size}", ignore_errors=True)
            scans = [run({"kind": "scan", "path": str(sets[layout])}, work / f"scan-{layout}-{size}") for _ in range(2)]
            results[size].setdefault("layout_scans", {})[layout] = scans
            print(
                f"scan, {layout} layout: first start {scans[0]['seconds']:.2f} s, second start {scans[1]['seconds']:.2f} s"
            )
    across: list[dict] = []
    if len(results) >= 2 and not args.scan_only:
        across = runtime_at_sizes(paths, args, work)
        small, large = min(paths), max(paths)
        for n, turns in enumerate(across, 1):
            print(
                f"runtime mode side by side, {small:,} and {large:,} clips, run {n}: "
                f"{turns[small]['rate']:,.0f} and {turns[large]['rate']:,.0f} clips/s"
            )
    bars(results, across)
    return 0


def runtime_at_sizes(paths: dict[int, Path], args, work: Path) -> list[dict]:
    """Runtime mode on the smallest and the largest set, side by side (`interleave`), --interleaved
    times, which starts first alternated: the rows of the two sizes ran many minutes apart."""
    small, large = min(paths), max(paths)
    runs = []
    for n in range(args.interleaved):
        sizes = (small, large) if n % 2 == 0 else (large, small)
        jobs = [
            {
                "kind": "serve",
                "mode": "runtime",
                "path": str(paths[size]),
                "warmup": args.warmup,
                "cache": str(work / f"scan-{size}"),
            }
            for size in sizes
        ]
        sides = interleave(jobs, work, [args.window] * 2, -(-args.batches // args.window))
        runs.append({size: interleaved(side) for size, side in zip(sizes, sides)})
    return runs


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "data_at_scale.md"))
