"""The training loop as a controller with hooks (the shape of TensorFlow Model Garden's Orbit).

The `Trainer` sets up what training is built from, one frozen `RunComponents` (components.py:
data, models, optimizers, checkpoints, device plan, the compiled steps and a way to draw batches). The `Controller` owns the loop: it draws a
batch, runs the step, counts steps and epochs, stops on `max_steps`, a signal or a non-finite loss,
and hands every finished step to its hooks, in order:

- `MetricsHook`: step and data-wait timings; every `log_step` a `StepLogged` event, written to
  metrics.jsonl, TensorBoard and the progress callable (with the GPU utilisation when sampled);
- `ValidationHook`: every `val_step` the validation loss and alignment score (`Validated`), the
  alignment and mel images;
- `CheckpointHook`: every `save_step`, and once more at the end;
- `SamplesHook`: every `sample_step`, test sentences rendered to the run's samples folder;
- `WatchHook` (watch.py, unless `watch.enabled` is off): data wait, host contention and each GPU
  over a sliding window, a warning when one crosses its line (`Watched`).

`Controller.run_steps` runs the same loop on a set-up run with the caller's hooks alone: `xtts
profile-step` times training's own loop with a timing hook, so what it measures is what trains.

Multi-worker runs keep their rules (trainer.py's docstring): every decision is taken from values
all workers share, at the same steps.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import re
import signal
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Optional, Protocol

import tensorflow as tf

from xtts_cli.config.remedies import early_stop_without_validation
from xtts_cli.devices.placement import budget_on_a_cluster
from xtts_cli.errors import XttsError
from xtts_cli.kinds.optimization import applied_rate
from xtts_cli.run.directory import record_end
from xtts_cli.training.checkpointing import NonFiniteWeightsError
from xtts_cli.training.events import (
    Noted,
    PhaseEnded,
    PhaseStarted,
    Progress,
    RunEnded,
    RunStarted,
    StepLogged,
    TrainResult,
    Validated,
)
from xtts_cli.training.hooks import Hook, StepEnd
from xtts_cli.training.signals import EXIT_CODES, GracefulInterrupt
from xtts_cli.training.trainer import STOP_KEY, Trainer
from xtts_cli.training.watch import GpuReading, gpu_readings
from xtts_cli.training.workers import WorkersDisagreeError

if TYPE_CHECKING:
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.devices.placement import DevicePlan
    from xtts_cli.kinds import ModelKind
    from xtts_cli.training.components import RunComponents
    from xtts_cli.training.parent import ParentRun

__all__ = ["CheckpointHook", "Controller", "Hook", "MetricsHook", "SamplesHook", "StepEnd", "ValidationHook"]


class StepsInterrupted(KeyboardInterrupt):
    """`Controller.run_steps` stopped by a first Ctrl-C once its step ended: the steps before it are whole."""


class NonFiniteLossError(XttsError):
    """A NaN or Inf loss: training stopped before the bad weights were saved."""

    exit_code = 3


# Raised by every worker of a cluster at the same point, from values they share (the reduced loss,
# the gathered steps): no need to tell the others.
_RAISED_ON_EVERY_WORKER = (NonFiniteLossError, NonFiniteWeightsError, WorkersDisagreeError)


def _is_lost_peer(exc: BaseException) -> bool:
    """A collective aborted because a peer died or hung up (TensorFlow's coordination service
    notices a dead worker by its missing heartbeats and aborts the collectives of the others)."""

    return isinstance(exc, (tf.errors.UnavailableError, tf.errors.AbortedError, tf.errors.DeadlineExceededError))


def _tell_the_other_workers(exc: BaseException, cluster) -> None:
    """Abort the other workers' collectives with this worker's error, so they stop at once with
    its reason rather than about ten seconds later with "heartbeat timeout". Best effort: the
    coordination service has no public API for it (TF's own PreemptionCheckpointHandler calls this
    same `report_error_to_cluster`), and the heartbeat remains the fallback."""
    try:
        from tensorflow.python.eager import context

        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        context.context().report_error_to_cluster(tf.errors.ABORTED, f"{cluster.describe()} stopped: {reason}")
    except Exception:  # noqa: BLE001 - reporting must never hide the error being raised
        pass


def _lost_peer_reason(exc: BaseException) -> str:
    """The line of TensorFlow's message that says what happened (its first line is generic)."""
    lines = [line.strip() for line in str(getattr(exc, "message", exc)).splitlines() if line.strip()]
    for line in lines:
        if "aborted by" in line or "heartbeat" in line or "failed to connect" in line:
            return line
    return lines[0] if lines else type(exc).__name__


def _unreached(reason: str, cluster: Any) -> str:
    """Where to look for a lost peer: an address nothing answers at, named, and whether this
    worker's own list holds it (workers given different lists had each said to see the other's
    output, and neither named the cause)."""
    refused = re.search(r"ipv[46]:(\S+):(\d+): Failed to connect to remote host", reason)
    if refused is None:
        return "see that worker's output for the cause; every worker must be given the same --worker-hosts"
    host, port = refused.group(1).strip("[]"), refused.group(2)
    own = cluster.tasks if cluster is not None else ()
    if own and not any(_names(task, host, port) for task in own):
        return (
            f"another worker's list names {host}:{port}, which this worker's ({','.join(own)}) does not: give "
            "every worker the same --worker-hosts (TF_CONFIG's cluster)"
        )
    return (
        f"nothing answers at {host}:{port}: check that its worker runs, and that every worker was given the same "
        "--worker-hosts (TF_CONFIG's cluster)"
    )


