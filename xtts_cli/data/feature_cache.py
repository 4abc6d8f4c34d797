"""`preprocessing_mode: precompute`: features written to disk once, in a few large shards, read back
by graph ops only.

Layout: `<cache root>/<settings fingerprint>/shard-<content>.tfrecord`, one TFRecord file per shard:
one record per clip holding its features as raw little-endian values, then one last record, the
shard's index: each clip's length (frames or samples, int64), the clip count (int64), the values per
frame (int32) and the magic `XTTSFT01`. The reader takes the clip records only; the index lets a
start check a shard without reading it.

A log-mel `[frames, n_mels]` is stored in 16-bit fixed point above the floor batches are padded
with (`features.MEL_STEPS_PER_UNIT`, as the in-memory cache keeps it), so the zeros `decode_raw` pads
a record with become the floor when it is scaled back. Half the bytes of float32: the store, its
share of the page cache and what an epoch reads are halved, and an epoch at 13,100 clips read
1.4-1.5x as fast (measured). Audio samples (a data-GPU / model-GPU split's) are stored as int16
steps (`features.AUDIO_STEPS_PER_UNIT`), a 16-bit file's own: zero padding is silence.

- Which clips share a shard: the clips, each once, sorted by duration (then path), cut into runs
  after every clip whose path hashes to 0 modulo `period` (content-defined boundaries, about
  `period` clips per shard, never more than MAX_RUN x `period`). A shard therefore holds clips of
  similar length, so a length bucket reads few shards; and adding, removing or editing a file moves
  only the boundaries next to it, not every shard after it. `period` is a power of two from the
  number of clips (`shard_period`), so it changes only when the dataset doubles or halves.
- A shard's name is a hash of its clips' keys (absolute path, size, modification time) in record
  order: an edited or touched file gives its shard a new name, and that shard alone is rebuilt
  (per-file invalidation, at shard granularity). The clips are in the order of the sort above, so
  the name says which clip is where; the index says how long each one is (silence trimming makes
  that known only once it is computed).
- A shard is written to a temporary name, flushed to disk (`fsync`) and renamed: a file under a
  shard's name is complete, which is the store's completion marker (a file whose size does not
  match its own index, or that has none, is rebuilt). An interrupted build leaves the
  shards it finished and, at most, a temporary file (removed on an exception; after a kill it is
  never read, as nothing reads `.tmp-` names); the next run builds the missing shards only.
- A changed feature setting changes the fingerprint: a new directory, everything rebuilt.

Every run that uses the store marks its shards as used (their mtime), then removes the shards of
its directory no run has used for `STALE_AFTER_DAYS` (a changed file's old shard is named by no run
again) and temporary files older than a day (a build killed mid-shard); the stores of other settings
beside it (a changed setting, an earlier store version) by the same rule, and such a store once
empty. A shard another dataset or the validation set uses is marked whenever they run, so only
shards unused for that long go.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np
import tensorflow as tf
from pydantic import BaseModel, Field

from xtts_cli import locks
from xtts_cli.config.schema import DataConfig
from xtts_cli.data.features import AUDIO_STEPS_PER_UNIT, KEPT_VALUE_BYTES, MelFeatures, stored_steps
from xtts_cli.data.plan import feature_bytes, gigabytes, mel_frames
from xtts_cli.data.scan import BUNDLED_SAMPLE, DatasetItem, dataset_root
from xtts_cli.data.scan_cache import remove_unused
from xtts_cli.errors import DiskFullError, XttsError, disk_full, tensorflow_cause

SHARD_SUFFIX = ".tfrecord"
MAGIC = b"XTTSFT01"
_FOOTER = 8 + 4 + len(MAGIC)  # clip count (int64), values per frame (int32), magic
_FRAMING = 8 + 4 + 4  # a TFRecord record: length (uint64), its CRC, the data, the data's CRC
# Clips per shard, about: from MIN_PERIOD (small datasets still get several shards, so a length
# bucket reads only its own) to MAX_PERIOD (1,024 mel clips of 5 s are ~150 MB: read as one stream,
# and a touched file rebuilds little).
TARGET_SHARDS = 64
MIN_PERIOD = 16
MAX_PERIOD = 1024
# A run of clips with no boundary hash is cut at this many periods, so no shard grows unbounded.
MAX_RUN = 4
# A pass longer than this says how far it is, at most this often (after a shard is written).
PROGRESS_EVERY_S = 15.0
# Shards no run has used for this long are removed (see above); temporary files after a day.
STALE_AFTER_DAYS = 30
_TEMP_AFTER_S = 24 * 3600
# A settings fingerprint: the name of a store's folder (`feature_fingerprint`).
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
# Bump when the feature computation or the store's layout changes in a way the settings below do not capture.
# 5: clips at another rate are resampled by the polyphase filter (audio.polyphase_resampler), not speex.
FEATURE_VERSION = 5


class PrecomputeResult(BaseModel):
    directory: str = Field(description="The store's folder.")
    shards: int = Field(description="Shard files the pipeline's clips are in.")
    built: int = Field(description="Clips whose features were computed in this run.")
    reused: int = Field(description="Clips read from shards already on disk.")
    shards_built: int = Field(0, description="Shard files written in this run.")
    stale_removed: int = Field(0, description="Shards (and temporary files) no run had used for a long time, removed.")


@dataclass(frozen=True)
class Shard:
    """One shard file and, per clip in order, every index into the pipeline's items that uses it (a
    clip a dataset weight repeats appears once in the store and several times in an epoch).
    `lengths`: each clip's frames (mel) or samples (audio), from the shard's index once it is built."""

    path: str
    users: list[list[int]]
    lengths: tuple[int, ...] = ()
    per_frame: int = 0

    @property
    def first_users(self) -> list[int]:
        return [users[0] for users in self.users]


def cache_root(data: DataConfig) -> Path:
    """Where the store goes: `data.feature_cache_dir`, else beside the dataset; the sample bundled
    inside the installed package, or a dataset on a disk this process cannot write, stores in the
    user's cache instead (a folder per dataset), not in site-packages or not at all."""
    if data.feature_cache_dir:
        return Path(data.feature_cache_dir).expanduser().resolve()
    root = dataset_root(data)
    if root == BUNDLED_SAMPLE or (root.is_dir() and not os.access(root, os.W_OK)):
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        return base / "xtts" / "features" / f"{root.name}-{hashlib.sha256(str(root).encode()).hexdigest()[:12]}"
    return root / ".xtts_features"


