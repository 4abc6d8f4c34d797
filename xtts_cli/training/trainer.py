"""What a training run is built from: devices, data, the model kind's models, checkpoints, the steps.

`Trainer.setup` builds them once into a frozen `RunComponents` (components.py says in what
order). The loop, with its hooks (metrics, validation, checkpoints, samples), is the
`Controller` in controller.py. Engines do not print: progress goes to the `progress` callable as
typed events (training/events.py).

Multi-worker (MultiWorkerMirroredStrategy, docs/scaling.md): every worker runs the same loop and
every step is a collective, so the workers must take the same decisions at the same steps or the
one that goes on waits for the others forever. Hence: the same step count everywhere (each
worker's share of the clips repeats; `steps_per_epoch` comes from the whole dataset), the same
validation batches, saves at the same steps, a signal on any worker stops all of them after the
same step (a flag reduced inside the step), NaN judged on the reduced loss, and the step checked
to agree after restoring. Only the chief writes the run directory.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from xtts_cli.config.schema import XttsConfig
from xtts_cli.training.events import Noted, Progress, TrainResult, ignore
from xtts_cli.training.steps import STOP_KEY
from xtts_cli.training.workers import WorkersDisagreeError

if TYPE_CHECKING:
    from xtts_cli.devices.placement import DevicePlan
    from xtts_cli.training.components import RunComponents
    from xtts_cli.training.parent import ParentRun

__all__ = ["STOP_KEY", "TrainResult", "Trainer", "WorkersDisagreeError"]


class Trainer:
    """A run to set up and step: `setup` builds its `RunComponents` (components.py); the methods here
    are what the controller's hooks and the profilers call on a set-up run."""

    def __init__(
        self,
        config: XttsConfig,
        *,
        run_dir: Path,
        fresh: bool = False,
        force: bool = False,
        progress: Optional[Progress] = None,
    ) -> None:
        from xtts_cli.kinds import kind_for
        from xtts_cli.training.parent import with_base_network

        # What the config leaves unwritten of the network is the base's (`training.init_from`).
        config, taken = with_base_network(config, Path(run_dir), fresh)
        self.config = config
        self.kind = kind_for(config)
        self.run_dir_path = Path(run_dir)
        self.fresh = fresh
        self.force = force
        self.progress: Progress = progress or ignore
        self.noted_first = [taken] if taken is not None else []  # for the run's notes (controller.py)
        if taken is not None:
            self.progress(Noted(taken))
        # What set-up changed in the process (the run's lock, the dtype policy), undone by `close`.
        self._undo = contextlib.ExitStack()
        self._parts: Optional[RunComponents] = None
        # Known before the rest is built, so a worker whose set-up fails can still tell the others.
        self.cluster: Any = None
        self.last_val_batch: Any = None

    def note(self, message: str) -> None:
        self.progress(Noted(message))

    def setup(self) -> RunComponents:
        from xtts_cli.devices.placement import configure_devices
        from xtts_cli.training.components import build_components

        # First TF work of the process: a multi-worker strategy must exist before any other op.
        plan = configure_devices(self.config.devices, join_cluster=True, say=self.note)
        self.cluster = plan.worker_cluster
        self._parts = build_components(
            self.config,
            self.kind,
            plan,
            run_dir=self.run_dir_path,
            fresh=self.fresh,
            force=self.force,
            progress=self.progress,
            undo=self._undo,
        )
        return self._parts

    @property
    def parts(self) -> RunComponents:
        """The run's components; set up first."""
        if self._parts is None:
            raise RuntimeError("Trainer.setup() has not run")
        return self._parts

    # What the hooks read (controller.HookedRun).
    @property
    def plan(self) -> DevicePlan:
        return self.parts.plan

    @property
    def is_chief(self) -> bool:
        return self.parts.is_chief

    @property
    def epoch_var(self) -> Any:
        return self.parts.counters.epoch

    @property
    def optimizer(self) -> Any:
        return self.parts.models.optimizer

    def latest_checkpoint(self) -> Optional[str]:
        return self._parts.checkpoints.latest() if self._parts is not None else None

    def where_it_stopped(self) -> tuple[int, Optional[str]]:
        """(the step reached, the latest checkpoint), also after a set-up that failed (0, None)."""
        step = int(self._parts.counters.step.numpy()) if self._parts is not None else 0
        return step, self.latest_checkpoint()

    def save(self) -> str:
        return self.parts.checkpoints.save(int(self.parts.counters.step.numpy()))

    def keep_best(self) -> None:
        self.parts.checkpoints.keep_best()

    def restore_best(self) -> bool:
        return self.parts.checkpoints.restore_best()

    def forget_best(self) -> None:
        self.parts.checkpoints.forget_best()

    def early_stop_record(self) -> Optional[dict[str, Any]]:
        return self.parts.checkpoints.early_stop_record()

    def keep_early_stop(self, record: Optional[dict[str, Any]]) -> None:
        self.parts.checkpoints.keep_early_stop(record)

    def traces(self) -> int:
        return self._parts.steps.traces() if self._parts is not None else 0

    def check_workers_agree(self, moment: str) -> None:
        """Multi-worker: every worker holds the same step, or training stops here (`workers.py`)."""
        parts = self.parts
        if parts.gather is not None:
            parts.gather.check(moment, parts.run_dir, parts.cluster)

    @property
    def parent(self) -> Optional[ParentRun]:
        """The run this one started from, on its first start (`training.init_from`)."""
        return self.parts.parent

    @property
    def validates(self) -> bool:
        """The run has validation clips to validate on."""
        return self.parts.input.eval_ds is not None

    @property
    def validation_set(self) -> str:
        return self.parts.input.validation_set

    def validate(self) -> Optional[dict[str, float]]:
        """Means of the kind's validation values (`ModelKind.validation`, val_loss first) over at most
        `max_val_batches` validation batches, or None without validation data. The first batch is
        kept in `self.last_val_batch` for pictures."""
        self.last_val_batch = None
        steps, eval_ds = self.parts.steps, self.parts.input.eval_ds
        if eval_ds is None:
            return None
        totals: dict[str, list[float]] = {name: [] for name in self.kind.validation.values()}
        for index, (batch, _) in enumerate(steps.batches(eval_ds)):
            if index >= self.config.training.max_val_batches:
                break
            if index == 0:
                self.last_val_batch = batch
            losses = steps.eval(batch)
            for key, name in self.kind.validation.items():
                totals[name].append(float(losses[key]))
        if not totals["val_loss"]:
            return None
        return {key: sum(values) / len(values) for key, values in totals.items()}

    def summaries(self, batch, step: int) -> None:
        """The kind's TensorBoard pictures (not of a distributed batch: it has no single tensor to draw)."""
        if not self.plan.distributed:
            self.parts.models.summaries(batch, self.last_val_batch, step)

    def render_samples(self, step: int) -> None:
        self.parts.models.render_samples(step)

    def _chosen_mode(self, info) -> list[str]:
        """What `preprocessing_mode: auto` chose, and why (a start had not said where its features were kept)."""
        if self.config.data.preprocessing_mode != "auto":
            return []
        return [
            f"preprocessing_mode auto chose {info.preprocessing_mode}: {info.preprocessing_reason.removeprefix('auto: ')}"
        ]

    def new_result(self) -> TrainResult:
        """The result of the run about to start (after `setup`)."""
        import shlex

        parts = self.parts
        start_step = int(parts.counters.step.numpy())
        result = TrainResult(
            run_dir=parts.run_dir.path,
            start_step=start_step,
            final_step=start_step,
            resumed=parts.resumed,
            shape_bound=parts.input.info.max_distinct_batch_shapes or 0,
            device_plan=parts.plan.describe(),
            # A scan reason code and its particulars apart, as validate and diagnose give them
            bad_files=[{"path": b.path or b.source, "reason": b.reason, "detail": b.detail} for b in parts.scan.bad],
            notes=list(parts.plan.notes) + self._chosen_mode(parts.input.info),
            # The kind's command with this run's directory in it ("{run}": a sentence may hold braces).
            listen=parts.models.listen.replace("{run}", shlex.quote(str(parts.run_dir.path))),
        )
        if parts.resumed and start_step >= parts.total_steps:
            result.notes.append(
                f"the run is at step {start_step}, "
                + (
                    f"its {parts.total_steps} steps done"
                    if start_step == parts.total_steps
                    else f"past its {parts.total_steps} steps"
                )
                + ": nothing to train; raise "
                + (
                    "--steps (training.max_steps)"
                    if parts.total_steps == self.config.training.max_steps
                    else f"--epochs (training.epochs: {self.config.training.epochs} of {parts.input.steps_per_epoch} steps)"
                )
                + " to go on"
            )
        return result

    def close(self) -> None:
        """Undo what `setup` changed in the process (components.py): the global Keras dtype policy
        and the run directory's lock, also after a set-up that failed half-way."""
        self._undo.close()