def _names(task: str, host: str, port: str) -> bool:
    """Whether the cluster's `task` (host:port as given) is the address gRPC reports (an IP)."""
    import socket

    name, _, own_port = task.rpartition(":")
    if own_port != port:
        return False
    try:
        return name.strip("[]") == host or socket.gethostbyname(name.strip("[]")) == host
    except OSError:
        return False


class HookedRun(Protocol):
    """What the standard hooks read of a set-up run (a `Trainer`), and nothing else."""

    config: XttsConfig
    kind: ModelKind

    @property
    def plan(self) -> DevicePlan: ...

    @property
    def is_chief(self) -> bool: ...

    @property
    def epoch_var(self) -> Any: ...

    @property
    def optimizer(self) -> Any: ...

    def traces(self) -> int: ...

    def validate(self) -> Optional[dict[str, float]]: ...

    @property
    def validates(self) -> bool: ...

    @property
    def validation_set(self) -> str: ...

    @property
    def parent(self) -> Optional[ParentRun]: ...

    def summaries(self, batch: Any, step: int) -> None: ...

    def save(self) -> str: ...

    def keep_best(self) -> None: ...

    def restore_best(self) -> bool: ...

    def forget_best(self) -> None: ...

    def early_stop_record(self) -> Optional[dict[str, Any]]: ...

    def keep_early_stop(self, record: Optional[dict[str, Any]]) -> None: ...

    def render_samples(self, step: int) -> None: ...


class _DiscardedMetrics:
    """What a non-chief worker writes its metrics to: the chief's metrics.jsonl is the run's."""

    def write(self, record: dict[str, Any]) -> None:
        pass


class MetricsHook(Hook):
    def __init__(self, trainer: HookedRun, metrics: Any, progress: Progress) -> None:
        self.trainer, self.metrics, self.progress = trainer, metrics, progress
        self.every = trainer.config.training.log_step
        self.window = self._empty()
        self.window_traced = self._empty()  # the window's steps that built a graph, kept apart
        self.total = self._empty()
        self.traced = self._empty()
        self.sampler: Any = None
        self.loop_started = time.perf_counter()
        self.last_end: Optional[StepEnd] = None
        self.said_failed: set[str] = set()

    @staticmethod
    def _empty() -> dict[str, float]:
        return {"steps": 0, "wait": 0.0, "time": 0.0, "samples": 0}

    def on_start(self, result: TrainResult) -> None:
        self.sampler = self.start_gpu_sampler()
        self.loop_started = time.perf_counter()

    def on_step(self, end: StepEnd) -> None:
        # The speed over the run, and each logged window's, leave out a step that built a graph
        # (seconds, once per batch shape), which `PhaseEnded` and trace_seconds report on their own:
        # a first window of 11 s steps squashed TensorBoard's step_ms chart and read as a stall.
        for bucket in (self.window_traced if end.traced else self.window, self.traced if end.traced else self.total):
            bucket["steps"] += 1
            bucket["wait"] += end.wait
            bucket["time"] += end.wait + end.compute
            bucket["samples"] += end.samples
        self.last_end = end
        if end.step % self.every == 0 or end.last:
            self.log(end)
            self.window, self.window_traced = self._empty(), self._empty()

    def log(self, end: StepEnd) -> None:
        trainer = self.trainer
        window = self.window if self.window["steps"] else self.window_traced  # a window of traced steps alone
        steps = max(1, int(window["steps"]))
        logged = StepLogged(
            step=end.step,
            epoch=end.epoch,  # not the counter, which an epoch's last step has moved on by the run's end
            losses=dict(end.losses),
            lr=applied_rate(trainer.optimizer),
            step_ms=1000.0 * window["time"] / steps,
            data_wait_ms=1000.0 * window["wait"] / steps,
            samples_per_sec=window["samples"] / window["time"] if window["time"] > 0 else 0.0,
            traces=trainer.traces(),
            gpu_util=self.gpu_utilization(window["time"]),
            gpus=self.gpu_readings(window["time"]) or {},
        )
        self.metrics.write(logged.record())
        for key in trainer.kind.logged:
            if key in end.losses:
                tf.summary.scalar(f"train/{key}", end.losses[key], step=end.step)
        tf.summary.scalar("train/lr", logged.lr, step=end.step)
        tf.summary.scalar("timing/step_ms", logged.step_ms, step=end.step)
        tf.summary.scalar("timing/data_wait_ms", logged.data_wait_ms, step=end.step)
        tf.summary.scalar("timing/samples_per_sec", logged.samples_per_sec, step=end.step)
        if logged.gpu_util is not None:
            tf.summary.scalar("gpu/utilization_percent", logged.gpu_util, step=end.step)
        for key, value in logged.gpu_fields().items():
            if value is not None:
                tf.summary.scalar(f"gpu/{key}", value, step=end.step)
        self.progress(logged)
        self._say_decode_failures()

    def _say_decode_failures(self) -> None:
        """Clips that failed to decode since the last log (the pipeline skips them), named once each."""
        from xtts_cli.data.audio_codecs import decode_failures

        failed = {path: why for path, why in decode_failures().items() if path not in self.said_failed}
        if not failed:
            return
        self.said_failed |= set(failed)
        shown = "; ".join(f"{path} ({why})" for path, why in list(failed.items())[:3])
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        self.progress(
            Noted(
                f"{len(failed)} clip{'s' if len(failed) > 1 else ''} failed to decode and "
                f"{'are' if len(failed) > 1 else 'is'} skipped every epoch: {shown}{more}; replace or remove them",
                label="warning",
            )
        )

    def start_gpu_sampler(self):
        """NVML sampling of the GPUs in use, for the progress line; None on CPU or without NVML."""
        if not self.roles:
            return None
        from xtts_cli.devices.nvml_sampler import GpuSampler

        sampler = GpuSampler(sorted(self.roles), hz=self.trainer.config.profiling.gpu_sample_hz)
        sampler.start()
        return None if sampler.unavailable_reason else sampler

    @property
    def roles(self) -> dict[int, str]:
        """The GPUs the run uses by index, and what it gives each: "model" and "data" in the split,
        "replica" for each of several replicas, "model" alone."""
        plan = self.trainer.plan
        if plan.device_type != "GPU":
            return {}

        def index(name: str) -> int:
            return int(name.rsplit(":", 1)[1])

        roles = {index(name): "replica" for name in plan.replica_devices} if len(plan.replica_devices) > 1 else {}
        roles.setdefault(index(plan.model_device), "model")
        if plan.data_device and index(plan.data_device) not in roles:
            roles[index(plan.data_device)] = "data"
        return roles

    def gpu_readings(self, seconds: float) -> Optional[dict[int, GpuReading]]:
        """Each GPU in use over the last `seconds`: mean NVML utilisation and memory in use, and its role."""
        return None if self.sampler is None else gpu_readings(self.sampler, seconds, self.roles)

    def gpu_utilization(self, seconds: float) -> Optional[float]:
        """Mean NVML utilisation of the GPUs in use over the last `seconds`."""
        values = [r.util for r in (self.gpu_readings(seconds) or {}).values() if r.util is not None]
        return sum(values) / len(values) if values else None

    def on_end(self, result: TrainResult) -> None:
        # A run stopped between two logged steps (SIGTERM, its time budget) logs the step it saved.
        if (self.window["steps"] or self.window_traced["steps"]) and self.last_end is not None:
            self.log(self.last_end)
            self.window, self.window_traced = self._empty(), self._empty()
        total, traced = self.total, self.traced
        result.trace_seconds, result.trace_wait_seconds = traced["time"] - traced["wait"], traced["wait"]
        result.trace_steps = int(traced["steps"])
        speed = total if total["steps"] else traced  # a run of its traced step alone: that step's wait
        if speed["time"] > 0:
            result.data_wait_percent = 100.0 * speed["wait"] / speed["time"]
        if total["time"] > 0:  # a traced step's time is its graph's building: no speed
            result.steps_per_sec = total["steps"] / total["time"]
            result.samples_per_sec = total["samples"] / total["time"]
        # What the step accounting cannot see: time between steps (validation, checkpoints, samples,
        # or a stall of the loop itself, such as an input pipeline torn down at every epoch's end).
        # A wait for a batch that never came, ended by a signal, is after the last step: said on its own.
        result.loop_seconds = time.perf_counter() - self.loop_started - result.stopped_waiting_seconds
        if result.loop_seconds > 0:
            # A traced step's wait for its batch is left out of the steps, as of the data wait: said on its own.
            in_steps = total["time"] + traced["time"] - traced["wait"]
            result.step_time_percent = min(100.0, 100.0 * in_steps / result.loop_seconds)

    def close(self) -> None:
        if self.sampler is not None:
            self.sampler.stop()


