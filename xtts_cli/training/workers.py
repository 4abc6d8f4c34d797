"""Multi-worker: the check that every worker of a cluster holds the same step."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from xtts_cli.errors import XttsError

__all__ = ["StepGather", "WorkersDisagreeError", "config_digest"]


class WorkersDisagreeError(XttsError):
    """Multi-worker: the workers are not at the same step (see `StepGather.check`)."""


class StepGather:
    """Every worker's step, gathered by a collective (traced once, so the workers' keys match).

    A worker that cannot read the chief's checkpoints starts over at 0 while the chief resumes, so
    they would run different step counts and the last steps' collectives would wait forever. The
    all-gather is also a barrier: after the final save no worker leaves early.
    """

    def __init__(self, strategy: Any, step_var: Any, config_digest: int = 0) -> None:
        digest = tf.constant(config_digest, tf.int64)

        @tf.function
        def gather_steps():
            per_replica = strategy.run(lambda: tf.stack([tf.cast(step_var, tf.int64), digest])[None])
            return strategy.gather(per_replica, axis=0)

        self.gather = gather_steps

    def check(self, moment: str, run_dir: Any, cluster: Any) -> None:
        """Every worker holds the same step and was given the same config, or `WorkersDisagreeError`."""
        gathered = self.gather().numpy()
        steps, digests = [int(v) for v in gathered[:, 0]], {int(v) for v in gathered[:, 1]}
        if len(digests) > 1:  # another batch size or step count: wrong figures, or collectives that never meet
            where = "" if cluster is None else f"; this is {cluster.describe()}"
            raise WorkersDisagreeError(
                f"the workers were given different configs ({len(digests)} of them among {len(steps)} replicas): "
                "every setting but the dataset's and the run's paths must be the same on each",
                hint="start every worker with the same config file and the same --set values (docs/scaling.md)" + where,
            )
        if len(set(steps)) > 1:
            where = "" if cluster is None else f"; this is {cluster.describe()}"
            raise WorkersDisagreeError(
                f"the workers are at different steps {moment}: {steps} (one per replica, in TF_CONFIG task "
                f"order); non-chief workers resume from the chief's checkpoints in {run_dir.checkpoints}",
                hint="give every worker the same --run-dir on a filesystem they all share (docs/scaling.md)" + where,
            )


# Where each machine keeps its own copy: these may differ between the workers of one run.
_PER_MACHINE = {
    "data": ("dataset_path", "eval_dataset_path", "feature_cache_dir"),
    "training": ("run_dir", "checkpoint_dir", "init_from"),
}


def config_digest(config: Any) -> int:
    """A number for `config` that every worker of a cluster must share: its settings less the paths
    each machine may hold its own copies at (the datasets' folders, the run directory)."""
    import hashlib
    import json

    tree = config.model_dump(mode="json")
    for section, keys in _PER_MACHINE.items():
        for key in keys:
            tree.get(section, {}).pop(key, None)
    for dataset in tree.get("data", {}).get("datasets", []) or []:
        dataset.pop("path", None)
    text = json.dumps(tree, sort_keys=True, default=str)
    return int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)
