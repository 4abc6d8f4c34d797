"""What a training run tells the outside, as typed events: the progress protocol.

The controller (training/controller.py) and its hooks emit them to one `Progress` callable; the
command renders them (cli/progress.py). Engines never print.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

if TYPE_CHECKING:
    from xtts_cli.config.schema import DataConfig
    from xtts_cli.data.scan import ScanReport

__all__ = [
    "Event",
    "Noted",
    "Progress",
    "RunEnded",
    "RunStarted",
    "ScanFinished",
    "StepLogged",
    "TrainResult",
    "Validated",
    "Watched",
    "ignore",
]


def _said(text: str, default: Any = None, factory: Any = None) -> Any:
    """A field with its description (docs/json.md is generated from them)."""
    if factory is not None:
        return field(default_factory=factory, metadata={"description": text})
    return field(default=default, metadata={"description": text})


@dataclass
class TrainResult:
    """What a run did; filled in as it goes and returned (`xtts train --json` prints it)."""

    run_dir: Path = field(metadata={"description": "The run directory."})
    start_step: int = field(metadata={"description": "The step it started (or resumed) at."})
    final_step: int = field(metadata={"description": "The step it ended at (saved in its last checkpoint)."})
    resumed: bool = field(metadata={"description": "It resumed a run rather than starting one."})
    interrupted: Optional[str] = _said(
        "SIGINT, SIGTERM or SIGHUP when a signal ended it; `a signal to another worker` when one to another "
        "worker of its cluster did (it saved the same step, exit 143); null otherwise."
    )
    exit_code: int = _said("The command's exit status: 0, or 130 and 143 after a signal.", 0)
    out_of_time: bool = _said("training.max_minutes ended the run.", False)
    early_stopped: bool = _said("training.early_stop_patience ended the run (with its best weights).", False)
    traces: int = _said("Traces of the training step (one per batch shape; 0 in eager mode).", 0)
    shape_bound: int = _said("The pipeline's bound on distinct batch shapes (0: unbounded).", 0)
    first_loss: Optional[float] = _said("The loss of its first step; null when it trained none.")
    last_loss: Optional[float] = _said("The loss of its last step.")
    last_val_loss: Optional[float] = _said(
        "The last validation loss of this call; null without validation data or before one (a resume whose steps "
        "reach no training.val_step: metrics.jsonl holds the earlier ones)."
    )
    last_val_step: Optional[int] = _said("The step of last_val_loss (0: before the first step of an adapted run).")
    best_val_loss: Optional[float] = _said(
        "With training.early_stop_patience: the best validation loss (over resumes); an early stop ends with its weights."
    )
    best_val_step: Optional[int] = _said("The step of best_val_loss.")
    last_alignment_score: Optional[float] = _said(
        "The last validation's alignment score (focus rate of the cross-attention, near 1 when aligned)."
    )
    steps_per_sec: Optional[float] = _said(
        "Training steps a second over the run's steps, those that built a graph (trace_seconds) left out; null "
        "when it took no step but those (a speed needs more)."
    )
    trace_seconds: float = _said(
        "The steps that built a graph in graph mode (the first; a vocoder's first adversarial one; under XLA the "
        "first of each batch shape, which it compiles), s; 0 in eager mode.",
        0.0,
    )
    trace_steps: int = _said(
        "How many steps those were: the first, and under XLA the first of each batch shape (its compile).", 0
    )
    trace_wait_seconds: float = _said(
        "Seconds those steps waited for their batches, left out of data_wait_percent with them (unless they were "
        "all the run's steps): a first batch "
        "slow to come (a tf.data service's worker not yet up, a cold disk).",
        0.0,
    )
    samples_per_sec: Optional[float] = _said("Clips a second (steps_per_sec x the step's batch); null with it.")
    data_wait_percent: float = _said(
        "Share of step time spent waiting for the next batch, %: of the steps after those that built a graph, or of "
        "those alone when the run took no other; 0 when it took no step.",
        0.0,
    )
    loop_seconds: float = _said("Wall clock from the first step to the last, validation and saving included.", 0.0)
    step_time_percent: float = _said("The share of loop_seconds in steps (their data wait included), %.", 0.0)
    stopped_waiting_seconds: float = _said(
        "Seconds a run stopped by a signal had waited for a batch that had not come (a tf.data service whose "
        "worker stopped answering); 0 otherwise.",
        0.0,
    )
    device_plan: str = _said("Where it trained, as the start line says it.", "")
    listen: str = _said("The command to hear the run (its kind's synthesize or vocode line).", "")
    bad_files: list[dict[str, str]] = _said(
        "Items the scan left out: each its `path`, `reason` (a scan reason code, as validate's) and `detail`.",
        factory=list,
    )
    notes: list[str] = _said(
        "What it noted as it started (a CPU run, a run already done) and ran (what --init-from kept, an early stop).",
        factory=list,
    )
    watch: list[dict[str, Any]] = _said(
        "The training watch's lines, as metrics.jsonl records them: each its `step`, `watch` (the finding's id), "
        "`state` (warning or recovered), `figure`, `message` and `fix`.",
        factory=list,
    )


@dataclass(frozen=True)
class ScanFinished:
    scan: ScanReport
    data: Optional[DataConfig] = None  # the settings it scanned with: what its transcripts are read as


@dataclass(frozen=True)
class RunStarted:
    result: TrainResult
    total_steps: int
    batch_size: int


@dataclass(frozen=True)
class StepLogged:
    """The means of the steps since the last log line (every `training.log_step` steps)."""

    step: int
    epoch: int
    losses: dict[str, float]
    lr: float
    step_ms: float
    data_wait_ms: float
    samples_per_sec: float
    traces: int
    gpu_util: Optional[float]  # the mean of the cards in use
    gpus: dict[int, Any] = field(default_factory=dict)  # each card on its own: index -> watch.GpuReading

    @property
    def loss(self) -> float:
        return self.losses["loss"]

    @property
    def data_wait_percent(self) -> float:
        return 100.0 * self.data_wait_ms / max(self.step_ms, 1e-9)

    def record(self) -> dict[str, Any]:
        """The metrics.jsonl line."""
        return {
            "step": self.step,
            "epoch": self.epoch,
            **self.losses,
            "lr": self.lr,
            "step_ms": self.step_ms,
            "data_wait_ms": self.data_wait_ms,
            "samples_per_sec": self.samples_per_sec,
            "traces": self.traces,
            "gpu_util": self.gpu_util,
            **self.gpu_fields(),
        }

    def gpu_fields(self) -> dict[str, Optional[float]]:
        """gpu0_util, gpu0_memory_percent, gpu1_util, ...: each card on its own."""
        fields: dict[str, Optional[float]] = {}
        for index, reading in sorted(self.gpus.items()):
            fields[f"gpu{index}_util"] = reading.util
            fields[f"gpu{index}_memory_percent"] = reading.memory_percent
        return fields


@dataclass(frozen=True)
class Validated:
    step: int
    val_loss: float
    alignment_score: Optional[float]  # acoustic models only: the focus rate of the cross-attention

    def record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"step": self.step, "val_loss": self.val_loss}
        if self.alignment_score is not None:
            record["alignment_score"] = self.alignment_score
        return record


@dataclass(frozen=True)
class Noted:
    message: str
    label: str = "note"  # "warning": what `validate` warns of in the config


@dataclass(frozen=True)
class Watched:
    """The training watch (training/watch.py): a finding that crossed its line (`state` "warning"),
    or one that is back under it ("recovered")."""

    step: int
    id: str  # the finding's id, as diagnose and profile-step name it
    state: str  # "warning" or "recovered"
    figure: float  # the windowed figure it was judged on
    message: str
    fix: Optional[str] = None  # the config change that repairs it, e.g. "set data.num_workers: auto"

    def record(self) -> dict[str, Any]:
        """The metrics.jsonl line."""
        return {
            "step": self.step,
            "watch": self.id,
            "state": self.state,
            "figure": round(self.figure, 3),
            "message": self.message,
            "fix": self.fix,
        }


@dataclass(frozen=True)
class RunEnded:
    result: TrainResult


@dataclass(frozen=True)
class PhaseStarted:
    """Work the user waits for that may take more than a couple of seconds (a scan, building the
    pipeline and the model, tracing the step): shown until `PhaseEnded` or the next phase."""

    name: str


@dataclass(frozen=True)
class PhaseEnded:
    name: str
    seconds: float


Event = Union[ScanFinished, RunStarted, StepLogged, Validated, Noted, Watched, RunEnded, PhaseStarted, PhaseEnded]
Progress = Callable[[Event], None]


def ignore(event: Event) -> None:
    """The progress callable of a caller that wants none."""
