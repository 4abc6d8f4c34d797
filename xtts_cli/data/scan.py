"""Dataset scan: every item checked against its audio file's header before training starts.

The items come from the dataset's layout (`layouts.py`: LJSpeech, coqui, VCTK, LibriTTS, Common
Voice, NeMo, a generic manifest), one or several datasets. Fast on a large corpus (headers only,
see `audio_headers.py`), and strict: each bad item is listed with its path and reason and left
out, and the scan fails only when the bad share passes `data.max_bad_file_fraction`, so nothing
surprising happens mid-epoch. The validation split keeps every speaker in training.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Literal, NamedTuple, Optional

from pydantic import BaseModel, Field, TypeAdapter
from pydantic.dataclasses import dataclass

from xtts_cli.config.schema import DataConfig
from xtts_cli.data.audio_headers import SUPPORTED_EXTENSIONS, UNREAD_EXTENSIONS, AudioHeaderError
from xtts_cli.data.features import kept_bytes
from xtts_cli.data.layouts import Entry, printable, read_layout, read_lines
from xtts_cli.data.scan_cache import HeaderCache, ScanMemo, cache_path
from xtts_cli.data.text import case_for, clean_text, language_normalizer, text_script
from xtts_cli.errors import XttsError

BUNDLED_SAMPLE = Path(__file__).resolve().parent / "sample"

BadReason = Literal[
    "malformed_line",
    "not_utf8",
    "path_escapes_root",
    "missing",
    "missing_transcript",
    "empty",
    "not_audio",
    "unsupported_format",
    "truncated",
    "header_only",
    "too_short",
    "too_long",
    "too_many_frames",
    "empty_text",
    "text_too_long",
    "text_outruns_audio",
    "unreadable",
    "bad_samples",
    "silent",
]
# Reasons a clip with sound audio and a transcript is left out: the length limits in `data`, a choice
# of the config, not a broken file. They are listed with the bad items, but a corpus with a long
# tail (LibriTTS: audiobook sentences, many past the default 10 s) trains within them, not refused:
# they do not count in `bad_fraction`, which `data.max_bad_file_fraction` bounds.
BAD_FILES_REMEDY = "fix or remove them, or raise data.max_bad_file_fraction to train on the good ones"


def bad_files_remedy(good: int) -> str:
    """What to do of the bad files: with no good one, raising the fraction trains on nothing."""
    return (
        BAD_FILES_REMEDY
        if good
        else "none of the dataset's items is usable, so fix them (raising data.max_bad_file_fraction would train on nothing)"
    )


OUTSIDE_LIMITS = frozenset({"too_short", "too_long", "too_many_frames", "text_too_long"})
# Bad for its transcript: the script it is written in is kept (`BadItem.script`).
_TEXT_REASONS = frozenset({"empty_text", "text_too_long", "text_outruns_audio"})


# A corpus's clips are held as slotted dataclasses, not models: reading 131,000 of them back from
# the scan memo grew the process by 5.5 kB a clip as pydantic models (a dict and a set of field
# names per instance) and by 3.3 kB as these (measured); the same validation, same TypeAdapter.
@dataclass(slots=True, kw_only=True)
class AudioInfo:
    format: str = Field(description="Container: wav, flac, ogg or mp3.")
    codec: str = Field(description="In-graph decode route (see xtts_cli.data.audio_codecs.CODECS).")
    sample_rate: int
    channels: int
    bit_depth: Optional[int] = Field(None, description="Bits per sample; empty for lossy formats.")
    num_samples: int = Field(description="Samples per channel the decoder returns, at the file's own rate.")
    duration: float = Field(description="Seconds.")
    data_offset: int = Field(0, description="WAV: byte offset of the sample data.")


@dataclass(slots=True, kw_only=True)
class DatasetItem:
    id: str
    audio_path: str = Field(description="Absolute path of the audio file.")
    relative_path: str = Field(description="Path as written in (or derived from) the metadata.")
    text: str = Field(description="Transcript as written.")
    normalized_text: Optional[str] = Field(None, description="LJSpeech third column, when present and non-empty.")
    speaker: str = Field(description="From the layout (folder, column, speakers.csv); else the dataset's name.")
    dataset: str = Field("", description="Name of the dataset it belongs to (DatasetReport.name).")
    language: str = Field("en", description="Its dataset's language (`data.language` or the entry's `language`).")
    phonemes: Optional[str] = Field(
        None, description="With `data.text_frontend: phonemes`: espeak-ng's phonemes of the text, made by the scan."
    )
    source: str = Field(description="Where the item came from: metadata file:line, or its transcript file.")
    size_bytes: int
    mtime_ns: int
    # Its inode's change time: a file replaced by one of the same size with its mtime put back (`cp -p`,
    # `touch -r`, rsync --times) keeps both, and had trained on the old file's stored features.
    ctime_ns: int = 0
    audio: AudioInfo

    @property
    def training_text(self) -> str:
        """What the model learns to speak: normalized_text when the metadata has one."""
        return self.normalized_text if self.normalized_text else self.text


class BadItem(BaseModel):
    source: str = Field(description="metadata file:line, or the transcript / audio file.")
    path: Optional[str] = Field(None, description="Audio path, when the line names one.")
    reason: BadReason
    detail: str
    dataset: Optional[str] = Field(None, description="The dataset it is in, when several are scanned together.")
    script: Optional[str] = Field(
        None, description="The script of its transcript (ARABIC, LATIN), when its text is why it is bad."
    )
    beyond: list[str] = Field(
        default_factory=list,
        description="The other length limits it crosses (too_long, ...): raised alone, `reason`'s limit keeps it out.",
    )

    @property
    def place(self) -> str:
        return bad_place(self.reason, self.path, self.source)


def bad_place(reason: str, path: Optional[str], source: str) -> str:
    """Where to look for a left-out item: the metadata line for a line read wrong (with its clip
    where the line names one), else its audio."""
    if reason == "not_utf8" and path:
        return f"{source} ({path})"
    return source if reason in ("malformed_line", "not_utf8") or not path else path


class DatasetReport(BaseModel):
    """One dataset of the scan: what was found in it."""

    name: str = Field(description="Its folder's name (made unique): the `dataset` of its items.")
    path: str = Field(description="Its root folder.")
    format: str = Field(
        description="Layout read: ljspeech, coqui, manifest, vctk, libritts, common_voice, nemo, folder."
    )
    language: str = Field("en", description="Language of its transcripts (espeak-ng code).")
    weight: float = Field(1.0, description="Sampling weight (data.datasets).")
    repeats: int = Field(1, description="Times each of its training clips appears in an epoch, from the weights.")
    epoch_share: float = Field(
        1.0,
        description="Its share of an epoch's training clips (0-1): its weight's share, to the nearest whole repeats.",
    )
    metadata_files: list[str] = Field(description="The metadata files read (empty for a layout of folders).")
    split: Literal["hash", "file"] = Field(
        description="How validation clips were chosen: hash (a stable share of each speaker's) or file (a metadata file of its own)."
    )
    items: int = Field(description="Good items (train + validation).")
    train_items: int = Field(description="Good training items.")
    eval_items: int = Field(description="Good validation items.")
    bad_items: int = Field(description="Items left out: bad files and lines, and those outside the length limits.")
    hours: float = Field(description="Hours of good audio.")
    speaker_minutes: dict[str, float] = Field(description="Minutes of good audio per speaker, largest first.")
    bad_reasons: dict[str, int] = Field(description="Items left out per reason (corrupt_header, text_too_long, ...).")
    outside_root: int = Field(
        0, description="Clips read from outside the dataset root (only with data.allow_absolute_paths)."
    )
    unlisted_audio: int = Field(
        0,
        description="Audio files in the dataset that are not trained: beside the listed clips or the metadata "
        "file, named by no row (ljspeech, coqui); in folders below the speakers' folders (folder).",
    )
    unlisted_example: Optional[str] = Field(None, description="One of them, to look for.")
    same_name_audio: int = Field(
        0,
        description="Audio files not trained because a clip of the same name beside them is, with the one "
        "transcript they share (a.flac beside a.wav and a.txt; folder).",
    )
    same_name_example: Optional[str] = Field(None, description="One of them, to look for.")
    other_transcript: int = Field(
        0,
        description="Clips whose .txt trains beside a .lab of other words (folder): one of the two is wrong.",
    )
    other_transcript_example: Optional[str] = Field(None, description="One such .lab, to look at.")
    lone_transcript: int = Field(
        0,
        description="Transcripts (.txt, .lab) beside the clips with no file of their name (folder): a clip "
        "deleted, moved or not yet recorded; not trained.",
    )
    lone_transcript_example: Optional[str] = Field(None, description="One of them, to look for.")
    scan_cache_unwritable: Optional[str] = Field(
        None,
        description="The folder (and why) where the scan could not keep what it read (data.scan_cache): "
        "every start reads every clip's header again.",
    )
    unnamed_speaker: int = Field(
        0,
        description="Good clips a speakers.csv beside the metadata leaves out (and no speaker column names): "
        "they train as a speaker named after the dataset.",
    )
    unnamed_speaker_example: Optional[str] = Field(None, description="The id of one, to add to speakers.csv.")
    unknown_speaker_rows: int = Field(
        0, description="Rows of a speakers.csv beside the metadata that name a clip no line lists (a mistyped id?)."
    )
    unknown_speaker_rows_example: Optional[str] = Field(None, description="The id one of them names.")


class ScanReport(BaseModel):
    dataset_path: str = Field(description="The dataset root (the first one, with several).")
    format: str = Field(description="Layout of the dataset; several datasets: their formats joined by `+`.")
    datasets: list[DatasetReport]
    metadata_files: list[str]
    split: Literal["hash", "file"] = Field(
        description="`hash`: eval_fraction of ids by hash; `file`: the eval metadata file."
    )
    train: list[DatasetItem]
    eval: list[DatasetItem]
    bad: list[BadItem]
    total_items: int = Field(description="Metadata lines considered (good + bad).")
    bad_fraction: float = Field(
        description="Share of the items that are bad files or lines; those outside the length limits do not count."
    )
    outside_limits: int = Field(0, description="Bad items left out by the length limits in `data` (OUTSIDE_LIMITS).")
    total_hours: float
    train_hours: float
    eval_hours: float
    min_duration: float
    max_duration: float
    mean_duration: float
    formats: dict[str, int]
    sample_rates: dict[int, int]
    channels: dict[int, int]
    bit_depths: dict[str, int] = Field(description="Bit depth histogram; `lossy` for MP3 / Vorbis.")
    speakers: dict[str, int]
    bad_reasons: dict[str, int]

    @property
    def items(self) -> list[DatasetItem]:
        return self.train + self.eval

    def feature_bytes(self, data: DataConfig, output: Literal["mel", "audio"] = "mel") -> int:
        """Bytes the features of every clip take as cache mode holds them (`features.kept_bytes`:
        16-bit log-mels, or 16-bit samples for a data/model split), from the headers alone: frames = 1
        + samples at the training rate // hop. A training clip counts as often as its dataset's weight
        repeats it in an epoch: cache mode holds each repeat (as `preprocessing_mode: auto` weighs it)."""
        repeats = {dataset.name: dataset.repeats for dataset in self.datasets}
        frames = sum(
            (1 + item.audio.num_samples * data.sample_rate // item.audio.sample_rate // data.hop_length)
            * (repeats.get(item.dataset, 1) if training else 1)
            for items, training in ((self.train, True), (self.eval, False))
            for item in items
        )
        return kept_bytes(frames, data, output)

    def shared_speakers(self) -> dict[str, list[str]]:
        """Each speaker name that two or more datasets use, with those datasets: they train as one voice."""
        datasets: dict[str, list[str]] = {}
        for dataset in self.datasets:
            for speaker in dataset.speaker_minutes:
                datasets.setdefault(speaker, []).append(dataset.name)
        return {speaker: names for speaker, names in datasets.items() if len(names) > 1}

    def epoch_items(self) -> list[DatasetItem]:
        """The training items of one epoch: each dataset's clips repeated as its weight asks."""
        repeats = {dataset.name: dataset.repeats for dataset in self.datasets}
        return [item for item in self.train for _ in range(repeats.get(item.dataset, 1))]


