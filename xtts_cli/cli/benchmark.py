"""`xtts benchmark`: find the fastest training settings for this machine, each trial isolated."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape

from xtts_cli.cli.options import (
    ConfigOption,
    DataOption,
    DataPathAlias,
    JsonOption,
    SetOption,
    TrainDataAlias,
    VerboseOption,
    at_most_count,
    given_once,
)
from xtts_cli.cli.output import console, print_json


def _int_list(text: Optional[str]) -> Optional[list[int]]:
    if text is None:
        return None
    try:
        values = [int(part) for part in text.replace(" ", ",").split(",") if part]
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a comma-separated list of whole numbers; e.g. 8,16,32") from None
    if not values:
        raise typer.BadParameter(f"{text!r} names no batch size; e.g. 8,16,32, or leave the option out")
    if any(value < 1 for value in values):
        raise typer.BadParameter(f"{text!r}: every batch size must be 1 or more; e.g. 8,16,32")
    return values


# A week: past about 24.8 days (2**31 ms) a wait's timeout overflows the system's.
MAX_BUDGET_SECONDS = 7 * 24 * 3600


def _seconds(value: float) -> float:
    if value != value or value == float("inf"):  # NaN passes every range check
        raise typer.BadParameter(f"{value} is not a number of seconds; e.g. --budget-seconds 600")
    if value > MAX_BUDGET_SECONDS:  # a callback's check: a range would widen the help
        raise typer.BadParameter(
            f"{value:g} is more than a week ({MAX_BUDGET_SECONDS:,} s); e.g. --budget-seconds 3600"
        )
    return value


def _stages(value: Optional[str]) -> Optional[str]:
    """--sweep's stages, checked as the command line is read (before the dataset's scan)."""
    from xtts_cli.profiling.benchmark import STAGES

    if value is None:
        return None
    stages = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [stage for stage in stages if stage not in STAGES]
    if not stages or unknown:
        what = f"{', '.join(unknown)}: unknown stage" if unknown else f"{value!r} names no stage"
        raise typer.BadParameter(f"{what}; choose from {', '.join(STAGES)}")
    return value


def _sizes(value: Optional[str]) -> Optional[str]:
    _int_list(value)  # a usage error (exit 2) as the command line is read
    return value


BatchSizesOption = Annotated[
    Optional[str],
    typer.Option(
        "--batch-sizes",
        metavar="LIST",
        callback=_sizes,
        help="Batch sizes to try, comma-separated (e.g. 8,16,32). Default: half, once, "
        "twice and four times data.batch_size, keeping at least 2 batches per epoch.",
        show_default=False,
    ),
]


BudgetOption = Annotated[
    float,
    typer.Option(
        "--budget-seconds",
        min=1,
        callback=_seconds,
        metavar="SECONDS",
        help="Wall-clock budget for all trials; trials that would not fit are listed as skipped.",
    ),
]
StepsOption = Annotated[
    int,
    typer.Option(
        "--steps", min=2, callback=at_most_count, metavar="N", help="Timed training steps per trial (after warm-up)."
    ),
]
SweepOption = Annotated[
    Optional[str],
    typer.Option(
        "--sweep",
        metavar="STAGES",
        callback=_stages,
        help="Stages to sweep, comma-separated, from: graph_mode (for a config that runs eagerly), layout "
        "(one card, data/model split or mirrored; "
        "with two or more GPUs), batch_size, num_workers, prefetch, preprocessing, xla, mixed_precision. "
        "Default: all.",
        show_default=False,
    ),
]
WriteConfigOption = Annotated[
    Optional[Path],
    typer.Option(
        "--out",
        "-o",
        metavar="FILE",
        help="Write the config with the best settings to this file: the --config file with the winning "
        "settings and the command line's values (--data, --set) edited in, its other lines and comments kept, and "
        "its first line's command naming FILE; an existing file is kept as FILE.bak (FILE.bak.1 where that is taken).",
        show_default=False,
    ),
]


def benchmark(
    config: ConfigOption = None,
    set_values: SetOption = None,
    data: DataOption = None,
    batch_sizes: BatchSizesOption = None,
    budget_seconds: BudgetOption = 900.0,
    steps: StepsOption = 20,
    sweep: SweepOption = None,
    out: WriteConfigOption = None,
    json_output: JsonOption = False,
    train_data: TrainDataAlias = None,
    data_path: DataPathAlias = None,
    write_config: Annotated[Optional[Path], typer.Option("--write-config", hidden=True)] = None,
    verbose: VerboseOption = False,
) -> None:
    """Find the fastest settings for this machine: device layout, batch size, parallelism, prefetch, cache, XLA, mixed precision.

    Each trial runs the real training step on the real pipeline for --steps steps in a fresh
    process, so an out-of-memory trial cannot poison the next; the climb in batch size stops at
    the first size that runs out of memory. Settings are tuned one at a time from the best so
    far and ranked by samples/s with a penalty for unsteady steps (samples/s / (1 + CV), over 5 or
    more steps).

    Examples:

        xtts benchmark -c my.yaml -o best.yaml

        xtts benchmark -c rtx4090 --data /data/my-voice --batch-sizes 16,32,64

        xtts benchmark --sweep layout,num_workers --json
    """
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.kinds import run_data_of

    data_path = given_once("the dataset", data=data, train_data=train_data, data_path=data_path)
    write_config = given_once("the output config", out=out, write_config=write_config)
    sizes = _int_list(batch_sizes)
    stages = [part.strip() for part in sweep.split(",") if part.strip()] if sweep else None
    loaded = resolve_config(config, {"data.dataset_path": data_path}, set_values or (), measures=True)
    _check_out_folder(write_config)
    from xtts_cli.cli.output import Phases

    with Phases(enabled=not json_output) as phase:
        phase("scanning the dataset")
        run_data = run_data_of(loaded.config)
    import signal

    # SIGTERM (`timeout`, a job scheduler) and SIGHUP (the terminal closed; unless `nohup` ignores it) as
    # an exit, not a kill: the running trial's process is stopped and its scratch folder removed on the
    # way out, as after Ctrl-C, and the trials that finished are kept.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if signal.getsignal(signal.SIGHUP) != signal.SIG_IGN:
        signal.signal(signal.SIGHUP, lambda *_: sys.exit(129))
    report = _run_trials(
        loaded, run_data, batch_sizes=sizes, stages=stages, budget_seconds=budget_seconds, num_steps=steps
    )
    written, kept = None, None
    if write_config is not None and report.best is not None and not report.stopped:
        written, kept = _write_best(loaded, report.changes, write_config)
    failed = _failure(report, write_config)
    if json_output:
        payload: dict[str, Any] = report.model_dump(mode="json")
        payload["written_config"] = str(written) if written else None
        if failed is not None:  # one object on stdout: the report, with the error's keys
            payload.update(error=failed.lines[0], hint=failed.hint, exit_code=failed.exit_code)
        print_json(payload)
        if failed is not None:
            from xtts_cli.cli.output import error_lines

            error_lines(failed.lines, failed.hint)
            raise typer.Exit(failed.exit_code)
    else:
        _render(report, written, kept)
    if failed is not None:
        raise failed


def _stages_left(report) -> list[str]:
    """The stages a stopped sweep had not finished: the one the stop came in, and those after it."""
    from xtts_cli.profiling.benchmark import STAGES

    stopped_in = next((t.stage for t in report.trials if (t.reason or "").startswith("stopped by")), None)
    swept = [stage for stage in STAGES if stage not in report.not_swept]
    if stopped_in not in swept:  # the baseline (or the recheck): every stage is left, or none
        return swept if stopped_in == "baseline" else []
    return swept[swept.index(stopped_in) :]


def _failure(report, write_config: Optional[Path]):
    """The error the sweep ends with (None when it found a best setting): stopped by a signal, with
    the trials that finished shown, or no trial to the end."""
    from xtts_cli.errors import XttsError

    if report.stopped:
        finished = sum(trial.status != "skipped" for trial in report.trials)
        stopped = XttsError(
            f"stopped by {report.stopped} after {finished} trial(s); the table holds those that finished"
            + (f", and {write_config} was not written" if write_config is not None else ""),
            hint="run it again to finish the sweep"
            + (f": --sweep {','.join(left)}" if (left := _stages_left(report)) else ""),
        )
        stopped.exit_code = {"Ctrl-C": 130, "SIGHUP": 129}.get(report.stopped, 143)
        return stopped
    if report.best is None:
        # What to change follows from why they ended: out of time, or out of memory.
        statuses = {trial.status for trial in report.trials}
        # How far: a trial stopped at the budget ran that long and more (it had said "raise" alone).
        ran = max((t.seconds or 0.0 for t in report.trials if t.status == "timeout"), default=0.0)
        past = f" (a trial ran past {ran:.0f} s unfinished; the default is 900)" if ran else ""
        fixes = [
            *([f"raise --budget-seconds{past}"] if statuses & {"timeout", "skipped"} else []),
            *(["try smaller --batch-sizes"] if "oom" in statuses else []),
        ]
        return XttsError(
            "no trial ran to the end, so there is no best setting",
            hint="see the reasons in the table" + (f"; {' or '.join(fixes)}" if fixes else ""),
        )
    return None


def _run_trials(
    loaded,
    run_data,
    *,
    batch_sizes: Optional[list[int]],
    stages: Optional[list[str]],
    budget_seconds: float,
    num_steps: int,
):
    """Every trial on this machine within the budget, shown as it runs: the features are
    precomputed once for all of them, and each trial reads the config's text."""
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.profiling.benchmark import benchmark as run_benchmark
    from xtts_cli.profiling.benchmark import prepare_features

    machine = probe_machine()
    # The trials read the config's text, with the values --data and --set give it.
    canonical = {section: dict(body) for section, body in loaded.raw.items()}
    for dotted, value in loaded.given.items():
        section, key = dotted.split(".", 1)
        canonical.setdefault(section, {})[key] = value
    err = console(stderr=True)
    features = prepare_features(run_data, note=lambda line: err.print(f"note: {line}", markup=False, highlight=False))
    with _TrialProgress(enabled=True) as shown:
        return run_benchmark(
            loaded.config,
            canonical,
            machine,
            train_clips=len(run_data.scan.train),
            config_path=str(loaded.path) if loaded.path else None,
            batch_sizes=batch_sizes,
            stages=stages,
            budget_seconds=budget_seconds,
            num_steps=num_steps,
            progress=shown.update,
            features=features,
        )


