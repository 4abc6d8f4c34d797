"""Errors a user can fix, and TensorFlow's failures translated into them.

Kept free of heavy imports: `main()` needs it before any command runs. TensorFlow's errors are
recognised by their class and message, without importing TensorFlow.

Exit codes: 1 an error a user can fix (XttsError), 2 a config that does not validate
(ConfigError), 3 a NaN or Inf loss (training/controller.py), 4 a device or kernel TensorFlow cannot
use (DeviceError), 5 out of memory (OutOfMemoryError), 6 a full disk (DiskFullError); 130 and 143
after a clean interrupt (training/signals.py).
"""

from __future__ import annotations

import errno
import re
import shlex
from typing import Optional

# A translated message keeps TensorFlow's first line, cut to this many characters.
MESSAGE_CHARS = 240


class Terminated(BaseException):
    """SIGTERM outside a command's own handling of it (a scheduler, `docker stop`, `timeout`), or
    SIGHUP (its terminal closed): raised in the main thread, so the command unwinds (its locks and
    temporaries cleaned up) and says why it stopped. Not an Exception, as KeyboardInterrupt is not:
    no `except Exception` swallows it."""

    def __init__(self, signum: int = 15) -> None:  # SIGTERM's number
        super().__init__(signum)
        self.signum = signum


class XttsError(Exception):
    """An error the user can fix; the command prints its lines and exits with `exit_code`.

    `translated`: made from another error whose traceback the one-line message hides (the debug
    hint then says how to see it).
    """

    exit_code = 1

    def __init__(self, *lines: str, hint: Optional[str] = None, translated: bool = False):
        self.lines = [line for line in lines if line]
        self.hint = hint
        self.translated = translated
        super().__init__("; ".join(self.lines))


class XttsNote(UserWarning):
    """What the command line prints beside its result, warned to a Python caller (`warnings`): text
    left out or read as its nearest, a part cut, what a voice's clip lacked, an earlier checkpoint
    restored. `warnings.simplefilter("ignore", XttsNote)` quiets them; `Speech.notes` keeps them."""


# The paces a run is read at (`synthesize --speed`, a request's `speed`): beyond them words blur or drag.
SPEEDS = (0.25, 4.0)


def speed_without_pace(speed: float) -> XttsError:
    """`--speed` (or a request's `speed`) for a run whose decoder has no durations to scale."""
    return XttsError(
        f"speed {speed:.12g}: this run's decoder (autoregressive) ends each sentence by its stop token, "
        "frame by frame, and has no pace to set",
        hint="train with model.decoder: duration (configs/speak-cpu.yaml) to set the speed",
    )


def listed_name(name: str, listed) -> Optional[str]:
    """The name of `listed` that `name` is, in any Unicode form: "Zoë" typed with a combining
    diaeresis (macOS's folder names, some keyboards) is the "Zoë" a run lists precomposed. It had
    been refused with a did-you-mean that looked the same as what was typed."""
    if name in listed:
        return name
    import unicodedata

    composed = unicodedata.normalize("NFC", name)
    return next((known for known in listed if unicodedata.normalize("NFC", known) == composed), None)


def unknown_speaker(name: str, listed: list[str], run_dir) -> XttsError:
    """`--speaker NAME` that is not one of the run's `listed` speakers, with the names closest to it."""
    import difflib

    close = difflib.get_close_matches(name, listed, n=3)
    known = ", ".join(listed[:8]) + (f" and {len(listed) - 8} more" if len(listed) > 8 else "")
    return XttsError(
        f"speaker {name!r} is not in {run_dir} ({len(listed)} speakers: {known})",
        hint=f"did you mean {' or '.join(repr(c) for c in close)}?"
        if close
        else f"xtts synthesize --list-speakers -r {shlex.quote(str(run_dir))} lists them",
    )


class ConfigError(XttsError):
    """The config cannot be read or does not validate: exit 2."""

    exit_code = 2


