"""The compiled train and eval steps of a model kind, placed, distributed and fed.

- The step is compiled with `tf.function` (graph mode) and, when configured, XLA; one trace serves
  every bucket (the input signature leaves the time axes open; the batch axis is static,
  drop_remainder) and the trace count is reported.
- Outside MirroredStrategy the whole step, reduction included, is pinned to the model device.
- With a data/model split the pipeline yields decoded audio and the mel features are computed on
  the data device one batch ahead of the step, so the feature work of batch k+1 overlaps the
  model's step k on the other device (GPU ops are asynchronous), and the batch is handed over by
  the step itself reading it on the model device.
- Multi-worker: the step also reduces a stop flag, so every worker learns in the same step that
  one of them was asked to stop, and all stop after it instead of one waiting for the others.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any, Optional

import tensorflow as tf

from xtts_cli.devices.placement import DevicePlan
from xtts_cli.kinds import KindModels
from xtts_cli.training.settings import RunSettings

__all__ = ["STOP_KEY", "Steps"]

# Multi-worker: the step's extra output saying whether any worker asked to stop (mean of 0/1 flags).
STOP_KEY = "stop_requested"
# The validation step's count of clips each replica evaluated (`Steps._weighted`).
EVAL_CLIPS = "clips"


def _rows(batch) -> int:
    return int(tf.shape(tf.nest.flatten(batch)[0])[0])


class Steps:
    def __init__(
        self,
        models: KindModels,
        *,
        strategy: Any,
        plan: DevicePlan,
        settings: RunSettings,
        data: Any,
        train_ds: Any,
        eval_ds: Any,
        stop_flag: Any,
    ) -> None:

        self.strategy, self.plan, self.settings = strategy, plan, settings
        self.distributed = plan.distributed
        # The dataset the tf.data service makes, and where it is (only training is served).
        self._served = (train_ds, data.service_address) if data.service_address else None
        self._distributed_views: dict[int, Any] = {}
        self.featurize = None
        if settings.featurize_on_data_device:
            from xtts_cli.training.featurize import make_featurizer

            assert plan.data_device is not None  # a split plan names its data device
            self.featurize = make_featurizer(data, plan.data_device, graph=settings.graph_mode)

        # Multi-worker: one trace per function on every worker matters beyond speed, since
        # tracing assigns the collectives' keys and the workers' keys must match.
        # MirroredStrategy's cross-replica reduce is not XLA-compilable as one cluster.
        jit = settings.xla if not self.distributed else None
        train_spec = self._step_spec(train_ds) if settings.graph_mode else None

        def compiled(phase):
            """The train step of one phase of the kind's (`KindModels.phase`), compiled on first use."""

            def replica_step(batch):
                losses = models.train_step(batch, phase)
                if stop_flag is not None:
                    losses = {**losses, STOP_KEY: tf.identity(stop_flag)}
                return losses

            step = self._reduced(replica_step)
            # No autograph: the steps branch and loop with TensorFlow's own ops (tf.cond,
            # tf.while_loop), and converting every function they call took a quarter of the first
            # step's trace (8.4 s against 11.4 s for the tiny model on 2 cores).
            return (
                tf.function(step, jit_compile=jit, input_signature=[train_spec], autograph=False)
                if train_spec
                else step
            )

        eval_step = self._weighted(models.eval_step)
        if settings.graph_mode:
            eval_spec = self._step_spec(eval_ds) if eval_ds is not None else None
            eval_step = tf.function(
                eval_step, jit_compile=jit, input_signature=[eval_spec] if eval_spec else None, autograph=False
            )
        self._phase_of, self._compiled = models.phase, compiled
        self._train_fns: dict[Any, Any] = {}
        # The function call itself is placed on the model device too, so its outputs live there.
        self.eval = self._placed(eval_step)

    def train(self, batch, step: int = 0):
        """The train step after `step` steps, in the phase the kind gives it."""
        phase = self._phase_of(step)
        if phase not in self._train_fns:
            self._train_fns[phase] = self._compiled(phase)
        with self._place():
            return self._train_fns[phase](batch)

    def _place(self):

        return contextlib.nullcontext() if self.distributed else tf.device(self.plan.model_device)

    def _placed(self, function):
        def call(batch):
            with self._place():
                return function(batch)

        return call

    def _reduced(self, replica_function):

        strategy = self.strategy

        def step(batch):
            with self._place():
                per_replica = strategy.run(replica_function, args=(batch,))
                return {k: strategy.reduce(tf.distribute.ReduceOp.MEAN, v, axis=None) for k, v in per_replica.items()}

        return step

    def _weighted(self, eval_function):
        """The validation step: each replica's losses weighted by its clips, summed over replicas and
        divided by the clips. A validation batch of fewer clips than replicas (one clip on two
        devices) leaves a replica none: it computes nothing (a convolution over an empty batch fails
        on oneDNN), and an uneven split no longer weighs a lone clip as much as a pair."""
        strategy, keys = self.strategy, {}

        def replica_eval(batch):
            rows = tf.shape(tf.nest.flatten(batch)[0])[0]

            def computed():
                losses = eval_function(batch)
                keys.update(dict.fromkeys(losses))
                return {k: tf.cast(v, tf.float32) * tf.cast(rows, tf.float32) for k, v in losses.items()}

            summed = tf.cond(rows > 0, computed, lambda: {k: tf.zeros([], tf.float32) for k in keys})
            return {**summed, EVAL_CLIPS: tf.cast(rows, tf.float32)}

        def step(batch):
            with self._place():
                if not keys and tf.executing_eagerly():  # eager: tf.cond runs one branch, so learn the keys first
                    part = next(p for p in strategy.experimental_local_results(batch) if _rows(p) > 0)
                    keys.update(dict.fromkeys(eval_function(part)))
                per_replica = strategy.run(replica_eval, args=(batch,))
                total = {k: strategy.reduce(tf.distribute.ReduceOp.SUM, v, axis=None) for k, v in per_replica.items()}
                clips = tf.maximum(total.pop(EVAL_CLIPS), 1.0)
                return {k: v / clips for k, v in total.items()}

        return step

    def _step_spec(self, dataset):
        """The step's input signature: the batch as the step receives it."""

        spec = dataset.element_spec
        if self.featurize is not None:
            outputs = self.featurize.get_concrete_function(spec).structured_outputs
            spec = tf.nest.map_structure(lambda t: tf.TensorSpec(t.shape, t.dtype), outputs)
        if self.distributed:
            spec = self.distribute(dataset).element_spec
        return spec

    def distribute(self, dataset):
        """The strategy's view of a pipeline, made once per pipeline (the step's input signature and
        the loop then read the same distributed dataset)."""

        key = id(dataset)
        if key not in self._distributed_views:
            if self.plan.worker_cluster is not None:
                # The pipeline is already this worker's share with per-replica batches:
                # distribute_datasets_from_function hands one batch to each local replica and,
                # unlike experimental_distribute_dataset, neither rebatches nor shards it. Auto-
                # sharding is also switched off on the dataset itself, so no other path shards a
                # share a second time.
                options = tf.data.Options()
                options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
                share = dataset.with_options(options)
                view = self.strategy.distribute_datasets_from_function(lambda context: share)
            else:
                view = self.strategy.experimental_distribute_dataset(dataset)
            self._distributed_views[key] = view
        return self._distributed_views[key]

    def traces(self) -> int:
        """Traces of the train step so far (0 in eager mode: nothing is traced)."""
        if not self.settings.graph_mode:
            return 0
        return sum(int(function.experimental_get_tracing_count()) for function in self._train_fns.values())

    def batches(
        self,
        dataset,
        *,
        stop: Callable[[], bool] = lambda: False,
        note: Callable[[str], None] = lambda text: None,
    ):
        """Yield (batch ready for the step, seconds blocked waiting for it). From the tf.data
        service, a wait for a batch ends once `stop()` is true, and a long one is told to `note`."""
        served = self._served is not None and dataset is self._served[0]
        if self.distributed:
            dataset = self.distribute(dataset)
        if served:
            from xtts_cli.data.service import ServedBatches

            assert self._served is not None
            # Made on the reader's thread: making it asks the dispatcher, and waits in C++ if it is gone.
            iterator = ServedBatches(lambda: iter(dataset), self._served[1], stop=stop, note=note)
        else:
            iterator = iter(dataset)
        prepare = self.featurize or (lambda batch: batch)
        # With a featurizer, the features of batch k+1 are launched on the data device before step k runs.
        ahead: Optional[tuple[Any, float]] = None
        try:
            while True:
                start = time.perf_counter()
                try:
                    batch = prepare(next(iterator))
                except StopIteration:
                    if ahead is not None:
                        yield ahead
                    return
                wait = time.perf_counter() - start
                if self.featurize is None:
                    yield batch, wait
                else:
                    if ahead is not None:
                        yield ahead
                    ahead = (batch, wait)
        finally:
            if served:
                iterator.close()
