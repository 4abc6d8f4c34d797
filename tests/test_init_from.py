"""A run started from another run's weights (`training.init_from`, `xtts train --init-from`): what is
kept, what grows, what is refused, what is recorded, what resumes and what stays frozen."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
import yaml
from training_support import lock_held_elsewhere, tiny_config

from xtts_cli.config.loading import resolve_config
from xtts_cli.errors import XttsError
from xtts_cli.training.controller import Controller, Hook
from xtts_cli.training.events import Noted
from xtts_cli.training.metrics import read_metrics
from xtts_cli.training.trainer import Trainer

SAMPLE = Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample"
PERSIAN_DATA = Path(__file__).parent / "data" / "persian"
# Written before the vocoder's layers were reachable by name (tests/data/README.md).
LEGACY_VOCODER = Path(__file__).parent / "data" / "legacy_vocoder_run"
PART_LISTS = (("model", "blocks"), ("discriminators", "judges"))

pytestmark = pytest.mark.slow


def _config(root: Path, name: str, **changes):
    """The tiny duration-decoder config on the bundled sample, with `changes` ("section.key": value)."""
    path = tiny_config(root, "  max_steps: 4\n  val_step: 4\n", name=f"{name}.yaml")
    settings = yaml.safe_load(path.read_text(encoding="utf-8"))
    settings["data"]["dataset_path"] = str(SAMPLE)
    settings["model"]["decoder"] = "duration"
    if changes.get("model.kind") == "vocoder":
        settings["model"] = {}  # a vocoder's model section has keys of its own
    for dotted, value in changes.items():
        section, key = dotted.split(".")
        settings[section][key] = value
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return resolve_config(path, {}).config


def _train(config, run_dir: Path, *, steps: bool = True):
    """Train `config` into `run_dir`: (trainer, the notes it printed, its result, the model's weights as
    the loop started: after any transfer, before the first step). `steps=False`: the run ends there,
    as early stopping ends one, having set up, transferred and validated (no training step to trace)."""
    events: list = []
    trainer = Trainer(config, run_dir=run_dir, progress=events.append)
    start = _AtStart(trainer, stop=not steps)
    result = Controller(trainer, extra_hooks=[start]).run()
    return trainer, [event.message for event in events if isinstance(event, Noted)], result, start.values


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("base")
    _train(_config(root, "base"), root / "run")
    return root / "run"


class _AtStart(Hook):
    """Every weight of the run's models as the loop starts, by id; with `stop`, the run ends there (after
    the standard hooks' start: a run started from another has validated)."""

    def __init__(self, trainer: Trainer, stop: bool = False) -> None:
        self.trainer, self.stop = trainer, stop
        self.values: dict[int, np.ndarray] = {}

    def on_start(self, result) -> None:
        models = self.trainer.parts.models
        parts = [models.model, getattr(models, "discriminators", None)]
        self.values = {id(v): v.numpy().copy() for part in parts if part is not None for v in part.variables}
        result.early_stopped = self.stop


def test_unchanged_data_keeps_every_tensor_and_the_first_validation_loss(base, tmp_path):
    reader = tf.train.load_checkpoint(str(base / "checkpoints" / "ckpt-4"))
    config = _config(tmp_path, "same", **{"training.init_from": str(base), "training.max_steps": 2})
    # Ended before its first step: what it kept and its first validation are all this test reads.
    trainer, notes, result, at_start = _train(config, tmp_path / "run", steps=False)
    assert [note for note in notes if note.startswith("from ")] == [n for n in result.notes if n.startswith("from ")]
    # Bit for bit: every weight the checkpoint holds as the base's holds it (found by the model's names;
    # the dropout layers' random-number states are not checkpointed by either).
    from tensorflow.python.checkpoint import graph_view

    from xtts_cli.model.transfer import _stored_key, object_graph

    graph, model = object_graph(reader), trainer.parts.models.model
    root = tf.train.Checkpoint(model=model)
    objects, paths = graph_view.ObjectGraphView(root).breadth_first_traversal()
    names = {id(o): [r.name for r in paths[o]] for o in objects}
    saved = [variable for variable in model.variables if id(variable) in names]
    kept = next(note for note in notes if note.startswith(f"from {base} step 4"))
    assert kept.endswith(f"kept {len(saved)} of {len(saved)} tensors; nothing new"), kept
    assert len(saved) > 100
    for variable in saved:
        key = _stored_key(graph, names[id(variable)])
        assert key is not None and np.array_equal(at_start[id(variable)], reader.get_tensor(key)), variable.path
    base_val = next(
        r["val_loss"] for r in read_metrics(base / "metrics.jsonl") if r.get("step") == 4 and "val_loss" in r
    )
    first = next(r["val_loss"] for r in read_metrics(tmp_path / "run" / "metrics.jsonl") if "val_loss" in r)
    assert abs(first - base_val) < 1e-4
    record = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert record["parent"] == {"run": str(base), "step": 4, "checkpoint": str(base / "checkpoints" / "ckpt-4")}


@pytest.fixture(scope="module")
def persian(base, tmp_path_factory):
    """The English base adapted to the Persian clips (a new language, speaker and script), its
    speaker encoder frozen; (trainer, notes, weights at the start, run directory)."""
    root = tmp_path_factory.mktemp("persian")
    config = _config(
        root,
        "fa",
        **{
            "data.dataset_path": str(PERSIAN_DATA),
            "data.language": "fa",
            "data.eval_fraction": 0.25,
            "training.init_from": str(base / "checkpoints" / "ckpt-4"),
            "training.freeze": ["speaker_encoder"],
            # No validation at step 4 (its pictures run the model eagerly): none of its tests reads one.
            "training.val_step": 1000,
        },
    )
    trainer, notes, _, at_start = _train(config, root / "run")
    return trainer, notes, at_start, root / "run", config


def test_a_new_language_grows_the_tables_and_keeps_the_bases_rows(base, persian):
    trainer, notes, at_start, run, _ = persian
    base_vocab = json.loads((base / "vocab.json").read_text(encoding="utf-8"))
    vocab = json.loads((run / "vocab.json").read_text(encoding="utf-8"))
    added = len(vocab["characters"]) - len(base_vocab["characters"])
    assert vocab["characters"][: len(base_vocab["characters"])] == base_vocab["characters"] and added > 10
    assert vocab["languages"] == ["en", "fa"] and vocab["speakers"] == [*base_vocab["speakers"], "persian"]
    line = next(note for note in notes if note.startswith(f"from {base / 'checkpoints' / 'ckpt-4'} step 4"))
    # each new symbol and speaker named, so a stray mark in a transcript is seen joining the vocabulary
    assert line.endswith("), language fa, 1 speaker (persian)") and f"; new: {added} symbols (" in line, line
    named = line.split(f"; new: {added} symbols (")[1].split("), language fa")[0].split(" ")
    shown = [c if c.isprintable() and c.strip() else f"U+{ord(c):04X}" for c in vocab["characters"][-added:]]
    assert named == shown[:24] + (["and", f"{added - 24}", "more"] if added > 24 else []), named
    reader = tf.train.load_checkpoint(str(base / "checkpoints" / "ckpt-4"))
    model = trainer.parts.models.model
    stored = {k: reader.get_tensor(k) for k in reader.get_variable_to_shape_map() if "VARIABLE_VALUE" in k}
    old_rows = len(base_vocab["characters"]) + 1
    table = at_start[id(model.token_embedding.embeddings)]
    assert any(np.array_equal(table[:old_rows], value) for value in stored.values() if value.shape == (old_rows, 32))
    speakers = len(base_vocab["speakers"])
    assert np.array_equal(
        at_start[id(model.speaker_centroids)][:speakers], stored["model/speaker_centroids/.ATTRIBUTES/VARIABLE_VALUE"]
    )
    assert not at_start[id(model.speaker_centroids)][speakers:].any()  # the new voice's starts empty
    assert not at_start[id(model.language_embedding.embeddings)].any()  # the base read English with no language vector
    record = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert record["parent"]["step"] == 4 and record["parent"]["run"] == str(base)


