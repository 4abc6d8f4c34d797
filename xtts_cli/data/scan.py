"""Dataset scan: every metadata line checked against its audio file's header before training starts.

Fast on a large corpus (headers only, see `audio_headers.py`), and strict: each bad item is listed
with its path and reason and left out, and the scan fails only when the bad share passes
`data.max_bad_file_fraction`, so nothing surprising happens mid-epoch.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from collections import Counter
from pathlib import Path
from typing import Iterator, Literal, Optional

from pydantic import BaseModel, Field

from xtts_cli.config.errors import XttsError
from xtts_cli.config.schema import DataConfig
from xtts_cli.data.audio_headers import SUPPORTED_EXTENSIONS, AudioHeaderError, read_audio_header
from xtts_cli.data.text import clean_text

BUNDLED_SAMPLE = Path(__file__).resolve().parent / "sample"
DEFAULT_SPEAKER = "speaker"

BadReason = Literal[
    "malformed_line",
    "path_escapes_root",
    "missing",
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
]


class AudioInfo(BaseModel):
    format: str = Field(description="Container: wav, flac, ogg or mp3.")
    codec: str = Field(description="In-graph decode route (see xtts_cli.data.audio.CODECS).")
    sample_rate: int
    channels: int
    bit_depth: Optional[int] = Field(None, description="Bits per sample; empty for lossy formats.")
    num_samples: int = Field(description="Samples per channel the decoder returns, at the file's own rate.")
    duration: float = Field(description="Seconds.")
    data_offset: int = Field(0, description="WAV: byte offset of the sample data.")


class DatasetItem(BaseModel):
    id: str
    audio_path: str = Field(description="Absolute path of the audio file.")
    relative_path: str = Field(description="Path as written in (or derived from) the metadata.")
    text: str = Field(description="Transcript as written.")
    normalized_text: Optional[str] = Field(None, description="LJSpeech third column, when present and non-empty.")
    speaker: str
    source: str = Field(description="metadata file:line the item came from.")
    size_bytes: int
    mtime_ns: int
    audio: AudioInfo

    @property
    def training_text(self) -> str:
        """What the model learns to speak: normalized_text when the metadata has one."""
        return self.normalized_text if self.normalized_text else self.text


class BadItem(BaseModel):
    source: str = Field(description="metadata file:line.")
    path: Optional[str] = Field(None, description="Audio path, when the line names one.")
    reason: BadReason
    detail: str


class ScanReport(BaseModel):
    dataset_path: str
    layout: Literal["ljspeech", "manifest"]
    metadata_files: list[str]
    split: Literal["hash", "file"] = Field(description="`hash`: eval_fraction of ids by hash; `file`: the eval metadata file.")
    train: list[DatasetItem]
    eval: list[DatasetItem]
    bad: list[BadItem]
    total_items: int = Field(description="Metadata lines considered (good + bad).")
    bad_fraction: float
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


class DatasetScanError(XttsError):
    """The scan found too many bad items (or none good); `report` holds the full list."""

    def __init__(self, *lines: str, hint: Optional[str] = None, report: Optional[ScanReport] = None):
        super().__init__(*lines, hint=hint)
        self.report = report


def dataset_root(data: DataConfig) -> Path:
    return Path(data.dataset_path).expanduser().resolve() if data.dataset_path else BUNDLED_SAMPLE


def scan_dataset(data: DataConfig) -> ScanReport:
    """Check every metadata line of the dataset and split the good ones into train / eval."""
    root = dataset_root(data)
    if not root.is_dir():
        raise XttsError(
            f"data.dataset_path: {str(root)!r} is not a directory",
            hint="point data.dataset_path at the dataset root (the folder holding metadata.csv), or leave it empty for the bundled sample",
        )
    train_file = root / data.metadata_train_file
    files = [train_file]
    if data.metadata_eval_file:
        files.append(root / data.metadata_eval_file)
    for key, path in zip(("metadata_train_file", "metadata_eval_file"), files):
        if not path.is_file():
            raise XttsError(
                f"data.{key}: {str(path)!r} not found",
                hint=f"set data.{key} to the metadata file, relative to data.dataset_path ({root})",
            )

    speakers_by_id = _read_speakers(train_file.parent / "speakers.csv")
    layouts: set[str] = set()
    parsed: list[list[DatasetItem]] = []
    bad: list[BadItem] = []
    total = 0
    for path in files:
        layout, entries = _read_metadata(path, root)
        layouts.add(layout)
        good: list[DatasetItem] = []
        for entry in entries:
            total += 1
            result = _check_entry(entry, root, data, speakers_by_id)
            (good if isinstance(result, DatasetItem) else bad).append(result)
        parsed.append(good)

    if len(files) == 2:
        train, evaluation, split = parsed[0], parsed[1], "file"
    else:
        train, evaluation = _hash_split(parsed[0], data.eval_fraction, data.seed)
        split = "hash"

    report = _report(root, files, layouts, split, train, evaluation, bad, total)
    if report.bad_fraction > data.max_bad_file_fraction:
        reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(report.bad_reasons.items(), key=lambda kv: -kv[1]))
        raise DatasetScanError(
            f"{len(bad)} of {total} dataset items are bad ({report.bad_fraction:.1%}), above "
            f"data.max_bad_file_fraction ({data.max_bad_file_fraction:.1%}): {reasons}",
            hint="fix or remove the listed files (`xtts validate` lists each with its reason), "
            "or raise data.max_bad_file_fraction to train on the good ones",
            report=report,
        )
    if not train:
        raise DatasetScanError(
            f"no usable training items in {str(train_file)!r} ({total} lines, {len(bad)} bad)",
            hint="check data.dataset_path, data.metadata_train_file and the duration / text limits in `data`",
            report=report,
        )
    return report


class _Entry(BaseModel):
    source: str
    id: Optional[str] = None
    path: Optional[str] = None  # relative (or absolute) path as written
    text: str = ""
    normalized_text: Optional[str] = None
    speaker: Optional[str] = None
    malformed: Optional[str] = None


def _read_lines(path: Path) -> list[str]:
    # utf-8-sig: a BOM written by spreadsheet exports must not end up in the first id.
    # Split on newlines only: str.splitlines would also break on U+2028, U+0085 and other
    # separators that may legitimately sit inside a transcript.
    with open(path, encoding="utf-8-sig", newline="") as handle:
        return [line.rstrip("\r") for line in handle.read().split("\n")]


def _read_metadata(path: Path, root: Path) -> tuple[str, list[_Entry]]:
    try:
        lines = _read_lines(path)
    except UnicodeDecodeError as error:
        raise XttsError(f"{str(path)!r} is not UTF-8 text ({error.reason} at byte {error.start})",
                        hint="re-save the metadata file as UTF-8") from None
    header = lines[0] if lines else ""
    delimiter = "\t" if "\t" in header else ","
    columns = [c.strip().lower() for c in header.split(delimiter)]
    if "path" in columns and "text" in columns:
        return "manifest", list(_manifest_entries(path, lines, delimiter))
    return "ljspeech", list(_ljspeech_entries(path, lines))


def _ljspeech_entries(path: Path, lines: list[str]) -> Iterator[_Entry]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        source = f"{path.name}:{number}"
        first, last = line.find("|"), line.rfind("|")
        if first <= 0:
            yield _Entry(source=source, malformed="expected `id|text` or `id|text|normalized_text`")
            continue
        key = line[:first].strip()
        if first == last:
            text, normalized = line[first + 1 :], None
        else:
            # First and last `|` only: a `|` inside the transcript stays part of it.
            text, normalized = line[first + 1 : last], line[last + 1 :]
        text = text.strip()
        normalized = normalized.strip() if normalized else None
        if os.path.splitext(key)[1].lower() in SUPPORTED_EXTENSIONS:
            yield _Entry(source=source, id=os.path.splitext(key)[0], path=key, text=text, normalized_text=normalized)
        else:
            yield _Entry(source=source, id=key, text=text, normalized_text=normalized)


def _manifest_entries(path: Path, lines: list[str], delimiter: str) -> Iterator[_Entry]:
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter)
    columns = [c.strip().lower() for c in next(reader)]
    where = {name: columns.index(name) for name in ("path", "text", "speaker") if name in columns}
    for number, row in enumerate(reader, start=2):
        if not any(cell.strip() for cell in row):
            continue
        source = f"{path.name}:{number}"
        if len(row) != len(columns):
            yield _Entry(source=source, malformed=f"expected {len(columns)} columns ({', '.join(columns)}), got {len(row)}")
            continue
        audio = row[where["path"]].strip()
        speaker = row[where["speaker"]].strip() if "speaker" in where else None
        yield _Entry(source=source, id=os.path.splitext(audio)[0], path=audio, text=row[where["text"]].strip(),
                     speaker=speaker or None)


def _read_speakers(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    speakers = {}
    for line in _read_lines(path):
        key, sep, speaker = line.partition("|")
        if sep and key.strip() and speaker.strip():
            speakers[key.strip()] = speaker.strip()
    return speakers


def _resolve(entry: _Entry, root: Path, allow_absolute: bool) -> tuple[Optional[str], str, Optional[BadItem]]:
    """(absolute path or None, path as written, problem)."""
    if entry.path is None:
        candidates = [f"wavs/{entry.id}{ext}" for ext in SUPPORTED_EXTENSIONS]
        for candidate in candidates:
            if (root / candidate).is_file():
                return str(root / candidate), candidate, None
        written = candidates[0]
    else:
        written = entry.path
    escapes = os.path.isabs(written) or os.path.relpath(os.path.normpath(root / written), root).startswith("..")
    if escapes and not allow_absolute:
        return None, written, BadItem(
            source=entry.source, path=written, reason="path_escapes_root",
            detail="audio path points outside the dataset root; set data.allow_absolute_paths: true to allow it",
        )
    return os.path.normpath(root / written), written, None


def _check_entry(entry: _Entry, root: Path, data: DataConfig, speakers: dict[str, str]) -> DatasetItem | BadItem:
    if entry.malformed:
        return BadItem(source=entry.source, reason="malformed_line", detail=entry.malformed)
    audio_path, written, problem = _resolve(entry, root, data.allow_absolute_paths)
    if problem:
        return problem

    def bad(reason: str, detail: str) -> BadItem:
        return BadItem(source=entry.source, path=written, reason=reason, detail=detail)

    item_text = entry.normalized_text or entry.text
    cleaned = clean_text(item_text, data.text_cleaners)
    if not cleaned.strip():
        return bad("empty_text", "transcript is empty after cleaning")
    if len(cleaned) > data.max_text_length:
        return bad("text_too_long", f"{len(cleaned)} characters after cleaning, above data.max_text_length ({data.max_text_length})")
    try:
        header = read_audio_header(audio_path)
        stat = os.stat(audio_path)
    except AudioHeaderError as error:
        return bad(error.reason, error.detail)
    except OSError as error:
        return bad("missing", f"cannot read the file: {error.strerror}")
    # Length at the training rate, as the resampler returns it: floor(n * out / in).
    samples = header.num_samples * data.sample_rate // header.sample_rate
    seconds = samples / data.sample_rate
    if seconds < data.min_audio_duration:
        return bad("too_short", f"{seconds:.2f} s, below data.min_audio_duration ({data.min_audio_duration:g} s)")
    if seconds > data.max_audio_duration:
        return bad("too_long", f"{seconds:.2f} s, above data.max_audio_duration ({data.max_audio_duration:g} s)")
    frames = 1 + samples // data.hop_length
    if frames > data.max_mel_frames:
        return bad("too_many_frames", f"{frames} mel frames, above data.max_mel_frames ({data.max_mel_frames})")
    # speakers.csv is keyed by LJSpeech ids (file stems); a manifest's id is its path without extension.
    key = entry.id or ""
    speaker = entry.speaker or speakers.get(key) or speakers.get(os.path.basename(key)) or DEFAULT_SPEAKER
    return DatasetItem(
        id=entry.id or written,
        audio_path=audio_path,
        relative_path=written,
        text=entry.text,
        normalized_text=entry.normalized_text or None,
        speaker=speaker,
        source=entry.source,
        size_bytes=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        audio=AudioInfo(
            format=header.format, codec=header.codec, sample_rate=header.sample_rate, channels=header.channels,
            bit_depth=header.bit_depth, num_samples=header.num_samples, duration=header.duration,
            data_offset=header.data_offset,
        ),
    )


def split_hash(item_id: str, seed: int) -> float:
    """A stable number in [0, 1) for an id: the same split on every machine and Python run."""
    digest = hashlib.sha256(f"{seed}:{item_id}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _hash_split(items: list[DatasetItem], eval_fraction: float, seed: int) -> tuple[list[DatasetItem], list[DatasetItem]]:
    if eval_fraction <= 0 or len(items) < 2:
        return list(items), []
    keyed = [(split_hash(item.id, seed), item) for item in items]
    evaluation = [item for h, item in keyed if h < eval_fraction]
    if not evaluation:
        # A small dataset can miss the fraction entirely; validation asked for must not be empty,
        # so hold out the single item with the lowest hash (still a pure function of the ids).
        evaluation = [min(keyed, key=lambda pair: pair[0])[1]]
    held = {id(item) for item in evaluation}
    return [item for item in items if id(item) not in held], evaluation


def _report(root: Path, files: list[Path], layouts: set[str], split: str, train: list[DatasetItem],
            evaluation: list[DatasetItem], bad: list[BadItem], total: int) -> ScanReport:
    good = train + evaluation
    durations = [item.audio.num_samples / item.audio.sample_rate for item in good]
    hours = lambda items: sum(i.audio.num_samples / i.audio.sample_rate for i in items) / 3600  # noqa: E731
    return ScanReport(
        dataset_path=str(root),
        layout="manifest" if "manifest" in layouts else "ljspeech",
        metadata_files=[str(f) for f in files],
        split=split,
        train=train,
        eval=evaluation,
        bad=bad,
        total_items=total,
        bad_fraction=len(bad) / total if total else 0.0,
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