_ITEMS = TypeAdapter(list[DatasetItem])
_BAD_ITEMS = TypeAdapter(list[BadItem])


class DatasetScanError(XttsError):
    """The scan found too many bad items (or none good); `report` holds the full list."""

    def __init__(self, *lines: str, hint: Optional[str] = None, report: Optional[ScanReport] = None):
        super().__init__(*lines, hint=hint)
        self.report = report


class Source(NamedTuple):
    root: Path
    format: str
    weight: float
    key: str  # the config key that names it, for errors
    language: str = "en"
    metadata_train_file: Optional[str] = None  # its own, instead of data.metadata_train_file
    language_key: str = "data.language"  # the key its language is given by

    def scoped(self, text: str) -> str:
        """`text` with the keys an error names made this dataset's own when it is one of
        `data.datasets` (`data.datasets[2].format`, not `data.dataset_format`; its language's key)."""
        text = text.replace("data.language", self.language_key)
        if not self.key.startswith("data.datasets["):
            return text
        own = self.key.rsplit(".", 1)[0]
        for key, mine in (("dataset_format", "format"), ("metadata_train_file", "metadata_train_file")):
            text = text.replace(f"data.{key}", f"{own}.{mine}")
        return text


def dataset_sources(data: DataConfig) -> list[Source]:
    """The datasets a config names: `data.datasets`, else `data.dataset_path`, else the bundled sample."""
    if data.datasets:
        return [
            Source(
                Path(d.path).expanduser().resolve(),
                d.format,
                d.weight,
                f"data.datasets[{i}].path",
                d.language or data.language,
                d.metadata_train_file,
                f"data.datasets[{i}].language" if d.language else "data.language",
            )
            for i, d in enumerate(data.datasets)
        ]
    return [Source(dataset_root(data), data.dataset_format, 1.0, "data.dataset_path", data.language)]


def dataset_root(data: DataConfig) -> Path:
    """The (first) dataset's root: where the feature cache lives unless data.feature_cache_dir says."""
    if data.datasets:
        return Path(data.datasets[0].path).expanduser().resolve()
    return Path(data.dataset_path).expanduser().resolve() if data.dataset_path else BUNDLED_SAMPLE


def scan_dataset(data: DataConfig) -> ScanReport:
    """Check every item of every dataset against its audio header and split the good ones into train / eval."""
    import gc

    # A corpus makes a few objects per clip and none of them cyclic garbage: the cyclic collector,
    # paused, no longer walks them again and again while they are made (131,000 clips: 4.4 s -> 2.6 s).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _scan(data)
    finally:
        if collecting:
            gc.enable()


def _all_bad_cause(report: ScanReport, sources: list[Source]) -> Optional[str]:
    """What the layout got wrong when no item of the scan is good, where one mistake explains them
    all (raising data.max_bad_file_fraction would leave nothing to train); None otherwise."""
    bad = [item for item in report.bad if item.reason not in OUTSIDE_LIMITS]
    if report.items or not bad:
        return None
    if all(item.reason == "malformed_line" for item in bad):
        lines = [line for source in sources for line in _first_lines(source, report)]
        if lines and all("\t" in line and "|" not in line for line in lines):
            return "its lines are tab-separated: this layout separates its columns with |"
        if lines and all("," in line and "|" not in line for line in lines):
            return "its lines are comma-separated: this layout separates its columns with |"
    if all(item.reason == "path_escapes_root" for item in bad):
        return (
            "every clip lies outside the dataset's folder (a linked wavs/, or absolute paths): set "
            "data.allow_absolute_paths: true to read them there"
        )
    if all(item.reason == "missing" for item in bad):
        written = [item.path or "" for item in bad]
        if all("\\" in path for path in written):
            return "its paths are written with \\ (Windows): write them with /"
        roots = [source.root for source in sources]
        beside = [root for root in roots for path in written[:20] if (root / Path(path).name).is_file()]
        if beside and all(path.startswith("wavs/") for path in written):
            return f"the clips lie beside the metadata in {beside[0]}, not in its wavs/ folder where LJSpeech keeps them: move them there"
        folders = {Path(path).parts[0] for path in written if len(Path(path).parts) > 1}
        if len(folders) == 1 and len(roots) == 1:  # `Wavs/`, `audio/`: the clips' folder named otherwise
            (folder,) = folders
            named = [
                other.name
                for other in sorted(roots[0].iterdir())
                if other.is_dir() and other.name != folder and (other / Path(written[0]).name).is_file()
            ]
            if named:
                return f"there is no {folder}/ folder, and {named[0]}/ holds the clips: rename it to {folder}/"
    return None


