"""Read what an audio file holds from its header, without decoding it.

The dataset scan runs this over every file before training, so it must be fast on a large corpus:
it reads the container header (and, for Ogg, the last page; for MP3, the 4-byte frame headers; for
FLAC, the final frame), not the audio, except a float WAV's (for NaN) and, for the scan, a few
windows of a WAV's (`check_sound`: read whole only when it is silent). No TensorFlow: the scan is not part of the
training graph.

The decoded length it reports is the length the in-graph decoders (`audio.py`) produce, so the
scan's frame estimates are exact and length bucketing is decided before any audio is decoded.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import struct
from dataclasses import dataclass
from typing import BinaryIO, Optional

from xtts_cli.data import flac_frames

SUPPORTED_EXTENSIONS = (".wav", ".flac", ".ogg", ".mp3")
# Audio in a format not read, found beside its transcript: a bad item that says so, not a clip
# left out in silence.
UNREAD_EXTENSIONS = (".aiff", ".aif", ".aifc", ".opus", ".m4a", ".mp4", ".aac", ".wma", ".webm", ".au", ".caf", ".amr")
# The first bytes of those formats, each named as the error says it.
_UNREAD_MAGIC = (
    (lambda head: head[:4] == b"FORM" and head[8:12] in (b"AIFF", b"AIFC"), "AIFF"),
    (lambda head: head[4:8] == b"ftyp", "MP4 (M4A, AAC or ALAC)"),
    (lambda head: head[:4] == b"\x30\x26\xb2\x75", "WMA"),
    (lambda head: head[:4] == b".snd", "Sun AU"),
    (lambda head: head[:4] == b"caff", "CAF"),
    (lambda head: head[:4] == b"\x1a\x45\xdf\xa3", "WebM (Matroska)"),
    (lambda head: head[:5] == b"#!AMR", "AMR"),
)

# Below a telephone's 8 kHz by half, no voice is left to hear: a header that says so was written
# wrong (a rate of 1 Hz took 13 s to resample from, for a clip of a few samples).
MIN_RATE = 4000
# A clip whose loudest sample is under -80 dBFS holds no sound: no voice to learn, nor to clone.
SILENT_PEAK = 1e-4
# Float samples past twice full scale (+6 dBFS) are no recording's level: integers written as floats
# (a 16-bit clip's values, up to 32768, saved as float32), which train as a mel some 90 dB too loud.
FLOAT_OVER_RANGE = 2.0
# A WAV clip is looked at in this many windows of SOUND_WINDOW frames, spread over it, before it is
# read whole: a recording's noise floor alone is above SILENT_PEAK, so the first window of any clip
# with sound in it ends the look (a few KB read); only a silent clip is read to its end.
SOUND_WINDOWS = 8
SOUND_WINDOW = 2048

# A decode this far short of the scan's length is a damaged file, not a decoder's rounding: two MP3
# frames (an encoder's delay and padding) or 5 % of the clip, whichever is more.
SHORT_DECODE_SAMPLES = 2 * 1152
SHORT_DECODE_SHARE = 0.05

# WAVE format tags (mmreg.h). WAVE_FORMAT_EXTENSIBLE carries the real tag in its sub-format GUID.
_WAVE_PCM = 0x0001
_WAVE_FLOAT = 0x0003
_WAVE_EXTENSIBLE = 0xFFFE


def short_decode(decoded: int, expected: int) -> bool:
    """Whether `decoded` samples of a clip whose header says `expected` is a damaged or misread file."""
    return expected - decoded > max(SHORT_DECODE_SAMPLES, SHORT_DECODE_SHARE * expected)


class AudioHeaderError(Exception):
    """A file that cannot be used; `reason` is one of the scan's bad-item reason codes."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class AudioHeader:
    format: str  # container: wav, flac, ogg, mp3
    codec: str  # decode route, one of audio_codecs.CODECS
    sample_rate: int
    channels: int
    bit_depth: Optional[int]  # None for lossy formats
    num_samples: int  # per channel, as the in-graph decoder returns them
    data_offset: int = 0  # WAV: byte offset of the sample data (the raw-PCM decode route needs it)

    @property
    def duration(self) -> float:
        return self.num_samples / self.sample_rate


