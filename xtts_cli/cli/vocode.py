"""`xtts vocode`: a recording's own mel back to audio, by a vocoder run or Griffin-Lim."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from xtts_cli.cli.options import ConfigOption, JsonOption, VerboseOption, VocoderOption


def vocode(
    audio: Annotated[Path, typer.Argument(metavar="AUDIO", help="A recording (WAV, FLAC, OGG or MP3).")],
    vocoder: VocoderOption = None,
    out: Annotated[Path, typer.Option("--out", "-o", metavar="WAV", help="WAV file to write.")] = Path("vocoded.wav"),
    config: ConfigOption = None,
    json_output: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Copy-synthesis: compute AUDIO's mel as training does, then turn it back into audio.

    What you hear is the vocoder's ceiling: an acoustic model that predicted this mel exactly
    would sound like this. With a vocoder run its own data section gives the features; with
    griffin-lim (the default) the --config's does.

    Examples:

        xtts vocode clip.wav --vocoder runs/vocoder-cpu --out vocoded.wav

        xtts vocode clip.wav --vocoder griffin-lim -c speak-cpu --out griffin-lim.wav
    """
    from xtts_cli.cli.output import Phases
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.speech.vocoding import GRIFFIN_LIM, Vocoder, load_audio, mel_of

    spec = vocoder or GRIFFIN_LIM
    with Phases(enabled=not json_output) as phase:
        phase(f"loading {spec} (TensorFlow and the vocoder)")
        if spec == GRIFFIN_LIM:
            chosen = Vocoder(GRIFFIN_LIM, resolve_config(config).config.data)
        else:
            from xtts_cli.inference.checkpoints import load_vocoder, read_run

            chosen = load_vocoder(spec, read_run(Path(spec))[0].data, acoustic_run="itself")
        data = chosen.data
        phase(f"vocoding {audio}")
        samples = load_audio(audio, data, what="AUDIO")
        began = time.perf_counter()
        waveform = chosen(mel_of(samples, data))
        seconds = time.perf_counter() - began
    from xtts_cli.speech.synthesis import write_wav

    write_wav(out, waveform, data.sample_rate)
    duration = len(waveform) / data.sample_rate
    report = {
        "out": str(out),
        "seconds": round(duration, 3),
        "vocoder": chosen.name,
        "step": chosen.step,
        "real_time_factor": round(seconds / max(duration, 1e-9), 4),
    }
    if json_output:
        from xtts_cli.cli.output import print_json

        print_json(report)
        return
    step = f" (step {chosen.step})" if chosen.step is not None else ""
    sys.stdout.write(
        f"{out}: {duration:.2f} s of audio by {chosen.name}{step}, in {seconds:.2f} s "
        f"(real-time factor {report['real_time_factor']:.3f})\n"
    )
