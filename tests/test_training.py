"""The trainer on the real tiny model and the bundled speech, in-process (one device layout)."""

from __future__ import annotations

import json
import re
import shutil
import time
import wave
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
import yaml
from training_support import tiny_config, undocumented_keys

from xtts_cli.config import resolve_config
from xtts_cli.errors import XttsError
from xtts_cli.training.controller import Controller, Hook, NonFiniteLossError
from xtts_cli.training.events import StepLogged
from xtts_cli.training.metrics import read_metrics
from xtts_cli.training.trainer import Trainer


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, Path, object]:
    """One short run shared by the tests that inspect or continue it."""
    root = tmp_path_factory.mktemp("trained")
    config_path = tiny_config(root)
    config = resolve_config(config_path, {"training.max_steps": 40, "training.save_step": 20}).config
    seen = Recorder()
    trainer = Trainer(config, run_dir=root / "run", progress=seen.events.append)
    result = Controller(trainer, extra_hooks=[seen]).run()
    return root, config_path, result, seen


class Recorder(Hook):
    """A caller's own hook: what the controller hands it, and every progress event."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.events: list[object] = []
        self.ends: list[object] = []  # each StepEnd as handed over

    def on_start(self, result) -> None:
        self.calls.append(("start", result.start_step))

    def on_step(self, end) -> None:
        self.calls.append(("step", end.step, end.last, sorted(end.losses)))
        self.ends.append(end)

    def on_end(self, result) -> None:
        self.calls.append(("end", result.final_step))


@pytest.mark.slow
def test_the_controller_hands_every_step_to_the_hooks_and_emits_typed_events(trained) -> None:
    _, _, result, seen = trained
    assert seen.calls[0] == ("start", 0) and seen.calls[-1] == ("end", 40)
    steps = seen.calls[1:-1]
    assert [call[1] for call in steps] == list(range(1, 41))
    assert [call[2] for call in steps] == [False] * 39 + [True]  # the last step is flagged
    assert {"loss", "mel_loss", "stop_loss", "alignment_score"} <= set(steps[0][3])
    kinds = [type(event).__name__ for event in seen.events]
    # What the user waits for before the first step is announced as phases, each named.
    phases = [event.name for event in seen.events if type(event).__name__ == "PhaseStarted"]
    assert phases[:3] == [
        "scanning the dataset",
        "building the input pipeline and the model",
        "tracing the training step (its first call builds the graph)",
    ]
    assert kinds.index("PhaseEnded") > kinds.index("RunStarted")  # the trace ends with the first step
    kinds = [kind for kind in kinds if not kind.startswith("Phase")]
    assert kinds[:2] == ["ScanFinished", "RunStarted"] and kinds[-1] == "RunEnded"
    logged = [event for event in seen.events if isinstance(event, StepLogged)]
    assert [event.step for event in logged] == list(range(2, 41, 2))  # every log_step
    assert logged[-1].record()["loss"] == logged[-1].loss and logged[-1].traces == result.traces
    assert seen.events[-1].result is result


@pytest.mark.slow
def test_a_logged_window_leaves_out_its_steps_that_traced_a_graph(trained) -> None:
    # A trace takes seconds, a tiny step milliseconds: a first window holding it read as a stall and
    # squashed TensorBoard's step_ms chart. A window of traced steps alone still says what they took.
    _, _, _, seen = trained
    logged = [event for event in seen.events if isinstance(event, StepLogged)]
    mixed = 0
    for event in logged:
        window = [end for end in seen.ends if event.step - 2 < end.step <= event.step]  # log_step 2
        timed = [end for end in window if not end.traced] or window
        mixed += len(timed) < len(window)
        expected = 1000.0 * sum(end.wait + end.compute for end in timed) / len(timed)
        assert event.step_ms == pytest.approx(expected), (event.step, [end.traced for end in window])
    assert mixed >= 1  # the first step traces; a window held it beside a step that did not


@pytest.mark.slow
def test_loss_falls_and_traces_stay_within_the_bucket_bound(trained) -> None:
    _, _, result, _ = trained
    assert result.final_step == 40
    assert result.last_loss < 0.7 * result.first_loss
    assert 1 <= result.traces <= result.shape_bound + 1


@pytest.mark.slow
def test_run_directory_holds_everything_to_resume_and_compare(trained) -> None:
    root, config_path, _, _ = trained
    run = root / "run"
    resolved = yaml.safe_load((run / "config.yaml").read_text())
    assert resolved == resolve_config(
        config_path, {"training.max_steps": 40, "training.save_step": 20}
    ).config.model_dump(mode="json")
    info = json.loads((run / "run.json").read_text())
    import tensorflow as tf

    assert info["model_identity"]["model.d_model"] == 32 and info["tensorflow_version"] == tf.__version__
    assert (run / "vocab.json").is_file() and (run / "speaker_reference.npy").is_file()
    assert sorted(p.name for p in (run / "checkpoints").glob("ckpt-*.index")) == ["ckpt-20.index", "ckpt-40.index"]
    records = [r for r in read_metrics(run / "metrics.jsonl") if "loss" in r]
    assert [r["step"] for r in records] == list(range(2, 41, 2))
    for key in ("loss", "lr", "step_ms", "data_wait_ms", "samples_per_sec", "traces"):
        assert key in records[-1]
    assert list((run / "tensorboard").glob("events.out.tfevents.*"))


@pytest.mark.slow
def test_a_start_says_what_preprocessing_mode_auto_chose(tmp_path) -> None:
    # Where the features are kept had gone unsaid at the start (validate's resolved settings said it).
    config = resolve_config(tiny_config(tmp_path), {"training.max_steps": 1, "data.preprocessing_mode": "auto"}).config
    result = Controller(Trainer(config, run_dir=tmp_path / "run")).run()
    assert any(re.match(r"preprocessing_mode auto chose cache: features \d+ [kM]B fit the ", n) for n in result.notes)


@pytest.mark.slow
def test_a_ctrl_c_after_the_last_step_leaves_a_complete_run_not_an_interrupted_one(tmp_path) -> None:
    # Pressed as the last step's samples or checkpoint were made: it had exited 130, "run the same
    # command to resume", for a run with nothing left to train.
    import signal

    class CtrlCAtTheLastStep(Hook):
        def __init__(self, last: int) -> None:
            self.last = last

        def on_step(self, end) -> None:
            if end.step == self.last:
                signal.raise_signal(signal.SIGINT)

    # The last of its steps, and the last of its minutes (a budget spent by its first step).
    for last, settings in ((2, {"training.max_steps": 2}), (1, {"training.max_minutes": 0.0001})):
        config = resolve_config(tiny_config(tmp_path), settings).config
        said: list = []
        trainer = Trainer(config, run_dir=tmp_path / f"run-{last}", progress=said.append)
        result = Controller(trainer, [CtrlCAtTheLastStep(last)]).run()
        assert (result.final_step, result.exit_code, result.interrupted) == (last, 0, None)
        complete = f"SIGINT came after the last step ({last}): the run is complete"
        assert complete in [getattr(e, "message", "") for e in said]


@pytest.fixture(scope="module")
def resumed(trained):
    """The trained run resumed from step 40 to 44 once, over what a crash and new data leave behind:
    a save's stale partial checkpoint, steps logged after the last checkpoint with a torn line, and
    a copy of the data with a speaker the run never saw. One resume (a trace of the step) serves
    the three tests that read it."""
    from xtts_cli.data.scan import BUNDLED_SAMPLE

    root, config_path, _, _ = trained
    run = root / "run"
    checkpoints = run / "checkpoints"
    # What a crash in the middle of a save leaves: temp shards the pointer never named.
    stale = checkpoints / "ckpt-999_temp"
    stale.mkdir()
    (stale / "part-00000-of-00001.data-00000-of-00001").write_bytes(b"\0" * 100)
    (checkpoints / "ckpt-999.index.tmp").write_bytes(b"garbage")
    assert "ckpt-40" in (checkpoints / "checkpoint").read_text()
    # What a kill -9 after the last checkpoint leaves: steps logged that the resume trains again
    # (42 is logged again at log_step 2), and a line torn mid-write.
    with open(run / "metrics.jsonl", "a", encoding="utf-8") as metrics:
        metrics.write('{"step": 41, "loss": 1.0}\n{"step": 42, "loss": 1.0}\n{"step": 43, "lo')
    writer = tf.summary.create_file_writer(str(run / "tensorboard"))  # and their TensorBoard scalars
    with writer.as_default():
        for step in (41, 42, 43):
            tf.summary.scalar("train/loss", 1.0, step=step)
    writer.close()
    data = root / "data"
    shutil.copytree(BUNDLED_SAMPLE, data)
    speakers = data / "speakers.csv"
    speakers.write_text(speakers.read_text(encoding="utf-8").replace("|en-us\n", "|newcomer\n"), encoding="utf-8")
    said: list = []
    config = resolve_config(config_path, {"training.max_steps": 44, "data.dataset_path": str(data)}).config
    result = Controller(Trainer(config, run_dir=run, progress=said.append)).run()
    return result, said, stale, data


@pytest.mark.slow
def test_resume_continues_the_step_count_past_a_stale_partial_checkpoint(trained, resumed) -> None:
    root, _, _, _ = trained
    result, _, stale, _ = resumed
    assert result.resumed and result.start_step == 40 and result.final_step == 44
    assert not stale.exists() and not (root / "run" / "checkpoints" / "ckpt-999.index.tmp").exists()


@pytest.mark.slow
def test_a_resume_after_a_kill_records_each_step_once(trained, resumed) -> None:
    root, _, _, _ = trained
    records = read_metrics(root / "run" / "metrics.jsonl")
    steps = [record["step"] for record in records if "loss" in record]
    assert steps == list(range(2, 45, 2)) and all(record.get("loss") != 1.0 for record in records)
    from xtts_cli.training.summaries import EVENT_FILES

    drawn = [
        (event.step, tf.make_ndarray(value.tensor))
        for path in (root / "run" / "tensorboard").glob(EVENT_FILES)
        for event in map(tf.compat.v1.Event.FromString, tf.data.TFRecordDataset(str(path)).as_numpy_iterator())
        for value in event.summary.value
        if value.tag == "train/loss"
    ]
    assert sorted(step for step, _ in drawn) == list(range(2, 45, 2)) and all(loss != 1.0 for _, loss in drawn)
    # lr is the rate each logged step trained with: warm-up's 2/5 and 4/5 of the peak (it had been the
    # next step's, 3/5 and 5/5); every loss the record holds has its curve.
    lr = {record["step"]: record["lr"] for record in records if "lr" in record}
    assert (lr[2], lr[4]) == (pytest.approx(0.003 * 2 / 5), pytest.approx(0.003 * 4 / 5)), lr
    tags = {
        value.tag
        for path in (root / "run" / "tensorboard").glob(EVENT_FILES)
        for event in map(tf.compat.v1.Event.FromString, tf.data.TFRecordDataset(str(path)).as_numpy_iterator())
        for value in event.summary.value
    }
    assert {f"train/{key}" for key in records[0] if key.endswith("loss")} <= tags, tags


@pytest.mark.slow
def test_a_resume_on_data_with_a_new_speaker_or_letter_says_what_the_fixed_vocabulary_does(
    trained, resumed, runner
) -> None:
    from xtts_cli.cli.app import app
    from xtts_cli.training.events import Noted

    root, config_path, _, _ = trained
    _, said, _, data = resumed
    notes = [event.message for event in said if isinstance(event, Noted)]
    assert any(note.startswith("speaker newcomer of this data is not among the run's 4") for note in notes), notes
    # A letter the vocabulary lacks: refused, pointing at a run that grows it.
    metadata = data / "metadata.csv"
    metadata.write_text(metadata.read_text(encoding="utf-8").replace("kettle", "kettle λ", 2), encoding="utf-8")
    args = ["train", "-c", str(config_path), "-r", str(root / "run"), "--data", str(data), "--steps", "46"]
    refused = runner.invoke(app, args)
    assert isinstance(refused.exception, XttsError), refused.output
    assert "λ" in refused.exception.hint and "--init-from RUN grows it" in refused.exception.hint


@pytest.mark.slow
def test_changed_model_config_is_refused_then_fresh_starts_over(trained) -> None:
    root, config_path, _, _ = trained
    changed = resolve_config(config_path, {"model.d_model": 48, "training.max_steps": 50}).config
    with pytest.raises(XttsError) as info:
        Controller(Trainer(changed, run_dir=root / "run")).run()
    assert "model.d_model (32 -> 48)" in info.value.lines[0]
    assert "--fresh" in info.value.hint and "--force" in info.value.hint
    # --force where a weight changed shape: the restore fails, and the run's record is as it was,
    # so the run resumes with its own config again.
    record = {name: (root / "run" / name).read_bytes() for name in ("config.yaml", "run.json")}
    with pytest.raises(XttsError, match="cannot restore"):
        Controller(Trainer(changed, run_dir=root / "run", force=True)).run()
    assert {name: (root / "run" / name).read_bytes() for name in record} == record
    # --force where the shapes that remain fit but the model has weights the checkpoint lacks (another
    # decoder): refused too, not resumed partly from random weights that later saves would keep.
    other = resolve_config(config_path, {"model.decoder": "duration", "training.max_steps": 50}).config
    with pytest.raises(XttsError) as info:
        Controller(Trainer(other, run_dir=root / "run", force=True)).run()
    assert " holds no value for " in info.value.lines[0] and "--fresh" in info.value.hint
    assert {name: (root / "run" / name).read_bytes() for name in record} == record
    said: list = []
    result = Controller(
        Trainer(
            changed.model_copy(update={"training": changed.training.model_copy(update={"max_steps": 2})}),
            run_dir=root / "run",
            fresh=True,
            progress=said.append,
        )
    ).run()
    assert result.start_step == 0 and result.final_step == 2
    (kept,) = root.glob("run.old-*")  # the old run is kept, never deleted, and the user is told where
    assert f"--fresh: the old run is kept as {kept}" in [getattr(event, "message", "") for event in said]


@pytest.mark.slow
def test_a_refused_force_resume_leaves_the_run_as_it_was_adding_no_file(runner, tmp_path: Path) -> None:
    # A vocoder run resumed --force with an acoustic config: another kind's network is refused before
    # the set-up (--force cannot resume across it), so no acoustic file is written beside the vocoder's.
    from xtts_cli.cli.app import app

    run = tmp_path / "vocoder"
    shutil.copytree(Path(__file__).parent / "data" / "legacy_vocoder_run", run)

    def record() -> dict:  # its files, bar the lock and the marker any start leaves (xtts_cli/locks.py)
        return {path.name: path.read_bytes() for path in run.iterdir() if path.is_file() and path.name[0] != "."}

    before = record()
    refused = runner.invoke(app, ["train", "-c", str(tiny_config(tmp_path)), "-r", str(run), "--force", "-n", "2"])
    assert isinstance(refused.exception, XttsError), refused.output
    assert refused.exception.lines[0].endswith("changed: model.kind (vocoder -> acoustic)")
    assert record() == before


@pytest.mark.slow
def test_nan_loss_stops_with_step_and_metric_named(tmp_path: Path, monkeypatch) -> None:
    import tensorflow as tf

    from xtts_cli.model.xtts import XttsModel

    original = XttsModel.compute_loss
    calls = tf.Variable(0, dtype=tf.int32, trainable=False)

    def poisoned(self, batch, outputs, **settings):
        losses = dict(original(self, batch, outputs, **settings))
        count = calls.assign_add(1)
        losses["loss"] = tf.where(count >= 3, tf.constant(float("nan")), losses["loss"])
        return losses

    monkeypatch.setattr(XttsModel, "compute_loss", poisoned)
    config = resolve_config(tiny_config(tmp_path), {"training.max_steps": 10, "training.save_step": 2}).config
    with pytest.raises(NonFiniteLossError) as info:
        Controller(Trainer(config, run_dir=tmp_path / "run")).run()
    assert info.value.exit_code == 3
    assert info.value.lines[0].startswith("training.loss is nan at step 3")
    # Step 2 was saved; the NaN step never was.
    assert sorted(p.name for p in (tmp_path / "run" / "checkpoints").glob("ckpt-*.index")) == ["ckpt-2.index"]


@pytest.mark.slow
def test_synthesize_writes_speech_length_audio(trained, runner) -> None:
    from xtts_cli.cli.app import app

    root, _, _, _ = trained
    out = root / "hello.wav"
    result = runner.invoke(
        app, ["synthesize", "the cat sat.", "--checkpoint", str(root / "run"), "--out", str(out), "--max-frames", "120"]
    )
    assert result.exit_code == 0, result.output
    with wave.open(str(out)) as handle:
        assert handle.getframerate() == 22050 and handle.getnchannels() == 1
        seconds = handle.getnframes() / handle.getframerate()
    assert 0.0 < seconds <= 120 * 256 / 22050 + 0.01
    assert "sentences" not in next(line for line in result.output.splitlines() if line.startswith("ended by: "))
    # The window it says the clip stopped in is in the clip's own measure: at the floor, it had been
    # one hop over the clip (a clip of N frames is N - 1 hops of audio).
    spoken = runner.invoke(app, ["synthesize", "the cat sat.", "-r", str(root / "run"), "-o", str(out), "--json"])
    report = json.loads(spoken.stdout)
    low, high = report["window_seconds"]
    if report["ended_by"].startswith("stop token"):
        assert low <= report["seconds"] <= high, report
    assert report["seconds"] == round((report["frames"] - 1) * 256 / 22050, 3)
    # Two sentences: the window it reports is theirs added up, and the audio has a pause between them.
    two = runner.invoke(
        app, ["synthesize", "the cat sat. a dog ran.", "-r", str(root / "run"), "-o", str(root / "2.wav")]
    )
    assert two.exit_code == 0, two.output
    ended = next(line for line in two.output.splitlines() if line.startswith("ended by: "))
    assert "for the 2 parts it was spoken in, the pauses apart)" in ended, ended


@pytest.mark.slow
def test_synthesized_length_follows_the_training_data_speaking_rate(trained, runner) -> None:
    from xtts_cli.cli.app import app
    from xtts_cli.data.text import Tokenizer
    from xtts_cli.run.files import load_speaking_rate

    root, _, _, _ = trained
    rate = load_speaking_rate(root / "run")
    # espeak-ng reads the sample at ~13 characters/s: ~6-7 mel frames per character at 86 frames/s.
    assert rate is not None and rate.clips >= 30 and 4.0 < rate.p10 <= rate.median <= rate.p90 < 10.0
    text = "the cat sat on the mat."
    tokens = len(Tokenizer.load(root / "run" / "vocab.json").encode(text))
    out = root / "mat.wav"
    result = runner.invoke(app, ["synthesize", text, "--checkpoint", str(root / "run"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with wave.open(str(out)) as handle:
        frames = handle.getnframes() / 256
    low, high = rate.frame_window(tokens, 10_000)
    assert low - 1 <= frames <= high + 1
    assert 0.5 * rate.median * tokens <= frames <= 2.0 * rate.median * tokens


@pytest.mark.slow
def test_synthesize_rejects_empty_text_and_another_script_and_leaves_out_a_symbol(trained, runner) -> None:
    from xtts_cli.cli.app import app

    root, _, _, _ = trained
    empty = runner.invoke(app, ["synthesize", "  ", "--checkpoint", str(root / "run"), "--out", str(root / "x.wav")])
    assert isinstance(empty.exception, XttsError) and "empty" in empty.exception.lines[0]
    unknown = runner.invoke(
        app, ["synthesize", "snow \u0436", "--checkpoint", str(root / "run"), "--out", str(root / "x.wav")]
    )
    assert isinstance(unknown.exception, XttsError) and "\u0436" in unknown.exception.lines[0]
    assert "the run reads en: pass text in it" in unknown.exception.hint  # what it reads, not how to rebuild
    assert not (root / "x.wav").exists()
    # A symbol the run never saw is no reason to refuse the sentence: left out, and named once, in
    # one note for the whole text however many of its sentences hold one. The same call shows (in
    # --json) what the run read: its numbers as words.
    text = "It is $5. snow \u2603. snow \u2713 \u2603."
    symbol = runner.invoke(
        app, ["synthesize", text, "--checkpoint", str(root / "run"), "--out", str(root / "x.wav"), "--json"]
    )
    assert symbol.exit_code == 0, (symbol.output, symbol.exception)
    assert json.loads(symbol.stdout)["notes"] == ["left out what the run never saw: \u2603 \u2713"]
    # What it read: the symbols left out (it had shown them).
    assert json.loads(symbol.stdout)["read_as"] == "it is five dollars. snow. snow."


@pytest.mark.slow
def test_epochs_are_cut_from_one_stream_of_batches_that_runs_on(tmp_path: Path) -> None:
    import itertools

    # training.epochs bounds the run: epochs x steps_per_epoch steps, every epoch drawn from one
    # iterator over the repeated dataset (an iterator torn down per epoch stalled at each epoch's end).
    # A run stopped inside an epoch (here at step 3) and resumed trains what is left of it: each step
    # keeps its epoch, and the run ends after 2 epochs (it had trained a whole epoch more after step 3).
    stopped = resolve_config(tiny_config(tmp_path), {"training.epochs": 2, "training.max_steps": 3}).config
    Controller(Trainer(stopped, run_dir=tmp_path / "run")).run()
    config = resolve_config(tiny_config(tmp_path), {"training.epochs": 2}).config
    assert config.training.max_steps is None
    trainer = Trainer(config, run_dir=tmp_path / "run")
    result = Controller(trainer).run()
    parts = trainer.parts
    per_epoch = parts.input.steps_per_epoch
    assert result.resumed and result.final_step == 2 * per_epoch and int(parts.counters.epoch.numpy()) == 2
    records = [record for record in read_metrics(tmp_path / "run" / "metrics.jsonl") if "epoch" in record]
    assert [record["epoch"] for record in records] == [(record["step"] - 1) // per_epoch for record in records]
    assert result.loop_seconds > 0 and 0 < result.step_time_percent <= 100
    # The speed leaves out the first step's trace (seconds, once), which the loop's wall clock holds.
    assert result.trace_seconds > 0
    trained = result.final_step - result.start_step
    assert result.steps_per_sec > (trained - 1) / (result.loop_seconds - result.trace_seconds)
    stream = parts.steps.batches(parts.input.train_ds)
    assert sum(1 for _ in itertools.islice(stream, 2 * per_epoch + 1)) == 2 * per_epoch + 1


def test_a_pass_over_the_data_that_gives_no_batch_stops_the_run_with_the_fix_and_its_steps_saved(
    tmp_path: Path,
) -> None:
    import shutil

    from xtts_cli.data.scan import BUNDLED_SAMPLE

    # Every clip scanned fine, then went (a dataset on a mount that dropped) after two steps: each read
    # fails and the clip is skipped, and the repeated dataset gives no batch. The run must say so, not
    # wait for batches forever, and keep the steps it trained (the last checkpoint had been step 0).
    data = tmp_path / "data"
    shutil.copytree(BUNDLED_SAMPLE, data)
    config = resolve_config(
        tiny_config(tmp_path),
        {"data.dataset_path": str(data), "data.preprocessing_mode": "runtime", "training.max_steps": 20},
    ).config

    class Spoil(Hook):
        def on_step(self, end) -> None:
            if end.step == 2:
                for wav in (data / "wavs").glob("*.wav"):
                    wav.unlink()

    said: list = []
    with pytest.raises(XttsError, match=r"ran out of batches after step") as raised:
        Controller(Trainer(config, run_dir=tmp_path / "run", progress=said.append), extra_hooks=[Spoil()]).run()
    assert "replace or remove the audio files" in (raised.value.hint or "")
    ran_out_at = int(re.search(r"after step (\d+)", str(raised.value)).group(1))
    kept = [str(event) for event in said if f"step {ran_out_at} trained before the error" in str(event)]
    assert ran_out_at >= 2 and kept, said[-3:]
    assert Path(re.search(r"saved it \((.+?)\)", kept[0]).group(1) + ".index").is_file()


def test_cosine_decays_over_the_steps_or_the_time_budget_whichever_is_further_along() -> None:
    import tensorflow as tf

    from xtts_cli.kinds.optimization import build_schedule

    training = resolve_config(
        None, {"training.learning_rate": 0.002, "training.warmup_steps": 100, "training.lr_schedule": "cosine"}
    ).config.training
    used = tf.Variable(0.0)
    schedule = build_schedule(training, 1100, used)
    by_steps = build_schedule(training, 1100)

    def rate(step: int, spent: float) -> float:
        used.assign(spent)
        return float(schedule(step))

    assert rate(49, 0.9) == pytest.approx(0.001)  # warm-up goes by steps alone
    for step in (100, 350, 600, 1100):
        assert rate(step, 0.0) == pytest.approx(float(by_steps(step)))  # no time spent: the steps lead
    assert rate(600, 0.2) == pytest.approx(float(by_steps(600)))  # half the steps, a fifth of the time
    assert rate(350, 0.5) == pytest.approx(float(by_steps(600)))  # half the time: half-way down
    assert rate(350, 1.0) == pytest.approx(0.0002) == float(by_steps(1100))  # spent: the floor
    assert rate(350, 1.7) == pytest.approx(0.0002)


# bfloat16 on the CPU twin: the same Keras policy and casts a GPU run gets (rtx4090.yaml). Each
# decoder trains in mixed precision in a test below whose other checks hold for any decoder and
# precision: a run of its own would trace the step once more (seconds of CPU).
MIXED_BFLOAT16 = {"training.mixed_precision": True, "training.mixed_precision_dtype": "bfloat16"}


def assert_trained_in_mixed_precision(trainer: Trainer, result) -> None:
    import math

    import keras

    assert result.last_loss is not None and math.isfinite(result.last_loss)
    assert trainer.parts.models.model.dtype_policy.name == "mixed_bfloat16"
    assert keras.mixed_precision.dtype_policy().name == "float32"  # set back when the run closed


@pytest.mark.slow
def test_a_validation_clip_damaged_behind_its_header_is_skipped_for_the_test_sentences_voice(tmp_path: Path) -> None:
    """The first validation clip, a FLAC whose frames are zeroed behind its header (the scan reads
    the header and the final frame, and zeros hold no frame to tell by, so it keeps the clip), is
    not the test sentences' voice: the next readable clip is, with a note, and the run trains."""
    import soundfile

    from xtts_cli.data.scan import scan_dataset
    from xtts_cli.training.events import Noted

    data = tmp_path / "data"
    shutil.copytree(Path(__file__).parent.parent / "xtts_cli" / "data" / "sample", data)
    overrides = {"data.dataset_path": str(data), "data.eval_fraction": 0.1, "training.max_steps": 2}
    config = resolve_config(tiny_config(tmp_path), overrides).config
    first = Path(scan_dataset(config.data).eval[0].audio_path)
    audio, rate = soundfile.read(first)
    damaged = first.with_suffix(".flac")
    soundfile.write(damaged, audio, rate)
    whole = damaged.read_bytes()
    damaged.write_bytes(whole[:4000] + bytes(len(whole) - 4000))  # a copy whose blocks were lost
    first.unlink()
    events: list = []
    result = Controller(Trainer(config, run_dir=tmp_path / "run", progress=events.append)).run()
    assert result.final_step == 2
    notes = [event.message for event in events if isinstance(event, Noted)]
    voice = next(note for note in notes if note.startswith("the test sentences speak with "))
    assert f": {damaged} cannot be decoded" in voice
    assert (tmp_path / "run" / "speaker_reference.npy").is_file()


