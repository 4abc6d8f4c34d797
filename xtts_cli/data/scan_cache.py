"""Audio headers remembered between starts, keyed by each file's size and modification time.

A scan of 131,000 clips opens every file to read its header; the second start of the same dataset
need not: `HeaderCache` answers from `~/.cache/xtts/scan/<dataset>.json` ($XDG_CACHE_HOME honoured)
for every file whose size and mtime are unchanged, and reads the others. Bad files are remembered
too (with their reason), so a corrupt clip is not re-parsed either. The cache is only ever an
optimisation: unreadable or from another version it is ignored, and a dataset on a read-only disk
works the same (the cache lives in the user's cache folder, not beside the data).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Optional

from xtts_cli.data.audio_headers import AudioHeader, AudioHeaderError, read_audio_header
from xtts_cli.data.read_ahead import ReadAhead

CACHE_VERSION = 9  # 2: a streamed WAV (sizes 0xFFFFFFFF) is read to its end, not truncated; 3: a silent WAV is bad;
# 4: an MP3 with fewer frames than its Xing/Info header counts is truncated; 5: a FLAC whose last
# frames are missing or cut is truncated; 6: an MP3 of varying bitrate with no Xing frame count is refused;
# 7: an MP3 whose frames break off and resume is truncated; 8: AIFF, MP4, WMA, AU, CAF, WebM and AMR are unsupported_format,
# a WAV of 0-byte sizes with audio after says how to repair it; 9: a WAV silent once its channels are mixed
# or its offset left out is silent, a float WAV past +6 dBFS is bad_samples, a rate under 4 kHz unsupported_format
MEMO_VERSION = 90  # 2: a layout's transcripts and folders watched, each with its kind; 3: items in lines;
# 4: a manifest's header may name its columns file, transcript, ... (a memo read it as LJSpeech);
# 5: the phonemes a scan writes read numbers as words first, and Turkish I as ı; 6: quotation marks in a tab-
# separated table are its text's, a row with a cell too many is malformed, `.WAV` is found as `.wav`; the
# cleaners read ½ as 1/2 and Mrs. as missus; 7: a clip with an empty speaker cell among named ones is malformed;
# 8: a transcript longer than its clip holds is text_outruns_audio; 9: Persian reads $100 and ۳/۴ as words;
# 10: English units, signs, ranges, abbreviations, acronyms and the full stop an abbreviation ends the text with;
# Persian dates, decimals, ranges, codes, ordinals and eras; more abbreviations in seven other languages;
# 11: English scores out of ten, foot and inch marks, dotted clocks, aircraft, a fraction's own article;
# 12: a metadata line or transcript that is not UTF-8 is one bad item (`not_utf8`), not the whole dataset;
# 13: an item bad for its transcript keeps the transcript's script; 14: UTF-16 metadata is read, a NUL makes
# a line bad, a nemo text of null is empty, a | inside three LJSpeech columns splits only without doubt,
# a clip listed twice in a file is malformed the second time; 15: a malformed line keeps the clip it names;
# 16: a typeset minus (U+2212) before a number is read as minus; 17: English money with its sign after (5 €);
# 18: a range of days before their month (4-5 June) read as ordinals; 19: an LJSpeech header line is no clip,
# an id matches its file in either Unicode form (NFC, NFD), a line not UTF-8 keeps the clip its id names;
# 20: `file|transcript` over three LJSpeech columns is LJSpeech; a manifest's clip name alone is found in wavs/;
# espeak-ng is given no emoji nor control character (it read "❤" as "red" and stopped at a NUL);
# 21: a silent WAV is a bad item; 22: a file, folder or speaker name that is not UTF-8 is a bad item;
# 23: an MP3 with fewer frames than its Xing/Info header counts is truncated; 24: the rows a table's unclosed
# quotation mark ran on over are read again, each its own; 25: a row's folder outside the dataset is not
# listed for unlisted audio; 26: a FLAC whose last frames are missing or cut is truncated; 27: an MP3 of
# varying bitrate with no Xing frame count is refused; 28: an MP3 whose frames break off and resume is truncated;
# 29: Persian reads a phone number before a full stop, +, x and ۱،۰۰۰; an emoji's skin tone is not read; a decimal
# past 15 digits is read digit by digit; Persian reads a version or an address in dotted numbers with نقطه; for
# phonemes an en dash or a spaced hyphen is the dash, ‹ › [ ] are « » ( ); 30: fa-ir is normalised as Persian,
# fa-latn reads no numbers in Persian script; 31: h:mm:ss in a language's units, 1,500.50 in a decimal-comma language;
# 32: a decimal of zeros keeps them (German 1,000: eins komma null null null); 33: VCTK clips in any format read,
# with or without a mic; a clip in a format not read beside its transcript is a bad item; a missing clip names
# the file of its name with another extension; 34: or in other capitals; 35: header cache 9; 36: English reads
# a plus sign before a number (+3: plus three) and between two (2+2), +12.5 not as a telephone's digits;
# 37: an item and a watched file keep their change time (ctime): a file replaced with its size and mtime is read
# again; 38: a table row with a cell too many names its clip (no unlisted audio) and, unquoted, how to mend it;
# 39: a row of too few cells split by another table's delimiter says so and names its clip; 40: English
# reads 1.234.567 as thousands, 22/7 as twenty two over seven, 1e6 as ten to the power of six; 41: and
# 1.000.000.000 as thousands, not an address, and up to six dotted groups; 42: any number of groups;
# 43: English says an equation (5 - 3 = 2: five minus three equals two) and $-5 as minus five dollars;
# 44: 1,5 as one point five, 1,23,456 as one number, 1,2,3 as a list; 45: a symlink to a clip its
# file lists already is a clip listed twice; 46: a transcript .txt saved as UTF-16 is read; 47: and one
# that breaks off is named with its fix; 1999,2000 is two years, not a decimal; 48: a clip listed
# first through a link is named so on the line that lists it again; 49: English reads code and algebra
# (a == b, f(x) = 2x + 1, x * 2), and March 3 and May 4 with capitals inside a sentence as dates, $50k-$75k as
# a range, yrs, mo, wks, MB/s and Gbps as words, an ISO time stamp as its date and time, 400m hurdles,
# 200g of and after 30s as meters, grams and seconds; 50: currency codes (USD 1500), ZIP codes, model
# numbers (RTX 4090, F-150, 7950X), PIN and port digits, versions (Python 3.11), initials (U.S.) as letters,
# i++, C#, x += 1, a >= b and "what is 7 - 3" said, a path's v1/users no rate, 1-800-FLOWERS, "March 3 is"
# at a sentence's start a date, Persian $1,999.50 with its cents, A100s, WWII, 0x8007, "January 1 is";
# 51: 9:00 AM, a $5 bill, due 4/15, Sep 2023, Artemis II, Malcolm X, 3.10 or 3.12, error 404, Xbox 360, by 1/3, BA123
# 52: in a file of `id|text` lines, one with its normalized text too reads it; one of four cells is malformed
# 53: a clip listed twice with another text says so, and which text trains; the file a missing clip's line
# meant (other capitals, another extension) is no unlisted audio
# 54: the rows of a speakers.csv that name no clip are counted
# 55: in a file of `id|text` lines, only a `|` with no space either side ends the text before its normalized text
# 56: a power in superscripts (m², x²) read as one, 555 123 4567 as a telephone's digits, 99¢, Rep., Inc.,
# Corp.; French, Italian and Portuguese read two decimals as one number (neuf virgule cinquante huit); par ex., por ej.; a 12 in. pizza
# German reads a year after im Sommer or Ende and before war in hundreds; an amount after vor or bis is none
# English reads 1h 30m as hours and minutes, between 5-10 with and, 5 > 3 as five is greater than three
# and Rep., Inc. and inc. by their capitals; 80 m² in German, French, Spanish, Italian and Portuguese words
# 57: a metadata.csv row split by tabs among rows split by | says so
# 58: a chained Ogg file is refused; a float WAV's NaN is bad samples, not silence; audio beside metadata.csv
# in no row is unlisted; a folder of numbered speakers and sessions is no LibriTTS
# 59: an Ogg whose later page begins a stream of the first's serial number (a file joined to itself) is refused
# 60: a variable's power after its coefficient ("12 x^2", "5 x²") is read "twelve x squared", not "times squared";
# a Russian or Ukrainian telephone number dialled at home (8 912 345-67-89), and after its Cyrillic word, digit by digit
# 61: a power before a letter or a minus (6x^2y - 1: "six x squared y minus one"), an equation's last term (y = 2 + 3x:
# "three x") and a two-digit year of a leading zero (3/4/05: "oh five")
# 62: a clip that is no regular file is named as a folder, a FIFO or a device
# 63: an equation's minus before its last term (y = 3 - 3x), a product after a power (x^2y * 3), x^2-3x
# 64: a unit's power before a dash is a range again (10 m^2 - 12 m^2: "to"), "zoom = 3x" is "three times"
# 65: a dash with a space before it and none after is a sign, not a range ("20 -5": twenty minus five)
# 66: a range of a unit's powers written any way (10m^2 - 12m^2, m/s^2) is "to"; "a" the article is no variable
# 67: German ordinals after any article-like word (jeder 5., seinen 100.), cents under one unit, weekdays and
# Jh., Hbf., MwSt.; a score before nach or bei; º and ª are Latin; 68: Russian and Turkish abbreviations, more
# Polish, Portuguese, Spanish, Italian, Dutch and Swedish ones; 69: Polish, Russian, Turkish fractions, Turkish
# and Swedish dotted times, Spanish primer and tercer, Italian and Spanish degree-sign ordinals before more nouns;
# 70: German weekdays always, so. only as a day's, no ordinal before a word that starts sentences, neuters by name;
# 71: a German day's ordinal before und/oder/bis and the second of a pair, Fr. as franken, Russian г. only as a town's;
# 72: "and so on" keeps no full stop inside a sentence; Fr. after a weekday and und/oder is Freitag
# 73: the numero sign before a number (№ 5, nº 5, n° 5) is the language's word for it, not "no"; German
# "der 12." at a text's end, "bis 31. Dezember" and "1. bis 3. Mai" are ordinals; 74: a text too long names
# the audio's length limit its clip crosses too (`beyond`); a compatibility form's letter (𝐇) is its folded one's script;
# multilingual_cleaners leave out ™ and ℠; №№ is plural; English ’90s, 1990’s, 6′2″ and '69 read as their numbers
# and Norwegian (nb) and Kazakh (kk) numbers are read as words; dotted ordinals (2. plass) in hu, no, da, fi, pl, sl
# 75: Hungarian days with their case endings (15-én), Norwegian and Danish years in hundreds, "klokka er 5.30"
# 76: an LJSpeech clip beside its metadata, not in wavs/, is named on its row; a tab-split row's clip is no unlisted audio
# 77: Hungarian days with every case ending, in lists and after a month shortened; Scandinavian counts after a year's word stay counts
# 78: a Hungarian day listed after another is written with its long vowel (16-án): 8-tól, 5-en after one are no days
# 79: "St." before a number's "No. 7" ("Nos."), an Apt, a Suite or a Unit (in capitals, or more than one) is a street; "1/2 a cup" is half a cup
# 80: English dotted dates (1.5.2026) and dashed ones (12-25-2020) are dates; three hyphened numbers a code,
# its long groups digit by digit in every language; 81: a broken link is missing (named so), an absolute LJSpeech id that clip
# 82: a NUL byte in a line is named as one to delete, not as another encoding; 83: a file cut short names its fix
# 84: an LJSpeech id written with an extension in other capitals is named in wavs/, as its hint names it;
# 85: a header cut short is not offered to be kept; a broken relative link says where it resolves;
# 86: a hyphened code has a long or zero-led group and no sign before it; dotted dates from 1500, not after a
# word or sign that numbers (Figure, No., §), whose sign is read before them
# 87: three or more short hyphened numbers (3-2-1) are a series said number by number, not a range; a card's 4-digit groups a code
# 88: no telephone number begins after a hyphen (a card's 5500-0000-0000-0004)
# 89: a word hyphened to a series' end said after it (3-2-1-go), an ISBN-13 of short groups a code
# 90: numbers with a word hyphened to their end read as alone (a code, a series, a date), not as ranges
MEMO_CHUNK = 8192  # items a line of the memo holds


def cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "xtts" / "scan"


def cache_path(root: Path) -> Path:
    digest = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:16]
    return cache_folder() / f"{root.name or 'dataset'}-{digest}.json"


class HeaderCache:
    """Headers of one dataset's files; `header(path)` reads only what changed since the last scan."""

    def __init__(self, path: Optional[Path]) -> None:
        self.path = path
        self.known: dict[str, list] = {}
        self.seen: dict[str, list] = {}
        self.reads = 0
        self._lock = threading.Lock()
        if path is not None and path.is_file():
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))
                if stored.get("version") == CACHE_VERSION:
                    self.known = stored["files"]
                    _used(path)
            except (OSError, ValueError, KeyError, TypeError):
                self.known = {}

    def header(self, audio_path: str) -> tuple[AudioHeader, os.stat_result]:
        """(header, stat) of `audio_path`; AudioHeaderError as `read_audio_header` raises it."""
        try:
            stat = os.stat(audio_path)
        except FileNotFoundError:
            raise AudioHeaderError("missing", "file not found") from None
        except OSError as error:
            raise AudioHeaderError("unreadable", f"cannot read the file: {error.strerror}") from None
        entry = self.known.get(audio_path)
        if entry is None or entry[0] != stat.st_size or entry[1] != stat.st_mtime_ns:
            entry = self._read(audio_path, stat)
        self.seen[audio_path] = entry
        if entry[2] == "bad":
            raise AudioHeaderError(entry[3], entry[4])
        return AudioHeader(*entry[2:]), stat

    def reading_ahead(self, paths: list[str]) -> ReadAhead:
        """While in this context, threads read the start of each file in `paths` the cache does not
        know, in order, ahead of the scan's own reads (see `ReadAhead`)."""
        return ReadAhead([path for path in paths if path not in self.known])

    def _read(self, audio_path: str, stat: os.stat_result) -> list:
        with self._lock:
            self.reads += 1
        try:
            header = read_audio_header(audio_path, sound=True)
        except AudioHeaderError as error:
            if error.reason == "missing":
                raise  # gone between the stat and the read: nothing to remember
            return [stat.st_size, stat.st_mtime_ns, "bad", error.reason, error.detail]
        return [
            stat.st_size,
            stat.st_mtime_ns,
            header.format,
            header.codec,
            header.sample_rate,
            header.channels,
            header.bit_depth,
            header.num_samples,
            header.data_offset,
        ]

    def save(self) -> Optional[str]:
        """Keep what this scan saw (files no longer listed are dropped); atomic. A failure is returned
        (the cache is only ever a shortcut), for the scan's report to say once."""
        if self.path is None or (self.reads == 0 and self.seen.keys() == self.known.keys()):
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"version": CACHE_VERSION, "files": self.seen}, handle, separators=(",", ":"))
            os.replace(temp, self.path)
        except OSError as error:
            return _unsaved(self.path.parent, error)
        sweep_scan_cache(self.path.parent)
        return None


