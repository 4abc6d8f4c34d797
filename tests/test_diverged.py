"""Weights that an update turned into NaN or Inf: never saved, and never trusted where an older xtts saved
them (resume, synthesis, --init-from). The loss of a step is computed before its update, so a finite loss
does not vouch for the weights it leaves."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from training_support import tiny_config

from xtts_cli.config import resolve_config
from xtts_cli.errors import XttsError
from xtts_cli.training.checkpointing import NonFiniteWeightsError
from xtts_cli.training.controller import Controller
from xtts_cli.training.events import Noted
from xtts_cli.training.trainer import Trainer

pytestmark = pytest.mark.slow


def poisoned(prefix: Path) -> None:
    """Rewrite the checkpoint at `prefix` with one model weight all NaN, every other tensor (the object
    graph included) as it was: what an older xtts saved after an update that overflowed."""
    reader = tf.train.load_checkpoint(str(prefix))
    names = sorted(reader.get_variable_to_shape_map())
    target = next(n for n in names if n.startswith("model/") and reader.get_tensor(n).dtype == np.float32)
    tensors = [reader.get_tensor(n) for n in names]
    tensors = [np.full_like(t, np.nan) if n == target else t for n, t in zip(names, tensors)]
    for path in prefix.parent.glob(prefix.name + ".*"):
        path.unlink()
    tf.raw_ops.SaveV2(prefix=str(prefix), tensor_names=names, shape_and_slices=[""] * len(names), tensors=tensors)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, Path]:
    """A run of 4 steps that keeps ckpt-2 and ckpt-4."""
    root = tmp_path_factory.mktemp("diverged")
    config_path = tiny_config(root, "  save_step: 2\n")
    Controller(Trainer(resolve_config(config_path, {"training.max_steps": 4}).config, run_dir=root / "run")).run()
    return root / "run", config_path


def test_an_update_that_overflows_stops_the_run_before_it_is_saved(tmp_path: Path) -> None:
    # A weight decay of 1e39 overflows float32 at the first update, whose loss (computed before it) is finite.
    settings = {"training.learning_rate": 1.0, "training.weight_decay": 1e39, "training.warmup_steps": 0}
    config = resolve_config(tiny_config(tmp_path, "  save_step: 1\n"), {**settings, "training.max_steps": 3}).config
    with pytest.raises(NonFiniteWeightsError) as info:
        Controller(Trainer(config, run_dir=tmp_path / "run")).run()
    assert info.value.exit_code == 3
    assert info.value.lines[0].startswith("the weights hold NaN or Inf after step 1 (")
    assert "no checkpoint was saved" in (info.value.hint or "")
    assert not list((tmp_path / "run").glob("checkpoints/ckpt-*"))


def test_a_diverged_checkpoint_is_passed_over_by_resume_and_synthesis(trained, tmp_path: Path, runner) -> None:
    from xtts_cli.cli.app import app

    source, config_path = trained
    run = tmp_path / "run"
    shutil.copytree(source, run)
    poisoned(run / "checkpoints" / "ckpt-4")

    out = tmp_path / "hello.wav"
    said = runner.invoke(app, ["synthesize", "the cat.", "-r", str(run), "-o", str(out), "--max-frames", "40"])
    assert said.exit_code == 0, said.output
    assert "ckpt-4 cannot be used (its weights hold NaN or Inf" in said.output and "restored ckpt-2" in said.output

    notes: list[str] = []
    config = resolve_config(config_path, {"training.max_steps": 3}).config
    progress = lambda event: notes.append(event.message) if isinstance(event, Noted) else None  # noqa: E731
    result = Controller(Trainer(config, run_dir=run, progress=progress)).run()
    assert result.start_step == 2 and result.final_step == 3
    # A start from it offers the checkpoint before, whose weights are finite.
    child = runner.invoke(
        app,
        [
            "train",
            "-c",
            str(config_path),
            "-r",
            str(tmp_path / "child"),
            "--init-from",
            str(run / "checkpoints" / "ckpt-4"),
            "-n",
            "1",
        ],
    )
    assert child.exception.hint == (
        f"start from an earlier checkpoint of that run (--init-from {run / 'checkpoints' / 'ckpt-3'}) or from another run"
    )
    assert any(note.startswith(f"checkpoint {run / 'checkpoints' / 'ckpt-4'}: its weights hold NaN") for note in notes)


def test_a_run_whose_every_checkpoint_diverged_is_refused(trained, tmp_path: Path, runner) -> None:
    from xtts_cli.cli.app import app

    source, config_path = trained
    run = tmp_path / "run"
    shutil.copytree(source, run)
    for number in (2, 4):
        poisoned(run / "checkpoints" / f"ckpt-{number}")

    said = runner.invoke(app, ["synthesize", "the cat.", "-r", str(run), "-o", str(tmp_path / "x.wav")])
    assert isinstance(said.exception, XttsError), said.output
    assert said.exception.lines[0].startswith(f"cannot speak with {run / 'checkpoints' / 'ckpt-4'}, nor any")
    assert not (tmp_path / "x.wav").exists()

    config = resolve_config(config_path, {"training.max_steps": 6}).config
    with pytest.raises(NonFiniteWeightsError) as info:
        Controller(Trainer(config, run_dir=run)).run()
    assert info.value.lines[0].startswith(f"cannot resume from {run / 'checkpoints' / 'ckpt-4'}, nor any")

    child = runner.invoke(
        app, ["train", "-c", str(config_path), "-r", str(tmp_path / "child"), "--init-from", str(run), "-n", "1"]
    )
    assert isinstance(child.exception, XttsError), child.output
    assert "ckpt-4 holds NaN or Inf weights (1, e.g. model/" in child.exception.lines[0]
    # ckpt-2 is no way out either: not offered.
    assert (
        child.exception.hint
        == "start from another run: that run keeps no checkpoint before it whose weights are finite"
    )
    assert not list((tmp_path / "child").glob("checkpoints/ckpt-*"))


def test_a_loss_that_rises_threefold_is_warned_of_at_the_end(tmp_path: Path) -> None:
    # A learning rate of 1 with no clipping: the loss climbs from about 12 to hundreds, finite; the run
    # had ended with exit 0 and "listen:", nothing said.
    settings = {"training.learning_rate": 1.0, "training.gradient_clip_norm": 0, "training.warmup_steps": 0}
    config = resolve_config(tiny_config(tmp_path), {**settings, "training.max_steps": 3}).config
    said: list[Noted] = []
    progress = lambda event: said.append(event) if isinstance(event, Noted) else None  # noqa: E731
    result = Controller(Trainer(config, run_dir=tmp_path / "run", progress=progress)).run()
    assert result.last_loss > 3 * result.first_loss
    (warning,) = [note for note in said if note.label == "warning" and note.message.startswith("the loss rose from")]
    assert "training is diverging; lower training.learning_rate (1)" in warning.message
    assert warning.message in result.notes
