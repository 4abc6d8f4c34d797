"""What the training loop hands its actions: a finished step (`StepEnd`), and the `Hook` an action
implements (controller.py runs them in order)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xtts_cli.training.events import TrainResult

__all__ = ["Hook", "StepEnd"]


@dataclass(frozen=True)
class StepEnd:
    """A finished training step, as the hooks see it."""

    step: int
    losses: dict[str, float]
    batch: Any
    wait: float  # seconds blocked waiting for the batch
    compute: float  # seconds from the call to the loss on the host
    samples: int
    last: bool  # the run's last step (max_steps)
    traced: bool = False  # its call built a graph first (a run's first step in graph mode, a new phase's, a retrace)
    epoch: int = 0  # the epoch it trained in (counted from 0)
    # A stop was asked for during it (Ctrl-C, SIGTERM; a cluster's agreed one): it is saved at once,
    # not validated nor sampled first (a scheduler's grace period may not outlast a validation).
    stopping: bool = False


class Hook:
    """Called by the controller; a hook overrides what it needs."""

    def on_start(self, result: TrainResult) -> None:
        """Before the first step."""

    def on_step(self, end: StepEnd) -> None:
        """After every step, in the order the hooks were given."""

    def on_end(self, result: TrainResult) -> None:
        """After the last step (also after an interrupt), before the result is returned."""
