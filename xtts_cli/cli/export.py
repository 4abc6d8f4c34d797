"""`xtts export`: a run's generator as a TensorFlow SavedModel, served without xtts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from xtts_cli.cli.options import (
    CheckpointAlias,
    JsonOption,
    RunDirOption,
    VerboseOption,
    VocoderOption,
    run_dir_given,
)
from xtts_cli.errors import XttsError


def _check_out(out: Path, run_dir: Path, step: Optional[int]) -> None:
    """--out a new or empty folder, and a --step the run keeps: said before TensorFlow loads, not after
    "exporting ...". The hidden `.NAME.partial-*` folder an export killed before its end left in it or
    beside it is removed (the same command, run again, had refused an --out that looked empty); one an
    export still writes is not (export_run holds its lock)."""
    import shutil

    from xtts_cli.run.directory import step_kept

    if step is not None:
        step_kept(run_dir, step)

    left = _stopped_exports(out)
    if out.exists() and (not out.is_dir() or any(item not in left for item in out.iterdir())):
        held = "already holds files" if out.is_dir() else "is a file, not a folder"
        raise XttsError(f"--out {out} {held}", hint="pass a new or empty folder")
    for folder in left:
        shutil.rmtree(folder, ignore_errors=True)
        sys.stderr.write(f"note: removed {folder}, left by an export stopped before its end\n")


def _stopped_exports(out: Path) -> list[Path]:
    """The hidden folders of exports to `out` that no running export holds."""
    import fcntl
    import glob
    import os

    pattern = glob.escape(f".{out.name}.partial-") + "*"
    places = [out, out.parent] if out.is_dir() else [out.parent]
    stopped = []
    found_here = (found for place in places if place.is_dir() for found in place.glob(pattern))
    for found in sorted(found for found in found_here if found.is_dir() and not found.is_symlink()):
        try:
            handle = os.open(found, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # taken: its export has ended, however
            stopped.append(found)
        except BlockingIOError:
            pass  # an export writes it now
        finally:
            os.close(handle)
    return stopped


def export(
    run_dir: RunDirOption = None,
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="New folder for the SavedModel.")] = Path(
        "exported"
    ),
    step: Annotated[
        Optional[int],
        typer.Option(
            "--step", min=0, metavar="N", help="Export this step's checkpoint (one the run keeps).", show_default=False
        ),
    ] = None,
    vocoder: VocoderOption = None,
    json_output: JsonOption = False,
    verbose: VerboseOption = False,
    checkpoint: CheckpointAlias = None,
) -> None:
    """Write the run's generator and vocoder as a TensorFlow SavedModel with a serving signature.

    The `serving_default` signature takes `text_ids` (int32 [T]), `language_id` (int32 []) and
    `reference_audio` (float32 [S], mono at the run's sample rate) and returns `mel` and `audio`
    (by the run's own vocoder when it has one, else Griffin-Lim; --vocoder picks), and `stopped`
    (false where the length limit cut the clip). A run of training speakers has `speaker` too,
    which takes `speaker_id` (int32 [], an index of export.json's `speakers`) in place of
    `reference_audio`; a paced run's (model.decoder: duration) has `paced` and `speaker_paced`,
    which take `speed` (float32 [], 0.25 to 4) as well, as synthesize --speed. `export.json`
    beside it holds what turns text into the ids (front end, cleaners, espeak-ng voices, symbols,
    languages, speakers) and the sample rate; `tf.saved_model.load(DIR).signatures["serving_default"]`
    or TensorFlow Serving calls it, with no xtts installed.

    Examples:

        xtts export -r runs/speak-cpu -o exported/speak-cpu

        xtts export -r runs/voices-cpu --step 2000 -o exported/voices-2000
    """

    run_dir = run_dir_given(
        run_dir, checkpoint, to="export", example="xtts export -r runs/tiny-cpu -o exported/tiny", vocoder=vocoder
    )
    from xtts_cli.cli.output import Phases

    _check_out(out, run_dir, step)
    from xtts_cli.config.editing import can_write

    can_write(out, "--out", folder=True)
    from xtts_cli.inference.export import export_run

    with Phases(enabled=not json_output) as phase:
        phase(f"exporting {run_dir} to {out} (tracing the generator and writing the SavedModel)")
        info = export_run(run_dir, out, step, vocoder=vocoder)
    for note in info["notes"]:  # an unreadable latest checkpoint: which one was exported instead
        sys.stderr.write(f"note: {note}\n")
    report = {
        "out": str(out),
        "run": str(run_dir),  # as given, as synthesize --json says it (export.json keeps it and the vocoder absolute)
        "step": info["step"],
        "sample_rate": info["sample_rate"],
        "vocoder": info["vocoder_given"],  # as given, as the run is
        # As export.json and synthesize --json give them: a script had not learnt of an early vocoder.
        "vocoder_step": info["vocoder_step"],
        "notes": info["notes"],
    }
    if json_output:
        from xtts_cli.cli.output import print_json

        print_json(report)
        return
    speaker = (
        "; speaker: speaker_id, text_ids, language_id -> mel, stopped, audio" if info.get("speaker_signature") else ""
    )
    paced = info.get("paced_signatures")  # a paced model's: each signature again, with speed
    if paced:
        speaker += f"; {' and '.join(paced['names'].values())}: the same and speed"
    sys.stdout.write(
        f"{out}: SavedModel of step {info['step']} of {info['run']}, vocoder {info['vocoder']} (serving_default: "
        f"text_ids, language_id, reference_audio at {info['sample_rate']} Hz -> mel, stopped, audio{speaker}); "
        f"{out / 'export.json'} lists its symbols\n"
    )
