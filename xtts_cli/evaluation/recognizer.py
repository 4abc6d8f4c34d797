"""Word error rate of speech through a recognizer restricted to a known vocabulary.

pocketsphinx's English acoustic model and CMU dictionary ship inside its wheel, so nothing is
downloaded. A JSGF grammar limits what it may hear to the words a dataset uses, with no
language model: either a free loop over the words (`<word>+`), or the sentence pattern the
words come in, the way intelligibility tests over a fixed grammar (the GRID corpus: "place blue
at F 2 now") are scored. Within the pattern every slot still holds dozens of words, so a
sentence is scored on its sounds. The recognizer runs at 16 kHz, its model's rate; other rates
are resampled with a polyphase filter.

Measured on espeak-ng's own audio of 24 sentences over a 139-word vocabulary: with a free word
loop pocketsphinx misreads espeak's default `en-us` voice badly (WER 0.6-0.7: short words such
as "old" and "the" fill every pause), its Klatt variant (`en-us+klatt`) less (0.34 on 10
sentences); with the sentence pattern, 0.36 and 0.10. A free loop searches many more paths than a
pattern and pocketsphinx's default beams make it slow on unclear speech (minutes for a 4-second
clip of mumbled phones), so `word_loop` narrows them (`WORD_LOOP_BEAMS`): on that espeak audio
5x faster, WER 0.53 instead of 0.51.
"""

from __future__ import annotations

import math
import re
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from xtts_cli.errors import XttsError

__all__ = ["Recognizer", "grammar_words", "normalize_words", "pause_cuts", "word_error_rate", "word_loop_grammar"]

RECOGNIZER_RATE = 16000
_WORD = re.compile(r"[a-z']+")
# pocketsphinx's defaults are beam 1e-48, wbeam 7e-29, pbeam 1e-48, maxhmmpf 30000.
WORD_LOOP_BEAMS = {"beam": 1e-30, "wbeam": 1e-20, "pbeam": 1e-30, "maxhmmpf": 10000}


def _missing_eval_extra(package: str) -> XttsError:
    return XttsError(f"{package} is not installed", hint='install the evaluation extra: pip install "xtts-cli[eval]"')


def normalize_words(text: str) -> str:
    """Lower-case words separated by single spaces, punctuation dropped (what WER compares)."""
    return " ".join(_WORD.findall(text.lower()))


def word_error_rate(references: Sequence[str], hypotheses: Sequence[str]) -> float:
    """Corpus WER: (substitutions + deletions + insertions) / reference words, over all sentences."""
    try:
        import jiwer
    except ImportError:
        raise _missing_eval_extra("jiwer") from None
    refs = [normalize_words(text) for text in references]
    hyps = [normalize_words(text) for text in hypotheses]
    return float(jiwer.wer(refs, hyps))


