"""Shared fixtures. Every test runs in its own temporary working directory with its own HOME, so
no test reads the repository's configs/config.yaml by accident or touches the user's files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

REPO_ROOT = Path(__file__).resolve().parents[1]

# TensorFlow's C++ logging is noise in test output.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (pyproject.toml): two workers for the fast tier, three for the whole suite, whose slow
    tests leave CPU idle while they wait on subprocesses and sockets (measured on 2 cores; the
    pyproject comment has the figures). PYTEST_XDIST_AUTO_NUM_WORKERS, when set, wins."""
    given = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if given.isdigit():
        return int(given)
    return 2 if "not slow" in (config.getoption("markexpr") or "") else 3


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    """With XTTS_TEST_CPU=FILE, one line per test appended to FILE: CPU seconds of its worker, of the
    processes it started and waited for, and wall seconds (its fixtures' included): which tests cost
    the suite most (docs/development.md)."""
    log = os.environ.get("XTTS_TEST_CPU")
    if not log:
        yield
        return
    import resource
    import time

    def cpu(who: int) -> float:
        usage = resource.getrusage(who)
        return usage.ru_utime + usage.ru_stime

    start = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN), time.monotonic()
    yield
    own, children = cpu(resource.RUSAGE_SELF) - start[0], cpu(resource.RUSAGE_CHILDREN) - start[1]
    with open(log, "a", encoding="utf-8") as out:
        out.write(
            f"{own + children:.2f}\t{own:.2f}\t{children:.2f}\t{time.monotonic() - start[2]:.2f}\t{item.nodeid}\n"
        )


@pytest.fixture(scope="session", autouse=True)
def _isolated_session(tmp_path_factory: pytest.TempPathFactory):
    """A HOME and working directory of the session's own for what module fixtures run (they are set up
    before a test's `_isolated`): a shared training's scan cache goes there, not into the user's ~/.cache."""
    root = tmp_path_factory.mktemp("session")
    (root / "home").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(root / "home"))
        patch.delenv("XTTS_DEBUG", raising=False)
        patch.chdir(root)
        yield


@pytest.fixture(autouse=True)
def _no_cluster_left():
    """`train --worker-hosts` writes TF_CONFIG for its process: in-process, it must not outlive the
    test (every later training in the worker would meet a cluster under strategy auto, refused).
    Set up before `_isolated`, so torn down after the test's monkeypatch has undone its changes."""
    before = os.environ.get("TF_CONFIG")
    yield
    if before is None:
        os.environ.pop("TF_CONFIG", None)
    else:
        os.environ["TF_CONFIG"] = before


@pytest.fixture(autouse=True)
def _isolated(_no_cluster_left, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XTTS_DEBUG", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def write_config(tmp_path: Path):
    def write(text: str, name: str = "config.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


# xdist (`--dist loadscope --no-loadscope-reorder`, pyproject.toml) hands each worker one module at a
# time, in collection order. The longest modules go first, so that no worker is left running a
# long one alone at the end; the rest follow as collected. Ordered by the seconds
# `python -m pytest -q --durations=0` measured for each module (2-core Xeon):
LONGEST_FIRST = (
    "tests/test_training_checkpoints.py",
    "tests/test_training.py",
    "tests/test_training_processes.py",
    "tests/test_init_from.py",
    "tests/test_benchmark.py",
    "tests/test_vocoder.py",
    "tests/test_serve.py",
    "tests/test_multi_worker.py",
    "tests/test_data_pipeline.py",
    "tests/test_model_xtts.py",
    "tests/test_profile_step.py",
    "tests/test_watch.py",
    "tests/faults/test_run_directory.py",
    "tests/test_profile_pipeline.py",
    "tests/test_voices.py",
    "tests/test_report.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {module: index for index, module in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: the rest as collected