def test_frozen_parts_do_not_move_and_the_rest_trains(persian):
    trainer, _, at_start, _, _ = persian
    model = trainer.parts.models.model
    frozen = model.part_variables()["speaker_encoder"]
    assert frozen and not any(variable.trainable for variable in frozen)
    for variable in frozen:
        assert np.array_equal(variable.numpy(), at_start[id(variable)]), variable.path
    moved = [v.path for v in model.part_variables()["decoder"] if not np.array_equal(v.numpy(), at_start[id(v)])]
    assert len(moved) > 10


def test_the_command_to_listen_is_a_sentence_of_the_runs_language_and_speaks_as_printed(persian, runner):
    import shlex

    from xtts_cli.cli.app import app

    trainer, _, _, run, _ = persian
    # Its first validation clip's text, in its language: a sentence the run can spell whatever it
    # learnt (the English sentence printed before was refused by a run trained on Persian alone).
    command = shlex.split(trainer.parts.models.listen.replace("{run}", shlex.quote(str(run))))
    # an adapted run's line names the voice its data taught (without it, a reference clip's is cloned)
    assert command[:2] == ["xtts", "synthesize"] and command[-4:] == ["--language", "fa", "--speaker", "persian"]
    assert command[2] in (PERSIAN_DATA / "metadata.csv").read_text(encoding="utf-8")
    result = runner.invoke(app, command[1:])
    assert result.exit_code == 0, (result.output, result.exception)
    assert Path("speech.wav").stat().st_size > 1000


def test_the_command_to_listen_skips_a_test_sentence_the_run_cannot_read_and_quotes_one_like_an_option(persian):
    import dataclasses
    import shlex

    from xtts_cli.kinds.acoustic import AcousticModels

    trainer = persian[0]
    models = trainer.parts.models

    def listen(sentences: list[str]) -> list[str]:
        config = models.context.config.model_copy(
            update={"training": models.context.config.training.model_copy(update={"test_sentences": sentences})}
        )
        context = dataclasses.replace(models.context, config=config)
        command = AcousticModels(models.kind, context, models.model, models.optimizer).listen
        return shlex.split(command.replace("{run}", "RUN"))

    # Another script first (the samples skip it): the next, which the Persian run reads.
    assert listen(["你好。", "کتاب روی میز است."])[2] == "کتاب روی میز است."
    # A text that starts with a dash goes after "--", or the command reads it as an option.
    assert listen(["-۵ درجه است."])[-2:] == ["--", "-۵ درجه است."]


def test_an_adapted_run_resumes_as_any_run_does(persian):
    _, _, _, run, config = persian
    longer = config.model_copy(update={"training": config.training.model_copy(update={"max_steps": 6})})
    trainer, notes, result, _ = _train(longer, run)
    assert result.resumed and result.start_step == 4 and result.final_step == 6
    assert not any(note.startswith("from ") for note in notes)  # its checkpoint holds the weights now
    # said, not passed over in silence: the base named again is not read
    base = json.loads((run / "run.json").read_text(encoding="utf-8"))["parent"]["run"]
    said = f"this run started from {base} step 4: it resumes from its own checkpoints, and the base is not read again"
    assert said in notes, notes
    assert json.loads((run / "run.json").read_text(encoding="utf-8"))["parent"]["step"] == 4


def test_a_second_adaptation_from_the_same_base_on_other_data_is_refused_not_trained_in_the_first(persian, tmp_path):
    # Both into the default run directory: the second voice's clips had trained on in the first one's
    # run (its checkpoints rotated out), with exit 0, where another base was refused.
    from xtts_cli.run.directory import refuse_starting_over

    _, _, _, run, config = persian
    other = config.model_copy(update={"data": config.data.model_copy(update={"dataset_path": str(tmp_path / "bob")})})
    with pytest.raises(XttsError) as refused:
        refuse_starting_over(run, other)
    said = f"{run} holds the run adapted from it on {PERSIAN_DATA.resolve()}; adapting to {tmp_path / 'bob'} there"
    assert said in str(refused.value) and "pass --run-dir DIR" in refused.value.hint
    assert refused.value.hint.endswith(f"resume it: xtts train -r {run} --data ...")
    refuse_starting_over(run, config)  # the same data: this adaptation's own resume
    # Resumed with its own config (`xtts train -r RUN --data NEW`), whose training.init_from names
    # the base: a resume on new data, as any run takes (it had been refused, with a hint it followed).
    from xtts_cli.config.loading import resolve_config

    own = resolve_config(run / "config.yaml").config
    moved = own.model_copy(update={"data": own.data.model_copy(update={"dataset_path": str(tmp_path / "bob")})})
    assert moved.training.init_from is not None
    refuse_starting_over(run, moved, run / "config.yaml")
    with pytest.raises(XttsError):  # the same config passed from elsewhere is another adaptation
        refuse_starting_over(run, moved, tmp_path / "adapt.yaml")
    bundled = config.model_copy(update={"data": config.data.model_copy(update={"dataset_path": None})})
    with pytest.raises(XttsError, match=r"adapting to the bundled sample \(no --data\) there"):
        refuse_starting_over(run, bundled)


