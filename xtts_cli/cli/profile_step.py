"""`xtts profile-step`: time real training steps, data wait vs compute, and say what to change."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape

from xtts_cli.cli.options import (
    BatchSizeOption,
    ConfigOption,
    DataGpuOption,
    DataOption,
    DataPathAlias,
    JsonOption,
    ModelGpuOption,
    NumStepsAlias,
    SetOption,
    TrainDataAlias,
    VerboseOption,
    at_most_count,
    given_once,
)
from xtts_cli.cli.output import Phases, console, datasets_label, print_finding, print_json

StepsOption = Annotated[
    Optional[int],
    typer.Option(
        "--steps",
        "-n",
        min=2,
        callback=at_most_count,
        metavar="N",
        help="Steps to time. Default: profiling.num_steps (100).",
        show_default=False,
    ),
]
WarmupOption = Annotated[
    Optional[int],
    typer.Option(
        "--warmup",
        min=0,
        callback=at_most_count,
        metavar="N",
        help="Untimed steps first, at least one per length bucket (an epoch starts every bucket in its "
        "first batches). Default: profiling.warmup_batches, after one epoch drawn through the pipeline alone in cache mode "
        "(it fills the cache).",
        show_default=False,
    ),
]
SyntheticOption = Annotated[
    bool,
    typer.Option(
        "--synthetic",
        help="Feed one real batch per bucket, already on the model device, over and over: "
        "what the model alone consumes, with no input pipeline.",
    ),
]
TraceOption = Annotated[
    Optional[Path],
    typer.Option(
        "--trace",
        metavar="DIR",
        help="Also record a TensorFlow profiler trace of a few extra steps into DIR (tensorboard --logdir DIR).",
        show_default=False,
    ),
]
TensorboardOption = Annotated[
    Optional[Path],
    typer.Option(
        "--tensorboard",
        metavar="DIR",
        help="Write the per-step series as TensorBoard scalars into DIR.",
        show_default=False,
    ),
]


def profile_step(
    config: ConfigOption = None,
    set_values: SetOption = None,
    data: DataOption = None,
    steps: StepsOption = None,
    warmup: WarmupOption = None,
    synthetic: SyntheticOption = False,
    trace: TraceOption = None,
    tensorboard: TensorboardOption = None,
    batch_size: BatchSizeOption = None,
    data_gpu: DataGpuOption = None,
    model_gpu: ModelGpuOption = None,
    json_output: JsonOption = False,
    train_data: TrainDataAlias = None,
    data_path: DataPathAlias = None,
    num_steps: NumStepsAlias = None,
    verbose: VerboseOption = False,
) -> None:
    """Time training steps of the real model on the real pipeline: data wait vs compute per step.

    Prints the input-bound share with the TF Profiler's verdict (< 5 % not input-bound, 5-20 %
    moderately, >= 20 % highly), retraces after warm-up, samples/s, GPU utilisation when NVML is
    available, and the config changes that address what was measured.

    Examples:

        xtts profile-step -c my.yaml --steps 100

        xtts profile-step -c my.yaml --synthetic

        xtts profile-step -c rtx4090 --data /data/my-voice --trace /tmp/trace
    """
    from xtts_cli.config.loading import resolve_config

    data_path = given_once("the dataset", data=data, train_data=train_data, data_path=data_path)
    num_steps = given_once("the number of steps", steps=steps, num_steps=num_steps)
    loaded = resolve_config(
        config,
        {
            "data.dataset_path": data_path,
            "data.batch_size": batch_size,
            "profiling.num_steps": num_steps,
            "devices.data_gpu": data_gpu,
            "devices.model_gpu": model_gpu,
        },
        set_values or (),
        measures=True,
    )
    cfg = loaded.config
    from xtts_cli.config.editing import can_write

    for folder, flag in ((trace, "--trace"), (tensorboard, "--tensorboard")):
        if folder is not None:  # said now, not after the profile
            can_write(folder, flag, folder=True)
    from xtts_cli.profiling.step_profiler import profile_step as run_profile  # TensorFlow loads here

    with Phases() as phase:  # on stderr, --json or not: the report alone goes to stdout
        profile = run_profile(
            cfg,
            num_steps=cfg.profiling.num_steps,
            warmup=warmup,
            synthetic=synthetic,
            trace_dir=trace,
            tensorboard_dir=tensorboard,
            progress=phase,
        )
    if json_output:
        payload: dict[str, Any] = profile.model_dump(mode="json")
        print_json(payload)
    else:
        _render(profile)
    if profile.interrupted:  # as `train` ends after a Ctrl-C it has saved for: 130
        raise typer.Exit(code=130)


def gpu_lines(gpus) -> list[str]:
    """The report's lines (rich markup) for the NVML summaries of the GPUs sampled."""
    from xtts_cli.devices.nvml_sampler import RESOLVABLE_REFRESHES

    lines = []
    for gpu in gpus:
        mean = f"{gpu.utilization_mean:.0f} %" if gpu.utilization_mean is not None else "n/a"
        sm = f", SM activity {gpu.sm_active_mean_percent:.0f} %" if gpu.sm_active_mean_percent is not None else ""
        lines.append(
            f"GPU {gpu.index} ({gpu.name}): mean utilisation {mean}{sm}, {gpu.samples} samples at {gpu.rate_hz:.1f} Hz"
        )
        if gpu.oscillation.detected and gpu.oscillation_period_s:
            lines.append(f"[yellow]  utilisation cycles every {gpu.oscillation_period_s:.2f} s[/]")
        if gpu.nvml_refresh_s:
            lines.append(
                f"[dim]  NVML refreshed the reading every {gpu.nvml_refresh_s:.2f} s: a cycle shorter than "
                f"{RESOLVABLE_REFRESHES * gpu.nvml_refresh_s:.2f} s may not show in it, or show at a multiple "
                "of its period (the step times above show it)[/]"
            )
    return lines


