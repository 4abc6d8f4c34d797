"""How fast the dataset's audio comes off storage: read throughput, per-file latency, and the disk.

`check_storage()` reads a deterministic sample of the audio files the way the input pipeline does
(open, read the whole file, close; in shuffled order, one file at a time) and times each file.

Page cache, honestly: a file read recently is served from RAM, not the disk, and the first pass
here cannot be made cold without evicting the cache (`echo 3 > /proc/sys/vm/drop_caches`, root
only), which we never do: it would slow every other process on the machine. Instead, just before
reading each file we ask the kernel how much of it is already cached (mincore(2)) and report that
share with the first pass, so a "fast" result on a warm cache is labelled as such. The second pass
re-reads the same files and shows the warm figure. Training reads a dataset larger than RAM cold
every epoch; a small one comes from the page cache after the first epoch.

Filesystem type, network filesystems and rotational disks come from /proc/self/mountinfo and
/sys/dev/block (Linux only; "unknown" elsewhere or when Linux does not say).
"""

from __future__ import annotations

import ctypes
import os
import random
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, Field

from xtts_cli.findings import ConfigChange, Finding, relative_to_here, sort_findings
from xtts_cli.stats.latency import LatencyStats, summarize

# What the dataset scan decodes (xtts_cli/data/audio_headers.py): WAV, FLAC, Ogg Vorbis, MP3.
AUDIO_SUFFIXES = frozenset({".wav", ".flac", ".ogg", ".mp3"})

# Per-file p95 open+read latency above which reading, not compute, sets the pace. Why 20 ms:
# - On our 2-core machines the TF-native pipeline decodes and computes the mel of a 5.4 s clip at
#   ~410-490 clips/s, i.e. ~4 ms of CPU per clip per core (shared/docs/PERFORMANCE.md). A read that
#   takes 20 ms is 5x that: each parallel reader spends most of its time waiting on storage.
# - A local SSD serves a small file in well under 1 ms; a 7,200 rpm disk needs a seek (~8-9 ms,
#   drive datasheets) plus half a turn (60 s / 7,200 / 2 = 4.2 ms) per file that is not contiguous,
#   ~12 ms, so a p95 above 20 ms is beyond even a healthy hard disk: queueing, a network round
#   trip or throttled cloud storage. The TF guide names this case ("time-to-first-byte") for remote
#   storage: https://www.tensorflow.org/guide/data_performance#parallelizing_data_extraction
P95_LATENCY_WARN_MS = 20.0

# MB/s here is 10^6 bytes per second, as disk vendors and `dd` print it.
MB = 1_000_000
READ_CHUNK = 1 << 20

# Filesystems where every open and read is a round trip to another machine (or, for 9p, the
# hypervisor/WSL host), from the kernel's and the FUSE projects' fs type names.
NETWORK_FILESYSTEMS = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs", "lustre", "gpfs", "beegfs", "afs",
    "fuse.sshfs", "fuse.s3fs", "fuse.gcsfuse", "fuse.mountpoint-s3", "fuse.rclone", "fuse.juicefs",
    "fuse.glusterfs", "fuse.ceph-fuse", "fuse.blobfuse", "fuse.blobfuse2", "fuse.goofys",
})  # fmt: skip
MEMORY_FILESYSTEMS = frozenset({"tmpfs", "ramfs"})

PRECOMPUTE_FIX = (
    "set data.preprocessing_mode: precompute (reads stored mel features, no decoding; put "
    "data.feature_cache_dir on a local disk) or cache (reads the audio once per run, then serves "
    "features from memory), or move the dataset to a local SSD"
)

Medium = Literal["ssd", "hdd", "network", "memory", "unknown"]


class FilesystemInfo(BaseModel):
    path: str = Field(description="A dataset path.")
    mount_point: Optional[str] = Field(None, description="Its mount point.")
    fs_type: str = Field("unknown", description="Its filesystem (ext4, nfs4, tmpfs, ...).")
    source: Optional[str] = Field(None, description="What is mounted there (a device, a server's export).")
    block_device: Optional[str] = Field(None, description="Its block device, where one.")
    # /sys/block/<dev>/queue/rotational: None when Linux does not say.
    rotational: Optional[bool] = Field(
        None, description="A spinning disk (Linux's queue/rotational); null where Linux does not say."
    )
    network: bool = Field(False, description="A network filesystem: every open and read a round trip.")
    medium: Medium = Field("unknown", description="ssd, hdd, network, memory or unknown.")
    note: Optional[str] = Field(None, description="What that means for reading it, where it matters.")


