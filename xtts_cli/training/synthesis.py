"""Speech from a trained run: text -> autoregressive mel -> Griffin-Lim waveform -> WAV.

Used by `xtts synthesize` and by the trainer, which renders its test sentences every
`training.sample_step` so a user can listen to the run improving.
"""

from __future__ import annotations

import io
import wave
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import numpy as np

from xtts_cli.config.schema import DataConfig, XttsConfig
from xtts_cli.errors import XttsError

if TYPE_CHECKING:  # pragma: no cover
    from xtts_cli.training.trainer import Trainer

REFERENCE_FILE = "speaker_reference.npy"
# Griffin-Lim iterations: 32 is where the spectral convergence of speech levels off (Perraudin
# et al., "A fast Griffin-Lim algorithm", 2013); more costs time for little gain.
GRIFFIN_LIM_ITERATIONS = 32
# Upper bound on generated frames per input character: slow read speech is ~15 chars/s at
# 86 frames/s, i.e. ~6 frames per character; 12 leaves room before the stop token ends it.
FRAMES_PER_CHARACTER = 12
# Lower bound: half the ~6 frames per character of ordinary speech, so an early stop token cannot
# cut a sentence to a blip (the stop head is the last thing a young model learns).
MIN_FRAMES_PER_CHARACTER = 3


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


def reference_from_audio(path: Path, data: DataConfig) -> np.ndarray:
    """The speaker reference [reference_frames, n_mels] from an audio file, decoded in TF."""
    import tensorflow as tf

    from xtts_cli.data.audio import decode_audio
    from xtts_cli.data.audio_headers import AudioHeaderError, read_audio_header
    from xtts_cli.data.features import log_mel

    try:
        header = read_audio_header(str(path))
    except AudioHeaderError as exc:
        raise XttsError(f"--speaker-wav {str(path)!r}: {exc.detail}", hint="pass a WAV, FLAC, OGG or MP3 file of speech") from None
    audio = decode_audio(
        tf.io.read_file(str(path)), 0, header.sample_rate, header.channels, header.data_offset,
        header.num_samples, data, codecs=(header.codec,),
    )
    mel = log_mel(audio, data).numpy()
    return mel[: data.reference_frames]


def pad_reference(reference: np.ndarray, data: DataConfig) -> tuple[np.ndarray, int]:
    from xtts_cli.data.features import LOG_MEL_FLOOR

    length = min(len(reference), data.reference_frames)
    padded = np.full((data.reference_frames, data.n_mels), LOG_MEL_FLOOR, dtype=np.float32)
    padded[:length] = reference[:length]
    return padded, length


def generate_waveform(model, tokenizer, text: str, reference: np.ndarray, data: DataConfig, max_frames: Optional[int] = None) -> np.ndarray:
    """Waveform float32 for `text` in the voice of `reference` (log-mel frames)."""
    import tensorflow as tf

    from xtts_cli.data.features import mel_filterbank
    from xtts_cli.model.vocoder import griffin_lim

    if not text.strip():
        raise XttsError("the text to synthesise is empty", hint="pass a sentence, e.g. xtts synthesize \"Hello there.\"")
    ids = tokenizer.encode(text)  # UnknownCharactersError names the characters
    if not ids:
        raise XttsError(f"the text {text!r} has nothing left after cleaning", hint="pass words the model was trained on")
    frames = max_frames or min(data.max_mel_frames, FRAMES_PER_CHARACTER * len(ids) + 20)
    ref, ref_length = pad_reference(reference, data)
    mel, lengths = model.generate(
        tf.constant([ids], tf.int32),
        tf.constant([len(ids)], tf.int32),
        tf.constant(ref[None]),
        tf.constant([ref_length], tf.int32),
        frames,
        prenet_dropout=True,
        min_frames=min(frames, MIN_FRAMES_PER_CHARACTER * len(ids)),
    )
    length = max(2, int(lengths[0]))
    audio = griffin_lim(
        mel[0, :length],
        mel_filterbank(data),
        n_fft=data.n_fft,
        hop_length=data.hop_length,
        win_length=data.win_length,
        n_iter=GRIFFIN_LIM_ITERATIONS,
    )
    return np.asarray(audio, dtype=np.float32)


def save_reference(run_dir: Path, reference: np.ndarray) -> None:
    np.save(run_dir / REFERENCE_FILE, reference.astype(np.float32))


def render_sentences(trainer: "Trainer", step: int) -> list[Path]:
    """Render the config's test sentences with the model as it is at `step`."""
    import tensorflow as tf

    from xtts_cli.data.text import UnknownCharactersError

    path = trainer.run.path / REFERENCE_FILE
    if not path.is_file():
        return []
    reference = np.load(path)
    data = trainer.config.data
    written = []
    trainer.run.samples.mkdir(parents=True, exist_ok=True)
    sentences = trainer.config.training.test_sentences or [trainer.reference_text]
    for index, sentence in enumerate(sentences):
        try:
            audio = generate_waveform(trainer.model, trainer.tokenizer, sentence, reference, data)
        except UnknownCharactersError as exc:
            trainer.progress({"event": "note", "message": f"test sentence {index} skipped: {exc.lines[0]}"})
            continue
        target = trainer.run.samples / f"step{step:07d}-{index}.wav"
        target.write_bytes(wav_bytes(audio, data.sample_rate))
        tf.summary.audio(f"samples/sentence_{index}", audio[None, :, None], data.sample_rate, step=step)
        written.append(target)
    return written


def load_run(run_dir: Path):
    """(config, tokenizer, model with the latest checkpoint restored, step) from a run directory."""
    import tensorflow as tf
    import yaml

    from xtts_cli.config.loading import build_config
    from xtts_cli.data.text import Tokenizer
    from xtts_cli.model.xtts import build_model
    from xtts_cli.training.run_dir import RunDir

    run = RunDir(Path(run_dir))
    if not run.config_file.is_file() or not run.vocab.is_file():
        raise XttsError(
            f"{run_dir} is not an xtts run directory (no config.yaml / vocab.json)",
            hint="pass the --run-dir of an `xtts train` run, e.g. runs/tiny-cpu",
        )
    config: XttsConfig = build_config(yaml.safe_load(run.config_file.read_text(encoding="utf-8")), str(run.config_file))
    tokenizer = Tokenizer.load(run.vocab)
    model = build_model(config.model, config.data, tokenizer.vocab_size)
    latest = tf.train.latest_checkpoint(str(run.checkpoints))
    if latest is None:
        raise XttsError(f"{run.checkpoints} holds no checkpoint yet", hint="train first: xtts train --run-dir " + str(run_dir))
    step = tf.Variable(0, dtype=tf.int64)
    tf.train.Checkpoint(model=model, step=step).restore(latest).expect_partial()
    return config, tokenizer, model, int(step.numpy()), run
