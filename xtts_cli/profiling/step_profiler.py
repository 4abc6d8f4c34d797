"""Time real training steps: how long each step waits for its batch and how long it computes.

`profile_step` builds exactly what `xtts train` builds (`Trainer.setup()`: device plan, scan,
tokenizer, pipeline, model, optimizer, compiled step) in a temporary run directory and runs
training's own loop on it (`Controller.run_steps`) with a timing hook in place of the run's
checkpoints, validation and samples: `warmup` untimed steps (tracing, filling the prefetch buffer
and, in cache mode, the cache), then `num_steps` steps timed with `StepTimer`: data wait (blocked
in the trainer's batch iterator) vs compute (until the step's losses are on the host).

`synthetic=True` takes one real batch per distinct batch shape (one per bucket) from the pipeline,
copies them onto the model device once, and feeds them to the step in turn: no input pipeline
runs, so the figure is what the model alone consumes (samples/s). Compared with the pipeline's
rate (`profile_pipeline`) it says how input-bound training must be.

No printing here; results are pydantic objects.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import tensorflow as tf
from pydantic import BaseModel, Field

from xtts_cli.config.remedies import (
    InputBoundVerdict,
    busy_host_finding,
    contention_findings,
    input_findings,
    set_key,
    step_spread,
)
from xtts_cli.config.schema import XttsConfig
from xtts_cli.devices.nvml_sampler import MAX_HZ, MIN_HZ, GpuSummary
from xtts_cli.errors import XttsError, quoted
from xtts_cli.findings import Finding
from xtts_cli.host import CpuSampler
from xtts_cli.profiling.padding import padding_finding
from xtts_cli.stats.latency import LatencyStats
from xtts_cli.training.controller import Controller, Hook
from xtts_cli.training.watch import batch_shape

if TYPE_CHECKING:
    from xtts_cli.training.components import RunComponents

Progress = Optional[Callable[[str], None]]

# Steps wrapped in tf.profiler.experimental.start/stop with --trace: a trace of a few steps is
# what TensorBoard's trace viewer and input-pipeline analyser need; long traces get huge.
TRACE_STEPS = 5
# With dynamic batching (no bucket bound), synthetic mode keeps at most this many distinct shapes.
SYNTHETIC_MAX_SHAPES = 16


class Percentiles(BaseModel):
    p50: float = Field(description="Median, ms.")
    p95: float = Field(description="95th percentile, ms.")


class StepProfile(BaseModel):
    dataset_path: str = Field(description="The dataset profiled (the first one, with several).")
    dataset_paths: list[str] = Field(description="Every dataset profiled, in the config's order.")
    synthetic: bool = Field(description="One resident batch per bucket fed repeatedly: the model alone, no pipeline.")
    device_plan: str = Field(
        description="Where the step ran (one device, the data/model split, replicas), as `train` says it."
    )
    graph_mode: bool = Field(description="The step ran as a traced tf.function (false: eagerly, op by op).")
    xla: bool = Field(description="The step was compiled with XLA.")
    batch_size: int = Field(description="Clips a step.")
    preprocessing_mode: str = Field(
        description="Where features came from: runtime, cache or precompute (resolved, never auto)."
    )
    num_steps: int = Field(description="Steps timed (after warm-up).")
    warmup_steps: int = Field(description="Untimed steps first (traces, cache filling).")
    data_wait_ms: Percentiles = Field(description="Time a step waited for its batch, ms: median and 95th percentile.")
    compute_ms: Percentiles = Field(description="Time a step computed, ms (the host waits for its results).")
    step_ms: Percentiles = Field(description="The whole step, data wait and compute, ms.")
    data_wait: LatencyStats = Field(description="The data wait's full statistics, ms.")
    compute: LatencyStats = Field(description="The compute's full statistics, ms.")
    input_bound_percent: float = Field(
        description="Share of step time spent waiting for data, % (TensorFlow Profiler's input-bound figure)."
    )
    verdict: InputBoundVerdict = Field(
        description="That share in TensorFlow Profiler's bands: not (under 5 %), moderately (5-20 %) or highly input bound."
    )
    host_contention_percent: Optional[float] = Field(
        None,
        description="How much slower the step computes with the real pipeline running beside it than on "
        "resident batches of the same shapes, with no pipeline: the CPU the pipeline takes from the step "
        "(and from the thread that launches a GPU's kernels), which the input-bound share cannot see when the "
        "pipeline outruns the step. Empty in synthetic mode.",
    )
    other_processes_cores_busy: Optional[float] = Field(
        None,
        description="Cores other processes kept busy, on the cores this one may use, while the steps were timed "
        "(/proc/stat less this process); null where that cannot be read (not Linux, a cgroup CPU quota).",
    )
    resident_compute_ms: Optional[Percentiles] = Field(
        None, description="The step's compute on resident batches, after the timed steps (what contention is against)."
    )
    traces: int = Field(description="Traces of the training step in all (0 in eager mode).")
    traces_before_timing: int = Field(description="Traces during warm-up (one per batch shape met).")
    retraces: int = Field(description="Traces during the timed steps (after warm-up); healthy: 0.")
    shape_bound: Optional[int] = Field(description="The pipeline's bound on distinct batch shapes; empty: unbounded.")
    distinct_shapes: int = Field(description="Distinct mel batch shapes seen in the timed steps.")
    padding_efficiency: float = Field(description="The pipeline plan's real / padded mel frames.")
    steps_per_sec: float = Field(description="Timed steps a second.")
    samples_per_sec: float = Field(description="Clips a second (steps_per_sec x batch_size).")
    overhead_us_per_step: Optional[float] = Field(None, description="The step timer's own cost per step, microseconds.")
    overhead_percent: Optional[float] = Field(None, description="That cost as a share of a step, %.")
    gpu: Optional[list[GpuSummary]] = Field(
        description="NVML summary per GPU; null when NVML saw none (gpu_unavailable_reason says why)."
    )
    gpu_unavailable_reason: Optional[str] = Field(
        None, description="Why there are no GPU figures (no NVML, no NVIDIA driver); null when there are."
    )
    gpu_utilization_series: Optional[list[Optional[float]]] = Field(
        None, description="The model GPU's utilisation readings during the timed steps, %, in order."
    )
    data_wait_series_ms: list[float] = Field(description="Each timed step's data wait, ms, in order.")
    compute_series_ms: list[float] = Field(description="Each timed step's compute, ms, in order.")
    trace_dir: Optional[str] = Field(
        None, description="Where --trace wrote the TensorFlow Profiler trace; null without it."
    )
    tensorboard_dir: Optional[str] = Field(
        None, description="Where --tensorboard wrote the step-time scalars; null without it."
    )
    recommendations: list[Finding] = Field(
        description="What to change, from the figures and the config (the same findings as diagnose)."
    )
    notes: list[str] = Field(default_factory=list, description="What the figures mean here, in words.")
    interrupted: Optional[str] = Field(
        None,
        description="SIGINT when a Ctrl-C stopped the timing early: the figures are the steps timed before it "
        "(the command then exits 130).",
    )


def _percentiles(stats: LatencyStats) -> Percentiles:
    return Percentiles(p50=stats.p50, p95=stats.p95)


def recommendations(
    config: XttsConfig,
    *,
    verdict: InputBoundVerdict,
    input_bound_percent: float,
    retraces: int,
    graph_mode: bool,
    shape_bound: Optional[int],
    cpu_count: int,
    xla: bool = False,
    ran: bool = True,
) -> list[Finding]:
    """What to change, from the measured verdict and the config that produced it (`xla`: the step
    is compiled, once per batch shape; `ran`: a step was run, not only planned)."""
    found = input_findings(config, verdict, input_bound_percent, cpu_count) if verdict != "not_input_bound" else []
    found += _shape_findings(config, retraces, shape_bound, xla)
    if not graph_mode:
        found.append(_eager_finding(config, ran))
    return found


def _shape_findings(config: XttsConfig, retraces: int, shape_bound: Optional[int], xla: bool) -> list[Finding]:
    """Retracing: retraces after warm-up, or, under XLA, batch shapes the pipeline does not bound.
    The step's input signature leaves unbounded dimensions unknown, so plain graph mode traces it
    once for every shape; XLA compiles it again for each (their cost without XLA is the padding,
    diagnose's padding-waste)."""
    data = config.data
    found: list[Finding] = []
    if retraces > 0 or (shape_bound is None and xla):
        if not data.bucket_by_length and not data.pad_to_fixed_length:
            why = (
                f"the step was traced {retraces} more time(s) after warm-up"
                if retraces > 0
                else "every batch has its own shape (no length buckets, no fixed padding): XLA compiles the "
                "step again for each new one, seconds each"
            )
            found.append(
                Finding(
                    id="retracing",
                    severity="warning",
                    message=f"{why}; bucket clips by length for a few fixed shapes",
                    fix=set_key("data.bucket_by_length", True),
                )
            )
        elif retraces > 0:
            found.append(
                Finding(
                    id="retracing",
                    severity="warning",
                    message=f"the step was traced {retraces} more time(s) after warm-up although the "
                    f"pipeline bounds shapes to {shape_bound}; pad to fixed length to rule out shape changes",
                    fix=set_key("data.pad_to_fixed_length", True),
                )
            )
    return found


def _eager_finding(config: XttsConfig, ran: bool = True) -> Finding:
    """The step ran (or, none run, runs) eagerly: the setting that made it so, set back."""
    if config.training.enable_eager_debug:
        setting, fix = "training.enable_eager_debug is true", set_key("training.enable_eager_debug", False)
    else:
        setting, fix = "training.enable_graph_mode is false", set_key("training.enable_graph_mode", True)
    return Finding(
        id="eager-step",
        severity="warning",
        message=f"the step {'ran' if ran else 'runs'} eagerly ({setting}): op by op, several times slower than graph mode",
        fix=fix,
    )


# Resident steps per batch shape when measuring contention (after one untimed step each).
RESIDENT_STEPS_PER_SHAPE = 8


def _host_contention(
    controller: Controller, parts: RunComponents, result: Any, timing: _StepTiming, notes: list[str]
) -> Optional[tuple[float, Percentiles]]:
    """(percent, resident compute): the timed steps' compute against the same step on the very
    batches they ran, resident, with no pipeline drawing on the host, weighted by how often each
    shape came; both through the training loop. The pipeline's prefetch stops once its buffer is
    full, so after one untimed step per shape the host runs the step alone. None (with a note)
    when the shapes kept cover under half the timed steps: unbucketed batches rarely repeat one."""
    import statistics

    timed_by_shape = timing.timed_by_shape
    shapes = contention_shapes(timed_by_shape, timing.kept)
    if not shapes:
        notes.append(
            f"host contention not measured: the {timing.timed} timed steps came in {len(timed_by_shape)} batch "
            "shapes, too many to time each again alone (bucketing bounds them: data.bucket_by_length)"
        )
        return None
    with tf.device(parts.plan.model_device):
        resident = {shape: tf.nest.map_structure(tf.identity, timing.kept[shape]) for shape in shapes}
    order = [resident[shape] for _ in range(RESIDENT_STEPS_PER_SHAPE + 1) for shape in shapes]
    alone = _ComputeByShape(skip=len(shapes))  # the first round lets the pipeline's buffers fill and go quiet
    controller.run_steps(parts, [alone], result, steps=len(order), source=((batch, 0.0) for batch in order))
    beside = sum(len(timed_by_shape[s]) * statistics.median(timed_by_shape[s]) for s in shapes)
    without = sum(len(timed_by_shape[s]) * statistics.median(alone.by_shape[s]) for s in shapes)
    values = sorted(value for shape in shapes for value in alone.by_shape[shape])
    percentiles = Percentiles(p50=statistics.median(values), p95=values[int(0.95 * (len(values) - 1))])
    return (max(0.0, 100.0 * (beside - without) / without) if without > 0 else 0.0), percentiles


def contention_shapes(timed_by_shape: dict[tuple, list[float]], kept: Iterable[tuple]) -> list[tuple]:
    """The kept shapes to time again alone, most frequent first; none when they cover under half
    the timed steps, as unbucketed batches (a new shape nearly every step) do."""
    shapes = sorted(kept, key=lambda shape: -len(timed_by_shape[shape]))
    covered = sum(len(timed_by_shape[shape]) for shape in shapes)
    return shapes if covered * 2 >= sum(len(times) for times in timed_by_shape.values()) else []


class _ComputeByShape(Hook):
    """Each step's compute in ms by its batch's shape, after the first `skip` steps."""

    def __init__(self, skip: int) -> None:
        self.skip, self.seen = skip, 0
        self.by_shape: dict[tuple, list[float]] = {}

    def on_step(self, end: Any) -> None:
        self.seen += 1
        if self.seen > self.skip:
            self.by_shape.setdefault(batch_shape(end.batch), []).append(end.compute * 1000.0)


def _resident_batches(parts: RunComponents, limit: int) -> list[Any]:
    """One real batch per distinct mel shape, copied onto the model device once."""

    by_shape: dict[tuple, Any] = {}
    epoch = itertools.islice(parts.steps.batches(parts.input.train_ds), parts.input.steps_per_epoch)  # it repeats
    for batch, _ in epoch:
        by_shape.setdefault(batch_shape(batch), batch)
        if len(by_shape) >= limit:
            break
    if not by_shape:
        raise XttsError("the training pipeline gave no batch", hint="lower data.batch_size or add data")
    with tf.device(parts.plan.model_device):
        return [tf.nest.map_structure(tf.identity, batch) for batch in by_shape.values()]


def _resident_source(resident: list[Any]):
    """The resident batches in turn, endlessly, each with the time picking it took as its wait."""
    cycle = itertools.cycle(resident)
    while True:
        began = time.perf_counter()
        batch = next(cycle)
        yield batch, time.perf_counter() - began


class _StepTiming(Hook):
    """The profiler's action on the training loop: each step's data wait and compute into the
    timer; after the warm-up, the batch shapes and compute per shape, the traces so far, and the
    GPUs sampled until the end."""

    def __init__(self, timer: Any, warmup: int, steps: Any, sampler: Any, keep: int) -> None:
        self.timer, self.warmup, self.steps, self.sampler, self.keep = timer, warmup, steps, sampler, keep
        self.seen = self.timed = 0
        self.traces_before: Optional[int] = None
        self.timed_by_shape: dict[tuple, list[float]] = {}
        self.kept: dict[tuple, Any] = {}  # the first timed batch of each shape, for `_host_contention`

    def on_start(self, result: Any) -> None:
        if self.warmup == 0:
            self._timing_starts()

    def _timing_starts(self) -> None:
        self.traces_before = self.steps.traces()
        self.sampler.start()

    def on_step(self, end: Any) -> None:
        self.seen += 1
        self.timer.record(end.wait, end.compute)
        if self.seen > self.warmup:
            self.timed += 1
            shape = batch_shape(end.batch)
            self.timed_by_shape.setdefault(shape, []).append(end.compute * 1000.0)
            if shape not in self.kept and len(self.kept) < self.keep:
                self.kept[shape] = end.batch
        elif self.seen == self.warmup:
            self._timing_starts()


class _Traced(Hook):
    """Each of `steps` steps framed as one step of the TF Profiler's trace viewer."""

    def __init__(self, steps: int) -> None:
        self.steps, self.opened = steps, 0
        self.current: Any = None

    def _next(self) -> None:
        if self.current is not None:
            self.current.__exit__(None, None, None)
            self.current = None
        if self.opened < self.steps:
            self.current = tf.profiler.experimental.Trace("train", step_num=self.opened, _r=1)
            self.current.__enter__()
            self.opened += 1

    def on_start(self, result: Any) -> None:
        self._next()

    def on_step(self, end: Any) -> None:
        self._next()

    def on_end(self, result: Any) -> None:
        self.steps = 0
        self._next()


def _warmup_steps(
    config: XttsConfig, parts: Any, synthetic: bool, warmup: Optional[int], notes: list[str]
) -> tuple[int, int]:
    """(untimed steps first, batches drawn before them with no step): profiling.warmup_batches by
    default, at least one per length bucket an epoch starts; in cache mode, one whole epoch of the
    pipeline alone first, which fills the cache (as steps, it took minutes on thousands of clips)."""
    info = parts.input.info
    fill = 0
    if warmup is None:
        warmup = config.profiling.warmup_batches
        if not synthetic and info.preprocessing_mode == "cache" and warmup < parts.input.steps_per_epoch:
            fill = parts.input.steps_per_epoch
            notes.append(
                f"cache mode: one whole epoch ({fill} batches) was drawn through the pipeline first, with no "
                "step, to fill the cache; the timed steps read it as every later epoch does"
            )
    # Each batch shape's first step traces and compiles the step (seconds): never timed.
    least = max(1, info.buckets_started)
    if warmup < least:
        # One bucket (or --synthetic's one batch shape): the compile alone, not "its 0 length buckets".
        buckets = (
            f", and an epoch starts each of its {info.buckets_started} length buckets in its first batches (opening "
            "its files or filling its shuffle buffer)"
            if info.buckets_started > 1
            else ""
        )
        notes.append(
            f"warm-up extended from {warmup} to {least} step{'s' if least != 1 else ''}: the step is traced and "
            f"compiled at each batch shape's first step{buckets}"
        )
        warmup = least
    return warmup, fill


def _fill_cache(source: Any, batches: int, say: Callable[[str], None]) -> None:
    """Draw `batches` from `source` with no step: an epoch through the pipeline fills its cache."""
    if not batches:
        return
    say(f"filling the cache: one epoch ({batches} batches) through the pipeline, no step")
    drawn = sum(1 for _ in itertools.islice(source, batches))
    if drawn < batches:
        raise XttsError("the training pipeline ended during warm-up", hint="add data or lower --warmup")


def _source(parts: Any, synthetic: bool, notes: list[str], controller: Any, say: Callable[[str], None]) -> Any:
    """What the loop trains on: the run's pipeline, endless as training draws it; or, synthetic,
    one real batch per shape, resident on the model device and fed in turn. A wait for the tf.data
    service's batches is said and ends on the loop's signal, as training's does (with no worker it
    had waited silently, and a Ctrl-C promised a stop that never came)."""
    info, steps = parts.input.info, parts.steps
    if synthetic:
        limit = info.max_distinct_batch_shapes or SYNTHETIC_MAX_SHAPES
        resident = _resident_batches(parts, limit)
        notes.append(
            f"synthetic: {len(resident)} real batch(es), one per batch shape, resident on "
            f"{parts.plan.model_device} and fed in turn; no input pipeline runs"
        )
        return _resident_source(resident)
    waiting = lambda text: say(f"{text}; the profile goes on when a batch comes, Ctrl-C stops")  # noqa: E731
    return steps.batches(parts.input.train_ds, stop=controller.signalled, note=waiting)  # endless, as training draws it


def _trace(
    controller: Any, parts: Any, result: Any, source: Any, trace_dir: Any, notes: list[str], say
) -> Optional[str]:
    """TRACE_STEPS more steps of the loop into a TF Profiler trace at `trace_dir` (not in the figures)."""
    if trace_dir is None:
        return None
    trace_path = str(Path(trace_dir))
    say(f"tracing {TRACE_STEPS} more step(s) into {trace_path}")
    Path(trace_path).mkdir(parents=True, exist_ok=True)
    tf.profiler.experimental.start(trace_path)
    try:
        controller.run_steps(parts, [_Traced(TRACE_STEPS)], result, steps=TRACE_STEPS, source=source)
    finally:
        tf.profiler.experimental.stop()
    notes.append(
        f"{TRACE_STEPS} steps after the timed ones were traced (not in the figures); "
        f"open with: tensorboard --logdir {quoted(trace_path)}"
    )
    return trace_path


def _tensorboard(tensorboard_dir: Any, report: Any, series: Any) -> Optional[str]:
    """The timed steps' series as TensorBoard scalars in `tensorboard_dir`."""
    if tensorboard_dir is None:
        return None
    from xtts_cli.profiling.tensorboard_export import write_scalars

    scalars: dict[str, Any] = {
        "profile_step/data_wait_ms": report.data_wait_ms,
        "profile_step/compute_ms": report.compute_ms,
        "profile_step/step_ms": [w + c for w, c in zip(report.data_wait_ms, report.compute_ms)],
    }
    if series:
        scalars["profile_step/gpu_utilization"] = series
    return write_scalars(tensorboard_dir, scalars).logdir


def _signals_heard(say: Callable[[str], None]) -> Callable[[Any], None]:
    """What the loop says of a signal, as training says it: a Ctrl-C's "stopping once the step under
    way ends" (a step that traces takes seconds, and a silent wait read as a hang)."""
    from xtts_cli.training.events import Noted

    def heard(event: Any) -> None:
        if isinstance(event, Noted) and event.message.startswith(("Ctrl-C", "SIG")):
            say(event.message)

    return heard


def _said_on_first_pull(source: Any, line: str, say: Callable[[str], None]) -> Iterator[Any]:
    """`source`, with `line` said as the loop asks for its first batch, once it listens for signals:
    a `kill -INT` sent on the word to a process started with SIGINT ignored had been lost before it.
    Not `yield from`: closing this would close `source`, which the trace and contention steps reuse."""
    say(line)
    for item in source:  # noqa: UP028  (the docstring says why)
        yield item


def _stopped_early(controller, parts, timing: _StepTiming, result, steps: int, source, say, notes) -> bool:
    """Run the loop's `steps` steps with `timing` as its action; True when a Ctrl-C stopped it after
    two or more timed steps, which are then reported (a long profile stopped had kept nothing)."""
    from xtts_cli.training.controller import StepsInterrupted

    try:
        controller.run_steps(parts, [timing], result, steps=steps, source=source)
    except StepsInterrupted:
        if timing.timed < 2:
            raise
        say(f"reporting the {timing.timed} step(s) timed before the Ctrl-C")
        notes.append(f"stopped by Ctrl-C after {timing.timed} of {steps - timing.warmup} timed steps")
        return True
    except XttsError:
        if timing.seen <= timing.warmup:
            raise XttsError("the training pipeline ended during warm-up", hint="add data or lower --warmup") from None
        raise
    finally:
        timing.sampler.stop()
    return False


def profile_step(
    config: XttsConfig,
    *,
    num_steps: int,
    warmup: Optional[int] = None,
    synthetic: bool = False,
    trace_dir: Optional[Path | str] = None,
    tensorboard_dir: Optional[Path | str] = None,
    progress: Progress = None,
    cpu_count: Optional[int] = None,
    host_contention: bool = True,
) -> StepProfile:
    """Profile `num_steps` training steps of the real model on the real pipeline of `config`.

    `warmup` (default profiling.warmup_batches; always at least one step per length bucket,
    `PipelineInfo.buckets_started`) steps run untimed first; by default in cache mode, after one
    epoch drawn through the pipeline alone, so the timed steps read the filled cache as every later
    epoch of training does. `host_contention`
    False leaves out the second timing on resident batches (`_host_contention`), which a benchmark
    trial, ranking samples a second, has no use for.
    """

    from xtts_cli.devices.nvml_sampler import GpuSampler
    from xtts_cli.profiling.step_timer import StepTimer
    from xtts_cli.training.trainer import Trainer

    say = progress or (lambda message: None)
    if num_steps < 2:
        raise XttsError(f"num_steps ({num_steps}) must be at least 2", hint="pass --num-steps 2 or more")
    if warmup is not None and warmup < 0:
        raise XttsError(f"warmup ({warmup}) must be 0 or more", hint="pass --warmup 0 or more")
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="xtts-profile-step-") as scratch:
        say("building the model and the pipeline (Trainer.setup)")
        trainer = Trainer(config, run_dir=Path(scratch) / "run", fresh=True, progress=_signals_heard(say))
        try:
            parts = trainer.setup()
            steps = parts.steps
            warmup, fill = _warmup_steps(config, parts, synthetic, warmup, notes)
            controller = Controller(trainer)
            source = _source(parts, synthetic, notes, controller, say)
            _fill_cache(source, fill, say)

            # The training loop itself (`Controller.run_steps`) runs the steps, with timing as its one action.
            hz = min(max(config.profiling.gpu_sample_hz, MIN_HZ), MAX_HZ)
            keep = max(SYNTHETIC_MAX_SHAPES, parts.input.info.max_distinct_batch_shapes or 0)
            timing = _StepTiming(StepTimer(warmup_steps=warmup), warmup, steps, GpuSampler(None, hz=hz), keep)
            result = trainer.new_result()
            told = _said_on_first_pull(source, f"warm-up: {warmup} step(s), then timing {num_steps} step(s)", say)
            with CpuSampler() as cpu:  # beside the timings: what other processes take meanwhile
                stopped = _stopped_early(controller, parts, timing, result, warmup + num_steps, told, say, notes)
                if stopped:
                    num_steps, host_contention, trace_dir = timing.timed, False, None
                timer, done = timing.timer, timing.timed
                traces_after = steps.traces()
                traces_before = timing.traces_before if timing.traces_before is not None else traces_after
                contention = None
                if host_contention and not synthetic and done:
                    say("timing the same step on resident batches, with no pipeline beside it")
                    contention = _host_contention(controller, parts, result, timing, notes)
            if done:
                timer.measure_overhead(cycles=500, output=parts.counters.step)
            report = timer.report()

            trace_path = _trace(controller, parts, result, source, trace_dir, notes, say)
        finally:
            trainer.close()
    others = cpu.others_busy()
    measured = _Measured(report, timing, contention, traces_before, traces_after, trace_path, others, stopped)
    return _profile(config, parts, measured, synthetic, num_steps, notes, tensorboard_dir, cpu_count)


