"""A full disk is a full disk: training whose run directory lies on a real filesystem that fills up
(a 1 MiB tmpfs mounted in a private mount namespace, so nothing outside the test sees it) ends with
its own error, naming where, keeps the last good checkpoint and leaves no partial file behind. A
samples folder mounted read-only: the step trained before it is saved, the error names the file."""

from __future__ import annotations

import json
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


RUN = Path(__file__).resolve().parents[1] / "data" / "run_before_run_data"


def read_only(folder: Path, args: list[str]) -> subprocess.CompletedProcess:
    """`xtts ARGS` with `folder` read-only: a bind mount of it, remounted so, in a private namespace."""
    quoted = shlex.quote(str(folder))
    command = shlex.join([sys.executable, "-m", "xtts_cli", *args])
    return subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            f"mount --bind {quoted} {quoted} && mount -o remount,bind,ro {quoted} && {command}",
        ],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,
    )


def mount_point(tmp_path: Path, name: str) -> Path:
    """An empty folder for `private_tmpfs` to mount over."""
    (tmp_path / name).mkdir()
    return tmp_path / name


needs_mounts = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="mounting a tmpfs needs root and unshare"
)


@pytest.mark.slow
@needs_mounts
def test_a_checkpoint_that_fills_the_disk_is_a_full_disk_not_out_of_memory(tmp_path):
    mount = mount_point(tmp_path, "small")
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
def test_a_checkpoint_past_the_file_size_limit_is_one_line_naming_the_limit(tmp_path):
    import resource

    def limited() -> None:  # `ulimit -f 1000`: 1 MB, past which a write fails with EFBIG (Python ignores SIGXFSZ)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1_024_000, 1_024_000))

    config, run = tiny_config(tmp_path, "  save_step: 2\n"), tmp_path / "run"
    command = [sys.executable, "-m", "xtts_cli", "train", "-c", str(config), "-r", str(run), "--steps", "2"]
    done = subprocess.run(
        command, capture_output=True, text=True, env=subprocess_env(), timeout=300, preexec_fn=limited, cwd=tmp_path
    )
    # It had been a traceback, exit 1, and run.json's ended_by TensorFlow's OutOfRangeError.
    assert done.returncode == 6 and "Traceback" not in done.stderr, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith(("error: ", "hint: "))]
    assert errors == [
        "error: a file grew past the largest this system allows: writing checkpoint 2 into "
        f"{run / 'checkpoints'} failed (File too large)",
        "error: no checkpoint was complete yet: once the file can be that large, the same command starts the run over",
        "hint: raise the shell's file-size limit (ulimit -f unlimited), or point the run at a filesystem that holds "
        "large files (FAT32 holds 4 GiB at most)",
    ]
    assert not list((run / "checkpoints").iterdir())  # no partial checkpoint left
    ended = json.loads((run / "run.json").read_text(encoding="utf-8"))["history"][-1]["ended_by"]
    assert ended.startswith("error: a file grew past the largest this system allows")


@pytest.mark.slow
@needs_mounts
def test_a_feature_store_that_fills_the_disk_keeps_its_finished_shards(tmp_path):
    mount = mount_point(tmp_path, "small")
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
    done = read_only(run / "samples", ["train", "-c", str(config), "-r", str(run), "--steps", "5"])
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
    mount = mount_point(tmp_path, "volume")
    run = str(RUN)
    export = [sys.executable, "-m", "xtts_cli", "export", "-r", run, "-o", str(mount)]
    done = private_tmpfs(export, str(mount), "64m", str(tmp_path))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    files = [Path(line).relative_to(mount).parts[0] for line in done.stdout.split("--- files")[1].split()]
    assert {"saved_model.pb", "export.json", "vocab.json", "variables"} <= set(files), files
    assert not [name for name in files if "partial" in name]


@pytest.mark.slow
@needs_mounts
def test_an_export_that_fills_the_disk_leaves_nothing_and_the_same_command_runs_again(tmp_path):
    mount = mount_point(tmp_path, "small")
    run = str(RUN)
    export = shlex.join([sys.executable, "-m", "xtts_cli", "export", "-r", run, "-o", str(mount / "out")])
    done = private_tmpfs(["sh", "-c", f"{export}; echo exit $? >&2; {export}"], str(mount), "2m", str(tmp_path))
    assert done.returncode == 6, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith(("error: ", "exit "))]
    full = f"error: the disk is full: writing the export to {mount / 'out'} failed"  # --out, not a hidden folder
    assert [line.split(" (")[0] for line in errors] == [full, "exit 6", full]
    assert done.stdout.split("--- files")[1].split() == []  # no half SavedModel, nor its temporary files


