#!/usr/bin/env python3
"""Whose voice, and how well read? Several voices and a second language, measured side by side.

One run, on sentences and clips no model trained on (the datasets of `voices_data.py`):

- **Voices.** `configs/voices-cpu.yaml` trained on three espeak-ng voices (and, with
  `--compare-self-crop`, the same preset with `data.reference_from_other_clips: 0`, every
  reference a crop of the clip itself). Each held-out sentence is spoken in one of the voices
  (in turn), once by name (`--speaker`: the speaker's centroid) and once cloned from an unseen
  clip of that voice (`--speaker-wav`). An offline speaker encoder (Resemblyzer; its weights ship
  in its wheel) embeds every clip; each voice's centroid is the mean of its real clips of the
  held-out sentences. Reported: speaker-ID accuracy (the nearest centroid is the intended
  voice), mean cosine similarity to the target centroid and to the nearest other one, and the
  margin between them; real clips (each against centroids without itself) are the ceiling. Word
  error rate as `speech_quality.py` measures it (pocketsphinx under the sentence grammar), beside
  espeak-ng's own audio of the same sentences.
- **Persian.** The same preset on espeak-ng `fa` speech with `data.language: fa`, characters
  against phonemes, each for the same minutes: MCD-DTW and duration ratio of held-out sentences
  against espeak-ng's rendering of them.

Writes `docs/voices.md` (the tables, the CPU, the commands) unless `--no-doc`.

Usage:
    python benchmarks/voices.py [--data DIR] [--runs DIR] [--train all|voices|persian|none]
                                [--compare-self-crop] [--steps-at 1000] [--persian-minutes 12]
                                [--skip-persian] [--skip-voices]

Needs the evaluation extras: pip install -e ".[eval,voices]" (Resemblyzer pulls in PyTorch), and
espeak-ng and sox to make the data.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np
import yaml

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import results_page  # noqa: E402
import speech_quality  # noqa: E402
import voices_data  # noqa: E402
from results_page import cpu_name  # noqa: E402

PRESET = ROOT / "configs" / "voices-cpu.yaml"
DOC = ROOT / "docs" / "voices.md"


INTRO = """# Voices and languages: measured