class ValidationHook(Hook):
    """Every `val_step`; also before the first step of a run started from another
    (`training.init_from`): what it starts from, beside the base's own figure. With
    `training.early_stop_patience`, ends the run once that many validations in a row did not
    improve on the best."""

    def __init__(self, trainer: HookedRun, metrics: Any, progress: Progress, result: TrainResult) -> None:
        self.trainer, self.metrics, self.progress, self.result = trainer, metrics, progress, result
        self.every = trainer.config.training.val_step
        self.patience = trainer.config.training.early_stop_patience
        self.best, self.since_best, self.best_step = math.inf, 0, 0
        # The best weights are kept to end with (one process: a cluster's workers would all have to write).
        self.keeps_best = self.patience is not None and trainer.plan.worker_cluster is None

    def on_start(self, result: TrainResult) -> None:
        self._resume_early_stop(result)
        if self.patience is not None and not self.trainer.validates:
            self.progress(Noted(early_stop_without_validation().message, label="warning"))
        parent = self.trainer.parent
        if parent is None or result.start_step or result.early_stopped:
            return
        values = self._validate(0)
        if values is not None and self.patience is not None:
            # The base's own weights are the first to beat: an adaptation that only makes them worse
            # ends with them, not with its least bad step.
            self.best, self.best_step, self.since_best = values["val_loss"], 0, 0
            result.best_val_loss, result.best_val_step = self.best, 0
            if self.keeps_best:
                self.trainer.keep_best()
            self._keep_record(None)
        if values is not None:
            base = parent.val_loss()
            self.progress(
                Noted(
                    f"before the first step: val_loss {values['val_loss']:.4f}"
                    + (
                        f" (the base's at step {parent.step}, on its validation clips: {base:.4f})"
                        if base is not None
                        else ""
                    )
                )
            )

    def _resume_early_stop(self, result: TrainResult) -> None:
        """Early stopping goes on where the run left it (its best, and the validations since): a
        resume after Ctrl-C must not forget the best weights, nor an early-stopped run train on."""
        if self.trainer.plan.worker_cluster is not None:
            return
        record = self.trainer.early_stop_record() if self.keeps_best and result.start_step else None
        if record is None or record.get("step", math.inf) > result.start_step:
            # None yet, or one from steps this checkpoint never reached (an older checkpoint restored).
            self.trainer.forget_best()
            self.trainer.keep_early_stop(None)
            return
        if record.get("validation", self.trainer.validation_set) != self.trainer.validation_set:
            # Another validation set (data.eval_dataset_path, the split, max_val_batches): its losses
            # do not compare with the best, which had rolled a run back to weights measured on others.
            self.trainer.forget_best()
            self.trainer.keep_early_stop(None)
            self.progress(
                Noted(
                    f"the validation clips or batches changed since the best val_loss {record['val_loss']:.4f} (step "
                    f"{record['step']}) was measured: early stopping compares anew from this run's first validation"
                )
            )
            return
        result.best_val_loss, result.best_val_step = record["val_loss"], record["step"]
        self.best, self.best_step, self.since_best = record["val_loss"], record["step"], record["since_best"]
        if record.get("stopped_at") is None:
            return
        if self.patience is not None and self.since_best >= self.patience:
            result.early_stopped = True
            self.progress(
                Noted(
                    f"the run stopped early at step {record['stopped_at']}: val_loss had not improved on "
                    f"{self.best:.4f} (step {self.best_step}) for {self.since_best} validations; nothing to "
                    "train: raise training.early_stop_patience, or leave it out, to go on"
                )
            )
            return
        self.trainer.keep_best()  # it ended with the best's weights, restored when it stopped

    def on_step(self, end: StepEnd) -> None:

        if end.step % self.every:
            return
        if end.stopping:
            if self.trainer.validates:
                self.progress(Noted(f"step {end.step}'s validation skipped: the run is stopping, to save it at once"))
            return
        values = self._validate(end.step)
        self.trainer.summaries(end.batch, end.step)
        if values is None or self.patience is None:
            return
        if values["val_loss"] < self.best:
            self.best, self.since_best, self.best_step = values["val_loss"], 0, end.step
            if self.keeps_best:
                self.trainer.keep_best()
        else:
            self.since_best += 1
        self.result.best_val_loss, self.result.best_val_step = self.best, self.best_step
        if self.since_best < self.patience:
            self._keep_record(None)
            return
        self.result.early_stopped = True
        kept = self.keeps_best and self.trainer.restore_best()
        self._keep_record(end.step)
        self.progress(
            Noted(
                f"val_loss has not improved on {self.best:.4f} (step {self.best_step}) for {self.since_best} "
                f"validations (training.early_stop_patience): ending the run at step {end.step}"
                + (f" with the weights of step {self.best_step}, the best" if kept else "")
            )
        )

    def _keep_record(self, stopped_at: Optional[int]) -> None:
        if self.keeps_best:
            self.trainer.keep_early_stop(
                {
                    "val_loss": self.best,
                    "step": self.best_step,
                    "since_best": self.since_best,
                    "stopped_at": stopped_at,
                    "validation": self.trainer.validation_set,
                }
            )

    def on_end(self, result: TrainResult) -> None:
        # Interrupted, it goes on with the same command; stopped early, it stays stopped. Out of time
        # or of its steps after a validation worse than its best, it ends with the best's weights, as
        # an early stop does (adapt-cpu ends by time): a larger budget or --steps goes on from them,
        # still comparing with that best (its copy and record are kept).
        trained = result.final_step > result.start_step  # a start with nothing to train ended as it was
        if self.keeps_best and trained and not (result.interrupted or result.early_stopped) and self.since_best > 0:
            if self.trainer.restore_best():
                self.trainer.keep_best()  # still the best, for a longer run to go on comparing with
                self._keep_record(result.final_step)  # what the checkpoint of this step holds
                self.progress(
                    Noted(
                        f"ending with the weights of step {self.best_step}, the best validation ({self.best:.4f}); "
                        f"the {self.since_best} validation{'s' if self.since_best > 1 else ''} since did not improve on it"
                    )
                )

    def _validate(self, step: int) -> Optional[dict[str, float]]:
        if not self.trainer.validates:  # no validation clips: no "validating ..." that ends in nothing
            return None
        self.progress(PhaseStarted("validating"))
        values = self.trainer.validate()
        if values is not None:
            validated = Validated(step, values["val_loss"], values.get("alignment_score"))
            self.result.last_val_loss, self.result.last_val_step = validated.val_loss, step
            self.result.last_alignment_score = validated.alignment_score
            for name, value in values.items():
                tf.summary.scalar(f"val/{name.removeprefix('val_')}", value, step=step)
            self.metrics.write(validated.record())
            self.progress(validated)
        return values


