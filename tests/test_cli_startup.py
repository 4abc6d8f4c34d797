"""`xtts --help` and every `xtts CMD --help` answer without importing TensorFlow (checked in a
fresh subprocess, where sys.modules is honest). Their speed is measured in
benchmarks/cli_startup.py, never asserted here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


# Every command's --help, one after the other in one fresh process: the modules any of them imported
# stay in sys.modules, so each answer also vouches for the ones before it.
HELP_PROBE = """
import contextlib, io, json, sys
import typer
from xtts_cli.cli.app import app, main

def commands(group, path=()):
    found = [list(path)]
    for name, command in getattr(group, "commands", {}).items():
        found += commands(command, (*path, name))
    return found

answers = []
for command in commands(typer.main.get_command(app)):
    sys.argv = ["xtts", *command, "--help"]
    out, code = io.StringIO(), 0
    with contextlib.redirect_stdout(out):
        try:
            main()
        except SystemExit as exc:
            code = exc.code or 0
    heavy = sorted({m.split(".")[0] for m in sys.modules} & {"tensorflow", "tensorflow_io", "keras", "numpy"})
    answers.append({"command": " ".join(command), "code": code, "heavy": heavy, "out": out.getvalue()})
print(json.dumps(answers))
"""


@pytest.fixture(scope="module")
def helps() -> dict[str, dict]:
    proc = subprocess.run([sys.executable, "-c", HELP_PROBE], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {answer["command"]: answer for answer in json.loads(proc.stdout)}


def test_every_help_answers_without_tensorflow(helps) -> None:
    from test_cli_help import COMMANDS

    # The app's own commands, groups included: a new one is checked without being listed here.
    assert sorted(helps) == sorted(" ".join(command) for command in COMMANDS)
    assert {name: (h["code"], h["heavy"]) for name, h in helps.items()} == {name: (0, []) for name in helps}
    for name, answer in helps.items():
        assert "<bool>" not in answer["out"], name  # flags are shown as flags, not as options taking a value


def test_the_root_help_reads_no_config_schema() -> None:
    # pydantic and the schema cost ~170 ms of a 2-core machine: one command module importing a config
    # helper at its top put them back in every `xtts --help`.
    _, report = _run(["--help"])
    probe = "import sys, json; from xtts_cli.cli.app import app; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout)
    assert report["code"] == 0 and not [m for m in loaded if m == "pydantic" or m.startswith("xtts_cli.config")]


def test_root_help_lists_every_command(helps) -> None:
    for name in helps:
        if name and " " not in name:
            assert name in helps[""]["out"]


def test_python_dash_m_is_the_xtts_command() -> None:
    proc = subprocess.run([sys.executable, "-m", "xtts_cli", "--version"], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout.split()[0]) == (0, "xtts"), proc.stderr


@pytest.mark.slow  # processes that speak into a pipe
def test_a_stdout_that_cannot_take_the_text_or_is_closed_is_written_what_it_can_take(tmp_path) -> None:
    # PYTHONIOENCODING=ascii and a path with "é": the work done, then a traceback (--json: no JSON at all).
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}

    def xtts(*args: str, **options) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "xtts_cli", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env, **options)

    written = xtts("init", "tiny-cpu", "-o", "caf\u00e9.yaml")
    assert written.returncode == 0 and "wrote caf\\xe9.yaml" in written.stdout, written.stderr
    checked = xtts("validate", "-c", "caf\u00e9.yaml", "--json")
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["config"] == "caf\u00e9.yaml"  # ASCII, escaped as JSON escapes it
    closed = subprocess.run(
        ["sh", "-c", f"{sys.executable} -m xtts_cli --version >&-"], capture_output=True, text=True, timeout=60
    )
    assert (closed.returncode, closed.stderr) == (0, "")
    # stderr closed: the command's first progress line had ended it, exit 1, its work undone and unsaid.
    quiet = subprocess.run(
        [
            "sh",
            "-c",
            f"{sys.executable} -m xtts_cli validate -c tiny-cpu --data {Path(__file__).parents[1] / 'xtts_cli' / 'data' / 'sample'} 2>&-",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert quiet.returncode == 0 and "tiny-cpu.yaml: valid" in quiet.stdout, quiet.stdout[-2000:]


@pytest.mark.slow  # a training process
def test_a_kill_int_in_the_start_up_of_a_background_job_stops_it_as_in_its_loop(tmp_path) -> None:
    """A script's background job starts with SIGINT ignored; the loop honoured a kill -INT, its start-up
    (the scan, an --init-from base's validation) had dropped it and trained to the end, exit 0."""
    import signal

    from training_support import start_xtts, stderr_until

    run = tmp_path / "run"
    process = start_xtts(
        ["train", "-c", "tiny-cpu", "--steps", "4", "--set", f"training.run_dir={run}"], tmp_path, sigint_ignored=True
    )
    said = stderr_until(process, "scanning the dataset")
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=180)
    said += rest or ""
    assert process.returncode == 130, said[-2000:]
    assert "interrupted (Ctrl-C)" in said and "tracing the training step" not in said, said[-2000:]
    assert not list(run.glob("checkpoints/ckpt-*.index"))