Written by `{command}` (what it measures and how: the script's docstring); every figure below is
from that one run, on the machine named. The data are `benchmarks/voices_data.py`'s: three
espeak-ng voices reading English (about 7 minutes each), and an espeak-ng `fa` voice reading
Persian (20 minutes). Nothing is trained on the held-out sentences or on the clips `--speaker-wav`
clones from.

"""
NOTES = """
How to read the tables:

- **speaker-ID accuracy**: the share of our clips whose nearest voice, by the speaker encoder's
  cosine similarity to each voice's centroid of real clips, is the voice asked for. **cosine to
  target / to nearest other**: the means of those similarities; **margin**: their difference
  (how far apart the voices are kept). The real-clips row is each espeak-ng clip against the
  centroids, its own voice's made without it: what a perfect copy of the voice would score.
- **WER**: pocketsphinx under the sentences' grammar (`benchmarks/speech_quality.py`); espeak-ng's
  own audio of the same sentences is in the real-clips row.
- **Persian**: MCD-DTW (dB, lower is closer) of our mel against espeak-ng's rendering of the same
  held-out sentence, and the ratio of our length to espeak-ng's; both runs trained for the same
  minutes, so the front end that learns faster shows it.
"""


def variant(base: Path, target: Path, changes: dict) -> Path:
    """A copy of the preset `base` with dotted keys changed (comments dropped: a scratch file)."""
    config = yaml.safe_load(base.read_text(encoding="utf-8"))
    for dotted, value in changes.items():
        section, key = dotted.split(".")
        config.setdefault(section, {})[key] = value
    target.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return target


def train(config: Path, data: Path, run_dir: Path, log: Path) -> float:
    print(f"training {config.name} on {data} into {run_dir} ...", file=sys.stderr)
    return speech_quality.train(config, data, run_dir, log)


class Speakers:
    """Resemblyzer embeddings and each voice's centroid of real clips."""

    def __init__(self, real: dict[str, list[Path]]):
        from resemblyzer import VoiceEncoder

        self.encoder = VoiceEncoder("cpu", verbose=False)
        self.names = list(real)
        self.real = {name: np.stack([self.embed(path) for path in paths]) for name, paths in real.items()}
        self.centroids = {name: self._unit(vectors.mean(axis=0)) for name, vectors in self.real.items()}

    @staticmethod
    def _unit(vector: np.ndarray) -> np.ndarray:
        return vector / np.linalg.norm(vector)

    def embed(self, path: Path) -> np.ndarray:
        from resemblyzer import preprocess_wav

        return self.encoder.embed_utterance(preprocess_wav(path))

    def score(self, vector: np.ndarray, target: str, centroids: dict | None = None) -> tuple[bool, float, float]:
        """(nearest centroid is `target`, cosine to target, cosine to the nearest other)."""
        centroids = centroids or self.centroids
        cosines = {name: float(np.dot(vector, centroid)) for name, centroid in centroids.items()}
        other = max(value for name, value in cosines.items() if name != target)
        return max(cosines, key=cosines.__getitem__) == target, cosines[target], other

    def ceiling(self) -> list[tuple[bool, float, float]]:
        """Every real clip against the centroids, its own voice's made without it."""
        scores = []
        for name, vectors in self.real.items():
            for index, vector in enumerate(vectors):
                rest = np.delete(vectors, index, axis=0).mean(axis=0)
                centroids = dict(self.centroids, **{name: self._unit(rest)})
                scores.append(self.score(vector, name, centroids))
        return scores


def summarise(scores: list[tuple[bool, float, float]]) -> dict:
    return {
        "accuracy": sum(hit for hit, _, _ in scores) / len(scores),
        "target": statistics.mean(target for _, target, _ in scores),
        "other": statistics.mean(other for _, _, other in scores),
        "margin": statistics.mean(target - other for _, target, other in scores),
        "count": len(scores),
    }


def evaluate_voices(
    run_dir: Path, data: Path, out: Path, speakers: Speakers, recognizer, step: Optional[int] = None
) -> dict:
    """Speak every held-out sentence in its voice by name and cloned; score voice and words."""
    from xtts_cli.evaluation.recognizer import word_error_rate
    from xtts_cli.inference.loading import load_run
    from xtts_cli.run.files import load_speaking_rate
    from xtts_cli.speech.synthesis import resolve_voice, synthesize_speech, wav_bytes

    config, tokenizer, model, step, run = load_run(run_dir, step)
    rate = load_speaking_rate(run.path)
    sentences = (data / "heldout.txt").read_text(encoding="utf-8").splitlines()
    out.mkdir(parents=True, exist_ok=True)
    results: dict = {"step": step}
    for mode in ("speaker", "speaker-wav"):
        scores, said, heard = [], [], []
        for index, text in enumerate(sentences):
            name = speakers.names[index % len(speakers.names)]
            if mode == "speaker":
                voice = resolve_voice(run.path, config.data, tokenizer, model, speaker=name)
            else:
                clips = sorted((data / "clone" / name.replace("+", "_")).glob("*.wav"))
                clip = clips[(index // len(speakers.names)) % len(clips)]
                voice = resolve_voice(run.path, config.data, tokenizer, model, speaker_wav=clip)
            speech = synthesize_speech(model, tokenizer, text, voice, config.data, rate=rate, settings=config.synthesis)
            path = out / f"{mode}-{index:03d}.wav"
            path.write_bytes(wav_bytes(speech.waveform, config.data.sample_rate))
            scores.append(speakers.score(speakers.embed(path), name))
            said.append(text)
            heard.append(recognizer.transcribe(*speech_quality.read_wav(path)))
        results[mode] = dict(summarise(scores), wer=word_error_rate(said, heard))
    return results


def espeak_wer(data: Path, names: list[str], recognizer) -> float:
    from xtts_cli.evaluation.recognizer import word_error_rate

    sentences = (data / "heldout.txt").read_text(encoding="utf-8").splitlines()
    heard = []
    for index in range(len(sentences)):
        name = names[index % len(names)].replace("+", "_")
        heard.append(
            recognizer.transcribe(*speech_quality.read_wav(data / "heldout" / name / f"heldout-{index + 1:04d}.wav"))
        )
    return word_error_rate(sentences, heard)


def evaluate_persian(run_dir: Path, data: Path, out: Path) -> dict:
    """MCD-DTW and duration ratio of the held-out sentences against espeak-ng's rendering."""
    from xtts_cli.evaluation.mel_distance import mel_cepstral_distortion
    from xtts_cli.inference.loading import load_run
    from xtts_cli.run.files import REFERENCE_FILE, load_speaking_rate
    from xtts_cli.speech.synthesis import synthesize_speech

    config, tokenizer, model, step, run = load_run(run_dir)
    reference = np.load(run.path / REFERENCE_FILE)
    rate = load_speaking_rate(run.path)
    sentences = (data / "heldout.txt").read_text(encoding="utf-8").splitlines()
    out.mkdir(parents=True, exist_ok=True)
    distortions, ratios = [], []
    for index, text in enumerate(sentences):
        speech = synthesize_speech(
            model, tokenizer, text, reference, config.data, rate=rate, settings=config.synthesis, language="fa"
        )
        espeak = speech_quality.mel_of(data / "heldout" / f"heldout-{index + 1:04d}.wav", config.data)
        distortions.append(mel_cepstral_distortion(speech.mel, espeak))
        ratios.append(speech.frames / len(espeak))
        if index == 0:  # the first sentence, for the page's players
            from xtts_cli.speech.synthesis import wav_bytes

            (out / "heldout-0001.wav").write_bytes(wav_bytes(speech.waveform, config.data.sample_rate))
    return {
        "step": step,
        "mcd": statistics.median(distortions),
        "mcd_mean": statistics.mean(distortions),
        "duration_ratio": statistics.median(ratios),
        "duration_spread": (min(ratios), max(ratios)),
        "frontend": config.data.text_frontend,
    }


def phonemize_rates(count: int = 20000) -> dict[str, float]:
    """Transcripts a second espeak-ng phonemises (the scan's one-off cost), English and Persian."""
    import random

    import speech_data

    from xtts_cli.data.phonemes import phonemize

    rng = random.Random(1)
    rates = {}
    for language, make in (("en", speech_data.sentence), ("fa", voices_data.persian_sentence)):
        texts = [make(rng) for _ in range(count)]
        phonemize(texts[:10], language)  # the library loaded
        began = time.perf_counter()
        phonemize(texts, language)
        rates[language] = count / (time.perf_counter() - began)
    return rates


def voice_rows(label: str, result: dict) -> list[str]:
    rows = []
    for mode in ("speaker", "speaker-wav"):
        r = result[mode]
        rows.append(
            f"| {label} | `--{mode}` | {r['accuracy']:.2f} ({round(r['accuracy'] * r['count'])}/{r['count']}) | "
            f"{r['target']:.3f} | {r['other']:.3f} | {r['margin']:.3f} | {r['wer']:.3f} |"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=voices_data.DEFAULT_OUT)
    parser.add_argument("--runs", type=Path, default=Path(tempfile.gettempdir()) / "xtts-voices-runs")
    parser.add_argument("--config", type=Path, default=PRESET)
    parser.add_argument(
        "--train",
        choices=["all", "voices", "persian", "none"],
        default="all",
        help="which runs to train; the others are scored as they are in --runs",
    )
    parser.add_argument(
        "--steps-at",
        default="",
        help="also score the voice runs at these steps (comma-separated; checkpoints the runs keep): "
        "what a slower machine's minutes hold",
    )
    parser.add_argument(
        "--compare-self-crop", action="store_true", help="also train with every reference a crop of its own clip"
    )
    parser.add_argument("--persian-minutes", type=float, default=12.0, help="training minutes of each Persian run")
    parser.add_argument("--skip-voices", action="store_true")
    parser.add_argument("--skip-persian", action="store_true")
    parser.add_argument("--no-doc", action="store_true", help="print only; leave docs/voices.md as it is")
    args = parser.parse_args(argv)
    results_page.needs("eval,voices", "resemblyzer", "pocketsphinx")

    voices_dir, persian_dir = args.data / "voices", args.data / "persian"
    if not (voices_dir / "heldout.txt").is_file() and not args.skip_voices:
        voices_data.make_voices(voices_dir)
    if not (persian_dir / "heldout.txt").is_file() and not args.skip_persian:
        voices_data.make_persian(persian_dir)
    args.runs.mkdir(parents=True, exist_ok=True)
    cpu = cpu_name()
    lines = [f"CPU: {cpu}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}", ""]
    printed: list[str] = []

    if not args.skip_voices:
        from xtts_cli.evaluation.recognizer import Recognizer

        names = [line.split("|")[2] for line in (voices_dir / "metadata.csv").read_text().splitlines()[1:]]
        names = list(dict.fromkeys(names))
        sentences = (voices_dir / "heldout.txt").read_text(encoding="utf-8").splitlines()
        real = {
            name: sorted((voices_dir / "heldout" / name.replace("+", "_")).glob("*.wav"))[: len(sentences)]
            for name in names
        }
        speakers = Speakers(real)
        recognizer = Recognizer((voices_dir / "sentences.jsgf").read_text(encoding="ascii"))
        runs = {"other clips (preset)": (args.config, args.runs / "voices")}
        if args.compare_self_crop:
            self_crop = variant(
                args.config, args.runs / "voices-self-crop.yaml", {"data.reference_from_other_clips": 0.0}
            )
            runs["own clip only"] = (self_crop, args.runs / "voices-self-crop")
        minutes = {}
        results = {}
        for label, (config, run_dir) in runs.items():
            if args.train in ("all", "voices"):
                minutes[label] = train(config, voices_dir, run_dir, args.runs / f"{run_dir.name}.log") / 60
            for step in [int(value) for value in args.steps_at.split(",") if value.strip()]:
                results[f"{label} at {step}"] = evaluate_voices(
                    run_dir, voices_dir, args.runs / f"{run_dir.name}-{step}-out", speakers, recognizer, step
                )
            results[label] = evaluate_voices(
                run_dir, voices_dir, args.runs / f"{run_dir.name}-out", speakers, recognizer
            )
        ceiling = summarise(speakers.ceiling())
        table = [
            "| run | voice from | speaker-ID accuracy | cosine to target | cosine to nearest other | margin | WER |",
            "|---|---|---|---|---|---|---|",
        ]
        for label, result in results.items():
            table += voice_rows(f"{label.split(' at ')[0]}, step {result['step']}", result)
        table.append(
            f"| real clips (ceiling) | espeak-ng | {ceiling['accuracy']:.2f} | {ceiling['target']:.3f} | "
            f"{ceiling['other']:.3f} | {ceiling['margin']:.3f} | {espeak_wer(voices_dir, names, recognizer):.3f} |"
        )
        heading = f"Three voices ({', '.join(names)}), {len(sentences)} held-out sentences, `{args.config.name}`"
        timing = ", ".join(f"{label}: {value:.1f} min" for label, value in minutes.items())
        lines += [f"## {heading}", "", *table, ""] + (
            [f"Training time (wall clock, start-up included): {timing}.", ""] if timing else []
        )
        printed += [heading, *table, timing]
        if not args.no_doc:
            # Each voice's first held-out sentence: espeak-ng's, then the preset run's by name and cloned.
            out = args.runs / "voices-out"
            clips = []
            for index, name in enumerate(names):
                clips += [
                    (
                        f'{name}, "{sentences[index]}": espeak-ng',
                        voices_dir / "heldout" / name.replace("+", "_") / f"heldout-{index + 1:04d}.wav",
                    ),
                    ("ours, the voice by name (`--speaker`)", out / f"speaker-{index:03d}.wav"),
                    ("ours, cloned from another clip (`--speaker-wav`)", out / f"speaker-wav-{index:03d}.wav"),
                ]
            lines += ["Listen:", "", *results_page.players("voices", clips)]

    if not args.skip_persian:
        results = {}
        for frontend in ("characters", "phonemes"):
            config = variant(
                args.config,
                args.runs / f"persian-{frontend}.yaml",
                {
                    "data.language": "fa",
                    "data.text_frontend": frontend,
                    "training.max_minutes": args.persian_minutes,
                    "training.max_steps": 100000,
                },
            )
            run_dir = args.runs / f"persian-{frontend}"
            if args.train in ("all", "persian"):
                train(config, persian_dir, run_dir, args.runs / f"persian-{frontend}.log")
            results[frontend] = evaluate_persian(run_dir, persian_dir, args.runs / f"persian-{frontend}-out")
        table = [
            "| front end | steps in the minutes | MCD-DTW median (dB) | MCD mean | duration ratio median (range) |",
            "|---|---|---|---|---|",
        ]
        for frontend, r in results.items():
            low, high = r["duration_spread"]
            table.append(
                f"| {frontend} | {r['step']} | {r['mcd']:.2f} | {r['mcd_mean']:.2f} | "
                f"{r['duration_ratio']:.2f} ({low:.2f}-{high:.2f}) |"
            )
        heading = f"Persian (espeak-ng `fa`), characters against phonemes, {args.persian_minutes:g} minutes each"
        lines += [f"## {heading}", "", *table, ""]
        if not args.no_doc:
            first = (persian_dir / "heldout.txt").read_text(encoding="utf-8").splitlines()[0]
            clips = [(f'"{first}": espeak-ng', persian_dir / "heldout" / "heldout-0001.wav")] + [
                (f"ours, {frontend}", args.runs / f"persian-{frontend}-out" / "heldout-0001.wav")
                for frontend in results
            ]
            lines += ["Listen:", "", *results_page.players("voices-fa", clips)]
        if args.train not in ("all", "persian"):
            lines += [
                f"The Persian runs were trained by an earlier run of this script (`--persian-minutes "
                f"{args.persian_minutes:g}`, the same code) and scored by this one.",
                "",
            ]
        printed += [heading, *table]

    rates = phonemize_rates()
    rate_line = (
        f"Phonemes (espeak-ng through phonemizer, one process): {rates['en']:,.0f} English and {rates['fa']:,.0f} "
        f"Persian transcripts a second, so 131,000 transcripts take about {131000 / min(rates.values()):.0f} s, "
        "once: the scan's memo keeps them."
    )
    lines += [rate_line, ""]
    printed.append(rate_line)
    print("\n".join([lines[0], *printed]))
    if not args.no_doc:
        DOC.write_text(
            INTRO.format(command=" ".join(["python benchmarks/voices.py", *(argv or sys.argv[1:])]))
            + "\n".join(lines)
            + "\n"
            + NOTES,
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