def test_resuming_with_parts_frozen_and_no_base_named_warns_of_no_random_start(persian, tmp_path):
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.diagnosis.validation import training_advice

    _, _, _, run, _ = persian
    (tmp_path / "frozen.yaml").write_text("training:\n  freeze: [speaker_encoder]\n", encoding="utf-8")
    loaded = resolve_config(tmp_path / "frozen.yaml")
    said = [line.split(":")[0] for _, line in training_advice(loaded, run)[0]]
    assert "freeze-without-base" not in said  # the frozen parts start from the run's checkpoint
    said = [line.split(":")[0] for _, line in training_advice(loaded, tmp_path / "new-run")[0]]
    assert "freeze-without-base" in said
    # Warned of a fixable value in the run's own config.yaml, the record of what it trained with: no
    # hint to rewrite it with `validate --fix` (a config of the user's own gets one).
    slow = tmp_path / "slow"
    _train(_config(tmp_path, "slow", **{"training.warmup_steps": 50, "training.max_steps": 30}), slow, steps=False)
    (tmp_path / "mine.yaml").write_text((slow / "config.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    for path, hinted in ((slow / "config.yaml", False), (tmp_path / "mine.yaml", True)):
        warnings, repair = training_advice(resolve_config(path), slow)
        assert any(line.startswith("warmup-past-the-end") for _, line in warnings) and (repair is not None) == hinted


def test_train_warns_of_a_language_as_the_base_reads_it_and_names_no_letters_a_phonemes_base_cannot_take(tmp_path):
    from xtts_cli.diagnosis.validation import training_advice

    _train(_config(tmp_path, "ph", **{"data.text_frontend": "phonemes", "training.max_steps": 1}), tmp_path / "ph")
    adapt = tmp_path / "adapt.yaml"
    adapt.write_text(f"data:\n  language: xx\ntraining:\n  init_from: {tmp_path / 'ph'}\n", encoding="utf-8")
    warnings, _ = training_advice(resolve_config(adapt), tmp_path / "new")
    assert not any("trains on the letters" in line for _, line in warnings)  # the base reads phonemes
    with pytest.raises(XttsError) as unknown:
        _train(resolve_config(adapt).config, tmp_path / "new")
    assert "espeak-ng has no language 'xx'" in unknown.value.lines[0]
    assert "(a new run: one started from a phonemes run reads phonemes)" in unknown.value.hint


def test_an_adapted_run_resumed_without_init_from_keeps_its_base_and_its_own_network(persian, tmp_path):
    from xtts_cli.training.parent import with_base_network

    _, _, _, run, config = persian
    # A config that writes no network and names no base (adapt-cpu's, say): the run's record fills both,
    # so its config.yaml still names the base and its own duration decoder resumes.
    (tmp_path / "plain.yaml").write_text(f"data:\n  dataset_path: {PERSIAN_DATA}\n  language: fa\n", encoding="utf-8")
    resumed, taken = with_base_network(resolve_config(tmp_path / "plain.yaml").config, run, False)
    assert resumed.training.init_from == config.training.init_from and resumed.acoustic.decoder == "duration"
    assert taken is not None and taken.startswith(f"resuming {run}: the run's own")
    # A new run of that config is no one's child.
    assert with_base_network(resolve_config(tmp_path / "plain.yaml").config, tmp_path / "new", False)[1] is None


def test_an_adapted_run_resumed_without_its_base_under_another_config_is_shown_how_to_resume(persian, tmp_path, runner):
    from xtts_cli.cli.app import app

    _, _, _, run, _ = persian
    _config(tmp_path, "preset", **{"model.decoder": "autoregressive"})  # a preset's own model, not the base's
    result = runner.invoke(app, ["train", "-c", str(tmp_path / "preset.yaml"), "-r", str(run)])
    assert isinstance(result.exception, XttsError), result.output
    assert "changed: model.decoder (duration -> autoregressive)" in str(result.exception)
    base = json.loads((run / "run.json").read_text(encoding="utf-8"))["parent"]["run"]
    assert result.exception.hint.startswith(f"it started from {base}: resume it with `xtts train -r {run}`")


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"model.d_model": 48}, "model.d_model 32 -> 48"),
        ({"model.decoder": "autoregressive"}, "model.decoder 'duration' -> 'autoregressive'"),
        ({"data.n_mels": 64}, "data.n_mels 80 -> 64"),
        ({"data.text_frontend": "phonemes"}, "data.text_frontend 'characters' -> 'phonemes'"),
        ({"model.kind": "vocoder"}, "that is an acoustic run, and this config trains a vocoder model"),
    ],
)
def test_a_model_the_weights_do_not_fit_is_refused_in_one_line(base, tmp_path, runner, changes, named):
    from xtts_cli.cli.app import app

    path = tmp_path / "other.yaml"
    _config(tmp_path, "other", **changes)
    result = runner.invoke(app, ["train", "-c", str(path), "--init-from", str(base), "-r", str(tmp_path / "run")])
    assert str(result.exception).startswith(f"--init-from {base}: ")
    assert named in str(result.exception)
    if "model.kind" not in changes:  # how to leave them to the base, a preset's user too
        assert "(-c adapt-cpu or adapt-gpu does; from another preset, write it out with xtts init" in (
            result.exception.hint
        )
    assert not (tmp_path / "run" / "checkpoints").exists()
    checked = runner.invoke(app, ["validate", "-c", str(path), "--set", f"training.init_from={base}"])
    assert checked.exit_code == 1 and named in checked.output


def test_a_checkpoint_cut_short_is_named_with_the_ones_to_pass_instead(base, tmp_path, runner):
    import shutil

    from xtts_cli.cli.app import app

    _config(tmp_path, "cut")
    copy = tmp_path / "copy"
    shutil.copytree(base, copy)
    (data,) = (copy / "checkpoints").glob("ckpt-4.data-*")
    data.write_bytes(data.read_bytes()[:1000])  # a copy that stopped
    result = runner.invoke(
        app, ["train", "-c", str(tmp_path / "cut.yaml"), "--init-from", str(copy), "-r", str(tmp_path / "r")]
    )
    assert str(result.exception).startswith(
        f"--init-from {copy}: its checkpoint {copy}/checkpoints/ckpt-4 cannot be read ("
    )
    assert result.exception.hint.startswith(
        "it was copied or saved cut short: copy the run's checkpoints/ folder again"
    )
    assert not (tmp_path / "r").exists()  # the new run's set-up failed: nothing of it is left
    # validate sees it from the index, without TensorFlow (it had said "starts from ... step 4").
    checked = runner.invoke(app, ["validate", "-c", str(tmp_path / "cut.yaml"), "--init-from", str(copy)])
    assert checked.exit_code == 1
    assert (
        f"ckpt-4.data-00000-of-00001 holds 1,000 of its {(base / 'checkpoints' / data.name).stat().st_size:,} bytes"
        in (checked.output)
    )
    # An earlier checkpoint is offered only where it is whole.
    for step, size in ((2, None), (3, 500)):
        for part in (base / "checkpoints").glob("ckpt-4.*"):
            whole = part.read_bytes()
            (copy / "checkpoints" / part.name.replace("ckpt-4", f"ckpt-{step}")).write_bytes(whole[:size])
    result = runner.invoke(
        app, ["train", "-c", str(tmp_path / "cut.yaml"), "--init-from", str(copy), "-r", str(tmp_path / "r")]
    )
    assert "pass an earlier one the run keeps (steps 2), e.g. --init-from" in result.exception.hint


