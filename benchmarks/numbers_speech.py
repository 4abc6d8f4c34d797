#!/usr/bin/env python3
"""Are numbers spoken? Train `speak-cpu` on transcripts written with digits and score held-out ones.

The dataset is the speech-quality one (benchmarks/speech_data.py: one espeak-ng voice, a fixed
vocabulary) with a number phrase after half the sentences, written as a corpus writes it: "at 7:30",
"for $3.50", "in 1947", "3 times", "for the 21st time". espeak-ng speaks what xtts reads for them
(`xtts_cli.data.numbers`: "at seven thirty"), so the audio and the words agree; the transcripts
keep the digits, and training reads them as words. On held-out sentences, never trained on, one
run scores side by side:
- word error rate (pocketsphinx, the dataset's sentence grammar with a number phrase of well-formed
  numbers) of our synthesis of the sentences with numbers and of those without, and of espeak-ng's
  own audio of both (what the recognizer makes of the voice the model learnt);
- how many number phrases the recognizer heard word for word.

Usage:
    python benchmarks/numbers_speech.py [--data DIR] [--config configs/speak-cpu.yaml] [--run-dir DIR]
                                        [--out DIR] [--skip-train]

Needs the evaluation extra (pip install -e ".[eval]"), espeak-ng and sox.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import speech_data  # noqa: E402
from results_page import needs  # noqa: E402
from speech_quality import read_wav, train  # noqa: E402

DEFAULT_DATA = Path(tempfile.gettempdir()) / "xtts-numbers-data"
NUMBER_SHARE = 0.5
# A number phrase as `number_phrase` writes it, at a sentence's end.
PHRASE = re.compile(r"\b(?:at|for the|for|in) \S*\d[^ .]*(?:\.\d+)?(?: times| time)?|\b\d+ times")


def number_phrase(rng: random.Random) -> str:
    """A number as a corpus writes it: a time, money, a year, a count or an ordinal."""
    kind = rng.randrange(5)
    if kind == 0:
        return f"at {rng.randint(1, 12)}:{rng.choice([0, 5, 10, 15, 20, 30, 40, 45, 50]):02d}"
    if kind == 1:
        dollars = rng.choice([rng.randint(2, 99), rng.randint(100, 999)])
        return f"for ${dollars}" if rng.random() < 0.6 else f"for ${dollars}.{rng.randint(10, 99)}"
    if kind == 2:
        return f"in {rng.randint(1910, 1999)}"
    if kind == 3:
        return f"{rng.randint(3, 99)} times"
    return f"for the {_ordinal(rng.randint(2, 40))} time"


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def numbered_sentence(rng: random.Random, share: float = NUMBER_SHARE) -> str:
    text = speech_data.sentence(rng)
    return f"{text[:-1]} {number_phrase(rng)}." if rng.random() < share else text


def read_as_words(text: str) -> str:
    """What xtts reads for `text` (English, numbers as words), cased and punctuated as written."""
    from xtts_cli.data.numbers import number_reader

    return number_reader("en")(text)


_ONES = "one | two | three | four | five | six | seven | eight | nine"
_TEENS = "ten | eleven | twelve | thirteen | fourteen | fifteen | sixteen | seventeen | eighteen | nineteen"
_TENS = "twenty | thirty | forty | fifty | sixty | seventy | eighty | ninety"
_NTHS = "first | second | third | fourth | fifth | sixth | seventh | eighth | ninth"
_TEENTHS = "tenth | eleventh | twelfth | thirteenth | fourteenth | fifteenth | sixteenth | seventeenth | eighteenth"


def grammar() -> str:
    """The speech-quality sentence grammar with an optional number phrase, each number well formed as
    `number_phrase` writes it and xtts reads it (no free run of number words: "nine eight times")."""
    lines = speech_data.sentence_grammar().splitlines()
    public = next(index for index, line in enumerate(lines) if line.startswith("public <sentence>"))
    lines[public] = "public <sentence> = <clause> [<conjunction> <clause>] [<number_phrase>];"
    lines[public + 1 : public + 1] = [
        "<number_phrase> = at <n99> (o clock | oh <ones> | <n99>) | for <n999> dollars [and <n99> cents]"
        " | in nineteen <n99> | <n99> times | for the <nth> time;",
        f"<ones> = ({_ONES});",
        f"<n99> = <ones> | {_TEENS} | ({_TENS}) [<ones>];",
        "<n999> = <n99> | <ones> hundred [and <n99>];",
        f"<nth> = {_NTHS} | {_TEENTHS} | nineteenth | twentieth | thirtieth | fortieth | ({_TENS}) ({_NTHS});",
    ]
    return "\n".join(lines) + "\n"


def make_dataset(out: Path, *, minutes: float = 20.0, heldout: int = 24, seed: int = 11) -> None:
    """metadata.csv (digits in the transcripts, espeak-ng reading them as words), heldout.txt (24 with
    a number phrase, then 12 without) and their espeak-ng audio in heldout/."""
    wavs, held = speech_data.folders(out)
    rng = random.Random(seed)
    sentences = speech_data.draw(lambda: numbered_sentence(rng, share=1.0), heldout, 7, 16)
    sentences = speech_data.draw(lambda: speech_data.sentence(rng), heldout + heldout // 2, 5, 14, sentences)
    seen, lines, total = set(sentences), [], 0.0
    with tempfile.TemporaryDirectory() as scratch:
        for index, text in enumerate(sentences):
            speech_data.speak(
                read_as_words(text), speech_data.DEFAULT_VOICE, 165, held / f"heldout-{index:03d}.wav", Path(scratch)
            )
        while total < minutes * 60.0:
            parts = [numbered_sentence(rng) for _ in range(1 if rng.random() < 0.6 else 2)]
            if any(part in seen for part in parts):
                continue
            text, clip = " ".join(parts), f"NUM-{len(lines) + 1:04d}"
            spoken = read_as_words(text)
            seconds = speech_data.speak(spoken, speech_data.DEFAULT_VOICE, 165, wavs / f"{clip}.wav", Path(scratch))
            if seconds > speech_data.MAX_CLIP_SECONDS:
                (wavs / f"{clip}.wav").unlink()
                continue
            seen.update(parts)
            lines.append(f"{clip}|{text}|{text}")
            total += seconds
    (out / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "heldout.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    print(f"{out}: {len(lines)} clips, {total / 60:.1f} min, {len(sentences)} held-out sentences", file=sys.stderr)


def phrase_heard(text: str, heard: str) -> bool:
    """Whether the number phrase of `text`, read as words, is in what the recognizer heard."""
    from xtts_cli.evaluation.recognizer import normalize_words

    phrase = PHRASE.search(text)
    assert phrase, text
    return f" {normalize_words(read_as_words(phrase.group(0)))} " in f" {normalize_words(heard)} "


def speak_all(synthesizer, sentences: list[str], out: Path, prefix: str) -> list[Path]:
    from xtts_cli.speech.synthesis import wav_bytes

    paths = []
    for index, text in enumerate(sentences):
        speech = synthesizer.speak(text)
        path = out / f"{prefix}-{index:03d}.wav"
        path.write_bytes(wav_bytes(speech.waveform, synthesizer.sample_rate))
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "speak-cpu.yaml")
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "xtts-numbers-run")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "xtts-numbers-out")
    parser.add_argument("--skip-train", action="store_true", help="score the run already in --run-dir")
    args = parser.parse_args(argv)
    needs("eval", "pocketsphinx", "jiwer")

    from xtts_cli.evaluation.recognizer import Recognizer, word_error_rate
    from xtts_cli.inference.api import Synthesizer

    if not (args.data / "heldout.txt").is_file():
        make_dataset(args.data)
    sentences = (args.data / "heldout.txt").read_text(encoding="utf-8").splitlines()
    numbered = [text for text in sentences if re.search(r"\d", text)]
    espeak = [args.data / "heldout" / f"heldout-{index:03d}.wav" for index in range(len(sentences))]
    args.out.mkdir(parents=True, exist_ok=True)
    train_seconds = None
    if not args.skip_train:
        print(f"training {args.config.name} on {args.data} into {args.run_dir} ...", file=sys.stderr)
        train_seconds = train(args.config, args.data, args.run_dir, args.out / "train.log")

    synthesizer = Synthesizer.load(args.run_dir)
    ours = speak_all(synthesizer, sentences, args.out, "ours")

    recognizer = Recognizer(grammar())
    references = [read_as_words(text) for text in sentences]

    def heard(paths: list[Path]) -> list[str]:
        return [recognizer.transcribe(*read_wav(path)) for path in paths]

    count = len(numbered)
    rows = {"xtts (ours)": heard(ours), "espeak-ng": heard(espeak)}
    print(f"\nnumbers spoken: {count} held-out sentences with a number phrase, {len(sentences) - count} without;")
    print(f"run {args.run_dir} (step {synthesizer.step}), dataset {args.data}")
    print(f"{'':32} {'WER, numbers':>13} {'WER, none':>10} {'phrases heard':>14}")
    for name, hypotheses in rows.items():
        with_numbers = word_error_rate(references[:count], hypotheses[:count])
        without = word_error_rate(references[count:], hypotheses[count:])
        exact = sum(phrase_heard(text, said) for text, said in zip(numbered, hypotheses))
        print(f"{name:32} {with_numbers:13.3f} {without:10.3f} {f'{exact} of {count}':>14}")
    if train_seconds is not None:
        print(f"training time: {train_seconds / 60:.1f} min (xtts train, wall clock, including start-up)")
    for text, said in list(zip(numbered, rows["xtts (ours)"]))[:6]:
        print(f"  written: {text}\n  read:    {read_as_words(text)}\n  heard:   {said}")
    print(
        f"median seconds a sentence, ours: {statistics.median(len(read_wav(p)[0]) / synthesizer.sample_rate for p in ours):.2f}"
    )
    import results_page

    if results_page.recording():
        clips = [(f'"{numbered[i]}": ours (heard: "{rows["xtts (ours)"][i]}")', ours[i]) for i in range(2)]
        results_page.attach(
            ["Listen (held-out sentences, written with digits):", "", *results_page.players("numbers", clips)]
        )
    return 0


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "speech_quality.md"))