@pytest.mark.slow
def test_a_budget_that_runs_out_between_steps_leaves_nothing_to_train_when_run_again(tmp_path: Path) -> None:
    """The budget ends the run after some steps (not at start-up): the minutes its last checkpoint
    keeps are those it was judged by, so the same command again trains no further step."""
    overrides = {"training.max_steps": 100_000, "training.max_minutes": 0.3, "training.warmup_steps": 0}
    config = resolve_config(tiny_config(tmp_path), overrides).config
    trainer = Trainer(config, run_dir=tmp_path / "run")
    result = Controller(trainer).run()
    assert result.out_of_time and result.final_step > 0
    assert float(trainer.parts.counters.minutes.numpy()) >= 0.3
    again = Controller(Trainer(config, run_dir=tmp_path / "run")).run()
    assert again.out_of_time and again.final_step == result.final_step
    # `xtts train` counts from the command's start (TensorFlow's import, the scan): a command that
    # began a minute ago has spent a 0.3-minute budget before the first step. Ended inside its
    # warm-up, the rate never decayed, and the note says so.
    warming = resolve_config(tiny_config(tmp_path), {**overrides, "training.warmup_steps": 50}).config
    said: list = []
    late = Controller(Trainer(warming, run_dir=tmp_path / "late", progress=said.append), started=time.monotonic() - 60)
    assert late.run().final_step == 1 and float(late.trainer.parts.counters.minutes.numpy()) >= 1.0
    notes = [e.message for e in said if type(e).__name__ == "Noted"]
    assert any(
        n.startswith("training.max_minutes (0.3) reached after step 1 of ") and "still warming up" in n for n in notes
    ), notes