def test_a_base_whose_config_names_another_front_end_than_its_vocabulary_is_refused(base, tmp_path, runner):
    import shutil

    from xtts_cli.cli.app import app

    # Its config.yaml edited to phonemes: the run had started, its vocabulary of letters and phonemes
    # mixed, the base's letter rows left unread, without a word.
    _config(tmp_path, "edited")
    copy = tmp_path / "copy"
    shutil.copytree(base, copy)
    config = copy / "config.yaml"
    config.write_text(config.read_text().replace("text_frontend: characters", "text_frontend: phonemes"))
    result = runner.invoke(
        app, ["train", "-c", str(tmp_path / "edited.yaml"), "--init-from", str(copy), "-r", str(tmp_path / "r")]
    )
    assert result.exception.lines == [
        f"--init-from {copy}: its config.yaml says data.text_frontend phonemes and its vocab.json characters, "
        "which its weights learnt"
    ]
    assert result.exception.hint.startswith("set data.text_frontend: characters in ")
    assert not (tmp_path / "r").exists()


def test_dropout_shapes_no_weight_and_may_differ_from_the_bases(base, tmp_path):
    from xtts_cli.training.parent import open_parent

    parent = open_parent(base)
    assert parent.refusal(_config(tmp_path, "dropout", **{"model.dropout": 0.3, "model.prenet_dropout": 0.2})) is None
    assert "model.d_model" in parent.refusal(_config(tmp_path, "wider", **{"model.d_model": 48}))


def test_init_from_into_a_run_with_checkpoints_is_refused(base, tmp_path, runner):
    import shutil

    from xtts_cli.cli.app import app

    _config(tmp_path, "again")
    other = tmp_path / "other"
    shutil.copytree(base, other)
    before = sorted(p.name for p in (other / "checkpoints").iterdir())
    result = runner.invoke(
        app, ["train", "-c", str(tmp_path / "again.yaml"), "--init-from", str(base), "-r", str(other)]
    )
    assert f"{other} already holds a run with checkpoints (trained from scratch)" in str(result.exception)
    assert "--run-dir DIR" in result.exception.hint and "--fresh" in result.exception.hint
    # A run that did start from a base resumes without one (the base, moved or gone, is not read).
    assert result.exception.hint.startswith(f"to resume it, leave --init-from out (`xtts train -r {other}`)")
    assert sorted(p.name for p in (other / "checkpoints").iterdir()) == before
    # Before the scan and the model (it had come after both), and validate says the same of the run
    # directory train would write (it had passed it).
    assert "scanning" not in result.stderr and "building" not in result.stderr
    found = runner.invoke(
        app,
        [
            "validate",
            "-c",
            str(tmp_path / "again.yaml"),
            "--init-from",
            str(base),
            "--set",
            f"training.run_dir={other}",
        ],
    )
    assert (
        found.exit_code == 1 and f"{other} already holds a run with checkpoints (trained from scratch)" in found.stdout
    )
    # And by train's own -r (validate had none: "No such option: -r").
    validated = runner.invoke(
        app, ["validate", "-c", str(tmp_path / "again.yaml"), "--init-from", str(base), "-r", str(other)]
    )
    assert validated.exit_code == 1, validated.output
    assert f"{other} already holds a run with checkpoints (trained from scratch)" in validated.stdout


@pytest.mark.parametrize("fresh", [[], ["--fresh"]])
def test_init_from_the_run_directory_itself_is_refused_before_anything_moves(base, tmp_path, runner, fresh):
    from xtts_cli.cli.app import app

    _config(tmp_path, "self")
    for spec in (base, base / "checkpoints" / "ckpt-4"):
        args = ["train", "-c", str(tmp_path / "self.yaml"), "--init-from", str(spec), "-r", str(base), *fresh]
        result = runner.invoke(app, args)
        assert str(result.exception) == f"--init-from {spec}: that is this run's own directory"
        assert "scanning" not in result.output  # refused before the data is read
    assert (base / "checkpoints" / "ckpt-4.index").is_file()  # --fresh moved nothing aside


def test_a_checkpoints_file_as_ls_shows_it_names_the_checkpoint(base):
    from xtts_cli.training.parent import open_parent

    for name in ("ckpt-4.index", "ckpt-4.data-00000-of-00001"):
        assert open_parent(str(base / "checkpoints" / name)).checkpoint == str(base / "checkpoints" / "ckpt-4")
    # The run's checkpoints folder: its latest, as the run directory gives it (it had been refused).
    folder = open_parent(str(base / "checkpoints"))
    assert (folder.checkpoint, folder.path) == (str(base / "checkpoints" / "ckpt-4"), base)


def test_a_start_from_a_checkpoints_file_or_best_copy_is_known_once_they_are_gone(tmp_path):
    from xtts_cli.run.files import same_start

    # The base's best/ copy goes as it ends, an old ckpt-N rotates out: its child's own command had been refused.
    base = tmp_path / "base"
    best = {"run": str(base), "checkpoint": str(base / "checkpoints" / "best" / "ckpt")}
    assert same_start(str(base / "checkpoints" / "best"), best)
    old = {"run": str(base), "checkpoint": str(base / "checkpoints" / "ckpt-1")}
    for spec in ("ckpt-1.index", "ckpt-1.data-00000-of-00001", "ckpt-1", "../checkpoints"):
        assert same_start(str(base / "checkpoints" / spec), old), spec
    assert not same_start(str(base / "checkpoints" / "ckpt-2.index"), old)
    assert not same_start(str(tmp_path / "other"), old)
    # A base run named best is that run, not a best/ copy.
    named = {"run": str(tmp_path / "best"), "checkpoint": str(tmp_path / "best" / "checkpoints" / "ckpt-4")}
    assert same_start(str(tmp_path / "best"), named)


def test_a_base_being_trained_and_a_base_with_a_vocoder_are_said_of_as_the_run_starts_from_them(base, tmp_path, runner):
    import shutil

    from xtts_cli.cli.app import app

    copy = tmp_path / "base"
    shutil.copytree(base, copy, ignore=shutil.ignore_patterns(".xtts-lock"))
    (copy / "vocoder").mkdir()
    (copy / "vocoder" / "config.yaml").write_text("model:\n  kind: vocoder\n", encoding="utf-8")
    _config(tmp_path, "adapt")
    with lock_held_elsewhere(copy) as pid:
        result = runner.invoke(
            app, ["validate", "-c", str(tmp_path / "adapt.yaml"), "--init-from", str(copy), "--json"]
        )
    (message,) = [f["message"] for f in json.loads(result.stdout)["findings"] if f["id"] == "init-from"]
    assert f"; {copy} is training now (process {pid} on " in message
    assert "this run starts from its step 4, the latest checkpoint it had written" in message
    assert f"; {copy} has a vocoder ({copy / 'vocoder'}), which this run does not take" in message
    # Named from one of its checkpoints, it is the run that is said of, not the checkpoint.
    spec = str(copy / "checkpoints" / "ckpt-4")
    result = runner.invoke(app, ["validate", "-c", str(tmp_path / "adapt.yaml"), "--init-from", spec, "--json"])
    (message,) = [f["message"] for f in json.loads(result.stdout)["findings"] if f["id"] == "init-from"]
    assert f"; {copy} has a vocoder ({copy / 'vocoder'}), which this run does not take" in message, message
    result = runner.invoke(app, ["validate", "-c", str(tmp_path / "adapt.yaml"), "--init-from", str(base), "--json"])
    (message,) = [f["message"] for f in json.loads(result.stdout)["findings"] if f["id"] == "init-from"]
    assert "training now" not in message and "has a vocoder" not in message


