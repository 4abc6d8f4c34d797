"""`xtts export`: a run's generator as a TensorFlow SavedModel that plain TensorFlow serves.

The SavedModel's `serving_default` signature takes

    text_ids         int32 [T]     the sentence's symbol ids: 1 + the symbol's index in
                                   export.json's `symbols` (0 pads), the text as the run's front
                                   end gives it (`text_frontend`: characters or phonemes)
    language_id      int32 []      index into vocab.json's `languages` (0: the run's first)
    reference_audio  float32 [S]   a few seconds of the voice, mono, at `sample_rate`

(the `speaker` signature takes `speaker_id` int32 [], an index into `speakers`, instead of a
clip: that training speaker's voice, as `--speaker NAME` speaks it) and returns `mel` float32 [frames, n_mels] (natural-log mel), `audio` float32 [samples] within ±0.99, as `synthesize` writes it, and
`stopped` bool [] (false where the length limit, not the model, ended the clip): by the run's vocoder (a vocoder run in RUN/vocoder, or `--vocoder`) when it has one, else Griffin-Lim.
`export.json` beside it holds what a caller without this package needs to turn text into those ids
(front end, cleaners, espeak-ng voice of each language, symbols, languages, speakers), the sample
rate, the vocoder and the signature. Generation bounds are the run's: its measured
speaking rate and `data.max_mel_frames` (the buffer every call generates into, so one graph serves
every sentence).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import tensorflow as tf

from xtts_cli import __version__
from xtts_cli.config.editing import current_umask
from xtts_cli.config.schema import DataConfig, SynthesisConfig
from xtts_cli.errors import XttsError, disk_full
from xtts_cli.run.files import RATE_CEILING_FACTOR, RATE_FLOOR_SHARE, SpeakingRate

if TYPE_CHECKING:
    from xtts_cli.inference.api import Synthesizer

EXPORT_INFO = "export.json"


def export_run(run_dir: Path, out: Path, step: Optional[int] = None, vocoder: Optional[str] = None) -> dict:
    """Write the SavedModel of `run_dir`'s generator (latest checkpoint, or `step`'s) and its
    vocoder (the run's own, `vocoder`'s, or Griffin-Lim) to `out`."""

    from xtts_cli.inference import Synthesizer

    if out.exists() and any(out.iterdir()):
        raise XttsError(f"--out {out} already holds files", hint="pass a new or empty folder")
    tts = Synthesizer.load(run_dir, step, vocoder=vocoder, flags=True)
    table = speaker_table(tts) if speaks_as_speakers(tts) else None
    generator = _generator(
        tts.model, tts.config.data, tts.config.synthesis, tts._rate, tts.vocoder.generator, table, tts.tokenizer
    )
    signatures = {"serving_default": generator.speak}
    if table is not None:
        signatures["speaker"] = generator.speak_as
    if tts.model.paced:
        signatures["paced"] = generator.speak_paced
        if table is not None:
            signatures["speaker_paced"] = generator.speak_as_paced
    # What loading said (a vocoder stopped early, no measured speaking rate) travels with the
    # export: a client reading export.json alone had not heard it.
    info = {**_export_info(tts), "notes": list(tts.notes) + _still_training(run_dir, tts)}
    # Written beside `out` and renamed into place whole: a full disk or Ctrl-C leaves no half
    # SavedModel behind, which the same command, run again, would refuse as a folder holding files.
    # An empty folder the user made (a mount point, a link to a folder, one of their own mode) is
    # kept: written inside it, its files then moved up, export.json last.
    given = out.is_dir()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out if given else out.parent))
    held = _hold(partial)  # a second export to `out` leaves it alone (cli/export.py removes a killed one's)
    try:
        tf.saved_model.save(generator, str(partial), signatures=signatures)
        shutil.copyfile(tts.run_dir / "vocab.json", partial / "vocab.json")
        (partial / EXPORT_INFO).write_text(json.dumps(info, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        if given:
            _move_up(partial, out)
        else:
            partial.chmod(
                0o777 & ~current_umask()
            )  # mkdtemp's folder is the user's alone; `out` is made as mkdir makes one
            _move_into_place(partial, out)
    except BaseException as exc:
        os.close(held)
        shutil.rmtree(partial, ignore_errors=True)
        # Said of --out, not of the hidden folder beside it or the run's vocab.json (shutil's copy names its source).
        full = disk_full(exc, f"the export to {out}") if isinstance(exc, Exception) else None
        if full is not None:
            raise full from None
        raise
    os.close(held)
    return {**info, "vocoder_given": tts.vocoder.name}  # as synthesize names it (export.json's is absolute)


def _still_training(run_dir: Path, tts: Synthesizer) -> list[str]:
    """A note when the run trains as it is exported (a vocoder run's said so; the acoustic run's had not)."""
    from xtts_cli import locks

    training = locks.held_by(run_dir.expanduser())
    if training is None:
        return []
    planned = f" of {tts.config.training.max_steps}" if tts.config.training.max_steps else ""
    return [f"{run_dir} is still training ({training}): its checkpoint of step {tts.step}{planned} is exported"]


def _hold(folder: Path) -> int:
    """A descriptor of `folder` with an exclusive lock on it, held until it is closed (or the process ends)."""
    import fcntl

    handle = os.open(folder, os.O_RDONLY)
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def _move_up(partial: Path, out: Path) -> None:
    """`partial`'s files renamed into `out`, its parent, export.json last (what marks an export
    whole); `out` filled meanwhile by another export is refused, as `_move_into_place` does."""
    if any(item != partial for item in out.iterdir()):
        raise XttsError(
            f"--out {out} already holds files: another export wrote it while this one ran",
            hint="pass a new or empty folder; nothing of this export was left",
        )
    for item in sorted(partial.iterdir(), key=lambda item: item.name == EXPORT_INFO):
        os.replace(item, out / item.name)
    partial.rmdir()


def _move_into_place(partial: Path, out: Path) -> None:
    """`partial` renamed to `out` (an empty folder is replaced); `out` filled meanwhile (a second
    export to it, finished first) is the one-line refusal the start gives, not a traceback."""
    import errno

    try:
        try:
            out.rmdir()  # empty when checked; rename(2) would replace it, but not on every system
        except FileNotFoundError:
            pass  # never made, or removed by another export since the check
        os.replace(partial, out)
    except OSError as error:
        if error.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
        raise XttsError(
            f"--out {out} already holds files: another export wrote it while this one ran",
            hint="pass a new or empty folder; nothing of this export was left",
        ) from None


def speaks_as_speakers(tts: Synthesizer) -> bool:
    """Whether the run keeps each training speaker's centroid (runs since they were kept), which
    the export's `speaker` signature speaks with."""
    model = tts.model
    return getattr(model, "speaker_centroids", None) is not None and model.num_speakers == len(tts.tokenizer.speakers)