def _first_lines(source: Source, report: ScanReport) -> list[str]:
    files = [Path(path) for path in report.metadata_files if Path(path).parent == source.root]
    try:
        return (
            [line for line in files[0].read_text(encoding="utf-8").splitlines()[:20] if line.strip()] if files else []
        )
    except (OSError, UnicodeDecodeError):
        return []


def listing(source: Source, data: DataConfig) -> tuple[Path, str]:
    """What lists a dataset's clips: its folder and metadata file. One folder may hold two lists (a
    language each, each dataset's `metadata_train_file`); the same list twice is one dataset twice."""
    return source.root, source.metadata_train_file or data.metadata_train_file


def _refuse_shared_clips(clips: list[list[DatasetItem]], sources: list[Source]) -> None:
    """Refuse a clip two datasets both hold (a folder inside another's, two lists naming one clip): it
    would train twice, as two datasets, and its speaker's minutes count twice."""
    owner: dict[str, int] = {}
    folders = _Folders()  # where each clip lies: a symlink to another dataset's clip is that clip
    for index, items in enumerate(clips):
        for item in items:
            real = folders.real_path(item.audio_path)
            first = owner.setdefault(real, index)
            if first != index:
                one, other = sources[first], sources[index]
                link = f" (a link to {real})" if real != item.audio_path else ""
                raise XttsError(
                    f"{item.audio_path}{link} is a clip of both {one.key} ({one.root}) and {other.key} ({other.root}): "
                    "it would train twice, as two datasets",
                    hint="list each clip in one dataset (a weight trains one more); a folder inside another's "
                    "folder is its clips again",
                )


def twice(source: Source, first: str) -> str:
    """The line for a dataset listed again under another spelling of its path (`first` names it)."""
    return (
        f"{source.key} is the folder of {first} again ({source.root}): each of its clips would train twice, "
        "as two datasets; list it once (a weight trains it more)"
    )


def _refuse_bad_share(report: ScanReport, sources: list, data: DataConfig) -> None:
    """A DatasetScanError where bad items pass data.max_bad_file_fraction: of each dataset, where
    there are several (a clean one's clips had hidden a broken one's share: 31 % bad read as 13 %),
    else of the one."""
    limit = data.max_bad_file_fraction
    datasets = report.datasets if len(sources) > 1 else [None]
    for dataset in datasets:
        reasons = (dataset or report).bad_reasons
        broken = {reason: n for reason, n in reasons.items() if reason not in OUTSIDE_LIMITS}
        total = dataset.items + dataset.bad_items if dataset is not None else report.total_items
        if not total or sum(broken.values()) / total <= limit:
            continue
        said = ", ".join(f"{n} {reason}" for reason, n in sorted(broken.items(), key=lambda kv: -kv[1]))
        where = f"dataset {dataset.name} ({dataset.path}): " if dataset is not None else ""
        raise DatasetScanError(
            f"{where}{sum(broken.values()):,} of {total:,} {'of its' if dataset else 'dataset'} items are bad "
            f"({sum(broken.values()) / total:.1%}), above data.max_bad_file_fraction ({limit:.1%}): {said}",
            hint=_all_bad_cause(report, sources)
            or f"xtts validate --json, with this command's --config and options, lists each bad file with its reason: "
            f"{bad_files_remedy(len(report.items))}",
            report=report,
        )


def _scan(data: DataConfig) -> ScanReport:
    if data.eval_dataset_path and data.eval_fraction:  # validation is that dataset's: every clip here trains
        data = data.model_copy(update={"eval_fraction": 0.0})
    sources = dataset_sources(data)
    for index, source in enumerate(sources):
        first = next((other for other in sources[:index] if listing(other, data) == listing(source, data)), None)
        if first is not None:
            raise XttsError(twice(source, first.key), hint="remove one of them from data.datasets")
    names = _unique_names([source.root.name or "dataset" for source in sources])
    parts = [_scan_one(source, name, data) for source, name in zip(sources, names)]
    _listed_by_another(parts, sources)
    _refuse_shared_clips([(part[1] + part[2]) for part in parts], sources)
    _set_repeats([part[0] for part in parts], sources)
    report = _report(parts)
    bad, total = report.bad, report.total_items
    _refuse_bad_share(report, sources, data)
    if not report.train:
        reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(report.bad_reasons.items(), key=lambda kv: -kv[1]))
        raise DatasetScanError(
            f"no usable training items in {', '.join(repr(path) for path in report.metadata_files)} "
            f"({total} items, {len(bad) - report.outside_limits} bad, {report.outside_limits} outside the length "
            f"limits{': ' + reasons if reasons else ''})",
            hint=_no_train_hint(report),
            report=report,
        )
    for source, dataset in zip(sources, report.datasets):
        if len(sources) > 1 and not dataset.train_items:  # its weight's share of each epoch would go to the others
            left = ", ".join(
                f"{n} {reason}" for reason, n in sorted(dataset.bad_reasons.items(), key=lambda kv: -kv[1])
            )
            found = f"{dataset.items} good, {dataset.bad_items} left out" + (f": {left}" if left else "")
            # Its clips all past a length limit: the key to change, each its way (it had said only "3 too_long").
            crossed = _limits_crossed(dataset.bad_reasons, [b for b in report.bad if b.dataset in (dataset.name, None)])
            limits = [
                f"{_LIMIT_MENDS[reason][0]} {key} ({getattr(data, key.split('.')[1]):g}) or {_LIMIT_MENDS[reason][1]}"
                for reason, key in _LIMIT_KEYS.items()
                if reason in crossed
            ]
            outside = sum(dataset.bad_reasons.get(reason, 0) for reason in _LIMIT_KEYS)
            mend = (
                "; ".join(limits)
                if limits and outside == dataset.bad_items
                else "mend it (xtts validate lists each left-out item with its reason)"
            )
            raise DatasetScanError(
                f"{source.key.removesuffix('.path')} ({dataset.path}) gives no training clip "
                f"({found if dataset.items or dataset.bad_items else 'it lists none'}), so the others train without it",
                hint=f"{mend}, or remove its entry",
                report=report,
            )
    return report


# The key that bounds each length limit's bad items.
_LIMIT_KEYS = {
    "too_short": "data.min_audio_duration",
    "too_long": "data.max_audio_duration",
    "too_many_frames": "data.max_mel_frames",
    "text_too_long": "data.max_text_length",
}


# How each length limit's items come back in: the key's way, or the clips'.
_LIMIT_MENDS = {
    "too_short": ("lower", "give it longer clips"),
    "too_long": ("raise", "shorten its clips"),
    "too_many_frames": ("raise", "shorten its clips"),
    "text_too_long": ("raise", "shorten its transcripts"),
}


def _limits_crossed(reasons: dict[str, int], bad: list[BadItem]) -> set[str]:
    """The length limits items were left out by, and those they cross beside (a long text of a long clip)."""
    return {reason for reason, n in reasons.items() if n} | {reason for item in bad for reason in item.beyond}


def _no_train_hint(report: ScanReport) -> str:
    """What to look at when no item trains: a metadata that lists none, or the limits every item is outside."""
    if report.total_items == 0:
        return "it lists no clip: an LJSpeech metadata.csv holds a line a clip, ID|transcript, its audio at wavs/ID.wav"
    crossed = _limits_crossed(report.bad_reasons, report.bad)
    limits = [key for reason, key in _LIMIT_KEYS.items() if reason in crossed]
    if limits and report.outside_limits == len(report.bad):
        return f"every item is outside the length limits: widen {', '.join(limits)}, or check the clips"
    return "check the dataset path, its format and the duration / text limits in `data`"


def _unique_names(names: list[str]) -> list[str]:
    seen: Counter = Counter()
    unique = []
    for name in names:
        seen[name] += 1
        unique.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return unique


