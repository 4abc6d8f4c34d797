"""The input pipeline side by side, in one run, on the same clips: TF-native vs the tf.numpy_function
baselines (ours, and librosa as users had it), vs the compute bound, cached / precomputed vs runtime,
bucketing vs fixed padding.

Run: python benchmarks/data_pipeline.py [--data-path DIR] [--repeat N] [--batch-size 16] [--rounds 5]
Default data: the bundled sample repeated x6 (240 clips, mean 2.35 s). The project's bars are stated
on 240 clips of mean ~5.5 s (docs/PERFORMANCE.md): make them with
`python benchmarks/make_reference_data.py` (espeak-ng + sox) and pass `--data-path
/tmp/xtts-reference-data`. About 3-6 minutes on 2 cores. The librosa rows need `pip install librosa` (not in any extra:
with it, Keras imports scikit-learn in every process); without it they are skipped and the script
says so.

Method: every case is built once. An untimed round warms them all (tracing, the page cache, cache
fills, precomputed files); then `--rounds` rounds each draw about one pass over the clips from every
case in turn, so drift on a noisy machine hits all cases alike. Each draw uses a fresh iterator,
untimed until its first element, and is closed before the next case runs: an iterator left open
keeps filling its prefetch buffers in the background, stealing the other cases' cores and then
serving its next draw from memory. Rates are medians over rounds; a ratio is the median of its
per-round ratios (the compute bound runs right before the runtime pipeline); compare only ratios.
Bars (docs/PERFORMANCE.md): TF-native runtime >= 2.5x the numpy_function baseline and >= 90 % of
the compute bound; cached or precomputed epoch >= 30x runtime; bucketing >= 85 % padding
efficiency and >= 1.5x the real mel frames/s of padding to max_mel_frames; the frames/s half
of that bar is measured through the training step (`benchmarks/training_step.py --only padding`),
where padding costs: the input pipeline alone is shown here for comparison.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@dataclass
class Case:
    name: str
    group: str  # "clip": per-clip features; "batch": training batches
    make: Callable[[], object]  # -> an endless tf.data.Dataset (built lazily, once)
    dataset: object = None
    rates: list[float] = field(default_factory=list)  # samples/s per round
    frame_rates: list[float] = field(default_factory=list)  # real mel frames/s per round
    real: int = 0
    padded: int = 0
    setup_seconds: float = 0.0


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    import numpy
    import tensorflow as tf

    try:
        tfio = f"tensorflow-io {version('tensorflow-io')}"
    except PackageNotFoundError:
        tfio = "no tensorflow-io"
    parts = [
        f"python {platform.python_version()}",
        f"tensorflow {tf.__version__}",
        tfio,
        f"numpy {numpy.__version__}",
    ]
    try:
        import librosa

        parts.append(f"librosa {librosa.__version__}")
    except ImportError:
        parts.append("librosa missing")
    return ", ".join(parts)


def librosa_loader(data):
    """The users' "before": librosa.load + librosa.feature.melspectrogram in a tf.numpy_function,
    with the settings our features use (magnitude mels, the same filterbank, centred reflect framing)."""
    import librosa
    import numpy as np

    def load(path):
        audio, _ = librosa.load(path.decode("utf-8"), sr=data.sample_rate, mono=True)
        mel = librosa.feature.melspectrogram(
            y=audio,
            sr=data.sample_rate,
            n_fft=data.n_fft,
            hop_length=data.hop_length,
            win_length=data.win_length,
            window="hann",
            center=True,
            pad_mode="reflect",
            power=1.0,
            n_mels=data.n_mels,
            fmin=data.fmin,
            fmax=data.fmax,
            htk=data.mel_filterbank == "htk",
            norm="slaney" if data.mel_filterbank == "slaney" else None,
        )
        return np.log(np.maximum(mel, 1e-5)).T.astype(np.float32)

    return load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", help="Dataset root (default: the bundled sample).")
    parser.add_argument(
        "--repeat", type=int, help="Use the clips this many times (default: 6 for the bundled sample, else 1)."
    )
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    import tensorflow as tf

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data.audio_codecs import CODECS
    from xtts_cli.data.features import log_mel
    from xtts_cli.data.pipeline import (
        audio_formats,
        decoded_audio_dataset,
        feature_stage,
        parallel_calls,
        source_columns,
    )
    from xtts_cli.data.run_data import prepare

    try:
        import librosa  # noqa: F401

        have_librosa = True
    except ImportError:
        have_librosa = False

    repeat = args.repeat or (6 if args.data_path is None else 1)
    base = XttsConfig(
        data={"dataset_path": args.data_path, "batch_size": args.batch_size, "preprocessing_mode": "runtime"}
    )
    data = base.data
    run_data = prepare(base)
    scan = run_data.scan
    items = list(scan.items) * repeat  # every clip, the held-out share too, `repeat` times: the timed clips
    formats = audio_formats(items)
    parallel = parallel_calls(data.num_workers)
    cache_dir = tempfile.TemporaryDirectory(prefix="xtts-bench-features-")

    def with_data(**changes) -> XttsConfig:
        return base.model_copy(update={"data": data.model_copy(update=changes)})

    def per_clip(stage, native: bool = True):
        source = tf.data.Dataset.from_tensor_slices(source_columns(items, formats.codecs if native else CODECS))
        return source.repeat().map(stage, num_parallel_calls=parallel, deterministic=False)

    def clips_librosa():
        load = librosa_loader(data)
        paths = tf.data.Dataset.from_tensor_slices([item.audio_path for item in items]).repeat()
        return paths.map(
            lambda p: tf.ensure_shape(tf.numpy_function(load, [p], tf.float32, stateful=False), [None, data.n_mels]),
            num_parallel_calls=parallel,
            deterministic=False,
        )

    def batches_librosa():
        # The users' shape: per-clip loader, padded to the batch's longest clip, prefetch.
        mels = clips_librosa().map(lambda mel: {"mel": mel, "mel_lengths": tf.shape(mel)[0]})
        return mels.padded_batch(data.batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)

    def compute_bound():
        audio = decoded_audio_dataset(base, items)
        return audio.repeat().map(
            lambda element: log_mel(element["audio"], data), num_parallel_calls=parallel, deterministic=False
        )

    def pipeline(**changes):
        return lambda: run_data.with_config(with_data(**changes)).pipeline(items=items)[0].repeat()

    cases = [
        Case("librosa load + mel in tf.numpy_function (before)", "clip", clips_librosa),
        Case(
            "numpy_function baseline (ours)",
            "clip",
            lambda: per_clip(feature_stage(with_data(use_tf_native_loading=False).data, "mel", formats), native=False),
        ),
        Case("TF-native map (read, decode, mel)", "clip", lambda: per_clip(feature_stage(data, "mel", formats))),
        Case("librosa numpy_function + padded_batch (before)", "batch", batches_librosa),
        Case("numpy_function baseline pipeline (ours)", "batch", pipeline(use_tf_native_loading=False)),
        Case("compute bound: mel of audio decoded in memory", "clip", compute_bound),
        Case("TF-native pipeline, runtime", "batch", pipeline()),
        Case("TF-native pipeline, cache (epoch 2+)", "batch", pipeline(preprocessing_mode="cache")),
        Case(
            "TF-native pipeline, precompute (epoch 2+)",
            "batch",
            pipeline(preprocessing_mode="precompute", feature_cache_dir=cache_dir.name),
        ),
        Case(
            "TF-native pipeline, cache, fixed padding",
            "batch",
            pipeline(preprocessing_mode="cache", pad_to_fixed_length=True, bucket_by_length=False),
        ),
    ]
    if not have_librosa:
        cases = [case for case in cases if not case.name.startswith("librosa")]

    print(f"machine: {cpu_model()}, {os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable)")
    print(f"versions: {versions()}")
    if not have_librosa:
        print("librosa is not installed: the librosa rows are skipped (pip install -e '.[test]' adds it)")
    seconds = sum(item.audio.duration for item in items)
    print(
        f"data: {scan.dataset_path} x{repeat} = {len(items)} clips, {seconds / 60:.1f} min of audio "
        f"(mean {seconds / len(items):.2f} s); batch {data.batch_size}, {data.sample_rate} Hz, {data.n_mels} mels, "
        f"n_fft {data.n_fft}, hop {data.hop_length}, num_workers {data.num_workers}"
    )
    print(
        f"method: one untimed round, then {args.rounds} interleaved rounds of ~{len(items)} samples per case; "
        "rates: medians; ratios: medians of per-round ratios",
        flush=True,
    )

    def draw(case: Case, samples: int) -> tuple[int, int, int, float]:
        iterator = iter(case.dataset)
        next(iterator)  # iterator start-up (threads, first buffers) is not throughput
        count = real = padded = 0
        start = time.perf_counter()
        while count < samples:
            element = next(iterator)
            if case.group == "clip":
                frames = element.numpy()
                count += len(frames)
                real += int(frames.sum())
                padded += int(frames.sum())
            else:
                lengths = element["mel_lengths"].numpy()
                count += len(lengths)
                real += int(lengths.sum())
                padded += int(element["mel"].shape[0] * element["mel"].shape[1])
        elapsed = time.perf_counter() - start
        del iterator  # stops its background threads before the next case runs
        return count, real, padded, elapsed

    for case in cases:
        start = time.perf_counter()
        dataset = case.make()
        if case.group == "clip":
            # Frame counts only, 16 per next(): a Python call per clip would cost more than reading it.
            dataset = dataset.map(lambda mel: tf.shape(mel)[0]).batch(16)
        case.dataset = dataset
        # Warm-up: one pass (fills the cache, warms librosa and the page cache).
        draw(case, len(items))
        case.setup_seconds = time.perf_counter() - start
        print(f"  warm: {case.name} ({case.setup_seconds:.1f} s)", file=sys.stderr, flush=True)
    for _ in range(args.rounds):
        for case in cases:
            # Cached cases are ~50x faster: draw more so each timing spans tens of milliseconds.
            samples = len(items) * (10 if "cache" in case.name or "precompute" in case.name else 1)
            count, real, padded, elapsed = draw(case, samples)
            case.rates.append(count / elapsed)
            case.frame_rates.append(real / elapsed)
            case.real += real
            case.padded += padded

    def rate(name: str) -> Optional[float]:
        case = next((c for c in cases if c.name == name), None)
        return statistics.median(case.rates) if case else None

    def ratio(name: str, reference: str) -> tuple[float, float, float]:
        """Median, min and max over rounds of the two cases' speed ratio within each round: a
        round's two draws run a few seconds apart, so the machine's drift mostly cancels."""
        a, b = (next(c for c in cases if c.name == n).rates for n in (name, reference))
        ratios = [x / y for x, y in zip(a, b)]
        return statistics.median(ratios), min(ratios), max(ratios)

    def frames(name: str) -> float:
        return statistics.median(next(c for c in cases if c.name == name).frame_rates)

    def efficiency(name: str) -> float:
        case = next(c for c in cases if c.name == name)
        return case.real / case.padded

    for group, title, reference in (
        ("clip", "per-clip features, clips/s", "numpy_function baseline (ours)"),
        ("batch", "training batches (bucketed unless said), samples/s", "numpy_function baseline pipeline (ours)"),
    ):
        print(f"\n{title:58} {'median':>9} {'min-max':>17} {'vs ours np':>10}")
        for case in (c for c in cases if c.group == group):
            median = statistics.median(case.rates)
            spread = f"{min(case.rates):,.0f}-{max(case.rates):,.0f}"
            print(f"  {case.name:56} {median:9,.0f} {spread:>17} {median / rate(reference):9.2f}x")

    native = "TF-native pipeline, runtime"
    native_map = "TF-native map (read, decode, mel)"
    bound = "compute bound: mel of audio decoded in memory"
    print("\nratios (same run, same clips; median of the per-round ratios, min-max)")
    rows = [
        (
            "TF-native pipeline / numpy_function pipeline (ours)",
            native,
            "numpy_function baseline pipeline (ours)",
            ">= 2.5x",
        )
    ]
    if have_librosa:
        rows.append(
            (
                "TF-native pipeline / librosa pipeline (before)",
                native,
                "librosa numpy_function + padded_batch (before)",
                "",
            )
        )
        rows.append(
            (
                "TF-native map / librosa map (per clip)",
                native_map,
                "librosa load + mel in tf.numpy_function (before)",
                "",
            )
        )
    rows += [
        ("TF-native map / numpy_function map (ours, per clip)", native_map, "numpy_function baseline (ours)", ""),
        ("TF-native pipeline / compute bound", native, bound, ">= 0.90x"),
        ("TF-native map / compute bound (per clip)", native_map, bound, ""),
        ("cached epoch / runtime epoch (speed)", "TF-native pipeline, cache (epoch 2+)", native, ">= 30x"),
        ("precomputed epoch / runtime epoch (speed)", "TF-native pipeline, precompute (epoch 2+)", native, ">= 30x"),
    ]
    for label, name, reference, bar in rows:
        median, low, high = ratio(name, reference)
        print(f"  {label:58} {median:8.2f}x  ({low:.2f}-{high:.2f})  {('bar ' + bar) if bar else ''}")

    bucketed, fixed = "TF-native pipeline, cache (epoch 2+)", "TF-native pipeline, cache, fixed padding"
    print(f"\npadding (cache mode, batch {data.batch_size}, max_mel_frames {data.max_mel_frames})")
    for name, label in (
        (bucketed, f"bucketed ({data.num_buckets} buckets)"),
        (fixed, "fixed: every batch padded to max_mel_frames"),
    ):
        print(f"  {label:58} efficiency {efficiency(name):6.1%}   real mel frames/s {frames(name):12,.0f}")
    print(
        f"  {'bucketed / fixed, real mel frames/s, input pipeline alone':58} {frames(bucketed) / frames(fixed):8.2f}x  "
        "(the bar is through the step: benchmarks/training_step.py --only padding)"
    )
    setup = next(c for c in cases if "precompute" in c.name).setup_seconds
    print(
        f"\nprecompute: building the pipeline (features computed and written to a temp dir) and one pass took "
        f"{setup:.1f} s; cache: the warm-up pass filled it, the timed passes read memory"
    )
    cache_dir.cleanup()
    sys.stdout.flush()


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "performance.md"))
