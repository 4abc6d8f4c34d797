"""`xtts train`: train the model on the config's dataset, resuming from the run directory."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from xtts_cli.cli.options import (
    ConfigOption,
    DataPathAlias,
    JsonOption,
    MaxStepsAlias,
    TrainDataAlias,
    VerboseOption,
    given_once,
)

OPTIMIZATION_HELP = (
    "A named bundle of settings applied under your own flags: basic (graph mode), enhanced "
    "(+ XLA, TF-native loading, bucketing, in-memory feature cache), maximum (+ precomputed "
    "features; mixed precision when a GPU of compute capability >= 7.0 is visible)."
)


class ModelSize(str, Enum):
    tiny = "tiny"
    small = "small"
    normal = "normal"
    big = "big"


class OptimizationLevel(str, Enum):
    basic = "basic"
    enhanced = "enhanced"
    maximum = "maximum"


DATA, LENGTH, MODEL, DEVICES, RUN = "Data", "How long", "Model", "Devices (GPUs, machines)", "Run directory"


def train(
    config: ConfigOption = None,
    data: Annotated[
        Optional[str],
        typer.Option(
            "--data",
            "-d",
            metavar="DIR",
            help="Dataset root: a corpus folder in any layout `docs/data.md` lists (data.dataset_path).",
            show_default=False,
            rich_help_panel=DATA,
        ),
    ] = None,
    val_data: Annotated[
        Optional[str],
        typer.Option(
            "--val-data",
            metavar="DIR",
            help="Validation dataset root (data.eval_dataset_path).",
            show_default=False,
            rich_help_panel=DATA,
        ),
    ] = None,
    batch_size: Annotated[
        Optional[int],
        typer.Option(
            "--batch-size", min=1, metavar="N", help="data.batch_size.", show_default=False, rich_help_panel=DATA
        ),
    ] = None,
    num_workers: Annotated[
        Optional[str],
        typer.Option(
            "--num-workers",
            metavar="N",
            help="data.num_workers: a number or auto.",
            show_default=False,
            rich_help_panel=DATA,
        ),
    ] = None,
    prefetch_buffer_size: Annotated[
        Optional[str],
        typer.Option(
            "--prefetch-buffer-size",
            metavar="N",
            help="data.prefetch_buffer_size: batches prefetched, a number or auto.",
            show_default=False,
            rich_help_panel=DATA,
        ),
    ] = None,
    enable_static_shapes: Annotated[
        Optional[bool],
        typer.Option(
            "--enable-static-shapes",
            help="Pad every batch to max_text_length x max_mel_frames (data.pad_to_fixed_length).",
            show_default=False,
            rich_help_panel=DATA,
        ),
    ] = None,
    steps: Annotated[
        Optional[int],
        typer.Option(
            "--steps",
            "-n",
            min=1,
            metavar="N",
            help="Stop after this many steps (training.max_steps).",
            show_default=False,
            rich_help_panel=LENGTH,
        ),
    ] = None,
    max_minutes: Annotated[
        Optional[float],
        typer.Option(
            "--max-minutes",
            metavar="MIN",
            help="End after the step that passes this many minutes (training.max_minutes).",
            show_default=False,
            rich_help_panel=LENGTH,
        ),
    ] = None,
    epochs: Annotated[
        Optional[int],
        typer.Option(
            "--epochs", min=1, metavar="N", help="training.epochs.", show_default=False, rich_help_panel=LENGTH
        ),
    ] = None,
    model_size: Annotated[
        Optional[ModelSize],
        typer.Option(
            "--model-size",
            metavar="SIZE",
            help="tiny, small, normal or big (model.model_size).",
            show_default=False,
            rich_help_panel=MODEL,
        ),
    ] = None,
    optimization_level: Annotated[
        Optional[OptimizationLevel],
        typer.Option(
            "--optimization-level", metavar="LEVEL", help=OPTIMIZATION_HELP, show_default=False, rich_help_panel=MODEL
        ),
    ] = None,
    data_gpu: Annotated[
        Optional[int],
        typer.Option(
            "--data-gpu",
            min=0,
            metavar="GPU",
            help="GPU index (as nvidia-smi shows) for feature work.",
            show_default=False,
            rich_help_panel=DEVICES,
        ),
    ] = None,
    model_gpu: Annotated[
        Optional[int],
        typer.Option(
            "--model-gpu",
            min=0,
            metavar="GPU",
            help="GPU index (as nvidia-smi shows) for the model.",
            show_default=False,
            rich_help_panel=DEVICES,
        ),
    ] = None,
    enable_memory_isolation: Annotated[
        Optional[bool],
        typer.Option(
            "--enable-memory-isolation",
            help="Fixed memory limits on the data and model GPUs.",
            show_default=False,
            rich_help_panel=DEVICES,
        ),
    ] = None,
    data_gpu_memory: Annotated[
        Optional[int],
        typer.Option(
            "--data-gpu-memory",
            min=1,
            metavar="MIB",
            help="MiB limit on the data GPU.",
            show_default=False,
            rich_help_panel=DEVICES,
        ),
    ] = None,
    model_gpu_memory: Annotated[
        Optional[int],
        typer.Option(
            "--model-gpu-memory",
            min=1,
            metavar="MIB",
            help="MiB limit on the model GPU.",
            show_default=False,
            rich_help_panel=DEVICES,
        ),
    ] = None,
    worker_hosts: Annotated[
        Optional[str],
        typer.Option(
            "--worker-hosts",
            metavar="HOSTS",
            help="Train on several machines (devices.strategy: multi_worker): HOST:PORT of every worker, the same "
            "list on each; worker 0 is the chief. Writes TF_CONFIG for this process (docs/scaling.md).",
            show_default=False,
            rich_help_panel=DEVICES,
        ),
    ] = None,
    task_index: Annotated[
        Optional[int],
        typer.Option(
            "--task-index",
            min=0,
            metavar="I",
            help="This machine's position in --worker-hosts (0 on the chief).",
            show_default=False,
            rich_help_panel=DEVICES,
        ),
    ] = None,
    run_dir: Annotated[
        Optional[Path],
        typer.Option(
            "--run-dir",
            "-r",
            metavar="DIR",
            help="Run directory. Default: training.run_dir, else runs/ and the config's name.",
            show_default=False,
            rich_help_panel=RUN,
        ),
    ] = None,
    fresh: Annotated[
        bool,
        typer.Option(
            "--fresh",
            help="Start a new run even if the run directory holds one (the old one is moved aside).",
            rich_help_panel=RUN,
        ),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Resume even though the model config changed.", rich_help_panel=RUN)
    ] = False,
    json_output: JsonOption = False,
    verbose: VerboseOption = False,
    train_data: TrainDataAlias = None,
    data_path: DataPathAlias = None,
    max_steps: MaxStepsAlias = None,
) -> None:
    """Train the model: graph mode, XLA, static shapes, an all-TensorFlow input pipeline.

    Resumes automatically from the run directory. SIGINT/SIGTERM finish the current step, save a
    checkpoint and exit 130/143; the same command resumes. A NaN/Inf loss exits 3. On several
    machines, run it on each with --worker-hosts and its own --task-index (or TF_CONFIG set).

    Examples:

        xtts train -c tiny-cpu

        xtts train -c speak-cpu --data /data/my-voice

        xtts train -c dual-gpu --data /data/my-voice --data-gpu 0 --model-gpu 1
    """
    from xtts_cli.cli.progress import TrainingProgress
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.config.optimization_levels import apply_optimization_level
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.training.controller import Controller
    from xtts_cli.training.run_dir import default_run_dir
    from xtts_cli.training.trainer import Trainer

    train_data = given_once("the dataset", data=data, train_data=train_data, data_path=data_path)
    max_steps = given_once("the number of steps", steps=steps, max_steps=max_steps)
    overrides: dict[str, Any] = {
        "data.dataset_path": train_data,
        "data.eval_dataset_path": val_data,
        "data.batch_size": batch_size,
        "data.num_workers": num_workers,
        "data.prefetch_buffer_size": prefetch_buffer_size,
        "data.pad_to_fixed_length": enable_static_shapes,
        "training.max_steps": max_steps,
        "training.max_minutes": max_minutes,
        "training.epochs": epochs,
        "model.model_size": model_size.value if model_size else None,
        "devices.data_gpu": data_gpu,
        "devices.model_gpu": model_gpu,
        "devices.enable_memory_isolation": enable_memory_isolation,
        "devices.data_gpu_memory": data_gpu_memory,
        "devices.model_gpu_memory": model_gpu_memory,
    }
    if worker_hosts is not None or task_index is not None:
        from xtts_cli.devices.placement import cluster_from_flags

        # Checked before anything loads; TensorFlow's cluster resolver then reads TF_CONFIG. One
        # already set must agree with the flags, and is kept as it is (the other workers may use it).
        cluster = cluster_from_flags(worker_hosts, task_index, os.environ.get("TF_CONFIG"))
        if not os.environ.get("TF_CONFIG", "").strip():
            os.environ["TF_CONFIG"] = cluster.to_tf_config()
        overrides["devices.strategy"] = "multi_worker"
    if optimization_level is not None:
        mixed_precision_gpu = any(gpu.supports_mixed_float16 for gpu in probe_machine().gpus)
        overrides = apply_optimization_level(optimization_level.value, overrides, mixed_precision_gpu)
    loaded = resolve_config(config, overrides)
    if loaded.config.devices.strategy == "multi_worker" and worker_hosts is None:
        from xtts_cli.devices.placement import cluster_from_environment

        cluster_from_environment(os.environ)  # a missing or malformed TF_CONFIG fails before TensorFlow loads
    chosen_run_dir = run_dir or (
        Path(loaded.config.training.run_dir) if loaded.config.training.run_dir else default_run_dir(loaded.path)
    )
    if loaded.config.devices.strategy != "multi_worker" and chosen_run_dir.is_dir():
        from xtts_cli import locks as run_lock

        # Before TensorFlow loads (seconds): a run another process is writing is refused at once.
        # The trainer takes the lock again for the run (and workers of a cluster share it).
        run_lock.acquire(chosen_run_dir)
        run_lock.release(chosen_run_dir)
    with TrainingProgress(enabled=not json_output) as progress:
        trainer = Trainer(loaded.config, run_dir=chosen_run_dir, fresh=fresh, force=force, progress=progress.update)
        result = Controller(trainer).run()
    if json_output:
        from dataclasses import asdict

        from xtts_cli.cli.output import print_json

        print_json(asdict(result))
    else:
        progress.summary(result)
    if result.exit_code:
        sys.stderr.write(
            f"interrupted by {result.interrupted}: saved step {result.final_step} in {result.run_dir}; "
            f"run the same command to resume\n"
        )
        raise typer.Exit(code=result.exit_code)
