"""Options shared by several commands, defined once so they read the same everywhere."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Mapping
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from typer.core import TyperCommand, TyperGroup

ConfigOption = Annotated[
    Optional[Path],
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="YAML config file, or a preset's name (tiny-cpu, speak-cpu, voices-cpu, adapt-cpu, vocoder-cpu, "
        "rtx4090, base-gpu, adapt-gpu, vocoder-gpu, dual-gpu; `xtts init` writes one out). Default: "
        "configs/config.yaml when it exists, else built-in defaults.",
        show_default=False,
    ),
]
SetOption = Annotated[
    Optional[list[str]],
    typer.Option(
        "--set",
        "-s",
        metavar="KEY=VALUE",
        help="Set any config key, dotted as in docs/config.md (`--set data.batch_size=8`); repeatable, "
        "checked by the schema like the file.",
        show_default=False,
    ),
]


def config_flag(*names: str, key: str, help: str, **options: Any) -> Any:
    """A flag that is a shortcut for one config key (`--batch-size` for data.batch_size): the key is
    declared here once, beside the flag, and `flag_overrides` reads it back. Its help names the key
    where it fits the help column."""
    shown = f"{help} ({key})." if len(key) < 28 else f"{help}."
    option = typer.Option(*names, help=shown, show_default=False, **options)
    option.config_key, option.flag_names = key, names
    return option


def flag_overrides(command: Callable[..., Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """{config key: value} for every `config_flag` parameter of `command` given in `values` (the
    command's arguments); enum members become their values, flags not given (None) are left out."""
    import typing

    from xtts_cli.errors import UsageError

    overrides: dict[str, Any] = {}
    for name, hint in typing.get_type_hints(command, include_extras=True).items():
        metas = [meta for meta in getattr(hint, "__metadata__", ()) if getattr(meta, "config_key", None)]
        key, value = (metas[0].config_key if metas else None), values.get(name)
        if key is not None and isinstance(value, str) and not value.strip():  # `--init-from "$BASE"`, BASE unset
            flag = metas[0].flag_names[0]
            raise UsageError(f"{flag} is empty", hint=f"give a value for {key}, or leave {flag} out")
        if key is not None and value is not None:
            overrides[key] = value.value if isinstance(value, Enum) else value
    return overrides


DataGpuOption = Annotated[
    Optional[int],
    config_flag(
        "--data-gpu",
        key="devices.data_gpu",
        help="GPU index (as nvidia-smi shows) for feature work",
        min=0,
        metavar="GPU",
        rich_help_panel="Devices (GPUs, machines)",
    ),
]
ModelGpuOption = Annotated[
    Optional[int],
    config_flag(
        "--model-gpu",
        key="devices.model_gpu",
        help="GPU index (as nvidia-smi shows) for the model",
        min=0,
        metavar="GPU",
        rich_help_panel="Devices (GPUs, machines)",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]
BatchSizeOption = Annotated[
    Optional[int], config_flag("--batch-size", key="data.batch_size", help="Clips a step trains on", min=1, metavar="N")
]
NumWorkersOption = Annotated[
    Optional[str],
    typer.Option(
        "--num-workers", metavar="N", help="Override data.num_workers (a number or 'auto').", show_default=False
    ),
]
DataOption = Annotated[
    Optional[str],
    typer.Option(
        "--data",
        "-d",
        metavar="DIR",
        help="Dataset root: a corpus folder in any layout `docs/data.md` lists (data.dataset_path).",
        show_default=False,
    ),
]
ValData = Annotated[
    Optional[str],
    config_flag(
        "--val-data",
        key="data.eval_dataset_path",
        help="Validation dataset root",
        metavar="DIR",
        rich_help_panel="Data",
    ),
]
# Older names of the same flags, accepted and not shown: `train_main.py --train-data`, the
# profilers' `--data-path`, `--num-steps`, `--num-batches`, synthesize's `--checkpoint`.
# The most batches or steps a measurement takes: more is hours of timing no question needs.
MAX_COUNT = 100_000


def at_most_count(value: Optional[int]) -> Optional[int]:
    """A count of batches or steps to time, up to `MAX_COUNT` (a callback: a range would widen every help)."""
    if value is not None and value > MAX_COUNT:
        raise typer.BadParameter(f"{value} is more than {MAX_COUNT:,}: hours of timing; a few hundred tell as much")
    return value


def _batches(help_text: str) -> typer.models.OptionInfo:
    return typer.Option(
        "--batches", "-n", min=2, callback=at_most_count, metavar="N", help=help_text, show_default=False
    )


BatchesOption = Annotated[Optional[int], _batches("Batches to time. Default: profiling.num_batches (50).")]
# diagnose times the model over as many steps as the pipeline's batches: a help of "batches" alone had
# hidden minutes of model steps on a CPU.
DiagnoseBatchesOption = Annotated[
    Optional[int],
    _batches(
        "Batches the pipeline is timed over, and as many model steps on resident batches (minutes on a CPU; "
        "--quick times neither). Default: profiling.num_batches (50)."
    ),
]
TrainDataAlias = Annotated[Optional[str], typer.Option("--train-data", hidden=True)]
NumBatchesAlias = Annotated[Optional[int], typer.Option("--num-batches", min=2, callback=at_most_count, hidden=True)]
NumStepsAlias = Annotated[Optional[int], typer.Option("--num-steps", min=2, callback=at_most_count, hidden=True)]
MaxStepsAlias = Annotated[Optional[int], typer.Option("--max-steps", min=1, hidden=True)]
DataPathAlias = Annotated[Optional[str], typer.Option("--data-path", hidden=True)]
RunDirOption = Annotated[
    Optional[Path],
    typer.Option(
        "--run-dir",
        "-r",
        metavar="DIR",
        help="Run directory of an `xtts train` run (its latest checkpoint is used).",
        show_default=False,
    ),
]
VocoderOption = Annotated[
    Optional[str],
    typer.Option(
        "--vocoder",
        metavar="RUN_DIR|griffin-lim",
        help="What turns the mel frames into audio: a vocoder run (`model.kind: vocoder`) or griffin-lim. "
        "Default: the run's own vocoder (RUN_DIR/vocoder) when it has one, else griffin-lim.",
        show_default=False,
    ),
]
StepOption = Annotated[
    Optional[int],
    typer.Option(
        "--step",
        min=0,
        metavar="N",
        help="Speak with this step's checkpoint (one the run keeps) instead of the latest: how the run sounded then.",
        show_default=False,
    ),
]
CheckpointAlias = Annotated[Optional[Path], typer.Option("--checkpoint", hidden=True)]
VerboseOption = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        help="Show TensorFlow's own logging (quiet by default; XTTS_DEBUG=1 shows it too).",
        callback=lambda value: show_tensorflow_logs() if value else None,
        is_eager=True,
    ),
]


