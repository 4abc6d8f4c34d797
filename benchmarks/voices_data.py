#!/usr/bin/env python3
"""The voices benchmark's datasets: several espeak-ng voices reading English, and one reading Persian.

- `voices/`: a multi-speaker set in the coqui layout (`metadata.csv` with the header
  `audio_file|text|speaker_name`, `wavs/`), 22.05 kHz 16-bit mono, each voice reading its own
  sentences (`--minutes` of speech per voice). Voices are espeak-ng variants of different sex,
  pitch and accent (`--voices`, default `en-us+f2`, `en-us+klatt`, `en-gb-x-rp+m7`). Beside it:
  - `heldout.txt`: sentences no voice trained on, and `heldout/<voice>/heldout-NNN.wav`, each
    voice's espeak-ng audio of every one of them (the real clips the speaker encoder compares ours
    with: their centroids say whose voice a clip is, their spread is the ceiling);
  - `clone/<voice>/clone-NNN.wav`: other sentences in each voice, never trained on, the
    `--speaker-wav` references a cloned voice is taken from;
  - `vocabulary.txt` and `sentences.jsgf`: the recognizer's restrictions (as `speech_data.py`).
- `persian/`: one espeak-ng `fa` voice in the LJSpeech layout (`metadata.csv`: id|text|text), from
  templates over a Persian vocabulary (subject-object-verb clauses, `را`, present verbs with the
  `می‌` prefix and plurals with `‌ها`, both spelled with the zero-width non-joiner), and
  `heldout.txt` + `heldout/heldout-NNN.wav`: espeak-ng's rendering of sentences never trained on.

Sentences come from seeded templates, so every run writes the same files.

Usage:
    python benchmarks/voices_data.py [--out DIR] [--minutes 7] [--persian-minutes 20] [--voices V1,V2,V3]

Needs `espeak-ng` and `sox` on PATH (Debian: apt-get install -y espeak-ng sox).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import speech_data  # noqa: E402

DEFAULT_OUT = Path(tempfile.gettempdir()) / "xtts-voices-data"
# One female and two male voices, two American and one British (Received Pronunciation): an offline
# speaker encoder (Resemblyzer) puts their real clips 0.61-0.80 apart in cosine similarity, where two
# clips of one of them score 0.99.
DEFAULT_VOICES = ("en-us+f2", "en-us+klatt", "en-gb-x-rp+m7")
HELDOUT_SENTENCES = 18
CLONE_CLIPS = 3

SUBJECTS = [
    "مرد",
    "زن",
    "پسر",
    "دختر",
    "معلم",
    "دکتر",
    "کشاورز",
    "نانوا",
    "پادشاه",
    "ملکه",
    "دوستم",
    "همسایه",
    "بچه",
    "پدرم",
    "مادرم",
    "برادرم",
    "خواهرم",
    "مهمان",
]
OBJECTS = [
    "کتاب",
    "نامه",
    "سیب",
    "نان",
    "توپ",
    "کلاه",
    "کلید",
    "چراغ",
    "جعبه",
    "فنجان",
    "میز",
    "صندلی",
    "پنجره",
    "گل",
    "لباس",
    "قلم",
    "دفتر",
    "چتر",
]
ADJECTIVES_FA = ["قرمز", "سبز", "آبی", "کوچک", "بزرگ", "کهنه", "تازه", "قشنگ", "سفید", "سیاه", "سنگین", "گرم"]
PAST_VERBS = [
    "دید",
    "خرید",
    "آورد",
    "برداشت",
    "شست",
    "بست",
    "ساخت",
    "فروخت",
    "گرفت",
    "پیدا کرد",
    "باز کرد",
    "پنهان کرد",
]
PRESENT_VERBS = [
    "می\u200cبیند",
    "می\u200cخرد",
    "می\u200cآورد",
    "می\u200cشوید",
    "می\u200cسازد",
    "می\u200cفروشد",
    "می\u200cگیرد",
]
INTRANSITIVE_FA = ["نشست", "خوابید", "ایستاد", "ماند", "دوید", "خندید", "رفت", "آمد", "می\u200cخندد", "می\u200cرود"]
PLACES = [
    "در خانه",
    "در باغ",
    "کنار رودخانه",
    "در بازار",
    "در مدرسه",
    "در آشپزخانه",
    "زیر درخت",
    "در شهر",
    "در روستا",
    "روی میز",
    "کنار پنجره",
]
TIMES = ["امروز", "دیروز", "صبح", "شب", "دوباره", "آرام", "زود", "دیر", "ناگهان"]


def persian_sentence(rng: random.Random) -> str:
    """One Persian sentence: a clause (subject, object with `را`, place, verb), or two joined by `و`."""

    def clause() -> list[str]:
        words = [rng.choice(TIMES)] if rng.random() < 0.4 else []
        words.append(rng.choice(SUBJECTS))
        kind = rng.randrange(3)
        if kind == 2:
            words += [rng.choice(PLACES), rng.choice(INTRANSITIVE_FA)]
            return words
        obj = rng.choice(OBJECTS)
        plural = rng.random() < 0.3
        if rng.random() < 0.4:  # an adjective after its noun, with the ezafe of a plural written out
            obj += ("\u200cهای " if plural else " ") + rng.choice(ADJECTIVES_FA)
        elif plural:
            obj += "\u200cها"
        words += [obj, "را"]
        if rng.random() < 0.5:
            words.append(rng.choice(PLACES))
        words.append(rng.choice(PAST_VERBS if kind == 0 else PRESENT_VERBS))
        return words

    words = clause()
    if rng.random() < 0.3:
        words = words + ["و"] + clause()
    return " ".join(words) + "."


def _clips(
    sentences: list[str], voice: str, speed: int, folder: Path, stem: str, scratch: Path, limit: float = 0.0
) -> list[tuple[str, str, float]]:
    """Speak each sentence into folder/stem-NNNN.wav; (clip id, text, seconds) of those kept
    (shorter than speech_data.MAX_CLIP_SECONDS; with `limit`, until that many seconds)."""
    folder.mkdir(parents=True, exist_ok=True)
    kept, total = [], 0.0
    for text in sentences:
        clip = f"{stem}-{len(kept) + 1:04d}"
        seconds = speech_data.speak(text, voice, speed, folder / f"{clip}.wav", scratch)
        if seconds > speech_data.MAX_CLIP_SECONDS and limit:  # held-out clips (no limit) are all kept
            (folder / f"{clip}.wav").unlink()
            continue
        kept.append((clip, text, seconds))
        total += seconds
        if limit and total >= limit:
            break
    return kept


def _draw(make, rng: random.Random, count: int, exclude: set[str], *, words: tuple[int, int] = (5, 14)) -> list[str]:
    drawn: list[str] = []
    while len(drawn) < count:
        text = make(rng)
        if text not in exclude and text not in drawn and words[0] <= len(text.split()) <= words[1]:
            drawn.append(text)
    return drawn


def make_voices(
    out: Path,
    *,
    voices=DEFAULT_VOICES,
    minutes: float = 7.0,
    heldout: int = HELDOUT_SENTENCES,
    speed: int = 165,
    seed: int = 11,
) -> dict:
    rng = random.Random(seed)
    held = _draw(speech_data.sentence, rng, heldout, set())
    lines = ["audio_file|text|speaker_name"]
    minutes_of: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for voice in voices:
            name = voice.replace("+", "_")
            _clips(held, voice, speed, out / "heldout" / name, "heldout", Path(scratch))
            clone = _draw(speech_data.sentence, rng, CLONE_CLIPS, set(held))
            _clips(clone, voice, speed, out / "clone" / name, "clone", Path(scratch))
            pool = _draw(speech_data.sentence, rng, int(minutes * 60 / 2) + 40, set(held) | set(clone))
            # One or two sentences a clip, as speech_data.py makes them.
            texts = [pool[i] if rng.random() < 0.6 else f"{pool[i]} {pool[i + 1]}" for i in range(0, len(pool) - 1, 2)]
            kept = _clips(texts, voice, speed, out / "wavs", name, Path(scratch), limit=minutes * 60)
            lines += [f"wavs/{clip}.wav|{text}|{voice}" for clip, text, _ in kept]
            minutes_of[voice] = sum(seconds for *_, seconds in kept) / 60
    (out / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "heldout.txt").write_text("\n".join(held) + "\n", encoding="utf-8")
    (out / "vocabulary.txt").write_text("\n".join(speech_data.vocabulary()) + "\n", encoding="utf-8")
    (out / "sentences.jsgf").write_text(speech_data.sentence_grammar(), encoding="ascii")
    return {"voices": list(voices), "minutes": minutes_of, "clips": len(lines) - 1, "heldout": len(held)}


def make_persian(out: Path, *, minutes: float = 20.0, heldout: int = 24, speed: int = 150, seed: int = 13) -> dict:
    rng = random.Random(seed)
    held = _draw(persian_sentence, rng, heldout, set(), words=(4, 14))
    pool = _draw(persian_sentence, rng, int(minutes * 60 / 3) + 60, set(held), words=(3, 16))
    with tempfile.TemporaryDirectory() as scratch:
        _clips(held, "fa", speed, out / "heldout", "heldout", Path(scratch))
        kept = _clips(pool, "fa", speed, out / "wavs", "FA", Path(scratch), limit=minutes * 60)
    (out / "metadata.csv").write_text("".join(f"{clip}|{text}|{text}\n" for clip, text, _ in kept), encoding="utf-8")
    (out / "heldout.txt").write_text("\n".join(held) + "\n", encoding="utf-8")
    return {"clips": len(kept), "minutes": sum(seconds for *_, seconds in kept) / 60, "heldout": len(held)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--minutes", type=float, default=7.0, help="minutes of training speech per voice")
    parser.add_argument("--persian-minutes", type=float, default=20.0)
    parser.add_argument("--voices", default=",".join(DEFAULT_VOICES), help="espeak-ng voices, comma-separated")
    parser.add_argument("--only", choices=["voices", "persian"], help="make one of the two sets")
    args = parser.parse_args(argv)
    for tool in ("espeak-ng", "sox"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} not found on PATH; install it (Debian: apt-get install -y espeak-ng sox)")
    if args.only != "persian":
        summary = make_voices(args.out / "voices", voices=tuple(args.voices.split(",")), minutes=args.minutes)
        shares = ", ".join(f"{voice} {minutes:.1f} min" for voice, minutes in summary["minutes"].items())
        print(f"{args.out / 'voices'}: {summary['clips']} clips ({shares}), {summary['heldout']} held-out sentences")
    if args.only != "voices":
        summary = make_persian(args.out / "persian", minutes=args.persian_minutes)
        print(
            f"{args.out / 'persian'}: {summary['clips']} clips, {summary['minutes']:.1f} min, "
            f"{summary['heldout']} held-out sentences"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
