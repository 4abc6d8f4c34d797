"""Corpus layouts: where each kind of TTS dataset keeps its transcripts, audio and speakers.

`detect_format` names the layout of a folder (`data.dataset_format: auto`); `read_layout` lists its
items as entries (audio path, transcript, speaker, where the item came from) for the scan to check
against the audio headers. Nothing here opens an audio file.

| format | what is in the folder |
|---|---|
| `ljspeech` | `metadata.csv`: `id|text` or `id|text|normalized_text`, audio in `wavs/<id>.wav` |
| `coqui` | `metadata.csv` with the header `audio_file|text|speaker_name` |
| `manifest` | a CSV / TSV with a header holding `path` and `text` (and `speaker`) |
| `vctk` | `txt/<spk>/<spk>_<n>.txt` + `wav48_silence_trimmed/<spk>/<spk>_<n>_mic1.flac` (0.92) or `wav48/<spk>/<spk>_<n>.wav` |
| `libritts` | `<spk>/<chapter>/<utt>.wav` + `<utt>.normalized.txt`: a split folder, or the corpus root (its `train-*` splits) |
| `common_voice` | `validated.tsv` (else `train.tsv`) + `clips/*.mp3`; the speaker is `client_id` |
| `nemo` | a JSON-lines manifest (`*.json` / `*.jsonl`): `audio_filepath`, `text`, optional `duration`, `speaker` |
"""

from __future__ import annotations

import csv
import io
import json
import os
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Optional

from xtts_cli.config.schema import DATASET_FORMATS, DataConfig
from xtts_cli.data.audio_headers import SUPPORTED_EXTENSIONS, UNREAD_EXTENSIONS
from xtts_cli.data.read_ahead import ReadAhead
from xtts_cli.errors import XttsError

VCTK_AUDIO = ("wav48_silence_trimmed", "wav48")
VCTK_MICS = ("_mic1.flac", "_mic2.flac")
COMMON_VOICE_FILES = ("validated.tsv", "train.tsv")
NEMO_SUFFIXES = (".json", ".jsonl")
LAYOUTS_LOOKED_FOR = (
    "ljspeech / coqui / manifest (data.metadata_train_file, default metadata.csv), "
    "vctk (txt/ + wav48_silence_trimmed/ or wav48/), libritts (<speaker>/<chapter>/<utterance>.wav + "
    ".normalized.txt), common_voice (validated.tsv or train.tsv + clips/), nemo (a .json / .jsonl manifest "
    "with audio_filepath and text), folder (clip.wav + clip.txt or clip.lab, in the folder or one "
    "folder per speaker)"
)
# A transcript beside its clip, as Montreal Forced Aligner's corpora keep them.
FOLDER_TRANSCRIPTS = (".txt", ".lab")


@dataclass(slots=True)
class Entry:
    """One item as its metadata describes it, before its audio is checked (a plain dataclass: a
    large corpus makes one per clip, and nothing here needs validating)."""

    source: str  # where it came from: `metadata.csv:12`, `txt/p225/p225_001.txt`
    id: Optional[str] = None
    path: Optional[str] = None  # relative to the dataset root (or absolute) as written
    text: str = ""
    normalized_text: Optional[str] = None
    speaker: Optional[str] = None
    malformed: Optional[str] = None
    missing_transcript: Optional[str] = None
    not_utf8: Optional[str] = None  # its line or transcript, in another encoding


class Layout(NamedTuple):
    format: str
    files: list[Path]  # the metadata files read, or the folders walked
    train: list[Entry]
    eval: Optional[list[Entry]]  # None: the scan splits `train` by id hash
    # What the entries were read from, for the scan's memo to watch: (path, "stat") for a metadata
    # file, a transcript, or a folder whose files were listed (its mtime changes when one is added
    # or removed); (path, "folders") for a folder whose sub-folders were (its own mtime also
    # changes when xtts makes its feature store there, so the names are compared instead).
    watched: tuple[tuple[str, str], ...] = ()


def read_layout(root: Path, data: DataConfig, dataset_format: str = "auto") -> Layout:
    """The entries of the dataset at `root` in `dataset_format` (`auto`: detected)."""
    fmt = detect_format(root, data) if dataset_format == "auto" else dataset_format
    layout = _read_layout(root, data, fmt)
    layout = layout._replace(
        train=_utf8_named(layout.train), eval=_utf8_named(layout.eval) if layout.eval is not None else None
    )
    if layout.watched:
        return layout
    return layout._replace(watched=tuple((str(path), "stat") for path in layout.files))  # its metadata files


