"""A full disk is a full disk: training whose run directory lies on a real filesystem that fills up
(a 1 MiB tmpfs mounted in a private mount namespace, so nothing outside the test sees it) ends with
its own error, naming where, keeps the last good checkpoint and leaves no partial file behind. A
samples folder mounted read-only: the step trained before it is saved, the error names the file."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from training_support import run_xtts, subprocess_env, tiny_config


def private_tmpfs(command: list[str], mount: str, size: str, cwd: str, inodes: int = 0) -> subprocess.CompletedProcess:
    """Run `command` with a tmpfs of `size` (and at most `inodes` files) at `mount`, in a mount
    namespace of its own; then list it."""
    options = f"size={size}" + (f",nr_inodes={inodes}" if inodes else "")
    script = (
        f"mount -t tmpfs -o {options} tmpfs {shlex.quote(mount)} && cd {shlex.quote(cwd)} && "
        f"{shlex.join(command)}; code=$?; echo '--- files'; find {shlex.quote(mount)} -type f | sort; exit $code"
    )
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, env=subprocess_env(), timeout=300
    )


needs_mounts = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="mounting a tmpfs needs root and unshare"
)


@pytest.mark.slow
@needs_mounts
def test_a_checkpoint_that_fills_the_disk_is_a_full_disk_not_out_of_memory(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    config = tiny_config(tmp_path, "  save_step: 2\n")
    done = private_tmpfs(
        [sys.executable, "-m", "xtts_cli", "train", "-c", str(config), "-r", str(mount / "run"), "--steps", "4"],
        str(mount),
        "1m",
        str(tmp_path),
    )
    assert done.returncode == 6, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith(("error: ", "hint: "))]
    assert errors[0].startswith(f"error: the disk is full: writing checkpoint 2 into {mount / 'run' / 'checkpoints'}")
    assert "out of memory" not in done.stderr and "batch_size" not in done.stderr
    assert any("no checkpoint was complete yet" in line for line in errors)
    assert errors[-1].startswith("hint: free space on that disk")
    files = done.stdout.split("--- files")[1].split()
    assert not [name for name in files if "ckpt-2" in name or "_temp" in name or name.endswith(".tmp")], files
    assert any(name.endswith("run/config.yaml") for name in files)  # the run itself is kept


@pytest.mark.slow
@needs_mounts
def test_a_feature_store_that_fills_the_disk_keeps_its_finished_shards(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    extra = "  save_step: 2\n"
    config = tiny_config(tmp_path, extra)
    text = config.read_text().replace("  preprocessing_mode: cache\n", "  preprocessing_mode: precompute\n")
    config.write_text(text.replace("data:\n", f"data:\n  feature_cache_dir: {mount / 'store'}\n", 1))
    command = [
        sys.executable,
        "-m",
        "xtts_cli",
        "train",
        "-c",
        str(config),
        "-r",
        str(tmp_path / "run"),
        "--steps",
        "2",
    ]
    # Room enough by the store's own estimate, checked before the pass; but files run out after the
    # first shard (a disk out of inodes reports ENOSPC too): the pass itself meets the full disk.
    done = private_tmpfs(command, str(mount), "8m", str(tmp_path), inodes=5)
    assert done.returncode == 6, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert errors[0].startswith(f"error: the disk is full: writing the feature store under '{mount / 'store'}")
    assert "remove or re-encode" not in done.stderr and "Traceback" not in done.stderr
    assert errors[1].endswith("were written and are kept; the next start computes the rest")
    files = done.stdout.split("--- files")[1].split()
    assert not [name for name in files if ".tmp" in name], files


@pytest.mark.slow
@needs_mounts
def test_a_step_trained_before_its_samples_fail_to_write_is_saved(tmp_path):
    # The samples folder read-only (a bind mount in a private namespace): the steps since the last
    # checkpoint are saved before the error, which is one line naming the file.
    config, run = tiny_config(tmp_path, "  sample_step: 3\n"), tmp_path / "run"
    first = run_xtts(["train", "-c", str(config), "-r", str(run), "--steps", "1"], tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    (run / "samples").mkdir(exist_ok=True)
    samples = shlex.quote(str(run / "samples"))
    train = shlex.join([sys.executable, "-m", "xtts_cli", "train", "-c", str(config), "-r", str(run), "--steps", "5"])
    done = subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            f"mount --bind {samples} {samples} && mount -o remount,bind,ro {samples} && {train}",
        ],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,
    )
    assert done.returncode == 1, done.stderr[-3000:]
    lines = done.stderr.splitlines()
    assert f"note: step 3 trained before the error below: saved it ({run / 'checkpoints' / 'ckpt-3'})" in lines[-4]
    assert lines[-3].startswith(f"error: cannot write {run / 'samples'}/") and "Read-only file system" in lines[-3]
    assert "Traceback" not in done.stderr
    assert 'model_checkpoint_path: "ckpt-3"' in (run / "checkpoints" / "checkpoint").read_text(encoding="utf-8")


@pytest.mark.slow
@needs_mounts
def test_an_export_into_an_empty_mount_point_fills_it(tmp_path):
    # A volume mounted for the export (docker run -v): renaming a folder over it is EBUSY.
    mount = tmp_path / "volume"
    mount.mkdir()
    run = os.path.join(os.path.dirname(__file__), "..", "data", "run_before_run_data")
    export = [sys.executable, "-m", "xtts_cli", "export", "-r", run, "-o", str(mount)]
    done = private_tmpfs(export, str(mount), "64m", str(tmp_path))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    files = [Path(line).relative_to(mount).parts[0] for line in done.stdout.split("--- files")[1].split()]
    assert {"saved_model.pb", "export.json", "vocab.json", "variables"} <= set(files), files
    assert not [name for name in files if "partial" in name]


@pytest.mark.slow
@needs_mounts
def test_an_export_that_fills_the_disk_leaves_nothing_and_the_same_command_runs_again(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    run = os.path.join(os.path.dirname(__file__), "..", "data", "run_before_run_data")
    export = shlex.join([sys.executable, "-m", "xtts_cli", "export", "-r", run, "-o", str(mount / "out")])
    done = private_tmpfs(["sh", "-c", f"{export}; echo exit $? >&2; {export}"], str(mount), "2m", str(tmp_path))
    assert done.returncode == 6, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith(("error: ", "exit "))]
    assert [line.split(" (")[0] for line in errors] == ["error: the disk is full", "exit 6", "error: the disk is full"]
    assert done.stdout.split("--- files")[1].split() == []  # no half SavedModel, nor its temporary files


@needs_mounts
def test_a_full_temp_folder_is_a_full_disk_for_phonemes_and_nothing_for_letters(tmp_path):
    # phonemizer copies espeak-ng's library (650 kB) into the temp folder each time it loads it: a full
    # one had ended validate, train and diagnose in a traceback, letters too (their language's check).
    mount = tmp_path / "tmp"
    mount.mkdir()

    def validate(*extra: str) -> subprocess.CompletedProcess:
        command = ["env", f"TMPDIR={mount}", f"XDG_CACHE_HOME={tmp_path / 'cache'}", sys.executable, "-m", "xtts_cli"]
        return private_tmpfs([*command, "validate", "-c", "tiny-cpu", *extra], str(mount), "512k", str(tmp_path))

    letters = validate()
    assert letters.returncode == 0, letters.stderr[-3000:]
    phonemes = validate("--set", "data.text_frontend=phonemes")
    assert phonemes.returncode == 6, phonemes.stderr[-3000:]
    assert [line for line in phonemes.stderr.splitlines() if line.startswith(("error: ", "hint: "))] == [
        f"error: espeak-ng's library could not be copied into the temp folder {mount} (No space left on device): "
        "phonemizer loads it from a copy there",
        f"hint: free space in {mount}, or set TMPDIR to a folder with room",
    ]
    assert "Traceback" not in phonemes.stderr