class UsageError(XttsError):
    """Command-line values that do not parse or do not agree with each other: exit 2, as Typer's own."""

    exit_code = 2


class OutOfMemoryError(XttsError):
    """A device ran out of memory: exit 5."""

    exit_code = 5


class DiskFullError(XttsError):
    """No space left on a disk, or a quota reached (ENOSPC, EDQUOT): exit 6. Not memory."""

    exit_code = 6


DISK_FULL_HINT = "free space on that disk (or raise its quota), or point the run or the store at another one"
_DISK_FULL = ("no space left on device", "disk quota exceeded")
# EFBIG: a file past the shell's `ulimit -f` or its filesystem's largest (FAT32's 4 GiB, a large model's
# checkpoint); room elsewhere on the disk does not help. TensorFlow had ended in a traceback, exit 1.
FILE_TOO_LARGE_HINT = (
    "raise the shell's file-size limit (ulimit -f unlimited), or point the run at a filesystem that holds large "
    "files (FAT32 holds 4 GiB at most)"
)


def disk_full(error: BaseException, where: str = "") -> Optional[DiskFullError]:
    """A DiskFullError for an OSError with ENOSPC or EDQUOT, or a TensorFlow error that says so."""
    import errno

    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        path = where or error.filename or "a file"
        return DiskFullError(f"the disk is full: writing {path} failed ({error.strerror})", hint=DISK_FULL_HINT)
    message = str(getattr(error, "message", "") or error)
    if (isinstance(error, OSError) and error.errno == errno.EFBIG) or "file too large" in message.lower():
        path = where or getattr(error, "filename", None) or "a file"
        return DiskFullError(
            f"a file grew past the largest this system allows: writing {path} failed (File too large)",
            hint=FILE_TOO_LARGE_HINT,
            translated=not isinstance(error, OSError),
        )
    if any(phrase in message.lower() for phrase in _DISK_FULL):
        cause = tensorflow_cause(message)
        return DiskFullError(
            f"the disk is full{': writing ' + where + ' failed' if where else ''} ({cause})",
            hint=DISK_FULL_HINT,
            translated=True,
        )
    return None


class DeviceError(XttsError):
    """A device that does not exist, or an operation with no kernel on the device it was placed on: exit 4."""

    exit_code = 4


OUT_OF_MEMORY_HINT = (
    "lower data.batch_size (or --batch-size), data.max_mel_frames or model.model_size; "
    "`xtts benchmark` finds the largest batch that fits this machine"
)
# Phrases that state a cause; a line holding one is the message, wherever it sits.
_CAUSES = (
    "OOM when allocating",
    "out of memory",
    "No registered",
    "no supported kernel",
    "Could not satisfy",
    "No space left on device",
    "Disk quota exceeded",
    "File too large",
)


# Lines of a TensorFlow error message that frame the cause rather than state it.
_FRAMING = ("Graph execution error:", "Detected at node", "Hint:", "[[{{node")


def tensorflow_cause(message: str) -> str:
    """The line of a TensorFlow message that states the cause: not the framing, not the Python
    stack it quotes (indented), without the "{{function_node ...}}" prefix and "[Op:...]" suffix."""
    lines = [line.strip() for line in message.splitlines()]
    stated = [line for line in lines if any(phrase in line for phrase in _CAUSES)]
    unframed = [
        line
        for raw, line in zip(message.splitlines(), lines)
        if line and not raw[0].isspace() and not line.startswith(_FRAMING)
    ]
    cause = (stated or unframed or [line for line in lines if line] or [""])[0]
    cause = re.sub(r"\x1b\[[0-9;]*m", "", cause)  # Keras wraps the cause in terminal bold
    cause = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", cause)
    # tf.data's framing of an error raised inside a map: which transformation, then the cause.
    cause = re.sub(r"^Error in user-defined function passed to \S+ transformation with iterator: \S+:\s*", "", cause)
    cause = re.sub(r"\s*\[Op:[^\]]*\](\s*name:.*)?$", "", cause).strip().strip("'\"").strip()
    return cause if len(cause) <= MESSAGE_CHARS else cause[: MESSAGE_CHARS - 3] + "..."