@pytest.mark.slow  # processes in mount namespaces that import TensorFlow: the fast tier keeps the ones that do not
@needs_mounts
def test_a_full_temp_folder_is_a_full_disk_for_phonemes_and_nothing_for_letters(tmp_path):
    # phonemizer copies espeak-ng's library (650 kB) into the temp folder each time it loads it: a full
    # one had ended validate, train and diagnose in a traceback, letters too (their language's check).
    mount = mount_point(tmp_path, "tmp")

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


# Speaks lines into a folder on a disk with room for only part of them, in a process of its own inside
# the namespace that mounts it: the run loads once for both calls.
_SPEAK_INTO_A_FULL_DISK = """
import json, os, sys
from pathlib import Path
from xtts_cli.cli.synthesize import _speak_lines
from xtts_cli.inference import Synthesizer
from xtts_cli.speech.synthesis import wav_bytes

out = Path(sys.argv[2])
tts = Synthesizer.load(sys.argv[1])
voice = dict(speaker=None, speaker_wav=None, language=None, speed=1.0, max_frames=24)
short, long = "The cat sat.", "The cat sat. The dog ran. The bird sang."
_speak_lines(tts, [(1, short), (2, short), (3, short)], out, True, **voice)
size = len(wav_bytes(tts.speak(long, max_frames=24).waveform, tts.sample_rate))
free = os.statvfs(out).f_bavail * os.statvfs(out).f_frsize
with open(out.parent / "filler", "wb") as filler:  # room for one long clip and half a short one
    filler.write(bytes(max(0, free - size - os.path.getsize(out / "0001.wav") // 2)))
try:
    _speak_lines(tts, [(1, long), (2, long), (3, long)], out, True, **voice)
except OSError as exc:
    print("stopped:", exc.filename, exc.strerror)
import wave
for line in (out / "index.jsonl").read_text(encoding="utf-8").splitlines():
    record = json.loads(line)
    with wave.open(record["out"]) as clip:
        print("indexed:", json.dumps([Path(record["out"]).name, record["text"], record["seconds"], clip.getnframes() / clip.getframerate()]))
"""


@pytest.mark.slow
@needs_mounts
def test_lines_spoken_over_an_earlier_calls_clips_onto_a_full_disk_leave_an_index_true_to_the_clips(tmp_path):
    mount = mount_point(tmp_path, "small")
    run = str(RUN)
    script = tmp_path / "speak.py"
    script.write_text(_SPEAK_INTO_A_FULL_DISK, encoding="utf-8")
    done = private_tmpfs([sys.executable, str(script), run, str(mount / "clips")], str(mount), "4m", str(tmp_path))
    assert done.returncode == 0 and "stopped: " in done.stdout, done.stderr[-3000:]
    # Where the disk filled: the clip, by its path (a write names none: "writing a file failed").
    assert done.stdout.split("stopped: ")[1].startswith(f"{mount / 'clips'}/0002.wav No space left"), done.stdout
    files = done.stdout.split("--- files")[1].split()
    assert sorted(Path(name).name for name in files) == ["0001.wav", "0002.wav", "0003.wav", "filler", "index.jsonl"]
    # The index says what each clip holds: the first line of this call, and the earlier call's two it did
    # not reach (it had named all three as the earlier call's, the first written over).
    indexed = [json.loads(line.removeprefix("indexed: ")) for line in done.stdout.splitlines() if "indexed: " in line]
    assert [(name, text) for name, text, *_ in indexed] == [
        ("0001.wav", "The cat sat. The dog ran. The bird sang."),
        ("0002.wav", "The cat sat."),
        ("0003.wav", "The cat sat."),
    ]
    assert all(abs(said - held) < 0.01 for *_, said, held in indexed), indexed