class ReadPass(BaseModel):
    files: int = Field(description="Files read.")
    bytes: int = Field(description="Bytes read.")
    seconds: float = Field(description="Wall time.")
    mb_per_s: float = Field(description="Throughput, MB/s (10^6 bytes).")
    # Open + read of the whole file + close, per file, in ms.
    latency_ms: LatencyStats = Field(description="Open, read the whole file and close, per file, ms.")
    # Open + the first read() (up to 1 MiB): the time-to-first-byte part of the latency.
    first_byte_ms: LatencyStats = Field(
        description="Open and the first read (up to 1 MiB), per file, ms: the time-to-first-byte."
    )
    # Share of this pass's bytes already in the page cache just before each file was read
    # (mincore(2)); None where the kernel would not say (not Linux, or files we neither own nor can
    # write: since Linux 5.2 mincore reports the cache only for those).
    cached_fraction_before: Optional[float] = Field(
        None,
        description="Share of the bytes already in the page cache before each read; null where the kernel would not say.",
    )


class StorageReport(BaseModel):
    paths: list[str] = Field(description="The dataset paths read.")
    files_found: int = Field(description="Audio files under them; with a scan, the clips training reads.")
    files_sampled: int = Field(description="Files read for the test (evenly spaced).")
    mean_file_bytes: float = Field(description="Mean size of the files read, bytes.")
    first_pass: Optional[ReadPass] = Field(
        None, description="The first read of the sample (cold, unless the page cache held it)."
    )
    second_pass: Optional[ReadPass] = Field(None, description="The same files again (what the page cache gives).")
    budget_seconds: float = Field(description="The time the test was given.")
    budget_exhausted: bool = Field(False, description="The budget ended it before every file was read.")
    unreadable: list[str] = Field(default_factory=list, description="Files that could not be read.")
    filesystems: list[FilesystemInfo] = Field(default_factory=list, description="The filesystem each path is on.")
    needed_mb_per_s: Optional[float] = Field(
        None, description="The read rate training needs at the measured pipeline speed, MB/s; null when not measured."
    )
    read_every_epoch: bool = Field(
        True,
        description="Training reads these files every epoch (runtime mode); false: once per run or store "
        "(cache, precompute), so how fast they read does not set its pace and no latency or throughput "
        "warning is given.",
    )
    p95_latency_warn_ms: float = Field(
        P95_LATENCY_WARN_MS, description="The p95 latency above which reading is said to set the pace, ms."
    )
    cache_note: str = Field("", description="What the page cache did to the figures, in words.")
    findings: list[Finding] = Field(default_factory=list, description="What the storage test found, each with its fix.")


def audio_files(paths: Sequence[Path]) -> list[Path]:
    """Every audio file under `paths` (files are taken as given), sorted, without duplicates."""
    found: set[Path] = set()
    for path in paths:
        if path.is_file():
            found.add(path)
        elif path.is_dir():
            for root, dirs, files in os.walk(path):
                # Our own feature cache holds no audio.
                dirs[:] = [d for d in dirs if not d.startswith(".xtts_")]
                found.update(Path(root) / name for name in files if Path(name).suffix.lower() in AUDIO_SUFFIXES)
    return sorted(found)


def sample_files(files: Sequence[Path], max_files: int) -> list[Path]:
    """At most `max_files` of the sorted `files`, evenly spaced so the sample spans every folder and
    the same dataset always gives the same sample."""
    if len(files) <= max_files:
        return list(files)
    step = len(files) / max_files
    return [files[int(i * step)] for i in range(max_files)]


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_libc: Optional[ctypes.CDLL] = None


def _linux_libc() -> Optional[ctypes.CDLL]:
    global _libc
    if not sys.platform.startswith("linux"):
        return None
    if _libc is None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
        _libc = libc
    return _libc