def show_tensorflow_logs() -> None:
    """`--verbose`: TensorFlow's C++ and Python logging as TensorFlow sets it (called before it loads)."""
    import logging
    import os

    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
    logging.getLogger("tensorflow").setLevel(logging.NOTSET)


def given_once(what: str, **values: Any) -> Any:
    """The value of a flag given under any of its names (`data=..., train_data=...`), or None; two
    different values are one error naming both (a usage error: exit 2)."""
    from xtts_cli.errors import UsageError

    given = {name: value for name, value in values.items() if value is not None}
    for name, value in given.items():
        if isinstance(value, str) and not value.strip():  # `--data "$DATA"` with DATA unset
            flag = f"--{name.replace('_', '-')}"
            raise UsageError(f"{flag} is empty", hint=f"give {what}'s folder, or leave {flag} out")
    if len({str(value) for value in given.values()}) > 1:
        flags = " and ".join(f"--{name.replace('_', '-')} {value}" for name, value in given.items())
        raise UsageError(
            f"{what} is given twice: {flags}", hint=f"give it once, as --{next(iter(values)).replace('_', '-')}"
        )
    return next(iter(given.values()), None)


def run_dir_given(
    run_dir: Optional[Path],
    checkpoint: Optional[Path],
    *,
    to: str,
    example: str,
    vocoder: Optional[str] = None,
    speaks: bool = True,
) -> Path:
    """The run directory from --run-dir (or its old name --checkpoint); none is one error saying
    what the command needed it `to` do, with an `example`. A `vocoder` (--vocoder) that is no vocoder
    run, or hears other features than the run, is refused here too, before TensorFlow loads."""
    from xtts_cli.errors import XttsError
    from xtts_cli.kinds import vocoding_run
    from xtts_cli.run.directory import has_trained
    from xtts_cli.run.files import VOCODER_DIR, check_vocoder_spec, is_griffin_lim, read_run

    given = given_once("the run directory", run_dir=run_dir, checkpoint=checkpoint)
    if given is None:
        raise XttsError(
            f"no run to {to}: pass --run-dir DIR (-r), the folder `xtts train` wrote", hint=f"e.g. {example}"
        )
    config, _ = read_run(Path(given))  # not a run: said before TensorFlow loads (seconds), not after
    check_vocoder_spec(vocoder)
    if vocoder is not None and not is_griffin_lim(vocoder):
        vocoding_run(Path(vocoder), config.data, acoustic_run=f"the run {given}", named=f"--vocoder {vocoder}")
    own = Path(given) / VOCODER_DIR
    # The one it speaks with (`speaks`: not for --list-speakers, which makes no sound): refused here too.
    if speaks and vocoder is None and own.is_dir() and has_trained(own):
        named = f"the run's own vocoder {own} (used when --vocoder is not given)"
        vocoding_run(own, config.data, acoustic_run=f"the run {given}", named=named)
    return Path(given)


