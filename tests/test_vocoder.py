"""The neural vocoder: its inverse STFT, its training by the engine, and where speech is made with it.

Real TensorFlow on the bundled sample: tiny generators (16-32 channels), a few steps each.
"""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile
from training_support import start_xtts, tiny_config, undocumented_keys, wait_for_records

from xtts_cli.cli.app import app
from xtts_cli.errors import XttsError
from xtts_cli.training.controller import Hook

SAMPLE_CLIP = Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample" / "wavs" / "XTTS001-0001.wav"
DATA = Path(__file__).resolve().parent / "data"

VOCODER = """
data:
  batch_size: 4
  num_buckets: 2
  eval_fraction: 0.1
  preprocessing_mode: cache
  n_mels: {n_mels}
model:
  kind: vocoder
  dim: 32
  num_layers: 2
  segment_frames: 16
{extra}
training:
  learning_rate: 0.003
  warmup_steps: 2
  log_step: 2
  val_step: 1000
  save_step: 1000
  sample_step: 1000
  max_val_batches: 1
"""


def recorded_as(run: Path, **features) -> None:
    """`run` as one trained on other features: its config.yaml and run.json's record both changed (a
    config.yaml edited alone is refused as edited)."""
    text = (run / "config.yaml").read_text(encoding="utf-8")
    record = json.loads((run / "run.json").read_text(encoding="utf-8"))
    for key, value in features.items():
        old = f"\n  {key}: {record['model_identity'][f'data.{key}']}\n"
        assert text.count(old) == 1, (key, text)
        text = text.replace(old, f"\n  {key}: {value}\n")
        record["model_identity"][f"data.{key}"] = value
    (run / "config.yaml").write_text(text, encoding="utf-8")
    (run / "run.json").write_text(json.dumps(record), encoding="utf-8")


def vocoder_config(tmp_path: Path, *, n_mels: int = 80, extra: str = "", name: str = "vocoder.yaml") -> Path:
    path = tmp_path / name
    path.write_text(VOCODER.format(n_mels=n_mels, extra=extra), encoding="utf-8")
    return path


def train(runner, config: Path, run_dir: Path, steps: int) -> dict:
    result = runner.invoke(
        app, ["train", "-c", str(config), "--run-dir", str(run_dir), "--max-steps", str(steps), "--json"]
    )
    assert result.exit_code == 0, (result.output, result.exception)
    return json.loads(result.stdout)


class HeldOut(Hook):
    """A held-out batch, and its loss as the loop starts (before the first step)."""

    def __init__(self, trainer) -> None:
        self.trainer = trainer

    def on_start(self, result) -> None:
        steps, data = self.trainer.parts.steps, self.trainer.parts.input
        self.batch, _ = next(steps.batches(data.eval_ds))
        self.before = float(steps.eval(self.batch)["loss"])


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> SimpleNamespace:
    """An acoustic run of 2 steps with its own vocoder (a vocoder run of 12 steps trained into RUN/vocoder,
    its held-out loss taken before the first step), trained once for the module's tests, which only read
    them: `run`, and the vocoder's `config`, `trainer`, `held_out` and `result`."""
    from typer.testing import CliRunner

    from xtts_cli.config.loading import resolve_config
    from xtts_cli.training.controller import Controller
    from xtts_cli.training.trainer import Trainer

    root = tmp_path_factory.mktemp("acoustic")
    run, runner = root / "acoustic", CliRunner()
    with pytest.MonkeyPatch.context() as patch:  # its own HOME and working directory, as a test's
        (root / "home").mkdir()
        patch.setenv("HOME", str(root / "home"))
        patch.chdir(root)
        train(runner, tiny_config(root), run, 2)
        config = resolve_config(vocoder_config(root), {"training.max_steps": 12}).config
        trainer = Trainer(config, run_dir=run / "vocoder")
        held_out = HeldOut(trainer)
        result = Controller(trainer, extra_hooks=[held_out]).run()
    return SimpleNamespace(run=run, config=config, trainer=trainer, held_out=held_out, result=result)


@pytest.fixture(scope="module")
def acoustic(trained) -> Path:
    return trained.run


def test_the_inverse_stft_gives_the_signal_back_and_the_generator_a_segment_per_mel() -> None:
    import tensorflow as tf

    from xtts_cli.config.schema import DataConfig, VocoderConfig
    from xtts_cli.kinds.vocoder import build_generator, inverse_stft
    from xtts_cli.model.vocoder import _analysis_window, _stft

    data = DataConfig()
    frames = 40
    signal_ = np.random.default_rng(0).uniform(-0.5, 0.5, (frames - 1) * data.hop_length).astype(np.float32)
    window = _analysis_window(data.n_fft, data.win_length)
    spectrum = _stft(tf.constant(signal_), window, data.n_fft, data.hop_length)
    assert spectrum.shape[0] == frames  # centred framing: 1 + samples // hop
    back = inverse_stft(spectrum, n_fft=data.n_fft, hop_length=data.hop_length, win_length=data.win_length)
    np.testing.assert_allclose(back.numpy(), signal_, atol=1e-5)  # the edges too

    generator = build_generator(VocoderConfig(dim=16, num_layers=2), data)
    audio = generator(tf.zeros([2, 11, data.n_mels]))
    assert audio.shape == (2, 10 * data.hop_length) and audio.dtype == tf.float32
    # Its graph built before the first recording (`vocode` times each): one trace serves every length.
    from xtts_cli.speech.vocoding import Vocoder

    vocoder = Vocoder("run", data, generator)
    vocoder.build_graph()
    assert vocoder._compiled.experimental_get_tracing_count() == 1
    assert vocoder(np.zeros((37, data.n_mels), np.float32)).shape == (36 * data.hop_length,)
    assert vocoder._compiled.experimental_get_tracing_count() == 1


@pytest.mark.slow
def test_vocoder_steps_lower_the_loss_and_its_checkpoint_gives_the_same_audio(trained) -> None:
    from xtts_cli.inference import load_vocoder
    from xtts_cli.speech.vocoding import Vocoder, load_audio, mel_of

    # The module's vocoder run (RUN/vocoder, 12 steps), read here as its trainer left it.
    config, trainer, held_out, run = trained.config, trained.trainer, trained.held_out, trained.run / "vocoder"
    # The mel L1 of the same clips' middle segments, before the first step and after the twelfth.
    after = float(trainer.parts.steps.eval(held_out.batch)["loss"])
    assert after < 0.85 * held_out.before, (held_out.before, after)
    assert trained.result.final_step == 12
    assert {"loss", "mel_loss", "stft_loss"} <= set(json.loads((run / "metrics.jsonl").read_text().splitlines()[0]))
    mel = mel_of(load_audio(SAMPLE_CLIP, config.data), config.data)
    generated = Vocoder("the trainer's", config.data, trainer.parts.models.model)(mel)
    restored = load_vocoder(run, config.data)
    assert restored.step == 12
    np.testing.assert_array_equal(restored(mel), generated)


