"""Finish the current step, save, and exit cleanly on SIGINT, SIGTERM or SIGHUP (the terminal or
the SSH session closed; left alone where it is ignored, as `nohup` sets it).

Handlers are installed only while training runs and the previous ones are restored after, so a
library user's own handlers survive. A second SIGINT stops at once (KeyboardInterrupt), for when
the step itself hangs.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Optional

# Documented exit codes of `xtts train` after a clean interrupt: the shell convention 128 + signal.
EXIT_CODES: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


class HeldCtrlC:
    """A Ctrl-C while TensorFlow pulls a batch, held until `check()` between batches and raised there
    as KeyboardInterrupt: raised inside an iterator's next(), it had left TensorFlow's executor mid-call
    (glibc aborted: "free(): invalid next size"), or been swallowed by its `__del__` while the command
    went on for minutes. A second Ctrl-C raises at once (a pull that hangs). Installed from the main
    thread over Python's own handler only (one ignored, as a background job inherits it, stays so)."""

    def __init__(self) -> None:
        self.pressed = False
        self._previous: object = None

    def _handle(self, signum: int, frame: Optional[FrameType]) -> None:
        if self.pressed:
            raise KeyboardInterrupt
        self.pressed = True

    def check(self) -> None:
        if self.pressed:
            raise KeyboardInterrupt

    def __enter__(self) -> HeldCtrlC:
        ours = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        if ours and threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
            self._previous = None
        if kind is None:
            self.check()  # pressed during the last pull


class GracefulInterrupt:
    """`said`: told of the first signal at once, for a step that takes a while (the first one
    traces for seconds): without a word, a user pressed Ctrl-C again and lost the step."""

    def __init__(
        self, said: Optional[Callable[[str], None]] = None, *, together: bool = False, saves: bool = True
    ) -> None:
        self.received: Optional[int] = None
        # False where the loop keeps nothing (`xtts profile-step` times steps of a scratch run): it had
        # promised "and saving it" all the same.
        self._saves = saves
        # Set once the loop has ended: a signal then meets the last save and samples, not a step.
        self.ending = False
        self._previous: dict[int, object] = {}
        self._said = said
        # A worker of a cluster: the stop is agreed in the next step's reduction, so it comes a step later.
        self._when = (
            "after the next step, with the cluster's other workers," if together else "once the step under way ends,"
        )

    @property
    def requested(self) -> bool:
        return self.received is not None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.received, 1) if self.received is not None else 0

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.received).name if self.received is not None else ""

    def _handle(self, signum: int, frame: Optional[FrameType]) -> None:
        if self.received == signal.SIGINT and signum == signal.SIGINT:
            raise KeyboardInterrupt(
                "a second Ctrl-C stops at once" + (": nothing saved since the last checkpoint" if self._saves else "")
            )
        first = self.received is None
        self.received = signum
        if first and self._said is not None:
            ctrl_c = signum == signal.SIGINT
            again = f" (a second Ctrl-C stops at once{', without saving' if self._saves else ''})" if ctrl_c else ""
            who = "Ctrl-C" if ctrl_c else self.signal_name
            # After the last step there is no next one to stop after (that had been promised, then unsaid).
            if self._saves:
                said = (
                    "the last step is trained: saving it, then stopping"
                    if self.ending
                    else f"stopping {self._when} and saving it"
                )
            else:
                said = "the last step is trained: stopping" if self.ending else f"stopping {self._when.rstrip(',')}"
            try:
                self._said(f"{who}: {said}{again}")
            except OSError:  # the terminal that sent SIGHUP is gone: the step is saved all the same
                pass

    def __enter__(self) -> GracefulInterrupt:
        # Signal handlers can only be installed from the main thread; elsewhere (e.g. a notebook
        # worker thread) training still runs, without graceful interrupt.
        if threading.current_thread() is threading.main_thread():
            for signum in EXIT_CODES:
                if signum == signal.SIGHUP and signal.getsignal(signum) == signal.SIG_IGN:
                    continue  # `nohup`: the run is to outlive its terminal
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        self._previous.clear()