def printable(name: str) -> str:
    """A file name as Python lists it, with the bytes that are not UTF-8 (a Windows zip's Latin-1
    names) shown as \\xNN escapes: what can be printed, and written into JSON."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _utf8_named(entries: list[Entry]) -> list[Entry]:
    """`entries`, each one whose file, folder or speaker name is not UTF-8 made a `not_utf8` entry
    with that name printable: a name that cannot be written out cannot be hashed, stored or shown."""
    return [_not_utf8_name(entry) if _undecodable(entry) else entry for entry in entries]


def _undecodable(entry: Entry) -> bool:
    return any(name is not None and printable(name) != name for name in (entry.path, entry.id, entry.speaker))


def _not_utf8_name(entry: Entry) -> Entry:
    name = printable(entry.path or entry.id or entry.speaker or "")
    return Entry(
        source=printable(entry.source),
        path=name,
        not_utf8="its file or folder name is not UTF-8 (shown with \\xNN for its bytes): rename it in UTF-8 "
        "(convmv -f latin1 -t utf8 -r --notest FOLDER renames a folder's)",
    )


def _read_layout(root: Path, data: DataConfig, fmt: str) -> Layout:
    if fmt in ("ljspeech", "coqui", "manifest"):
        return _metadata_layout(root, data, fmt)
    if fmt == "nemo":
        train = _nemo_manifest(root, data)
        files = [train] + _eval_file(root, data)
        return Layout(
            fmt,
            files,
            list(_nemo_entries(train, root)),
            list(_nemo_entries(files[1], root)) if len(files) == 2 else None,
        )
    if fmt == "common_voice":
        table = _common_voice_table(root, data)
        return Layout(fmt, [table], list(_common_voice_entries(table, root)), None)
    if fmt == "vctk":
        folder = next((root / name for name in VCTK_AUDIO if (root / name).is_dir()), None)
        if folder is None or not (root / "txt").is_dir():
            raise XttsError(
                f"{str(root)!r} is not a VCTK folder: no txt/ with wav48_silence_trimmed/ or wav48/",
                hint="point the dataset path at the VCTK root, or set data.dataset_format: auto",
            )
        watched: list[tuple[str, str]] = [(str(root), "folders")]
        entries = list(_vctk_entries(root, folder, watched))
        return Layout(fmt, [root / "txt", folder], entries, None, tuple(watched))
    if fmt == "libritts":
        splits = libritts_splits(root)
        if not splits:
            raise XttsError(
                f"{str(root)!r} is not a LibriTTS folder: no <speaker>/<chapter>/<utterance>.wav",
                hint="point the dataset path at a LibriTTS split (train-clean-100) or the corpus root",
            )
        watched = [] if splits == [root] else [(str(root), "folders")]
        entries = [entry for split in splits for entry in _libritts_entries(root, split, watched)]
        return Layout(fmt, splits, entries, None, tuple(watched))
    if fmt == "folder":
        watched = []
        entries = list(_folder_entries(root, watched))
        if not entries:
            raise XttsError(
                f"{str(root)!r} holds no audio in it or one folder below",
                hint="keep each clip (clip.wav) beside its transcript (clip.txt), in the folder or a folder per speaker",
            )
        return Layout(fmt, [root], entries, None, tuple(watched))
    raise XttsError(
        f"data.dataset_format: unknown format {fmt!r}", hint=f"use one of: auto, {', '.join(DATASET_FORMATS)}"
    )


def detect_format(root: Path, data: DataConfig) -> str:
    metadata = root / data.metadata_train_file
    if metadata.is_file():
        return _metadata_format(metadata)
    if (root / "txt").is_dir() and any((root / name).is_dir() for name in VCTK_AUDIO):
        return "vctk"
    if (root / "clips").is_dir() and any((root / name).is_file() for name in COMMON_VOICE_FILES):
        return "common_voice"
    if _nemo_candidates(root):
        return "nemo"
    if libritts_splits(root, transcribed=True):
        return "libritts"
    if _has_clip_with_transcript(root):
        return "folder"
    near = _near_miss(root, data)
    if near is not None:  # an archive unpacked into its own folder, a metadata file named otherwise
        raise XttsError(f"no known dataset layout in {str(root)!r}: {near[0]}", hint=near[1])
    deeper = _deeper_clip(root)
    raise XttsError(
        f"no known dataset layout in {str(root)!r}: looked for {LAYOUTS_LOOKED_FOR}",
        hint=f"clips with transcripts lie deeper ({deeper}): move each speaker's clips up into its folder, or "
        "list them in a manifest (path,text,speaker)"
        if deeper
        else "point the dataset path at the corpus root, set data.metadata_train_file to your metadata file, "
        "or set data.dataset_format",
    )


def _near_miss(root: Path, data: DataConfig) -> Optional[tuple[str, str]]:
    """(what was found, the fix) for the commonest near misses: the corpus one folder down
    (LJSpeech-1.1/metadata.csv, as its archive unpacks) or up (its wavs/), or one metadata file of
    another name."""
    if not root.is_dir():
        return None
    # One folder too deep: the corpus's wavs/, clips/, txt/ or wav48/ given for the corpus.
    if root.name in ("wavs", "clips", "txt", *VCTK_AUDIO) and root.parent != root:
        try:
            found = detect_format(root.parent, data)
        except XttsError:
            found = None
        if found is not None:
            return (
                f"it is the {root.name}/ folder of the {found} corpus in {root.parent}",
                f"point the dataset path at {root.parent} (--data {root.parent})",
            )
    below = sorted(p for p in root.iterdir() if p.is_dir() and (p / data.metadata_train_file).is_file())
    if len(below) == 1:
        return (
            f"{below[0].name}/{data.metadata_train_file} is one folder down",
            f"point the dataset path at {below[0]} (--data {below[0]})",
        )
    tables = sorted(
        p
        for p in root.glob("*")
        if p.suffix.lower() in (".csv", ".tsv", ".txt") and p.name != "speakers.csv" and p.is_file()
    )
    if len(tables) == 1 and (root / "wavs").is_dir():
        return (
            f"no {data.metadata_train_file}, but {tables[0].name} beside wavs/",
            f"if it lists the clips, set data.metadata_train_file: {tables[0].name}",
        )
    return None


def _deeper_clip(root: Path, depth: int = 4) -> Optional[str]:
    """A clip beside its transcript two to `depth` folders below `root` (relative), which the folder
    layout does not read: `alice/session1/a.wav`; None when there is none."""
    for folder, subfolders, files in os.walk(root):
        level = len(Path(folder).relative_to(root).parts)
        subfolders[:] = sorted(name for name in subfolders if not name.startswith(".")) if level < depth else []
        stems = {os.path.splitext(name)[0] for name in files if name.endswith((".txt", ".lab"))}
        clip = next(
            (
                n
                for n in sorted(files)
                if os.path.splitext(n)[1].lower() in SUPPORTED_EXTENSIONS and os.path.splitext(n)[0] in stems
            ),
            None,
        )
        if level >= 2 and clip is not None:
            return os.path.relpath(os.path.join(folder, clip), root)
    return None


# --- metadata files: ljspeech, coqui, manifest ---------------------------------------------------


NOT_UTF8 = "not UTF-8 text (saved in another encoding, such as Windows-1252); re-save the file as UTF-8"


def read_lines(path: Path) -> list[str]:
    """The file's lines; one that is not UTF-8 is an XttsError naming its line (`lines_and_faults`
    for a corpus's metadata, where that line is one bad item among good ones)."""
    lines, faults = lines_and_faults(path)
    if faults:
        raise XttsError(f"{str(path)!r} line {min(faults)} is not UTF-8 text", hint="re-save the file as UTF-8")
    return lines