# A place the process may not write: a read-only filesystem, a permission it lacks.
_NOT_WRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


def quoted(path: object) -> str:
    """`path` as a shell reads it back, for a command a hint prints: quoted, and a relative one that
    starts with "-" written "./-x" (a run named "-x" was read as an option by tensorboard)."""
    text = str(path)
    return shlex.quote("./" + text if text.startswith("-") else text)


def _symlink_loop(error: BaseException) -> Optional[XttsError]:
    """A path through a symbolic link that points, through others, back to itself (ELOOP; Python's
    Path.resolve raises RuntimeError of it): one line naming it, not a traceback."""
    if isinstance(error, OSError) and error.errno == errno.ELOOP:
        path = error.filename or "a path"
    elif isinstance(error, RuntimeError) and str(error).startswith("Symlink loop from "):
        path = str(error).removeprefix("Symlink loop from ").strip("'\"")
    else:
        return None
    link = _looping_link(str(path))
    return XttsError(
        f"{path} is a symbolic link that leads back to itself (a loop of links)"
        + (f": {link} is the link" if link != str(path) else ""),
        hint=f"point it at a real file or folder (ls -ld {quoted(link)} shows where it leads), or pass another path",
    )


def _looping_link(path: str) -> str:
    """The first link along `path` that cannot be followed (`loop/run`: `loop`), which `ls -ld`
    shows; `path` itself when none is found."""
    import os

    parts = path.split(os.sep)
    for end in range(1, len(parts) + 1):
        prefix = os.sep.join(parts[:end])
        if prefix and os.path.islink(prefix):
            try:
                os.stat(prefix)
            except OSError:
                return prefix
    return path


# CPython's words for a C function that failed without an exception set: an allocation, under an
# address-space limit; elsewhere a bug, and kept as one.
_NULL_RETURNED = ("without setting an exception", "error return without exception set")


try:  # imported here, not where memory has run out: its own import would fail then
    import resource
except ImportError:  # not on Windows, whose processes have no such limit
    resource = None  # type: ignore[assignment]


def _limited_address_space() -> bool:
    if resource is None:
        return False
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return soft != resource.RLIM_INFINITY


def _process_memory(error: BaseException) -> Optional[OutOfMemoryError]:
    """The process's own memory limit (ulimit -v, a container's), met in Python, in TensorFlow's C++
    (std::bad_alloc) or mapping TensorFlow's libraries: a traceback had said it."""
    said = str(error)
    # How importing TensorFlow under the limit fails, by where the mapping or allocation failed: a
    # library's segment (glibc's words, in an ImportError, the RuntimeError listing the tries, TensorFlow's
    # NotFoundError loading an op library), protobuf's descriptor pool (TypeError). A GPU's "CUDA error:
    # out of memory" is no process limit, and is not said to be one.
    said_so = (
        isinstance(error, MemoryError)
        or (isinstance(error, OSError) and error.errno == errno.ENOMEM)
        or "failed to map segment from shared object" in said
        or (isinstance(error, TypeError) and "descriptor pool: out of memory" in said)
        # The same pool's other words for an allocation refused under the limit (an AVX2 CPU's CI met it).
        or (isinstance(error, TypeError) and "Couldn't parse file content" in said and _limited_address_space())
        or (
            isinstance(error, SystemError)
            and any(words in said for words in _NULL_RETURNED)
            and _limited_address_space()
        )
    )
    if not said_so:
        return None
    limited = _limited_address_space()
    said = str(error) or ("the process's memory limit is reached" if limited else "the machine's memory is spent")
    # No limit set: the machine's memory itself ran out (other processes, a cache), not a limit to raise.
    room = "raise the process's memory limit (ulimit -v, the container's)" if limited else "free the machine's memory"
    return OutOfMemoryError(
        f"out of memory: {said[:MESSAGE_CHARS]}",
        hint=f"{room}; training also fits in less with " + OUT_OF_MEMORY_HINT.split("; ")[0],
        translated=True,
    )


