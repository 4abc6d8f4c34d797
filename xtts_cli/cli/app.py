"""The `xtts` command: wires one module per command; nothing else lives here.

Heavy libraries (TensorFlow, pydantic) are imported inside the command functions so that
`xtts --help` stays well under 0.3 s.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Annotated, Optional

import typer

from xtts_cli import __version__
from xtts_cli.cli import (
    benchmark,
    data_service,
    diagnose,
    export,
    init,
    profile_pipeline,
    profile_step,
    report,
    serve,
    synthesize,
    train,
    validate,
    vocode,
)
from xtts_cli.cli.options import VerboseOption, XttsCommand, XttsGroup

app = typer.Typer(
    name="xtts",
    cls=XttsGroup,
    help="Train an XTTS-style TTS model in TensorFlow with the GPU kept busy: one command, one validated config.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"xtts {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        Optional[bool],
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = None,
    verbose: VerboseOption = False,
) -> None:
    """Train an XTTS-style TTS model in TensorFlow with the GPU kept busy.

    Start with `xtts init speak-cpu` or `xtts train -c tiny-cpu`; every command takes
    `--help`. The guides and the full reference are in `docs/` (`mkdocs serve`).
    """


# Each command parses as XttsCommand: a stray argument is named as the option it was meant for.
for name, command in (
    ("init", init.init),
    ("train", train.train),
    ("validate", validate.validate),
    ("diagnose", diagnose.diagnose),
    ("profile-pipeline", profile_pipeline.profile_pipeline),
    ("profile-step", profile_step.profile_step),
    ("benchmark", benchmark.benchmark),
    ("synthesize", synthesize.synthesize),
    ("export", export.export),
    ("vocode", vocode.vocode),
    ("serve", serve.serve),
    ("report", report.report),
):
    app.command(name, cls=XttsCommand)(command)
app.add_typer(data_service.app, name="data-service")


def main() -> None:
    """Entry point: errors a user can fix, and TensorFlow's out-of-memory, kernel and device errors,
    become one line plus a hint (and, with --json, a JSON object on stdout); others still raise."""
    from xtts_cli.errors import Terminated, XttsError, from_tensorflow
    from xtts_cli.quiet import quiet_tensorflow_logs

    quiet_tensorflow_logs()
    _streams_that_take_any_text()
    # Training's loop, serve, benchmark and data-service set handlers of their own while they run.
    signal.signal(signal.SIGTERM, _terminate)
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        # A script's background job starts with SIGINT ignored. Training's loop honours a kill -INT all
        # the same, so its start-up does too: one sent there had been lost, and the run trained on (exit 0).
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGHUP) != signal.SIG_IGN:  # ignored: `nohup`, to outlive the terminal
        signal.signal(signal.SIGHUP, _terminate)
    undecodable = _not_utf8(sys.argv[1:])
    if undecodable is not None:  # before anything is written: a run made there had been left half-made
        report_error(undecodable, json_output="--json" in sys.argv[1:])
        sys.exit(undecodable.exit_code)
    try:
        app(standalone_mode=True)
    except Terminated as stop:
        _say_interrupted(f"interrupted ({signal.Signals(stop.signum).name})", 128 + stop.signum)
        sys.exit(128 + stop.signum)
    except SystemExit as exc:
        # Typer turns a Ctrl-C outside the training loop (which says what it saved) into exit 130
        # without a word: one line, so a user knows it stopped because they asked it to.
        cause = getattr(exc.__context__, "__cause__", None)
        if exc.code == 130 and isinstance(cause, KeyboardInterrupt):
            _say_interrupted(f"interrupted (Ctrl-C){': ' + str(cause) if str(cause) else ''}", 130)
        raise
    except Exception as exc:
        error = exc if isinstance(exc, XttsError) else _damaged_store(exc) or _output_full(exc) or from_tensorflow(exc)
        if error is None:
            raise
        report_error(_hinted_for_the_command(error), json_output="--json" in sys.argv[1:])
        if os.environ.get("XTTS_DEBUG") == "1":
            raise
        sys.exit(error.exit_code)


def _not_utf8(arguments: list[str]):
    """The error for a command-line argument whose bytes are not UTF-8 (a folder copied from an old
    archive or a FAT disk, `caf\\xe9`): the run's files record paths in UTF-8, and writing one had
    ended in a traceback after the run directory was made. None when all are."""
    from xtts_cli.errors import XttsError

    for argument in arguments:
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError:
            shown = argument.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            return XttsError(
                f"{shown} is not UTF-8 (its bytes shown as \\xNN): xtts records the paths it is given in UTF-8",
                hint="rename it in UTF-8 (convmv -f latin1 -t utf8 --notest PATH renames a file or folder), then "
                "run the same command",
            )
    return None


def _streams_that_take_any_text() -> None:
    """stdout as stderr is: a character its encoding lacks (PYTHONIOENCODING=ascii, a path with "é")
    written as an escape, not a traceback after the work is done; either closed (`>&-`), /dev/null."""
    if sys.stderr is None:  # `2>&-`: every command had ended at its first progress line, exit 1, unsaid
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - the process's, for its life
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - the process's stdout, for its life
    elif hasattr(sys.stdout, "reconfigure") and sys.stdout.errors == "strict":
        sys.stdout.reconfigure(errors="backslashreplace")
    from xtts_cli.cli.output import NamedStdout, SparedStderr

    sys.stdout, sys.stderr = NamedStdout(sys.stdout), SparedStderr(sys.stderr)


def _terminate(signum: int, frame: object) -> None:
    from xtts_cli.errors import Terminated

    raise Terminated(signum)


def _say_interrupted(said: str, code: int) -> None:
    """Why the command stopped, on stderr; with --json, the reader of stdout gets its {"error", "hint",
    "exit_code"} object (`hint` null: the stop was asked for)."""
    from xtts_cli.cli.output import print_json, quiet_streams, stream_gone

    try:
        sys.stderr.write(said + "\n")
        sys.stderr.flush()
        if "--json" in sys.argv[1:]:
            print_json({"error": said, "hint": None, "exit_code": code})
            sys.stdout.flush()
    except OSError as exc:  # the terminal that sent SIGHUP, or the pipe's reader, is gone
        if not stream_gone(exc):
            raise
        quiet_streams()


def report_error(error, json_output: bool) -> None:
    """The error's lines and hint on stderr; with `json_output`, also {"error", "hint", "exit_code"}
    on stdout. The debug hint only where a traceback was hidden (a translated error)."""
    from xtts_cli.cli.output import error_lines, print_json

    error_lines(error.lines, error.hint)
    if error.translated and os.environ.get("XTTS_DEBUG") != "1":
        sys.stderr.write("(set XTTS_DEBUG=1 for the full traceback)\n")
    if json_output:
        try:
            print_json({"error": "; ".join(error.lines), "hint": error.hint, "exit_code": error.exit_code})
        except OSError:  # stdout is what failed (a full disk under it): stderr has said it
            pass


def _damaged_store(exc: BaseException):
    """A feature store shard that failed its checksum mid-epoch, found, removed and named (TensorFlow names no
    file); None for any other error. TensorFlow is in already when a DataLossError comes."""
    if type(exc).__name__ != "DataLossError":
        return None
    from xtts_cli.data.feature_cache import damaged_store_error

    return damaged_store_error(exc)


# Commands that write files of their own, not a run or a feature store: a full disk's hint for a run
# ("point the run or the store at another one") had been given to `xtts init -o`.
_WRITES_FILES = frozenset({"init", "validate", "synthesize", "vocode", "export", "report"})


def _hinted_for_the_command(error):
    """`error`, a full disk's generic hint made the command's own where it writes files, not a run."""
    from xtts_cli.errors import DISK_FULL_HINT

    command = next((argument for argument in sys.argv[1:] if not argument.startswith("-")), "")
    if error.hint == DISK_FULL_HINT and command in _WRITES_FILES:
        error.hint = "free space on that disk (or raise its quota), or write to another disk"
    return error


def _output_full(exc: BaseException):
    """A full disk met writing stdout (`xtts ... > file` on a full disk, `> /dev/full`), named so (the
    write names no file, and the run's hint does not apply); None for any other error."""
    from xtts_cli.cli.output import STDOUT_NAME
    from xtts_cli.errors import DiskFullError

    if not isinstance(exc, OSError) or exc.filename != STDOUT_NAME:
        return None
    return DiskFullError(
        f"the disk is full: writing the output (stdout) failed ({exc.strerror})",
        hint="free space on the disk the output is redirected to, or redirect it to another",
    )


if __name__ == "__main__":
    main()