def _check_out_folder(write_config: Optional[Path]) -> None:
    """--out names a file in a folder that exists and can be written: found before the trials, not after."""
    if write_config is None:
        return
    from xtts_cli.errors import XttsError

    if str(write_config) == "-":  # it had written a file named "-" (init's `-o -` is standard output)
        raise XttsError(
            "--out -: the best config is written to a file, not to standard output (the report takes it)",
            hint="pass -o FILE.yaml, such as -o best.yaml",
        )
    if not write_config.parent.is_dir():
        a_file = write_config.parent.exists()
        raise XttsError(
            f"--out {str(write_config)!r}: folder {str(write_config.parent)!r} "
            + ("is a file, not a folder" if a_file else "does not exist"),
            hint="pass a path in a folder, such as -o best.yaml"
            if a_file
            else "create the folder or pass a path in an existing one",
        )
    from xtts_cli.config.editing import can_write

    can_write(write_config, "--out", name="best.yaml")


def _write_best(loaded, changes, target: Path) -> tuple[Path, Optional[Path]]:
    """Apply the winning changes to the user's file text (or to the reference config) and write it to
    `target`; (it, where the file it replaced was kept, or None)."""
    from xtts_cli.config.editing import absolute_path, apply_changes, free_backup, own_header, write_atomically
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.findings import ConfigChange

    if loaded.text is not None:
        text, sources = loaded.text, loaded.sources
    else:
        from xtts_cli.config.reference import render_yaml

        text, sources = render_yaml(), {}
    # The command line's values too (the trials ran with them), a path absolute (it was typed for
    # this folder); the sweep's winners come first.
    given = [
        ConfigChange(key=key, action="remove")
        if value == []
        else ConfigChange(key=key, value=absolute_path(key, value))
        for key, value in loaded.given.items()
    ]
    new_text = own_header(apply_changes(text, [*changes, *given], sources), target)
    target = Path(target)
    # FILE.bak, or .bak.1 where one is kept: a second run to the same --out had written over the first's
    # backup, the config as its user wrote it.
    kept = write_atomically(target, new_text, backup=target.exists(), backup_as=free_backup(target))
    resolve_config(target)  # the written file must load; a failure here is a bug worth seeing
    return target, kept


