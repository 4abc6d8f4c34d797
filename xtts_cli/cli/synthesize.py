"""`xtts synthesize`: speak a sentence with a trained run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from xtts_cli.cli.options import JsonOption, VerboseOption, given_once


def synthesize(
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The sentence to speak.")],
    run_dir: Annotated[
        Optional[Path],
        typer.Option(
            "--run-dir",
            "-r",
            metavar="DIR",
            help="Run directory of an `xtts train` run (its latest checkpoint is used).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", metavar="FILE", help="WAV file to write.")] = Path("speech.wav"),
    speaker_wav: Annotated[
        Optional[Path],
        typer.Option(
            "--speaker-wav",
            metavar="FILE",
            help="Reference audio of the voice to use. Default: the run's reference clip.",
            show_default=False,
        ),
    ] = None,
    speaker: Annotated[
        Optional[str],
        typer.Option(
            "--speaker",
            metavar="NAME",
            help="A speaker of the run's training data (see speakers.json in the run): its conditioning "
            "averaged over its clips, kept in the checkpoint.",
            show_default=False,
        ),
    ] = None,
    language: Annotated[
        Optional[str],
        typer.Option(
            "--language",
            metavar="CODE",
            help="Language of the text, one the run trained on (an espeak-ng code: en, fa, ...). "
            "Default: the run's first.",
            show_default=False,
        ),
    ] = None,
    max_frames: Annotated[
        Optional[int],
        typer.Option(
            "--max-frames", min=2, metavar="N", help="Upper bound on generated mel frames.", show_default=False
        ),
    ] = None,
    json_output: JsonOption = False,
    verbose: VerboseOption = False,
    checkpoint: Annotated[Optional[Path], typer.Option("--checkpoint", hidden=True)] = None,
) -> None:
    """Generate speech with a trained model (mel frames + Griffin-Lim), on the CPU or a GPU.

    Reports how long the clip is, what ended it (the stop token or, with `model.decoder:
    duration`, the predicted durations; the length limit when neither did) and the alignment
    score of the generation: the focus rate of its cross-attention, near 1 when each step reads
    one place in the text, near 0 when the model has not learnt to align (1 by construction with
    the duration decoder, whose alignment is its durations).

    Examples:

        xtts synthesize "The cat sat on the mat." -r runs/tiny-cpu -o hello.wav

        xtts synthesize "سلام" -r runs/voices --language fa --speaker NAME

        xtts synthesize "A voice it never heard." -r runs/voices --speaker-wav clip.wav
    """

    from xtts_cli.errors import XttsError
    from xtts_cli.training.synthesis import load_run, load_speaking_rate, resolve_voice, synthesize_speech, wav_bytes

    if not text.strip():
        raise XttsError(
            "the text to synthesise is empty", hint='pass a sentence, e.g. xtts synthesize "Hello there." ...'
        )
    if speaker is not None and speaker_wav is not None:
        raise XttsError("--speaker and --speaker-wav both name a voice", hint="pass one of them")
    run_dir = given_once("the run directory", run_dir=run_dir, checkpoint=checkpoint)
    if run_dir is None:
        raise XttsError(
            "no run to speak with: pass --run-dir DIR (-r), the folder `xtts train` wrote",
            hint='e.g. xtts synthesize "Hello." -r runs/tiny-cpu',
        )
    from xtts_cli.cli.output import Phases

    with Phases(enabled=not json_output) as phase:
        phase(f"loading {run_dir} (TensorFlow, the model and its latest checkpoint)")
        config, tokenizer, model, step, run = load_run(run_dir)
        tokenizer.language_index(language)  # before any audio is read: an error naming the run's languages
        voice = resolve_voice(run.path, config.data, tokenizer, model, speaker=speaker, speaker_wav=speaker_wav)
        rate = load_speaking_rate(run.path)
        phase("speaking (the first sentence of a process also builds the generation graph)")
        speech = synthesize_speech(
            model,
            tokenizer,
            text,
            voice,
            config.data,
            max_frames,
            rate=rate,
            settings=config.synthesis,
            language=language,
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    temp = out.with_name(f".{out.name}.tmp")
    temp.write_bytes(wav_bytes(speech.waveform, config.data.sample_rate))
    temp.replace(out)
    seconds = len(speech.waveform) / config.data.sample_rate
    frames_per_second = config.data.sample_rate / config.data.hop_length
    low, high = (value / frames_per_second for value in speech.frame_window)
    report = {
        "out": str(out),
        "seconds": round(seconds, 3),
        "frames": speech.frames,
        "step": step,
        "run": str(run.path),
        "ended_by": speech.ended_by,
        "window_seconds": [round(low, 3), round(high, 3)],
        "alignment_score": round(speech.alignment_score, 4),
        "speaker": speaker,
        "language": language or (tokenizer.languages[0] if tokenizer.languages else None),
        "voice": "centroid" if voice.speaker is not None else ("clip" if speaker or speaker_wav else "reference"),
    }
    if json_output:
        from xtts_cli.cli.output import print_json

        print_json(report)
        return
    sys.stdout.write(f"{out}: {seconds:.2f} s of audio from step {step} of {run.path}\n")
    window = f"{low:.2f}-{high:.2f} s"
    if speech.ended_by == "length limit" and speech.decoder == "duration":
        how = f"the length limit ({window} allowed): the predicted durations ran longer"
    elif speech.ended_by == "length limit":
        how = f"the length limit ({window} allowed): the stop token never fired"
    elif speech.ended_by == "durations":
        how = "the predicted durations (the duration decoder has no stop token)"
    elif speech.ended_by == "stop token at the floor":
        how = (
            f"the stop token, at the floor of the window the training data's speaking rate allows ({window}): it "
            "fired earlier, as it does until the model has learnt to align with the text"
        )
    else:
        how = f"the stop token, within the window the training data's speaking rate allows ({window})"
    sys.stdout.write(f"ended by: {how}\n")
    sys.stdout.write(
        f"alignment score: {speech.alignment_score:.3f} (focus rate of the cross-attention; "
        "near 1 when each step reads one place in the text)\n"
    )