@pytest.mark.slow
def test_a_time_budget_ends_the_run_like_max_steps_and_the_duration_decoder_trains_in_mixed_precision(
    tmp_path: Path,
) -> None:
    from xtts_cli.training.events import Noted

    # A budget start-up alone uses up: the run trains one step, then ends as at max_steps, and at
    # the schedule's lowest rate (10 % of the peak), not at step 1 of 1,000's nearly full rate.
    overrides = {"training.max_steps": 1000, "training.max_minutes": 0.001, "training.warmup_steps": 0}
    mixed = {"model.decoder": "duration", **MIXED_BFLOAT16}
    config = resolve_config(tiny_config(tmp_path), {**overrides, **mixed}).config
    events: list[object] = []
    trainer = Trainer(config, run_dir=tmp_path / "run", progress=events.append)
    result = Controller(trainer).run()
    assert result.out_of_time and result.final_step == 1 and result.exit_code == 0 and not result.interrupted
    assert float(trainer.optimizer.learning_rate) == pytest.approx(0.1 * config.training.learning_rate)
    notes = [event.message for event in events if isinstance(event, Noted)]
    assert any(note.startswith("training.max_minutes (0.001) reached after step 1 of 1000") for note in notes)
    assert (tmp_path / "run" / "checkpoints" / "ckpt-1.index").is_file()  # saved, and resumable
    # The duration decoder in mixed precision: a finite loss, its policy set back afterwards.
    assert_trained_in_mixed_precision(trainer, result)
    # The budget is the run's, as max_steps is: the same command again has none left, and says so.
    spent = float(trainer.parts.counters.minutes.numpy())
    assert spent > 0.001
    events.clear()
    again = Controller(Trainer(config, run_dir=tmp_path / "run", progress=events.append)).run()
    assert again.final_step == 1 and again.out_of_time and again.exit_code == 0
    notes = [event.message for event in events if isinstance(event, Noted)]
    assert any("nothing to train; raise --max-minutes to go on" in note for note in notes), notes
    assert not any(note.startswith("training.max_minutes (0.001) reached") for note in notes)
    # A larger budget goes on from what is left of it, and counts the minutes on.
    more = resolve_config(
        tiny_config(tmp_path), {**overrides, **mixed, "training.max_minutes": 100, "training.max_steps": 2}
    )
    resumed = Trainer(more.config, run_dir=tmp_path / "run")
    assert Controller(resumed).run().final_step == 2
    assert float(resumed.parts.counters.minutes.numpy()) > spent
    # Workers' clocks would not agree on the step: refused before any set-up.
    workers = resolve_config(tiny_config(tmp_path), {**overrides, "devices.strategy": "multi_worker"}).config
    with pytest.raises(XttsError, match="training.max_minutes is 0.001 with devices.strategy multi_worker"):
        Controller(Trainer(workers, run_dir=tmp_path / "workers")).run()
    assert not (tmp_path / "workers").exists()


