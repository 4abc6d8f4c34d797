"""The training run's input: its clips, vocabulary and pipelines, built once from the scan.

- Each dataset's clips are repeated as its sampling weight asks (data.datasets).
- Multi-worker: each worker makes batches from its own share of the clips, chosen from the item
  list (the same on every worker: the scan is deterministic) before anything is decoded, so no
  worker decodes a clip another one trains on; its pipeline yields per-replica batches (no
  tf.data auto-sharding). An epoch is counted in steps from the whole dataset, a number every
  worker computes alike: workers' shares differ by a few clips and bucketing drops a different
  remainder on each, and a worker that ran out first would leave the others waiting in the step's
  all-reduce.
- Every worker evaluates the whole validation set, in the same order: the same number of eval
  steps everywhere, and validation is small and capped by max_val_batches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from xtts_cli.errors import XttsError
from xtts_cli.training.settings import RunSettings, epoch_steps, worker_share

if TYPE_CHECKING:
    from xtts_cli.data.run_data import RunData

__all__ = ["TrainingInput", "build_input"]


@dataclass(frozen=True)
class TrainingInput:
    train_ds: Any  # repeated without end; the controller cuts it into epochs of steps_per_epoch
    eval_ds: Any  # None without validation data
    info: Any  # the training pipeline's PipelineInfo
    steps_per_epoch: int
    batch_size: int  # global: what one step trains on over every replica and worker
    validation_set: str = ""  # what a val_loss was measured on (`validation_identity`), "" with none


def build_input(
    run_data: RunData, settings: RunSettings, cluster: Optional[Any], note: Callable[[str], None]
) -> TrainingInput:
    """The run's pipelines: the pipeline makes the global batch the strategy splits (mirrored), or
    one worker's per-replica batches from its share of the clips (multi-worker)."""
    train_items = run_data.train_items
    shard_items, share = worker_share(train_items, cluster)
    if cluster is not None and not shard_items:
        raise XttsError(
            f"{len(train_items)} training items cannot be shared by {cluster.num_workers} workers",
            hint="add data or use fewer workers",
        )
    batch = settings.global_batch_size
    plan = run_data.plan(items=shard_items, batch_size=batch)
    plan.require_batches(share=share, replicas=settings.replicas)  # before a precompute pass that may take an hour
    train_ds, info = run_data.pipeline(plan=plan, batch_size=batch, device=settings.prefetch_device, note=note)
    address = run_data.config.data.service_address
    if address:  # said where it starts: the batches are made on other machines, not by this one's CPUs
        note(f"training batches come from the tf.data service at {address}; validation's are made here")
    eval_ds = None
    if run_data.eval_items:
        eval_ds, _ = run_data.pipeline(training=False, batch_size=batch, note=note)
    steps_per_epoch = epoch_steps(info.batches_per_epoch, len(train_items), settings, distributed=cluster is not None)
    # One iterator for the whole run over the dataset repeated without end (each repetition one
    # epoch, shuffled anew). An iterator per epoch cost a stall at every epoch's end: tearing one
    # down waits, at times, for tf.data's autotuning thread to sleep out its period, up to ~4.3 s
    # on a 2-core CPU (cache mode, batches of 16: an epoch of 16 steps took 10.2 s instead of 6.0 s).
    return TrainingInput(
        train_ds.repeat(),
        eval_ds,
        info,
        steps_per_epoch,
        settings.step_batch_size,
        validation_identity(run_data, batch) if eval_ds is not None else "",
    )


def validation_identity(run_data: RunData, batch_size: int) -> str:
    """A digest of what a validation loss is a mean over: the validation clips (by dataset, path,
    text and size) and, where max_val_batches leaves some unread, the batches read of them. Two
    losses compare only where it is the same (a limit that reads every clip either way had reset it)."""
    import hashlib
    import json

    clips = sorted(
        (item.dataset, item.relative_path, item.text, item.normalized_text or "", item.size_bytes)
        for item in run_data.eval_items
    )
    limit = run_data.config.training.max_val_batches
    plan = run_data.plan(training=False, batch_size=batch_size)
    # The loss is a mean of batch means: with every clip read, the same batches (by size, per length
    # bucket) give the same mean whatever the batch size that made them.
    batches = [[batch_size] * (n // batch_size) + [n % batch_size] * bool(n % batch_size) for n in plan.group_sizes]
    read = batches if plan.batches_per_epoch <= limit else (batch_size, limit)
    return hashlib.sha256(json.dumps([clips, read]).encode("utf-8")).hexdigest()[:16]
