"""The training watch: a starving or contended step named while the run goes, not after it.

Over a sliding window of the last `watch.window_seconds` of steps it keeps four figures: the share of
step time spent waiting for data, how much slower the step computes than in its own best stretch
(host contention: something else took its CPU), a cycle in the data wait (a pipeline delivering in
bursts), and with NVML each GPU's utilisation and memory. A figure that crosses its line is one
warning with the finding `diagnose` and `profile-step` give for it (config/remedies.py) and its fix;
while it lasts it is said again at most every `watch.repeat_minutes`; under `recover_fraction` of
its line (a GPU's utilisation: as near 100 % as it was under its line) it is one line saying so. Each is a `Watched` event: the progress line, metrics.jsonl and
TensorBoard carry it.

What it costs a step is a few appends; the figures are worked out every few seconds.
"""

from __future__ import annotations

import math
import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from xtts_cli.config.remedies import (
    SMALL_GPU_BATCH,
    contention_findings,
    input_bound_verdict,
    input_findings,
    said_percent,
    set_key,
)
from xtts_cli.config.schema import WatchConfig, XttsConfig
from xtts_cli.findings import Finding
from xtts_cli.host import busy_cpu_seconds, counted_cores, own_cpu_seconds
from xtts_cli.stats.oscillation import detect_oscillation
from xtts_cli.training.events import Progress, Watched
from xtts_cli.training.hooks import Hook

__all__ = ["GpuReading", "Watch", "WatchHook", "batch_shape", "gpu_readings"]

# A batch shape's first step traces the step (seconds): left out. Its compute counts towards host
# contention only after this many more (the first runs of a new graph are slower).
WARM_STEPS = 3
# A shape's median is a figure only over at least this many steps of it in the window.
MIN_STEPS = 5
# Share of the window that must hold steps before any figure is judged.
MIN_COVERAGE = 0.5


@dataclass(frozen=True)
class GpuReading:
    """One card over the window: NVML's utilisation and its memory in use (None: not read)."""

    util: Optional[float]
    memory_percent: Optional[float]
    role: str  # what the run gives it: "model", "data", "replica"


def gpu_readings(sampler: Any, seconds: float, roles: dict[int, str]) -> dict[int, GpuReading]:
    """Each card an NVML sampler (`devices.nvml_sampler.GpuSampler`) reads, over its last `seconds`:
    the mean utilisation, the most memory in use, and the role the run gives it (default "model")."""
    readings = {}
    for index in sampler.indices or []:
        samples = sampler.samples(index)
        recent = [s for s in samples if s.t >= samples[-1].t - seconds] if samples else []
        util = [s.utilization_gpu for s in recent if s.utilization_gpu is not None]
        memory = [
            100.0 * s.memory_used_mib / s.memory_total_mib
            for s in recent
            if s.memory_used_mib is not None and s.memory_total_mib
        ]
        readings[index] = GpuReading(
            util=sum(util) / len(util) if util else None,
            memory_percent=max(memory) if memory else None,
            role=roles.get(index, "model"),
        )
    return readings


def batch_shape(batch: Any) -> tuple:
    """The shape of a batch's features: its mel, or its audio (a vocoder's step reads audio)."""
    if not isinstance(batch, dict):
        return ()
    features = batch.get("mel", batch.get("audio"))
    return tuple(features.shape) if features is not None and hasattr(features, "shape") else ()


@dataclass
class _Step:
    t: float
    wait: float
    compute: float
    shape: tuple
    warm: bool  # its shape has run WARM_STEPS times before it


@dataclass
class _State:
    active: bool = False
    warned_at: float = -math.inf
    crossed: int = 0  # checks in a row the figure was across its line


# Checks in a row a figure must be across its line before it is a warning: one stretch of a few
# slow steps (a checkpoint flushing, a sample rendered) is not a finding.
CONFIRM_CHECKS = 2


