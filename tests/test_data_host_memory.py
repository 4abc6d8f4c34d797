"""The malloc settings the pipeline process runs with (data/host_memory.py), each in a fresh process:
they are set once per process and a process's first call decides."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = (
    "from xtts_cli.data.host_memory import keep_freed_memory; print(keep_freed_memory()); print(keep_freed_memory())"
)


def _run(env_extra: dict[str, str]) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(env_extra)
    result = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return result.stdout.split("\n")[:2]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_glibc_malloc_is_set_once():
    assert _run({}) == ["set", "set"]


def test_a_malloc_variable_in_the_environment_wins():
    outcome = _run({"MALLOC_TRIM_THRESHOLD_": "131072"})
    assert outcome == ["left to MALLOC_TRIM_THRESHOLD_ (set in the environment)"] * 2


def test_the_pipeline_sets_it(tmp_path):
    """A process that builds a pipeline runs it with the settings (the function says so, once set)."""
    code = (
        "from xtts_cli.config.schema import XttsConfig\n"
        "from xtts_cli.data.scan import scan_dataset\n"
        "from xtts_cli.data.pipeline import build_pipeline, tokenizer_for\n"
        "from xtts_cli.data import host_memory\n"
        "from xtts_cli.data.scan import BUNDLED_SAMPLE\n"
        "config = XttsConfig(data={'dataset_path': str(BUNDLED_SAMPLE), 'preprocessing_mode': 'runtime'})\n"
        "scan = scan_dataset(config.data)\n"
        "assert host_memory._outcome is None\n"
        "build_pipeline(config, scan.train, tokenizer_for(scan, config.data), training=True)\n"
        "print(host_memory._outcome)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(TF_CPP_MIN_LOG_LEVEL="3", XDG_CACHE_HOME=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == ("set" if sys.platform.startswith("linux") else "not glibc")