@pytest.mark.parametrize("spec", ["nowhere", "checkpoints/ckpt-99", "configs"])
def test_init_from_something_that_is_not_a_run_is_refused(base, tmp_path, runner, spec):
    from xtts_cli.cli.app import app

    _config(tmp_path, "c")
    (tmp_path / "configs").mkdir()  # a folder of the config `xtts init` wrote: no run
    (tmp_path / "configs" / "config.yaml").write_text((tmp_path / "c.yaml").read_text(), encoding="utf-8")
    target = str(base / spec) if "/" in spec else str(tmp_path / spec)
    # A config warned of (a validation past the end, with early stopping): the refusal is said alone.
    warned = ["--set", "training.val_step=100", "--set", "training.early_stop_patience=2", "-n", "40"]
    result = runner.invoke(
        app, ["train", "-c", str(tmp_path / "c.yaml"), "--init-from", target, "-r", str(tmp_path / "r"), *warned]
    )
    assert "warning" not in result.stderr, result.stderr
    if spec == "nowhere":
        assert str(result.exception) == f"--init-from {target}: nothing is there"
        # No run beside it: how a base is made (the hint had offered runs/voices-cpu, whatever was there).
        assert result.exception.hint.startswith(
            "train the base first (xtts train -c voices-cpu writes runs/voices-cpu)"
        )
        # A run beside a name mistyped: the runs there are named.
        shutil.copytree(base, tmp_path / "runs" / "voices")
        again = runner.invoke(
            app, ["train", "-c", str(tmp_path / "c.yaml"), "--init-from", str(tmp_path / "runs" / "voices-cpu")]
        )
        assert again.exception.hint == f"pass one of the runs in {tmp_path / 'runs'}: {tmp_path / 'runs' / 'voices'}"
        # A vocoder run beside it is not offered to an acoustic adaptation (which then refused it).
        shutil.copytree(base, tmp_path / "runs" / "voc")
        (tmp_path / "runs" / "voc" / "config.yaml").write_text("model:\n  kind: vocoder\n", encoding="utf-8")
        again = runner.invoke(
            app, ["train", "-c", str(tmp_path / "c.yaml"), "--init-from", str(tmp_path / "runs" / "voices-cpu")]
        )
        assert again.exception.hint == f"pass one of the runs in {tmp_path / 'runs'}: {tmp_path / 'runs' / 'voices'}"
        mistyped = runner.invoke(app, ["synthesize", "Hi.", "-r", str(tmp_path / "runs" / "voice"), "-o", "a.wav"])
        assert mistyped.exception.hint == f"pass one of {tmp_path / 'runs' / 'voices'}"
        folder = runner.invoke(app, ["synthesize", "Hi.", "-r", str(tmp_path / "runs"), "-o", str(tmp_path / "a.wav")])
        assert (
            str(folder.exception)
            == f"{tmp_path / 'runs'} is a folder of runs, not a run directory: --run-dir takes one of them"
        )
    elif spec == "configs":
        assert (
            str(result.exception)
            == f"--init-from {target}: a folder with a config.yaml but no run (xtts train writes run.json and checkpoints beside it)"
        )
    else:  # a step the run does not keep: the ones it keeps are named
        assert str(result.exception).endswith(f"{base / 'checkpoints'} keeps no checkpoint ckpt-99")
        assert result.exception.hint.startswith("it keeps steps 4: e.g. --init-from ")


def test_validate_shows_the_base_and_what_the_data_adds(base, tmp_path, runner):
    from xtts_cli.cli.app import app

    _config(tmp_path, "fa", **{"data.dataset_path": str(PERSIAN_DATA), "data.language": "fa"})
    result = runner.invoke(app, ["validate", "-c", str(tmp_path / "fa.yaml"), "--init-from", str(base)])
    assert result.exit_code == 0, result.output
    assert f"starts from {base} step 4 (a duration run" in result.output
    assert "this data adds" in result.output and "language fa, 1 speaker" in result.output
    assert "freeze-new-text" not in result.output
    # The text encoder frozen: the Persian letters and the language would never train.
    args = ["validate", "-c", str(tmp_path / "fa.yaml"), "--init-from", str(base), "--json"]
    frozen = runner.invoke(app, [*args, "--set", "training.freeze=[text_encoder]"])
    (warning,) = [f for f in json.loads(frozen.stdout)["findings"] if f["id"] == "freeze-new-text"]
    assert warning["severity"] == "warning" and re.match(
        r"training.freeze holds text_encoder, where the \d+ symbols and language fa this data adds would learn: "
        "they would never train; leave text_encoder out of training.freeze$",
        warning["message"],
    )


def test_a_speaker_the_base_has_already_is_said_to_go_on_training_that_voice(base, tmp_path, runner):
    from xtts_cli.cli.app import app

    _config(tmp_path, "same")  # the base's own data: every speaker is the base's
    result = runner.invoke(app, ["validate", "-c", str(tmp_path / "same.yaml"), "--set", f"training.init_from={base}"])
    assert result.exit_code == 0, result.output
    assert "are the base's already: these clips go on training that voice" in " ".join(result.output.split())


def test_freeze_names_only_the_kinds_parts(tmp_path):
    from xtts_cli.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        _config(tmp_path, "f", **{"training.freeze": ["text_encodr"]})
    assert refused.value.lines[0].startswith(
        "training.freeze: 'text_encodr' is not a part of a model.kind acoustic model; did you mean text_encoder? "
        "its parts are"
    )
    everything = ["text_encoder", "speaker_encoder", "decoder", "postnet"]
    with pytest.raises(ConfigError, match="training.freeze names every part .*: nothing would train; leave out"):
        _config(tmp_path, "g", **{"training.freeze": everything})
    _config(tmp_path, "h", **{"training.freeze": everything[:3]})  # the postnet still learns


@pytest.mark.parametrize("written", ["now", "before its blocks were saved by name"])
def test_a_vocoder_run_starts_from_another_with_every_weight_and_its_discriminators(tmp_path, written):
    """A base trained now, and one written before the generator's blocks and the discriminators'
    layers were reachable by name (their weights only in the optimizers' lists): every weight of
    the child starts as the base left it."""
    from xtts_cli.model.transfer import child_node, listed_variable_keys, object_graph

    settings = yaml.safe_load((LEGACY_VOCODER / "config.yaml").read_text(encoding="utf-8"))
    settings["data"]["dataset_path"] = str(SAMPLE)
    path = tmp_path / "vocoder.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    if written == "now":
        base = tmp_path / "base"
        _train(resolve_config(path, {"training.max_steps": 2}).config, base)
    else:
        base = LEGACY_VOCODER
    child = resolve_config(path, {"training.max_steps": 1, "training.init_from": str(base)}).config
    # Ended before its first step: the weights it starts from are all this test reads.
    trainer, notes, _, at_start = _train(child, tmp_path / "child", steps=False)
    models = trainer.parts.models
    saved = len(models.model.weights) + len(models.discriminators.weights)
    line = next(note for note in notes if note.startswith("from "))
    assert line.endswith(f"kept {saved} of {saved} tensors; nothing new"), line
    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(base / "checkpoints")))
    graph = object_graph(reader)
    reached = [child_node(graph, child_node(graph, 0, part), name) for part, name in PART_LISTS]
    assert all(node is not None for node in reached) == (written == "now")
    for part, optimizer in ((models.model, "optimizer"), (models.discriminators, "discriminator_optimizer")):
        keys = listed_variable_keys(graph, optimizer)
        assert len(keys) == len(part.trainable_variables) == len(part.weights)
        for variable, key in zip(part.trainable_variables, keys):
            np.testing.assert_array_equal(at_start[id(variable)], reader.get_tensor(key), err_msg=variable.path)