def test_a_command_names_what_it_reads(helps) -> None:
    # A run's commands read the config stored in the run; vocode reads a vocoder run; the others a config.
    for name in ("init", "train", "validate", "diagnose", "profile-pipeline", "profile-step", "benchmark", "report"):
        assert "--config" in helps[name]["out"], name
    for name in ("synthesize", "export", "serve"):
        assert "--run-dir" in helps[name]["out"], name
    assert "--vocoder" in helps["vocode"]["out"] and "dispatcher" in helps["data-service"]["out"]


def test_version(runner) -> None:
    from xtts_cli import __version__
    from xtts_cli.cli.app import app

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"xtts {__version__}"


# Commands that must refuse before TensorFlow loads, each run in turn in one fresh process (a process
# each cost a second of the fast tier apiece): TensorFlow imported by any of them stays in sys.modules,
# so each answer also vouches for the ones before it. Each one's stderr is read from its file
# descriptor: the CLI's console holds the stream it was made with.
REFUSALS_PROBE = """
import json, os, sys, tempfile
from xtts_cli.cli.app import main

answers = []
for args in json.loads(sys.argv[1]):
    sys.argv = ["xtts", *args]
    code = 0
    with tempfile.TemporaryFile() as said:
        saved = os.dup(2)
        os.dup2(said.fileno(), 2)
        try:
            main()
        except SystemExit as exc:
            code = exc.code or 0
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        said.seek(0)
        stderr = said.read().decode("utf-8", "replace")
    heavy = sorted({m.split(".")[0] for m in sys.modules} & {"tensorflow", "tensorflow_io", "keras"})
    answers.append({"code": code, "heavy": heavy, "stderr": stderr})
print(json.dumps(answers))
"""

RUN = Path(__file__).parent / "data" / "run_before_run_data"  # an autoregressive run, speakers en-us+f3 ...
SPOKEN_REFUSALS = [
    ("the kettle", ["--speed", "1.5"], "speed 1.5: this run's decoder (autoregressive)"),
    ("the kettle", ["--speaker", "en-us+f2"], "speaker 'en-us+f2' is not in"),
    ("the kettle", ["--language", "fa"], "fa"),
    ("the kettle 世界", [], "text has characters the run was not trained on: '世' (U+4E16)"),
    ("the kettle", ["--speaker-wav", "-"], "--speaker-wav '-' is stdin, which a clip is not read from"),
    ("the kettle", ["--speaker-wav", "https://example.com/v.wav"], "is a URL: download the clip first"),
]


def _overwrites(folder: Path) -> dict[str, tuple[list[str], str]]:
    clip = folder / "clip.wav"
    return {
        "export": (["export", "-r", str(RUN), "-o", str(clip)], f"--out {clip} is a file, not a folder"),
        "vocode": (["vocode", str(clip), "-o", str(clip)], f"--out would write over the recording {clip}"),
        "synthesize": (
            ["synthesize", "the kettle", "-r", str(RUN), "--speaker-wav", str(clip), "-o", str(clip)],
            f"--out would write over the --speaker-wav clip {clip}",
        ),
    }


