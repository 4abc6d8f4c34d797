"""What `xtts validate` does: the config against the schema and the rules, the repair `--fix`
writes (or `--dry-run` shows), the data report and the settings training would run with."""

from __future__ import annotations

import dataclasses
import difflib
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from xtts_cli.config.loading import LoadedConfig, resolve_config
from xtts_cli.diagnosis.base_run import parent_findings, taken_from_base
from xtts_cli.diagnosis.resumed_run import resume_findings, run_dir_findings
from xtts_cli.errors import ConfigError, XttsError
from xtts_cli.findings import Finding

__all__ = ["Validation", "schema_failure_findings", "validate_config"]


@dataclass
class Validation:
    loaded: LoadedConfig
    findings: list[Finding]
    fixed: list[Finding] = field(default_factory=list)
    diff: str = ""  # what --fix writes (or --dry-run would), unified
    dataset: Any = None  # the scan's DatasetSummary; None when the dataset path itself is a finding
    settings: Optional[dict[str, Any]] = None  # `training.settings.resolved_settings`

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)

    def exit_code(self, strict: bool) -> int:
        return 1 if self.errors or (strict and self.warnings) else 0


def schema_failure_findings(config: Optional[Path], error: ConfigError) -> list[Finding]:
    """The schema's errors as findings, and the numbers written as strings when the YAML parsed."""
    from xtts_cli.config.loading import canonicalize, parse_yaml
    from xtts_cli.diagnosis.config_rules import string_number_findings

    found = [Finding(id="schema", severity="error", message=line) for line in error.lines]
    if config is not None and config.is_file():
        try:
            found += string_number_findings(canonicalize(parse_yaml(config.read_text("utf-8"), str(config)))[0])
        except (ConfigError, UnicodeDecodeError):  # the schema's error already says what cannot be read
            pass
    return found


def _refuse_unfixable_target(loaded: LoadedConfig, write: bool) -> None:
    if loaded.path is None:
        raise ConfigError(
            "there is no config file to fix: no --config was given and configs/config.yaml does not exist",
            hint="write the defaults to a file first, or pass --config PATH",
        )
    if write and _is_preset(loaded):
        raise ConfigError(
            f"{loaded.path.stem} is a preset shipped with xtts, not a file of yours to fix",
            hint=f"write it out first: xtts init --preset {loaded.path.stem} -o my.yaml, "
            "then xtts validate -c my.yaml --fix",
        )


def _is_preset(loaded: LoadedConfig) -> bool:
    from xtts_cli.config.preset_files import PRESETS_DIR

    return loaded.path is not None and loaded.path.resolve().parent == PRESETS_DIR


def _repair(loaded: LoadedConfig, fixable: list[Finding], write: bool, said: Callable[[str], None]) -> tuple[str, bool]:
    """(the diff of the repaired file, whether it was written): every fix applied to the text,
    comments and all; written atomically (a backup beside it) when `write`."""
    from xtts_cli.config.editing import apply_changes, free_backup, write_atomically
    from xtts_cli.config.loading import read_config_text

    _refuse_unfixable_target(loaded, write)
    assert loaded.text is not None and loaded.path is not None
    new_text = apply_changes(loaded.text, _everywhere(loaded, [f.fix for f in fixable if f.fix]), loaded.sources)
    diff = "".join(
        difflib.unified_diff(
            loaded.text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=f"{loaded.path}",
            tofile=f"{loaded.path} (fixed)",
        )
    )
    if not write and diff and _is_preset(loaded):  # the preview is of a file --fix will not write
        stem = loaded.path.stem
        said(
            f"note: {stem} is a preset shipped with xtts: to keep these fixes, xtts init --preset {stem} -o my.yaml, then xtts validate -c my.yaml --fix"
        )
    if not write or new_text == loaded.text:
        return diff, False
    import stat

    if not loaded.path.stat().st_mode & stat.S_IWUSR:  # the rename would replace it all the same
        raise ConfigError(
            f"{loaded.path} is read-only: --fix writes nothing over it",
            hint=f"make it writable (chmod u+w {shlex.quote(str(loaded.path))}) and run --fix again, or fix a copy",
        )
    if read_config_text(loaded.path) != loaded.text:  # saved by its user while the data was scanned
        raise ConfigError(
            f"{loaded.path} changed while validate read the data: --fix wrote nothing over that edit",
            hint=f"run xtts validate -c {shlex.quote(str(loaded.path))} --fix again",
        )
    try:
        backup = write_atomically(loaded.path, new_text, backup_as=free_backup(loaded.path), keep_links=True)
    except OSError as exc:  # a read-only folder: the config, not a temporary file of ours, named
        from xtts_cli.errors import XttsError

        raise XttsError(
            f"--fix cannot write {loaded.path} ({exc.strerror}): it and its backup go in {loaded.path.parent}",
            hint=f"fix a copy where you can write (cp {loaded.path} my.yaml; xtts validate -c my.yaml --fix), or "
            "drop --fix to see the fixes",
        ) from None
    said(f"wrote {loaded.path} (backup: {backup})")
    return diff, True


