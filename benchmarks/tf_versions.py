#!/usr/bin/env python3
"""TensorFlow 2.16 with tensorflow-io against the newest TensorFlow without it, side by side: the input
pipeline on WAV, FLAC and MP3, and the training step.

Two virtual environments of this checkout: `--old`, TensorFlow 2.16 with the `[tfio]` extra
(tensorflow-io decodes FLAC and MP3 in the graph), and `--new`, what `pip install .` takes (libsndfile
decodes them). For each, on the same clips, in fresh processes, the two environments alternated
round by round so a machine's drift hits both alike:

- the input pipeline's clips/s (training batches of 16, default settings otherwise) on the speech
  data as WAV, FLAC and MP3 (all 22.05 kHz mono, written by libsndfile, so decoding is the difference):
  cache mode's first epoch (decoded and cached) and its later epochs (from memory), and runtime
  mode's steady epochs (decoded every epoch: what a compressed corpus costs there);
- the training step: `xtts train` with `configs/speak-cpu.yaml` on the same speech, the steps a
  second its log reports over the last stretch (`--steps` steps, validation and samples off).

Bars (issue 58): the new environment's WAV pipeline >= 0.95x the old one's; on FLAC and MP3 in cache
mode the first epoch within 1.5x of the old one's time (rate >= 0.67x) and later epochs >= 0.95x; the
step >= 0.95x. Runtime mode's compressed rates are reported, not held to a bar.

`--part wer`: what each TensorFlow learns. `speak-cpu` trained for `--wer-steps` steps (1,100: what
an AVX2 EPYC's 28 minutes hold) `--wer-runs` times in each environment, `--jobs` at a time (a step
count does not depend on what else runs), then every run's held-out sentences synthesised and
scored by pocketsphinx in this one process, so training is the only difference. Bar: the new
environment's word error rates within the old one's run-to-run spread.

Run on a quiet machine (nothing else running; about 30 minutes on 2 cores with the defaults):

    python -m venv /tmp/tf216 && /tmp/tf216/bin/pip install -e ".[tfio]"
    python benchmarks/tf_versions.py --old /tmp/tf216/bin/python --new .venv/bin/python

It writes its result into docs/tf_versions.md (`--no-doc`: print only). Needs espeak-ng and sox
(the speech data, `benchmarks/speech_data.py`); soundfile writes the FLAC and MP3 copies.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
# soundfile's (format, subtype) of each copy; its wheel's libsndfile writes MP3 through LAME, which
# sox builds often lack.
FORMATS = {"wav": ("WAV", "PCM_16"), "flac": ("FLAC", "PCM_16"), "mp3": ("MP3", "MPEG_LAYER_III")}
# Each later-epoch measurement spans at least this long (whole epochs).
LATER_SECONDS = 1.0
BARS = {
    "wav": 0.95,
    "flac cache first": 1 / 1.5,
    "mp3 cache first": 1 / 1.5,
    "flac cache later": 0.95,
    "mp3 cache later": 0.95,
    "step": 0.95,
}


def compressed_sets(speech: Path, out: Path) -> dict[str, Path]:
    """The speech data's training clips as a manifest set per format (`metadata.csv`: path,text)."""
    import soundfile

    rows = []
    for line in (speech / "metadata.csv").read_text(encoding="utf-8").splitlines():
        if line.strip():
            name, text = line.split("|")[:2]
            rows.append((speech / "wavs" / f"{name}.wav", name, text.replace('"', "")))
    sets = {}
    for ext, options in FORMATS.items():
        folder = out / ext
        if not (folder / ".complete").exists():
            shutil.rmtree(folder, ignore_errors=True)
            (folder / "audio").mkdir(parents=True)
            lines = ["path,text"]
            for wav, name, text in rows:
                audio, rate = soundfile.read(wav, dtype="float32")
                soundfile.write(folder / "audio" / f"{name}.{ext}", audio, rate, format=options[0], subtype=options[1])
                lines.append(f'audio/{name}.{ext},"{text}"')
            (folder / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
            (folder / ".complete").write_text(str(speech))
        sets[ext] = folder
    return sets


def worker(job: dict) -> dict:
    """One environment's pipeline figures on one set, in this fresh process."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data.audio_codecs import compressed_decoder
    from xtts_cli.data.run_data import prepare

    def epoch_rate(dataset, at_least: float = 0.0) -> float:
        """Clips/s over whole epochs, as many as it takes to fill `at_least` seconds."""
        began, clips = time.perf_counter(), 0
        while True:
            for batch in dataset:
                clips += int(batch["mel"].shape[0])
            if time.perf_counter() - began >= at_least:
                return clips / (time.perf_counter() - began)

    figures = {"tensorflow": tf.__version__, "decoder": compressed_decoder()}
    for mode in ("cache", "runtime"):
        config = XttsConfig(
            data={
                "dataset_path": job["path"],
                "batch_size": 16,
                "preprocessing_mode": mode,
                "scan_cache": False,
                "eval_fraction": 0.0,
            }
        )
        dataset, _ = prepare(config).pipeline()
        # A cached epoch of the speech data is read in about 20 ms: one alone is timer and
        # scheduler noise, so each later measurement runs whole epochs for a second or more.
        rates = [epoch_rate(dataset)] + [epoch_rate(dataset, LATER_SECONDS) for _ in range(job["epochs"] - 1)]
        if mode == "cache":
            figures["cache first"], figures["cache later"] = rates[0], statistics.median(rates[1:])
        else:
            figures["runtime"] = statistics.median(rates[1:])  # the first epoch also traces the graph
    return figures


def in_env(python: str, job: dict) -> dict:
    done = subprocess.run(
        [python, str(Path(__file__).resolve()), "--worker", json.dumps(job)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if done.returncode:
        raise SystemExit(f"{python}: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def train_in(python: str, config: Path, data: Path, run_dir: Path) -> str:
    """`xtts train` of this checkout in `python`'s environment, from scratch; its stderr."""
    done = subprocess.run(
        [python, "-m", "xtts_cli", "train", "-c", str(config), "--data", str(data), "-r", str(run_dir), "--fresh"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    )
    if done.returncode:
        raise SystemExit(f"{python}: {done.stderr[-3000:]}")
    return done.stderr


def step_rate(python: str, config: Path, data: Path, runs: Path) -> float:
    return [float(m) for m in re.findall(r"steps/sec: ([0-9.]+)", train_in(python, config, data, runs))][-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", help="Python of the TensorFlow 2.16 + [tfio] environment (required).")
    parser.add_argument("--new", default=sys.executable, help="Python of the newest TensorFlow's environment.")
    parser.add_argument("--speech", type=Path, default=Path(tempfile.gettempdir()) / "xtts-speech-data")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "xtts-tf-versions")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--epochs",
        type=int,
        default=4,
        help="Pipeline measurements per mode: the first epoch, then this less one of at least "
        f"{LATER_SECONDS:g} s of whole epochs each (>= 2).",
    )
    parser.add_argument("--steps", type=int, default=300, help="Training steps per step measurement.")
    parser.add_argument(
        "--part",
        choices=["all", "pipeline", "wer"],
        default="all",
        help="pipeline: the input pipeline alone, without the training step; wer: held-out word error rate "
        "after --wer-steps steps in each environment (each its own section of the page).",
    )
    parser.add_argument("--wer-steps", type=int, default=1100, help="Training steps of each --part wer run.")
    parser.add_argument("--wer-runs", type=int, default=2, help="Runs per environment in --part wer (>= 2).")
    parser.add_argument("--jobs", type=int, default=2, help="Runs trained at once in --part wer.")
    parser.add_argument("--minutes", type=float, help="Speech data to make, when --speech holds none (default 20).")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    if not args.old:
        parser.error("--old is required: the Python of a TensorFlow 2.16 environment with the [tfio] extra")
    if args.epochs < 2:
        parser.error(f"--epochs ({args.epochs}) must be at least 2: the later epochs are timed apart from the first")

    import speech_data
    import yaml

    if not (args.speech / "metadata.csv").is_file():
        speech_data.make_dataset(args.speech, **({"minutes": args.minutes} if args.minutes else {}))
    if args.part == "wer":
        return word_error_rates(args)
    sets = compressed_sets(args.speech, args.out)
    recipe = yaml.safe_load((ROOT / "configs" / "speak-cpu.yaml").read_text(encoding="utf-8"))
    every = max(1, args.steps // 3)
    recipe["training"].update(max_steps=args.steps, log_step=every, val_step=10**6, save_step=10**6, sample_step=10**6)
    recipe["training"].pop("max_minutes", None)
    config = args.out / "speak-cpu-steps.yaml"
    config.write_text(yaml.safe_dump(recipe, sort_keys=False), encoding="utf-8")

    envs = {"old": args.old, "new": args.new}
    pipeline: dict[str, dict[str, list[dict]]] = {env: {ext: [] for ext in sets} for env in envs}
    steps: dict[str, list[float]] = {env: [] for env in envs}
    for round_ in range(args.rounds):
        order = list(envs) if round_ % 2 == 0 else list(reversed(envs))
        for ext, path in sets.items():
            for env in order:
                pipeline[env][ext].append(in_env(envs[env], {"path": str(path), "epochs": args.epochs}))
        for env in order if args.part == "all" else ():
            steps[env].append(step_rate(envs[env], config, sets["wav"], args.out / f"run-{env}"))
        print(f"round {round_ + 1} of {args.rounds} done", file=sys.stderr)

    def median(env: str, ext: str, key: str) -> float:
        return statistics.median(run[key] for run in pipeline[env][ext])

    first = {env: pipeline[env]["wav"][0] for env in envs}
    print(
        f"old: TensorFlow {first['old']['tensorflow']}, compressed audio by {first['old']['decoder']}; "
        f"new: TensorFlow {first['new']['tensorflow']}, by {first['new']['decoder']}"
    )
    clips = len((sets["wav"] / "metadata.csv").read_text(encoding="utf-8").splitlines()) - 1
    print(
        f"{clips} clips of the speech data (22.05 kHz mono), batch 16; medians of {args.rounds} rounds, "
        f"{args.epochs} measurements each (later epochs over {LATER_SECONDS:g} s or more)"
        + (
            f"; steps/s: speak-cpu, {args.steps} steps"
            if args.part == "all"
            else "; the step not run (--part pipeline)"
        )
    )
    print(f"\n{'figure':<26} {'old':>10} {'new':>10} {'new/old':>8} {'bar':>6}")
    rows = []
    for ext in sets:
        for key, label in (
            ("cache first", "cache, 1st epoch"),
            ("cache later", "cache, later"),
            ("runtime", "runtime"),
        ):
            rows.append((f"{ext} {label}", median("old", ext, key), median("new", ext, key), f"{ext} {key}"))
    if args.part == "all":
        rows.append(
            ("training step (steps/s)", statistics.median(steps["old"]), statistics.median(steps["new"]), "step")
        )
    failed = []
    for label, old, new, key in rows:
        ratio = new / old
        bar = BARS["wav"] if key.startswith("wav") else BARS.get(key)  # WAV: every row, runtime included
        mark = "" if bar is None else (f">={bar:.2f}" if ratio >= bar else f"<{bar:.2f}!")
        if bar is not None and ratio < bar:
            failed.append(label)
        digits = 2 if key == "step" else 1
        print(f"{label:<26} {old:>10,.{digits}f} {new:>10,.{digits}f} {ratio:>7.2f}x {mark:>6}")
    print(
        "\nclips/s unless named; a first epoch includes building and tracing the pipeline; runtime mode decodes "
        "every clip every epoch (compressed: reported, no bar)"
    )
    print("bars missed: " + (", ".join(failed) if failed else "none"))
    return 0


def word_error_rates(args) -> int:
    """`--part wer`: both environments train the same runs; this process scores them all."""
    from concurrent.futures import ThreadPoolExecutor

    import cpu_scaling
    import yaml

    from xtts_cli.evaluation.recognizer import Recognizer

    if args.wer_runs < 2:
        raise SystemExit(f"--wer-runs ({args.wer_runs}) must be at least 2: one run has no spread")
    recipe = yaml.safe_load((ROOT / "configs" / "speak-cpu.yaml").read_text(encoding="utf-8"))
    recipe["training"].update(sample_step=10**6)
    args.out.mkdir(parents=True, exist_ok=True)
    config = cpu_scaling.scored_variant(recipe, args.out / "speak-cpu-wer.yaml", [args.wer_steps])
    envs = {"old": args.old, "new": args.new}
    runs = [(env, args.out / f"wer-{env}-{index}") for index in range(args.wer_runs) for env in envs]

    def train(run) -> tuple[str, float]:
        env, run_dir = run
        began = time.perf_counter()
        train_in(envs[env], config, args.speech, run_dir)
        print(
            f"{run_dir.name}: {args.wer_steps} steps in {(time.perf_counter() - began) / 60:.1f} min", file=sys.stderr
        )
        return env, time.perf_counter() - began

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(train, runs))
    recognizer = Recognizer((args.speech / "sentences.jsgf").read_text(encoding="ascii"))
    rates: dict[str, list[float]] = {env: [] for env in envs}
    for env, run_dir in runs:
        rates[env].append(
            cpu_scaling.word_error_rates(run_dir, args.speech, [args.wer_steps], recognizer)[args.wer_steps]
        )
    versions = {
        env: subprocess.run(
            [python, "-c", "import tensorflow as tf; print(tf.__version__)"],
            capture_output=True,
            text=True,
            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
        ).stdout.strip()
        for env, python in envs.items()
    }
    sentences = len((args.speech / "heldout.txt").read_text(encoding="utf-8").splitlines())
    print(
        f"held-out WER (sentence grammar) of speak-cpu after {args.wer_steps:,} steps, {sentences} sentences, "
        f"{args.wer_runs} runs per environment, all scored in one process"
    )
    print(f"{'environment':<28} " + " ".join(f"{'run ' + str(i + 1):>7}" for i in range(args.wer_runs)) + "   spread")
    for env in envs:
        label = f"{env}: TensorFlow {versions[env]}"
        print(
            f"{label:<28} "
            + " ".join(f"{rate:7.3f}" for rate in rates[env])
            + f"   {min(rates[env]):.3f}-{max(rates[env]):.3f}"
        )
    low, high = min(rates["old"]), max(rates["old"])
    inside = all(low <= rate <= high for rate in rates["new"])
    # Within the spread: each new run inside the old runs' range, or the two ranges overlapping.
    overlap = min(rates["new"]) <= high and max(rates["new"]) >= low
    print(
        f"new within the old runs' spread: {'yes' if inside else 'no'}; the two spreads overlap: "
        f"{'yes' if overlap else 'no'} (bar: within the run-to-run spread)"
    )
    return 0


if __name__ == "__main__":
    if "--worker" in sys.argv:
        raise SystemExit(main())
    from results_page import publish

    raise SystemExit(publish(main, "tf_versions.md"))