@pytest.mark.slow
def test_run_steps_is_the_training_loop_with_the_callers_actions_only_and_the_autoregressive_decoder_trains_in_mixed_precision(
    tmp_path: Path,
) -> None:
    # What profile-step times: the loop itself, its actions replaced by the caller's, on batches it may hand in.
    overrides = {"model.decoder": "autoregressive", "training.max_steps": 100, **MIXED_BFLOAT16}
    config = resolve_config(tiny_config(tmp_path), overrides).config
    trainer = Trainer(config, run_dir=tmp_path / "run")
    seen = Recorder()
    try:
        parts = trainer.setup()
        controller, result = Controller(trainer), trainer.new_result()
        controller.run_steps(parts, [seen], result, steps=3)
        batch, _ = next(parts.steps.batches(parts.input.train_ds))
        handed = iter([(batch, 0.25)] * 5)
        controller.run_steps(parts, [seen], result, steps=2, source=handed)
        assert len(list(handed)) == 3  # a handed source is left open, its rest unread
    finally:
        trainer.close()
    assert [call[1] for call in seen.calls if call[0] == "step"] == [1, 2, 3, 4, 5]
    assert [call[0] for call in seen.calls].count("start") == 2 and result.final_step == 5
    assert not (tmp_path / "run" / "checkpoints").exists() or not any((tmp_path / "run" / "checkpoints").iterdir())
    assert not (tmp_path / "run" / "metrics.jsonl").exists()  # no standard action ran
    # The autoregressive decoder in mixed precision: finite losses, its policy set back at close.
    assert_trained_in_mixed_precision(trainer, result)


