"""A run's network, built by its model kind (`xtts_cli.kinds`) from its config and vocabulary and
restored from its checkpoint: an acoustic run's (`load_run`) or a vocoder run's (`load_vocoder`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import tensorflow as tf

from xtts_cli.config.schema import DataConfig
from xtts_cli.data.features import MelFeatures
from xtts_cli.errors import XttsError
from xtts_cli.model.transfer import child_node, listed_variable_keys, object_graph
from xtts_cli.run.files import RunDir, read_run
from xtts_cli.speech.vocoding import GRIFFIN_LIM, Vocoder


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
    # A vocoder's checkpoints reach its blocks by name since they became a LayerStack; older ones
    # (tests/data/legacy_vocoder_run) through the optimizer's list, as older acoustic ones do.
    current = any(child_node(graph, model_node, name) is not None for name in ("decoder_layers", "blocks"))
    if model_node is not None and current:
        step = tf.Variable(0, dtype=tf.int64)
        # Weights a model gained since (a duration decoder's mel statistics) that an older run's
        # checkpoint lacks keep their initial values; every other weight must still be found.
        absent = [name for name in model.weights_added_since_first if child_node(graph, model_node, name) is None]
        target = model
        if absent:
            children = model._trackable_children()
            target = tf.train.Checkpoint(**{name: child for name, child in children.items() if name not in absent})
        status = tf.train.Checkpoint(model=target, step=step).restore(checkpoint)
        try:
            status.assert_existing_objects_matched()
        except AssertionError as exc:
            raise XttsError(
                f"{checkpoint} does not hold every weight of this run's model ({str(exc).splitlines()[0][:160]})",
                hint="the run's config.yaml no longer describes the model that was trained; retrain with --fresh",
            ) from None
        status.expect_partial()  # the optimizer's state is not needed to speak
        return int(step.numpy())
    shapes = reader.get_variable_to_shape_map()
    variables = model.trainable_variables
    keys = listed_variable_keys(graph)
    unfit = [
        variable.path
        for variable, key in zip(variables, keys)
        if key is None or list(shapes[key]) != list(variable.shape)
    ]
    if unfit or len(keys) != len(variables):
        raise XttsError(
            f"{checkpoint} was written by an older xtts and its weights do not fit this version's model "
            f"({len(unfit)} of {len(variables)} weights differ, {len(keys)} stored)",
            hint="it cannot be used for synthesis; train again with --fresh",
        )
    for variable, key in zip(variables, keys):
        variable.assign(reader.get_tensor(key))
    step_key = "step/.ATTRIBUTES/VARIABLE_VALUE"
    return int(reader.get_tensor(step_key)) if step_key in shapes else 0


def restore_run(model, run: RunDir, run_dir: Path, step: Optional[int] = None) -> int:
    """Restore the run's latest checkpoint (or `step`'s) into `model`; when the latest cannot be read,
    the newest one before it that can. Returns the step restored."""

    latest = tf.train.latest_checkpoint(str(run.checkpoints))
    if step is not None and latest is not None:
        latest = str(run.checkpoints / f"ckpt-{step}")
        if not Path(latest + ".index").is_file():
            steps = sorted(int(index.name[5:-6]) for index in run.checkpoints.glob("ckpt-*.index"))
            raise XttsError(
                f"{run.checkpoints} keeps no checkpoint of step {step}",
                hint=f"it keeps steps {', '.join(map(str, steps))} (training.save_step, training.keep_checkpoints)",
            )
    if latest is None:
        raise XttsError(
            f"{run.checkpoints} holds no checkpoint yet", hint="train first: xtts train --run-dir " + str(run_dir)
        )
    kept: list[str] = [latest]
    state = tf.train.get_checkpoint_state(str(run.checkpoints))
    if step is None and state is not None:  # the latest unreadable: the newest one before it that reads
        kept += [str(path) for path in reversed(state.all_model_checkpoint_paths) if path != latest]
    for index, path in enumerate(kept):
        try:
            return restore_model(model, path)
        except (tf.errors.OpError, IndexError, OSError) as exc:
            if index + 1 == len(kept):
                raise XttsError(
                    f"cannot read {path}, nor any checkpoint before it: {str(exc).splitlines()[0]}",
                    hint="train again: xtts train --fresh",
                ) from None
    raise AssertionError("unreachable: the loop returns or raises")


def load_run(run_dir: Path, step: Optional[int] = None):
    """(config, tokenizer, model with the latest checkpoint restored, step, run) from an acoustic
    run directory; `step`: that step's checkpoint instead of the latest (one the run still keeps)."""
    from xtts_cli.data.text import Tokenizer
    from xtts_cli.kinds import kind_for

    config, run = read_run(run_dir)
    kind = kind_for(config)
    if not kind.speaks:
        raise XttsError(
            f"{run_dir} is a {config.model.kind} run, not an acoustic model: it reads no text",
            hint="pass the acoustic model's run as --run-dir"
            + (f" and this one as --vocoder {run_dir}" if kind.vocodes else ""),
        )
    if not run.vocab.is_file():
        raise XttsError(
            f"{run_dir} is not an xtts run directory (no vocab.json)",
            hint="pass the --run-dir of an `xtts train` run, e.g. runs/tiny-cpu",
        )
    tokenizer = Tokenizer.load(run.vocab)
    model = kind.build_network(config, tokenizer)
    restored = restore_run(model, run, run_dir, step)
    return config, tokenizer, model, restored, run


def load_vocoder(spec: Optional[str | Path], data: DataConfig, *, acoustic_run: str = "the acoustic run") -> Vocoder:
    """`spec`: "griffin-lim" (or None), or a vocoder run directory whose features must be `data`'s
    (else the load stops with both named): a `Vocoder`, log-mel [frames, n_mels] to samples."""
    if spec is None or str(spec) == GRIFFIN_LIM:
        return Vocoder(GRIFFIN_LIM, data)
    from xtts_cli.kinds import kind_for

    path = Path(spec)
    config, run = read_run(path)
    if not kind_for(config).vocodes:
        raise XttsError(
            f"--vocoder {spec}: that run is not a vocoder (model.kind {config.model.kind})",
            hint=f"pass a run trained with model.kind: vocoder (configs/vocoder-cpu.yaml), or {GRIFFIN_LIM}",
        )
    differ = MelFeatures.of(data).transform_mismatch(MelFeatures.of(config.data))
    if differ:
        raise XttsError(
            f"--vocoder {spec} was trained on other features than {acoustic_run}: {'; '.join(differ)} "
            f"({acoustic_run} first)",
            hint="train the vocoder with the acoustic run's data section (rate, hop, mels), or use "
            f"--vocoder {GRIFFIN_LIM}",
        )
    generator = kind_for(config).build_network(config, None)
    step = restore_run(generator, run, path)
    return Vocoder(str(spec), config.data, generator, step)
