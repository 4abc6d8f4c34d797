"""Speaking with a trained run, from Python: load it once, speak many sentences.

    from xtts_cli.inference import Synthesizer

    tts = Synthesizer.load("runs/speak-cpu")
    speech = tts.speak("A sentence it never heard.")        # a Speech: waveform, mel, how it ended
    speech.save("hello.wav")
    for index, speech in enumerate(tts.speak_many(["One.", "Two."], speaker="alice")):
        speech.save(f"out/{index}.wav")

    tts = Synthesizer.load("runs/speak-cpu", vocoder="runs/vocoder-cpu")  # a trained vocoder
    audio = load_vocoder("runs/vocoder-cpu", tts.config.data)(mel)        # any log-mel to samples

This import loads TensorFlow, its start-up lines quieted as the command line quiets them (unless
TF_CPP_MIN_LOG_LEVEL is set, or XTTS_DEBUG=1). Errors a caller can fix are `XttsError` (one line,
`.lines`, and `.hint`; `UnknownCharactersError` for text the run cannot read); `TypeError` for an
argument of the wrong type. What the command line prints beside a result (text left out or cut,
what a voice's clip lacked) is warned as an `XttsNote` and kept in `Speech.notes`.
"""

from xtts_cli.quiet import quiet_tensorflow_logs

quiet_tensorflow_logs()  # before TensorFlow loads with the modules below

from xtts_cli.data.text import UnknownCharactersError  # noqa: E402
from xtts_cli.errors import XttsError, XttsNote  # noqa: E402
from xtts_cli.inference.api import Synthesizer  # noqa: E402
from xtts_cli.inference.loading import load_vocoder  # noqa: E402
from xtts_cli.speech.synthesis import Speech, Voice  # noqa: E402
from xtts_cli.speech.vocoding import Vocoder  # noqa: E402

__all__ = [
    "Speech",
    "Synthesizer",
    "UnknownCharactersError",
    "Vocoder",
    "Voice",
    "XttsError",
    "XttsNote",
    "load_vocoder",
]
