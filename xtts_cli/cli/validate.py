"""`xtts validate`: check the config, and repair it with --fix without losing a comment."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

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
    flag_overrides,
    given_once,
)
from xtts_cli.cli.output import (
    SEVERITY_STYLE,
    config_to_fix,
    console,
    counted,
    print_dataset,
    print_finding,
    print_json,
)
from xtts_cli.cli.train import (  # train's flags that set the config: its command checked as written
    BatchSize,
    DataGpuMemory,
    Epochs,
    Isolation,
    Level,
    MaxMinutes,
    ModelGpuMemory,
    NumWorkers,
    Prefetch,
    Size,
    StaticShapes,
    Steps,
    TaskIndex,
    WorkerHosts,
)

FixOption = Annotated[
    bool,
    typer.Option(
        "--fix",
        help="Apply every fixable finding to the file (atomic write, the old file kept as FILE.bak, or FILE.bak.1 "
        "where that is taken).",
    ),
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Print the diff --fix would apply; write nothing.")]
StrictOption = Annotated[bool, typer.Option("--strict", help="Exit 1 on warnings too.")]


InitFrom = Annotated[
    Optional[str],
    typer.Option(
        "--init-from",
        metavar="RUN",
        help="The run `xtts train --init-from` would start from: checked, and what this data adds to it "
        "(training.init_from).",
        show_default=False,
    ),
]
TrainedRunDir = Annotated[
    Optional[Path],
    typer.Option(
        "--run-dir",
        "-r",
        metavar="DIR",
        help="The run directory `xtts train -r DIR` would write or resume (training.run_dir): without --config, "
        "a run's own config.yaml is checked, as train resumes with it; an --init-from into a run with checkpoints "
        "of another start is refused, as train refuses it (of a start from that base, it resumes).",
        show_default=False,
    ),
]


def validate(
    config: ConfigOption = None,
    set_values: SetOption = None,
    fix: FixOption = False,
    dry_run: DryRunOption = False,
    json_output: JsonOption = False,
    strict: StrictOption = False,
    data: DataOption = None,
    train_data: TrainDataAlias = None,
    data_path: DataPathAlias = None,
    val_data: ValData = None,
    init_from: InitFrom = None,
    run_dir: TrainedRunDir = None,
    verbose: VerboseOption = False,
    batch_size: BatchSize = None,
    num_workers: NumWorkers = None,
    prefetch_buffer_size: Prefetch = None,
    enable_static_shapes: StaticShapes = None,
    steps: Steps = None,
    max_steps: MaxStepsAlias = None,
    max_minutes: MaxMinutes = None,
    epochs: Epochs = None,
    model_size: Size = None,
    data_gpu: DataGpuOption = None,
    model_gpu: ModelGpuOption = None,
    enable_memory_isolation: Isolation = None,
    data_gpu_memory: DataGpuMemory = None,
    model_gpu_memory: ModelGpuMemory = None,
    optimization_level: Level = None,
    worker_hosts: WorkerHosts = None,
    task_index: TaskIndex = None,
) -> None:
    """Check the config against the schema and the rules that keep a GPU busy, and scan its data; --fix repairs it.

    The data report (headers only): per dataset its format, clips, hours, largest speakers and every
    bad file with its reason. Exit 0 when no errors remain (warnings allowed unless --strict), 1 when
    errors remain, 2 when the config cannot be read.

    Examples:

        xtts validate -c my.yaml

        xtts validate -c my.yaml --fix

        xtts validate -c speak-cpu --data /data/my-voice --batch-size 4 --json  (train's flags too)
    """
    from xtts_cli.cli.output import Phases
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.diagnosis.validation import validate_config
    from xtts_cli.errors import ConfigError
    from xtts_cli.run.directory import resumed_config
    from xtts_cli.training.launch import launch_settings

    data_path = given_once("the dataset", data=data, train_data=train_data, data_path=data_path)
    said = (lambda line: None) if json_output else (lambda line: console(stderr=True).print(line))
    run = str(run_dir) if run_dir is not None else None
    overrides = flag_overrides(validate, locals())
    overrides["data.dataset_path"], overrides["data.eval_dataset_path"] = data_path, val_data
    overrides["training.init_from"], overrides["training.run_dir"] = init_from, run
    overrides["training.max_steps"] = given_once("the number of steps", steps=steps, max_steps=max_steps)
    overrides = launch_settings(overrides, optimization_level, worker_hosts, task_index, set_values or ())
    try:
        loaded = resolve_config(resumed_config(run_dir, config), overrides, set_values or ())
    except ConfigError as exc:
        _render_schema_failure(config, exc, json_output, fix or dry_run)
        raise typer.Exit(code=2) from None
    with Phases(enabled=not json_output) as phase:
        result = validate_config(loaded, overrides, set_values or (), fix=fix, dry_run=dry_run, said=said, phase=phase)
    code = result.exit_code(strict)
    if json_output:
        print_json(_payload(result, code, with_diff=dry_run or fix))
        raise typer.Exit(code=code)
    if result.dataset is not None:
        chosen = result.loaded.config.data
        print_dataset(console(), result.dataset, unnamed=chosen.dataset_path is None and not chosen.datasets)
    if result.settings is not None:
        _render_settings(result.settings)
    _render(result.findings, result.fixed, result.diff, result.loaded, dry_run=dry_run, fixing=fix)
    raise typer.Exit(code=code)


def _payload(result, code: int, *, with_diff: bool) -> dict[str, Any]:
    """validate's --json report (docs/json.md)."""
    payload: dict[str, Any] = {
        "valid": code == 0,  # as the exit code says: warnings too with --strict
        "config": str(result.loaded.path) if result.loaded.path else None,
        "findings": [f.model_dump() for f in result.findings],
        "fixed": [f.model_dump() for f in result.fixed],
        "dataset": result.dataset.model_dump(mode="json") if result.dataset is not None else None,
        "settings": result.settings,
    }
    if with_diff:
        payload["diff"] = result.diff
    return payload


def _render_schema_failure(config: Optional[Path], exc, json_output: bool, fixing: bool) -> None:
    """The schema failed: its errors (and numbers written as strings when the YAML parsed), in the
    report's own shape with nothing read; --fix and --dry-run say they wrote nothing."""
    from xtts_cli.diagnosis.validation import schema_failure_findings

    found = schema_failure_findings(config, exc)
    if json_output:
        # The hint the terminal prints below the errors, in the last of their messages (it had been lost).
        shown = [f.model_dump() for f in found]
        if exc.hint and exc.lines:
            last = len(exc.lines) - 1
            shown[last]["message"] += f"; {exc.hint}"
        payload: dict[str, Any] = {
            "valid": False,
            "config": str(config) if config else None,
            "findings": shown,
            "fixed": [],
            "dataset": None,
            "settings": None,
        }
        if fixing:
            payload["diff"] = ""
        print_json(payload)
        return
    from rich.markup import escape

    out = console(stderr=True)
    for finding in found:
        out.print(f"[{SEVERITY_STYLE[finding.severity]}]{finding.severity}[/]: {escape(finding.message)}")
    if exc.hint:
        out.print(f"hint: {escape(exc.hint)}")
    if fixing:
        out.print("nothing fixed: --fix edits a config that loads; correct the lines above by hand first")


def _render_settings(settings: dict[str, Any]) -> None:
    from xtts_cli.training.settings import describe_settings

    out = console()
    out.print("[bold]resolved settings[/] (what xtts train runs here):")
    for line in describe_settings(settings):
        out.print(f"  {line}", markup=False, highlight=False)


def _fix_note(loaded, findings: list) -> str:
    """What writes a finding's fix: --fix on this file, named as given (without it, pasted, `xtts
    validate --fix` checked the built-in defaults and said all was well), with the --data and the
    other command-line values the findings were found under (without them, "nothing to fix", or a
    refusal of the data they had made usable), but not a key a fix writes: the file's value would lose to
    it; a preset's is copied first."""
    import shlex

    from rich.markup import escape

    from xtts_cli.config.preset_files import PRESETS_DIR

    path = loaded.path
    if path is None or path.resolve().parent == PRESETS_DIR:
        return config_to_fix(path)
    from xtts_cli.run.directory import own_config

    if own_config(path.parent) == path:  # the record of what the run trained with, as train's advice says
        run = shlex.quote(str(path.parent))
        return f"  (in a copy: cp {shlex.quote(str(path))} my.yaml; xtts validate -c my.yaml --fix; xtts train -c my.yaml -r {run})"
    fixed = {finding.fix.key for finding in findings if finding.fix is not None}
    values = {key: loaded.given.get(key) for key in sorted(loaded.overridden - fixed)}
    data = values.pop("data.dataset_path", None)
    if data is not None and values.get("data.datasets") == []:
        values.pop("data.datasets")  # what --data stands in for (`resolve_config`), not a value given
    given = f" -d {shlex.quote(str(data))}" if data is not None else ""
    given += "".join(f" --set {shlex.quote(f'{key}={_as_typed(v)}')}" for key, v in values.items() if v is not None)
    return f"  ({escape(f'xtts validate -c {shlex.quote(str(path))}{given} --fix')})"


def _as_typed(value: Any) -> str:
    """A command-line value as `--set` reads it back (YAML): true, not Python's True."""
    import json

    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float, list, dict)):
        return json.dumps(value)
    return str(value)  # a Path


