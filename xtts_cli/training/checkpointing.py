"""A run's checkpoints: restore on start (falling back past unreadable ones), save whole or not at all.

The chief's manager writes the run's checkpoints. Non-chief workers of a cluster restore from the
chief's directory (a shared filesystem) and save into scratch directories: every worker saves, as
TensorFlow's multi-worker guide does it (a save may run collectives, and a worker that skipped it
would leave the others waiting), but the run keeps the chief's set only.
"""

from __future__ import annotations

import glob
import json
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Any, Optional

import tensorflow as tf

from xtts_cli.errors import DISK_FULL_HINT, XttsError, disk_full
from xtts_cli.run.directory import remove_stale_temporaries
from xtts_cli.run.files import RunDir
from xtts_cli.run.restore import (
    DIVERGED,
    LISTED_BY,
    non_finite_weights,
    older_checkpoint,
    restore_listed,
    unread_reason,
)
from xtts_cli.training.events import Noted, Progress

__all__ = ["RunCheckpoints"]


class RunCheckpoints:
    def __init__(
        self,
        objects: dict[str, Any],
        run_dir: RunDir,
        *,
        keep: int,
        is_chief: bool,
        worker_index: int,
        progress: Progress,
    ) -> None:
        """`objects`: what a checkpoint holds, by name (the kind's models and optimizers, the step)."""
        self.objects, self.run_dir, self.progress = list(objects), run_dir, progress
        checkpoint = self.checkpoint = tf.train.Checkpoint(**objects)
        self.worker_index = worker_index
        self.manager = (
            tf.train.CheckpointManager(checkpoint, str(run_dir.checkpoints), max_to_keep=keep) if is_chief else None
        )

    def latest(self) -> Optional[str]:
        """The run's newest complete checkpoint (the chief's directory, on any worker)."""

        if self.manager is not None:
            return self.manager.latest_checkpoint
        return tf.train.latest_checkpoint(str(self.run_dir.checkpoints))

    def restore(self, latest: str) -> None:
        """Restore `latest`, or, when its files cannot be read (cut short, corrupt: a disk that
        filled mid-save, a copy that stopped), the newest earlier checkpoint the run keeps, with a
        note. A checkpoint that reads but does not fit the model is refused: that is the config."""

        kept, first = [latest], ""
        if self.manager is not None:  # those whose files are gone are no fallback to name
            kept += [path for path in reversed(self.manager.checkpoints) if path != latest and _files_of(path)]
        for index, path in enumerate(kept):
            try:
                self._restore(path)
            except (ValueError, AssertionError) as exc:
                said = str(exc).splitlines()[0]
                raise XttsError(
                    f"cannot restore {path}: {said}",
                    # A vocoder's discriminators are no part of the resume check (they may come later, at
                    # adversarial_start_step): a change to them meets the checkpoint here.
                    hint="the checkpoint's discriminators were built with other model.discriminator_channels, "
                    "model.periods or model.discriminator_resolutions: set them back to the run's (its config.yaml); "
                    "--fresh starts a new run"
                    if "discriminators/" in said
                    else "the checkpoint does not fit this model; use --fresh to start a new run",
                ) from None
            except (tf.errors.OpError, IndexError, OSError) as exc:  # a file cut short: "Read less bytes"
                reason = _unread_because(path, exc)
                first = first if index else reason  # the latest's: the one the user expects to be read
                if index + 1 < len(kept):
                    self.progress(
                        Noted(
                            f"checkpoint {path} cannot be read ({reason}); resuming from {kept[index + 1]}, the one before it"
                        )
                    )
                    continue
                mend = (  # files chmod-ed, not cut short: copying them again changes nothing
                    f"make them readable (chmod -R u+r {shlex.quote(str(Path(latest).parent))})"
                    if "permission denied" in first.lower()
                    else "copy the run's checkpoints folder again, whole"
                )
                raise XttsError(
                    f"cannot read {latest}, nor any checkpoint before it: {first}",
                    hint=f"{mend}; or use --fresh to start a new run (the old one is moved aside)",
                ) from None
            if not non_finite_weights(self._weights()):
                return
            if index + 1 < len(kept):  # saved by an older xtts, which did not look: it resumed into the same end
                self.progress(
                    Noted(f"checkpoint {path}: {DIVERGED}; resuming from {kept[index + 1]}, the one before it")
                )
                continue
            raise NonFiniteWeightsError(
                f"cannot resume from {latest}{', nor any checkpoint before it' if index else ''}: {DIVERGED}",
                hint="xtts train --fresh starts the run over (the old one is moved aside), with a lower "
                "training.learning_rate",
            )

    def _restore(self, path: str) -> None:
        """`path` into the run's objects. Every weight of the models must be in it (a `--force`
        resume with a changed model would otherwise go on from weights partly random, and its next
        saves would replace the checkpoints that still held the run). An optimizer whose saved
        moments were kept for another list of trainable weights (`training.freeze` changed, resumed
        with --force) keeps only its step count: its moments start again, said in a note."""
        stale = _stale_optimizers(self.checkpoint, path)
        objects = {name: getattr(self.checkpoint, name) for name in self.objects}
        models = {name: obj for name, obj in objects.items() if _is_model(obj)}
        saved = _saved_parts(path)
        # A part of the run the checkpoint holds nothing of (a GAN vocoder's discriminators, turned on
        # since) starts from random weights, said; a part with some of its weights missing is refused.
        added = [name for name in models if name != "model" and name not in saved]
        restored = {name: obj for name, obj in models.items() if name not in added}
        if older_checkpoint(path):  # layers reached only through the optimizers' lists, as synthesis reads them
            for name, part in restored.items():
                restore_listed(part, path, LISTED_BY.get(name, "optimizer"))
        else:
            _restore_models(restored, path)
        unread = sorted(name for name in saved if name not in objects and name != "save_counter")
        if added or unread:
            self.progress(Noted(_parts_changed(path, added, unread)))
        kept = {name: obj for name, obj in objects.items() if name not in models and name not in stale}
        for name in stale:
            counter = tf.train.Checkpoint()
            # The LR schedule's step: the variable (`iterations` is a quotient under gradient accumulation).
            counter._iterations = getattr(objects[name], "inner_optimizer", objects[name])._iterations
            kept[name] = counter
        tf.train.Checkpoint(**kept).restore(path).expect_partial()
        if stale:
            self.progress(
                Noted(
                    f"the {' and '.join(name.replace('_', ' ') for name in stale)}'s moments were saved for other "
                    "trainable weights (training.freeze changed): they start again from here; the weights and the "
                    "step count are the checkpoint's"
                )
            )

    def _weights(self) -> list[Any]:
        held = [getattr(self.checkpoint, name) for name in self.objects]
        return [v for obj in held if isinstance(getattr(obj, "variables", None), list) for v in obj.variables]

    def _refuse_non_finite(self, number: int) -> None:
        """A step's loss is judged before its update: an update that overflowed (a huge learning rate or
        weight decay) had been saved, then called the last good checkpoint and resumed into the same end."""
        bad = non_finite_weights(self._weights())
        if bad:
            latest = self.latest()
            raise NonFiniteWeightsError(
                f"the weights hold NaN or Inf after step {number} ({len(bad)} of them, e.g. {bad[0]}), although "
                "its loss was finite: an update overflowed; nothing was saved at that step",
                hint="lower training.learning_rate (or training.weight_decay); "
                + (
                    f"the last good checkpoint is {latest} (xtts train resumes from it)"
                    if latest
                    else "no checkpoint was saved: the same command starts the run over"
                ),
            )

    @property
    def best(self) -> Path:
        """Where `keep_best` writes: beside the run's checkpoints, outside the manager's list."""
        return self.run_dir.checkpoints / "best" / "ckpt"

    def keep_best(self) -> None:
        """Write the weights of now, the best validation so far, for `restore_best` (the chief only)."""
        if self.manager is not None:
            self.checkpoint.write(str(self.best))

    def restore_best(self) -> bool:
        """The weights and optimizer state `keep_best` wrote, back in place (the step count and the
        minutes trained stay where the run is: a budget spent stays spent), and its files removed;
        False where none was written."""
        if self.manager is None or not Path(f"{self.best}.index").is_file():
            return False
        counts = ("step", "epoch", "minutes")
        weights = {name: getattr(self.checkpoint, name) for name in self.objects if name not in counts}
        tf.train.Checkpoint(**weights).read(str(self.best)).expect_partial()
        self.forget_best()
        return True

    def forget_best(self) -> None:
        """A run that ends without an early stop keeps its last weights: the best's copy goes."""
        shutil.rmtree(self.best.parent, ignore_errors=True)

    @property
    def early_stop_file(self) -> Path:
        return self.run_dir.checkpoints / "early_stop.json"

    def early_stop_record(self) -> Optional[dict[str, Any]]:
        """What early stopping knew at its last validation (best, its step, validations since), for a
        resume to go on from; None where there is none or it cannot be read."""
        try:
            record = json.loads(self.early_stop_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        keys: dict[str, Any] = {"val_loss": (int, float), "step": int, "since_best": int}
        whole = isinstance(record, dict) and all(isinstance(record.get(k), t) for k, t in keys.items())
        return record if whole else None  # one edited or cut by hand: a new best, as with none

    def keep_early_stop(self, record: Optional[dict[str, Any]]) -> None:
        """Write the record (the chief only), or with None remove it."""
        if self.manager is None:
            return
        if record is None:
            self.early_stop_file.unlink(missing_ok=True)
            return
        from xtts_cli.config.editing import write_atomically

        write_atomically(self.early_stop_file, json.dumps(record) + "\n", backup=False)

    def _complete_files(self) -> set[str]:
        """File names of the checkpoints the pointer lists (complete, by TensorFlow's order of writes)."""

        state = tf.train.get_checkpoint_state(str(self.run_dir.checkpoints))
        prefixes = [Path(path).name for path in (state.all_model_checkpoint_paths if state else [])]
        return {
            path.name
            for path in self.run_dir.checkpoints.iterdir()
            if any(path.name.startswith(p + ".") for p in prefixes)
        }

    def save(self, number: int) -> str:
        self._refuse_non_finite(number)
        if self.manager is None:
            # A non-chief worker: into a local scratch directory deleted right after, so a crash
            # mid-save leaves nothing in the run.
            scratch = tempfile.mkdtemp(prefix=f"xtts-worker{self.worker_index}-checkpoint-")
            try:
                tf.train.CheckpointManager(self.checkpoint, scratch, max_to_keep=1).save(checkpoint_number=number)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            return str(self.run_dir.checkpoints / f"ckpt-{number}")
        try:
            return self.manager.save(checkpoint_number=number)
        except BaseException as error:
            # A save cut short (a full disk): the pointer still names the last complete
            # checkpoint; the partial files of this one go, and the error says what happened.
            remove_stale_temporaries(self.run_dir)
            for partial in self.run_dir.checkpoints.glob(f"ckpt-{number}.*"):
                if partial.name not in self._complete_files():
                    partial.unlink(missing_ok=True)
            full = disk_full(error, f"checkpoint {number} into {self.run_dir.checkpoints}")
            if full is not None:
                latest = self.manager.latest_checkpoint
                room = "once there is room" if full.hint == DISK_FULL_HINT else "once the file can be that large"
                full.lines.append(
                    f"the run keeps {latest}; run the same command to resume from it {room}"
                    if latest
                    else f"no checkpoint was complete yet: {room}, the same command starts the run over"
                )
                raise full from None
            raise


class NonFiniteWeightsError(XttsError):
    """An update turned weights into NaN or Inf although its loss, computed before it, was finite."""

    exit_code = 3


def _saved_parts(path: str) -> set[str]:
    """The names the checkpoint at `path` saved its parts under (model, optimizer, discriminators, ...)."""
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(tf.train.load_checkpoint(path).get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    return {child.local_name for child in graph.nodes[0].children}


def _parts_changed(path: str, added: list[str], unread: list[str]) -> str:
    """The note for parts this config trains that `path` lacks (`added`), and parts it holds that
    this config does not train (`unread`)."""

    def named(names: list[str]) -> str:
        return " and ".join(name.replace("_", " ") for name in names)

    said = []
    if added:
        said.append(f"the {named(added)} start from random weights: {Path(path).name} holds none of them")
    if unread:
        said.append(
            f"{Path(path).name}'s {named(unread)} are not read by this config, and the next checkpoints leave "
            "them out (the run's earlier checkpoints keep them)"
        )
    return "; ".join(said)


def _is_model(obj: Any) -> bool:
    """A network of the run (not an optimizer, nor a counter such as the step)."""
    return not isinstance(obj, tf.Variable) and not hasattr(obj, "iterations")


def _restore_models(models: dict[str, Any], path: str) -> None:
    """`models` from `path`, or a one-line XttsError when a weight of theirs has no value there."""
    status = tf.train.Checkpoint(**models).restore(path)
    try:
        status.assert_existing_objects_matched()
    except AssertionError:
        status.expect_partial()  # no warnings at exit about what the refused restore left unread
        # TensorFlow's own message lists Python objects; the weights' names are what a user reads.
        bound = getattr(getattr(status, "_checkpoint", None), "object_by_proto_id", {})
        matched = {id(obj) for obj in bound.values()}
        weights = [v for model in models.values() for v in [*model.trainable_variables, *model.non_trainable_variables]]
        missing = [v.path for v in weights if id(v) not in matched]
        which = f"{len(missing)} of this model's weights (e.g. {', '.join(missing[:2])})" if missing else "this model"
        raise XttsError(
            f"{path} holds no value for {which}: the model differs from the one that wrote it, and would go on "
            "partly from random weights",
            hint="resume with the settings the run was trained with (its config.yaml), or pass --fresh to start "
            "a new run (the old one is kept as <run>.old-<time>)",
        ) from None
    status.expect_partial()


def _stale_optimizers(checkpoint: Any, path: str) -> list[str]:
    """The names of `checkpoint`'s optimizers whose moments in `path` were saved for another list of
    trainable weights (their count or shapes differ, in order). Read from the checkpoint's object
    graph: a weight the model reached first is stored once under the model's key, so the optimizer's
    list names most of its entries by reference, not by a key of its own."""
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    reader = tf.train.load_checkpoint(path)
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    shapes = reader.get_variable_to_shape_map()

    def child(node_id: int, name: str) -> Optional[int]:
        return next((c.node_id for c in graph.nodes[node_id].children if c.local_name == name), None)

    def saved_shape(node_id: int) -> Optional[list[int]]:
        value = next((a for a in graph.nodes[node_id].attributes if a.name == "VARIABLE_VALUE"), None)
        return list(shapes[value.checkpoint_key]) if value is not None and value.checkpoint_key in shapes else None

    stale = []
    for name, obj in checkpoint._trackable_children().items():
        weights = getattr(obj, "_trainable_variables", None)
        node = child(0, name)
        listed = child(node, "_trainable_variables") if node is not None else None
        if weights is None or not hasattr(obj, "iterations") or listed is None:
            continue  # not an optimizer, or saved without its list (another layout): the plain restore
        entries = sorted((int(c.local_name), c.node_id) for c in graph.nodes[listed].children if c.local_name.isdigit())
        if [saved_shape(node_id) for _, node_id in entries] != [list(w.shape) for w in weights]:
            stale.append(name)
    return stale


def _files_of(path: str) -> bool:
    """Whether any file of the checkpoint `path` (a prefix: ckpt-8.index, ckpt-8.data-...) is there."""
    prefix = Path(path)
    return any(prefix.parent.glob(glob.escape(prefix.name) + ".*"))


def _unread_because(path: str, error: BaseException) -> str:
    """Why the checkpoint `path` did not read: its files gone (deleted by hand, a copy that left them
    out), in those words, not TensorFlow's "Unsuccessful TensorSliceReader constructor"; else its error."""
    return unread_reason(error) if _files_of(path) else "its files are not there"