@pytest.mark.slow
def test_speech_is_made_with_a_vocoder_run_and_other_features_are_refused(runner, tmp_path: Path, acoustic) -> None:
    # The run's own vocoder: a vocoder run trained into RUN/vocoder.
    said = runner.invoke(
        app, ["synthesize", "The cat sat.", "-r", str(acoustic), "-o", str(tmp_path / "a.wav"), "--json"]
    )
    assert said.exit_code == 0, (said.output, said.exception)
    assert json.loads(said.stdout)["vocoder"] == str(acoustic / "vocoder")
    # Its step said too: a vocoder stopped after a step or two sounds like noise, and the run was blamed.
    assert json.loads(said.stdout)["vocoder_step"] == 12
    plain = runner.invoke(app, ["synthesize", "The cat sat.", "-r", str(acoustic), "-o", str(tmp_path / "p.wav")])
    assert f"vocoder {acoustic / 'vocoder'} (step 12)" in plain.stdout
    assert undocumented_keys("synthesize", json.loads(said.stdout)) == [], "add them to docs/json.md"
    forced = runner.invoke(
        app,
        [
            "synthesize",
            "The cat.",
            "-r",
            str(acoustic),
            "--vocoder",
            "griffin-lim",
            "-o",
            str(tmp_path / "g.wav"),
            "--json",
        ],
    )
    assert forced.exit_code == 0 and json.loads(forced.stdout)["vocoder"] == "griffin-lim"

    vocoded = runner.invoke(
        app,
        ["vocode", str(SAMPLE_CLIP), "--vocoder", str(acoustic / "vocoder"), "-o", str(tmp_path / "v.wav"), "--json"],
    )
    assert vocoded.exit_code == 0, (vocoded.output, vocoded.exception)
    report = json.loads(vocoded.stdout)
    assert report["step"] == 12 and report["seconds"] > 1.0 and (tmp_path / "v.wav").stat().st_size > 40_000
    assert undocumented_keys("vocode", [report]) == [], "add them to docs/json.md"

    # A vocoder run of 64 mels: the run's own vocoder with its recorded features changed, since a vocoder
    # is checked against the acoustic run from its config.yaml and run.json alone, before any weight is read.
    other = tmp_path / "vocoder-64"
    shutil.copytree(acoustic / "vocoder", other)
    recorded_as(other, n_mels=64)
    refused = runner.invoke(app, ["synthesize", "The cat.", "-r", str(acoustic), "--vocoder", str(other)])
    assert refused.exit_code == 1 and isinstance(refused.exception, XttsError)
    assert f"--vocoder {other} was trained on other features than the run {acoustic}: n_mels 80 against 64" in str(
        refused.exception.lines[0]
    )
    assert not (tmp_path / "speech.wav").exists()
    wrong_way = runner.invoke(app, ["synthesize", "The cat.", "-r", str(other)])
    assert isinstance(wrong_way.exception, XttsError) and "is a vocoder run" in wrong_way.exception.lines[0]
    # The same vocoder as the run's own, used without --vocoder: named as what it is, not as a flag.
    own = tmp_path / "own"
    shutil.copytree(acoustic, own, ignore=shutil.ignore_patterns("vocoder"))
    shutil.copytree(other, own / "vocoder")
    by_default = runner.invoke(app, ["synthesize", "The cat.", "-r", str(own)])
    assert isinstance(by_default.exception, XttsError), by_default.output
    assert by_default.exception.lines[0].startswith(
        f"the run's own vocoder {own / 'vocoder'} (used when --vocoder is not given) was trained on other features"
    )
    assert "loading" not in by_default.output  # refused before the model loads, as --vocoder's is
    listed = runner.invoke(app, ["synthesize", "--list-speakers", "-r", str(own)])  # a list makes no sound
    assert listed.exit_code == 0, listed.output
    # A vocoder run whose set-up failed (too little data for a batch) leaves nothing in RUN/vocoder
    # to stand for a vocoder: the run still speaks with the one it had.
    shutil.copytree(acoustic, tmp_path / "copy", ignore=shutil.ignore_patterns("vocoder"))
    failed = runner.invoke(
        app,
        ["train", "-c", str(vocoder_config(tmp_path)), "-r", str(tmp_path / "copy" / "vocoder"), "--batch-size", "64"],
    )
    assert isinstance(failed.exception, XttsError) and "no full batch" in failed.exception.lines[0]
    assert not (tmp_path / "copy" / "vocoder").exists()
    (tmp_path / "copy" / "vocoder").mkdir()  # and one copied without its checkpoints is passed over
    shutil.copy(acoustic / "vocoder" / "config.yaml", tmp_path / "copy" / "vocoder")
    copied = runner.invoke(
        app, ["synthesize", "The cat.", "-r", str(tmp_path / "copy"), "-o", str(tmp_path / "c.wav"), "--json"]
    )
    assert copied.exit_code == 0 and json.loads(copied.stdout)["vocoder"] == "griffin-lim"
    swapped = runner.invoke(app, ["synthesize", "The cat.", "-r", str(acoustic), "--vocoder", str(acoustic)])
    assert isinstance(swapped.exception, XttsError)
    assert swapped.exception.lines[0] == f"--vocoder {acoustic}: that run is not a vocoder (model.kind acoustic)"
    # A config.yaml alone (configs/, an `xtts init` folder) is no run: it had been "not a vocoder", or "train first".
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(acoustic / "vocoder" / "config.yaml", alone)
    unrun = runner.invoke(app, ["synthesize", "The cat.", "-r", str(acoustic), "--vocoder", str(alone)])
    assert isinstance(unrun.exception, XttsError)
    assert unrun.exception.lines[0] == (
        f"--vocoder {alone}: a folder with a config.yaml but no run (xtts train writes run.json and checkpoints beside it)"
    )


@pytest.mark.slow
def test_vocode_says_its_vocoders_newest_checkpoint_could_not_be_read(runner, tmp_path: Path, acoustic) -> None:
    # synthesize and export named the older checkpoint that spoke; vocode used it without a word.
    vocoder = tmp_path / "vocoder"
    shutil.copytree(acoustic / "vocoder", vocoder)
    checkpoints = vocoder / "checkpoints"
    shutil.copy(checkpoints / "ckpt-12.index", checkpoints / "ckpt-20.index")
    whole = (checkpoints / "ckpt-12.data-00000-of-00001").read_bytes()
    (checkpoints / "ckpt-20.data-00000-of-00001").write_bytes(whole[:100])  # a save cut short
    pointer = (checkpoints / "checkpoint").read_text(encoding="utf-8")
    (checkpoints / "checkpoint").write_text(pointer.replace('"ckpt-12"', '"ckpt-20"', 1), encoding="utf-8")
    args = ["vocode", str(SAMPLE_CLIP), "--vocoder", str(vocoder), "-o", str(tmp_path / "v.wav")]
    said = runner.invoke(app, args)
    assert said.exit_code == 0, (said.output, said.exception)
    assert f"note: {vocoder}: ckpt-20 cannot be read" in said.stderr
    assert "restored ckpt-12, the newest before it that reads" in said.stderr
    assert "by " + str(vocoder) + " (step 12)" in said.stdout
    report = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert report["step"] == 12 and report["notes"][0].startswith(f"{vocoder}: ckpt-20 cannot be read")


