"""The measuring scripts in benchmarks/ as a contributor runs them: what they lack refused in one line
with its fix, and a SIGTERM that stops one stops the processes it started. What they measure is
never asserted here."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from training_support import subprocess_env

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "xtts_cli" / "data" / "sample"


def script(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=subprocess_env(), timeout=300
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["synthesis_batch.py", "--run-dir", "run", "--sentences", "none.txt"],
            "error: --sentences none.txt is not there",
        ),
        pytest.param(  # its script imports TensorFlow first: seconds
            ["serve.py", "--run-dir", "run", "--data", "none"],
            "error: --data none holds no heldout.txt",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_a_prerequisite_a_script_lacks_is_one_line_naming_the_script_that_makes_it(tmp_path, args, says) -> None:
    # Each had ended in a FileNotFoundError's traceback.
    done = script(str(ROOT / "benchmarks" / args[0]), *args[1:], "--no-doc", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.splitlines()[-2].startswith(says) and "benchmarks/speech_data.py" in done.stderr


def test_a_part_a_script_does_not_have_is_refused_not_measured_as_nothing(tmp_path) -> None:
    done = script(str(ROOT / "benchmarks" / "watch.py"), "--part", "bogus", "--no-doc", cwd=tmp_path)
    assert done.returncode == 2 and "--part bogus: the parts are planted, competitor" in done.stderr


@pytest.mark.slow
def test_a_script_stopped_by_sigterm_stops_the_training_it_started(tmp_path) -> None:
    # `timeout` or a scheduler: the training it ran had been left running under init.
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    (data / "heldout.txt").write_text("The cat sat.\n", encoding="utf-8")
    run = tmp_path / "vocoder-run"
    command = [str(ROOT / "benchmarks" / "vocoder_quality.py"), "--data", str(data), "--config", "tiny-cpu"]
    started = subprocess.Popen(
        [sys.executable, *command, "--run-dir", str(run), "--no-doc"],
        cwd=tmp_path,
        env=subprocess_env(),
        stderr=subprocess.DEVNULL,
    )

    def training() -> list[str]:
        found = subprocess.run(["pgrep", "-f", f"xtts_cli train .*{run}"], capture_output=True, text=True)
        return found.stdout.split()

    deadline = time.monotonic() + 120
    while not training() and time.monotonic() < deadline and started.poll() is None:
        time.sleep(0.2)
    assert training(), "the script never started its training"
    started.send_signal(signal.SIGTERM)
    assert started.wait(60) == 143
    deadline = time.monotonic() + 30
    while training() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert training() == []


@pytest.mark.slow
def test_a_script_that_measures_in_workers_writes_no_page_with_no_doc(tmp_path) -> None:
    # Each worker process it started had written its JSON into the page as the latest run.
    shutil.copytree(ROOT / "benchmarks", tmp_path / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    page = tmp_path / "docs" / "data_at_scale.md"
    page.parent.mkdir()
    page.write_text("# Data at scale\n", encoding="utf-8")
    source = shutil.copytree(SAMPLE, tmp_path / "source")
    changed = {path: path.stat().st_ctime_ns for path in source.glob("wavs/*.wav")}
    command = ["benchmarks/data_scale.py", "--source", str(source), "--sizes", "40", "--scan-only"]
    done = script(*command, "--no-doc", "--out", str(tmp_path / "scale"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert page.read_text(encoding="utf-8") == "# Data at scale\n"
    # Its sets had hard-linked --source's clips: a link changes a clip's ctime, which keys its features
    # in a precompute store, so a training of the source meanwhile found its store stale.
    assert {path: path.stat().st_ctime_ns for path in changed} == changed