def _scanned_or_remembered(source: Source, name: str, data: DataConfig):
    """(format, files, train, eval, bad, total, split, unsaved) from the scan's memo, else scanned and
    remembered; `unsaved`: the memo's folder where it could not be written (the header cache's too)."""
    root = source.root
    memo = ScanMemo(root, _memo_settings(source, name, data)) if data.scan_cache else None
    stored = _from_memo(memo) if memo is not None else None
    if stored is not None:
        return (*stored, None)
    try:
        fmt, files, train, evaluation, bad, total, split, watched = _scan_files(root, name, data, source)
    except XttsError as error:
        said = str(error.lines) + (error.hint or "")
        if type(error) is not XttsError or source.scoped(said) == said:
            raise
        hint = source.scoped(error.hint) if error.hint else None
        raise XttsError(*(source.scoped(line) for line in error.lines), hint=hint) from None
    unsaved = None
    if memo is not None:
        unsaved = memo.save(
            fmt,
            [str(f) for f in files],
            watched,
            train,
            evaluation,
            bad,
            total,
            split,
            [_bad_path(item, root) for item in bad],
            (_ITEMS.dump_json, _BAD_ITEMS.dump_json),
        )
    return fmt, files, train, evaluation, bad, total, split, unsaved


def _scan_one(source: Source, name: str, data: DataConfig) -> tuple[DatasetReport, list, list, list, int]:
    root = source.root
    if source.metadata_train_file is not None:  # this dataset's own, read as data.metadata_train_file is
        data = data.model_copy(update={"metadata_train_file": source.metadata_train_file})
    if not root.is_dir():
        raise XttsError(
            f"{source.key}: {str(root)!r} is not a directory",
            hint="point --data (data.dataset_path) at the dataset root, or leave it empty for the bundled sample"
            if source.key == "data.dataset_path"
            else "point it at that dataset's folder, or remove the entry",
        )
    fmt, files, train, evaluation, bad, total, split, unsaved = _scanned_or_remembered(source, name, data)
    minutes: Counter = Counter()
    for item in train + evaluation:
        minutes[item.speaker] += item.audio.duration / 60
    outside = 0
    if data.allow_absolute_paths:  # then said once, in the report: clips read from beyond the root
        folders = _Folders()
        outside = sum(
            not _inside(folders.real_path(item.audio_path), folders.real_folder(str(root)))
            for item in train + evaluation
        )
    unlisted, twins = _not_trained(fmt, train + evaluation, bad, root)
    others = _other_transcripts(train + evaluation, root) if fmt == "folder" else []
    lone = _lone_transcripts(train + evaluation, bad, root) if fmt == "folder" else []
    unnamed = _unnamed_speaker(train + evaluation, files, name) if fmt in ("ljspeech", "manifest") else []
    unknown = _unknown_speaker_rows(train + evaluation, bad, files) if fmt in ("ljspeech", "manifest") else []
    summary = DatasetReport(
        name=name,
        path=str(root),
        format=fmt,
        language=source.language,
        weight=source.weight,
        metadata_files=[str(path) for path in files],
        split=split,
        items=len(train) + len(evaluation),
        train_items=len(train),
        eval_items=len(evaluation),
        bad_items=len(bad),
        hours=sum(item.audio.duration for item in train + evaluation) / 3600,
        speaker_minutes=dict(minutes.most_common()),
        bad_reasons=dict(Counter(b.reason for b in bad)),
        outside_root=outside,
        unlisted_audio=len(unlisted),
        unlisted_example=unlisted[0] if unlisted else None,
        same_name_audio=len(twins),
        same_name_example=twins[0] if twins else None,
        other_transcript=len(others),
        other_transcript_example=others[0] if others else None,
        lone_transcript=len(lone),
        lone_transcript_example=lone[0] if lone else None,
        scan_cache_unwritable=unsaved,
        unnamed_speaker=len(unnamed),
        unnamed_speaker_example=unnamed[0] if unnamed else None,
        unknown_speaker_rows=len(unknown),
        unknown_speaker_rows_example=unknown[0] if unknown else None,
    )
    return summary, train, evaluation, bad, total


def _listed_by_another(parts: list, sources: list[Source]) -> None:
    """Audio beside one dataset's clips that no row of its own names but another dataset's does (one
    folder, a list per language) is no unlisted audio: each list had said the other's clips were not trained."""
    if len(parts) < 2:
        return
    for index, (report, train, evaluation, bad, _) in enumerate(parts):
        if not report.unlisted_audio or report.format not in ("ljspeech", "coqui"):
            continue
        others = {
            path
            for other, (_, o_train, o_eval, o_bad, _) in enumerate(parts)
            if other != index
            for path in [os.path.normpath(item.audio_path) for item in o_train + o_eval]
            + [_bad_path(item, sources[other].root) for item in o_bad]
            if path is not None
        }
        root = sources[index].root
        left = [path for path in _not_trained(report.format, train + evaluation, bad, root)[0]
                if os.path.normpath(os.path.join(root, path)) not in others]  # fmt: skip
        report.unlisted_audio, report.unlisted_example = len(left), left[0] if left else None


def _unknown_speaker_rows(items: list[DatasetItem], bad: list[BadItem], files: list) -> list[str]:
    """The ids (sorted) a speakers.csv names that no clip, good or bad, is: a mistyped row had been
    passed over unsaid, its clip training as the dataset's voice."""
    speakers = _read_speakers(Path(files[0]).parent / "speakers.csv") if files else {}
    if not speakers:
        return []
    known = {item.id for item in items} | {os.path.basename(item.id) for item in items}
    known |= {os.path.splitext(os.path.basename(item.path))[0] for item in bad if item.path}
    known |= {os.path.basename(item.path) for item in bad if item.path}

    def stem(key: str) -> str:  # `c01.wav` is the row of `c01` too (`_read_speakers`)
        return os.path.splitext(key)[0] if os.path.splitext(key)[1].lower() in SUPPORTED_EXTENSIONS else key

    return sorted(
        {stem(key) for key in speakers}
        - {
            stem(key)
            for key in speakers
            if {key, stem(key), os.path.basename(key), os.path.basename(stem(key))} & known
        }
    )


def _unnamed_speaker(items: list[DatasetItem], files: list, dataset: str) -> list[str]:
    """The clips (sorted) that a speakers.csv naming other clips leaves out: they fall back to a
    speaker named after the dataset, a voice that may not exist."""
    speakers = _read_speakers(Path(files[0]).parent / "speakers.csv") if files else {}
    if not speakers:
        return []
    return sorted(
        item.id  # as speakers.csv is keyed
        for item in items
        if item.speaker == dataset and item.id not in speakers and os.path.basename(item.id) not in speakers
    )


def _not_trained(fmt: str, items: list[DatasetItem], bad: list[BadItem], root: Path) -> tuple[list[str], list[str]]:
    """(audio files of the dataset no clip or bad item is: beside the listed clips, or in the folder
    layout below the speakers' folders; in the folder layout, second recordings of a clip's name)."""
    if fmt in ("ljspeech", "coqui"):  # and beside the list itself: clips put there had gone unsaid
        return _unlisted_audio(items, bad, root, also=root), []
    if fmt != "folder":
        return [], []
    # Every audio file beside a transcript is a clip: one left over shares a trained clip's name.
    twins = [path for path in _unlisted_audio(items, bad, root) if not os.path.basename(path).startswith(".")]
    return _deeper_audio(root), twins


def _other_transcripts(items: list[DatasetItem], root: Path) -> list[str]:
    """The .lab files (relative to `root`, sorted) beside a clip's .txt that trains, with other words:
    the .txt is read first and the .lab was passed over unsaid."""
    listed: dict[str, dict[str, str]] = {}
    found = []
    for item in items:
        folder, name = os.path.split(os.path.join(str(root), item.source))
        stem, extension = os.path.splitext(name)
        if extension.lower() != ".txt":
            continue
        if folder not in listed:
            try:
                listed[folder] = {entry.lower(): entry for entry in os.listdir(folder)}
            except OSError:
                listed[folder] = {}
        lab = listed[folder].get(f"{stem}.lab".lower())
        if lab is None:
            continue
        try:
            with open(os.path.join(folder, lab), encoding="utf-8-sig") as handle:
                words = " ".join(handle.read().split())
        except (OSError, UnicodeDecodeError):
            continue
        if words != item.text:
            found.append(printable(os.path.relpath(os.path.join(folder, lab), root)))
    return sorted(found)


# A folder's own notes beside its clips, no clip's transcript: README.txt, LICENSE.txt.
_NOT_TRANSCRIPTS = frozenset(
    {"readme", "license", "licence", "copying", "notes", "changelog", "changes", "authors", "credits", "about", "info"}
)


