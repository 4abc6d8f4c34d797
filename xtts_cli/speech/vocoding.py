"""Mel frames to audio: Griffin-Lim, or a trained vocoder's generator (`Vocoder`), and the audio
and log-mel of a whole file as the training pipeline computes them.

Loading a vocoder run (`xtts_cli.inference.load_vocoder`) checks that its features are the
acoustic run's before it makes a `Vocoder` of its generator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np
import tensorflow as tf

from xtts_cli.config.schema import DataConfig
from xtts_cli.errors import XttsError
from xtts_cli.run.files import GRIFFIN_LIM

__all__ = [
    "GRIFFIN_LIM",
    "GRIFFIN_LIM_ITERATIONS",
    "ClipReadError",
    "Vocoder",
    "decoded",
    "load_audio",
    "mel_of",
    "vocoded_recording",
]

# A recording longer than this many frames (24 s at 22.05 kHz, hop 256) is vocoded a piece at a time: its
# whole STFT and Griffin-Lim had held about 15 GB an hour of audio (a 90-minute one was killed for memory),
# and Ctrl-C had waited for the whole. Pieces overlap by PIECE_OVERLAP frames each side, the context a
# generator sees past its piece's ends, and are crossfaded over half of it.
PIECE_FRAMES = 2048
PIECE_OVERLAP = 32

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

    def build_graph(self) -> None:
        """A trained generator's graph built now, on two frames of silence (it serves every length):
        the first recording's time, and its real-time factor, then hold no trace."""
        if self.generator is not None and self._compiled is None:
            self(np.full((2, self.data.n_mels), np.log(1e-5), np.float32))

    def __call__(self, mel, before: Optional[np.ndarray] = None) -> np.ndarray:
        """log-mel [frames, n_mels] -> float32 samples [(frames - 1) * hop_length]. `before`: audio already
        made for the first frames (a piece before this one, `vocoded_recording`), whose phase Griffin-Lim
        holds there: pieces of unrelated phase had partly cancelled where they were crossfaded."""

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
        from xtts_cli.model.vocoder import griffin_lim, stft_phase

        data = self.data
        shape = dict(n_fft=data.n_fft, hop_length=data.hop_length, win_length=data.win_length)
        phase = None
        if before is not None and len(before) > data.n_fft:
            # Its last frames see the reflected end of `before`, not the audio after it: left to the search.
            phase = stft_phase(before, **shape)[: -(data.n_fft // data.hop_length) or None]
        audio = griffin_lim(mel, mel_filterbank(data), **shape, n_iter=GRIFFIN_LIM_ITERATIONS, initial_phase=phase)
        return np.asarray(audio, dtype=np.float32)


class ClipReadError(XttsError):
    """A recording that cannot be read as audio: its header (`why`: "cannot be read as audio: ...")
    or, behind a sound header, its frames ("cannot be decoded: ..."), named as `what` names it."""

    def __init__(self, what: str, path: Path, why: str, hint: str) -> None:
        super().__init__(f"{what} {str(path)!r} {why}", hint=hint)
        self.why = why


def decoded(decode, what: str, path: Path):
    """`decode()`, or a ClipReadError naming the file whose frames libsndfile or TensorFlow cannot
    decode (a FLAC or MP3 damaged behind an intact header), not their traceback."""
    try:
        return decode()
    except (RuntimeError, ValueError, tf.errors.OpError) as error:  # soundfile's LibsndfileError is a RuntimeError
        reason = " ".join((getattr(error, "message", None) or str(error) or type(error).__name__).split())[:160]
        raise ClipReadError(
            what,
            path,
            f"cannot be decoded ({reason})",
            hint="it is damaged or cut short behind its header: convert it again (e.g. sox in.flac out.wav) or "
            "leave it out",
        ) from None


def load_audio(path: Path, data: DataConfig, *, what: str = "AUDIO") -> np.ndarray:
    """A whole audio file, mono float32 at data.sample_rate (as the training pipeline decodes it)."""

    from xtts_cli.data.audio import decode_audio
    from xtts_cli.data.audio_headers import AudioHeaderError, read_audio_header

    try:
        header = read_audio_header(str(path))
    except (AudioHeaderError, OSError) as exc:
        detail = exc.detail if isinstance(exc, AudioHeaderError) else exc.strerror
        raise ClipReadError(
            what, path, f"cannot be read as audio: {detail}", hint="pass a WAV, FLAC, OGG or MP3 file"
        ) from None
    audio = decoded(
        lambda: decode_audio(
            tf.io.read_file(str(path)),
            0,
            header.sample_rate,
            header.channels,
            header.data_offset,
            header.num_samples,
            data,
            codecs=(header.codec,),
        ),
        what,
        path,
    )
    return np.asarray(audio, dtype=np.float32)


def mel_of(audio: np.ndarray, data: DataConfig) -> np.ndarray:
    """The log-mel [frames, n_mels] the acoustic model would be trained to predict for `audio`."""
    from xtts_cli.data.features import log_mel

    return np.asarray(log_mel(audio, data))


def mel_piece(audio: np.ndarray, data: DataConfig, first: int, end: int) -> np.ndarray:
    """Frames [first, end) of `mel_of(audio, data)`, equal to them (to float rounding), computed from the samples they see
    alone: each frame's window, centred on its first sample, lies in the samples taken (the
    recording's reflected ends where the piece reaches them, as the whole's are)."""
    hop = data.hop_length
    margin = -(-(data.n_fft // 2) // hop) + 1  # frames whose window reaches past a frame's own samples
    low = max(0, first - margin) * hop
    high = min(len(audio), (end - 1 + margin) * hop + 1)
    mel = mel_of(audio[low:high], data)
    return mel[first - low // hop : end - low // hop]


def vocoded_recording(
    vocoder: Callable[..., np.ndarray],
    audio: np.ndarray,
    data: DataConfig,
    piece: int = PIECE_FRAMES,
    overlap: int = PIECE_OVERLAP,
) -> np.ndarray:
    """`audio`'s mel turned back into audio by `vocoder`: float32 [(frames - 1) * hop_length], a piece of
    `piece` frames at a time for a long recording (see PIECE_FRAMES), crossfaded where they meet."""
    from xtts_cli.data.features import mel_frames

    hop, frames = data.hop_length, int(mel_frames(len(audio), data.hop_length))
    if frames <= piece + 2 * overlap:
        return vocoder(mel_of(audio, data))
    total, fade = (frames - 1) * hop, overlap * hop // 2
    out = np.zeros(total, np.float32)
    wave, made = np.zeros(0, np.float32), 0  # the piece before: its samples from `made` * hop
    starts = list(range(0, frames - 1, piece))
    if frames - 1 - starts[-1] < overlap:  # a last piece shorter than its crossfade: the one before takes it
        starts.pop()
    for start, after in zip(starts, [*starts[1:], frames - 1]):
        first, end = max(0, start - overlap), min(frames, after + overlap + 1)
        before = wave[(first - made) * hop :] if start else None  # its audio over this piece's first frames
        wave, made = vocoder(mel_piece(audio, data, first, end), before), first  # [first * hop, (end - 1) * hop)
        left, right = start * hop, after * hop  # the samples this piece owns
        low, high = max(0, left - fade), min(total, right + fade)
        weight = np.ones(high - low, np.float32)
        if left > 0:  # rises over the previous piece's fall: the two weights sum to 1
            weight[: 2 * fade] = (np.arange(2 * fade, dtype=np.float32) + 0.5) / (2 * fade)
        if right < total:
            weight[-2 * fade :] *= 1 - (np.arange(2 * fade, dtype=np.float32) + 0.5) / (2 * fade)
        out[low:high] += weight * wave[low - first * hop : high - first * hop]
    return out
