#!/usr/bin/env python3
"""Does the model speak? Train `speak-cpu` on espeak-ng speech and score held-out sentences.

One run, side by side, on sentences the model never trained on:
- word error rate of pocketsphinx (English model inside its wheel; nothing is downloaded),
  restricted by a JSGF grammar to the dataset's sentence pattern (primary) and, harsher, to a
  free loop over its words, for (a) our synthesis through `xtts synthesize`, (b) espeak-ng's own
  audio of the same sentences, (c) espeak's mel through our Griffin-Lim (the vocoder's floor);
- the median duration ratio of ours to espeak's, and how many clips the model ended (its stop
  token or predicted durations), not the length limit;
- mel-cepstral distortion (DTW-aligned) of ours and of (c) against espeak;
- `alignment_score` at every validation of the training run, and the training time.
It writes `speech_quality.png`: one sentence's mel from espeak and from us, one above the other,
and the alignment of our generation.

Usage:
    python benchmarks/speech_quality.py [--data DIR] [--config configs/speak-cpu.yaml] [--run-dir DIR]
                                        [--out DIR] [--skip-train] [--sentences N]

Needs the evaluation extra (pip install -e ".[eval]") and, to make the dataset, espeak-ng and sox.
The dataset is made by benchmarks/speech_data.py into --data unless it is there already.
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
import wave
from pathlib import Path

import numpy as np

# TensorFlow's C++ log lines, in this process (the vocoder floor) and in the xtts subprocesses.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import speech_data  # noqa: E402
from results_page import needs  # noqa: E402


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path)) as handle:
        frames = handle.readframes(handle.getnframes())
        return np.frombuffer(frames, "<i2").astype(np.float32) / 32768.0, handle.getframerate()


def xtts(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, "-m", "xtts_cli", *args], env=env, text=True, **kwargs)


def train(config: Path, data: Path, run_dir: Path, log: Path) -> float:
    began = time.perf_counter()
    with log.open("w") as handle:
        done = xtts(
            ["train", "--config", str(config), "--train-data", str(data), "--run-dir", str(run_dir), "--fresh"],
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    if done.returncode:
        raise SystemExit(f"xtts train failed ({done.returncode}); see {log}")
    return time.perf_counter() - began


def synthesize(sentences: list[str], run_dir: Path, out: Path) -> list[dict]:
    reports = []
    for index, text in enumerate(sentences):
        done = xtts(
            ["synthesize", text, "--checkpoint", str(run_dir), "--out", str(out / f"ours-{index:03d}.wav"), "--json"],
            capture_output=True,
        )
        if done.returncode:
            raise SystemExit(f"xtts synthesize failed on {text!r}:\n{done.stderr}")
        reports.append(json.loads(done.stdout))
    return reports


def griffin_lim_floor(espeak_wavs: list[Path], out: Path, data) -> list[Path]:
    """espeak's audio -> our log-mel -> our Griffin-Lim: what the vocoder alone costs."""
    from xtts_cli.data.features import log_mel
    from xtts_cli.speech.synthesis import wav_bytes
    from xtts_cli.speech.vocoding import GRIFFIN_LIM, Vocoder

    griffin_lim = Vocoder(GRIFFIN_LIM, data)
    paths = []
    for index, path in enumerate(espeak_wavs):
        audio, rate = read_wav(path)
        assert rate == data.sample_rate, (path, rate)
        rebuilt = griffin_lim(log_mel(audio, data).numpy())
        target = out / f"griffinlim-{index:03d}.wav"
        target.write_bytes(wav_bytes(np.asarray(rebuilt), data.sample_rate))
        paths.append(target)
    return paths


def mel_of(path: Path, data) -> np.ndarray:
    from xtts_cli.data.features import log_mel

    audio, _ = read_wav(path)
    return log_mel(audio, data).numpy()


