"""`Synthesizer`: a trained run loaded once, speaking as many sentences as asked."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import numbers
import os
import re
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Optional

import numpy as np

from xtts_cli.errors import XttsError, XttsNote, speed_without_pace
from xtts_cli.run.files import load_speaking_rate
from xtts_cli.speech.synthesis import (
    Speech,
    Voice,
    build_generation_graphs,
    check_controls,
    check_text,
    resolve_voice,
    speak_parts,
    speak_text,
    speaker_vector,
    warm_up,
)
from xtts_cli.speech.vocoding import GRIFFIN_LIM, Vocoder

# An error says a flag where the command line gave the value; from Python, the argument's name. A
# command it suggests (xtts train --run-dir RUN) stays a command.
_LIST_SPEAKERS = re.compile(r"xtts synthesize --list-speakers -r \S+ lists them")
_PYTHON_WORDS = (
    (re.compile(r"(e\.g\.|pass) --language (\S+)"), r'\1 language="\2"'),
    (re.compile(r"pass --(run-dir|vocoder) the "), lambda m: f"pass {m.group(1).replace('-', '_')} as the "),
    (re.compile(r"--speaker-wav FILE\b"), 'speaker_wav="clip.wav"'),
    (re.compile(r"--speaker NAME\b"), 'speaker="NAME"'),
    (re.compile(r"--speaker-wav\b"), "speaker_wav"),
    (re.compile(r"--speaker\b"), "speaker"),
    (re.compile(r"--language\b"), "language"),
    (re.compile(r"--vocoder (?!the\b)([^\s,;)]+?)(:?)(?=[\s,;)]|$)"), r'vocoder="\1"\2'),  # its colon outside
    (re.compile(r"--vocoder\b"), "vocoder"),
    (re.compile(r"--run-dir\b"), "run_dir"),
)


def reworded(text: str, words: tuple) -> str:
    """`text` with each of `words`' (pattern, replacement) pairs applied before the first command it
    suggests ("xtts train --run-dir RUN"), which stays as it is typed."""
    text, command, rest = text.partition("xtts ")
    for pattern, said in words:
        text = pattern.sub(said, text)
    return text + command + rest


def _in_python_words(error: XttsError) -> XttsError:
    def said(text: str) -> str:
        return reworded(_LIST_SPEAKERS.sub("Synthesizer.speakers lists them", text), _PYTHON_WORDS)

    error.lines = [said(line) for line in error.lines]
    error.hint = said(error.hint) if error.hint else error.hint
    error.args = ("; ".join(error.lines),)
    return error


# The process whose Synthesizer started TensorFlow's runtime. Its threads do not survive a fork: a
# forked child's first TensorFlow call waits for ever (a multiprocessing Pool's default on Linux).
_STARTED_IN: Optional[int] = None


def _refuse_after_fork() -> None:
    if _STARTED_IN is not None and _STARTED_IN != os.getpid():
        raise XttsError(
            "this process was forked from one whose Synthesizer had started TensorFlow, which does not survive "
            "a fork: its first call here would wait for ever",
            hint='start the worker processes with multiprocessing.get_context("spawn"), or before the first '
            "Synthesizer.load",
        )


def _python_words(method):
    """`method`'s errors in the argument names a Python caller used, unless it was loaded for the
    command line (`flags=True`): its errors name the flags."""

    @functools.wraps(method)
    def named(self, *args, **kwargs):
        try:
            _refuse_after_fork()
            result = method(self, *args, **kwargs)
        except XttsError as error:
            raise (error if self.flags else _in_python_words(error)) from None
        if inspect.isgenerator(result):
            return _named_as_it_runs(self, result)
        return result if self.flags else _warned(_noted_in_python_words(result), stacklevel=3)

    return named


def _named_as_it_runs(synthesizer, generations):
    try:
        for speech in generations:
            yield speech if synthesizer.flags else _warned(_noted_in_python_words(speech), stacklevel=3)
    except XttsError as error:
        raise (error if synthesizer.flags else _in_python_words(error)) from None


def _noted_in_python_words(result: Any) -> Any:
    """`check`'s notes, or a Speech's note on its language, with the arguments' names ("language
    picks another"), not the flags'."""
    if isinstance(result, Speech) and result.language_note:
        result.language_note = reworded(result.language_note, _PYTHON_WORDS)
    elif isinstance(result, list) and all(isinstance(note, str) for note in result):
        return [reworded(note, _PYTHON_WORDS) for note in result]
    return result


