"""`xtts validate`: check the config, and repair it with --fix without losing a comment."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from xtts_cli.cli.options import (
    ConfigOption,
    DataOption,
    DataPathAlias,
    JsonOption,
    SetOption,
    TrainDataAlias,
    VerboseOption,
    given_once,
)
from xtts_cli.cli.output import SEVERITY_STYLE, console, print_dataset, print_finding, print_json

FixOption = Annotated[
    bool,
    typer.Option(
        "--fix", help="Apply every fixable finding to the file (atomic write, the old file kept as FILE.bak)."
    ),
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Print the diff --fix would apply; write nothing.")]
StrictOption = Annotated[bool, typer.Option("--strict", help="Exit 1 on warnings too.")]


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
    verbose: VerboseOption = False,
) -> None:
    """Check the config against the schema and the rules that keep a GPU busy, and scan its data; --fix repairs it.

    The data report (headers only): per dataset its format, clips, hours, largest speakers and every
    bad file with its reason.

    Exit 0 when no errors remain (warnings allowed unless --strict), 1 when errors remain, 2 when
    the config cannot be read.

    Examples:

        xtts validate -c my.yaml

        xtts validate -c my.yaml --fix

        xtts validate -c speak-cpu --data /data/my-voice --json
    """
    data_path = given_once("the dataset", data=data, train_data=train_data, data_path=data_path)

    from xtts_cli.config.editing import apply_changes, write_atomically
    from xtts_cli.config.loading import canonicalize, parse_yaml, resolve_config
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.diagnosis.checkup import scan_findings
    from xtts_cli.diagnosis.config_rules import DATASET_PATH_FINDINGS, check_config, string_number_findings
    from xtts_cli.errors import ConfigError
    from xtts_cli.findings import Finding

    try:
        loaded = resolve_config(config, {"data.dataset_path": data_path}, set_values or ())
    except ConfigError as exc:
        # The schema failed; still point out numbers written as strings when the YAML parsed.
        extra: list[Finding] = []
        if config is not None and config.is_file():
            try:
                extra = string_number_findings(canonicalize(parse_yaml(config.read_text("utf-8"), str(config)))[0])
            except ConfigError:
                extra = []
        if json_output:
            errors = [Finding(id="schema", severity="error", message=line) for line in exc.lines]
            print_json({"valid": False, "findings": [f.model_dump() for f in errors + extra], "fixed": []})
            raise typer.Exit(code=2) from None
        out = console(stderr=True)
        for line in exc.lines:
            out.print(f"[{SEVERITY_STYLE['error']}]error[/]: {line}")
        for finding in extra:
            out.print(f"[{SEVERITY_STYLE[finding.severity]}]{finding.severity}[/]: {finding.message}")
        if exc.hint:
            out.print(f"hint: {exc.hint}")
        raise typer.Exit(code=2) from None

    machine = probe_machine()
    findings = check_config(loaded, machine)
    fixed: list[Finding] = []
    diff = ""
    if fix or dry_run:
        fixable = [f for f in findings if f.fix is not None]
        if fixable and loaded.path is None:
            raise ConfigError(
                "there is no config file to fix: no --config was given and configs/config.yaml does not exist",
                hint="write the defaults to a file first, or pass --config PATH",
            )
        if fixable and fix and loaded.path is not None:
            from xtts_cli.config.preset_files import PRESETS_DIR

            if loaded.path.resolve().parent == PRESETS_DIR:
                raise ConfigError(
                    f"{config} is a preset shipped with xtts, not a file of yours to fix",
                    hint=f"write it out first: xtts init --preset {loaded.path.stem} -o my.yaml, "
                    "then xtts validate -c my.yaml --fix",
                )
        if fixable:
            assert loaded.text is not None and loaded.path is not None
            new_text = apply_changes(loaded.text, [f.fix for f in fixable if f.fix], loaded.sources)
            diff = "".join(
                difflib.unified_diff(
                    loaded.text.splitlines(keepends=True),
                    new_text.splitlines(keepends=True),
                    fromfile=f"{loaded.path}",
                    tofile=f"{loaded.path} (fixed)",
                )
            )
            if fix and new_text != loaded.text:
                backup = write_atomically(loaded.path, new_text)
                fixed = fixable
                if not json_output:
                    console(stderr=True).print(f"wrote {loaded.path} (backup: {backup})")
                loaded = resolve_config(loaded.path, {"data.dataset_path": data_path}, set_values or ())
                findings = check_config(loaded, machine)

    dataset = scan = None
    if not any(f.id in DATASET_PATH_FINDINGS for f in findings):
        from xtts_cli.cli.output import Phases

        with Phases(enabled=not json_output) as phase:
            phase("scanning the dataset (every audio file's header)")
            scan, dataset, found = scan_findings(loaded.config)
        findings = findings + found
    settings = _resolved_settings(loaded.config, machine, scan)
    error_count = sum(f.severity == "error" for f in findings)
    warnings = sum(f.severity == "warning" for f in findings)
    code = 1 if error_count or (strict and warnings) else 0
    if json_output:
        payload: dict[str, Any] = {
            "valid": error_count == 0,
            "config": str(loaded.path) if loaded.path else None,
            "findings": [f.model_dump() for f in findings],
            "fixed": [f.model_dump() for f in fixed],
            "dataset": dataset.model_dump(mode="json") if dataset is not None else None,
            "settings": settings,
        }
        if dry_run or fix:
            payload["diff"] = diff
        print_json(payload)
        raise typer.Exit(code=code)
    if dataset is not None:
        print_dataset(console(), dataset)
    if settings is not None:
        from xtts_cli.training.settings import describe_settings

        out = console()
        out.print("[bold]resolved settings[/] (what xtts train runs here):")
        for line in describe_settings(settings):
            out.print(f"  {line}", highlight=False)
    _render(findings, fixed, diff, loaded.path, dry_run=dry_run and not fix)
    raise typer.Exit(code=code)


def _resolved_settings(config, machine, scan) -> dict[str, Any] | None:
    """The derived settings `xtts train` would run with on this machine (`training/settings.py`, the
    devices as NVML sees them), steps per epoch from the training pipeline's plan when the dataset
    is usable (not for a multi-worker config: its workers' count is the cluster's); None when the
    device request does not fit this machine (a finding says so)."""
    from xtts_cli.devices.placement import plan_from_machine
    from xtts_cli.errors import XttsError
    from xtts_cli.training.settings import resolve_settings, settings_report

    try:
        plan = plan_from_machine(config.devices, machine)
        settings = resolve_settings(config, plan)
    except XttsError:
        return None
    steps_per_epoch = None
    items = scan.epoch_items() if scan is not None else []
    if items and config.devices.strategy != "multi_worker":
        from xtts_cli.data.pipeline import tokenizer_for
        from xtts_cli.training.inputs import epoch_steps, pipeline_plan

        try:
            _, planned = pipeline_plan(config, settings, items, tokenizer_for(scan, config.data))
        except XttsError:  # too few clips for a batch: the scan's findings say so
            planned = None
        if planned is not None:
            steps_per_epoch = epoch_steps(planned.batches_per_epoch, len(items), settings, distributed=False)
    return settings_report(config, settings, plan, steps_per_epoch)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _render(findings: list, fixed: list, diff: str, path: Path | None, dry_run: bool) -> None:
    out = console()
    if diff:
        sys.stdout.write(diff if diff.endswith("\n") else diff + "\n")
    elif dry_run:
        out.print("nothing to fix")
    for finding in findings:
        print_finding(out, finding, fix_note="  (xtts validate --fix)")
    counts = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
    fixable = sum(f.fix is not None for f in findings)
    source = str(path) if path else "built-in defaults"
    summary = (
        f"{source}: {_count(counts['error'], 'error')}, {_count(counts['warning'], 'warning')}, {counts['info']} info"
    )
    if fixed:
        summary += f"; fixed {len(fixed)}"
    if fixable:
        summary += f"; {fixable} fixable with --fix"
    if not findings:
        summary = f"{source}: valid, no findings"
    out.print(summary)
