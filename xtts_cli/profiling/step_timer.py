"""Split each training step into data wait and compute, from the host's point of view.

Data wait is the time blocked in `next(iterator)`: with a healthy prefetching tf.data pipeline the
batch is already waiting and this is tens of microseconds. Compute runs from the moment the batch
arrives until the step's outputs are *ready*: TensorFlow dispatches GPU work asynchronously, so a
call to a `tf.function` can return before the kernels finish, and the time would then show up as
data wait of the next step. We therefore fetch a value of every output (`.numpy()` on a scalar, or on
one element of a larger tensor, which cannot be computed before the tensor itself) before stopping
the clock. Return the loss scalar from the step function and this costs one tiny device-to-host copy,
which a training loop that logs its loss pays anyway.

Step time here = data wait + compute of that step; time the caller spends between steps (logging,
checkpoints) is not part of either.

Verdict bands are the TF Profiler's input-pipeline analyser's: a step is "not input-bound" when
input takes < 5 % of step time, "moderately" below 20 %, "highly" from 20 % on
(kModeratelyInfeedBoundThresholdInPercent = 5, kHighlyInfeedBoundThresholdInPercent = 20 in
tensorflow/core/profiler/convert/op_stats_to_input_pipeline_analysis.cc; also
https://www.tensorflow.org/guide/data_performance_analysis). PERFORMANCE.md quotes the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict

from xtts_cli.config.remedies import (  # noqa: F401  (the profilers' names for them)
    HIGHLY_INPUT_BOUND_PERCENT,
    MODERATELY_INPUT_BOUND_PERCENT,
    InputBoundVerdict,
    input_bound_verdict,
)
from xtts_cli.stats.latency import LatencyStats, summarize
from xtts_cli.stats.oscillation import Oscillation, detect_oscillation


def fetch_outputs(outputs: Any) -> None:
    """Block until every tensor in `outputs` (nested lists, tuples, dicts) has a value on the host.

    Scalars are fetched whole; a larger tensor through its first element only, so a step that
    returns activations does not copy them all to the host. Anything without `.numpy()` (Python
    numbers, numpy arrays, None) is already a value.
    """
    if outputs is None:
        return
    if isinstance(outputs, Mapping):
        for value in outputs.values():
            fetch_outputs(value)
        return
    if isinstance(outputs, (list, tuple)):
        for value in outputs:
            fetch_outputs(value)
        return
    if not hasattr(outputs, "numpy"):
        return
    try:
        dims = tuple(outputs.shape)
    except (AttributeError, TypeError, ValueError):  # no shape, or an unknown rank
        dims = ()
    if not dims or any(not dim for dim in dims):  # a scalar, an empty or a ragged tensor
        outputs.numpy()
    else:
        outputs[(0,) * len(dims)].numpy()


class StepTimingReport(BaseModel):
    """Per-step timings after warm-up. `*_ms` series are in step order, for plots and TensorBoard."""

    model_config = ConfigDict(frozen=True)

    steps: int
    warmup_steps: int
    data_wait: LatencyStats
    compute: LatencyStats
    step: LatencyStats
    input_bound_percent: float
    verdict: InputBoundVerdict
    step_oscillation: Oscillation
    overhead_us_per_step: Optional[float] = None
    overhead_percent: Optional[float] = None
    # The share recomputed without the timer's overhead, once assuming all of it landed in the data
    # wait and once all in compute: True when either lands in another band than `verdict`
    # (RELIABILITY.md: the profiler's overhead must not change the verdict). None: not measured.
    overhead_changes_verdict: Optional[bool] = None
    data_wait_ms: list[float]
    compute_ms: list[float]


class StepTimer:
    """Times steps of a training loop.

    ```
    timer = StepTimer(warmup_steps=2)
    iterator = iter(dataset)
    for _ in range(steps):
        loss = timer.step(iterator, train_step)   # train_step(batch) -> loss tensor
    report = timer.report()
    ```
    The first `warmup_steps` steps (tracing, filling the prefetch buffer) are timed but left out
    of every figure.
    """

    def __init__(self, *, warmup_steps: int = 2) -> None:
        if warmup_steps < 0:
            raise ValueError(f"warmup_steps ({warmup_steps}) must be 0 or more")
        self.warmup_steps = warmup_steps
        self._seen = 0
        self._wait_ms: list[float] = []
        self._compute_ms: list[float] = []
        self._overhead_us: Optional[float] = None

    @property
    def steps(self) -> int:
        """Steps recorded after warm-up."""
        return len(self._wait_ms)

    def step(self, iterator: Iterator[Any], step_fn: Callable[[Any], Any]) -> Any:
        """One step: `batch = next(iterator)`, then `step_fn(batch)` with its outputs fetched.
        Returns what `step_fn` returned. StopIteration passes through untimed."""
        start = time.perf_counter()
        batch = next(iterator)
        arrived = time.perf_counter()
        outputs = step_fn(batch)
        fetch_outputs(outputs)
        done = time.perf_counter()
        self.record(arrived - start, done - arrived)
        return outputs

    def run(self, iterator: Iterator[Any], step_fn: Callable[[Any], Any], steps: int) -> StepTimingReport:
        """`steps` timed steps (warm-up included), or fewer when the iterator ends; then the report."""
        for _ in range(steps):
            try:
                self.step(iterator, step_fn)
            except StopIteration:
                break
        return self.report()

    def record(self, data_wait_s: float, compute_s: float) -> None:
        """Add one step measured elsewhere (seconds)."""
        self._seen += 1
        if self._seen <= self.warmup_steps:
            return
        self._wait_ms.append(data_wait_s * 1e3)
        self._compute_ms.append(compute_s * 1e3)

    def input_bound_share(self) -> float:
        """Total data wait / total step time after warm-up, 0..1 (0 before any step)."""
        wait = sum(self._wait_ms)
        total = wait + sum(self._compute_ms)
        return wait / total if total > 0 else 0.0

    def measure_overhead(self, cycles: int = 2000, output: Any = None) -> float:
        """Microseconds the timer itself adds per step: `cycles` complete `step` calls on a scratch
        timer whose iterator yields nothing and whose step returns `output` at once, so all that is
        left is our clock reads, bookkeeping and fetching `output`. Pass a computed scalar tensor
        (like the loss) to include the cost of the readiness fetch. Kept for `report()`."""
        if cycles < 1:
            raise ValueError(f"cycles ({cycles}) must be a positive integer")
        scratch = StepTimer(warmup_steps=0)
        nothing = iter(lambda: None, object())  # an endless iterator of None

        def step_fn(batch: Any) -> Any:
            return output

        start = time.perf_counter()
        for _ in range(cycles):
            scratch.step(nothing, step_fn)
        self._overhead_us = (time.perf_counter() - start) / cycles * 1e6
        return self._overhead_us

    def report(self) -> StepTimingReport:
        step_ms = [w + c for w, c in zip(self._wait_ms, self._compute_ms)]
        step = summarize(step_ms)
        percent = self.input_bound_share() * 100.0
        verdict = input_bound_verdict(percent)
        overhead_percent = None
        changes_verdict = None
        if self._overhead_us is not None and step.count and step.mean > 0:
            overhead_ms = self._overhead_us / 1e3
            overhead_percent = overhead_ms / step.mean * 100.0
            wait_mean = sum(self._wait_ms) / step.count
            bare_step = step.mean - overhead_ms
            if bare_step <= 0:
                changes_verdict = True  # the steps are no longer than the timer itself
            else:
                # The share without our overhead lies between "it was all data wait" and
                # "it was all compute".
                low = max(wait_mean - overhead_ms, 0.0) / bare_step * 100.0
                high = min(wait_mean / bare_step * 100.0, 100.0)
                changes_verdict = input_bound_verdict(low) != verdict or input_bound_verdict(high) != verdict
        return StepTimingReport(
            steps=step.count,
            warmup_steps=min(self._seen, self.warmup_steps),
            data_wait=summarize(self._wait_ms),
            compute=summarize(self._compute_ms),
            step=step,
            input_bound_percent=percent,
            verdict=verdict,
            step_oscillation=detect_oscillation(step_ms),
            overhead_us_per_step=self._overhead_us,
            overhead_percent=overhead_percent,
            overhead_changes_verdict=changes_verdict,
            data_wait_ms=list(self._wait_ms),
            compute_ms=list(self._compute_ms),
        )
