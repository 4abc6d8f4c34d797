"""TensorFlow's logs quieted unless asked for (the CLI, and `xtts_cli.inference` for Python callers),
and native code's stderr sent nowhere meanwhile: its C++ and absl lines (on import in TensorFlow
2.21, at XLA's first compilation in any version) ignore TF_CPP_MIN_LOG_LEVEL, as tensorflow#100442
reports."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

__all__ = ["QUIET_TF_LOG_LEVEL", "SET_HERE", "native_stderr_quieted", "quiet_tensorflow_logs"]


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


# TensorFlow's C++ log level when the user has not set TF_CPP_MIN_LOG_LEVEL: 3 keeps its start-up
# chatter (plugin registration, CPU feature notes) and the per-epoch "End of sequence" lines out of
# a run's output; its real failures still arrive as Python exceptions. `--verbose` or
# XTTS_DEBUG=1: everything (0).
QUIET_TF_LOG_LEVEL = "3"
# The variables this process set itself, not the user: a support report does not show them as theirs.
SET_HERE: set[str] = set()


class _QuietTensorFlowImport:
    """While `import tensorflow` runs (wherever a command first imports it), what native code writes
    to stderr goes nowhere. From TensorFlow 2.19 its libraries log while they load, before absl's
    logging is set up and past TF_CPP_MIN_LOG_LEVEL (tensorflow/tensorflow#100442): on 2.21 six
    lines ("oneDNN custom operations are on", "Could not find cuda drivers") above every command's
    output. A failed import still raises, with its message."""

    def find_spec(self, name, path=None, target=None):
        if name != "tensorflow":
            return None
        import importlib.util

        sys.meta_path.remove(self)  # once, and not for the find_spec below
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def quiet_load(module) -> None:
            with native_stderr_quieted():
                load(module)

        spec.loader.exec_module = quiet_load
        return spec


def quiet_tensorflow_logs(environ: dict[str, str] | None = None) -> None:
    """Quiet TensorFlow's C++ and Python logging unless asked for; call before TensorFlow loads."""
    import logging
    import warnings

    env = os.environ if environ is None else environ
    if env.get("XTTS_DEBUG") == "1" or env.get("TF_CPP_MIN_LOG_LEVEL", "-") in ("", "0"):
        return  # asked for: TensorFlow's logger and warnings are left as the user set them
    if "TF_CPP_MIN_LOG_LEVEL" not in env and environ is None:
        SET_HERE.add("TF_CPP_MIN_LOG_LEVEL")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", QUIET_TF_LOG_LEVEL)
    if environ is None and env["TF_CPP_MIN_LOG_LEVEL"] not in ("", "0") and "tensorflow" not in sys.modules:
        sys.meta_path.insert(0, _QuietTensorFlowImport())
    # tf.function retracing notes and deprecation warnings go through Python's logging, Keras's
    # notes through Python's warnings.
    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module=r"(keras|tensorflow)(\.|$)")
