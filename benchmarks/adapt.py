#!/usr/bin/env python3
"""Start from a model, not from zero: a base adapted to a new voice, a new language and a new
vocoder voice, against the same data trained from scratch for the same minutes, side by side.

One run, on sentences and clips no model trained on:

- **Base.** `configs/voices-cpu.yaml` on three espeak-ng voices (`voices_data.py`, ~7 minutes
  each), trained once (kept in `--runs` and reused when it has a checkpoint).
- **A new voice** the base never heard (`--new-voice`, another espeak-ng variant), with 1 and 3
  minutes of its audio: `configs/adapt-cpu.yaml` with `--init-from` the base, against
  `voices-cpu.yaml` from scratch on the same clips for the same minutes (`training.max_minutes`
  of the adapt preset, start-up included). Each held-out sentence is spoken in the new voice by
  name (`--speaker`), and, at 0 minutes, by the base cloning it (`--speaker-wav`, an unseen clip).
  Scored as `voices.py` scores voices: speaker-ID among the four voices and cosine to the target
  (Resemblyzer), WER (pocketsphinx under the sentence grammar).
- **A new language.** The English base adapted to 3 minutes of espeak-ng `fa` (`data.language:
  fa`) against Persian from scratch on the same clips for the same minutes: MCD-DTW and
  duration ratio of held-out sentences against espeak-ng's rendering (as `voices.py`).
- **A vocoder.** `configs/vocoder-cpu.yaml` on the base's voices for `--vocoder-base-minutes`, then
  adapted to the new voice's 3 minutes (`--init-from`, the adapt minutes) against that base
  unchanged and against the same 3 minutes from scratch for the same minutes: copy-synthesis PESQ
  and STOI of the new voice's held-out clips.
- **Nothing new.** `--init-from` a base checkpoint with the base's own data and config: the share
  of tensors kept and the first validation loss beside the base's at that step.

Writes `docs/adapt.md` unless `--no-doc`.

Usage:
    python benchmarks/adapt.py [--data DIR] [--runs DIR] [--new-voice VOICE] [--retrain]
                               [--skip-persian] [--skip-vocoder] [--no-doc]

Needs the evaluation extras: pip install -e ".[eval,voices]" (Resemblyzer pulls in PyTorch), and
espeak-ng and sox to make the data.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import yaml

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import results_page  # noqa: E402
import speech_quality  # noqa: E402
import voices  # noqa: E402
import voices_data  # noqa: E402
from results_page import cpu_name  # noqa: E402

CONFIGS = ROOT / "configs"
BASE, ADAPT, VOCODER = CONFIGS / "voices-cpu.yaml", CONFIGS / "adapt-cpu.yaml", CONFIGS / "vocoder-cpu.yaml"
DOC = ROOT / "docs" / "adapt.md"
DEFAULT_DATA = Path(tempfile.gettempdir()) / "xtts-adapt" / "data"
DEFAULT_RUNS = Path(tempfile.gettempdir()) / "xtts-adapt" / "runs"
# A male American variant none of the base's three is. The recognizer reads its own clips at a WER
# of 0.28 here, where it read the Scottish en-gb-scotland+f4 at 0.86-0.96: a WER bar needs a voice
# the recognizer can read at all.
NEW_VOICE = "en-us+m6"

INTRO = """# Adapting a trained run: measured

