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

The loop itself, with its hooks (metrics, validation, checkpoints, samples), is the `Controller`
in training/controller.py; this module builds what it runs. Engines do not print: progress goes
to the `progress` callable as typed events (training/events.py).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from xtts_cli.config.loading import config_variant
from xtts_cli.config.schema import XttsConfig
from xtts_cli.errors import XttsError
from xtts_cli.training.events import Noted, PhaseStarted, Progress, ScanFinished, TrainResult, ignore
from xtts_cli.training.run_dir import prepare_run_dir, remove_stale_temporaries
from xtts_cli.training.settings import resolve_settings

__all__ = ["STOP_KEY", "TrainResult", "Trainer", "WorkersDisagreeError"]

# Multi-worker: the step's extra output saying whether any worker asked to stop (mean of 0/1 flags).
STOP_KEY = "stop_requested"


class WorkersDisagreeError(XttsError):
    """Multi-worker: the workers are not at the same step (see `Trainer._check_workers_agree`)."""


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
        self.progress: Progress = progress or ignore

    # The pieces below are methods so the profilers can reuse them on the real model and pipeline.
    def setup(self) -> None:
        import keras
        import tensorflow as tf

        from xtts_cli.data.pipeline import build_pipeline, plan_pipeline, tokenizer_for
        from xtts_cli.data.scan import scan_dataset
        from xtts_cli.data.text import Tokenizer
        from xtts_cli.devices.placement import configure_devices
        from xtts_cli.model.build import build_model

        config = self.config
        # First TF work of the process: a multi-worker strategy must exist before any other op.
        self.plan = configure_devices(config.devices, join_cluster=True)
        self.settings = settings = resolve_settings(config, self.plan)
        cluster = self.plan.cluster if self.plan.kind == "multi_worker" else None
        self.is_chief = cluster is None or cluster.is_chief
        tf.random.set_seed(config.training.seed)
        keras.utils.set_random_seed(config.training.seed)

        self.progress(PhaseStarted("scanning the dataset"))
        self.scan = scan_dataset(config.data)
        self.progress(ScanFinished(self.scan))
        self.progress(PhaseStarted("building the input pipeline and the model"))
        # Each dataset's clips repeated as its sampling weight asks (data.datasets).
        train_items, eval_items = self.scan.epoch_items(), list(self.scan.eval)
        if config.data.eval_dataset_path:
            eval_data = config_variant(
                config,
                {
                    "data.dataset_path": config.data.eval_dataset_path,
                    "data.datasets": [],
                    "data.dataset_format": "auto",
                    "data.eval_fraction": 0.0,
                },
                where="data.eval_dataset_path",
            ).data
            eval_scan = scan_dataset(eval_data)
            eval_items = eval_scan.items
        if not train_items:
            raise XttsError("no usable training items after the dataset scan", hint="see the bad files listed above")

        # Non-chief workers read the run directory (the chief's checkpoints and vocab) and write nothing.
        self.run_dir, self.resumed = prepare_run_dir(
            self.run_dir_path, config, fresh=self.fresh, force=self.force, read_only=not self.is_chief
        )
        self._holds_run_dir = self.is_chief  # its lock, given back by `close`
        if self.is_chief:
            remove_stale_temporaries(self.run_dir)
        if self.resumed and self.run_dir.vocab.is_file():
            self.tokenizer = Tokenizer.load(self.run_dir.vocab)
        else:
            # Built from the scan, so every worker of a cluster builds the same one.
            self.tokenizer = tokenizer_for(
                self.scan, config.data, items=train_items + eval_items if config.data.eval_dataset_path else None
            )
            if self.is_chief:
                self.tokenizer.save(self.run_dir.vocab)

        from xtts_cli.inference.run_files import (
            REFERENCE_FILE,
            SPEAKERS_FILE,
            SPEAKING_RATE_FILE,
            measure_speaking_rate,
            save_reference,
            save_speakers,
            save_speaking_rate,
        )
        from xtts_cli.inference.speech import reference_from_audio
        from xtts_cli.training.samples import rendering_voices

        if self.is_chief and not (self.run_dir.path / SPEAKING_RATE_FILE).is_file():
            rate = measure_speaking_rate(self.scan.train, self.tokenizer, config.data)
            if rate is not None:
                save_speaking_rate(self.run_dir.path, rate)

        first = (eval_items or train_items)[0]
        if self.is_chief and not (self.run_dir.path / REFERENCE_FILE).is_file():
            # The voice test sentences are rendered in: the first validation clip's opening frames.
            save_reference(self.run_dir.path, reference_from_audio(Path(first.audio_path), config.data))
        if self.is_chief and not (self.run_dir.path / SPEAKERS_FILE).is_file():
            save_speakers(self.run_dir.path, self.scan.train)
        self.reference_text, self.reference_language = first.training_text, first.language
        self.voices = rendering_voices(self.run_dir.path, config.data, self.tokenizer) if self.is_chief else []

        self.mixed = settings.mixed_precision
        self._previous_policy = keras.mixed_precision.dtype_policy().name
        if self.mixed:
            keras.mixed_precision.set_dtype_policy(settings.dtype_policy)

        output = settings.pipeline_output
        global_config = config
        if settings.replicas > 1:
            # data.batch_size is per replica; the pipeline makes the global batch the strategy splits.
            global_config = config_variant(config, {"data.batch_size": settings.global_batch_size})
        target = settings.prefetch_device
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

        def note(message: str) -> None:
            self.progress(Noted(message))

        self.train_ds, self.pipeline_info = build_pipeline(
            global_config,
            shard_items,
            self.tokenizer,
            training=True,
            output=output,
            device=target,
            plan=train_plan,
            note=note,
        )
        self.eval_ds = None
        if eval_items:
            # Every worker evaluates the whole validation set, in the same order: the same number of
            # eval steps everywhere (a share per worker could differ by a batch and leave one worker
            # waiting in a collective), and validation is small and capped by max_val_batches.
            self.eval_ds, _ = build_pipeline(
                global_config, eval_items, self.tokenizer, training=False, output=output, note=note
            )
        self.batch_size = global_config.data.batch_size
        self.steps_per_epoch = max(1, self.pipeline_info.batches_per_epoch)
        # One iterator for the whole run over the dataset repeated without end (each repetition one
        # epoch, shuffled anew), cut into epochs of steps_per_epoch steps by the controller. An
        # iterator per epoch cost a stall at every epoch's end: tearing one down waits, at times,
        # for tf.data's autotuning thread to sleep out its period, up to ~4.3 s on a 2-core CPU
        # (cache mode, batches of 16: an epoch of 16 steps took 10.2 s instead of 6.0 s).
        self.train_ds = self.train_ds.repeat()

        if cluster is not None:
            self.strategy = self.plan.strategy
            self.batch_size = config.data.batch_size * self.strategy.num_replicas_in_sync
            # Workers' shares differ by a few clips and bucketing drops a different remainder on each,
            # so their own epochs differ in length; a worker that ran out first would leave the others
            # waiting in the step's all-reduce (or, with TF's partial-batch handling, train on empty
            # batches). So an epoch is counted in steps from the whole dataset, a number every worker
            # computes alike (each worker's share repeats without end, as above).
            self.steps_per_epoch = max(1, len(train_items) // self.batch_size)
        elif self.plan.kind == "mirrored":
            self.strategy = tf.distribute.MirroredStrategy(list(self.plan.replica_devices))
        else:
            self.strategy = tf.distribute.OneDeviceStrategy(self.plan.model_device)
        total = settings.total_steps(self.steps_per_epoch)
        self.total_steps = total
        with self.strategy.scope():
            from xtts_cli.training.optimization import build_optimizer

            self.model = build_model(
                config.model,
                config.data,
                self.tokenizer.vocab_size,
                languages=len(self.tokenizer.languages),
                speakers=len(self.tokenizer.speakers),
            )
            # The share of training.max_minutes spent, set by the training loop before each step
            # (the learning rate decays over it too); not checkpointed: each command has its own.
            self.budget_used = (
                None
                if config.training.max_minutes is None
                else tf.Variable(0.0, dtype=tf.float32, trainable=False, name="budget_used")
            )
            self.optimizer = build_optimizer(config.training, total, self.mixed, self.budget_used)
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
            self._restore(latest)
        # Multi-worker only: the stop flag every worker reduces, and the step gather (a tf.function).
        self.stop_flag: Any = None
        self._gather_steps: Any = None
        if cluster is not None:
            # Local to this worker (made outside the strategy's scope): 1.0 once it got SIGINT/SIGTERM.
            self.stop_flag = tf.Variable(0.0, trainable=False, name="stop_requested")
            self.check_workers_agree("after restoring")
        self._compile_steps()

    def _restore(self, latest: str) -> None:
        """Restore `latest`, or, when its files cannot be read (cut short, corrupt: a disk that
        filled mid-save, a copy that stopped), the newest earlier checkpoint the run keeps, with a
        note. A checkpoint that reads but does not fit the model is refused: that is the config."""
        import tensorflow as tf

        kept = [latest]
        if self.manager is not None:
            kept += [path for path in reversed(self.manager.checkpoints) if path != latest]
        for index, path in enumerate(kept):
            try:
                self.checkpoint.restore(path).expect_partial()
            except (ValueError, AssertionError) as exc:
                raise XttsError(
                    f"cannot restore {path}: {str(exc).splitlines()[0]}",
                    hint="the checkpoint does not fit this model; use --fresh to start a new run",
                ) from None
            except (tf.errors.OpError, IndexError, OSError) as exc:  # a file cut short: "Read less bytes"
                if index + 1 < len(kept):
                    self.progress(
                        Noted(
                            f"checkpoint {path} cannot be read ({str(exc).splitlines()[0][:120]}); resuming from "
                            f"{kept[index + 1]}, the one before it"
                        )
                    )
                    continue
                raise XttsError(
                    f"cannot read {path}, nor any checkpoint before it: {str(exc).splitlines()[0]}",
                    hint="use --fresh to start a new run (the old one is moved aside)",
                ) from None
            return

    def _complete_checkpoint_files(self) -> set[str]:
        """File names of the checkpoints the pointer lists (complete, by TensorFlow's order of writes)."""
        import tensorflow as tf

        state = tf.train.get_checkpoint_state(str(self.run_dir.checkpoints))
        prefixes = [Path(path).name for path in (state.all_model_checkpoint_paths if state else [])]
        return {
            path.name
            for path in self.run_dir.checkpoints.iterdir()
            if any(path.name.startswith(p + ".") for p in prefixes)
        }

    def latest_checkpoint(self) -> Optional[str]:
        """The run's newest complete checkpoint (the chief's directory, on any worker)."""
        import tensorflow as tf

        if self.manager is not None:
            return self.manager.latest_checkpoint
        return tf.train.latest_checkpoint(str(self.run_dir.checkpoints))

    def check_workers_agree(self, moment: str) -> None:
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
        stop_flag = self.stop_flag
        distributed = self.plan.kind in ("mirrored", "multi_worker")

        data_seed = tf.constant(config.data.seed, tf.int64)
        prefix = self.tokenizer.prefix_length
        # The duration decoder reads no previous frames: a second pass would repeat the first.
        self_conditioning = config.training.self_conditioning and model.decoder_kind == "autoregressive"
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
            batch = with_reference(batch, config.data, seed=tf.stack([data_seed, draw]), prefix=prefix)
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
            if prefix:
                model.update_speaker_centroids(batch["speaker_ids"], outputs["speaker_vector"])
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
            batch = with_reference(batch, config.data, prefix=prefix)  # the first frames: the same every evaluation
            return model.compute_loss(batch, model(batch, training=False), **attention)

        def eval_step(batch):
            with place():
                per_replica = strategy.run(replica_eval, args=(batch,))
                return {k: strategy.reduce(tf.distribute.ReduceOp.MEAN, v, axis=None) for k, v in per_replica.items()}

        graph, xla = self.settings.graph_mode, self.settings.xla
        model.xla_compatible_losses = bool(graph and xla and not distributed)
        self.featurize = None
        if self.plan.kind == "split":
            from xtts_cli.training.featurize import make_featurizer

            assert self.plan.data_device is not None  # a split plan names its data device
            self.featurize = make_featurizer(config.data, self.plan.data_device, graph=graph)
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
            try:
                return self.manager.save(checkpoint_number=number)
            except BaseException as error:
                # A save cut short (a full disk): the pointer still names the last complete
                # checkpoint; the partial files of this one go, and the error says what happened.
                remove_stale_temporaries(self.run_dir)
                for partial in self.run_dir.checkpoints.glob(f"ckpt-{number}.*"):
                    if partial.name not in self._complete_checkpoint_files():
                        partial.unlink(missing_ok=True)
                from xtts_cli.errors import disk_full

                full = disk_full(error, f"checkpoint {number} into {self.run_dir.checkpoints}")
                if full is not None:
                    latest = self.manager.latest_checkpoint
                    full.lines.append(
                        f"the run keeps {latest}; run the same command to resume from it once there is room"
                        if latest
                        else "no checkpoint was complete yet: once there is room, the same command starts the run over"
                    )
                    raise full from None
                raise
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

        previous = self.__dict__.pop("_previous_policy", None)
        if previous is not None:
            keras.mixed_precision.set_dtype_policy(previous)
        if self.__dict__.pop("_holds_run_dir", False):
            release_run_dir(self.run_dir)

    def start_gpu_sampler(self):
        """NVML sampling of the GPUs in use, for the progress line; None on CPU or without NVML."""
        if self.plan.device_type != "GPU":
            return None
        from xtts_cli.devices.nvml_sampler import GpuSampler

        devices = {self.plan.model_device, *self.plan.replica_devices, *(filter(None, [self.plan.data_device]))}
        indices = sorted(int(name.rsplit(":", 1)[1]) for name in devices)
        sampler = GpuSampler(indices, hz=self.config.profiling.gpu_sample_hz)
        sampler.start()
        return None if sampler.unavailable_reason else sampler

    def write_mel_image(self, batch, step: int) -> None:
        import tensorflow as tf

        from xtts_cli.data.features import with_reference

        if self.plan.kind in ("mirrored", "multi_worker"):
            return  # a distributed batch has no single tensor to draw
        batch = with_reference(batch, self.config.data, prefix=self.tokenizer.prefix_length)
        outputs = self.model(batch, training=False)
        predicted = tf.cast(outputs.get("mel_post", outputs["mel_pred"])[:1], tf.float32)
        target = tf.cast(batch["mel"][:1], tf.float32)
        image = tf.concat([target, predicted], axis=2)  # [1, frames, 2*n_mels]
        image = tf.transpose(image, [0, 2, 1])[:, ::-1, :, tf.newaxis]
        low, high = tf.reduce_min(image), tf.reduce_max(image)
        tf.summary.image("mel/target_vs_predicted", (image - low) / tf.maximum(high - low, 1e-6), step=step)

    def write_alignment_image(self, batch, step: int) -> None:
        """TensorBoard `alignment/validation`: the first validation clip's cross-attention (every
        decoder layer and head averaged), text tokens down, decoder steps across; a model that
        reads the text shows one bright line from the top left to the bottom right."""
        import tensorflow as tf

        from xtts_cli.data.features import with_reference

        if batch is None or self.plan.kind in ("mirrored", "multi_worker"):
            return  # a distributed batch has no single tensor to draw
        batch = with_reference(batch, self.config.data, prefix=self.tokenizer.prefix_length)
        attention = self.model(batch, training=False)["cross_attention"][:1]  # [1, heads, steps, tokens]
        steps = int(self.model.decoder_steps(batch["mel_lengths"][:1])[0])
        tokens = int(batch["text_lengths"][0])
        matrix = tf.reduce_mean(tf.cast(attention, tf.float32), axis=1)[0, :steps, :tokens]  # [steps, tokens]
        image = tf.transpose(matrix)[None, :, :, None]
        tf.summary.image("alignment/validation", image / tf.maximum(tf.reduce_max(image), 1e-6), step=step)

    def render_samples(self, step: int) -> None:
        from xtts_cli.training.samples import render_sentences

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
            note=lambda message: self.progress(Noted(message)),
            language=None if self.config.training.test_sentences else self.reference_language,
        )
