"""glibc's malloc, set for a process that makes batches: memory freed is kept for reuse instead of
handed back to the kernel, so a new decode buffer, spectrogram or batch does not fault in (and the
kernel does not zero) fresh pages every time.

By default glibc serves a request from 128 KB up with a fresh `mmap` and unmaps it when it is freed
(a threshold it raises, as such blocks are freed, up to 32 MB), and returns the free top of its
heaps to the kernel past 128 KB. `keep_freed_memory` fixes the mmap threshold at its 32 MB maximum
and the trim threshold at 1 GiB: the pipeline's buffers, a few MB each, are then reused from the
heap. Measured (2-core VM, whole epochs, `benchmarks/data_scale.py` sets): runtime mode 1,321 ->
1,395 clips/s at 13,100 clips and 1,295 -> 1,339 at 131,000; the cached first epoch at 13,100
1,089 -> 1,197-1,245; a store epoch at 131,000 6,928 clips/s (batch-latency CV 0.80) -> 9,671
(CV 0.39); peak RSS 1.25 -> 1.27 GB (runtime) and 1.44 -> 1.45 GB (store) at 131,000.

A process whose environment sets any of glibc's own `MALLOC_*_` variables keeps them: the user's
choice wins. On a C library other than glibc nothing changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Optional

# mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's maximum on 64-bit systems
TRIM_THRESHOLD = 1 << 30
_USER_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")

_outcome: Optional[str] = None


def keep_freed_memory() -> str:
    """Set glibc's malloc as the module docstring says, once per process; what happened, in words:
    "set", "left to MALLOC_..._ (set in the environment)", or "not glibc"."""
    global _outcome
    if _outcome is None:
        _outcome = _apply()
    return _outcome


def _apply() -> str:
    chosen = [name for name in _USER_VARIABLES if name in os.environ]
    if chosen:
        return f"left to {', '.join(chosen)} (set in the environment)"
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return "not glibc"
    if not hasattr(libc, "gnu_get_libc_version"):  # glibc only: musl and others have no such symbol
        return "not glibc"
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # The mmap threshold first: setting either fixes both, and a trim threshold alone would leave
    # the mmap threshold at 128 KB (every buffer a fresh mapping: 3x slower, measured).
    if not mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) or not mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD):
        return "refused by mallopt"
    return "set"
