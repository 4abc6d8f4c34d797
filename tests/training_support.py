"""Shared bits of the training tests: a tiny config and a subprocess runner."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

# One length bucket: each bucket's batch shape is one more trace of the train step (seconds each, in
# every training test); a test about buckets sets its own.
TINY = """
data:
  batch_size: 4
  num_buckets: 1
  eval_fraction: 0.1
  preprocessing_mode: cache
model:
  model_size: tiny
  d_model: 32
  num_heads: 2
  num_text_layers: 1
  num_decoder_layers: 1
  speaker_embedding_dim: 16
training:
  learning_rate: 0.003
  warmup_steps: 5
  log_step: 2
  val_step: 1000
  save_step: 1000
  sample_step: 1000
  max_val_batches: 2
{extra}
"""


def tiny_config(tmp_path: Path, extra: str = "", name: str = "tiny.yaml") -> Path:
    """TINY with `extra` after its training section: a training key it already has is replaced
    there (a key written twice is an error), the rest appended."""
    head, _, training = TINY.format(extra="").partition("\ntraining:\n")
    appended = []
    for number, line in enumerate(extra.splitlines()):
        own = re.match(r"^  (\w+):", line)
        if own and not any(not earlier.startswith(" ") for earlier in extra.splitlines()[:number]):
            written = re.compile(rf"^  {own.group(1)}:.*$", re.MULTILINE)
            if written.search(training):
                training = written.sub(line, training)
                continue
        appended.append(line)
    path = tmp_path / name
    path.write_text(
        f"{head}\ntraining:\n{training.rstrip()}\n" + "".join(f"{line}\n" for line in appended), encoding="utf-8"
    )
    return path


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env.pop("XTTS_DEBUG", None)
    return env


# TensorFlow's C++ log lines ("2026-11-23 09:08:15.204444: E external/...") and absl's ("I0000 00:00:...").
TF_LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] |[IWEF]\d{4} \d\d:\d\d:\d\d)")


def user_env() -> dict[str, str]:
    """The environment of a user who set nothing: no TF_CPP_MIN_LOG_LEVEL, no XTTS_DEBUG."""
    env = dict(os.environ)
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    env.pop("XTTS_DEBUG", None)
    return env


def run_xtts(args: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xtts_cli", *args],
        cwd=cwd,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_python(
    code: str, cwd: Path, timeout: int = 300, env: dict[str, str] | None = None, preexec_fn=None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=subprocess_env() if env is None else env,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec_fn,
    )


def start_xtts(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, ctrl_c: bool = False, sigint_ignored: bool = False
) -> subprocess.Popen:
    """`xtts ARGS` started in its own process, its output captured as text. `ctrl_c`: SIGINT as a
    terminal leaves it (a test worker may run with it ignored, which the child would inherit; `xtts`
    takes it back at start, and a `python -c` child would not);
    `sigint_ignored`: as a script's background job starts, with SIGINT ignored. SIGHUP as a terminal
    leaves it, whatever the tests run under (`nohup` ignores it, and a child would inherit that)."""
    import signal

    def as_a_terminal_leaves_it() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        if ctrl_c or sigint_ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN if sigint_ignored else signal.SIG_DFL)

    return subprocess.Popen(
        [sys.executable, "-m", "xtts_cli", *args],
        cwd=cwd,
        env=subprocess_env() if env is None else env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_a_terminal_leaves_it,
    )


def stderr_until(process: subprocess.Popen, word: str, timeout: float = 180) -> str:
    """What `process` said on stderr up to and including `word` (or until it ended or `timeout` passed)."""
    import os
    import time

    descriptor = process.stderr.fileno()  # type: ignore[union-attr]
    os.set_blocking(descriptor, False)
    said, deadline = "", time.monotonic() + timeout
    while word not in said and time.monotonic() < deadline and process.poll() is None:
        try:
            said += os.read(descriptor, 65536).decode("utf-8", "replace")
        except BlockingIOError:
            time.sleep(0.05)
    os.set_blocking(descriptor, True)
    return said


def terminal_signals() -> None:
    """A child's SIGINT and SIGHUP as a terminal leaves them (`preexec_fn`): a test worker may run
    with either ignored (pytest-xdist's SIGINT, `nohup`'s SIGHUP), which the child would inherit."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def wait_for_records(proc: subprocess.Popen, metrics: Path, enough, timeout: float = 240) -> None:
    """Wait until `enough(lines of metrics.jsonl)` holds while `proc` still runs (fails if it ended)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if metrics.is_file() and enough(metrics.read_text().splitlines()):
            break
        time.sleep(0.2)
    assert proc.poll() is None, proc.stderr.read() if proc.stderr and not proc.stderr.closed else proc.returncode


def undocumented_keys(command: str, payload: dict) -> list[str]:
    """The keys of `command`'s `--json` report that docs/json.md does not list (a list of objects as
    `key[].field`; an object the page gives as one value, such as a trial's settings, is not opened)."""
    from xtts_cli.cli.json_reference import documented_keys

    documented = documented_keys(command)
    parents = {key.rsplit(".", 1)[0] for key in documented if "." in key}

    def walk(value, key: str):
        if isinstance(value, dict) and (not key or key in parents):
            for name, inner in value.items():
                yield from walk(inner, f"{key}.{name}" if key else name)
        elif isinstance(value, list) and f"{key}[]" in parents:
            for item in value:
                yield from walk(item, f"{key}[]")
        else:
            yield key

    return sorted({key for key in walk(payload, "") if key not in documented})


def ctrl_c_at_timed_step(monkeypatch, step: int) -> None:
    """A real SIGINT, raised in this process as the step profiler's `step`th timed step ends."""
    import signal

    from xtts_cli.profiling import step_profiler

    on_step = step_profiler._StepTiming.on_step

    def then_ctrl_c(self, end) -> None:
        on_step(self, end)
        if self.timed == step:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(step_profiler._StepTiming, "on_step", then_ctrl_c)


@contextlib.contextmanager
def lock_held_elsewhere(directory: Path) -> Iterator[int]:
    """A run's lock (`xtts_cli.locks`) held by a real second process while the block runs, as a
    training holds it; yields that process's id."""
    hold = (
        "import sys, time; from pathlib import Path; from xtts_cli import locks; locks.acquire(Path(sys.argv[1]));"
        " print('held', flush=True); time.sleep(300)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(directory)], stdout=subprocess.PIPE, env=subprocess_env(), text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder.pid
    finally:
        holder.kill()
        holder.wait()