def read_audio_header(path: str, *, sound: bool = False) -> AudioHeader:
    """Header facts of `path`, or AudioHeaderError(reason, detail) saying why it is unusable: a
    file that cannot be read, a FIFO or device (never opened: a FIFO would block the scan), and a
    header cut short or malformed in any way are each their own reason, never a traceback. With
    `sound` (the scan), a WAV that is silent throughout is one too (`silent`, see `_check_sound`);
    a clip to vocode or clone says its own."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise AudioHeaderError("missing", "file not found") from None
    except OSError as error:
        raise AudioHeaderError("unreadable", f"cannot read the file: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        # Which it is: "--speaker-wav clips" had been told of FIFOs and devices for a folder.
        what = "a folder" if stat.S_ISDIR(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device"
        raise AudioHeaderError("not_audio", f"{what}, not a file: not read")
    size = info.st_size
    if size == 0:
        raise AudioHeaderError("empty", "file is empty (0 bytes)")
    try:
        with open(path, "rb") as handle:
            header = _read_header(handle, size)
            if header.sample_rate < MIN_RATE:
                raise AudioHeaderError(
                    "unsupported_format",
                    f"its header says {header.sample_rate} Hz, below the {MIN_RATE} Hz any voice needs (a header "
                    "written wrong?); convert it at its true rate (sox -r RATE IN -r 22050 OUT.wav)",
                )
            if header.codec == "wav_float32":  # first: NaN samples read as quiet in the sound check
                _check_finite(path, header)
            if sound and header.format == "wav":
                _check_sound(handle.fileno(), header)
        return header
    except AudioHeaderError:
        raise
    except PermissionError:
        raise AudioHeaderError("unreadable", "cannot read the file: permission denied") from None
    except OSError as error:
        raise AudioHeaderError("unreadable", f"cannot read the file: {error.strerror or error}") from None
    except (IndexError, ValueError, struct.error, EOFError, OverflowError):
        # The parsers read fixed layouts: a file cut inside one runs off its end somewhere.
        raise AudioHeaderError("truncated", "its header is cut short or malformed") from None


def not_a_clip_file(given: str) -> str:
    """Why `given` names no clip to read, or "": stdin's `-` (text is read from it, a clip is not), a
    URL (its `//` made `/` as a path: `https:/host/...`). Said before TensorFlow loads."""
    if given == "-":
        return "is stdin, which a clip is not read from"
    if re.match(r"(?i)(https?|ftp|s3|gs|file):/", given):
        return "is a URL: download the clip first (curl -o voice.wav URL), then pass the file"
    return ""


def _check_finite(path: str, header: AudioHeader) -> None:
    """Float samples can be NaN or infinite, which would train as such (a finite loss hides them):
    the one format that can carry them is read whole here, a million samples at a time."""
    import numpy as np

    count = header.num_samples * header.channels
    samples = np.memmap(path, dtype="<f4", mode="r", offset=header.data_offset, shape=(count,))
    bad, peak = 0, 0.0
    for start in range(0, count, 1 << 20):
        chunk = samples[start : start + (1 << 20)]
        finite = np.isfinite(chunk)
        bad += int(np.count_nonzero(~finite))
        peak = max(peak, float(np.abs(chunk[finite]).max(initial=0.0)))
    del samples
    if bad:
        raise AudioHeaderError(
            "bad_samples", f"{bad:,} of its {count:,} float samples {'is' if bad == 1 else 'are'} NaN or infinite"
        )
    if peak > FLOAT_OVER_RANGE:
        raise AudioHeaderError(
            "bad_samples",
            f"its float samples reach {peak:,.1f} where full scale is 1.0 (integers written as floats?): scale "
            "them into -1..1 (a 16-bit clip's values: divide by 32768)",
        )


# Each WAV codec's samples as numpy reads them, and full scale in their units.
_WAV_SAMPLES = {
    "wav_pcm8": ("u1", 128.0),
    "wav_pcm16": ("<i2", 32768.0),
    "wav_pcm24": ("u1", 8388608.0),  # 3-byte groups, put together in `_peak`
    "wav_pcm32": ("<i4", 2147483648.0),
    "wav_float32": ("<f4", 1.0),
}


def _check_sound(descriptor: int, header: AudioHeader) -> None:
    """AudioHeaderError("silent") for a WAV with no sound above -80 dBFS (SILENT_PEAK) once its
    channels are mixed to one, as training mixes them, and a steady offset (DC) is left out: a
    training clip that would teach its text as silence. The window in the middle of the clip is
    read first (where the speech is), then windows spread over it, then the whole clip: a clip with
    sound in one is read no further (a few microseconds a clip; benchmarks/scan_sound.py)."""
    frame = header.channels * (header.bit_depth or 16) // 8
    frames = header.num_samples
    last = max(0, frames - SOUND_WINDOW)

    def read(start: int, length: int) -> bytes:
        return os.pread(descriptor, length * frame, header.data_offset + start * frame)

    def loud(start: int, length: int) -> bool:
        return _swing(read(start, length), header.codec, header.channels) >= SILENT_PEAK

    try:
        if loud(last // 2, SOUND_WINDOW):
            return
        spread = (index * last // (SOUND_WINDOWS - 1) for index in range(SOUND_WINDOWS))
        if any(loud(start, SOUND_WINDOW) for start in spread):
            return
        if any(loud(start, min(1 << 18, frames - start)) for start in range(0, frames, 1 << 18)):
            return
        middle = read(last // 2, SOUND_WINDOW)
    except OSError:  # unreadable past its header: decoding it says so, not this look
        return
    import numpy as np

    window = _frames(middle, header.codec, header.channels)
    if len(window) and float(np.ptp(window, axis=0).max()) / 2 >= SILENT_PEAK:
        raise AudioHeaderError(
            "silent",
            f"its {header.channels} channels cancel when mixed to one, as training mixes them (one is the other "
            "inverted: a wiring fault): keep one of them (sox IN OUT remix 1)",
        )
    if len(window) and float(np.abs(window).max()) >= SILENT_PEAK:
        raise AudioHeaderError("silent", "it holds a steady offset (DC) and no sound: no speech to learn")
    raise AudioHeaderError("silent", "its loudest sample is under -80 dBFS: silence, no speech to learn")


def _swing(data: bytes, codec: str, channels: int) -> float:
    """Half the span from the lowest to the highest sample of the channels' mean in `data` (as
    training hears them; a steady offset adds nothing), as a share of full scale."""
    frames = _frames(data, codec, channels)
    if len(frames) == 0:
        return 0.0
    mixed = frames.mean(axis=1)
    return float(mixed.max() - mixed.min()) / 2


def _frames(data: bytes, codec: str, channels: int):
    """The whole frames in `data` as floats in -1..1, one column a channel."""
    import numpy as np

    dtype, full = _WAV_SAMPLES[codec]
    samples = np.frombuffer(data, dtype=dtype, count=len(data) // np.dtype(dtype).itemsize)
    if codec == "wav_pcm24":
        groups = samples[: len(samples) // 3 * 3].reshape(-1, 3).astype(np.int32)
        samples = groups[:, 0] | (groups[:, 1] << 8) | (groups[:, 2] << 16)
        samples = np.where(samples >= 1 << 23, samples - (1 << 24), samples)
    frames = samples[: len(samples) // channels * channels].reshape(-1, channels).astype(np.float64)
    return (frames - 128.0 if codec == "wav_pcm8" else frames) / full


def _read_header(handle: BinaryIO, size: int) -> AudioHeader:
    head = handle.read(12)
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return _read_wav(handle, size)
    if head[:4] == b"fLaC":
        return _read_flac(handle, size, 0)
    if head[:4] == b"OggS":
        return _read_ogg(handle, size)
    if head[:3] == b"ID3":
        start = _id3v2_end(head)
        handle.seek(start)
        if handle.read(4) == b"fLaC":
            return _read_flac(handle, size, start)
        return _read_mp3(handle, size, start)
    if len(head) >= 2 and head[0] == 0xFF and (head[1] & 0xE0) == 0xE0:
        return _read_mp3(handle, size, 0)
    if head[:4] in (b"RF64", b"BW64") and head[8:12] == b"WAVE":
        raise AudioHeaderError(
            "unsupported_format",
            f"{head[:4].decode()} WAV (the format of a recording past 4 GB) is not read; convert it to FLAC or "
            "WAV (e.g. sox IN OUT.flac)",
        )
    if head[:4] == b"RIFX" and head[8:12] == b"WAVE":
        raise AudioHeaderError(
            "unsupported_format",
            "big-endian WAV (RIFX) is not read; convert it to FLAC or WAV (e.g. sox IN OUT.flac)",
        )
    if head[:4] == b"RIFF":
        raise AudioHeaderError("not_audio", "RIFF file that is not WAVE")
    for looks_like, kind in _UNREAD_MAGIC:
        if looks_like(head):
            raise AudioHeaderError(
                "unsupported_format",
                f"{kind} audio is not read; convert it to FLAC or WAV (e.g. ffmpeg -i IN OUT.flac)",
            )
    raise AudioHeaderError("not_audio", "not a WAV, FLAC, Ogg Vorbis or MP3 file (unrecognised header bytes)")


def _read_wav(handle: BinaryIO, size: int) -> AudioHeader:
    fmt: Optional[tuple[int, int, int, int, int, bool]] = None
    pos = 12
    # A bounded walk: a corrupt chunk size cannot make us loop forever.
    for _ in range(64):
        handle.seek(pos)
        chunk = handle.read(8)
        if len(chunk) < 8:
            if fmt is None:
                raise AudioHeaderError("truncated", "WAV ends before its 'fmt ' chunk")
            raise AudioHeaderError("header_only", "WAV has a header but no 'data' chunk")
        chunk_id, chunk_size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
        if chunk_id == b"fmt ":
            body = handle.read(min(chunk_size, 40))
            if len(body) < 16:
                raise AudioHeaderError("truncated", "WAV 'fmt ' chunk is cut short")
            tag, channels, rate, _, block_align, bits = struct.unpack("<HHIIHH", body[:16])
            extensible = tag == _WAVE_EXTENSIBLE
            if extensible and len(body) >= 26:
                tag = struct.unpack("<H", body[24:26])[0]
            fmt = (tag, channels, rate, block_align, bits, extensible)
        elif chunk_id == b"data":
            if fmt is None:
                raise AudioHeaderError("not_audio", "WAV 'data' chunk comes before any 'fmt ' chunk")
            return _wav_header(fmt, data_offset=pos + 8, declared=chunk_size, available=size - pos - 8)
        pos += 8 + chunk_size + (chunk_size & 1)  # chunks are word-aligned
    raise AudioHeaderError("not_audio", "no 'data' chunk in the first 64 WAV chunks")


STREAMED_SIZE = 0xFFFFFFFF


def _wav_header(
    fmt: tuple[int, int, int, int, int, bool], *, data_offset: int, declared: int, available: int
) -> AudioHeader:
    tag, channels, rate, block_align, bits, _ = fmt
    # A compressed codec's blocks hold many samples (IMA ADPCM: 4-bit): only PCM's frame size is known.
    uncompressed = tag in (_WAVE_PCM, _WAVE_FLOAT)
    if channels < 1 or rate < 1 or (uncompressed and block_align != channels * ((bits + 7) // 8)):
        raise AudioHeaderError(
            "not_audio", f"WAV header is inconsistent (channels {channels}, rate {rate}, {bits}-bit)"
        )
    codec = {
        (_WAVE_PCM, 8): "wav_pcm8",
        (_WAVE_PCM, 16): "wav_pcm16",
        (_WAVE_PCM, 24): "wav_pcm24",
        (_WAVE_PCM, 32): "wav_pcm32",
        (_WAVE_FLOAT, 32): "wav_float32",
    }.get((tag, bits))
    if codec is None:
        kinds = {_WAVE_PCM: "PCM", _WAVE_FLOAT: "float", 6: "A-law", 7: "\u00b5-law", 2: "MS ADPCM", 0x11: "IMA ADPCM"}
        kind = kinds.get(tag, f"format tag 0x{tag:04x}")
        raise AudioHeaderError(
            "unsupported_format",
            f"WAV {kind} {bits}-bit is not supported; convert to 16-bit PCM (sox in.wav -b 16 -e signed-integer out.wav)",
        )
    if declared == STREAMED_SIZE and available > 0:
        # A WAV written to a pipe (ffmpeg, `xtts serve`'s stream=1) cannot go back to patch in its
        # length: 0xFFFFFFFF says "to the end of the file", and the audio is every whole sample there.
        declared = available - available % block_align
    if declared == 0 and available >= block_align:  # a recorder stopped before it wrote the sizes in
        raise AudioHeaderError(
            "header_only",
            f"WAV header says its audio is 0 bytes, yet {available} bytes follow it (a recording stopped before "
            "its sizes were written): repair it with sox --ignore-length in.wav out.wav",
        )
    if declared == 0 or available <= 0:
        raise AudioHeaderError("header_only", "WAV header with no audio data")
    if declared > available:
        if declared - available > block_align * rate // 100:
            raise AudioHeaderError(
                "truncated",
                f"WAV header declares {declared} bytes of audio but the file holds {available} (cut short in a "
                "copy or a download): copy it again, or keep what is there with sox --ignore-length in.wav out.wav",
            )
        declared = available  # under 10 ms gone (an odd byte lost in a copy): no word, the rest is read
    num_samples = declared // block_align
    if num_samples == 0:
        raise AudioHeaderError("header_only", "WAV header with no audio data")
    return AudioHeader("wav", codec, rate, channels, bits, num_samples, data_offset)


def _read_flac(handle: BinaryIO, size: int, start: int) -> AudioHeader:
    handle.seek(start + 4)
    block = handle.read(4 + 34)
    if len(block) < 38 or (block[0] & 0x7F) != 0:
        raise AudioHeaderError("truncated", "FLAC file ends inside its STREAMINFO block")
    info = block[4:]
    min_block, max_block = struct.unpack(">HH", info[:4])
    min_frame, max_frame = int.from_bytes(info[4:7], "big"), int.from_bytes(info[7:10], "big")
    packed = int.from_bytes(info[10:18], "big")
    rate = packed >> 44
    channels = ((packed >> 41) & 0x7) + 1
    bits = ((packed >> 36) & 0x1F) + 1
    total = packed & ((1 << 36) - 1)
    if rate == 0:
        raise AudioHeaderError("not_audio", "FLAC STREAMINFO has sample rate 0")
    if total == 0:
        raise AudioHeaderError(
            "unsupported_format", "FLAC stream length is unknown (STREAMINFO total samples is 0); re-encode the file"
        )
    if bits not in (16, 24):
        raise AudioHeaderError("unsupported_format", f"FLAC {bits}-bit is not supported; re-encode as 16- or 24-bit")
    # Walk the metadata blocks to where the audio frames start.
    pos = start + 4
    last = False
    while not last:
        handle.seek(pos)
        head = handle.read(4)
        if len(head) < 4:
            raise AudioHeaderError("truncated", "FLAC file ends inside its metadata")
        last = bool(head[0] & 0x80)
        pos += 4 + int.from_bytes(head[1:4], "big")
    audio_bytes = size - pos
    if audio_bytes <= 0:
        raise AudioHeaderError("header_only", "FLAC header with no audio frames")
    # With a fixed block size every frame but the last is at least `min_frame` bytes: a file holding
    # fewer bytes than that lost its tail. The only length check FLAC allows without decoding.
    if min_block == max_block and min_frame > 0:
        frames = -(-total // max_block)
        if audio_bytes < (frames - 1) * min_frame:
            raise AudioHeaderError(
                "truncated", f"FLAC holds {audio_bytes} bytes of frames, fewer than its {frames} frames need"
            )
    handle.seek(max(pos, size - flac_frames.tail_size(max_frame)))
    missing = flac_frames.missing_tail(handle.read(), total, max_block)
    if missing is not None:
        raise AudioHeaderError("truncated", missing)
    return AudioHeader("flac", f"flac{bits}", rate, channels, bits, total)


def _read_ogg(handle: BinaryIO, size: int) -> AudioHeader:
    handle.seek(0)
    first = handle.read(28 + 255)
    segments = first[26]
    packet = first[27 + segments : 27 + segments + 30] if len(first) > 27 else b""
    if packet[:8] == b"OpusHead":
        raise AudioHeaderError("unsupported_format", "Ogg Opus is not supported; use Ogg Vorbis, FLAC or WAV")
    if packet[:7] != b"\x01vorbis" or len(packet) < 16:
        raise AudioHeaderError("not_audio", "Ogg file without a Vorbis identification header")
    channels = packet[11]
    rate = struct.unpack("<I", packet[12:16])[0]
    serial = first[14:18]
    if channels < 1 or rate < 1:
        raise AudioHeaderError("not_audio", "Vorbis identification header is inconsistent")
    # The last page's granule position is the stream's length in samples; its EOS flag says the
    # encoder finished. Read only the file's tail (an Ogg page is at most 65,307 bytes).
    tail_start = max(0, size - 65536 - 282)
    handle.seek(tail_start)
    tail = handle.read()
    at = tail.rfind(b"OggS")
    while at >= 0:
        page = tail[at:]
        if len(page) >= 27 and page[4] == 0:
            if page[14:18] != serial or _second_stream(handle, size):
                # Streams joined (`cat a.ogg b.ogg`) or multiplexed: the decoder reads the first alone,
                # the last page's length is another stream's (RFC 3533 section 4).
                raise AudioHeaderError(
                    "unsupported_format",
                    "an Ogg file of several streams (files joined one after another?): only the first would be "
                    "read, against the whole text; re-encode it as one stream (sox IN.ogg OUT.wav)",
                )
            granule = struct.unpack("<q", page[6:14])[0]
            count = page[26]
            body = sum(page[27 : 27 + count]) if len(page) >= 27 + count else None
            if body is None or 27 + count + body > len(page):
                raise AudioHeaderError("truncated", "Ogg file ends inside its last page")
            if not page[5] & 0x04:
                raise AudioHeaderError("truncated", "Ogg stream has no end-of-stream page (file cut short)")
            if granule <= 0:
                raise AudioHeaderError("header_only", "Ogg Vorbis file with headers but no audio")
            return AudioHeader("ogg", "vorbis", rate, channels, None, granule)
        at = tail.rfind(b"OggS", 0, at)
    raise AudioHeaderError("truncated", "no complete Ogg page at the end of the file")


def _second_stream(handle: BinaryIO, size: int) -> bool:
    """Whether a page after the first begins a stream (its header's BOS flag, RFC 3533): a file joined
    to itself, or an encoder's fixed serial number, gives its second stream the first's serial. Read
    a megabyte at a time (a clip's Ogg is small, and the scan keeps what it found)."""
    marker, chunk, at = b"OggS\x00\x02", 1 << 20, 1
    while at < size:
        handle.seek(at)
        data = handle.read(chunk + len(marker) - 1)
        if marker in data:
            return True
        at += chunk
    return False


def _id3v2_end(head: bytes) -> int:
    # ID3v2 size is "syncsafe": 4 bytes of 7 bits each, after a 10-byte header.
    size = (head[6] << 21) | (head[7] << 14) | (head[8] << 7) | head[9]
    footer = 10 if head[5] & 0x10 else 0
    return 10 + size + footer


# MPEG audio frame header tables (ISO 11172-3 / 13818-3).
_MP3_BITRATES = {  # (version_is_mpeg1, layer) -> kbit/s by index
    (True, 1): (0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448),
    (True, 2): (0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384),
    (True, 3): (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),
    (False, 1): (0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256),
    (False, 2): (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
    (False, 3): (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
}
_MP3_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}


@functools.lru_cache(maxsize=4096)
def _mp3_frame(header: bytes) -> Optional[tuple[int, int, int, int]]:
    """(frame bytes, samples per frame, sample rate, channels) of a frame header, or None. Kept:
    a corpus repeats a few headers (its bit rates, rates, channel modes, with or without padding)."""
    if len(header) < 4 or header[0] != 0xFF or (header[1] & 0xE0) != 0xE0:
        return None
    version = (header[1] >> 3) & 0x3  # 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
    layer = 4 - ((header[1] >> 1) & 0x3)
    bitrate_index = header[2] >> 4
    rate_index = (header[2] >> 2) & 0x3
    if version == 1 or layer == 4 or bitrate_index in (0, 15) or rate_index == 3:
        return None
    mpeg1 = version == 3
    bitrate = _MP3_BITRATES[(mpeg1, layer)][bitrate_index] * 1000
    rate = _MP3_RATES[version][rate_index]
    padding = (header[2] >> 1) & 0x1
    channels = 1 if (header[3] >> 6) == 3 else 2
    if layer == 1:
        return (12 * bitrate // rate + padding) * 4, 384, rate, channels
    if layer == 2 or mpeg1:
        return 144 * bitrate // rate + padding, 1152, rate, channels
    return 72 * bitrate // rate + padding, 576, rate, channels


def _mp3_resumes(data: memoryview, pos: int, rate: int) -> bool:
    """Whether whole MPEG frames follow a break in the frames at `pos`: two in a row, as a decoder
    finds its sync again."""
    found = bytes(data[pos:])
    at = found.find(b"\xff", 1)
    while 0 <= at < len(found) - 4:
        frame = _mp3_frame(found[at : at + 4])
        if frame is not None and frame[2] == rate:
            after = _mp3_frame(found[at + frame[0] : at + frame[0] + 4])
            if after is not None and after[2] == rate:
                return True
        at = found.find(b"\xff", at + 1)
    return False


def _mp3_vbr_tag(frame: bytes, mpeg1: bool, channels: int) -> tuple[int, int, int, int]:
    """minimp3's `mp3dec_check_vbrtag`: (status, frames, delay, padding) of a Xing/Info first frame.

    status 0: no tag (the frame is audio); -1: a tag without a frame count (skipped, not audio);
    1: a tag whose frame count, encoder delay and padding fix the decoded length (gapless).
    """
    side_info = (17 if channels == 1 else 32) if mpeg1 else (9 if channels == 1 else 17)
    crc = 2 if not (frame[1] & 0x01) else 0
    at = 4 + crc + side_info
    tag = frame[at:]
    if tag[:4] not in (b"Xing", b"Info") or len(tag) < 12:
        return 0, 0, 0, 0
    flags = tag[7]
    if not flags & 0x1:
        return -1, 0, 0, 0
    frames = int.from_bytes(tag[8:12], "big")
    at += 12 + (4 if flags & 0x2 else 0) + (100 if flags & 0x4 else 0) + (4 if flags & 0x8 else 0)
    delay = padding = 0
    if at < len(frame) and frame[at]:
        at += 21  # LAME / Lavc extension: encoder delay and padding, 12 bits each
        if at + 14 >= len(frame):
            return 0, 0, 0, 0
        delay = ((frame[at] << 4) | (frame[at + 1] >> 4)) + 528 + 1
        padding = (((frame[at + 1] & 0xF) << 8) | frame[at + 2]) - (528 + 1)
    return 1, frames, delay, padding


def _read_mp3(handle: BinaryIO, size: int, start: int) -> AudioHeader:
    # The whole file at once (a clip is tens of kB), its frame headers walked in memory: a seek and
    # a read per frame took 0.17 ms per 5 s clip at 48 kHz (Common Voice's), 20x a WAV header.
    handle.seek(start)
    data = memoryview(handle.read(size - start))
    first_header = bytes(data[:4])
    first = _mp3_frame(first_header)
    if first is None:
        raise AudioHeaderError("not_audio", "no MPEG audio frame where the MP3 data should start")
    first_length, samples_per_frame, rate, channels = first
    # Walk the frame headers (4 bytes each) to count frames: VBR files without a Xing tag have no
    # other reliable length.
    pos, frames, end = 0, 0, size - start
    while pos + 4 <= end:
        header = bytes(data[pos : pos + 4])
        frame = _mp3_frame(header)
        if frame is None:
            if header[:3] == b"TAG" or header[:4] in (b"APET", b"LYRI"):
                break  # trailing ID3v1 / APE / Lyrics tag
            if frames < 2:
                raise AudioHeaderError("not_audio", "MPEG frame sync lost after the first frame")
            if _mp3_resumes(data, pos, rate):  # damage, not an end: a decoder reads on past it
                raise AudioHeaderError(
                    "truncated", f"MP3 damaged mid-stream: its frames break off at byte {pos + start}"
                )
            break
        length, _, frame_rate, _ = frame
        if frame_rate != rate:
            raise AudioHeaderError("not_audio", "MPEG frames change sample rate mid-stream")
        if pos + length > end:
            raise AudioHeaderError("truncated", f"MP3 ends inside frame {frames + 1}")
        pos += length
        frames += 1
    # The decoded length is what tensorflow-io's decoder (minimp3) returns: every frame, unless the
    # first frame is a Xing/Info tag; then the tag is skipped and, with a LAME extension, the
    # encoder delay and padding are cut (gapless). Same rules as minimp3_ex.h.
    layer = 4 - ((first_header[1] >> 1) & 0x3)
    mpeg1 = ((first_header[1] >> 3) & 0x3) == 3
    num_samples = frames * samples_per_frame
    status = 0
    if layer == 3:
        status, tag_frames, delay, padding = _mp3_vbr_tag(bytes(data[:first_length]), mpeg1, channels)
        if status < 0:
            num_samples = (frames - 1) * samples_per_frame
        elif status > 0:
            # The tag counts the audio frames the encoder wrote: fewer here is a copy cut short (at a
            # frame's end, which the walk above cannot see) or damaged mid-stream, which a decoder
            # would have left as silence the length of the missing frames.
            if frames - 1 < tag_frames - 1:
                raise AudioHeaderError(
                    "truncated", f"MP3 holds {frames - 1} of the {tag_frames} frames its Xing/Info header counts"
                )
            num_samples = tag_frames * samples_per_frame
            num_samples = num_samples - delay if num_samples >= delay else num_samples
            if padding > 0 and num_samples >= padding:
                num_samples -= padding
    if num_samples <= 0:
        raise AudioHeaderError("header_only", "MP3 with no audio frames")
    # With no frame count in a Xing/Info tag, libsndfile (mpg123) reckons the length from the first
    # frame's size and reads no further: right at a constant bitrate, short when frames vary (VBR).
    reckoned = int(end / first_length * samples_per_frame)
    if status <= 0 and short_decode(reckoned, num_samples):
        raise AudioHeaderError(
            "unsupported_format",
            f"MP3 of varying bitrate with no Xing/Info header: its decoder reads {reckoned} of its {num_samples} "
            "samples; re-encode it (to FLAC, or MP3 with a Xing header)",
        )
    return AudioHeader("mp3", "mp3", rate, channels, None, num_samples)