# Formats sox converts a WAV into: another name (notes.txt) is no audio to convert to.
AUDIO_FORMATS = frozenset({".mp3", ".flac", ".ogg", ".opus", ".aiff", ".aif", ".au"})


def wav_out(path: Path, flag: str = "--out") -> None:
    """Refuse a file to write WAV audio into whose name says it holds another format (x.mp3)."""
    from xtts_cli.errors import XttsError, quoted

    if str(path) == "-":
        return
    if path.suffix.lower() == ".wav":
        _not_other_data(path, flag)
        return
    wav = path.with_suffix(".wav")
    convert = f" (then convert it: sox {quoted(wav)} {quoted(path)})" if path.suffix.lower() in AUDIO_FORMATS else ""
    raise XttsError(f"{flag} {path}: xtts writes WAV audio", hint=f"name it {wav}{convert}")


def _not_other_data(path: Path, flag: str) -> None:
    """Refuse a file named .wav that holds no WAV audio (notes saved under a wrong name, a tar): the
    audio would replace it, and it would be lost. An earlier run's WAV is written over, as it was."""
    from xtts_cli.errors import XttsError

    try:
        with path.open("rb") as handle:
            head = handle.read(4)
    except OSError:
        return  # a new file; a folder or an unreadable one is named as it is written
    if head and head not in (b"RIFF", b"RIFX", b"RF64"):
        raise XttsError(
            f"{flag} {path} exists and holds no WAV audio: writing would replace it",
            hint="name another file, or move this one away first",
        )


def keeps_the_inputs(inputs: Mapping[Optional[Path], str], outputs: list[Path], flag: str, writes: str) -> None:
    """Refuse an output that is one of the command's inputs (`inputs`: path -> what it is): what the
    command `writes` would replace it."""
    from xtts_cli.errors import XttsError

    given = {path.resolve(): f"{what} {path}" for path, what in inputs.items() if path is not None}
    for output in outputs:
        replaced = given.get(output.resolve()) if str(output) != "-" else None
        if replaced is not None:
            raise XttsError(f"{flag} would write over {replaced} with {writes}", hint="write to another file or folder")


def files_can_go(out_dir: Path, names: list[str], flag: str = "--out-dir") -> None:
    """Refuse, before any work, an --out-dir that holds a folder (or a name that is not a place: `-`)
    where a file of `names` goes: found as its file was written, the work before it was left half
    done and its index unwritten."""
    from xtts_cli.errors import XttsError

    if str(out_dir) == "-":
        raise XttsError(f"{flag} - names a folder, not stdout", hint=f"pass {flag} DIR, a folder to write into")
    taken = [name for name in names if (out_dir / name).is_dir()]
    if taken:
        listed = ", ".join(taken[:3]) + (f" and {len(taken) - 3} more" if len(taken) > 3 else "")
        raise XttsError(
            f"{flag} {out_dir}: {listed} {'is a folder' if len(taken) == 1 else 'are folders'} there, where a file goes",
            hint=f"move {'it' if len(taken) == 1 else 'them'} out of the way, or pass another {flag}",
        )


def say_written_over(out_dir: Path, targets: list[Path], were: str = "are") -> list[str]:
    """A note naming the files of an earlier call in `out_dir` that `targets` write over ("were": once
    done); their names are returned."""
    earlier = [target.name for target in targets if target.exists()]
    if earlier:
        shown = ", ".join(earlier[:3]) + (", ..." if len(earlier) > 3 else "")
        sys.stderr.write(f"note: {len(earlier)} file(s) in {out_dir} {were} written over ({shown})\n")
    return earlier


