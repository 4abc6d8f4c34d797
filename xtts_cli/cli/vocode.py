"""`xtts vocode`: recordings' own mels back to audio, by a vocoder run or Griffin-Lim, loaded once."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from xtts_cli.cli.options import (
    ConfigOption,
    JsonOption,
    SetOption,
    VerboseOption,
    files_can_go,
    keeps_the_inputs,
    say_written_over,
    wav_out,
)
from xtts_cli.errors import XttsError


def recordings(paths: list[Path]) -> tuple[list[Path], dict[Path, str], dict[Path, str]]:
    """The files `paths` name, a folder standing for the recordings in it (sorted), every one checked
    before anything loads: all of them in order; those of a folder that cannot be vocoded, each with
    why; and the folders below those given, each with why it is passed over. A file named itself that cannot be vocoded is
    refused: the user asked for it."""
    from xtts_cli.data.audio_headers import SUPPORTED_EXTENSIONS, UNREAD_EXTENSIONS

    audio = (*SUPPORTED_EXTENSIONS, *UNREAD_EXTENSIONS)  # one in a format not read is named with the skipped
    found: list[Path] = []
    in_folders: set[Path] = set()
    below: dict[Path, str] = {}  # folders inside a folder given, with recordings of their own: not read
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in audio)
            deeper = _folders_of_recordings(path)
            if not inside:
                raise XttsError(
                    f"AUDIO {str(path)!r}: a folder with no recording in it",
                    hint=f"its recordings are in {deeper[0]}: pass that folder"
                    if deeper
                    else f"pass a folder of {', '.join(SUPPORTED_EXTENSIONS)} files, or the files themselves",
                )
            found += inside
            in_folders.update(inside)
            below |= {
                folder: f"a folder below {path} (the folder's own recordings are read; pass it too)"
                for folder in deeper
            }
        elif path.is_file():
            found.append(path)
        else:
            raise XttsError(f"AUDIO {str(path)!r}: no such file or folder", hint="pass a recording or a folder of them")
    problems = _unreadable(found)
    named = [f"{path}: {why}" for path, why in problems.items() if path not in in_folders]
    if named or len(problems) == len(found):
        _refuse(named or [f"{path}: {why}" for path, why in problems.items()])
    return found, problems, below


def _folders_of_recordings(folder: Path) -> list[Path]:
    """The folders right inside `folder` that hold recordings (a corpus root's `wavs/`), sorted."""
    from xtts_cli.data.audio_headers import SUPPORTED_EXTENSIONS

    return sorted(
        sub
        for sub in folder.iterdir()
        if sub.is_dir() and any(p.suffix.lower() in SUPPORTED_EXTENSIONS and p.is_file() for p in sub.iterdir())
    )


# Shorter than this, a recording is less than a couple of mel frames' windows: nothing to hear.
MIN_SECONDS = 0.1


def _unreadable(found: list[Path]) -> dict[Path, str]:
    """Every recording's header read before the vocoder loads: those that cannot be vocoded (empty,
    not audio, cut short, too short to hear), each with why."""
    from xtts_cli.data.audio_headers import AudioHeaderError, read_audio_header

    problems: dict[Path, str] = {}
    for path in found:
        try:
            header = read_audio_header(str(path))
        except (AudioHeaderError, OSError) as exc:
            problems[path] = exc.detail if isinstance(exc, AudioHeaderError) else str(exc.strerror)
            continue
        if header.duration < MIN_SECONDS:
            problems[path] = f"{header.duration:.3f} s, too short to vocode (under {MIN_SECONDS:g} s)"
    return problems


def _refuse(problems: list[str]) -> None:
    """The recordings that cannot be vocoded, named together, not one at a time half-way through."""
    more = f" (and {len(problems) - 1} more: {'; '.join(problems[1:4])}{' ...' if len(problems) > 4 else ''})"
    raise XttsError(
        f"AUDIO {problems[0]}" + (more if len(problems) > 1 else ""),
        hint="leave them out, or pass WAV, FLAC, OGG or MP3 recordings of speech; nothing was vocoded",
    )


def destinations(found: list[Path], out: Optional[Path], out_dir: Optional[Path]) -> list[Path]:
    """Where each recording's audio goes: --out for one, <stem>.wav in --out-dir for any number."""
    if out is not None and out_dir is not None:
        raise XttsError("--out and --out-dir both given", hint="--out names one file; --out-dir a folder for several")
    if out is not None and str(out) == "-":
        raise XttsError("--out -: vocode writes its audio to a file, not stdout", hint="pass --out FILE.wav")
    if out_dir is None:
        if len(found) > 1:
            raise XttsError(
                f"{len(found)} recordings and one --out file"
                if out is not None
                else f"{len(found)} recordings and no --out-dir",
                hint="pass --out-dir DIR: each recording's audio is written there under its own name",
            )
        targets = [out or Path("vocoded.wav")]
    else:
        targets = [out_dir / f"{path.stem}.wav" for path in found]
    bound: dict[Path, list[Path]] = {}
    for path, target in zip(found, targets):
        bound.setdefault(target, []).append(path)
    clashes = [(target, paths) for target, paths in bound.items() if len(paths) > 1]
    if clashes:  # every one at once: a folder of clip.wav and clip.flac had been mended one run at a time
        target, paths = clashes[0]
        # Each recording named: a third one bound for the same name had been left out of the line.
        more = "".join(
            f"; {_listed([path.name for path in others])} to {other.name}" for other, others in clashes[1:4]
        ) + (f"; and {len(clashes) - 4} more names" if len(clashes) > 4 else "")
        raise XttsError(
            f"{_listed([str(path) for path in paths])} would {'both' if len(paths) == 2 else 'all'} be written to "
            f"{target}{more}",
            hint=_apart(paths[0], paths[1]),
        )
    flag = "--out-dir" if out_dir is not None else "--out"
    from xtts_cli.config.editing import can_write

    can_write(out_dir if out_dir is not None else targets[0], flag, folder=out_dir is not None, name="vocoded.wav")
    if out_dir is None:
        wav_out(targets[0])
    else:
        files_can_go(out_dir, [target.name for target in targets])
    keeps_the_inputs({path: "the recording" for path in found}, targets, flag, "its vocoded copy")
    return targets


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _apart(first: Path, second: Path) -> str:
    """How two recordings bound for one --out-dir name come apart: one named twice is passed once;
    one folder's clip.wav and clip.flac only by a rename."""
    if first.resolve() == second.resolve():
        return f"{second} is passed twice (named twice, or named and in a folder passed too): pass it once"
    if first.parent.resolve() == second.parent.resolve():
        return "rename one: they are in one folder"
    return "vocode them into separate --out-dir folders, or rename one"


def vocode(
    audio: Annotated[
        list[Path], typer.Argument(metavar="AUDIO...", help="Recordings (WAV, FLAC, OGG or MP3), or folders of them.")
    ],
    vocoder: Annotated[
        Optional[str],
        typer.Option(
            "--vocoder",
            metavar="RUN_DIR|griffin-lim",
            help="A vocoder run (`model.kind: vocoder`) or griffin-lim (the default).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Optional[Path], typer.Option("--out", "-o", metavar="WAV", help="WAV file to write (one recording).")
    ] = None,
    out_dir: Annotated[
        Optional[Path],
        typer.Option(
            "--out-dir",
            metavar="DIR",
            help="Folder to write each recording's audio into, as its own name with .wav (clip.flac: clip.wav).",
        ),
    ] = None,
    config: ConfigOption = None,
    set_values: SetOption = None,
    json_output: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Copy-synthesis: compute each recording's mel as training does, then turn it back into audio.

    What you hear is the vocoder's ceiling: an acoustic model that predicted this mel exactly
    would sound like this. With a vocoder run its own data section gives the features; with
    griffin-lim (the default) the --config's does. The vocoder loads once for every recording.
    In a folder, recordings that cannot be read are skipped and named (with --json, each with
    `out` null and why in `skipped`); a file named itself is refused, and nothing is vocoded.

    Examples:

        xtts vocode clip.wav --vocoder runs/vocoder-cpu --out vocoded.wav

        xtts vocode held-out/ --vocoder runs/vocoder-cpu --out-dir vocoded/

        xtts vocode clip.wav --vocoder griffin-lim -c speak-cpu --out griffin-lim.wav
    """
    every, skipped, below = recordings(audio)  # every path checked before TensorFlow loads
    found = [path for path in every if path not in skipped]
    targets = destinations(found, out, out_dir)
    for path, why in (skipped | below).items():
        sys.stderr.write(f"note: skipped {path}: {why}\n")
    from xtts_cli.cli.output import Phases
    from xtts_cli.run.files import GRIFFIN_LIM

    spec = GRIFFIN_LIM if vocoder is None else vocoder  # "" is refused when it loads, not read as Griffin-Lim
    _check_vocoder(spec, config, set_values or [])  # before TensorFlow loads (seconds), not after
    # Those skipped as their headers were read name an earlier call's file too (left as it was, said).
    unread = {str(path): out_dir / f"{path.stem}.wav" for path in skipped} if out_dir is not None else {}
    unread = {path: target for path, target in unread.items() if target not in targets}
    earlier = [target for target in [*targets, *unread.values()] if target.is_file()]
    with Phases(enabled=not json_output) as phase:
        phase(f"loading {spec} (TensorFlow and the vocoder)")
        loaded: list[str] = []
        chosen = _load_vocoder(spec, config, set_values or [], loaded)
        reports = _vocode_all(
            chosen, found, targets, out_dir, named=set(audio), phase=phase, skipped=skipped, order=every
        )
    _say_earlier_files(earlier, reports, out_dir, {**dict(zip(map(str, found), targets)), **unread})
    single = len(reports) == 1 and out_dir is None
    # A folder passed over is in the JSON list too, as a recording left out is (it was on stderr alone).
    _say(chosen, reports + [_left_out(chosen, path, why) for path, why in below.items()], loaded, json_output, single)


def _say_earlier_files(earlier: list[Path], reports: list[dict], out_dir, target_of: dict[str, Path]) -> None:
    """Once written: the files of an earlier call written over, and those a recording skipped left as they
    were (said before the work, as synthesize says it, a failed call had "written over" what it kept, and
    a skipped recording's stale file had been named among those replaced)."""
    written = {report["out"] for report in reports if report["out"] is not None}
    over = [target for target in earlier if str(target) in written]
    for report in reports:  # in --json too, as synthesize --text-file's written_over (stderr alone had said it)
        report["written_over"] = report["out"] in {str(target) for target in over}
    if out_dir is not None:
        say_written_over(out_dir, over, were="were")
    elif over:
        sys.stderr.write(f"note: {over[0]} was written over\n")
    kept = [target_of[r["audio"]] for r in reports if r["skipped"] is not None and r["audio"] in target_of]
    stale = [target.name for target in kept if target in earlier]
    if stale:
        shown = ", ".join(stale[:3]) + (", ..." if len(stale) > 3 else "")
        sys.stderr.write(
            f"note: {len(stale)} file(s) in {out_dir} are an earlier call's, left as they were: their recordings "
            f"were skipped ({shown})\n"
        )


def _say(chosen, reports: list[dict], loaded: list[str], json_output: bool, single: bool) -> None:
    """Each clip's report (a single one as one JSON object), the vocoder's own notes (`loaded`) with
    each clip's in JSON, said once above the clips in text."""
    for report in reports:
        report["notes"][:0] = loaded
    if json_output:
        from xtts_cli.cli.output import print_json

        print_json(reports[0] if single else reports)
        return
    step = f" (step {chosen.step})" if chosen.step is not None else ""
    for note in loaded:
        sys.stderr.write(f"note: {note}\n")
    for report in reports:
        if report["skipped"] is not None:  # named on stderr as it was left out
            continue
        sys.stdout.write(
            f"{report['out']}: {report['seconds']:.2f} s of audio by {chosen.name}{step} "
            f"(real-time factor {report['real_time_factor']:.3f})"
            + "".join(f"; {note}" for note in report["notes"][len(loaded) :])
            + "\n"
        )


def _vocode_all(
    chosen,
    found: list[Path],
    targets: list[Path],
    out_dir,
    *,
    named: set[Path],
    phase,
    skipped: dict[Path, str],
    order: list[Path],
) -> list[dict]:
    """Each recording in turn; one of a folder whose frames cannot be decoded (damaged behind its
    header, which alone was read before) is skipped and named, as those with a bad header are.
    The report lists every recording in `order`, those left out with why (`skipped`)."""
    from xtts_cli.errors import Terminated
    from xtts_cli.speech.vocoding import ClipReadError
    from xtts_cli.training.signals import HeldCtrlC

    reports: list[dict[str, Any]] = []
    left_out = [_left_out(chosen, path, why) for path, why in skipped.items()]
    # A Ctrl-C raised inside TensorFlow's eager ops had left its heap corrupt: glibc aborted the
    # process after it said "interrupted" ("corrupted size vs. prev_size"). Held until a file is written.
    with HeldCtrlC() as ctrl_c:
        for index, (path, target) in enumerate(zip(found, targets)):
            phase(f"vocoding {path}" + (f" ({index + 1} of {len(found)})" if len(found) > 1 else ""))
            try:
                ctrl_c.check()
                reports.append(_vocode_one(chosen, path, target, out_dir))
                ctrl_c.check()
            # Ctrl-C or SIGTERM; each file is written whole: say which are there
            except (KeyboardInterrupt, Terminated):
                if reports:
                    sys.stderr.write(
                        f"note: {len(reports)} of {len(found)} written before the interrupt, up to {reports[-1]['out']}\n"
                    )
                raise
            except ClipReadError as exc:
                if (path in named or len(found) == 1) and not reports:
                    raise
                if path in named:  # asked for by name: refused, saying what was written before it
                    written = f"; {len(reports)} written before it: {', '.join(r['out'] for r in reports[:3])}"
                    raise XttsError(exc.lines[0], hint=str(exc.hint) + written) from None
                sys.stderr.write(f"note: skipped {path}: {exc.why}\n")
                left_out.append(_left_out(chosen, path, exc.why))
    if not reports:
        raise XttsError("AUDIO: no recording could be decoded", hint="pass WAV, FLAC, OGG or MP3 recordings of speech")
    place = {str(path): index for index, path in enumerate(order)}
    return sorted(reports + left_out, key=lambda report: place[report["audio"]])


def _left_out(chosen: Any, path: Path, why: str) -> dict[str, Any]:
    """A recording's line of the report when it was not vocoded: the keys of one that was, null."""
    return {
        "audio": str(path),
        "out": None,
        "seconds": None,
        "vocoder": chosen.name,
        "step": chosen.step,
        "real_time_factor": None,
        "notes": [],
        "skipped": why,
        "written_over": False,
    }


def _load_vocoder(spec: str, config: Optional[Path], sets: list[str], notes: list[str]) -> Any:
    """Griffin-Lim with the --config's features (and --set's), or a vocoder run with its own; `notes`
    hears which checkpoint spoke where its newest could not (as synthesize says it)."""
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.inference.loading import is_griffin_lim, load_vocoder
    from xtts_cli.run.files import read_run
    from xtts_cli.speech.vocoding import GRIFFIN_LIM, Vocoder

    if is_griffin_lim(spec):
        return Vocoder(GRIFFIN_LIM, resolve_config(config, sets=sets).config.data)
    chosen = load_vocoder(spec, read_run(Path(spec), "--vocoder")[0].data, acoustic_run="itself", notes=notes)
    chosen.build_graph()  # not in the first recording's time
    return chosen


def _check_vocoder(spec: str, config: Optional[Path], sets: list[str]) -> None:
    """What `_load_vocoder` would refuse, from the files alone: an empty --vocoder, a --config or
    --set beside a vocoder run (which reads its own features), a key Griffin-Lim does not read, a run
    that is no vocoder or has no checkpoint to restore."""
    from xtts_cli.kinds import vocoding_run
    from xtts_cli.run.files import check_vocoder_spec, is_griffin_lim, read_run

    check_vocoder_spec(spec, left_out="Griffin-Lim")
    if is_griffin_lim(spec):
        _features_only(sets)
        from xtts_cli.config.loading import resolve_config

        resolve_config(config, sets=sets)  # a --config not there, or not valid: before TensorFlow, as the rest
        return
    if config is not None or sets:  # passed over, it would leave the user believing its features were used
        given = f"--config {config}" if config is not None else f"--set {sets[0]}"
        raise XttsError(
            f"{given}: a vocoder run reads mels of its own features, not a config's",
            hint=f"leave {given.split()[0]} out with --vocoder {spec}, or pass --vocoder griffin-lim to use its features",
        )
    own = read_run(Path(spec), "--vocoder")[0]
    vocoding_run(Path(spec), own.data, acoustic_run="itself", named=f"--vocoder {spec}")


def _features_only(sets: list[str]) -> None:
    """A `--set` of a key Griffin-Lim does not read (`training.max_steps`) refused: passed over, it
    would leave the user believing it changed the audio. The features are all it reads."""
    import dataclasses

    from xtts_cli.config.loading import parse_sets
    from xtts_cli.data.features import MelFeatures

    read = [f"data.{field.name}" for field in dataclasses.fields(MelFeatures)]
    for key in parse_sets(sets):
        if key not in read:
            raise XttsError(
                f"--set {key}: vocode reads only the features of the data section, not this key",
                hint=f"leave it out; the keys it reads: {', '.join(read)}",
            )


# A recording whose loudest sample is under -60 dBFS holds nothing a listener would hear.
SILENT_PEAK = 1e-3


def _vocode_one(chosen: Any, path: Path, target: Path, out_dir: Optional[Path]) -> dict[str, Any]:
    """One recording's mel through `chosen`, written to `target`; its line of the report."""
    import numpy as np

    from xtts_cli.data.audio_headers import read_audio_header
    from xtts_cli.speech.synthesis import write_wav
    from xtts_cli.speech.vocoding import load_audio, vocoded_recording

    data = chosen.data
    header = read_audio_header(str(path))
    notes = [f"{header.channels} channels mixed to one"] if header.channels > 1 else []
    if header.sample_rate != data.sample_rate:
        notes.append(
            f"{header.sample_rate} Hz resampled to {data.sample_rate} Hz"
            + (
                f" (nothing above {header.sample_rate // 2} Hz to hear)"
                if header.sample_rate < data.sample_rate
                else ""
            )
        )
    samples = load_audio(path, data, what="AUDIO")
    peak = float(np.max(np.abs(samples))) if samples.size else 0.0
    if peak < SILENT_PEAK:
        # Of the recording: a trained vocoder's output of silence is its own faint noise, not silence.
        notes.append(f"silent recording (peak {20 * np.log10(max(peak, 1e-10)):.0f} dBFS): its audio holds no speech")
    began = time.perf_counter()
    waveform = vocoded_recording(chosen, samples, data)
    seconds = time.perf_counter() - began
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    write_wav(target, waveform, data.sample_rate)
    duration = len(waveform) / data.sample_rate
    return {
        "audio": str(path),
        "out": str(target),
        "seconds": round(duration, 3),
        "vocoder": chosen.name,
        "step": chosen.step,
        "real_time_factor": round(seconds / max(duration, 1e-9), 4),
        "notes": notes,
        "skipped": None,
        "written_over": False,
    }