def lines_and_faults(path: Path) -> tuple[list[str], dict[int, str]]:
    """The file's lines, and {line number: why} for each that is not UTF-8 (left empty in the list):
    one line pasted from a spreadsheet in Windows-1252 spoils that line, not the thousands beside it."""
    # A BOM written by spreadsheet exports must not end up in the first id. Split on newlines only:
    # str.splitlines would also break on U+2028, U+0085 and other separators a transcript may hold.
    raw = _as_utf8(path, path.read_bytes()).removeprefix(b"\xef\xbb\xbf")
    if b"\r" in raw and b"\n" not in raw:  # classic Mac line ends (a spreadsheet's "CSV (Macintosh)")
        raw = raw.replace(b"\r", b"\n")
    lines, faults = [], {}
    for number, line in enumerate(raw.split(b"\n"), start=1):
        try:
            text = line.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as error:
            lines.append("")
            faults[number] = f"{NOT_UTF8} ({error.reason} at byte {error.start} of the line)"
            continue
        if "\x00" in text:  # valid UTF-8, but no name or transcript holds it (nor may a path)
            lines.append("")
            # Not another encoding: re-saving as UTF-8 keeps the NUL (a copy cut short, bytes pasted in).
            at = text.index(chr(0))
            faults[number] = f"a NUL byte at character {at} of the line, which no text holds; delete it from the line"
            continue
        lines.append(text)
    return lines, faults


def _fault_ids(path: Path, faults: dict[int, str]) -> dict[int, str]:
    """The id of each LJSpeech line that is not UTF-8, where the id itself is (mostly ASCII before
    the first `|`): its clip is then the line's, not audio no row lists."""
    if not faults:
        return {}
    raw = _as_utf8(path, path.read_bytes()).removeprefix(b"\xef\xbb\xbf").split(b"\n")
    ids = {}
    for number in faults:
        head, sep, _ = raw[number - 1].partition(b"|")
        try:
            key = head.decode("utf-8").strip()
        except UnicodeDecodeError:
            continue
        if sep and key and "\x00" not in key:
            ids[number] = os.path.splitext(key)[0] if os.path.splitext(key)[1].lower() in SUPPORTED_EXTENSIONS else key
    return ids


def _as_utf8(path: Path, raw: bytes) -> bytes:
    """`raw` as UTF-8: a file saved as UTF-16 (Windows' "Unicode text", with its byte-order mark or,
    little-endian, a NUL after each ASCII letter of its first line) is read as what it says."""
    head = raw[: raw.find(b"\n") if b"\n" in raw[:4096] else 4096]
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    elif len(head) >= 8 and head[1::2].count(0) > 0.8 * len(head[1::2]):
        encoding = "utf-16-le"
    else:
        return raw
    try:
        return raw.decode(encoding).encode("utf-8")
    except UnicodeDecodeError as error:
        raise XttsError(
            f"{path}: UTF-16 text that does not decode at byte {error.start}",
            hint="re-save it as UTF-8 (e.g. iconv -f utf-16 -t utf-8)",
        ) from None


def _header(line: str) -> tuple[str, list[str]]:
    delimiter = "|" if "|" in line else "\t" if "\t" in line else ","
    return delimiter, [column.strip().lower() for column in line.split(delimiter)]


# The names a manifest's header may give its audio, text and speaker columns, first found first taken:
# spreadsheet exports and other tools' manifests (file,text; wav_filename,transcript; audio,sentence).
MANIFEST_COLUMNS = {
    "path": ("path", "file", "filename", "file_name", "audio", "audio_path", "wav", "wav_path", "wav_filename"),
    "text": ("text", "transcript", "transcription", "sentence"),
    "speaker": ("speaker", "speaker_name", "speaker_id"),
}


def _metadata_format(path: Path) -> str:
    text = _as_utf8(path, path.read_bytes()).decode("utf-8-sig", "replace")
    first = text.split("\n", 1)[0].strip()
    delimiter, columns = _header(first)
    if "audio_file" in columns and "text" in columns:
        return "coqui"
    if all(any(name in columns for name in MANIFEST_COLUMNS[role]) for role in ("path", "text")):
        rows = [line for line in text.split("\n")[1:] if line.strip()]
        if delimiter == "|" and len(columns) == 2 and rows and rows[0].count("|") == 2 and _is_header(first):
            # LJSpeech's `id|text|normalized_text` under a two-name header line (`file|transcript`): its
            # reader skips that line and reads the third column as the normalized text, not one too many.
            return "ljspeech"
        return "manifest"
    if first.startswith("{") and '"audio_filepath"' in first:
        return "nemo"
    return "ljspeech"


def _eval_file(root: Path, data: DataConfig) -> list[Path]:
    return [root / data.metadata_eval_file] if data.metadata_eval_file else []


