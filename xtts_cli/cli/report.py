"""`xtts report`: one archive with everything a bug report needs."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from xtts_cli.cli.options import ConfigOption, DataOption, SetOption, VerboseOption


def report(
    config: ConfigOption = None,
    set_values: SetOption = None,
    data: DataOption = None,
    run_dir: Annotated[
        Optional[Path],
        typer.Option("--run-dir", "-r", metavar="DIR", help="A run to add: its config, last metrics and watch lines."),
    ] = None,
    out: Annotated[
        Optional[Path],
        typer.Option("--out", "-o", metavar="FILE", help="The archive. Default: xtts-report-TIME.tar.gz"),
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="diagnose untimed, profiles of 4 batches and steps: a minute.")
    ] = False,
    no_redact: Annotated[
        bool,
        typer.Option(
            "--no-redact",
            help="Keep home paths, the dataset's file names and its speakers' names (secrets are never kept).",
        ),
    ] = False,
    verbose: VerboseOption = False,
) -> None:
    """Write one archive to attach to a bug report: the machine, the resolved config, validate,
    diagnose, a short profile-pipeline and profile-step, a run's record (run.json), last metrics and warnings.

    Paths under your home, the dataset's name, its file names and its speakers' names are replaced unless
    --no-redact; no environment variable that looks like a secret, nor a URL's user and password, is ever
    included. Paths outside your home are kept. Audio, transcripts and checkpoints are not included.

    Examples:

        xtts report -c my.yaml -r runs/my-voice

        xtts report -c speak-cpu --data /data/my-voice --quick
    """
    from xtts_cli.cli.output import Phases, console
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.diagnosis.report import redactor, speaker_names, write_report

    fallback = ""  # why the run's own config is not the one the commands ran on
    if run_dir is not None:
        _a_run(run_dir)
        if config is None:  # what the run trained with, not the built-in defaults
            config, fallback = _runs_config(run_dir)
    args = [*(["-c", str(config)] if config else []), *(f"--set={value}" for value in set_values or ())]
    args += ["--data", str(data)] if data else []
    loaded = resolve_config(config, {"data.dataset_path": str(data) if data else None}, set_values or ())
    settings = loaded.config
    datasets = _dataset_roots(settings.data) + _runs_datasets(run_dir)
    environ = dict(os.environ)
    out = _out_file(out)
    with Phases() as phase:
        sections = _gathered(args, settings, run_dir=run_dir, quick=quick, environ=environ, out=out, phase=phase)
        if fallback:  # in the archive's README.txt too: its readers had not known what the commands ran on
            next(section for section in sections if section.name == "config.yaml").notes.append(fallback)
        people = speaker_names(sections)
        clean = redactor(
            home=str(Path.home()), datasets=datasets, environ=environ, redact=not no_redact, speakers=people
        )
        kept_old = _kept_old(out)
        # An earlier report is kept, as benchmark keeps an earlier --out.
        size = write_report(sections, out, clean, keep_old=kept_old)
    kept = (
        "home paths, file and speaker names kept (--no-redact)"
        if no_redact
        else "home, dataset, file and speaker names replaced"
    )
    console().print(
        f"wrote {out} ({size / 1024:.0f} KiB; {kept}; no secret variables or URL passwords)"
        + (f"; the earlier one is {kept_old}" if kept_old else "")
    )
    _refuse_all_failed(sections)


def _gathered(args: list[str], settings, *, run_dir, quick: bool, environ: dict[str, str], out: Path, phase):
    """The report's parts (`gather`); a Ctrl-C meanwhile says no report was written."""
    import yaml

    from xtts_cli.config.editing import with_absolute_paths
    from xtts_cli.diagnosis.report import gather

    # Each command's line as it ends, the next one named meanwhile (process by process: minutes).
    following = {"config.yaml": "validate", "validate.json": "diagnose", "diagnose.json": "profile-pipeline"}
    following["profile-pipeline.json"] = "profile-step"

    def done(section) -> None:
        phase.end()
        _said([section])
        if section.name in following:
            phase(f"{following[section.name]}, in a process of its own")

    try:
        return gather(
            args,
            # Paths absolute, as a run's config.yaml holds them: each is then redacted as a path.
            yaml.safe_dump(with_absolute_paths(settings.model_dump(mode="json")), sort_keys=False, allow_unicode=True),
            run_dir=run_dir,
            quick=quick,
            environ=environ,
            done=done,
        )
    except KeyboardInterrupt:  # said, as benchmark says what it kept
        phase.end()
        earlier = f"; {out} is the earlier report, as it was" if out.exists() else ""
        sys.stderr.write(f"note: no report written{earlier}\n")
        raise


