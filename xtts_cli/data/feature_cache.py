"""`preprocessing_mode: precompute`: features written to disk once, read back by graph ops only.

Layout: `<cache root>/<settings fingerprint>/<item key>.tensor` (a `tf.io.serialize_tensor` proto)
plus `complete.json`, the completion marker listing the item keys it vouches for.

- A changed feature setting changes the fingerprint: a new directory, everything rebuilt.
- An item key hashes the audio file's path, size and mtime: an edited or touched file gets a new
  key and is rebuilt.
- Each feature file is written to a temp name and renamed; the marker is written (the same way)
  only after every feature file is on disk (`os.sync`). An interrupted run leaves no marker, or an
  older one that does not list the new keys, so its work is never taken as complete: the missing
  items are rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from xtts_cli.config.schema import DataConfig
from xtts_cli.data.scan import DatasetItem, dataset_root
from xtts_cli.errors import XttsError

MARKER = "complete.json"
# Bump when the feature computation changes in a way the settings below do not capture.
FEATURE_VERSION = 1


class PrecomputeResult(BaseModel):
    directory: str
    paths: list[str]  # one per item, in item order
    built: int
    reused: int


def cache_root(data: DataConfig) -> Path:
    if data.feature_cache_dir:
        return Path(data.feature_cache_dir).expanduser().resolve()
    return dataset_root(data) / ".xtts_features"


def feature_settings(data: DataConfig, output: str) -> dict:
    """Every setting the stored features depend on."""
    names = (
        "sample_rate",
        "n_fft",
        "hop_length",
        "win_length",
        "n_mels",
        "fmin",
        "fmax",
        "mel_filterbank",
        "trim_silence",
        "normalize_loudness",
        "use_tf_native_loading",
    )
    settings = {name: getattr(data, name) for name in names}
    settings.update(output=output, version=FEATURE_VERSION)
    return settings


def feature_fingerprint(data: DataConfig, output: str) -> str:
    blob = json.dumps(feature_settings(data, output), sort_keys=True).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def item_key(audio_path: str) -> str:
    """Key of a file as it is now: its path, size and modification time."""
    stat = os.stat(audio_path)
    blob = f"{os.path.abspath(audio_path)}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def _write_atomically(path: Path, payload: bytes) -> None:
    fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _read_marker(directory: Path, fingerprint: str) -> set[str]:
    try:
        marker = json.loads((directory / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(marker, dict) or marker.get("fingerprint") != fingerprint:
        return set()
    return {key for key in marker.get("keys", []) if (directory / f"{key}.tensor").is_file()}


def precompute_features(
    data: DataConfig,
    items: Sequence[DatasetItem],
    output: str,
    features_for: Callable[[Sequence[DatasetItem]], Any],
) -> PrecomputeResult:
    """Make sure every item's features are on disk and vouched for by the marker.

    `features_for(items)` returns a tf.data.Dataset of feature tensors in the order of `items`
    (the same feature stage the runtime pipeline uses).
    """
    import tensorflow as tf

    fingerprint = feature_fingerprint(data, output)
    directory = cache_root(data) / fingerprint
    directory.mkdir(parents=True, exist_ok=True)
    keys = [item_key(item.audio_path) for item in items]
    complete = _read_marker(directory, fingerprint)
    todo: dict[str, DatasetItem] = {}
    for key, item in zip(keys, items):
        if key not in complete:
            todo.setdefault(key, item)
    if todo:
        pending = list(todo.items())
        serialized = features_for([item for _, item in pending]).map(
            tf.io.serialize_tensor, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
        )
        written = 0
        try:
            for (key, _), payload in zip(pending, serialized.as_numpy_iterator()):
                _write_atomically(directory / f"{key}.tensor", payload)
                written += 1
        except tf.errors.OpError as error:
            failed = pending[written][1]
            raise XttsError(
                f"precompute: cannot compute features of {failed.audio_path!r} ({failed.source}): {error.message.splitlines()[0]}",
                hint="the file passed the header scan but does not decode; remove or re-encode it",
            ) from None
        os.sync()  # features durable before the marker that vouches for them
        marker = {
            "fingerprint": fingerprint,
            "settings": feature_settings(data, output),
            "keys": sorted(complete | set(todo)),
        }
        _write_atomically(directory / MARKER, json.dumps(marker, indent=1).encode("utf-8"))
    return PrecomputeResult(
        directory=str(directory),
        paths=[str(directory / f"{key}.tensor") for key in keys],
        built=len(todo),
        reused=len(set(keys) - set(todo)),
    )