class XttsGroup(TyperGroup):
    """A group whose usage errors (`xtts trian`, `xtts train --stpes 3`, a value a type refuses) read
    as every other error does, `error:` and `hint:` lines, not typer's boxed panel."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        with _usage_in_one_line(ctx.command_path):
            return super().parse_args(ctx, args)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        ctx.meta[_RESOLVED] = name
        return name, command, rest

    def invoke(self, ctx: Any) -> Any:  # the command's name, then its own options, are read in here
        with _usage_in_one_line(lambda: " ".join(filter(None, (ctx.command_path, ctx.meta.get(_RESOLVED))))):
            return super().invoke(ctx)


_RESOLVED = "xtts.command"  # the command a group's line named, where its usage error has no context of its own


@contextlib.contextmanager
def _usage_in_one_line(asked: Any):
    """`asked`: the command the line reaches (or a callable giving it, once it is known), named in
    the hint where click's error carries no context (an option's value missing at the line's end)."""
    try:
        yield
    except Exception as exc:
        # NoArgsIsHelpError is the help a bare group prints, no error.
        if not _is_usage_error(exc) or type(exc).__name__ == "NoArgsIsHelpError":
            raise
        _say_usage_error(exc, asked() if callable(asked) else asked)
        raise typer.Exit(2) from exc


def _is_usage_error(error: Optional[BaseException]) -> bool:
    """Whether `error` is click's UsageError, or that of the copy of click that Typer 0.28 carries."""
    return any(kind.__name__ == "UsageError" for kind in type(error).__mro__) and hasattr(error, "format_message")


def _say_usage_error(usage: Any, reached: str) -> None:
    """`usage` on stderr with the help that lists what the command takes; with --json, the reader of
    stdout gets its {"error", "hint", "exit_code"} object (typer's box went to stderr alone)."""
    from xtts_cli.cli.output import error_lines, print_json, quiet_streams, stream_gone

    said = usage.format_message()
    asked = getattr(getattr(usage, "ctx", None), "command_path", None) or reached
    command = getattr(getattr(usage, "ctx", None), "command", None)
    takes = "the commands and options" if hasattr(command, "commands") else "its options and what each takes"
    hint = f"{asked} --help lists {takes}"
    try:
        error_lines(said.splitlines() or [said], hint)
        if "--json" in sys.argv[1:]:
            print_json({"error": said, "hint": hint, "exit_code": 2})
            sys.stdout.flush()
    except OSError as exc:  # the pipe's reader is gone
        if not stream_gone(exc):
            raise
        quiet_streams()