def _writable_fixes(loaded: LoadedConfig, findings: list[Finding]) -> list[Finding]:
    """`findings`, a fix this file's layout does not take (a key written through an anchor, a file in
    flow style) made none, its message saying why: validate had counted it "fixable with --fix", and
    --fix refused every fix for it."""
    from xtts_cli.config.editing import apply_changes

    if loaded.text is None or loaded.path is None or not any(f.fix for f in findings):
        return findings
    skipped: list = []
    try:
        apply_changes(loaded.text, _everywhere(loaded, [f.fix for f in findings if f.fix]), loaded.sources, skipped)
    except XttsError:  # a file the editor cannot read: --fix says so
        return findings
    why = {change.key: reason for change, reason in skipped}
    return [
        f.model_copy(update={"fix": None, "message": f"{f.message} (--fix cannot write it: {why[f.fix.key]})"})
        if f.fix is not None and f.fix.key in why
        else f
        for f in findings
    ]


def _everywhere(loaded: LoadedConfig, changes: list) -> list:
    """`changes`, each also made where the file writes its key under an older name."""
    from xtts_cli.config.loading import other_places, parse_yaml

    assert loaded.text is not None
    tree = parse_yaml(loaded.text, str(loaded.path))
    also = [
        change.model_copy(update={"key": place})
        for change in changes
        for place in other_places(tree, change.key)
        if place != loaded.sources.get(change.key)
    ]
    return changes + also


def validate_config(
    loaded: LoadedConfig,
    overrides: dict[str, Any],
    sets: Sequence[str] = (),
    *,
    fix: bool = False,
    dry_run: bool = False,
    said: Callable[[str], None] = lambda line: None,
    phase: Callable[[str], None] = lambda line: None,
) -> Validation:
    """Validate `loaded` (`resolve_config` of the file with the command line's `overrides` and
    `sets`, which a repaired file is read with again). `said` hears of a file written, `phase` of
    the scan."""
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.diagnosis.checkup import scan_findings, service_problem
    from xtts_cli.diagnosis.config_rules import check_config, nothing_to_scan, warmup_past_the_epochs
    from xtts_cli.training.settings import resolved_settings

    machine = probe_machine()
    loaded, inherited = taken_from_base(loaded)
    ruled = check_config(loaded, machine)
    result = Validation(loaded, inherited + ruled)
    scan = None
    if not nothing_to_scan(result.findings):
        phase("scanning the dataset (every audio file's header)")
        scan, result.dataset, found = scan_findings(loaded.config, machine)
        result.findings = result.findings + found
    result.findings = result.findings + parent_findings(loaded.config, scan, loaded.path)
    result.findings = result.findings + resume_findings(loaded.config, scan, loaded.path)
    result.findings = result.findings + run_dir_findings(loaded.config, loaded.path)
    # A dispatcher that does not answer: train waits on it (it had been valid here, an error in diagnose).
    result.findings = result.findings + [found for found in [service_problem(loaded.config)] if found is not None]
    result.settings = resolved_settings(loaded.config, machine, scan)
    total = result.settings["total_steps"] if result.settings else None
    result.findings = result.findings + warmup_past_the_epochs(loaded.config.training, total)
    result.findings = _command_line_values(result.findings, loaded.overridden, ruled, _file_alone(loaded, machine))
    result.findings = _writable_fixes(loaded, _as_written(loaded, result.findings))
    # Fixed after the scan, so a fix only the data shows (how it is resampled) is made too.
    fixable = [f for f in result.findings if f.fix is not None]
    if (fix or dry_run) and fixable:
        diff, written = _repair(loaded, fixable, fix and not dry_run, said)
        if written:  # what is left, read from the file as written
            again = validate_config(resolve_config(loaded.path, overrides, sets), overrides, sets, phase=phase)
            return Validation(again.loaded, again.findings, fixable, diff, again.dataset, again.settings)
        result.diff = diff
    return result


def _as_written(loaded: LoadedConfig, findings: list[Finding]) -> list[Finding]:
    """Each finding's first mention of a key the file writes under an older name, by that name (a
    file of `data.enable_xla` had been told of `training.enable_xla_compilation`, a key it lacks)."""
    renamed = {key: written for key, written in loaded.sources.items() if written != key}
    if not renamed:
        return findings
    said = []
    for finding in findings:
        message = finding.message
        for key, written in renamed.items():
            message = re.sub(rf"(?<![\w.]){re.escape(key)}(?![\w])", f"{written} ({key} now)", message, count=1)
        said.append(finding if message == finding.message else finding.model_copy(update={"message": message}))
    return said


# Findings on how the file writes a value (read from its text, whatever the command line sets): the
# file's to fix. A --set of the key had blamed the command line for the file's '8'.
FILE_TEXT_FINDINGS = {"number-as-string"}