def _lone_transcripts(items: list[DatasetItem], bad: list[BadItem], root: Path) -> list[str]:
    """The .txt and .lab files (relative to `root`, sorted) in the folders of the clips with no other
    file of their name beside them: a clip deleted or moved, its transcript left, had gone unsaid.
    One listing per folder."""
    named = [item.audio_path for item in items]
    named += [path for path in (_bad_path(item, root) for item in bad) if path is not None]
    found = []
    for folder in sorted({os.path.dirname(os.path.normpath(path)) for path in named}):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        stems: Counter = Counter(os.path.splitext(name)[0].lower() for name in names)
        for name in names:
            stem, extension = os.path.splitext(name)
            if extension.lower() not in (".txt", ".lab") or stem.lower() in _NOT_TRANSCRIPTS:
                continue
            # Alone of its stem, or beside its .lab or .txt twin only.
            twin = f"{stem}.lab" if extension.lower() == ".txt" else f"{stem}.txt"
            others = stems[stem.lower()] - 1 - any(n.lower() == twin.lower() for n in names)
            if others == 0 and not stem.startswith("."):
                found.append(printable(os.path.relpath(os.path.join(folder, name), root)))
    return sorted(found)


def _deeper_audio(root: Path) -> list[str]:
    """The audio files in folders below the speakers' folders (relative to `root`, sorted), which
    the folder layout does not read: `root/alice/session1/a.wav` (hidden folders aside)."""
    found = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [name for name in subfolders if not name.startswith(".")]
        if len(Path(folder).relative_to(root).parts) >= 2:
            found += [
                printable(os.path.relpath(os.path.join(folder, name), root))
                for name in files
                if os.path.splitext(name)[1].lower() in SUPPORTED_EXTENSIONS
            ]
    return sorted(found)


def _unlisted_audio(items: list[DatasetItem], bad: list[BadItem], root: Path, also: Optional[Path] = None) -> list[str]:
    """The audio files in the folders of the listed clips (and `also`) that no row names (relative
    to `root`, sorted): clips a metadata file lost the rows of. One listing per folder."""
    named = {os.path.normpath(item.audio_path) for item in items}
    named |= {path for path in (_bad_path(item, root) for item in bad) if path is not None}
    # A missing clip's line names the file it meant ("but Clip7.wav is there"): that file is no unlisted
    # audio too (one fault had been said twice).
    meant: dict[str, list[str]] = {}
    for item in bad:
        path = _bad_path(item, root) if item.reason == "missing" and "is there" in (item.detail or "") else None
        if path is not None:  # an LJSpeech id written with its extension is looked for in wavs/ too
            held = os.path.dirname(path)  # and a clip of wavs/ beside its metadata
            outside = [os.path.dirname(held)] if os.path.basename(held) == "wavs" else []
            for folder in (held, os.path.join(held, "wavs"), *outside):
                meant.setdefault(folder, []).append(os.path.basename(path))
    found = []
    inside = os.path.normpath(root)
    folders = {os.path.dirname(path) for path in named} | ({os.path.normpath(also)} if also is not None else set())
    for folder in sorted(folders):
        if os.path.commonpath([inside, os.path.normpath(folder)]) != inside:
            continue  # another folder's files (a row's absolute path) are not this dataset's to list
        try:
            with os.scandir(folder) as entries:
                files = [e.path for e in entries if os.path.splitext(e.name)[1].lower() in SUPPORTED_EXTENSIONS]
        except OSError:
            continue
        left = [path for path in files if os.path.normpath(path) not in named]
        left = [path for path in left if not _meant(os.path.basename(path), meant.get(folder, []))]
        found += [printable(os.path.relpath(path, root)) for path in left]
    return sorted(found)


def _meant(name: str, missing: list[str]) -> bool:
    """Whether the file `name` is one a missing clip's name meant: in other capitals, or with another
    extension or none (as `_beside` finds it)."""
    stem = os.path.splitext(name)[0]
    return any(
        name.casefold() == gone.casefold()
        or stem in (gone, os.path.splitext(gone)[0])
        or name == os.path.splitext(gone)[0]
        for gone in missing
    )


def _from_memo(memo: ScanMemo):
    """(format, files, train, eval, bad, total, split) of the stored scan while nothing it read changed."""
    loaded = memo.load((_ITEMS.validate_json, _ITEMS.validate_json, _BAD_ITEMS.validate_json))
    if loaded is None:
        return None
    header, (train, evaluation, bad) = loaded
    if not memo.unchanged(train) or not memo.unchanged(evaluation):
        return None
    return (
        header["format"],
        [Path(f) for f in header["metadata_files"]],
        train,
        evaluation,
        bad,
        header["total"],
        header["split"],
    )


def _memo_settings(source: Source, name: str, data: DataConfig) -> dict:
    """Everything a dataset's scan result depends on besides its files."""
    from xtts_cli import __version__

    checks = (
        "metadata_train_file",
        "metadata_eval_file",
        "eval_fraction",
        "seed",
        "allow_absolute_paths",
        "sample_rate",
        "hop_length",
        "text_cleaners",
        "max_text_length",
        "min_audio_duration",
        "max_audio_duration",
        "max_mel_frames",
        "text_frontend",
    )
    return {
        "version": __version__,
        "format": source.format,
        "name": name,
        "language": source.language,
        **{key: getattr(data, key) for key in checks},
    }


def _bad_path(item: BadItem, root: Path) -> Optional[str]:
    if item.path is None:
        return None
    return item.path if os.path.isabs(item.path) else os.path.normpath(os.path.join(root, item.path))


def _scan_files(root: Path, name: str, data: DataConfig, source: Source):
    """(format, files, train, eval, bad, total, split, watched) from the layout and every audio
    header; `watched`: what the result was read from, as (path, kind) for the scan's memo."""
    layout = read_layout(root, data, source.format)
    watched = list(layout.watched)
    speakers_by_id = {}
    if layout.format in ("ljspeech", "manifest"):
        speakers = layout.files[0].parent / "speakers.csv"
        speakers_by_id = _read_speakers(speakers)
        watched.append((str(speakers), "stat"))  # present or not
    headers = HeaderCache(cache_path(root) if data.scan_cache else None)
    folders = _Folders()
    checked: list[list[DatasetItem]] = []
    bad: list[BadItem] = []
    lists = _speakers_throughout([layout.train] + ([layout.eval] if layout.eval is not None else []), speakers_by_id)
    # Every audio path first (string operations and a listing per folder), so that the files can be
    # read ahead of the checks, which read their headers in this order.
    places = [[_place(entry, str(root), data, folders) for entry in entries] for entries in lists]
    paths = [
        place[0]
        for entries, found in zip(lists, places)
        for entry, place in zip(entries, found)
        if place is not None and place[0] is not None and not entry.malformed
    ]
    with headers.reading_ahead(paths):
        for entries, found in zip(lists, places):
            listed: dict[
                str, tuple[str, str, str]
            ] = {}  # each clip's first line, path and text: a second lists it again
            good: list[DatasetItem] = []
            for entry, place in zip(entries, found):
                result = _check_entry(entry, place, data, speakers_by_id, name, headers, source.language)
                if isinstance(result, DatasetItem):
                    real = folders.real_path(result.audio_path)  # a link to a listed clip is that clip
                    result = _listed_once(result, entry, place and place[1], listed, real) or result
                if isinstance(result, DatasetItem):
                    good.append(result)
                else:
                    bad.append(result)
            checked.append(good)
    headers.save()
    if data.text_frontend == "phonemes":
        checked = [_with_phonemes(good, data, source.language, bad) for good in checked]
    total = len(layout.train) + len(layout.eval or [])
    if layout.eval is not None:
        return layout.format, layout.files, checked[0], checked[1], bad, total, "file", watched
    train, evaluation = _hash_split(checked[0], data.eval_fraction, data.seed)
    return layout.format, layout.files, train, evaluation, bad, total, "hash", watched


def _speakers_throughout(lists: list[list[Entry]], speakers: dict[str, str]) -> list[list[Entry]]:
    """`lists`, where a clip that names no speaker (an empty cell, and none in speakers.csv) among
    clips whose metadata names theirs is malformed: it would otherwise train as a speaker named
    after the dataset's folder, a voice that does not exist."""

    def named(entry: Entry) -> bool:
        key = entry.id or ""
        return bool(entry.speaker or speakers.get(key) or speakers.get(os.path.basename(key)))

    if not any(entry.speaker for entries in lists for entry in entries):
        return lists  # no speaker column, or one left empty throughout: speakers.csv, else the folder's
    return [
        [
            Entry(
                source=entry.source,
                id=entry.id,
                path=entry.path,
                malformed="names no speaker while other clips name theirs; write its speaker",
            )
            if not named(entry) and not (entry.malformed or entry.missing_transcript or entry.not_utf8)
            else entry
            for entry in entries
        ]
        for entries in lists
    ]


