"""One benchmark trial: the real training step on the real pipeline, in a process of its own.

Each trial of `xtts benchmark` runs in a fresh Python process (`python -m
xtts_cli.profiling.benchmark_trial SPEC RESULT`), so whatever one setting does to the process —
an out-of-memory error that leaves the GPU allocator fragmented, a mixed-precision policy, an XLA
cache, a crash — cannot touch the next trial. The parent writes the trial's config as JSON
(SPEC), the child runs `profile_step` on it and writes a `TrialOutcome` as JSON (RESULT).

`run_trial` is the parent's side: it starts the child in its own process group with a time
limit, and turns every way a child can end (result written, TensorFlow OOM, killed by the
kernel, time limit, any other error) into a `TrialOutcome`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

TrialStatus = Literal["ok", "oom", "failed", "timeout"]

# Lines of the child's stderr that carry the reason a trial failed, in order of preference.
_OOM_MARKERS = ("ResourceExhaustedError", "RESOURCE_EXHAUSTED", "OOM when allocating", "out of memory", "MemoryError")


class TrialOutcome(BaseModel):
    status: TrialStatus = Field(
        description="ok, oom (out of memory), failed, timeout or skipped (not started: budget or an earlier out of memory)."
    )
    reason: Optional[str] = Field(None, description="Why it did not run ok; null when it did.")
    samples_per_sec: Optional[float] = Field(None, description="Clips a second over the timed steps.")
    step_ms_p50: Optional[float] = Field(None, description="Median step time, ms.")
    step_ms_p95: Optional[float] = Field(None, description="95th percentile step time, ms.")
    step_cv: Optional[float] = Field(None, description="Step times' coefficient of variation: how steady the step is.")
    input_bound_percent: Optional[float] = Field(None, description="Share of step time spent waiting for data, %.")
    retraces: Optional[int] = Field(None, description="Traces after warm-up (0 is healthy).")
    seconds: float = Field(0.0, description="Wall time of the trial, start-up included.")


def _step_cv(data_wait_ms: list[float], compute_ms: list[float]) -> float:
    import numpy as np

    steps = np.asarray(data_wait_ms) + np.asarray(compute_ms)
    mean = float(steps.mean()) if steps.size else 0.0
    return float(steps.std() / mean) if mean > 0 else 0.0


def _child(spec_path: Path, result_path: Path) -> int:
    """Run one trial in this (fresh) process and write its outcome."""
    # Only the trial's own process loads TensorFlow: the parent checks its arguments without it.
    import tensorflow as tf

    from xtts_cli.config.loading import build_config
    from xtts_cli.errors import XttsError

    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    began = time.perf_counter()

    def write(outcome: TrialOutcome) -> None:
        outcome.seconds = time.perf_counter() - began
        result_path.write_text(outcome.model_dump_json(), encoding="utf-8")

    from xtts_cli.profiling.step_profiler import profile_step

    try:
        config = build_config(spec["config"], "the benchmark trial")
        # Ranked by samples a second: the resident-batch timing after the steps would only cost the trial time.
        profile = profile_step(config, num_steps=spec["num_steps"], warmup=spec.get("warmup"), host_contention=False)
    except XttsError as exc:
        write(TrialOutcome(status="failed", reason=" ".join(exc.lines)))
        return 1
    except tf.errors.ResourceExhaustedError as exc:
        write(TrialOutcome(status="oom", reason=_first_line(exc.message)))
        return 1
    except MemoryError:
        write(TrialOutcome(status="oom", reason="host memory exhausted (MemoryError)"))
        return 1
    write(
        TrialOutcome(
            status="ok",
            samples_per_sec=profile.samples_per_sec,
            step_ms_p50=profile.step_ms.p50,
            step_ms_p95=profile.step_ms.p95,
            step_cv=_step_cv(profile.data_wait_series_ms, profile.compute_series_ms),
            input_bound_percent=profile.input_bound_percent,
            retraces=profile.retraces,
        )
    )
    return 0


def _first_line(text: str, limit: int = 300) -> str:
    line = next((part.strip() for part in str(text).splitlines() if part.strip()), "")
    return line[:limit]


def _reason_from_stderr(stderr: str) -> tuple[TrialStatus, str]:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if any(marker in line for marker in _OOM_MARKERS):
            return "oom", line[:300]
    for line in reversed(lines):
        if "Error" in line or line.startswith("error:"):
            return "failed", line[:300]
    return "failed", lines[-1][:300] if lines else "no output"


def run_trial(config: dict[str, Any], *, num_steps: int, warmup: Optional[int], timeout: float) -> TrialOutcome:
    """Run one trial of `config` (a canonical config dict) in a child process; never raises for the trial's own failure."""
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="xtts-benchmark-trial-") as scratch:
        spec_path, result_path = Path(scratch) / "spec.json", Path(scratch) / "result.json"
        spec_path.write_text(json.dumps({"config": config, "num_steps": num_steps, "warmup": warmup}), encoding="utf-8")
        # The trial's own temporary folders inside this one: a trial stopped by SIGKILL (a timeout,
        # the user's Ctrl-C) cannot remove them, and this folder goes with everything in it.
        env = {**os.environ, "TMPDIR": scratch}
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        child = subprocess.Popen(
            [sys.executable, "-m", "xtts_cli.profiling.benchmark_trial", str(spec_path), str(result_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
            text=True,
            errors="replace",
        )
        try:
            _, stderr = child.communicate(timeout=max(timeout, 1.0))
        except subprocess.TimeoutExpired:
            _kill_group(child)
            child.communicate()
            return TrialOutcome(
                status="timeout",
                reason=f"still running after {timeout:.0f} s; stopped",
                seconds=time.perf_counter() - began,
            )
        except BaseException:
            _kill_group(child)
            child.communicate()
            raise
        seconds = time.perf_counter() - began
        if result_path.is_file():
            outcome = TrialOutcome.model_validate_json(result_path.read_text(encoding="utf-8"))
            outcome.seconds = seconds
            return outcome
    if child.returncode < 0:
        signum = -child.returncode
        name = signal.Signals(signum).name if signum in signal.Signals._value2member_map_ else str(signum)
        if signum == signal.SIGKILL:
            return TrialOutcome(
                status="oom", seconds=seconds, reason=f"killed by {name}, most likely the kernel's out-of-memory killer"
            )
        return TrialOutcome(status="failed", reason=f"killed by {name}", seconds=seconds)
    status, reason = _reason_from_stderr(stderr)
    return TrialOutcome(status=status, reason=reason, seconds=seconds)


def _kill_group(child: subprocess.Popen) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: python -m xtts_cli.profiling.benchmark_trial SPEC.json RESULT.json\n")
        return 2
    return _child(Path(argv[0]), Path(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
