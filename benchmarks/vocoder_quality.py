#!/usr/bin/env python3
"""Does the vocoder beat Griffin-Lim? Copy-synthesis and end-to-end on held-out clips, side by side.

One run, on clips no vocoder or acoustic model trained on (the dataset's held-out sentences):
- copy-synthesis: each clip's own mel (computed as training computes it) back to audio by
  Griffin-Lim and by the vocoder run: PESQ (wide band, at 16 kHz), STOI, mel-cepstral distortion
  (DTW-aligned) against the clip, and the word error rate of pocketsphinx restricted to the
  dataset's sentence grammar and, harsher, to a loop over its words (as speech_quality.py);
- end-to-end, with `--acoustic-run`: the acoustic model speaks the held-out sentences once, and
  its mels go through each vocoder: word error rates and MCD against the clips;
- speed: the real-time factor of each vocoder on this CPU (seconds of rendering per second of
  audio, after a warm-up clip), over every copy-synthesised clip.
It trains the vocoder first (`xtts train --config vocoder-cpu`) unless `--skip-train`.

Usage:
    python benchmarks/vocoder_quality.py [--data DIR] [--config vocoder-cpu] [--run-dir DIR]
                                         [--acoustic-run DIR] [--skip-train] [--clips N]

Needs the evaluation extra (pip install -e ".[eval]": pesq, pystoi, pocketsphinx) and, to make
the dataset, espeak-ng and sox. The dataset is made by benchmarks/speech_data.py into --data
unless it is there already.
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

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import speech_data  # noqa: E402
from results_page import needs  # noqa: E402

PESQ_RATE = 16000  # wide-band PESQ (ITU-T P.862.2) is defined at 16 kHz


def train(config: str, data: Path, run_dir: Path, log: Path) -> float:
    began = time.perf_counter()
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    command = [sys.executable, "-m", "xtts_cli", "train", "--config", config, "--data", str(data)]
    with log.open("w") as handle:
        done = subprocess.run(
            [*command, "--run-dir", str(run_dir), "--fresh"], env=env, stdout=handle, stderr=subprocess.STDOUT
        )
    if done.returncode:
        raise SystemExit(f"xtts train failed ({done.returncode}); see {log}")
    return time.perf_counter() - began


def pesq_wide_band(reference: np.ndarray, degraded: np.ndarray, rate: int) -> float:
    from math import gcd

    from pesq import pesq
    from scipy.signal import resample_poly

    divisor = gcd(PESQ_RATE, rate)
    up, down = PESQ_RATE // divisor, rate // divisor
    return float(pesq(PESQ_RATE, resample_poly(reference, up, down), resample_poly(degraded, up, down), "wb"))


def stoi(reference: np.ndarray, degraded: np.ndarray, rate: int) -> float:
    from pystoi import stoi as short_time_objective_intelligibility

    return float(short_time_objective_intelligibility(reference, degraded, rate, extended=False))


def same_length(reference: np.ndarray, degraded: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Copy-synthesis gives (frames - 1) * hop samples: the clip's length rounded down to a hop."""
    length = min(len(reference), len(degraded))
    return reference[:length], degraded[:length]


def score(name: str, waves: list[np.ndarray], references: list[np.ndarray], sentences: list[str], tools) -> dict:
    from xtts_cli.evaluation.mel_distance import mel_cepstral_distortion
    from xtts_cli.evaluation.recognizer import word_error_rate
    from xtts_cli.speech.vocoding import mel_of

    data, grammar, loop, aligned = tools["data"], tools["grammar"], tools["loop"], tools["aligned"]
    rate = data.sample_rate
    result: dict = {"name": name}
    if aligned:
        pairs = [same_length(reference, wave) for reference, wave in zip(references, waves)]
        result["pesq"] = statistics.mean(pesq_wide_band(r, w, rate) for r, w in pairs)
        result["stoi"] = statistics.mean(stoi(r, w, rate) for r, w in pairs)
    result["mcd"] = statistics.median(
        mel_cepstral_distortion(mel_of(wave, data), mel_of(reference, data))
        for wave, reference in zip(waves, references)
    )
    heard = [grammar.transcribe(wave, rate) for wave in waves]
    result["wer"] = word_error_rate(sentences, heard)
    result["wer_loop"] = word_error_rate(sentences, [loop.transcribe(wave, rate) for wave in waves])
    result["heard"] = heard
    return result


def render(vocoder, mels: list[np.ndarray]) -> tuple[list[np.ndarray], float]:
    """Each mel through `vocoder`, and the real-time factor (after an untimed warm-up call)."""
    vocoder(mels[0])
    began = time.perf_counter()
    waves = [vocoder(mel) for mel in mels]
    seconds = time.perf_counter() - began
    audio_seconds = sum(len(wave) for wave in waves) / vocoder.data.sample_rate
    return waves, seconds / audio_seconds


