"""What a user sees when something goes wrong, and what a run prints: TensorFlow's out-of-memory
error becomes one line, its hint and exit code 5; `--json` prints a JSON object on errors too; the
debug hint only where a traceback was hidden. Each through a real `xtts` process (a run's quiet
TensorFlow logging: tests/test_training_processes.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf
from training_support import tiny_config, user_env

from xtts_cli.errors import DeviceError, OutOfMemoryError, XttsError, from_tensorflow


def _xtts(args: list[str], cwd: Path, env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xtts_cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_a_place_tensorflow_may_not_write_is_one_line_naming_it() -> None:
    # A checkpoint folder made immutable (chattr +i) had ended a run in a PermissionDeniedError traceback.
    try:
        tf.io.write_file("/sys/kernel/xtts-ckpt", "x")  # sysfs refuses a new file even to root
        raise AssertionError("the write succeeded")
    except tf.errors.PermissionDeniedError as error:
        translated = from_tensorflow(error)
    assert translated is not None and translated.exit_code == 1 and translated.translated
    assert translated.lines == ["cannot write /sys/kernel/xtts-ckpt; Permission denied"]
    assert (translated.hint or "").startswith("make that place writable")


@pytest.mark.skipif(not Path("/sys/bus/pci/rescan").exists(), reason="needs sysfs's write-only /sys/bus/pci/rescan")
def test_a_file_the_input_pipeline_may_not_read_is_not_called_a_write() -> None:
    # A clip made unreadable after its scan was memoised had been "cannot write <clip>", with a hint to
    # make its folder writable. A write-only sysfs file refuses reading even to root.
    dataset = tf.data.Dataset.from_tensor_slices(["/sys/bus/pci/rescan"]).map(tf.io.read_file)
    try:
        list(dataset)
        raise AssertionError("the read succeeded")
    except tf.errors.PermissionDeniedError as error:
        translated = from_tensorflow(error)
    assert translated is not None and translated.lines == ["cannot read /sys/bus/pci/rescan; Permission denied"]
    assert (translated.hint or "").startswith("make it readable (chmod a+r), or remove it from the dataset")


def test_a_symbolic_link_loop_is_one_line_naming_it(tmp_path: Path) -> None:
    # A folder given as a link that leads back to itself had ended validate, train and synthesize in a
    # traceback (Path.resolve's RuntimeError, or OSError ELOOP).
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    for args in (["validate", "-c", "tiny-cpu", "--data", str(tmp_path / "a")], ["train", "-r", str(tmp_path / "a")]):
        done = _xtts(args, tmp_path, user_env())
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert f"error: {tmp_path / 'a'} is a symbolic link that leads back to itself (a loop of links)" in done.stderr
        assert "XTTS_DEBUG" not in done.stderr and "building" not in done.stderr  # before the scan and the model
    # A path through the loop names the link, which `ls -ld` shows (of the whole path it said "Too many levels").
    from xtts_cli.errors import _symlink_loop

    error = _symlink_loop(OSError(40, "Too many levels of symbolic links", str(tmp_path / "a" / "run")))
    assert error is not None and error.lines[0].endswith(f": {tmp_path / 'a'} is the link")
    assert error.hint.startswith(f"point it at a real file or folder (ls -ld {tmp_path / 'a'} shows where it leads)")


def test_a_path_a_hint_prints_reads_back_in_a_shell() -> None:
    from xtts_cli.errors import quoted

    assert quoted("runs/my run/tensorboard") == "'runs/my run/tensorboard'"
    assert quoted("-x/tensorboard") == "./-x/tensorboard"  # tensorboard --logdir -x/... read it as an option
    assert quoted("/abs/-x") == "/abs/-x" and quoted("it's `y`; z") == "'it'\"'\"'s `y`; z'"


def test_a_path_not_in_utf8_or_too_long_is_one_line_and_nothing_is_made(tmp_path: Path) -> None:
    # Both had been tracebacks; a run directory named in Latin-1 was left half-made (its lock alone).
    named = subprocess.run(
        [sys.executable, "-m", "xtts_cli", "train", "-c", "tiny-cpu", "-r", b"runs/caf\xe9", "--json"],
        cwd=tmp_path,
        env=user_env(),
        capture_output=True,
        timeout=120,
    )
    assert named.returncode == 1 and not (tmp_path / "runs").exists()
    said = json.loads(named.stdout)
    assert (
        said["error"]
        == "runs/caf\\xe9 is not UTF-8 (its bytes shown as \\xNN): xtts records the paths it is given in UTF-8"
    )
    assert said["hint"].startswith("rename it in UTF-8 (convmv -f latin1 -t utf8 --notest PATH")
    long = "x" * 300 + ".yaml"
    done = _xtts(["init", "-p", "tiny-cpu", "-o", long], tmp_path, user_env())
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert f"error: {long}: a name in it is too long for its file system (ENAMETOOLONG)" in done.stderr
    deep = f"runs/{'n' * 300}"  # said before runs/ is made, and before the scan and the model
    done = _xtts(["train", "-c", "tiny-cpu", "-n", "2", "-r", deep], tmp_path, user_env())
    assert done.returncode == 1 and f"error: {deep}: a name in it is too long" in done.stderr, done.stderr[-2000:]
    assert not (tmp_path / "runs").exists() and "building" not in done.stderr


@pytest.mark.slow
def test_tensorflow_out_of_memory_is_translated_to_one_line() -> None:
    size = tf.Variable(2**48, dtype=tf.int64)  # 1 PiB of float32: more than any address space holds

    @tf.function
    def allocate():
        return tf.reduce_sum(tf.zeros(tf.reshape(size, [1]), tf.float32))

    try:
        allocate()
        raise AssertionError("the allocation succeeded")
    except tf.errors.ResourceExhaustedError as error:
        assert str(error).splitlines()[0] == "Graph execution error:"  # TensorFlow's framing comes first
        translated = from_tensorflow(error)
    assert isinstance(translated, OutOfMemoryError) and translated.exit_code == 5
    # The allocator's name depends on the CPU's build path: `cpu`, or `mklcpu` where oneDNN's is used.
    assert len(translated.lines) == 1 and re.fullmatch(
        r"out of memory: OOM when allocating tensor with shape\[281474976710656\] and type float on "
        r"/job:localhost/replica:0/task:0/device:CPU:0 by allocator (cpu|mklcpu)",
        translated.lines[0],
    ), translated.lines
    assert "data.batch_size" in (translated.hint or "") and "xtts benchmark" in (translated.hint or "")
    assert translated.translated

    assert from_tensorflow(ValueError("not TensorFlow's")) is None
    assert from_tensorflow(tf.errors.CancelledError(None, None, "cancelled")) is None
    # A shape error inside an XLA-compiled step is not an XLA refusal: it keeps its traceback.
    assert from_tensorflow(tf.errors.InvalidArgumentError(None, None, "Incompatible shapes in cluster_xla_0")) is None
    assert isinstance(
        from_tensorflow(tf.errors.InvalidArgumentError(None, None, "Could not satisfy explicit device specification")),
        DeviceError,
    )


@pytest.mark.slow
def test_out_of_memory_in_training_is_one_line_with_its_exit_code(tmp_path: Path) -> None:
    # The centroids of the sample's four speakers, 4 x 2**44 float32 weights (256 TiB), cannot be
    # allocated when the model is built.
    config = tiny_config(tmp_path)
    config.write_text(
        config.read_text().replace("  speaker_embedding_dim: 16\n", "  speaker_embedding_dim: 17592186044416\n")
    )
    result = _xtts(["train", "-c", str(config), "--run-dir", str(tmp_path / "run"), "--json"], tmp_path, user_env())
    assert result.returncode == OutOfMemoryError.exit_code == 5, result.stderr[-3000:]
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: out of memory: OOM when allocating tensor with shape[4,17592186044416]")
    assert lines[1].startswith("hint: lower data.batch_size")
    assert lines[2] == "(set XTTS_DEBUG=1 for the full traceback)"  # a traceback was hidden: say how to see it
    assert len(lines) == 3, lines  # and nothing else: no traceback, no TensorFlow or Keras chatter
    payload = json.loads(result.stdout[result.stdout.rindex('{\n  "error"') :])
    assert payload["exit_code"] == 5 and payload["error"] == lines[0][len("error: ") :]
    assert payload["hint"] == lines[1][len("hint: ") :]


def test_json_error_object_and_no_debug_hint_for_an_error_a_user_can_fix(tmp_path: Path) -> None:
    result = _xtts(
        ["synthesize", "hello", "--checkpoint", str(tmp_path / "no-such-run"), "--out", "x.wav", "--json"],
        tmp_path,
        user_env(),
    )
    assert result.returncode == XttsError.exit_code, result.stderr
    payload = json.loads(result.stdout)
    assert set(payload) == {"error", "hint", "exit_code"}
    assert payload["exit_code"] == 1 and "no-such-run" in payload["error"]
    assert "XTTS_DEBUG" not in result.stderr  # nothing was hidden: the message is the whole story
    assert result.stderr.startswith("error: ")


@pytest.mark.slow
@pytest.mark.parametrize(("sent", "said", "code"), [("SIGINT", "Ctrl-C", 130), ("SIGTERM", "SIGTERM", 143)])
def test_a_signal_outside_the_training_loop_says_so_and_exits_with_its_code(
    tmp_path: Path, sent: str, said: str, code: int
) -> None:
    """SIGTERM (a scheduler, `docker stop`) had killed the command without a word, stdout empty."""
    import os
    import signal
    import time

    from training_support import subprocess_env

    # `synthesize --text-file` opening a FIFO no one writes blocks there, before TensorFlow loads: a
    # Ctrl-C then reaches typer, which exits 130 without a word unless xtts says why. SIGINT as a
    # terminal gives it (a process started in the background inherits it ignored).
    fifo = tmp_path / "lines"
    os.mkfifo(fifo)
    run = Path(__file__).parent / "data" / "run_before_run_data"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "xtts_cli",
            "synthesize",
            "--text-file",
            str(fifo),
            "--out-dir",
            "clips",
            "-r",
            str(run),
            "--json",
        ],
        cwd=tmp_path,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and Path(f"/proc/{proc.pid}/wchan").read_text() != "wait_for_partner":
        time.sleep(0.1)  # until it waits on the FIFO (Linux's name for that wait)
    proc.send_signal(getattr(signal, sent))
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == code, stderr
    assert stderr.rstrip().endswith(f"interrupted ({said})") and "Traceback" not in stderr
    # --json's reader gets its object too, not an empty stdout.
    assert json.loads(stdout) == {"error": f"interrupted ({said})", "hint": None, "exit_code": code}


def test_a_command_line_that_does_not_parse_is_one_error_line_and_a_hint_and_a_json_object(tmp_path: Path) -> None:
    # Typer's boxed message went to stderr alone: a script reading --json's stdout got nothing.
    from training_support import subprocess_env

    options = "--help lists its options and what each takes"
    for arguments, said, hint in (
        (
            ["profile-pipeline", "--json", "-c", "tiny-cpu", "--batches", "0"],
            "Invalid value for '--batches' / '-n': 0 is not",
            f"profile-pipeline {options}",
        ),
        (["train", "--json", "--no-such-flag"], "No such option: --no-such-flag", f"train {options}"),
        # At the line's end: its hint had named xtts alone.
        (["export", "--json", "-r"], "Option '-r' requires an argument", f" export {options}"),
        # And of a group's command: the hint had named the group.
        (
            ["data-service", "worker", "--dispatcher"],  # which takes no --json
            "Option '--dispatcher' requires an argument",
            f" data-service worker {options}",
        ),
        (
            ["trian", "--json"],
            "No such command 'trian'. Did you mean 'train'?",
            "xtts_cli --help lists the commands and options",
        ),
        (["data-service", "worker", "--bogus", "--json"], "No such option: --bogus", f"data-service worker {options}"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "xtts_cli", *arguments],
            cwd=tmp_path,
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        lines = [line.split(": ", 1)[1] for line in done.stderr.splitlines()]
        payload = json.loads(done.stdout) if "--json" in arguments else {"error": lines[0], "hint": lines[1]}
        assert payload.get("exit_code", 2) == 2 and payload["error"].startswith(said), payload
        # With the hint the box leaves out, naming the help that lists what the command takes.
        assert payload["hint"].endswith(hint), payload
        # On stderr as every other error is, `error:` then `hint:`; typer had drawn it in a box.
        assert done.stderr == f"error: {payload['error']}\nhint: {payload['hint']}\n", done.stderr


@pytest.mark.slow
def test_a_process_memory_limit_is_out_of_memory_in_one_line_wherever_it_is_met(tmp_path) -> None:
    # ulimit -v (a container's limit): met mapping TensorFlow's library, or as Python's MemoryError while
    # the model is built; each had been a traceback. TensorFlow's C++ may abort on its own (134), and
    # the loader with 127 when a thread's storage cannot be mapped (glibc's line goes where TensorFlow's
    # import logs go): no line from xtts.
    import resource

    run = Path(__file__).parent / "data" / "run_before_run_data"
    codes = []
    for limit in (800_000_000, 1_300_000_000):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "xtts_cli",
                "synthesize",
                "Hello there.",
                "-r",
                str(run),
                "-o",
                str(tmp_path / "a.wav"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            preexec_fn=lambda limit=limit: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)),
        )
        codes.append(done.returncode)
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        if done.returncode == 5:
            assert done.stderr.startswith("error: out of memory: ") and "ulimit -v" in done.stderr, done.stderr
    assert 5 in codes and set(codes) <= {5, -6, 127, 134}, codes


def test_protobufs_parse_failure_under_a_memory_limit_is_out_of_memory_and_without_one_is_not() -> None:
    # Importing TensorFlow under ulimit -v, protobuf's descriptor pool may refuse an allocation as
    # "Couldn't parse file content!" (met on an AVX2 CPU): a traceback; without a limit it is no memory's.
    import resource

    code = (
        "from xtts_cli.errors import _process_memory\n"
        'error = _process_memory(TypeError("Couldn\'t parse file content!"))\n'
        "print(error.lines[0] if error else None)\n"
    )
    from training_support import run_python

    limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (64 << 30, 64 << 30))  # noqa: E731
    limited = run_python(code, Path.cwd(), timeout=60, preexec_fn=limit)
    assert limited.stdout.strip() == "out of memory: Couldn't parse file content!", limited.stderr
    free = run_python(code, Path.cwd(), timeout=60)
    assert free.stdout.strip() == "None", free.stderr
