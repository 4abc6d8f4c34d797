"""Voices and languages in training and synthesis: speaker references, centroids, a bilingual run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
import yaml
from training_support import tiny_config, undocumented_keys

from xtts_cli.config.loading import resolve_config
from xtts_cli.config.schema import DataConfig
from xtts_cli.data.features import with_reference

PERSIAN_DATA = Path(__file__).parent / "data" / "persian"
SAMPLE = Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample"


def reference_batch(speakers: list[int], frames: int = 40) -> dict:
    """A batch whose clip i is filled with the value i, its text opening with language 0 and `speakers[i]`."""
    size = len(speakers)
    return {
        "text_ids": tf.constant([[0, speaker, 5, 6] for speaker in speakers], tf.int32),
        "text_lengths": tf.fill([size], 4),
        "mel": tf.constant(np.arange(size, dtype=np.float32)[:, None, None] * np.ones((1, frames, 8), np.float32)),
        "mel_lengths": tf.fill([size], frames),
    }


def sources(references: dict) -> list[int]:
    """Which clip each reference was cropped from (the value it is filled with)."""
    values = references["ref_mel"].numpy()
    assert np.all(values == values[:, :1, :1])  # one clip per reference, never a mix
    return [int(v) for v in values[:, 0, 0]]


def test_references_come_from_another_clip_of_the_same_speaker():
    data = DataConfig(n_mels=8, reference_frames=16, reference_from_other_clips=1.0)
    speakers = [0, 0, 1, 2, 2, 2, -1, 3]
    seen: dict[int, set[int]] = {row: set() for row in range(len(speakers))}
    for draw in range(40):
        out = with_reference(reference_batch(speakers), data, seed=tf.constant([1, draw], tf.int64), prefix=2)
        for row, source in enumerate(sources(out)):
            seen[row].add(source)
        assert out["text_ids"].numpy().tolist() == [[5, 6]] * len(speakers)
        assert out["speaker_ids"].numpy().tolist() == speakers and out["text_lengths"].numpy().tolist() == [2] * 8
    assert seen[0] == {1} and seen[1] == {0}  # the one other clip of speaker 0
    assert seen[3] == {4, 5} and seen[4] == {3, 5} and seen[5] == {3, 4}  # any other of speaker 2, never itself
    assert seen[2] == {2} and seen[7] == {7}  # alone in the batch: its own clip
    assert seen[6] == {6}  # a speaker the vocabulary does not list is never matched


def test_the_share_of_references_from_other_clips_is_the_configured_one():
    speakers = [0, 0, 0, 0, 1, 1, 1, 1] * 4
    own = DataConfig(n_mels=8, reference_frames=16, reference_from_other_clips=0.0)
    out = with_reference(reference_batch(speakers), own, seed=tf.constant([1, 0], tf.int64), prefix=2)
    assert sources(out) == list(range(len(speakers)))
    half = DataConfig(n_mels=8, reference_frames=16, reference_from_other_clips=0.5)
    shares = []
    for draw in range(20):
        out = with_reference(reference_batch(speakers), half, seed=tf.constant([2, draw], tf.int64), prefix=2)
        shares.append(np.mean([source != row for row, source in enumerate(sources(out))]))
    assert 0.4 < np.mean(shares) < 0.6
    # Evaluation (no seed): every reference is its own clip's first frames.
    assert sources(with_reference(reference_batch(speakers), half, prefix=2)) == list(range(len(speakers)))


@pytest.fixture(scope="module")
def bilingual_run(tmp_path_factory):
    """Five voices in two languages: the bundled English sample (four espeak-ng voices) and a Persian clip set."""
    from xtts_cli.training.controller import Controller
    from xtts_cli.training.trainer import Trainer

    root = tmp_path_factory.mktemp("bilingual")
    # Twelve steps of four clips: an epoch of the 47 clips (bucketed, whole batches), every voice in it.
    path = tiny_config(root, "  max_steps: 12\n")
    settings = yaml.safe_load(path.read_text(encoding="utf-8"))
    settings["data"].update(
        text_frontend="phonemes",
        reference_from_other_clips=0.5,
        datasets=[
            {"path": str(SAMPLE), "language": "en"},
            {"path": str(PERSIAN_DATA), "language": "fa"},
        ],
    )
    settings["model"]["decoder"] = "duration"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    config = resolve_config(path, {}).config
    trainer = Trainer(config, run_dir=root / "run")
    Controller(trainer).run()
    return trainer


@pytest.mark.slow
def test_one_model_learns_two_languages_and_every_speaker_keeps_a_centroid(bilingual_run):
    vocab = json.loads((bilingual_run.parts.run_dir.path / "vocab.json").read_text(encoding="utf-8"))
    assert vocab["frontend"] == "phonemes" and vocab["languages"] == ["en", "fa"]
    assert sorted(vocab["speakers"]) == ["en-gb", "en-gb+m3", "en-us", "en-us+f3", "persian"]
    model = bilingual_run.parts.models.model
    assert model.language_embedding is not None and model.num_speakers == 5
    counts = model.speaker_clip_counts.numpy()
    centroids = model.speaker_centroids.numpy()
    assert np.all(counts > 0) and counts.sum() == 12 * 4  # every clip trained added to its speaker's centroid
    assert np.all(np.linalg.norm(centroids, axis=1) > 0)


@pytest.mark.slow
def test_a_speaker_no_batch_has_held_yet_is_rendered_from_its_own_clip(bilingual_run, tmp_path):
    from xtts_cli.speech.samples import render_sentences, rendering_voices

    parts = bilingual_run.parts
    model, tokenizer, run_dir = parts.models.model, parts.tokenizer, parts.run_dir.path
    voices = rendering_voices(run_dir, bilingual_run.config.data, tokenizer)
    unseen = voices[0].speaker
    counts = model.speaker_clip_counts.numpy()
    model.speaker_clip_counts.assign(np.where(np.arange(len(counts)) == unseen, 0.0, counts))
    try:  # the first steps of a shuffled run: this speaker has no centroid yet
        notes: list[str] = []
        written = render_sentences(
            model, tokenizer, bilingual_run.config, voices, ["The cat sat."], run_dir, tmp_path, 7, notes.append
        )
        # Synthesis says so (a run stopped early at its base's weights had spoken a clip's voice unsaid).
        from xtts_cli.speech.synthesis import speaker_voice

        spoken = speaker_voice(run_dir, voices[0].label, bilingual_run.config.data, tokenizer, model)
        assert spoken.note.startswith(f"speaker {voices[0].label!r} has no voice stored in the checkpoint")
    finally:
        model.speaker_clip_counts.assign(counts)
    assert len(written) == len(voices) == 3 and not notes
    assert any(voices[0].label.replace("+", "_") in path.name for path in written)


@pytest.mark.slow
def test_a_test_sentence_is_rendered_in_the_language_of_its_script(bilingual_run, tmp_path):
    # training.test_sentences had all been read in the run's first language: a Persian one spelt out
    # in English phonemes, where synthesize reads it as Persian.
    import soundfile

    from xtts_cli.run.files import load_speaking_rate
    from xtts_cli.speech.samples import render_sentences, rendering_voices
    from xtts_cli.speech.synthesis import synthesize_speech

    parts, config = bilingual_run.parts, bilingual_run.config
    model, tokenizer, run_dir = parts.models.model, parts.tokenizer, parts.run_dir.path
    voices = rendering_voices(run_dir, config.data, tokenizer)[:1]
    sentence = "دختر در شهر خندید."
    notes: list[str] = []
    (written,) = render_sentences(model, tokenizer, config, voices, [sentence], run_dir, tmp_path, 7, notes.append)
    rendered = soundfile.read(str(written))[0]

    def spoken(language: str) -> np.ndarray:
        rate = load_speaking_rate(run_dir)
        speech = synthesize_speech(
            model, tokenizer, sentence, voices[0], config.data, rate=rate, settings=config.synthesis, language=language
        )
        return np.asarray(speech.waveform)

    # Compared sample by sample (to the file's 16-bit step): a run of en and fa reads a Persian word as
    # Persian in either language, so only the language the model is told tells the two apart, and an
    # untrained model may give both the same length.
    def same(waveform: np.ndarray) -> bool:
        return waveform.shape == rendered.shape and bool(np.allclose(waveform, rendered, atol=2 / 32768))

    assert same(spoken("fa")) and not same(spoken("en")), notes


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "language", "speaker"),
    [
        ("The kettle is on the stove.", "en", "en-us+f3"),
        ("پسر توپ را می\u200cسازد.", "fa", "persian"),
        ("دختر در شهر خندید.", "fa", "en-gb"),  # an English voice reading Persian
        ("Please close the window.", "en", "persian"),  # and the Persian voice reading English
    ],
)
def test_synthesize_speaks_each_language_in_each_voice_from_the_run_alone(
    bilingual_run, tmp_path, runner, text, language, speaker
):
    import shutil

    from xtts_cli.cli.app import app

    # A copy of the run directory with no dataset beside it: the voice and the language come from it alone.
    run = tmp_path / "moved-run"
    shutil.copytree(bilingual_run.parts.run_dir.path, run, ignore=shutil.ignore_patterns("tensorboard", "samples"))
    (run / "speakers.json").write_text(
        (run / "speakers.json").read_text().replace(str(SAMPLE), "/nowhere").replace(str(PERSIAN_DATA), "/nowhere")
    )
    out = tmp_path / "out.wav"
    args = [
        "synthesize",
        text,
        "--checkpoint",
        str(run),
        "--out",
        str(out),
        "--language",
        language,
        "--speaker",
        speaker,
    ]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["language"] == language and report["voice"] == "centroid" and report["seconds"] > 0


@pytest.mark.slow
def test_a_cloned_voice_and_a_language_the_run_lacks(bilingual_run, tmp_path, runner):
    from xtts_cli.cli.app import app
    from xtts_cli.errors import XttsError

    out = tmp_path / "cloned.wav"
    clip = PERSIAN_DATA / "wavs" / "FA-02.wav"
    run = str(bilingual_run.parts.run_dir.path)
    result = runner.invoke(
        app, ["synthesize", "The bus was late.", "--checkpoint", run, "--out", str(out), "--speaker-wav", str(clip)]
    )
    assert result.exit_code == 0, result.output
    assert out.stat().st_size > 1000
    result = runner.invoke(app, ["synthesize", "Hallo.", "--checkpoint", run, "--out", str(out), "--language", "de"])
    assert isinstance(result.exception, XttsError)
    assert result.exception.lines == ["--language: this model was not trained on 'de'; it speaks en, fa"]
    # Persian with no --language is read as the run's language in its script, not spelt out in English.
    result = runner.invoke(app, ["synthesize", "پسر توپ را می\u200cسازد.", "-r", run, "--out", str(out), "--json"])
    report = json.loads(result.stdout)
    assert report["language"] == "fa"
    assert report["notes"] == ["read as fa, the run's language in Arabic script (--language picks another)"]
    # A paragraph of both: each sentence in its own script's language, the Persian one said.
    paragraph = "The bus was late. پسر توپ را می\u200cسازد. The cat sat."
    result = runner.invoke(app, ["synthesize", paragraph, "-r", run, "--out", str(out), "--json"])
    report = json.loads(result.stdout)
    assert report["language"] == "en,fa" and report["sentences"] >= 3  # a tiny run may cut one further
    assert report["notes"] == ["read as fa, the run's language in Arabic script (--language picks another)"]
    asked = runner.invoke(app, ["synthesize", paragraph, "-r", run, "--out", str(out), "--json", "--language", "en"])
    assert json.loads(asked.stdout)["language"] == "en"  # asked: every sentence in it
    # From Python too, a language the phonemes run lacks is named as one, before espeak-ng is asked.
    from xtts_cli.inference import Synthesizer

    with pytest.raises(XttsError) as unknown:
        Synthesizer.load(run).speak("Hi.", language="xx")
    assert unknown.value.lines == ["language: this model was not trained on 'xx'; it speaks en, fa"]
    # Its notes name the arguments too, and the server's name a request's fields, not the flags.
    from xtts_cli.serving.service import VoiceService

    persian = "پسر توپ را می\u200cسازد."
    tts = Synthesizer.load(run)
    assert tts.check(persian) == ["read as fa, the run's language in Arabic script (language picks another)"]
    assert tts.check(persian, language="en")[0].endswith(
        ": its words are read as fa, in en's accent; pass language=\"fa\" for fa's own"
    )
    assert tts.speak(persian).notes == tts.check(persian)
    service = VoiceService(Synthesizer.load(run, flags=True))
    assert service.check({"text": persian}).notes == [
        "read as fa, the run's language in Arabic script (language_id picks another)"
    ]
    asked = service.check({"text": persian, "language_id": "en"}).notes[0]
    assert asked.endswith(": its words are read as fa, in en's accent; send language_id=fa for fa's own"), asked


def test_a_run_from_before_front_ends_resumes_and_a_changed_front_end_is_refused(tmp_path):
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.errors import XttsError
    from xtts_cli.run.directory import prepare_run_dir

    run, resumed = prepare_run_dir(tmp_path / "run", XttsConfig())
    assert not resumed
    run.checkpoints.mkdir(parents=True)
    (run.checkpoints / "checkpoint").write_text('model_checkpoint_path: "ckpt-1"\n')
    # What a run written before `data.text_frontend` existed recorded: no such key.
    record = json.loads(run.run_file.read_text())
    del record["model_identity"]["data.text_frontend"]
    run.run_file.write_text(json.dumps(record))
    assert prepare_run_dir(tmp_path / "run", XttsConfig())[1]  # it read characters: resumes
    phonemes = XttsConfig(data={"text_frontend": "phonemes"})
    with pytest.raises(XttsError, match=r"changed: data.text_frontend \(characters -> phonemes\)"):
        prepare_run_dir(tmp_path / "run", phonemes)


def test_synthesize_lists_the_runs_speakers_and_languages_without_loading_it(runner):
    from xtts_cli.cli.app import app

    run = Path(__file__).parent / "data" / "run_before_run_data"
    vocabulary = json.loads((run / "vocab.json").read_text(encoding="utf-8"))
    listed = runner.invoke(app, ["synthesize", "-r", str(run), "--list-speakers", "--list-languages", "--json"])
    assert listed.exit_code == 0, (listed.output, listed.exception)
    report = json.loads(listed.stdout)
    assert [s["name"] for s in report["speakers"]] == vocabulary["speakers"] and report["languages"] == ["en"]
    assert undocumented_keys("synthesize --list-speakers --list-languages", report) == []
    assert all(s["minutes"] > 0 for s in report["speakers"])
    plain = runner.invoke(app, ["synthesize", "-r", str(run), "--list-languages"])
    assert plain.stdout == "en\n"
    # A text and --out given with it are named as left aside: they had been passed over, no file written.
    aside = runner.invoke(app, ["synthesize", "Hello.", "-r", str(run), "--list-languages", "-o", "z.wav"])
    assert aside.stdout == "en\n" and not Path("z.wav").exists()
    assert "note: a listing exits without speaking: TEXT and --out left aside" in aside.stderr, aside.stderr
    both = runner.invoke(app, ["synthesize", "-r", str(run), "--list-speakers", "--list-languages"]).stdout.splitlines()
    speakers = len(vocabulary["speakers"])  # each list under its heading: "en" is not one more speaker
    assert both[0] == f"speakers ({speakers}):" and both[1 + speakers :] == ["languages (1):", "  en"], both
    # A vocoder run holds a vocabulary too, but speaks no text: it is said, not listed.
    vocoder = Path(__file__).parent / "data" / "legacy_vocoder_run"
    refused = runner.invoke(app, ["synthesize", "-r", str(vocoder), "--list-speakers"])
    assert refused.exit_code == 1 and "is a vocoder run, not an acoustic model" in str(refused.exception)


def test_speed_is_refused_by_a_decoder_that_has_no_pace(runner, tmp_path):
    from xtts_cli.cli.app import app

    run = Path(__file__).parent / "data" / "run_before_run_data"  # an autoregressive run
    result = runner.invoke(
        app, ["synthesize", "the kettle", "-r", str(run), "--speed", "1.5", "-o", str(tmp_path / "a.wav")]
    )
    assert "speed 1.5: this run's decoder (autoregressive)" in str(result.exception)
    assert "model.decoder: duration" in result.exception.hint and not (tmp_path / "a.wav").exists()


@pytest.mark.slow
def test_out_dash_writes_the_wav_alone_to_stdout(tmp_path):
    import io
    import subprocess
    import sys
    import wave

    from training_support import subprocess_env

    from xtts_cli.inference import Synthesizer

    run = Path(__file__).parent / "data" / "run_before_run_data"
    command = [sys.executable, "-m", "xtts_cli", "synthesize", "the kettle is on the stove.", "-r", str(run)]
    done = subprocess.run(
        [*command, "--out", "-"], cwd=tmp_path, env=subprocess_env(), capture_output=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.rglob("*.wav"))  # nothing written but stdout
    # What the clip is, on stderr: the WAV stays alone on stdout.
    assert b"stdout: " in done.stderr and b" s of audio from step " in done.stderr and b"ended by: " in done.stderr
    with wave.open(io.BytesIO(done.stdout)) as handle:
        samples = np.frombuffer(handle.readframes(handle.getnframes()), "<i2")
    from xtts_cli.speech.synthesis import wav_bytes

    speech = Synthesizer.load(run).speak("the kettle is on the stove.")
    with wave.open(io.BytesIO(wav_bytes(speech.waveform, speech.sample_rate))) as handle:
        expected = np.frombuffer(handle.readframes(handle.getnframes()), "<i2")
    np.testing.assert_allclose(samples / 32767.0, expected / 32767.0, atol=1e-3)
    refused = subprocess.run(
        [*command, "--out", "-", "--json"], cwd=tmp_path, env=subprocess_env(), capture_output=True
    )
    assert refused.returncode == 1 and b"--out - and --json both write to stdout" in refused.stderr
    # Into a terminal (a real pseudo-terminal as stdout), the WAV is refused before the run loads.
    import os
    import pty

    terminal, other_end = pty.openpty()
    try:
        into_terminal = subprocess.run(
            [*command, "--out", "-"],
            cwd=tmp_path,
            env=subprocess_env(),
            stdout=other_end,
            stderr=subprocess.PIPE,
            timeout=120,  # WAV bytes into a terminal no one reads would block, not fail
        )
    finally:
        os.close(other_end)
        os.close(terminal)
    assert into_terminal.returncode == 1, into_terminal.stderr
    assert b"--out - writes the WAV to stdout, which is a terminal here" in into_terminal.stderr
    assert b"loading" not in into_terminal.stderr


def test_each_voices_samples_have_their_own_file_name_whatever_the_script_of_its_speaker():
    from xtts_cli.speech.samples import voice_labels

    speakers = ["مریم", "سارا", "anna ö", "anna ä", "en-us+f3", "a b", "a/b", ""]
    labels = voice_labels(speakers)
    assert labels[:5] == ["-مریم", "-سارا", "-anna_ö", "-anna_ä", "-en-us_f3"]  # ASCII names as before
    assert labels[5:] == ["-a_b", "-a_b-7", ""]  # the same after "_": the second gets its place
    assert len(set(labels)) == len(labels)


def test_a_clips_lead_in_of_silence_is_passed_over_to_where_its_voice_starts(tmp_path) -> None:
    # A clip of 10 s of silence, then speech, had been "silent" (the references reach 9 s); one of 1.2 s
    # was cloned from its silence, and one of a click first from the silence after the click. Each is
    # the voice of the same clip without the lead-in.
    import soundfile

    from xtts_cli.speech.synthesis import CLONE_WINDOWS, VOICE_FRAME_SECONDS, UnusableClipError, reference_from_audio

    data = DataConfig()
    speech, rate = soundfile.read(sorted((SAMPLE / "wavs").glob("*.wav"))[0], dtype="float32")
    voiced = np.concatenate([np.zeros(rate // 10, np.float32), speech])  # a tenth of a second before the voice
    frame = int(VOICE_FRAME_SECONDS * rate)  # leads of whole frames: the same frames of the voice are read

    def reference(lead: np.ndarray) -> np.ndarray:
        clip = tmp_path / f"lead-{len(lead)}-{lead.max(initial=0):g}.wav"
        soundfile.write(clip, np.concatenate([lead, voiced]), rate, subtype="PCM_16")
        return reference_from_audio(clip, data, windows=CLONE_WINDOWS)

    plain = reference(np.zeros(0, np.float32))
    clicked = np.zeros(24 * frame, np.float32)
    clicked[10] = 1.0
    for lead in (np.zeros(24 * frame, np.float32), np.zeros(200 * frame, np.float32), clicked):
        np.testing.assert_array_equal(reference(lead), plain)
    # Past what is read to find it, nothing but silence or a low hiss: said so, with the cut to make.
    hiss = np.random.default_rng(0).normal(0, 0.003, 45 * rate).astype(np.float32)
    for lead in (np.zeros(45 * rate, np.float32), hiss):
        with pytest.raises(UnusableClipError) as refused:
            reference(lead)
        assert (
            refused.value.why.startswith("holds no voice in its first 39 s")
            and "silence 1 0.1 1%" in refused.value.hint
        )


@pytest.mark.parametrize(
    ("given", "says"), [("-", "'-' is stdin, which a clip is not read from"), ("https://example.com/v.wav", "is a URL")]
)
def test_a_clip_named_as_stdin_or_a_url_is_said_to_be_that_not_a_file_not_found(given, says) -> None:
    # '-' had been "cannot be read as audio: file not found", a URL shown as 'https:/example.com/v.wav'.
    from xtts_cli.speech.synthesis import reference_from_audio
    from xtts_cli.speech.vocoding import ClipReadError

    with pytest.raises(ClipReadError) as refused:
        reference_from_audio(Path(given), DataConfig())
    assert says in refused.value.lines[0] and "not found" not in refused.value.lines[0]


@pytest.mark.slow  # loads a run and speaks
def test_a_speaker_named_in_another_unicode_form_is_the_same_speaker(tmp_path, runner):
    import shutil
    import unicodedata

    from xtts_cli.cli.app import app
    from xtts_cli.errors import XttsError
    from xtts_cli.inference import Synthesizer
    from xtts_cli.serving.service import Refused, VoiceService

    # A run whose speaker is "Zoë Ωmega" precomposed, asked for with a combining diaeresis (macOS's
    # folder names, some keyboards): refused, with a did-you-mean that looked the same as the name.
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "run_before_run_data", run)
    name = "Zoë Ωmega"
    for file in ("vocab.json", "speakers.json"):
        text = (run / file).read_text(encoding="utf-8")
        (run / file).write_text(text.replace('"en-us"', json.dumps(name)), encoding="utf-8")
    typed = unicodedata.normalize("NFD", name)
    assert typed != name
    tts = Synthesizer.load(run)
    assert tts.voice(speaker=typed).label == name
    assert tts.speak("The cat.", speaker=typed).seconds > 0
    service = VoiceService(Synthesizer.load(run, flags=True))
    assert service.check({"text": "The cat.", "speaker_id": typed}).speaker == name
    result = runner.invoke(
        app, ["synthesize", "The cat.", "-r", str(run), "--speaker", typed, "-o", str(tmp_path / "a.wav")]
    )
    assert result.exit_code == 0 and (tmp_path / "a.wav").is_file(), result.output
    # Another name is still refused.
    with pytest.raises(XttsError, match="speaker 'Zoe Omega' is not in"):
        tts.voice(speaker="Zoe Omega")
    with pytest.raises(Refused):
        service.check({"text": "The cat.", "speaker_id": "Zoe Omega"})