# Symbols a clip's sequence opens with before its text: its language's and speaker's ids (text.py).
_PREFIX_IDS = 2


def outruns(symbols: int, frames: int) -> bool:
    """Whether a transcript of `symbols` symbols says more than a clip of `frames` mel frames holds:
    the duration decoder's aligner reads each symbol (and the two ids before them) for a frame at
    least, and ~86 symbols a second is no speech (another clip's transcript, or audio cut short)."""
    return symbols + _PREFIX_IDS > frames


def _outruns_detail(symbols: int, unit: str, frames: int) -> str:
    return (
        f"{symbols} {unit} for {frames} mel frames: the transcript says more than the clip holds (another clip's "
        "transcript, or audio cut short)"
    )


def _with_phonemes(items: list[DatasetItem], data: DataConfig, language: str, bad: list[BadItem]) -> list[DatasetItem]:
    """`items` with their phonemes (one espeak-ng call for all of them); those whose phonemes are
    empty or longer than data.max_text_length go to `bad`."""
    from xtts_cli.data.phonemes import phonemize
    from xtts_cli.data.text import language_normalizer

    normalize = language_normalizer(language, "phonemes", "words") or (lambda text: text)
    texts = [normalize(clean_text(case_for(item.training_text, language), data.text_cleaners)) for item in items]
    phonemes = phonemize(texts, language)
    kept = []
    for item, spoken in zip(items, phonemes):
        frames = 1 + item.audio.num_samples * data.sample_rate // item.audio.sample_rate // data.hop_length
        if not spoken.strip():
            bad.append(_bad_item(item, "empty_text", "espeak-ng made no phonemes of the transcript"))
        elif len(spoken) > data.max_text_length:
            detail = f"{len(spoken)} phoneme symbols, above data.max_text_length ({data.max_text_length})"
            bad.append(_bad_item(item, "text_too_long", detail))
        elif outruns(len(spoken), frames):
            bad.append(_bad_item(item, "text_outruns_audio", _outruns_detail(len(spoken), "phoneme symbols", frames)))
        else:
            item.phonemes = spoken
            kept.append(item)
    return kept


def _audio_limit(seconds: float, frames: int, data: DataConfig) -> Optional[tuple[str, str]]:
    """(reason, detail) of the first length limit of `data` a clip's audio crosses, or None."""
    if seconds < data.min_audio_duration:
        return "too_short", f"{seconds:.2f} s, below data.min_audio_duration ({data.min_audio_duration:g} s)"
    if seconds > data.max_audio_duration:
        return "too_long", f"{seconds:.2f} s, above data.max_audio_duration ({data.max_audio_duration:g} s)"
    if frames > data.max_mel_frames:
        return "too_many_frames", f"{frames} mel frames, above data.max_mel_frames ({data.max_mel_frames})"
    return None


def _bad_item(item: DatasetItem, reason: str, detail: str) -> BadItem:
    script = text_script(item.text)  # a transcript in another script than its language's: said by the checkup
    return BadItem(source=item.source, path=item.relative_path, reason=reason, detail=detail, script=script)


# Training clips an epoch may hold, repeats counted, beyond ten passes over the distinct ones: weights far
# apart (a typed 1e-9) would make an epoch of billions of clips, listed one by one until memory ran out.
MAX_EPOCH_ITEMS = 1_000_000


def _set_repeats(datasets: list[DatasetReport], sources: list[Source]) -> None:
    """Whole repeats per dataset so each one's share of an epoch follows its weight (the least-favoured: 1)."""
    per_clip = [
        source.weight / dataset.train_items if dataset.train_items else 0.0
        for dataset, source in zip(datasets, sources)
    ]
    lowest = min((value for value in per_clip if value > 0), default=0.0)
    for dataset, value in zip(datasets, per_clip):
        dataset.repeats = max(1, round(value / lowest)) if lowest else 1
    epoch = sum(dataset.repeats * dataset.train_items for dataset in datasets)
    distinct = sum(dataset.train_items for dataset in datasets)
    most_held = max(MAX_EPOCH_ITEMS, 10 * distinct)
    if epoch > most_held:
        least = next(source for source, value in zip(sources, per_clip) if value == lowest)
        most = max(datasets, key=lambda dataset: dataset.repeats)
        raise XttsError(
            f"{least.key.removesuffix('.path')}.weight {least.weight:g}: to give its clips so small a share, the weights would repeat each "
            f"clip of {most.name} x{most.repeats:,} an epoch ({epoch:,} clips in all, over the {most_held:,} "
            "an epoch may hold)",
            hint="weights are shares of an epoch relative to each other (1 and 3: a quarter and three quarters); "
            "raise it, or leave the dataset out",
        )
    for dataset in datasets:
        dataset.epoch_share = dataset.repeats * dataset.train_items / epoch if epoch else 0.0


def _read_speakers(path: Path) -> dict[str, str]:
    """`id|speaker` per line (a header `id|speaker` allowed); a line of another form is a one-line
    XttsError: a comma- or tab-separated file read as no speakers would train every voice as one."""
    if not path.is_file():
        return {}
    speakers: dict[str, str] = {}
    wrong: list[tuple[int, str]] = []  # every line of another form, said at once (one a run had been named)
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip() or (number == 1 and line.replace(" ", "").lower() == "id|speaker"):
            continue
        key, sep, speaker = line.partition("|")
        if not (sep and key.strip() and speaker.strip()) or "|" in speaker:
            wrong.append((number, line.strip()))
            continue
        # `c01.wav` names the clip `c01` too, as an LJSpeech id may be written with its extension.
        key = key.strip()
        stem = key[: -len(Path(key).suffix)] if Path(key).suffix.lower() in SUPPORTED_EXTENSIONS else key
        for name in dict.fromkeys((key, stem)):
            first = speakers.setdefault(name, speaker.strip())
            if first != speaker.strip():  # the last line would win in silence, and the clip train as another voice
                raise XttsError(
                    f"{path}:{number}: {key!r} is {speaker.strip()!r} here and {first!r} on an earlier line",
                    hint="give each clip one speaker",
                )
    if len(wrong) == 1:
        raise XttsError(f"{path}:{wrong[0][0]}: expected `id|speaker`, got {wrong[0][1]!r}", hint=_SPEAKER_LINES)
    if wrong:
        named = ", ".join(f"line {number} {line!r}" for number, line in wrong[:3])
        more = f" and {len(wrong) - 3} more" if len(wrong) > 3 else ""
        raise XttsError(f"{path}: {len(wrong)} lines are not `id|speaker`: {named}{more}", hint=_SPEAKER_LINES)
    return speakers


_SPEAKER_LINES = "write one `id|speaker` line per clip, separated by |"