# A dataset's memo and header cache unused this long are removed (a renamed or deleted dataset's
# had stayed for ever): the feature store's rule.
SCAN_STALE_DAYS = 30


def _used(path: Path) -> None:
    """Mark a memo read (its mtime), so that a dataset scanned daily and never changed keeps it."""
    try:
        os.utime(path)
    except OSError:
        pass


def sweep_scan_cache(folder: Path, now: Optional[float] = None) -> int:
    """Remove the memos and header caches in `folder` unused for SCAN_STALE_DAYS, and temporary files
    a killed save left a day ago; how many went. Never fails."""

    def limit(name: str) -> Optional[float]:
        if name.startswith(".tmp-"):
            return 24 * 3600
        return SCAN_STALE_DAYS * 24 * 3600 if name.endswith(".json") else None

    return remove_unused(folder, limit, time.time() if now is None else now)


def remove_unused(
    folder: Path, limit_of: Callable[[str], Optional[float]], now: float, keep: Collection[str] = ()
) -> int:
    """Remove each file of `folder` (but `keep`'s paths) not modified for `limit_of(its name)` seconds
    (None: left alone); how many went. Never fails: a read-only folder, or another process sweeping
    at the same time, leaves files where they are."""
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        limit = None if entry.path in keep else limit_of(entry.name)
        if limit is None:
            continue
        try:
            if now - entry.stat().st_mtime > limit:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


