"""The test sentences a run renders as it trains, in its largest speakers' voices."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Optional

import numpy as np
import tensorflow as tf

from xtts_cli.config.schema import DataConfig, XttsConfig
from xtts_cli.errors import XttsError
from xtts_cli.run.files import REFERENCE_FILE, load_speakers, load_speaking_rate, record_sample_texts
from xtts_cli.speech.synthesis import Voice, speaker_voice, synthesize_speech, within_full_scale, write_wav

RENDERED_SPEAKERS = 3  # test sentences are rendered in the largest speakers' voices (multi-speaker data)


def rendering_voices(run_dir: Path, data: DataConfig, tokenizer=None) -> list[Voice]:
    """The voices test sentences are rendered in: with several speakers the largest few (by their
    centroids, which `render_sentences` reads from the model as it is then, or their clips); else
    (or when their clips moved) the run's reference clip."""
    voices = []
    speakers = (
        list(tokenizer.speakers) if tokenizer is not None and tokenizer.speakers else list(load_speakers(run_dir))
    )
    if len(speakers) > 1:
        for name in speakers[:RENDERED_SPEAKERS]:
            if tokenizer is not None and tokenizer.speaker_index(name) >= 0:
                voices.append(Voice(label=name, speaker=tokenizer.speaker_index(name)))
                continue
            try:
                voices.append(speaker_voice(run_dir, name, data))
            except XttsError:
                continue  # its clips moved since: render in the voices that remain
    if not voices and (run_dir / REFERENCE_FILE).is_file():
        voices.append(Voice(reference=np.load(run_dir / REFERENCE_FILE)))
    return voices


def render_sentences(
    model,
    tokenizer,
    config: XttsConfig,
    voices: list[Voice],
    sentences: list[str],
    run_dir: Path,
    samples: Path,
    step: int,
    note: Callable[[str], None],
    language: Optional[str] = None,
) -> list[Path]:
    """Render `sentences` with the model as it is at `step`, in each of `voices` (`rendering_voices`),
    into `samples` and TensorBoard; a sentence the vocabulary cannot spell is skipped with a `note`."""
    from xtts_cli.data.text import UnknownCharactersError, reading_language

    data = config.data
    if not voices:
        return []
    written = []
    texts: dict[str, str] = {}  # each WAV's sentence, for the server's page
    samples.mkdir(parents=True, exist_ok=True)
    rate = load_speaking_rate(run_dir)
    voices = _speakable(model, voices, run_dir, data)
    labels = voice_labels([voice.label or "" for voice in voices])
    for index, sentence in enumerate(sentences):
        # None: each sentence in the run's language of its script, as synthesize reads it (a Persian test
        # sentence to a run of de and fa had been spelt out as German).
        spoken_in = language or reading_language(tokenizer.languages, sentence, None)[0]
        for voice, label in zip(voices, labels):
            try:
                speech = synthesize_speech(
                    model, tokenizer, sentence, voice, data, rate=rate, settings=config.synthesis, language=spoken_in
                )
            except UnknownCharactersError as exc:
                _note_once(note, run_dir, f"test sentence {index} skipped: {exc.lines[0]}")
                break
            audio = speech.waveform
            for said in speech.notes:  # what synthesize would say of it: a letter read as another, a mark left out
                _note_once(note, run_dir, f"test sentence {index}: {said}")
            target = samples / f"step{step:07d}-{index}{label}.wav"
            write_wav(target, audio, data.sample_rate)  # whole or not at all: a full disk had left half a clip
            tf.summary.audio(  # as the WAV holds it: TensorBoard clips what passes full scale to a square wave
                f"samples/sentence_{index}{label.replace('-', '/', 1)}",
                within_full_scale(audio)[None, :, None],
                data.sample_rate,
                step=step,
            )
            written.append(target)
            texts[target.name] = sentence
    record_sample_texts(samples, texts)
    return written


def voice_labels(speakers: list[str]) -> list[str]:
    """Each voice's part of its sample's file name and TensorBoard tag: "-" and the speaker's name
    (its letters in any script; other characters "_", 40 at most), "" for the run's reference; one
    that another voice's already has gets its place ("-2") as well, so no voice's sample is
    written over."""
    import re

    labels: list[str] = []
    for place, speaker in enumerate(speakers, start=1):
        label = "-" + re.sub(r"[^\w.-]+", "_", speaker)[:40] if speaker else ""
        labels.append(f"{label}-{place}" if label in labels else label)
    return labels


# What a run's samples have said, in this process: each once, not at every sample_step.
_SAID: set[tuple[str, str]] = set()


def _note_once(note: Callable[[str], None], run_dir: Path, message: str) -> None:
    if (str(run_dir), message) not in _SAID:
        _SAID.add((str(run_dir), message))
        note(message)


def _speakable(model, voices: list[Voice], run_dir: Path, data: DataConfig) -> list[Voice]:
    """`voices` as the model can speak them now: a speaker no batch has held yet (the first steps,
    shuffled) has no centroid, so it speaks from the opening of its own clip; without one it is left out."""
    speakable = []
    for voice in voices:
        if voice.speaker is not None and float(model.speaker_clip_counts[voice.speaker]) == 0:
            try:
                voice = speaker_voice(run_dir, voice.label, data)
            except XttsError:
                continue
        speakable.append(voice)
    return speakable
