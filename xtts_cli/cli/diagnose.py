"""`xtts diagnose`: every check that explains an idle GPU, ranked by what fixing it would gain."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from xtts_cli.cli.options import (
    BatchesOption,
    BatchSizeOption,
    ConfigOption,
    DataOption,
    DataPathAlias,
    JsonOption,
    NumBatchesAlias,
    TrainDataAlias,
    VerboseOption,
    given_once,
)
from xtts_cli.cli.output import console, print_dataset, print_finding, print_json

QuickOption = Annotated[
    bool,
    typer.Option("--quick", help="Skip the timed parts (pipeline, model and storage timings): seconds, not minutes."),
]


def diagnose(
    config: ConfigOption = None,
    data: DataOption = None,
    batch_size: BatchSizeOption = None,
    batches: BatchesOption = None,
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
        {"data.dataset_path": data_path, "data.batch_size": batch_size, "profiling.num_batches": num_batches},
    )
    err = console(stderr=True)
    report = checkup(
        loaded,
        num_batches=loaded.config.profiling.num_batches,
        quick=quick,
        progress=lambda message: err.print(f"[dim]{message}[/]"),
    )
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
    _render(report)
    raise typer.Exit(code=code)


def _render(report) -> None:
    out = console()
    env = report.environment
    tf = env.get("tensorflow", {})
    gpus = env.get("tf_gpus") or []
    out.print(
        f"[bold]environment[/]: Python {env.get('python_version')}, TensorFlow {tf.get('version')}, "
        f"tensorflow-io {env.get('tensorflow_io_version') or 'missing'}, "
        f"{len(gpus)} GPU(s) visible to TensorFlow; {env.get('device_plan')}"
    )
    if report.dataset is not None:
        print_dataset(out, report.dataset)
    if report.padding_efficiency is not None:
        bound = report.shape_bound if report.shape_bound is not None else "unbounded"
        ops = ", ".join(report.python_ops_in_pipeline) or "none"
        out.print(
            f"[bold]pipeline graph[/]: padding efficiency {report.padding_efficiency:.1%}, batch shapes {bound}, "
            f"Python ops {ops}"
        )
    if report.input_bound_percent is not None:
        out.print(
            f"[bold]rates[/]: the pipeline delivers {report.pipeline_samples_per_sec:,.1f} samples/s, the model "
            f"consumes {report.model_samples_per_sec:,.1f} → input-bound [bold]{report.input_bound_percent:.0f} %[/] "
            f"({report.verdict.replace('_', ' ')}); step traces {report.traces}, {report.retraces} after warm-up"
        )
    if report.pipeline_cpu_cores_busy is not None:
        out.print(
            f"[bold]cpu[/]: {report.pipeline_cpu_cores_busy:.1f} of {report.cpu_count} cores busy while the pipeline "
            "was timed"
        )
    if report.storage and report.storage.get("first_pass"):
        first = report.storage["first_pass"]
        out.print(
            f"[bold]storage[/]: {first['mb_per_s']:.1f} MB/s over {first['files']} files, "
            f"p95 {first['latency_ms']['p95']:.2f} ms per file"
        )
    for finding in report.findings:
        print_finding(out, finding, more=report.data_service_commands if finding.id == "data-service" else ())
    errors = report.errors
    out.print(f"{len(report.findings)} finding(s), {errors} error(s)" if report.findings else "no findings")
    for note in report.notes:
        out.print(f"[dim]note: {note}[/]")
