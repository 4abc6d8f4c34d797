"""The malloc settings the pipeline process runs with (data/host_memory.py), each in a fresh process:
they are set once per process and a process's first call decides."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# Says what was done (twice: the second call changes nothing), then whether a 4 MB block freed and
# asked for again comes from the heap (kept) or from a fresh mapping (glibc's mallinfo2: hblkhd is
# the bytes held in mmapped blocks).
PROBE = """
import ctypes
from xtts_cli.data.host_memory import keep_freed_memory
print(keep_freed_memory()); print(keep_freed_memory())

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = MallInfo2
before = libc.mallinfo2().hblkhd
block = libc.malloc(4 << 20)
mapped = libc.mallinfo2().hblkhd - before
libc.free(block)
print("mapped" if mapped >= 4 << 20 else "heap")
"""


def _run(env_extra: dict[str, str]) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(env_extra)
    result = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return result.stdout.split("\n")[:3]


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")


@linux_only
def test_glibc_malloc_is_set_once_and_keeps_a_large_block_on_the_heap():
    assert _run({}) == ["set", "set", "heap"]


@linux_only
def test_a_malloc_variable_in_the_environment_wins():
    """glibc reads the variable itself (its mmap threshold then stays at 128 KB: a 4 MB block is mapped)."""
    outcome = _run({"MALLOC_TRIM_THRESHOLD_": "131072"})
    assert outcome == ["left to MALLOC_TRIM_THRESHOLD_ (set in the environment)"] * 2 + ["mapped"]


@pytest.mark.slow
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
