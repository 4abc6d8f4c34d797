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
from typing import Any, Optional

from xtts_cli.config.loading import config_variant
from xtts_cli.config.schema import XttsConfig
from xtts_cli.errors import XttsError
from xtts_cli.training.settings import RunSettings

__all__ = ["TrainingInput", "build_input", "epoch_steps", "eval_items_of", "pipeline_plan"]


@dataclass(frozen=True)
class TrainingInput:
    train_ds: Any  # repeated without end; the controller cuts it into epochs of steps_per_epoch
    eval_ds: Any  # None without validation data
    info: Any  # the training pipeline's PipelineInfo
    steps_per_epoch: int
    batch_size: int  # global: what one step trains on over every replica and worker


def eval_items_of(config: XttsConfig, scan) -> list:
    """The validation clips: the scan's held-out share, or data.eval_dataset_path's whole dataset."""
    from xtts_cli.data.scan import scan_dataset

    if not config.data.eval_dataset_path:
        return list(scan.eval)
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
    return scan_dataset(eval_data).items


def pipeline_plan(config: XttsConfig, settings: RunSettings, items: list, tokenizer) -> tuple[Any, Any]:
    """(the pipeline's data config, its plan): the pipeline makes the global batch the strategy splits
    (mirrored), or one worker's per-replica batches (multi-worker)."""
    from xtts_cli.data.pipeline import plan_pipeline

    data = config.data.model_copy(update={"batch_size": settings.global_batch_size})
    return data, plan_pipeline(data, items, tokenizer, training=True, output=settings.pipeline_output)


def epoch_steps(batches_per_epoch: int, train_items: int, settings: RunSettings, *, distributed: bool) -> int:
    """Steps in an epoch: the training pipeline's batches; a multi-worker run's from the whole
    dataset (module docstring)."""
    if distributed:
        return max(1, train_items // settings.step_batch_size)
    return max(1, batches_per_epoch)


def build_input(
    config: XttsConfig,
    settings: RunSettings,
    cluster: Optional[Any],
    train_items: list,
    eval_items: list,
    tokenizer,
    note: Callable[[str], None],
) -> TrainingInput:
    from xtts_cli.data.pipeline import build_pipeline

    shard_items = train_items
    if cluster is not None:
        shard_items = train_items[cluster.worker_index :: cluster.num_workers]
        if not shard_items:
            raise XttsError(
                f"{len(train_items)} training items cannot be shared by {cluster.num_workers} workers",
                hint="add data or use fewer workers",
            )
    share = f" (this worker's share of {len(train_items)})" if cluster is not None else ""
    data, plan = pipeline_plan(config, settings, shard_items, tokenizer)
    plan.require_batches(share=share)  # before a precompute pass that may take an hour
    output = settings.pipeline_output
    piped = config.model_copy(update={"data": data})
    train_ds, info = build_pipeline(
        piped,
        shard_items,
        tokenizer,
        training=True,
        output=output,
        device=settings.prefetch_device,
        plan=plan,
        note=note,
    )
    eval_ds = None
    if eval_items:
        eval_ds, _ = build_pipeline(piped, eval_items, tokenizer, training=False, output=output, note=note)
    steps_per_epoch = epoch_steps(info.batches_per_epoch, len(train_items), settings, distributed=cluster is not None)
    # One iterator for the whole run over the dataset repeated without end (each repetition one
    # epoch, shuffled anew). An iterator per epoch cost a stall at every epoch's end: tearing one
    # down waits, at times, for tf.data's autotuning thread to sleep out its period, up to ~4.3 s
    # on a 2-core CPU (cache mode, batches of 16: an epoch of 16 steps took 10.2 s instead of 6.0 s).
    return TrainingInput(train_ds.repeat(), eval_ds, info, steps_per_epoch, settings.step_batch_size)