def test_validate_on_an_adapted_runs_own_config_names_the_parent_its_run_json_records(persian, tmp_path, runner):
    import shutil

    from xtts_cli.cli.app import app

    _, _, _, run, _ = persian
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    # As a run written with a relative --init-from left it, read from another folder: the base is not there.
    config = copy / "config.yaml"
    config.write_text(re.sub(r"init_from: .*", "init_from: runs/base", config.read_text(encoding="utf-8")), "utf-8")
    result = runner.invoke(app, ["validate", "-c", str(config)])
    assert result.exit_code == 0, result.output
    parent = json.loads((run / "run.json").read_text(encoding="utf-8"))["parent"]
    assert f"this run started from {parent['run']} step 4 (its run.json)" in " ".join(result.output.split())
    # Train resumes it too, from the base its run.json records: refused as "another start", its hint had
    # named the same command again.
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.errors import XttsError
    from xtts_cli.run.directory import refuse_starting_over
    from xtts_cli.training.launch import _recorded_start

    with pytest.raises(XttsError, match="would discard them"):
        refuse_starting_over(copy, resolve_config(config).config)
    resumed = _recorded_start(resolve_config(config), copy)
    assert resumed.training.init_from == parent["run"]
    refuse_starting_over(copy, resumed)
    asked = resolve_config(config, {"training.init_from": "runs/base"})  # given on the command line: kept
    assert _recorded_start(asked, copy).training.init_from == "runs/base"
    assert _recorded_start(resolve_config(config), copy, fresh=True).training.init_from == "runs/base"
    # Started from the checkpoint's file as ls shows it, the base's checkpoints/ folder: the same start
    # (its resume had been refused, its hint to put back a base that is there).
    for spec in (f"{parent['checkpoint']}.index", str(Path(parent["run"]) / "checkpoints")):
        config.write_text(re.sub(r"init_from: .*", f"init_from: {spec}", config.read_text("utf-8")), "utf-8")
        assert _recorded_start(resolve_config(config), copy).training.init_from == spec
        refuse_starting_over(copy, resolve_config(config).config, config)  # it had "would discard them"
        refuse_starting_over(copy, resolve_config(config, {"training.init_from": spec}).config)  # the start's command
    # Edited to another run that is there: which one the user means is theirs to say, both named.
    other = tmp_path / "other-run"
    other.mkdir()
    config.write_text(
        re.sub(r"init_from: .*", f"init_from: {other}", config.read_text(encoding="utf-8")), encoding="utf-8"
    )
    with pytest.raises(XttsError) as both:
        _recorded_start(resolve_config(config), copy)
    assert both.value.lines == [
        f"{config} names training.init_from {other}, but the run started from {parent['run']} (its run.json)"
    ]
    assert "pass --fresh" in both.value.hint
    # The recorded base gone (moved, the config edited to where it went): resumed, as a resume reads none.
    kept = (copy / "run.json").read_text(encoding="utf-8")
    record = json.loads(kept)
    record["parent"]["run"] = str(tmp_path / "moved-away")
    (copy / "run.json").write_text(json.dumps(record), encoding="utf-8")
    assert _recorded_start(resolve_config(config), copy).training.init_from == str(tmp_path / "moved-away")
    (copy / "run.json").write_text(kept, encoding="utf-8")
    # Its own config with another --init-from is refused, as train refuses it (validate had said it resumes).
    other = runner.invoke(app, ["validate", "-r", str(copy), "--init-from", str(tmp_path / "other-base"), "--json"])
    assert other.exit_code == 1, other.output
    (refused,) = [f for f in json.loads(other.stdout)["findings"] if f["id"] == "init-from"]
    assert refused["severity"] == "error" and "would discard them" in refused["message"], refused
    # The same base named again, with the run to write (--init-from BASE -r RUN): train resumes the run,
    # where validate had said it "starts from" the base.
    elsewhere = tmp_path / "other.yaml"
    elsewhere.write_text(config.read_text(encoding="utf-8"), encoding="utf-8")
    args = ["validate", "-c", str(elsewhere), "--init-from", parent["run"], "-r", str(copy), "--json"]
    (said,) = [f for f in json.loads(runner.invoke(app, args).stdout)["findings"] if f["id"] == "init-from"]
    assert said["severity"] == "info" and said["message"] == (
        f"training.init_from: {copy} holds checkpoints of a start from {parent['run']} step 4 (its run.json): "
        "train resumes it from them, and the base is not read again"
    )


def test_a_speaker_listed_by_an_adapted_adapted_run_is_said_learnt_where_its_data_was(tmp_path):
    from xtts_cli.cli.synthesize import _learnt_in
    from xtts_cli.run.files import RunDir

    # The run.json and speakers.json a chain of adaptations writes: first <- second <- third.
    for name, parent, speakers in (
        ("first", None, {"p225": 2.0}),
        ("second", "first", {"me": 1.0}),
        ("third", "second", {}),
    ):
        (tmp_path / name).mkdir()
        record = {"parent": {"run": str(tmp_path / parent), "step": 4}} if parent else {}
        (tmp_path / name / "run.json").write_text(json.dumps(record), encoding="utf-8")
        listed = {speaker: {"minutes": minutes} for speaker, minutes in speakers.items()}
        (tmp_path / name / "speakers.json").write_text(json.dumps(listed), encoding="utf-8")
    third = RunDir(tmp_path / "third")
    assert _learnt_in(third, "p225") == f"  (learnt in {tmp_path / 'first'}, a run this one started from)"
    assert _learnt_in(third, "me") == f"  (learnt in {tmp_path / 'second'}, a run this one started from)"
    assert _learnt_in(third, "nobody") == ""
    # A base's speaker the run's own data goes on training: its minutes here, and where it was first learnt.
    from xtts_cli.cli.synthesize import _minutes_said

    assert _minutes_said(third, "p225", 0.3) == (
        f"  0.3 min here (first learnt in {tmp_path / 'first'}, a run this one started from)"
    )
    assert _minutes_said(RunDir(tmp_path / "first"), "p225", 2.0) == "  2.0 min"