def from_tensorflow(error: BaseException) -> Optional[XttsError]:
    """TensorFlow's out-of-memory, missing-kernel and device errors, and a file the process may
    not write, as one line that names what to change; None for any other error (it keeps its
    traceback)."""
    # A full disk before out of memory: TensorFlow reports a full disk as exhausted resources.
    for translated in (disk_full, _symlink_loop, _process_memory):
        found = translated(error)
        if found is not None:
            return found
    if isinstance(error, OSError) and error.errno == errno.ENAMETOOLONG:
        name = str(error.filename or "a path")
        return XttsError(
            f"{name}: a name in it is too long for its file system ({errno.errorcode[errno.ENAMETOOLONG]})",
            hint="use a shorter name: most file systems hold 255 bytes a name (a Persian letter is 2 of them)",
        )
    if isinstance(error, OSError) and error.errno in _NOT_WRITABLE and error.filename:
        return XttsError(
            f"cannot write {error.filename}: {error.strerror}",
            hint="make that place writable (or point the run or --out elsewhere), then run the same command",
            translated=True,
        )
    kind = type(error)
    if not kind.__module__.startswith(("tensorflow", "keras")):
        return None
    message = str(getattr(error, "message", "") or error)
    line = tensorflow_cause(message)
    lowered = message.lower()
    if kind.__name__ == "PermissionDeniedError":  # TensorFlow's own file ops (a checkpoint's, a summary's)
        # Read by the input pipeline (a clip chmod-ed after its scan was memoised), not written.
        if "ReadFile" in message or "[Op:IteratorGetNext]" in message:
            return XttsError(
                f"cannot read {line}",
                hint="make it readable (chmod a+r), or remove it from the dataset, then run the same command",
                translated=True,
            )
        return XttsError(
            f"cannot write {line}",
            hint="make that place writable (chmod, chattr -i, a read-write mount), then run the same command: "
            "a run resumes from its last checkpoint",
            translated=True,
        )
    if (
        kind.__name__ == "ResourceExhaustedError"
        or "oom when allocating" in lowered
        or "out of memory" in lowered
        or "cuda_error_out_of_memory" in lowered
    ):
        return OutOfMemoryError(f"out of memory: {line}", hint=OUT_OF_MEMORY_HINT, translated=True)
    # Only XLA's own refusal: other errors raised inside a compiled step keep their traceback.
    if "detected unsupported operations when trying to compile" in lowered or (
        kind.__name__ == "UnimplementedError" and "xla" in lowered
    ):
        return DeviceError(
            f"XLA cannot compile the step: {line}",
            hint="set training.enable_xla_compilation: false (or auto)",
            translated=True,
        )
    if "no registered" in lowered and "opkernel" in lowered or "no supported kernel" in lowered:
        return DeviceError(
            f"TensorFlow has no kernel for an operation on its device: {line}",
            hint="unset devices.data_gpu (the CPU runs every input kernel) or training.enable_xla_compilation; `xtts diagnose` checks the setup",
            translated=True,
        )
    if kind.__name__ == "DataLossError" and "corrupted record" in lowered:
        # The precompute store read from its shards: TensorFlow does not say which file.
        return XttsError(
            f"a record of the precompute feature store fails its checksum ({line})",
            hint="remove the store's folder (data.feature_cache_dir; by default the dataset's .xtts_features) "
            "and start again: the next start computes the features again",
            translated=True,
        )
    if "could not satisfy explicit device specification" in lowered or "unknown device" in lowered:
        return DeviceError(
            f"a device TensorFlow cannot use: {line}",
            hint="check devices.model_gpu and devices.data_gpu; `xtts diagnose` lists this machine's GPUs",
            translated=True,
        )
    return None
