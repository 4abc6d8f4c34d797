"""Whether a checkpoint's files are whole, read without TensorFlow (`xtts validate` imports none).

A checkpoint is TensorFlow's tensor bundle: `ckpt-N.index`, a sorted table (LevelDB's format) that
says for each tensor which `.data-S-of-K` shard holds it, at which offset and how many bytes; and the
shards. A copy cut short keeps the index and loses the shards' tail, which TensorFlow finds only as it
reads ("Read less bytes than requested"). Formats: tensorflow/core/util/tensor_bundle/tensor_bundle.proto
(BundleEntryProto) and tensorflow/core/lib/io/format.h (block, handle, footer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

__all__ = ["cut_short"]

_MAGIC = 0xDB4775248B80FB57  # the table's last 8 bytes (little-endian)
_FOOTER = 48  # two block handles padded to 40 bytes, then the magic
_TRAILER = 5  # after each block: its compression type (1 byte) and crc (4)


class _Unreadable(ValueError):
    pass


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise _Unreadable("a number runs past its end")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at


def _block(data: bytes, handle: bytes, at: int = 0) -> tuple[bytes, int]:
    """The block a handle (its offset and size, at `at` in `handle`) points to in `data`: uncompressed,
    as TensorFlow's bundle writer leaves it."""
    offset, at = _varint(handle, at)
    size, at = _varint(handle, at)
    if offset + size + _TRAILER > len(data):
        raise _Unreadable("a block runs past the end")
    if data[offset + size] != 0:
        raise _Unreadable("a compressed block")
    return data[offset : offset + size], at


def _entries(block: bytes) -> list[tuple[bytes, bytes]]:
    """A block's (key, value) pairs: each key shares a prefix with the one before it."""
    if len(block) < 4:
        raise _Unreadable("a block too short")
    restarts = int.from_bytes(block[-4:], "little")
    end = len(block) - 4 * (restarts + 1)
    found: list[tuple[bytes, bytes]] = []
    key, at = b"", 0
    while 0 <= at < end:
        shared, at = _varint(block, at)
        unshared, at = _varint(block, at)
        length, at = _varint(block, at)
        key = key[:shared] + block[at : at + unshared]
        at += unshared
        found.append((key, block[at : at + length]))
        at += length
    return found


def _extent(entry: bytes) -> tuple[int, int]:
    """A BundleEntryProto's shard and the byte its tensor ends at (fields 3, 4 and 5)."""
    fields = {3: 0, 4: 0, 5: 0}
    at = 0
    while at < len(entry):
        tag, at = _varint(entry, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, at = _varint(entry, at)
            if number in fields:
                fields[number] = value
        elif wire == 2:
            length, at = _varint(entry, at)
            at += length
        elif wire == 5:
            at += 4
        elif wire == 1:
            at += 8
        else:
            raise _Unreadable("an entry of an unknown layout")
    return fields[3], fields[4] + fields[5]


def cut_short(prefix: str | Path) -> Optional[str]:
    """Why the checkpoint at `prefix` (…/ckpt-N) cannot be whole (a shard missing or shorter than its
    index says, an index cut short), or None. A layout this reader does not know is left to TensorFlow."""
    index = Path(f"{prefix}.index")
    try:
        data = index.read_bytes()
    except OSError as error:
        return f"{index.name} cannot be read ({error.strerror or error})"
    if len(data) < _FOOTER or int.from_bytes(data[-8:], "little") != _MAGIC:
        return f"{index.name} is cut short ({len(data):,} bytes)"
    try:
        _, at = _block(data, data, len(data) - _FOOTER)  # the metaindex (unused), then the index
        top, _ = _block(data, data, at)
        ends: dict[int, int] = {}
        shards = 1
        for _, handle in _entries(top):
            for key, value in _entries(_block(data, handle)[0]):
                if key == b"":  # the header: how many shards (BundleHeaderProto field 1)
                    shards = _header_shards(value)
                    continue
                shard, end = _extent(value)
                ends[shard] = max(ends.get(shard, 0), end)
    except _Unreadable:
        return None
    for shard in range(shards):
        path = Path(f"{prefix}.data-{shard:05d}-of-{shards:05d}")
        try:
            size = path.stat().st_size
        except OSError:
            return f"{path.name} is missing"
        if size < ends.get(shard, 0):
            return f"{path.name} holds {size:,} of its {ends[shard]:,} bytes"
    return None


def _header_shards(header: bytes) -> int:
    at = 0
    while at < len(header):
        tag, at = _varint(header, at)
        if tag & 7 != 0:
            raise _Unreadable("a header of an unknown layout")
        value, at = _varint(header, at)
        if tag >> 3 == 1:
            return max(1, value)
    return 1
