"""Start a model from another run's checkpoint: every weight matched by name and shape, tables
grown by a larger vocabulary kept in their first rows (`xtts train --init-from`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import keras
import numpy as np
import tensorflow as tf

from xtts_cli.errors import XttsError

__all__ = ["Transferred", "child_node", "listed_variable_keys", "object_graph", "transfer_weights"]


@dataclass(frozen=True)
class Transferred:
    """What `transfer_weights` moved: tensors whose every value came from the checkpoint, tables
    whose first rows did (grown by the new vocabulary, languages or speakers), and what started new."""

    kept: list[str]
    grown: list[str]
    new: list[str]

    @property
    def total(self) -> int:
        return len(self.kept) + len(self.grown) + len(self.new)


def transfer_weights(parts: dict[str, Any], checkpoint: str, listed_by: Optional[dict[str, str]] = None) -> Transferred:
    """Load `checkpoint`'s weights into `parts` (the new run's models by the name its checkpoint
    saves them under: "model", "discriminators"), matched by name and shape.

    `listed_by` names, for a part, the optimizer whose variable list an older checkpoint reached
    that part's weights through (written before its layers were held as attributes, see
    `LayerStack`): a weight not found by name is read from there, at its index in the part's
    trainable variables, when the list is as long as those.

    A tensor stored under the same name with the same shape is copied whole. A table stored with
    fewer rows and otherwise the same shape (the token, language and speaker tables of a vocabulary
    grown by `Tokenizer.grown`, which keeps the stored rows' ids) gets them as its first rows; the
    rest keep their initial values, as does a tensor the checkpoint lacks. Any other difference in
    shape is an error: the config check (`xtts_cli.training.parent`) refuses a model of another size first.
    """
    from tensorflow.python.checkpoint import graph_view

    reader = tf.train.load_checkpoint(checkpoint)
    stored = reader.get_variable_to_shape_map()
    graph = object_graph(reader)
    # A variable is stored once, under the shortest path to it when it was saved (often through the
    # optimizer's list); its node in the stored object graph is reached by the model's own names.
    root = tf.train.Checkpoint(**parts)  # the view holds it weakly
    listed: dict[int, Optional[str]] = {}
    for part, optimizer in (listed_by or {}).items():
        variables = parts[part].trainable_variables if part in parts else []
        keys = listed_variable_keys(graph, optimizer)
        if len(keys) == len(variables):
            listed.update((id(variable), key) for variable, key in zip(variables, keys))
    objects, paths = graph_view.ObjectGraphView(root).breadth_first_traversal()
    kept: list[str] = []
    grown: list[str] = []
    new: list[str] = []
    diverged: list[str] = []
    for trackable in objects:
        if not isinstance(trackable, (tf.Variable, keras.Variable)):
            continue
        names = [reference.name for reference in paths[trackable]]
        name, key = "/".join(names), _stored_key(graph, names)
        if key is None:
            key = listed.get(id(trackable))
        shape = list(trackable.shape)
        if key is None or key not in stored:
            new.append(name)
            continue
        had = list(stored[key])
        value = reader.get_tensor(key)
        if np.issubdtype(value.dtype, np.floating) and not np.isfinite(value).all():
            diverged.append(name)
        if had == shape:
            trackable.assign(value)
            kept.append(name)
        elif len(had) == len(shape) and had[1:] == shape[1:] and had[0] < shape[0]:
            rows = tf.concat([tf.cast(value, trackable.dtype), trackable[had[0] :]], axis=0)
            trackable.assign(rows)
            grown.append(name)
        else:
            raise XttsError(
                f"{checkpoint}: {name} is {had} there and {shape} in this model",
                hint="start from a base of the same model section (sizes) as this config",
            )
    if diverged:  # the new run had trained NaN from its first step, "the last good checkpoint is none"
        raise _diverged(checkpoint, diverged)
    if not kept and not grown:
        raise XttsError(
            f"{checkpoint} holds none of this model's weights under the names this version saves them by",
            hint="start from a base trained with this version of xtts, of the same model kind",
        )
    return Transferred(kept, grown, new)


def _diverged(checkpoint: str, diverged: list[str]) -> XttsError:
    """The refusal of a base checkpoint whose weights hold NaN or Inf, offering the newest earlier one whose
    weights are finite."""
    import re
    from pathlib import Path

    saved = Path(checkpoint)
    number = re.fullmatch(r"ckpt-(\d+)", saved.name)
    earlier = sorted(
        (int(m.group(1)), str(saved.parent / m.group(0)))
        for index in saved.parent.glob("ckpt-*.index")
        if (m := re.fullmatch(r"ckpt-(\d+)", index.stem)) and number and int(m.group(1)) < int(number.group(1))
    )
    whole = next((path for _, path in reversed(earlier) if _finite(path)), None)
    return XttsError(
        f"{checkpoint} holds NaN or Inf weights ({len(diverged)}, e.g. {diverged[0]}): its training diverged "
        "before it was saved",
        hint=f"start from an earlier checkpoint of that run (--init-from {whole}) or from another run"
        if whole
        else "start from another run: that run keeps no checkpoint before it whose weights are finite",
    )


def _finite(checkpoint: str) -> bool:
    """Whether every floating-point tensor `checkpoint` holds is finite (False where it cannot be read)."""
    try:
        reader = tf.train.load_checkpoint(checkpoint)
        values = (reader.get_tensor(key) for key in reader.get_variable_to_shape_map())
        return all(np.isfinite(v).all() for v in values if np.issubdtype(np.asarray(v).dtype, np.floating))
    except (tf.errors.OpError, ValueError):
        return False


def object_graph(reader):
    """The object graph a checkpoint was saved with (which object holds which, by local names)."""
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    return graph


def child_node(graph, node: Optional[int], name: str) -> Optional[int]:
    """The node `node` holds under `name` in a checkpoint's object graph, or None."""
    if node is None:
        return None
    return next((ref.node_id for ref in graph.nodes[node].children if ref.local_name == name), None)


def _stored_key(graph, names: list[str]) -> Optional[str]:
    """The checkpoint key of the variable the root reaches through `names`, or None."""
    node: Optional[int] = 0
    for name in names:
        node = child_node(graph, node, name)
    if node is None:
        return None
    keys = [a.checkpoint_key for a in graph.nodes[node].attributes if a.name == "VARIABLE_VALUE"]
    return keys[0] if keys else None


def listed_variable_keys(graph, optimizer: str = "optimizer") -> list[Optional[str]]:
    """Checkpoint keys of `optimizer`'s variable list, in order: how a checkpoint written before a
    model's layers were all reachable by name holds the rest (an older run's).

    A variable is stored once, under one of the paths that reach it (the shortest); the
    checkpoint's object graph says which key holds each entry of the list.
    """
    listed = child_node(graph, child_node(graph, 0, optimizer), "_trainable_variables")
    if listed is None:
        return []
    keys: list[Optional[str]] = []
    for index in range(len(graph.nodes[listed].children)):
        node = child_node(graph, listed, str(index))
        attributes = [a.checkpoint_key for a in graph.nodes[node].attributes if a.name == "VARIABLE_VALUE"]
        keys.append(attributes[0] if attributes else None)
    return keys