def test_a_base_checkpoint_replaced_while_it_was_read_is_said_to_be_from_a_base_still_training(tmp_path):
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.training.parent import ParentRun

    folder = tmp_path / "base" / "checkpoints"
    folder.mkdir(parents=True)
    # What a base saving every step keeps after ckpt-7 went: a whole checkpoint (a run's, renamed).
    for part in (Path(__file__).parent / "data" / "legacy_run" / "checkpoints").glob("ckpt-3.*"):
        shutil.copy(part, folder / part.name.replace("ckpt-3", "ckpt-13"))
    gone = ParentRun(
        spec=str(tmp_path / "base"),
        path=tmp_path / "base",
        checkpoint=str(folder / "ckpt-7"),
        step=7,
        config=XttsConfig(),
        tokenizer=None,
    )
    assert gone.other_checkpoints().startswith("the base is still training and replaced it with step 13")


def test_a_base_whose_pointer_file_was_left_out_or_damaged_starts_from_its_newest_complete_checkpoint(tmp_path):
    from xtts_cli.training.parent import _latest

    for name in ("ckpt-4.index", "ckpt-4.data-00000-of-00001", "ckpt-9.index", "ckpt-9.data-00000-of-00001"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "ckpt-12.index").write_bytes(b"")  # its data never arrived
    assert _latest(tmp_path) == str(tmp_path / "ckpt-9")
    # A pointer a crash or a full disk emptied, or one of garbage: the same (the base had been refused
    # as holding no checkpoint, where resume and synthesize read it).
    for text in ("", "garbage\n"):
        (tmp_path / "checkpoint").write_text(text, encoding="utf-8")
        assert _latest(tmp_path) == str(tmp_path / "ckpt-9"), text
    # One it names is the one: a whole one, or one cut short that open_parent refuses, naming those kept.
    for step in (4, 12):
        (tmp_path / "checkpoint").write_text(f'model_checkpoint_path: "ckpt-{step}"\n', encoding="utf-8")
        assert _latest(tmp_path) == str(tmp_path / f"ckpt-{step}")