def _out_file(out: Optional[Path]) -> Path:
    """The archive's path (default: xtts-report-TIME.tar.gz here), once its folder is known to take
    it: said now, not after minutes of profiling."""
    from xtts_cli.config.editing import can_write
    from xtts_cli.errors import XttsError

    if out is not None and str(out) == "-":
        raise XttsError("--out -: the report is an archive, not text for standard output", hint="pass -o FILE.tar.gz")
    out = out or Path(f"xtts-report-{time.strftime('%Y%m%d-%H%M%S')}.tar.gz")
    # A folder not yet there is made, as synthesize's and export's are; one that cannot be is refused now.
    can_write(out, "--out", name="xtts-report.tar.gz")
    if out.is_file() and not _a_report(out):  # a file of the user's: its .bak would be the one copy left
        raise XttsError(
            f"--out {out} is a file of yours, not an earlier xtts report: a report is not written over it",
            hint=f"pass -o {out.with_suffix('.tar.gz').name if out.suffix != '.gz' else 'report.tar.gz'}, or move it",
        )
    return out


def _a_report(path: Path) -> bool:
    """Whether `path` is an archive `xtts report` wrote (its README.txt first): any gzip file had been
    taken for one, and a user's own backup.tar.gz moved to .bak, then written over by the next report."""
    import tarfile

    try:
        with tarfile.open(path, "r:gz") as archive:
            first = archive.next()
            return first is not None and first.name == "xtts-report/README.txt"
    except PermissionError:
        return True  # not read here: can_write has said what it can of it
    except (OSError, tarfile.TarError, EOFError):
        return False


def _kept_old(out: Path) -> Optional[Path]:
    """Where the earlier report at `out` goes: out.bak, or the first of .bak.1, .bak.2 ... free where
    out.bak is no report of ours."""
    if not out.is_file():
        return None
    kept = out.with_name(out.name + ".bak")
    number = 0
    while kept.exists() and not (kept.is_file() and _a_report(kept)):
        number += 1
        kept = out.with_name(f"{out.name}.bak.{number}")
    return kept


def _refuse_all_failed(sections) -> None:
    """Exit 1, naming a reason, when every command the report ran failed: an archive of the
    environment, the config and their errors alone."""
    from xtts_cli.errors import XttsError

    ran = [section for section in sections if section.exit_code is not None]
    failed = [section for section in ran if not section.reported]
    if ran and len(failed) == len(ran):
        named = next((s for s in failed if s.error), failed[0])
        why = named.error or f"exit {named.exit_code}"
        raise XttsError(
            f"every command the report ran failed ({named.name}: {why}): the archive holds the environment, "
            "the config and what each command said",
            hint="fix that and run xtts report again",
        )


def _said(sections) -> None:
    """A line for each part: its time, and for one that failed its exit status and error, as it
    is on this machine (the archive's copy is the redacted one)."""
    from rich.markup import escape

    from xtts_cli.cli.output import console

    for section in sections:
        failed = section.exit_code not in (None, 0)
        why = section.why
        console().print(
            f"{'[yellow]' if failed else ''}{section.name}{'[/]' if failed else ''}: {section.seconds:.1f} s"
            + (f" (exit {section.exit_code}{': ' + escape(why) if why else ''})" if failed else "")
        )
        if section.exit_code is None:  # a run's file: a damaged record said here, not only in README.txt
            for note in section.notes:
                console().print(f"  note: {escape(note)}")


