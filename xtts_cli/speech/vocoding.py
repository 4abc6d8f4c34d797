"""Mel frames to audio: Griffin-Lim, or a trained vocoder's generator (`Vocoder`), and the audio
and log-mel of a whole file as the training pipeline computes them.

Loading a vocoder run (`xtts_cli.inference.load_vocoder`) checks that its features are the
acoustic run's before it makes a `Vocoder` of its generator.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np
import tensorflow as tf

from xtts_cli.config.schema import DataConfig
from xtts_cli.errors import XttsError

__all__ = ["GRIFFIN_LIM", "GRIFFIN_LIM_ITERATIONS", "Vocoder", "load_audio", "mel_of"]

GRIFFIN_LIM = "griffin-lim"
# Griffin-Lim iterations: 32 is where the spectral convergence of speech levels off (Perraudin
# et al., "A fast Griffin-Lim algorithm", 2013); more costs time for little gain.
GRIFFIN_LIM_ITERATIONS = 32


@dataclass
class Vocoder:
    """Griffin-Lim (`generator` None) or a trained generator, for mels of `data`'s features."""

    name: str  # "griffin-lim" or the vocoder run's directory
    data: DataConfig
    generator: Any = None
    step: Optional[int] = None
    _compiled: Any = None

    def __call__(self, mel) -> np.ndarray:
        """log-mel [frames, n_mels] -> float32 samples [(frames - 1) * hop_length]."""

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