def speaker_table(tts: Synthesizer):
    """Each training speaker's voice vector, in the order of `speakers`, as `speak(speaker=NAME)` takes
    it: the checkpoint's centroid, or, for a speaker none of whose clips the run's steps drew (no
    centroid yet), the vector of its clip."""
    import numpy as np

    table = np.array(tts.model.speaker_centroids.numpy(), dtype=np.float32)
    counts = tts.model.speaker_clip_counts.numpy()
    for index, name in enumerate(tts.tokenizer.speakers):
        if counts[index] <= 0:
            try:
                vector = tts.voice(name).vector
            except XttsError:  # no clip of it can be read here: a zero row, said (it had gone unsaid)
                tts.notes.append(
                    f"speaker {name!r} has no voice in the checkpoint (no step drew its clips) and none of its clips "
                    "can be read here: its speaker_id speaks from no voice; mount the dataset where it was trained "
                    "from and export again"
                )
                continue
            if vector is not None:
                table[index] = np.reshape(vector, [-1])
    return table


def _frame_bounds(tokens, rate: Optional[SpeakingRate], buffer: int, speed=None):
    """(min_frames, max_frames) as synthesis allows them: from the speaking rate, else per token;
    scaled by a paced model's `speed` as `_frame_window` scales them."""
    from xtts_cli.speech.synthesis import FRAMES_PER_CHARACTER, MIN_FRAMES_PER_CHARACTER

    count = tokens
    tokens = tf.cast(tokens, tf.float32)
    if rate is None:
        high = tf.minimum(buffer, tf.cast(FRAMES_PER_CHARACTER * tokens, tf.int32) + 20)
        low = tf.cast(MIN_FRAMES_PER_CHARACTER * tokens, tf.int32)
    else:
        high = tf.minimum(buffer, tf.cast(tf.math.ceil(RATE_CEILING_FACTOR * rate.p90 * tokens), tf.int32) + 1)
        low = tf.maximum(1, tf.cast(tf.math.floor(RATE_FLOOR_SHARE * rate.p10 * tokens), tf.int32))
    if speed is not None:  # off the trained pace alone, as `_frame_window` scales them: at 1 the same frames
        scaled = tf.minimum(
            buffer, tf.cast(tf.math.ceil(tf.cast(high, tf.float32) / speed), tf.int32) + (count + 1) // 2
        )
        high = tf.where(tf.equal(speed, 1.0), high, scaled)
        low = tf.where(tf.equal(speed, 1.0), low, tf.cast(tf.cast(low, tf.float32) / speed, tf.int32))
    return tf.minimum(high, low), high