def _render(profile) -> None:
    from xtts_cli.errors import quoted
    from xtts_cli.profiling.padding import shown_efficiency
    from xtts_cli.profiling.sparkline import sparkline, timeline

    out = console()
    mode = (
        "synthetic (resident batches, no pipeline)" if profile.synthetic else f"{profile.preprocessing_mode} pipeline"
    )
    out.print(
        f"[bold]{escape(datasets_label(profile.dataset_paths))}[/]: batch {profile.batch_size}, {mode}, "
        f"{'graph' if profile.graph_mode else 'eager'} mode{', XLA' if profile.xla else ''}, {profile.device_plan}; "
        f"{profile.num_steps} steps timed after {profile.warmup_steps} warm-up"
    )
    out.print(f"data wait ms  p50 {profile.data_wait_ms.p50:8.2f}   p95 {profile.data_wait_ms.p95:8.2f}")
    out.print(f"compute ms    p50 {profile.compute_ms.p50:8.2f}   p95 {profile.compute_ms.p95:8.2f}")
    width = min(len(profile.compute_series_ms), 100) or 1
    if profile.data_wait_series_ms:
        waits, computes = profile.data_wait_series_ms, profile.compute_series_ms
        out.print(f"data wait  {sparkline(waits, width=width)}  {min(waits):.1f}-{max(waits):.1f} ms")
        out.print(f"compute    {sparkline(computes, width=width)}  {min(computes):.1f}-{max(computes):.1f} ms")
    style = {"not_input_bound": "green", "moderately_input_bound": "yellow", "highly_input_bound": "bold red"}[
        profile.verdict
    ]
    out.print(f"input-bound: [{style}]{profile.input_bound_percent:.1f} % ({profile.verdict.replace('_', ' ')})[/]")
    _contention_line(out, profile)
    out.print(f"throughput: {profile.samples_per_sec:,.1f} samples/s, {profile.steps_per_sec:,.2f} steps/s")
    bound = profile.shape_bound if profile.shape_bound is not None else "unbounded"
    out.print(
        f"traces: {profile.traces} in all, {profile.retraces} after warm-up (shape bound {bound}); "
        f"padding efficiency {shown_efficiency(profile.padding_efficiency)}"
    )
    if profile.gpu:
        for line in gpu_lines(profile.gpu):
            out.print(line)
        if profile.gpu_utilization_series:
            out.print(timeline("GPU", profile.gpu_utilization_series, width=60, lo=0, hi=100, unit="%"))
    else:
        out.print(f"[dim]GPU: {profile.gpu_unavailable_reason or 'no GPU sampled'}[/]")
    if profile.overhead_percent is not None:
        out.print(
            f"[dim]timer overhead: {profile.overhead_us_per_step:.1f} us/step ({profile.overhead_percent:.2f} % of a step)[/]"
        )
    for finding in profile.recommendations:
        print_finding(out, finding)
    if not profile.recommendations:
        out.print("no changes recommended by these timings (`xtts validate` checks the settings themselves)")
    for note in profile.notes:
        out.print(f"[dim]note: {escape(note)}[/]")
    if profile.tensorboard_dir:
        out.print(
            f"[dim]note: the per-step series are in {escape(str(profile.tensorboard_dir))} "
            f"(tensorboard --logdir {escape(quoted(profile.tensorboard_dir))})[/]"
        )


def _contention_line(out: Any, profile: Any) -> None:
    """The host contention figure, against the resident step's own spread (a note within it is noise)."""
    from xtts_cli.config.remedies import step_spread

    if profile.host_contention_percent is None or profile.resident_compute_ms is None:
        return
    percent, resident = profile.host_contention_percent, profile.resident_compute_ms
    shown = "bold red" if percent >= 20 else "yellow" if percent >= 5 else "green"
    out.print(
        f"host contention: [{shown}]{percent:.0f} %[/] (compute with the pipeline beside the step against "
        f"{resident.p50:.1f} ms p50 on resident batches, whose p95 is {step_spread(resident.p50, resident.p95):.0f} % "
        "above it: a note within that is noise)"
    )
