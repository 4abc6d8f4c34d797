#!/usr/bin/env python3
"""Write tests/data/librosa_references.npz: librosa's answers the feature and trim tests check ours against.

librosa is the tool users check their features with, so it is the tests' oracle; its answers are
stored rather than computed in every test process. Installed, librosa pulls in scikit-learn, which
Keras then imports with TensorFlow: 1.5 s of CPU in every process of the suite (2-core Xeon).

- `filterbank_slaney`, `filterbank_htk`: `librosa.filters.mel(...).T` at 16 kHz, n_fft 512, 64 mels,
  30-7600 Hz;
- `log_mel_slaney`, `log_mel_htk`: the log-mel of `dataset/wavs/persian.wav` at the default
  `DataConfig`, each filterbank;
- `log_mel_short`: its first 12,345 samples with n_fft 1024, win_length 800, hop 200, no fmax;
- `stft_1024`, `stft_800`: `|librosa.stft|` (centred, reflect-padded; frames down) of a quarter
  second of `speech_like` below, n_fft 1024, hop 256, each window length;
- `trim_bounds`: `librosa.effects.trim` of `dataset/wavs/pcm16.wav` padded with 5,000 and 7,000
  zeros plus seeded noise (`trim_input` below, which the test builds the same way).

Needs librosa (`pip install librosa`); deterministic. About 240 kB.

Usage: python scripts/make_librosa_references.py [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import soundfile

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from librosa_references import (  # noqa: E402
    FILTERBANK_SETTINGS,
    SHORT_SETTINGS,
    STFT_HOP,
    STFT_N_FFT,
    STFT_SECONDS,
    STFT_WINDOWS,
    speech_like,
    trim_input,
)

from xtts_cli.config.schema import DataConfig  # noqa: E402
from xtts_cli.data.audio import TRIM_TOP_DB  # noqa: E402

WAVS = ROOT / "tests" / "data" / "dataset" / "wavs"


def log_mel(audio: np.ndarray, data: DataConfig) -> np.ndarray:
    import librosa

    htk = data.mel_filterbank == "htk"
    mel = librosa.feature.melspectrogram(
        y=audio,
        sr=data.sample_rate,
        n_fft=data.n_fft,
        hop_length=data.hop_length,
        win_length=data.win_length,
        window="hann",
        center=True,
        pad_mode="reflect",
        power=1.0,
        n_mels=data.n_mels,
        fmin=data.fmin,
        fmax=data.fmax,
        htk=htk,
        norm=None if htk else "slaney",
    )
    return np.log(np.maximum(mel, 1e-5)).T.astype(np.float32)


def main(argv: list[str] | None = None) -> int:
    import librosa

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "librosa_references.npz")
    args = parser.parse_args(argv)
    arrays: dict[str, np.ndarray] = {}
    for kind in ("slaney", "htk"):
        data = DataConfig(mel_filterbank=kind, **FILTERBANK_SETTINGS)
        arrays[f"filterbank_{kind}"] = librosa.filters.mel(
            sr=data.sample_rate,
            n_fft=data.n_fft,
            n_mels=data.n_mels,
            fmin=data.fmin,
            fmax=data.fmax,
            htk=kind == "htk",
            norm="slaney" if kind == "slaney" else None,
        ).T.astype(np.float32)
    clip, rate = soundfile.read(WAVS / "persian.wav", dtype="float32")
    assert rate == DataConfig().sample_rate
    for kind in ("slaney", "htk"):
        arrays[f"log_mel_{kind}"] = log_mel(clip, DataConfig(mel_filterbank=kind))
    arrays["log_mel_short"] = log_mel(clip[:12345], DataConfig(**SHORT_SETTINGS))
    signal = speech_like(STFT_SECONDS)
    for window in STFT_WINDOWS:
        spectrum = librosa.stft(
            signal, n_fft=STFT_N_FFT, hop_length=STFT_HOP, win_length=window, center=True, pad_mode="reflect"
        )
        arrays[f"stft_{window}"] = np.abs(spectrum).T.astype(np.float32)
    pcm16, _ = soundfile.read(WAVS / "pcm16.wav", dtype="float32")
    data = DataConfig()
    _, bounds = librosa.effects.trim(
        trim_input(pcm16), top_db=TRIM_TOP_DB, frame_length=data.n_fft, hop_length=data.hop_length
    )
    arrays["trim_bounds"] = np.asarray(bounds, np.int64)
    np.savez_compressed(args.out, **arrays)
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} kB; librosa {librosa.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