def table(rows: list[dict], columns: list[tuple[str, str, str]]) -> None:
    print(f"{'':34}" + "".join(f"{title:>12}" for _, title, _ in columns))
    for row in rows:
        cells = "".join(f"{format(row[key], spec):>12}" if key in row else f"{'-':>12}" for key, _, spec in columns)
        print(f"{row['name']:34}{cells}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=speech_data.DEFAULT_OUT)
    parser.add_argument("--config", default="vocoder-cpu", help="the vocoder's config file or preset")
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "xtts-vocoder-run")
    parser.add_argument("--acoustic-run", type=Path, help="an acoustic run (speak-cpu) for the end-to-end rows")
    parser.add_argument("--skip-train", action="store_true", help="score the vocoder already in --run-dir")
    parser.add_argument("--clips", type=int, default=24, help="held-out clips to score (at most those made)")
    args = parser.parse_args(argv)
    needs("eval", "pesq", "pystoi", "pocketsphinx")

    from xtts_cli.evaluation.recognizer import Recognizer
    from xtts_cli.inference.loading import load_vocoder
    from xtts_cli.run.files import read_run
    from xtts_cli.speech.vocoding import GRIFFIN_LIM, Vocoder, load_audio, mel_of

    if not (args.data / "heldout.txt").is_file():
        print(f"making the dataset in {args.data} ...", file=sys.stderr)
        speech_data.make_dataset(args.data)
    sentences = (args.data / "heldout.txt").read_text(encoding="utf-8").splitlines()[: args.clips]
    clips = [args.data / "heldout" / f"heldout-{index:03d}.wav" for index in range(len(sentences))]
    # The training's wall clock, kept beside the run for a later --skip-train to report.
    timing = args.run_dir.with_name(args.run_dir.name + ".training.json")
    if not args.skip_train:
        print(f"training {args.config} on {args.data} into {args.run_dir} ...", file=sys.stderr)
        args.run_dir.parent.mkdir(parents=True, exist_ok=True)
        seconds = train(args.config, args.data, args.run_dir, args.run_dir.parent / "vocoder-train.log")
        timing.write_text(json.dumps({"config": args.config, "seconds": seconds}), encoding="utf-8")
    trained = json.loads(timing.read_text(encoding="utf-8")) if timing.is_file() else None
    data = read_run(args.run_dir)[0].data
    vocoders = {
        "Griffin-Lim": Vocoder(GRIFFIN_LIM, data),
        "vocoder": load_vocoder(args.run_dir, data, acoustic_run="itself"),
    }
    tools = {
        "data": data,
        "grammar": Recognizer((args.data / "sentences.jsgf").read_text(encoding="ascii")),
        "loop": Recognizer.word_loop((args.data / "vocabulary.txt").read_text(encoding="utf-8").split()),
        "aligned": True,
    }
    references = [load_audio(clip, data) for clip in clips]
    mels = [mel_of(audio, data) for audio in references]
    rows = [score("the clips themselves", references, references, sentences, tools)]
    speed = {}
    heard = [(f'"{sentences[0]}": the clip itself', references[0])]
    for name, vocoder in vocoders.items():
        print(f"copy-synthesis by {name} ...", file=sys.stderr)
        waves, speed[name] = render(vocoder, mels)
        rows.append(score(f"copy-synthesis: {name}", waves, references, sentences, tools) | {"rtf": speed[name]})
        heard.append((f"its mel through {name}", waves[0]))

    ended = []
    if args.acoustic_run is not None:
        from xtts_cli.inference import Synthesizer

        print(f"speaking the held-out sentences with {args.acoustic_run} ...", file=sys.stderr)
        tts = Synthesizer.load(args.acoustic_run, vocoder=GRIFFIN_LIM)
        spoken = list(tts.speak_many(sentences))
        tools["aligned"] = False  # another timing than the clip's: PESQ and STOI need the same one
        for name, vocoder in vocoders.items():
            waves = [vocoder(speech.mel) for speech in spoken]
            heard.append((f"spoken by {Path(args.acoustic_run).name}, through {name}", waves[0]))
            ended.append(
                score(f"end-to-end: {Path(args.acoustic_run).name} + {name}", waves, references, sentences, tools)
            )

    step = vocoders["vocoder"].step
    print(f"\nvocoder quality: {len(sentences)} held-out clips of {args.data}; vocoder {args.run_dir} (step {step})")
    if trained is not None:
        print(
            f"vocoder training: {trained['seconds'] / 60:.1f} min to step {step} "
            f"(xtts train --config {trained['config']}, wall clock, start-up included)"
        )
    table(
        rows + ended,
        [
            ("pesq", "PESQ wb", ".3f"),
            ("stoi", "STOI", ".3f"),
            ("mcd", "MCD dB", ".2f"),
            ("wer", "WER", ".3f"),
            ("wer_loop", "WER loop", ".3f"),
            ("rtf", "RTF", ".4f"),
        ],
    )
    print(
        "PESQ and STOI: mean over clips (higher is better); MCD: median, DTW-aligned; WER: pocketsphinx with the "
        "sentence grammar, and with a loop over the words; RTF: seconds of rendering per second of audio"
    )
    print(f"vocoder speed: {speed['Griffin-Lim'] / speed['vocoder']:.1f}x Griffin-Lim's on this CPU")
    for text, words in list(zip(sentences, rows[2]["heard"]))[:3]:
        print(f"  said: {text}\n  heard (vocoder): {words}")
    import results_page

    if results_page.recording():
        import soundfile

        # The first held-out clip as each path renders it, to hear what the table means.
        folder = Path(tempfile.mkdtemp(prefix="xtts-vocoder-clips-"))
        clips = []
        for index, (label, wave) in enumerate(heard):
            soundfile.write(folder / f"{index}.wav", np.asarray(wave, np.float32), data.sample_rate)
            clips.append((label, folder / f"{index}.wav"))
        results_page.attach(["Listen:", "", *results_page.players("vocoder", clips)])
    return 0


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "vocoder.md"))