def _metadata_layout(root: Path, data: DataConfig, fmt: str) -> Layout:
    files = [root / data.metadata_train_file] + _eval_file(root, data)
    for key, path in zip(("metadata_train_file", "metadata_eval_file"), files):
        if not path.is_file():
            raise XttsError(
                f"data.{key}: {str(path)!r} not found",
                hint=f"set data.{key} to the metadata file, relative to the dataset path ({root})",
            )
    read = [list(_metadata_entries(path, fmt)) for path in files]
    return Layout(fmt, files, read[0], read[1] if len(read) == 2 else None)


def _metadata_entries(path: Path, fmt: str) -> Iterator[Entry]:
    lines, faults = lines_and_faults(path)
    written = sum(bool(line.strip()) for line in lines) + len(faults)
    if len(faults) > 1 and len(faults) * 2 > written:  # the file, not a line pasted into it
        raise XttsError(
            f"{path}: {len(faults)} of its {written} lines are not UTF-8 text (saved in another encoding, such as "
            "Windows-1252)",
            hint=f"re-save it as UTF-8, e.g. iconv -f WINDOWS-1252 -t UTF-8 {shlex.quote(str(path))} > utf8.csv, "
            "then put that in its place",
        )
    ids = _fault_ids(path, faults) if fmt == "ljspeech" else {}
    for number, why in faults.items():
        yield Entry(source=f"{path.name}:{number}", id=ids.get(number), not_utf8=why)
    if fmt == "ljspeech":
        entries = list(_ljspeech_entries(path, lines))
        _refuse_speakers_as_text(path, entries)
        yield from entries
        return
    delimiter, _ = _header(lines[0] if lines else "")
    if fmt == "coqui":
        yield from _table_entries(path, lines, delimiter, "audio_file", "text", "speaker_name")
    else:
        columns = MANIFEST_COLUMNS
        yield from _table_entries(path, lines, delimiter, columns["path"], columns["text"], columns["speaker"])


_UNCLEAR_IN_THREE = (
    "a | inside the text of an `id|text|normalized_text` line: which | ends the text is unclear; write the line "
    "without it"
)
_UNCLEAR_IN_TWO = (
    "several | with no space around them in a line of a file whose lines are `id|text`: which is the text is "
    "unclear; keep one, to end the text before its normalized text, or none"
)


def _ljspeech_entries(path: Path, lines: list[str]) -> Iterator[Entry]:
    # `id|text|normalized_text` on most lines: a `|` inside a transcript stays part of it (first and
    # last `|` only). `id|text` on most: a second `|` is the transcript's own, or ends the text of a line
    # that also has its normalized text (`_text_in_two_columns`).
    three = sum(line.count("|") > 1 for line in lines) * 2 > sum("|" in line for line in lines)
    for number, line in enumerate(lines, start=1):
        if not line.strip() or (number == 1 and _is_header(line)):
            continue
        source = f"{path.name}:{number}"
        first, last = line.find("|"), line.rfind("|")
        if first <= 0:
            alone = line.strip() if first < 0 and len(line.split()) == 1 else None  # an id without its text
            problem = "expected `id|text` or `id|text|normalized_text`"
            if first < 0 and "\t" in line.strip():  # a spreadsheet's export: the usual cause, and its fix
                problem += ": its columns are split by tabs; split them by `|`"
                alone = line.strip().split("\t")[0].strip() or None  # its clip is no unlisted audio too
            yield Entry(source=source, id=alone, malformed=problem)
            continue
        key = line[:first].strip()
        if first == last:
            text, normalized = line[first + 1 :], None
        else:
            rest = line[first + 1 :]
            read = _text_and_normalized(rest) if three else _text_in_two_columns(rest)
            if read is None:
                yield Entry(source=source, id=key, malformed=_UNCLEAR_IN_THREE if three else _UNCLEAR_IN_TWO)
                continue
            text, normalized = read
        text = text.strip()
        normalized = normalized.strip() if normalized else None
        if os.path.splitext(key)[1].lower() in SUPPORTED_EXTENSIONS:
            yield Entry(source=source, id=os.path.splitext(key)[0], path=key, text=text, normalized_text=normalized)
        else:
            yield Entry(source=source, id=key, text=text, normalized_text=normalized)


def _is_header(line: str) -> bool:
    """A first line that names the columns (`id|text|normalized_text`, as spreadsheets export it):
    LJSpeech has none, and read as a clip it would be one that is missing."""
    cells = [cell.strip().lower() for cell in line.split("|")]
    return len(cells) > 1 and cells[1] in (*MANIFEST_COLUMNS["text"], "normalized_text")


