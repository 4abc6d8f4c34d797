"""`xtts --help` and every `xtts CMD --help` answer without importing TensorFlow (checked in a
fresh subprocess, where sys.modules is honest). Their speed is measured in
benchmarks/cli_startup.py, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

COMMANDS = [
    "init",
    "train",
    "validate",
    "diagnose",
    "profile-pipeline",
    "profile-step",
    "benchmark",
    "synthesize",
    "export",
]

PROBE = """
import json, sys
sys.argv = ["xtts"] + json.loads(sys.argv[1])
from xtts_cli.cli.app import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"tensorflow", "tensorflow_io", "keras", "numpy"})
sys.stderr.write(json.dumps({"code": code, "heavy": heavy}) + "\\n")
"""


def _run(args: list[str]) -> tuple[str, dict]:
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True, timeout=60)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    return proc.stdout, report


def test_root_help_lists_every_command_without_tensorflow() -> None:
    out, report = _run(["--help"])
    assert report == {"code": 0, "heavy": []}
    assert "<bool>" not in out  # flags are shown as flags, not as options taking a value
    for command in COMMANDS:
        assert command in out


@pytest.mark.parametrize("command", COMMANDS)
def test_command_help_imports_no_tensorflow(command: str) -> None:
    out, report = _run([command, "--help"])
    assert report == {"code": 0, "heavy": []}
    assert "<bool>" not in out
    # synthesize and export read the config stored in the run directory they are given.
    assert ("--run-dir" if command in ("synthesize", "export") else "--config") in out


def test_version(runner) -> None:
    from xtts_cli import __version__
    from xtts_cli.cli.app import app

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"xtts {__version__}"


@pytest.mark.parametrize("command", ["synthesize", "export", "serve"])
def test_a_folder_that_is_not_a_run_is_refused_before_tensorflow_loads(command: str, tmp_path) -> None:
    args = [command, "-r", str(tmp_path)] + (
        ["hello", "-o", str(tmp_path / "x.wav")] if command == "synthesize" else []
    )
    _, report = _run(args + (["-o", str(tmp_path / "out")] if command == "export" else []))
    assert report["code"] == 1 and "tensorflow" not in report["heavy"]


def test_speed_for_a_decoder_without_a_pace_is_refused_before_tensorflow_loads(tmp_path) -> None:
    run = Path(__file__).parent / "data" / "run_before_run_data"  # an autoregressive run
    _, report = _run(["synthesize", "the kettle", "-r", str(run), "--speed", "1.5", "-o", str(tmp_path / "a.wav")])
    assert report["code"] == 1 and "tensorflow" not in report["heavy"]