class CheckpointHook(Hook):
    def __init__(self, trainer: HookedRun) -> None:
        self.trainer = trainer
        self.every = trainer.config.training.save_step

    def on_step(self, end: StepEnd) -> None:
        if end.step % self.every == 0:
            self.trainer.save()

    def on_end(self, result: TrainResult) -> None:
        if result.final_step > result.start_step:  # a start with nothing to train leaves its checkpoint as it is
            self.trainer.save()


class SamplesHook(Hook):
    def __init__(self, trainer: HookedRun, progress: Progress) -> None:
        self.trainer = trainer
        self.progress = progress
        self.every = trainer.config.training.sample_step

    def on_step(self, end: StepEnd) -> None:
        if end.step % self.every == 0 and self.trainer.is_chief and not end.stopping:  # stopping: saved at once
            began = time.perf_counter()
            phase = self.trainer.kind.samples_phase
            self.progress(PhaseStarted(phase))
            self.trainer.render_samples(end.step)
            self.progress(PhaseEnded(phase, time.perf_counter() - began))


@contextlib.contextmanager
def _recording_the_end(parts: RunComponents, result: TrainResult):
    """How this start of the run ended, into run.json's history (by the chief): its steps and what
    ended them. A start with no end there was killed. A rerun with every step done added no start."""
    recorded = parts.is_chief and not (parts.resumed and result.start_step >= parts.total_steps)
    try:
        yield
    except BaseException as exc:
        if recorded:
            step = int(parts.counters.step.numpy())
            said = exc.lines[0] if isinstance(exc, XttsError) and exc.lines else f"{type(exc).__name__}: {exc}"
            why = "a second Ctrl-C, unsaved" if isinstance(exc, KeyboardInterrupt) else f"error: {said}"[:300]
            record_end(parts.run_dir, {"steps": [result.start_step, step], "ended_by": why})
        raise
    if recorded:
        record_end(parts.run_dir, {"steps": [result.start_step, result.final_step], "ended_by": _ended_by(result)})


