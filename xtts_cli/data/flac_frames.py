"""Is a FLAC file's audio all there? Read from its last frames, without decoding.

FLAC's STREAMINFO says how many samples the stream holds but not how many bytes its frames take,
so a copy cut short keeps a whole header. Its frames say where they are: each header carries its
frame (or first sample) number and block size under a CRC-8, and each frame ends in a CRC-16 of
itself (https://xiph.org/flac/format.html#frame_header). The scan reads the file's tail: the last
frame header there must be the stream's final frame, and its CRC-16 must close before the file
ends.
"""

from __future__ import annotations

import array
import functools
import sys
from typing import Optional

# The tail read when STREAMINFO does not give the largest frame's size (0 means unknown).
UNKNOWN_FRAME_TAIL = 1 << 16


def _table(poly: int, width: int) -> tuple[int, ...]:
    top, mask = 1 << (width - 1), (1 << width) - 1
    rows = []
    for byte in range(256):
        crc = byte << (width - 8)
        for _ in range(8):
            crc = ((crc << 1) ^ poly) if crc & top else crc << 1
        rows.append(crc & mask)
    return tuple(rows)


@functools.cache
def _tables() -> tuple[tuple[int, ...], tuple[int, ...]]:
    # CRC-8 x^8+x^2+x+1 over a frame header, CRC-16 x^16+x^15+x^2+1 over a frame: both MSB first, from 0.
    return _table(0x07, 8), _table(0x8005, 16)


def _crc8(data: bytes) -> int:
    table, crc = _tables()[0], 0
    for byte in data:
        crc = table[crc ^ byte]
    return crc


def _block_size(code: int, extra: bytes) -> Optional[tuple[int, int]]:
    """(samples, extra bytes used) of a header's block-size code, None for the reserved code."""
    if code == 0:
        return None
    if code == 1:
        return 192, 0
    if code <= 5:
        return 576 << (code - 2), 0
    if code == 6:
        return (extra[0] + 1, 1) if len(extra) >= 1 else None
    if code == 7:
        return (int.from_bytes(extra[:2], "big") + 1, 2) if len(extra) >= 2 else None
    return 256 << (code - 8), 0


def _coded_number(data: bytes) -> Optional[tuple[int, int]]:
    """(value, bytes) of the UTF-8-style number in a frame header."""
    if not data:
        return None
    lead = data[0]
    if lead < 0x80:
        return lead, 1
    length = 8 - len(f"{lead:08b}".lstrip("1")) if lead != 0xFF else 8  # the leading ones count the bytes
    if not 2 <= length <= 7 or len(data) < length:
        return None
    value = lead & (0xFF >> (length + 1))
    for byte in data[1:length]:
        if byte & 0xC0 != 0x80:
            return None
        value = (value << 6) | (byte & 0x3F)
    return value, length


def frame_header(data: bytes, block: int) -> Optional[tuple[int, int, int]]:
    """(first sample, samples, header bytes) of a frame header at `data`'s start, None if there is
    none. `block`: the stream's largest block size, which turns a fixed-size frame's number into its
    first sample."""
    if len(data) < 6 or data[0] != 0xFF or data[1] & 0xFE != 0xF8 or data[3] & 1:
        return None
    variable = data[1] & 1
    size_code, rate_code = data[2] >> 4, data[2] & 0xF
    if rate_code == 0xF or (data[3] >> 4) > 10 or (data[3] >> 1) & 7 == 3:
        return None
    number = _coded_number(data[4:11])
    if number is None:
        return None
    pos = 4 + number[1]
    size = _block_size(size_code, data[pos : pos + 2])
    if size is None:
        return None
    pos += size[1] + {12: 1, 13: 2, 14: 2}.get(rate_code, 0)
    if len(data) <= pos or _crc8(data[:pos]) != data[pos]:
        return None
    first = number[0] if variable else number[0] * block
    return first, size[0], pos + 1


@functools.cache
def _word_table() -> list[int]:
    """The CRC-16 of each 2-byte value: the register after 16 bits is the table's entry at the
    register XOR the next two bytes, so a frame takes half the steps (a clip's final frame is KBs,
    and the scan reads every clip)."""
    table = _tables()[1]
    words: list[int] = []
    for high in range(256):
        first = table[high]
        words.extend(((first << 8) & 0xFFFF) ^ table[(first >> 8) ^ low] for low in range(256))
    return words


def _ends_whole(frame: bytes) -> bool:
    """Whether a frame that runs to the end of `frame` carries its own CRC-16 there: the CRC over a
    frame and its CRC is 0."""
    table, crc = _tables()[1], 0
    if len(frame) % 2:
        crc = table[frame[0]]
    words = array.array("H", frame[len(frame) % 2 :])
    if sys.byteorder == "little":
        words.byteswap()
    pairs = _word_table()
    for word in words:
        crc = pairs[crc ^ word]
    return crc == 0


def _closes(frame: bytes, header: int) -> bool:
    """Whether a frame's CRC-16 closes after its `header` bytes, bytes (a tag) after it or not."""
    if _ends_whole(frame):
        return True
    table, crc = _tables()[1], 0
    for index, byte in enumerate(frame):
        crc = ((crc << 8) & 0xFFFF) ^ table[(crc >> 8) ^ byte]
        if crc == 0 and index >= header:
            return True
    return False


def missing_tail(tail: bytes, total: int, block: int) -> Optional[str]:
    """What is missing from a FLAC stream of `total` samples whose file ends with `tail`: None when
    its final frame is there and whole, or when the tail holds no frame header to tell by."""
    pos = len(tail) - 6
    while pos >= 0:
        # A frame starts with the sync code 0xFFF8 (fixed block size) or 0xFFF9 (variable).
        pos = max(tail.rfind(b"\xff\xf8", 0, pos + 2), tail.rfind(b"\xff\xf9", 0, pos + 2))
        if pos < 0:
            break
        header = frame_header(tail[pos : pos + 24], block)
        if header is not None and header[0] < total:
            first, samples, length = header
            if first + samples < total:
                return f"FLAC holds {first + samples} of the {total} samples its STREAMINFO counts"
            if not _closes(tail[pos:], length):
                return "FLAC's final frame is cut short (its CRC-16 never closes)"
            return None
        pos -= 1
    return None


def tail_size(max_frame: int) -> int:
    """How much of a file's end holds its final frame (and the header of the one before)."""
    return 2 * max_frame + 64 if max_frame else UNKNOWN_FRAME_TAIL
