"""Speech from a trained model: text -> mel (the run's decoder) -> waveform (Griffin-Lim or a vocoder) -> WAV.

`xtts synthesize`, the Python API (`xtts_cli.inference.Synthesizer`) and the trainer's test
sentences all speak through `synthesize_speech`.
"""

from __future__ import annotations

import io
import math
import shlex
import unicodedata
import wave
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional

import numpy as np
import tensorflow as tf

from xtts_cli.config.schema import DataConfig, SynthesisConfig
from xtts_cli.data.audio_headers import SILENT_PEAK, not_a_clip_file
from xtts_cli.errors import SPEEDS, XttsError, listed_name, speed_without_pace, unknown_speaker
from xtts_cli.run.files import (
    RATE_CEILING_FACTOR,
    REFERENCE_FILE,
    SPEAKERS_FILE,
    SpeakingRate,
    load_speakers,
)
from xtts_cli.speech.vocoding import GRIFFIN_LIM, ClipReadError, Vocoder, decoded

# Without a measured speaking rate (runs from before it was recorded): upper bound on generated
# frames per input character — slow read speech is ~15 chars/s at 86 frames/s, i.e. ~6 frames per
# character; 12 leaves room before the stop token ends it — and half the ~6 of ordinary speech as
# the lower bound, so an early stop token cannot cut a sentence to a blip.
FRAMES_PER_CHARACTER = 12
MIN_FRAMES_PER_CHARACTER = 3
# Generation buffers are a multiple of this many frames (see synthesize_speech).
FRAME_BLOCK = 128


def within_full_scale(waveform: np.ndarray) -> np.ndarray:
    """The waveform as a WAV of it holds it: peak-normalised to 0.99 when it would clip (an early
    training step's mel can make a waveform of peak 10), else as it is."""
    peak = float(np.max(np.abs(waveform))) if waveform.size else 0.0
    return waveform * np.float32(0.99 / peak) if peak > 0.99 else waveform


def pcm16(waveform: np.ndarray) -> bytes:
    """16-bit little-endian PCM of a float waveform (peak-normalised when it would clip)."""
    waveform = within_full_scale(waveform)
    return np.clip(np.round(waveform * 32767.0), -32768, 32767).astype("<i2").tobytes()


def wav_bytes(waveform: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM mono WAV of a float waveform (peak-normalised when it would clip)."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(sample_rate)
        handle.writeframes(pcm16(waveform))
    return buffer.getvalue()


def write_wav(path: Path | str, waveform: np.ndarray, sample_rate: int) -> Path:
    """Write a 16-bit WAV file whole or not at all (a temporary beside it, renamed); returns its path."""
    from xtts_cli.config.editing import write_atomically

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, wav_bytes(waveform, sample_rate), backup=False)
    return path


# Compressed (and float) references are decoded whole by their decoders: longer than this, the
# user is asked for a cut instead of the memory it would take.
MAX_WHOLE_REFERENCE_SECONDS = 600


# A clip to clone shorter than this holds no word; one whose peak is under -80 dBFS no sound.
MIN_CLIP_SECONDS = 0.1


class UnusableClipError(XttsError):
    """A clip to clone that reads as audio but holds no voice: `why` ("is silent ...")."""

    def __init__(self, path: Path, why: str, hint: str = "pass a few seconds of the voice speaking") -> None:
        super().__init__(f"--speaker-wav {str(path)!r} {why}", hint=hint)
        self.why = why


# Where a clip's voice starts: its first 50 ms frame within 10 dB (RMS) of its loudest, less a tenth of
# a second (the breath before it). A lead-in of silence had been cloned as the voice, and one longer
# than the references reach called "silent"; a click's one loud sample is no frame's loudness. Past
# LEAD_IN_SECONDS of lead-in nothing is looked for: a clip quieter than QUIET_RMS until then holds no voice.
VOICE_FRAME_SECONDS = 0.05
VOICE_START_RATIO = 0.3
VOICE_START_MARGIN_SECONDS = 0.1
LEAD_IN_SECONDS = 30.0
QUIET_RMS = 0.01  # -40 dBFS


def frame_loudness(audio, sample_rate: int):
    """The RMS of each whole VOICE_FRAME_SECONDS frame of `audio` (a tensor)."""
    frame = max(1, int(VOICE_FRAME_SECONDS * sample_rate))
    count = tf.shape(audio)[0] // frame
    return tf.sqrt(tf.reduce_mean(tf.square(tf.reshape(audio[: count * frame], [count, frame])), axis=1))


def voice_start(audio, sample_rate: int):
    """The index (a scalar tensor) of `audio`'s first sample of the voice: 0 for a clip that starts
    with it. Graph-safe: the export's signature starts its reference there too."""
    loudness = frame_loudness(audio, sample_rate)
    loud = loudness >= tf.reduce_max(tf.concat([loudness, [0.0]], 0)) * VOICE_START_RATIO
    first = tf.argmax(tf.concat([tf.cast(loud, tf.int32), [1]], 0), output_type=tf.int32)
    frame = max(1, int(VOICE_FRAME_SECONDS * sample_rate))
    return tf.maximum(first * frame - int(VOICE_START_MARGIN_SECONDS * sample_rate), 0)