class XttsCommand(TyperCommand):
    """A command whose stray argument is named as the option it was meant for: `xtts train my.yaml`
    says "pass it as --config my.yaml", not only that the argument was unexpected."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        empty = _empty_path_option(self, args)
        if empty is not None:  # `-o "$OUT"` with OUT unset: Path("") would be the current folder
            ctx.fail(f"{empty[0]} is empty: give it {empty[1]}, or leave it out")
        twice = _given_twice(self, ctx, args)
        if twice is not None:  # click keeps the last: `--data A --data B` trained on B alone, unsaid
            more = "; several datasets are listed under data.datasets" if twice == "--data" else ""
            ctx.fail(f"{twice} is given twice and takes one value: give it once{more}")
        given = list(args)  # click's parser takes the list apart as it reads it
        try:
            return super().parse_args(ctx, args)
        except Exception as exc:  # click's UsageError, or the copy of click that Typer 0.28 carries
            said = getattr(exc, "message", None)
            stray = re.match(r"Got unexpected extra argument(?:s|\(s\))? \(([^\s)]+)", said or "")
            meant = _meant_option(self, stray.group(1)) if stray else None
            if stray and meant is not None:
                setattr(exc, "message", f"{said}: pass it as {meant} {stray.group(1)}")  # noqa: B010 (any click)
            dashed = _dashed_argument(self, ctx, given, said or "")
            if dashed is not None:
                setattr(exc, "message", f"{said}: {dashed}")  # noqa: B010 (any click)
            # click names the type a ranged option's word failed to be as "float range" or "int range".
            typed = re.sub(r"is not a valid (float|int) range\.$", _not_a_number, said or "")
            if typed != (said or ""):
                setattr(exc, "message", typed)  # noqa: B010 (any click)
            raise


def _not_a_number(found: re.Match) -> str:
    return "is not a number." if found.group(1) == "float" else "is not a whole number."


def _given_twice(command: Any, ctx: Any, args: list[str]) -> Optional[str]:
    """The first option of one value that `args` give more than once, as click's own parser reads
    them (an option's value that looks like an option stays a value), or None."""
    try:
        _, _, order = command.make_parser(ctx).parse_args(args=list(args))
    except Exception:  # what click then refuses itself, with its own message
        return None
    seen: set[str] = set()
    for param in order:
        single = getattr(param, "opts", None) and not param.multiple and not getattr(param, "is_flag", False)
        if single and param.param_type_name == "option" and not getattr(param, "count", False):
            if param.name in seen:
                return max(param.opts, key=len)
            seen.add(param.name)
    return None


# Path options that name a folder; the rest name a file, but `xtts vocode`'s recordings (either).
_FOLDER_OPTIONS = ("run_dir", "trace", "tensorboard", "out_dir", "work_dir")


def _empty_path_option(command: Any, args: list[str]) -> Optional[tuple[str, str]]:
    """The path option given an empty value in `args` (`-o ""`, `--out=`), or a path argument given
    an empty one (`xtts vocode ""`, which had vocoded the whole current folder), with what it takes
    ("a file": an empty `-o` had been told to give a folder, which it refuses), or None."""
    paths = [p for p in command.params if type(p.type).__name__ == "TyperPath"]
    names = {name for p in paths for name in p.opts if p.param_type_name == "option"}
    argument = next((p for p in paths if p.param_type_name == "argument"), None)
    valued = {name for p in command.params if p.param_type_name == "option" and not p.is_flag for name in p.opts}
    for index, token in enumerate(args):
        if token == "--":
            break
        name, equals, value = token.partition("=")
        if name in names and (not value.strip() if equals else index + 1 < len(args) and not args[index + 1].strip()):
            dest = next(p.name for p in paths if name in p.opts)
            return name, "a folder" if dest in _FOLDER_OPTIONS else "a file"
        if argument is not None and not token.strip() and (index == 0 or args[index - 1] not in valued):
            return argument.human_readable_name.rstrip("."), "a file or folder"
    return None


def _dashed_argument(command: Any, ctx: Any, args: list[str], said: str) -> Optional[str]:
    """How to pass a TEXT or file argument that starts with "-" ("-5 degrees outside.", which click
    reads as the options -5...), where `said` is click's "No such option" for it; None otherwise."""
    import shlex

    unknown = re.match(r"No such option: (-\S*)", said)
    argument = next((p for p in command.params if p.param_type_name == "argument"), None)
    # What may start with "-": a text, a recording's file name (no preset's name does).
    what = {"text": "a text", "audio": "a file"}.get(getattr(argument, "name", None) or "")
    if unknown is None or what is None:
        return None
    # Not a misspelt option: a number after the dash, or a token that holds a space.
    token = next(
        (arg for arg in args if arg.startswith(unknown.group(1)) and (re.match(r"-[\d.]", arg) or " " in arg.strip())),
        None,
    )
    if token is None:
        return None
    return f"{what} that starts with '-' goes after --: {ctx.command_path} [OPTIONS] -- {shlex.quote(token)}"


def _meant_option(command: Any, value: str) -> Optional[str]:
    """The option a stray `value` reads as: a YAML file or a preset's name is --config, a run's
    folder --run-dir, where the command takes it."""
    from xtts_cli.config.preset_files import preset_path

    takes = {param.name for param in command.params}
    if "config" in takes and (value.lower().endswith((".yaml", ".yml")) or preset_path(value) is not None):
        return "--config"
    if "run_dir" in takes and (Path(value) / "config.yaml").is_file():
        return "--run-dir"
    return None


@contextlib.contextmanager
def batch_as_given(overrides: dict[str, Any]):
    """An epoch of no full batch, its fix named as the batch was given: --batch-size 64 had been told
    to set data.batch_size, a key the command line then overrides again."""
    from xtts_cli.data.plan import EmptyEpochError

    try:
        yield
    except EmptyEpochError as error:
        if overrides.get("data.batch_size") is not None and error.hint:
            error.hint = error.hint.replace("set data.batch_size to ", "pass --batch-size ")
            error.hint = error.hint.replace("data.batch_size", "--batch-size")
        raise