class _Folders:
    """Each folder listed once: an LJSpeech id's extension is found without a stat per file, and
    where a clip really lies (symlinks followed) is known from the listing and one `realpath` per
    folder, not a chain of lstats per clip."""

    def __init__(self) -> None:
        self.names: dict[str, set[str]] = {}
        self.links: dict[str, set[str]] = {}
        self.real: dict[str, str] = {}
        self.audio: dict[str, dict[str, str]] = {}

    def _list(self, folder: str) -> None:
        names, links = set(), set()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    names.add(entry.name)
                    if entry.is_symlink():
                        links.add(entry.name)
        except OSError:
            pass
        self.names[folder], self.links[folder] = names, links

    def holds(self, path: str) -> bool:
        folder, _, name = path.rpartition("/")
        if folder not in self.names:
            self._list(folder)
        return name in self.names[folder]

    def audio_named(self, folder: str, stem: str) -> Optional[str]:
        """The audio file called `stem` in `folder`, its extension in any case (`a.WAV`), or None;
        `.wav` before `.flac` (SUPPORTED_EXTENSIONS' order), a lower-case extension first."""
        if folder not in self.audio:
            if folder not in self.names:
                self._list(folder)
            by_stem: dict[str, list[tuple[int, bool, str]]] = {}
            for name in self.names[folder]:
                base, extension = os.path.splitext(name)
                if extension.lower() in SUPPORTED_EXTENSIONS:
                    rank = SUPPORTED_EXTENSIONS.index(extension.lower())
                    # Composed: a name macOS wrote decomposed (NFD "café") is the id a metadata file
                    # typed composed (NFC); the path kept is the file's own.
                    key = unicodedata.normalize("NFC", base)
                    by_stem.setdefault(key, []).append((rank, extension != extension.lower(), name))
            self.audio[folder] = {base: min(names)[2] for base, names in by_stem.items()}
        return self.audio[folder].get(unicodedata.normalize("NFC", stem))

    def real_path(self, path: str) -> str:
        """`path` with every symlink on the way resolved."""
        folder, _, name = path.rpartition("/")
        if folder not in self.names:
            self._list(folder)
        if name in self.links[folder]:
            return os.path.realpath(path)
        return os.path.join(self.real_folder(folder or "/"), name)

    def real_folder(self, folder: str) -> str:
        if folder not in self.real:
            self.real[folder] = os.path.realpath(folder)
        return self.real[folder]


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _resolve(
    entry: Entry, root: str, allow_absolute: bool, folders: _Folders
) -> tuple[Optional[str], str, Optional[BadItem]]:
    """(absolute path or None, path as written, problem). A path that lands outside the dataset
    root, written so (absolute, `..`) or through a symlink, is refused unless `allow_absolute`."""
    if entry.path is None and os.path.isabs(str(entry.id)):
        # An LJSpeech id written as an absolute path names that clip, as one written with `..` does (it
        # had been looked for under wavs//data/...).
        written = str(entry.id) if str(entry.id).lower().endswith(SUPPORTED_EXTENSIONS) else f"{entry.id}.wav"
    elif entry.path is None:
        written = f"wavs/{folders.audio_named(f'{root}/wavs', str(entry.id)) or f'{entry.id}.wav'}"
    elif (
        "/" not in entry.path
        and not folders.holds(f"{root}/{entry.path}")
        and (folders.holds(f"{root}/wavs/{entry.path}") or _case_twin(f"{root}/wavs/{entry.path}") is not None)
    ):
        # An LJSpeech id written with its extension (`LJ001-0001.wav|...`), or in other capitals (its
        # line had been named without wavs/, beside a hint that names wavs/).
        written = f"wavs/{entry.path}"
    else:
        written = entry.path
    if os.path.isabs(written):
        full = os.path.normpath(written)
    else:
        full = f"{root}/{written}"
        if "//" in full or "/." in full:
            full = os.path.normpath(full)
    if allow_absolute:
        return full, written, None
    real = folders.real_path(full)
    if not _inside(real, folders.real_folder(root)):
        if os.path.lexists(full) and not os.path.exists(full):  # no setting reads a clip that is not there
            return (
                None,
                written,
                BadItem(source=entry.source, path=written, reason="missing", detail=_beside(full, written)),
            )
        where = "" if real == full else f" (it resolves to {real})"
        return (
            None,
            written,
            BadItem(
                source=entry.source,
                path=written,
                reason="path_escapes_root",
                detail=f"audio path points outside the dataset root{where}; set data.allow_absolute_paths: true "
                "to allow it",
            ),
        )
    return full, written, None


def _listed_once(
    item: DatasetItem, entry: Entry, written: Optional[str], listed: dict[str, tuple[str, str, str]], real: str
) -> Optional[BadItem]:
    """A line that lists a clip an earlier line of its file lists (with the same text or another, or
    through a symlink to it: `real`, where it lies), named as the line wrote it (`written`; an
    LJSpeech id's line names none); another text is said, with the one trained (the first line's)."""
    first, through, text = listed.setdefault(real, (entry.source, item.audio_path, item.text))
    if first == entry.source:
        return None
    other = "" if item.text == text else f" with another text ({text!r} trains, the first line's)"
    clip = written or entry.path or item.id
    link = f" (a link to {real})" if real != item.audio_path else ""
    # The first line's clip a link: named, or the real clip's line reads as the one to drop.
    first_link = f" through the link {through}" if through != real and through != item.audio_path else ""
    return BadItem(
        source=entry.source,
        path=clip,
        reason="malformed_line",
        detail=f"lists {clip}{link}, which {first} lists too{first_link}{other}: each clip once (a dataset's "
        "weight repeats it)",
    )


def _place(
    entry: Entry, root: str, data: DataConfig, folders: _Folders
) -> Optional[tuple[Optional[str], str, Optional[BadItem]]]:
    """`_resolve`'s answer for an entry whose line names a clip, malformed or not (the clip it names
    is then no unlisted audio); None for a line that names none or a missing transcript."""
    if entry.missing_transcript or ((entry.malformed or entry.not_utf8) and entry.id is None and entry.path is None):
        return None
    return _resolve(entry, root, data.allow_absolute_paths, folders)


def _what_it_holds(text: str) -> str:
    """What a transcript with no word is made of: punctuation alone ("..."), or symbols too (an emoji)."""
    if all(unicodedata.category(c).startswith("P") for c in text if not c.isspace()):
        return "punctuation"
    return "symbols (an emoji) and punctuation"


def _beside(audio_path: str, written: str) -> str:
    """A missing clip's detail: "file not found", and the file of its name with another extension
    (or none) where there is one: a list that names `c3` or `x.mp3` of a `c3.wav` or an `x.wav`."""
    if os.path.islink(audio_path) and not os.path.exists(audio_path):
        target = os.readlink(audio_path)
        where = os.path.normpath(os.path.join(os.path.dirname(audio_path), target))
        shown = target if os.path.isabs(target) else f"{target} ({where})"
        return f"a broken link: {written} points to {shown}, which is not there; link it to the clip, or copy the clip in its place"
    slashed = written.replace("\\", "/")
    if slashed != written and audio_path.endswith(written) and os.path.isfile(audio_path[: -len(written)] + slashed):
        return f"file not found, but {slashed} is there: write / between folders, not \\ (a Windows path)"
    listed = written.startswith("wavs/") and written.count("/") == 1 and audio_path.endswith("/" + written)
    if listed and os.path.isfile(audio_path[: -len(written)] + written[5:]):
        return f"file not found, but {written[5:]} is there, beside the metadata: LJSpeech keeps its clips in wavs/ (move them there)"
    folder, name = os.path.split(audio_path)
    try:
        names = os.listdir(folder)
    except OSError:
        return _in_other_capitals(audio_path, written)
    base = os.path.splitext(name)[0]
    audio = (*SUPPORTED_EXTENSIONS, *UNREAD_EXTENSIONS)
    near = sorted(
        n
        for n in names
        if n != name and (n == base or (os.path.splitext(n)[0] in (name, base) and n.lower().endswith(audio)))
    )
    if not near:
        return _in_other_capitals(audio_path, written)
    shown = os.path.join(os.path.dirname(written), near[0])
    extension = os.path.splitext(near[0])[1].lower()
    if extension in UNREAD_EXTENSIONS:
        return f"file not found, but {shown} is there, in a format not read: convert it to FLAC or WAV (ffmpeg -i IN OUT.flac)"
    return f"file not found, but {shown} is there: write that name"


def _header_fault(error: AudioHeaderError, audio_path: str, written: str) -> str:
    """What a clip's header reader found, with the fix: a missing clip's, from what lies beside it; a
    file cut short's where its reader named none (an MP3, Ogg or FLAC ending inside a frame had said
    only that)."""
    detail = error.detail
    if error.reason == "missing":
        return _beside(audio_path, written)
    if error.reason != "truncated" or "copy it again" in detail:
        return detail
    # A header cut short holds no audio to keep.
    extension = os.path.splitext(written)[1].lower() or ".wav"
    headless = any(
        part in detail for part in ("header is cut short", "'fmt '", "inside its STREAMINFO", "inside its metadata")
    )
    keep = "" if headless else f", or keep what is there with ffmpeg -i in{extension} out.flac"
    why = "" if "cut short" in detail else " (cut short in a copy or a download)"
    return f"{detail}{why}: copy it again{keep}"


def _in_other_capitals(audio_path: str, written: str) -> str:
    """ "file not found", and the file of its name in other capitals where there is one (a corpus made
    on Windows or macOS, whose disks ignore case): `CLIP_01` of a `clip_01.wav`, `Audio/a.wav` of an
    `audio/a.wav`; an LJSpeech id written with its extension is looked for in `wavs/` too."""
    twin = _case_twin(audio_path)
    base = audio_path[: -len(written)] if audio_path.endswith("/" + written) else None
    if twin is None and base is not None and "/" not in written:
        twin = _case_twin(f"{base}wavs/{written}")
    if twin is None:
        return "file not found"
    shown = os.path.relpath(twin, base) if base is not None else twin
    return f"file not found, but {shown} is there, its name in other capitals: names are case-sensitive, write that one"