def reference_from_audio(path: Path, data: DataConfig, *, windows: int = 1) -> np.ndarray:
    """The speaker reference [reference_frames, n_mels] from an audio file, decoded in TF; with
    `windows` > 1, up to that many consecutive references [N, reference_frames, n_mels] along the
    clip (a clip shorter than one gives one, padded)."""

    from xtts_cli.data.audio import decode_audio
    from xtts_cli.data.audio_headers import AudioHeaderError, read_audio_header
    from xtts_cli.data.features import log_mel

    named = not_a_clip_file(str(path))
    if named:  # said of what was given, not as a file not found ("https:/..." as a path shows it)
        raise ClipReadError(
            "--speaker-wav", path, named, hint="pass the clip's file: a WAV, FLAC, OGG or MP3 of speech"
        )
    try:
        header = read_audio_header(str(path))
    except AudioHeaderError as exc:
        raise ClipReadError(
            "--speaker-wav",
            path,
            f"cannot be read as audio: {exc.detail}",
            hint="pass a WAV, FLAC, OGG or MP3 file of speech",
        ) from None
    if header.duration < MIN_CLIP_SECONDS:
        raise UnusableClipError(path, f"is {header.duration:.3f} s: too short to hear a voice in")
    # Decoded only as far as the references reach (a 2-hour file took 10.7 GB decoded whole): the
    # frames they cover at the training rate, in the file's own samples, with a window to spare.
    frames = data.reference_frames * max(windows, 1)
    needed = math.ceil((frames * data.hop_length + data.n_fft) * header.sample_rate / data.sample_rate) + 64
    num_samples = min(header.num_samples, needed + math.ceil(LEAD_IN_SECONDS * header.sample_rate))
    if header.codec.startswith("wav_pcm") and header.bit_depth:  # raw PCM: only those bytes are read
        with open(path, "rb") as handle:
            contents = tf.constant(
                handle.read(header.data_offset + num_samples * header.channels * header.bit_depth // 8)
            )
    elif header.duration > MAX_WHOLE_REFERENCE_SECONDS:
        quoted = shlex.quote(str(path))  # Debian's sox reads no MP3 without an extra package
        cut = (
            f"ffmpeg -i {quoted} -t 60 reference.wav"
            if header.format == "mp3"
            else f"sox {quoted} reference.wav trim 0 60"
        )
        raise UnusableClipError(  # in the words a server's client reads too (the upload's own, not a temp path)
            path,
            f"is {header.duration / 60:.0f} minutes of {header.format}, which is decoded whole; a voice needs "
            f"about {frames * data.hop_length / data.sample_rate:.0f} seconds",
            hint=f"cut the first minute out: {cut}",
        )
    else:
        contents = tf.io.read_file(str(path))
    audio = decoded(
        lambda: decode_audio(
            contents,
            0,
            header.sample_rate,
            header.channels,
            header.data_offset,
            num_samples,
            data,
            codecs=(header.codec,),
        ),
        "--speaker-wav",
        path,
    )
    _refuse_no_voice(path, audio, num_samples, header, data)
    audio = audio[int(voice_start(audio, data.sample_rate)) :]
    mel = log_mel(audio[: needed * data.sample_rate // header.sample_rate], data).numpy()
    if windows <= 1:
        return mel[: data.reference_frames]
    count = max(1, min(windows, len(mel) // data.reference_frames))
    return np.stack([pad_reference(mel[i * data.reference_frames :], data)[0] for i in range(count)])


def _refuse_no_voice(path: Path, audio, read: int, header, data: DataConfig) -> None:
    """An UnusableClipError for a clip with no voice in what was `read` of it: silent, or (cut short of
    its end) nothing louder than hiss for the lead-in searched."""
    cut = read < header.num_samples
    if not cut and float(tf.reduce_max(tf.abs(audio))) >= SILENT_PEAK:
        return
    if cut and float(tf.reduce_max(frame_loudness(audio, data.sample_rate))) >= QUIET_RMS:
        return
    if cut:
        raise UnusableClipError(
            path,
            f"holds no voice in its first {read / header.sample_rate:.0f} s (nothing there louder than -40 dBFS)",
            hint="cut the silence before the voice off: sox IN.wav OUT.wav silence 1 0.1 1%",
        )
    raise UnusableClipError(path, "is silent (its loudest sample under -80 dBFS)")


def _clip_notes(path: Path, data: DataConfig) -> list[str]:
    """Notes on what the clip lacks: less than one reference window (the rest is silence to the
    model), or a rate under the run's (what it holds above half its rate is silence: `vocode` says so
    of a recording, and a voice cloned from an 8 kHz call had been used without a word)."""
    from xtts_cli.data.audio_headers import read_audio_header

    header = read_audio_header(str(path))
    seconds, window = header.duration, data.reference_frames * data.hop_length / data.sample_rate
    notes = []
    if seconds < window:
        notes.append(
            f"the voice's clip is {seconds:.2f} s, less than the {window:.2f} s the model reads of a voice "
            "(data.reference_frames): a longer clip clones it better"
        )
    if header.sample_rate < data.sample_rate:
        notes.append(
            f"the voice's clip is {header.sample_rate} Hz, under the run's {data.sample_rate} Hz: it holds nothing "
            f"of the voice above {header.sample_rate // 2} Hz, and a clip recorded at {data.sample_rate} Hz or more "
            "clones it better"
        )
    return notes


# How little a clip's loudness may vary, frame to frame (the standard deviation of its frames' mel
# energy in dB, those within 30 dB of its loudest), and still hold a voice: speech rises and falls by
# 3.5-5.6 dB on the test clips and the bundled sample, and still by 2 dB under white noise as loud as
# it; hiss, hum and noise of every colour (white, pink, brown) and a steady tone stay under 0.5 dB.
STEADY_DB = 1.0


def noise_note(reference: np.ndarray) -> str:
    """A note when the reference mels [..., frames, n_mels] of a clip are steady throughout (a fan,
    static, a hum, noise louder than any voice in it, the wrong file): a voice cloned from them carries it."""
    energy = np.exp(reference.reshape(-1, reference.shape[-1]).astype(np.float64)).mean(axis=1)
    decibels = 10.0 * np.log10(energy[energy >= energy.max() * 1e-3])  # not the padding, nor silence
    spread = float(np.std(decibels))
    if spread >= STEADY_DB:
        return ""
    return (
        f"the voice's clip is steady throughout (its loudness varies by {spread:.1f} dB, where speech rises and "
        "falls by 3 dB or more): hiss, a hum or noise louder than any voice in it; the voice cloned from it "
        "carries that; pass a clip of clean speech"
    )


def pad_reference(reference: np.ndarray, data: DataConfig) -> tuple[np.ndarray, int]:
    from xtts_cli.data.features import LOG_MEL_FLOOR

    length = min(len(reference), data.reference_frames)
    padded = np.full((data.reference_frames, data.n_mels), LOG_MEL_FLOOR, dtype=np.float32)
    padded[:length] = reference[:length]
    return padded, length


@dataclass(frozen=True)
class Voice:
    """Whom a sentence is spoken as: reference mels (`reference` [R, n_mels], or [N, R, n_mels]
    whose speaker vectors are averaged), or a training speaker's centroid (`speaker`, its index in
    the run's vocabulary: `XttsModel.speaker_centroid`)."""

    label: str = ""
    reference: Optional[np.ndarray] = None
    speaker: Optional[int] = None
    # [1, speaker_embedding_dim] worked out once by a model whose weights no longer change
    # (`Synthesizer.voice`): the encoder pass it saves was a fifth of a short sentence's time.
    vector: Optional[np.ndarray] = None
    note: str = ""  # a clip shorter than what the model reads of a voice: said with each sentence


# A cloned voice (`--speaker-wav`): the speaker vectors of up to this many consecutive reference
# windows of the clip, averaged (XTTS conditions on several chunks of its reference audio too).
CLONE_WINDOWS = 8


def speaker_vector(model, voice: Voice, data: DataConfig):
    """[1, speaker_embedding_dim]: the conditioning of `voice`."""

    if voice.vector is not None:
        return tf.constant(voice.vector)
    if voice.speaker is not None:
        return model.speaker_centroid(voice.speaker)
    assert voice.reference is not None  # a Voice names a speaker or holds references
    references = voice.reference if voice.reference.ndim == 3 else voice.reference[None]
    padded = [pad_reference(reference, data) for reference in references]
    vectors = model.speaker_encoder(
        tf.constant(np.stack([mel for mel, _ in padded])),
        tf.constant([length for _, length in padded], tf.int32),
        training=False,
    )
    return tf.reduce_mean(vectors, axis=0, keepdims=True)


class BlockAlignment:
    """The alignments of sentences spoken in turn, side by side (block by block), as one [steps, tokens]
    matrix made only when asked (`np.asarray`): made whole, a long text's grew with its square (31.7 GiB
    of zeros for 5,000 words, refused for memory after the speech was made)."""

    def __init__(self, blocks: list[np.ndarray]) -> None:
        self.blocks = blocks

    @property
    def shape(self) -> tuple[int, int]:
        return (sum(block.shape[0] for block in self.blocks), sum(block.shape[1] for block in self.blocks))

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        dense = np.zeros(self.shape, np.float32)
        row = column = 0
        for block in self.blocks:
            dense[row : row + block.shape[0], column : column + block.shape[1]] = block
            row, column = row + block.shape[0], column + block.shape[1]
        return dense if dtype is None else dense.astype(dtype)


@dataclass
class Speech:
    """One synthesised sentence and how it came out."""

    # float32 samples at data.sample_rate, as made: early in training they pass full scale (±1), which
    # `wav()` and `save()` scale down to (`within_full_scale`); play that, not these, as they are.
    waveform: np.ndarray
    mel: np.ndarray  # [frames, n_mels] log-mel the waveform was made from
    # [decoder steps, text tokens]: cross-attention, every layer and head averaged (sentences joined: by block)
    alignment: np.ndarray | BlockAlignment
    alignment_score: float  # focus rate of `alignment` in [0, 1] (model/alignment.py)
    stopped: bool  # the model ended it (stop token or predicted durations), else the length limit did
    frame_window: tuple[int, int]  # (min_frames, max_frames) it was allowed
    sample_rate: int
    paced: bool = False  # its length came from predicted durations (the duration decoder), not a stop token
    text: str = ""
    vocoder: str = "griffin-lim"  # what made the waveform: griffin-lim or a vocoder run's directory
    sentences: int = 1  # generations joined into it (`speak_text`: a long text, sentence by sentence)
    language: Optional[str] = None  # what it was read as (the run's first, when none was asked)
    language_note: str = ""  # the language chosen by the text's script, or one it is not in; a part cut
    left_out: list[str] = field(default_factory=list)  # what the run never saw: left out, or "ɕ→ʃ" read as its nearest
    voice_note: str = ""  # what the voice's clip lacked (`Voice.note`)
    read_as: str = ""  # the text as it was read, in words ("$5": "five dollars"), each part as it was spoken
    index: int = 0  # its text's place in the texts given to `Synthesizer.speak_many` (0 otherwise)
    cut: list[str] = field(default_factory=list)  # sentences joined: those the length limit cut, as written

    @property
    def notes(self) -> list[str]:
        """What the user should hear of: one line naming every phoneme read as its nearest ("ɕ→ʃ"),
        one naming every symbol left out, and the voice's note."""
        return (
            text_notes(self.language_note, self.left_out)
            + ([self.voice_note] if self.voice_note else [])
            + ([_cut_note(self.cut, self.sentences)] if self.cut else [])
        )

    @property
    def seconds(self) -> float:
        return len(self.waveform) / self.sample_rate

    def wav(self) -> bytes:
        """16-bit PCM mono WAV bytes."""
        return wav_bytes(self.waveform, self.sample_rate)

    def save(self, path: Path | str) -> Path:
        """Write the WAV file whole or not at all (a temporary beside it, renamed); returns its path.
        Raises XttsError for a folder, or a name that says another format (x.mp3)."""
        import os

        from xtts_cli.config.editing import can_write

        if not isinstance(path, (str, os.PathLike)) or not isinstance(os.fspath(path), str):
            raise TypeError(f"path is where the WAV goes (a str or a Path), not {type(path).__name__}")
        if not os.fspath(path).strip():
            raise XttsError("Speech.save: the path is empty", hint="name a file, such as speech.wav")
        path = Path(os.fspath(path))
        if path.is_dir():
            raise XttsError(f"{path} is a folder", hint=f"name a file in it, such as {path / 'speech.wav'}")
        if path.suffix.lower() != ".wav":
            raise XttsError(f"{path}: a Speech is saved as WAV audio", hint=f"name it {path.with_suffix('.wav')}")
        can_write(path, "Speech.save", name="speech.wav")  # /proc, a read-only disk: one line, not an OSError
        return write_wav(path, self.waveform, self.sample_rate)

    @property
    def frames(self) -> int:
        return int(self.mel.shape[0])

    @property
    def ended_by(self) -> str:
        if not self.stopped:
            return "length limit"
        if self.paced:
            return "durations"
        return "stop token at the floor" if self.frames <= self.frame_window[0] else "stop token"


def generation_settings(model, settings: SynthesisConfig, rate: Optional[SpeakingRate]) -> dict:
    """`model.generate`'s settings from the run's synthesis config (and its speaking rate, which
    paces the attention prior): one place for synthesis and the exported graph."""
    return {
        "stop_threshold": settings.stop_threshold,
        "prenet_dropout": True,
        "attention_window": settings.attention_window,
        "seed": settings.seed,
        "steps_per_token": rate.median / model.dims.reduction_factor if settings.attention_prior and rate else None,
    }


def synthesize_speech(
    model,
    tokenizer,
    text: str,
    voice: Voice | np.ndarray,
    data: DataConfig,
    max_frames: Optional[int] = None,
    rate: Optional[SpeakingRate] = None,
    *,
    settings: Optional[SynthesisConfig] = None,
    language: Optional[str] = None,
    vocoder: Optional[Vocoder] = None,
    speed: float = 1.0,
) -> Speech:
    """`text` in `language` (default the run's first) in the voice of `voice` (a `Voice`, or
    reference log-mel frames): generated mel, its waveform by `vocoder` (default Griffin-Lim).

    The length is the stop token's choice inside the window `rate` (the training data's speaking
    rate) allows, or the predicted durations' at `speed` (a paced model; the window scales with
    it); `max_frames` caps it further.
    """

    settings = settings or SynthesisConfig()
    vocoder = vocoder or Vocoder(GRIFFIN_LIM, data)
    speed, max_frames = check_controls(text, speed, max_frames, language)
    assert isinstance(text, str)
    if not text.strip():
        raise XttsError("the text to synthesise is empty", hint='pass a sentence, e.g. "Hello there."')
    language_index = tokenizer.language_index(language)  # an error naming the run's languages
    ids, left_out = tokenizer.spoken_ids(text, language)
    min_frames, frames = _frame_window(model, len(ids), data, rate, speed, max_frames)
    if not isinstance(voice, Voice):
        voice = Voice(reference=voice)
    # The buffer in whole blocks, the sentence's own limit inside it: one traced graph serves many
    # sentence lengths instead of one trace (seconds) per length.
    buffer = FRAME_BLOCK * -(-frames // FRAME_BLOCK)
    vector = speaker_vector(model, voice, data)
    generated = _generate(model, ids, vector, language_index, buffer, frames, min_frames, rate, settings, speed)
    length = max(2, int(generated["lengths"][0]))
    mel = generated["mel"][0, :length]
    audio = vocoder(mel)
    steps = int(model.decoder_steps(tf.constant([length]))[0])
    return Speech(
        waveform=np.asarray(audio, dtype=np.float32),
        mel=mel.numpy(),
        alignment=generated["alignment"][0, :steps, : len(ids)].numpy(),
        alignment_score=float(generated["alignment_score"][0]),
        stopped=bool(generated["stopped"][0]),
        frame_window=(min_frames, frames),
        sample_rate=data.sample_rate,
        paced=model.paced,
        text=text,
        vocoder=vocoder.name,
        # The run's own code ("EN" and " en " are its "en"), as /api/languages and .languages list it.
        language=tokenizer.languages[language_index] if tokenizer.languages else None,
        read_as=tokenizer.read_as(text, language, left_out),
        left_out=left_out,
        voice_note=voice.note,
    )


def _generate(model, ids, vector, language_index: int, buffer: int, limit: int, min_frames: int, rate, settings, speed):
    """One sentence's generation in a buffer of `buffer` frames, stopped by `limit` at the latest."""
    return model.generate(
        tf.constant([ids], tf.int32),
        tf.constant([len(ids)], tf.int32),
        None,
        None,
        buffer,
        frame_limit=limit,
        min_frames=min_frames,
        speaker_vector=vector,
        language_ids=tf.constant([language_index], tf.int32),
        speed=speed,
        **generation_settings(model, settings, rate),
    )


def buffer_lengths(model, data: DataConfig) -> list[int]:
    """The buffers (in frames) `synthesize_speech` generates sentences in: every whole block up to
    `data.max_mel_frames` for a decoder with a graph per buffer length, one for any other."""
    if not model.static_frame_buffer:
        return [FRAME_BLOCK]
    return [FRAME_BLOCK * blocks for blocks in range(1, -(-data.max_mel_frames // FRAME_BLOCK) + 1)]


def build_generation_graphs(model, data: DataConfig, rate: Optional[SpeakingRate] = None, *, settings=None) -> int:
    """Build the generation graph of every buffer length (`buffer_lengths`), generating one frame in
    each: seconds a graph, which the first sentence of each length would wait for otherwise (a server
    does it as it starts). A graph serves every text, voice and language, so a placeholder of each
    builds it: one symbol, a silent voice (an inference model's float32), the first language.
    Returns how many buffer lengths there are."""
    lengths = buffer_lengths(model, data)
    for buffer in lengths:
        _placeholder_generation(model, buffer, rate, settings)
    return len(lengths)


def warm_up(
    model, data: DataConfig, vocoder: Vocoder, vector=None, rate: Optional[SpeakingRate] = None, *, settings=None
):
    """Build what a process's first sentence would wait for: the shortest buffer's generation graph
    and the vocoder's (`build_generation_graphs`' placeholder, in `vector`'s voice when given), so a
    run in any script is warmed up without a sentence of its language."""
    generated = _placeholder_generation(model, buffer_lengths(model, data)[0], rate, settings, vector)
    # The whole buffer: Griffin-Lim pads a signal too short to reflect otherwise, another graph.
    vocoder(generated["mel"][0])


def _placeholder_generation(model, buffer: int, rate, settings, vector=None):
    if vector is None:
        vector = tf.zeros([1, model.dims.speaker_embedding_dim], tf.float32)
    return _generate(model, [1], vector, 0, buffer, 1, 1, rate, settings or SynthesisConfig(), 1.0)


def check_controls(
    text: object, speed: object, max_frames: object, language: object = None
) -> tuple[float, Optional[int]]:
    """The Python caller's values, refused as the command line refuses them (not deep in TensorFlow);
    returns the speed and max_frames as Python numbers (a NumPy float32 or int64 is one as well)."""
    import numbers

    if not isinstance(text, str):
        raise TypeError(f"the text to speak is a str, not {type(text).__name__}")
    if language is not None and not isinstance(language, str):
        raise TypeError(f"language is a code from .languages (such as en), not {type(language).__name__}")
    pace = float(speed) if isinstance(speed, numbers.Real) and not isinstance(speed, bool) else None
    if pace is None:  # "1" had been told it is no pace from 0.25 to 4
        raise XttsError(
            f"speed {speed!r} is of type {type(speed).__name__}, not a number",
            hint=f"pass a number from {SPEEDS[0]:g} to {SPEEDS[1]:g}: 1 is the pace the run learnt, 1.5 half again as fast",
        )
    if not SPEEDS[0] <= pace <= SPEEDS[1]:
        raise XttsError(
            f"speed {pace!r} is not a pace from {SPEEDS[0]:g} to {SPEEDS[1]:g}",
            hint="1 is the pace the run learnt, 1.5 half again as fast, 0.8 slower",
        )
    frames = int(max_frames) if isinstance(max_frames, numbers.Integral) and not isinstance(max_frames, bool) else None
    if max_frames is not None and (frames is None or frames < 2):
        raise XttsError(
            f"max_frames {max_frames if frames is None else frames!r} is not a whole number of frames, 2 or more",
            hint="e.g. 400",
        )
    return pace, frames


def _frame_window(
    model, symbols: int, data: DataConfig, rate: Optional[SpeakingRate], speed: float, max_frames: Optional[int]
) -> tuple[int, int]:
    """(fewest, most) frames a sentence of `symbols` symbols may take: the speaking rate's window
    (a rough per-character guess without one), scaled by `speed`, capped by `max_frames`."""
    if rate is not None:
        min_frames, frames = rate.frame_window(symbols, data.max_mel_frames)
    else:
        frames = min(data.max_mel_frames, FRAMES_PER_CHARACTER * symbols + 20)
        min_frames = MIN_FRAMES_PER_CHARACTER * symbols
    if speed != 1.0:
        if not model.paced:
            raise speed_without_pace(speed)
        # Each token's frames are rounded after the pace divides them: up to half a frame more each,
        # which the speaking rate's margin, divided by the pace too, no longer covers at 4x.
        frames = min(data.max_mel_frames, int(np.ceil(frames / speed)) + (symbols + 1) // 2)
        min_frames = int(min_frames / speed)
    if max_frames:  # a cap on the window, never a wider one (a young model's stop token would not end it)
        frames = min(frames, max_frames)
    return min(frames, min_frames), frames


def speaker_voice(run_dir: Path, name: str, data: DataConfig, tokenizer=None, model=None) -> Voice:
    """Speaker `name` of the run: its centroid in the checkpoint (`model`) when the run keeps one
    for it, so no clip of it is needed; else the opening frames of its longest readable clip."""
    # speakers.json only where the vocabulary lists none or the checkpoint keeps no centroid: a damaged
    # one stops no voice the checkpoint holds.
    speakers = load_speakers(run_dir) if tokenizer is None or not tokenizer.speakers else None
    listed = list(tokenizer.speakers) if speakers is None else list(speakers)
    if not listed:
        raise XttsError(
            f"{run_dir} lists no speakers (no {SPEAKERS_FILE}: a run from before speakers were kept)",
            hint="pass --speaker-wav FILE with a clip of the voice",
        )
    name = listed_name(name, listed) or name
    if name not in listed:
        raise unknown_speaker(name, listed, run_dir)
    if model is not None and tokenizer is not None and getattr(model, "speaker_clip_counts", None) is not None:
        index = tokenizer.speaker_index(name)
        if index >= 0 and float(model.speaker_clip_counts[index]) > 0:
            return Voice(label=name, speaker=index)
    clips = (load_speakers(run_dir) if speakers is None else speakers).get(name, {}).get("clips", [])
    for clip in clips:
        if Path(clip).is_file():
            # Said: a run that stopped early (at its base's weights) had spoken a clip's voice as the speaker's.
            note = (
                f"speaker {name!r} has no voice stored in the checkpoint (no step drew its clips): spoken in the "
                f"voice of its clip {clip}"
                if model is not None
                else ""
            )
            return Voice(label=name, reference=reference_from_audio(Path(clip), data), note=note)
    raise XttsError(
        f"speaker {name!r} has no centroid in this run's checkpoint and none of its clips can be read "
        f"({clips[0] if clips else 'none listed'} ...)",
        hint="mount the dataset where it was trained from, or pass --speaker-wav FILE",
    )


def resolve_voice(
    run_dir: Path,
    data: DataConfig,
    tokenizer,
    model,
    *,
    speaker: Optional[str] = None,
    speaker_wav: Optional[Path] = None,
) -> Voice:
    """The voice `xtts synthesize` speaks in: a training speaker by name (`speaker_voice`), the
    voice of an unseen clip (`CLONE_WINDOWS` references along it, averaged), or the run's
    reference clip."""
    if speaker is not None and speaker_wav is not None:
        raise XttsError("--speaker and --speaker-wav both name a voice", hint="pass one of them")
    if speaker is not None:
        return speaker_voice(run_dir, speaker, data, tokenizer, model)
    if speaker_wav is not None:
        reference = reference_from_audio(speaker_wav, data, windows=CLONE_WINDOWS)
        note = "; ".join(filter(None, [noise_note(reference), *_clip_notes(speaker_wav, data)]))  # the worst first
        return Voice(label=str(speaker_wav), reference=reference, note=note)
    if (run_dir / REFERENCE_FILE).is_file():
        try:
            reference = np.load(run_dir / REFERENCE_FILE, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:  # damaged: numpy's own words had reached the caller
            raise XttsError(
                f"{run_dir / REFERENCE_FILE} cannot be read ({str(exc).splitlines()[0][:80]}): the run's own voice is lost",
                hint="pass --speaker-wav FILE or --speaker NAME, or copy the file again from where the run trained",
            ) from None
        return Voice(reference=reference)
    raise XttsError(f"{run_dir} has no {REFERENCE_FILE}", hint="pass --speaker-wav FILE or --speaker NAME")


# Characters a note names at most: a text of a thousand distinct emoji is not a note of a thousand (a
# server's X-Xtts-Notes header past 16 KiB is refused by Node's fetch).
NOTE_NAMES = 24


def text_notes(language_note: str, left_out: list[str]) -> list[str]:
    """`Speech.notes` of the text alone: the language it was read in, every phoneme read as its
    nearest, every symbol left out."""
    # "ɒ→ɔ": one read as another; "→" alone, an arrow left out (it had been listed as read as its nearest).
    nearest = _some(c for c in left_out if len(c) > 1 and "\u2192" in c)
    # A character that shows nothing alone (a space, a control, an emoji's variation selector) by its code.
    shown = _some(
        c if c.isprintable() and not c.isspace() and unicodedata.category(c)[0] != "M" else f"U+{ord(c):04X}"
        for c in left_out
        if not (len(c) > 1 and "\u2192" in c)
    )
    notes = [language_note] if language_note else []
    notes += [f"read what the run never learnt as the nearest it knows: {nearest}"] if nearest else []
    return notes + ([f"left out what the run never saw: {shown}"] if shown else [])


def _some(names: Iterable[str]) -> str:
    """`names` joined by spaces, the first NOTE_NAMES of them and how many more."""
    names = list(names)
    more = f" and {len(names) - NOTE_NAMES} more" if len(names) > NOTE_NAMES else ""
    return " ".join(names[:NOTE_NAMES]) + more


# Between two sentences of a longer text: a breath, about what a reader leaves at a full stop.
SENTENCE_PAUSE_SECONDS = 0.3


def speak_text(model, tokenizer, text: str, voice, data: DataConfig, rate: Optional[SpeakingRate] = None, **options):
    """Text of any length: its sentences (`split_sentences`), each cut further where it would not
    fit one generation's frames (`split_to_fit`), generated in turn (`synthesize_speech`, with
    `options`) and joined with `SENTENCE_PAUSE_SECONDS` between them."""
    parts = list(speak_parts(model, tokenizer, text, voice, data, rate, **options))
    return parts[0] if len(parts) == 1 else joined(parts, text)


def speak_parts(model, tokenizer, text: str, voice, data: DataConfig, rate: Optional[SpeakingRate] = None, **options):
    """`speak_text`'s generations, each yielded as it is made (what a server streams): one for a
    text that fits one, else one per part (`text_parts`)."""
    asked = options.get("language")
    options["speed"], options["max_frames"] = check_controls(
        text, options.get("speed", 1.0), options.get("max_frames"), asked
    )
    if not text.strip():
        raise XttsError("the text to synthesise is empty", hint='pass a sentence, e.g. "Hello there."')
    read = reading_parts(tokenizer, text, data, rate, asked, options["speed"])
    for part, part_language, _ in read:  # refused at the call, as speak is: not at the first next()
        tokenizer.spoken_ids(part, part_language)
    return _spoken_parts(model, tokenizer, read, voice, data, rate, options)


def _spoken_parts(model, tokenizer, read: list, voice, data: DataConfig, rate: Optional[SpeakingRate], options: dict):
    for part, part_language, part_note in read:
        speech = synthesize_speech(
            model, tokenizer, part, voice, data, rate=rate, **{**options, "language": part_language}
        )
        yield replace(speech, language_note=part_note)


def reading_parts(tokenizer, text: str, data: DataConfig, rate: Optional[SpeakingRate], asked, speed: float = 1.0):
    """(part, its language, its note) of each generation `text` is spoken in (`text_parts`); a terminal's
    escape codes and SSML or HTML tags left out, the first part's note naming them."""
    from xtts_cli.data.text import reading_language, refuse_unread_script, without_markup

    text, markup = without_markup(text)
    tokenizer.language_index(asked)  # one the run lacks, named before espeak-ng is asked for it
    if tokenizer.frontend == "phonemes":
        refuse_unread_script(tokenizer.languages, text, asked)
    language, note = reading_language(tokenizer.languages, text, asked, phonemes=tokenizer.frontend == "phonemes")
    parts, overlong = _parts(
        tokenizer,
        text,
        data,
        rate,
        language=language,
        own=lambda part: _own_language(tokenizer, part, language, note, asked)[0],
        speed=speed,
    )
    cut = ""
    if overlong:  # no sentence end, clause or space left to cut it at (a run of letters, CJK text)
        shown = f"{overlong[0][:30]!r}{'...' if len(overlong[0]) > 30 else ''}"
        cut = (
            f"{shown} is longer than one generation holds and has no space to cut it at: it is cut between its letters"
        )
    read: list[tuple[str, Optional[str], str]] = []
    for part in parts if len(parts) > 1 else [text]:
        part_language, part_note = _own_language(tokenizer, part, language, note, asked)
        said = [part_note, *([cut, markup] if not read else [])]  # what is cut or left out: said once
        read.append((part, part_language, "; ".join(filter(None, said))))
    return read


def _own_language(tokenizer, part: str, language, note: str, asked) -> tuple[Optional[str], str]:
    """(language, note) of one part of a longer text: with none asked, a run of several languages
    reads each sentence in its own script's ("Hello. سلام. Bye.": en, fa, en), not all as the first's."""
    from xtts_cli.data.text import reading_language, text_script

    if asked is not None or len(tokenizer.languages) < 2 or text_script(part) is None:
        return language, note
    own, own_note = reading_language(tokenizer.languages, part, None, phonemes=tokenizer.frontend == "phonemes")
    own = own or tokenizer.languages[0]
    return (language, note) if own == language else (own, own_note)


def check_text(
    tokenizer, text: str, data: DataConfig, rate: Optional[SpeakingRate], *, language=None, speed: float = 1.0
) -> list[str]:
    """Raise what speaking `text` would raise for its words (another script; a part with nothing
    left to say) before any of it is spoken: a stream's last sentence, a file's last line. Returns
    the notes its speech would carry on its text (`text_notes`): what a stream says before it plays."""
    speed = check_controls(text, speed, None, language)[0]  # a text that is no str: the TypeError speak raises
    if not text.strip():
        raise XttsError("the text to synthesise is empty", hint='pass a sentence, e.g. "Hello there."')
    read = reading_parts(tokenizer, text, data, rate, language, speed)
    left_out: dict[str, None] = {}
    for part, part_language, _ in read:
        left_out.update(dict.fromkeys(tokenizer.spoken_ids(part, part_language)[1]))
    return text_notes("; ".join(dict.fromkeys(note for _, _, note in read if note)), list(left_out))


def text_parts(tokenizer, text: str, data: DataConfig, rate: Optional[SpeakingRate], *, language=None) -> list[str]:
    """The generations `text` is spoken in: its sentences, each within one generation's limit."""
    return _parts(tokenizer, text, data, rate, language=language)[0]


def _parts(
    tokenizer,
    text: str,
    data: DataConfig,
    rate: Optional[SpeakingRate],
    *,
    language=None,
    own: Optional[Callable[[str], Optional[str]]] = None,
    speed: float = 1.0,
):
    """(`text_parts`, the words among them no space parts, cut between their letters). `own`: the
    language a sentence is read in (default `language`): a Persian sentence of a German text is
    measured, and put into words, as Persian. `speed` below 1 makes each token's frames longer, so
    parts are cut shorter (at 0.25 a sentence had run into the length limit)."""
    from xtts_cli.data.text import split_sentences, split_to_fit

    own = own or (lambda part: language)
    per_token = (RATE_CEILING_FACTOR * rate.p90 if rate is not None else FRAMES_PER_CHARACTER) / min(speed, 1.0)
    most = max(1, int((data.max_mel_frames - 1) // per_token))  # the tokens whose frames fit the limit
    judged: dict[str, bool] = {}

    def fits(part: str) -> bool:
        if part not in judged:
            # What it speaks: an emoji or a mark the run never saw is left out, not a token (600 emoji
            # had been read as too long for a generation, and its end as cut).
            judged[part] = len(tokenizer.speakable(tokenizer.spoken(part, own(part)))[0]) <= most
        return judged[part]

    lettered: list[str] = []
    parts = [
        part
        for sentence in split_sentences(text, language)
        # A sentence cut in two is read first, so that no cut parts a number from what says how
        # to read it ("by 3/4 so": a date, not "three quarters"); each part is then read as it is.
        for part in split_to_fit(
            sentence if fits(sentence) else tokenizer.reading(sentence, own(sentence)), fits, lettered.append
        )
    ]
    parts = _with_the_unspoken_joined(parts, lambda part: any(c.isalnum() for c in tokenizer.spoken(part, own(part))))
    return parts, lettered


def _with_the_unspoken_joined(parts: list[str], says: Callable[[str], bool]) -> list[str]:
    """`parts` with each that says nothing ("👍" after "Great job!") joined to the part before it
    (the first's to the next), where it is left out and named as within a sentence; all of them
    saying nothing: the text as one, refused as having nothing left to say."""
    kept: list[str] = []
    pending = ""  # what said nothing before the first part that does
    for part in parts:
        if says(part):
            kept.append(f"{pending} {part}".strip())
            pending = ""
        elif kept:
            kept[-1] = f"{kept[-1]} {part}"
        else:
            pending = f"{pending} {part}".strip()
    return kept or [" ".join(parts)]


_MARKDOWN_NOTE = "read markdown as its words: left out its "


def _merged_notes(notes: list[str]) -> str:
    """The parts' notes once each, their markdown marks in one ("read markdown as its words: left out its
    heading marks; read markdown as its words: left out its code marks" had said it once a part)."""
    pieces = list(dict.fromkeys(piece for note in notes if note for piece in note.split("; ")))
    marks = [piece.removeprefix(_MARKDOWN_NOTE) for piece in pieces if piece.startswith(_MARKDOWN_NOTE)]
    if len(marks) > 1:
        merged = _MARKDOWN_NOTE + ", ".join(dict.fromkeys(mark for each in marks for mark in each.split(", ")))
        at = next(i for i, piece in enumerate(pieces) if piece.startswith(_MARKDOWN_NOTE))
        pieces = [piece for piece in pieces if not piece.startswith(_MARKDOWN_NOTE)]
        pieces.insert(at, merged)
    return "; ".join(pieces)


def _cut_note(cut: list[str], parts: int) -> str:
    """Which parts of a text the length limit cut: "ended by" had said so of the whole, naming none."""
    cut = [" ".join(part.split()) for part in cut]  # as written, markup left out: its spaces once
    shown = ", ".join(repr(part if len(part) <= 40 else part[:40].rsplit(" ", 1)[0] + " ...") for part in cut[:3])
    more = f" and {len(cut) - 3} more" if len(cut) > 3 else ""
    return f"the length limit cut {len(cut)} of its {parts} parts short: {shown}{more}"


def joined(parts: list[Speech], text: str) -> Speech:
    """Sentences spoken in turn as one `Speech`: the waveforms and mels end to end with a pause
    (silence) between each two, the alignments side by side (block by block)."""
    from xtts_cli.model.xtts import MEL_PAD_VALUE

    first = parts[0]
    pause = int(SENTENCE_PAUSE_SECONDS * first.sample_rate)
    hop = max(1, round(len(first.waveform) / max(first.frames, 1)))
    silence_frames = np.full((max(1, pause // hop), first.mel.shape[1]), MEL_PAD_VALUE, np.float32)
    waves, mels = [], []
    for index, part in enumerate(parts):
        if index:
            waves.append(np.zeros(pause, np.float32))
            mels.append(silence_frames)
        waves.append(part.waveform)
        mels.append(part.mel)
    blocks = [
        block
        for part in parts
        for block in (part.alignment.blocks if isinstance(part.alignment, BlockAlignment) else [part.alignment])
    ]
    alignment = BlockAlignment(blocks)
    weights = [max(part.alignment.shape[0], 1) for part in parts]
    return Speech(
        waveform=np.concatenate(waves),
        mel=np.concatenate(mels),
        alignment=alignment,
        alignment_score=float(np.average([part.alignment_score for part in parts], weights=weights)),
        stopped=all(part.stopped for part in parts),
        frame_window=(sum(p.frame_window[0] for p in parts), sum(p.frame_window[1] for p in parts)),
        sample_rate=first.sample_rate,
        paced=first.paced,
        text=text,
        vocoder=first.vocoder,
        # Lines of a file may each be in another language: each said, in order.
        language=",".join(dict.fromkeys(str(part.language) for part in parts)) if first.language else None,
        language_note=_merged_notes([part.language_note for part in parts]),
        read_as=" ".join(part.read_as for part in parts),
        sentences=sum(part.sentences for part in parts),
        left_out=list(dict.fromkeys(symbol for part in parts for symbol in part.left_out)),  # one note for all
        voice_note=parts[0].voice_note,
        cut=[c for part in parts for c in (part.cut if part.sentences > 1 else [] if part.stopped else [part.text])],
    )