def resample(waveform: np.ndarray, rate: int, target: int = RECOGNIZER_RATE) -> np.ndarray:
    if rate == target:
        return np.asarray(waveform, dtype=np.float32)
    try:
        from scipy.signal import resample_poly
    except ImportError:
        raise _missing_eval_extra("scipy") from None
    divisor = math.gcd(rate, target)
    return resample_poly(np.asarray(waveform, dtype=np.float64), target // divisor, rate // divisor).astype(np.float32)


# A pause long enough to cut at: a sentence's end (xtts joins sentences with 0.3 s), not a stop
# consonant's closure (under 0.1 s); quiet is 30 dB under the loudest frames.
PAUSE_SECONDS = 0.2
QUIET_DB = 30.0


def pause_cuts(waveform: np.ndarray, sample_rate: int, *, pause: float = PAUSE_SECONDS) -> list[tuple[int, int]]:
    """The stretches of speech between pauses of at least `pause` seconds, as (start, end) samples:
    how a recognizer's front end cuts long audio it would search whole in minutes."""
    audio = np.asarray(waveform, dtype=np.float32).reshape(-1)
    hop = max(1, sample_rate // 100)  # 10 ms frames
    count = len(audio) // hop
    if count == 0:
        return [(0, len(audio))] if len(audio) else []
    rms = np.sqrt(np.mean(np.square(audio[: count * hop].reshape(count, hop)), axis=1))
    loud = float(np.percentile(rms, 99))
    if loud <= 0:
        return []
    quiet = rms < loud * 10 ** (-QUIET_DB / 20)
    spans, start, run = [], None, 0
    for index, silent in enumerate(quiet):
        if not silent:
            if start is None:
                start = index
            elif run * hop >= pause * sample_rate:  # a long pause ended: close the stretch before it
                spans.append((start, index - run))
                start = index
            run = 0
        else:
            run += 1
    if start is not None:
        spans.append((start, count - run))
    return [(begin * hop, min(len(audio), end * hop)) for begin, end in spans]


def word_loop_grammar(vocabulary: Iterable[str]) -> str:
    """JSGF for any sequence of the given words: `<word>+`."""
    words = sorted({normalize_words(word) for word in vocabulary} - {""})
    if not words:
        raise XttsError("the recognizer's vocabulary is empty", hint="pass the words the sentences use")
    return "#JSGF V1.0;\ngrammar vocabulary;\npublic <sentence> = <word>+;\n<word> = " + " | ".join(words) + ";\n"


def grammar_words(grammar: str) -> list[str]:
    """The words a JSGF grammar can produce: its terminals (everything but rule names and syntax)."""
    body = "\n".join(line for line in grammar.splitlines() if not line.lstrip().startswith(("#", "grammar")))
    body = re.sub(r"<[^>]*>", " ", body)
    body = re.sub(r"\bpublic\b", " ", body)
    return sorted(set(_WORD.findall(body.lower())))


class Recognizer:
    """pocketsphinx limited by a JSGF grammar whose words are all in the CMU dictionary.

    `Recognizer(grammar)` takes the grammar's text (keywords go to pocketsphinx's `Decoder`);
    `Recognizer.word_loop(vocabulary)` any sequence of the vocabulary's words.
    """

    def __init__(self, grammar: str, **decoder_options: float) -> None:
        try:
            from pocketsphinx import Decoder
        except ImportError:
            raise _missing_eval_extra("pocketsphinx") from None
        words = grammar_words(grammar)
        decoder = Decoder(samprate=RECOGNIZER_RATE, loglevel="FATAL", **decoder_options)
        unknown = [word for word in words if decoder.lookup_word(word) is None]
        if unknown:
            raise XttsError(
                f"words not in the recognizer's dictionary: {', '.join(unknown[:10])}",
                hint="use words of the CMU pronouncing dictionary",
            )
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "grammar.jsgf"
            path.write_text(grammar, encoding="ascii")
            decoder.add_jsgf_file("grammar", str(path))
            decoder.activate_search("grammar")
        self.decoder = decoder
        self.vocabulary = words

    @classmethod
    def word_loop(cls, vocabulary: Iterable[str]) -> Recognizer:
        return cls(word_loop_grammar(vocabulary), **WORD_LOOP_BEAMS)

    def transcribe(self, waveform: np.ndarray, sample_rate: int) -> str:
        """The words heard in a mono float waveform (any rate); "" when none."""
        audio = resample(np.asarray(waveform, dtype=np.float32).reshape(-1), sample_rate)
        peak = float(np.max(np.abs(audio))) if audio.size else 0.0
        if peak > 0:
            audio = audio * (0.9 / peak)  # the level the recognizer's features expect, whatever the source
        pcm = np.clip(np.round(audio * 32767.0), -32768, 32767).astype("<i2").tobytes()
        self.decoder.start_utt()
        self.decoder.process_raw(pcm, full_utt=True)
        self.decoder.end_utt()
        hypothesis = self.decoder.hyp()
        return normalize_words(hypothesis.hypstr) if hypothesis is not None else ""

    def transcribe_long(self, waveform: np.ndarray, sample_rate: int) -> str:
        """The words heard in audio of several sentences: each stretch between pauses
        (`pause_cuts`) transcribed on its own, in order."""
        heard = (self.transcribe(waveform[start:end], sample_rate) for start, end in pause_cuts(waveform, sample_rate))
        return " ".join(words for words in heard if words)