def cached_fraction(path: Path) -> Optional[float]:
    """Share of `path`'s pages in the page cache now, without reading it (mapping a file and asking
    mincore(2) faults nothing in). None when the kernel would not tell us the truth: since Linux 5.2
    mincore on a file mapping reports the page cache only to the file's owner or someone who may
    write it (man 2 mincore); for others it would say "not cached" whatever the truth."""
    libc = _linux_libc()
    if libc is None:
        return None
    try:
        stat = path.stat()
        if stat.st_size == 0 or (stat.st_uid != os.geteuid() and not os.access(path, os.W_OK)):
            return None
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = stat.st_size
        address = libc.mmap(None, size, 0x1, 0x1, fd, 0)  # PROT_READ, MAP_SHARED
        if address is None or address == ctypes.c_void_p(-1).value:
            return None
        try:
            pages = (size + _PAGE_SIZE - 1) // _PAGE_SIZE
            vector = (ctypes.c_ubyte * pages)()
            if libc.mincore(ctypes.c_void_p(address), size, vector) != 0:
                return None
            # Bit 0 of each byte: page resident; the other bits are reserved.
            return sum(byte & 1 for byte in bytes(vector)) / pages
        finally:
            libc.munmap(ctypes.c_void_p(address), size)
    finally:
        os.close(fd)


def _read_file(path: Path) -> tuple[int, float, float]:
    """(bytes, ms to open + first read, ms to open + read all + close)."""
    started = time.perf_counter()
    fd = os.open(path, os.O_RDONLY)
    try:
        chunk = os.read(fd, READ_CHUNK)
        first = time.perf_counter()
        total = len(chunk)
        while chunk:
            chunk = os.read(fd, READ_CHUNK)
            total += len(chunk)
    finally:
        os.close(fd)
    done = time.perf_counter()
    return total, (first - started) * 1e3, (done - started) * 1e3


def _read_pass(files: Sequence[Path], deadline: float, unreadable: list[str]) -> tuple[ReadPass, list[Path]]:
    """Read `files` in order until `deadline` (at least one file); the pass and the files read."""
    latencies: list[float] = []
    first_bytes: list[float] = []
    read: list[Path] = []
    total_bytes = 0
    cached_bytes = known_bytes = 0.0
    busy = 0.0
    for path in files:
        if read and time.perf_counter() >= deadline:
            break
        fraction = cached_fraction(path)
        try:
            size, first_ms, file_ms = _read_file(path)
        except OSError as exc:
            unreadable.append(f"{path}: {exc.strerror or exc}")
            continue
        if fraction is not None:
            known_bytes += size
            cached_bytes += fraction * size
        latencies.append(file_ms)
        first_bytes.append(first_ms)
        read.append(path)
        total_bytes += size
        # Throughput counts only the time spent opening and reading, not the mincore calls.
        busy += file_ms / 1e3
    result = ReadPass(
        files=len(read),
        bytes=total_bytes,
        seconds=busy,
        mb_per_s=total_bytes / MB / busy if busy > 0 else 0.0,
        latency_ms=summarize(latencies),
        first_byte_ms=summarize(first_bytes),
        cached_fraction_before=cached_bytes / known_bytes if known_bytes else None,
    )
    return result, read


_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


def _unescape(field: str) -> str:
    # The kernel writes space, tab, newline and backslash in mount paths as \040, \011, \012, \134.
    return _OCTAL_ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), field)


def parse_mountinfo(text: str) -> list[tuple[str, str, str, str]]:
    """(major:minor, mount point, fs type, source) per line of /proc/self/mountinfo, whose format is
    in the kernel's Documentation/filesystems/proc.rst ("3.5 /proc/<pid>/mountinfo"): optional
    fields end at a lone "-", then fs type and source."""
    mounts = []
    for line in text.splitlines():
        before, sep, after = line.partition(" - ")
        if not sep:
            continue
        head, tail = before.split(), after.split()
        if len(head) < 5 or len(tail) < 2:
            continue
        mounts.append((head[2], _unescape(head[4]), tail[0], _unescape(tail[1])))
    return mounts


def _mount_of(path: str, mounts: Sequence[tuple[str, str, str, str]]) -> Optional[tuple[str, str, str, str]]:
    best = None
    for mount in mounts:  # later lines are mounted over earlier ones: `>=` keeps the last
        point = mount[1]
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best[1])):
            best = mount
    return best


def _block_device_dir(path: Path, source: Optional[str]) -> Optional[Path]:
    """The /sys directory of the disk holding `path`: its own device, else the mount's source."""
    candidates = []
    try:
        dev = path.stat().st_dev
        candidates.append(Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}"))
    except OSError:
        pass
    if source and source.startswith("/dev/"):
        candidates.append(Path("/sys/class/block") / Path(os.path.realpath(source)).name)
    for candidate in candidates:
        if candidate.exists():
            return Path(os.path.realpath(candidate))
    return None


