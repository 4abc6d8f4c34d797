"""Native code's stderr sent nowhere while TensorFlow's logs are quieted: its C++ and absl lines
(on import in TensorFlow 2.21, at XLA's first compilation in any version) ignore
TF_CPP_MIN_LOG_LEVEL, as tensorflow#100442 reports."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

__all__ = ["native_stderr_quieted"]


@contextlib.contextmanager
def native_stderr_quieted() -> Iterator[None]:
    """While TF_CPP_MIN_LOG_LEVEL quiets TensorFlow (the CLI sets it unless --verbose or
    XTTS_DEBUG=1), file descriptor 2 goes to /dev/null; an error still reaches the caller, as the
    exception's message."""
    if os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0") in ("", "0"):
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