@pytest.mark.slow  # trains (or waits on the fixture that trains): the whole suite runs it
def test_a_vocoder_run_resumed_after_sigterm_continues_its_loss_curve(runner, tmp_path: Path) -> None:
    from xtts_cli.training.metrics import read_metrics

    # With its discriminators (from step 0), validated every 2 steps: the same clips' middle segments each time.
    extra = "  adversarial_start_step: 0\n  discriminator_channels: 4\n  periods: [2, 3]"
    config = vocoder_config(tmp_path, extra=extra)
    config.write_text(config.read_text().replace("val_step: 1000", "val_step: 2"))
    run_dir = tmp_path / "run"
    proc = start_xtts(["train", "-c", str(config), "--run-dir", str(run_dir), "--max-steps", "100000"], tmp_path)
    metrics = run_dir / "metrics.jsonl"
    # Six validations: at this config's learning rate (0.003, two seeds on the sample) the loss was
    # 0.84-0.87 of the first from the fourth on; a generator that came back untrained is back at the first.
    wait_for_records(proc, metrics, lambda lines: sum('"val_loss"' in line for line in lines) >= 6)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    before = [r for r in read_metrics(metrics) if "val_loss" in r]
    saved = int(stderr.split("saved step ")[1].split()[0])
    # Used as it stands, stopped before its end: said (its noise had been blamed on the acoustic run).
    vocoded = runner.invoke(app, ["vocode", str(SAMPLE_CLIP), "--vocoder", str(run_dir), "-o", str(tmp_path / "v.wav")])
    assert vocoded.exit_code == 0, (vocoded.output, vocoded.exception)
    assert (
        f"note: {run_dir}: its training stopped at step {saved} (interrupted by SIGTERM), before its planned end"
        in vocoded.stderr
    )

    # Resumed in this process: what comes back is what the killed process saved.
    again = runner.invoke(
        app, ["train", "-c", str(config), "--run-dir", str(run_dir), "--max-steps", str(saved + 2), "--json"]
    )
    assert again.exit_code == 0, (again.output, again.exception)
    assert json.loads(again.stdout)["start_step"] == saved
    finished = runner.invoke(
        app, ["vocode", str(SAMPLE_CLIP), "--vocoder", str(run_dir), "-o", str(tmp_path / "v.wav")]
    )
    assert "its training stopped" not in finished.stderr  # run to its end: nothing to say
    assert json.loads(again.stdout)["listen"].split("--vocoder ")[1].startswith(f"{run_dir} ")  # filled in
    records = read_metrics(metrics)
    resumed = next(r["val_loss"] for r in records if "val_loss" in r and r["step"] > saved)
    first, last = before[0]["val_loss"], before[-1]["val_loss"]
    # Where it stopped, not where it began: the generator, its discriminators and both optimizers came back.
    assert last < 0.93 * first and resumed < 0.93 * first and resumed < 1.1 * last, (first, last, resumed)
    trained = [r for r in records if "loss" in r and r["step"] > saved]
    assert trained and {"discriminator_loss", "adversarial_loss", "feature_matching_loss"} <= set(trained[-1])
    assert "alignment_score" not in records[-1]  # a vocoder has no attention to score


@pytest.mark.slow
def test_discriminators_turned_on_in_a_resumed_run_start_anew_and_turned_off_are_left_unread(runner, tmp_path) -> None:
    """The GAN losses added to a spectral-only run, taken off and put back: each resume goes on from
    the generator the checkpoint holds, saying what of the discriminators it starts or leaves."""
    config = vocoder_config(tmp_path, extra="  discriminator_channels: 4\n  periods: [2, 3]")
    run = tmp_path / "run"
    train(runner, config, run, 2)
    from xtts_cli.training.metrics import read_metrics

    for steps, start, said in (
        (4, "4", "the discriminators start from random weights: ckpt-2 holds none of them"),
        (6, "null", "ckpt-4's discriminator optimizer and discriminators are not read by this config"),
        (8, "2", "the discriminators start from random weights: ckpt-6 holds none of them"),
    ):
        command = [
            "train",
            "-c",
            str(config),
            "-r",
            str(run),
            "-n",
            str(steps),
            "--json",
            "--set",
            "training.log_step=1",
        ]
        done = runner.invoke(app, [*command, "--set", f"model.adversarial_start_step={start}"])
        assert done.exit_code == 0, (done.output, done.exception)
        report = json.loads(done.stdout)
        assert report["start_step"] == steps - 2 and any(note.startswith(said) for note in report["notes"]), report
        if steps == 4:  # step 3 built the spectral phase's graph, step 4 the adversarial one's: no speed of them
            assert report["steps_per_sec"] is None and report["trace_seconds"] > 0, report
    # The discriminators judge from the step numbered adversarial_start_step, and not before: step 3
    # ran none of them (they had run, weighed by 0, at full cost), step 4 is the first to have their losses.
    judged = {r["step"]: "adversarial_loss" in r for r in read_metrics(run / "metrics.jsonl") if "loss" in r}
    assert (judged[3], judged[4], judged[5], judged[7]) == (False, True, False, True), judged
    # Discriminators of another width: no part of the resume check, they meet the checkpoint, and the
    # hint names them (it had said --fresh alone, which throws the generator away).
    wider = ["train", "-c", str(config), "-r", str(run), "-n", "10", "--set", "model.adversarial_start_step=2"]
    refused = runner.invoke(app, [*wider, "--set", "model.discriminator_channels=8"])
    assert isinstance(refused.exception, XttsError), refused.output
    assert refused.exception.hint.startswith("the checkpoint's discriminators were built with other "), (
        refused.exception
    )


@pytest.mark.parametrize("command", ["vocode", "synthesize", "export"])
def test_an_empty_vocoder_is_refused_not_read_as_the_current_folder_or_griffin_lim(runner, tmp_path, command) -> None:
    run = Path(__file__).parent / "data" / "run_before_run_data"
    args = {
        "vocode": ["vocode", str(SAMPLE_CLIP), "-o", str(tmp_path / "o.wav")],
        "synthesize": ["synthesize", "Hello.", "-r", str(run), "-o", str(tmp_path / "o.wav")],
        "export": ["export", "-r", str(run), "-o", str(tmp_path / "exported")],
    }[command]
    result = runner.invoke(app, [*args, "--vocoder", ""])  # "--vocoder $VOC" with VOC unset
    assert isinstance(result.exception, XttsError) and result.exception.lines == ["--vocoder '' is no vocoder run"]
    # Left out, vocode uses Griffin-Lim: it has no run of its own to take a vocoder from.
    assert result.exception.hint.endswith("Griffin-Lim" if command == "vocode" else "the run's own")
    assert not (tmp_path / "o.wav").exists() and not (tmp_path / "exported").exists()


def test_a_mistyped_run_names_the_runs_beside_it_that_its_flag_takes(tmp_path: Path) -> None:
    # --vocoder had offered the acoustic runs beside it too, which it then refused as no vocoder.
    from xtts_cli.run.files import read_run

    shutil.copytree(DATA / "run_before_run_data", tmp_path / "speech")
    shutil.copytree(DATA / "legacy_vocoder_run", tmp_path / "voc")
    for flag, offered in (("--vocoder", "voc"), ("--run-dir", "speech")):
        with pytest.raises(XttsError) as mistyped:
            read_run(tmp_path / "nope", flag)
        assert mistyped.value.lines == [f"{flag} {tmp_path / 'nope'} does not exist"]
        assert mistyped.value.hint == f"pass one of {tmp_path / offered}"


@pytest.mark.parametrize("value", ["griffin-lim", "Griffin-Lim", "nowhere"])
def test_vocode_names_a_missing_recording_and_a_missing_run(runner, tmp_path: Path, value: str) -> None:
    missing = tmp_path / "missing.wav"
    griffin_lim = value.lower() == "griffin-lim"  # however it is written
    recording = missing if griffin_lim else SAMPLE_CLIP  # a missing recording is named first
    result = runner.invoke(app, ["vocode", str(recording), "--vocoder", value, "-o", str(tmp_path / "o.wav")])
    assert isinstance(result.exception, XttsError)
    line = result.exception.lines[0]
    assert (str(missing) in line) if griffin_lim else (line == "--vocoder nowhere does not exist")
    # A vocoder run is what --vocoder takes: the hint names one, not an acoustic run.
    assert griffin_lim or result.exception.hint == (
        "pass --vocoder the directory of an `xtts train -c vocoder-cpu` run, e.g. runs/vocoder-cpu, or griffin-lim"
    )
    assert not (tmp_path / "o.wav").exists()


