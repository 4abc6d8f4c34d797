"""`xtts train`: train the model on the config's dataset, resuming from the run directory."""

from __future__ import annotations

import sys
import time
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from xtts_cli.cli.options import (
    ConfigOption,
    DataGpuOption,
    DataOption,
    DataPathAlias,
    JsonOption,
    MaxStepsAlias,
    ModelGpuOption,
    SetOption,
    TrainDataAlias,
    ValData,
    VerboseOption,
    batch_as_given,
    config_flag,
    flag_overrides,
    given_once,
)

OPTIMIZATION_HELP = (
    "A named bundle of settings applied over the config file and under your own flags: basic (graph mode), enhanced "
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


BatchSize = Annotated[
    Optional[int],
    config_flag(
        "--batch-size", key="data.batch_size", help="Clips a step trains on", min=1, metavar="N", rich_help_panel=DATA
    ),
]
NumWorkers = Annotated[
    Optional[str],
    config_flag(
        "--num-workers",
        key="data.num_workers",
        help="Decoding threads: a number or auto",
        metavar="N",
        rich_help_panel=DATA,
    ),
]
Prefetch = Annotated[
    Optional[str],
    config_flag(
        "--prefetch-buffer-size",
        key="data.prefetch_buffer_size",
        help="Batches prefetched: a number or auto",
        metavar="N",
        rich_help_panel=DATA,
    ),
]
StaticShapes = Annotated[
    Optional[bool],
    config_flag(
        "--enable-static-shapes",
        key="data.pad_to_fixed_length",
        help="Pad every batch to max_text_length x max_mel_frames",
        rich_help_panel=DATA,
    ),
]
MaxMinutes = Annotated[
    Optional[float],
    config_flag(
        "--max-minutes",
        key="training.max_minutes",
        help="End after the step that passes this many minutes of the run's training",
        metavar="MIN",
        rich_help_panel=LENGTH,
    ),
]
Epochs = Annotated[
    Optional[int],
    config_flag("--epochs", key="training.epochs", help="Epochs to train", min=1, metavar="N", rich_help_panel=LENGTH),
]
Size = Annotated[
    Optional[ModelSize],
    config_flag(
        "--model-size", key="model.model_size", help="tiny, small, normal or big", metavar="SIZE", rich_help_panel=MODEL
    ),
]
Isolation = Annotated[
    Optional[bool],
    config_flag(
        "--enable-memory-isolation",
        key="devices.enable_memory_isolation",
        help="Fixed memory limits on the data and model GPUs",
        rich_help_panel=DEVICES,
    ),
]
DataGpuMemory = Annotated[
    Optional[int],
    config_flag(
        "--data-gpu-memory",
        key="devices.data_gpu_memory",
        help="MiB limit on the data GPU",
        min=1,
        metavar="MIB",
        rich_help_panel=DEVICES,
    ),
]
ModelGpuMemory = Annotated[
    Optional[int],
    config_flag(
        "--model-gpu-memory",
        key="devices.model_gpu_memory",
        help="MiB limit on the model GPU",
        min=1,
        metavar="MIB",
        rich_help_panel=DEVICES,
    ),
]
Steps = Annotated[
    Optional[int],
    typer.Option(
        "--steps",
        "-n",
        min=1,
        metavar="N",
        help="Stop after this many steps (training.max_steps; the learning-rate schedule spans them, so a later run with more steps resumes at a higher rate).",
        show_default=False,
        rich_help_panel=LENGTH,
    ),
]
Level = Annotated[
    Optional[OptimizationLevel],
    typer.Option(
        "--optimization-level", metavar="LEVEL", help=OPTIMIZATION_HELP, show_default=False, rich_help_panel=MODEL
    ),
]
WorkerHosts = Annotated[
    Optional[str],
    typer.Option(
        "--worker-hosts",
        metavar="HOSTS",
        help="Train on several machines (devices.strategy: multi_worker): HOST:PORT of every worker, the same "
        "list on each; worker 0 is the chief. Writes TF_CONFIG for this process (docs/scaling.md).",
        show_default=False,
        rich_help_panel=DEVICES,
    ),
]
TaskIndex = Annotated[
    Optional[int],
    typer.Option(
        "--task-index",
        min=0,
        metavar="I",
        help="This machine's position in --worker-hosts (0 on the chief).",
        show_default=False,
        rich_help_panel=DEVICES,
    ),
]
RunDir = Annotated[
    Optional[Path],
    typer.Option(
        "--run-dir",
        "-r",
        metavar="DIR",
        help="Run directory. Default: training.run_dir, else runs/ and the config's name.",
        show_default=False,
        rich_help_panel=RUN,
    ),
]
Fresh = Annotated[
    bool,
    typer.Option(
        "--fresh",
        help="Start a new run even if the run directory holds one (the old one is moved aside).",
        rich_help_panel=RUN,
    ),
]
Force = Annotated[
    bool, typer.Option("--force", help="Resume even though the model config changed.", rich_help_panel=RUN)
]
InitFrom = Annotated[
    Optional[str],
    config_flag(
        "--init-from",
        key="training.init_from",
        help="Start from another run's weights (its directory or a checkpoint), growing its vocabulary, "
        "languages and speakers to this data's",
        metavar="RUN",
        rich_help_panel=RUN,
    ),
]


def train(
    config: ConfigOption = None,
    set_values: SetOption = None,
    data: DataOption = None,
    val_data: ValData = None,
    batch_size: BatchSize = None,
    num_workers: NumWorkers = None,
    prefetch_buffer_size: Prefetch = None,
    enable_static_shapes: StaticShapes = None,
    steps: Steps = None,
    max_minutes: MaxMinutes = None,
    epochs: Epochs = None,
    model_size: Size = None,
    optimization_level: Level = None,
    data_gpu: DataGpuOption = None,
    model_gpu: ModelGpuOption = None,
    enable_memory_isolation: Isolation = None,
    data_gpu_memory: DataGpuMemory = None,
    model_gpu_memory: ModelGpuMemory = None,
    worker_hosts: WorkerHosts = None,
    task_index: TaskIndex = None,
    run_dir: RunDir = None,
    fresh: Fresh = False,
    force: Force = False,
    init_from: InitFrom = None,
    json_output: JsonOption = False,
    verbose: VerboseOption = False,
    train_data: TrainDataAlias = None,
    data_path: DataPathAlias = None,
    max_steps: MaxStepsAlias = None,
) -> None:
    """Train the model: graph mode, XLA, static shapes, an all-TensorFlow input pipeline.

    Resumes automatically from the run directory. SIGINT/SIGTERM/SIGHUP finish the current step, save a
    checkpoint and exit 130/143/129; the same command resumes. A NaN/Inf loss exits 3. On several
    machines, run it on each with --worker-hosts and its own --task-index (or TF_CONFIG set).

    Examples:

        xtts train -c tiny-cpu

        xtts train -c speak-cpu --data /data/my-voice

        xtts train -c adapt-cpu --init-from runs/voices-cpu --data /data/my-voice
    """
    started = time.monotonic()  # training.max_minutes counts the command's start-up (TensorFlow's import, the scan)
    from xtts_cli.cli.progress import TrainingProgress
    from xtts_cli.config.loading import parse_sets, resolve_config
    from xtts_cli.config.optimization_levels import replaced_by_level
    from xtts_cli.diagnosis.validation import training_advice
    from xtts_cli.run.directory import resumed_config
    from xtts_cli.training.events import Noted
    from xtts_cli.training.launch import launch_settings, train_run

    overrides = flag_overrides(train, locals())
    overrides["data.dataset_path"] = given_once("the dataset", data=data, train_data=train_data, data_path=data_path)
    overrides["training.max_steps"] = given_once("the number of steps", steps=steps, max_steps=max_steps)
    own = {key for key, value in overrides.items() if value is not None} | set(parse_sets(set_values or ()))
    overrides = launch_settings(overrides, optimization_level, worker_hosts, task_index, set_values or ())
    loaded = resolve_config(resumed_config(run_dir, config), overrides, set_values or ())
    with TrainingProgress(enabled=not json_output) as progress:

        def advise() -> None:  # what `validate` warns of, said where the GPU idles
            replaced = replaced_by_level(optimization_level, loaded, own)
            if replaced is not None:
                progress.update(Noted(replaced))
            said, repair = training_advice(loaded, run_dir)
            for label, line in said:
                progress.update(Noted(line, label=label))
            if repair:
                progress.update(Noted(repair, label="hint"))

        with batch_as_given(overrides):
            result = train_run(
                loaded, run_dir, fresh=fresh, force=force, progress=progress.update, started=started, checked=advise
            )
    _told(result, progress, json_output)
    if result.exit_code:
        raise typer.Exit(code=result.exit_code)


def _told(result, progress, json_output: bool) -> None:
    """The run's result, and why a signal ended it; a terminal or pipe gone by now (the SIGHUP of a
    closed terminal, `| tee` ended by the same Ctrl-C) leaves the exit code to say it."""
    from dataclasses import asdict

    from xtts_cli.cli.output import print_json, quiet_streams, stream_gone

    try:
        if json_output:
            print_json(asdict(result))
        else:
            progress.summary(result)
        if result.exit_code:
            sys.stderr.write(interrupted_line(result) + "\n")
            sys.stderr.flush()
    except OSError as exc:
        if not stream_gone(exc):
            raise
        quiet_streams()


def interrupted_line(result) -> str:
    """What a run a signal ended saved: the step it saved, or, stopped before its first step, the
    checkpoint it resumed from or none ("saved step 0" had been said of a run that saved nothing)."""
    if result.final_step > result.start_step:
        said = f"saved step {result.final_step} in {result.run_dir}; run the same command to resume"
    elif result.final_step:
        said = f"no step trained; {result.run_dir} keeps step {result.final_step}; run the same command to resume"
    else:
        said = f"no step trained, so nothing saved in {result.run_dir}; run the same command to start"
    return f"interrupted by {result.interrupted}: {said}"