def test_a_runs_own_config_is_the_one_a_bare_run_dir_resumes_with(tmp_path: Path) -> None:
    from xtts_cli.run.directory import default_run_dir, own_config

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "run_before_run_data", run)
    assert own_config(run) == run / "config.yaml" and own_config(tmp_path) is None and own_config(None) is None
    # `-c RUN/config.yaml` resumes that run rather than starting runs/config.
    assert default_run_dir(run / "config.yaml") == run and default_run_dir(tmp_path / "my.yaml") == Path("runs/my")


@pytest.mark.slow
def test_xtts_train_on_a_run_dir_alone_resumes_with_the_runs_config(tmp_path: Path, runner) -> None:
    from xtts_cli.cli.app import app

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "run_before_run_data", run)
    written = (run / "config.yaml").read_text(encoding="utf-8")
    # Its batch of 4 and 3 steps, not the defaults' 16 and 2,000: already there, nothing to train.
    result = runner.invoke(app, ["train", "--run-dir", str(run), "--json"])
    assert result.exit_code == 0, (result.output, result.exception)
    report = json.loads(result.stdout)
    assert report["start_step"] == report["final_step"] == 3
    assert any(
        note.startswith("the run is at step 3, its 3 steps done: nothing to train; raise --steps")
        for note in report["notes"]
    )
    assert "note: the run is at step 3, its 3 steps done" in result.stderr  # also said, as without --json
    assert not (run / "tensorboard").exists()  # no event file that holds no summary
    assert "ended" not in json.loads((run / "run.json").read_text(encoding="utf-8"))["history"][-1]  # no start added
    assert undocumented_keys("train", report) == [], "add them to docs/json.md (TrainResult's descriptions)"
    before, after = (yaml.safe_load(text) for text in (written, (run / "config.yaml").read_text(encoding="utf-8")))
    for section, key in (("data", "batch_size"), ("training", "learning_rate"), ("model", "d_model")):
        assert after[section][key] == before[section][key], key  # today's layout, the run's own values
    # A one-off flag on a start that trains nothing stays one: --epochs 1 had been written into the
    # run's config.yaml, and the next resume that raised --steps trained nothing.
    assert runner.invoke(app, ["train", "--run-dir", str(run), "--steps", "8"]).exit_code == 0  # an epoch's 8
    record = (run / "config.yaml").read_bytes(), (run / "run.json").read_bytes()
    again = runner.invoke(app, ["train", "--run-dir", str(run), "--steps", "50", "--epochs", "1"])
    assert again.exit_code == 0 and "its 8 steps done: nothing to train" in again.stderr, (
        again.output,
        again.exception,
    )
    assert ((run / "config.yaml").read_bytes(), (run / "run.json").read_bytes()) == record


def test_a_resume_names_the_settings_it_changes_beyond_how_long_it_trains() -> None:
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.run.directory import changed_settings

    before = XttsConfig()
    now = before.model_copy(
        update={
            "training": before.training.model_copy(update={"learning_rate": 0.002, "max_steps": 9}),
            "data": before.data.model_copy(update={"batch_size": 4}),
        }
    )
    assert (
        changed_settings(before, now)
        == f"data.batch_size ({before.data.batch_size} -> 4), training.learning_rate ({before.training.learning_rate!r} -> 0.002)"
    )
    assert changed_settings(before, before) == ""


