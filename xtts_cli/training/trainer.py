"""The training loop: a custom loop (not `model.fit`) so every phase can be placed and timed.

- The step is compiled with `tf.function` (graph mode) and, when configured, XLA; it is traced
  once per distinct batch shape (bounded by the pipeline's buckets) and the count is reported.
- Data wait (blocked in `next(iterator)`) and compute (until the step's loss is on the host) are
  timed separately for every step and written to metrics.jsonl.
- With a data/model split, the pipeline yields decoded audio and the mel features are computed on
  the data device one batch ahead of the step, so the feature work of batch k+1 overlaps the
  model's step k on the other device (GPU ops are asynchronous), and the batch is handed over by
  the step itself reading it on the model device.
- Checkpoints: restore the latest on start, save every `save_step`, at completion, and on
  SIGINT/SIGTERM after finishing the current step. A NaN/Inf loss stops with the step and metric
  named, without saving the bad state.
- Multi-worker (MultiWorkerMirroredStrategy, docs/scaling.md): every worker runs this same loop
  and every step is a collective, so the workers must take the same decisions at the same steps
  or the one that goes on waits for the others forever. Hence: the same step count everywhere
  (each worker's share of the clips repeats; `steps_per_epoch` comes from the whole dataset), the
  same validation batches, saves at the same steps, a signal on any worker stops all of them
  after the same step (a flag reduced inside the step), NaN judged on the reduced loss, and the
  step checked to agree after restoring. Only the chief writes the run directory.

Engines do not print: progress goes to the `progress` callback as dicts.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

from xtts_cli.config.schema import XttsConfig
from xtts_cli.errors import XttsError
from xtts_cli.training.run_dir import prepare_run_dir, remove_stale_temporaries
from xtts_cli.training.signals import EXIT_CODES, GracefulInterrupt

Progress = Callable[[dict[str, Any]], None]


class NonFiniteLossError(XttsError):
    """A NaN or Inf loss: training stopped before the bad weights were saved."""

    exit_code = 3


# Multi-worker: the step's extra output saying whether any worker asked to stop (mean of 0/1 flags).
STOP_KEY = "stop_requested"


class WorkersDisagreeError(XttsError):
    """Multi-worker: the workers are not at the same step (see `Trainer._check_workers_agree`)."""


# Raised by every worker of a cluster at the same point, from values they share (the reduced loss,
# the gathered steps): no need to tell the others.
_RAISED_ON_EVERY_WORKER = (NonFiniteLossError, WorkersDisagreeError)


class _DiscardedMetrics:
    """What a non-chief worker writes its metrics to: the chief's metrics.jsonl is the run's."""

    def write(self, record: dict[str, Any]) -> None:
        pass


@dataclass
class TrainResult:
    run_dir: Path
    start_step: int
    final_step: int
    resumed: bool
    interrupted: Optional[str] = None
    exit_code: int = 0
    traces: int = 0
    shape_bound: int = 0
    first_loss: Optional[float] = None
    last_loss: Optional[float] = None
    last_val_loss: Optional[float] = None
    last_alignment_score: Optional[float] = None
    steps_per_sec: float = 0.0
    samples_per_sec: float = 0.0
    data_wait_percent: float = 0.0
    device_plan: str = ""
    bad_files: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _finite(value: float) -> bool:
    return math.isfinite(value)


def _is_lost_peer(exc: BaseException) -> bool:
    """A collective aborted because a peer died or hung up (TensorFlow's coordination service
    notices a dead worker by its missing heartbeats and aborts the collectives of the others)."""
    import tensorflow as tf

    return isinstance(exc, (tf.errors.UnavailableError, tf.errors.AbortedError, tf.errors.DeadlineExceededError))


def _tell_the_other_workers(exc: BaseException, cluster) -> None:
    """Abort the other workers' collectives with this worker's error, so they stop at once with
    its reason rather than about ten seconds later with "heartbeat timeout". Best effort: the
    coordination service has no public API for it (TF's own PreemptionCheckpointHandler calls this
    same `report_error_to_cluster`), and the heartbeat remains the fallback."""
    try:
        import tensorflow as tf
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
        self.config = config
        self.run_dir_path = Path(run_dir)
        self.fresh = fresh
        self.force = force
        self.progress = progress or (lambda event: None)

    # The pieces below are methods so the profilers can reuse them on the real model and pipeline.
    def setup(self) -> None:
        import keras
        import tensorflow as tf

        from xtts_cli.data.pipeline import build_pipeline, plan_pipeline, tokenizer_for
        from xtts_cli.data.scan import scan_dataset
        from xtts_cli.data.text import Tokenizer
        from xtts_cli.devices.placement import configure_devices
        from xtts_cli.model.xtts import build_model

        config = self.config
        # First TF work of the process: a multi-worker strategy must exist before any other op.
        self.plan = configure_devices(config.devices, join_cluster=True)
        cluster = self.plan.cluster if self.plan.kind == "multi_worker" else None
        self.is_chief = cluster is None or cluster.is_chief
        tf.random.set_seed(config.training.seed)
        keras.utils.set_random_seed(config.training.seed)

        self.scan = scan_dataset(config.data)
        self.progress({"event": "scan", "scan": self.scan})
        # Each dataset's clips repeated as its sampling weight asks (data.datasets).
        train_items, eval_items = self.scan.epoch_items(), list(self.scan.eval)
        if config.data.eval_dataset_path:
            eval_data = config.data.model_copy(
                update={
                    "dataset_path": config.data.eval_dataset_path,
                    "datasets": [],
                    "dataset_format": "auto",
                    "eval_fraction": 0.0,
                }
            )
            eval_scan = scan_dataset(eval_data)
            eval_items = eval_scan.items
        if not train_items:
            raise XttsError("no usable training items after the dataset scan", hint="see the bad files listed above")

        # Non-chief workers read the run directory (the chief's checkpoints and vocab) and write nothing.
        self.run_dir, self.resumed = prepare_run_dir(
            self.run_dir_path, config, fresh=self.fresh, force=self.force, read_only=not self.is_chief
        )
        if self.is_chief:
            remove_stale_temporaries(self.run_dir)
        if self.resumed and self.run_dir.vocab.is_file():
            self.tokenizer = Tokenizer.load(self.run_dir.vocab)
        else:
            # Built from the scan, so every worker of a cluster builds the same one.
            self.tokenizer = tokenizer_for(self.scan, config.data)
            if config.data.eval_dataset_path:
                self.tokenizer = Tokenizer.build(
                    [item.training_text for item in train_items + eval_items], config.data.text_cleaners
                )
            if self.is_chief:
                self.tokenizer.save(self.run_dir.vocab)

        from xtts_cli.training.synthesis import (
            REFERENCE_FILE,
            SPEAKERS_FILE,
            SPEAKING_RATE_FILE,
            measure_speaking_rate,
            reference_from_audio,
            rendering_voices,
            save_reference,
            save_speakers,
            save_speaking_rate,
        )

        if self.is_chief and not (self.run_dir.path / SPEAKING_RATE_FILE).is_file():
            rate = measure_speaking_rate(self.scan.train, self.tokenizer, config.data)
            if rate is not None:
                save_speaking_rate(self.run_dir.path, rate)

        if self.is_chief and not (self.run_dir.path / REFERENCE_FILE).is_file():
            # The voice test sentences are rendered in: the first validation clip's opening frames.
            first = (eval_items or train_items)[0]
            save_reference(self.run_dir.path, reference_from_audio(Path(first.audio_path), config.data))
        if self.is_chief and not (self.run_dir.path / SPEAKERS_FILE).is_file():
            save_speakers(self.run_dir.path, self.scan.train)
        self.reference_text = (eval_items or train_items)[0].training_text
        self.voices = rendering_voices(self.run_dir.path, config.data) if self.is_chief else []

        self.mixed = bool(config.training.mixed_precision)
        self._previous_policy = keras.mixed_precision.dtype_policy().name
        if self.mixed:
            keras.mixed_precision.set_dtype_policy(
                "mixed_bfloat16" if config.training.mixed_precision_dtype == "bfloat16" else "mixed_float16"
            )

        output: Literal["audio", "mel"] = "audio" if self.plan.kind == "split" else "mel"
        replicas = self.plan.num_replicas if self.plan.kind == "mirrored" else 1
        global_config = config
        if replicas > 1:
            # data.batch_size is per replica; the pipeline makes the global batch the strategy splits.
            global_config = config.model_copy(
                update={"data": config.data.model_copy(update={"batch_size": config.data.batch_size * replicas})}
            )
        # prefetch_to_device: audio to the data GPU in split mode, batches to the model GPU otherwise.
        target = None
        if self.plan.device_type == "GPU" and self.plan.kind not in ("mirrored", "multi_worker"):
            target = self.plan.data_device if self.plan.kind == "split" else self.plan.model_device
        shard_items = train_items
        if cluster is not None:
            # Each worker makes batches from its own share of the clips, chosen from the item list
            # (the same on every worker: the scan is deterministic) before anything is decoded, so
            # no worker decodes a clip another one trains on. Its pipeline yields per-replica
            # batches and `_distribute` hands one to each local replica (no tf.data auto-sharding).
            shard_items = train_items[cluster.worker_index :: cluster.num_workers]
            if not shard_items:
                raise XttsError(
                    f"{len(train_items)} training items cannot be shared by {cluster.num_workers} workers",
                    hint="add data or use fewer workers",
                )
        share = f" (this worker's share of {len(train_items)})" if cluster is not None else ""
        train_plan = plan_pipeline(global_config.data, shard_items, self.tokenizer, training=True, output=output)
        train_plan.require_batches(share=share)  # before a precompute pass that may take an hour
        self.train_ds, self.pipeline_info = build_pipeline(
            global_config, shard_items, self.tokenizer, training=True, output=output, device=target, plan=train_plan
        )
        self.eval_ds = None
        if eval_items:
            # Every worker evaluates the whole validation set, in the same order: the same number of
            # eval steps everywhere (a share per worker could differ by a batch and leave one worker
            # waiting in a collective), and validation is small and capped by max_val_batches.
            self.eval_ds, _ = build_pipeline(global_config, eval_items, self.tokenizer, training=False, output=output)
        self.batch_size = global_config.data.batch_size
        self.steps_per_epoch = max(1, self.pipeline_info.batches_per_epoch)

        if cluster is not None:
            self.strategy = self.plan.strategy
            self.batch_size = config.data.batch_size * self.strategy.num_replicas_in_sync
            # Workers' shares differ by a few clips and bucketing drops a different remainder on each,
            # so their own epochs differ in length; a worker that ran out first would leave the others
            # waiting in the step's all-reduce (or, with TF's partial-batch handling, train on empty
            # batches). So each worker's share repeats without end, and an epoch is counted in steps
            # from the whole dataset, a number every worker computes alike.
            self.train_ds = self.train_ds.repeat()
            self.steps_per_epoch = max(1, len(train_items) // self.batch_size)
        elif self.plan.kind == "mirrored":
            self.strategy = tf.distribute.MirroredStrategy(list(self.plan.replica_devices))
        else:
            self.strategy = tf.distribute.OneDeviceStrategy(self.plan.model_device)
        total = config.training.max_steps or config.training.epochs * self.steps_per_epoch
        self.total_steps = total
        with self.strategy.scope():
            from xtts_cli.training.optimization import build_optimizer

            self.model = build_model(config.model, config.data, self.tokenizer.vocab_size)
            self.optimizer = build_optimizer(config.training, total, self.mixed)
            self.optimizer.build(self.model.trainable_variables)
            self.step_var = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
            self.epoch_var = tf.Variable(0, dtype=tf.int64, trainable=False, name="epoch")
        self.checkpoint = tf.train.Checkpoint(
            model=self.model, optimizer=self.optimizer, step=self.step_var, epoch=self.epoch_var
        )
        # The chief's manager writes the run's checkpoints. Non-chief workers restore from the
        # chief's directory (a shared filesystem) and save into scratch directories (`save`).
        self.manager = None
        if self.is_chief:
            self.manager = tf.train.CheckpointManager(
                self.checkpoint, str(self.run_dir.checkpoints), max_to_keep=config.training.keep_checkpoints
            )
        latest = self.latest_checkpoint() if self.resumed or self.is_chief else None
        if latest:
            try:
                self.checkpoint.restore(latest).expect_partial()
            except (tf.errors.OpError, ValueError, AssertionError) as exc:
                raise XttsError(
                    f"cannot restore {latest}: {str(exc).splitlines()[0]}",
                    hint="the checkpoint does not fit this model; use --fresh to start a new run",
                ) from None
        # Multi-worker only: the stop flag every worker reduces, and the step gather (a tf.function).
        self._stop_flag: Any = None
        self._gather_steps: Any = None
        if cluster is not None:
            # Local to this worker (made outside the strategy's scope): 1.0 once it got SIGINT/SIGTERM.
            self._stop_flag = tf.Variable(0.0, trainable=False, name="stop_requested")
            self._check_workers_agree("after restoring")
        self._compile_steps()

    def latest_checkpoint(self) -> Optional[str]:
        """The run's newest complete checkpoint (the chief's directory, on any worker)."""
        import tensorflow as tf

        if self.manager is not None:
            return self.manager.latest_checkpoint
        return tf.train.latest_checkpoint(str(self.run_dir.checkpoints))

    def _check_workers_agree(self, moment: str) -> None:
        """Every worker holds the same step, or training stops here with the steps named.

        A worker that cannot read the chief's checkpoints starts over at 0 while the chief resumes,
        so they would run different step counts and the last steps' collectives would wait
        forever. The all-gather is also a barrier: after the final save no worker leaves early.
        """
        import tensorflow as tf

        if self._gather_steps is None:
            strategy, step_var = self.strategy, self.step_var

            @tf.function
            def gather_steps():
                per_replica = strategy.run(lambda: tf.reshape(tf.identity(step_var), [1]))
                return strategy.gather(per_replica, axis=0)

            self._gather_steps = gather_steps
        steps = [int(v) for v in self._gather_steps().numpy()]
        if len(set(steps)) > 1:
            cluster = self.plan.cluster
            raise WorkersDisagreeError(
                f"the workers are at different steps {moment}: {steps} (one per replica, in TF_CONFIG task "
                f"order); non-chief workers resume from the chief's checkpoints in {self.run_dir.checkpoints}",
                hint="give every worker the same --run-dir on a filesystem they all share (docs/scaling.md)"
                + ("" if cluster is None else f"; this is {cluster.describe()}"),
            )

    def _compile_steps(self) -> None:
        import tensorflow as tf

        from xtts_cli.data.features import with_reference

        config = self.config
        model, optimizer, strategy = self.model, self.optimizer, self.strategy
        replicas = float(strategy.num_replicas_in_sync)
        stop_flag = self._stop_flag
        distributed = self.plan.kind in ("mirrored", "multi_worker")

        data_seed = tf.constant(config.data.seed, tf.int64)
        self_conditioning = config.training.self_conditioning
        prior_steps = config.training.attention_prior_steps
        attention = {
            "attention_weight": config.training.guided_attention_weight,
            "attention_sigma": config.training.guided_attention_sigma,
        }

        def replica_step(batch):
            # The speaker reference: a random crop of each clip, drawn from the step number and the
            # replica (a checkpointed variable, so a resumed run draws what it would have drawn).
            replica = tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.int64)
            draw = tf.cast(optimizer.iterations, tf.int64) * int(strategy.num_replicas_in_sync) + replica
            batch = with_reference(batch, config.data, seed=tf.stack([data_seed, draw]))
            prior = None
            if prior_steps:
                progress = tf.cast(optimizer.iterations, tf.float32) / float(prior_steps)
                prior = tf.clip_by_value(2.0 - 2.0 * progress, 0.0, 1.0)  # 1 for the first half, then to 0
            with tf.GradientTape() as tape:
                outputs = model(batch, training=True, attention_prior_strength=prior)
                losses = model.compute_loss(batch, outputs, **attention)
                if self_conditioning:
                    own = tf.stop_gradient(outputs["mel_pred"])
                    again = model(batch, training=True, decoder_input_mel=own, attention_prior_strength=prior)
                    second = model.compute_loss(batch, again, **attention)
                    losses = dict(
                        losses,
                        loss=0.5 * (losses["loss"] + second["loss"]),
                        self_conditioned_mel_loss=second["mel_loss"],
                    )
                # MirroredStrategy sums replica gradients; dividing keeps the update a global mean.
                scaled = optimizer.scale_loss(losses["loss"] / replicas)
            variables = model.trainable_variables
            gradients = tape.gradient(scaled, variables)
            optimizer.apply(gradients, variables)
            if stop_flag is not None:
                # Reduced with the losses: every worker learns in the same step that one of them
                # was asked to stop, so all stop after it instead of one waiting for the others.
                losses = {**losses, STOP_KEY: tf.identity(stop_flag)}
            return losses

        # Outside MirroredStrategy the whole step, reduction included, is pinned to the model
        # device: in split mode the batch computed on the data device is read from there.
        place = (lambda: tf.device(self.plan.model_device)) if not distributed else contextlib.nullcontext

        def train_step(batch):
            with place():
                per_replica = strategy.run(replica_step, args=(batch,))
                return {k: strategy.reduce(tf.distribute.ReduceOp.MEAN, v, axis=None) for k, v in per_replica.items()}

        def replica_eval(batch):
            batch = with_reference(batch, config.data)  # the first frames: the same every evaluation
            return model.compute_loss(batch, model(batch, training=False), **attention)

        def eval_step(batch):
            with place():
                per_replica = strategy.run(replica_eval, args=(batch,))
                return {k: strategy.reduce(tf.distribute.ReduceOp.MEAN, v, axis=None) for k, v in per_replica.items()}

        graph = config.training.enable_graph_mode and not config.training.enable_eager_debug
        self.featurize = None
        if self.plan.kind == "split":
            from xtts_cli.training.featurize import make_featurizer

            assert self.plan.data_device is not None  # a split plan names its data device
            self.featurize = make_featurizer(config.data, self.plan.data_device, graph=graph)
        setting = config.training.enable_xla_compilation
        xla = graph and (setting is True or (setting == "auto" and self.plan.device_type == "GPU"))
        if graph:
            # One trace for every bucket: the signature leaves the time axes open (the batch axis
            # is static, drop_remainder). Tracing the model costs seconds per trace on a CPU, and
            # XLA still compiles each concrete bucket shape once, caching it.
            # MirroredStrategy's cross-replica reduce is not XLA-compilable as one cluster; XLA
            # then compiles the per-replica model work only.
            # Multi-worker: one trace per function on every worker matters beyond speed, since
            # tracing assigns the collectives' keys and the workers' keys must match.
            jit = xla if not distributed else None
            self._train_fn = tf.function(train_step, jit_compile=jit, input_signature=[self._step_spec(self.train_ds)])
            eval_spec = self._step_spec(self.eval_ds) if self.eval_ds is not None else None
            self._eval_fn = tf.function(eval_step, jit_compile=jit, input_signature=[eval_spec] if eval_spec else None)
        else:
            self._train_fn, self._eval_fn = train_step, eval_step
        self.graph_mode, self.xla = graph, xla

        # The function call itself is placed on the model device too, so its outputs live there.
        def on_model_device(function):
            def call(batch):
                with place():
                    return function(batch)

            return call

        self.train_step = on_model_device(self._train_fn)
        self.eval_step = on_model_device(self._eval_fn)

    def _step_spec(self, dataset):
        """The step's input signature: the batch as the step receives it."""
        import tensorflow as tf

        spec = dataset.element_spec
        if self.featurize is not None:
            if not hasattr(self.featurize, "get_concrete_function"):
                return None  # eager debugging: nothing is traced
            outputs = self.featurize.get_concrete_function(spec).structured_outputs
            spec = tf.nest.map_structure(lambda t: tf.TensorSpec(t.shape, t.dtype), outputs)
        if self.plan.kind in ("mirrored", "multi_worker"):
            spec = self._distribute(dataset).element_spec
        return spec

    def _distribute(self, dataset):
        """The strategy's view of a pipeline, made once per pipeline (the step's input signature and
        the loop then read the same distributed dataset)."""
        import tensorflow as tf

        made = self.__dict__.setdefault("_distributed", {})
        if id(dataset) not in made:
            if self.plan.kind == "multi_worker":
                # The pipeline is already this worker's share with per-replica batches:
                # distribute_datasets_from_function hands one batch to each local replica and,
                # unlike experimental_distribute_dataset, neither rebatches nor shards it. Auto-
                # sharding is also switched off on the dataset itself, so no other path shards a
                # share a second time.
                options = tf.data.Options()
                options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
                share = dataset.with_options(options)
                made[id(dataset)] = self.strategy.distribute_datasets_from_function(lambda context: share)
            else:
                made[id(dataset)] = self.strategy.experimental_distribute_dataset(dataset)
        return made[id(dataset)]

    def traces(self) -> int:
        counter = getattr(self._train_fn, "experimental_get_tracing_count", None)
        return int(counter()) if counter else 0

    def batches(self, dataset):
        """Yield (batch ready for the step, seconds blocked waiting for it)."""
        if self.plan.kind in ("mirrored", "multi_worker"):
            dataset = self._distribute(dataset)
        iterator = iter(dataset)
        if self.featurize is None:
            while True:
                start = time.perf_counter()
                try:
                    batch = next(iterator)
                except StopIteration:
                    return
                yield batch, time.perf_counter() - start
        # Split mode: features for batch k+1 are launched on the data device before step k runs.
        start = time.perf_counter()
        try:
            ahead = self.featurize(next(iterator))
        except StopIteration:
            return
        wait = time.perf_counter() - start
        while True:
            current, current_wait = ahead, wait
            start = time.perf_counter()
            try:
                ahead = self.featurize(next(iterator))
            except StopIteration:
                yield current, current_wait
                return
            wait = time.perf_counter() - start
            yield current, current_wait

    def validate(self) -> Optional[dict[str, float]]:
        """Means over at most `max_val_batches` validation batches: `val_loss` and `alignment_score`
        (teacher-forced focus rate of the cross-attention, every decoder layer and head), or None
        without validation data. The first batch is kept in `self.last_val_batch` for pictures."""
        if self.eval_ds is None:
            return None
        totals: dict[str, list[float]] = {"val_loss": [], "alignment_score": []}
        self.last_val_batch = None
        for index, (batch, _) in enumerate(self.batches(self.eval_ds)):
            if index >= self.config.training.max_val_batches:
                break
            if index == 0:
                self.last_val_batch = batch
            losses = self.eval_step(batch)
            totals["val_loss"].append(float(losses["loss"]))
            totals["alignment_score"].append(float(losses["alignment_score"]))
        if not totals["val_loss"]:
            return None
        return {key: sum(values) / len(values) for key, values in totals.items()}

    def save(self) -> str:
        import tensorflow as tf

        number = int(self.step_var.numpy())
        if self.manager is not None:
            return self.manager.save(checkpoint_number=number)
        # A non-chief worker, as TensorFlow's multi-worker guide does it: every worker saves (a save
        # may run collectives, and a worker that skipped it would leave the others waiting), into
        # a scratch directory deleted right after, so the run keeps the chief's set only. The
        # scratch is local (the system temp dir), so a crash mid-save leaves nothing in the run.
        assert self.plan.cluster is not None  # only workers of a cluster are not the chief
        scratch = tempfile.mkdtemp(prefix=f"xtts-worker{self.plan.cluster.worker_index}-checkpoint-")
        try:
            tf.train.CheckpointManager(self.checkpoint, scratch, max_to_keep=1).save(checkpoint_number=number)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return str(self.run_dir.checkpoints / f"ckpt-{number}")

    def run(self) -> TrainResult:
        """Set up and train; see the module docstring."""
        try:
            return self._train()
        except BaseException as exc:
            plan = getattr(self, "plan", None)
            if plan is None or plan.kind != "multi_worker":
                raise
            if _is_lost_peer(exc):
                latest = self.latest_checkpoint() if hasattr(self, "manager") else None
                step = int(self.step_var.numpy()) if hasattr(self, "step_var") else 0
                raise XttsError(
                    f"training stopped after step {step}: another worker stopped or cannot be reached "
                    f"({_lost_peer_reason(exc)})",
                    hint="see that worker's output for the cause, then start every worker again with the same "
                    f"command to resume from {latest or 'the start (no checkpoint yet)'}",
                ) from None
            if not isinstance(exc, _RAISED_ON_EVERY_WORKER):
                _tell_the_other_workers(exc, plan.cluster)
            raise

    def _train(self) -> TrainResult:
        import keras
        import tensorflow as tf

        from xtts_cli.training.metrics import MetricsWriter

        self.setup()
        training = self.config.training
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
        )
        if not self.graph_mode:
            result.notes.append(
                "eager mode (enable_eager_debug or graph mode off): every step runs op by op and is slow"
            )
        self.progress(
            {"event": "start", "result": result, "total_steps": self.total_steps, "batch_size": self.batch_size}
        )
        max_steps = training.max_steps or training.epochs * self.steps_per_epoch
        multi = self.plan.kind == "multi_worker"
        metrics_file: contextlib.AbstractContextManager[Any]
        if self.is_chief:
            writer = tf.summary.create_file_writer(str(self.run_dir.tensorboard))
            metrics_file = MetricsWriter(self.run_dir.metrics)
        else:
            writer = tf.summary.create_noop_writer()
            metrics_file = contextlib.nullcontext(_DiscardedMetrics())
        self.sampler = self._start_gpu_sampler()
        window = {"steps": 0, "wait": 0.0, "time": 0.0, "samples": 0}
        total = {"wait": 0.0, "time": 0.0, "steps": 0, "samples": 0}
        step = start_step
        # Multi-worker: one iterator over the endlessly repeating share for the whole run, cut into
        # epochs of steps_per_epoch steps (see setup).
        endless: Any = self.batches(self.train_ds) if multi else None
        agreed_stop = False  # multi-worker: some worker was signalled, as the last step's reduction said
        try:
            with GracefulInterrupt() as interrupt, metrics_file as metrics, writer.as_default():

                def stopping() -> bool:
                    # A worker of a cluster must not act on its own signal alone (see the module docstring).
                    return agreed_stop if multi else interrupt.requested

                while step < max_steps and int(self.epoch_var.numpy()) < training.epochs and not stopping():
                    epoch = itertools.islice(endless, self.steps_per_epoch) if multi else self.batches(self.train_ds)
                    for batch, wait in epoch:
                        if multi:
                            self._stop_flag.assign(1.0 if interrupt.requested else 0.0)
                        began = time.perf_counter()
                        losses = self.train_step(batch)
                        values = {k: float(v) for k, v in losses.items()}  # host sync: the step is done
                        compute = time.perf_counter() - began
                        if multi:
                            agreed_stop = values.pop(STOP_KEY) > 0
                        step = int(self.step_var.assign_add(1).numpy())
                        bad = [k for k, v in values.items() if not _finite(v)]
                        if bad:
                            # The loss is reduced over every replica, so every worker stops here alike.
                            last = self.latest_checkpoint()
                            raise NonFiniteLossError(
                                f"training.{bad[0]} is {values[bad[0]]} at step {step} "
                                f"({', '.join(f'{k}={v:.4g}' for k, v in values.items())}); nothing was saved after it",
                                hint=f"lower training.learning_rate or check the data; the last good checkpoint is "
                                f"{last or 'none'} (xtts train resumes from it)",
                            )
                        result.first_loss = values["loss"] if result.first_loss is None else result.first_loss
                        result.last_loss = values["loss"]
                        samples = self.batch_size
                        for bucket in (window, total):
                            bucket["steps"] += 1
                            bucket["wait"] += wait
                            bucket["time"] += wait + compute
                            bucket["samples"] += samples
                        if step % training.log_step == 0 or step == max_steps:
                            record = self._log(step, values, window, metrics)
                            self.progress({"event": "log", **record})
                            window = {"steps": 0, "wait": 0.0, "time": 0.0, "samples": 0}
                        if step % training.val_step == 0:
                            val = self.validate()
                            if val is not None:
                                result.last_val_loss = val["val_loss"]
                                result.last_alignment_score = val["alignment_score"]
                                tf.summary.scalar("val/loss", val["val_loss"], step=step)
                                tf.summary.scalar("val/alignment_score", val["alignment_score"], step=step)
                                metrics.write({"step": step, **val})
                                self.progress({"event": "val", "step": step, **val})
                                self._write_alignment_image(self.last_val_batch, step)
                            self._write_mel_image(batch, step)
                        if step % training.save_step == 0:
                            self.save()
                        if step % training.sample_step == 0 and self.is_chief:
                            self._render_samples(step)
                        if step >= max_steps or stopping():
                            break
                    else:
                        self.epoch_var.assign_add(1)  # the epoch ran to its end
                        continue
                    break  # max_steps reached or interrupted mid-epoch
                if interrupt.requested:
                    result.interrupted = interrupt.signal_name
                    result.exit_code = interrupt.exit_code
                elif agreed_stop:
                    # Another worker was signalled: this one saved the same step and exits like it.
                    result.interrupted = "a signal to another worker"
                    result.exit_code = EXIT_CODES[signal.SIGTERM]
                self.save()
                if multi:
                    # Release the input pipeline before the barrier. Tearing an iterator down can
                    # take a while (TF 2.16's tf.data autotuning thread sometimes sleeps out its
                    # period before it notices: 0 to 40 s seen on a loaded 2-core machine); after
                    # the barrier it would keep one worker's process alive after the others',
                    # and the coordination service reports that as a missing heartbeat.
                    endless.close()
                    self._check_workers_agree("at the end")
        finally:
            writer.close()
            if self.sampler is not None:
                self.sampler.stop()
            if self.mixed:
                keras.mixed_precision.set_dtype_policy(self._previous_policy)
        result.final_step = step
        result.traces = self.traces()
        if total["time"] > 0:
            result.steps_per_sec = total["steps"] / total["time"]
            result.samples_per_sec = total["samples"] / total["time"]
            result.data_wait_percent = 100.0 * total["wait"] / total["time"]
        self.progress({"event": "end", "result": result})
        return result

    def _start_gpu_sampler(self):
        """NVML sampling of the GPUs in use, for the progress line; None on CPU or without NVML."""
        if self.plan.device_type != "GPU":
            return None
        from xtts_cli.devices.nvml_sampler import GpuSampler

        devices = {self.plan.model_device, *self.plan.replica_devices, *(filter(None, [self.plan.data_device]))}
        indices = sorted(int(name.rsplit(":", 1)[1]) for name in devices)
        sampler = GpuSampler(indices, hz=self.config.profiling.gpu_sample_hz)
        sampler.start()
        return None if sampler.unavailable_reason else sampler

    def _gpu_utilization(self, seconds: float) -> Optional[float]:
        """Mean NVML utilisation of the GPUs in use over the last `seconds`."""
        if self.sampler is None:
            return None
        values = []
        for index in self.sampler.indices or []:
            samples = self.sampler.samples(index)
            if samples:
                recent = [
                    s.utilization_gpu
                    for s in samples
                    if s.t >= samples[-1].t - seconds and s.utilization_gpu is not None
                ]
                values.extend(recent)
        return sum(values) / len(values) if values else None

    def _log(self, step: int, values: dict[str, float], window: dict[str, Any], metrics) -> dict[str, Any]:
        import tensorflow as tf

        steps = max(1, window["steps"])
        learning_rate = float(self.optimizer.learning_rate)
        record = {
            "step": step,
            "epoch": int(self.epoch_var.numpy()),
            **values,
            "lr": learning_rate,
            "step_ms": 1000.0 * window["time"] / steps,
            "data_wait_ms": 1000.0 * window["wait"] / steps,
            "samples_per_sec": window["samples"] / window["time"] if window["time"] > 0 else 0.0,
            "traces": self.traces(),
            "gpu_util": self._gpu_utilization(window["time"]),
        }
        metrics.write(record)
        for key in ("loss", "mel_loss", "stop_loss", "attention_loss", "alignment_score"):
            if key in values:
                tf.summary.scalar(f"train/{key}", values[key], step=step)
        tf.summary.scalar("train/lr", learning_rate, step=step)
        tf.summary.scalar("timing/step_ms", record["step_ms"], step=step)
        tf.summary.scalar("timing/data_wait_ms", record["data_wait_ms"], step=step)
        tf.summary.scalar("timing/samples_per_sec", record["samples_per_sec"], step=step)
        if record["gpu_util"] is not None:
            tf.summary.scalar("gpu/utilization_percent", record["gpu_util"], step=step)
        return record

    def _write_mel_image(self, batch, step: int) -> None:
        import tensorflow as tf

        from xtts_cli.data.features import with_reference

        if self.plan.kind in ("mirrored", "multi_worker"):
            return  # a distributed batch has no single tensor to draw
        batch = with_reference(batch, self.config.data)
        outputs = self.model(batch, training=False)
        predicted = tf.cast(outputs.get("mel_post", outputs["mel_pred"])[:1], tf.float32)
        target = tf.cast(batch["mel"][:1], tf.float32)
        image = tf.concat([target, predicted], axis=2)  # [1, frames, 2*n_mels]
        image = tf.transpose(image, [0, 2, 1])[:, ::-1, :, tf.newaxis]
        low, high = tf.reduce_min(image), tf.reduce_max(image)
        tf.summary.image("mel/target_vs_predicted", (image - low) / tf.maximum(high - low, 1e-6), step=step)

    def _write_alignment_image(self, batch, step: int) -> None:
        """TensorBoard `alignment/validation`: the first validation clip's cross-attention (every
        decoder layer and head averaged), text tokens down, decoder steps across; a model that
        reads the text shows one bright line from the top left to the bottom right."""
        import tensorflow as tf

        from xtts_cli.data.features import with_reference

        if batch is None or self.plan.kind in ("mirrored", "multi_worker"):
            return  # a distributed batch has no single tensor to draw
        batch = with_reference(batch, self.config.data)
        attention = self.model(batch, training=False)["cross_attention"][:1]  # [1, heads, steps, tokens]
        steps = int(self.model.decoder_steps(batch["mel_lengths"][:1])[0])
        tokens = int(batch["text_lengths"][0])
        matrix = tf.reduce_mean(tf.cast(attention, tf.float32), axis=1)[0, :steps, :tokens]  # [steps, tokens]
        image = tf.transpose(matrix)[None, :, :, None]
        tf.summary.image("alignment/validation", image / tf.maximum(tf.reduce_max(image), 1e-6), step=step)

    def _render_samples(self, step: int) -> None:
        from xtts_cli.training.synthesis import render_sentences

        if self.eval_ds is None and self.train_ds is None:
            return
        render_sentences(
            self.model,
            self.tokenizer,
            self.config,
            self.voices,
            self.config.training.test_sentences or [self.reference_text],
            self.run_dir.path,
            self.run_dir.samples,
            step,
            note=lambda message: self.progress({"event": "note", "message": message}),
        )
