"""Where the input pipeline's time goes, measured on the real pipeline over the real files.

`profile_pipeline` builds the training pipeline exactly as `xtts train` does (`RunData.pipeline`
over the epoch's clips, `data/run_data.py`) and times `next(iterator)` with nothing else in the loop.
With no training step to hide behind, every wait is the time the pipeline needs to make that batch:
the figures are the most the pipeline can deliver, which is what a GPU step has to be slower than
for the GPU never to idle (compare with `xtts profile-step`).

What it reports, all measured in one run on the same items:
- per-batch latency (ms blocked in next()) after `warmup` batches, its p50/p95/p99/max, CV and any
  cycle in it (`detect_oscillation`; period in batches and in seconds = period x mean latency);
- throughput per sample, per second of audio and per real mel frame (from `mel_lengths`);
- padding efficiency and distinct batch shapes on the batches drawn, next to the plan's figures;
- a stage breakdown: read, + decode, + log-mel, full pipeline, run cumulatively on the same items
  at the configured parallelism, so the difference between two rows is the cost the later stage adds;
- optionally the `tf.numpy_function` baseline (`use_tf_native_loading: false`) on the same items.

`sweep` ranks a small grid of pipeline settings by samples/s (see SWEEP_* below).
No printing here: progress goes through the `progress` callback, results are pydantic objects.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, Optional

import tensorflow as tf
from pydantic import BaseModel, Field

from xtts_cli.config.loading import data_variant
from xtts_cli.config.schema import XttsConfig
from xtts_cli.data.pipeline import PipelineInfo
from xtts_cli.data.plan import PipelinePlan, gigabytes
from xtts_cli.data.run_data import RunData
from xtts_cli.data.scan import DatasetItem, ScanReport
from xtts_cli.errors import XttsError
from xtts_cli.kinds import run_data_of
from xtts_cli.profiling.padding import padding_finding
from xtts_cli.stats.latency import LatencyStats, summarize
from xtts_cli.stats.oscillation import detect_oscillation
from xtts_cli.training.signals import HeldCtrlC

Progress = Optional[Callable[[str], None]]
StageName = Literal["read", "decode", "features", "batch"]

STAGE_DESCRIPTIONS: dict[str, str] = {
    "read": "read_file",
    "decode": "+ decode_audio",
    "features": "+ log_mel",
    "batch": "+ shuffle, bucket, pad, batch (full pipeline)",
}

# The sweep grid. Parallelism and prefetch are the two knobs tf.data documents for input-bound
# training (https://www.tensorflow.org/guide/data_performance); batch size changes how far per-batch
# costs are spread; cache vs runtime is the feature computation paid once or every epoch.
# 3 x 3 x 3 x 2 = 54 cells. `precompute` is left out: it writes to disk and, once written, reads
# back at about the speed of `cache` (benchmarks/data_pipeline.py measures both).
SWEEP_PARALLELISM: tuple[int | str, ...] = (1, 2, "auto")
SWEEP_PREFETCH: tuple[int | str, ...] = (0, 2, "auto")
SWEEP_BATCH_SIZES: tuple[int, ...] = (8, 16, 32)
SWEEP_MODES: tuple[str, ...] = ("runtime", "cache")
# Each cell times at least this many samples (a multiple of every batch size above, so every cell
# draws whole batches) and for at least SWEEP_MIN_SECONDS (128 cached samples take ~15 ms, too short
# to time on a noisy machine), after one untimed batch; cache cells first draw a whole epoch.
SWEEP_SAMPLES = 128
SWEEP_MIN_SECONDS = 0.3
# Re-measured best / current below this is a tie on our machines: no change is recommended.
SWEEP_TIE = 1.15
# Cells run on at most this many items (evenly spaced through the scan order), so the cache
# warm-up of 27 cells stays short on a large corpus; the bundled sample (40 clips) is used whole.
SWEEP_MAX_ITEMS = 256


class BadFile(BaseModel):
    path: Optional[str] = Field(None, description="Audio path; empty when the metadata line names none.")
    reason: str = Field(description="Why it was left out (a scan reason code: corrupt_header, text_too_long, ...).")
    detail: str = Field(description="The particulars, in words.")
    source: str = Field(description="metadata file:line.")


class OscillationSummary(BaseModel):
    detected: bool = Field(description="The batch latencies repeat a cycle (the 2-40 % GPU swing's signature).")
    period_batches: Optional[float] = Field(None, description="Its period in batches; empty: none.")
    period_seconds: Optional[float] = Field(None, description="period_batches x mean latency.")
    strength: float = Field(0.0, description="The autocorrelation at that period (0-1).")
    reason: str = Field("", description="Why it is, or is not, called an oscillation.")


class BatchMeasurement(BaseModel):
    """What `measure_batches` saw on the timed batches (warm-up batches left out)."""

    batches: int
    samples: int
    seconds: float = Field(description="Wall time of the timed loop.")
    latency_series_ms: list[float] = Field(description="Time blocked in next(), per timed batch, in order.")
    latency_ms: LatencyStats
    cv: float
    samples_per_sec: float
    audio_seconds_per_sec: float = Field(description="Seconds of real audio (unpadded) delivered per second.")
    mel_frames_per_sec: float = Field(description="Real mel frames (sum of mel_lengths) delivered per second.")
    padding_efficiency: float = Field(description="Real mel frames / padded mel frames over the timed batches.")
    distinct_shapes: int = Field(description="Distinct batch shapes (all tensors, batch dimension included).")
    oscillation: OscillationSummary


class StageTiming(BaseModel):
    name: StageName = Field(
        description="The stage: read, decode, features or batch (each includes the ones before it)."
    )
    description: str = Field(description="What the stage does, in words.")
    samples: int = Field(description="Clips timed through it.")
    seconds: float = Field(description="Wall time of those.")
    samples_per_sec: float = Field(description="Clips a second through the pipeline up to this stage.")
    ms_per_sample: float = Field(
        description="Wall time per sample at the configured parallelism (1000 / samples_per_sec)."
    )
    incremental_ms_per_sample: float = Field(
        description="ms_per_sample minus the previous stage's: what this stage adds. Noise can make it slightly negative."
    )


class BaselineComparison(BaseModel):
    samples_per_sec: float = Field(
        description="The tf.numpy_function pipeline (use_tf_native_loading: false), runtime mode."
    )
    native_samples_per_sec: float = Field(description="The TF-native pipeline, runtime mode, same items and batches.")
    speedup: float = Field(description="native_samples_per_sec / samples_per_sec.")
    latency_ms: LatencyStats = Field(description="The tf.numpy_function pipeline's batch latencies, ms.")
    native_latency_ms: Optional[LatencyStats] = Field(
        None, description="The TF-native pipeline's batch latencies, ms (runtime mode, the same items)."
    )


class SweepCell(BaseModel):
    num_workers: int | str = Field(description="data.num_workers of the cell.")
    prefetch_buffer_size: int | str = Field(description="data.prefetch_buffer_size of the cell.")
    batch_size: int = Field(description="data.batch_size of the cell.")
    preprocessing_mode: str = Field(description="data.preprocessing_mode of the cell.")
    samples: int = Field(description="Clips timed.")
    seconds: float = Field(description="Wall time of those.")
    samples_per_sec: float = Field(description="Clips a second.")
    current: bool = Field(False, description="These are the settings of the config profiled.")


class SweepBest(BaseModel):
    change: dict[str, Any] = Field(description="Dotted config keys -> values; empty when the current settings won.")
    samples_per_sec: float = Field(
        description="The best cell's settings, re-timed side by side with the current ones: clips a second."
    )
    current_samples_per_sec: float = Field(description="The current settings, in the same side-by-side timing.")
    speedup: float = Field(description="Best / current, re-measured side by side after the grid.")
    worth_changing: bool = Field(description=f"speedup >= {SWEEP_TIE}; below that the two are a tie.")


class SweepReport(BaseModel):
    cells: list[SweepCell] = Field(description="Ranked by samples/s, fastest first.")
    best: SweepBest = Field(description="The recommendation.")
    items: int = Field(description="Training items the sweep built each cell from.")
    samples_per_cell: int = Field(description="Clips each cell is timed over, at least.")
    seconds: float = Field(description="Wall time of the sweep.")
    notes: list[str] = Field(default_factory=list, description="What the sweep's figures mean.")


class PipelineProfile(BaseModel):
    dataset_path: str = Field(description="The dataset profiled (the first one, with several).")
    dataset_paths: list[str] = Field(description="Every dataset profiled, in the config's order.")
    items: int = Field(description="Training items the pipeline was built from.")
    batch_size: int = Field(description="Clips a batch.")
    preprocessing_mode: str = Field(
        description="Where features come from: runtime, cache or precompute (resolved, never auto)."
    )
    tf_native: bool = Field(description="Audio decoded by TensorFlow ops (false: the tf.numpy_function baseline).")
    warmup_batches: int = Field(description="Untimed batches first.")
    num_batches: int = Field(description="Batches timed.")
    batches_per_epoch: int = Field(description="Batches an epoch of the training split gives.")
    repeated: bool = Field(description="The dataset had fewer batches than warm-up + timed ones and was repeated.")
    samples_per_sec: float = Field(description="Clips a second the pipeline delivers.")
    audio_seconds_per_sec: float = Field(description="Seconds of real audio (unpadded) delivered a second.")
    mel_frames_per_sec: float = Field(description="Real mel frames delivered a second.")
    latency_ms: LatencyStats = Field(description="Time the consumer blocked for each batch, ms.")
    latency_series_ms: list[float] = Field(description="Each timed batch's latency, ms, in order.")
    cv: float = Field(
        description="The latencies' coefficient of variation (std / mean): the pipeline's own unevenness."
    )
    oscillation: OscillationSummary = Field(description="Whether the latencies repeat a cycle.")
    padding_efficiency: float = Field(description="Measured on the timed batches.")
    planned_padding_efficiency: float = Field(description="The pipeline plan's figure, from the scanned lengths.")
    distinct_shapes: int = Field(
        description="Distinct batch shapes among the timed batches (each a trace of the training step)."
    )
    max_distinct_shapes: Optional[int] = Field(description="The pipeline's bound per epoch; empty: unbounded.")
    stages: list[StageTiming] = Field(description="The pipeline timed stage by stage; empty with --no-stages.")
    baseline: Optional[BaselineComparison] = Field(
        None,
        description="With --compare-baseline: the TF-native pipeline against the tf.numpy_function one; null without.",
    )
    bad_files: list[BadFile] = Field(description="Items the scan left out, each with its reason.")
    pipeline: PipelineInfo = Field(description="What the pipeline is built to do (its plan).")
    notes: list[str] = Field(default_factory=list, description="What the figures mean here, in words.")


def bad_files(scan: ScanReport) -> list[BadFile]:
    return [BadFile(path=bad.path, reason=bad.reason, detail=bad.detail, source=bad.source) for bad in scan.bad]


def measure_batches(
    dataset,
    *,
    num_batches: int,
    warmup: int,
    sample_rate: int,
    hop_length: int,
    served: Optional[str] = None,
    say: Progress = None,
) -> BatchMeasurement:
    """Time `next()` on `dataset` (mel batches) for `warmup` + `num_batches` batches; `served`: the
    tf.data service's address when the batches come from it.

    `dataset` must yield at least that many batches (repeat it first). Public so that any dataset
    with the mel batch layout can be measured the same way, e.g. one with a planted stall.
    """
    latencies: list[float] = []
    samples = real = padded = 0
    shapes: set[tuple] = set()
    with HeldCtrlC() as ctrl_c:
        iterator = _batches(dataset, served, ctrl_c, say)
        try:
            for _ in range(warmup):
                _pull(iterator, ctrl_c)
            start = time.perf_counter()
            for _ in range(num_batches):
                before = time.perf_counter()
                batch = _pull(iterator, ctrl_c)
                latencies.append((time.perf_counter() - before) * 1000.0)
                # Outside the timed call: the batch is already on the host, these are cheap reads.
                lengths, width = _frames(batch, hop_length)
                samples += int(lengths.shape[0])
                real += int(lengths.sum())
                padded += int(lengths.shape[0]) * width
                shapes.add(tuple((name, tuple(tensor.shape)) for name, tensor in sorted(batch.items())))
            seconds = time.perf_counter() - start
        finally:
            if served is not None:
                iterator.close()  # the service's job ends with it
    stats = summarize(latencies)
    found = detect_oscillation(latencies)
    oscillation = OscillationSummary(
        detected=found.detected,
        period_batches=found.period,
        period_seconds=found.period * stats.mean / 1000.0 if found.period is not None else None,
        strength=found.strength,
        reason=found.reason,
    )
    # mel_lengths = 1 + samples // hop: a clip of L frames holds between (L - 1) and L hops of
    # audio, so (L - 0.5) hops is within half a hop (~6 ms at 22.05 kHz / 256) of its length.
    audio_seconds = (real - 0.5 * samples) * hop_length / sample_rate
    return BatchMeasurement(
        batches=num_batches,
        samples=samples,
        seconds=seconds,
        latency_series_ms=latencies,
        latency_ms=stats,
        cv=stats.cv,
        samples_per_sec=samples / seconds if seconds > 0 else 0.0,
        audio_seconds_per_sec=audio_seconds / seconds if seconds > 0 else 0.0,
        mel_frames_per_sec=real / seconds if seconds > 0 else 0.0,
        padding_efficiency=real / padded if padded else 0.0,
        distinct_shapes=len(shapes),
        oscillation=oscillation,
    )


def _batches(dataset, served: Optional[str], ctrl_c: HeldCtrlC, say: Progress) -> Any:
    """An iterator over `dataset`; from the tf.data service read on a thread of its own, as training
    reads it: TensorFlow's client waits for a worker inside C++, where no signal is heard (a service
    with no worker had hung the timing, deaf to Ctrl-C and SIGTERM). A long wait is said, and Ctrl-C ends it."""
    if served is None:
        return iter(dataset)
    from xtts_cli.data.service import ServedBatches

    def note(text: str) -> None:
        (say or (lambda line: print(line, file=sys.stderr, flush=True)))(f"note: {text}")

    return ServedBatches(lambda: iter(dataset), served, stop=lambda: ctrl_c.pressed, note=note)


def _pull(iterator: Any, ctrl_c: HeldCtrlC) -> Any:
    """The next batch, and a Ctrl-C pressed meanwhile raised once it is here (or its wait ended)."""
    try:
        batch = next(iterator)
    except StopIteration:
        ctrl_c.check()
        raise
    ctrl_c.check()
    return batch


def _frames(batch: dict, hop_length: int) -> tuple[Any, int]:
    """(each clip's mel frames, the batch's padded frames): from its mels, or, in a pipeline that
    delivers audio (a vocoder's), from its samples as the features would frame them."""
    if "mel_lengths" in batch:
        return batch["mel_lengths"].numpy(), int(batch["mel"].shape[1])
    return 1 + batch["audio_lengths"].numpy() // hop_length, 1 + int(batch["audio"].shape[1]) // hop_length


def _plan(run_data: RunData, items: Optional[Sequence[DatasetItem]] = None) -> PipelinePlan:
    """The training pipeline's plan as `xtts train` makes it (of `items`, default the epoch's
    clips), with its empty-epoch error."""
    plan = run_data.plan(items=items)
    plan.require_batches()  # data.batch_size, as train and profile-step name it, whether set by flag, file or --set
    return plan


def _build(
    run_data: RunData,
    say: Progress = None,
    plan: Optional[PipelinePlan] = None,
    items: Optional[Sequence[DatasetItem]] = None,
) -> tuple[Any, PipelineInfo]:
    """The training pipeline as `xtts train` builds it; `say` hears of a precompute pass."""
    return run_data.pipeline(plan=plan or _plan(run_data, items), note=say)


def _measure_pipeline(
    run_data: RunData,
    *,
    num_batches: int,
    warmup: int,
    say: Progress = None,
    plan: Optional[PipelinePlan] = None,
):
    """(measurement, pipeline info, repeated, warm-up drawn). The warm-up covers at least the
    epoch's bucket starts (`PipelinePlan.buckets_started`): a cost an epoch pays once, that timed in a few dozen
    batches would weigh as it never does in an epoch of thousands."""
    config = run_data.config
    dataset, info = _build(run_data, say, plan)
    warmup = max(warmup, info.buckets_started)
    repeated = info.batches_per_epoch < warmup + num_batches
    if repeated:
        dataset = dataset.repeat()
    measured = measure_batches(
        dataset,
        num_batches=num_batches,
        warmup=warmup,
        sample_rate=config.data.sample_rate,
        hop_length=config.data.hop_length,
        served=config.data.service_address,
        say=say,
    )
    return measured, info, repeated, warmup


def _time_elements(dataset, *, chunk: int, warm_chunks: int, chunks: int, size_of) -> tuple[float, int]:
    """Seconds to pull `chunks` x `chunk` elements of a per-clip stage, after `warm_chunks` untimed
    chunks on the same iterator (so tf.data's autotuner has ramped up, as in the batch measurement).

    Each element is reduced to a scalar and `chunk` of them are batched inside TensorFlow, so the
    Python next() is paid once per chunk: once per clip it would cost more than reading the clip.
    """

    sizes = dataset.map(lambda x: tf.cast(size_of(x), tf.int64)).batch(chunk)
    iterator = iter(sizes)
    count = 0
    with HeldCtrlC() as ctrl_c:
        for _ in range(warm_chunks):
            next(iterator)
            ctrl_c.check()
        start = time.perf_counter()
        for _ in range(chunks):
            count += int(next(iterator).shape[0])
            ctrl_c.check()
        return time.perf_counter() - start, count


def stages_within_noise(timings: Sequence[StageTiming]) -> list[str]:
    """A note when a stage timed faster than the one before it: a stage cannot cost less than nothing,
    so the differences are inside the noise (a 10-sample breakdown had shown its shares as measured)."""
    faster = [t for t in timings if t.incremental_ms_per_sample < 0]
    if not faster:
        return []
    return [
        f"{faster[0].name} timed faster than the stage before it ({faster[0].incremental_ms_per_sample:+.2f} ms a "
        f"sample): at {faster[0].samples} samples the stages' differences are within noise; time more batches "
        "(--batches) to split them"
    ]


def _stage_timings(
    config: XttsConfig, items: Sequence[DatasetItem], *, full: BatchMeasurement, warmup: int
) -> list[StageTiming]:

    from xtts_cli.data.audio_codecs import CODECS
    from xtts_cli.data.pipeline import audio_formats, feature_stage, parallel_calls, source_columns

    # The stages are fed exactly the element layout (and run with exactly the parallelism) the
    # pipeline's own feature stage gets.
    data = config.data
    formats = audio_formats(items)
    codecs = formats.codecs if data.use_tf_native_loading else CODECS
    source = tf.data.Dataset.from_tensor_slices(source_columns(items, codecs)).repeat()
    parallel = parallel_calls(data.num_workers)
    deterministic = not data.optimize_cpu_gpu_overlap

    def staged(fn):
        return source.map(fn, num_parallel_calls=parallel, deterministic=deterministic)

    # The same number of samples as the full pipeline's timed batches, after as many warm-up ones.
    shape = dict(chunk=data.batch_size, warm_chunks=max(warmup, 1), chunks=full.batches)
    runs: list[tuple[str, float, int]] = []
    read = staged(lambda element: tf.io.read_file(element["path"]))
    runs.append(("read", *_time_elements(read, size_of=tf.strings.length, **shape)))
    decode = staged(feature_stage(data, "audio", formats))
    runs.append(("decode", *_time_elements(decode, size_of=tf.size, **shape)))
    features = staged(feature_stage(data, "mel", formats))
    runs.append(("features", *_time_elements(features, size_of=tf.size, **shape)))
    runs.append(("batch", full.seconds, full.samples))

    from xtts_cli.data.audio_codecs import COMPRESSED_CODECS, compressed_decoder

    # The decode row is what a compressed corpus costs in runtime mode: say who decodes it.
    compressed = [codec for codec in formats.codecs if codec in COMPRESSED_CODECS]
    decoder = "libsndfile" if compressed_decoder() == "soundfile" else "tensorflow-io"
    described = dict(STAGE_DESCRIPTIONS)
    if compressed and data.use_tf_native_loading:
        described["decode"] += f" ({', '.join(compressed)} by {decoder})"
    timings: list[StageTiming] = []
    previous = 0.0
    for name, seconds, count in runs:
        rate = count / seconds if seconds > 0 else 0.0
        ms = 1000.0 / rate if rate > 0 else math.inf
        timings.append(
            StageTiming(
                name=name,
                description=described[name],
                samples=count,
                seconds=seconds,
                samples_per_sec=rate,
                ms_per_sample=ms,
                incremental_ms_per_sample=ms - previous,
            )
        )
        previous = ms
    return timings


def profile_pipeline(
    config: XttsConfig,
    *,
    num_batches: int,
    warmup: Optional[int] = None,
    stages: bool = True,
    compare_baseline: bool = False,
    scan: Optional[ScanReport] = None,
    progress: Progress = None,
) -> PipelineProfile:
    """Profile the training input pipeline of `config`. `warmup` defaults to profiling.warmup_batches."""
    say = progress or (lambda message: None)
    if num_batches < 2:
        raise XttsError(f"num_batches ({num_batches}) must be at least 2", hint="pass --num-batches 2 or more")
    warmup = config.profiling.warmup_batches if warmup is None else warmup
    if scan is None:
        say("scanning the dataset")
    run_data = run_data_of(config, scan)
    items, scan = run_data.train_items, run_data.scan
    data = config.data

    plan = _plan(run_data)
    drawn_warmup = max(warmup, plan.buckets_started)
    say(f"timing {num_batches} batches of {data.batch_size} after {drawn_warmup} warm-up batches")
    main, info, repeated, drawn_warmup = _measure_pipeline(
        run_data, num_batches=num_batches, warmup=drawn_warmup, say=progress, plan=plan
    )
    notes = _main_notes(
        config, info, main, requested_warmup=warmup, warmup=drawn_warmup, num_batches=num_batches, repeated=repeated
    )
    padding = padding_finding(config, info, xla=False, scan=scan)  # what diagnose says of the same plan
    if padding is not None:
        notes.insert(0, padding.message + (f"; fix: {padding.fix.describe()}" if padding.fix else ""))
    warmup = drawn_warmup
    runs = _RuntimeRuns(config, run_data, info, main, num_batches=num_batches, warmup=warmup, say=say)
    if data.service_address and (stages or compare_baseline):
        notes.append("the stage breakdown and the baseline run on this machine's own pipeline, not the tf.data service")
    stage_timings = runs.stage_timings(items, notes) if stages else []
    baseline = runs.baseline() if compare_baseline else None
    return PipelineProfile(
        dataset_path=scan.dataset_path,
        dataset_paths=[source.path for source in scan.datasets],
        items=len(items),
        batch_size=data.batch_size,
        preprocessing_mode=info.preprocessing_mode,
        tf_native=data.use_tf_native_loading,
        warmup_batches=warmup,
        num_batches=num_batches,
        batches_per_epoch=info.batches_per_epoch,
        repeated=repeated,
        samples_per_sec=main.samples_per_sec,
        audio_seconds_per_sec=main.audio_seconds_per_sec,
        mel_frames_per_sec=main.mel_frames_per_sec,
        latency_ms=main.latency_ms,
        latency_series_ms=main.latency_series_ms,
        cv=main.cv,
        oscillation=main.oscillation,
        padding_efficiency=main.padding_efficiency,
        planned_padding_efficiency=info.padding_efficiency,
        distinct_shapes=main.distinct_shapes,
        max_distinct_shapes=info.max_distinct_batch_shapes,
        stages=stage_timings,
        baseline=baseline,
        bad_files=bad_files(scan),
        pipeline=info,
        notes=notes,
    )


def _main_notes(
    config: XttsConfig,
    info: PipelineInfo,
    main: BatchMeasurement,
    *,
    requested_warmup: int,
    warmup: int,
    num_batches: int,
    repeated: bool,
) -> list[str]:
    """The notes on the main measurement: the mode, the warm-up, the repeats and the cache it drew from."""
    data = config.data
    notes: list[str] = []
    mode = info.preprocessing_mode  # resolved: never auto
    if data.preprocessing_mode == "auto":
        notes.append(f"preprocessing_mode auto resolved to {mode}: {info.preprocessing_reason.removeprefix('auto: ')}")
    if info.store_in_memory:
        notes.append(
            f"the precompute store is held in memory ({gigabytes(info.store_in_memory_bytes)} padded per bucket, within "
            f"the {gigabytes(info.cache_memory_limit_bytes or 0)} of data.cache_memory_limit): batches are gathered "
            "from there; a lower limit reads them from the store's shards every epoch"
        )
    if warmup > requested_warmup:
        notes.append(
            f"warm-up extended from {requested_warmup} to {warmup} batches: an epoch starts each of its {warmup} "
            "length buckets in its first batches (opening its files or filling its shuffle buffer), a cost paid "
            f"once per epoch ({info.batches_per_epoch:,} batches) that would weigh heavily on {num_batches} timed ones"
        )
    drawn = warmup + num_batches
    if repeated:
        notes.append(
            f"the dataset gives {info.batches_per_epoch} batch{'' if info.batches_per_epoch == 1 else 'es'} per epoch, fewer than the {drawn} drawn: "
            f"it was repeated ({drawn / info.batches_per_epoch:.1f} epochs)"
        )
    if mode == "cache":
        if info.batches_per_epoch > warmup:
            first = min(info.batches_per_epoch - warmup, num_batches)
            notes.append(
                f"cache mode: the first epoch ({info.batches_per_epoch} batches) computes features and "
                f"fills the cache (each bucket's shuffle buffer, up to {data.shuffle_buffer_multiplier * info.batch_size} "
                "clips, ahead of its first batch); "
                + (
                    f"{first} of the timed batches fall in it, the rest come from memory"
                    if first < num_batches
                    else "every timed batch falls in it (none comes from memory: time more batches to see those)"
                )
            )
        else:
            notes.append("cache mode: the warm-up filled the cache; every timed batch came from memory")
    period = main.oscillation.period_batches
    if repeated and period is not None and abs(period - info.batches_per_epoch) < 0.5:
        notes.append(
            f"the latency cycle ({period:.1f} batches) is the epoch length: each epoch restarts the pipeline's "
            "iterators and refills its buffers; a larger dataset spreads that cost"
        )
    notes.append(
        "no training step runs between batches, so each next() waits for the pipeline: these are its "
        "maximum rates. The GPU idles whenever the step consumes faster (compare xtts profile-step)."
    )
    return notes


class _RuntimeRuns:
    """The stage breakdown's and the baseline's measurements, in runtime mode on this machine; the
    TF-native runtime one is measured once and shared (the main one when it already is that)."""

    def __init__(
        self,
        config: XttsConfig,
        run_data: RunData,
        info: PipelineInfo,
        main: BatchMeasurement,
        *,
        num_batches: int,
        warmup: int,
        say: Callable[[str], None],
    ) -> None:
        data = config.data
        self.run_data, self.num_batches, self.warmup, self.say = run_data, num_batches, warmup, say
        self.mode = info.preprocessing_mode
        self.use_tf_native_loading = data.use_tf_native_loading
        self.main = main
        # The stages and the baseline compare feature computation, so they run in runtime mode:
        # a cached pipeline would only measure memory reads.
        # They also run locally: the numpy_function baseline cannot run on tf.data service workers (graph
        # ops only), and stages compared across machines would compare the machines.
        self.runtime = data_variant(config, preprocessing_mode="runtime", service_address=None)
        self.local_runtime = self.mode == "runtime" and not data.service_address
        self.native: Optional[BatchMeasurement] = main if self.local_runtime and data.use_tf_native_loading else None

    def _measure(self, config: XttsConfig) -> BatchMeasurement:
        """The main measurement's batches, timed on the pipeline of `config` over the same data."""
        return _measure_pipeline(self.run_data.with_config(config), num_batches=self.num_batches, warmup=self.warmup)[0]

    def native_runtime(self) -> BatchMeasurement:
        """The TF-native pipeline in runtime mode, measured on first use."""
        if self.native is None:
            self.say("timing the TF-native pipeline in runtime mode")
            self.native = self._measure(data_variant(self.runtime, use_tf_native_loading=True))
        return self.native

    def stage_timings(self, items: Sequence[DatasetItem], notes: list[str]) -> list[StageTiming]:
        """The cumulative stage breakdown, with a note when the main figures are of another mode."""
        full = self.main if self.local_runtime else None
        if full is None:
            self.say("timing the full pipeline in runtime mode for the stage breakdown")
            full = self._measure(self.runtime)
            if self.use_tf_native_loading:
                self.native = full
        self.say("timing the stages: read, decode, features")
        timings = _stage_timings(self.runtime, items, full=full, warmup=self.warmup)
        notes += stages_within_noise(timings)
        if self.mode != "runtime":
            notes.append(
                f"stages are measured in runtime mode (features every epoch) so each row includes the "
                f"ones before it; the main figures are for {self.mode} mode"
            )
        return timings

    def baseline(self) -> BaselineComparison:
        """The tf.numpy_function pipeline against the TF-native one, both in runtime mode."""
        native = self.native_runtime()
        self.say("timing the tf.numpy_function baseline (use_tf_native_loading: false, runtime mode)")
        measured = self._measure(data_variant(self.runtime, use_tf_native_loading=False))
        return BaselineComparison(
            samples_per_sec=measured.samples_per_sec,
            native_samples_per_sec=native.samples_per_sec,
            speedup=native.samples_per_sec / measured.samples_per_sec if measured.samples_per_sec > 0 else 0.0,
            latency_ms=measured.latency_ms,
            native_latency_ms=native.latency_ms,
        )


def _evenly_spaced(items: list[DatasetItem], limit: int) -> list[DatasetItem]:
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def _time_cell(config: XttsConfig, pipeline, samples: int) -> tuple[int, float]:
    """(samples, seconds) drawn from a fresh iterator over `pipeline` = (dataset, info)."""
    dataset, info = pipeline
    iterator = iter(dataset.repeat())
    # Cache mode: one whole epoch first, so the timed batches read the filled cache (an
    # interrupted first epoch would leave tf.data's in-memory cache empty). Runtime: one batch,
    # which pays the iterator start-up.
    batches = math.ceil(samples / config.data.batch_size)
    count = drawn = 0
    with HeldCtrlC() as ctrl_c:
        for _ in range(info.batches_per_epoch if info.preprocessing_mode == "cache" else 1):
            next(iterator)
            ctrl_c.check()
        start = time.perf_counter()
        while drawn < batches or time.perf_counter() - start < SWEEP_MIN_SECONDS:
            batch = next(iterator)
            ctrl_c.check()
            count += int(batch.get("mel_lengths", batch.get("audio_lengths")).shape[0])
            drawn += 1
        return count, time.perf_counter() - start


_SWEPT = ("num_workers", "prefetch_buffer_size", "batch_size", "preprocessing_mode")


def _recommend(cells: list[SweepCell], config: XttsConfig, resolved: str) -> dict[str, Any]:
    """The settings to recommend (one value per swept key), from the ranked cells.

    - Cells with prefetch off are measured but never recommended: the profile has no training step
      for prefetch to overlap with, so turning it off looks free here and costs in training.
    - A cache cell's timed batches all come from memory, so its num_workers (first epoch only) was
      not exercised: the current value is kept.
    - Cells within SWEEP_TIE of the fastest are ties: the one with the fewest changes wins.
    - `resolved`: what the config's preprocessing_mode means for the whole dataset. With `auto`, a cell
      of that mode keeps `auto`; cache cells are not recommended when the whole dataset's features
      do not fit the cache budget (the sweep's sample fits; the dataset would not).
    """
    candidates = [cell for cell in cells if cell.prefetch_buffer_size != 0] or cells
    if resolved != "cache" and config.data.preprocessing_mode != "cache":
        candidates = [cell for cell in candidates if cell.preprocessing_mode != "cache"] or candidates

    def proposal(cell: SweepCell) -> dict[str, Any]:
        chosen = {key: getattr(cell, key) for key in _SWEPT}
        if cell.preprocessing_mode == "cache":
            chosen["num_workers"] = config.data.num_workers
        if config.data.preprocessing_mode == "auto" and cell.preprocessing_mode in ("auto", resolved):
            chosen["preprocessing_mode"] = "auto"
        return chosen

    def changes(cell: SweepCell) -> int:
        return sum(value != getattr(config.data, key) for key, value in proposal(cell).items())

    fastest = max(cell.samples_per_sec for cell in candidates)
    ties = [cell for cell in candidates if cell.samples_per_sec * SWEEP_TIE >= fastest]
    return proposal(min(ties, key=lambda cell: (changes(cell), -cell.samples_per_sec)))


def _cell_settings(data) -> tuple:
    return (data.num_workers, data.prefetch_buffer_size, data.batch_size, data.preprocessing_mode)


def sweep(
    config: XttsConfig,
    *,
    scan: Optional[ScanReport] = None,
    samples: Optional[int] = None,
    max_items: Optional[int] = None,
    progress: Progress = None,
) -> SweepReport:
    """Time every cell of the grid (SWEEP_* constants) plus the current settings; rank by samples/s."""
    say = progress or (lambda message: None)
    started = time.perf_counter()
    samples = SWEEP_SAMPLES if samples is None else samples
    max_items = SWEEP_MAX_ITEMS if max_items is None else max_items
    run_data = run_data_of(config, scan)
    scan = run_data.scan
    items = _evenly_spaced(list(scan.train), max_items)
    grid, current = _sweep_grid(config, len(items), len(scan.train))
    cells = _time_grid(run_data, config, grid, current, items=items, samples=samples, say=say)
    cells.sort(key=lambda cell: -cell.samples_per_sec)
    from xtts_cli.data.plan import decide_mode

    data = config.data
    resolved = decide_mode(data, scan.feature_bytes(data)).mode
    settings = _recommend(cells, config, resolved)
    change = {f"data.{key}": value for key, value in settings.items() if value != getattr(config.data, key)}
    notes = _sweep_notes(len(cells), len(items), samples, change)
    left_out = [size for size in SWEEP_BATCH_SIZES if size not in {cell.batch_size for cell in cells}]
    if left_out:
        notes.insert(
            1,
            f"batch size {', '.join(map(str, left_out))} left out: fewer than 2 batches an epoch of the "
            f"{len(scan.train)} training clips (one batch an epoch drops the clips past it every epoch)",
        )

    # Re-measure the winner and the current settings side by side: a single short cell can win by luck.
    current_config = config if current[2] <= len(items) else data_variant(config, batch_size=settings["batch_size"])
    best_config = data_variant(config, **settings)
    say("re-measuring the best cell and the current settings side by side")
    best_rate, current_rate = _side_by_side(run_data, best_config, current_config, items=items, samples=samples)
    best = SweepBest(
        change=change,
        samples_per_sec=best_rate,
        current_samples_per_sec=current_rate,
        speedup=best_rate / current_rate if current_rate > 0 else 0.0,
        worth_changing=bool(change) and current_rate > 0 and best_rate / current_rate >= SWEEP_TIE,
    )
    return SweepReport(
        cells=cells,
        best=best,
        items=len(items),
        samples_per_cell=samples,
        seconds=time.perf_counter() - started,
        notes=notes,
    )


def _sweep_grid(config: XttsConfig, item_count: int, train_count: int) -> tuple[list[tuple], tuple]:
    """(the cells to time, the config's own settings), the latter added when not a cell already.
    Batch sizes leave at least 2 batches an epoch of the `train_count` training clips (as
    `xtts benchmark` does): one batch an epoch drops the clips past it every epoch."""
    sizes = [size for size in SWEEP_BATCH_SIZES if size <= item_count and size * 2 <= train_count]
    if not sizes:
        sizes = [min(item_count, config.data.batch_size)]
    grid = [(w, p, b, m) for m in SWEEP_MODES for b in sizes for w in SWEEP_PARALLELISM for p in SWEEP_PREFETCH]
    current = _cell_settings(config.data)
    if current not in grid and current[2] <= item_count:
        grid.append(current)
    return grid, current


def _time_grid(
    run_data: RunData,
    config: XttsConfig,
    grid: list[tuple],
    current: tuple,
    *,
    items: list[DatasetItem],
    samples: int,
    say: Callable[[str], None],
) -> list[SweepCell]:
    """Each cell of `grid` built over `items` and timed, in grid order."""
    cells: list[SweepCell] = []
    for index, (workers, prefetch, batch, mode) in enumerate(grid, 1):
        say(f"sweep {index}/{len(grid)}: num_workers {workers}, prefetch {prefetch}, batch {batch}, {mode}")
        cell_config = data_variant(
            config, num_workers=workers, prefetch_buffer_size=prefetch, batch_size=batch, preprocessing_mode=mode
        )
        count, seconds = _time_cell(cell_config, _build(run_data.with_config(cell_config), items=items), samples)
        cells.append(
            SweepCell(
                num_workers=workers,
                prefetch_buffer_size=prefetch,
                batch_size=batch,
                preprocessing_mode=mode,
                samples=count,
                seconds=seconds,
                samples_per_sec=count / seconds if seconds > 0 else 0.0,
                current=(workers, prefetch, batch, mode) == current,
            )
        )
    return cells


def _sweep_notes(cell_count: int, item_count: int, samples: int, change: dict[str, Any]) -> list[str]:
    """What the sweep's figures mean and why the recommendation leaves some settings alone."""
    notes = [
        f"{cell_count} cells on {item_count} training items, each timed over at least {samples} samples and "
        f"{SWEEP_MIN_SECONDS} s after one untimed batch; cache cells first drew one whole epoch to fill the "
        "cache, so they show the cached (second and later) epochs",
        f"a short run per cell on a noisy machine: cells within ~{SWEEP_TIE - 1:.0%} of each other are ties, "
        "and the recommendation takes the one that changes fewest settings",
        "prefetch_buffer_size 0 is never recommended: with no training step to overlap it only saves a "
        "buffer here, while in training it makes the step wait for every batch",
        "for a cache cell num_workers is left as it is: it only acts in the first epoch, which those cells do not time",
    ]
    if "data.batch_size" in change:
        notes.append("batch size also changes the optimisation (learning rate, steps per epoch), not only the pipeline")
    notes.append(
        "three rates of the current settings are shown, each measured its own way: the table above times the "
        "whole pipeline over --batches; the sweep's 'current' row is one short cell on the sweep's items; "
        "'now' in the recommendation is the current settings re-timed side by side with the best, the pair to compare"
    )
    return notes


def _side_by_side(
    run_data: RunData, best_config: XttsConfig, current_config: XttsConfig, *, items: list[DatasetItem], samples: int
) -> tuple[float, float]:
    """(best, current) samples/s, each the mean of two cells timed alternately."""
    contenders = {
        name: (cell_config, _build(run_data.with_config(cell_config), items=items))
        for name, cell_config in (("best", best_config), ("current", current_config))
    }
    rates: dict[str, list[float]] = {"best": [], "current": []}
    for _ in range(2):
        for name, (cell_config, pipeline) in contenders.items():
            count, seconds = _time_cell(cell_config, pipeline, samples)
            rates[name].append(count / seconds if seconds > 0 else 0.0)
    return sum(rates["best"]) / 2, sum(rates["current"]) / 2