def picture(target: Path, text: str, espeak_wav: Path, run_dir: Path, data) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from xtts_cli.inference.loading import load_run
    from xtts_cli.run.files import REFERENCE_FILE, load_speaking_rate
    from xtts_cli.speech.synthesis import synthesize_speech

    config, tokenizer, model, step, run = load_run(run_dir)
    speech = synthesize_speech(
        model,
        tokenizer,
        text,
        np.load(run.path / REFERENCE_FILE),
        config.data,
        rate=load_speaking_rate(run.path),
        settings=config.synthesis,
    )
    espeak = mel_of(espeak_wav, data)
    frames = max(len(espeak), speech.frames)
    figure, axes = plt.subplots(3, 1, figsize=(10, 9), gridspec_kw={"height_ratios": [1, 1, 1.2]})
    low, high = float(espeak.min()), float(espeak.max())
    for axis, mel, title in ((axes[0], espeak, "espeak-ng"), (axes[1], speech.mel, f"xtts (step {step})")):
        axis.imshow(mel.T, origin="lower", aspect="auto", vmin=low, vmax=high, cmap="magma")
        axis.set_xlim(0, frames)
        axis.set_title(f"{title}: {len(mel)} frames")
        axis.set_ylabel("mel bin")
    axes[2].imshow(speech.alignment.T, origin="lower", aspect="auto", cmap="viridis")
    axes[2].set_title(f"alignment of our generation (score {speech.alignment_score:.2f}, ended by {speech.ended_by})")
    axes[2].set_xlabel("decoder step")
    axes[2].set_ylabel("text token")
    figure.suptitle(text)
    figure.tight_layout()
    figure.savefig(target, dpi=90)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=speech_data.DEFAULT_OUT)
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "speak-cpu.yaml")
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "xtts-speech-run")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "xtts-speech-out")
    parser.add_argument("--skip-train", action="store_true", help="score the run already in --run-dir")
    parser.add_argument("--sentences", type=int, default=24, help="held-out sentences to score (at most those made)")
    args = parser.parse_args(argv)
    needs("eval", "pocketsphinx", "jiwer", "matplotlib")

    from xtts_cli.config.loading import resolve_config
    from xtts_cli.evaluation.mel_distance import mel_cepstral_distortion
    from xtts_cli.evaluation.recognizer import Recognizer, word_error_rate
    from xtts_cli.training.metrics import read_metrics

    if not (args.data / "heldout.txt").is_file():
        print(f"making the dataset in {args.data} ...", file=sys.stderr)
        speech_data.make_dataset(args.data)
    sentences = (args.data / "heldout.txt").read_text(encoding="utf-8").splitlines()[: args.sentences]
    espeak_wavs = [args.data / "heldout" / f"heldout-{index:03d}.wav" for index in range(len(sentences))]
    args.out.mkdir(parents=True, exist_ok=True)
    data = resolve_config(args.config, {}).config.data

    train_seconds = None
    if not args.skip_train:
        print(f"training {args.config.name} on {args.data} into {args.run_dir} ...", file=sys.stderr)
        train_seconds = train(args.config, args.data, args.run_dir, args.out / "train.log")
    print(f"synthesising {len(sentences)} held-out sentences ...", file=sys.stderr)
    reports = synthesize(sentences, args.run_dir, args.out)
    ours = [Path(report["out"]) for report in reports]
    floor = griffin_lim_floor(espeak_wavs, args.out, data)

    grammar = Recognizer((args.data / "sentences.jsgf").read_text(encoding="ascii"))
    loop = Recognizer.word_loop((args.data / "vocabulary.txt").read_text(encoding="utf-8").split())
    systems = {"xtts (ours)": ours, "espeak-ng": espeak_wavs, "espeak mel -> Griffin-Lim": floor}
    scores = {}
    for name, paths in systems.items():
        heard = {"grammar": [], "loop": []}
        for path in paths:
            audio, rate = read_wav(path)
            heard["grammar"].append(grammar.transcribe(audio, rate))
            heard["loop"].append(loop.transcribe(audio, rate))
        scores[name] = {kind: word_error_rate(sentences, hypotheses) for kind, hypotheses in heard.items()}
        scores[name]["heard"] = heard["grammar"]

    espeak_seconds = [len(read_wav(path)[0]) / data.sample_rate for path in espeak_wavs]
    ratios = [report["seconds"] / seconds for report, seconds in zip(reports, espeak_seconds)]
    # The model ended it: its stop token (above the floor of the allowed window) or, with the
    # duration decoder, its predicted durations; not the length limit.
    stopped = sum(report["ended_by"] in ("stop token", "durations") for report in reports)
    espeak_mels = [mel_of(path, data) for path in espeak_wavs]
    mcd_ours = [mel_cepstral_distortion(mel_of(path, data), reference) for path, reference in zip(ours, espeak_mels)]
    mcd_floor = [mel_cepstral_distortion(mel_of(path, data), reference) for path, reference in zip(floor, espeak_mels)]
    validations = [
        record
        for record in read_metrics(args.run_dir / "metrics.jsonl")
        if "alignment_score" in record and "val_loss" in record
    ]
    picture(args.out / "speech_quality.png", sentences[0], espeak_wavs[0], args.run_dir, data)

    print(f"\nspeech quality: {len(sentences)} held-out sentences, run {args.run_dir}, dataset {args.data}")
    print(f"{'':28} {'WER (sentence grammar)':>23} {'WER (word loop)':>16} {'MCD (dB)':>9}")
    print(
        f"{'xtts (ours)':28} {scores['xtts (ours)']['grammar']:23.3f} {scores['xtts (ours)']['loop']:16.3f} "
        f"{statistics.median(mcd_ours):9.2f}"
    )
    print(f"{'espeak-ng':28} {scores['espeak-ng']['grammar']:23.3f} {scores['espeak-ng']['loop']:16.3f} {'0':>9}")
    name = "espeak mel -> Griffin-Lim"
    print(f"{name:28} {scores[name]['grammar']:23.3f} {scores[name]['loop']:16.3f} {statistics.median(mcd_floor):9.2f}")
    print(
        f"duration ratio ours / espeak: median {statistics.median(ratios):.2f} "
        f"(range {min(ratios):.2f}-{max(ratios):.2f})"
    )
    print(
        f"ended by the model (stop token or predicted durations): {stopped} of {len(reports)} "
        f"({', '.join(sorted({report['ended_by'] for report in reports}))})"
    )
    print(f"alignment score of our generations: median {statistics.median(r['alignment_score'] for r in reports):.3f}")
    if validations:
        trail = ", ".join(f"{record['step']}: {record['alignment_score']:.2f}" for record in validations)
        print(f"alignment_score at validation (step: score): {trail}")
    if train_seconds is not None:
        print(f"training time: {train_seconds / 60:.1f} min (xtts train, wall clock, including start-up)")
    print(f"picture: {args.out / 'speech_quality.png'}")
    for text, heard in list(zip(sentences, scores["xtts (ours)"]["heard"]))[:5]:
        print(f"  said: {text}\n  heard: {heard}")
    import results_page

    if results_page.recording():
        # The first two held-out sentences, to hear what the figures mean.
        clips = []
        for index in range(min(2, len(sentences))):
            clips += [
                (f'"{sentences[index]}": espeak-ng', espeak_wavs[index]),
                (f'"{sentences[index]}": ours (heard: "{scores["xtts (ours)"]["heard"][index]}")', ours[index]),
            ]
        results_page.attach(
            [
                "Listen (the first held-out sentences, never trained on):",
                "",
                *results_page.players("speech_quality", clips),
            ]
        )
    return 0


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "speech_quality.md"))