def _unsaved(folder: Path, error: OSError) -> str:
    return f"{folder} ({error.strerror or error})"


def _stat_key(path: str) -> Optional[list[int]]:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


def watch_key(path: str, kind: str) -> Optional[list]:
    """What says whether `path` changed: its size, mtime and ctime (`stat`), or the sorted names of its
    sub-folders (`folders`), or of its files and sub-folders (`files`), hidden ones aside: a dataset
    root, whose mtime changes when the feature store is made in it."""
    if kind == "stat":
        return _stat_key(path)
    try:
        with os.scandir(path) as entries:
            return sorted(
                entry.name
                for entry in entries
                if (kind == "files" or entry.is_dir()) and not entry.name.startswith(".")
            )
    except OSError:
        return None


class ScanMemo:
    """A whole scan of one dataset, used again while what it was read from (metadata files; for
    VCTK and LibriTTS every transcript and the folders walked), every audio file it named (good or
    bad) and the settings the checks read are all unchanged: a second start on 131,000 clips stats
    the files instead of re-reading metadata, transcripts and headers."""

    def __init__(self, root: Path, settings: dict) -> None:
        blob = json.dumps(settings, sort_keys=True, default=str).encode("utf-8")
        self.key = hashlib.sha256(blob).hexdigest()[:16]
        self.path = cache_path(root).with_suffix(".scan.json")
        self.headers = cache_path(root)  # the same dataset's header cache, which a memo's hit does not open

    def load(self, parse) -> Optional[tuple[dict, list[list]]]:
        """(header, [train, eval, bad]) while the metadata and the bad files are as they were, else None.
        `parse`: for each of the three, a function reading a list of them from a JSON array (bytes),
        as pydantic's `validate_json` does, several times faster than json + validation. The arrays
        are read one line (`MEMO_CHUNK` items) at a time: parsed whole, the JSON of 1.3 million clips
        took 4.6 GB at its peak, against 1.1 GB a line at a time, and 7.3 s against 4.6. The good
        items' own files are checked by `unchanged` once they are parsed."""
        try:
            with open(self.path, "rb") as handle:
                stored = json.loads(handle.readline())
                if (
                    not isinstance(stored, dict)
                    or stored.get("version") != MEMO_VERSION
                    or stored.get("key") != self.key
                    or len(stored["lines"]) != len(parse)
                    or not self._watched_unchanged(stored)
                ):
                    return None
                parts: list[list] = []
                for count, read in zip(stored["lines"], parse):
                    part: list = []
                    for _ in range(count):
                        line = handle.readline()
                        if not line.endswith(b"\n"):
                            return None  # cut short
                        part.extend(read(line))
                    parts.append(part)
        except (OSError, ValueError, KeyError, TypeError):  # pydantic's ValidationError is a ValueError
            return None
        _used(self.path)
        _used(self.headers)
        return stored, parts

    @staticmethod
    def _watched_unchanged(stored: dict) -> bool:
        for path, kind, key in stored["files"]:
            if watch_key(path, kind) != key:
                return False
        return all(_stat_key(path) == key for path, key in stored["bad_files"])

    @staticmethod
    def unchanged(items: list) -> bool:
        """Every item's audio file still has the size, mtime and change time it was scanned with."""
        return all(_stat_key(item.audio_path) == [item.size_bytes, item.mtime_ns, item.ctime_ns] for item in items)

    def save(
        self,
        fmt: str,
        metadata_files: list[str],
        watched: list[tuple[str, str]],
        train: list,
        evaluation: list,
        bad: list,
        total: int,
        split: str,
        bad_paths: list[Optional[str]],
        dump,
    ) -> Optional[str]:
        """Atomic; a failure is returned, as `HeaderCache.save`'s is. `watched`: the metadata files
        and anything else the result was read from, as (path, kind) for `watch_key` (speakers.csv,
        present or not; a layout's transcripts and folders); `dump`: for good and
        bad items, a function writing a list of them as a JSON array (bytes), one line per `MEMO_CHUNK`."""
        parts = [(train, dump[0]), (evaluation, dump[0]), (bad, dump[1])]
        header = {
            "version": MEMO_VERSION,
            "key": self.key,
            "format": fmt,
            "split": split,
            "total": total,
            "metadata_files": metadata_files,
            "files": [[path, kind, watch_key(path, kind)] for path, kind in watched],
            "bad_files": [[path, _stat_key(path)] for path in bad_paths if path],
            "lines": [-(-len(items) // MEMO_CHUNK) for items, _ in parts],
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=self.path.parent)
            with os.fdopen(fd, "wb") as handle:
                handle.write(json.dumps(header, separators=(",", ":")).encode("utf-8") + b"\n")
                for items, dumper in parts:
                    for start in range(0, len(items), MEMO_CHUNK):
                        handle.write(dumper(items[start : start + MEMO_CHUNK]) + b"\n")
            os.replace(temp, self.path)
        except OSError as error:
            return _unsaved(self.path.parent, error)
        return None