def _fix_as_written(finding, sources: dict[str, str]):
    """`finding` with its fix naming the key as the file writes it: `set data.enable_xla: auto` where
    the file says data.enable_xla (--fix edits that line; `--json` keeps today's name for scripts)."""
    written = sources.get(finding.fix.key) if finding.fix is not None else None
    if written is None or written == finding.fix.key:
        return finding
    return finding.model_copy(update={"fix": finding.fix.model_copy(update={"key": written})})


def _render(findings: list, fixed: list, diff: str, loaded, dry_run: bool, fixing: bool = False) -> None:
    out = console()
    if diff:
        sys.stdout.write(diff if diff.endswith("\n") else diff + "\n")
    elif dry_run:
        out.print("nothing to fix")
    elif fixing and findings:  # it had said nothing: bad clips below could read as repaired
        out.print("nothing to fix: --fix edits the config alone, and none of the findings below is a change to it")
    path = loaded.path
    note = _fix_note(loaded, findings)
    for finding in findings:
        print_finding(out, _fix_as_written(finding, loaded.sources), fix_note=note)
    counts = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
    fixable = sum(f.fix is not None for f in findings)
    source = str(path) if path else "built-in defaults"
    summary = (
        f"{source}: {counted(counts['error'], 'error')}, {counted(counts['warning'], 'warning')}, {counts['info']} info"
    )
    if fixed:
        summary += f"; fixed {len(fixed)}"
    if fixable:
        summary += f"; {fixable} fixable with --fix"
    if not findings:
        summary = f"{source}: valid, no findings"
    out.print(summary)
