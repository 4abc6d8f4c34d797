"""What `xtts serve` answers, apart from HTTP: a request checked against the run and the limits,
spoken in turn, whole or part by part.

The run is loaded once (`Synthesizer`). Generations take turns on the service's own generation
threads (`Limits.generations` of them, two by default): TensorFlow spreads one generation over the
cores, but not all the time (1.4 of 2 busy, most of it Griffin-Lim's FFTs), and a second one fills
the gaps: about a third more sentences a minute than one at a time on 2 cores (docs/serve.md). The
request threads (one per connection) only hand a request over and send what comes back, so the
model's allocations come from those few threads, not from every connection's. Requests past
`Limits.waiting` are refused at once (503) rather than left to time out.
"""

from __future__ import annotations

import difflib
import errno
import math
import queue
import re
import struct
import tempfile
import threading
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from xtts_cli.errors import SPEEDS, XttsError, listed_name

__all__ = ["AUDIO_MAGIC", "Limits", "Refused", "SpeechRequest", "VoiceService", "streaming_wav_header"]

# A sample the run wrote while it trained: samples/step0000500-0-<voice>.wav (speech/samples.py).
SAMPLE_NAME = re.compile(r"^step(\d+)-(\d+)(-[^/\\]*)?\.wav$")
# The first bytes of what the reference upload may be: WAV, FLAC, Ogg, MP3 (a tag or a frame).
AUDIO_MAGIC = (b"RIFF", b"fLaC", b"OggS", b"ID3", b"\xff\xfb", b"\xff\xf3", b"\xff\xf2")


# A note or an error names a flag where the command line gave the value; to a client, the request's field.
_API_WORDS = (
    (re.compile(r"pass --language (\S+)"), r"send language_id=\1"),
    (re.compile(r"(?:pass )?--speaker-wav FILE"), "upload a speaker_wav clip"),
    (re.compile(r"(?:pass )?--speaker NAME"), "send speaker_id=NAME"),
    (re.compile(r"--language\b"), "language_id"),
    (re.compile(r"--speaker-wav\b"), "speaker_wav"),
    (re.compile(r"--speaker\b"), "speaker_id"),
    (re.compile(r"--speed\b"), "speed"),
)


def in_api_words(text: str) -> str:
    """`text` (a note, an error) with the command line's flags as a request's fields."""
    from xtts_cli.inference.api import reworded

    return reworded(text, _API_WORDS)


def _any_case(name: str, listed: list[str]) -> str:
    """The listed speaker `name` is in another case (EN-GB for en-gb, as language_id is read), where
    exactly one is; else `name` as it was."""
    if name in listed:
        return name
    matches = [known for known in listed if known.casefold() == name.casefold()]
    return matches[0] if len(matches) == 1 else name


class Refused(Exception):
    """A request the server answers with `status` and a one-line JSON error; it keeps serving."""

    def __init__(
        self, status: int, message: str, hint: Optional[str] = None, *, retry_after: int = 0, log: str = ""
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.hint = status, message, hint
        self.retry_after = retry_after  # seconds a client should wait before sending it again (a 503's)
        self.log = log  # a line for the server's log: what its operator must change (a client is not told)


@dataclass(frozen=True)
class Limits:
    text_chars: int = 2000  # a few paragraphs; `synthesize --text-file` is for books
    upload_bytes: int = 10 * 1024 * 1024  # a minute of 44.1 kHz stereo WAV
    generations: int = 2  # `xtts serve --generations`
    waiting: int = 32


@dataclass
class SpeechRequest:
    """A checked request: what to say, in which voice and language, at what pace."""

    text: str
    speaker: Optional[str] = None
    language: Optional[str] = None
    speed: float = 1.0
    reference: Optional[bytes] = None  # an uploaded clip to clone
    stream: bool = False
    notes: list[str] = field(default_factory=list)


# What /api/tts reads (coqui tts-server's names, and ours); `stream`'s words for yes and no.
PARAMETERS = ("text", "speaker_id", "language_id", "speed", "stream", "speaker_wav", "style_wav")
_YES, _NO = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


def _unread(fields: dict[str, str]) -> list[str]:
    """The names of `fields` /api/tts does not read. One that looks meant for a parameter (`speaker`, the
    command line's name; `speakr_id`; `speaker-id` in a query) is refused: it had been passed over, and
    the text spoken in the default voice with a 200. Another (a client's cache-buster) is returned."""
    unread = [name for name in fields if name not in PARAMETERS]
    for name in unread:
        meant = difflib.get_close_matches(name.lower().replace("-", "_"), PARAMETERS, n=1, cutoff=0.7)
        if meant:
            raise Refused(
                400,
                f"{name[:40]} is no parameter of /api/tts: did you mean {meant[0]}? It reads {', '.join(PARAMETERS)}",
            )
    return unread


def streaming_wav_header(sample_rate: int) -> bytes:
    """A 16-bit mono WAV header whose sizes say "until the stream ends" (0xFFFFFFFF, as streaming
    servers write it): the length of a streamed text is not known when its first sentence is sent."""
    unknown = 0xFFFFFFFF
    return (
        b"RIFF"
        + struct.pack("<I", unknown)
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, sample_rate, sample_rate * 2, 2, 16)
        + b"data"
        + struct.pack("<I", unknown)
    )