def _rotational(device_dir: Path) -> Optional[bool]:
    # A partition has no queue/ of its own: its disk (the parent directory) has.
    for directory in (device_dir, device_dir.parent):
        flag = directory / "queue" / "rotational"
        try:
            return flag.read_text().strip() == "1"
        except OSError:
            continue
    return None


def filesystem_info(path: Path, mountinfo: Optional[str] = None) -> FilesystemInfo:
    """Filesystem type, mount and disk kind of `path`, as far as Linux tells ("unknown" otherwise)."""
    info = FilesystemInfo(path=str(path))
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError:
            return info
    mount = _mount_of(os.path.realpath(path), parse_mountinfo(mountinfo))
    if mount is None:
        return info
    _, info.mount_point, info.fs_type, info.source = mount
    info.network = info.fs_type in NETWORK_FILESYSTEMS
    if info.fs_type in MEMORY_FILESYSTEMS:
        info.medium = "memory"
        return info
    if info.network:
        info.medium = "network"
        return info
    device_dir = _block_device_dir(path, info.source)
    if device_dir is None:
        return info
    info.block_device = device_dir.name
    info.rotational = _rotational(device_dir)
    if info.block_device.startswith(("vd", "xvd")) or "/virtio" in str(device_dir):
        # virtio-blk and Xen disks report rotational=1 unless the hypervisor says otherwise, whatever
        # backs them (a cloud SSD volume often reads as "rotational").
        info.note = f"{info.block_device} is a virtual disk: its rotational flag does not tell the backing storage"
    elif info.block_device.startswith("loop"):
        info.note = f"{info.block_device} is a loop device: speed is that of its backing file's disk"
    elif info.rotational is not None:
        info.medium = "hdd" if info.rotational else "ssd"
    return info


def check_storage(
    paths: list[Path],
    *,
    max_files: int = 200,
    budget_seconds: float = 5.0,
    needed_mb_per_s: Optional[float] = None,
    samples_per_second: Optional[float] = None,
    second_pass: bool = True,
    p95_latency_warn_ms: float = P95_LATENCY_WARN_MS,
    read_every_epoch: bool = True,
    clips: Optional[Sequence[str]] = None,
) -> StorageReport:
    """Read a deterministic sample of the audio under `paths` and time it; with `clips` (the scan's,
    what training reads), of those alone: every file under the folder had counted the skipped ones.

    `needed_mb_per_s` is what training consumes; or pass `samples_per_second` (clips/s training
    takes) and it is that times the sampled files' mean size. The first pass gets two thirds of
    `budget_seconds`, the warm second pass the rest; each reads at least one file.
    `read_every_epoch`: false when training reads the files once (cache, precompute): the figures
    are measured all the same, but they do not set training's pace, so they raise no warning.
    """
    paths = [Path(p).expanduser() for p in paths]
    findings: list[Finding] = []
    existing = []
    for path in paths:
        if path.exists():
            existing.append(path)
        else:
            findings.append(
                Finding(
                    id="storage-path-missing",
                    severity="error",
                    message=f"{str(path)!r} does not exist{relative_to_here(path)}; point "
                    "data.dataset_path at the dataset",
                )
            )
    files = sorted({Path(clip) for clip in clips}) if clips is not None else audio_files(existing)
    sample = sample_files(files, max_files)
    # Shuffled like training reads (a shuffled file list), with a fixed seed so runs compare; reading
    # in sorted order would flatter a hard disk with sequential, read-ahead-friendly access.
    order = list(sample)
    random.Random(0).shuffle(order)
    mean_bytes = _mean_size(sample)
    report = StorageReport(
        paths=[str(p) for p in paths],
        files_found=len(files),
        files_sampled=len(sample),
        mean_file_bytes=mean_bytes,
        budget_seconds=budget_seconds,
        filesystems=[filesystem_info(p) for p in existing],
        p95_latency_warn_ms=p95_latency_warn_ms,
        read_every_epoch=read_every_epoch,
    )
    if not read_every_epoch:
        needed_mb_per_s = samples_per_second = None
    if needed_mb_per_s is None and samples_per_second is not None:
        needed_mb_per_s = samples_per_second * mean_bytes / MB
    report.needed_mb_per_s = needed_mb_per_s
    if order:
        started = time.perf_counter()
        first, read = _read_pass(order, started + budget_seconds * 2 / 3, report.unreadable)
        report.first_pass = first if first.files else None
        report.budget_exhausted = len(read) + len(report.unreadable) < len(order)
        if second_pass and read:
            report.second_pass, _ = _read_pass(read, started + budget_seconds, [])
        report.cache_note = _cache_note(report)
    elif existing:
        findings.append(
            Finding(
                id="no-audio-files",
                severity="warning",
                message=f"no audio files ({', '.join(sorted(AUDIO_SUFFIXES))}) under "
                f"{', '.join(repr(str(p)) for p in existing)}; point data.dataset_path at the dataset",
            )
        )
    report.findings = sort_findings(findings + storage_findings(report))
    return report


