"""A built network's weights from a run's checkpoint (`restore_run`: the latest, or a step the run
keeps, falling back past one that cannot be read). Building the network is its model kind's:
`xtts_cli.inference.loading` builds and restores an acoustic run or a vocoder run."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import tensorflow as tf

from xtts_cli.errors import XttsError
from xtts_cli.model.transfer import child_node, listed_variable_keys, object_graph
from xtts_cli.run.directory import checkpoints_to_restore
from xtts_cli.run.files import RunDir


def older_checkpoint(checkpoint: str) -> bool:
    """Whether `checkpoint` reaches the model's layers only through the optimizer's variable list, as
    xtts wrote them before every layer was reachable from the model (`restore_model` reads those)."""
    graph = object_graph(tf.train.load_checkpoint(checkpoint))
    model_node = child_node(graph, 0, "model")
    # A vocoder's checkpoints reach its blocks by name since they became a LayerStack; older ones
    # (tests/data/legacy_vocoder_run) through the optimizer's list, as older acoustic ones do.
    current = any(child_node(graph, model_node, name) is not None for name in ("decoder_layers", "blocks"))
    return model_node is not None and not current


def restore_model(model, checkpoint: str) -> int:
    """Load the weights of `checkpoint` (a path prefix) into `model`; returns the step it was saved at.

    Checkpoints written since every layer became reachable from the model reach all its weights
    through the model's node of the checkpoint's object graph, and restoring the model alone
    checks that each of its weights was found. Older ones reached the layers kept in Python lists
    only through the optimizer's variable list (`optimizer/_trainable_variables/<i>`, in the
    model's variable order): those are read from there, after checking that every shape fits; a
    checkpoint that fits neither way is refused.
    """

    reader = tf.train.load_checkpoint(checkpoint)
    graph = object_graph(reader)
    model_node = child_node(graph, 0, "model")
    if model_node is not None and not older_checkpoint(checkpoint):
        step = tf.Variable(0, dtype=tf.int64)
        # Weights a model gained since (a duration decoder's mel statistics) that an older run's
        # checkpoint lacks keep their initial values; every other weight must still be found.
        absent = [name for name in model.weights_added_since_first if child_node(graph, model_node, name) is None]
        target = model
        if absent:
            children = model._trackable_children()
            target = tf.train.Checkpoint(**{name: child for name, child in children.items() if name not in absent})
        try:
            status = tf.train.Checkpoint(model=target, step=step).restore(checkpoint)
            status.assert_existing_objects_matched()
        except (AssertionError, ValueError) as exc:  # a weight missing, or one of another shape
            raise XttsError(
                f"{checkpoint} does not hold every weight of this run's model ({str(exc).splitlines()[0][:160]})",
                hint="the run's config.yaml no longer describes the model that was trained (its model section "
                "edited?): put back the settings it trained with, or train a new run",
            ) from None
        status.expect_partial()  # the optimizer's state is not needed to speak
        return int(step.numpy())
    restore_listed(model, checkpoint)
    step_key = "step/.ATTRIBUTES/VARIABLE_VALUE"
    return int(reader.get_tensor(step_key)) if step_key in reader.get_variable_to_shape_map() else 0


# The optimizer whose variable list holds each part's weights in an older checkpoint.
LISTED_BY = {"model": "optimizer", "discriminators": "discriminator_optimizer"}


def restore_listed(model, checkpoint: str, optimizer: str = "optimizer") -> None:
    """`model`'s trainable weights from `optimizer`'s variable list in an older `checkpoint`, after
    checking that every shape fits (else an XttsError)."""
    reader = tf.train.load_checkpoint(checkpoint)
    shapes = reader.get_variable_to_shape_map()
    variables = model.trainable_variables
    keys = listed_variable_keys(object_graph(reader), optimizer)
    unfit = [
        variable.path
        for variable, key in zip(variables, keys)
        if key is None or list(shapes[key]) != list(variable.shape)
    ]
    if unfit or len(keys) != len(variables):
        raise XttsError(
            f"{checkpoint} was written by an older xtts and its weights do not fit this version's model "
            f"({len(unfit)} of {len(variables)} weights differ, {len(keys)} stored)",
            hint="the run's config.yaml no longer describes the model it trained (its model section edited?): put "
            "back the settings it trained with, or train a new run",
        )
    for variable, key in zip(variables, keys):
        variable.assign(reader.get_tensor(key))


def non_finite_weights(variables) -> list[str]:
    """The paths of those floating-point `variables` holding a NaN or an Inf: one device sync for all."""
    floats = [v for v in variables if tf.as_dtype(v.dtype).is_floating]
    if not floats:
        return []
    finite = tf.stack([tf.reduce_all(tf.math.is_finite(v)) for v in floats]).numpy()
    return [v.path for v, ok in zip(floats, finite) if not ok]


DIVERGED = "its weights hold NaN or Inf, from a training that diverged before it was saved"


def restore_run(
    model,
    run: RunDir,
    run_dir: Path,
    step: Optional[int] = None,
    notes: Optional[list[str]] = None,
    save_step: Optional[int] = None,
) -> int:
    """Restore the run's latest checkpoint (or `step`'s) into `model`; when the latest cannot be read,
    the newest one before it that can, said in `notes`. The latest is the one the pointer file names,
    else (the pointer gone, damaged or stale, as training itself recovers) the newest complete one.
    Returns the step restored."""

    complete, gone = checkpoints_to_restore(run, run_dir, step, save_step)
    pointed = run.pointed_checkpoint() if step is None else None
    latest = pointed or complete[0]
    if gone and notes is not None:
        notes.append(
            f"{run_dir}: its pointer names {gone}, whose files are not all there; {Path(latest).name}, "
            "the newest whole checkpoint, is restored"
        )
    tried: list[str] = []
    reason = ""
    for _ in range(2):  # a run being trained removes its oldest checkpoints as it saves: look again once
        for path in [latest, *complete]:
            if path in tried:
                continue
            tried.append(path)
            try:
                restored = restore_model(model, path)
            except (tf.errors.OpError, IndexError, OSError) as exc:
                reason = reason or unread_reason(exc)  # the latest's: the one the user expects to load
                continue
            if non_finite_weights(model.weights):  # it had spoken silence, exit 0
                reason = reason or DIVERGED
                continue
            if path != latest and notes is not None:
                notes.append(
                    f"{run_dir}: {Path(latest).name} "
                    f"{'cannot be used' if reason == DIVERGED else 'cannot be read'} ({reason}); "
                    f"restored {Path(path).name}, the newest before it that reads"
                )
            return restored
        complete = run.complete_checkpoints() if step is None else []
        latest = run.pointed_checkpoint() or (complete[0] if complete else latest)
    raise _unread(tried[0], reason, asked=step is not None)


def unread_reason(error: BaseException, limit: int = 160) -> str:
    """Why a checkpoint did not read, in one line: TensorFlow's first, its "TensorBundle at PATH shard
    0 (N bytes): " prefix left out (the error names the checkpoint), cut at a word, not mid-figure (a
    damaged file's "stored 3214191365 vs. calculated " had been all its reason said)."""
    import re

    said = re.sub(r"^TensorBundle at \S+ shard \d+ \(\d+ bytes\): ", "", str(error).strip().split("\n")[0])
    if "Checksum does not match" in said:
        return "its bytes do not match the checksums saved with them (damaged on disk or in a copy)"
    return said if len(said) <= limit else said[:limit].rsplit(" ", 1)[0] + " ..."


def _unread(first: str, reason: str, *, asked: bool) -> XttsError:
    """The error of a run none of whose checkpoints tried (`first` the latest, or the step `asked`
    for, alone) can be read, with what to do about `reason`."""
    if reason == DIVERGED:
        return XttsError(
            f"cannot speak with {first}{'' if asked else ', nor any checkpoint before it'}: {reason}",
            hint="train the run again from its start (xtts train --fresh) with a lower training.learning_rate",
        )
    if asked and "permission denied" not in reason.lower():  # the one asked for, alone: no other tried
        return XttsError(
            f"cannot read {first}: {reason}",
            hint="its files are damaged (cut short in a copy?); leave the step out for the newest checkpoint that "
            "reads, or name another step the run keeps",
        )
    if "permission denied" in reason.lower():  # files chmod-ed, not cut short: copying them again changes nothing
        import shlex

        hint = f"make them readable (chmod -R u+r {shlex.quote(str(Path(first).parent))})"
    else:
        hint = (
            "a run being trained may have just replaced them: try again; a copied run: copy its checkpoints/ "
            "folder again, whole; else xtts train --fresh starts it over"
        )
    return XttsError(f"cannot read {first}, nor any checkpoint before it: {reason}", hint=hint)
