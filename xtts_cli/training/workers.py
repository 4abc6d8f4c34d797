"""Multi-worker: the check that every worker of a cluster holds the same step."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from xtts_cli.errors import XttsError

__all__ = ["StepGather", "WorkersDisagreeError"]


class WorkersDisagreeError(XttsError):
    """Multi-worker: the workers are not at the same step (see `StepGather.check`)."""


class StepGather:
    """Every worker's step, gathered by a collective (traced once, so the workers' keys match).

    A worker that cannot read the chief's checkpoints starts over at 0 while the chief resumes, so
    they would run different step counts and the last steps' collectives would wait forever. The
    all-gather is also a barrier: after the final save no worker leaves early.
    """

    def __init__(self, strategy: Any, step_var: Any) -> None:

        @tf.function
        def gather_steps():
            per_replica = strategy.run(lambda: tf.reshape(tf.identity(step_var), [1]))
            return strategy.gather(per_replica, axis=0)

        self.gather = gather_steps

    def check(self, moment: str, run_dir: Any, cluster: Any) -> None:
        """Every worker holds the same step, or `WorkersDisagreeError` with the steps named."""
        steps = [int(v) for v in self.gather().numpy()]
        if len(set(steps)) > 1:
            where = "" if cluster is None else f"; this is {cluster.describe()}"
            raise WorkersDisagreeError(
                f"the workers are at different steps {moment}: {steps} (one per replica, in TF_CONFIG task "
                f"order); non-chief workers resume from the chief's checkpoints in {run_dir.checkpoints}",
                hint="give every worker the same --run-dir on a filesystem they all share (docs/scaling.md)" + where,
            )