Written by `{command}` (what it measures and how: the script's docstring); every figure below is
from that one run, on the machine named. The base is `configs/voices-cpu.yaml` trained on three
espeak-ng voices (`benchmarks/voices_data.py`); every adapted run is `configs/adapt-cpu.yaml` with
`--init-from` the base, every from-scratch run the base's own preset on the same clips, both for
the same minutes (start-up included). Nothing is trained on the held-out sentences or on the clips
`--speaker-wav` clones from.

"""
NOTES = """
How to read the tables:

- **speaker-ID**: the share of the held-out sentences whose nearest voice, by the speaker
  encoder's (Resemblyzer) cosine similarity to each of the four voices' centroids of real clips,
  is the new voice. **cosine to target**: the mean similarity to the new voice's centroid.
- **WER**: pocketsphinx under the sentences' grammar (`benchmarks/speech_quality.py`).
- **MCD-DTW** (dB, lower is closer) of our mel against espeak-ng's rendering of the held-out
  sentence, and the ratio of our length to espeak-ng's.
- **PESQ** (wide band) and **STOI** of copy-synthesis: the new voice's real
  held-out clips, their mels through the vocoder, against the clips.
"""


def xtts_train(config: Path, data: Path, run_dir: Path, log: Path, *extra: str) -> tuple[float, int]:
    """Train (a fresh run); (wall-clock seconds, the last step)."""
    print(f"training {config.name} {' '.join(extra)} on {data} into {run_dir} ...", file=sys.stderr)
    began = time.perf_counter()
    with log.open("w") as handle:
        done = speech_quality.xtts(
            ["train", "--config", str(config), "--train-data", str(data), "--run-dir", str(run_dir), "--fresh", *extra],
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    if done.returncode:
        raise SystemExit(f"xtts train failed ({done.returncode}); see {log}")
    return time.perf_counter() - began, last_step(run_dir)


def last_step(run_dir: Path) -> int:
    from xtts_cli.training.parent import open_parent

    return open_parent(run_dir).step


def trained(run_dir: Path) -> bool:
    return (run_dir / "checkpoints" / "checkpoint").is_file()


def subset(source: Path, target: Path, seconds: float) -> Path:
    """The first clips of a coqui-layout dataset, up to `seconds` of audio (copied: a dataset's
    clips must lie inside its folder)."""
    import shutil

    from xtts_cli.data.audio_headers import read_audio_header

    lines = (source / "metadata.csv").read_text(encoding="utf-8").splitlines()
    kept, total = [lines[0]], 0.0
    for line in lines[1:]:
        length = read_audio_header(str(source / line.split("|")[0])).duration
        if total + length > seconds:
            break
        kept.append(line)
        total += length
    (target / "wavs").mkdir(parents=True, exist_ok=True)
    for line in kept[1:]:
        shutil.copyfile(source / line.split("|")[0], target / line.split("|")[0])
    (target / "metadata.csv").write_text("\n".join(kept) + "\n", encoding="utf-8")
    return target


def speak_new_voice(
    run_dir: Path, data: Path, out: Path, speakers: voices.Speakers, recognizer, voice: str, clone: bool
) -> dict:
    """Every held-out sentence in the new voice (by name, or cloned from its unseen clips), scored.
    A sentence with a symbol the run's vocabulary lacks (a run from scratch on a minute of audio has
    heard few of the phonemes) counts as a miss, every word of it wrong."""
    from xtts_cli.data.text import UnknownCharactersError
    from xtts_cli.evaluation.recognizer import word_error_rate
    from xtts_cli.inference.loading import load_run
    from xtts_cli.run.files import load_speaking_rate
    from xtts_cli.speech.synthesis import resolve_voice, synthesize_speech, wav_bytes

    config, tokenizer, model, step, run = load_run(run_dir)
    rate = load_speaking_rate(run.path)
    sentences = (data / "heldout.txt").read_text(encoding="utf-8").splitlines()
    clips = sorted((data / "clone" / voice.replace("+", "_")).glob("*.wav"))
    out.mkdir(parents=True, exist_ok=True)
    scores, heard, unread = [], [], 0
    for index, text in enumerate(sentences):
        if clone:
            chosen = resolve_voice(run.path, config.data, tokenizer, model, speaker_wav=clips[index % len(clips)])
        else:
            chosen = resolve_voice(run.path, config.data, tokenizer, model, speaker=voice)
        try:
            speech = synthesize_speech(
                model, tokenizer, text, chosen, config.data, rate=rate, settings=config.synthesis
            )
        except UnknownCharactersError:
            unread += 1
            heard.append("")
            continue
        path = out / f"{index:03d}.wav"
        path.write_bytes(wav_bytes(speech.waveform, config.data.sample_rate))
        scores.append(speakers.score(speakers.embed(path), voice))
        heard.append(recognizer.transcribe(*speech_quality.read_wav(path)))
    summary = voices.summarise(scores) if scores else {"accuracy": 0.0, "target": float("nan"), "count": 0}
    hits = round(summary["accuracy"] * summary["count"])
    # Over every sentence: one it cannot read is not its voice.
    summary.update(accuracy=hits / len(sentences), count=len(sentences), unread=unread)
    return dict(summary, wer=word_error_rate(sentences, heard), step=step)


def vocoder_scores(run_dir: Path, clips: list[Path]) -> dict:
    """Copy-synthesis of `clips` through the vocoder run: mean PESQ (wide band) and STOI."""
    import vocoder_quality

    from xtts_cli.inference.loading import load_vocoder
    from xtts_cli.run.files import read_run
    from xtts_cli.speech.vocoding import load_audio, mel_of

    data = read_run(run_dir)[0].data
    vocoder = load_vocoder(run_dir, data, acoustic_run="itself")
    pesqs, stois = [], []
    for clip in clips:
        reference = load_audio(clip, data)
        wave = vocoder(mel_of(reference, data))
        reference, wave = vocoder_quality.same_length(reference, wave)
        pesqs.append(vocoder_quality.pesq_wide_band(reference, wave, data.sample_rate))
        stois.append(vocoder_quality.stoi(reference, wave, data.sample_rate))
    return {"pesq": statistics.mean(pesqs), "stoi": statistics.mean(stois), "step": vocoder.step}


def unchanged(base_data: Path, runs: Path) -> tuple[str, Optional[float], Optional[float]]:
    """`--init-from` a base checkpoint taken at a validation step, on the base's own data and
    config: the kept-tensors line, the first validation loss, and the base's at that step.

    The base here is trained anew by this version (40 steps of the base's preset, validated and saved
    at step 20): the long base is reused across versions, and a base trained by an older version
    validates as that version did (a difference of 0.10 once), which is not what this measures."""
    from xtts_cli.training.metrics import read_metrics

    short = voices.variant(
        BASE,
        runs / "unchanged-base.yaml",
        {"training.max_steps": 40, "training.val_step": 20, "training.save_step": 20, "training.max_minutes": None},
    )
    base_run = runs / "unchanged-base"
    xtts_train(short, base_data, base_run, runs / "unchanged-base.log")
    step = 20
    records = read_metrics(base_run / "metrics.jsonl")
    base_val = next((r["val_loss"] for r in records if r.get("step") == step and "val_loss" in r), None)
    config = voices.variant(BASE, runs / "unchanged.yaml", {"training.max_steps": 1})
    run_dir = runs / "unchanged"
    checkpoint = base_run / "checkpoints" / f"ckpt-{step}"
    xtts_train(config, base_data, run_dir, runs / "unchanged.log", "--init-from", str(checkpoint))
    log = (runs / "unchanged.log").read_text(encoding="utf-8")
    kept = next((line.removeprefix("note: ") for line in log.splitlines() if "tensors" in line), "(no line)")
    first = next((r["val_loss"] for r in read_metrics(run_dir / "metrics.jsonl") if "val_loss" in r), None)
    return kept, first, base_val


def voice_row(label: str, minutes: str, r: dict, trained_for: str) -> str:
    unread = f" ({r['unread']} it cannot read)" if r.get("unread") else ""
    return (
        f"| {minutes} | {label} | {trained_for} | {r['accuracy']:.2f} ({round(r['accuracy'] * r['count'])}/"
        f"{r['count']}){unread} | {r['target']:.3f} | {r['wer']:.3f} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--runs", type=Path, default=DEFAULT_RUNS)
    parser.add_argument("--new-voice", default=NEW_VOICE, help="the espeak-ng voice the base never heard")
    parser.add_argument("--vocoder-base-minutes", type=float, default=15.0)
    parser.add_argument("--retrain", action="store_true", help="train every adapted and scratch run again")
    parser.add_argument("--skip-persian", action="store_true")
    parser.add_argument("--skip-vocoder", action="store_true")
    parser.add_argument("--no-doc", action="store_true", help="print only; leave docs/adapt.md as it is")
    args = parser.parse_args(argv)
    results_page.needs("eval,voices", "resemblyzer", "pocketsphinx")

    data, runs = args.data, args.runs
    runs.mkdir(parents=True, exist_ok=True)
    # The new voice's data and runs are kept by its name: another --new-voice starts its own.
    voice = args.new_voice.replace("+", "_")
    base_data, new_data = data / "voices", data / f"new-voice-{voice}"
    if not (base_data / "heldout.txt").is_file():
        voices_data.make_voices(base_data)
    if not (new_data / "heldout.txt").is_file():
        voices_data.make_voices(new_data, voices=(args.new_voice,), minutes=3.0)
    sets = {3: new_data, 1: subset(new_data, data / f"new-voice-{voice}-1min", 60.0)}
    minutes = float(yaml.safe_load(ADAPT.read_text(encoding="utf-8"))["training"]["max_minutes"])
    cpu = cpu_name()
    lines = [f"CPU: {cpu}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}", ""]
    timings: dict[str, str] = {}

    base_run = runs / "base"
    if not trained(base_run):
        seconds, _ = xtts_train(BASE, base_data, base_run, runs / "base.log")
        timings["base"] = f"{seconds / 60:.1f} min"

    def run(name: str, config: Path, dataset: Path, *extra: str) -> Path:
        run_dir = runs / name
        if args.retrain or not trained(run_dir):
            seconds, step = xtts_train(config, dataset, run_dir, runs / f"{name}.log", *extra)
            timings[name] = f"{seconds / 60:.1f} min, {step} steps"
        return run_dir

    # The base's own recipe, for the adapt preset's minutes and with its batching (a minute of
    # audio is about 15 clips: fewer than the base's batch of 16).
    adapt_data = yaml.safe_load(ADAPT.read_text(encoding="utf-8"))["data"]
    scratch = voices.variant(
        BASE,
        runs / "scratch.yaml",
        {
            "training.max_minutes": minutes,
            "training.max_steps": 100000,
            "training.epochs": 100000,  # a minute of audio is one or two batches an epoch
            **{f"data.{key}": adapt_data[key] for key in ("batch_size", "num_buckets", "eval_fraction")},
        },
    )
    from xtts_cli.evaluation.recognizer import Recognizer

    names = list(
        dict.fromkeys(line.split("|")[2] for line in (base_data / "metadata.csv").read_text().splitlines()[1:])
    )
    sentences = (base_data / "heldout.txt").read_text(encoding="utf-8").splitlines()
    real = {name: sorted((base_data / "heldout" / name.replace("+", "_")).glob("*.wav")) for name in names}
    new_clips = sorted((new_data / "heldout" / args.new_voice.replace("+", "_")).glob("*.wav"))
    real[args.new_voice] = new_clips
    speakers = voices.Speakers(real)
    recognizer = Recognizer((base_data / "sentences.jsgf").read_text(encoding="ascii"))
    table = [
        "| new voice's audio | run | trained | speaker-ID (of 4 voices) | cosine to target | WER |",
        "|---|---|---|---|---|---|",
    ]
    out_clone = runs / f"out-clone-{voice}"
    results = {"0": speak_new_voice(base_run, new_data, out_clone, speakers, recognizer, args.new_voice, True)}
    table.append(voice_row("base, `--speaker-wav` (cloning)", "0 min", results["0"], "-"))
    for amount in (1, 3):
        adapted = run(f"{voice}-{amount}min-adapted", ADAPT, sets[amount], "--init-from", str(base_run))
        fresh = run(f"{voice}-{amount}min-scratch", scratch, sets[amount])
        for label, run_dir in (("adapted from the base", adapted), ("from scratch", fresh)):
            result = speak_new_voice(
                run_dir, new_data, runs / f"out-{run_dir.name}", speakers, recognizer, args.new_voice, False
            )
            results[f"{amount} {label}"] = result
            table.append(
                voice_row(
                    f"{label}, `--speaker`", f"{amount} min", result, f"at most {minutes:g} min, {result['step']} steps"
                )
            )
    ceiling = voices.summarise(speakers.ceiling())
    # What the recognizer makes of the new voice's own clips: the WER no copy of the voice beats.
    from xtts_cli.evaluation.recognizer import word_error_rate

    heard = [recognizer.transcribe(*speech_quality.read_wav(clip)) for clip in new_clips]
    real_wer = word_error_rate(sentences, heard)
    table.append(
        f"| - | real clips (ceiling) | - | {ceiling['accuracy']:.2f} | {ceiling['target']:.3f} | {real_wer:.3f} |"
    )
    heading = f"A new voice ({args.new_voice}), {len(sentences)} held-out sentences, among {', '.join(names)} and it"
    lines += [f"## {heading}", "", *table, ""]
    # The first held-out sentence, to hear what the table means.
    lines += [f'Listen: the first held-out sentence, "{sentences[0]}"', ""]
    lines += results_page.players(
        "adapt",
        [
            (f"{args.new_voice} itself (espeak-ng)", new_clips[0]),
            ("the base cloning it from a clip (0 minutes)", out_clone / "000.wav"),
            (
                f"adapted from the base on its 3 minutes, {minutes:g} min",
                runs / f"out-{voice}-3min-adapted" / "000.wav",
            ),
            (f"from scratch on the same 3 minutes, {minutes:g} min", runs / f"out-{voice}-3min-scratch" / "000.wav"),
        ],
    )
    print("\n".join([heading, *table]))

    if not args.skip_persian:
        persian = data / "persian-3min"
        if not (persian / "heldout.txt").is_file():
            voices_data.make_persian(persian, minutes=3.0)
        adapt_fa = voices.variant(ADAPT, runs / "adapt-fa.yaml", {"data.language": "fa"})
        scratch_fa = voices.variant(scratch, runs / "scratch-fa.yaml", {"data.language": "fa"})
        rows = {
            "adapted from the English base": run("fa-adapted", adapt_fa, persian, "--init-from", str(base_run)),
            "from scratch": run("fa-scratch", scratch_fa, persian),
        }
        table = [
            "| run | trained | MCD-DTW median (dB) | MCD mean | duration ratio median (range) |",
            "|---|---|---|---|---|",
        ]
        for label, run_dir in rows.items():
            r = voices.evaluate_persian(run_dir, persian, runs / f"out-{run_dir.name}")
            low, high = r["duration_spread"]
            table.append(
                f"| {label} | at most {minutes:g} min, {r['step']} steps | {r['mcd']:.2f} | {r['mcd_mean']:.2f} | "
                f"{r['duration_ratio']:.2f} ({low:.2f}-{high:.2f}) |"
            )
        heading = "A new language: Persian (espeak-ng `fa`), 3 minutes of audio, phonemes"
        lines += [f"## {heading}", "", *table, ""]
        print("\n".join([heading, *table]))

    if not args.skip_vocoder:
        vocoder_base = voices.variant(
            VOCODER, runs / "vocoder-base.yaml", {"training.max_minutes": args.vocoder_base_minutes}
        )
        vocoder_adapt = voices.variant(VOCODER, runs / "vocoder-adapt.yaml", {"training.max_minutes": minutes})
        base_vocoder = run("vocoder-base", vocoder_base, base_data)
        adapted_vocoder = run(f"vocoder-{voice}-adapted", vocoder_adapt, new_data, "--init-from", str(base_vocoder))
        scratch_vocoder = run(f"vocoder-{voice}-scratch", vocoder_adapt, new_data)
        table = ["| vocoder | trained | PESQ wb | STOI |", "|---|---|---|---|"]
        for label, run_dir, trained_for in (
            ("the base, unchanged", base_vocoder, f"{args.vocoder_base_minutes:g} min on the base's voices"),
            ("adapted to the new voice", adapted_vocoder, f"then {minutes:g} min on its 3 minutes"),
            ("from scratch on the new voice", scratch_vocoder, f"{minutes:g} min on its 3 minutes"),
        ):
            r = vocoder_scores(run_dir, new_clips)
            table.append(f"| {label} | {trained_for} (step {r['step']}) | {r['pesq']:.3f} | {r['stoi']:.3f} |")
        heading = f"A vocoder adapted to the new voice: copy-synthesis of its {len(new_clips)} held-out clips"
        lines += [f"## {heading}", "", *table, ""]
        print("\n".join([heading, *table]))

    kept, first, base_val = unchanged(base_data, runs)
    same = (
        f"Nothing new (`--init-from` a base checkpoint, the base's data and config): {kept}; first validation "
        f"loss {first:.5f}, the base's at that step {base_val:.5f} (difference {abs(first - base_val):.1e})."
        if first is not None and base_val is not None
        else f"Nothing new: {kept}; no validation loss to compare."
    )
    lines += [same, ""]
    print(same)
    if timings:
        timing = "; ".join(f"{name}: {value}" for name, value in timings.items())
        lines += [f"Training (wall clock, start-up included): {timing}.", ""]
        print(timing)
    if not args.no_doc:
        command = " ".join(["python benchmarks/adapt.py", *(argv if argv is not None else sys.argv[1:])])
        DOC.write_text(INTRO.format(command=command) + "\n".join(lines) + "\n" + NOTES, encoding="utf-8")
    (runs / "adapt-results.json").write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