@pytest.mark.slow
def test_a_resume_that_unfreezes_keeps_the_weights_and_the_step_and_starts_the_moments_again(tmp_path: Path) -> None:
    config_path = tiny_config(tmp_path)
    from xtts_cli.training.checkpointing import _stale_optimizers

    frozen = resolve_config(config_path, {"training.max_steps": 2, "training.freeze": ["speaker_encoder"]}).config
    first = Trainer(frozen, run_dir=tmp_path / "run")
    Controller(first).run()
    # Resumed as it was, the moments are the optimizer's own: kept (most of its list is saved by
    # reference to the model's keys, not under keys of its own).
    saved = str(tmp_path / "run" / "checkpoints" / "ckpt-2")
    assert _stale_optimizers(first.parts.checkpoints.checkpoint, saved) == []
    # Unfrozen, the optimizer's list of trainable weights is longer: a plain restore fails on it.
    said: list = []
    unfrozen = resolve_config(config_path, {"training.max_steps": 3, "training.freeze": []}).config
    trainer = Trainer(unfrozen, run_dir=tmp_path / "run", progress=said.append)
    result = Controller(trainer).run()
    assert result.resumed and (result.start_step, result.final_step) == (2, 3)
    assert int(trainer.parts.models.optimizer.iterations.numpy()) == 3  # the step count went on from 2
    notes = [event.message for event in said if type(event).__name__ == "Noted"]
    assert any(note.startswith("the optimizer's moments were saved for other trainable weights") for note in notes)
    assert any("training.freeze ([speaker_encoder] -> [])" in note for note in notes)


class _Weights(Hook):
    """The model's weights after each step."""

    def __init__(self, trainer: Trainer) -> None:
        self.trainer, self.after = trainer, {}

    def on_step(self, end) -> None:
        self.after[end.step] = [v.numpy().copy() for v in self.trainer.parts.models.model.weights]


@pytest.mark.slow
def test_an_early_stop_ends_the_run_with_the_weights_of_its_best_validation(tmp_path: Path) -> None:
    settings = {"training.max_steps": 40, "training.val_step": 1, "training.early_stop_patience": 2}
    config = resolve_config(tiny_config(tmp_path), {**settings, "training.learning_rate": 0.05}).config
    said: list = []
    trainer = Trainer(config, run_dir=tmp_path / "run", progress=said.append)
    weights = _Weights(trainer)
    result = Controller(trainer, extra_hooks=[weights]).run()
    assert result.early_stopped, "a learning rate this high makes the validation loss rise within 40 steps"
    (note,) = [e.message for e in said if type(e).__name__ == "Noted" and "has not improved" in e.message]
    best = int(note.split("(step ")[1].split(")")[0])
    assert best < result.final_step and note.endswith(f"with the weights of step {best}, the best")
    saved = tf.train.load_checkpoint(str(tmp_path / "run" / "checkpoints" / f"ckpt-{result.final_step}"))
    # A weight is saved once, under whichever path reached it first (the model's or the optimizer's).
    kept = {k: saved.get_tensor(k) for k in saved.get_variable_to_shape_map() if k.endswith("VARIABLE_VALUE")}
    for value in weights.after[best]:  # the final checkpoint holds the best step's weights, not the last's
        assert any(np.array_equal(value, stored) for stored in kept.values() if stored.shape == value.shape)
    last = weights.after[result.final_step - 1]  # before the stop: what the run would otherwise have kept
    assert not all(np.array_equal(a, b) for a, b in zip(last, weights.after[best]))
    assert not (tmp_path / "run" / "checkpoints" / "best").exists()


class _CtrlC(Hook):
    """A real SIGINT to this process after step `at`, as a user's Ctrl-C."""

    def __init__(self, at: int) -> None:
        self.at = at

    def on_step(self, end) -> None:
        if end.step == self.at:
            import os
            import signal

            os.kill(os.getpid(), signal.SIGINT)


@pytest.mark.slow
def test_a_stop_asked_for_during_a_validation_step_saves_it_without_validating_or_sampling_first(
    tmp_path: Path, monkeypatch
) -> None:
    # A scheduler's SIGTERM grace period may not outlast a validation and the test sentences: the
    # step under way is saved at once (it had validated and rendered its samples first).
    settings = {"training.max_steps": 6, "training.val_step": 2, "training.sample_step": 4}
    config = resolve_config(tiny_config(tmp_path), settings).config
    run = tmp_path / "run"
    stepped = Controller._step

    def step_then_signalled(self, parts, batch, wait, **kwargs):
        end = stepped(self, parts, batch, wait, **kwargs)
        if end.step == 4:  # a real SIGTERM, while step 4 runs (its hooks have not yet)
            import os
            import signal

            os.kill(os.getpid(), signal.SIGTERM)
        return end

    monkeypatch.setattr(Controller, "_step", step_then_signalled)
    heard: list = []
    result = Controller(Trainer(config, run_dir=run, progress=heard.append)).run()
    assert result.interrupted == "SIGTERM" and result.final_step == 4
    validated = [r["step"] for r in read_metrics(run / "metrics.jsonl") if "val_loss" in r]
    assert validated == [2], validated
    assert not list((run / "samples").glob("step0000004*.wav"))
    assert (run / "checkpoints" / "ckpt-4.index").is_file()
    notes = [e.message for e in heard if type(e).__name__ == "Noted"]
    assert "step 4's validation skipped: the run is stopping, to save it at once" in notes


def test_a_run_interrupted_before_its_first_step_says_what_it_keeps_not_a_step_saved(tmp_path: Path) -> None:
    # A Ctrl-C while the first batch is awaited (a tf.data service whose worker died) had been told
    # "saved step 0" of a run that saved nothing.
    from xtts_cli.cli.train import interrupted_line
    from xtts_cli.training.events import TrainResult

    run = tmp_path / "run"
    said = {
        (start, final): interrupted_line(TrainResult(run, start, final, bool(start), interrupted="SIGTERM"))
        for start, final in ((0, 0), (2, 2), (2, 5))
    }
    assert said == {
        (0, 0): f"interrupted by SIGTERM: no step trained, so nothing saved in {run}; run the same command to start",
        (2, 2): f"interrupted by SIGTERM: no step trained; {run} keeps step 2; run the same command to resume",
        (2, 5): f"interrupted by SIGTERM: saved step 5 in {run}; run the same command to resume",
    }


@pytest.mark.slow
def test_a_second_ctrl_c_before_any_checkpoint_leaves_no_step_recorded_twice(tmp_path: Path) -> None:
    config = resolve_config(tiny_config(tmp_path), {"training.max_steps": 4, "training.log_step": 1}).config
    run = tmp_path / "run"
    heard: list = []
    with pytest.raises(KeyboardInterrupt, match="nothing saved since the last checkpoint"):
        Controller(Trainer(config, run_dir=run, progress=heard.append), extra_hooks=[_CtrlC(3), _CtrlC(3)]).run()
    # The first is answered at once (a first step traces for seconds, and without a word users pressed again).
    answered = (
        "Ctrl-C: stopping once the step under way ends, and saving it (a second Ctrl-C stops at once, without saving)"
    )
    assert answered in [e.message for e in heard if type(e).__name__ == "Noted"]
    assert not list((run / "checkpoints").glob("ckpt-*.index")) and read_metrics(run / "metrics.jsonl")
    said: list = []
    result = Controller(Trainer(config, run_dir=run, progress=said.append)).run()
    assert not result.resumed and result.final_step == 4
    assert any(
        type(e).__name__ == "Noted" and e.message.startswith("no checkpoint to resume from: the run starts at step 0")
        for e in said
    )
    logged = [(r["step"], "val_loss" in r) for r in read_metrics(run / "metrics.jsonl")]
    assert len(logged) == len(set(logged)) and max(step for step, _ in logged) == 4
    # run.json's history says how each start ended, and at which steps.
    history = json.loads((run / "run.json").read_text(encoding="utf-8"))["history"]
    assert [(start["steps"], start["ended_by"]) for start in history] == [
        ([0, 3], "a second Ctrl-C, unsaved"),
        ([0, 4], "its last step (training.max_steps or epochs)"),
    ]
    assert all(start["ended"] >= start["started"] for start in history)


