"""What a run's config means on this machine, worked out once.

Several settings are derived: `auto` values, the global batch of a mirrored run, what the input
pipeline delivers and where it prefetches to. `resolve_settings` computes them from the config and
the device plan, into one frozen object the trainer, the profilers, the check-up and the benchmark
read, so that `auto` means the same thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Optional

if TYPE_CHECKING:
    from collections.abc import Sequence

    from xtts_cli.config.schema import TrainingConfig, XttsConfig
    from xtts_cli.devices.gpu_info import GpuInfo
    from xtts_cli.devices.placement import DevicePlan

__all__ = ["RunSettings", "graph_mode", "mixed_precision_enabled", "resolve_settings", "xla_enabled"]


def graph_mode(training: TrainingConfig) -> bool:
    """The step runs as a compiled graph: graph mode on and eager debugging off."""
    return training.enable_graph_mode and not training.enable_eager_debug


# `auto` weighs XLA's compile (once per batch shape) against what it saves per step, from the run's
# planned length. On a CPU it saves nothing at any length: in 6 minutes speak-cpu trained 150 steps
# with XLA against 1,300 without, and its compiled step was slower than plain graph mode (2-core
# AMD EPYC, docs/performance.md "A CPU's minutes"). On a GPU it fuses the step's small kernels; a
# run planned shorter than these (a smoke test, a short tutorial run) would spend its time compiling.
XLA_MIN_PLANNED_STEPS = 1000
XLA_MIN_PLANNED_MINUTES = 10.0


def xla_enabled(training: TrainingConfig, model_device_type: str) -> bool:
    """XLA compiles the step: graph mode, and `true`, or `auto` with the model on a GPU for a run
    planned to last (no `max_steps` under `XLA_MIN_PLANNED_STEPS`, no `max_minutes` under
    `XLA_MIN_PLANNED_MINUTES`)."""
    setting = training.enable_xla_compilation
    if not graph_mode(training) or setting is False:
        return False
    if setting is True:
        return True
    short = (training.max_steps is not None and training.max_steps < XLA_MIN_PLANNED_STEPS) or (
        training.max_minutes is not None and training.max_minutes < XLA_MIN_PLANNED_MINUTES
    )
    return model_device_type == "GPU" and not short


def mixed_precision_enabled(training: TrainingConfig, device_type: str, gpus: Sequence[GpuInfo]) -> bool:
    """16-bit math: `true`, or `auto` with the model on a GPU and each of the `gpus` NVML names with
    the tensor cores of the dtype (a GPU config fixed on a laptop had been set to false for the GPU)."""
    setting = training.mixed_precision
    if setting != "auto":
        return bool(setting)
    bfloat16 = training.mixed_precision_dtype == "bfloat16"
    fast = [gpu.supports_bfloat16 if bfloat16 else gpu.supports_mixed_float16 for gpu in gpus]
    return device_type == "GPU" and bool(fast) and all(fast)


@dataclass(frozen=True)
class RunSettings:
    """The derived settings of one run; every field is fixed once resolved."""

    graph_mode: bool
    xla: bool
    # The Keras dtype policy of the model's layers: "float32", "mixed_float16" or "mixed_bfloat16".
    dtype_policy: str
    # Replicas a batch is split over (a mirrored run); 1 otherwise.
    replicas: int
    per_replica_batch_size: int
    # What the input pipeline makes: a batch of all replicas (one worker's replica's, multi-worker).
    global_batch_size: int
    # What one step trains on: over every replica of every worker.
    step_batch_size: int
    # The model kind's registry name (xtts_cli/kinds): what the run trains.
    kind: str
    # What the pipeline delivers: audio (for a kind that reads it, or featurized on the data device
    # in a data/model split), or mels.
    pipeline_output: Literal["audio", "mel"]
    # A data/model split computes the mels on the data device, one batch ahead of the step.
    featurize_on_data_device: bool
    # The device batches are prefetched to: the data GPU in a split, the model GPU on one GPU; None
    # where a strategy distributes the batches, or on a CPU.
    prefetch_device: Optional[str]
    max_steps: Optional[int]
    epochs: int

    @property
    def mixed_precision(self) -> bool:
        return self.dtype_policy != "float32"

    def total_steps(self, steps_per_epoch: int) -> int:
        """Where the run ends: the first of training.max_steps and epochs x steps per epoch (the
        learning-rate schedule is laid over it, and `validate` reports it)."""
        return total_steps(self.max_steps, self.epochs, steps_per_epoch) or 0


def total_steps(max_steps: Optional[int], epochs: int, steps_per_epoch: Optional[int]) -> Optional[int]:
    """The first of `max_steps` and `epochs` x `steps_per_epoch` (None: neither is known)."""
    by_epochs = epochs * steps_per_epoch if steps_per_epoch else None
    if max_steps is None or by_epochs is None:
        return max_steps or by_epochs
    return min(max_steps, by_epochs)


def resolve_settings(config: XttsConfig, plan: DevicePlan) -> RunSettings:
    from xtts_cli.kinds import kind_for, kind_name

    training = config.training
    replicas = plan.num_replicas if plan.kind == "mirrored" else 1
    reads = kind_for(config).reads
    featurize = plan.kind == "split" and reads == "mel"
    in_sync = replicas
    if plan.worker_cluster is not None and plan.strategy is not None:
        in_sync = plan.strategy.num_replicas_in_sync
    prefetch = None
    if plan.device_type == "GPU" and not plan.distributed:
        prefetch = plan.data_device if plan.kind == "split" else plan.model_device
    if not mixed_precision_enabled(training, plan.device_type, plan.gpus):
        policy = "float32"
    else:
        policy = "mixed_bfloat16" if training.mixed_precision_dtype == "bfloat16" else "mixed_float16"
    return RunSettings(
        graph_mode=graph_mode(training),
        xla=xla_enabled(training, plan.device_type),
        dtype_policy=policy,
        replicas=replicas,
        per_replica_batch_size=config.data.batch_size,
        global_batch_size=config.data.batch_size * replicas,
        step_batch_size=config.data.batch_size * in_sync,
        kind=kind_name(config),
        pipeline_output="audio" if featurize or reads == "audio" else "mel",
        featurize_on_data_device=featurize,
        prefetch_device=prefetch,
        max_steps=training.max_steps,
        epochs=training.epochs,
    )


def settings_report(
    config: XttsConfig, settings: RunSettings, plan: DevicePlan, steps_per_epoch: Optional[int]
) -> dict[str, Any]:
    """The derived settings as `xtts validate --json` reports them (`steps_per_epoch` None without a
    usable dataset)."""
    total = total_steps(settings.max_steps, settings.epochs, steps_per_epoch)
    return {
        "kind": settings.kind,
        "devices": plan.describe(),
        "replicas": settings.replicas,
        "per_replica_batch_size": settings.per_replica_batch_size,
        "global_batch_size": settings.global_batch_size,
        "step_batch_size": settings.step_batch_size,
        "gradient_accumulation_steps": config.training.gradient_accumulation_steps,
        "steps_per_epoch": steps_per_epoch,
        "total_steps": total,
        "max_minutes": config.training.max_minutes,
        "graph_mode": settings.graph_mode,
        "xla": settings.xla,
        "dtype_policy": settings.dtype_policy,
        "pipeline_output": settings.pipeline_output,
        "featurize_on_data_device": settings.featurize_on_data_device,
        "prefetch_device": settings.prefetch_device,
        "multi_worker": config.devices.strategy == "multi_worker",
        "service_address": config.data.service_address or None,
    }


def describe_settings(report: dict[str, Any]) -> list[str]:
    """`settings_report` as the lines `xtts validate` prints."""
    steps = f"{report['total_steps']:,} steps" if report["total_steps"] else "steps from the dataset"
    if report["max_minutes"] is not None and report["multi_worker"]:  # refused: the error below says so
        steps += f" (training.max_minutes {report['max_minutes']:g} is no budget under multi_worker)"
    elif report["max_minutes"] is not None:
        steps += f" or {report['max_minutes']:g} minutes, whichever comes first"
    per_epoch = report["steps_per_epoch"]
    epoch = f"; {per_epoch:,} step{'s' if per_epoch != 1 else ''} an epoch" if per_epoch else ""
    if per_epoch == 0:
        epoch = "; no full batch an epoch"
    per = f"{report['per_replica_batch_size']} per replica x {report['replicas']}"
    workers = ""
    if report["multi_worker"]:
        known = report["step_batch_size"] is not None
        workers = f" x {report['step_batch_size'] // report['global_batch_size']} workers" if known else ""
        workers = workers or ", times the cluster's workers (TF_CONFIG is not set here)"
    batch = report["step_batch_size"] or report["global_batch_size"]
    every = report["gradient_accumulation_steps"]
    # Keras averages the steps' gradients into one update.
    update = f"; an optimizer update every {every} steps ({batch * every} clips)" if every > 1 else ""
    # Served, the batches are made on the service's workers: "the pipeline makes" had read as this machine.
    service = report.get("service_address")
    maker = f"the tf.data service at {service} makes" if service else "the pipeline makes"
    served = " for training; validation's pipeline runs here" if service else ""
    compiled = "graph mode" if report["graph_mode"] else "eager (slow)"
    compiled += ", XLA on" if report["xla"] else ", XLA off"
    return [
        f"model kind {report['kind']}; {report['devices']}",
        f"batch {batch} a step ({per}{workers}){update}{epoch}; {steps}",
        f"{compiled}, {report['dtype_policy']}; {maker} {'mels' if report['pipeline_output'] == 'mel' else 'audio'}"
        + (" (mels computed on the data device)" if report["featurize_on_data_device"] else "")
        + served,
    ]


def epoch_steps(batches_per_epoch: int, train_items: int, settings: RunSettings, *, distributed: bool) -> int:
    """Steps in an epoch: the training pipeline's batches; a multi-worker run's from the whole
    dataset (training/inputs.py says why)."""
    if distributed:
        return max(1, train_items // settings.step_batch_size)
    return max(1, batches_per_epoch)


def worker_share(train_items: Any, cluster: Any) -> tuple[Any, str]:
    """(the training items a worker makes its batches from, words that say so after a count): its
    share of them in a multi-worker cluster (training/inputs.py says why), all of them otherwise."""
    if cluster is None:
        return train_items, ""
    return train_items[cluster.worker_index :: cluster.num_workers], f" (this worker's share of {len(train_items)})"


def require_full_batches(config: XttsConfig, machine: Any, run_data: Any) -> None:
    """What `xtts train` refuses before its first step, checked on `machine`: an epoch that gives no
    full batch of the batch this machine's pipeline makes (a mirrored step's whole batch; a worker's
    own share of the clips, its cluster read from TF_CONFIG). A device request the machine cannot
    meet is left to the finding that names it."""
    from xtts_cli.devices.placement import plan_from_machine
    from xtts_cli.errors import XttsError

    try:
        settings = resolve_settings(config, plan_from_machine(config.devices, machine))
    except XttsError:
        settings = None
    cluster = None
    if config.devices.strategy == "multi_worker":
        import os

        from xtts_cli.devices.placement import cluster_from_environment

        try:
            cluster = cluster_from_environment(os.environ)
        except XttsError:  # the config rules say what is wrong with it
            pass
    items, share = worker_share(run_data.train_items, cluster)
    batch, replicas = (settings.global_batch_size, settings.replicas) if settings else (config.data.batch_size, 1)
    run_data.plan(items=items, batch_size=batch).require_batches(share=share, replicas=replicas)


def resolved_settings(config: XttsConfig, machine: Any, scan: Any) -> Optional[dict[str, Any]]:
    """The settings `xtts train` would run with on `machine` (the devices as NVML sees them), as
    `settings_report` writes them; steps per epoch from the training pipeline's plan of the run's
    data when `scan` is usable (not for a multi-worker config: its workers' count is the
    cluster's). None when the device request does not fit this machine (a finding says so)."""
    from xtts_cli.devices.placement import plan_from_machine
    from xtts_cli.errors import XttsError

    try:
        plan = plan_from_machine(config.devices, machine)
        settings = resolve_settings(config, plan)
    except XttsError:
        return None
    multi = config.devices.strategy == "multi_worker"
    workers = _cluster_workers() if multi else None  # each worker's step is the cluster's: known from TF_CONFIG
    if workers:
        settings = replace(settings, step_batch_size=settings.global_batch_size * workers)
    steps_per_epoch = None
    if scan is not None and scan.train and (not multi or workers):
        from xtts_cli.data.run_data import prepare

        run_data = prepare(config, settings.pipeline_output, scan=scan)
        try:
            planned = run_data.plan(batch_size=settings.global_batch_size)
        except XttsError:  # too few clips for a batch: the scan's findings say so
            planned = None
        if planned is not None:
            items = len(run_data.train_items)
            steps_per_epoch = (
                # A cluster's epoch is counted from the whole dataset (training/inputs.py says why).
                epoch_steps(planned.batches_per_epoch, items, settings, distributed=multi)
                if planned.batches_per_epoch
                else 0  # not one full batch: said as such, not the one step a run would never take
            )
    report = settings_report(config, settings, plan, steps_per_epoch)
    if multi:  # this machine's devices are planned alone, as one worker's: said so, not as the run's
        cluster = f"{workers} workers" if workers else "the cluster's workers"
        report["devices"] = f"multi-worker, {cluster} each on {report['devices']}"
    if multi and not workers:
        report["step_batch_size"] = None
    return report


def _cluster_workers() -> Optional[int]:
    """The workers of the cluster TF_CONFIG names here (None: not set, or not readable)."""
    import os

    from xtts_cli.devices.placement import cluster_from_environment
    from xtts_cli.errors import XttsError

    try:
        return cluster_from_environment(os.environ).num_workers
    except XttsError:  # the config rules say what is wrong with it
        return None
