"""What a run leaves behind holds the whole model: checkpoints restored by the model alone, runs
written by older versions, and the alignment measured at every validation."""

from __future__ import annotations

import json
import os
import shutil
import wave
from pathlib import Path

import numpy as np
import pytest
import soundfile
import yaml
from training_support import tiny_config, undocumented_keys

from xtts_cli.config import resolve_config
from xtts_cli.errors import XttsError
from xtts_cli.speech.synthesis import SENTENCE_PAUSE_SECONDS, pcm16
from xtts_cli.training.controller import Controller
from xtts_cli.training.metrics import read_metrics
from xtts_cli.training.trainer import Trainer

tf = pytest.importorskip("tensorflow")

LEGACY_RUN = Path(__file__).parent / "data" / "legacy_run"
TEXT = "the cat sat."


# The fast tier trains one decoder here (its one test of this run renders text, which either does
# alike); the whole suite trains both.
@pytest.fixture(scope="module", params=[pytest.param("autoregressive", marks=pytest.mark.slow), "duration"])
def short_run(request, tmp_path_factory):
    """Four steps with a validation every two, with each decoder: the trainer (its model in
    memory) and its run. Self-conditioned under a fading attention prior, each step logged: the
    autoregressive decoder trains its second pass here (a run of its own traced the step once more);
    the duration decoder, which reads no previous frames, is given the same settings."""
    root = tmp_path_factory.mktemp("short")
    config = resolve_config(
        tiny_config(root, "  self_conditioning: true\n  attention_prior_steps: 4\n"),
        {
            "model.decoder": request.param,
            "training.max_steps": 4,
            "training.log_step": 1,
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

    parts = trainer.parts
    batch, _ = next(parts.steps.batches(parts.input.eval_ds))
    return with_reference(batch, trainer.config.data, prefix=parts.tokenizer.prefix_length)


@pytest.fixture(scope="module")
def spoken_by_the_command(short_run, tmp_path_factory):
    """`xtts synthesize TEXT` on the short run, once for the tests that compare with it: each
    synthesis loads the run and traces its generation graph (seconds of CPU). In a folder and HOME
    of its own, as every test's own calls run (module fixtures are set up before them)."""
    from typer.testing import CliRunner

    from xtts_cli.cli.app import app

    root = tmp_path_factory.mktemp("spoken")
    (root / "home").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(root / "home"))
        patch.chdir(root)
        out = root / "one.wav"
        result = CliRunner().invoke(app, ["synthesize", TEXT, "-r", str(short_run.parts.run_dir.path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out, result.output


# Runs the scripts it is handed on stdin, one JSON string a line, each in a namespace of its own,
# and marks on a line of its own where each one's output ends.
SERVE_SCRIPTS = """
import json, sys, traceback
for line in sys.stdin:
    try:
        exec(json.loads(line), {"__name__": "__main__"})
        print("\\n--done--", flush=True)
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        print("\\n--failed--", flush=True)
"""


@pytest.fixture(scope="module")
def plain_python(tmp_path_factory):
    """A fresh Python process that imports only what the scripts it runs import (what a server
    without xtts runs), started once for both decoders' exports: TensorFlow's import in it is
    seconds of CPU. `run(script)` returns what the script printed; one that raises fails the test
    with its traceback."""
    import json
    import queue
    import subprocess
    import sys
    import threading
    import time

    root = tmp_path_factory.mktemp("plain")
    (root / "home").mkdir()
    errors = (root / "stderr.txt").open("w", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE_SCRIPTS],
        cwd=root,
        env={**os.environ, "HOME": str(root / "home")},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
    )
    printed: queue.Queue = queue.Queue()

    def read() -> None:
        for line in process.stdout:
            printed.put(line)
        printed.put(None)

    threading.Thread(target=read, daemon=True).start()

    def run(script: str, timeout: float = 300) -> str:
        process.stdin.write(json.dumps(script) + "\n")
        process.stdin.flush()
        lines, deadline = [], time.monotonic() + timeout
        while (line := printed.get(timeout=max(0.0, deadline - time.monotonic()))) != "--done--\n":
            if line is None or line == "--failed--\n":
                errors.flush()
                pytest.fail((root / "stderr.txt").read_text(encoding="utf-8")[-3000:])
            lines.append(line)
        return "".join(lines)

    yield run
    process.stdin.close()
    process.wait(timeout=60)
    errors.close()


@pytest.mark.slow
def test_checkpoint_reaches_every_weight_through_the_model(short_run) -> None:
    from xtts_cli.model.build import build_model

    # The model alone, as a user's own script or an export would restore it: every weight found.
    latest = tf.train.latest_checkpoint(str(short_run.parts.run_dir.checkpoints))
    tokenizer = short_run.parts.tokenizer
    fresh = build_model(
        short_run.config.model,
        short_run.config.data,
        tokenizer.vocab_size,
        network=type(short_run.parts.models.model),
        languages=len(tokenizer.languages),
        speakers=len(tokenizer.speakers),
    )
    tf.train.Checkpoint(model=fresh).restore(latest).assert_existing_objects_matched().expect_partial()
    for restored, trained in zip(fresh.weights, short_run.parts.models.model.weights):
        np.testing.assert_array_equal(restored.numpy(), trained.numpy(), err_msg=restored.path)


@pytest.mark.slow
def test_load_run_gives_the_trained_models_outputs(short_run) -> None:
    from xtts_cli.inference.loading import load_run

    _, _, model, step, _ = load_run(short_run.parts.run_dir.path)
    assert step == 4
    batch = validation_batch(short_run)
    expected = short_run.parts.models.model(batch, training=False)
    restored = model(batch, training=False)
    for name in ("mel_pred", "mel_post", "stop_logits", "cross_attention"):
        np.testing.assert_allclose(restored[name].numpy(), expected[name].numpy(), rtol=1e-6, atol=1e-6, err_msg=name)


def _pcm(path: Path) -> np.ndarray:
    with wave.open(str(path), "rb") as clip:
        return np.frombuffer(clip.readframes(clip.getnframes()), np.int16)


@pytest.mark.slow
def test_python_api_and_text_file_speak_as_one_sentence_calls_do(
    short_run, spoken_by_the_command, tmp_path, runner
) -> None:
    import json

    from xtts_cli.cli.app import app
    from xtts_cli.inference import Synthesizer

    run = short_run.parts.run_dir.path
    tts = Synthesizer.load(run)
    assert tts.step == 4 and tts.sample_rate == short_run.config.data.sample_rate
    sentences = [TEXT, "a dog ran.", TEXT]
    spoken = list(tts.speak_many(sentences))
    assert [speech.text for speech in spoken] == sentences
    np.testing.assert_array_equal(spoken[0].waveform, spoken[2].waveform)  # the same voice, worked out once
    single, _ = spoken_by_the_command  # `xtts synthesize TEXT`
    assert spoken[0].save(tmp_path / "api.wav").read_bytes() == single.read_bytes()

    lines = tmp_path / "lines.txt"
    lines.write_text(f"{TEXT}\n\n a dog ran. \n", encoding="utf-8")
    out_dir = tmp_path / "clips"
    (run / "vocoder").mkdir()  # a vocoder folder not trained yet: loading notes it, once
    try:
        result = runner.invoke(
            app, ["synthesize", "--text-file", str(lines), "--out-dir", str(out_dir), "-r", str(run), "--json"]
        )
    finally:
        (run / "vocoder").rmdir()
    assert result.exit_code == 0, result.output
    assert result.stderr.count("holds no trained vocoder yet") == 1, result.stderr
    summary = json.loads(result.stdout)
    assert summary["clips"] == 2 and undocumented_keys("synthesize --text-file --out-dir", summary) == []
    index = [json.loads(line) for line in (out_dir / "index.jsonl").read_text().splitlines()]
    assert [(r["line"], r["text"]) for r in index] == [(1, TEXT), (3, "a dog ran.")]
    # Line numbers name the clips: each is what its sentence alone gives.
    assert (out_dir / "0001.wav").read_bytes() == single.read_bytes()
    third = (out_dir / "0003.wav").read_bytes()
    assert third == spoken[1].save(tmp_path / "api-2.wav").read_bytes()
    # Without --out-dir the file is one WAV: its lines in turn, a sentence's pause between them.
    result = runner.invoke(
        app, ["synthesize", "--text-file", str(lines), "-o", str(tmp_path / "whole.wav"), "-r", str(run)]
    )
    assert result.exit_code == 0 and "2 parts it was spoken in" in result.output, result.output
    pause = np.zeros(int(SENTENCE_PAUSE_SECONDS * tts.sample_rate), np.float32)
    whole = np.concatenate([spoken[0].waveform, pause, spoken[1].waveform])
    assert _pcm(tmp_path / "whole.wav").tobytes() == pcm16(whole)  # peak-normalised as one clip
    # TEXT - reads the text from stdin: the same speech as the text given on the command line.
    result = runner.invoke(
        app, ["synthesize", "-", "-o", str(tmp_path / "piped.wav"), "-r", str(run)], input=TEXT + "\n"
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "piped.wav").read_bytes() == single.read_bytes()
    # A line the run cannot read, however late in the file, is named before any clip is spoken.
    lines.write_text(f"{TEXT}\n\nsnow \u0436\n", encoding="utf-8")
    result = runner.invoke(
        app, ["synthesize", "--text-file", str(lines), "--out-dir", str(tmp_path / "none"), "-r", str(run)]
    )
    assert isinstance(result.exception, XttsError), result.output
    assert result.exception.lines[0].startswith("--text-file line 3: text has characters the run was not trained on")
    assert not (tmp_path / "none").exists()
    # Every bad line is named at once (five, the rest counted): a file is mended in one pass.
    bad = [TEXT, "snow \u0436", "\U0001f600", *[f"snow {c}" for c in "\u0436\u0437\u0438\u0439\u043a\u043b"]]
    lines.write_text("\n".join(bad) + "\n", encoding="utf-8")
    result = runner.invoke(
        app, ["synthesize", "--text-file", str(lines), "--out-dir", str(tmp_path / "none"), "-r", str(run)]
    )
    assert isinstance(result.exception, XttsError), result.output
    named = result.exception.lines
    assert [line.split(":")[0] for line in named[:5]] == [f"--text-file line {n}" for n in range(2, 7)], named
    assert "nothing left after cleaning" in named[1] and named[5] == "and 3 more of its 9 lines (7, 8, 9)", named
    # Each hint after the lines it is for: two had run together, one line's read as the other's.
    hints = result.exception.hint.splitlines()
    assert [hint.split(":")[0] for hint in hints] == ["lines 2, 4", "line 3", "line 5", "line 6"], hints
    assert hints[0].startswith("lines 2, 4: in 'snow \u0436'") and "\u0436" not in hints[1], hints
    assert not (tmp_path / "none").exists()
    assert "loading" in result.output and "speaking" not in result.output  # refused before it said it spoke

    voice = tmp_path / "voice.wav"
    shutil.copyfile(single, voice)
    for args, message in (
        (["hello", "--text-file", str(lines), "--out-dir", str(out_dir)], "both TEXT and --text-file"),
        (["--text-file", str(tmp_path / "none.txt"), "--out-dir", str(out_dir)], "none.txt does not exist"),
        (["hello", "--out-dir", str(out_dir)], "--out-dir is for --text-file"),
        # The voice's own clip is not overwritten by the speech made with it.
        (["hello", "--speaker-wav", str(voice), "-o", str(voice)], "--out would write over the --speaker-wav clip"),
        (
            ["--text-file", str(lines), "--out-dir", str(out_dir), "--speaker-wav", str(out_dir / "0003.wav")],
            f"--out-dir would write over the --speaker-wav clip {out_dir / '0003.wav'}",
        ),
    ):
        result = runner.invoke(app, ["synthesize", *args, "-r", str(run)])
        assert isinstance(result.exception, XttsError) and message in str(result.exception), result.output
    assert (out_dir / "0003.wav").read_bytes() == third and voice.read_bytes() == single.read_bytes()


@pytest.mark.slow
def test_export_serves_the_same_speech_with_plain_tensorflow(short_run, plain_python, tmp_path, runner) -> None:
    import json

    from xtts_cli.cli.app import app
    from xtts_cli.data.features import log_mel
    from xtts_cli.inference.loading import load_run
    from xtts_cli.run.files import load_speaking_rate
    from xtts_cli.speech.synthesis import synthesize_speech, within_full_scale

    run, model = short_run.parts.run_dir.path, short_run.parts.models.model
    if model.paced:
        # Three frames for every character, far from a rounding tie. A few steps' predictor says
        # 4 to 22 frames with any fraction; one near .5 can round apart in the two graphs, and every
        # later frame then shifts by one.
        run = tmp_path / "run"
        shutil.copytree(short_run.parts.run_dir.path, run, ignore=shutil.ignore_patterns("checkpoints", "tensorboard"))
        _, _, model, _, _ = load_run(short_run.parts.run_dir.path)
        projection = model.duration_predictor.projection
        projection.kernel.assign(tf.zeros_like(projection.kernel))
        projection.bias.assign(tf.fill(projection.bias.shape, float(np.log(4.0))))
        saved = tf.train.Checkpoint(model=model, step=tf.Variable(4, dtype=tf.int64))
        tf.train.CheckpointManager(saved, str(run / "checkpoints"), max_to_keep=1).save(checkpoint_number=4)
    out = tmp_path / "exported"
    result = runner.invoke(app, ["export", "-r", str(run), "-o", str(out)])
    assert result.exit_code == 0, result.output
    info = json.loads((out / "export.json").read_text())
    assert info["tensorflow_version"] == tf.__version__  # what a server on another TensorFlow checks against
    ids = {symbol: index + 1 for index, symbol in enumerate(info["symbols"])}
    data = short_run.config.data
    clip = short_run.parts.scan.train[0].audio_path
    # A paced model's signatures again, with its speed (the export had none: synthesize --speed alone set it).
    assert (info["paced_signatures"] is not None) == model.paced
    # A process with TensorFlow and numpy only: what a server without xtts runs.
    script = f"""
import json, sys, wave
import numpy as np, tensorflow as tf
with wave.open({clip!r}) as handle:
    audio = np.frombuffer(handle.readframes(handle.getnframes()), "<i2").astype(np.float32) / 32768
signatures = tf.saved_model.load({str(out)!r}).signatures
speak = signatures["serving_default"]
result = speak(text_ids=tf.constant({[ids[c] for c in TEXT]}, tf.int32), language_id=tf.constant(0),
               reference_audio=tf.constant(audio))
np.save({str(tmp_path / "mel.npy")!r}, result["mel"].numpy())
np.save({str(tmp_path / "audio.npy")!r}, result["audio"].numpy())
if {model.paced}:
    for speed in (1.0, 2.0):
        paced = signatures["paced"](text_ids=tf.constant({[ids[c] for c in TEXT]}, tf.int32),
                                    language_id=tf.constant(0), reference_audio=tf.constant(audio),
                                    speed=tf.constant(speed))
        np.save({str(tmp_path)!r} + f"/paced-{{speed:g}}.npy", paced["mel"].numpy())
print(json.dumps({{"samples": int(result["audio"].shape[0]), "xtts": "xtts_cli" in sys.modules,
                  "stopped": bool(result["stopped"].numpy())}}))
"""
    report = json.loads(plain_python(script).strip().splitlines()[-1])
    mel = np.load(tmp_path / "mel.npy")
    stopped = report.pop("stopped")
    assert report == {"samples": (len(mel) - 1) * data.hop_length, "xtts": False}

    with wave.open(clip) as handle:
        audio = np.frombuffer(handle.readframes(handle.getnframes()), "<i2").astype(np.float32) / 32768
    # From where its voice starts, as the export reads a reference (a clip's lead-in is no voice).
    from xtts_cli.speech.synthesis import voice_start

    audio = audio[int(voice_start(audio, data.sample_rate)) :]
    reference = log_mel(audio, data).numpy()[: data.reference_frames]

    def spoken(speed: float = 1.0):
        return synthesize_speech(
            model,
            short_run.parts.tokenizer,
            TEXT,
            reference,
            data,
            rate=load_speaking_rate(run),
            settings=short_run.config.synthesis,
            speed=speed,
        )

    expected = spoken()
    assert mel.shape == expected.mel.shape  # the same durations or stop step, frame for frame
    if model.paced:  # twice the pace: the frames synthesize --speed 2 makes; at 1, serving_default's
        faster = spoken(2.0).mel
        assert np.load(tmp_path / "paced-2.npy").shape == faster.shape and len(faster) < len(mel)
        assert np.load(tmp_path / "paced-1.npy").shape == mel.shape
    assert stopped == expected.stopped  # a clip the length limit cut is said so, as synthesize says it
    # Two graphs of the same weights sum in their own orders (oneDNN picks kernels per graph).
    np.testing.assert_allclose(mel, expected.mel, atol=1e-3)
    # Griffin-Lim over the generated frames alone, as synthesis runs it: the same audio to its end.
    audio = np.load(tmp_path / "audio.npy")
    # Within 6 % of the peak: the mels' 1e-3 through Griffin-Lim's iterations, whose phase can drift
    # apart for a few milliseconds (3e-4 to 6e-3 of ~1 seen; once 0.044 over 2 % of the samples of a
    # clip of peak 0.99; over the whole buffer, the clip's end was 0.24 apart at a peak of 0.25).
    # Scaled within full scale as the WAV `synthesize` writes (a tiny run's Griffin-Lim peaks past 20).
    written = within_full_scale(expected.waveform)
    assert np.max(np.abs(audio)) <= 0.99 + 1e-6
    np.testing.assert_allclose(audio, written, atol=0.06 * float(np.max(np.abs(written))))
    assert np.corrcoef(audio, written)[0, 1] > 0.99  # the same speech throughout
    result = runner.invoke(app, ["export", "-r", str(short_run.parts.run_dir.path), "-o", str(out)])
    assert isinstance(result.exception, XttsError) and "already holds files" in str(result.exception)
    # An empty folder the user made is filled, not replaced: reached through a link, kept private.
    private, link = tmp_path / "private", tmp_path / "link"
    private.mkdir(mode=0o700)
    link.symlink_to(private)
    result = runner.invoke(app, ["export", "-r", str(run), "-o", str(link)])
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and private.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in private.iterdir()) == sorted(p.name for p in out.iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("short_run", ["duration"], indirect=True)  # what either decoder exports alike
def test_an_export_killed_before_its_end_leaves_nothing_the_same_command_refuses(short_run, tmp_path, runner) -> None:
    # SIGKILL while the SavedModel is written into an empty folder the user made: its hidden partial
    # folder had made the same command, run again, refuse an --out that looked empty.
    import signal
    import subprocess
    import sys
    import time

    from training_support import subprocess_env

    from xtts_cli.cli.app import app

    run, out = short_run.parts.run_dir.path, tmp_path / "exported"
    out.mkdir()
    command = [sys.executable, "-m", "xtts_cli", "export", "-r", str(run), "-o", str(out)]
    export = subprocess.Popen(command, env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not list(out.glob(".exported.partial-*")) and export.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    export.send_signal(signal.SIGKILL)
    export.wait()
    (left,) = out.iterdir()
    assert left.name.startswith(".exported.partial-")
    result = runner.invoke(app, ["export", "-r", str(run), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"note: removed {left}, left by an export stopped before its end" in result.stderr
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []
    assert (out / "export.json").is_file()


def test_the_hidden_folder_an_export_still_writes_is_left_alone(tmp_path) -> None:
    # A second export to the same --out had removed the first one's folder as "stopped" while it was written.
    import subprocess
    import sys

    from training_support import subprocess_env

    from xtts_cli.cli.export import _check_out

    out = tmp_path / "exported"
    out.mkdir()
    live = out / ".exported.partial-live"
    live.mkdir()
    hold = (
        "import fcntl, os, sys, time; handle = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(handle, fcntl.LOCK_EX);"
        " print('held', flush=True); time.sleep(120)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(live)], stdout=subprocess.PIPE, env=subprocess_env(), text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(XttsError, match="already holds files"):
            _check_out(out, tmp_path, None)
        assert live.is_dir()
    finally:
        holder.kill()
        holder.wait()
    _check_out(out, tmp_path, None)  # its export ended (killed): its folder is a leftover now
    assert not live.exists()


@pytest.mark.slow
@pytest.mark.parametrize("short_run", ["duration"], indirect=True)  # what either decoder exports alike
def test_a_run_exported_while_it_trains_says_so(short_run, tmp_path, runner) -> None:
    # A vocoder run's export said it was still training; the acoustic run's said nothing, notes [].
    from training_support import lock_held_elsewhere

    from xtts_cli.cli.app import app

    run, out = short_run.parts.run_dir.path, tmp_path / "exported"
    with lock_held_elsewhere(run) as pid:
        result = runner.invoke(app, ["export", "-r", str(run), "-o", str(out)])
    assert result.exit_code == 0, result.output
    said = f"{run} is still training (process {pid} on "
    assert f"note: {said}" in result.stderr
    assert any(note.startswith(said) for note in json.loads((out / "export.json").read_text())["notes"])


@pytest.mark.slow
def test_synthesize_speaks_with_the_trained_model_not_an_untrained_one(
    short_run, spoken_by_the_command, tmp_path, runner
) -> None:
    from xtts_cli.cli.app import app
    from xtts_cli.run.files import REFERENCE_FILE, load_speaking_rate
    from xtts_cli.speech.synthesis import synthesize_speech

    out, output = spoken_by_the_command  # `xtts synthesize TEXT`
    # No stop token for a duration decoder: the durations end the clip, or run past it.
    if short_run.parts.models.model.paced:
        assert "predicted durations" in output and "ended by: the stop token" not in output
        assert "alignment score" not in output  # its frames follow its durations: a score of 1 says nothing
    in_memory = synthesize_speech(
        short_run.parts.models.model,
        short_run.parts.tokenizer,
        TEXT,
        np.load(short_run.parts.run_dir.path / REFERENCE_FILE),
        short_run.config.data,
        rate=load_speaking_rate(short_run.parts.run_dir.path),
        settings=short_run.config.synthesis,
    )
    with wave.open(str(out)) as handle:
        written = np.frombuffer(handle.readframes(handle.getnframes()), "<i2")
    from xtts_cli.speech.synthesis import wav_bytes

    expected = np.frombuffer(wav_bytes(in_memory.waveform, short_run.config.data.sample_rate)[44:], "<i2")
    np.testing.assert_array_equal(written, expected)

    # The same run directory with the step-0 weights: what synthesis produced when it restored
    # only part of the model.
    untrained = tmp_path / "untrained"
    shutil.copytree(
        short_run.parts.run_dir.path,
        untrained,
        # Its record too: a run whose record says it ended, and saved, is refused without its checkpoints.
        ignore=shutil.ignore_patterns("checkpoints", "tensorboard", "run.json", "metrics.jsonl"),
    )
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


@pytest.mark.slow
def test_the_duration_decoder_keeps_the_datas_mel_statistics_in_its_checkpoint(short_run, tmp_path) -> None:
    from xtts_cli.inference.loading import load_run
    from xtts_cli.kinds.acoustic import mel_statistics

    config, _, model, _, _ = load_run(short_run.parts.run_dir.path)
    if config.model.decoder == "autoregressive":
        assert not hasattr(model, "mel_mean")  # it reads and predicts plain log-mels
        return
    mean, scale = mel_statistics(short_run.parts.scan.train, config.data)
    assert mean.shape == (config.data.n_mels,) and float(mean.mean()) < -1.0 and float(scale.min()) >= 0.1
    np.testing.assert_allclose(model.mel_mean.numpy(), mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(model.mel_scale.numpy(), scale, rtol=1e-5, atol=1e-5)

    # They are checkpointed: what a run saved is what its resumption reads and trains with.
    run = tmp_path / "run"
    shutil.copytree(short_run.parts.run_dir.path, run)
    config = resolve_config(run / "config.yaml", {"training.max_steps": 5}).config
    for expected in (mean, mean + 0.5):
        resumed = Trainer(config, run_dir=run)
        try:
            kept = resumed.setup().models.model
            np.testing.assert_allclose(kept.mel_mean.numpy(), expected, rtol=1e-5, atol=1e-5)
            kept.mel_mean.assign(mean + 0.5)
            resumed.parts.checkpoints.save(5)
        finally:
            resumed.close()

    # A run written before the statistics existed: its checkpoint has every other weight (the
    # object graph an older version saved) and still speaks, with the identity in their place.
    older = tmp_path / "older"
    shutil.copytree(short_run.parts.run_dir.path, older, ignore=shutil.ignore_patterns("checkpoints"))
    children = model._trackable_children()
    without = tf.train.Checkpoint(**{k: v for k, v in children.items() if k not in ("mel_mean", "mel_scale")})
    saved = tf.train.Checkpoint(model=without, step=tf.Variable(4, dtype=tf.int64))
    tf.train.CheckpointManager(saved, str(older / "checkpoints"), max_to_keep=1).save(checkpoint_number=4)
    _, _, restored, step, _ = load_run(older)
    assert step == 4 and not restored.mel_mean.numpy().any() and (restored.mel_scale.numpy() == 1).all()
    np.testing.assert_array_equal(restored.mel_projection.kernel.numpy(), model.mel_projection.kernel.numpy())


@pytest.mark.slow
def test_alignment_score_is_written_at_every_validation_with_an_alignment_image(short_run) -> None:
    records = [r for r in read_metrics(short_run.parts.run_dir.metrics) if "val_loss" in r]
    assert [r["step"] for r in records] == [2, 4]
    for record in records:
        assert 0.0 < record["alignment_score"] <= 1.0
    train_records = [r for r in read_metrics(short_run.parts.run_dir.metrics) if "loss" in r]
    assert all(0.0 < r["alignment_score"] <= 1.0 and r["attention_loss"] >= 0.0 for r in train_records)
    images = []
    for events in short_run.parts.run_dir.tensorboard.glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(events)):
            for value in event.summary.value:
                if value.tag == "alignment/validation":
                    images.append((event.step, tf.make_ndarray(value.tensor)))
    assert [step for step, _ in images] == [2, 4]
    width, height = (int(x) for x in images[-1][1][:2])  # an image summary: width, height, PNG bytes
    batch = validation_batch(short_run)
    assert height == int(batch["text_lengths"][0])
    assert width == int(short_run.parts.models.model.decoder_steps(batch["mel_lengths"][:1])[0])


@pytest.mark.slow
def test_a_run_written_before_the_fix_still_loads_its_whole_model(tmp_path) -> None:
    from xtts_cli.inference.loading import load_run
    from xtts_cli.kinds.optimization import build_optimizer
    from xtts_cli.model.build import build_model

    run = tmp_path / "legacy"
    shutil.copytree(LEGACY_RUN, run)
    config, tokenizer, model, step, _ = load_run(run)
    assert step == 3
    # What the trainer's own resume restores (model and optimizer, through TensorFlow's object
    # graph): the same weights, every one of them.
    reference = build_model(config.acoustic, config.data, tokenizer.vocab_size)
    optimizer = build_optimizer(config.training, 10, False)
    optimizer.build(reference.trainable_variables)
    latest = tf.train.latest_checkpoint(str(run / "checkpoints"))
    tf.train.Checkpoint(model=reference, optimizer=optimizer).restore(latest).expect_partial()
    # Two separately built models start from different random weights: equal means restored.
    assert len(model.weights) == len(reference.weights) == 97
    for loaded, expected in zip(model.weights, reference.weights):
        np.testing.assert_array_equal(loaded.numpy(), expected.numpy(), err_msg=loaded.path)


def test_an_older_run_whose_weights_do_not_fit_is_refused_with_the_reason(tmp_path) -> None:
    from xtts_cli.inference.loading import load_run

    run = tmp_path / "legacy"
    shutil.copytree(LEGACY_RUN, run)
    config = yaml.safe_load((run / "config.yaml").read_text())
    config["model"]["d_model"] = 48
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(XttsError) as info:  # named by run.json's record of what it trained
        load_run(run)
    assert info.value.hint == f"put model.d_model 32 back in {run / 'config.yaml'}; to change them, train a new run"
    (run / "run.json").unlink()  # without that record, the checkpoint's shapes say it
    with pytest.raises(XttsError) as info:
        load_run(run)
    assert "written by an older xtts" in info.value.lines[0] and "do not fit" in info.value.lines[0]
    assert "put back the settings it trained with" in info.value.hint


@pytest.mark.slow
def test_self_conditioned_training_under_a_fading_attention_prior_logs_both_passes(short_run) -> None:
    records = [r for r in read_metrics(short_run.parts.run_dir.metrics) if "loss" in r]
    assert [r["step"] for r in records] == [1, 2, 3, 4]
    for record in records:
        assert np.isfinite(record["loss"]) and 0.0 < record["alignment_score"] <= 1.0
        if short_run.parts.models.model.paced:
            # The duration decoder reads no previous frames: there is no second pass to log.
            assert "self_conditioned_mel_loss" not in record
            continue
        # The second pass reads the model's own frames: its loss is logged beside the teacher-forced one.
        assert np.isfinite(record["self_conditioned_mel_loss"]) and record["self_conditioned_mel_loss"] > 0.0


def test_a_test_sentence_is_rendered_with_what_synthesize_would_say_of_it_said_once(short_run, tmp_path) -> None:
    from xtts_cli.speech.samples import render_sentences

    parts, said = short_run.parts, []
    model = parts.models.model
    loud = hasattr(model, "mel_mean")  # the duration decoder's mel statistics (the fast tier's run)
    mean = model.mel_mean.numpy() if loud else None
    try:
        with tf.summary.create_file_writer(str(tmp_path / "tensorboard")).as_default():
            for step in (1, 2):  # two sample steps: each note once
                # The second as loud as an early step's can be: 20 times (e^3) what it was, past full scale.
                if loud:
                    model.mel_mean.assign(mean + 3.0 * (step - 1))
                render_sentences(
                    model,
                    parts.tokenizer,
                    short_run.config,
                    parts.models.voices,
                    ["Caf\u00e9 au lait \u2713 now.", "\u4f60\u597d\u3002"],
                    parts.run_dir.path,
                    tmp_path / "samples",
                    step,
                    note=said.append,
                )
    finally:
        if loud:
            model.mel_mean.assign(mean)
    # TensorBoard plays what the WAV holds: a waveform past full scale had been clipped there to a
    # square wave while the WAV was scaled down.
    heard = {}
    for events in (tmp_path / "tensorboard").glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(events)):
            for value in event.summary.value:  # samples/sentence_0/NAME is step000000N-0-NAME.wav
                name = f"step{event.step:07d}-{value.tag.removeprefix('samples/sentence_').replace('/', '-', 1)}.wav"
                heard[name] = tf.audio.decode_wav(tf.make_ndarray(value.tensor)[0, 0]).audio.numpy()[:, 0]
    assert sorted(heard) == sorted(p.name for p in (tmp_path / "samples").glob("*.wav"))
    peaks = []
    for name, played in heard.items():
        wav, _ = soundfile.read(tmp_path / "samples" / name, dtype="float32")
        np.testing.assert_allclose(played, wav, atol=2e-4)
        peaks.append(float(np.max(np.abs(wav))))
    assert max(peaks) > 0.98 or not loud  # one was peak-normalised: its waveform passed full scale
    assert said[0].startswith("test sentence 0: read what the run never learnt as the nearest it knows: \u00e9\u2192e")
    assert any(n.startswith("test sentence 0: left out what the run never saw: \u2713") for n in said)
    assert any(n.startswith("test sentence 1 skipped: text has characters") for n in said)
    assert len(said) == len(set(said)) == 3
    assert len(list((tmp_path / "samples").glob("step0000001-0*.wav"))) >= 1
    # Each WAV's sentence is kept beside it, as the run said it (the server's page shows it); the
    # skipped sentence has no WAV and no text.
    texts = json.loads((tmp_path / "samples" / "texts.json").read_text(encoding="utf-8"))
    assert sorted(texts) == sorted(p.name for p in (tmp_path / "samples").glob("*.wav"))
    assert set(texts.values()) == {"Caf\u00e9 au lait \u2713 now."}


@pytest.mark.slow  # resumes two committed runs for steps: the fast tier trains once, in the test above
@pytest.mark.parametrize("written", ["legacy_run", "legacy_vocoder_run"])
def test_a_run_written_before_the_fix_resumes_from_its_own_weights(tmp_path, runner, written) -> None:
    from xtts_cli.cli.app import app

    # Synthesis read these checkpoints through the optimizers' lists; a resume refused them as
    # "holds no value for 73 of this model's weights", with only --fresh to offer.
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / written, run)
    result = runner.invoke(app, ["train", "-r", str(run), "--steps", "4", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert (payload["start_step"], payload["final_step"], payload["resumed"]) == (3, 4, True)
    if written == "legacy_run":  # one step on from the old weights, not from random ones
        from xtts_cli.inference.loading import load_run

        old, new = load_run(LEGACY_RUN)[2], load_run(run)[2]
        moved = [float(np.max(np.abs(a.numpy() - b.numpy()))) for a, b in zip(old.weights, new.weights)]
        assert len(moved) == 97 and max(moved) < 0.05, max(moved)
        # Its vocabulary keeps no speakers; the speakers.json the resume wrote names those --speaker takes.
        listed = runner.invoke(app, ["synthesize", "-r", str(run), "--list-speakers", "--json"])
        assert [entry["name"] for entry in json.loads(listed.stdout)["speakers"]] == [
            "en-us+f3",
            "en-us",
            "en-gb+m3",
            "en-gb",
        ]


@pytest.mark.slow  # traces an export
def test_a_run_that_kept_no_speaker_centroids_exports_without_the_speaker_signature(tmp_path, runner) -> None:
    import tensorflow as tf

    from xtts_cli.cli.app import app

    # Saving traced the speaker signature's function over a table of None: a traceback, no export.
    run = tmp_path / "run"
    shutil.copytree(LEGACY_RUN, run, ignore=shutil.ignore_patterns("speaking_rate.json"))
    result = runner.invoke(app, ["export", "-r", str(run), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert list(tf.saved_model.load(str(tmp_path / "out")).signatures) == ["serving_default"]
    # What loading said travels in export.json too, for a client that reads it alone.
    notes = json.loads((tmp_path / "out" / "export.json").read_text(encoding="utf-8"))["notes"]
    assert len(notes) == 1 and "a rough guess" in notes[0], notes


def test_a_run_that_recorded_no_languages_or_speakers_names_its_configs_language_and_says_it_lists_none(
    runner,
) -> None:
    from xtts_cli.cli.app import app
    from xtts_cli.inference import Synthesizer
    from xtts_cli.serving.service import Refused, VoiceService

    # Its vocabulary predates runs' languages: a server refused language_id=en "listing" none, and
    # --list-speakers printed nothing with exit 0.
    tts = Synthesizer.load(LEGACY_RUN, flags=True)
    assert tts.languages == ["en"]
    service = VoiceService(tts)
    assert service.check({"text": "Hello.", "language_id": "en"}).language == "en"
    with pytest.raises(Refused, match="language_id 'de' is not one of this run's languages: en"):
        service.check({"text": "Hello.", "language_id": "de"})
    with pytest.raises(Refused, match="speaker_id 'ann' is not one of this run's speakers: it lists none"):
        service.check({"text": "Hello.", "speaker_id": "ann"})
    listed = runner.invoke(app, ["synthesize", "-r", str(LEGACY_RUN), "--list-speakers", "--list-languages"])
    assert listed.exit_code == 0 and listed.stdout == "speakers (0):\nlanguages (1):\n  en\n", listed.stdout
    assert f"note: {LEGACY_RUN} lists no speakers (a run from before they were kept)" in listed.stderr


def test_a_base_whose_vocabulary_recorded_no_languages_is_refused_with_the_way_it_goes_on(tmp_path, runner) -> None:
    from xtts_cli.cli.app import app

    # Its refusal offered a start from scratch alone; the run itself resumes (older checkpoints included).
    result = runner.invoke(app, ["train", "-c", "tiny-cpu", "--init-from", str(LEGACY_RUN), "-r", str(tmp_path / "n")])
    assert isinstance(result.exception, XttsError), result.output
    assert "its vocabulary was saved before runs recorded their languages and speakers" in str(result.exception)
    assert result.exception.hint.startswith(f"it goes on training as it is (xtts train -r {LEGACY_RUN}, ")
