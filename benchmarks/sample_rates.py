#!/usr/bin/env python3
"""Corpora at other sample rates: the resampler alone and in the runtime pipeline, before and after.

LibriTTS is 24 kHz WAV, VCTK 48 kHz FLAC, Common Voice 48 kHz MP3; the model trains at
`data.sample_rate` (22.05 kHz by default), so each of their clips is resampled as it is decoded.
This builds, under --out, one manifest-layout set per format from the clips of --source (an
LJSpeech-layout folder; default: the bundled sample), converted by sox. Then it prints, per format:

- the resampler alone, ms of one core per clip: a map (2 parallel calls) over the set's clips,
  decoded and held in memory at their own rate. It is timed with the filter's weights computed per output
  sample (`_resample_direct`, what a rate pair without a small period matrix gets; tensorflow-io's
  speex kernel held this place before) and with the polyphase filter
  (`xtts_cli.data.audio.polyphase_resampler`, what the pipeline uses for the rates it knows);
- the runtime pipeline's samples/s with each (training batches, default settings otherwise), and
  the polyphase rate against the 22.05 kHz WAV set, which needs no resampling;
- how close each resampler comes to soxr (the `soxr` package, librosa's `soxr_hq`, from the test
  extra; skipped without it): the correlation at the best lag, and that lag in samples. Also the loudest alias (dB) that
  tones between the new Nyquist frequency and the old one leave in the output.

Each figure comes from a fresh process. Kernel and polyphase jobs alternate, --rounds times, and
the median is printed: this machine's speed drifts between jobs.

Usage:
    python benchmarks/sample_rates.py [--source DIR] [--out DIR] [--rounds 2] [--seconds 8]
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "xtts_cli" / "data" / "sample"
# name: (file extension, sox options, what it stands for)
FORMATS = {
    "wav 22.05 kHz": ("wav", ["-r", "22050"], "LJSpeech: no resampling"),
    "wav 24 kHz": ("wav", ["-r", "24000"], "LibriTTS"),
    "wav 16 kHz": ("wav", ["-r", "16000"], "16 kHz corpora"),
    "wav 44.1 kHz": ("wav", ["-r", "44100"], "studio recordings"),
    "wav 48 kHz": ("wav", ["-r", "48000"], "VCTK's older wav48"),
    "flac 48 kHz": ("flac", ["-r", "48000"], "VCTK 0.92"),
    "mp3 48 kHz": ("mp3", ["-r", "48000", "-C", "48"], "Common Voice"),
}


def build_sets(source: Path, out: Path) -> dict[str, Path]:
    """One manifest set per format (`metadata.csv`: path,text), converted from `source` by sox once."""
    rows = []
    for line in (source / "metadata.csv").read_text(encoding="utf-8").splitlines():
        if line.strip():
            name, text = line.split("|")[:2]
            rows.append((source / "wavs" / f"{name}.wav", name, text.replace('"', "")))
    sets = {}
    for label, (ext, options, _) in FORMATS.items():
        folder = out / label.replace(" ", "-")
        if not (folder / ".complete").exists():
            shutil.rmtree(folder, ignore_errors=True)
            (folder / "audio").mkdir(parents=True)
            lines = ["path,text"]
            for wav, name, text in rows:
                made = subprocess.run(
                    ["sox", str(wav), *options, str(folder / "audio" / f"{name}.{ext}")], capture_output=True, text=True
                )
                if made.returncode != 0:
                    print(f"{label}: skipped, sox cannot write it ({made.stderr.strip().splitlines()[-1]})")
                    break
                lines.append(f'audio/{name}.{ext},"{text}"')
            else:
                (folder / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
                (folder / ".complete").write_text(str(source))
        if (folder / ".complete").exists():
            sets[label] = folder
    return sets


def worker(job: dict) -> dict:
    """One measurement, in this (fresh) process."""
    import numpy as np

    from xtts_cli.data import audio
    from xtts_cli.data.audio import resample
    from xtts_cli.data.run_data import prepare

    if job.get("direct"):
        audio.MAX_RESAMPLE_WEIGHTS = 0  # no rate pair gets a matrix: every one goes to the per-sample filter
    import tensorflow as tf

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data.pipeline import decoded_audio_dataset

    config = XttsConfig(data={"dataset_path": job["path"], "preprocessing_mode": "runtime", "scan_cache": False})
    run_data = prepare(config)
    scan = run_data.scan
    rate = scan.items[0].audio.sample_rate
    target = config.data.sample_rate
    at_own_rate = config.model_copy(update={"data": config.data.model_copy(update={"sample_rate": rate})})
    clips = [element["audio"].numpy() for element in decoded_audio_dataset(at_own_rate, scan.items)]

    if job["kind"] == "accuracy":
        return accuracy(clips, rate, target)

    def timed(iterator, each: int, minimum: float) -> float:
        """Items per second drawn from `iterator` over at least `minimum` seconds (and 5 draws)."""
        began, count = time.perf_counter(), 0
        while count < 5 * each or time.perf_counter() - began < minimum:
            next(iterator)
            count += each
        return count / (time.perf_counter() - began)

    result = {"rate": rate}
    if rate != target:
        lengths = np.asarray([len(clip) for clip in clips], dtype=np.int64)
        ragged = tf.RaggedTensor.from_row_lengths(np.concatenate(clips).astype(np.float32), lengths)
        decoded = tf.data.Dataset.from_tensor_slices(ragged)
        alone = decoded.repeat().map(lambda wave: resample(wave, rate, target), num_parallel_calls=2)
        iterator = iter(alone)
        for _ in range(8):
            next(iterator)
        result["ms_per_clip"] = 2 * 1000 / timed(iterator, 1, job["seconds"] / 2)  # two calls at once
        del iterator
    plan = run_data.plan(items=scan.train)  # the scan's training share, as before
    dataset, _ = run_data.pipeline(plan=plan)
    iterator = iter(dataset.repeat())
    for _ in range(5):
        next(iterator)
    result["samples_s"] = timed(iterator, config.data.batch_size, job["seconds"])
    result["mean_seconds"] = float(np.mean([len(clip) / rate for clip in clips]))
    return result


def accuracy(clips, rate: int, target: int) -> dict:
    """Each resampler against soxr (correlation, lag), and the loudest alias of tones above the new Nyquist."""
    import numpy as np
    import tensorflow as tf

    from xtts_cli.data import audio

    def convert(wave, direct: bool):
        if direct:
            return audio._resample_direct(tf.constant(wave, tf.float32), tf.constant(rate, tf.int64), target).numpy()
        return audio.resample(tf.constant(wave, tf.float32), rate, target).numpy()

    result: dict = {}
    try:
        import soxr
    except ImportError:
        soxr = None
    for name, direct in (("direct", True), ("polyphase", False)):
        figures: dict = {}
        if soxr is not None:
            pairs = []
            for wave in clips[:20]:
                ours = convert(wave, direct)
                pairs.append(best_lag(ours, soxr.resample(wave, rate, target, quality="HQ"), 80))
            figures["correlation"] = min(c for c, _ in pairs)
            figures["lags"] = sorted({lag for _, lag in pairs})
        if rate > target:
            t = np.arange(2 * rate) / rate
            nyquist = target / 2
            worst = -300.0
            for freq in np.linspace(nyquist * 1.001, rate / 2 * 0.99, 12):
                out = convert(np.sin(2 * np.pi * freq * t), direct)[400:-400]
                worst = max(worst, 20 * np.log10(np.sqrt(2 * np.mean(out**2)) + 1e-15))
            figures["alias_db"] = float(worst)  # a NumPy float32 is no JSON number
        result[name] = figures
    return result


def best_lag(a, b, reach: int) -> tuple[float, int]:
    import numpy as np

    def corr(lag):
        x, y = (a[lag:], b) if lag >= 0 else (a, b[-lag:])
        n = min(len(x), len(y))
        return float(np.dot(x[:n], y[:n]) / (np.linalg.norm(x[:n]) * np.linalg.norm(y[:n]) + 1e-30))

    return max((corr(lag), lag) for lag in range(-reach, reach + 1))


def run(job: dict) -> dict:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(
        [sys.executable, __file__, "--worker", json.dumps(job)], env=env, capture_output=True, text=True, cwd=ROOT
    )
    if done.returncode != 0:
        raise SystemExit(f"{job} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=SAMPLE)
    parser.add_argument("--out", type=Path, default=Path("/tmp/xtts-sample-rates"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=8.0, help="timed seconds per pipeline figure")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    if shutil.which("sox") is None:
        raise SystemExit("sox is needed to make the sets: apt-get install sox (and libsox-fmt-mp3 for MP3)")
    sets = build_sets(args.source, args.out)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; source {args.source}; {args.rounds} rounds")
    figures: dict[str, dict] = {label: {"direct": [], "polyphase": []} for label in sets}
    for _ in range(args.rounds):
        for label, path in sets.items():
            for name in ("direct", "polyphase") if "22.05" not in label else ("polyphase",):
                job = {"kind": "speed", "path": str(path), "seconds": args.seconds, "direct": name == "direct"}
                figures[label][name].append(run(job))
    reference = statistics.median(r["samples_s"] for r in figures["wav 22.05 kHz"]["polyphase"])
    print(
        f"\n{'format':<14} {'stands for':<22} {'resample ms/clip':>20} {'runtime pipeline samples/s':>34}"
        f"\n{'':<14} {'':<22} {'direct':>8} {'polyphase':>10} {'direct':>9} {'polyphase':>10} {'x':>6} {'/22.05':>7}"
    )
    for label in sets:
        direct, poly = figures[label]["direct"], figures[label]["polyphase"]
        rate = statistics.median(r["samples_s"] for r in poly)
        line = f"{label:<14} {FORMATS[label][2]:<22} "
        if direct:
            before = statistics.median(r["samples_s"] for r in direct)
            alone = [statistics.median(r["ms_per_clip"] for r in runs) for runs in (direct, poly)]
            line += f"{alone[0]:>8.1f} {alone[1]:>10.2f} {before:>9.0f} {rate:>10.0f} {rate / before:>5.1f}x"
        else:
            line += f"{'-':>8} {'-':>10} {'-':>9} {rate:>10.0f} {'':>6}"
        print(f"{line} {rate / reference:>6.2f}x   (clips of {poly[0]['mean_seconds']:.1f} s on average)")
    print(
        "\nagainst soxr (HQ, librosa's soxr_hq): lowest correlation over 20 clips, lags; loudest alias above the new Nyquist"
    )
    for label, path in sets.items():
        if "22.05" in label:
            continue
        result = run({"kind": "accuracy", "path": str(path)})
        parts = []
        for name in ("direct", "polyphase"):
            f = result[name]
            corr = (
                f"corr {f['correlation']:.6f} lag {','.join(map(str, f['lags']))}" if "correlation" in f else "no soxr"
            )
            alias = f", alias {f['alias_db']:.0f} dB" if "alias_db" in f else ""
            parts.append(f"{name}: {corr}{alias}")
        print(f"{label:<14} " + "; ".join(parts))


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "performance.md"))