def test_a_resolution_that_is_not_n_fft_hop_window_is_named(write_config) -> None:
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.errors import ConfigError

    path = write_config("model:\n  kind: vocoder\nvocoder:\n  stft_resolutions: [[512, 128]]\n")
    with pytest.raises(ConfigError, match=r"vocoder\.stft_resolutions.*\[512, 128\] is not \[n_fft, hop, window\]"):
        resolve_config(path)


def test_the_pipeline_profiler_times_the_audio_a_vocoder_reads(tmp_path: Path) -> None:
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.profiling.pipeline_profiler import profile_pipeline

    config = resolve_config(vocoder_config(tmp_path)).config
    profile = profile_pipeline(config, num_batches=3, warmup=1, stages=False)
    assert profile.pipeline.output == "audio" and profile.samples_per_sec > 0
    # Frames counted as the features would frame the samples: a clip of audio is ~86 frames a second.
    assert 80 < profile.mel_frames_per_sec / profile.audio_seconds_per_sec < 92
    assert 0 < profile.padding_efficiency <= 1


def test_a_vocoder_run_resumes_only_with_the_generator_shape_it_was_trained_with() -> None:
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.run.directory import model_identity

    vocoder = XttsConfig.model_validate({"model": {"kind": "vocoder", "dim": 32, "num_layers": 2}})
    identity = model_identity(vocoder)
    assert (identity["model.dim"], identity["model.num_layers"]) == (32, 2)
    wider = vocoder.model_copy(update={"model": vocoder.vocoder.model_copy(update={"dim": 64})})
    assert model_identity(wider)["model.dim"] == 64
    # Its losses and discriminators may change between sessions; an acoustic run has no vocoder keys.
    later = vocoder.model_copy(update={"model": vocoder.vocoder.model_copy(update={"mel_loss_weight": 1.0})})
    assert model_identity(later) == identity
    assert "model.dim" not in model_identity(XttsConfig())


