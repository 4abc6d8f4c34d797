"""`xtts diagnose`: every check that explains an idle GPU, ranked by what fixing it would gain."""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated, Any

import typer
from rich.markup import escape

from xtts_cli.cli.options import (
    BatchSizeOption,
    ConfigOption,
    DataGpuOption,
    DataOption,
    DataPathAlias,
    DiagnoseBatchesOption,
    JsonOption,
    ModelGpuOption,
    NumBatchesAlias,
    SetOption,
    TrainDataAlias,
    VerboseOption,
    given_once,
)
from xtts_cli.cli.output import Phases, config_to_fix, console, counted, print_dataset, print_finding, print_json

QuickOption = Annotated[
    bool,
    typer.Option("--quick", help="Skip the timed parts (pipeline, model and storage timings): seconds, not minutes."),
]


def diagnose(
    config: ConfigOption = None,
    set_values: SetOption = None,
    data: DataOption = None,
    batch_size: BatchSizeOption = None,
    data_gpu: DataGpuOption = None,
    model_gpu: ModelGpuOption = None,
    batches: DiagnoseBatchesOption = None,
    train_data: TrainDataAlias = None,
    data_path: DataPathAlias = None,
    num_batches: NumBatchesAlias = None,
    verbose: VerboseOption = False,
    quick: QuickOption = False,
    json_output: JsonOption = False,
) -> None:
    """Check the environment, config, dataset, storage, pipeline and model; rank what keeps the GPU idle.

    Times the input pipeline alone and the model alone (resident batches) and reports
    "the pipeline delivers X samples/s, the model consumes Y -> input-bound Z %".
    Exit 0 when no finding is an error, 1 otherwise.

    Examples:

        xtts diagnose -c my.yaml

        xtts diagnose -c rtx4090 --data /data/my-voice --batches 50

        xtts diagnose --quick --json
    """
    data_path = given_once("the dataset", data=data, train_data=train_data, data_path=data_path)
    num_batches = given_once("the number of batches", batches=batches, num_batches=num_batches)
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.diagnosis.checkup import checkup

    loaded = resolve_config(
        config,
        {
            "data.dataset_path": data_path,
            "data.batch_size": batch_size,
            "profiling.num_batches": num_batches,
            "devices.data_gpu": data_gpu,
            "devices.model_gpu": model_gpu,
        },
        set_values or (),
        measures=True,
    )
    with Phases() as phase:  # on stderr, --json or not: the report alone goes to stdout
        report = checkup(loaded, num_batches=loaded.config.profiling.num_batches, quick=quick, progress=phase)
    if quick and num_batches is not None:  # given and not used: said, not silently dropped
        report.notes.append(f"--batches {num_batches} times the pipeline, which --quick does not time")
    code = 1 if report.errors else 0
    if json_output:
        payload: dict[str, Any] = report.model_dump(mode="json")
        payload["findings"] = [
            {
                "id": f.id,
                "severity": f.severity,
                "message": f.message,
                "fix": f.fix.model_dump(mode="json") if f.fix else None,
                "fix_text": f.fix.describe() if f.fix else None,
                "source": f.source,
                "expected_gain_percent": f.expected_gain_percent,
            }
            for f in report.findings
        ]
        print_json(payload)
        raise typer.Exit(code=code)
    chosen = loaded.config.data
    _render(
        report,
        unnamed=chosen.dataset_path is None and not chosen.datasets,
        fix_note=config_to_fix(loaded.path),
        given=loaded.overridden,
    )
    raise typer.Exit(code=code)


def _verdict(report) -> str:
    """The one line that answers "why is my GPU idle": the input-bound share, then the findings."""
    errors = report.errors
    findings = f"{len(report.findings)} finding{'' if len(report.findings) == 1 else 's'}" + (
        f", {errors} error{'' if errors == 1 else 's'}" if errors else ""
    )
    if report.input_bound_percent is None:
        return f"[bold]verdict[/]: {findings} (timings skipped)" if report.findings else "[bold]verdict[/]: no findings"
    contention = (
        f", host contention {report.host_contention_percent:.0f} %"
        if report.host_contention_percent is not None
        else ""
    )
    return (
        f"[bold]verdict[/]: input-bound [bold]{report.input_bound_percent:.0f} %[/] "
        f"({report.verdict.replace('_', ' ')}){contention}: the pipeline delivers {report.pipeline_samples_per_sec:,.0f} "
        f"samples/s, the model consumes {report.model_samples_per_sec:,.0f}; {findings}"
    )