def _refuse_speakers_as_text(path: Path, entries: list[Entry]) -> None:
    """A one-line XttsError when the third column of an LJSpeech file holds a few short names, one
    per voice, rather than each line's normalized text: read as LJSpeech, the model would learn to
    say a speaker's name for every clip (`id|text|speaker` is a common home-made layout)."""
    rows = [entry for entry in entries if entry.normalized_text and entry.text]
    names = sorted({entry.normalized_text for entry in rows if entry.normalized_text})
    short = [
        entry
        for entry in rows
        if len(str(entry.normalized_text).split()) <= 2
        and len(entry.text.split()) > 2 * len(str(entry.normalized_text).split())
    ]
    if len(rows) < 2 or len(short) * 2 <= len(rows) or len(names) > max(2, len(rows) // 4):
        return
    shown = ", ".join(repr(name) for name in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    raise XttsError(
        f"{path}: its third column holds {len(names)} short value{'s' if len(names) > 1 else ''} ({shown}) over "
        f"{len(rows)} lines, where LJSpeech keeps each line's normalized text: speaker names? Read as LJSpeech, "
        "the model would learn to say them for every clip",
        hint="keep `id|text` in it and put one `id|speaker` line per clip in speakers.csv beside it, or write it "
        "in the coqui layout (a header `audio_file|text|speaker_name`, then one line per clip)",
    )


def _text_in_two_columns(rest: str) -> Optional[tuple[str, Optional[str]]]:
    """What follows the id in a file of `id|text` lines, with a second `|`. One with no space either
    side ends the text of a line that has its normalized text too (`text|normalized_text`, as LJSpeech
    writes it); one spaced is the transcript's own ("Press A | B", a lyric's line break); an empty last
    cell is none. None when two or more unspaced ones say neither. A mixed file had trained "The cat
    sat.|The cat sat." as one transcript, its `|` a symbol."""
    body = rest
    while body.rstrip().endswith("|"):  # `id|text|`: an empty normalized text
        body = body.rstrip()[:-1]
    cuts = [
        index
        for index, char in enumerate(body)
        if char == "|"
        and 0 < index < len(body) - 1
        and not any(body[near].isspace() or body[near] == "|" for near in (index - 1, index + 1))
    ]
    if not cuts:
        return body, None
    if len(cuts) == 1:
        return body[: cuts[0]], body[cuts[0] + 1 :]
    return _text_and_normalized(body)


def _text_and_normalized(rest: str) -> Optional[tuple[str, str]]:
    """`text|normalized_text` of a three-column line; with a `|` inside, the split that is not in
    doubt: the middle `|` when both halves read the same (LJSpeech's normalized text is mostly its
    text), the last when nothing follows it; else None."""
    cells = rest.split("|")
    if len(cells) == 2:
        return cells[0], cells[1]
    if len(cells) % 2 == 0:
        half = len(cells) // 2
        text, normalized = "|".join(cells[:half]), "|".join(cells[half:])
        if text.strip() == normalized.strip():
            return text, normalized
    if not cells[-1].strip():
        return "|".join(cells[:-1]), ""
    return None


def _table_entries(
    path: Path,
    lines: list[str],
    delimiter: str,
    path_column: str | tuple[str, ...],
    text_column: str | tuple[str, ...],
    speaker_column: str | tuple[str, ...],
    folder: str = "",
) -> Iterator[Entry]:
    """Rows of a delimited table with a header; columns found by name (the first of each tuple of
    names present). A row with more cells than the header, or one whose quotation mark runs on over
    the lines after it, is malformed: its text would be cut short or swallow the rows below."""
    # A comma-separated file quotes the cells that hold a comma (RFC 4180). Tab- and `|`-separated
    # ones are written unquoted by coqui and Common Voice, so there a quotation mark is the text's
    # own; a cell a spreadsheet quoted whole ("""Stop,"" she said.") is unquoted.
    quoted = delimiter == ","
    rows = io.StringIO("\n".join(lines))
    reader = csv.reader(rows, delimiter=delimiter, quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE)
    columns = [column.strip().lower() for column in next(reader, [])]
    names = [(n,) if isinstance(n, str) else n for n in (path_column, text_column, speaker_column)]
    missing = [" or ".join(options) for options in names[:2] if not any(n in columns for n in options)]
    if missing:
        raise XttsError(
            f"{str(path)!r}: no {' nor '.join(missing)} column in the header ({', '.join(columns)})",
            hint=f"the first line names the columns, among them {names[0][0]} and {names[1][0]}",
        )
    path_column, text_column, speaker_column = (next((n for n in options if n in columns), "") for options in names)
    where = {name: columns.index(name) for name in (path_column, text_column, speaker_column) if name in columns}
    for number, row, lines_more in _table_rows(lines, reader.line_num, delimiter, quoted):
        if not any(cell.strip() for cell in row):
            continue
        source = f"{path.name}:{number}"
        if not quoted:
            row = [_unquoted(cell) for cell in row]
        audio = row_clip(row, delimiter, max(where.values()), where[path_column]) if not lines_more else ""
        written = f"{folder}/{audio}" if folder and audio else audio
        # A clip's name alone (`LJ001-0001`, as LJSpeech writes it): found in wavs/ as LJSpeech's are.
        named = not folder and "/" not in audio and os.path.splitext(audio)[1].lower() not in SUPPORTED_EXTENSIONS
        clip, clip_path = os.path.splitext(written)[0], None if named and audio else written
        problem = _row_problem(row, columns, max(where.values()), lines_more, delimiter)
        if problem:  # the clip it names, where it names one, is no unlisted audio
            yield Entry(source=source, malformed=problem, id=clip or None, path=clip_path or None)
            continue
        speaker = row[where[speaker_column]].strip() if speaker_column in where else None
        yield Entry(
            source=source, id=clip, path=clip_path, text=row[where[text_column]].strip(), speaker=speaker or None
        )


def _table_rows(
    lines: list[str], header_lines: int, delimiter: str, quoted: bool
) -> Iterator[tuple[int, list[str], int]]:
    """(line number, cells, lines it runs on over) of each row after the header. A row whose quotation
    mark runs on is given alone: the rows it swallowed are read again from the line after it, so one
    stray mark costs its own row, not every row below it."""
    start = header_lines
    while start < len(lines):
        reader = csv.reader(
            io.StringIO("\n".join(lines[start:])),
            delimiter=delimiter,
            quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE,
        )
        first, restart = 1, None
        for row in reader:
            number, first = start + first, reader.line_num + 1
            lines_more = start + reader.line_num - number
            yield number, row, lines_more
            if lines_more:
                restart = number  # the line after the row's own, as a row of its own
                break
        if restart is None:
            return
        start = restart


def _row_problem(
    row: list[str], columns: list[str], last_needed: int, lines_more: int, delimiter: str
) -> Optional[str]:
    expected = f"expected {len(columns)} columns ({', '.join(columns)})"
    if lines_more:
        return (
            f"a quotation mark opens a cell that runs on over the next {lines_more} line(s); close it, "
            'or double the quotation marks inside a quoted cell ("")'
        )
    if len(row) <= last_needed:
        other = _other_delimiter(row, delimiter, last_needed)
        if other:  # a row pasted from another file: the whole line one cell
            return f"{expected}, got {len(row)}: its cells are separated by {_named(other)}, the file's by {_named(delimiter)}"
        return f"{expected}, got {len(row)}"
    if any(cell.strip() for cell in row[len(columns) :]):
        if delimiter == ",":
            return f"{expected}, got {len(row)}: is a comma inside a text? quote that cell"
        # Unquoted (coqui, Common Voice): a quotation mark there is the text's own, so quoting cannot help.
        return f"{expected}, got {len(row)}: is {_named(delimiter)} inside a text? take it out of the text"
    return None


def _named(delimiter: str) -> str:
    return "a tab" if delimiter == "\t" else f"a {delimiter}"


def _other_delimiter(row: list[str], delimiter: str, last_needed: int) -> str:
    """The delimiter of another table (tab, |, comma) that splits a row of too few cells into enough, or ""."""
    line = delimiter.join(row)
    return next((d for d in ("\t", "|", ",") if d != delimiter and line.count(d) >= last_needed), "")


def row_clip(row: list[str], delimiter: str, last_needed: int, path_column: int) -> str:
    """The clip's cell of a row, split by another table's delimiter when its own leaves too few cells."""
    other = _other_delimiter(row, delimiter, last_needed) if len(row) <= last_needed else ""
    cells = delimiter.join(row).split(other) if other else row
    return cells[path_column].strip() if len(cells) > path_column else ""


def _unquoted(cell: str) -> str:
    """A cell quoted whole by a spreadsheet, its inner quotation marks doubled, as written; any
    other cell as it is."""
    inner = cell.strip()[1:-1]
    quoted = len(cell.strip()) > 1 and cell.strip()[0] == cell.strip()[-1] == '"'
    return inner.replace('""', '"') if quoted and '"' not in inner.replace('""', "") else cell


# --- NeMo ----------------------------------------------------------------------------------------


def _nemo_candidates(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        if path.suffix.lower() in NEMO_SUFFIXES and path.is_file():
            with open(path, encoding="utf-8-sig", errors="replace") as handle:
                first = handle.readline().strip()
            if first.startswith("{") and '"audio_filepath"' in first:
                found.append(path)
    return found


def nemo_manifests_unread(root: Path, data: DataConfig) -> Optional[tuple[Path, list[Path]]]:
    """(the manifest trained on, the others beside it) when `_nemo_manifest` picks one of several by
    the "train" in its name; None when it reads the only one or the one named."""
    if (root / data.metadata_train_file).is_file():
        return None
    candidates = _nemo_candidates(root)
    training = [path for path in candidates if "train" in path.name.lower()]
    if len(candidates) < 2 or len(training) != 1:
        return None
    return training[0], [path for path in candidates if path != training[0]]


def _nemo_manifest(root: Path, data: DataConfig) -> Path:
    named = root / data.metadata_train_file
    if named.is_file():
        return named
    candidates = _nemo_candidates(root)
    if len(candidates) > 1:
        training = [path for path in candidates if "train" in path.name.lower()]
        if len(training) == 1:
            return training[0]
        raise XttsError(
            f"several NeMo manifests in {str(root)!r}: {', '.join(path.name for path in candidates)}",
            hint="set data.metadata_train_file (and data.metadata_eval_file) to the one to train on",
        )
    if not candidates:
        raise XttsError(
            f"no NeMo manifest (.json / .jsonl with audio_filepath) in {str(root)!r}",
            hint="set data.metadata_train_file to the manifest, relative to the dataset path",
        )
    return candidates[0]


def _nemo_entries(path: Path, root: Path) -> Iterator[Entry]:
    lines, faults = lines_and_faults(path)
    for number, why in faults.items():
        yield Entry(source=f"{path.name}:{number}", not_utf8=why)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        source = f"{path.name}:{number}"
        try:
            record = json.loads(line)
        except ValueError as error:
            yield Entry(source=source, malformed=f"not a JSON object ({error})")
            continue
        if not isinstance(record, dict) or "audio_filepath" not in record or "text" not in record:
            yield Entry(source=source, malformed="expected a JSON object with audio_filepath and text")
            continue
        if isinstance(record["text"], (list, dict)):
            yield Entry(source=source, malformed="its text is a JSON list or object, not a transcript")
            continue
        audio = str(record["audio_filepath"])
        if not os.path.isabs(audio):
            # NeMo reads a relative audio_filepath from the manifest's folder.
            audio = os.path.relpath(os.path.normpath(path.parent / audio), root)
        speaker = record.get("speaker")
        yield Entry(
            source=source,
            id=os.path.splitext(audio)[0],
            path=audio,
            text=str(record["text"]).strip() if record["text"] is not None else "",  # null: no transcript, not "None"
            speaker=str(speaker) if speaker not in (None, "") else None,
        )


# --- Common Voice --------------------------------------------------------------------------------


def _common_voice_table(root: Path, data: DataConfig) -> Path:
    named = root / data.metadata_train_file
    if named.is_file() and named.suffix.lower() == ".tsv":
        return named
    for name in COMMON_VOICE_FILES:
        if (root / name).is_file():
            return root / name
    raise XttsError(
        f"no validated.tsv or train.tsv in {str(root)!r}",
        hint="point the dataset path at the Common Voice language folder (the one holding clips/)",
    )


def _common_voice_entries(path: Path, root: Path) -> Iterator[Entry]:
    # Common Voice writes its TSVs unquoted: a sentence's quotation marks are part of it.
    lines, faults = lines_and_faults(path)
    for number, why in faults.items():
        yield Entry(source=f"{path.name}:{number}", not_utf8=why)
    yield from _table_entries(path, lines, "\t", "path", "sentence", "client_id", folder="clips")


# --- VCTK ----------------------------------------------------------------------------------------


def _files(folder: Path, suffix: str | tuple[str, ...], watched: list[tuple[str, str]]) -> Iterator[os.DirEntry]:
    """The files ending in `suffix` (or one of them) one level below `folder` (`folder/<speaker>/<file>`), sorted."""
    watched.append((str(folder), "stat"))
    with os.scandir(folder) as speakers:
        speaker_dirs = sorted((entry for entry in speakers if entry.is_dir()), key=lambda entry: entry.name)
    for speaker in speaker_dirs:
        watched.append((speaker.path, "stat"))
        with os.scandir(speaker.path) as files:
            # `.FLAC` as `.flac`: the extension's case is the tool's that wrote it, not the corpus's.
            yield from sorted(
                (f for f in files if f.name.lower().endswith(suffix) and f.is_file()), key=lambda f: f.name
            )


def _read_transcript(path: str) -> tuple[str, Optional[str]]:
    """(text, problem). Saved as UTF-16 (Notepad's "Unicode"), it is read as a metadata file of
    that encoding is (`_as_utf8`): it had been refused as Windows-1252."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        return " ".join(_as_utf8(Path(path), raw).decode("utf-8-sig").split()), None
    except UnicodeDecodeError as error:
        return "", f"the transcript is {NOT_UTF8} ({error.reason} at byte {error.start})"
    except XttsError as error:  # UTF-16 that does not decode: this clip's problem, not the scan's
        return "", f"the transcript is {error.lines[0].rsplit(': ', 1)[-1]}; {error.hint}"


def _vctk_entries(root: Path, audio_folder: Path, watched: list[tuple[str, str]]) -> Iterator[Entry]:
    transcripts = {entry.name[:-4]: entry.path for entry in _files(root / "txt", ".txt", watched)}
    suffixes = VCTK_MICS if audio_folder.name == "wav48_silence_trimmed" else (".wav",)
    # A corpus converted (wav48/ to FLAC) or trimmed (a mic's clips in wav48/) is still its clips: any
    # format read, with or without a mic; of two, mic1's and the layout's own format first.
    audio: dict[str, str] = {}
    rank: dict[str, tuple[bool, bool]] = {}
    for entry in _files(audio_folder, SUPPORTED_EXTENSIONS, watched):
        stem = entry.name.rsplit(".", 1)[0]
        mic = stem[-5:].lower() if stem.lower().endswith(("_mic1", "_mic2")) else ""
        stem = stem[: -len(mic)] if mic else stem
        ranked = (mic != "_mic2", entry.name.lower().endswith("." + suffixes[0].rsplit(".", 1)[1]))
        if stem not in rank or ranked > rank[stem]:
            audio[stem], rank[stem] = entry.path, ranked
    stems = sorted(set(transcripts) | set(audio))
    base = str(root)
    with ReadAhead([transcripts[stem] for stem in stems if stem in transcripts]):
        for stem in stems:
            speaker = stem.split("_")[0]
            expected = audio.get(stem) or str(audio_folder / speaker / f"{stem}{suffixes[0]}")
            relative = _below(expected, base)
            if stem not in transcripts:
                yield Entry(
                    source=relative,
                    id=stem,
                    path=relative,
                    speaker=speaker,
                    missing_transcript=f"no txt/{speaker}/{stem}.txt for this audio file",
                )
                continue
            text, problem = _read_transcript(transcripts[stem])
            watched.append((transcripts[stem], "stat"))
            yield Entry(
                source=_below(transcripts[stem], base),
                id=stem,
                path=relative,
                text=text,
                speaker=speaker,
                not_utf8=problem,
            )


def _below(path: str, root: str) -> str:
    """`os.path.relpath(path, root)` for a path found by listing `root`'s folders (string operations:
    relpath normalises both paths, 18 us a call, twice a clip)."""
    return path[len(root) + 1 :] if path.startswith(root + os.sep) else os.path.relpath(path, root)


# A clip found beside its transcript: (id, speaker, audio file, transcript or None).
Clip = tuple[str, Optional[str], str, Optional[str]]


# --- LibriTTS ------------------------------------------------------------------------------------


def _is_libritts_split(folder: Path, transcribed: bool = False) -> bool:
    """`folder` holds `<speaker>/<chapter>/*.wav`, numbered; `transcribed` (telling the layout
    apart): beside a LibriTTS transcript (a folder corpus of numbered speakers and sessions is not)."""
    endings = (".normalized.txt", ".original.txt") if transcribed else (".wav",)
    try:
        speakers = [entry for entry in os.scandir(folder) if entry.name.isdigit() and entry.is_dir()]
    except OSError:
        return False
    for speaker in sorted(speakers, key=lambda entry: entry.name)[:3]:
        for chapter in os.scandir(speaker.path):
            if (
                chapter.name.isdigit()
                and chapter.is_dir()
                and any(name.lower().endswith(endings) for name in os.listdir(chapter.path))
            ):
                return True
    return False


def libritts_splits(root: Path, transcribed: bool = False) -> list[Path]:
    """`root` itself when it is a split folder; else its split folders, the `train-*` ones when any."""
    if not root.is_dir():
        return []
    if _is_libritts_split(root, transcribed):
        return [root]
    splits = sorted(path for path in root.iterdir() if path.is_dir() and _is_libritts_split(path, transcribed))
    training = [path for path in splits if path.name.startswith("train")]
    return training or splits


def _libritts_entries(root: Path, split: Path, watched: list[tuple[str, str]]) -> Iterator[Entry]:
    watched.append((str(split), "folders"))
    base = str(root)
    clips: list[Clip] = []  # in the order they are listed
    for speaker in sorted(path for path in split.iterdir() if path.name.isdigit() and path.is_dir()):
        watched.append((str(speaker), "stat"))
        for chapter in sorted(path for path in speaker.iterdir() if path.is_dir()):
            watched.append((str(chapter), "stat"))
            folder = str(chapter)
            names = set(os.listdir(folder))
            audio = {name[:-4]: name for name in sorted(names) if name.lower().endswith(".wav")}
            stems = set(audio) | {name[: -len(".normalized.txt")] for name in names if name.endswith(".normalized.txt")}
            for stem in sorted(stems):
                transcript = next(
                    (
                        f"{folder}/{stem}{ending}"
                        for ending in (".normalized.txt", ".original.txt")
                        if f"{stem}{ending}" in names
                    ),
                    None,
                )
                clips.append((stem, speaker.name, f"{folder}/{audio.get(stem, f'{stem}.wav')}", transcript))
    yield from _paired_entries(clips, base, watched, "no {stem}.normalized.txt next to this audio file")


# --- a folder of clips, each beside its transcript -------------------------------------------------


def _clip_folders(root: Path) -> list[Path]:
    """`root` and the folders one level below it, hidden ones (xtts's own `.xtts_features`) aside, and
    those this user cannot list (`lost+found` at the top of a mounted disk: root's alone)."""
    try:
        below = sorted(
            path
            for path in root.iterdir()
            if path.is_dir() and not path.name.startswith(".") and os.access(path, os.R_OK | os.X_OK)
        )
    except OSError:
        return []
    return [root, *below]


def _audio_stems(names: set[str]) -> dict[str, str]:
    """Each clip's stem and its file's name: a format read, else one not read (AIFF, M4A) beside a
    transcript of its name, which the scan then names as a bad item."""
    stems = {
        name.rsplit(".", 1)[0]: name
        for name in sorted(names)
        if name.lower().endswith(SUPPORTED_EXTENSIONS) and not name.startswith(".")
    }
    for name in sorted(names):
        stem = name.rsplit(".", 1)[0]
        if name.lower().endswith(UNREAD_EXTENSIONS) and stem not in stems and _transcript_of(stem, names):
            stems[stem] = name
    return stems


def _transcript_of(stem: str, names: set[str]) -> Optional[str]:
    """The name of `stem`'s transcript among `names`: `.txt`, else `.lab`, its extension in any case."""
    for ending in FOLDER_TRANSCRIPTS:
        if f"{stem}{ending}" in names:
            return f"{stem}{ending}"
        for name in (f"{stem}{ending.upper()}", f"{stem}{ending.title()}"):
            if name in names:
                return name
    return None


def _has_clip_with_transcript(root: Path) -> bool:
    for folder in _clip_folders(root):
        names = set(os.listdir(folder))
        if any(_transcript_of(stem, names) for stem in _audio_stems(names)):
            return True
    return False


def _folder_entries(root: Path, watched: list[tuple[str, str]]) -> Iterator[Entry]:
    """Each audio file in `root` or a folder below it, with the transcript of its name beside it; a
    folder below is a speaker. Clips in `root` itself among speakers' folders are a voice named after
    `root`, as a one-voice folder's clips are."""
    base, folders = str(root), _clip_folders(root)
    watched.append((base, "files"))  # its files and folders, named: the feature store's making does not count
    clips: list[Clip] = []
    named = len(folders) > 1 and any(_audio_stems(set(os.listdir(folder))) for folder in folders[1:])
    for folder in folders:
        if folder != root:
            watched.append((str(folder), "stat"))
        names = set(os.listdir(folder))
        # A folder below is a speaker; the root's own clips among theirs are a voice named after it.
        speaker = folder.name if folder != root else (root.name if named else None)
        for stem, name in _audio_stems(names).items():
            transcript = _transcript_of(stem, names)
            transcript = transcript and f"{folder}/{transcript}"
            relative = _below(f"{folder}/{name}", base)
            clips.append((relative.rsplit(".", 1)[0], speaker, f"{folder}/{name}", transcript))  # a stem may repeat
    yield from _paired_entries(clips, base, watched, "no {stem}.txt (or {stem}.lab) next to this audio file")


def _paired_entries(clips: list[Clip], base: str, watched: list[tuple[str, str]], missing: str) -> Iterator[Entry]:
    """The entries of clips found beside their transcripts, each (id, speaker, audio file, transcript
    or None); `missing`: what a clip without one lacks ({stem}: its file's name less extension)."""
    with ReadAhead([transcript for *_, transcript in clips if transcript is not None]):
        for clip_id, speaker, audio, transcript in clips:
            relative = _below(audio, base)
            if transcript is None:
                stem = os.path.basename(audio).rsplit(".", 1)[0]
                yield Entry(
                    source=relative,
                    id=clip_id,
                    path=relative,
                    speaker=speaker,
                    missing_transcript=missing.format(stem=stem),
                )
                continue
            text, problem = _read_transcript(transcript)
            watched.append((transcript, "stat"))
            yield Entry(
                source=_below(transcript, base),
                id=clip_id,
                path=relative,
                text=text,
                speaker=speaker,
                not_utf8=problem,
            )