def test_vocode_writes_every_recording_of_a_folder_with_one_load(runner, tmp_path: Path) -> None:
    import shutil
    import wave

    folder = tmp_path / "clips"
    folder.mkdir()
    for clip in sorted(SAMPLE_CLIP.parent.glob("*.wav"))[:3]:
        shutil.copy(clip, folder / clip.name)
    (folder / "notes.txt").write_text("not a recording", encoding="utf-8")
    result = runner.invoke(app, ["vocode", str(folder), "--out-dir", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, (result.output, result.exception)
    reports = json.loads(result.stdout)
    assert [Path(r["out"]).name for r in reports] == sorted(p.name for p in folder.glob("*.wav"))
    alone = runner.invoke(
        app, ["vocode", str(folder / reports[1]["audio"].split("/")[-1]), "-o", str(tmp_path / "one.wav")]
    )
    assert alone.exit_code == 0, alone.output
    with wave.open(str(tmp_path / "one.wav")) as one, wave.open(reports[1]["out"]) as many:
        assert one.readframes(one.getnframes()) == many.readframes(many.getnframes())
    several = runner.invoke(app, ["vocode", str(folder), "-o", str(tmp_path / "x.wav")])
    assert "3 recordings and one --out file" in str(several.exception) and "--out-dir" in several.exception.hint
    from xtts_cli.cli.vocode import destinations

    with pytest.raises(XttsError, match="^2 recordings and no --out-dir$"):  # no --out was given to name
        destinations([tmp_path / "a.wav", tmp_path / "b.wav"], None, None)
    # Every clash at once: a folder's clip and take in two formats each had been mended one run at a time.
    pairs = [tmp_path / name for name in ("clip.flac", "clip.mp3", "take.flac", "take.mp3", "clip.ogg")]
    with pytest.raises(XttsError) as clashed:
        destinations(pairs, None, tmp_path / "o3")
    # Each recording bound for a name is named: a third one had been left out (the names written said instead).
    assert clashed.value.lines == [
        f"{tmp_path / 'clip.flac'}, {tmp_path / 'clip.mp3'} and {tmp_path / 'clip.ogg'} would all be written to "
        f"{tmp_path / 'o3' / 'clip.wav'}; take.flac and take.mp3 to take.wav"
    ]
    twice = runner.invoke(
        app,
        ["vocode", str(folder), str(folder / reports[0]["audio"].split("/")[-1]), "--out-dir", str(tmp_path / "o2")],
    )
    assert "would both be written to" in str(twice.exception) and not (tmp_path / "o2").exists()
    assert twice.exception.hint.endswith(
        "is passed twice (named twice, or named and in a folder passed too): pass it once"
    )
    # A folder's clip.wav and clip.flac: a rename parts them, not another --out-dir.
    import soundfile

    first = sorted(folder.glob("*.wav"))[0]
    soundfile.write(str(first.with_suffix(".flac")), *soundfile.read(str(first)))
    both = runner.invoke(app, ["vocode", str(folder), "--out-dir", str(tmp_path / "o3")])
    assert both.exception.hint == "rename one: they are in one folder", both.exception
    first.with_suffix(".flac").unlink()
    # Into the folder it reads, or a recording onto itself: refused before the vocoder loads, the recordings kept.
    before = {p: p.read_bytes() for p in folder.glob("*.wav")}
    first = sorted(before)[0]
    for args in ([str(folder), "--out-dir", str(folder)], [str(first), "-o", f"{folder}/../clips/{first.name}"]):
        refused = runner.invoke(app, ["vocode", *args])
        assert isinstance(refused.exception, XttsError), refused.output
        assert f"would write over the recording {first}" in str(refused.exception), refused.exception
    assert {p: p.read_bytes() for p in folder.glob("*.wav")} == before


def test_vocode_names_every_recording_it_cannot_read_before_loading_and_says_what_it_changed(runner, tmp_path):
    import shutil
    import subprocess

    folder = tmp_path / "clips"
    folder.mkdir()
    (folder / "empty.wav").write_bytes(b"")
    (folder / "text.wav").write_text("not audio", encoding="utf-8")
    subprocess.run(["sox", str(SAMPLE_CLIP), str(folder / "tiny.wav"), "trim", "0", "0.004"], check=True)
    refused = runner.invoke(app, ["vocode", str(folder), "--out-dir", str(tmp_path / "out")])
    assert isinstance(refused.exception, XttsError), refused.output
    line = refused.exception.lines[0]
    assert line.startswith(f"AUDIO {folder / 'empty.wav'}: ") and "(and 2 more: " in line
    assert "tiny.wav: 0.004 s, too short to vocode" in line and not (tmp_path / "out").exists()
    # Beside a good recording, a folder's unreadable ones are left out and named; one named itself is refused.
    shutil.copy(SAMPLE_CLIP, folder / "good.wav")
    subprocess.run(["sox", "-n", "-r", "22050", str(folder / "quiet.wav"), "trim", "0", "0.5"], check=True)
    subprocess.run(["sox", str(SAMPLE_CLIP), str(folder / "mac.aiff")], check=True)  # a format not read: named
    kept = runner.invoke(app, ["vocode", str(folder), "--out-dir", str(tmp_path / "out"), "--json"])
    assert kept.exit_code == 0, (kept.output, kept.exception)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["good.wav", "quiet.wav"]
    assert f"note: skipped {folder / 'empty.wav'}: " in kept.stderr and "tiny.wav: 0.004 s" in kept.stderr
    assert f"note: skipped {folder / 'mac.aiff'}: AIFF audio is not read; convert it" in kept.stderr
    listed = {Path(report["audio"]).name: report for report in json.loads(kept.stdout)}
    assert undocumented_keys("vocode", json.loads(kept.stdout)) == [], "add them to docs/json.md"
    assert list(listed) == ["empty.wav", "good.wav", "mac.aiff", "quiet.wav", "text.wav", "tiny.wav"]  # its order
    good, quiet = listed["good.wav"], listed["quiet.wav"]
    assert good["notes"] == [] and quiet["notes"] == ["silent recording (peak -200 dBFS): its audio holds no speech"]
    assert good["skipped"] is None and good["out"] == str(tmp_path / "out" / "good.wav")
    assert listed["tiny.wav"]["out"] is None and listed["tiny.wav"]["skipped"].startswith("0.004 s, too short")
    assert listed["empty.wav"]["skipped"] and listed["text.wav"]["seconds"] is None
    named = runner.invoke(
        app, ["vocode", str(folder / "good.wav"), str(folder / "text.wav"), "--out-dir", str(tmp_path / "o3")]
    )
    assert named.exception.lines[0].startswith(f"AUDIO {folder / 'text.wav'}: ") and not (tmp_path / "o3").exists()
    # An 8 kHz recording and a stereo one are vocoded, and what was done to them is said.
    subprocess.run(["sox", str(SAMPLE_CLIP), "-r", "8000", str(tmp_path / "8k.wav")], check=True)
    subprocess.run(["sox", str(SAMPLE_CLIP), "-c", "2", str(tmp_path / "stereo.wav")], check=True)
    done = runner.invoke(
        app,
        ["vocode", str(tmp_path / "8k.wav"), str(tmp_path / "stereo.wav"), "--out-dir", str(tmp_path / "o"), "--json"],
    )
    low, stereo = json.loads(done.stdout)
    assert low["notes"] == ["8000 Hz resampled to 22050 Hz (nothing above 4000 Hz to hear)"]
    assert stereo["notes"] == ["2 channels mixed to one"]


@pytest.mark.slow
def test_an_export_keeps_the_runs_vocoder_and_says_how_to_make_its_ids(
    runner, tmp_path: Path, acoustic, monkeypatch
) -> None:
    import tensorflow as tf

    from xtts_cli.inference.loading import load_vocoder
    from xtts_cli.speech.vocoding import load_audio

    out = tmp_path / "exported"
    monkeypatch.chdir(acoustic.parent)  # the run named as a user in its folder names it: -r RUN
    result = runner.invoke(app, ["export", "-r", acoustic.name, "-o", str(out), "--json"])
    assert result.exit_code == 0, (result.output, result.exception)
    assert undocumented_keys("export", json.loads(result.stdout)) == [], "add them to docs/json.md"
    assert json.loads(result.stdout)["vocoder_step"] == 12  # as export.json keeps it (the JSON had left it out)
    assert json.loads(result.stdout)["run"] == acoustic.name  # as given, as synthesize --json says it
    assert json.loads(result.stdout)["vocoder"] == str(Path(acoustic.name) / "vocoder")  # so is its vocoder
    info = json.loads((out / "export.json").read_text(encoding="utf-8"))
    # Where they are, not where export was run from: an export is served elsewhere.
    assert info["run"] == str(acoustic) and info["vocoder"] == str(acoustic / "vocoder") and info["vocoder_step"] == 12
    assert info["text_cleaners"] and info["speakers"] and info["languages"] == ["en"]
    assert info["numbers"] == "words"  # "$5" is "five dollars" before the symbols are looked up
    vocabulary = json.loads((acoustic / "vocab.json").read_text(encoding="utf-8"))
    assert info["symbols"] == vocabulary["characters"] and info["text_frontend"] == vocabulary["frontend"]
    ids = {symbol: index + 1 for index, symbol in enumerate(info["symbols"])}
    signatures = tf.saved_model.load(str(out)).signatures  # loaded once for both signatures
    speak = signatures["serving_default"]
    data = _data(acoustic)
    reference = load_audio(SAMPLE_CLIP, data)[: 3 * info["sample_rate"]]
    served = speak(
        text_ids=tf.constant([ids[c] for c in "the kettle is on"], tf.int32),
        language_id=tf.constant(0),
        reference_audio=tf.constant(reference),
    )
    mel, audio = served["mel"].numpy(), served["audio"].numpy()
    vocoder = load_vocoder(acoustic / "vocoder", data)
    np.testing.assert_allclose(audio, vocoder(mel), atol=1e-3)  # the run's vocoder, not Griffin-Lim
    # A training speaker's voice, no clip: the mel `synthesize --speaker NAME` makes.
    from xtts_cli.inference import Synthesizer

    assert info["speaker_signature"]["name"] == "speaker"
    as_speaker = signatures["speaker"]
    ids = [ids[c] for c in "the kettle is on"]
    spoken = as_speaker(speaker_id=tf.constant(1), text_ids=tf.constant(ids, tf.int32), language_id=tf.constant(0))
    tts = Synthesizer.load(acoustic)
    in_process = tts.speak("the kettle is on", speaker=info["speakers"][1])
    np.testing.assert_allclose(spoken["mel"].numpy(), in_process.mel, atol=1e-3)
    # An id outside the run's speakers, languages or symbols is refused by name, not clipped to the
    # nearest voice (which a gather does on a GPU).
    text = tf.constant(ids, tf.int32)
    for call, said in (
        (lambda: as_speaker(speaker_id=tf.constant(99), text_ids=text, language_id=tf.constant(0)), "speaker_id"),
        (lambda: as_speaker(speaker_id=tf.constant(-1), text_ids=text, language_id=tf.constant(0)), "speaker_id"),
        (lambda: as_speaker(speaker_id=tf.constant(0), text_ids=text, language_id=tf.constant(1)), "language_id"),
        (lambda: as_speaker(speaker_id=tf.constant(0), text_ids=text[:0], language_id=tf.constant(0)), "empty"),
        (lambda: as_speaker(speaker_id=tf.constant(0), text_ids=text * 0, language_id=tf.constant(0)), "text_ids"),
        (
            lambda: speak(text_ids=text + 1000, language_id=tf.constant(0), reference_audio=tf.constant(reference)),
            "text_ids",
        ),
    ):
        with pytest.raises(tf.errors.InvalidArgumentError, match=said):
            call()
    # A speaker none of whose clips a few steps drew has no centroid yet: the export speaks it with the
    # vector of its clip, as `--speaker NAME` does, not with an empty centroid.
    from xtts_cli.inference.export import speaker_table

    tts = Synthesizer.load(acoustic)
    counts = tts.model.speaker_clip_counts
    counts.assign(tf.tensor_scatter_nd_update(counts, [[0], [1]], [tf.maximum(counts[0], 1.0), 0.0]))
    table = speaker_table(tts)
    np.testing.assert_allclose(table[1], np.reshape(tts.voice(info["speakers"][1]).vector, [-1]), atol=1e-6)
    assert np.abs(table[1]).sum() > 0
    np.testing.assert_array_equal(table[0], tts.model.speaker_centroids.numpy()[0])
    # Its clips moved away too (the dataset not mounted here): no voice to give it, said in the export's
    # notes (the row of zeros had gone into the export unsaid).
    moved = tmp_path / "moved"
    shutil.copytree(acoustic, moved, ignore=shutil.ignore_patterns("vocoder"))
    listed = json.loads((moved / "speakers.json").read_text())
    name = info["speakers"][1]
    listed[name]["clips"] = [str(tmp_path / "gone.wav")]
    (moved / "speakers.json").write_text(json.dumps(listed))
    away = Synthesizer.load(moved)
    away.model.speaker_clip_counts.assign(counts)
    np.testing.assert_array_equal(speaker_table(away)[1], away.model.speaker_centroids.numpy()[1])  # as it was
    assert f"speaker {name!r} has no voice in the checkpoint (no step drew its clips)" in " ".join(away.notes)
    # The example client speaks it by name too (`--speaker NAME`).
    import importlib.util

    source = Path(__file__).resolve().parents[1] / "examples" / "serve_export.py"
    spec = importlib.util.spec_from_file_location("serve_export", source)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    voice = example.Voice(out, speaker=info["speakers"][1])
    assert voice.text_ids("The kettle is ON", "en") == ids
    wav, stopped = voice.wav("the kettle is on", "en")
    assert wav == example.wav_bytes(spoken["audio"].numpy(), info["sample_rate"])
    assert stopped == bool(spoken["stopped"].numpy())
    forced = runner.invoke(app, ["export", "-r", str(acoustic), "-o", str(tmp_path / "gl"), "--vocoder", "griffin-lim"])
    assert (
        forced.exit_code == 0 and json.loads((tmp_path / "gl" / "export.json").read_text())["vocoder"] == "griffin-lim"
    )
    assert ", vocoder griffin-lim (serving_default:" in forced.stdout  # said, not only in export.json


def _data(run: Path):
    from xtts_cli.run.files import read_run

    return read_run(run)[0].data


def test_a_vocoder_run_written_before_its_blocks_were_saved_by_name_still_vocodes() -> None:
    """tests/data/legacy_vocoder_run: its generator's blocks are only in the optimizer's list, and
    `vocoded.npy` is what the version that wrote it made of a fixed mel."""
    import tensorflow as tf

    from xtts_cli.config.loading import resolve_config
    from xtts_cli.inference.loading import load_vocoder

    run = Path(__file__).parent / "data" / "legacy_vocoder_run"
    vocoder = load_vocoder(run, resolve_config(run / "config.yaml", {}).config.data)
    reader = tf.train.load_checkpoint(str(run / "checkpoints" / "ckpt-3"))
    assert not any(key.startswith("model/blocks") for key in reader.get_variable_to_shape_map())
    frames = 12
    mel = np.sin(np.arange(frames * 80, dtype=np.float32).reshape(1, frames, 80) / 7.0) * 3.0 - 4.0
    assert vocoder.step == 3
    np.testing.assert_allclose(np.asarray(vocoder.generator(mel)), np.load(run / "vocoded.npy"), atol=1e-6)


def test_a_vocoder_run_written_before_the_model_section_held_its_keys_resumes(tmp_path: Path) -> None:
    """Its config.yaml has a `vocoder:` section and its run.json names `vocoder.dim`; today's
    `model.dim` is the same setting, so it resumes, and a changed width is still refused."""
    import shutil

    from xtts_cli.config.loading import config_variant, resolve_config
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.errors import XttsError
    from xtts_cli.run.directory import prepare_run_dir

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "legacy_vocoder_run", run)
    loaded = resolve_config(run / "config.yaml")
    assert loaded.config.vocoder.dim == 16 and "model.model_size" in loaded.left_out
    assert prepare_run_dir(run, loaded.config, read_only=True)[1]
    with pytest.raises(XttsError, match=r"changed: model.dim \(16 -> 32\)"):
        prepare_run_dir(run, config_variant(loaded.config, {"model.dim": 32}), read_only=True)
    # An acoustic config pointed at it: the kind is what changed, not each key the kinds do not share.
    with pytest.raises(XttsError) as refused:
        prepare_run_dir(run, XttsConfig(data=loaded.config.data.model_dump()), read_only=True)
    assert "changed: model.kind (vocoder -> acoustic)" in refused.value.lines[0]
    assert "None" not in refused.value.lines[0] and "--force" not in str(refused.value.hint)
    acoustic = tmp_path / "acoustic"
    shutil.copytree(Path(__file__).parent / "data" / "run_before_run_data", acoustic)
    data = resolve_config(acoustic / "config.yaml").config.data.model_dump()
    with pytest.raises(XttsError) as refused:
        prepare_run_dir(acoustic, XttsConfig(model={"kind": "vocoder"}, data=data), read_only=True)
    assert refused.value.lines[0].endswith("changed: model.kind (acoustic -> vocoder)")


def test_a_recording_damaged_behind_its_header_is_named_not_a_traceback(runner, tmp_path: Path) -> None:
    """A FLAC whose header is intact and whose frames are zeroed: read as audio by its header, then
    libsndfile cannot decode it. In a folder it is skipped and named; alone, one line; to clone, too."""
    import shutil

    import soundfile

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.speech.synthesis import reference_from_audio
    from xtts_cli.speech.vocoding import ClipReadError

    folder = tmp_path / "clips"
    folder.mkdir()
    shutil.copy(SAMPLE_CLIP, folder / "a_good.wav")
    samples, rate = soundfile.read(str(SAMPLE_CLIP))
    soundfile.write(str(tmp_path / "whole.flac"), samples, rate)
    whole = (tmp_path / "whole.flac").read_bytes()
    damaged = folder / "b_damaged.flac"
    damaged.write_bytes(whole[:200] + bytes(len(whole) - 200))
    result = runner.invoke(app, ["vocode", str(folder), "--out-dir", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, (result.output, result.exception)
    assert f"note: skipped {damaged}: cannot be decoded (" in result.stderr
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["a_good.wav"]
    good, left_out = json.loads(result.stdout)
    assert good["skipped"] is None and left_out["out"] is None and left_out["skipped"].startswith("cannot be decoded (")
    # Again, over an earlier call's files: the skipped recording's stale one is not among those "written
    # over" (it had been, and was left there as if this call's), and is said to be left as it was.
    (tmp_path / "out" / "b_damaged.wav").write_bytes(b"old")
    again = runner.invoke(app, ["vocode", str(folder), "--out-dir", str(tmp_path / "out"), "--json"])
    assert f"note: 1 file(s) in {tmp_path / 'out'} were written over (a_good.wav)" in again.stderr, again.stderr
    assert [record["written_over"] for record in json.loads(again.stdout)] == [True, False]  # in --json too
    assert (
        f"note: 1 file(s) in {tmp_path / 'out'} are an earlier call's, left as they were: their recordings were "
        "skipped (b_damaged.wav)" in again.stderr
    )
    # One skipped as its header was read (empty): its earlier file is named as left too.
    (folder / "c_empty.wav").write_bytes(b"")
    (tmp_path / "out" / "c_empty.wav").write_bytes(b"old")
    third = runner.invoke(app, ["vocode", str(folder), "--out-dir", str(tmp_path / "out")])
    assert "left as they were: their recordings were skipped (b_damaged.wav, c_empty.wav)" in third.stderr, third.stderr
    (folder / "c_empty.wav").unlink()
    (tmp_path / "one.wav").write_bytes((tmp_path / "out" / "a_good.wav").read_bytes())
    alone = runner.invoke(app, ["vocode", str(damaged), "-o", str(tmp_path / "one.wav")])
    assert "written over" not in alone.stderr  # it failed: the file is as it was (it had said "is written over")
    (tmp_path / "one.wav").unlink()
    assert isinstance(alone.exception, ClipReadError) and len(alone.exception.lines) == 1
    assert alone.exception.lines[0].startswith(f"AUDIO {str(damaged)!r} cannot be decoded (")
    both = runner.invoke(app, ["vocode", str(folder / "a_good.wav"), str(damaged), "--out-dir", str(tmp_path / "o2")])
    assert both.exception.hint.endswith(f"; 1 written before it: {tmp_path / 'o2' / 'a_good.wav'}")
    assert "damaged or cut short" in alone.exception.hint and not (tmp_path / "one.wav").exists()
    with pytest.raises(ClipReadError, match="^--speaker-wav .* cannot be decoded"):
        reference_from_audio(damaged, XttsConfig().data)


def test_vocode_refuses_a_config_beside_a_vocoder_run_instead_of_passing_it_over(runner, tmp_path: Path) -> None:
    args = [
        "vocode",
        str(SAMPLE_CLIP),
        "--vocoder",
        str(tmp_path / "voc"),
        "-c",
        "tiny-cpu",
        "-o",
        str(tmp_path / "o.wav"),
    ]
    shutil.copy(SAMPLE_CLIP, tmp_path / "o.wav")  # an earlier WAV
    result = runner.invoke(app, args)
    assert result.exception.lines == ["--config tiny-cpu: a vocoder run reads mels of its own features, not a config's"]
    assert "written over" not in result.stderr  # refused: nothing is (it had been said first)
    missing = runner.invoke(app, [*args[:3], "griffin-lim", "-c", str(tmp_path / "none.yaml"), *args[6:]])
    assert "not found" in missing.exception.lines[0] and "written over" not in missing.stderr
    (tmp_path / "o.wav").unlink()
    setting = runner.invoke(app, [*args[:4], "--set", "data.sample_rate=16000", *args[6:]])
    assert setting.exception.lines == [
        "--set data.sample_rate=16000: a vocoder run reads mels of its own features, not a config's"
    ]
    # With Griffin-Lim, --set changes the features as the config's own keys do.
    done = runner.invoke(app, [*args[:3], "griffin-lim", "--set", "data.sample_rate=16000", *args[6:]])
    assert done.exit_code == 0, (done.output, done.exception)
    assert soundfile.info(str(tmp_path / "o.wav")).samplerate == 16000
    again = runner.invoke(app, [*args[:3], "griffin-lim", "--set", "data.sample_rate=16000", *args[6:]])
    assert f"note: {tmp_path / 'o.wav'} was written over" in again.stderr  # as synthesize says it (it went unsaid)
    # A key Griffin-Lim does not read is refused, not passed over, and nothing is written.
    (tmp_path / "o.wav").unlink()
    ignored = runner.invoke(app, [*args[:3], "griffin-lim", "--set", "training.max_steps=5", *args[6:]])
    assert ignored.exception.lines == [
        "--set training.max_steps: vocode reads only the features of the data section, not this key"
    ]
    assert "data.n_mels" in ignored.exception.hint and not (tmp_path / "o.wav").exists()


def test_vocode_says_which_folders_below_a_folder_it_does_not_read(runner, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "clips"
    (folder / "more").mkdir(parents=True)
    shutil.copy(SAMPLE_CLIP, folder / "top.wav")
    shutil.copy(SAMPLE_CLIP, folder / "more" / "deep.wav")
    result = runner.invoke(app, ["vocode", str(folder), "--out-dir", str(tmp_path / "out")])
    assert result.exit_code == 0 and [p.name for p in (tmp_path / "out").iterdir()] == ["top.wav"]
    assert f"note: skipped {folder / 'more'}: a folder below {folder}" in result.stderr
    again = runner.invoke(app, ["vocode", str(folder), "--out-dir", str(tmp_path / "out"), "--json"])
    assert f"note: 1 file(s) in {tmp_path / 'out'} were written over (top.wav)" in again.stderr
    # With --json the folder is in the list as a recording left out is: it had been on stderr alone.
    listed = json.loads(again.stdout)
    assert [(Path(r["audio"]).name, r["out"] is None) for r in listed] == [("top.wav", False), ("more", True)]
    assert listed[1]["skipped"].startswith(f"a folder below {folder}")
    # A corpus's root holds its recordings a folder down: the refusal says where.
    root = runner.invoke(app, ["vocode", str(SAMPLE_CLIP.parents[1]), "-o", str(tmp_path / "x.wav")])
    assert root.exception.hint == f"its recordings are in {SAMPLE_CLIP.parent}: pass that folder"


@pytest.mark.slow
@pytest.mark.parametrize("stop, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])  # SIGTERM had said nothing
def test_ctrl_c_during_vocode_says_how_many_whole_files_it_wrote(tmp_path: Path, stop, code) -> None:
    import time

    folder, out = SAMPLE_CLIP.parent, tmp_path / "out"
    process = start_xtts(["vocode", str(folder), "--out-dir", str(out)], tmp_path, ctrl_c=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(out.glob("*.wav"))) < 2:
        time.sleep(0.05)
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=60)
    written = sorted(out.glob("*.wav"))
    assert process.returncode == code and 2 <= len(written) < 40, stderr
    import re

    said = re.search(r"note: (\d+) of 40 written before the interrupt, up to (\S+)", stderr)
    # The signal may land between a file's rename and its count: one more on disk than said, at most.
    assert said and int(said.group(1)) in (len(written), len(written) - 1) and Path(said.group(2)) in written


@pytest.mark.slow  # trains a vocoder and an acoustic run
def test_training_into_a_runs_vocoder_folder_takes_only_a_vocoder_of_its_features(runner, tmp_path, acoustic) -> None:
    # A vocoder of other features trained there had been found unfit only when the run spoke, and an
    # acoustic model trained there stood for the run's vocoder.
    import shutil

    run = tmp_path / "run"
    shutil.copytree(acoustic, run, ignore=shutil.ignore_patterns("vocoder"))
    other = runner.invoke(app, ["train", "-c", str(vocoder_config(tmp_path, n_mels=64)), "-r", str(run / "vocoder")])
    assert isinstance(other.exception, XttsError), other.output
    assert str(other.exception) == (
        f"{run / 'vocoder'} is where the run {run} keeps its own vocoder, and this vocoder would hear other features "
        "than that run makes: n_mels 64 against 80 (this config's first)"
    )
    speaking = runner.invoke(app, ["train", "-c", str(tiny_config(tmp_path)), "-r", str(run / "vocoder")])
    assert isinstance(speaking.exception, XttsError) and "it would stand for a vocoder there" in str(speaking.exception)
    assert not (run / "vocoder").exists()


@pytest.mark.parametrize("command", ["synthesize", "export", "serve"])
def test_a_vocoder_of_other_features_is_refused_before_the_model_loads(runner, tmp_path: Path, command: str) -> None:
    # It had been refused after TensorFlow's import and the acoustic model's load (16 s on 2 cores).
    vocoder = tmp_path / "vocoder-16k"
    shutil.copytree(DATA / "legacy_vocoder_run", vocoder)
    recorded_as(vocoder, sample_rate=16000)
    run = DATA / "run_before_run_data"
    out, exported = tmp_path / "out.wav", tmp_path / "exported"
    given = {"synthesize": ["Hello.", "-o", str(out)], "export": ["-o", str(exported)], "serve": ["--port", "0"]}
    done = runner.invoke(app, [command, "-r", str(run), "--vocoder", str(vocoder), *given[command]])
    assert isinstance(done.exception, XttsError), done.output
    assert done.exception.lines[0] == (
        f"--vocoder {vocoder} was trained on other features than the run {run}: sample_rate 22050 against "
        f"16000 (the run {run} first)"
    )
    assert "loading" not in done.output and not out.exists() and not exported.exists()


def test_a_vocoder_still_training_is_said_to_be_when_it_is_used(runner, tmp_path: Path) -> None:
    # Used without a word at an early step; one with no checkpoint yet, or stopped early, is said so.
    from training_support import lock_held_elsewhere

    vocoder = tmp_path / "vocoder"
    shutil.copytree(DATA / "legacy_vocoder_run", vocoder)
    with lock_held_elsewhere(vocoder) as pid:
        said = runner.invoke(
            app, ["vocode", str(SAMPLE_CLIP), "--vocoder", str(vocoder), "-o", str(tmp_path / "v.wav")]
        )
    assert said.exit_code == 0, (said.output, said.exception)
    assert f"note: {vocoder} is still training (process {pid} on " in said.stderr
    quiet = runner.invoke(app, ["vocode", str(SAMPLE_CLIP), "--vocoder", str(vocoder), "-o", str(tmp_path / "w.wav")])
    assert quiet.exit_code == 0 and "still training" not in quiet.stderr


@pytest.mark.parametrize("command", ["vocode", "synthesize"])
def test_a_vocoder_with_no_checkpoint_or_of_another_kind_is_refused_before_tensorflow_loads(runner, tmp_path, command):
    # vocode had refused every bad --vocoder after TensorFlow's import (9-12 s on 2 cores), and each
    # command a vocoder whose checkpoints are gone after the model's load. Before the model loads is
    # said here; before TensorFlow's import is checked in a fresh process by test_cli_startup.py.
    emptied = tmp_path / "emptied"
    shutil.copytree(DATA / "legacy_vocoder_run", emptied, ignore=shutil.ignore_patterns("checkpoints"))
    run = DATA / "run_before_run_data"
    given = {"vocode": [str(SAMPLE_CLIP)], "synthesize": ["Hello.", "-r", str(run)]}[command]
    out = tmp_path / "out.wav"
    for vocoder, says in ((emptied, f"{emptied / 'checkpoints'} holds no checkpoint"), (run, "that run is not")):
        done = runner.invoke(app, [command, *given, "--vocoder", str(vocoder), "-o", str(out)])
        assert isinstance(done.exception, XttsError) and says in str(done.exception), done.output
        assert "loading" not in done.output and not out.exists()


@pytest.mark.slow  # trains beside the vocoder the test above trains
def test_an_acoustic_run_starts_in_the_folder_of_a_vocoder_trained_first_into_run_vocoder(runner, tmp_path, acoustic):
    # docs/vocoder.md trains the vocoder into RUN/vocoder; trained first, RUN had been refused to its
    # acoustic run as holding "files xtts did not write (vocoder)".
    import shutil

    run = tmp_path / "first"
    shutil.copytree(acoustic / "vocoder", run / "vocoder")
    other = runner.invoke(app, ["train", "-c", str(tiny_config(tmp_path)), "-r", str(run), "--set", "data.n_mels=64"])
    assert isinstance(other.exception, XttsError), other.output
    assert str(other.exception).startswith(
        f"{run} holds a vocoder in {run / 'vocoder'} trained on other features than this run would make: n_mels 64 "
    )
    vocoder = runner.invoke(app, ["train", "-c", str(vocoder_config(tmp_path)), "-r", str(run)])
    assert isinstance(vocoder.exception, XttsError) and "this config trains a vocoder" in str(vocoder.exception)
    assert sorted(p.name for p in run.iterdir() if p.name != ".xtts-lock") == ["vocoder"]  # refused as it was
    (run / "notes.txt").write_text("mine", encoding="utf-8")  # with a file of the user's: the file is named
    mixed = runner.invoke(app, ["train", "-c", str(tiny_config(tmp_path)), "-r", str(run)])
    assert "holds files xtts did not write (notes.txt);" in str(mixed.exception), mixed.output
    (run / "notes.txt").unlink()
    # --fresh has no run to move aside: the vocoder trained for it stays (it had been moved with a note).
    result = runner.invoke(
        app, ["train", "-c", str(tiny_config(tmp_path)), "-r", str(run), "--max-steps", "1", "--fresh", "--json"]
    )
    assert result.exit_code == 0 and "kept as" not in result.output, result.output
    assert not list(tmp_path.glob("first.old-*"))
    said = runner.invoke(app, ["synthesize", "Hello.", "-r", str(run), "-o", str(tmp_path / "a.wav"), "--json"])
    assert said.exit_code == 0, said.output
    assert json.loads(said.stdout)["vocoder"] == str(run / "vocoder")
    # An acoustic run where the vocoder goes is refused before it trains (synthesize had refused it after).
    other = tmp_path / "other"
    shutil.copytree(acoustic, other / "vocoder", ignore=shutil.ignore_patterns("vocoder"))
    speaks = runner.invoke(app, ["train", "-c", str(tiny_config(tmp_path)), "-r", str(other)])
    assert str(speaks.exception) == (
        f"{other / 'vocoder'} holds a run that speaks (model.kind acoustic), where a run keeps its own vocoder"
    ), speaks.output


def test_a_long_recording_is_vocoded_in_pieces_that_join_without_a_seam() -> None:
    # A recording's whole STFT and Griffin-Lim had held about 15 GB an hour of audio: past PIECE_FRAMES it
    # goes a piece at a time. Small pieces here, so the bundled clip (366 frames) makes several.
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.speech.vocoding import Vocoder, load_audio, mel_of, mel_piece, vocoded_recording

    data = XttsConfig().data
    audio = load_audio(SAMPLE_CLIP, data)
    whole = mel_of(audio, data)
    frames, hop = len(whole), data.hop_length
    for first, end in ((0, 50), (10, 100), (100, frames), (frames - 5, frames)):  # each piece's mel is the whole's
        # To float32 rounding: a matrix product of another length sums in another order on some CPUs (AVX2).
        np.testing.assert_allclose(mel_piece(audio, data, first, end), whole[first:end], rtol=0, atol=1e-5)

    def level(mel, before=None):  # a stand-in vocoder of one level: the crossfades' weights must sum to 1
        return np.ones((len(mel) - 1) * hop, np.float32)

    joined = vocoded_recording(level, audio, data, piece=64, overlap=16)
    assert len(joined) == (frames - 1) * hop
    np.testing.assert_allclose(joined, 1.0, atol=1e-6)
    # A last piece of 3 frames, shorter than a crossfade, is the one before's (its fade had not fit: an error).
    short_end = vocoded_recording(level, np.zeros(195 * hop, np.float32), data, piece=96)
    assert len(short_end) == 195 * hop and np.allclose(short_end, 1.0, atol=1e-6)
    # Griffin-Lim through the pieces: as near the recording's mel as the whole's, seams and all.
    griffin = Vocoder("griffin-lim", data)
    apart = mel_of(vocoded_recording(griffin, audio, data, piece=64, overlap=16), data)
    together = mel_of(griffin(whole), data)
    assert np.abs(apart - whole).mean() < 1.5 * np.abs(together - whole).mean()
    # Each piece's search holds the phase of the one before where they overlap: a steady tone keeps its level
    # across each join (pieces of unrelated phase had cancelled to 0.65 of it there).
    tone = (0.3 * np.sin(2 * np.pi * 220 * np.arange(3 * 22050) / 22050)).astype(np.float32)
    made = vocoded_recording(griffin, tone, data, piece=96)  # the overlap xtts uses (PIECE_OVERLAP)
    level = lambda at: np.sqrt(np.mean(made[at - 128 : at + 128] ** 2))  # noqa: E731
    joins = [level(join * hop + shift) for join in (96, 192) for shift in range(-4096, 4096, 128)]
    assert min(joins) > 0.85 * np.median([level(at) for at in range(4096, len(made) - 4096, 1024)])