def _fmt(value: Any) -> str:
    if value is None:  # a layout without the data/model split leaves its keys out
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class _TrialProgress:
    """A progress bar over the planned trials on a terminal; one line per finished trial otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.err = console(stderr=True)
        self.enabled = enabled
        # rich's Progress and its task id, made when the bar starts (rich is imported then).
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _TrialProgress:
        if self.enabled and self.err.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("benchmark"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[info]}"),
                console=self.err,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("benchmark", total=1, info="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, event) -> None:
        """Render one sweep event (profiling/benchmark.py: TrialStarted, TrialFinished)."""
        from xtts_cli.profiling.benchmark import TrialStarted

        if not self.enabled:
            return
        record, planned = event.record, event.planned
        changed = ", ".join(f"{k.split('.', 1)[1]}={_fmt(v)}" for k, v in record.changed.items()) or "config as written"
        if isinstance(event, TrialStarted):
            if self._progress is not None:
                self._progress.update(self._task, total=planned, info=f"trial {record.index + 1}: {changed}")
            return
        if record.status == "ok":
            line = f"trial {record.index + 1} ({changed}): {record.samples_per_sec:.1f} samples/s, step CV {record.step_cv:.2f}"
        else:
            line = f"trial {record.index + 1} ({changed}): {record.status} - {record.reason}"
        if self._progress is not None:
            self._progress.update(self._task, total=max(planned, record.index + 1), completed=record.index + 1)
            self._progress.console.print(line)
        else:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()


def _render(report, written: Optional[Path], kept: Optional[Path] = None) -> None:
    out = console()
    gpus = ", ".join(report.gpus) if report.gpus else f"no GPU ({report.gpu_unavailable_reason})"
    out.print(
        f"[bold]benchmark[/]: {report.cpu_count} CPU core(s), {gpus}; {report.num_steps} timed steps per trial, "
        f"{len(report.trials)} trial(s) in {report.elapsed_seconds:.0f} s of a {report.budget_seconds:.0f} s budget"
    )
    out.print(_trials_table(report))
    for trial in report.trials:  # below the table: in its column, a long reason folded the settings to slivers
        if trial.status != "ok" and trial.reason:
            changed = ", ".join(f"{k.split('.', 1)[1]}={_fmt(v)}" for k, v in trial.changed.items()) or "as written"
            out.print(f"trial {trial.index + 1} ({escape(changed)}): {trial.status}: {escape(trial.reason)}")
    if report.largest_batch_size is not None:
        out.print(f"largest batch size that ran: {report.largest_batch_size}")
    if report.best is not None:
        best = report.trials[report.best]
        # The speedup of a winner run again is of the mean of its two runs: said, beside the first's rate.
        mean = (
            ", the mean of its run and its re-run"
            if report.drift is not None and report.best != report.baseline
            else ""
        )
        speedup = f" ({report.speedup:.2f}x the config as written{mean})" if report.speedup is not None else ""
        label = "best of the trials that finished" if report.stopped else "best"
        out.print(f"[bold]{label}[/]: trial {best.index + 1}, {best.samples_per_sec:,.1f} samples/s{speedup}")
        others = [t for t in report.trials if t.status == "ok" and t.stage != "recheck" and t.index != report.baseline]
        for line in _verdict(report, best, others):
            out.print(f"  {line}")
    if report.drift is not None:
        # The fastest trial is the one run again, and may not be the one chosen above (a gain within the noise).
        rerun = next((t for t in report.trials if t.stage == "recheck"), None)
        first = next(
            (t for t in report.trials if rerun is not None and t.stage != "recheck" and t.settings == rerun.settings),
            None,
        )
        who = f"trial {first.index + 1}, the fastest," if first is not None else "the fastest trial"
        out.print(f"{who} run again at the end: {report.drift:+.1%} samples/s (the machine's own drift)")
    for stage, reason in report.not_swept.items():
        if reason.startswith("not asked for"):
            continue
        out.print(f"[dim]not swept: {stage}: {reason}[/]")
    for note in report.notes:
        out.print(f"[dim]note: {escape(note)}[/]")
    if written is not None:
        out.print(
            f"wrote {escape(str(written))}" + (f" (the file it replaced kept as {escape(str(kept))})" if kept else "")
        )


def _verdict(report, best, others: list) -> list[str]:
    """What the search concluded, under its best line: the changes it made, or why none."""
    if report.changes:
        return [change.describe() for change in report.changes]
    if not others:  # it had said no trial beat the config, where none but the config ran
        planned = [t for t in report.trials if t.index != report.baseline and t.stage != "recheck"]
        if not planned:  # nothing else was asked for ("raise the budget" had been the advice, 14 s of 100 spent)
            return ["no other setting to try: the sizes and sweeps asked for are the config's own; pass others"]
        return [
            f"no other trial finished within --budget-seconds {report.budget_seconds:g}: nothing was compared; raise it"
        ]
    faster = max(others, key=lambda t: t.samples_per_sec or 0.0)
    rechecked = any(t.stage == "recheck" and t.score is not None for t in report.trials)  # run, not skipped
    if not rechecked and best.samples_per_sec and (faster.samples_per_sec or 0.0) > best.samples_per_sec:
        # It had said no trial beat the config by more than noise, of one 1.40x as fast that the budget left unchecked.
        ratio = faster.samples_per_sec / best.samples_per_sec
        return [
            f"trial {faster.index + 1} ran {ratio:.2f}x the config as written, but was not run again to confirm it "
            + ("before the search stopped" if report.stopped else f"within --budget-seconds {report.budget_seconds:g}")
            + ": the config is kept"
            + ("" if report.stopped else "; raise it to check the gain")
        ]
    if report.stopped:
        return []
    return ["no trial beat the config as written by more than run-to-run noise: it is kept"]


def _trials_table(report):
    """The trials, best first, then the ones that did not run or failed (their reasons follow the table)."""
    from rich.table import Table

    table = Table(show_edge=False, pad_edge=False)
    # One change a line, each whole where the width allows (a long one beside others had folded mid-word).
    changes = ["\n".join(f"{k.split('.', 1)[1]}={_fmt(v)}" for k, v in t.changed.items()) or "-" for t in report.trials]
    widest = max((len(line) for change in changes for line in change.splitlines()), default=1)
    for column, justify in (
        ("#", "right"),
        ("changed", "left"),
        ("status", "left"),
        ("samples/s", "right"),
        ("p50 ms", "right"),
        ("CV", "right"),
        ("wait", "right"),
        ("score", "right"),
    ):
        # A narrow or piped console (80 columns): the setting folds, never cut (two trials read alike),
        # and keeps a width (a long reason beside it had folded it to "batch_siz / e=4").
        table.add_column(
            column,
            justify="right" if justify == "right" else "left",
            overflow="fold" if justify == "left" else "ellipsis",
            min_width=min(widest, 20) if column == "changed" else None,
        )
    ranked = set(report.ranking)
    for index in report.ranking + [t.index for t in report.trials if t.index not in ranked]:
        trial = report.trials[index]
        ok = trial.status == "ok"
        status = "[green]ok[/]" if ok else f"[yellow]{trial.status}[/]"
        if index == report.best:
            status += " [bold green](best)[/]"
        table.add_row(
            str(index + 1),
            # A row like the winner's had read as a trial of its own.
            "the fastest, run again" if trial.stage == "recheck" else changes[index],
            status,
            f"{trial.samples_per_sec:,.1f}" if ok else "",
            f"{trial.step_ms_p50:.1f}" if ok else "",
            f"{trial.step_cv:.2f}" if ok else "",
            f"{trial.input_bound_percent:.0f}%" if ok else "",
            f"{trial.score:,.1f}" if ok else "",
        )
    return table