def _mean_size(files: Sequence[Path]) -> float:
    sizes = []
    for path in files:
        try:
            sizes.append(path.stat().st_size)
        except OSError:
            continue
    return sum(sizes) / len(sizes) if sizes else 0.0


def _cache_note(report: StorageReport) -> str:
    first = report.first_pass
    if first is None:
        return ""
    if first.cached_fraction_before is None:
        cached = "how much was already in the page cache is unknown"
    else:
        cached = f"{first.cached_fraction_before:.0%} of its bytes were already in the page cache"
    return (
        f"first pass: {cached}; the second pass re-reads the same files warm. A truly cold read needs "
        "the page cache dropped (root: sync; echo 3 > /proc/sys/vm/drop_caches), which xtts does not do"
    )


def storage_findings(report: StorageReport) -> list[Finding]:
    """Findings from the measured figures (the first pass: the closest to what an epoch over a
    dataset larger than RAM sees)."""
    findings: list[Finding] = []
    for fs in report.filesystems:
        if fs.network:
            findings.append(
                Finding(
                    id="storage-network-filesystem",
                    severity="info",
                    message=f"{fs.path} is on {fs.fs_type} ({fs.source}), a network filesystem: every file open is "
                    "a round trip; if reads are slow, " + PRECOMPUTE_FIX,
                )
            )
        elif fs.medium == "hdd":
            findings.append(
                Finding(
                    id="storage-rotational-disk",
                    severity="info",
                    message=f"{fs.path} is on a rotational disk ({fs.block_device}): each file not read in order "
                    "costs a seek; if reads are slow, " + PRECOMPUTE_FIX,
                )
            )
    first = report.first_pass
    if first is None:
        return findings
    warm = first.cached_fraction_before is not None and first.cached_fraction_before >= 0.5
    warm_note = (
        f" (and {first.cached_fraction_before:.0%} of it came from the page cache, so cold reads are slower still)"
        if warm
        else ""
    )
    change = ConfigChange(key="data.preprocessing_mode", value="precompute")
    if report.read_every_epoch and first.latency_ms.p95 > report.p95_latency_warn_ms:
        findings.append(
            Finding(
                id="storage-latency-high",
                severity="warning",
                message=f"reading one audio file takes {first.latency_ms.p95:.1f} ms at p95 (p50 "
                f"{first.latency_ms.p50:.1f} ms, {first.files} files), above {report.p95_latency_warn_ms:g} ms"
                f"{warm_note}: storage, not the GPU, sets the pace; {PRECOMPUTE_FIX}",
                fix=change,
            )
        )
    if report.needed_mb_per_s is not None and first.mb_per_s < report.needed_mb_per_s:
        findings.append(
            Finding(
                id="storage-throughput-low",
                severity="warning",
                message=f"storage reads {first.mb_per_s:.1f} MB/s with one reader but training needs "
                f"{report.needed_mb_per_s:.1f} MB/s{warm_note}; parallel reads may close part of the gap, "
                f"else {PRECOMPUTE_FIX}",
                fix=change,
            )
        )
    if warm:
        findings.append(
            Finding(
                id="storage-figures-warm",
                severity="info",
                message=f"{first.cached_fraction_before:.0%} of the sampled bytes were in the page cache before "
                f"the first read: {first.mb_per_s:.0f} MB/s is RAM speed, not the disk's; a truly cold read "
                "needs the cache dropped (root only; xtts does not)",
            )
        )
    if report.unreadable:
        findings.append(
            Finding(
                id="storage-unreadable",
                severity="warning",
                message=f"{len(report.unreadable)} sampled file(s) could not be read, e.g. {report.unreadable[0]}; "
                "fix their permissions or remove them from the metadata",
            )
        )
    return findings