def _case_twin(path: str) -> Optional[str]:
    """The one file that `path` names in other capitals, a folder at a time; None where there is
    none, or more than one."""
    head, tails = path, []
    while not os.path.isdir(head):
        head, tail = os.path.split(head)
        if not tail:
            return None
        tails.append(tail)
    for tail in reversed(tails):
        try:
            same = [name for name in os.listdir(head) if name.casefold() == tail.casefold()]
        except OSError:
            return None
        if len(same) != 1:
            return None
        head = os.path.join(head, same[0])
    return head if head != path and os.path.isfile(head) else None


def _entry_fault(entry: Entry) -> Optional[BadItem]:
    """What the metadata itself says is wrong with an entry, before its audio is looked at."""
    said: tuple[tuple[BadReason, Optional[str]], ...] = (
        ("malformed_line", entry.malformed),
        ("not_utf8", entry.not_utf8),
        ("missing_transcript", entry.missing_transcript),
    )
    return next((BadItem(source=entry.source, path=entry.path, reason=r, detail=d) for r, d in said if d), None)


def _times(stat: os.stat_result) -> dict[str, int]:
    """An item's modification and change times, as the memo and the feature store key its file."""
    return {"mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns}


def _check_entry(
    entry: Entry,
    place: Optional[tuple[Optional[str], str, Optional[BadItem]]],
    data: DataConfig,
    speakers: dict[str, str],
    dataset: str,
    headers: HeaderCache,
    language: str = "en",
) -> DatasetItem | BadItem:
    """`place`: the entry's `_place`."""
    fault = _entry_fault(entry)
    if fault is not None:
        return fault if fault.path is not None or place is None else fault.model_copy(update={"path": place[1]})
    assert place is not None  # `_place` gives one for every entry that is neither
    audio_path, written, problem = place
    if problem is not None:
        return problem
    assert audio_path is not None  # _resolve gives a path whenever it gives no problem

    def bad(reason: str, detail: str, beyond: Optional[list[str]] = None) -> BadItem:
        # `reason` is one of BadReason: the codes written here and AudioHeaderError's, which uses them.
        script = text_script(entry.text) if reason in _TEXT_REASONS and entry.text else None
        return BadItem(
            source=entry.source, path=written, reason=reason, detail=detail, script=script, beyond=beyond or []
        )

    item_text = entry.normalized_text or entry.text
    cleaned = clean_text(case_for(item_text, language), data.text_cleaners)
    normalize = language_normalizer(language)
    if normalize is not None:
        cleaned = normalize(cleaned)
    if not cleaned.strip():
        return bad("empty_text", "transcript is empty after cleaning")
    if not any(c.isalnum() for c in cleaned):  # "...": the clip's speech would be learnt as punctuation
        return bad("empty_text", f"transcript {cleaned.strip()[:20]!r} holds no word, only {_what_it_holds(cleaned)}")
    try:
        header, stat = headers.header(audio_path)
    except AudioHeaderError as error:  # before the length limits: a broken file is bad, whatever its length
        return bad(error.reason, _header_fault(error, audio_path, written))
    # Length at the training rate, as the resampler returns it: floor(n * out / in).
    samples = header.num_samples * data.sample_rate // header.sample_rate
    frames = 1 + samples // data.hop_length
    crossed = _audio_limit(samples / data.sample_rate, frames, data)
    if len(cleaned) > data.max_text_length:  # with the audio's limit it crosses too: one fix had named one
        return bad(
            "text_too_long",
            f"{len(cleaned)} characters after cleaning, above data.max_text_length ({data.max_text_length})"
            + (f"; and {crossed[1]}" if crossed else ""),
            [crossed[0]] if crossed else None,
        )
    if crossed:
        return bad(*crossed)
    if data.text_frontend == "characters" and outruns(len(cleaned), frames):  # phonemes: `_with_phonemes`
        return bad("text_outruns_audio", _outruns_detail(len(cleaned), "characters", frames))
    key = entry.id or ""  # speakers.csv is keyed by ids: LJSpeech's file stems, a manifest's paths less extension
    speaker = entry.speaker or speakers.get(key) or speakers.get(os.path.basename(key)) or dataset
    return DatasetItem(
        id=entry.id or written,
        audio_path=audio_path,
        relative_path=written,
        text=entry.text,
        normalized_text=entry.normalized_text or None,
        speaker=speaker,
        dataset=dataset,
        language=language,
        phonemes=None,
        source=entry.source,
        size_bytes=stat.st_size,
        **_times(stat),
        audio=AudioInfo(
            format=header.format,
            codec=header.codec,
            sample_rate=header.sample_rate,
            channels=header.channels,
            bit_depth=header.bit_depth,
            num_samples=header.num_samples,
            duration=header.duration,
            data_offset=header.data_offset,
        ),
    )


def split_hash(item_id: str, seed: int) -> float:
    """A stable number in [0, 1) for an id: the same split on every machine and Python run."""
    digest = hashlib.sha256(f"{seed}:{item_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _hash_split(
    items: list[DatasetItem], eval_fraction: float, seed: int
) -> tuple[list[DatasetItem], list[DatasetItem]]:
    if eval_fraction <= 0 or len(items) < 2:
        return list(items), []
    hashes = {id(item): split_hash(item.id, seed) for item in items}
    evaluation = [item for item in items if hashes[id(item)] < eval_fraction]
    if not evaluation:
        # A small dataset can miss the fraction entirely; validation asked for must not be empty,
        # so hold out the single item with the lowest hash (still a pure function of the ids).
        evaluation = [min(items, key=lambda item: hashes[id(item)])]
    # Every speaker keeps clips in training: a speaker the split took whole gets its highest-hash
    # clip back (the model cannot learn a voice it meets only in validation), unless that would
    # leave validation empty.
    held = {id(item) for item in evaluation}
    trained = {item.speaker for item in items if id(item) not in held}
    returned: dict[str, DatasetItem] = {}
    for item in evaluation:
        best = returned.get(item.speaker)
        if item.speaker not in trained and (best is None or hashes[id(item)] > hashes[id(best)]):
            returned[item.speaker] = item
    for item in returned.values():
        if len(held) > 1:
            held.discard(id(item))
    return [item for item in items if id(item) not in held], [item for item in items if id(item) in held]


def _report(parts: list[tuple[DatasetReport, list, list, list, int]]) -> ScanReport:
    datasets = [part[0] for part in parts]
    train = [item for part in parts for item in part[1]]
    evaluation = [item for part in parts for item in part[2]]
    if len(parts) > 1:  # "metadata.csv:3" of which dataset
        for part in parts:
            for item in part[3]:
                item.dataset = part[0].name
    bad = [item for part in parts for item in part[3]]
    total = sum(part[4] for part in parts)
    good = train + evaluation
    durations = [item.audio.num_samples / item.audio.sample_rate for item in good]
    outside = sum(1 for item in bad if item.reason in OUTSIDE_LIMITS)
    hours = lambda items: sum(i.audio.num_samples / i.audio.sample_rate for i in items) / 3600  # noqa: E731
    return ScanReport(
        dataset_path=datasets[0].path,
        format="+".join(dict.fromkeys(dataset.format for dataset in datasets)),
        datasets=datasets,
        metadata_files=[path for dataset in datasets for path in dataset.metadata_files],
        split="file" if all(dataset.split == "file" for dataset in datasets) else "hash",
        train=train,
        eval=evaluation,
        bad=bad,
        total_items=total,
        bad_fraction=(len(bad) - outside) / total if total else 0.0,
        outside_limits=outside,
        total_hours=hours(good),
        train_hours=hours(train),
        eval_hours=hours(evaluation),
        min_duration=min(durations, default=0.0),
        max_duration=max(durations, default=0.0),
        mean_duration=sum(durations) / len(durations) if durations else 0.0,
        formats=dict(Counter(i.audio.format for i in good)),
        sample_rates=dict(Counter(i.audio.sample_rate for i in good)),
        channels=dict(Counter(i.audio.channels for i in good)),
        bit_depths=dict(Counter(str(i.audio.bit_depth) if i.audio.bit_depth else "lossy" for i in good)),
        speakers=dict(Counter(i.speaker for i in good)),
        bad_reasons=dict(Counter(b.reason for b in bad)),
    )