@pytest.fixture(scope="module")
def refused(tmp_path_factory) -> tuple[Path, dict[str, dict]]:
    """Each refusal below, by a name, answered in one fresh process; and the folder they were given."""
    folder = tmp_path_factory.mktemp("refused")
    (folder / "clip.wav").write_bytes(
        (Path(__file__).parents[1] / "xtts_cli" / "data" / "sample" / "wavs" / "XTTS001-0001.wav").read_bytes()
    )
    (folder / "empty").mkdir()
    cases = {
        f"not a run {command}": [command, "-r", str(folder / "empty")]
        + (["hello", "-o", str(folder / "x.wav")] if command == "synthesize" else [])
        + (["-o", str(folder / "out")] if command == "export" else [])
        for command in ("synthesize", "export", "serve")
    }
    cases |= {
        f"spoken {n}": ["synthesize", text, "-r", str(RUN), *args] for n, (text, args, _) in enumerate(SPOKEN_REFUSALS)
    }
    cases |= {f"overwrite {command}": args for command, (args, _) in _overwrites(folder).items()}
    emptied = folder / "emptied"  # a vocoder run whose checkpoints are gone
    shutil.copytree(RUN.parent / "legacy_vocoder_run", emptied, ignore=shutil.ignore_patterns("checkpoints"))
    cases |= {
        "vocoder emptied": ["vocode", str(folder / "clip.wav"), "--vocoder", str(emptied), "-o", str(folder / "v.wav")],
        "vocoder acoustic": [
            "synthesize",
            "Hello.",
            "-r",
            str(RUN),
            "--vocoder",
            str(RUN),
            "-o",
            str(folder / "v.wav"),
        ],
    }
    proc = subprocess.run(
        [sys.executable, "-c", REFUSALS_PROBE, json.dumps(list(cases.values()))],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return folder, dict(zip(cases, json.loads(proc.stdout.splitlines()[-1])))


@pytest.mark.parametrize("command", ["synthesize", "export", "serve"])
def test_a_folder_that_is_not_a_run_is_refused_before_tensorflow_loads(command: str, refused) -> None:
    report = refused[1][f"not a run {command}"]
    assert report["code"] == 1 and "tensorflow" not in report["heavy"], report["stderr"]
    assert "is not an xtts run directory" in report["stderr"], report["stderr"]


@pytest.mark.parametrize("case", range(len(SPOKEN_REFUSALS)))
def test_what_the_runs_files_refuse_is_refused_before_tensorflow_loads(refused, case) -> None:
    _, args, said = SPOKEN_REFUSALS[case]
    report = refused[1][f"spoken {case}"]
    assert report["code"] == 1 and "tensorflow" not in report["heavy"], report["stderr"]
    assert said in report["stderr"], report["stderr"]
    if "--speaker" in args:
        assert "did you mean 'en-us+f3'" in report["stderr"]


@pytest.mark.parametrize(("case", "said"), [("emptied", "holds no checkpoint"), ("acoustic", "that run is not")])
def test_a_vocoder_with_no_checkpoint_or_of_another_kind_is_refused_before_tensorflow_loads(refused, case, said):
    report = refused[1][f"vocoder {case}"]
    assert report["code"] == 1 and "tensorflow" not in report["heavy"] and said in report["stderr"], report["stderr"]


@pytest.mark.parametrize("command", ["export", "vocode", "synthesize"])
def test_an_output_that_would_replace_an_input_is_refused_before_tensorflow_loads(refused, command) -> None:
    folder, reports = refused
    _, said = _overwrites(folder)[command]
    report = reports[f"overwrite {command}"]
    assert report["code"] == 1 and "tensorflow" not in report["heavy"], report["stderr"]
    sample = Path(__file__).parents[1] / "xtts_cli" / "data" / "sample" / "wavs" / "XTTS001-0001.wav"
    assert said in report["stderr"] and (folder / "clip.wav").read_bytes() == sample.read_bytes()


@pytest.mark.slow  # a process that imports TensorFlow
def test_importing_the_api_leaves_tensorflows_logging_as_a_host_asked_for_it() -> None:
    # TF_CPP_MIN_LOG_LEVEL=0 and TensorFlow's logger at INFO: the import had set it to ERROR and
    # dropped Keras's and TensorFlow's warnings all the same.
    code = (
        "import logging, warnings\n"
        "logging.getLogger('tensorflow').setLevel(logging.INFO)\n"
        "import xtts_cli.inference\n"
        "print(logging.getLogger('tensorflow').level, any('keras' in str(f[2]) for f in warnings.filters))\n"
    )
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "0"}
    env.pop("XTTS_DEBUG", None)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["20", "False"], done.stdout + done.stderr[-2000:]
