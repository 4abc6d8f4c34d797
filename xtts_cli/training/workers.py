"""Multi-worker: the check that every worker of a cluster holds the same step."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from xtts_cli.errors import XttsError

__all__ = [
    "CLIPS",
    "StepGather",
    "WorkersDisagreeError",
    "agree_before_building",
    "clip_list",
    "config_digest",
    "config_slots",
]


class WorkersDisagreeError(XttsError):
    """Multi-worker: the workers are not at the same step (see `StepGather.check`)."""


class StepGather:
    """Every worker's step, gathered by a collective (traced once, so the workers' keys match).

    A worker that cannot read the chief's checkpoints starts over at 0 while the chief resumes, so
    they would run different step counts and the last steps' collectives would wait forever. The
    all-gather is also a barrier: after the final save no worker leaves early.
    """

    def __init__(self, strategy: Any, step_var: Any, config_digest: int = 0, settings: Any = None) -> None:
        # `settings` (`config_slots`): which settings a differing digest comes from, by slot.
        self.slot_keys: list[list[str]] = settings[0] if settings else [[] for _ in range(SLOTS)]
        row = tf.constant([config_digest, *(settings[1] if settings else [0] * SLOTS)], tf.int64)

        @tf.function
        def gather_steps():
            per_replica = strategy.run(lambda: tf.concat([[tf.cast(step_var, tf.int64)], row], 0)[None])
            return strategy.gather(per_replica, axis=0)

        self.gather = gather_steps

    def check(self, moment: str, run_dir: Any, cluster: Any) -> None:
        """Every worker holds the same step and was given the same config, or `WorkersDisagreeError`."""
        try:
            gathered = self.gather().numpy()
        except tf.errors.OpError as error:
            raise _other_cluster(error, cluster) from None
        steps, digests = [int(v) for v in gathered[:, 0]], {int(v) for v in gathered[:, 1]}
        if len(digests) > 1:  # another batch size or step count: wrong figures, or collectives that never meet
            where = "" if cluster is None else f"; this is {cluster.describe()}"
            slots = [slot for slot in range(len(self.slot_keys)) if len({int(v) for v in gathered[:, 2 + slot]}) > 1]
            seen = [key for slot in slots for key in self.slot_keys[slot]]
            differ = sorted({key for key in seen if seen.count(key) == 2})  # both its slots differ
            named = f", differing in {', '.join(differ[:6])}{' ...' if len(differ) > 6 else ''}" if differ else ""
            raise WorkersDisagreeError(
                f"the workers were given different configs ({len(digests)} among {len(steps)} replicas){named}: every setting but the dataset's and the run's paths must be the same on each, and so "
                "must the clips their data lists",
                hint="start every worker with the same config file, the same --set values and a copy of the same data "
                "(docs/scaling.md)" + where,
            )
        if len(set(steps)) > 1:
            where = "" if cluster is None else f"; this is {cluster.describe()}"
            raise WorkersDisagreeError(
                f"the workers are at different steps {moment}: {steps} (one per replica, in TF_CONFIG task "
                f"order); every worker resumes from the chief's checkpoints (this one reads {run_dir.checkpoints})",
                hint="give every worker the same --run-dir on a filesystem they all share (docs/scaling.md)" + where,
            )


def _other_cluster(error: Exception, cluster: Any) -> Exception:
    """TensorFlow's error for workers given clusters of other sizes, as one line; else `error`: both
    had ended in a 90-line traceback from the model's first variable."""
    import re

    sizes = re.search(r"joining a group with size\s*(\d+), but that group has size\s*(\d+)", str(error))
    if sizes is None or cluster is None:
        return error
    counts = sorted({int(sizes[1]), int(sizes[2])})
    return WorkersDisagreeError(
        f"the workers were given different clusters, of {counts[0]} and of {counts[1]} workers; this is "
        f"{cluster.describe()}",
        hint="start every worker with the same --worker-hosts (or TF_CONFIG cluster), each with its own --task-index "
        "(docs/scaling.md)",
    )


def agree_before_building(strategy: Any, cluster: Any, config: Any, clips: list, run_dir: Any) -> None:
    """Multi-worker: the same cluster, config and clips on every worker, checked before the model is
    built. A vocabulary of other size (a transcript with another character) had met the chief's
    weights as a shape mismatch inside the model's first variable, a traceback blamed on the network."""
    gather = StepGather(strategy, tf.constant(0, tf.int64), config_digest(config, clips), config_slots(config, clips))
    gather.check("before the model is built", run_dir, cluster)


# Where each machine keeps its own copy: these may differ between the workers of one run.
_PER_MACHINE = {
    "data": ("dataset_path", "eval_dataset_path", "feature_cache_dir"),
    "training": ("run_dir", "checkpoint_dir", "init_from"),
}


# Slots the settings are hashed into, each a digest of the settings whose names fall in it: a fixed
# width, so that workers of other xtts versions (other settings) still gather rows of one shape.
SLOTS = 256


# The name the clips go by among the settings: a worker whose copy of the data lists other clips
# trains the shards of another list (clip i to worker i mod N): some twice, some never.
CLIPS = "the clips each worker's data lists"


def clip_list(items: Any) -> list:
    """What every worker's copy of the data must agree on, its folders aside: each training clip's
    id (its path in its dataset), speaker, language, length and transcript, in order (a copy whose
    transcripts were edited had trained each clip on other words on each worker, unsaid)."""
    return [[item.id, item.speaker, item.language, item.audio.num_samples, item.text] for item in items]


def _shared_tree(config: Any, clips: Any = None) -> dict:
    """`config`'s settings less the paths each machine may hold its own copies at (the datasets'
    folders, the run directory); with `clips` (`clip_list`), them too."""
    tree = config.model_dump(mode="json")
    if clips is not None:
        tree[CLIPS] = clips
    for section, keys in _PER_MACHINE.items():
        for key in keys:
            tree.get(section, {}).pop(key, None)
    for dataset in tree.get("data", {}).get("datasets", []) or []:
        dataset.pop("path", None)
    return tree


def _number(value: Any) -> int:
    import hashlib
    import json

    return int(hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:15], 16)


def config_digest(config: Any, clips: Any = None) -> int:
    """A number for `config` (and the clips) that every worker of a cluster must share (`_shared_tree`)."""
    return _number(_shared_tree(config, clips))


def config_slots(config: Any, clips: Any = None) -> tuple[list[list[str]], list[int]]:
    """(the settings in each slot, by name; each slot's digest): which settings two workers'
    configs differ in, where `config_digest` says only that they do. Two tables of SLOTS // 2, each
    setting hashed into one slot of each with its own salt: a setting is named when both its
    slots differ, so one that shares a slot with the one that differs is not named with it."""
    half = SLOTS // 2
    names: list[list[str]] = [[] for _ in range(SLOTS)]
    values: list[dict] = [{} for _ in range(SLOTS)]
    for section, body in _shared_tree(config, clips).items():
        for key, value in body.items() if isinstance(body, dict) else [("", body)]:
            name = f"{section}.{key}" if key else section
            for table in (0, 1):
                slot = table * half + _number([table, name]) % half
                names[slot].append(name)
                values[slot][name] = value
    return names, [_number(value) if value else 0 for value in values]