def feature_settings(data: DataConfig, output: str) -> dict:
    """Every setting the stored features depend on: what a frame is, and how the clips are read."""
    settings = {**MelFeatures.of(data).as_dict(), "use_tf_native_loading": data.use_tf_native_loading}
    settings.update(output=output, version=FEATURE_VERSION)
    if output == "audio":
        # Samples were stored as float32 before: such a store is of other settings, rebuilt once in
        # a folder of its own (the old one is swept once unused for 30 days). Log-mel stores keep theirs.
        settings.update(audio_steps_per_unit=AUDIO_STEPS_PER_UNIT)
    return settings


def feature_fingerprint(data: DataConfig, output: str) -> str:
    blob = json.dumps(feature_settings(data, output), sort_keys=True).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def item_key(item: DatasetItem) -> str:
    """Key of a clip's file as the scan saw it (the scan re-reads a file whose size, modification or
    change time changed): its absolute path, size, modification time and change time."""
    blob = f"{os.path.abspath(item.audio_path)}\0{item.size_bytes}\0{item.mtime_ns}\0{item.ctime_ns}".encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def shard_period(clips: int) -> int:
    """Clips per shard, about: the power of two nearest clips / TARGET_SHARDS, within [MIN_PERIOD, MAX_PERIOD]."""
    wanted = max(1.0, clips / TARGET_SHARDS)
    power = 1 << round(np.log2(wanted))
    return int(min(MAX_PERIOD, max(MIN_PERIOD, power)))


