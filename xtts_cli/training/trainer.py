"""What a training run is built from: devices, data, the model kind's models, checkpoints, the steps.

`Trainer.setup` builds, in order: the device plan and the run's settings (`settings.py`), the
dataset scan, the run directory and vocabulary, what the model kind writes besides checkpoints,
the input pipelines (`inputs.py`), the strategy, the kind's models and optimizers
(`kinds/`), the checkpoint (`checkpointing.py`, restored when resuming) and the compiled steps
(`steps.py`). The loop, with its hooks (metrics, validation, checkpoints, samples), is the
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

from pathlib import Path
from typing import Any, Optional

from xtts_cli.config.schema import XttsConfig
from xtts_cli.errors import XttsError
from xtts_cli.training.events import Noted, PhaseStarted, Progress, ScanFinished, TrainResult, ignore
from xtts_cli.training.steps import STOP_KEY
from xtts_cli.training.workers import WorkersDisagreeError

__all__ = ["STOP_KEY", "TrainResult", "Trainer", "WorkersDisagreeError"]


class Trainer:
    def __init__(
        self,
        config: XttsConfig,
        *,
        run_dir: Path,
        fresh: bool = False,
        force: bool = False,
        progress: Optional[Progress] = None,
    ) -> None:
        from xtts_cli.training.kinds import kind_for

        self.config = config
        self.kind = kind_for(config)
        self.run_dir_path = Path(run_dir)
        self.fresh = fresh
        self.force = force
        self.progress: Progress = progress or ignore
        self._previous_policy: Optional[str] = None
        self._holds_run_dir = False
        self._gather_steps: Any = None
        self.last_val_batch: Any = None
        # Set up by `setup`; until then (a set-up that failed) `where_it_stopped` reports none.
        self.checkpoints: Any = None
        self.step_var: Any = None
        self.cluster: Any = None

    def note(self, message: str) -> None:
        self.progress(Noted(message))

    def setup(self) -> None:
        import keras
        import tensorflow as tf

        from xtts_cli.data.scan import scan_dataset
        from xtts_cli.devices.placement import configure_devices
        from xtts_cli.training.inputs import build_input, eval_items_of
        from xtts_cli.training.settings import resolve_settings

        config = self.config
        # First TF work of the process: a multi-worker strategy must exist before any other op.
        self.plan = configure_devices(config.devices, join_cluster=True)
        self.settings = resolve_settings(config, self.plan)
        self.cluster = self.plan.cluster if self.plan.kind == "multi_worker" else None
        self.is_chief = self.cluster is None or self.cluster.is_chief
        tf.random.set_seed(config.training.seed)
        keras.utils.set_random_seed(config.training.seed)

        self.progress(PhaseStarted("scanning the dataset"))
        self.scan = scan_dataset(config.data)
        self.progress(ScanFinished(self.scan))
        self.progress(PhaseStarted("building the input pipeline and the model"))
        train_items, eval_items = self.scan.epoch_items(), eval_items_of(config, self.scan)
        if not train_items:
            raise XttsError("no usable training items after the dataset scan", hint="see the bad files listed above")
        self._open_run_dir(train_items, eval_items)
        if self.settings.mixed_precision:
            self._previous_policy = keras.mixed_precision.dtype_policy().name
            keras.mixed_precision.set_dtype_policy(self.settings.dtype_policy)
        self.input = build_input(
            config, self.settings, self.cluster, train_items, eval_items, self.tokenizer, self.note
        )
        self.train_ds, self.eval_ds, self.pipeline_info = self.input.train_ds, self.input.eval_ds, self.input.info
        self.batch_size, self.steps_per_epoch = self.input.batch_size, self.input.steps_per_epoch
        self.total_steps = self.settings.total_steps(self.steps_per_epoch)
        self._build_models((eval_items or train_items)[0])

    def _open_run_dir(self, train_items: list, eval_items: list) -> None:
        """The run directory (non-chief workers read the chief's and write nothing), the vocabulary
        (built from the scan, so every worker of a cluster builds the same one) and what the kind
        keeps there."""
        from xtts_cli.data.pipeline import tokenizer_for
        from xtts_cli.data.text import Tokenizer
        from xtts_cli.training.run_dir import prepare_run_dir, remove_stale_temporaries

        config = self.config
        self.run_dir, self.resumed = prepare_run_dir(
            self.run_dir_path, config, fresh=self.fresh, force=self.force, read_only=not self.is_chief
        )
        self._holds_run_dir = self.is_chief  # its lock, given back by `close`
        if self.is_chief:
            remove_stale_temporaries(self.run_dir)
        if self.resumed and self.run_dir.vocab.is_file():
            self.tokenizer = Tokenizer.load(self.run_dir.vocab)
        else:
            items = train_items + eval_items if config.data.eval_dataset_path else None
            self.tokenizer = tokenizer_for(self.scan, config.data, items=items)
            if self.is_chief:
                self.tokenizer.save(self.run_dir.vocab)

    def _build_models(self, first_item) -> None:
        import tensorflow as tf

        from xtts_cli.training.checkpointing import RunCheckpoints
        from xtts_cli.training.kinds import KindContext
        from xtts_cli.training.steps import Steps

        if self.cluster is not None:
            self.strategy = self.plan.strategy
        elif self.plan.kind == "mirrored":
            self.strategy = tf.distribute.MirroredStrategy(list(self.plan.replica_devices))
        else:
            self.strategy = tf.distribute.OneDeviceStrategy(self.plan.model_device)
        with self.strategy.scope():
            # The share of training.max_minutes spent, set by the training loop before each step
            # (the learning rate decays over it too); not checkpointed: each command has its own.
            self.budget_used = None
            if self.config.training.max_minutes is not None:
                self.budget_used = tf.Variable(0.0, dtype=tf.float32, trainable=False, name="budget_used")
            context = KindContext(
                config=self.config,
                tokenizer=self.tokenizer,
                scan=self.scan,
                run_dir=self.run_dir,
                is_chief=self.is_chief,
                first_item=first_item,
                total_steps=self.total_steps,
                mixed_precision=self.settings.mixed_precision,
                xla_step=self.settings.graph_mode
                and self.settings.xla
                and self.plan.kind not in ("mirrored", "multi_worker"),
                replicas=int(self.strategy.num_replicas_in_sync),
                budget_used=self.budget_used,
                note=self.note,
            )
            if self.is_chief:
                self.kind.prepare_run(context)
            self.models = self.kind.build(context)
            self.model, self.optimizer = self.models.model, self.models.optimizer
            self.step_var = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
            self.epoch_var = tf.Variable(0, dtype=tf.int64, trainable=False, name="epoch")
        self.checkpoint = tf.train.Checkpoint(**self.models.trackables(), step=self.step_var, epoch=self.epoch_var)
        self.checkpoints = RunCheckpoints(
            self.checkpoint,
            self.run_dir,
            keep=self.config.training.keep_checkpoints,
            is_chief=self.is_chief,
            worker_index=self.cluster.worker_index if self.cluster is not None else 0,
            progress=self.progress,
        )
        latest = self.checkpoints.latest() if self.resumed or self.is_chief else None
        if latest:
            self.checkpoints.restore(latest)
        # Multi-worker only: local to this worker (made outside the strategy's scope), 1.0 once it
        # got SIGINT/SIGTERM, reduced in the step.
        self.stop_flag = None
        if self.cluster is not None:
            self.stop_flag = tf.Variable(0.0, trainable=False, name="stop_requested")
            self.check_workers_agree("after restoring")
        self.steps = Steps(
            self.models,
            strategy=self.strategy,
            plan=self.plan,
            settings=self.settings,
            data=self.config.data,
            train_ds=self.train_ds,
            eval_ds=self.eval_ds,
            stop_flag=self.stop_flag,
        )
        self.train_step, self.eval_step, self.featurize = self.steps.train, self.steps.eval, self.steps.featurize
        self.graph_mode, self.xla = self.settings.graph_mode, self.settings.xla

    def latest_checkpoint(self) -> Optional[str]:
        return self.checkpoints.latest() if self.checkpoints is not None else None

    def where_it_stopped(self) -> tuple[int, Optional[str]]:
        """(the step reached, the latest checkpoint), also after a set-up that failed (0, None)."""
        step = int(self.step_var.numpy()) if self.step_var is not None else 0
        return step, self.latest_checkpoint()

    def save(self) -> str:
        return self.checkpoints.save(int(self.step_var.numpy()))

    def traces(self) -> int:
        return self.steps.traces()

    def batches(self, dataset):
        """Yield (batch ready for the step, seconds blocked waiting for it)."""
        return self.steps.batches(dataset)

    def check_workers_agree(self, moment: str) -> None:
        """Multi-worker: every worker holds the same step, or training stops here (`workers.py`)."""
        from xtts_cli.training.workers import StepGather

        if self._gather_steps is None:
            self._gather_steps = StepGather(self.strategy, self.step_var)
        self._gather_steps.check(moment, self.run_dir, self.cluster)

    def validate(self) -> Optional[dict[str, float]]:
        """Means of the kind's validation values (`ModelKind.validation`, val_loss first) over at most
        `max_val_batches` validation batches, or None without validation data. The first batch is
        kept in `self.last_val_batch` for pictures."""
        self.last_val_batch = None
        if self.eval_ds is None:
            return None
        totals: dict[str, list[float]] = {name: [] for name in self.kind.validation.values()}
        for index, (batch, _) in enumerate(self.batches(self.eval_ds)):
            if index >= self.config.training.max_val_batches:
                break
            if index == 0:
                self.last_val_batch = batch
            losses = self.eval_step(batch)
            for key, name in self.kind.validation.items():
                totals[name].append(float(losses[key]))
        if not totals["val_loss"]:
            return None
        return {key: sum(values) / len(values) for key, values in totals.items()}

    def summaries(self, batch, step: int) -> None:
        """The kind's TensorBoard pictures (not of a distributed batch: it has no single tensor to draw)."""
        if self.plan.kind not in ("mirrored", "multi_worker"):
            self.models.summaries(batch, self.last_val_batch, step)

    def render_samples(self, step: int) -> None:
        self.models.render_samples(step)

    def new_result(self) -> TrainResult:
        """The result of the run about to start (after `setup`)."""
        start_step = int(self.step_var.numpy())
        result = TrainResult(
            run_dir=self.run_dir.path,
            start_step=start_step,
            final_step=start_step,
            resumed=self.resumed,
            shape_bound=self.pipeline_info.max_distinct_batch_shapes or 0,
            device_plan=self.plan.describe(),
            bad_files=[{"path": b.path or b.source, "reason": f"{b.reason}: {b.detail}"} for b in self.scan.bad],
            notes=list(self.plan.notes),
            listen=self.kind.listen,
        )
        if not self.graph_mode:
            result.notes.append(
                "eager mode (enable_eager_debug or graph mode off): every step runs op by op and is slow"
            )
        return result

    def close(self) -> None:
        """Undo what `setup` changed in the process: the global Keras dtype policy (mixed precision
        is set in `setup` and restored here, nowhere else), and the run directory's lock."""
        import keras

        from xtts_cli.training.run_dir import release_run_dir

        if self._previous_policy is not None:
            keras.mixed_precision.set_dtype_policy(self._previous_policy)
            self._previous_policy = None
        if self._holds_run_dir:
            self._holds_run_dir = False
            release_run_dir(self.run_dir)
