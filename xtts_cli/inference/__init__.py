"""Speaking with a trained run, from Python: load it once, speak many sentences.

    from xtts_cli.inference import Synthesizer

    tts = Synthesizer.load("runs/speak-cpu")
    speech = tts.speak("A sentence it never heard.")        # a Speech: waveform, mel, how it ended
    speech.save("hello.wav")
    for index, speech in enumerate(tts.speak_many(["One.", "Two."], speaker="alice")):
        speech.save(f"out/{index}.wav")

    tts = Synthesizer.load("runs/speak-cpu", vocoder="runs/vocoder-cpu")  # a trained vocoder
    audio = load_vocoder("runs/vocoder-cpu", tts.config.data)(mel)        # any log-mel to samples

TensorFlow is imported by `Synthesizer.load`, not by this import.
"""

from xtts_cli.inference.api import Synthesizer
from xtts_cli.inference.loading import load_vocoder
from xtts_cli.speech.synthesis import Speech, Voice
from xtts_cli.speech.vocoding import Vocoder

__all__ = ["Speech", "Synthesizer", "Vocoder", "Voice", "load_vocoder"]
