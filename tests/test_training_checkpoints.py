"""What a run leaves behind holds the whole model: checkpoints restored by the model alone, runs
written by older versions, and the alignment measured at every validation."""

from __future__ import annotations

import shutil
import wave
from pathlib import Path

import numpy as np
import pytest
import yaml
from training_support import tiny_config

from xtts_cli.config import resolve_config
from xtts_cli.errors import XttsError
from xtts_cli.training.controller import Controller
from xtts_cli.training.metrics import read_metrics
from xtts_cli.training.trainer import Trainer

tf = pytest.importorskip("tensorflow")

LEGACY_RUN = Path(__file__).parent / "data" / "legacy_run"
TEXT = "the cat sat."


@pytest.fixture(scope="module", params=["autoregressive", "duration"])
def short_run(request, tmp_path_factory):
    """Four steps with a validation every two, with each decoder: the trainer (its model in
    memory) and its run."""
    root = tmp_path_factory.mktemp("short")
    config = resolve_config(
        tiny_config(root),
        {
            "model.decoder": request.param,
            "training.max_steps": 4,
            "training.val_step": 2,
            "training.save_step": 4,
            "training.sample_step": 1000,
        },
    ).config
    trainer = Trainer(config, run_dir=root / "run")
    Controller(trainer).run()
    return trainer


def validation_batch(trainer):
    from xtts_cli.data.features import with_reference

    batch, _ = next(trainer.batches(trainer.eval_ds))
    return with_reference(batch, trainer.config.data, prefix=trainer.tokenizer.prefix_length)


def test_checkpoint_reaches_every_weight_through_the_model(short_run) -> None:
    from xtts_cli.model.build import build_model

    # The model alone, as a user's own script or an export would restore it: every weight found.
    latest = tf.train.latest_checkpoint(str(short_run.run_dir.checkpoints))
    tokenizer = short_run.tokenizer
    fresh = build_model(
        short_run.config.model,
        short_run.config.data,
        tokenizer.vocab_size,
        languages=len(tokenizer.languages),
        speakers=len(tokenizer.speakers),
    )
    tf.train.Checkpoint(model=fresh).restore(latest).assert_existing_objects_matched().expect_partial()
    for restored, trained in zip(fresh.weights, short_run.model.weights):
        np.testing.assert_array_equal(restored.numpy(), trained.numpy(), err_msg=restored.path)


def test_load_run_gives_the_trained_models_outputs(short_run) -> None:
    from xtts_cli.training.synthesis import load_run

    _, _, model, step, _ = load_run(short_run.run_dir.path)
    assert step == 4
    batch = validation_batch(short_run)
    expected = short_run.model(batch, training=False)
    restored = model(batch, training=False)
    for name in ("mel_pred", "mel_post", "stop_logits", "cross_attention"):
        np.testing.assert_allclose(restored[name].numpy(), expected[name].numpy(), rtol=1e-6, atol=1e-6, err_msg=name)