@dataclass(frozen=True)
class _Measured:
    """What `profile_step` measured on the set-up run, for `_profile` to report."""

    report: Any  # the StepTimer's report of the timed steps
    timing: _StepTiming
    contention: Optional[tuple[float, Percentiles]]
    traces_before: int
    traces_after: int
    trace_path: Optional[str]
    others_busy: Optional[float]  # cores other processes kept busy meanwhile; None: not readable here
    stopped: bool  # a Ctrl-C ended the timed steps early


def _findings(config, parts, report, measured: _Measured, retraces: int, synthetic: bool, cpu_count) -> list[Finding]:
    """What to change: the step's recommendations and host contention's; no input advice when synthetic."""
    from xtts_cli.devices.gpu_info import usable_cpu_count

    cpu_count = cpu_count if cpu_count is not None else usable_cpu_count()
    contention = measured.contention
    busy = busy_host_finding(measured.others_busy, cpu_count, "the steps")
    found = [busy] if busy else []
    found += recommendations(
        config,
        verdict=report.verdict,
        input_bound_percent=report.input_bound_percent,
        retraces=retraces,
        graph_mode=parts.settings.graph_mode,
        shape_bound=parts.input.info.max_distinct_batch_shapes,
        cpu_count=cpu_count,
        xla=parts.settings.xla,
    )
    if contention is not None:
        found += contention_findings(
            config,
            contention[0],
            report.input_bound_percent,
            resolved_mode=parts.input.info.preprocessing_mode,
            others=measured.others_busy,
            cpu_count=cpu_count,
            spread=step_spread(contention[1].p50, contention[1].p95),
        )
    if synthetic and found:
        # The data wait in synthetic mode is only picking a resident batch: no input advice.
        found = [f for f in found if not f.id.startswith("input-bound")]
    # The step's compute on padding, as diagnose plans it from the same scan (it had gone unsaid at 10 %).
    padding = padding_finding(config, parts.input.info, parts.settings.xla, parts.scan)
    return found + ([padding] if padding is not None else [])