def _warned(result: Any, stacklevel: int) -> Any:
    """`result`, a Speech's notes first warned (`XttsNote`) at the caller's line, `stacklevel` frames
    up: what the command line prints of a text left out or cut, which a Python caller never saw."""
    if isinstance(result, Speech):
        for note in result.notes:
            warnings.warn(note, XttsNote, stacklevel=stacklevel)
    return result


# Voices of clips (`speaker_wav`) kept for the next call, the most recently used: an application that
# clones every upload it gets would otherwise keep each one's voice for good.
CLIP_VOICES = 32


def _path(value: object, name: str, what: str) -> Optional[Path]:
    """`value` (a str or any os.PathLike: a Path, a PurePath) as a Path; None for None. Raises
    TypeError for another type, and XttsError for an empty one (it would be the current folder)."""
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} is {what}, not {type(value).__name__}")
    text = os.fspath(value)
    if not isinstance(text, str) or not text.strip():
        raise XttsError(f"{name} {text!r} is empty", hint=f"pass {what}")
    return Path(text)


class Synthesizer:
    """A run directory's model, tokenizer and settings, restored from one checkpoint.

    `Synthesizer.load(run_dir)` restores the latest checkpoint (or `step`'s); TensorFlow is imported
    with `xtts_cli.inference` itself (`xtts_cli.errors` holds XttsError without it);
    `speak` and `speak_many` then cost only the generation. A voice (a training speaker by name, or
    a clip to clone) is worked out once and reused for every sentence spoken in it.
    """

    def __init__(self, config, tokenizer, model, step: int, run, vocoder: Optional[Vocoder] = None) -> None:
        self.config = config
        self.tokenizer = tokenizer
        self.model = model
        self.step = step
        self.run_dir = run.path
        # The run's files read later (its reference voice) from where it was loaded, whatever
        # directory the host program has changed to since (a relative run_dir had lost its voice).
        self._root = run.path.absolute()
        self.vocoder = vocoder or Vocoder(GRIFFIN_LIM, config.data)
        self._rate = load_speaking_rate(run.path)
        self._voices: OrderedDict[tuple, Voice] = OrderedDict()
        self._voices_lock = threading.Lock()
        # What loading said: a latest checkpoint that could not be read, so an earlier one speaks.
        self.notes: list[str] = []
        self.flags = False  # errors name the arguments (language), not the command line's flags

    @classmethod
    def load(
        cls,
        run_dir: Path | str,
        step: Optional[int] = None,
        vocoder: Optional[Path | str] = None,
        *,
        flags: bool = False,
    ) -> Synthesizer:
        """`vocoder`: a vocoder run's directory or "griffin-lim"; by default the run's own vocoder
        (a vocoder run in RUN_DIR/vocoder with a checkpoint) when it has one, else Griffin-Lim.
        `flags`: errors name the command line's flags (--language), not the arguments (language)."""
        global _STARTED_IN
        try:
            _refuse_after_fork()
            loaded = cls._load(run_dir, step, vocoder)
        except XttsError as error:
            raise (error if flags else _in_python_words(error)) from None
        _STARTED_IN = _STARTED_IN or os.getpid()
        loaded.flags = flags
        for note in [] if flags else loaded.notes:  # a vocoder still training, an earlier checkpoint
            warnings.warn(note, XttsNote, stacklevel=2)
        return loaded

    @classmethod
    def _load(cls, run_dir: Path | str, step: Optional[int], vocoder: Optional[Path | str]) -> Synthesizer:
        from xtts_cli.inference.loading import load_run, load_vocoder
        from xtts_cli.run.directory import has_trained
        from xtts_cli.run.files import SPEAKING_RATE_FILE, VOCODER_DIR

        if not isinstance(run_dir, (str, os.PathLike)) or not os.fspath(run_dir).strip():
            raise XttsError(
                f"run_dir {run_dir!r} is no run directory", hint='pass the run\'s folder, e.g. "runs/speak-cpu"'
            )
        run_dir = Path(os.fspath(run_dir))
        if step is not None and (isinstance(step, bool) or not isinstance(step, numbers.Integral)):
            raise TypeError(f"step is the whole number of a checkpoint the run keeps, not {type(step).__name__}")
        if isinstance(vocoder, os.PathLike):  # a Path, a PurePath: read as the path it names
            vocoder = os.fspath(vocoder)
        notes: list[str] = []
        config, tokenizer, model, restored, run = load_run(run_dir, None if step is None else int(step), notes)
        own, named = run.path / VOCODER_DIR, None
        if vocoder is None and own.is_dir() and has_trained(own):
            # One whose checkpoints or config are lost is refused as --vocoder refuses it: it had been
            # passed over for Griffin-Lim, "no trained vocoder yet", and exported so.
            vocoder, named = own, f"the run's own vocoder {own} (used when --vocoder is not given)"
        elif vocoder is None and own.is_dir():  # one still starting, or emptied: said, not passed over
            notes.append(f"{own} holds no trained vocoder yet: Griffin-Lim makes the waveform")
        chosen = load_vocoder(vocoder, config.data, acoustic_run=f"the run {run_dir}", notes=notes, named=named)
        loaded = cls(config, tokenizer, model, restored, run, chosen)
        if loaded._rate is None:  # removed, or a copy that left it out: the window is a rough guess
            notes.append(
                f"{run_dir} has no readable {SPEAKING_RATE_FILE}: how long each sentence may run is a rough guess "
                "per character, not the pace the run measured (a sentence may run on, or be cut short)"
            )
        loaded.notes = notes
        return loaded

    @property
    def sample_rate(self) -> int:
        return self.config.data.sample_rate

    @property
    def languages(self) -> list[str]:
        """The run's languages (espeak-ng codes); the first is the default. A vocabulary from before
        runs recorded them reads its config's one (a server had refused it, listing none)."""
        return list(self.tokenizer.languages) or [self.config.data.language]

    @property
    def speakers(self) -> list[str]:
        """The run's training speakers, for `speaker=` (an older vocabulary's: its speakers.json's)."""
        if self.tokenizer.speakers:
            return list(self.tokenizer.speakers)
        from xtts_cli.run.files import load_speakers

        try:
            return list(load_speakers(self.run_dir))
        except XttsError:  # damaged: the speakers it names are said where one is asked for
            return []

    @_python_words
    def voice(
        self, speaker: Optional[str] = None, speaker_wav: Optional[Path | str] = None, *, remember: bool = True
    ) -> Voice:
        """A training speaker (its centroid), the voice of a clip (`speaker_wav`), or the run's
        reference; kept for the next call unless `remember` is False (a clip seen once: an upload)."""
        if speaker is not None and not isinstance(speaker, str):
            raise TypeError(f"speaker is a name from .speakers, not {type(speaker).__name__}")
        clip = _path(speaker_wav, "speaker_wav", "the path of a clip (WAV, FLAC, OGG, MP3)")
        key: tuple = (speaker, str(clip) if clip is not None else None)
        if clip is not None and clip.is_file():  # a clip written again is another voice
            stat = clip.stat()
            key += (stat.st_mtime_ns, stat.st_size)
        with self._voices_lock:
            if remember and key in self._voices:
                self._voices.move_to_end(key)
                return self._voices[key]
        found = resolve_voice(
            self._root, self.config.data, self.tokenizer, self.model, speaker=speaker, speaker_wav=clip
        )
        vector = np.asarray(speaker_vector(self.model, found, self.config.data))
        voice = dataclasses.replace(found, vector=vector)
        if remember:
            with self._voices_lock:  # threads speaking at once: the cache is read and trimmed by one at a time
                self._voices[key] = voice
                clips = [kept for kept in self._voices if kept[1] is not None]
                for oldest in clips[: max(0, len(clips) - CLIP_VOICES)]:
                    del self._voices[oldest]
        return voice

    @_python_words
    def speak(
        self,
        text: str,
        *,
        speaker: Optional[str] = None,
        speaker_wav: Optional[Path | str] = None,
        language: Optional[str] = None,
        max_frames: Optional[int] = None,
        speed: float = 1.0,
    ) -> Speech:
        """`text` in `language` (default the run's first), in the voice asked, at `speed` (a duration
        decoder's: 1.0 is the pace it learnt, 1.5 half again as fast): a `Speech`. A text of several
        sentences, or one too long for a generation, is spoken part by part and joined."""
        return speak_text(
            self.model,
            self.tokenizer,
            text,
            self.voice(speaker, speaker_wav),
            self.config.data,
            max_frames=max_frames,
            rate=self._rate,
            settings=self.config.synthesis,
            language=language,
            vocoder=self.vocoder,
            speed=speed,
        )

    @_python_words
    def check(self, text: str, *, language: Optional[str] = None, speed: float = 1.0) -> list[str]:
        """Raise the error `speak` would raise for the words of `text` (a script the run does not
        read, a part with nothing left to say), without speaking: what to check before the first
        of many texts, or of a text's parts, is spoken. Returns the notes its speech would carry on
        the text (its language, what is left out), without the voice's."""
        notes = check_text(self.tokenizer, text, self.config.data, self._rate, language=language, speed=speed)
        if speed != 1.0 and not self.model.paced:  # a number by now: check_text refuses what is not a pace
            raise speed_without_pace(speed)
        return notes

    @_python_words
    def speak_parts(
        self,
        text: str,
        *,
        voice: Voice,
        language: Optional[str] = None,
        max_frames: Optional[int] = None,
        speed: float = 1.0,
    ) -> Iterator[Speech]:
        """`speak`'s generations one at a time, each as it is made (sentence by sentence: what a
        server streams), in `voice` (from `voice()`)."""
        if not isinstance(voice, Voice):
            raise TypeError(f"voice is what .voice(speaker=...) returns, not {type(voice).__name__}")
        return speak_parts(
            self.model,
            self.tokenizer,
            text,
            voice,
            self.config.data,
            self._rate,
            max_frames=max_frames,
            settings=self.config.synthesis,
            language=language,
            vocoder=self.vocoder,
            speed=speed,
        )

    def build_graphs(self) -> int:
        """Build the generation graph of every buffer length the run's sentences are spoken in, so
        that no later sentence waits for one (seconds each); returns how many there are."""
        _refuse_after_fork()
        return build_generation_graphs(self.model, self.config.data, self._rate, settings=self.config.synthesis)

    def warm_up(self) -> None:
        """Build what the first sentence would wait for (seconds): the default voice, the generation
        graph of the shortest sentences and the vocoder's, without a sentence (any language, any
        script). `build_graphs` builds the longer sentences' graphs."""
        _refuse_after_fork()
        try:
            vector = self.voice().vector
        except XttsError:  # no default voice (a multi-speaker run without a reference): a silent one
            vector = None
        warm_up(self.model, self.config.data, self.vocoder, vector, self._rate, settings=self.config.synthesis)

    @_python_words
    def speak_many(self, texts: Iterable[str], **options) -> Iterator[Speech]:
        """`speak` for each of `texts`, in order, with the same options; a blank one is passed over,
        as `xtts synthesize --text-file` passes over a blank line, and each `Speech.index` says which
        text it is. Every text is checked before the first is spoken: one that cannot be is refused
        at the call, by its index (`texts[3]: ...`), with no generation spent."""
        if isinstance(texts, str):
            raise TypeError("speak_many takes a list of texts; speak takes one (a str would be read letter by letter)")
        if not isinstance(texts, Iterable):
            raise TypeError(f"speak_many takes a list of texts, not {type(texts).__name__}")
        texts = list(texts)
        unknown = [name for name in options if name not in _SPEAK_OPTIONS]
        if unknown:  # said at the call, as Python says it of speak (it had waited for the first next())
            raise TypeError(f"Synthesizer.speak_many() got an unexpected keyword argument {unknown[0]!r}")
        self.voice(options.get("speaker"), options.get("speaker_wav"))  # an unknown speaker, a clip unread
        # What every text shares, said once and of the argument (not as texts[0]'s): a language the run
        # lacks or of another type, a speed or max_frames out of range, a speed its decoder cannot take.
        speed, _ = check_controls("", options.get("speed", 1.0), options.get("max_frames"), options.get("language"))
        self.tokenizer.language_index(options.get("language"))
        if speed != 1.0 and not self.model.paced:
            raise speed_without_pace(speed)
        self._check_each(texts, options)  # every text before the first is spoken, as --text-file's lines
        return self._speak_each(texts, options)  # refused above at the call, not at the first next()

    def _check_each(self, texts: list, options: dict) -> None:
        """Every text of `speak_many` checked; each bad one named by its index in one error."""
        bad: list[tuple[int, XttsError]] = []
        for index, text in enumerate(texts):
            if isinstance(text, str) and not text.strip():
                continue
            try:
                self.check(text, language=options.get("language"), speed=options.get("speed", 1.0))
            except TypeError as exc:
                raise TypeError(f"texts[{index}]: {exc}") from None
            except XttsError as error:
                bad.append((index, error))
        if bad:
            named = [f"texts[{index}]: {error.lines[0]}" for index, error in bad[:5]]
            named += [f"and {len(bad) - 5} more of its {len(texts)} texts"] if len(bad) > 5 else []
            hints = list(dict.fromkeys(error.hint for _, error in bad if error.hint))
            raise XttsError(*named, hint="; ".join(hints[:2]) if hints else None)

    def _speak_each(self, texts: list, options: dict) -> Iterator[Speech]:
        for index, text in enumerate(texts):
            if isinstance(text, str) and not text.strip():
                continue
            # Not through `speak`'s wrapper: this generator's own warns each Speech's notes, once.
            yield dataclasses.replace(_SPEAK(self, text, **options), index=index)


# What `speak` takes besides its text, which `speak_many` passes to each call.
_SPEAK_OPTIONS = frozenset(inspect.signature(Synthesizer.speak).parameters) - {"self", "text"}
_SPEAK = inspect.unwrap(Synthesizer.speak)