class Watch:
    """The figures and their findings, fed step by step (`add`) and judged every few seconds
    (`check`); no TensorFlow, no clock of its own, so a test can drive it."""

    def __init__(self, config: XttsConfig, cpu_count: int) -> None:
        self.config, self.settings, self.cpu_count = config, config.watch, cpu_count
        self.steps: deque[_Step] = deque()
        self.seen: dict[tuple, int] = {}
        self.best: dict[tuple, float] = {}  # each shape's lowest windowed median compute so far
        self.states: dict[str, _State] = {}

    def add(self, t: float, wait: float, compute: float, shape: tuple) -> None:
        self.seen[shape] = self.seen.get(shape, 0) + 1
        if self.seen[shape] > 1:
            self.steps.append(_Step(t, wait, compute, shape, self.seen[shape] > WARM_STEPS))
        while self.steps and self.steps[0].t < t - self.settings.window_seconds:
            self.steps.popleft()

    # The figures.
    def wait_percent(self) -> float:
        total = sum(s.wait + s.compute for s in self.steps)
        return 100.0 * sum(s.wait for s in self.steps) / total if total > 0 else 0.0

    def contention_percent(self) -> Optional[float]:
        """How much slower than its best stretch the step computes now, weighted by shape; None
        until a shape has a best to compare with."""
        by_shape: dict[tuple, list[float]] = {}
        for step in self.steps:
            if step.warm:
                by_shape.setdefault(step.shape, []).append(step.compute)
        now = {shape: statistics.median(times) for shape, times in by_shape.items() if len(times) >= MIN_STEPS}
        compared = [(len(by_shape[shape]), now[shape] / self.best[shape]) for shape in now if shape in self.best]
        for shape, median in now.items():
            self.best[shape] = min(median, self.best.get(shape, math.inf))
        if not compared:
            return None
        weight = sum(count for count, _ in compared)
        return max(0.0, 100.0 * (sum(count * ratio for count, ratio in compared) / weight - 1.0))

    def _covered(self, now: float) -> bool:
        # From the first step's start, not its end: a step longer than the window (watch.window_seconds
        # under two steps) had left the window never covered, and a run starved throughout unsaid.
        first = self.steps[0] if self.steps else None
        return (
            first is not None
            and now - (first.t - first.wait - first.compute) >= MIN_COVERAGE * self.settings.window_seconds
        )

    # The judgement.
    def check(
        self, now: float, step: int, gpus: Optional[dict[int, GpuReading]] = None, others: Optional[float] = None
    ) -> list[Watched]:
        """What crossed its line or came back since the last check. `others`: cores other processes
        kept busy over the window (None: not readable), which says whose the step's lost CPU is."""
        if not self._covered(now):
            return []
        s = self.settings
        notices: list[Watched] = []
        wait = self.wait_percent()
        input_bound = wait >= s.data_wait_percent
        line = f"{'over' if input_bound else 'under'} watch.data_wait_percent, {s.data_wait_percent:g} %"
        finding, *more = input_findings(
            self.config, input_bound_verdict(wait), wait, self.cpu_count, line=line, line_percent=s.data_wait_percent
        )
        fixes = [other.fix.describe() for other in more if other.fix is not None]
        if fixes:  # each setting that slows it, in one line: one at a time had taken a run each to find
            finding = finding.model_copy(update={"message": f"{finding.message}; also {', '.join(fixes)}"})
        notices += self._judge("input-bound", now, step, wait, s.data_wait_percent, finding, back="data wait")
        contention = self.contention_percent()
        if contention is not None:
            found = contention_findings(
                self.config,
                max(contention, s.host_contention_percent),
                wait,
                while_training=True,
                others=others,
                cpu_count=self.cpu_count,
            )[0]
            figure = 0.0 if input_bound else contention  # waiting for data is the input-bound finding's
            notices += self._judge("host-contention", now, step, figure, s.host_contention_percent, found, back="step")
        notices += self._oscillation(now, step, wait)
        for index, reading in sorted((gpus or {}).items()):
            notices += self._gpu(now, step, index, reading)
        return notices

    def _judge(
        self,
        key: str,
        now: float,
        step: int,
        figure: float,
        line: float,
        finding: Finding,
        *,
        back: str,
        below: bool = False,
    ) -> list[Watched]:
        """A warning when `figure` crosses `line` (or, `below`, falls under it) and again every
        `repeat_minutes` while it stays; a recovery once it is well back."""
        state = self.states.setdefault(key, _State())
        crossed = figure < line if below else figure >= line
        state.crossed = state.crossed + 1 if crossed else 0
        fix = finding.fix.describe() if finding.fix else None
        if crossed:
            if state.crossed < CONFIRM_CHECKS:
                return []
            if not state.active or now - state.warned_at >= 60.0 * self.settings.repeat_minutes:
                state.active, state.warned_at = True, now
                return [Watched(step, finding.id, "warning", figure, finding.message, fix)]
            return []
        # Well back: a falling figure under `recover_fraction` of its line; a utilisation (`below`) as
        # far from its line towards 100 % (the line 50, half: 75 %; line / fraction would ask 100 %).
        fraction = self.settings.recover_fraction
        recovered = figure > 100.0 - (100.0 - line) * fraction if below else figure < line * fraction
        if state.active and recovered:
            state.active = False
            said = said_percent(figure, line * fraction if not below else None)
            return [Watched(step, finding.id, "recovered", figure, f"{back} back to normal ({said} %)")]
        return []

    def _oscillation(self, now: float, step: int, wait: float) -> list[Watched]:
        """A data wait that comes and goes in a cycle: the pipeline delivers batches in bursts."""
        s = self.settings
        cycle = detect_oscillation([x.wait for x in self.steps])
        cycling = cycle.detected and cycle.cv >= s.oscillation_cv and wait >= s.data_wait_percent / 4
        period = f"every {cycle.period:.0f} steps" if cycle.period else "in a cycle"
        data = self.config.data
        fix = set_key("data.prefetch_buffer_size", "auto") if data.prefetch_buffer_size != "auto" else None
        finding = Finding(
            id="input-oscillation",
            severity="warning",
            message=f"the data wait comes and goes {period} ({wait:.0f} % of step time on average): the pipeline "
            "delivers batches in bursts, so the step idles between them; let tf.data prefetch further",
            fix=fix,
        )
        return self._judge("input-oscillation", now, step, 1.0 if cycling else 0.0, 1.0, finding, back="data wait")

    def _gpu(self, now: float, step: int, index: int, reading: GpuReading) -> list[Watched]:
        s, notices = self.settings, []
        if reading.util is not None:
            if reading.role == "data":
                advice = (
                    "the split gives the data card only the features to compute; with two equal cards, two "
                    "replicas train faster"
                )
                fix = set_key("devices.strategy", "mirrored")
            elif self.config.data.batch_size <= SMALL_GPU_BATCH:
                default = type(self.config.data).model_fields["batch_size"].default
                advice = (
                    f"a batch of {self.config.data.batch_size} is a few small kernels a step, and the card idles "
                    f"between their launches; a larger batch gives it work (`xtts benchmark` finds the largest that fits)"
                )
                fix = set_key("data.batch_size", default)
            else:
                advice = "it waits for its input or for the host; see the data wait and host contention lines"
                fix = None
            finding = Finding(
                id="gpu-underused",
                severity="warning",
                message=f"GPU {index} ({reading.role}) is busy {reading.util:.0f} % of the last "
                f"{s.window_seconds:.0f} s: {advice}",
                fix=fix,
            )
            notices += self._judge(
                f"gpu-underused:{index}",
                now,
                step,
                reading.util,
                s.gpu_util_percent,
                finding,
                back=f"GPU {index}",
                below=True,
            )
        if reading.memory_percent is not None:
            finding = Finding(
                id="gpu-memory-full",
                severity="warning",
                message=f"GPU {index} ({reading.role}) has {reading.memory_percent:.0f} % of its memory in use: "
                "a longer batch may not fit; lower data.batch_size or data.max_mel_frames",
            )
            notices += self._judge(
                f"gpu-memory-full:{index}",
                now,
                step,
                reading.memory_percent,
                s.gpu_memory_percent,
                finding,
                back=f"GPU {index} memory",
            )
        return notices


