"""One writer per folder (a run directory, a feature store being built): an exclusive `flock` on
`<folder>/.xtts-lock`, held while the writer works and released by the kernel when the process
ends, however it ends (a crash or SIGKILL leaves no stale lock to clean up). A second writer fails
at once, naming the holder's PID and host.

flock locks belong to an open file: two opens in one process would lock each other out, so a
process keeps one open lock per directory and counts who holds it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import socket
from pathlib import Path
from typing import Any

from xtts_cli.errors import XttsError

LOCK_FILE = ".xtts-lock"
_HELD: dict[str, list[Any]] = {}  # resolved path -> [file object, holders]


class RunDirLocked(XttsError):
    """Another process writes this run directory."""


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        return f"process {info['pid']} on {info['host']} (since {info['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def acquire(directory: Path, what: str = "run directory", hint: str = "") -> Path:
    """Lock `directory` for this process (again, if it holds it already); a `RunDirLocked` naming
    the holder when another process does."""
    import fcntl

    key = str(Path(directory).resolve())
    if key in _HELD:
        _HELD[key][1] += 1
        return Path(key) / LOCK_FILE
    path = Path(key) / LOCK_FILE
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held open for the life of the lock
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise RunDirLocked(
            f"{what} {directory} is in use by {_holder(path)}",
            hint=hint or "wait for that run to end, or pass --run-dir DIR for a separate run",
        ) from None
    stamp = _dt.datetime.now().isoformat(timespec="seconds")
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": stamp}) + "\n")
        handle.flush()
    except OSError as exc:  # a full disk: the write names no file, and the lock it would take is given back
        with contextlib.suppress(OSError):  # closing flushes what could not be written: it fails again
            handle.close()
        raise OSError(exc.errno, exc.strerror, str(path)) if exc.filename is None else exc from None
    _HELD[key] = [handle, 1]
    return path


def release(directory: Path) -> None:
    """Give back one hold of `directory`'s lock; the last one unlocks it."""
    key = str(Path(directory).resolve())
    held = _HELD.get(key)
    if held is None:
        return
    held[1] -= 1
    if held[1] <= 0:
        held[0].close()  # closing the file releases the flock
        del _HELD[key]


def held_by(directory: Path) -> str | None:
    """Who else holds `directory`'s lock ("process 123 on host (since ...)"), looked at without
    taking it; None when nobody does, or this process does."""
    import fcntl

    path = Path(directory).resolve() / LOCK_FILE
    if str(path.parent) in _HELD:
        return None
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:  # no lock file: never written by a process that locks
        return None
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(path)
        except OSError:
            return None
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    return None


def holds(directory: Path) -> bool:
    return str(Path(directory).resolve()) in _HELD