# The signatures' inputs. No autograph in them: generation and Griffin-Lim loop with `tf.while_loop` themselves.
TEXT_IDS = tf.TensorSpec([None], tf.int32, "text_ids")
LANGUAGE_ID = tf.TensorSpec([], tf.int32, "language_id")
REFERENCE_AUDIO = tf.TensorSpec([None], tf.float32, "reference_audio")
SPEAKER_ID = tf.TensorSpec([], tf.int32, "speaker_id")
# A paced model's (model.decoder: duration) pace, as synthesize --speed and the server's speed take it:
# in signatures of their own, so serving_default and speaker keep the inputs every client sends.
SPEED = tf.TensorSpec([], tf.float32, "speed")
# The signature names, and the paced ones beside them.
PACED_SIGNATURES = {"serving_default": "paced", "speaker": "speaker_paced"}


def _generator(
    model, data: DataConfig, settings: SynthesisConfig, rate: Optional[SpeakingRate], vocoder, speakers, tokenizer
):
    """The tf.Module the SavedModel holds: the weights of `model` (and of the `vocoder` network, when
    given), `speak`, the serving signature (text and a reference voice in, mel and audio out: by the
    vocoder, else Griffin-Lim), and `speak_as` the `speakers` (`speaker_table`, or None). An id
    outside `tokenizer`'s symbols, languages or speakers is an InvalidArgumentError naming it: a
    gather would clip it on a GPU, and speak another voice or language without a word."""
    from xtts_cli.data.features import mel_filterbank
    from xtts_cli.speech.synthesis import generation_settings

    buffer = data.max_mel_frames
    filterbank = mel_filterbank(data)

    class Generator(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            # The networks' variables, not the Keras objects: saving a Keras model also traces its
            # own call for a signature nobody serves (a third of the export's time).
            self.weights = list(model.variables) + (list(vocoder.variables) if vocoder is not None else [])

        @tf.function(input_signature=[TEXT_IDS, LANGUAGE_ID, REFERENCE_AUDIO], autograph=False)
        def speak(self, text_ids, language_id, reference_audio):
            return self._spoken(text_ids, language_id, _cloned(model, data, reference_audio), None)

        @tf.function(input_signature=[TEXT_IDS, LANGUAGE_ID, REFERENCE_AUDIO, SPEED], autograph=False)
        def speak_paced(self, text_ids, language_id, reference_audio, speed):
            return self._spoken(text_ids, language_id, _cloned(model, data, reference_audio), speed)

        @tf.function(input_signature=[SPEAKER_ID, TEXT_IDS, LANGUAGE_ID], autograph=False)
        def speak_as(self, speaker_id, text_ids, language_id):
            return self._spoken(text_ids, language_id, _listed(speakers, speaker_id), None)

        @tf.function(input_signature=[SPEAKER_ID, TEXT_IDS, LANGUAGE_ID, SPEED], autograph=False)
        def speak_as_paced(self, speaker_id, text_ids, language_id, speed):
            return self._spoken(text_ids, language_id, _listed(speakers, speaker_id), speed)

        def _spoken(self, text_ids, language_id, voice, speed):
            text_ids, language_id = _checked_text(text_ids, language_id, model.vocab_size, len(tokenizer.languages))
            if speed is not None:
                speed = _checked_speed(speed)
            tokens = tf.shape(text_ids)[0]
            low, high = _frame_bounds(tokens, rate, buffer, speed)
            generated = model.generate(
                text_ids[None],
                tokens[None],
                None,
                None,
                buffer,
                frame_limit=high,
                min_frames=low,
                speaker_vector=voice,
                language_ids=language_id[None],
                speed=1.0 if speed is None else speed,
                **generation_settings(model, settings, rate),
            )
            frames = tf.maximum(2, generated["lengths"][0])
            mel = generated["mel"][0]
            # The generated frames alone, as synthesis hands them over (Griffin-Lim over the whole
            # buffer made other audio where the clip ends, and took 3x as long).
            if vocoder is not None:
                audio = vocoder(mel[None, :frames], training=False)[0]
            else:
                audio = _griffin_lim(mel[:frames], filterbank, data, buffer)
            audio = _within_full_scale(audio[: (frames - 1) * data.hop_length])
            # stopped false: the length limit cut it (a text too long for one generation), as synthesize says
            return {"mel": mel[:frames], "audio": audio, "stopped": generated["stopped"][0]}

    # Saving traces every signature a module holds: what this model cannot serve is left out.
    if not model.paced:  # an autoregressive decoder ends by its stop token: no pace to set
        del Generator.speak_paced, Generator.speak_as_paced
    if speakers is None:  # no centroids (a run from before they were kept): saving had traced it, and failed
        del Generator.speak_as
        if model.paced:
            del Generator.speak_as_paced
    return Generator()


def _cloned(model, data: DataConfig, reference_audio):
    """The speaker vector of `reference_audio`, heard from where its voice starts, as synthesize hears it."""
    from xtts_cli.data.features import LOG_MEL_FLOOR, log_mel

    window = data.reference_frames
    reference = log_mel(_heard(reference_audio, data.sample_rate), data)[:window]
    length = tf.shape(reference)[0]
    reference = tf.pad(reference, [[0, window - length], [0, 0]], constant_values=LOG_MEL_FLOOR)
    return model.speaker_encoder(reference[None], length[None], training=False)


def _listed(speakers, speaker_id):
    """A training speaker's voice (`speaker_table`), as `--speaker NAME` speaks: no clip needed."""
    centroids = tf.constant(speakers)
    speaker_id = _checked(speaker_id, len(speakers), "speaker_id", "an index into export.json's speakers")
    return tf.cast(centroids[speaker_id][None], tf.float32)


def _griffin_lim(mel, filterbank, data: DataConfig, buffer: int):
    from xtts_cli.model.vocoder import griffin_lim
    from xtts_cli.speech.vocoding import GRIFFIN_LIM_ITERATIONS

    return griffin_lim(
        mel,
        filterbank,
        max_frames=buffer,
        n_fft=data.n_fft,
        hop_length=data.hop_length,
        win_length=data.win_length,
        n_iter=GRIFFIN_LIM_ITERATIONS,
    )


def _within_full_scale(audio):
    """`audio` as `synthesize` writes it (`within_full_scale`): scaled to a peak of 0.99 where it would
    clip; early in training Griffin-Lim's peak passes 20."""
    peak = tf.reduce_max(tf.abs(tf.concat([audio, [0.0]], 0)))
    return audio * (0.99 / tf.maximum(peak, 0.99))


def _checked_text(text_ids, language_id, vocab_size: int, languages: int):
    """The text's ids and its language's, once checked: at least one id, each a symbol's."""
    language_id = _checked(language_id, max(1, languages), "language_id", "an index into languages")
    with tf.control_dependencies([tf.debugging.assert_positive(tf.size(text_ids), message="text_ids is empty")]):
        return _checked(text_ids, vocab_size, "text_ids", "1 + a symbol's index in symbols", low=1), language_id


def _heard(reference_audio, sample_rate: int):
    """`reference_audio` from where its voice starts, once it holds a voice to hear: at least
    MIN_CLIP_SECONDS, not silent (as `xtts synthesize --speaker-wav` and the server refuse one, not
    cloned into noise)."""
    from xtts_cli.data.audio_headers import FLOAT_OVER_RANGE
    from xtts_cli.speech.synthesis import MIN_CLIP_SECONDS, SILENT_PEAK, voice_start

    shortest = int(MIN_CLIP_SECONDS * sample_rate)
    # First, so that a NaN is not said to be silence: an infinite sample had made NaN audio, unrefused.
    finite = tf.debugging.assert_equal(
        tf.reduce_all(tf.math.is_finite(reference_audio)),
        True,
        message="reference_audio holds samples that are not numbers (NaN or infinite): give decoded audio in -1..1",
    )
    with tf.control_dependencies([finite]):
        reference_audio = tf.identity(reference_audio)
    checks = [
        tf.debugging.assert_greater_equal(
            tf.size(reference_audio),
            shortest,
            message=f"reference_audio is too short to hear a voice in: give at least {MIN_CLIP_SECONDS:g} s "
            f"({shortest} samples at {sample_rate} Hz)",
        ),
        tf.debugging.assert_greater_equal(
            tf.reduce_max(tf.abs(tf.concat([reference_audio, [0.0]], 0))),
            SILENT_PEAK,
            message="reference_audio is silent (its loudest sample under -80 dBFS): give a few seconds of the voice",
        ),
        tf.debugging.assert_less_equal(  # as synthesize and the server refuse such a clip
            tf.reduce_max(tf.abs(tf.concat([reference_audio, [0.0]], 0))),
            FLOAT_OVER_RANGE,
            message="reference_audio reaches far past full scale (1.0): integers given as floats? Scale it into "
            "-1..1 (a 16-bit clip's values: divide by 32768)",
        ),
    ]
    with tf.control_dependencies(checks):
        # From where its voice starts, as synthesize and the server read a clip: a lead-in of silence
        # passed the check of the whole and was the voice cloned.
        return tf.identity(reference_audio[voice_start(reference_audio, sample_rate) :])


def _checked_speed(speed):
    """`speed`, once it is a pace synthesize takes (SPEEDS: 0.25 to 4); NaN fails both checks."""
    from xtts_cli.errors import SPEEDS

    message = f"speed must be a pace from {SPEEDS[0]:g} to {SPEEDS[1]:g} (1: the pace it was trained at)"
    checks = [
        tf.debugging.assert_equal(speed >= SPEEDS[0], True, message=message),
        tf.debugging.assert_equal(speed <= SPEEDS[1], True, message=message),
    ]
    with tf.control_dependencies(checks):
        return tf.identity(speed)


def _checked(value, high: int, name: str, what: str, low: int = 0):
    """`value`, once every element is in [low, high): what uses it waits for the check."""
    message = f"{name} must be {what}: from {low} to {high - 1}"
    checks = [
        tf.debugging.assert_greater_equal(value, low, message=message),
        tf.debugging.assert_less(value, high, message=message),
    ]
    with tf.control_dependencies(checks):
        return tf.identity(value)


def phonemizer_call() -> dict:
    """How training called phonemizer, for export.json: EspeakBackend(voice, punctuation_marks,
    **backend_settings), then phonemize(texts, separator=Separator(**separator), strip=strip)."""
    from xtts_cli.data.phonemes import BACKEND_SETTINGS, SEPARATOR

    return {"backend": "espeak", "backend_settings": BACKEND_SETTINGS, "separator": SEPARATOR, "strip": True}


def _export_info(tts: Synthesizer) -> dict:
    """export.json's contents: the run, its symbols and languages, the audio settings and the
    signature, for a caller without this package."""
    from xtts_cli.data.phonemes import PUNCTUATION, espeak_language

    data = tts.config.data
    buffer, window = data.max_mel_frames, data.reference_frames
    phonemes = data.text_frontend == "phonemes"
    espeak_voices = {code: espeak_language(code) for code in tts.tokenizer.languages} if phonemes else {}
    return {
        # Absolute: where the export is served, the folder export was run from means nothing.
        "run": os.path.abspath(tts.run_dir),
        "step": tts.step,
        # What wrote the SavedModel: a server on an older TensorFlow may lack an op a newer one used.
        "tensorflow_version": tf.__version__,
        "xtts_version": __version__,
        "sample_rate": data.sample_rate,
        "n_mels": data.n_mels,
        "hop_length": data.hop_length,
        "text_frontend": data.text_frontend,
        "text_cleaners": list(data.text_cleaners),
        # The espeak-ng voice each language is phonemised with (the phonemes front end), with
        # punctuation and stress kept, as `data/phonemes.py` calls it.
        "espeak_voices": espeak_voices,
        "punctuation_marks": PUNCTUATION if phonemes else "",
        "phonemizer": phonemizer_call() if phonemes else {},
        # "words": digits, currency and ordinals read as words (`data/numbers.py`: num2words, Persian's
        # own reader) before the symbols are looked up or espeak-ng phonemises; "characters": the digits
        # are symbols; "espeak-ng": a phonemes run saved before, whose digits espeak-ng reads.
        "numbers": "espeak-ng" if phonemes and tts.tokenizer.numbers != "words" else tts.tokenizer.numbers,
        "symbols": list(tts.tokenizer.characters),
        "symbol_id": "1 + index in symbols",
        "languages": list(tts.tokenizer.languages),
        "speakers": list(tts.tokenizer.speakers),
        "vocoder": tts.vocoder.name if tts.vocoder.generator is None else os.path.abspath(tts.vocoder.name),
        "vocoder_step": tts.vocoder.step,
        "reference_seconds": round(window * data.hop_length / data.sample_rate, 3),
        "max_seconds": round(buffer * data.hop_length / data.sample_rate, 3),
        "signature": {
            "inputs": {
                "text_ids": "int32 [T]",
                "language_id": "int32 []",
                "reference_audio": f"float32 [S] at {data.sample_rate} Hz",
            },
            "outputs": {
                "mel": f"float32 [frames, {data.n_mels}]",
                "audio": "float32 [samples]",
                "stopped": "bool [] (false: the length limit cut the clip)",
            },
        },
        # A training speaker's voice, no clip needed: `signatures["speaker"]` takes these.
        "speaker_signature": {
            "name": "speaker",
            "inputs": {
                "speaker_id": "int32 [] (index in speakers)",
                "text_ids": "int32 [T]",
                "language_id": "int32 []",
            },
        }
        if speaks_as_speakers(tts)
        else None,
        # A paced model's (model.decoder: duration): each signature again, named here, with `speed` too;
        # an autoregressive one's length is its stop token's, and it has none.
        "paced_signatures": {
            "names": {
                name: paced for name, paced in PACED_SIGNATURES.items() if name != "speaker" or speaks_as_speakers(tts)
            },
            "speed": "float32 [] (0.25 to 4; 1: the pace it was trained at, as synthesize --speed)",
        }
        if tts.model.paced
        else None,
    }