def _ended_by(result: TrainResult) -> str:
    if result.interrupted:
        return f"interrupted by {result.interrupted}"
    if result.early_stopped:
        return "early stop (training.early_stop_patience)"
    if result.out_of_time:
        return "its time budget (training.max_minutes)"
    if result.final_step == result.start_step:
        return "nothing to train"
    return "its last step (training.max_steps or epochs)"


def _watch(trainer: Trainer, metrics: Any, progress: Progress, measuring: MetricsHook) -> Hook:
    from xtts_cli.devices.gpu_info import usable_cpu_count
    from xtts_cli.training.watch import WatchHook

    return WatchHook(trainer.config, usable_cpu_count(), metrics, progress, gpus=measuring.gpu_readings)


def batch_shape(batch) -> tuple:
    """The shapes of a batch's tensors (each replica's, under a strategy): what XLA compiles for."""
    shapes = []
    for part in tf.nest.flatten(batch):
        for tensor in getattr(part, "values", (part,)) if not isinstance(part, tf.Tensor) else (part,):
            shapes.append(tuple(tensor.shape) if hasattr(tensor, "shape") else None)
    return tuple(shapes)


class Controller:
    """Sets up a `Trainer`, runs its loop and hands each step to the hooks: the standard ones, then
    `extra_hooks` (a caller's own, e.g. a test's or a script's)."""

    def __init__(self, trainer: Trainer, extra_hooks: Sequence[Hook] = (), *, started: Optional[float] = None) -> None:
        """`started`: the `time.monotonic()` the command began at (training.max_minutes counts its
        start-up too); default: when `run` is called."""
        self.trainer = trainer
        self.progress: Progress = trainer.progress
        self.extra_hooks = list(extra_hooks)
        self.command_started = started
        self.started = time.monotonic()
        self.compiled_shapes: set[tuple] = set()  # batch shapes XLA has compiled the step for
        self.listening: Optional[GracefulInterrupt] = None  # the loop's, once it has begun

    def signalled(self) -> bool:
        """A signal came while the loop listened: a caller's own source of batches stops waiting."""
        return self.listening is not None and self.listening.requested

    def run(self) -> TrainResult:
        """Set up and train (trainer.py's docstring); a multi-worker run that loses a peer says so."""
        trainer = self.trainer
        try:
            return self._run()
        except BaseException as exc:
            if trainer.config.devices.strategy != "multi_worker":
                raise
            if _is_lost_peer(exc):
                step, latest = trainer.where_it_stopped()
                reason = _lost_peer_reason(exc)
                raise XttsError(
                    f"training stopped after step {step}: another worker stopped or cannot be reached ({reason})",
                    hint=f"{_unreached(reason, trainer.cluster)}, then start every worker again with "
                    f"the same command to resume from {latest or 'the start (no checkpoint yet)'}",
                ) from None
            if not isinstance(exc, _RAISED_ON_EVERY_WORKER) and trainer.cluster is not None:
                _tell_the_other_workers(exc, trainer.cluster)
            raise

    def _run(self) -> TrainResult:

        from xtts_cli.training.metrics import MetricsWriter
        from xtts_cli.training.summaries import drop_summaries_after

        trainer = self.trainer
        self.started = self.command_started or time.monotonic()  # training.max_minutes counts start-up too
        heard = self._hearing_notes()
        config = trainer.config
        budgeted = budget_on_a_cluster(config)
        if budgeted is not None:
            raise budgeted  # before set-up: a precompute pass can take an hour
        try:
            parts = trainer.setup()  # a set-up that fails still gives back what it took (the run's lock)
            result = trainer.new_result()
            self.progress(RunStarted(result=result, total_steps=parts.total_steps, batch_size=parts.input.batch_size))
            metrics_file: contextlib.AbstractContextManager[Any]
            if parts.is_chief:
                # The steps after the checkpoint, logged before a kill, are trained again; with no
                # checkpoint (a second Ctrl-C before the first), every step logged is.
                again_after = result.start_step if parts.resumed else -1
                drop_summaries_after(parts.run_dir.tensorboard, again_after, lambda line: self.progress(Noted(line)))
                # A rerun with every step done writes no summary: its event file would hold none.
                done = parts.resumed and result.start_step >= parts.total_steps
                writer = (
                    tf.summary.create_noop_writer()
                    if done
                    else tf.summary.create_file_writer(str(parts.run_dir.tensorboard))
                )
                metrics_file = MetricsWriter(parts.run_dir.metrics, resumed_at=again_after)
                if metrics_file.dropped and parts.resumed:  # a kill after them, or a checkpoint deleted since
                    self.progress(
                        Noted(
                            f"resuming at step {again_after}: {metrics_file.dropped} record"
                            f"{'s' if metrics_file.dropped > 1 else ''} of later steps in metrics.jsonl (logged "
                            "after its checkpoint, before the run stopped) dropped, as in TensorBoard: those "
                            "steps train again"
                        )
                    )
                elif metrics_file.dropped:
                    self.progress(
                        Noted(
                            f"no checkpoint to resume from: the run starts at step 0, and the "
                            f"{metrics_file.dropped} records earlier attempts left in metrics.jsonl are dropped"
                        )
                    )
            else:
                writer = tf.summary.create_noop_writer()
                metrics_file = contextlib.nullcontext(_DiscardedMetrics())
            try:
                with metrics_file as metrics, writer.as_default(), _recording_the_end(parts, result):
                    measuring = MetricsHook(trainer, metrics, self.progress)
                    hooks: list[Hook] = [
                        measuring,
                        *([_watch(trainer, metrics, self.progress, measuring)] if config.watch.enabled else []),
                        ValidationHook(trainer, metrics, self.progress, result),
                        CheckpointHook(trainer),
                        SamplesHook(trainer, self.progress),
                        *self.extra_hooks,
                    ]
                    try:
                        self._loop(parts, hooks, result)
                    finally:
                        measuring.close()
            finally:
                writer.close()
        finally:
            trainer.close()
        result.traces = trainer.traces()
        # What it said as it set up and ran (what --init-from kept, an early stop) joins the notes
        # the run started with, for --json: said once each as it came, not again here.
        result.notes.extend(note for note in heard if note not in result.notes)
        self.progress(RunEnded(result))
        return result

    def _hearing_notes(self) -> list[str]:
        """The notes the set-up and the run say from now on, as they go on to the progress."""
        heard: list[str] = list(self.trainer.noted_first)
        told = self.trainer.progress

        def progress(event: Any) -> None:
            if isinstance(event, Noted) and event.label == "note":
                heard.append(event.message)
            told(event)

        self.trainer.progress = self.progress = progress
        return heard

    def run_steps(
        self, parts: RunComponents, hooks: Sequence[Hook], result: TrainResult, *, steps: int, source: Any = None
    ) -> None:
        """`steps` more steps of the training loop on a set-up run, handed to `hooks` alone (none of
        the standard ones): what `xtts profile-step` times is this loop. `source`: the (batch, wait)
        pairs to train on, kept open for a later call; default the run's own pipeline."""
        start = int(parts.counters.step.numpy())
        result.start_step = result.final_step = start
        self._loop(parts, list(hooks), result, until=start + steps, source=source)
        if result.interrupted == "SIGINT":
            # The loop finished its step and handed the signal back: a caller timing steps stops as
            # the signal says, not as if the data ended. Raised, not re-sent: a process started with
            # SIGINT ignored (a script's background job) had gone on to report 0 steps timed.
            raise StepsInterrupted
        if result.interrupted in ("SIGTERM", "SIGHUP"):
            number = signal.Signals[result.interrupted]
            if signal.getsignal(number) in (signal.SIG_IGN, None):
                raise SystemExit(128 + number)  # as the signal's default ends it: 143, 129
            signal.raise_signal(number)

    def _loop(
        self, parts: RunComponents, hooks: list[Hook], result: TrainResult, *, until: Optional[int] = None, source=None
    ) -> None:
        training, counters = self.trainer.config.training, parts.counters
        max_steps, per_epoch = (parts.total_steps if until is None else until), parts.input.steps_per_epoch
        multi = parts.plan.worker_cluster is not None
        step = result.start_step
        for hook in hooks:
            hook.on_start(result)
        agreed_stop = False  # multi-worker: some worker was signalled, as the last step's reduction said
        before, deadline = self._budget(counters, result, timing=until is not None)
        loop_started = time.monotonic()
        said = lambda line: self.progress(Noted(line))  # noqa: E731  `run_steps` (until given): nothing is saved
        with GracefulInterrupt(said=said, together=multi, saves=until is None) as interrupt:
            self.listening = interrupt

            def stopping() -> bool:
                # A worker of a cluster must not act on its own signal alone (trainer.py's docstring).
                return agreed_stop if multi else interrupt.requested

            endless = self._batches(parts, interrupt, step) if source is None else source
            epoch = int(counters.epoch.numpy())
            # A run resumed inside an epoch trains what is left of it (its steps past the epochs
            # counted), not a whole one: each later step keeps its epoch, and training.epochs its end.
            done = step - epoch * per_epoch
            left = per_epoch - done if 0 < done < per_epoch else per_epoch
            waiting_since: Optional[float] = time.perf_counter()  # for a batch: None while one is trained

            while (
                step < max_steps
                and (until is not None or int(counters.epoch.numpy()) < training.epochs)
                and not stopping()
                and not result.out_of_time
                and not result.early_stopped
            ):
                taken = 0
                for batch, wait in self._fed(itertools.islice(endless, left), parts, result.start_step):
                    taken += 1
                    waiting_since = None
                    if counters.stop_flag is not None:  # multi-worker
                        counters.stop_flag.assign(1.0 if interrupt.requested else 0.0)
                    self._count_time(counters, before, deadline, loop_started)  # saved with the step
                    end = self._step(parts, batch, wait, first=step == result.start_step, epoch=epoch)
                    step = end.step
                    if multi:
                        agreed_stop = end.losses.pop(STOP_KEY) > 0
                    end = dataclasses.replace(end, stopping=stopping())
                    self._check_finite(step, end.losses)
                    result.first_loss = end.losses["loss"] if result.first_loss is None else result.first_loss
                    result.last_loss = end.losses["loss"]
                    try:
                        for hook in hooks:
                            hook.on_step(end)
                    except Exception as exc:
                        self._keep_the_step(parts, step, exc)
                        raise
                    result.out_of_time = deadline is not None and time.monotonic() >= deadline
                    if step >= max_steps or stopping() or result.out_of_time or result.early_stopped:
                        break  # max_steps or max_minutes reached, no better validation, or interrupted
                    waiting_since = time.perf_counter()
                if taken == left:
                    counters.epoch.assign_add(1)  # the epoch ran to its end (its last step may end the run)
                    epoch, left = epoch + 1, per_epoch
                elif not (
                    step >= max_steps or interrupt.requested or stopping() or result.out_of_time or result.early_stopped
                ):
                    raise self._ran_out(parts, step, result.start_step)
            # The last save keeps the minutes up to the end (the last step's own included), the figure
            # the budget was judged by: a run ended by it trains nothing when run again.
            self._count_time(counters, before, None, loop_started)
            interrupt.ending = True
            self._record_end(result, step, max_steps, interrupt, agreed_stop)
            if waiting_since is not None and result.interrupted:  # a batch that never came (a service's dead worker)
                result.stopped_waiting_seconds = time.perf_counter() - waiting_since
            for hook in hooks:
                hook.on_end(result)
            self._release(endless if source is None else None, multi)

    def _release(self, pipeline, multi: bool) -> None:
        """Release the input pipeline (multi-worker: before the barrier). Tearing an iterator down
        can take a while (TF 2.16's tf.data autotuning thread sometimes sleeps out its period before
        it notices: 0 to 40 s seen on a loaded 2-core machine); after the barrier it would keep one
        worker's process alive after the others', and the coordination service reports that as a
        missing heartbeat. `pipeline`: None for a caller's own source, kept open for a later call."""
        if pipeline is not None:
            pipeline.close()
        if multi:
            self.trainer.check_workers_agree("at the end")

    def _batches(self, parts: RunComponents, interrupt: GracefulInterrupt, start: int):
        """One iterator over the endlessly repeating dataset for the whole run, cut into epochs of
        steps_per_epoch steps. A wait for the tf.data service's batches ends on a signal, and a long
        one says what the service answers and what the user can do."""

        def note(text: str) -> None:
            step = int(parts.counters.step.numpy())
            saved = f"saves step {step} and stops" if step > start else "stops"
            self.progress(Noted(f"{text}; training goes on when a batch comes, Ctrl-C {saved}"))

        return parts.steps.batches(parts.input.train_ds, stop=lambda: interrupt.requested, note=note)

    def _count_time(self, counters, before: float, deadline: Optional[float], loop_started: float) -> None:
        """The run's minutes so far (this command's and `before`, earlier commands'), and with a
        `deadline` the share of the budget that the loops of this and earlier commands have spent."""
        now = time.monotonic()
        counters.minutes.assign(before + (now - self.started) / 60.0)
        if deadline is not None and counters.budget_used is not None:
            spent = (60.0 * before + now - loop_started) / max(60.0 * before + deadline - loop_started, 1e-9)
            counters.budget_used.assign(min(1.0, spent))

    def _budget(self, counters, result: TrainResult, *, timing: bool) -> tuple[float, Optional[float]]:
        """(minutes earlier commands of the run spent of training.max_minutes, this command's
        deadline or None); a run that spent it all trains nothing, and says so, as at max_steps."""
        budget = self.trainer.config.training.max_minutes
        before = float(counters.minutes.numpy())  # a checkpoint from before it was kept: none
        if budget is None:
            return before, None
        if before >= budget and not timing:
            result.out_of_time = True
            self.progress(
                Noted(
                    f"the run has trained {before:.1f} minutes, its training.max_minutes ({budget:g}): "
                    "nothing to train; raise --max-minutes to go on"
                )
            )
        return before, self.started + 60.0 * (budget - before)

    def _fed(self, batches: Iterator, parts: RunComponents, start: int) -> Iterator:
        """`batches`, whose failure (the tf.data service's dispatcher restarted and forgot the job, a
        clip that cannot be read any more) comes after steps the model trained intact: those are
        saved before the error is raised, as a failing hook's are."""
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            except Exception as exc:
                trained = int(parts.counters.step.numpy())
                if trained > start:
                    self._keep_the_step(parts, trained, exc)
                # A store's shard cut short under the run: one line, not TensorFlow's traceback.
                if isinstance(exc, tf.errors.OpError):
                    said = (exc.message or type(exc).__name__).strip().splitlines()[0][:300]
                    raise XttsError(
                        f"reading the training batches failed after step {trained}: {type(exc).__name__}: {said}",
                        hint="the same command resumes from the last checkpoint (it rebuilds a damaged feature store)",
                    ) from exc
                raise
            yield batch

    def _ran_out(self, parts: RunComponents, step: int, start: int) -> XttsError:
        """The error of a pass over the data that gave no batch, the steps trained since `start` saved
        first: its hint says to run the same command to resume, which had found the last checkpoint."""
        ran_out = XttsError(
            f"the training pipeline ran out of batches after step {step}: a pass over the data "
            f"gave none (every clip it read failed to decode; see the warnings above)",
            hint="replace or remove the audio files the warnings name, then run the same command to resume",
        )
        if step > start:
            self._keep_the_step(parts, step, ran_out)
        return ran_out

    def _keep_the_step(self, parts: RunComponents, step: int, error: Exception) -> None:
        """A hook (validation, samples, summaries) or the batches failed after step `step` trained: that step is
        saved, so the same command resumes there, not at the last checkpoint. Not on a cluster (a
        save is collective, and the other workers are not saving), nor where saving is what failed."""
        from xtts_cli.errors import disk_full

        if parts.plan.worker_cluster is not None or disk_full(error) is not None:
            return
        try:
            path = self.trainer.save()
        except Exception:  # noqa: BLE001 - the hook's error is the one to report
            return
        self.progress(
            Noted(f"step {step} trained before the error below: saved it ({path}); the same command resumes there")
        )

    def _record_end(self, result: TrainResult, step: int, max_steps: int, interrupt, agreed_stop: bool) -> None:
        """Why the loop ended, into `result`: a signal (here or to another worker), or the time budget.
        A signal that came once the last step was trained (its samples or checkpoint under way; the
        last of the steps, of the minutes, or of the validations that improve) ends nothing: the run
        is complete, not one to resume."""
        if interrupt.requested and (step >= max_steps or result.out_of_time or result.early_stopped):
            self.progress(Noted(f"{interrupt.signal_name} came after the last step ({step}): the run is complete"))
        elif interrupt.requested:
            result.interrupted = interrupt.signal_name
            result.exit_code = interrupt.exit_code
        elif agreed_stop:
            # Another worker was signalled: this one saved the same step and exits like it.
            result.interrupted = "a signal to another worker"
            result.exit_code = EXIT_CODES[signal.SIGTERM]
        result.final_step = step
        self._say_a_rising_loss(result, step)
        if result.out_of_time and result.start_step < step < max_steps:  # none: spent before, and said so
            training = self.trainer.config.training
            warming = (
                f"; it was still warming up (training.warmup_steps {training.warmup_steps}), so its rate never "
                "decayed: lower training.warmup_steps, or raise --max-minutes"
                if step < training.warmup_steps and training.lr_schedule == "cosine"
                else ""
            )
            self.progress(
                Noted(
                    f"training.max_minutes ({training.max_minutes:g}) reached after step {step} of "
                    f"{max_steps}: ending the run there (a checkpoint of this step is saved){warming}"
                )
            )

    def _say_a_rising_loss(self, result: TrainResult, step: int) -> None:
        """A loss that ended at three times its first (a learning rate too high): a run had ended so with exit 0
        and "listen:". Not across a change of what the step trains (a vocoder's discriminators joining add
        their losses to it)."""
        first, last, models = result.first_loss, result.last_loss, self.trainer.parts.models
        if first is None or last is None or not 0 < 3 * first < last or step <= result.start_step + 1:
            return
        if models.phase(result.start_step) != models.phase(step - 1):
            return
        rate = self.trainer.config.training.learning_rate
        said = (
            f"the loss rose from {first:.4g} at step {result.start_step + 1} to {last:.4g} at step {step}: the "
            f"training is diverging; lower training.learning_rate ({rate:g}) and start it again (--fresh)"
        )
        result.notes.append(said)  # for --json too, which lists notes, not warnings
        self.progress(Noted(said, label="warning"))

    def _step(self, parts: RunComponents, batch, wait: float, *, first: bool, epoch: int = 0) -> StepEnd:
        """Run one training step and count it; its values are on the host when this returns."""
        # Eager (graph mode off, eager debug): no graph to build, the first step is a step.
        first = first and parts.settings.graph_mode
        if first:
            self.progress(PhaseStarted("tracing the training step (its first call builds the graph)"))
        traces = parts.steps.traces()
        began = time.perf_counter()
        losses = parts.steps.train(batch, int(parts.counters.step.numpy()))
        values = {k: float(v) for k, v in losses.items()}  # host sync: the step is done
        compute = time.perf_counter() - began
        if first:
            self.progress(PhaseEnded("tracing the training step", compute))
        step = int(parts.counters.step.assign_add(1).numpy())
        last = step == parts.total_steps
        # Not the first alone: a vocoder's first adversarial step builds its phase's graph too (seconds),
        # which had counted as a step in the speed and not in trace_seconds.
        compiled = self._compiled_anew(batch, parts.settings.xla)  # the first step's shape too: it is known after
        traced = first or parts.steps.traces() > traces or compiled
        return StepEnd(
            step, values, batch, wait, compute, parts.input.batch_size, last=last, traced=traced, epoch=epoch
        )

    def _compiled_anew(self, batch, xla: bool) -> bool:
        """Whether XLA compiled the step for this batch's shapes just now: once per shape (seconds to
        minutes), within the one trace, so the trace count does not show it. Counted as a step, one
        bucket's compile had made a GPU run's first steps/s read a tenth of its speed."""
        if not xla:
            return False
        shape = batch_shape(batch)
        if shape in self.compiled_shapes:
            return False
        self.compiled_shapes.add(shape)
        return True

    def _check_finite(self, step: int, values: dict[str, float]) -> None:
        bad = [k for k, v in values.items() if not math.isfinite(v)]
        if bad:
            # The loss is reduced over every replica, so every worker stops here alike.
            last = self.trainer.latest_checkpoint()
            raise NonFiniteLossError(
                f"training.{bad[0]} is {values[bad[0]]} at step {step} "
                f"({', '.join(f'{k}={v:.4g}' for k, v in values.items())}); nothing was saved after it",
                hint="lower training.learning_rate or check the data; "
                + (
                    f"the last good checkpoint is {last} (xtts train resumes from it)"
                    if last
                    else "no checkpoint was saved: the same command starts the run over"
                ),
            )