def _boundary_hash(audio_path: str) -> int:
    digest = hashlib.blake2b(os.path.abspath(audio_path).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def plan_shards(items: Sequence[DatasetItem], directory: Path) -> list[tuple[Shard, list[DatasetItem]]]:
    """The shards that hold `items`' features, each with its clips in record order (one item per
    record). Plain Python: where every clip's features are, before anything is computed."""
    users: dict[str, list[int]] = {}
    first: dict[str, DatasetItem] = {}
    for index, item in enumerate(items):
        key = item_key(item)
        users.setdefault(key, []).append(index)
        first.setdefault(key, item)
    ordered = sorted(
        first,
        key=lambda key: (first[key].audio.num_samples / first[key].audio.sample_rate, first[key].audio_path, key),
    )
    period = shard_period(len(ordered))
    runs: list[list[str]] = [[]]
    for key in ordered:
        run = runs[-1]
        run.append(key)
        if _boundary_hash(first[key].audio_path) % period == 0 or len(run) >= MAX_RUN * period:
            runs.append([])
    shards = []
    for keys in (run for run in runs if run):
        content = hashlib.sha256("\0".join(keys).encode("ascii")).hexdigest()[:24]
        shard = Shard(str(directory / f"shard-{content}{SHARD_SUFFIX}"), [users[key] for key in keys])
        shards.append((shard, [first[key] for key in keys]))
    return shards


def read_index(path: str, clips: int, value_bytes: int) -> Optional[tuple[tuple[int, ...], int]]:
    """(each clip's length, values per frame) from a shard's index record; None when the file is
    missing, cut short, not of `clips` clips, or of another size than its index says (values of
    `value_bytes` each): it is then rebuilt."""
    tail_bytes = 8 * clips + _FOOTER + 4  # the index record's data, then its CRC
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            if size < tail_bytes:
                return None
            handle.seek(size - tail_bytes)
            tail = handle.read(tail_bytes)
    except OSError:
        return None
    count = int(np.frombuffer(tail, "<i8", count=1, offset=8 * clips)[0])
    per_frame = int(np.frombuffer(tail, "<i4", count=1, offset=8 * clips + 8)[0])
    if tail[-4 - len(MAGIC) : -4] != MAGIC or count != clips or per_frame <= 0:
        return None
    lengths = np.frombuffer(tail, "<i8", count=clips)
    expected = int(lengths.sum()) * value_bytes * per_frame + _FRAMING * (clips + 1) + tail_bytes - 4
    if size != expected:
        return None
    return tuple(int(n) for n in lengths), per_frame


def _write_shard(path: Path, clips) -> None:
    """Write `clips` (stored values, each [frames, per_frame] or [samples]) and the index record to
    `path` through a temporary file, flushed to disk before the rename."""

    from xtts_cli.config.editing import current_umask

    fd, temp = tempfile.mkstemp(prefix=".tmp-", suffix=SHARD_SUFFIX, dir=path.parent)
    os.close(fd)
    try:
        # As the umask says (mkstemp makes 0600): a store shared by a team had been unreadable to all but
        # its writer, and rebuilt by each of them in turn.
        os.chmod(temp, 0o666 & ~current_umask())
        lengths, per_frame = [], 1
        with tf.io.TFRecordWriter(temp) as writer:
            for clip in clips:
                lengths.append(clip.shape[0])
                per_frame = int(clip.shape[1]) if clip.ndim == 2 else 1
                writer.write(clip.tobytes())
            writer.write(
                np.asarray(lengths, dtype="<i8").tobytes()
                + np.asarray([len(lengths)], dtype="<i8").tobytes()
                + np.asarray([per_frame], dtype="<i4").tobytes()
                + MAGIC
            )
        with open(temp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def precompute_features(
    data: DataConfig,
    items: Sequence[DatasetItem],
    output: str,
    features_for: Callable[[Sequence[DatasetItem]], Any],
    note: Optional[Callable[[str], None]] = None,
    what: str = "clip",
) -> tuple[PrecomputeResult, list[Shard]]:
    """Make sure every item's features are in a complete shard on disk; return the shards, indexed.

    `features_for(items)` returns a tf.data.Dataset of feature tensors in the order of `items`
    (the same feature stage the runtime pipeline uses). The missing shards are computed in one
    pass (one parallel map over all their clips) and written one after the other. `note` hears,
    when there is a pass, a line before it (it may take minutes), one every PROGRESS_EVERY_S or so
    while it runs (clips done, rate, time left) and one after, or, on Ctrl-C, what the pass kept;
    `what` names the clips in them ("validation clip").
    """
    directory = _store_directory(data, output)
    planned = plan_shards(items, directory)
    value_bytes = KEPT_VALUE_BYTES
    missing = _unbuilt(planned, value_bytes)
    own = _read_only_dataset_store(data, output) if missing else None
    if own is not None and not _unbuilt(own_planned := plan_shards(items, own), value_bytes):
        # A complete store in a dataset this process cannot write (built by whoever could): read, not
        # computed again into the user's cache (a second pass and a second copy at size).
        directory, planned, missing = own, own_planned, []
        if note is not None:
            note(f"precompute: reading the complete feature store in the read-only dataset, {own}")
    todo = _clips_of(missing)
    locked = bool(todo)
    if locked:
        _take_store(directory, note)  # one builder per store: a second waits for the first, then reads its shards
        missing = _unbuilt(missing, value_bytes)  # what a builder before this one finished is not computed again
        todo = _clips_of(missing)
    try:
        if todo:
            require_room(directory, store_bytes(todo, data, output, shards=len(missing)))
        began = time.perf_counter()
        if todo and note is not None:
            stored = len(planned) - len(missing)
            note(
                f"precompute: computing the features of {_count(len(todo), what)} into {directory} "
                f"({_count(len(missing), 'shard')} to write, {stored} stored already); later starts read them"
            )
        if todo:
            _Pass(directory, missing, todo, output, note, what, began).run(features_for)
        shards = _indexed(planned, value_bytes)
        result = PrecomputeResult(
            directory=str(directory),
            shards=len(shards),
            built=len(todo),
            reused=sum(len(shard.users) for shard in shards) - len(todo),
            shards_built=len(missing),
            stale_removed=sweep_store(directory, {shard.path for shard in shards}) + sweep_other_settings(directory),
        )
        if todo and note is not None:
            note(f"precompute: {_count(len(todo), what)} stored in {time.perf_counter() - began:.1f} s")
        return result, shards
    finally:
        if locked:
            locks.release(directory)


# How often a start waiting for another process's build of the store tries its lock again.
STORE_WAIT_SECONDS = 2.0


def _take_store(directory: Path, note: Optional[Callable[[str], None]]) -> None:
    """The store's lock, waited for (said once) while another process builds the store: a sweep's
    parallel starts had all failed but the first, with a hint to build a second copy."""
    said = False
    while True:
        try:
            locks.acquire(directory, what="feature store")
            return
        except locks.RunDirLocked as held:
            if not said and note is not None:
                note(
                    f"precompute: {held.lines[0]}: waiting for it to finish, then reading what it stored (Ctrl-C stops)"
                )
            said = True
            time.sleep(STORE_WAIT_SECONDS)


def _read_only_dataset_store(data: DataConfig, output: str) -> Optional[Path]:
    """The store a dataset this process cannot write holds of these settings (`cache_root` goes to the
    user's cache for such a dataset), or None."""
    if data.feature_cache_dir:
        return None
    own = dataset_root(data) / ".xtts_features" / feature_fingerprint(data, output)
    return own if own.is_dir() and cache_root(data) != own.parent else None


def _store_directory(data: DataConfig, output: str) -> Path:
    """The store's folder for these feature settings, created if missing; an XttsError when it cannot be."""
    directory = cache_root(data) / feature_fingerprint(data, output)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise XttsError(
            f"precompute: cannot create the feature store {str(directory)!r}: {error.strerror}",
            hint="set data.feature_cache_dir to a writable folder",
        ) from None
    return directory


def _unbuilt(
    planned: Sequence[tuple[Shard, list[DatasetItem]]], value_bytes: int
) -> list[tuple[Shard, list[DatasetItem]]]:
    """The shards among `planned` with no complete file on disk (`read_index` finds none)."""
    return [(shard, members) for shard, members in planned if read_index(shard.path, len(members), value_bytes) is None]


def _clips_of(missing: Sequence[tuple[Shard, list[DatasetItem]]]) -> list[DatasetItem]:
    """The clips of `missing`'s shards, shard after shard, each in record order: what a pass computes."""
    return [item for _, members in missing for item in members]


def _indexed(planned: Sequence[tuple[Shard, list[DatasetItem]]], value_bytes: int) -> list[Shard]:
    """Every planned shard with its lengths and values per frame from its index record; an XttsError
    when one has none (it was just written, or found complete)."""
    shards = []
    for shard, members in planned:
        index = read_index(shard.path, len(members), value_bytes)
        if index is None:
            raise XttsError(
                f"precompute: the feature store's shard {shard.path!r} is unreadable right after it was written",
                hint="check the disk under data.feature_cache_dir (full, or shared with another writer)",
            )
        shards.append(Shard(shard.path, shard.users, *index))
    return shards


@dataclass
class _Pass:
    """One precompute pass: the missing shards' clips computed by one parallel map and written shard
    after shard, with progress, failure and Ctrl-C reported as `precompute_features` describes."""

    directory: Path
    missing: Sequence[tuple[Shard, list[DatasetItem]]]
    todo: Sequence[DatasetItem]
    output: str
    note: Optional[Callable[[str], None]]
    what: str
    began: float
    done: int = 0  # clips computed so far
    finished: int = 0  # shards written so far

    def run(self, features_for: Callable[[Sequence[DatasetItem]], Any]) -> None:
        """Compute and write every missing shard; the finished ones are kept whatever stops the pass."""

        # Room for 64 computed clips ahead of the writer: while it waits on a write or a shard's
        # fsync, the parallel map keeps computing instead of stopping at its own few-element buffer.
        # No autotuning: with it, releasing this iterator after the pass waited 10 s in 3 of 4
        # passes (TF 2.16's autotuning thread sleeping out its period); without it the map runs on
        # every core all the same. 12,474 clips: the pass 11.8-12.5 s (+ 0 or 10 s) -> 10.7-10.8 s.
        options = tf.data.Options()
        options.autotune.enabled = False
        stream = features_for(self.todo).prefetch(64).with_options(options).as_numpy_iterator()
        try:
            self._write_shards(stream)
        except (tf.errors.OpError, OSError) as error:
            raise _pass_error(error, self.directory, self.missing, self.todo, self.finished, self.done) from None
        except KeyboardInterrupt:  # Ctrl-C: the finished shards are kept, and the user is told so
            self._tell_interrupted()
            raise

    def _clips(self, stream, count: int):
        """The next `count` clips of `stream`, as stored values, counted in `done` as they are taken."""
        for _ in range(count):
            yield stored_steps(next(stream), self.output)
            self.done += 1

    def _write_shards(self, stream) -> None:
        """Write the missing shards in order, saying how far the pass is every PROGRESS_EVERY_S or so."""
        told = self.began
        for shard, members in self.missing:
            _write_shard(Path(shard.path), self._clips(stream, len(members)))
            self.finished += 1
            now = time.perf_counter()
            if self.note is not None and self.done < len(self.todo) and now - told >= PROGRESS_EVERY_S:
                told = now
                self.note(_progress(self.todo, self.done, now - self.began, self.what))

    def _tell_interrupted(self) -> None:
        """Tell `note` what an interrupted pass kept: the shards it finished, or that there are none."""
        missing, todo, finished, note, what = self.missing, self.todo, self.finished, self.note, self.what
        kept = sum(len(members) for _, members in missing[:finished])
        if note is not None and finished:
            note(
                f"precompute: interrupted with {finished:,} of {_count(len(missing), 'shard')} written "
                f"({kept:,} of {_count(len(todo), what)}); they are kept in {self.directory} and the next start "
                "computes the rest"
            )
        elif note is not None:
            note(f"precompute: interrupted before the first of {_count(len(missing), 'shard')} was written")


def _pass_error(
    error,
    directory: Path,
    missing: Sequence[tuple[Shard, list[DatasetItem]]],
    todo: Sequence[DatasetItem],
    finished: int,
    done: int,
) -> XttsError:
    """The error to raise for a pass that `error` stopped with `finished` shards written and `done`
    clips computed: a full disk, a store it cannot write, or a clip that does not decode."""
    full = disk_full(error, f"the feature store under {str(directory)!r}")
    if full is not None:  # not the clip's fault: say where, and what is kept
        full.lines.append(
            f"{finished:,} of {_count(len(missing), 'shard')} were written and are kept; the next start "
            "computes the rest"
        )
        return full
    if isinstance(error, OSError):  # a folder made read-only: the finished shards are kept
        return XttsError(
            f"precompute: cannot write the feature store under {str(directory)!r}: {error.strerror}",
            hint="set data.feature_cache_dir to a folder you can write; shards already written are reused",
        )
    failed = todo[min(done, len(todo) - 1)]
    return XttsError(
        f"precompute: cannot compute features of {failed.audio_path!r} ({failed.source}): "
        f"{tensorflow_cause(error.message)}",
        hint="the file passed the header scan but does not decode: remove its line from the metadata, or put a "
        "sound copy in its place, and start again (the shards written so far are kept)",
    )


class CorruptShards(XttsError):
    """Shards of the store whose records fail their checksums (`corrupt_shards`): the pipeline
    removes and rebuilds them when it reads the store into memory."""

    def __init__(self, paths: Sequence[str]):
        self.paths = list(paths)
        super().__init__(
            f"precompute: the feature store's shard {self.paths[0]!r} fails its checksum"
            + (f" (and {len(self.paths) - 1} more)" if len(self.paths) > 1 else ""),
            hint="remove it and start again: the next start computes its clips again",
        )


# The shards pipelines of this process read from disk as they go (not held in memory): where a record that
# fails its checksum mid-epoch is looked for (TensorFlow's error names no file).
_STREAMED: set[str] = set()


def note_streamed(paths: Iterable[str]) -> None:
    _STREAMED.update(paths)


def damaged_store_error(error: BaseException) -> Optional[XttsError]:
    """For TensorFlow's "corrupted record" met while reading the store from disk: the shards that fail
    their checksums, found among those read, removed, and named, so that the next start computes their
    clips again (the error had named no file, and its fix had been to throw the whole store away)."""
    if type(error).__name__ != "DataLossError" or "corrupted record" not in str(error) or not _STREAMED:
        return None
    damaged = corrupt_shards(sorted(path for path in _STREAMED if os.path.exists(path)))
    if not damaged:
        return None
    for path in damaged:
        os.unlink(path)
    return XttsError(
        f"precompute: the feature store's shard {damaged[0]!r} fails its checksum"
        + (f" (and {len(damaged) - 1} more)" if len(damaged) > 1 else "")
        + ": removed",
        hint="run the same command again: the next start computes its clips again (a run resumes from its last "
        "checkpoint)",
    )


def corrupt_shards(paths: Sequence[str]) -> list[str]:
    """The shard files among `paths` with a record that fails its checksum (read whole, each)."""

    corrupt = []
    for path in paths:
        try:
            tf.data.TFRecordDataset(path).reduce(tf.constant(0, tf.int64), lambda count, _: count + 1)
        except tf.errors.DataLossError:
            corrupt.append(path)
    return corrupt


def store_bytes(items: Sequence[DatasetItem], data: DataConfig, output: str, shards: int = 1) -> int:
    """Bytes `shards` shards holding `items` take on disk, at most: the clips' values at the lengths
    the scan's headers give (silence trimming only shortens them), each record's framing, and each
    shard's index record."""
    frames = [mel_frames(item, data) for item in items]
    values = feature_bytes(frames, data, "mel" if output == "mel" else "audio")
    return values + (_FRAMING + 8) * len(items) + (_FRAMING + _FOOTER) * shards


def unbuilt_store(data: DataConfig, items: Sequence[DatasetItem], output: str) -> tuple[Path, list[DatasetItem], int]:
    """(the store's folder, the clips of its shards not on disk yet, how many shards): what a start would
    compute, found without writing anything (`xtts validate` checks a complete store needs no room)."""
    directory = cache_root(data) / feature_fingerprint(data, output)
    missing = _unbuilt(plan_shards(items, directory), KEPT_VALUE_BYTES)
    return directory, _clips_of(missing), len(missing)


def require_room(directory: Path, need: int) -> None:
    """Refuse a precompute pass whose shards would not fit on the store's disk, before a clip is
    computed (a pass over a large corpus takes minutes to hours); nothing is checked when the file
    system does not say how much room it has."""
    existing = next((folder for folder in (directory, *directory.parents) if folder.exists()), directory)
    try:  # a store not made yet: the disk of the nearest folder there is (validate asks before any is made)
        free = shutil.disk_usage(existing).free
    except OSError:
        return
    if need > free:
        raise DiskFullError(
            f"precompute: the feature store needs up to {gigabytes(need)} under {str(directory)!r} but its disk "
            f"has {gigabytes(free)} free",
            hint="free space there, or set data.feature_cache_dir to a folder on a disk with room; "
            "shards already written are reused",
        )


def _progress(todo: Sequence[DatasetItem], done: int, seconds: float, what: str) -> str:
    """A pass's progress line: clips done, the rate so far, and the time left at the rate so far in
    audio seconds (the pass goes from the shortest clips to the longest, so clips/s falls)."""
    audio = np.fromiter((item.audio.num_samples / item.audio.sample_rate for item in todo), float, count=len(todo))
    heard = float(audio[:done].sum())
    left = f", about {_duration(seconds * (float(audio.sum()) - heard) / heard)} left" if heard > 0 else ""
    return (
        f"precompute: {done:,} of {_count(len(todo), what)} ({100 * done / len(todo):.0f} %), "
        f"{done / seconds if seconds > 0 else 0.0:,.0f} {what}s/s{left}"
    )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def sweep_store(directory: Path, used: set[str], now: Optional[float] = None) -> int:
    """Mark the `used` shards as used now, then remove the directory's other shards unused for
    `STALE_AFTER_DAYS` and its temporary files older than a day; how many files went. Never fails:
    a read-only store, or another run sweeping at the same time, leaves files where they are."""
    now = time.time() if now is None else now
    for path in used:
        try:
            os.utime(path, (now, now))
        except OSError:
            pass

    def limit(name: str) -> Optional[float]:
        if name.startswith("shard-") and name.endswith(SHARD_SUFFIX):
            return STALE_AFTER_DAYS * 24 * 3600
        return _TEMP_AFTER_S if name.startswith(".tmp-") else None

    return remove_unused(directory, limit, now, keep=used)


def sweep_other_settings(directory: Path, now: Optional[float] = None) -> int:
    """Sweep the stores of other feature settings beside `directory` (a changed setting, or a store
    an earlier FEATURE_VERSION wrote, which no run reads again) by the same rule as `sweep_store`:
    their shards go once no run has used them for `STALE_AFTER_DAYS`, and a store left empty goes
    with them. Only folders named like a settings fingerprint are looked at; never fails."""
    removed = 0
    try:
        siblings = [entry for entry in os.scandir(directory.parent) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return 0
    for entry in siblings:
        if entry.path == str(directory) or not _FINGERPRINT.fullmatch(entry.name):
            continue
        removed += sweep_store(Path(entry.path), set(), now)
        try:
            os.rmdir(entry.path)  # only when empty: anything else in it stays
        except OSError:
            pass
    return removed