def _a_run(run_dir: Path) -> None:
    """--run-dir names a run directory, even a half-written one (what a bug report is for), not a
    typo that would add an empty section."""
    from xtts_cli.errors import XttsError
    from xtts_cli.run.files import RunDir

    run = RunDir(run_dir)
    if not run_dir.is_dir():
        what = "does not exist" if not run_dir.exists() else "is a file"
        raise XttsError(f"--run-dir {run_dir} {what}", hint="pass the directory of an `xtts train` run")
    if not any(path.exists() for path in (run.config_file, run.run_file, run.path / "metrics.jsonl")):
        raise XttsError(
            f"--run-dir {run_dir} is not an xtts run directory (no config.yaml, run.json nor metrics.jsonl)",
            hint="pass the directory of an `xtts train` run",
        )


def _runs_config(run_dir: Path) -> tuple[Optional[Path], str]:
    """The run's own config.yaml for the report's commands, or None (the built-in defaults) and why,
    said, where it no longer loads: a damaged run is what a bug report is for, and it had been refused."""
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.errors import XttsError
    from xtts_cli.run.directory import own_config

    own = own_config(run_dir)
    if own is None:
        from xtts_cli.run.files import RunDir

        if not RunDir(run_dir).config_file.exists():  # a run whose config.yaml was deleted: said, as a damaged one is
            why = (
                f"{run_dir} has no config.yaml: the report's commands run on the built-in defaults (or pass -c); "
                "the run's files are added as they are"
            )
            sys.stderr.write(f"note: {why}\n")
            return None, why
        return None, ""
    try:
        resolve_config(own)
    except XttsError as error:
        why = (
            f"{own} does not load ({error.lines[0]}): the report's commands run on the built-in defaults "
            "(or pass -c); the run's files are added as they are"
        )
        sys.stderr.write(f"note: {why}\n")
        return None, why
    return own, ""


def _runs_datasets(run_dir: Optional[Path]) -> list[str]:
    """The datasets of the run's own config, which -c may not name: as its file writes them (loading
    or not), and as it loads."""
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.errors import XttsError
    from xtts_cli.run.directory import own_config

    own = own_config(run_dir) if run_dir is not None else None
    if own is None:
        return []
    try:
        return _written_datasets(own) + _dataset_roots(resolve_config(own).config.data)
    except XttsError:
        return _written_datasets(own)


def _written_datasets(config_file: Path) -> list[str]:
    """The dataset paths a config file writes, read as YAML alone: a run's config that no longer
    loads had left its dataset's path and name unredacted."""
    import yaml

    try:
        tree = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    data = tree.get("data") if isinstance(tree, dict) else None
    if not isinstance(data, dict):
        return []
    listed = [entry.get("path") for entry in data.get("datasets") or [] if isinstance(entry, dict)]
    found = [data.get("dataset_path"), data.get("eval_dataset_path"), *listed]
    return [spelling for path in found if isinstance(path, str) and path.strip() for spelling in _spellings(path)]


def _spellings(path: str) -> list[str]:
    """A dataset path as the config writes it (absolute) and as the disk has it (links resolved): a
    dataset given through a link had been redacted only as the second, and kept as the first."""
    given = Path(path).expanduser()
    return [str(given.absolute()), str(given.resolve())]


def _dataset_roots(data) -> list[str]:
    """The folders of a data section's datasets, for the report's redaction of their file names."""
    from xtts_cli.data.scan import dataset_root

    written = [data.dataset_path, data.eval_dataset_path, *(c.path for c in data.datasets)]
    return [str(dataset_root(data)), *(spelling for path in written if path for spelling in _spellings(path))]