def _command_line_values(
    findings: list[Finding], overridden: set[str], ruled: list[Finding], file_alone: Optional[set[tuple[str, str]]]
) -> list[Finding]:
    """A fix of a key the command line sets (--set, --data) is not the file's to make: written there,
    the command line would still win, and every run would fix it again. Nor is the fix of a config
    rule the file alone does not break (`file_alone`: the rules' (id, fixed key) for the file read
    without the command line; None when it has none): written, it would hold for this command's
    values only (a warm-up cut to fit a --set max_steps, in a file that trains for 300). `ruled`:
    the config rules' findings for the file with the command line."""
    rules = {(f.id, f.fix.key) for f in ruled if f.fix is not None}

    def why(f: Finding) -> Optional[str]:
        if f.fix is None or f.id in FILE_TEXT_FINDINGS:
            return None
        if f.fix.key in overridden:
            return "the value is the command line's: change it there"
        if file_alone is not None and (f.id, f.fix.key) in rules and (f.id, f.fix.key) not in file_alone:
            return "it follows from the command line's values, not the file's: change them there"
        return None

    return [
        f if why(f) is None else f.model_copy(update={"fix": None, "message": f"{f.message} ({why(f)})"})
        for f in findings
    ]


def _file_alone(loaded: LoadedConfig, machine) -> Optional[set[tuple[str, str]]]:
    """(id, fixed key) of each fixable config rule the file breaks read alone, without the command
    line's values; None when the command line sets nothing, or the file cannot be read alone."""
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.diagnosis.config_rules import check_config
    from xtts_cli.errors import XttsError

    if not loaded.overridden or loaded.path is None:
        return None
    try:
        alone = resolve_config(loaded.path)
        spec = loaded.config.training.init_from
        if spec is not None and alone.config.training.init_from is None:
            # A base named on the command line: what the file leaves unwritten is the base's, as it will
            # train. Its max_mel_frames too short for the file's clips had been blamed on the command line.
            alone = resolve_config(loaded.path, {"training.init_from": spec})
        alone, _ = taken_from_base(alone)
    except (XttsError, ValueError):
        return None
    return {(f.id, f.fix.key) for f in check_config(alone, machine) if f.fix is not None}


# What `xtts train` says of itself as it meets it (memory settings without a split: devices/placement.py),
# or refuses in words of its own (a multi-worker config without a cluster: its --worker-hosts set one).
SAID_WHILE_TRAINING = frozenset(
    {"memory-isolation-without-split", "memory-limit-without-split", "multi-worker-cluster"}
)


# Notes `validate` gives that training says too: --data over a preset's three datasets had trained on
# the one folder without a word.
NOTED_WHILE_TRAINING = frozenset({"data-flag-over-datasets"})


def training_advice(
    loaded: LoadedConfig, run_dir: Optional[Path] = None
) -> tuple[list[tuple[str, str]], Optional[str]]:
    """The config's warnings by the rules `validate` checks (the config alone: no scan), and the
    notes in NOTED_WHILE_TRAINING, one (label, line) each, for `xtts train` to say as it starts into
    `run_dir` (--run-dir); and, where the file can fix some, how."""
    from xtts_cli.config.loading import config_variant
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.diagnosis.config_rules import check_config
    from xtts_cli.run.directory import chosen_run_dir

    machine = probe_machine()
    loaded, _ = taken_from_base(loaded)  # a base's text front end, say, as the run will train it
    # The run it writes, which a rule reads (a resume starts from its checkpoint).
    trained = config_variant(loaded.config, {"training.run_dir": str(chosen_run_dir(loaded, run_dir))})
    warned = check_config(dataclasses.replace(loaded, config=trained), machine)
    warnings = [f for f in warned if f.severity == "warning" and f.id not in SAID_WHILE_TRAINING]
    from xtts_cli.config.preset_files import PRESETS_DIR

    # What `validate --fix` would write: not a key the command line sets, nor a fix only its values call for.
    fixable = sum(
        f.fix is not None
        for f in _command_line_values(warnings, loaded.overridden, warnings, _file_alone(loaded, machine))
    )
    repair = None
    # Not a preset's file, nor a run's own config.yaml: the record of what the run trained with.
    yours = (
        loaded.path is not None
        and loaded.path.resolve().parent != PRESETS_DIR
        and not _own_config_of_a_run(loaded.path)
    )
    if fixable and yours:
        repair = f"xtts validate -c {shlex.quote(str(loaded.path))} --fix repairs {fixable} of these in the config file"
    noted = [("note", f"{f.id}: {f.message}") for f in warned if f.id in NOTED_WHILE_TRAINING]
    return [("warning", f"{f.id}: {f.message}") for f in warnings] + noted, repair


def _own_config_of_a_run(path: Path) -> bool:
    from xtts_cli.run.directory import own_config

    return own_config(path.parent) == path
