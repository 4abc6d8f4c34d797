"""The codecs xtts reads, without TensorFlow: the names the scan gives a clip's codec, and what decodes
the compressed ones on this machine. The scan, the plan, `xtts validate` and `xtts diagnose` read
them without loading TensorFlow; `audio.py` decodes them in the graph."""

from __future__ import annotations

import functools
import threading

CODECS = (
    "wav_pcm16",
    "wav_pcm8",
    "wav_pcm24",
    "wav_pcm32",
    "wav_float32",
    "flac16",
    "flac24",
    "vorbis",
    "mp3",
)

COMPRESSED_CODECS = ("flac16", "flac24", "vorbis", "mp3")
DECODERS = ("soundfile", "tensorflow-io")


@functools.lru_cache(maxsize=1)
def compressed_decoder() -> str:
    """What decodes FLAC, Ogg and MP3 here: `tensorflow-io` when the `[tfio]` extra is installed and
    its kernels run with this TensorFlow (in the graph: also on tf.data service workers), else
    `soundfile`. A tensorflow-io built for another TensorFlow imports with a warning and fails at
    its first op (an undefined symbol), so the probe loads an op."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        version("tensorflow-io")
    except PackageNotFoundError:
        return "soundfile"
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its "unable to open file: libtensorflow_io.so" warning
            from tensorflow_io.python.ops import core_ops

            core_ops.io_audio_decode_flac  # noqa: B018  (a LazyLoader: the first attribute loads the kernels)
    except Exception:  # ImportError, NotFoundError, NotImplementedError: the kernels do not load
        return "soundfile"
    return "tensorflow-io"


# Clips whose decoding failed inside the pipeline (corrupt frames in a container whose header the
# scan read): path -> libsndfile's reason. The pipeline skips them (`ignore_errors`), whose own
# warning TensorFlow's quiet log hides; training names them from here.
_DECODE_FAILURES: dict[str, str] = {}
_DECODE_FAILURES_LOCK = threading.Lock()


def note_decode_failure(path: str, reason: str) -> None:
    with _DECODE_FAILURES_LOCK:
        _DECODE_FAILURES.setdefault(path, " ".join(reason.split()))


def decode_failures() -> dict[str, str]:
    """Every clip that failed to decode in this process so far, with its reason."""
    with _DECODE_FAILURES_LOCK:
        return dict(_DECODE_FAILURES)