def test_synthesize_speaks_with_the_trained_model_not_an_untrained_one(short_run, tmp_path, runner) -> None:
    from xtts_cli.cli.app import app
    from xtts_cli.training.synthesis import REFERENCE_FILE, load_speaking_rate, synthesize_speech

    out = tmp_path / "trained.wav"
    result = runner.invoke(app, ["synthesize", TEXT, "--checkpoint", str(short_run.run_dir.path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    if short_run.model.decoder_kind == "duration":  # no stop token: the durations end the clip, or run past it
        assert "predicted durations" in result.output and "stop token" not in result.output
    in_memory = synthesize_speech(
        short_run.model,
        short_run.tokenizer,
        TEXT,
        np.load(short_run.run_dir.path / REFERENCE_FILE),
        short_run.config.data,
        rate=load_speaking_rate(short_run.run_dir.path),
        settings=short_run.config.synthesis,
    )
    with wave.open(str(out)) as handle:
        written = np.frombuffer(handle.readframes(handle.getnframes()), "<i2")
    from xtts_cli.training.synthesis import wav_bytes

    expected = np.frombuffer(wav_bytes(in_memory.waveform, short_run.config.data.sample_rate)[44:], "<i2")
    np.testing.assert_array_equal(written, expected)

    # The same run directory with the step-0 weights: what synthesis produced when it restored
    # only part of the model.
    untrained = tmp_path / "untrained"
    shutil.copytree(short_run.run_dir.path, untrained, ignore=shutil.ignore_patterns("checkpoints", "tensorboard"))
    config = resolve_config(untrained / "config.yaml", {}).config
    fresh = Trainer(config, run_dir=untrained)
    fresh.setup()
    fresh.save()
    other = tmp_path / "untrained.wav"
    result = runner.invoke(app, ["synthesize", TEXT, "--checkpoint", str(untrained), "--out", str(other)])
    assert result.exit_code == 0, result.output
    with wave.open(str(other)) as handle:
        untrained_audio = np.frombuffer(handle.readframes(handle.getnframes()), "<i2")
    assert len(untrained_audio) != len(written) or not np.array_equal(untrained_audio, written)


def test_alignment_score_is_written_at_every_validation_with_an_alignment_image(short_run) -> None:
    records = [r for r in read_metrics(short_run.run_dir.metrics) if "val_loss" in r]
    assert [r["step"] for r in records] == [2, 4]
    for record in records:
        assert 0.0 < record["alignment_score"] <= 1.0
    train_records = [r for r in read_metrics(short_run.run_dir.metrics) if "loss" in r]
    assert all(0.0 < r["alignment_score"] <= 1.0 and r["attention_loss"] >= 0.0 for r in train_records)
    images = []
    for events in short_run.run_dir.tensorboard.glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(events)):
            for value in event.summary.value:
                if value.tag == "alignment/validation":
                    images.append((event.step, tf.make_ndarray(value.tensor)))
    assert [step for step, _ in images] == [2, 4]
    width, height = (int(x) for x in images[-1][1][:2])  # an image summary: width, height, PNG bytes
    batch = validation_batch(short_run)
    assert height == int(batch["text_lengths"][0])
    assert width == int(short_run.model.decoder_steps(batch["mel_lengths"][:1])[0])


def test_a_run_written_before_the_fix_still_loads_its_whole_model(tmp_path) -> None:
    from xtts_cli.model.build import build_model
    from xtts_cli.training.optimization import build_optimizer
    from xtts_cli.training.synthesis import load_run

    run = tmp_path / "legacy"
    shutil.copytree(LEGACY_RUN, run)
    config, tokenizer, model, step, _ = load_run(run)
    assert step == 3
    # What the trainer's own resume restores (model and optimizer, through TensorFlow's object
    # graph): the same weights, every one of them.
    reference = build_model(config.model, config.data, tokenizer.vocab_size)
    optimizer = build_optimizer(config.training, 10, False)
    optimizer.build(reference.trainable_variables)
    latest = tf.train.latest_checkpoint(str(run / "checkpoints"))
    tf.train.Checkpoint(model=reference, optimizer=optimizer).restore(latest).expect_partial()
    # Two separately built models start from different random weights: equal means restored.
    assert len(model.weights) == len(reference.weights) == 97
    for loaded, expected in zip(model.weights, reference.weights):
        np.testing.assert_array_equal(loaded.numpy(), expected.numpy(), err_msg=loaded.path)


def test_an_older_run_whose_weights_do_not_fit_is_refused_with_the_reason(tmp_path) -> None:
    from xtts_cli.training.synthesis import load_run

    run = tmp_path / "legacy"
    shutil.copytree(LEGACY_RUN, run)
    config = yaml.safe_load((run / "config.yaml").read_text())
    config["model"]["d_model"] = 48
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(XttsError) as info:
        load_run(run)
    assert "written by an older xtts" in info.value.lines[0] and "do not fit" in info.value.lines[0]
    assert "--fresh" in info.value.hint


def test_self_conditioned_training_under_a_fading_attention_prior_logs_both_passes(tmp_path) -> None:
    config = resolve_config(
        tiny_config(tmp_path, "  self_conditioning: true\n  attention_prior_steps: 4\n"),
        {"training.max_steps": 4, "training.log_step": 1, "training.save_step": 4, "training.sample_step": 1000},
    ).config
    Controller(Trainer(config, run_dir=tmp_path / "run")).run()
    records = [r for r in read_metrics(tmp_path / "run" / "metrics.jsonl") if "loss" in r]
    assert [r["step"] for r in records] == [1, 2, 3, 4]
    for record in records:
        # The second pass reads the model's own frames: its loss is logged beside the teacher-forced one.
        assert np.isfinite(record["self_conditioned_mel_loss"]) and record["self_conditioned_mel_loss"] > 0.0
        assert np.isfinite(record["loss"]) and 0.0 < record["alignment_score"] <= 1.0