# A config written over (its .bak kept) and a report written over (the earlier one kept), each onto a
# disk with no room for it, in a process of its own inside the namespace that mounts the disk.
_WRITE_OVER_ONTO_A_FULL_DISK = """
import os, random, sys
from pathlib import Path
from xtts_cli.config.editing import write_atomically
from xtts_cli.diagnosis.report import Section, write_report

disk = Path(sys.argv[1])
(disk / "c.yaml").write_text("data:\\n  batch_size: 8\\n" + "# a comment\\n" * 2000)
(disk / "c.yaml.bak").write_text("data:\\n  batch_size: 4\\n")
(disk / "report.tar.gz").write_bytes(b"the earlier report")
free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
with open(disk / "filler", "wb") as filler:  # 8 KiB left: less than the config, far less than the report
    filler.write(bytes(max(0, free - 8192)))
try:
    write_atomically(disk / "c.yaml", "data:\\n  batch_size: 16\\n" + "# a comment\\n" * 2000)
except OSError as exc:
    print("config:", exc.filename, exc.strerror)
noise = random.Random(0).randbytes(200_000).hex()  # a report gzip cannot shrink to fit
try:
    write_report([Section("diagnose.json", noise)], disk / "report.tar.gz", lambda text: text, disk / "report.tar.gz.bak")
except OSError as exc:
    print("report:", exc.filename, exc.strerror)
for name in sorted(os.listdir(disk)):
    print("file:", name, (disk / name).read_bytes()[:30] if name != "filler" else "")
"""


@needs_mounts
def test_a_config_or_report_written_over_on_a_full_disk_keeps_the_file_and_its_backup_whole(tmp_path):
    mount = mount_point(tmp_path, "small")
    script = tmp_path / "write.py"
    script.write_text(_WRITE_OVER_ONTO_A_FULL_DISK, encoding="utf-8")
    done = private_tmpfs([sys.executable, str(script), str(mount)], str(mount), "1m", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    said = done.stdout.split("--- files")[0].splitlines()
    # Each error names the file it could not write; both the files and the .bak are as they were.
    assert f"config: {mount / 'c.yaml.bak'} No space left on device" in said, said
    assert f"report: {mount / 'report.tar.gz'} No space left on device" in said, said
    assert [line for line in said if line.startswith("file: ")] == [
        "file: c.yaml b'data:\\n  batch_size: 8\\n# a comm'",
        "file: c.yaml.bak b'data:\\n  batch_size: 4\\n'",
        "file: filler ",
        "file: report.tar.gz b'the earlier report'",
    ]


# A server whose temporary folder is full, asked to clone an uploaded clip, then to speak in a voice of
# the run's own: in a process of its own inside the namespace that mounts the folder.
_SERVE_WITH_A_FULL_TEMP_FOLDER = """
import json, sys, tempfile, threading, urllib.error, urllib.request, uuid
from pathlib import Path
from xtts_cli.inference import Synthesizer
from xtts_cli.serving.http import make_server
from xtts_cli.serving.service import VoiceService

tempfile.tempdir = sys.argv[3]
with open(Path(sys.argv[3]) / "filler", "wb") as filler:
    try:
        while True:
            filler.write(bytes(65536))
            filler.flush()
    except OSError:
        pass
server = make_server(VoiceService(Synthesizer.load(sys.argv[1])), "127.0.0.1", 0)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_address[1]}/api/tts"
boundary = uuid.uuid4().hex
body = (
    f'--{boundary}\\r\\nContent-Disposition: form-data; name="text"\\r\\n\\r\\nHello.\\r\\n'
    f'--{boundary}\\r\\nContent-Disposition: form-data; name="speaker_wav"; filename="me.wav"\\r\\n\\r\\n'
).encode() + Path(sys.argv[2]).read_bytes() + f"\\r\\n--{boundary}--\\r\\n".encode()
headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
for request in (urllib.request.Request(url, body, headers), urllib.request.Request(url + "?text=Hello.")):
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            print("answer:", answer.status, answer.headers["Content-Type"])
    except urllib.error.HTTPError as error:
        print("answer:", error.code, json.loads(error.read())["error"])
"""


@pytest.mark.slow
@needs_mounts
def test_an_upload_to_a_server_whose_temp_folder_is_full_is_a_507_and_the_log_names_the_folder(tmp_path):
    mount = mount_point(tmp_path, "tmp")
    run, clip = RUN, RUN.parent / "speech" / "sentence-0.wav"
    script = tmp_path / "serve.py"
    script.write_text(_SERVE_WITH_A_FULL_TEMP_FOLDER, encoding="utf-8")
    done = private_tmpfs(
        [sys.executable, str(script), str(run), str(clip), str(mount)], str(mount), "1m", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answers = [line for line in done.stdout.splitlines() if line.startswith("answer: ")]
    # The client is told what failed, not "internal error (OSError)"; the server's own voice still speaks.
    assert answers == [
        "answer: 507 the server cannot keep the upload (No space left on device)",
        "answer: 200 audio/wav",
    ]
    assert f"an upload cannot be written to {mount} (No space left on device): free space there" in done.stderr


@pytest.mark.parametrize("command", [["--version"], pytest.param(["validate", "--json"], marks=pytest.mark.slow)])
def test_output_redirected_onto_a_full_disk_is_named_as_the_output(tmp_path, command):
    """`xtts ... > /dev/full` (a device whose every write is ENOSPC): the output is what failed, not
    the run's files; with --json the error object has nowhere to go and stderr says it alone."""
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "xtts_cli", *command],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=subprocess_env(),
            timeout=120,
        )
    assert done.returncode == 6, done.stderr
    assert done.stderr.splitlines() == [
        "error: the disk is full: writing the output (stdout) failed (No space left on device)",
        "hint: free space on the disk the output is redirected to, or redirect it to another",
    ]


