"""Speech measures: the vocabulary-restricted recognizer on real espeak-ng speech, word error rate,
and mel-cepstral distortion with dynamic time warping."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from xtts_cli.errors import XttsError
from xtts_cli.evaluation.mel_distance import dtw_path, mel_cepstral_distortion
from xtts_cli.evaluation.recognizer import (
    Recognizer,
    grammar_words,
    pause_cuts,
    word_error_rate,
    word_loop_grammar,
)

SPEECH = Path(__file__).resolve().parent / "data" / "speech"


def read(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path)) as handle:
        return np.frombuffer(handle.readframes(handle.getnframes()), "<i2") / 32768.0, handle.getframerate()


def test_word_error_rate_counts_substitutions_deletions_and_insertions_over_the_corpus():
    assert word_error_rate(["The cat sat."], ["the cat sat"]) == 0.0
    # 1 substitution + 1 deletion over 3 words, then 1 insertion over 2: 3 errors / 5 words.
    assert word_error_rate(["the cat sat", "a dog"], ["the bat", "a big dog"]) == pytest.approx(3 / 5)


def test_grammar_words_are_its_terminals_only():
    grammar = word_loop_grammar(["Cat", "sat", "the"]) + "<other> = (on | mat) [the];\n"
    assert grammar_words(grammar) == ["cat", "mat", "on", "sat", "the"]


def test_a_word_the_recognizer_cannot_pronounce_is_refused_by_name():
    pytest.importorskip("pocketsphinx")
    with pytest.raises(XttsError) as info:
        Recognizer.word_loop(["cat", "qzxvbn"])
    assert "qzxvbn" in info.value.lines[0]


@pytest.mark.slow
def test_the_recognizer_reads_espeak_speech_by_its_sounds():
    pytest.importorskip("pocketsphinx")
    # The speech-quality benchmark's voice and sentence grammar (scripts/make_speech_fixtures.py).
    recognizer = Recognizer((SPEECH / "sentences.jsgf").read_text(encoding="ascii"))
    sentences = (SPEECH / "sentences.txt").read_text(encoding="utf-8").splitlines()
    clips = [read(SPEECH / f"sentence-{index}.wav") for index in range(len(sentences))]
    heard = [recognizer.transcribe(audio, rate) for audio, rate in clips]
    # Measured: 0.26 (it hears "her" as "the", "hat" as "cat"): the same words in each slot.
    assert word_error_rate(sentences, heard) <= 0.4
    # Not vacuous: the same sounds played backwards are no longer the sentences.
    backwards = [recognizer.transcribe(audio[::-1], rate) for audio, rate in clips]
    assert word_error_rate(sentences, backwards) >= 0.7


def test_pause_cuts_find_the_sentences_of_a_paragraph_and_no_cut_inside_a_word():
    clips = [read(SPEECH / f"sentence-{index}.wav") for index in range(3)]
    rate = clips[0][1]
    pause = np.zeros(int(0.3 * rate))
    paragraph = np.concatenate([clips[0][0], pause, clips[1][0], pause, clips[2][0]])
    spans = pause_cuts(paragraph, rate)
    joins = [len(clips[0][0]) + len(pause) // 2, len(clips[0][0]) + len(pause) + len(clips[1][0]) + len(pause) // 2]
    # Every join is a cut (no stretch runs across one) ...
    assert not any(start < join < end for start, end in spans for join in joins)
    # ... and the speech itself is kept: every loud sample lies in a stretch.
    loud = np.flatnonzero(np.abs(paragraph) > 0.1 * np.abs(paragraph).max())
    inside = np.zeros(len(paragraph), bool)
    for start, end in spans:
        inside[start:end] = True
    assert inside[loud].all()
    assert len(spans) == 3
    # A sentence alone is not cut inside: espeak's gaps between words are shorter than a pause.
    assert [len(pause_cuts(audio, rate)) for audio, _ in clips] == [1, 1, 1]
    assert pause_cuts(np.zeros(rate), rate) == []


def test_mcd_is_zero_for_the_same_mel_and_dtw_absorbs_a_change_of_speed():
    rng = np.random.default_rng(1)
    mel = rng.normal(-5.0, 2.0, (60, 80))
    assert mel_cepstral_distortion(mel, mel) == pytest.approx(0.0, abs=1e-9)
    slower = np.repeat(mel, 2, axis=0)  # every frame twice: the same sounds at half the speed
    assert mel_cepstral_distortion(mel, slower) == pytest.approx(0.0, abs=1e-9)
    other = rng.normal(-5.0, 2.0, (60, 80))
    assert mel_cepstral_distortion(mel, other) > 5.0


def test_dtw_path_runs_from_the_first_to_the_last_frame_without_going_back():
    cost = np.random.default_rng(2).random((7, 11))
    path = dtw_path(cost)
    assert path[0] == (0, 0) and path[-1] == (6, 10)
    for (i, j), (k, m) in zip(path, path[1:]):
        assert (k - i, m - j) in {(1, 0), (0, 1), (1, 1)}