@pytest.mark.slow
def test_early_stopping_goes_on_from_its_best_after_ctrl_c_and_a_stopped_run_stays_stopped(tmp_path: Path) -> None:
    settings = {"training.max_steps": 40, "training.val_step": 1, "training.early_stop_patience": 3}
    config = resolve_config(tiny_config(tmp_path), {**settings, "training.learning_rate": 0.05}).config
    run = tmp_path / "run"
    first = Trainer(config, run_dir=run)
    weights = _Weights(first)
    interrupted = Controller(first, extra_hooks=[weights, _CtrlC(3)]).run()
    assert interrupted.interrupted == "SIGINT" and interrupted.final_step == 3
    record = json.loads((run / "checkpoints" / "early_stop.json").read_text())
    assert record["step"] <= 3 and record["since_best"] == 3 - record["step"] and record["stopped_at"] is None
    assert (run / "checkpoints" / "best").is_dir()  # the best's weights outlive the interrupt

    second = Trainer(config, run_dir=run)
    resumed_weights = _Weights(second)
    result = Controller(second, extra_hooks=[resumed_weights]).run()
    assert result.resumed and result.start_step == 3 and result.early_stopped
    assert result.best_val_loss <= record["val_loss"]  # the best before Ctrl-C still counts
    best = result.best_val_step
    expected = (weights.after if best <= 3 else resumed_weights.after)[best]
    saved = tf.train.load_checkpoint(str(run / "checkpoints" / f"ckpt-{result.final_step}"))
    kept = [saved.get_tensor(k) for k in saved.get_variable_to_shape_map() if k.endswith("VARIABLE_VALUE")]
    for value in expected:  # the final checkpoint holds the best step's weights, whichever run made them
        assert any(np.array_equal(value, stored) for stored in kept if stored.shape == value.shape)

    said: list = []
    again = Controller(Trainer(config, run_dir=run, progress=said.append)).run()
    assert again.early_stopped and again.start_step == again.final_step == result.final_step
    notes = [e.message for e in said if type(e).__name__ == "Noted"]
    assert any(f"the run stopped early at step {result.final_step}" in n and "nothing to train" in n for n in notes)
    patient = resolve_config(
        tiny_config(tmp_path),
        {**settings, "training.early_stop_patience": 50, "training.max_steps": result.final_step + 2},
    ).config
    said.clear()
    more = Controller(Trainer(patient, run_dir=run, progress=said.append)).run()
    assert not more.early_stopped and more.final_step == result.final_step + 2
    # Out of steps, its best still counts (over resumes) and is kept for a longer run to compare with
    # (it had been forgotten); after validations worse than it, the run ends with its weights, said.
    assert more.best_val_loss <= result.best_val_loss
    record = json.loads((run / "checkpoints" / "early_stop.json").read_text())
    assert record["step"] == more.best_val_step and (run / "checkpoints" / "best").is_dir()
    ending = [
        e.message for e in said if type(e).__name__ == "Noted" and e.message.startswith("ending with the weights")
    ]
    assert len(ending) == (more.best_val_step < more.final_step), ending
    # A limit that reads every validation clip either way is the same validation: the best stays.
    said.clear()
    same = {**settings, "training.max_val_batches": 1, "training.max_steps": more.final_step}
    Controller(Trainer(resolve_config(tiny_config(tmp_path), same).config, run_dir=run, progress=said.append)).run()
    assert not any("compares anew" in e.message for e in said if type(e).__name__ == "Noted")
    # Validated on other clips (another eval set, split or limit), a loss does not compare with the
    # best: the comparison starts anew, where it had rolled the run back to the old best.
    other = {**settings, "data.eval_fraction": 0.3, "training.early_stop_patience": 50}
    said.clear()
    anew = Controller(
        Trainer(
            resolve_config(tiny_config(tmp_path), {**other, "training.max_steps": more.final_step + 1}).config,
            run_dir=run,
            progress=said.append,
        )
    ).run()
    assert anew.final_step == more.final_step + 1 and anew.best_val_step == anew.final_step
    assert any("early stopping compares anew" in e.message for e in said if type(e).__name__ == "Noted")
    assert json.loads((run / "checkpoints" / "early_stop.json").read_text())["step"] == anew.final_step


@pytest.mark.slow
def test_checkpoints_whose_pointer_file_is_gone_are_resumed_from_not_trained_beside(tmp_path: Path) -> None:
    config_path = tiny_config(tmp_path)
    two = resolve_config(config_path, {"training.max_steps": 2}).config
    Controller(Trainer(two, run_dir=tmp_path / "run")).run()
    (tmp_path / "run" / "checkpoints" / "checkpoint").unlink()  # a copy that left it out
    said: list = []
    three = resolve_config(config_path, {"training.max_steps": 3}).config
    result = Controller(Trainer(three, run_dir=tmp_path / "run", progress=said.append)).run()
    assert result.resumed and (result.start_step, result.final_step) == (2, 3)
    notes = [event.message for event in said if type(event).__name__ == "Noted"]
    assert any("had checkpoints but no pointer file (checkpoint): written again, naming ckpt-2" in n for n in notes)
    # A pointer damaged (cut short, emptied) or naming a checkpoint that is not there: synthesis reads
    # the newest complete one, and training resumes from it, where it started over at step 0 and wrote
    # its new checkpoints over the old ones.
    from xtts_cli.inference import Synthesizer

    pointer = tmp_path / "run" / "checkpoints" / "checkpoint"
    for damaged in ("", 'model_checkpoint_path: "ckpt-9', 'model_checkpoint_path: "ckpt-999"\n'):
        pointer.write_text(damaged, encoding="utf-8")
        assert Synthesizer.load(tmp_path / "run").step == 3, damaged
    said.clear()
    four = resolve_config(config_path, {"training.max_steps": 4}).config
    result = Controller(Trainer(four, run_dir=tmp_path / "run", progress=said.append)).run()
    assert result.resumed and (result.start_step, result.final_step) == (3, 4)
    notes = [event.message for event in said if type(event).__name__ == "Noted"]
    assert any(
        "but a pointer file (checkpoint) naming ckpt-999, which is not whole: written again, naming ckpt-3" in n
        for n in notes
    )
    # The pointer written again keeps every checkpoint in TensorFlow's care: the next save's pointer
    # had named only itself, so a damaged ckpt-4 left no checkpoint to fall back to, and
    # keep_checkpoints never removed the others.
    state = tf.train.get_checkpoint_state(str(tmp_path / "run" / "checkpoints"))
    assert [Path(p).name for p in state.all_model_checkpoint_paths] == ["ckpt-2", "ckpt-3", "ckpt-4"]
    # The newest checkpoint deleted: the steps metrics.jsonl logged past the one it resumes from are
    # dropped and trained again, and that is said (it had been done unsaid).
    logged = [m["step"] for m in read_metrics(tmp_path / "run" / "metrics.jsonl")]
    for path in (tmp_path / "run" / "checkpoints").glob("ckpt-4.*"):
        path.unlink()
    said.clear()
    five = resolve_config(config_path, {"training.max_steps": 5}).config
    result = Controller(Trainer(five, run_dir=tmp_path / "run", progress=said.append)).run()
    assert result.resumed and (result.start_step, result.final_step) == (3, 5)
    notes = [event.message for event in said if type(event).__name__ == "Noted"]
    past = sum(step > 3 for step in logged)
    assert past and any(
        n.startswith(f"resuming at step 3: {past} record{'s' if past > 1 else ''} of later steps in metrics.jsonl")
        for n in notes
    ), notes


