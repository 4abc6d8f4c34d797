"""`check_storage` on real files: WAVs written to tmp_path and the bundled sample.

Timings are never asserted (our machines are noisy); what is asserted is what was read, how it is
sampled, and the logic that turns the measured figures into findings (thresholds are arguments, so
a real measurement can be put on either side of one). Page-cache residency is checked by evicting
the test's own files with posix_fadvise(DONTNEED), which any owner may do; check_storage never
evicts anything.
"""

from __future__ import annotations

import os
import wave
from pathlib import Path

import numpy as np
import pytest

from xtts_cli.diagnosis.storage import (
    AUDIO_SUFFIXES,
    P95_LATENCY_WARN_MS,
    cached_fraction,
    check_storage,
    filesystem_info,
    parse_mountinfo,
)

SAMPLE_WAVS = Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample" / "wavs"


def write_wavs(folder: Path, count: int, seconds: float = 0.5, rate: int = 22050) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    paths = []
    for i in range(count):
        path = folder / f"clip_{i:03d}.wav"
        frames = int(rate * seconds * (1 + i % 4))  # four sizes
        with wave.open(str(path), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(rate)
            out.writeframes((rng.standard_normal(frames) * 3000).astype("<i2").tobytes())
        paths.append(path)
    return paths


def ids(report) -> dict[str, str]:
    return {finding.id: finding.severity for finding in report.findings}


def test_reads_every_byte_of_a_small_dataset(tmp_path: Path) -> None:
    paths = write_wavs(tmp_path / "wavs", 12)
    (tmp_path / "wavs" / "metadata.csv").write_text("clip_000|text\n")  # not audio: not read
    report = check_storage([tmp_path / "wavs"])
    sizes = [p.stat().st_size for p in paths]
    assert report.files_found == report.files_sampled == 12
    first, second = report.first_pass, report.second_pass
    assert first is not None and second is not None
    assert first.files == second.files == 12
    assert first.bytes == second.bytes == sum(sizes)
    assert report.mean_file_bytes == pytest.approx(sum(sizes) / 12)
    assert first.latency_ms.count == first.first_byte_ms.count == 12
    assert first.mb_per_s > 0 and first.latency_ms.p95 >= first.latency_ms.p50 > 0
    assert first.mb_per_s == pytest.approx(first.bytes / 1e6 / first.seconds)
    assert not report.budget_exhausted and report.unreadable == []
    assert "drop_caches" in report.cache_note


def test_with_the_scans_clips_only_they_are_counted_and_read(tmp_path: Path) -> None:
    # Every audio file under the folder had been counted and read, the ones the scan skipped too.
    paths = write_wavs(tmp_path / "wavs", 12)
    trained = [str(path) for path in paths[:5]]
    report = check_storage([tmp_path / "wavs"], clips=trained)
    assert report.files_found == report.files_sampled == 5 and report.paths == [str(tmp_path / "wavs")]
    assert report.first_pass is not None and report.first_pass.bytes == sum(p.stat().st_size for p in paths[:5])


def test_sample_is_deterministic_and_spread(tmp_path: Path) -> None:
    for folder in ("a", "b", "c"):
        write_wavs(tmp_path / "data" / folder, 20, seconds=0.05)
    first = check_storage([tmp_path / "data"], max_files=9, second_pass=False)
    again = check_storage([tmp_path / "data"], max_files=9, second_pass=False)
    assert first.files_found == 60 and first.files_sampled == 9
    assert first.first_pass is not None and first.first_pass.files == 9
    assert first.first_pass.bytes == again.first_pass.bytes
    assert first.mean_file_bytes == again.mean_file_bytes
    assert first.second_pass is None


def test_bundled_sample(tmp_path: Path) -> None:
    wavs = sorted(SAMPLE_WAVS.glob("*.wav"))
    report = check_storage([SAMPLE_WAVS])
    assert report.files_found == len(wavs) == 40
    assert report.first_pass is not None
    assert report.first_pass.bytes == sum(p.stat().st_size for p in wavs)
    fs = report.filesystems[0]
    assert fs.fs_type != "unknown" and fs.mount_point is not None


def test_page_cache_residency_is_measured_not_assumed(tmp_path: Path) -> None:
    paths = write_wavs(tmp_path / "wavs", 8)
    for path in paths:
        # Written pages are dirty; they can be dropped only after they reach the disk.
        fd = os.open(path, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    before = [cached_fraction(p) for p in paths]
    if any(f is None for f in before) or max(before) > 0.5:
        pytest.skip(f"this filesystem keeps the files in memory (cached fractions {before})")
    report = check_storage([tmp_path / "wavs"])
    first, second = report.first_pass, report.second_pass
    assert first is not None and second is not None
    assert first.cached_fraction_before is not None and first.cached_fraction_before < 0.5
    assert second.cached_fraction_before == pytest.approx(1.0)  # the first pass brought them in
    assert "storage-figures-warm" not in ids(report)
    # Just read: warm, and said so.
    warm = check_storage([tmp_path / "wavs"])
    assert warm.first_pass is not None and warm.first_pass.cached_fraction_before == pytest.approx(1.0)
    assert ids(warm)["storage-figures-warm"] == "info"


def test_latency_threshold_gives_a_warning_with_the_fix(tmp_path: Path) -> None:
    write_wavs(tmp_path / "wavs", 6)
    quiet = check_storage([tmp_path / "wavs"], p95_latency_warn_ms=1e6)
    assert "storage-latency-high" not in ids(quiet)
    # Any real read takes longer than 0 ms: the same measurement on the other side of the line.
    report = check_storage([tmp_path / "wavs"], p95_latency_warn_ms=0.0)
    finding = next(f for f in report.findings if f.id == "storage-latency-high")
    assert finding.severity == "warning"
    assert "data.preprocessing_mode: precompute" in finding.message and "local SSD" in finding.message
    assert finding.fix is not None and finding.fix.describe() == "set data.preprocessing_mode: precompute"
    assert P95_LATENCY_WARN_MS == 20.0


def test_throughput_below_what_training_needs(tmp_path: Path) -> None:
    write_wavs(tmp_path / "wavs", 6)
    enough = check_storage([tmp_path / "wavs"], needed_mb_per_s=0.001)
    assert "storage-throughput-low" not in ids(enough)
    short = check_storage([tmp_path / "wavs"], needed_mb_per_s=1e9)
    assert ids(short)["storage-throughput-low"] == "warning"
    # samples/s x mean file size.
    derived = check_storage([tmp_path / "wavs"], samples_per_second=500)
    assert derived.needed_mb_per_s == pytest.approx(500 * derived.mean_file_bytes / 1e6)


def test_files_read_once_per_run_raise_no_pace_warning(tmp_path: Path) -> None:
    # Cache and precompute read the audio once: the same slow figures set no pace for training.
    write_wavs(tmp_path / "wavs", 6)
    once = check_storage([tmp_path / "wavs"], p95_latency_warn_ms=0.0, needed_mb_per_s=1e9, read_every_epoch=False)
    assert once.first_pass is not None and once.first_pass.files > 0 and once.needed_mb_per_s is None
    assert not {"storage-latency-high", "storage-throughput-low"} & set(ids(once))
    every = check_storage([tmp_path / "wavs"], p95_latency_warn_ms=0.0, needed_mb_per_s=1e9)
    assert {"storage-latency-high", "storage-throughput-low"} <= set(ids(every))


def test_budget_stops_the_reads_but_reads_at_least_one(tmp_path: Path) -> None:
    write_wavs(tmp_path / "wavs", 30, seconds=0.05)
    report = check_storage([tmp_path / "wavs"], budget_seconds=0.0)
    assert report.first_pass is not None and report.first_pass.files == 1
    assert report.budget_exhausted


def test_missing_empty_and_unreadable(tmp_path: Path) -> None:
    missing = check_storage([tmp_path / "nowhere"])
    assert ids(missing) == {"storage-path-missing": "error"} and missing.first_pass is None
    (tmp_path / "empty").mkdir()
    empty = check_storage([tmp_path / "empty"])
    assert ids(empty) == {"no-audio-files": "warning"}
    for suffix in sorted(AUDIO_SUFFIXES):
        assert suffix in empty.findings[0].message

    # A dangling link fails to open for every user, root included (file modes do not stop root).
    write_wavs(tmp_path / "wavs", 2)
    dangling = tmp_path / "wavs" / "clip_gone.wav"
    dangling.symlink_to(tmp_path / "deleted.wav")
    report = check_storage([tmp_path / "wavs"])
    assert report.files_found == 3
    assert report.first_pass is not None and report.first_pass.files == 2
    assert ids(report)["storage-unreadable"] == "warning"
    assert report.unreadable == [f"{dangling}: No such file or directory"]


def test_mountinfo_parsing_network_and_escaped_paths() -> None:
    text = (
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        "90 27 0:50 / /mnt/my\\040data rw,relatime shared:7 - nfs4 server:/export rw,vers=4.2\n"
        "91 27 0:51 / /scratch rw - tmpfs tmpfs rw\n"
    )
    assert parse_mountinfo(text)[1] == ("0:50", "/mnt/my data", "nfs4", "server:/export")
    nfs = filesystem_info(Path("/mnt/my data/wavs"), mountinfo=text)
    assert (nfs.mount_point, nfs.fs_type, nfs.network, nfs.medium) == ("/mnt/my data", "nfs4", True, "network")
    assert filesystem_info(Path("/scratch/x"), mountinfo=text).medium == "memory"
    assert filesystem_info(Path("/home/x"), mountinfo=text).fs_type == "ext4"


def test_this_machines_filesystem(tmp_path: Path) -> None:
    # What Linux says about tmp_path, read independently of the code under test.
    info = filesystem_info(tmp_path)
    if not Path("/proc/self/mountinfo").exists():
        assert info.fs_type == "unknown"
        return
    assert info.fs_type != "unknown"
    dev = tmp_path.stat().st_dev
    flag = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/queue/rotational")
    if flag.exists():
        assert info.rotational == (flag.read_text().strip() == "1")
    if info.medium in ("hdd", "ssd"):
        assert info.rotational == (info.medium == "hdd")
