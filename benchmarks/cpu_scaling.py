#!/usr/bin/env python3
"""A CPU's minutes, measured: the speak-cpu recipe's word error rate by step count (old against new),
and the same run on one core and on two.

- `--part recipe`: trains each recipe (`--old`, default the preset as it was; `--new`, default
  `configs/speak-cpu.yaml`) on `speech_data.py`'s single voice, keeping checkpoints every 500 steps,
  and scores the held-out sentences at 500, 1,000, 2,000 and 4,000 steps (pocketsphinx under the
  sentence grammar, as `speech_quality.py` does). Step counts are the machine-free measure: a
  slower CPU's 28 minutes hold fewer of them, and this says how many it needs.
- `--part cores`: the recipe's first `--steps` steps under `taskset` on one core and on two, side by
  side (the steps a second, as the run's log reports them).
- `--part xla`: the preset trained for `--minutes` (28) with XLA off and on: steps reached.
- `--part ops`: where a CPU step's time goes, from `profile-step --trace`: kernels, the executor
  around them, idle threads; kernel runs a step and time by kernel type.
- `--part contention`: `profile-step`'s host contention for the seeds' planted loader (a
  `tf.numpy_function` loader, one worker, features every epoch) against the default config, at two
  batch sizes.

Usage:
    python benchmarks/cpu_scaling.py --part recipe [--steps-at 500,1000,2000,4000]
    python benchmarks/cpu_scaling.py --part cores [--steps 300]
    python benchmarks/cpu_scaling.py --part contention [--steps 30] [--batch-sizes 16,32]
    python benchmarks/cpu_scaling.py --part xla [--minutes 28]
    python benchmarks/cpu_scaling.py --part ops [--steps 10]

Needs the evaluation extra and, for the data, espeak-ng and sox.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import speech_data  # noqa: E402
import speech_quality  # noqa: E402

# speak-cpu as it stood before the phoneme front end (commit bdbabc7): characters, every reference a
# crop of the clip itself, plain log-mels (no normalisation).
OLD_RECIPE = {
    "data": {
        "batch_size": 16,
        "preprocessing_mode": "cache",
        "bucket_by_length": True,
        "num_buckets": 4,
        "eval_fraction": 0.05,
        "reference_from_other_clips": 0.0,
    },
    "model": {
        "model_size": "tiny",
        "decoder": "duration",
        "reduction_factor": 2,
        "num_decoder_layers": 4,
        "normalize_mel": False,
    },
    "training": {
        "max_steps": 4000,
        "max_minutes": 28,
        "learning_rate": 0.002,
        "warmup_steps": 200,
        "log_step": 100,
        "val_step": 500,
        "save_step": 500,
        "sample_step": 100000,
    },
}


def scored_variant(config: dict, target: Path, steps: list[int]) -> Path:
    """`config` keeping a checkpoint at each of `steps`, and training for the last of them."""
    config = {section: dict(body) for section, body in config.items()}
    every = 500 if len(steps) > 1 else max(steps)
    config["training"].update(save_step=every, keep_checkpoints=max(steps) // every + 1, max_steps=max(steps))
    config["training"].pop("max_minutes", None)  # step counts, not minutes, are compared here
    target.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return target


def word_error_rates(run_dir: Path, data: Path, steps: list[int], recognizer) -> dict[int, float]:
    import numpy as np

    from xtts_cli.evaluation.recognizer import word_error_rate
    from xtts_cli.inference.loading import load_run
    from xtts_cli.run.files import REFERENCE_FILE, load_speaking_rate
    from xtts_cli.speech.synthesis import synthesize_speech

    sentences = (data / "heldout.txt").read_text(encoding="utf-8").splitlines()
    rates = {}
    for step in steps:
        config, tokenizer, model, _, run = load_run(run_dir, step)
        reference, rate = np.load(run.path / REFERENCE_FILE), load_speaking_rate(run.path)
        heard = []
        for text in sentences:
            speech = synthesize_speech(
                model, tokenizer, text, reference, config.data, rate=rate, settings=config.synthesis
            )
            heard.append(recognizer.transcribe(speech.waveform, config.data.sample_rate))
        rates[step] = word_error_rate(sentences, heard)
    return rates


def recipe(args) -> int:
    from xtts_cli.evaluation.recognizer import Recognizer

    steps = [int(value) for value in args.steps_at.split(",")]
    if not (args.data / "heldout.txt").is_file():
        speech_data.make_dataset(args.data)
    recognizer = Recognizer((args.data / "sentences.jsgf").read_text(encoding="ascii"))
    args.runs.mkdir(parents=True, exist_ok=True)
    new = yaml.safe_load((args.new).read_text(encoding="utf-8"))
    recipes = {"old (characters, plain mels)": OLD_RECIPE, f"new ({args.new.name})": new}
    runs = [(label, config, f"recipe-{index}", steps) for index, (label, config) in enumerate(recipes.items())]
    if args.short_run:
        # A run that ends at --short-run steps: its schedule decays over them, as a slower CPU's 28
        # minutes make it do (the time budget ends the cosine at the last step the minutes hold).
        runs += [
            (label, config, f"short-{index}", [args.short_run]) for index, (label, config) in enumerate(recipes.items())
        ]
    if not args.skip_train:
        # Step counts do not depend on what else runs: --jobs trains that many at once.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(lambda run: train_run(args, run[1], run[2], run[3]), runs))
    rows, short = {}, {}
    for label, _, name, at in runs:
        rates = word_error_rates(args.runs / name, args.data, at, recognizer)
        print(f"{name}: WER {rates}", file=sys.stderr)
        (short if name.startswith("short") else rows)[label] = rates
    print(f"held-out WER (sentence grammar) by step, {len(recognizer.vocabulary)}-word vocabulary, {args.data}")
    print(
        f"{'recipe':45}"
        + "".join(f"{step:>8,}" for step in steps)
        + (f"  {args.short_run:,}-step run" if short else "")
    )
    for label, rates in rows.items():
        tail = f"{short[label][args.short_run]:16.3f}" if short else ""
        print(f"{label:45}" + "".join(f"{rates[step]:8.3f}" for step in steps) + tail)
    return 0


def train_run(args, config: dict, name: str, steps: list[int]) -> None:
    path = scored_variant(config, args.runs / f"{name}.yaml", steps)
    minutes = speech_quality.train(path, args.data, args.runs / name, args.runs / f"{name}.log") / 60
    print(f"{name}: trained {max(steps)} steps in {minutes:.1f} min", file=sys.stderr)


def cores(args) -> int:
    args.steps = args.steps or 300
    config = yaml.safe_load((args.new).read_text(encoding="utf-8"))
    config["training"].update(max_steps=args.steps, log_step=args.steps // 3, val_step=100000, save_step=100000)
    config["training"].pop("max_minutes", None)
    path = args.runs / "cores.yaml"
    args.runs.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    if not (args.data / "heldout.txt").is_file():
        speech_data.make_dataset(args.data)
    rates = {}
    for cpus in ("0", "0,1"):
        began = time.perf_counter()
        done = subprocess.run(
            [
                "taskset",
                "-c",
                cpus,
                sys.executable,
                "-m",
                "xtts_cli",
                "train",
                "-c",
                str(path),
                "--data",
                str(args.data),
                "-r",
                str(args.runs / f"cores-{cpus}"),
                "--fresh",
            ],
            capture_output=True,
            text=True,
            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
        )
        if done.returncode:
            raise SystemExit(done.stderr[-2000:])
        logged = [float(m) for m in re.findall(r"steps/sec: ([0-9.]+)", done.stderr)]
        rates[cpus] = (logged[-1], time.perf_counter() - began)
    one, two = rates["0"][0], rates["0,1"][0]
    print(f"{args.steps} steps of {args.new.name}, steps/s over the last logged stretch:")
    print(f"  1 core : {one:.2f} steps/s ({rates['0'][1]:.0f} s wall)")
    print(f"  2 cores: {two:.2f} steps/s ({rates['0,1'][1]:.0f} s wall), {two / one:.2f}x")
    return 0


def xla(args) -> int:
    """The preset trained for `--minutes` with XLA on and with it off, each in a fresh process:
    steps reached, the first step's wait (tracing, and XLA's compile of each bucket shape as it
    first comes), and the rate over the last logged stretch."""
    args.minutes = args.minutes or 28.0
    config = yaml.safe_load((args.new).read_text(encoding="utf-8"))
    if not (args.data / "heldout.txt").is_file():
        speech_data.make_dataset(args.data)
    args.runs.mkdir(parents=True, exist_ok=True)
    rows = {}
    for setting in (False, True):
        variant = {section: dict(body) for section, body in config.items()}
        variant["training"].update(
            enable_xla_compilation=setting, max_minutes=args.minutes, max_steps=100000, log_step=50, save_step=100000
        )
        variant["training"].update(val_step=100000)
        path = args.runs / f"xla-{setting}.yaml"
        path.write_text(yaml.safe_dump(variant, sort_keys=False), encoding="utf-8")
        log = args.runs / f"xla-{setting}.log"
        speech_quality.train(path, args.data, args.runs / f"xla-{setting}", log)
        text = log.read_text(encoding="utf-8")
        logged = [(int(s), float(r)) for s, r in re.findall(r"step: (\d+) \| steps/sec: ([0-9.]+)", text)]
        rows[setting] = (logged[-1][0] if logged else 0, logged[-1][1] if logged else 0.0, len(logged))
    print(f"{args.new.name} for {args.minutes:g} minutes on {args.data} (start-up included), XLA off and on:")
    for setting, (steps, rate, _) in rows.items():
        print(f"  XLA {'on ' if setting else 'off'}: {steps:6d} steps, {rate:.2f} steps/s over the last logged stretch")
    return 0


def ops(args) -> int:
    """Where a CPU step's time goes: `profile-step --trace` over the preset's steps, then its
    TensorFlow profiler trace read per thread of TensorFlow's compute pool (kernels, the executor's
    own work around them, idle waiting) and per kernel type."""
    import collections
    import json

    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    args.steps = args.steps or 10
    trace = args.runs / "ops-trace"
    args.runs.mkdir(parents=True, exist_ok=True)
    done = speech_quality.xtts(
        ["profile-step", "-c", str(args.new), "--data", str(args.data), "--steps", str(args.steps)]
        + ["--trace", str(trace), "--json"],
        capture_output=True,
    )
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    report = json.loads(done.stdout)
    space = xplane_pb2.XSpace()
    space.ParseFromString(sorted(trace.rglob("*.xplane.pb"))[-1].read_bytes())
    plane = next(p for p in space.planes if p.name == "/host:CPU")
    name = {key: meta.name for key, meta in plane.event_metadata.items()}
    steps = sum(
        1 for line in plane.lines for e in line.events if name[e.metadata_id] == "EagerExecute" and e.duration_ps > 1e10
    )
    threads, kinds = [], collections.Counter()
    for line in plane.lines:
        if not line.name.startswith("tf_Compute") or not line.events:
            continue
        span = (max(e.offset_ps + e.duration_ps for e in line.events) - min(e.offset_ps for e in line.events)) / 1e9
        process = sum(e.duration_ps for e in line.events if name[e.metadata_id] == "ExecutorState::Process") / 1e9
        kernels = [e for e in line.events if ":" in name[e.metadata_id] and "::" not in name[e.metadata_id]]
        busy = sum(e.duration_ps for e in kernels) / 1e9
        short = sum(1 for e in kernels if e.duration_ps < 20e6)
        for e in kernels:
            kinds[name[e.metadata_id].rsplit(":", 1)[1]] += e.duration_ps / 1e9
        threads.append((span, process, busy, len(kernels), short))
    span = sum(t[0] for t in threads)
    process, busy, count, short = (sum(t[i] for t in threads) for i in (1, 2, 3, 4))
    print(f"{args.new.name}: {steps} traced steps, compute p50 {report['compute_ms']['p50']:.0f} ms a step")
    print(f"  {len(threads)} compute threads, {span:.0f} thread-ms traced:")
    print(
        f"  kernels {100 * busy / span:.0f} % ({count / max(steps, 1):,.0f} kernel runs a step, {100 * short / count:.0f} % under 20 us)"
    )
    print(
        f"  executor around them {100 * (process - busy) / span:.0f} %, idle or waiting {100 * (span - process) / span:.0f} %"
    )
    total = sum(kinds.values())
    print("  kernel time by type: " + ", ".join(f"{k} {100 * v / total:.0f} %" for k, v in kinds.most_common(8)))
    return 0


# The seeds' planted bottleneck: a tf.numpy_function loader (librosa-style), one worker, features every
# epoch, on tiny-cpu.
PLANTED = {"use_tf_native_loading": False, "num_workers": 1, "preprocessing_mode": "runtime"}


def contention(args) -> int:
    """profile-step's host contention: the planted loader against the default config, at two batch
    sizes, each in a fresh process on the bundled sample."""
    import json

    args.steps = args.steps or 30
    base = yaml.safe_load((ROOT / "configs" / "tiny-cpu.yaml").read_text(encoding="utf-8"))
    args.runs.mkdir(parents=True, exist_ok=True)
    rows = []
    for batch in (int(value) for value in args.batch_sizes.split(",")):
        for label, data in (("default (tiny-cpu)", {}), ("planted loader", PLANTED)):
            config = {section: dict(body) for section, body in base.items()}
            config["data"].update(batch_size=batch, **data)
            path = args.runs / f"contention-{batch}-{len(data)}.yaml"
            path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
            done = speech_quality.xtts(
                ["profile-step", "-c", str(path), "--steps", str(args.steps), "--json"], capture_output=True
            )
            if done.returncode:
                raise SystemExit(done.stderr[-2000:])
            report = json.loads(done.stdout)
            rows.append((label, batch, report))
    print(f"profile-step --steps {args.steps} on the bundled sample, tiny model (fresh process each)")
    print(f"{'config':20}{'batch':>6}{'input-bound %':>15}{'contention %':>14}{'step ms beside':>16}{'alone':>8}")
    for label, batch, r in rows:
        print(
            f"{label:20}{batch:6d}{r['input_bound_percent']:15.1f}{r['host_contention_percent']:14.1f}"
            f"{r['compute_ms']['p50']:16.1f}{r['resident_compute_ms']['p50']:8.1f}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=["recipe", "cores", "contention", "xla", "ops"], required=True)
    parser.add_argument("--minutes", type=float, help="--part xla: each run's budget (28)")
    parser.add_argument("--data", type=Path, default=speech_data.DEFAULT_OUT)
    parser.add_argument("--runs", type=Path, default=Path(tempfile.gettempdir()) / "xtts-cpu-scaling")
    parser.add_argument("--new", type=Path, default=ROOT / "configs" / "speak-cpu.yaml")
    parser.add_argument("--steps-at", default="500,1000,2000,4000")
    parser.add_argument("--steps", type=int, help="--part cores: 300; --part contention: 30")
    parser.add_argument(
        "--short-run", type=int, default=1100, help="also train each recipe for this many steps (0: no)"
    )
    parser.add_argument("--skip-train", action="store_true")
    parser.add_argument("--jobs", type=int, default=2, help="--part recipe: runs trained at once")
    parser.add_argument("--batch-sizes", default="16,32", help="--part contention: batch sizes")
    args = parser.parse_args(argv)
    return {"recipe": recipe, "cores": cores, "contention": contention, "xla": xla, "ops": ops}[args.part](args)


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "performance.md"))