def others_busy(reads: list[tuple[float, float, float]], window: float) -> Optional[float]:
    """Cores other processes kept busy from `reads` (seconds, this process's CPU seconds, every process's
    busy seconds on its cores), the last one now: over the whole of them, or over the last `window` / 2
    seconds where that is more (`WatchHook._others`); None over less than a second."""
    now, own, every = reads[-1]

    def since(start: float, own_then: float, every_then: float) -> Optional[float]:
        if now - start < 1.0:  # /proc/stat counts 10 ms ticks: too short to read
            return None
        return max(0.0, ((every - every_then) - (own - own_then)) / (now - start))

    whole = since(*reads[0])
    half = next((since(*read) for read in reads if read[0] >= now - window / 2), None)
    return max(whole, half) if whole is not None and half is not None else whole


class WatchHook(Hook):
    """The watch as an action of the training loop: steps in, `Watched` events out to the progress
    line, metrics.jsonl and TensorBoard. `gpus(seconds)`: each card's reading over the window (the
    metrics action's NVML sampler), or None without one."""

    def __init__(
        self,
        config: XttsConfig,
        cpu_count: int,
        metrics: Any,
        progress: Progress,
        gpus: Callable[[float], Optional[dict[int, GpuReading]]] = lambda seconds: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.watch = Watch(config, cpu_count)
        self.metrics, self.progress, self.gpus, self.clock = metrics, progress, gpus, clock
        settings: WatchConfig = config.watch
        self.every = min(5.0, settings.window_seconds / 6.0)
        self.checked = clock()
        self.notices: list[Watched] = []
        # What the cores this process may use spent busy, read at each check: (seconds, own, every process's).
        self.cores = counted_cores()
        self.cpu: deque[tuple[float, float, float]] = deque()

    def on_step(self, end: Any) -> None:
        now = self.clock()
        self.watch.add(now, end.wait, end.compute, batch_shape(end.batch))
        if now - self.checked < self.every:
            return
        self.checked = now
        window = self.watch.settings.window_seconds
        for notice in self.watch.check(now, end.step, self.gpus(window), self._others(window)):
            self.notices.append(notice)
            self.metrics.write(notice.record())
            self.progress(notice)
            self._summarise(notice)

    def _others(self, window: float) -> Optional[float]:
        """Cores other processes kept busy over about the last `window` seconds, or over its second half
        where they kept more (real time, whatever clock judges the steps); None where /proc/stat or the
        cores cannot be read. The half: a process started mid-window slows the step's median once it has
        run half the window, while its mean over the whole still reads half its share (a busy loop read
        0.3 of 2 cores, under the line, and the pipeline was blamed)."""
        every = busy_cpu_seconds(self.cores) if self.cores else None
        if every is None:
            return None
        now = time.monotonic()
        self.cpu.append((now, own_cpu_seconds(), every))
        while len(self.cpu) > 2 and self.cpu[1][0] <= now - window:
            self.cpu.popleft()
        return others_busy(list(self.cpu), window)

    def on_end(self, result: Any) -> None:
        result.watch = [notice.record() for notice in self.notices]  # --json's, as the terminal said them

    @staticmethod
    def _summarise(notice: Watched) -> None:
        import tensorflow as tf

        tf.summary.text(f"watch/{notice.id}", f"{notice.state}: {notice.message}", step=notice.step)