def _profile(
    config, parts, measured: _Measured, synthetic, num_steps, notes, tensorboard_dir, cpu_count
) -> StepProfile:
    """The step profile: rates from the timed steps, retraces, GPU series, what to change."""
    report, sampler, info = measured.report, measured.timing.sampler, parts.input.info
    contention, traces_before, traces_after = measured.contention, measured.traces_before, measured.traces_after
    trace_path, shapes, done = measured.trace_path, set(measured.timing.timed_by_shape), measured.timing.timed
    summary = sampler.summary()
    gpu = summary.gpus or None
    series = None
    if gpu:
        series = [s.utilization_gpu for s in sampler.samples(gpu[0].index)]
    # Rates from the timed steps themselves (data wait + compute), the same time base as the
    # input-bound share; the loop's own bookkeeping between steps is left out of both.
    total_ms = sum(report.data_wait_ms) + sum(report.compute_ms)
    steps_per_sec = report.steps / (total_ms / 1000.0) if total_ms > 0 else 0.0
    retraces = traces_after - traces_before
    if not parts.settings.graph_mode:
        notes.append("eager mode: the step is not traced, so traces and retraces read 0")
    if done < num_steps:
        notes.append(f"the pipeline ended after {done} timed steps")
    found = _findings(config, parts, report, measured, retraces, synthetic, cpu_count)
    if report.overhead_changes_verdict:
        notes.append("the timer's own overhead is large enough to change the verdict: steps are too short to judge")

    tb_path = _tensorboard(tensorboard_dir, report, series)

    return StepProfile(
        dataset_path=parts.scan.dataset_path,
        dataset_paths=[source.path for source in parts.scan.datasets],
        synthetic=synthetic,
        device_plan=parts.plan.describe(),
        graph_mode=parts.settings.graph_mode,
        xla=parts.settings.xla,
        batch_size=parts.input.batch_size,
        preprocessing_mode=parts.input.info.preprocessing_mode,
        num_steps=report.steps,
        warmup_steps=report.warmup_steps,
        data_wait_ms=_percentiles(report.data_wait),
        compute_ms=_percentiles(report.compute),
        step_ms=_percentiles(report.step),
        data_wait=report.data_wait,
        compute=report.compute,
        input_bound_percent=report.input_bound_percent,
        verdict=report.verdict,
        host_contention_percent=contention[0] if contention else None,
        other_processes_cores_busy=measured.others_busy,
        interrupted="SIGINT" if measured.stopped else None,
        resident_compute_ms=contention[1] if contention else None,
        traces=traces_after,
        traces_before_timing=traces_before,
        retraces=retraces,
        shape_bound=info.max_distinct_batch_shapes,
        distinct_shapes=len(shapes),
        padding_efficiency=info.padding_efficiency,
        steps_per_sec=steps_per_sec,
        samples_per_sec=steps_per_sec * parts.input.batch_size,
        overhead_us_per_step=report.overhead_us_per_step,
        overhead_percent=report.overhead_percent,
        gpu=gpu,
        gpu_unavailable_reason=summary.unavailable_reason or summary.stopped_by,
        gpu_utilization_series=series,
        data_wait_series_ms=report.data_wait_ms,
        compute_series_ms=report.compute_ms,
        trace_dir=trace_path,
        tensorboard_dir=tb_path,
        recommendations=found,
        notes=notes,
    )