@pytest.mark.slow  # trains (or waits on the fixture that trains): the whole suite runs it
def test_early_stopping_with_no_validation_clip_is_a_warning_as_the_run_starts(tmp_path: Path, runner) -> None:
    """A handful of clips under an adapt preset: no clip is held out, so nothing can end the run
    early; validate and train both say so, before the minutes it trains."""
    from xtts_cli.cli.app import app
    from xtts_cli.training.events import Noted

    overrides = {
        "data.eval_fraction": 0.0,
        "training.early_stop_patience": 2,
        "training.max_steps": 1,
        "training.val_step": 1,
    }
    events: list = []
    config = resolve_config(tiny_config(tmp_path), overrides).config
    Controller(Trainer(config, run_dir=tmp_path / "run", progress=events.append)).run()
    (warned,) = [e for e in events if isinstance(e, Noted) and "early_stop_patience" in e.message]
    assert warned.label == "warning" and warned.message.startswith("training.early_stop_patience is set but the run")
    sets = [f"--set={key}={value}" for key, value in overrides.items()]
    found = json.loads(runner.invoke(app, ["validate", "-c", str(tiny_config(tmp_path)), *sets, "--json"]).stdout)
    assert [f["message"] for f in found["findings"] if f["id"] == "early-stop-without-validation"] == [warned.message]
    said: list = []
    held_out = resolve_config(tiny_config(tmp_path), {**overrides, "data.eval_fraction": 0.1}).config
    Controller(Trainer(held_out, run_dir=tmp_path / "held-out", progress=said.append)).run()
    assert not [e for e in said if isinstance(e, Noted) and "early_stop_patience" in e.message]
    # "validating ..." is said where there are clips to validate on, not as a line that ends in nothing.
    phases = [[e.name for e in seen if type(e).__name__ == "PhaseStarted"] for seen in (events, said)]
    assert "validating" not in phases[0] and "validating" in phases[1], phases


@pytest.mark.slow
def test_a_run_of_one_step_gives_no_speed_from_its_trace_alone(tmp_path: Path, runner, capsys) -> None:
    from dataclasses import replace

    from xtts_cli.cli.app import app
    from xtts_cli.cli.progress import TrainingProgress
    from xtts_cli.training.events import TrainResult

    args = ["train", "-c", str(tiny_config(tmp_path)), "--steps", "1", "-r", str(tmp_path / "run"), "--json"]
    payload = json.loads(runner.invoke(app, args).stdout)
    # No speed (null), not the trace's time as one; the terminal says why.
    assert payload["final_step"] == 1 and payload["trace_seconds"] > 0
    assert payload["steps_per_sec"] is None and payload["samples_per_sec"] is None
    capsys.readouterr()
    one = TrainResult(**{**payload, "run_dir": Path(payload["run_dir"])})
    TrainingProgress(enabled=False).summary(one)
    (speed,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("speed: ")]
    assert speed.startswith("speed: one step, ") and speed.endswith(
        " s with its graph's trace (more steps give a speed)"
    )
    TrainingProgress(enabled=False).summary(replace(one, final_step=3, steps_per_sec=2.0, samples_per_sec=8.0))
    (speed,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("speed: ")]
    assert speed.startswith("speed: 2.00 steps/s, 8.0 samples/s") and "trace left out)" in speed, speed
    # A first batch that came late (a tf.data service's worker not yet up) is said beside the trace it is
    # left out with: the summary had said data wait 0.0 % of a run whose first step waited 108 s.
    late = replace(one, final_step=3, steps_per_sec=2.0, samples_per_sec=8.0, trace_wait_seconds=108.47)
    TrainingProgress(enabled=False).summary(late)
    (speed,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("speed: ")]
    assert speed.endswith(" s trace left out, and its 108.5 s wait for its batch)"), speed
    TrainingProgress(enabled=False).summary(replace(late, loop_seconds=126.8, step_time_percent=11.0))
    (clock,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("wall clock: ")]
    assert clock.endswith(
        "11 % of it in steps (the rest: validation, checkpoints, samples, and the 108.5 s wait for the first batch)"
    ), clock
    # A cluster's other worker given a run directory the chief never wrote names no command to hear it.
    TrainingProgress(enabled=False).summary(replace(one, run_dir=tmp_path / "on another machine"))
    lines = capsys.readouterr().out.splitlines()
    assert not any(line.startswith(("listen:", "tensorboard:")) for line in lines), lines
    TrainingProgress(enabled=False).summary(one)
    assert any(line.startswith("listen:") for line in capsys.readouterr().out.splitlines())


def test_under_xla_the_first_step_of_each_batch_shape_is_its_compile_not_a_step(capsys, tmp_path: Path) -> None:
    from dataclasses import replace
    from types import SimpleNamespace

    import tensorflow as tf

    from xtts_cli.cli.progress import TrainingProgress
    from xtts_cli.training.controller import Controller
    from xtts_cli.training.events import TrainResult

    # XLA compiles a step for each batch shape within its one trace: the trace count does not move,
    # and a bucket's compile (a minute on a CPU) had counted as a step in steps/s.
    signature = {"mel": tf.TensorSpec([None, None, 4]), "lengths": tf.TensorSpec([None], tf.int32)}

    @tf.function(jit_compile=True, input_signature=[signature])  # lengths unknown, as the train step's
    def step(batch):
        return tf.reduce_sum(batch["mel"]) + tf.cast(tf.reduce_sum(batch["lengths"]), tf.float32)

    loop = SimpleNamespace(compiled_shapes=set())
    anew = []
    for frames in (40, 40, 72, 40, 72, 104):
        batch = {"mel": tf.ones([2, frames, 4]), "lengths": tf.constant([frames, frames])}
        step(batch)
        anew.append(Controller._compiled_anew(loop, batch, True))
    assert step.experimental_get_tracing_count() == 1 and anew == [True, False, True, False, False, True]
    assert not Controller._compiled_anew(SimpleNamespace(compiled_shapes=set()), batch, False)  # no XLA: traces say
    # The summary names them as what was left out.
    capsys.readouterr()
    done = TrainResult(
        run_dir=tmp_path, start_step=0, final_step=20, resumed=False, steps_per_sec=2.0, samples_per_sec=8.0
    )
    TrainingProgress(enabled=False).summary(replace(done, trace_seconds=101.7, trace_steps=3))
    (speed,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("speed: ")]
    assert speed.endswith("(the 3 steps that built or compiled a graph, 101.7 s, left out)"), speed


@pytest.mark.slow
def test_the_result_names_each_file_left_out_by_its_scan_reason_code_and_detail_as_validate_does(
    tmp_path: Path,
) -> None:
    # train --json had joined them ("empty: file is empty (0 bytes)"): a script matching validate's
    # codes met another shape.
    import shutil

    data = tmp_path / "data"
    shutil.copytree(Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample", data)
    (data / "wavs" / "empty.wav").write_bytes(b"")
    with (data / "metadata.csv").open("a", encoding="utf-8") as metadata:
        metadata.write("empty|The kettle is on.|The kettle is on.\n")
    config = resolve_config(tiny_config(tmp_path), {"data.dataset_path": str(data)}).config
    trainer = Trainer(config, run_dir=tmp_path / "run")
    try:
        trainer.setup()
        (bad,) = trainer.new_result().bad_files
    finally:
        trainer.close()
    assert bad["path"] == "wavs/empty.wav" and bad["reason"] == "empty" and bad["detail"], bad