def test_a_run_stopped_before_its_first_checkpoint_whose_base_is_gone_says_so_not_a_flag_not_given(
    base, tmp_path, runner
):
    # Killed before its first checkpoint, its base since deleted: "--init-from BASE: nothing is there"
    # had named a flag the user never gave, and no way on.
    import shutil

    from xtts_cli.cli.app import app

    child = tmp_path / "child"
    shutil.copytree(base, child, ignore=shutil.ignore_patterns(".xtts-lock", "checkpoints"))
    settings = yaml.safe_load((child / "config.yaml").read_text(encoding="utf-8"))
    settings["training"]["init_from"] = str(tmp_path / "gone")
    (child / "config.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    result = runner.invoke(app, ["train", "-r", str(child)])
    assert isinstance(result.exception, XttsError), result.output
    assert result.exception.lines == [
        f"{child} holds no checkpoint yet, so starts again from the base its config.yaml names: "
        f"{tmp_path / 'gone'}: nothing is there"
    ]
    assert result.exception.hint.endswith(f"xtts train -r {child} --fresh --init-from BASE")


def test_a_base_whose_checkpoints_were_removed_says_so_not_to_train_it_first(base, tmp_path):
    import shutil

    from xtts_cli.training.parent import open_parent

    copy = tmp_path / "copy"
    shutil.copytree(base, copy)
    for path in (copy / "checkpoints").iterdir():
        path.unlink()
    with pytest.raises(XttsError) as refused:
        open_parent(str(copy))
    said = f"--init-from {copy}: {copy / 'checkpoints'} holds no whole checkpoint, though the run logged steps up to"
    assert str(refused.value).startswith(said) and refused.value.hint.startswith("put them back")
    # Its pointer file left behind, naming one of them: the same (it had been told to train it again).
    shutil.copytree(base / "checkpoints", copy / "checkpoints", dirs_exist_ok=True)
    for path in (copy / "checkpoints").glob("ckpt-*"):
        path.unlink()
    with pytest.raises(XttsError) as pointed:
        open_parent(str(copy))
    assert str(pointed.value).startswith(said) and pointed.value.hint.startswith("put them back")


@pytest.mark.slow
def test_an_adaptation_that_only_makes_the_base_worse_stops_with_the_bases_weights(base, tmp_path):
    changes = {
        "training.init_from": str(base),
        "training.max_steps": 12,
        "training.val_step": 1,
        "training.early_stop_patience": 2,
        "training.learning_rate": 0.05,  # high enough that every step makes the validation loss worse
        "training.warmup_steps": 0,
    }
    trainer, notes, result, at_start = _train(_config(tmp_path, "worse", **changes), tmp_path / "run")
    assert result.early_stopped and result.best_val_step == 0, notes
    assert any(note.endswith("with the weights of step 0, the best") for note in notes), notes
    # What it ended with is the base's weights, as they were before its first step.
    model = trainer.parts.models.model
    assert all(np.array_equal(v.numpy(), at_start[id(v)]) for v in model.trainable_variables)


def test_an_adaptation_ended_by_its_time_budget_after_worse_validations_ends_with_the_best_weights(base, tmp_path):
    """adapt-cpu ends by time, not by patience: a budget spent after validations that only got worse
    ends with the best's weights (here the base's, step 0), as an early stop would have."""
    changes = {
        "training.init_from": str(base),
        "training.max_steps": 100_000,
        "training.max_minutes": 0.25,  # few steps at lr 0.15 on a fast CPU too: 27 had diverged to inf
        "training.val_step": 1,  # a step validated even where start-up spends the budget (one step then trains)
        "training.early_stop_patience": 1000,  # never reached: the budget ends the run
        "training.learning_rate": 0.15,  # far past the base's: no validation comes back to its loss
        "training.lr_schedule": "constant",  # and does so to the end (a cosine over the budget would settle)
        "training.warmup_steps": 0,
    }
    trainer, notes, result, at_start = _train(_config(tmp_path, "timed", **changes), tmp_path / "run")
    assert result.out_of_time and not result.early_stopped and result.best_val_step == 0, notes
    assert any(note.startswith("ending with the weights of step 0, the best validation") for note in notes), notes
    model = trainer.parts.models.model
    assert all(np.array_equal(v.numpy(), at_start[id(v)]) for v in model.trainable_variables)
    # What speaks from the run says whose weights its last checkpoint holds.
    from xtts_cli.inference.loading import load_run

    said: list[str] = []
    assert load_run(tmp_path / "run", notes=said)[3] == result.final_step
    assert said == [f"step {result.final_step}'s checkpoint holds the weights of step 0, the run's best validation"]
    # The best's weights came back, not its minutes: the budget stays spent, and the same command
    # trains nothing (it had trained a step more at every run).
    _, notes, again, _ = _train(_config(tmp_path, "timed", **changes), tmp_path / "run")
    assert again.final_step == again.start_step == result.final_step and again.out_of_time, notes
    assert any("nothing to train; raise --max-minutes" in note for note in notes), notes
    assert not any(note.startswith("ending with the weights") for note in notes), notes  # it trained nothing


def _vocoder_child(tmp_path: Path, model: str):
    """A vocoder config started from the legacy vocoder run (16 channels, 2 blocks, discriminators of
    1 channel from step 1), its model section as `model` writes it."""
    from xtts_cli.training.parent import with_base_network

    path = tmp_path / "my.yaml"
    path.write_text(f"data:\n  dataset_path: {SAMPLE}\n  batch_size: 4\n{model}", encoding="utf-8")
    return with_base_network(resolve_config(path, {"training.init_from": str(LEGACY_VOCODER)}).config, None, True)


def test_a_vocoder_preset_with_its_model_section_deleted_takes_the_bases_kind_sizes_and_discriminators(tmp_path):
    # training.md's recipe for a base of other sizes: the kind went with the deleted section, so the
    # config trained an acoustic model and was refused, and the refusal's hint led back to the preset.
    from xtts_cli.training.parent import open_parent

    parent = open_parent(str(LEGACY_VOCODER))
    config, note = _vocoder_child(tmp_path, "")
    assert (config.model.kind, config.model.dim, config.model.num_layers) == ("vocoder", 16, 2)
    assert (config.model.adversarial_start_step, config.model.discriminator_channels) == (1, 1)
    assert note.startswith(f"--init-from {LEGACY_VOCODER}: the base's model.kind 'vocoder', model.dim 16, ")
    parent.check(config)
    assert parent.said_of_the_base(config) == []
    # A section written with another kind's keys is that kind's: refused as one.
    acoustic, _ = _vocoder_child(tmp_path, "model:\n  model_size: tiny\n")
    with pytest.raises(XttsError, match="that is a vocoder run, and this config trains an acoustic model"):
        parent.check(acoustic)


def test_a_vocoder_base_s_discriminators_are_checked_to_fit_or_said_to_be_left_behind(tmp_path):
    # Discriminators of another width passed the check and failed in training on a tensor's name;
    # a config that builds none dropped the base's 96 tensors without a word.
    from xtts_cli.training.parent import open_parent

    parent = open_parent(str(LEGACY_VOCODER))
    wider, _ = _vocoder_child(tmp_path, "model:\n  kind: vocoder\n  discriminator_channels: 8\n")
    with pytest.raises(XttsError, match=r"its weights do not fit this config \(model.discriminator_channels 1 -> 8\)"):
        parent.check(wider)
    none, note = _vocoder_child(tmp_path, "model:\n  kind: vocoder\n  adversarial_start_step: null\n")
    parent.check(none)
    assert "adversarial_start_step" not in note
    assert parent.said_of_the_base(none) == [
        f"{LEGACY_VOCODER}'s discriminators are left behind: this config builds none "
        "(model.adversarial_start_step is empty)"
    ]


def test_diagnose_quick_names_a_base_it_cannot_start_from_as_validate_does(tmp_path, runner):
    # --quick read no base at all: 0 errors and exit 0 for a base training refuses.
    from xtts_cli.cli.app import app

    for spec, said in (
        (str(LEGACY_VOCODER), "that is a vocoder run, and this config trains an acoustic model"),
        (str(tmp_path / "nothing"), "nothing is there"),
    ):
        arguments = ["diagnose", "-c", "tiny-cpu", "--set", f"training.init_from={spec}", "-d", str(SAMPLE)]
        result = runner.invoke(app, [*arguments, "--quick", "--json"])
        assert result.exit_code == 1, result.output
        errors = [f for f in json.loads(result.stdout)["findings"] if f["severity"] == "error"]
        assert [f["id"] for f in errors] == ["init-from"] and said in errors[0]["message"], errors


def test_a_language_the_base_has_by_another_name_is_a_warning() -> None:
    # de-DE (no voice of espeak-ng's own) beside the base's de had trained a second German from zero,
    # unsaid; en-gb beside en is a voice of its own, and a new language is news, not a warning.
    import dataclasses

    from xtts_cli.data.text import Tokenizer
    from xtts_cli.training.parent import open_parent

    parent = open_parent(str(Path(__file__).parent / "data" / "run_before_run_data"))
    parent = dataclasses.replace(parent, tokenizer=Tokenizer("ab", [], languages=["en", "de"]))

    def twins(*languages: str) -> list[str]:
        return parent.language_twins(Tokenizer("ab", [], languages=languages))

    assert twins("en", "de", "de-de") == [
        "the data's language de-de is the base's de by another name: it would train as a new language from zero, "
        "not on the base's de; set the data's language to de"
    ]
    assert twins("en", "de", "en-gb") == [] and twins("en", "de", "fa") == []


def test_training_warns_of_a_language_the_base_has_by_another_name_as_validate_does(base, tmp_path) -> None:
    # validate warned; train said only "new: language en-us" and trained a second English from zero.
    config = _config(tmp_path, "twin", **{"training.init_from": str(base), "data.language": "en-US"})
    _, notes, _, _ = _train(config, tmp_path / "run", steps=False)
    assert (
        "the data's language en-us is the base's en by another name: it would train as a new language from zero, "
        "not on the base's en; set the data's language to en"
    ) in notes, notes


def test_the_adapt_preset_from_a_vocoder_run_is_refused_in_one_line_naming_the_run_it_belongs_to(tmp_path, runner):
    import shutil

    from xtts_cli.cli.app import app

    # The adapt preset leaves model.kind to the base: from a vocoder its training.freeze of the speaker
    # encoder fitted no vocoder, and pydantic's traceback blamed training.freeze.
    acoustic = tmp_path / "runs" / "speak"
    shutil.copytree(Path(__file__).parent / "data" / "run_before_run_data", acoustic)
    shutil.copytree(LEGACY_VOCODER, acoustic / "vocoder")  # where the README puts a run's vocoder
    base = ["-c", "adapt-cpu", "--init-from", str(acoustic / "vocoder"), "-d", str(SAMPLE)]
    trained = runner.invoke(app, ["train", *base, "-r", str(tmp_path / "new")])
    assert isinstance(trained.exception, XttsError), trained.output
    assert str(trained.exception).endswith("that is a vocoder run, and this config trains an acoustic model")
    assert trained.exception.hint == f"--init-from {acoustic}: the acoustic run this vocoder belongs to"
    checked = runner.invoke(app, ["validate", *base, "--json"])
    assert checked.exit_code == 1 and "Traceback" not in checked.output, checked.output
    (error,) = [f for f in json.loads(checked.stdout)["findings"] if f["id"] == "init-from"]
    assert error["message"].endswith(f"(--init-from {acoustic}: the acoustic run this vocoder belongs to)"), error
    # The other way: the vocoder preset given the acoustic run that keeps it.
    reverse = runner.invoke(
        app, ["train", "-c", "vocoder-cpu", *base[2:3], str(acoustic), *base[4:], "-r", str(tmp_path / "v")]
    )
    assert str(reverse.exception).endswith("that is an acoustic run, and this config trains a vocoder model")
    assert reverse.exception.hint == f"--init-from {acoustic / 'vocoder'}: the vocoder this run keeps"
    alone = runner.invoke(app, ["train", *base[:3], str(LEGACY_VOCODER), *base[4:], "-r", str(tmp_path / "new")])
    assert alone.exception.hint.startswith("start a vocoder from a vocoder run (-c vocoder-cpu)")