class VoiceService:
    def __init__(self, synthesizer: Any, limits: Limits = Limits(), *, step_asked: Optional[int] = None) -> None:
        # The checkpoint `serve --step` chose: a newer one is then no reason to restart.
        self.synthesizer, self.limits, self.step_asked = synthesizer, limits, step_asked
        self._turns = ThreadPoolExecutor(max_workers=limits.generations, thread_name_prefix="xtts-generation")
        self._admitted = threading.BoundedSemaphore(limits.generations + limits.waiting)
        # The requests admitted and not yet answered whole, which a stopping server waits for.
        self._flight = threading.Condition()
        self.in_flight = 0
        self.stopping = False
        # The generation graphs of every buffer length (`warm_up`), as /health reports them.
        self.graphs = "built on first use"

    # What the page and clients list.
    def health(self) -> dict:
        s = self.synthesizer
        return {
            "status": "ok",
            "run": str(s.run_dir),
            "step": s.step,
            # The run's newest checkpoint now: a run still training moves past the step served.
            "latest_step": self.latest_step(),
            "step_asked": self.step_asked,
            "vocoder": s.vocoder.name,
            "vocoder_step": s.vocoder.step,  # a vocoder stopped after a step or two sounds like noise: seen
            "graphs": self.graphs,
            "speed": bool(s.model.paced),  # its decoder takes `speed` (a duration decoder's pace)
            "speeds": list(SPEEDS),  # the paces a request may ask for: the page's slider spans them
            "text_chars": self.limits.text_chars,  # the most a text may hold: the page counts toward it
            "notes": self.load_notes + self._run_gone(),  # what loading said of every answer's sound
        }

    def _run_gone(self) -> list[str]:
        """A note while the run directory served is gone: it had gone on saying "ok" and its latest
        step, and only the samples it listed went quiet."""
        run = Path(self.synthesizer.run_dir)
        if run.is_dir():
            return []
        return [
            f"{run} is gone: this server speaks with the model it loaded, its samples are gone, and a restart "
            "cannot load it"
        ]

    @property
    def load_notes(self) -> list[str]:
        """What loading the run said (a vocoder stopped early, an earlier checkpoint speaking): of
        every answer, so each carries them, as `synthesize --json` does (the server's log alone had)."""
        return [in_api_words(note) for note in self.synthesizer.notes]

    def latest_step(self) -> int:
        from xtts_cli.run.files import RunDir

        s = self.synthesizer
        kept = RunDir.of(Path(s.run_dir), s.config).complete_checkpoints()
        return max(s.step, int(Path(kept[0]).name[5:])) if kept else s.step

    def speakers(self) -> list[str]:
        return self.synthesizer.speakers

    def languages(self) -> list[str]:
        return self.synthesizer.languages

    @property
    def samples(self) -> dict[str, Path]:
        """The run's training samples by file name (only these are ever served: no path a client
        sends reaches the disk), read at each ask: a run still training writes more (they had been
        listed as they were when the server started, and a newer one was a 404)."""
        folder = Path(self.synthesizer.run_dir) / "samples"
        found = sorted(folder.glob("step*.wav")) if folder.is_dir() else []
        return {path.name: path for path in found if SAMPLE_NAME.match(path.name)}

    def sample_list(self) -> list[dict]:
        """Each sample: its step, the index of its sentence and that sentence's `text` (as the run
        recorded it; for a run that kept none, the config's training.test_sentences, else empty)."""
        from xtts_cli.run.files import load_sample_texts
        from xtts_cli.speech.samples import voice_labels

        listed = []
        recorded = load_sample_texts(Path(self.synthesizer.run_dir) / "samples")
        written = self.synthesizer.config.training.test_sentences
        # A file name holds a voice's name with "_" for what a name may not ("en-gb+m3": "en-gb_m3"):
        # listed by the name /api/speakers gives, the one a request's speaker_id takes.
        speakers = self.speakers()
        named = {label.lstrip("-"): speaker for speaker, label in zip(speakers, voice_labels(speakers))}
        for name in self.samples:
            match = SAMPLE_NAME.match(name)
            assert match is not None
            label = (match.group(3) or "").lstrip("-")
            voice = named.get(label, label)
            index = int(match.group(2))
            text = recorded.get(name, written[index] if index < len(written) else "")
            listed.append({"step": int(match.group(1)), "sentence": index, "text": text, "voice": voice, "name": name})
        return sorted(listed, key=lambda item: (item["step"], item["sentence"], item["voice"]))

    # Checking a request.
    def _fitting(self, text: str, language: Optional[str]) -> str:
        """The hint of a text too long as it reads aloud: how much of its start, cut at a space, fits
        (found by halving; a share by length had named a part that was still too long)."""
        words, limit = text.split(" "), self.limits.text_chars
        low, high = 0, len(words)
        while low < high:
            middle = (low + high + 1) // 2
            fits = len(self.synthesizer.tokenizer.reading(" ".join(words[:middle]), language)) <= limit
            low, high = (middle, high) if fits else (low, middle - 1)
        if not low:
            # "Send it on its own" had been the hint for a word that is too long on its own as well.
            first = words[0] if len(words[0]) <= 20 else words[0][:20] + "..."
            return f"its first word ({first!r}) alone reads past {limit} characters: split it, or leave it out"
        return f"its first {len(' '.join(words[:low]))} characters fit ({' '.join(words[:low])[-40:]!r} ends them)"

    def _language(self, asked: str) -> Optional[str]:
        """The run's language a request's `language_id` names ("EN" and " en " are its "en", as
        synthesize --language reads them); None for none."""
        language = asked.strip().lower() or None
        if language is not None and language not in self.languages():
            # en-US on a run of en: the run's code of that language, as synthesize --language hints it
            primary = language.replace("_", "-").split("-")[0]
            near = next((known for known in self.languages() if known.split("-")[0] == primary), None)
            raise Refused(
                400,
                f"language_id {asked!r} is not one of this run's languages: {', '.join(self.languages())}",
                f"send language_id={near}" if near else None,
            )
        return language

    def check(self, fields: dict[str, str], reference: Optional[bytes] = None) -> SpeechRequest:
        """`fields`: the request's parameters by coqui tts-server's names (`text`, `speaker_id`,
        `language_id`, `speed`; `stream`); `reference`: an uploaded clip."""
        unread = _unread(fields)
        # coqui's page and clients send style_wav= empty with every request: only a value names a file.
        if fields.get("style_wav") or fields.get("speaker_wav"):
            name = "style_wav" if fields.get("style_wav") else "speaker_wav"
            raise Refused(
                400, f"{name} names a file on the server; upload the clip itself as the speaker_wav file field"
            )
        text = fields.get("text", "")
        if not text.strip():
            raise Refused(400, "text is empty; pass the text to speak as text=")
        if len(text) > self.limits.text_chars:
            raise Refused(
                413,
                f"text is {len(text)} characters, more than this server's {self.limits.text_chars}; send it in parts",
            )
        speaker = (fields.get("speaker_id") or "").strip() or None
        speaker = _any_case(listed_name(speaker, self.speakers()) or speaker, self.speakers()) if speaker else None
        if speaker is not None and speaker not in self.speakers():
            # A "+" written into a URL's query arrives as a space: espeak-ng's voices have one.
            plus = _any_case(speaker.replace(" ", "+"), self.speakers())
            listed = ", ".join(self.speakers()) or "it lists none (leave speaker_id out, or upload a speaker_wav)"
            raise Refused(
                400,
                f"speaker_id {speaker!r} is not one of this run's speakers: {listed}",
                f"a + in a URL's query is a space: write {plus} as {plus.replace('+', '%2B')}"
                if plus != speaker and plus in self.speakers()
                else None,
            )
        if speaker is not None and reference is not None:
            raise Refused(400, "speaker_id and a speaker_wav upload both name a voice; send one of them")
        language = self._language(fields.get("language_id", ""))
        raw_speed = fields.get("speed") or "1"
        try:
            speed = float(raw_speed) if "_" not in raw_speed else math.nan  # 1_0 is Python's ten, no client's
        except ValueError:
            speed = math.nan
        if math.isnan(speed):
            raise Refused(400, f"speed {raw_speed[:20]!r} is not a number; e.g. speed=1.2")
        if not SPEEDS[0] <= speed <= SPEEDS[1]:
            raise Refused(
                400, f"speed {speed:.12g} is outside {SPEEDS[0]:g}-{SPEEDS[1]:g}; 1 is the pace the run learnt"
            )
        if reference is not None:
            if not reference:
                raise Refused(400, "the speaker_wav upload is empty; upload a clip of the voice to clone")
            if not reference.startswith(AUDIO_MAGIC):
                raise Refused(415, "the speaker_wav upload is not WAV, FLAC, Ogg or MP3 audio")
        try:  # every sentence, before the first is streamed under a 200
            notes = [in_api_words(note) for note in self.synthesizer.check(text, language=language)]
        except XttsError as error:
            raise Refused(400, in_api_words(error.lines[0]), error.hint and in_api_words(error.hint)) from None
        # The work is the text read aloud: 2,000 characters of digits had read as 21,279, eight minutes.
        aloud = len(self.synthesizer.tokenizer.reading(text, language))
        if aloud > self.limits.text_chars:
            raise Refused(
                413,
                f"text reads aloud as {aloud} characters (its numbers, symbols and abbreviations in words), more "
                f"than this server's {self.limits.text_chars}; send it in parts",
                self._fitting(text, language),
            )
        stream = fields.get("stream", "").lower()
        if stream not in _YES + _NO:
            raise Refused(
                400, f"stream {stream[:20]!r} is neither yes nor no; stream=1 streams the answer, stream=0 not"
            )
        if unread:  # said, as a client's own misspelling would be looked for there
            notes.append(f"not read: {', '.join(name[:40] for name in unread[:5])} (it reads {', '.join(PARAMETERS)})")
        notes += [note for note in self.load_notes if note not in notes]
        return SpeechRequest(text, speaker, language, speed, reference, stream in _YES, notes)

    # Speaking.
    def admit(self) -> bool:
        """Take a place in the queue (False: it is full); `release` gives it back."""
        if self.stopping:
            raise Refused(503, "the server is stopping; send it again once it is back")
        if not self._admitted.acquire(blocking=False):
            return False
        with self._flight:
            self.in_flight += 1
        return True

    def release(self) -> None:
        with self._flight:
            self.in_flight -= 1
            self._flight.notify_all()
        self._admitted.release()

    def finish(self, timeout: float) -> bool:
        """Admit no more; wait up to `timeout` s for the requests in flight. True once none is left."""
        self.stopping = True
        with self._flight:
            return self._flight.wait_for(lambda: self.in_flight == 0, timeout)

    def speak(self, request: SpeechRequest, gone: Callable[[], bool] = lambda: False) -> tuple[bytes, list[str]]:
        """The whole text as one WAV, and the notes on what was left out. Once `gone()` (its client
        closed the connection), it stops at its next sentence with a ConnectionError: the turn it
        holds goes to a request someone still waits for."""
        return self._turns.submit(self._speak_now, request, gone).result()

    def _speak_now(self, request: SpeechRequest, gone: Callable[[], bool]) -> tuple[bytes, list[str]]:
        from xtts_cli.speech.synthesis import joined, wav_bytes  # TensorFlow: `xtts serve` binds its port first

        parts: list = []
        if gone():  # it left while the request waited for its turn
            raise ConnectionError("the client closed the connection before its turn came")
        with self._voice(request) as voice:
            for part in self.synthesizer.speak_parts(
                request.text, voice=voice, language=request.language, speed=request.speed
            ):
                if gone():
                    raise ConnectionError("the client closed the connection before its answer was made")
                parts.append(part)
        speech = parts[0] if len(parts) == 1 else joined(parts, request.text)
        notes = [in_api_words(note) for note in speech.notes]
        notes += [note for note in request.notes if note not in notes]  # the request's own (a field not read)
        return wav_bytes(speech.waveform, self.synthesizer.sample_rate), notes

    def stream(self, request: SpeechRequest) -> Generator[bytes, None, None]:
        """A streaming WAV: its header, then each part's samples as soon as it is made, a pause
        between two. The request holds its turn until its last part, or until its client is gone.
        Once the first part is made, `request.notes` holds every note of the whole (the text's, from
        `check`, and the voice's): what the stream's headers say before it plays."""
        from xtts_cli.speech.synthesis import SENTENCE_PAUSE_SECONDS, pcm16

        rate = self.synthesizer.sample_rate
        yield streaming_wav_header(rate)
        pause = bytes(2 * int(SENTENCE_PAUSE_SECONDS * rate))
        made: queue.Queue = queue.Queue()
        gone = threading.Event()
        self._turns.submit(self._stream_now, request, made, gone)
        try:
            index = 0
            while (item := made.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                voice_note = in_api_words(item.voice_note) if item.voice_note else ""
                if voice_note and voice_note not in request.notes:
                    request.notes.append(voice_note)
                yield (pause if index else b"") + pcm16(item.waveform)
                index += 1
        finally:
            gone.set()

    def _stream_now(self, request: SpeechRequest, made: queue.Queue, gone: threading.Event) -> None:
        """`stream`'s generations, on the generation thread: each part into `made` as it is made,
        then None; an error in its place; nothing more once the client is `gone`."""
        try:
            with self._voice(request) as voice:
                parts = self.synthesizer.speak_parts(
                    request.text, voice=voice, language=request.language, speed=request.speed
                )
                for speech in parts:
                    if gone.is_set():
                        break
                    made.put(speech)
        except Exception as exc:  # handed to the request's thread, which answers it
            made.put(exc)
        finally:
            made.put(None)

    def warm_up(self) -> threading.Thread:
        """Build the generation graph of every buffer length (`Synthesizer.build_graphs`) on a
        thread of its own while the server answers (/health says `"graphs": "building"`, then
        `"ready"`). Until a length's graph is built, the first request of that length waits for it
        (2.3-4.0 s each for tiny-cpu on 2 cores, measured)."""

        def build() -> None:
            try:
                self.synthesizer.build_graphs()
            except BaseException:  # a request builds the graph it needs; the error is printed
                self.graphs = "built on first use"
                raise
            self.graphs = "ready"

        self.graphs = "building"
        thread = threading.Thread(target=build, name="xtts-warm-up", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        """Let the generation thread go once what it holds is done. A request still coming on a
        connection kept alive is told the server is stopping (it had been a 500, a RuntimeError of the
        closed executor)."""
        self.stopping = True
        self._turns.shutdown(wait=False, cancel_futures=True)

    def _voice(self, request: SpeechRequest):
        return _VoiceOf(self.synthesizer, request)


class _VoiceOf:
    """The voice a request asks for, as a context: an upload is written to a private temporary
    file for the decoder that reads it, and removed after."""

    def __init__(self, synthesizer: Any, request: SpeechRequest) -> None:
        self.synthesizer, self.request = synthesizer, request
        self._scratch: Optional[tempfile.TemporaryDirectory] = None

    def __enter__(self):
        request = self.request
        if request.reference is None:
            try:
                return self.synthesizer.voice(request.speaker)
            except XttsError as exc:  # the hint in a client's words, not the command line's flags
                if request.speaker is not None or "speaker_reference.npy" not in exc.lines[0]:
                    raise
                raise Refused(
                    400,
                    "this run has no voice of its own to speak in (no speaker_reference.npy)",
                    "send speaker_id= (/api/speakers lists them) or a speaker_wav upload to clone",
                ) from None
        try:
            self._scratch = tempfile.TemporaryDirectory(prefix="xtts-serve-")
            clip = Path(self._scratch.name) / "reference"
            clip.write_bytes(request.reference)
        except OSError as exc:  # the server's, not the client's: said with what to change (it had been a bare 500)
            if self._scratch is not None:
                self._scratch.cleanup()
            raise Refused(
                507 if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)) else 500,
                f"the server cannot keep the upload ({exc.strerror or exc})",
                "retry later; the server's log names the folder",
                log=f"xtts serve: an upload cannot be written to {tempfile.gettempdir()} ({exc.strerror or exc}): "
                "free space there, or start the server with TMPDIR set to a folder with room",
            ) from None
        from xtts_cli.speech.synthesis import UnusableClipError
        from xtts_cli.speech.vocoding import ClipReadError

        try:
            return self.synthesizer.voice(speaker_wav=clip, remember=False)
        except (
            UnusableClipError
        ) as exc:  # with its hint, as synthesize says it (the cut to make, in the client's words)
            self._scratch.cleanup()
            raise Refused(400, f"the speaker_wav upload {exc.why}", exc.hint and in_api_words(exc.hint)) from None
        except ClipReadError as exc:  # its own words, not the scratch file's path
            self._scratch.cleanup()
            raise Refused(415, f"the speaker_wav upload {exc.why}") from None
        except XttsError as exc:
            self._scratch.cleanup()
            raise Refused(415, f"the speaker_wav upload cannot be read as audio ({exc.lines[0][:120]})") from None

    def __exit__(self, *exc_info) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()
