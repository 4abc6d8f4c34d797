"""Speech from a trained run: text -> autoregressive mel -> Griffin-Lim waveform -> WAV.

Used by `xtts synthesize` and by the trainer, which renders its test sentences every
`training.sample_step` so a user can listen to the run improving.
"""

from __future__ import annotations

import io
import math
import shlex
import wave
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np
from pydantic import BaseModel

from xtts_cli.config.schema import DataConfig, SynthesisConfig, XttsConfig
from xtts_cli.errors import XttsError

REFERENCE_FILE = "speaker_reference.npy"
# Each training speaker's longest clips, for `xtts synthesize --speaker NAME` and the validation renders.
SPEAKERS_FILE = "speakers.json"
CLIPS_PER_SPEAKER = 3
RENDERED_SPEAKERS = 3  # test sentences are rendered in the largest speakers' voices (multi-speaker data)
SPEAKING_RATE_FILE = "speaking_rate.json"
# Griffin-Lim iterations: 32 is where the spectral convergence of speech levels off (Perraudin
# et al., "A fast Griffin-Lim algorithm", 2013); more costs time for little gain.
GRIFFIN_LIM_ITERATIONS = 32
# Without a measured speaking rate (runs from before it was recorded): upper bound on generated
# frames per input character — slow read speech is ~15 chars/s at 86 frames/s, i.e. ~6 frames per
# character; 12 leaves room before the stop token ends it — and half the ~6 of ordinary speech as
# the lower bound, so an early stop token cannot cut a sentence to a blip.
FRAMES_PER_CHARACTER = 12
MIN_FRAMES_PER_CHARACTER = 3
# With a measured rate, generation may end between the training data's 10th percentile of frames
# per token (never faster than the fastest tenth of the clips it learned from) and this multiple of
# its 90th; the stop token picks the frame inside that window. The stop head is the last thing an
# autoregressive TTS model learns: until the decoder has learned to align with the text (thousands
# of steps), its stop probability does not depend on the text at all and fires within the first
# few frames; without a ceiling a model that never stops would babble to max_mel_frames.
RATE_FLOOR_SHARE = 1.0
# Generation buffers are a multiple of this many frames (see synthesize_speech).
FRAME_BLOCK = 128
RATE_CEILING_FACTOR = 1.25


class SpeakingRate(BaseModel):
    """Mel frames per text token in the training data: what "the right length" means for this voice."""

    clips: int
    p10: float
    median: float
    p90: float

    def frame_window(self, tokens: int, max_mel_frames: int) -> tuple[int, int]:
        """(min_frames, max_frames) a sentence of `tokens` tokens may take."""
        high = min(max_mel_frames, math.ceil(RATE_CEILING_FACTOR * self.p90 * tokens) + 1)
        low = min(high, max(1, math.floor(RATE_FLOOR_SHARE * self.p10 * tokens)))
        return low, high


def measure_speaking_rate(items, tokenizer, data: DataConfig) -> Optional[SpeakingRate]:
    """Frames per token over `items` (scan results: duration from the header, text as the
    tokenizer's front end gives it: characters or phonemes)."""
    from xtts_cli.data.plan import prepared_texts

    frames_per_second = data.sample_rate / data.hop_length
    prepared = prepared_texts(items, tokenizer)
    texts = prepared if prepared is not None else [tokenizer.clean(item.training_text) for item in items]
    rates = []
    for item, text in zip(items, texts):
        tokens = len(text)
        if tokens:
            rates.append(item.audio.duration * frames_per_second / tokens)
    if not rates:
        return None
    p10, median, p90 = np.percentile(np.asarray(rates), [10, 50, 90])
    return SpeakingRate(clips=len(rates), p10=float(p10), median=float(median), p90=float(p90))


def save_speaking_rate(run_dir: Path, rate: SpeakingRate) -> None:
    from xtts_cli.config.editing import write_atomically

    write_atomically(run_dir / SPEAKING_RATE_FILE, rate.model_dump_json(indent=2) + "\n", backup=False)


def load_speaking_rate(run_dir: Path) -> Optional[SpeakingRate]:
    path = Path(run_dir) / SPEAKING_RATE_FILE
    if not path.is_file():
        return None
    try:
        return SpeakingRate.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError:
        return None  # unreadable: fall back to the fixed bounds rather than refuse to speak


