"""The one place commands print through: results to stdout, progress and problems to stderr."""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional


def console(stderr: bool = False):
    """A rich console built when the command runs (a module-level one freezes the terminal width)."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def datasets_label(paths: list[str]) -> str:
    """A profile's dataset root, or with several, how many and their roots."""
    if len(paths) < 2:
        return paths[0] if paths else ""
    return f"{len(paths)} datasets ({', '.join(paths)})"


class Phases:
    """Work a command's user waits for, on stderr: a spinner with the phase's name on a terminal,
    one line per phase otherwise, nothing when `enabled` is false (`--json`)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.err = console(stderr=True) if enabled else None
        self._status: Any = None

    def __call__(self, name: str) -> None:
        """Begin phase `name` (ending the one before)."""
        self.end()
        if self.err is None:
            return
        if self.err.is_terminal:
            self._status = self.err.status(f"{name} ...")
            self._status.start()
        else:
            sys.stderr.write(f"{name} ...\n")
            sys.stderr.flush()

    def end(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __enter__(self) -> Phases:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()


def stream_gone(error: BaseException) -> bool:
    """Whether `error` is a write to a terminal or pipe no longer there: the terminal closed (EIO),
    or the pipe's reader exited (EPIPE: `| tee` or `| head` ended by the same Ctrl-C)."""
    return isinstance(error, OSError) and error.errno in (errno.EPIPE, errno.EIO)


def quiet_streams() -> None:
    """stdout and stderr to /dev/null from here on: what the command still writes goes nowhere,
    instead of ending it before its work is saved."""
    null = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(null, stream.fileno())
        except (AttributeError, ValueError, OSError):  # closed at the start (`2>&-`): None, or no descriptor
            pass
    os.close(null)


# What a write to stdout that fills the disk names: told from a run's own file on that disk.
STDOUT_NAME = "<stdout>"


def _disk_full(error: OSError) -> bool:
    return error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1))


