"""`xtts profile-pipeline`: how fast the input pipeline makes batches, where the time goes, and
whether the wait for the next batch comes in a cycle."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer
from rich.markup import escape

from xtts_cli.cli.options import (
    BatchesOption,
    BatchSizeOption,
    ConfigOption,
    DataOption,
    DataPathAlias,
    JsonOption,
    NumBatchesAlias,
    SetOption,
    TrainDataAlias,
    VerboseOption,
    at_most_count,
    batch_as_given,
    given_once,
)
from xtts_cli.cli.output import Phases, console, datasets_label, print_json

WarmupOption = Annotated[
    Optional[int],
    typer.Option(
        "--warmup",
        min=0,
        callback=at_most_count,
        metavar="N",
        help="Batches drawn before timing starts, at least one per length bucket (an epoch starts every bucket "
        "in its first batches). Default: profiling.warmup_batches.",
        show_default=False,
    ),
]
BenchmarkOption = Annotated[
    bool,
    typer.Option(
        "--benchmark",
        help="Also sweep parallelism x prefetch x batch size x cache/runtime "
        "(up to 54 short runs, about 2 minutes on 2 cores) and name the fastest as a config change.",
    ),
]
CompareBaselineOption = Annotated[
    bool,
    typer.Option(
        "--compare-baseline",
        help="Also time the tf.numpy_function pipeline "
        "(use_tf_native_loading: false) on the same items, in the same run.",
    ),
]
StagesOption = Annotated[
    bool, typer.Option("--stages/--no-stages", help="Time read, decode, features and the full pipeline separately.")
]


def profile_pipeline(
    config: ConfigOption = None,
    set_values: SetOption = None,
    data: DataOption = None,
    batch_size: BatchSizeOption = None,
    batches: BatchesOption = None,
    warmup: WarmupOption = None,
    benchmark: BenchmarkOption = False,
    compare_baseline: CompareBaselineOption = False,
    stages: StagesOption = True,
    json_output: JsonOption = False,
    train_data: TrainDataAlias = None,
    data_path: DataPathAlias = None,
    num_batches: NumBatchesAlias = None,
    verbose: VerboseOption = False,
) -> None:
    """Time the training input pipeline on your data: throughput, latency, cycles, padding, stages.

    Bad files the dataset scan skips are listed first. When the dataset has fewer batches than
    asked for, it is repeated (and the report says so).

    Examples:

        xtts profile-pipeline -c my.yaml --batches 50

        xtts profile-pipeline --data /data/my-voice --compare-baseline

        xtts profile-pipeline -c my.yaml --benchmark --json
    """
    data_path = given_once("the dataset", data=data, train_data=train_data, data_path=data_path)
    num_batches = given_once("the number of batches", batches=batches, num_batches=num_batches)
    from xtts_cli.config.loading import resolve_config

    loaded = resolve_config(
        config,
        {
            "data.dataset_path": data_path,
            "data.batch_size": batch_size,
            "profiling.num_batches": num_batches,
            "profiling.warmup_batches": warmup,
        },
        set_values or (),
        measures=True,
    )
    cfg = loaded.config
    progress = Phases()
    scan = _scan(cfg, progress)
    from xtts_cli.profiling.pipeline_profiler import profile_pipeline as run_profile
    from xtts_cli.profiling.pipeline_profiler import sweep

    if not json_output and scan.bad:
        # Bad files first, before the minutes of timing, on stdout with the rest of the report.
        _render_bad_files(console(), scan.bad)
    with batch_as_given({"data.batch_size": batch_size}):
        profile = run_profile(
            cfg,
            num_batches=cfg.profiling.num_batches,
            stages=stages,
            compare_baseline=compare_baseline,
            scan=scan,
            progress=progress,
        )
    report = sweep(cfg, scan=scan, progress=progress) if benchmark else None
    progress.end()
    if json_output:
        print_json(_payload(profile, report, scan, cfg))
        return
    _render(profile, report, where=datasets_label(profile.dataset_paths))


def _scan(cfg, progress):
    """The dataset scan; too many bad files still lists them, so the user sees what to fix."""
    from xtts_cli.data.scan import DatasetScanError, scan_dataset

    try:
        progress("scanning the dataset")
        scan = scan_dataset(cfg.data)
    except DatasetScanError as exc:
        progress.end()
        if exc.report is not None and exc.report.bad:  # none: no table of nothing
            _render_bad_files(console(stderr=True), exc.report.bad)
        raise
    progress.end()
    return scan


def _payload(profile, report, scan, cfg) -> dict[str, Any]:
    """What `--json` prints: the profile, the pipeline, the dataset, and the sweep when asked."""
    payload: dict[str, Any] = profile.model_dump(mode="json", exclude={"pipeline"})
    payload["pipeline"] = profile.pipeline.model_dump(mode="json", exclude={"feature_cache"})
    payload["dataset"] = {
        "format": scan.format,
        "items": len(scan.items),
        "speakers": len(scan.speakers),
        "hours": round(scan.total_hours, 4),
    }
    payload["feature_bytes_estimate"] = scan.feature_bytes(cfg.data)
    # Without --benchmark the sweep's keys are null, as every key of the page is printed.
    payload["sweep"] = [cell.model_dump(mode="json") for cell in report.cells] if report is not None else None
    payload["best"] = report.best.model_dump(mode="json") if report is not None else None
    payload["sweep_notes"] = report.notes if report is not None else None
    return payload


def _render_bad_files(out, bad: list) -> None:
    from rich.table import Table

    from xtts_cli.cli.progress import SKIPPED_SHOWN

    table = Table(
        title=f"{len(bad):,} item{'s' if len(bad) != 1 else ''} skipped by the dataset scan (bad, or outside the "
        "length limits)",
        title_justify="left",
    )
    table.add_column("where")
    table.add_column("reason")
    table.add_column("detail")
    for item in bad[:SKIPPED_SHOWN]:  # a corpus's 1 % bad is a thousand rows before any figure
        table.add_row(item.place, item.reason, item.detail)
    out.print(table)
    if len(bad) > SKIPPED_SHOWN:
        out.print(f"... and {len(bad) - SKIPPED_SHOWN:,} more (`xtts validate --json` lists all)")


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def _duration(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 1 else f"{seconds * 1000:.1f} ms"


def _render(profile, report, where: str) -> None:
    from rich.table import Table

    from xtts_cli.profiling.padding import shown_efficiency
    from xtts_cli.profiling.sparkline import sparkline

    out = console()
    out.print(
        f"[bold]{escape(where)}[/]: {profile.items:,} training item{'' if profile.items == 1 else 's'}, batch {profile.batch_size}, "
        f"{profile.preprocessing_mode} mode, {'TF-native' if profile.tf_native else 'tf.numpy_function'} loading; "
        f"{profile.num_batches} batches timed after {profile.warmup_batches} warm-up"
    )

    lat = profile.latency_ms
    table = Table(title="Throughput and latency (time blocked in next())", title_justify="left")
    table.add_column("figure")
    table.add_column("value", justify="right")
    bound = profile.max_distinct_shapes if profile.max_distinct_shapes is not None else "unbounded"
    rows = [
        ("samples/s", _rate(profile.samples_per_sec)),
        ("audio seconds/s", _rate(profile.audio_seconds_per_sec)),
        ("real mel frames/s", _rate(profile.mel_frames_per_sec)),
        ("latency p50 / p95 / p99 (ms)", f"{lat.p50:.2f} / {lat.p95:.2f} / {lat.p99:.2f}"),
        ("latency mean / max (ms)", f"{lat.mean:.2f} / {lat.max:.2f}"),
        ("coefficient of variation", f"{profile.cv:.2f}"),
        (
            "padding efficiency (measured / planned)",
            f"{shown_efficiency(profile.padding_efficiency)} / {shown_efficiency(profile.planned_padding_efficiency)}",
        ),
        ("distinct batch shapes (bound)", f"{profile.distinct_shapes} ({bound})"),
    ]
    osc = profile.oscillation
    if osc.detected:
        rows.append(
            ("oscillation", f"[yellow]every {osc.period_batches:.1f} batches ({_duration(osc.period_seconds)})[/]")
        )
    else:
        rows.append(("oscillation", "none"))
    for name, value in rows:
        table.add_row(name, value)
    out.print(table)

    series = profile.latency_series_ms
    # One glyph per batch up to 100, so a cycle of a few batches stays visible.
    line = sparkline(series, width=min(len(series), 100))
    out.print(f"latency per batch  {line}  {min(series):.1f}-{max(series):.1f} ms")
    if osc.detected:
        out.print(f"[yellow]a slow batch every {osc.period_batches:.1f} batches[/] ({osc.reason})")

    _render_stages_and_baseline(out, profile)
    if report is not None:
        _render_sweep(out, report)

    for note in profile.notes:
        out.print(f"[dim]note: {escape(note)}[/]")


def stage_share(added_ms: float, total_ms: float) -> str:
    """A stage's share of the time the stages add (`total_ms`: their positive increments' sum); a stage
    that measured faster than the one before it (noise: decoding adds too little to be told from
    reading) is "~0%", not a negative share."""
    return "~0%" if added_ms < 0 else f"{added_ms / total_ms:.0%}"


def _render_stages_and_baseline(out, profile) -> None:
    from rich.table import Table

    if profile.stages:
        stages = Table(title="Stages (runtime mode, cumulative, same items)", title_justify="left")
        for column, justify in (
            ("stage", "left"),
            ("runs", "left"),
            ("samples/s", "right"),
            ("ms/sample", "right"),
            ("+ms/sample", "right"),
            ("share", "right"),
        ):
            stages.add_column(column, justify="right" if justify == "right" else "left")
        # Shares of what the stages add, not of the last cumulative time: an earlier stage measured
        # slower than the whole (noise) would show over 100 %.
        total = sum(max(stage.incremental_ms_per_sample, 0.0) for stage in profile.stages) or 1.0
        for stage in profile.stages:
            stages.add_row(
                stage.name,
                stage.description,
                _rate(stage.samples_per_sec),
                f"{stage.ms_per_sample:.2f}",
                f"{stage.incremental_ms_per_sample:+.2f}",
                stage_share(stage.incremental_ms_per_sample, total),
            )
        out.print(stages)

    if profile.baseline is not None:
        base = profile.baseline
        table = Table(title="TF-native vs tf.numpy_function (runtime mode, same items)", title_justify="left")
        for column in ("pipeline", "samples/s", "p50 ms"):
            table.add_column(column, justify="left" if column == "pipeline" else "right")
        table.add_row(
            "tf.numpy_function (use_tf_native_loading: false)",
            _rate(base.samples_per_sec),
            f"{base.latency_ms.p50:.2f}",
        )
        native_p50 = f"{base.native_latency_ms.p50:.2f}" if base.native_latency_ms is not None else ""
        table.add_row("TF-native", _rate(base.native_samples_per_sec), native_p50)
        out.print(table)
        out.print(f"speedup: [bold]{base.speedup:.2f}x[/]")


def _render_sweep(out, report) -> None:
    from rich.table import Table

    table = Table(title=f"Sweep: {len(report.cells)} cells, ranked by samples/s", title_justify="left")
    for column in ("#", "num_workers", "prefetch", "batch", "mode", "samples/s"):
        table.add_column(column, justify="right" if column in ("#", "samples/s") else "left")
    shown = [(rank, cell) for rank, cell in enumerate(report.cells, 1) if rank <= 10 or cell.current]
    for rank, cell in shown:
        marker = " (current)" if cell.current else ""
        table.add_row(
            str(rank),
            str(cell.num_workers),
            str(cell.prefetch_buffer_size),
            str(cell.batch_size),
            cell.preprocessing_mode + marker,
            _rate(cell.samples_per_sec),
        )
    out.print(table)
    best = report.best
    if best.change and not best.worth_changing:
        out.print(
            f"best: keep the current settings — the fastest cell ({', '.join(f'{k}: {v}' for k, v in best.change.items())}) "
            f"re-measured at {best.speedup:.2f}x of them, a tie"
        )
    elif best.change:
        changes = ", ".join(f"{key}: {value}" for key, value in best.change.items())
        out.print(
            f"best: [bold]{changes}[/] — {_rate(best.samples_per_sec)} samples/s vs "
            f"{_rate(best.current_samples_per_sec)} now ({best.speedup:.2f}x, re-measured side by side)"
        )
    else:
        out.print(f"best: the current settings ({_rate(best.samples_per_sec)} samples/s)")
    for note in report.notes:
        out.print(f"[dim]note: {escape(note)}[/]")