def wav_bytes(waveform: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM mono WAV of a float waveform (peak-normalised when it would clip)."""
    peak = float(np.max(np.abs(waveform))) if waveform.size else 0.0
    if peak > 0.99:
        waveform = waveform * (0.99 / peak)
    pcm = np.clip(np.round(waveform * 32767.0), -32768, 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(sample_rate)
        handle.writeframes(pcm.tobytes())
    return buffer.getvalue()


# Compressed (and float) references are decoded whole by their decoders: longer than this, the
# user is asked for a cut instead of the memory it would take.
MAX_WHOLE_REFERENCE_SECONDS = 600


def reference_from_audio(path: Path, data: DataConfig, *, windows: int = 1) -> np.ndarray:
    """The speaker reference [reference_frames, n_mels] from an audio file, decoded in TF; with
    `windows` > 1, up to that many consecutive references [N, reference_frames, n_mels] along the
    clip (a clip shorter than one gives one, padded)."""
    import tensorflow as tf

    from xtts_cli.data.audio import decode_audio
    from xtts_cli.data.audio_headers import AudioHeaderError, read_audio_header
    from xtts_cli.data.features import log_mel

    try:
        header = read_audio_header(str(path))
    except AudioHeaderError as exc:
        raise XttsError(
            f"--speaker-wav {str(path)!r}: {exc.detail}", hint="pass a WAV, FLAC, OGG or MP3 file of speech"
        ) from None
    # Decoded only as far as the references reach (a 2-hour file took 10.7 GB decoded whole): the
    # frames they cover at the training rate, in the file's own samples, with a window to spare.
    frames = data.reference_frames * max(windows, 1)
    needed = math.ceil((frames * data.hop_length + data.n_fft) * header.sample_rate / data.sample_rate) + 64
    num_samples = min(header.num_samples, needed)
    if header.codec.startswith("wav_pcm") and header.bit_depth:  # raw PCM: only those bytes are read
        with open(path, "rb") as handle:
            contents = tf.constant(
                handle.read(header.data_offset + num_samples * header.channels * header.bit_depth // 8)
            )
    elif header.duration > MAX_WHOLE_REFERENCE_SECONDS:
        raise XttsError(
            f"--speaker-wav {str(path)!r} is {header.duration / 60:.0f} minutes of {header.format}, which is decoded "
            f"whole; a voice needs about {frames * data.hop_length / data.sample_rate:.0f} seconds",
            hint=f"cut the first minute out: sox {shlex.quote(str(path))} reference.wav trim 0 60",
        )
    else:
        contents = tf.io.read_file(str(path))
    audio = decode_audio(
        contents,
        0,
        header.sample_rate,
        header.channels,
        header.data_offset,
        num_samples,
        data,
        codecs=(header.codec,),
    )
    mel = log_mel(audio[: needed * data.sample_rate // header.sample_rate], data).numpy()
    if windows <= 1:
        return mel[: data.reference_frames]
    count = max(1, min(windows, len(mel) // data.reference_frames))
    return np.stack([pad_reference(mel[i * data.reference_frames :], data)[0] for i in range(count)])


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


# A cloned voice (`--speaker-wav`): the speaker vectors of up to this many consecutive reference
# windows of the clip, averaged (XTTS conditions on several chunks of its reference audio too).
CLONE_WINDOWS = 8


def speaker_vector(model, voice: Voice, data: DataConfig):
    """[1, speaker_embedding_dim]: the conditioning of `voice`."""
    import tensorflow as tf

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


@dataclass
class Speech:
    """One synthesised sentence and how it came out."""

    waveform: np.ndarray  # float32 samples at data.sample_rate
    mel: np.ndarray  # [frames, n_mels] log-mel the waveform was made from
    alignment: np.ndarray  # [decoder steps, text tokens]: cross-attention, every layer and head averaged
    alignment_score: float  # focus rate of `alignment` in [0, 1] (model/alignment.py)
    stopped: bool  # the model ended it (stop token or predicted durations), else the length limit did
    frame_window: tuple[int, int]  # (min_frames, max_frames) it was allowed
    decoder: str = "autoregressive"  # model.decoder of the model that spoke it

    @property
    def frames(self) -> int:
        return int(self.mel.shape[0])

    @property
    def ended_by(self) -> str:
        if not self.stopped:
            return "length limit"
        if self.decoder == "duration":
            return "durations"
        return "stop token at the floor" if self.frames <= self.frame_window[0] else "stop token"


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
) -> Speech:
    """`text` in `language` (default the run's first) in the voice of `voice` (a `Voice`, or
    reference log-mel frames): generated mel, Griffin-Lim waveform.

    The length is the stop token's choice inside the window `rate` (the training data's speaking
    rate) allows; `max_frames` caps it further.
    """
    import tensorflow as tf

    from xtts_cli.data.features import mel_filterbank
    from xtts_cli.model.vocoder import griffin_lim

    settings = settings or SynthesisConfig()
    if not text.strip():
        raise XttsError("the text to synthesise is empty", hint='pass a sentence, e.g. xtts synthesize "Hello there."')
    language_index = tokenizer.language_index(language)  # an error naming the run's languages
    ids = tokenizer.symbol_ids(tokenizer.prepare(text, language))  # UnknownCharactersError names the symbols
    if not ids:
        raise XttsError(
            f"the text {text!r} has nothing left after cleaning", hint="pass words the model was trained on"
        )
    if rate is not None:
        min_frames, frames = rate.frame_window(len(ids), data.max_mel_frames)
    else:
        frames = min(data.max_mel_frames, FRAMES_PER_CHARACTER * len(ids) + 20)
        min_frames = MIN_FRAMES_PER_CHARACTER * len(ids)
    if max_frames:
        frames = max_frames
    min_frames = min(frames, min_frames)
    if not isinstance(voice, Voice):
        voice = Voice(reference=voice)
    generated = model.generate(
        tf.constant([ids], tf.int32),
        tf.constant([len(ids)], tf.int32),
        None,
        None,
        # The buffer in whole blocks, the sentence's own limit inside it: one traced graph serves
        # many sentence lengths instead of one trace (seconds) per length.
        FRAME_BLOCK * -(-frames // FRAME_BLOCK),
        settings.stop_threshold,
        frame_limit=frames,
        prenet_dropout=True,
        min_frames=min_frames,
        attention_window=settings.attention_window,
        seed=settings.seed,
        steps_per_token=rate.median / model.dims.reduction_factor if settings.attention_prior and rate else None,
        speaker_vector=speaker_vector(model, voice, data),
        language_ids=tf.constant([language_index], tf.int32),
    )
    length = max(2, int(generated["lengths"][0]))
    mel = generated["mel"][0, :length]
    audio = griffin_lim(
        mel,
        mel_filterbank(data),
        n_fft=data.n_fft,
        hop_length=data.hop_length,
        win_length=data.win_length,
        n_iter=GRIFFIN_LIM_ITERATIONS,
    )
    steps = int(model.decoder_steps(tf.constant([length]))[0])
    return Speech(
        waveform=np.asarray(audio, dtype=np.float32),
        mel=mel.numpy(),
        alignment=generated["alignment"][0, :steps, : len(ids)].numpy(),
        alignment_score=float(generated["alignment_score"][0]),
        stopped=bool(generated["stopped"][0]),
        frame_window=(min_frames, frames),
        decoder=model.decoder_kind,
    )


def save_reference(run_dir: Path, reference: np.ndarray) -> None:
    """speaker_reference.npy, written whole or not at all (a kill mid-write broke every later start)."""
    from xtts_cli.config.editing import write_atomically

    buffer = io.BytesIO()
    np.save(buffer, reference.astype(np.float32))
    write_atomically(run_dir / REFERENCE_FILE, buffer.getvalue(), backup=False)


def save_speakers(run_dir: Path, items) -> None:
    """speakers.json: every training speaker, largest first, with its minutes, dataset and longest clips."""
    import json

    by_speaker: dict[str, list] = {}
    for item in items:
        by_speaker.setdefault(item.speaker, []).append(item)
    minutes = {name: sum(item.audio.duration for item in group) / 60 for name, group in by_speaker.items()}
    payload = {
        name: {
            "dataset": by_speaker[name][0].dataset,
            "minutes": round(minutes[name], 3),
            "clips": [
                item.audio_path
                for item in sorted(by_speaker[name], key=lambda i: -i.audio.duration)[:CLIPS_PER_SPEAKER]
            ],
        }
        for name in sorted(by_speaker, key=lambda name: (-minutes[name], name))
    }
    from xtts_cli.config.editing import write_atomically

    write_atomically(run_dir / SPEAKERS_FILE, json.dumps(payload, indent=1, ensure_ascii=False) + "\n", backup=False)


def load_speakers(run_dir: Path) -> dict[str, dict]:
    import json

    path = run_dir / SPEAKERS_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def speaker_voice(run_dir: Path, name: str, data: DataConfig, tokenizer=None, model=None) -> Voice:
    """Speaker `name` of the run: its centroid in the checkpoint (`model`) when the run keeps one
    for it, so no clip of it is needed; else the opening frames of its longest readable clip."""
    import difflib

    speakers = load_speakers(run_dir)
    listed = list(tokenizer.speakers) if tokenizer is not None and tokenizer.speakers else list(speakers)
    if not listed:
        raise XttsError(
            f"{run_dir} lists no speakers (no {SPEAKERS_FILE}: a run from before speakers were kept)",
            hint="pass --speaker-wav FILE with a clip of the voice",
        )
    if name not in listed:
        close = difflib.get_close_matches(name, listed, n=3)
        known = ", ".join(listed[:8]) + (f" and {len(listed) - 8} more" if len(listed) > 8 else "")
        raise XttsError(
            f"speaker {name!r} is not in {run_dir} ({len(listed)} speakers: {known})",
            hint=f"did you mean {' or '.join(repr(c) for c in close)}?"
            if close
            else f"see {run_dir / SPEAKERS_FILE} for every name",
        )
    if model is not None and tokenizer is not None and getattr(model, "speaker_clip_counts", None) is not None:
        index = tokenizer.speaker_index(name)
        if index >= 0 and float(model.speaker_clip_counts[index]) > 0:
            return Voice(label=name, speaker=index)
    clips = speakers.get(name, {}).get("clips", [])
    for clip in clips:
        if Path(clip).is_file():
            return Voice(label=name, reference=reference_from_audio(Path(clip), data))
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
        return Voice(label=str(speaker_wav), reference=reference_from_audio(speaker_wav, data, windows=CLONE_WINDOWS))
    if (run_dir / REFERENCE_FILE).is_file():
        return Voice(reference=np.load(run_dir / REFERENCE_FILE))
    raise XttsError(f"{run_dir} has no {REFERENCE_FILE}", hint="pass --speaker-wav FILE or --speaker NAME")


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
    import re

    import tensorflow as tf

    from xtts_cli.data.text import UnknownCharactersError

    data = config.data
    if not voices:
        return []
    written = []
    samples.mkdir(parents=True, exist_ok=True)
    rate = load_speaking_rate(run_dir)
    for index, sentence in enumerate(sentences):
        for voice in voices:
            speaker = voice.label
            if voice.speaker is not None and float(model.speaker_clip_counts[voice.speaker]) == 0:
                continue  # no clip of it trained yet (a resumed run's first steps): no voice to speak in
            try:
                audio = synthesize_speech(
                    model, tokenizer, sentence, voice, data, rate=rate, settings=config.synthesis, language=language
                ).waveform
            except UnknownCharactersError as exc:
                note(f"test sentence {index} skipped: {exc.lines[0]}")
                break
            label = f"-{re.sub(r'[^A-Za-z0-9_.-]+', '_', speaker)[:40]}" if speaker else ""
            target = samples / f"step{step:07d}-{index}{label}.wav"
            target.write_bytes(wav_bytes(audio, data.sample_rate))
            tf.summary.audio(
                f"samples/sentence_{index}{label.replace('-', '/', 1)}",
                audio[None, :, None],
                data.sample_rate,
                step=step,
            )
            written.append(target)
    return written


def restore_model(model, checkpoint: str) -> int:
    """Load the weights of `checkpoint` (a path prefix) into `model`; returns the step it was saved at.

    Checkpoints written since every layer became reachable from the model reach all its weights
    through the model's node of the checkpoint's object graph, and restoring the model alone
    checks that each of its weights was found. Older ones reached the layers kept in Python lists
    only through the optimizer's variable list (`optimizer/_trainable_variables/<i>`, in the
    model's variable order): those are read from there, after checking that every shape fits; a
    checkpoint that fits neither way is refused.
    """
    import tensorflow as tf

    reader = tf.train.load_checkpoint(checkpoint)
    graph = _object_graph(reader)
    model_node = _child(graph, 0, "model")
    if model_node is not None and _child(graph, model_node, "decoder_layers") is not None:
        step = tf.Variable(0, dtype=tf.int64)
        status = tf.train.Checkpoint(model=model, step=step).restore(checkpoint)
        try:
            status.assert_existing_objects_matched()
        except AssertionError as exc:
            raise XttsError(
                f"{checkpoint} does not hold every weight of this run's model ({str(exc).splitlines()[0][:160]})",
                hint="the run's config.yaml no longer describes the model that was trained; retrain with --fresh",
            ) from None
        status.expect_partial()  # the optimizer's state is not needed to speak
        return int(step.numpy())
    shapes = reader.get_variable_to_shape_map()
    variables = model.trainable_variables
    keys = _legacy_variable_keys(graph)
    unfit = [
        variable.path
        for variable, key in zip(variables, keys)
        if key is None or list(shapes[key]) != list(variable.shape)
    ]
    if unfit or len(keys) != len(variables):
        raise XttsError(
            f"{checkpoint} was written by an older xtts and its weights do not fit this version's model "
            f"({len(unfit)} of {len(variables)} weights differ, {len(keys)} stored)",
            hint="it cannot be used for synthesis; train again with --fresh",
        )
    for variable, key in zip(variables, keys):
        variable.assign(reader.get_tensor(key))
    step_key = "step/.ATTRIBUTES/VARIABLE_VALUE"
    return int(reader.get_tensor(step_key)) if step_key in shapes else 0


def _object_graph(reader):
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    return graph


def _child(graph, node: Optional[int], name: str) -> Optional[int]:
    if node is None:
        return None
    return next((ref.node_id for ref in graph.nodes[node].children if ref.local_name == name), None)


def _legacy_variable_keys(graph) -> list[Optional[str]]:
    """Checkpoint keys of the optimizer's variable list, in order (an older run's checkpoint).

    A variable is stored once, under one of the paths that reach it (the shortest); the
    checkpoint's object graph says which key holds each entry of the list.
    """
    listed = _child(graph, _child(graph, 0, "optimizer"), "_trainable_variables")
    if listed is None:
        return []
    keys: list[Optional[str]] = []
    for index in range(len(graph.nodes[listed].children)):
        node = _child(graph, listed, str(index))
        attributes = [a.checkpoint_key for a in graph.nodes[node].attributes if a.name == "VARIABLE_VALUE"]
        keys.append(attributes[0] if attributes else None)
    return keys


def load_run(run_dir: Path, step: Optional[int] = None):
    """(config, tokenizer, model with the latest checkpoint restored, step, run) from a run
    directory; `step`: that step's checkpoint instead of the latest (one the run still keeps)."""
    import tensorflow as tf
    import yaml

    from xtts_cli.config.loading import build_config
    from xtts_cli.data.text import Tokenizer
    from xtts_cli.model.build import build_model
    from xtts_cli.training.run_dir import RunDir

    run = RunDir(Path(run_dir))
    if not run.config_file.is_file() or not run.vocab.is_file():
        raise XttsError(
            f"{run_dir} is not an xtts run directory (no config.yaml / vocab.json)",
            hint="pass the --run-dir of an `xtts train` run, e.g. runs/tiny-cpu",
        )
    config: XttsConfig = build_config(yaml.safe_load(run.config_file.read_text(encoding="utf-8")), str(run.config_file))
    run = RunDir.of(run.path, config)  # its checkpoints where training.checkpoint_dir put them
    tokenizer = Tokenizer.load(run.vocab)
    model = build_model(
        config.model,
        config.data,
        tokenizer.vocab_size,
        languages=len(tokenizer.languages),
        speakers=len(tokenizer.speakers),
    )
    latest = tf.train.latest_checkpoint(str(run.checkpoints))
    if step is not None and latest is not None:
        latest = str(run.checkpoints / f"ckpt-{step}")
        if not Path(latest + ".index").is_file():
            steps = sorted(int(index.name[5:-6]) for index in run.checkpoints.glob("ckpt-*.index"))
            raise XttsError(
                f"{run.checkpoints} keeps no checkpoint of step {step}",
                hint=f"it keeps steps {', '.join(map(str, steps))} (training.save_step, training.keep_checkpoints)",
            )
    if latest is None:
        raise XttsError(
            f"{run.checkpoints} holds no checkpoint yet", hint="train first: xtts train --run-dir " + str(run_dir)
        )
    kept: list[str] = [latest]
    state = tf.train.get_checkpoint_state(str(run.checkpoints))
    if step is None and state is not None:  # the latest unreadable: the newest one before it that reads
        kept += [str(path) for path in reversed(state.all_model_checkpoint_paths) if path != latest]
    for index, path in enumerate(kept):
        try:
            restored = restore_model(model, path)
        except (tf.errors.OpError, IndexError, OSError) as exc:
            if index + 1 == len(kept):
                raise XttsError(
                    f"cannot read {path}, nor any checkpoint before it: {str(exc).splitlines()[0]}",
                    hint="train again: xtts train --fresh",
                ) from None
            continue
        return config, tokenizer, model, restored, run
    raise AssertionError("unreachable: the loop returns or raises")