class NamedStdout:
    """sys.stdout (or its binary `buffer`) whose write that fills a disk names it (STDOUT_NAME): an
    error naming no file had been blamed on the output whenever stdout's disk was full, though the
    run's own file on that disk was what failed."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    @property
    def buffer(self) -> NamedStdout:
        return NamedStdout(self._stream.buffer)

    def _named(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self._stream, method)(*args)
        except OSError as exc:
            if exc.filename is None and _disk_full(exc):
                raise OSError(exc.errno, exc.strerror, STDOUT_NAME) from None
            raise

    def write(self, data: Any) -> Any:
        return self._named("write", data)

    def writelines(self, lines: Any) -> None:
        self._named("writelines", lines)

    def flush(self) -> None:
        self._named("flush")


class SparedStderr(NamedStdout):
    """sys.stderr that a full disk under it (`2>/dev/full`, `2>>log` on a full disk) silences, as a
    closed terminal does: the progress lines go, the work and its exit code stay (a first progress
    line had ended the command, exit 1, unsaid)."""

    def _named(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self._stream, method)(*args)
        except OSError as exc:
            if not _disk_full(exc):
                raise
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self._stream.fileno())
            finally:
                os.close(null)
            return getattr(self._stream, method)(*args)  # to /dev/null now


def print_json(payload: Any) -> None:
    # \u escapes where stdout cannot take UTF-8 (PYTHONIOENCODING=ascii): valid JSON all the same.
    utf = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "").startswith("utf")
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=not utf, default=str) + "\n")


def error_lines(lines: Iterable[str], hint: str | None = None) -> None:
    for line in lines:
        sys.stderr.write(f"error: {line}\n")
    for line in (hint or "").splitlines():  # a hint for each of several things named (--text-file's lines)
        sys.stderr.write(f"hint: {line}\n")


SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def config_to_fix(path: Optional[Path]) -> str:
    """Where a finding's fix goes when the config is none of the user's: the built-in defaults or a
    preset (their files are the package's); "" for the user's own file."""
    from xtts_cli.config.preset_files import PRESETS_DIR

    if path is None:
        return "  (in your config: xtts init -o my.yaml writes one)"
    if path.resolve().parent == PRESETS_DIR:
        return f"  (in your copy: xtts init -p {path.stem} -o my.yaml)"
    return ""


def print_finding(out, finding, *, fix_note: str = "", more: Iterable[str] = ()) -> None:
    """One finding as every command shows it: severity, id, the input-bound share it costs when
    measured, the message; then the fix (with `fix_note` after it) and any `more` lines."""
    from rich.markup import escape  # a message quotes the user's values: "[laughs]" is text, not a style

    style = SEVERITY_STYLE[finding.severity]
    gain = getattr(finding, "expected_gain_percent", None)
    # The share a measured finding costs: the step's wait for data, or for a contended host its stall.
    measure = "host contention" if finding.id == "host-contention" else "input-bound"
    cost = f" ({measure} {gain:.0f} %)" if gain is not None else ""
    out.print(f"[{style}]{finding.severity:<7}[/] [bold]{finding.id}[/]{cost}: {escape(finding.message)}")
    if finding.fix is not None:
        out.print(f"         fix: {escape(finding.fix.describe())}{fix_note}")
    for line in more:
        out.print(f"         {escape(line)}")


TOP_SPEAKERS = 5


def span(minutes: float) -> str:
    """A length of audio in the unit that reads best: 1.3 h, 12.5 min, 40 s."""
    if minutes >= 60:
        return f"{minutes / 60:.1f} h"
    return f"{minutes:.1f} min" if minutes >= 1 else f"{minutes * 60:.0f} s"


def _unlisted(dataset) -> str:
    count, files = dataset.unlisted_audio, ", ".join(os.path.basename(name) for name in dataset.metadata_files)
    if dataset.format == "folder":
        return (
            f"{count:,} audio file{'' if count == 1 else 's'} in folders below the speakers' folders "
            f"(e.g. {dataset.unlisted_example}): not trained; the folder layout reads the dataset's folder "
            "and one folder per speaker"
        )
    return (
        f"{count:,} audio file{'' if count == 1 else 's'} beside the clips {files} lists, or beside the list, "
        f"{'is' if count == 1 else 'are'} in no row (e.g. {dataset.unlisted_example}): not trained"
    )


def dataset_notes(dataset) -> list[str]:
    """What a user should know of one dataset (a DatasetReport) beyond its counts, as rich markup:
    clips read from outside it, audio no row names, clips speakers.csv leaves out."""
    from rich.markup import escape

    notes = []
    if dataset.outside_root:
        notes.append(
            f"{counted(dataset.outside_root, 'clip')} of {escape(dataset.path)} "
            f"{'is' if dataset.outside_root == 1 else 'are'} read from outside it "
            "(data.allow_absolute_paths: true)"
        )
    if dataset.unlisted_audio:
        notes.append(escape(_unlisted(dataset)))
    if dataset.same_name_audio:
        count = dataset.same_name_audio
        notes.append(
            f"{count:,} audio file{'' if count == 1 else 's'} share{'s' if count == 1 else ''} its name and "
            f"transcript with a clip beside it (e.g. {escape(dataset.same_name_example or '')}): not trained, "
            "the other is; keep one recording of each, or rename the other and give it its own transcript"
        )
    if dataset.other_transcript:
        count = dataset.other_transcript
        notes.append(
            f"{count:,} clip{'' if count == 1 else 's'} train{'s' if count == 1 else ''} from {'its' if count == 1 else 'their'} .txt beside a .lab of "
            f"other words (e.g. {escape(dataset.other_transcript_example or '')}): remove the one that is wrong"
        )
    if dataset.lone_transcript:
        count = dataset.lone_transcript
        notes.append(
            f"{count:,} transcript{'' if count == 1 else 's'} {'has' if count == 1 else 'have'} no audio of "
            f"{'its' if count == 1 else 'their'} name beside {'it' if count == 1 else 'them'} "
            f"(e.g. {escape(dataset.lone_transcript_example or '')}): not trained; put the clip back, or remove "
            f"the transcript"
        )
    if dataset.scan_cache_unwritable:
        notes.append(
            f"the scan could not keep what it read in {escape(dataset.scan_cache_unwritable)}: each start reads "
            "every clip again; set XDG_CACHE_HOME to a folder you can write, or data.scan_cache: false"
        )
    if dataset.unnamed_speaker:
        count = dataset.unnamed_speaker
        notes.append(
            f"{count:,} clip{'' if count == 1 else 's'} speakers.csv leaves out "
            f"(e.g. {escape(dataset.unnamed_speaker_example or '')}) train as speaker {escape(dataset.name)}; "
            "add them to speakers.csv to name their voice"
        )
    if dataset.unknown_speaker_rows:
        count = dataset.unknown_speaker_rows
        notes.append(
            f"speakers.csv names {count:,} clip{'' if count == 1 else 's'} no line lists "
            f"(e.g. {escape(dataset.unknown_speaker_rows_example or '')}): a mistyped id? correct it to the clip's"
        )
    return notes


def weight_words(dataset, datasets) -> str:
    """How one of several datasets (DatasetReports) shares an epoch, and where whole repeats leave
    its share off what its weight asks: a weight of 1.2 over 90 clips beside 1 over 100 takes less."""
    if len(datasets) < 2:
        return ""
    weights = sum(other.weight for other in datasets if other.train_items)
    asked = dataset.weight / weights if weights and dataset.train_items else 0.0
    words = f"weight {dataset.weight:g}: each clip x{dataset.repeats} an epoch, {100 * dataset.epoch_share:.0f} % of it"
    if abs(asked - dataset.epoch_share) >= 0.05:
        words += f" where its weight asks {100 * asked:.0f} % (clips repeat a whole number of times)"
    return words


def print_dataset(out, data, bad_shown: int = 10, *, unnamed: bool = False) -> None:
    """The data report (a diagnosis DatasetSummary): per dataset its format, clips, hours, the largest
    speakers by minutes; then the durations and the bad files with their reasons. `unnamed`: the
    config names no dataset, so what was read is the bundled sample (said beside it)."""
    from rich.markup import escape

    from xtts_cli.data.scan import BUNDLED_SAMPLE, OUTSIDE_LIMITS, bad_place

    formats = ", ".join(f"{k} {v:,}" for k, v in sorted(data.formats.items()))
    rates = ", ".join(f"{k} Hz {v:,}" for k, v in sorted(data.sample_rates.items()))
    for dataset in data.datasets:
        weight = f", {words}" if (words := weight_words(dataset, data.datasets)) else ""
        outside = sum(n for reason, n in dataset.bad_reasons.items() if reason in OUTSIDE_LIMITS)
        limits = f", {outside:,} outside the length limits" if outside else ""
        # A preset that trains on the user's data, checked without --data, checks the sample: said.
        sample = " (the bundled sample: no --data given)" if unnamed and Path(dataset.path) == BUNDLED_SAMPLE else ""
        out.print(
            f"[bold]dataset[/] {escape(dataset.name)} ({dataset.format}, language {dataset.language}{weight}): "
            f"{escape(dataset.path)}{sample}: "
            f"{dataset.train_items:,} train + {dataset.eval_items:,} validation clips, "
            f"{dataset.bad_items - outside:,} bad{limits}; {span(dataset.hours * 60)}"
        )
        speakers = list(dataset.speaker_minutes.items())
        largest = ", ".join(f"{escape(name[:24])} {span(minutes)}" for name, minutes in speakers[:TOP_SPEAKERS])
        more = f", +{len(speakers) - TOP_SPEAKERS:,} more" if len(speakers) > TOP_SPEAKERS else ""
        if speakers:  # none in a dataset of no clip (its error says why)
            out.print(f"  {len(speakers):,} speaker{'' if len(speakers) == 1 else 's'}: {largest}{more}")
        for note in dataset_notes(dataset):
            out.print(f"  [yellow]note[/]: {note}")
    held_out = data.eval_items - sum(dataset.eval_items for dataset in data.datasets)
    if held_out > 0:  # data.eval_dataset_path's: the training data above trains whole
        out.print(f"  validation: {held_out:,} clips of data.eval_dataset_path")
    # Channels only when some clip is not mono: the pipeline trains on their mean (data/audio.py).
    channels = (
        ""
        if set(data.channels) <= {1}
        else "; "
        + ", ".join(
            f"{'mono' if k == 1 else 'stereo' if k == 2 else f'{k} channels'} {v:,}"
            for k, v in sorted(data.channels.items())
        )
    )
    if formats:
        out.print(f"  audio: {formats}; {rates}{channels}")
    if data.duration_histogram:
        from xtts_cli.profiling.sparkline import sparkline

        counts = [b.count for b in data.duration_histogram]
        out.print(
            f"  durations {data.min_duration:.1f}-{data.max_duration:.1f} s (mean {data.mean_duration:.1f}): "
            f"{sparkline(counts, width=len(counts), lo=0)}"
        )
    for bad in data.bad_files[:bad_shown]:
        label = "left out" if bad["reason"] in OUTSIDE_LIMITS else "bad"
        where = f"{bad['dataset']}: " if bad.get("dataset") else ""
        out.print(
            f"  [yellow]{label}[/] {escape(where)}{escape(bad_place(bad['reason'], bad['path'], bad['source']))}: {bad['reason']} "
            f"({escape(bad['detail'])})"
        )
    if len(data.bad_files) > bad_shown:
        out.print(f"  ... and {len(data.bad_files) - bad_shown:,} more (--json lists all)")


def counted(number: int, noun: str) -> str:
    """`1 finding`, `3 findings`: a count and its noun."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"