@pytest.mark.slow  # processes that import TensorFlow
@needs_mounts
@pytest.mark.parametrize(
    ("command", "blamed"),
    [
        ("validate --json", "the output (stdout)"),
        # An error naming no file had been blamed on stdout whenever stdout's disk was full.
        ("train -c tiny-cpu --set training.max_steps=2 --set training.run_dir={mount}/run", "{mount}/run/.xtts-lock"),
    ],
)
def test_a_disk_full_under_the_output_blames_what_failed_to_be_written(tmp_path, command, blamed):
    mount = mount_point(tmp_path, "small")
    script = (
        f"head -c 1048576 /dev/zero > {mount}/filler 2>/dev/null; "
        f"{shlex.quote(sys.executable)} -m xtts_cli {command.format(mount=mount)} > {mount}/out.txt"
    )
    done = private_tmpfs(["sh", "-c", script], str(mount), "1m", str(tmp_path))
    assert done.returncode == 6, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: the disk is full: writing {blamed.format(mount=mount)} failed (No space left on device)"]


@pytest.mark.slow  # a process that imports TensorFlow
def test_an_error_stream_onto_a_full_disk_leaves_the_work_and_its_exit_code(tmp_path):
    # `2>/dev/full`: the first progress line had ended every command, exit 1, unsaid.
    def run(*args: str) -> subprocess.CompletedProcess:
        with open("/dev/full", "w") as full:
            return subprocess.run(
                [sys.executable, "-m", "xtts_cli", *args],
                stdout=subprocess.PIPE,
                stderr=full,
                text=True,
                cwd=tmp_path,
                env=subprocess_env(),
                timeout=120,
            )

    done = run("validate", "-c", "tiny-cpu", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["valid"] is True
    assert run("validate", "-c", "nonexistent.yaml").returncode == 2


@needs_mounts
def test_a_config_written_out_onto_a_full_disk_is_hinted_as_a_file_not_a_run(tmp_path):
    mount = mount_point(tmp_path, "small")
    fill = f"head -c 2m /dev/zero > {shlex.quote(str(mount / 'filler'))}; cd {shlex.quote(str(mount))}"
    command = f"{fill}; {shlex.quote(sys.executable)} -m xtts_cli init tiny-cpu -o my.yaml"
    done = private_tmpfs(["sh", "-c", command], str(mount), "256k", str(tmp_path))
    assert done.returncode == 6, done.stderr[-3000:]
    # Nothing there is a run or a store: the hint for a training run had been given.
    assert "error: the disk is full: writing my.yaml failed (No space left on device)" in done.stderr
    assert "hint: free space on that disk (or raise its quota), or write to another disk" in done.stderr
    assert "point the run" not in done.stderr
    assert done.stdout.split("--- files")[1].split() == [str(mount / "filler")]  # no my.yaml half-written


@pytest.mark.slow  # a process that scans
@needs_mounts
def test_validate_fix_on_a_read_only_folder_names_the_config_not_a_temporary_file(tmp_path):
    # It had named ro/.old.yaml.bak.tmp: its clean-up's unlink failed on the read-only folder too.
    folder = tmp_path / "ro"
    folder.mkdir()
    config = folder / "old.yaml"
    text = "training:\n  max_steps: 50\n  val_step: 1000\n  early_stop_patience: 3\n"
    config.write_text(text, encoding="utf-8")
    done = read_only(folder, ["validate", "-c", str(config), "--fix"])
    assert done.returncode == 1, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith(("error: ", "hint: "))]
    assert errors == [
        f"error: --fix cannot write {config} (Read-only file system): it and its backup go in {folder}",
        f"hint: fix a copy where you can write (cp {config} my.yaml; xtts validate -c my.yaml --fix), or drop --fix "
        "to see the fixes",
    ], done.stderr
    assert config.read_text(encoding="utf-8") == text and sorted(p.name for p in folder.iterdir()) == ["old.yaml"]
