"""Mel frames to audio: Griffin-Lim, or a trained vocoder run (`model.kind: vocoder`).

`Vocoder.load("griffin-lim" | RUN_DIR, data)` is what `xtts synthesize --vocoder`, `xtts vocode`
and the Python API use. A vocoder only makes sense for mels computed as it was trained on: the
acoustic run's features and the vocoder run's must agree (`FEATURE_FIELDS`), or the load stops
with both named.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from xtts_cli.config.schema import DataConfig
from xtts_cli.errors import XttsError

__all__ = ["FEATURE_FIELDS", "GRIFFIN_LIM", "Vocoder", "load_audio"]

GRIFFIN_LIM = "griffin-lim"
# A run's own vocoder: a vocoder run trained into this folder of the acoustic run's directory.
VOCODER_DIR = "vocoder"
# Griffin-Lim iterations: 32 is where the spectral convergence of speech levels off (Perraudin
# et al., "A fast Griffin-Lim algorithm", 2013); more costs time for little gain.
GRIFFIN_LIM_ITERATIONS = 32
# What a mel frame means: a vocoder trained on other values hears other sounds.
FEATURE_FIELDS = ("sample_rate", "n_mels", "n_fft", "hop_length", "win_length", "fmin", "fmax", "mel_filterbank")


def feature_mismatch(ours: DataConfig, theirs: DataConfig) -> list[str]:
    return [
        f"{name} {getattr(ours, name)} against {getattr(theirs, name)}"
        for name in FEATURE_FIELDS
        if getattr(ours, name) != getattr(theirs, name)
    ]


@dataclass
class Vocoder:
    """Griffin-Lim (`generator` None) or a trained generator, for mels of `data`'s features."""

    name: str  # "griffin-lim" or the vocoder run's directory
    data: DataConfig
    generator: Any = None
    step: Optional[int] = None
    _compiled: Any = None

    @classmethod
    def load(cls, spec: Optional[str | Path], data: DataConfig, *, acoustic_run: str = "the acoustic run") -> Vocoder:
        """`spec`: "griffin-lim" (or None), or a vocoder run directory whose features must be `data`'s."""
        if spec is None or str(spec) == GRIFFIN_LIM:
            return cls(GRIFFIN_LIM, data)
        from xtts_cli.inference.checkpoints import read_run, restore_run
        from xtts_cli.model.vocos import build_generator

        path = Path(spec)
        config, run = read_run(path)
        if config.model.kind != "vocoder":
            raise XttsError(
                f"--vocoder {spec}: that run is an acoustic model (model.kind {config.model.kind}), not a vocoder",
                hint=f"pass a run trained with model.kind: vocoder (configs/vocoder-cpu.yaml), or {GRIFFIN_LIM}",
            )
        differ = feature_mismatch(data, config.data)
        if differ:
            raise XttsError(
                f"--vocoder {spec} was trained on other features than {acoustic_run}: {'; '.join(differ)} "
                f"({acoustic_run} first)",
                hint="train the vocoder with the acoustic run's data section (rate, hop, mels), or use "
                f"--vocoder {GRIFFIN_LIM}",
            )
        generator = build_generator(config.vocoder, config.data)
        step = restore_run(generator, run, path)
        return cls(str(spec), config.data, generator, step)

    def __call__(self, mel) -> np.ndarray:
        """log-mel [frames, n_mels] -> float32 samples [(frames - 1) * hop_length]."""
        import tensorflow as tf

        if self.generator is not None:
            if self._compiled is None:
                # One graph for every length: the frame axis is left open, so a sentence of another
                # length does not trace again (seconds each) and the call skips Keras's eager dispatch.
                spec = tf.TensorSpec([1, None, self.data.n_mels], tf.float32)
                self._compiled = tf.function(
                    lambda batch: self.generator(batch, training=False), input_signature=[spec]
                )
            return np.asarray(self._compiled(tf.convert_to_tensor(mel, tf.float32)[None])[0])
        from xtts_cli.data.features import mel_filterbank
        from xtts_cli.model.vocoder import griffin_lim

        data = self.data
        audio = griffin_lim(
            mel,
            mel_filterbank(data),
            n_fft=data.n_fft,
            hop_length=data.hop_length,
            win_length=data.win_length,
            n_iter=GRIFFIN_LIM_ITERATIONS,
        )
        return np.asarray(audio, dtype=np.float32)


def load_audio(path: Path, data: DataConfig, *, what: str = "AUDIO") -> np.ndarray:
    """A whole audio file, mono float32 at data.sample_rate (as the training pipeline decodes it)."""
    import tensorflow as tf

    from xtts_cli.data.audio import decode_audio
    from xtts_cli.data.audio_headers import AudioHeaderError, read_audio_header

    try:
        header = read_audio_header(str(path))
    except (AudioHeaderError, OSError) as exc:
        detail = exc.detail if isinstance(exc, AudioHeaderError) else exc.strerror
        raise XttsError(f"{what} {str(path)!r}: {detail}", hint="pass a WAV, FLAC, OGG or MP3 file") from None
    audio = decode_audio(
        tf.io.read_file(str(path)),
        0,
        header.sample_rate,
        header.channels,
        header.data_offset,
        header.num_samples,
        data,
        codecs=(header.codec,),
    )
    return np.asarray(audio, dtype=np.float32)


def mel_of(audio: np.ndarray, data: DataConfig) -> np.ndarray:
    """The log-mel [frames, n_mels] the acoustic model would be trained to predict for `audio`."""
    from xtts_cli.data.features import log_mel

    return np.asarray(log_mel(audio, data))
