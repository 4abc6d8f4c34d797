#!/usr/bin/env python3
"""The speech-quality benchmark's dataset: one espeak-ng voice reading sentences over a fixed vocabulary.

- Training clips (LJSpeech layout, `metadata.csv` + `wavs/`, 22.05 kHz 16-bit mono): about 20
  minutes of speech, one or two sentences a clip (1.5-8 s).
- Held-out sentences (`heldout.txt`), never trained on: new combinations of the same words, so a
  model that has learnt to read can say them and a recognizer limited to the vocabulary can score
  them. espeak-ng's own audio of each is in `heldout/` (the reference the model is compared with).
- `vocabulary.txt`: every word, one a line; `sentences.jsgf`: the sentence pattern as a JSGF
  grammar (the recognizer's two restrictions).

Sentences come from templates over word classes with a seeded random generator, so the output is
the same on every run; the voice is one espeak-ng voice at one speed (a single speaker).

Usage:
    python benchmarks/speech_data.py [--out DIR] [--minutes 20] [--heldout 24] [--voice en-us+klatt] [--seed 7]

Needs `espeak-ng` and `sox` on PATH (Debian: apt-get install -y espeak-ng sox).
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

SAMPLE_RATE = 22050
DEFAULT_OUT = Path(tempfile.gettempdir()) / "xtts-speech-data"
MAX_CLIP_SECONDS = 8.0
# espeak-ng's Klatt voice: of the voices tried, the one pocketsphinx reads best (WER 0.10 on the
# held-out sentences under the sentence grammar, against 0.36 for the default en-us voice), so the
# benchmark's reference is a voice the recognizer can hear.
DEFAULT_VOICE = "en-us+klatt"

DETERMINERS = ["the", "a", "my", "your", "his", "her", "our", "their", "this", "that", "every", "one"]
ADJECTIVES = [
    "red",
    "green",
    "blue",
    "small",
    "big",
    "old",
    "new",
    "little",
    "happy",
    "quiet",
    "warm",
    "cold",
    "dark",
    "bright",
    "tall",
    "young",
    "lazy",
    "clever",
    "brown",
    "white",
    "black",
    "heavy",
    "soft",
    "round",
]
NOUNS = [
    "cat",
    "dog",
    "bird",
    "fish",
    "horse",
    "child",
    "man",
    "woman",
    "teacher",
    "doctor",
    "farmer",
    "baker",
    "king",
    "queen",
    "boy",
    "girl",
    "friend",
    "neighbor",
    "house",
    "garden",
    "table",
    "chair",
    "window",
    "door",
    "river",
    "tree",
    "road",
    "city",
    "village",
    "boat",
    "car",
    "train",
    "book",
    "letter",
    "box",
    "cup",
    "apple",
    "bread",
    "ball",
    "hat",
    "coat",
    "key",
    "lamp",
    "bed",
    "field",
    "hill",
    "forest",
    "market",
    "school",
    "kitchen",
]
VERBS = [
    "found",
    "saw",
    "bought",
    "painted",
    "carried",
    "opened",
    "closed",
    "cleaned",
    "moved",
    "washed",
    "dropped",
    "lifted",
    "watched",
    "liked",
    "kept",
    "took",
    "gave",
    "sold",
    "made",
    "fixed",
]
INTRANSITIVE = ["sat", "slept", "stood", "waited", "walked", "ran", "sang", "laughed", "rested", "stayed"]
PREPOSITIONS = ["near", "under", "behind", "beside", "inside", "above", "by", "across", "along", "over"]
ADVERBS = ["today", "yesterday", "again", "slowly", "quickly", "quietly", "early", "late", "there", "here"]
CONJUNCTIONS = ["and", "but", "while"]


def _noun_phrase(rng: random.Random, adjective_share: float = 0.6) -> list[str]:
    words = [rng.choice(DETERMINERS)]
    if rng.random() < adjective_share:
        words.append(rng.choice(ADJECTIVES))
    words.append(rng.choice(NOUNS))
    return words


def _clause(rng: random.Random) -> list[str]:
    kind = rng.randrange(4)
    subject = _noun_phrase(rng)
    if kind == 0:
        return subject + [rng.choice(VERBS)] + _noun_phrase(rng)
    if kind == 1:
        return subject + [rng.choice(VERBS)] + _noun_phrase(rng, 0.3) + [rng.choice(PREPOSITIONS)] + _noun_phrase(rng)
    if kind == 2:
        return (
            subject + [rng.choice(INTRANSITIVE), rng.choice(PREPOSITIONS)] + _noun_phrase(rng) + [rng.choice(ADVERBS)]
        )
    return subject + [rng.choice(INTRANSITIVE), rng.choice(ADVERBS)]


def sentence(rng: random.Random) -> str:
    """One sentence: a clause, or two joined by a conjunction; lower case, ending in a full stop."""
    words = _clause(rng)
    if rng.random() < 0.3:
        words = words + [rng.choice(CONJUNCTIONS)] + _clause(rng)
    return " ".join(words) + "."


def sentence_grammar() -> str:
    """JSGF for every sentence `sentence` can make (the recognizer's pattern; see
    xtts_cli/evaluation/recognizer.py): each slot still holds 10 to 50 words."""

    def choice(words: list[str]) -> str:
        return "(" + " | ".join(words) + ")"

    return "\n".join(
        [
            "#JSGF V1.0;",
            "grammar sentences;",
            "public <sentence> = <clause> [<conjunction> <clause>];",
            "<clause> = <noun_phrase> <verb> <noun_phrase> [<preposition> <noun_phrase>]"
            " | <noun_phrase> <intransitive> [<preposition> <noun_phrase>] <adverb>;",
            "<noun_phrase> = <determiner> [<adjective>] <noun>;",
            f"<determiner> = {choice(DETERMINERS)};",
            f"<adjective> = {choice(ADJECTIVES)};",
            f"<noun> = {choice(NOUNS)};",
            f"<verb> = {choice(VERBS)};",
            f"<intransitive> = {choice(INTRANSITIVE)};",
            f"<preposition> = {choice(PREPOSITIONS)};",
            f"<adverb> = {choice(ADVERBS)};",
            f"<conjunction> = {choice(CONJUNCTIONS)};",
            "",
        ]
    )


def vocabulary() -> list[str]:
    return sorted(set(DETERMINERS + ADJECTIVES + NOUNS + VERBS + INTRANSITIVE + PREPOSITIONS + ADVERBS + CONJUNCTIONS))


def speak(text: str, voice: str, speed: int, target: Path, scratch: Path) -> float:
    """espeak-ng -> 22.05 kHz 16-bit mono WAV with silence trimmed to 0.1 s at each end; seconds."""
    raw = scratch / "raw.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(raw), text], check=True)
    subprocess.run(
        [
            "sox",
            "-D",
            str(raw),
            "-r",
            str(SAMPLE_RATE),
            "-b",
            "16",
            "-e",
            "signed-integer",
            "-c",
            "1",
            str(target),
            "silence",
            "1",
            "0.02",
            "0.1%",
            "reverse",
            "silence",
            "1",
            "0.02",
            "0.1%",
            "reverse",
            "pad",
            "0.1",
            "0.1",
        ],
        check=True,
    )
    with wave.open(str(target)) as handle:
        return handle.getnframes() / handle.getframerate()


def folders(out: Path) -> tuple[Path, Path]:
    """`out`/wavs and `out`/heldout, made, once espeak-ng and sox are found."""
    for tool in ("espeak-ng", "sox"):
        if subprocess.run(["which", tool], capture_output=True).returncode:
            raise SystemExit(f"{tool} not found on PATH; install it (Debian: apt-get install -y espeak-ng sox)")
    wavs, held = out / "wavs", out / "heldout"
    wavs.mkdir(parents=True, exist_ok=True)
    held.mkdir(parents=True, exist_ok=True)
    return wavs, held


def draw(make, count: int, fewest: int, most: int, drawn: list[str] | None = None) -> list[str]:
    """`drawn` and new sentences from `make()` up to `count` in all, each new and of `fewest` to `most` words."""
    sentences = list(drawn or [])
    while len(sentences) < count:
        text = make()
        if text not in sentences and fewest <= len(text.split()) <= most:
            sentences.append(text)
    return sentences


def make_dataset(
    out: Path, *, minutes: float = 20.0, heldout: int = 24, voice: str = DEFAULT_VOICE, speed: int = 165, seed: int = 7
) -> dict:
    """Write the dataset into `out` (see the module docstring); returns its summary."""
    wavs, held = folders(out)
    rng = random.Random(seed)
    # The held-out sentences are drawn first and excluded from training, word for word.
    heldout_sentences = draw(lambda: sentence(rng), heldout, 5, 14)
    lines, total = [], 0.0
    seen = set(heldout_sentences)
    with tempfile.TemporaryDirectory() as scratch:
        for index, text in enumerate(heldout_sentences):
            speak(text, voice, speed, held / f"heldout-{index:03d}.wav", Path(scratch))
        index = 0
        while total < minutes * 60.0:
            parts = [sentence(rng) for _ in range(1 if rng.random() < 0.6 else 2)]
            text = " ".join(parts)
            if any(part in seen for part in parts):
                continue
            clip = f"SPK-{index + 1:04d}"
            seconds = speak(text, voice, speed, wavs / f"{clip}.wav", Path(scratch))
            if seconds > MAX_CLIP_SECONDS:
                (wavs / f"{clip}.wav").unlink()
                continue
            seen.update(parts)
            lines.append(f"{clip}|{text}|{text}")
            total += seconds
            index += 1
    (out / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "heldout.txt").write_text("\n".join(heldout_sentences) + "\n", encoding="utf-8")
    (out / "vocabulary.txt").write_text("\n".join(vocabulary()) + "\n", encoding="utf-8")
    (out / "sentences.jsgf").write_text(sentence_grammar(), encoding="ascii")
    summary = {
        "clips": len(lines),
        "minutes": total / 60.0,
        "heldout": len(heldout_sentences),
        "voice": voice,
        "speed": speed,
        "seed": seed,
        "words": len(vocabulary()),
    }
    (out / "README.md").write_text(
        "espeak-ng speech for the xtts speech-quality benchmark (benchmarks/speech_data.py): "
        f"{summary['clips']} clips, {summary['minutes']:.1f} min, voice {voice} at {speed} words/min, seed {seed}; "
        f"{summary['heldout']} held-out sentences in heldout.txt (espeak-ng audio in heldout/), "
        f"{summary['words']} words in vocabulary.txt.\n",
        encoding="utf-8",
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--minutes", type=float, default=20.0, help="minutes of training speech")
    parser.add_argument("--heldout", type=int, default=24, help="held-out sentences")
    parser.add_argument("--voice", default=DEFAULT_VOICE, help="espeak-ng voice")
    parser.add_argument("--speed", type=int, default=165, help="espeak-ng words per minute")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    summary = make_dataset(
        args.out, minutes=args.minutes, heldout=args.heldout, voice=args.voice, speed=args.speed, seed=args.seed
    )
    print(
        f"{args.out}: {summary['clips']} clips, {summary['minutes']:.1f} min, {summary['heldout']} held-out sentences, "
        f"{summary['words']} words"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
