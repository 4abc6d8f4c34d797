"""`xtts synthesize`: speak a sentence with a trained run."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Optional, TextIO

import typer

from xtts_cli.cli.options import (
    CheckpointAlias,
    JsonOption,
    RunDirOption,
    StepOption,
    VerboseOption,
    VocoderOption,
    files_can_go,
    keeps_the_inputs,
    run_dir_given,
    say_written_over,
    wav_out,
)
from xtts_cli.errors import SPEEDS, XttsError

# synthesize's own arguments, in the order its help lists them.
TextArgument = Annotated[
    Optional[str],
    typer.Argument(
        metavar="TEXT",
        help="The text to speak, of any length; - reads it from stdin (or --text-file).",
        show_default=False,
    ),
]
OutOption = Annotated[
    Optional[Path],
    typer.Option(
        "--out",
        "-o",
        metavar="FILE",
        help="WAV file to write (speech.wav); - writes it to stdout (a pipe, not a terminal).",
    ),
]
TextFileOption = Annotated[
    Optional[Path],
    typer.Option(
        "--text-file",
        metavar="FILE",
        help="Speak every non-empty line of FILE (UTF-8), loading the run once: into one WAV (--out), or a clip a line "
        "(--out-dir).",
        show_default=False,
    ),
]
OutDirOption = Annotated[
    Optional[Path],
    typer.Option(
        "--out-dir",
        metavar="DIR",
        help="Where --text-file's clips go: 0001.wav, 0002.wav, ... (line numbers) and index.jsonl.",
        show_default=False,
    ),
]
SpeakerWavOption = Annotated[
    Optional[Path],
    typer.Option(
        "--speaker-wav",
        metavar="FILE",
        help="Reference audio of the voice to use. Default: the run's reference clip.",
        show_default=False,
    ),
]
SpeakerOption = Annotated[
    Optional[str],
    typer.Option(
        "--speaker",
        metavar="NAME",
        help="A speaker of the run's training data (--list-speakers lists them): its conditioning "
        "averaged over its clips, kept in the checkpoint.",
        show_default=False,
    ),
]
LanguageOption = Annotated[
    Optional[str],
    typer.Option(
        "--language",
        metavar="CODE",
        help="Language of the text, one the run trained on (an espeak-ng code: en, fa, ...). Default: the run's first.",
        show_default=False,
    ),
]
MaxFramesOption = Annotated[
    Optional[int],
    typer.Option(
        "--max-frames",
        min=2,
        metavar="N",
        help="Upper bound on each sentence's generated mel frames (under the speaking rate's window).",
        show_default=False,
    ),
]


def _a_pace(value: float) -> float:
    if value != value:  # NaN: every comparison with it is false, so it passes the range check
        raise typer.BadParameter("nan is not a pace; 1 is the pace the run learnt")
    return value


SpeedOption = Annotated[
    float,
    typer.Option(
        "--speed",
        min=SPEEDS[0],
        max=SPEEDS[1],
        callback=_a_pace,
        metavar="X",
        help="Reading pace: 1 is the pace the run learnt, 1.5 half again as fast, 0.8 slower (duration decoder).",
    ),
]
ListSpeakersOption = Annotated[
    bool, typer.Option("--list-speakers", help="Print the run's speakers (--speaker NAME) and exit.")
]
ListLanguagesOption = Annotated[
    bool, typer.Option("--list-languages", help="Print the run's languages (--language CODE) and exit.")
]


_LIST_EXAMPLE = "xtts synthesize -r runs/voices-cpu --list-speakers"


def synthesize(
    text: TextArgument = None,
    run_dir: RunDirOption = None,
    out: OutOption = None,
    text_file: TextFileOption = None,
    out_dir: OutDirOption = None,
    speaker_wav: SpeakerWavOption = None,
    speaker: SpeakerOption = None,
    language: LanguageOption = None,
    max_frames: MaxFramesOption = None,
    vocoder: VocoderOption = None,
    step: StepOption = None,
    speed: SpeedOption = 1.0,
    list_speakers: ListSpeakersOption = False,
    list_languages: ListLanguagesOption = False,
    json_output: JsonOption = False,
    verbose: VerboseOption = False,
    checkpoint: CheckpointAlias = None,
) -> None:
    """Generate speech with a trained model (mel frames, then a vocoder run or Griffin-Lim), on the CPU or a GPU.

    Reports how long the clip is, what ended it (the stop token or, with `model.decoder:
    duration`, the predicted durations; the length limit when neither did) and the alignment
    score of the generation: the focus rate of its cross-attention, near 1 when each step reads
    one place in the text, near 0 when the model has not learnt to align (none with the duration
    decoder, whose alignment is its durations: null in --json).

    Examples:

        xtts synthesize "The cat sat on the mat." -r runs/tiny-cpu -o hello.wav

        xtts synthesize "سلام" -r runs/voices --language fa --speaker-wav clip.wav

        xtts synthesize --text-file lines.txt --out-dir clips/ -r runs/speak-cpu --vocoder runs/vocoder-cpu
    """
    if list_speakers or list_languages:
        _say_not_spoken(TEXT=text, **{"--text-file": text_file, "--out": out, "--out-dir": out_dir})
        run = run_dir_given(run_dir, checkpoint, to="list", example=_LIST_EXAMPLE, speaks=False)
        return _list(run, speakers=list_speakers, languages=list_languages, json_output=json_output)
    text = _utf8(_read_stdin(), "the text on stdin") if text == "-" else text
    out = _check_arguments(text, text_file, out_dir, speaker, speaker_wav, out=out, json_output=json_output)
    run_dir = run_dir_given(
        run_dir, checkpoint, to="speak with", example='xtts synthesize "Hello." -r runs/tiny-cpu', vocoder=vocoder
    )
    _check_before_loading(run_dir, speed, speaker, language, text=None if text_file else text, clip=speaker_wav)
    lines = _read_lines(text_file) if text_file is not None else []
    outputs = _clip_paths(lines, out_dir) + [out_dir / "index.jsonl"] if out_dir is not None else [out]
    keeps_the_inputs(
        {speaker_wav: "the --speaker-wav clip", text_file: "the --text-file"},
        outputs,
        "--out-dir" if out_dir is not None else "--out",
        "the speech",
    )
    if out_dir is not None:
        files_can_go(out_dir, [path.name for path in outputs])
    from xtts_cli.cli.output import Phases
    from xtts_cli.inference import Synthesizer

    voice_options: dict[str, Any] = dict(speaker=speaker, speaker_wav=speaker_wav, language=language, speed=speed)
    with Phases(enabled=not json_output) as phase, _unwritten_if_stopped(out if out_dir is None else None):
        phase(
            f"loading {run_dir} (TensorFlow, the model and {'its latest' if step is None else f'step {step}'} checkpoint)"
        )
        tts = Synthesizer.load(run_dir, step=step, vocoder=vocoder, flags=True)
        tts.tokenizer.language_index(language)  # before any audio is read: an error naming the run's languages
        voice = tts.voice(speaker, speaker_wav)
        _check_lines(tts, lines, language)  # a --text-file's, before "speaking" is said: a bad line 5 had followed it
        phase("speaking (the first sentence of a process also builds the generation graph)")
        if text_file is not None and out_dir is None:
            speech = _speak_file(tts, lines, max_frames=max_frames, **voice_options)
        elif text_file is None:
            assert text is not None
            speech = tts.speak(text, max_frames=max_frames, **voice_options)
    for note in tts.notes:  # an unreadable latest checkpoint: which one speaks instead
        sys.stderr.write(f"note: {note}\n")
    if out_dir is not None:
        _speak_lines(tts, lines, out_dir, json_output, max_frames=max_frames, **voice_options)
        return
    named = "centroid" if voice.speaker is not None else ("clip" if speaker or speaker_wav else "reference")
    _write_speech(tts, speech, out, json_output=json_output, speaker=speaker, language=language, voice=named)


@contextmanager
def _unwritten_if_stopped(out: Optional[Path]) -> Iterator[None]:
    """A Ctrl-C before the clip is written says that none was, and that a file there is as it was
    (it had said "interrupted (Ctrl-C)" alone)."""
    try:
        yield
    except KeyboardInterrupt:
        if out is None:
            raise
        if str(out) == "-":
            raise KeyboardInterrupt("nothing written to standard output") from None
        kept = f"; the {out} there is as it was" if out.is_file() else ""
        raise KeyboardInterrupt(f"nothing written to {out}{kept}" if not kept else f"nothing written{kept}") from None


def _check_before_loading(
    run_dir: Path,
    speed: float,
    speaker: Optional[str],
    language: Optional[str],
    *,
    text: Optional[str] = None,
    clip: Optional[Path] = None,
) -> None:
    """What the run's files alone can refuse, before TensorFlow and the checkpoint load (seconds):
    `--speed` for a decoder without durations to scale, a `--speaker` or `--language` it lacks, a
    `text` with letters it cannot read, a `--speaker-wav` that names stdin or a URL."""
    from xtts_cli.data.audio_headers import not_a_clip_file
    from xtts_cli.data.text import Tokenizer, reading_language, refuse_unread_script, without_markup
    from xtts_cli.errors import XttsError, listed_name, speed_without_pace, unknown_speaker
    from xtts_cli.kinds import kind_for
    from xtts_cli.run.files import load_speakers, read_run

    named = not_a_clip_file(str(clip)) if clip is not None else ""
    if named:  # before the model's load: it had cost its seconds first
        raise XttsError(f"--speaker-wav {str(clip)!r} {named}", hint="pass the clip's file: a WAV, FLAC, OGG or MP3")
    config, run = read_run(run_dir)
    kind = kind_for(config)
    if speed != 1.0 and kind.speaks and not kind.paced:
        raise speed_without_pace(speed)
    if not run.vocab.is_file():
        return  # not an acoustic run: loading it says so
    vocabulary = Tokenizer.load(run.vocab)
    vocabulary.language_index(language)
    listed = list(vocabulary.speakers) or list(load_speakers(run.path))
    if speaker is not None and listed and listed_name(speaker, listed) is None:
        raise unknown_speaker(speaker, listed, run_dir)
    if text is not None:
        text = without_markup(text)[0]  # left out, as the synthesis leaves it out
        if vocabulary.frontend == "phonemes":
            refuse_unread_script(vocabulary.languages, text, language)
        vocabulary.spoken_ids(text, reading_language(vocabulary.languages, text, language)[0])


def _write_speech(tts, speech, out: Path, *, json_output: bool, speaker, language, voice: str) -> None:
    """One sentence's clip to `out` (or, as `-`, alone on stdout for a pipe), its notes on stderr,
    and what it is (`_report`) as JSON or as text."""
    for note in speech.notes:
        sys.stderr.write(f"note: {note}\n")
    if str(out) == "-":  # for a pipe: the WAV alone on stdout
        from xtts_cli.speech.synthesis import wav_bytes

        try:
            sys.stdout.buffer.write(wav_bytes(speech.waveform, speech.sample_rate))
            sys.stdout.buffer.flush()
        except OSError as exc:  # click's own handling had ended it, exit 1, without a word
            from xtts_cli.cli.output import stream_gone

            if not stream_gone(exc):
                raise
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())  # its unwritten bytes go nowhere as the process exits
            os.close(null)
            raise XttsError(
                "--out -: the pipe's reader exited before the WAV was written",
                hint="see what the command after | said; or pass --out speech.wav",
            ) from None
    else:
        if out.is_file():  # said, as --out-dir says the clips it writes over
            sys.stderr.write(f"note: {out} is written over\n")
        speech.save(out)
    report = _report(tts, speech, out, speaker=speaker, language=language, voice=voice)
    if json_output:
        from xtts_cli.cli.output import print_json

        print_json(report)
        return
    _render(speech, report, sys.stderr if str(out) == "-" else sys.stdout)  # the WAV alone on a piped stdout


def _say_not_spoken(**given: Any) -> None:
    """A note naming what a listing leaves aside: it lists and exits (a text and --out had been
    passed over in silence, the file never written)."""
    aside = [name for name, value in given.items() if value is not None]
    if aside:
        names = " and ".join([", ".join(aside[:-1]), aside[-1]] if len(aside) > 1 else aside)
        sys.stderr.write(f"note: a listing exits without speaking: {names} left aside\n")


def _list(run_dir: Path, *, speakers: bool, languages: bool, json_output: bool) -> None:
    """The run's speakers (with their minutes where speakers.json has them) and languages, read
    from its vocabulary alone: no TensorFlow."""
    from xtts_cli.data.text import Tokenizer
    from xtts_cli.kinds import speaking_run
    from xtts_cli.run.files import load_speakers, no_vocabulary

    config, run = speaking_run(run_dir)
    if not run.vocab.is_file():
        raise no_vocabulary(
            run_dir, f"{run_dir} has no vocab.json: it is not an acoustic run", "pass the run that speaks"
        )
    from xtts_cli.errors import XttsError

    vocabulary = Tokenizer.load(run.vocab)
    try:
        details = load_speakers(run.path)  # each speaker's minutes: the names are the vocabulary's
    except XttsError as error:
        sys.stderr.write(f"note: {error.lines[0]}; the speakers are listed without their minutes\n")
        details = {}
    listing: dict[str, Any] = {}
    names = list(vocabulary.speakers) or list(details)  # an older vocabulary: its speakers.json's, as --speaker reads
    if speakers:
        listing["speakers"] = [{"name": name, "minutes": details.get(name, {}).get("minutes")} for name in names]
    if languages:  # a vocabulary from before runs recorded languages: the one its config reads
        listing["languages"] = list(vocabulary.languages) or [config.data.language]
    if speakers and not names:  # an empty list and exit 0 had said nothing
        sys.stderr.write(
            f"note: {run_dir} lists no speakers (a run from before they were kept): clone a voice with "
            "--speaker-wav FILE, or leave --speaker out for the run's own\n"
        )
    if json_output:
        from xtts_cli.cli.output import print_json

        print_json(listing)
        return
    both = speakers and languages  # each list under a heading: a language is not read as one more speaker
    if both:
        sys.stdout.write(f"speakers ({len(listing['speakers'])}):\n")
    for entry in listing.get("speakers", []):
        minutes = _minutes_said(run, entry["name"], entry["minutes"])
        sys.stdout.write(f"{'  ' if both else ''}{entry['name']}{minutes}\n")
    if both:
        sys.stdout.write(f"languages ({len(listing['languages'])}):\n")
    for code in listing.get("languages", []):
        sys.stdout.write(f"{'  ' if both else ''}{code}\n")


def _minutes_said(run, name: str, minutes: Optional[float]) -> str:
    """A speaker's minutes in this run, and the run it was first learnt in: a voice a base trained that this
    run's data goes on training had been listed with this run's minutes alone."""
    learnt = _learnt_in(run, name)
    if minutes is None:
        return learnt
    return f"  {minutes:.1f} min" + (learnt.replace("  (learnt in ", " here (first learnt in ") if learnt else "")


def _learnt_in(run, name: str) -> str:
    """ "  (learnt in RUN, ...)": the run up the chain of `--init-from` parents whose own data held
    the speaker `name` (a run adapted from an adapted run names the first, not its parent)."""
    from xtts_cli.run.files import RunDir, load_speakers

    parent = (run.read_run() or {}).get("parent")
    for _ in range(32):  # a chain of runs, each started from the one before
        if not parent:
            return ""
        path = Path(parent["run"])
        if name in load_speakers(path):
            return f"  (learnt in {path}, a run this one started from)"
        parent = (RunDir(path).read_run() or {}).get("parent")
    return ""


def _check_arguments(text, text_file, out_dir, speaker, speaker_wav, *, out: Optional[Path], json_output: bool) -> Path:
    """The text comes from TEXT or --text-file (with --out-dir), the voice from one flag at most,
    stdout carries either the WAV (--out -) or the JSON report, and the output can be written.
    Returns --out, speech.wav when it is not given."""
    from xtts_cli.errors import XttsError

    if out is not None and out_dir is not None:  # else one of them would be passed over without a word
        raise XttsError(
            f"--out {out} and --out-dir {out_dir} both say where the speech goes",
            hint="pass --out FILE for the whole file as one WAV, or --out-dir DIR for a WAV a line",
        )
    out = Path("speech.wav") if out is None else out
    if text_file is not None:
        if text is not None:
            raise XttsError("both TEXT and --text-file give the text", hint="pass one of them")
    elif out_dir is not None:
        raise XttsError("--out-dir is for --text-file; one sentence goes to --out FILE", hint="pass --text-file FILE")
    elif text is None or not text.strip():
        raise XttsError(
            "the text to synthesise is empty", hint='pass a sentence, e.g. xtts synthesize "Hello there." ...'
        )
    if speaker is not None and speaker_wav is not None:
        raise XttsError("--speaker and --speaker-wav both name a voice", hint="pass one of them")
    if str(out) == "-" and json_output:
        raise XttsError("--out - and --json both write to stdout", hint="pass one of them")
    if str(out) == "-" and sys.stdout.isatty():  # WAV bytes would garble the terminal, and be lost
        raise XttsError(
            "--out - writes the WAV to stdout, which is a terminal here",
            hint="pipe it (xtts synthesize ... -o - | aplay) or pass --out speech.wav",
        )
    from xtts_cli.config.editing import can_write

    if out_dir is not None:
        can_write(out_dir, "--out-dir", folder=True)
    else:
        can_write(out, "--out", name="speech.wav")
        wav_out(out)
    return out


def _report(tts, speech, out: Path, *, speaker, language, voice: str) -> dict[str, Any]:
    """What `--json` prints of one sentence: the clip, what ended it, its window, the voice."""
    data = tts.config.data
    frames_per_second = data.sample_rate / data.hop_length
    # In the clip's own measure: N frames are N - 1 hops of audio (the mel frames are centred), so a
    # clip stopped at the floor had read one hop under the floor it was said to stop at.
    low, high = ((value - speech.sentences) / frames_per_second for value in speech.frame_window)
    return {
        "out": str(out),  # "-": stdout
        "seconds": round(len(speech.waveform) / data.sample_rate, 3),
        "frames": speech.frames,
        "step": tts.step,
        "run": str(tts.run_dir),
        "ended_by": speech.ended_by,
        "window_seconds": [round(low, 3), round(high, 3)],
        # A paced clip's frames follow its durations, one place in the text each: 1 says nothing.
        "alignment_score": None if speech.paced else round(speech.alignment_score, 4),
        "speaker": speaker,
        "language": speech.language,
        "read_as": speech.read_as,  # numbers and dates as words, as each part was spoken
        "voice": voice,
        "vocoder": speech.vocoder,
        "vocoder_step": tts.vocoder.step,
        "sentences": speech.sentences,
        "notes": tts.notes + speech.notes,
    }


def _render(speech, report: dict[str, Any], stream: TextIO) -> None:
    seconds, step, run_path = report["seconds"], report["step"], report["run"]
    where = "stdout" if report["out"] == "-" else report["out"]
    vocoder = speech.vocoder + (f" (step {report['vocoder_step']})" if report["vocoder_step"] is not None else "")
    stream.write(f"{where}: {seconds:.2f} s of audio from step {step} of {run_path}, vocoder {vocoder}\n")
    window = "{:.2f}-{:.2f} s".format(*report["window_seconds"])
    limit, scope = "the length limit", ""
    if speech.sentences > 1:  # the windows of its sentences added up; the audio has pauses besides
        # Parts, not sentences: one too long for one generation is spoken in several (a slower --speed cuts more)
        limit, scope = (
            "the length limit of a part",
            f" for the {speech.sentences} parts it was spoken in, the pauses apart",
        )
    if speech.ended_by == "length limit" and speech.paced:
        how = f"{limit} ({window} allowed{scope}): the predicted durations ran longer"
    elif speech.ended_by == "length limit":
        how = f"{limit} ({window} allowed{scope}): the stop token never fired"
    elif speech.ended_by == "durations":
        how = "the predicted durations (the duration decoder has no stop token)"
    elif speech.ended_by == "stop token at the floor":
        how = (
            f"the stop token, at the floor of the window the training data's speaking rate allows ({window}{scope}): it "
            "fired earlier, as it does until the model has learnt to align with the text"
        )
    else:
        how = f"the stop token, within the window the training data's speaking rate allows ({window}{scope})"
    stream.write(f"ended by: {how}\n")
    if report["alignment_score"] is not None:
        stream.write(
            f"alignment score: {speech.alignment_score:.3f} (focus rate of the cross-attention; "
            "near 1 when each step reads one place in the text)\n"
        )


def _read_stdin(named: str = "TEXT -") -> bytes:
    """TEXT or --text-file given as -: the bytes piped in."""
    from xtts_cli.errors import XttsError

    if sys.stdin is None or sys.stdin.isatty():
        raise XttsError(
            f"{named} reads the text from stdin, which is {'closed' if sys.stdin is None else 'a terminal'} here",
            hint='pipe it in (cat chapter.txt | xtts synthesize - ...) or pass the text: xtts synthesize "Hello." ...',
        )
    return _bounded(sys.stdin.buffer.read, named)


# More than any synthesis reads at once (a long book is a few MiB): a file with no end (/dev/zero,
# /dev/urandom) had been read whole into memory, and the machine's memory ran out.
MOST_TEXT_BYTES = 64 * 2**20


def _bounded(read: Callable[[int], bytes], named: str) -> bytes:
    """All that `read` gives, a MiB at a time, stopping at the first NUL byte (no text holds one, but
    UTF-16 and UTF-32 with their byte-order marks) or past `MOST_TEXT_BYTES`, each with its error."""
    from xtts_cli.errors import XttsError

    chunks: list[bytes] = []
    total, marked = 0, None
    while chunk := read(2**20):
        if marked is None:
            marked = chunk.startswith(tuple(mark for mark, _ in _BYTE_ORDER_MARKS))
        if not marked and b"\0" in chunk:
            raise _not_text(named, chunk)
        total += len(chunk)
        if total > MOST_TEXT_BYTES:
            raise XttsError(
                f"{named} holds over {MOST_TEXT_BYTES >> 20} MiB: more text than one synthesis reads",
                hint="split it into files of a chapter or so, each one synthesis",
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _not_text(named: str, raw: bytes) -> XttsError:
    """The error for `raw`, which holds a NUL byte: UTF-16 without its mark named with its byte order
    (a big-endian file had been told to iconv it as little-endian, which makes nonsense of it)."""
    from xtts_cli.errors import XttsError

    order = _utf16_order(raw)
    if order is not None:
        return XttsError(
            f"{named} is UTF-16 ({order}) without its byte-order mark",
            hint=f"save it again as UTF-8 (iconv -f utf-16{order[0]}e -t utf-8), or with its mark",
        )
    return XttsError(
        f"{named} is not a text file: it holds NUL bytes (audio or another binary file, or UTF-16 without "
        "its byte-order mark)",
        hint="pass a UTF-8 text file, one sentence a line (UTF-16 without a mark: iconv -f utf-16le -t utf-8, "
        "or utf-16be)",
    )


def _utf16_order(raw: bytes) -> Optional[str]:
    """ "little-endian" or "big-endian" where `raw` reads as UTF-16 text in that order; None for anything
    else. Each space, line end and Latin letter has a NUL byte on one side of its pair (Cyrillic or
    Chinese text has its spaces and line ends); audio has them on both."""
    import unicodedata

    sample = raw[: 2**16 - len(raw[: 2**16]) % 2]
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    for order, nuls, others in (("little-endian", odd, even), ("big-endian", even, odd)):
        if nuls < 2 or nuls < 9 * others:
            continue
        try:
            text = sample.decode(f"utf-16-{order[0]}e")
        except UnicodeDecodeError:
            return None
        # Text, not a table of small numbers: few control characters but its line ends and tabs.
        controls = sum(unicodedata.category(c) == "Cc" and c not in "\n\r\t" for c in text)
        return order if controls <= len(text) // 50 else None
    return None


_BYTE_ORDER_MARKS = (
    (b"\xff\xfe\x00\x00", "utf-32"),  # before UTF-16's, which it starts with
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)


def _utf8(raw: bytes, named: str) -> str:
    """`raw` read as UTF-8 (a byte-order mark, as Notepad and Excel write, is not text); else one
    error naming each line that is not, by number, so the file is mended in one pass."""
    from xtts_cli.errors import XttsError

    # UTF-16 or UTF-32 by its byte-order mark: Notepad's "Unicode", PowerShell's `>` (it had been
    # refused, with iconv's Latin-1 hint, which would have made NULs of every other byte).
    for mark, encoding in _BYTE_ORDER_MARKS:
        if raw.startswith(mark):
            try:
                return raw.decode(encoding)
            except UnicodeDecodeError as exc:
                raise XttsError(
                    f"{named} starts as {encoding.upper()} text but is not: byte {exc.start}",
                    hint=f"save it again as UTF-8 (iconv -f {encoding} -t utf-8)",
                ) from None
    if b"\0" in raw:  # no text of any language holds a NUL: audio, or UTF-16 without its mark
        raise _not_text(named, raw)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = []
        for number, line in enumerate(raw.split(b"\n"), 1):
            try:
                line.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                bad.append(str(number))
        shown = ", ".join(bad[:10]) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
        raise XttsError(
            f"{named} is not UTF-8 text: line{'s' if len(bad) > 1 else ''} {shown} (the first at byte {exc.start})",
            hint="save it as UTF-8 (iconv -f latin1 -t utf-8 turns Latin-1 into it)",
        ) from None


def _speak_file(tts, lines: list[tuple[int, str]], **options):
    """Every line of a --text-file (each checked already: `_check_lines`), in turn, as one `Speech`
    (a pause between lines as between sentences)."""
    from xtts_cli.speech.synthesis import joined

    parts = [tts.speak(line, **options) for _, line in lines]
    return parts[0] if len(parts) == 1 else joined(parts, "\n".join(line for _, line in lines))


# The bad lines of a --text-file named in one error; the rest are counted.
SHOWN_BAD_LINES = 5


def _check_lines(tts, lines: list[tuple[int, str]], language: Optional[str]) -> None:
    """Every line checked before the first is spoken (a bad line 900 loses no work), and every bad
    one named in one error: a file is mended in one pass, not a run per line."""
    from xtts_cli.errors import XttsError

    bad: list[tuple[int, XttsError]] = []
    for number, line in lines:
        try:
            tts.check(line, language=language)
        except XttsError as error:
            bad.append((number, error))
    if not bad:
        return
    named = [f"--text-file line {number}: {error.lines[0]}" for number, error in bad[:SHOWN_BAD_LINES]]
    if len(bad) > SHOWN_BAD_LINES:
        rest = [str(number) for number, _ in bad[SHOWN_BAD_LINES:]]
        more = ", ".join(rest[:10]) + (", ..." if len(rest) > 10 else "")
        named.append(f"and {len(rest)} more of its {len(lines)} lines ({more})")
    raise XttsError(*named, hint=_hints_by_line(bad[:SHOWN_BAD_LINES]))


def _hints_by_line(bad) -> Optional[str]:
    """The bad lines' hints: one said once; several each on a line of its own after the lines it is
    for (two had run together into one sentence, a hint for one line read as the other's)."""
    lines_of: dict[str, list[str]] = {}
    for number, error in bad:
        if error.hint:
            lines_of.setdefault(error.hint, []).append(str(number))
    if len(lines_of) <= 1:
        return next(iter(lines_of), None)
    return "\n".join(
        f"line{'s' if len(numbers) > 1 else ''} {', '.join(numbers)}: {hint}" for hint, numbers in lines_of.items()
    )


def _read_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of each non-empty line of `path`."""
    import unicodedata

    from xtts_cli.errors import XttsError

    try:
        if str(path) == "-":
            raw = _read_stdin("--text-file -")
        else:
            with path.open("rb") as handle:
                raw = _bounded(handle.read, f"--text-file {path}")
    except FileNotFoundError:
        raise XttsError(
            f"--text-file {path} does not exist", hint="pass a UTF-8 text file, one sentence a line (- reads stdin)"
        ) from None
    except OSError as exc:
        raise XttsError(
            f"--text-file {path} cannot be read ({exc.strerror})", hint="pass a UTF-8 text file, one sentence a line"
        ) from None
    text = _utf8(raw, f"--text-file {path}")

    def blank(line: str) -> bool:  # to the eye: a byte-order mark (`cat` of files saved by Notepad), a zero-width space
        return all(c.isspace() or unicodedata.category(c) == "Cf" for c in line)

    # Lines as an editor numbers them: a form feed or U+2028 inside one does not start another, and
    # a carriage return alone ends one, as old Macs saved files (they had been read as one line).
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = [(number, line.strip()) for number, line in enumerate(text.split("\n"), 1) if not blank(line)]
    if not lines:
        raise XttsError(f"--text-file {path} has no sentence in it", hint="one sentence a line")
    return lines


def _clip_paths(lines: list[tuple[int, str]], out_dir: Path) -> list[Path]:
    """`out_dir`/NNNN.wav for each line, named by its line number."""
    width = max(4, len(str(lines[-1][0]))) if lines else 4
    return [out_dir / f"{number:0{width}d}.wav" for number, _ in lines]


def _spoken(tts, lines: list[tuple[int, str]], out_dir: Path, json_output: bool, voice: dict) -> list[dict]:
    """Each line spoken to its clip, then index.jsonl written: a record of each. On Ctrl-C the index
    lists the clips written so far, and the user is told how far it got."""
    from xtts_cli.errors import Terminated

    records: list[dict] = []
    try:
        for (number, line), clip in zip(lines, _clip_paths(lines, out_dir)):
            speech = tts.speak(line, **voice)
            path = speech.save(clip)
            notes = speech.notes + _cut_short(speech)
            records.append(
                {
                    "line": number,
                    "text": line,
                    "out": os.path.abspath(path),  # read from anywhere: relative, it held only from here
                    "seconds": round(speech.seconds, 3),
                    "ended_by": speech.ended_by,
                    "notes": notes,
                }
            )
            if not json_output:
                sys.stderr.write(f"{path}: {speech.seconds:.2f} s  {line[:60]}\n")
                for note in notes:
                    sys.stderr.write(f"note: {note}\n")
    except BaseException as stopped:  # Ctrl-C, SIGTERM (a scheduler, `timeout`), a full disk
        _index_on_stop(out_dir, records)
        if isinstance(stopped, (KeyboardInterrupt, Terminated)):
            sys.stderr.write(f"note: {interrupted_after(out_dir, len(records), len(lines))}\n")
        raise
    _write_index(out_dir, records)
    return records


def _cut_short(speech) -> list[str]:
    """A clip of one part the length limit ended, said so: a text's own "ended by" line says it, and
    the clips of a --text-file had said it only of a line of several parts (a note of its own)."""
    if speech.ended_by != "length limit" or speech.sentences > 1:
        return []
    why = "the predicted durations ran longer" if speech.paced else "the stop token never fired"
    return [f"the length limit cut it short: {why}"]


def interrupted_after(out_dir: Path, written: int, lines: int) -> str:
    """How far a call stopped part way got, once its index is written: stopped before its first clip,
    it wrote none (nor, it may be, the folder), where an index of clips it had not written was named."""
    index = out_dir / "index.jsonl"
    if written:
        said = f"{index} lists the clips written"
    else:
        said = "no clip written" + (f"; {index} lists an earlier call's" if index.is_file() else "")
    return f"interrupted after {written} of {lines} lines; {said}"


def _index_on_stop(out_dir: Path, records: list[dict]) -> None:
    """index.jsonl for a call stopped part way: this call's clips, and an earlier call's records of
    the clips it did not reach (still that call's, whole: each clip is written by a rename). Where
    it cannot be written (the disk is full), the earlier index goes: it named the clips written over."""
    import json

    index = out_dir / "index.jsonl"
    written = {record["out"] for record in records}
    try:
        earlier = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError):
        earlier = []
    kept = [
        record
        for record in earlier
        if isinstance(record, dict)
        and isinstance(record.get("out"), str)
        and record["out"] not in written
        and os.path.isfile(record["out"])
    ]
    try:
        _write_index(out_dir, sorted(records + kept, key=lambda record: record["out"]))
    except OSError:
        index.unlink(missing_ok=True)


def _write_index(out_dir: Path, records: list[dict]) -> None:
    import json

    from xtts_cli.config.editing import write_atomically

    index = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    write_atomically(out_dir / "index.jsonl", index, backup=False)


def _speak_lines(tts, lines: list[tuple[int, str]], out_dir: Path, json_output: bool, **voice) -> None:
    """Each line (checked already: `_check_lines`) to `out_dir`/NNNN.wav (its line number), and one
    JSON line each to index.jsonl."""
    over = say_written_over(out_dir, _clip_paths(lines, out_dir))
    records = _spoken(tts, lines, out_dir, json_output, voice)
    written = {Path(record["out"]).name for record in records}
    others = sorted(path.name for path in out_dir.glob("*.wav") if path.name not in written)
    if others:  # an earlier call's clips: not this file's lines, and not in its index
        listed = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        sys.stderr.write(f"note: {out_dir} also holds {len(others)} clip(s) this call did not write ({listed})\n")
    seconds = round(sum(record["seconds"] for record in records), 3)
    summary = {
        "out_dir": str(out_dir),
        "clips": len(records),
        "seconds": seconds,
        "step": tts.step,
        "run": str(tts.run_dir),
        "vocoder": tts.vocoder.name,
        "vocoder_step": tts.vocoder.step,
        "notes": tts.notes,
        # Said on stderr alone, a script reading --json had not learnt that earlier clips were replaced.
        "written_over": over,
        "earlier_clips": others,
    }
    if json_output:
        from xtts_cli.cli.output import print_json

        print_json(summary)
        return
    sys.stdout.write(
        f"{out_dir}: {len(records)} clip{'' if len(records) == 1 else 's'}, {seconds:.1f} s of audio from step {tts.step} of {tts.run_dir}, "
        f"vocoder {tts.vocoder.name}{'' if tts.vocoder.step is None else f' (step {tts.vocoder.step})'}; "
        f"{out_dir / 'index.jsonl'} lists them\n"
    )