def _environment_line(env: dict) -> str:
    """The report's environment: Python, TensorFlow and its build, the audio decoder, the GPUs."""
    tf = env.get("tensorflow", {})
    gpus = env.get("tf_gpus") or []
    cuda = (
        f"CUDA {tf.get('cuda_version') or '?'} / cuDNN {tf.get('cudnn_version') or '?'} build"
        if tf.get("is_cuda_build")
        else "CPU-only build (CUDA unavailable)"
    )
    kernels = "; ".join(
        f"GPU {gpu['index']} compute capability "
        f"{'.'.join(str(part) for part in gpu['compute_capability'] or ()) or '?'}: "
        f"{gpu['support']}{' (' + gpu['architecture'] + ')' if gpu.get('architecture') else ''}"
        for gpu in env.get("gpu_kernels") or []
    )
    return (
        f"[bold]environment[/]: Python {env.get('python_version')}, TensorFlow {tf.get('version')} ({cuda}), "
        f"compressed audio decoded by {env.get('audio_decoder') or '?'}, "
        f"{len(gpus) or 'no'} GPU{'s' if len(gpus) > 1 else ''} visible to TensorFlow"
        f"{': kernels ' + kernels if kernels else ''}; {env.get('device_plan')}"
    )


def _render(report, *, unnamed: bool = False, fix_note: str = "", given: Collection[str] = ()) -> None:
    """The report as text; `given`: the keys the command line sets, whose fix is made there (--batch-size
    64 had been told to set data.batch_size in a copy of the preset, which the flag overrides again)."""
    from xtts_cli.profiling.padding import shown_efficiency

    out = console()
    out.print(_verdict(report))
    out.print(_environment_line(report.environment))
    if report.dataset is not None:
        print_dataset(out, report.dataset, unnamed=unnamed)
    if report.padding_efficiency is not None or report.shape_bound == 0:
        bound = report.shape_bound if report.shape_bound is not None else "unbounded"
        ops = ", ".join(report.python_ops_in_pipeline) or "none"
        padding = shown_efficiency(report.padding_efficiency) if report.shape_bound != 0 else "none (no full batch)"
        out.print(f"[bold]pipeline graph[/]: padding efficiency {padding}, batch shapes {bound}, Python ops {ops}")
    if report.input_bound_percent is not None:
        out.print(
            f"[bold]rates[/]: the pipeline delivers {report.pipeline_samples_per_sec:,.0f} samples/s, the model "
            f"consumes {report.model_samples_per_sec:,.0f} → input-bound {report.input_bound_percent:.0f} %; "
            f"step traces {report.traces}, {report.retraces} after warm-up"
        )
    if report.pipeline_cpu_cores_busy is not None:
        out.print(
            f"[bold]cpu[/]: {report.pipeline_cpu_cores_busy:.1f} of {report.cpu_count} cores busy while the pipeline "
            "was timed"
            + (
                f"; other processes {report.other_processes_cores_busy:.1f}"
                if report.other_processes_cores_busy is not None
                else ""
            )
        )
    if report.storage and report.storage.get("first_pass"):
        first = report.storage["first_pass"]
        out.print(
            f"[bold]storage[/]: {first['mb_per_s']:.1f} MB/s over {first['files']} files, "
            f"p95 {first['latency_ms']['p95']:.2f} ms per file"
        )
    for finding in report.findings:
        more = report.data_service_commands if finding.id == "data-service" else ()
        where = fix_note
        if finding.fix is not None and finding.fix.key in given:
            where = f"  (the command line gives {finding.fix.key}: change it there)"
        print_finding(out, finding, fix_note=where, more=more)
    found = report.findings
    out.print(f"{counted(len(found), 'finding')}, {counted(report.errors, 'error')}" if found else "no findings")
    for note in report.notes:
        out.print(f"[dim]note: {escape(note)}[/]")
