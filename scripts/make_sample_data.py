#!/usr/bin/env python3
"""Generate the small bundled sample dataset (LJSpeech layout) with espeak-ng + sox.

Usage:
    python scripts/make_sample_data.py [--out DIR]

Writes into DIR (default: xtts_cli/data/sample/):
    metadata.csv   id|text|normalized_text   (UTF-8, no header, LJSpeech style)
    speakers.csv   id|speaker                (speaker = espeak-ng voice used)
    wavs/<id>.wav  22050 Hz, 16-bit signed PCM, mono, 1.0-6.0 s each
    README.md      description, stats, provenance and license note

Standard library only; needs the `espeak-ng` and `sox` programs on PATH.
The output is deterministic: a fixed sentence list, a fixed voice/speed
schedule and no randomness (sox dithering is disabled).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "xtts_cli" / "data" / "sample"

ID_PREFIX = "XTTS001"
SAMPLE_RATE = 22050
MIN_SEC = 1.0
MAX_SEC = 6.0
MAX_DIR_BYTES = 5 * 1000 * 1000  # 5 MB (decimal; stricter than 5 MiB)
PAD_SEC = 0.1  # silence kept at each end after trimming

# espeak-ng voices ("speakers") and speaking rates (words per minute).
VOICES = ["en-us", "en-gb", "en-us+f3", "en-gb+m3"]
SPEEDS = [150, 158, 166, 175]

# (text, normalized_text). normalized_text is None when it equals text;
# otherwise it is given explicitly (numbers spelled out). The normalized
# form is what espeak-ng speaks, so audio and transcript match exactly.
SENTENCES: list[tuple[str, str | None]] = [
    ("The kettle is on the stove, so the water will be hot in a few minutes.", None),
    ("Please close the window before you leave.", None),
    ("The bus was late again this morning.", None),
    ("She planted tomatoes along the fence.", None),
    ("We bought 3 loaves of bread.", "We bought three loaves of bread."),
    ("The cat is asleep on the sofa.", None),
    ("Turn left at the next corner.", None),
    ("My brother fixed the old bicycle.", None),
    ("It rained all day on Sunday.", None),
    ("The library opens at 9 in the morning.", "The library opens at nine in the morning."),
    ("Could you pass me the salt?", None),
    ("The children played in the park until their parents called them in for supper.", None),
    ("He forgot his umbrella at the station and walked home through the rain.", None),
    ("Fresh apples are sold at the market.", None),
    ("The train leaves from platform 2.", "The train leaves from platform two."),
    ("Our neighbor walks her dog every evening.", None),
    ("The soup needs a little more pepper.", None),
    ("I left my keys on the kitchen table.", None),
    ("The river was calm and quiet, and the boats rested by the wooden pier.", None),
    ("There are 12 eggs in the box.", "There are twelve eggs in the box."),
    ("Where did you put the scissors?", None),
    ("The garden looks lovely in spring.", None),
    ("Thank you for the kind letter.", None),
    ("The shop closes early on Fridays.", None),
    ("A cold wind blew across the field.", None),
    ("We waited 20 minutes for a taxi.", "We waited twenty minutes for a taxi."),
    ("The baby laughed at the bright balloon.", None),
    ("Please write your name at the top.", None),
    ("The lamp on the desk is broken.", None),
    ("They painted the fence white.", None),
    ("The meeting starts at 4 this afternoon.", "The meeting starts at four this afternoon."),
    ("Birds were singing outside the window.", None),
    ("Good morning, how are you today?", None),
    ("The milk is in the fridge.", None),
    ("He reads the newspaper after breakfast.", None),
    ("The road to the village is narrow.", None),
    ("I need 5 stamps for these letters.", "I need five stamps for these letters."),
    ("The clock in the hall has stopped.", None),
    ("We had pancakes for breakfast with butter, honey and a pot of strong tea.", None),
    ("The sun set behind the hills.", None),
]


def die(msg: str) -> None:
    sys.exit(f"make_sample_data.py: error: {msg}")


def check_tools() -> None:
    for tool, pkg in (("espeak-ng", "espeak-ng"), ("sox", "sox")):
        if shutil.which(tool) is None:
            die(f"'{tool}' not found on PATH (install it, e.g. apt-get install -y {pkg})")


def run(cmd: list[str]) -> str:
    try:
        res = subprocess.run(cmd, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        die(f"command failed ({e.returncode}): {' '.join(cmd)}\n{e.stderr.strip()}")
    return res.stdout


def espeak_version() -> str:
    # e.g. "eSpeak NG text-to-speech: 1.51  Data at: /usr/lib/..."
    out = run(["espeak-ng", "--version"]).strip()
    head = out.split("Data at:")[0].strip()
    return head.split(":")[-1].strip() or head


def sox_version() -> str:
    # e.g. "sox:      SoX v14.4.2"
    out = run(["sox", "--version"]).strip()
    return out.split("SoX")[-1].strip() or out


def wav_info(path: Path) -> tuple[int, int, int, float]:
    with wave.open(str(path), "rb") as w:
        rate, ch, width, n = w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()
    return rate, ch, width, n / rate


def synth(text: str, voice: str, speed: int, dst: Path, tmpdir: Path) -> None:
    raw = tmpdir / "raw.wav"
    run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(raw), text])
    # -D: no dither (keeps output deterministic). Trim leading silence, then
    # trailing silence (via reverse), then pad PAD_SEC of silence at each end.
    run(
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
            str(dst),
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
            str(PAD_SEC),
            str(PAD_SEC),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT.relative_to(REPO_ROOT)})"
    )
    args = ap.parse_args(argv)

    check_tools()
    out: Path = args.out
    wav_dir = out / "wavs"
    wav_dir.mkdir(parents=True, exist_ok=True)
    for old in wav_dir.glob("*.wav"):  # drop stale clips from earlier runs
        old.unlink()

    meta_lines, spk_lines, durations, speeds_used = [], [], [], set()
    with tempfile.TemporaryDirectory() as td:
        for i, (text, norm) in enumerate(SENTENCES):
            norm = norm or text
            assert "|" not in text and "|" not in norm, text
            uid = f"{ID_PREFIX}-{i + 1:04d}"
            voice = VOICES[i % len(VOICES)]
            speed = SPEEDS[(i // len(VOICES)) % len(SPEEDS)]
            dst = wav_dir / f"{uid}.wav"
            synth(norm, voice, speed, dst, Path(td))
            rate, ch, width, dur = wav_info(dst)
            assert (rate, ch, width) == (SAMPLE_RATE, 1, 2), f"{dst}: {rate} Hz, {ch} ch, {width * 8} bit"
            assert MIN_SEC <= dur <= MAX_SEC, f"{dst}: duration {dur:.2f}s outside [{MIN_SEC}, {MAX_SEC}]"
            meta_lines.append(f"{uid}|{text}|{norm}")
            spk_lines.append(f"{uid}|{voice}")
            durations.append(dur)
            speeds_used.add(speed)

    (out / "metadata.csv").write_text("\n".join(meta_lines) + "\n", encoding="utf-8")
    (out / "speakers.csv").write_text("\n".join(spk_lines) + "\n", encoding="utf-8")

    n = len(durations)
    total = sum(durations)
    counts = {v: sum(1 for s in spk_lines if s.endswith("|" + v)) for v in VOICES}
    readme = f"""# Sample dataset (synthetic speech)

A tiny speech dataset in LJSpeech layout, bundled with `xtts_cli` for quick
smoke tests, examples and unit tests. It is far too small to train a useful
model.

- {n} clips, total duration {total:.1f} s
  (min {min(durations):.2f} s, max {max(durations):.2f} s, mean {total / n:.2f} s)
- Audio: `wavs/<id>.wav`, {SAMPLE_RATE} Hz, 16-bit signed PCM, mono;
  leading/trailing silence trimmed, {PAD_SEC} s of silence kept at each end
- `metadata.csv`: `id|text|normalized_text` (UTF-8, no header, LJSpeech
  style); `normalized_text` has numbers spelled out and is what was spoken
- `speakers.csv`: `id|speaker`, the espeak-ng voice used for each clip
- Speakers ({len(VOICES)}, espeak-ng voices):
  {", ".join(f"`{v}` ({counts[v]} clips)" for v in VOICES)};
  speaking rates {", ".join(str(s) for s in sorted(speeds_used))} words/min

## How it was made

Generated by

    python scripts/make_sample_data.py

using espeak-ng {espeak_version()} (text to speech) and SoX {sox_version()}
(trimming, padding, format). The sentences are plain everyday sentences written for
this project. The script is deterministic: re-running it with the same
espeak-ng and SoX versions reproduces the same files.

## License

The audio is synthetic speech generated by espeak-ng. espeak-ng is a GPL
program, but its output (the generated audio) is not covered by the GPL.
The sentences and the generated files are distributed with this project
under the project's license.
"""
    (out / "README.md").write_text(readme, encoding="utf-8")

    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert size <= MAX_DIR_BYTES, f"{out}: {size} bytes > {MAX_DIR_BYTES}"
    print(
        f"wrote {n} clips to {out}: {total:.1f} s total, "
        f"{min(durations):.2f}-{max(durations):.2f} s, {size / 1e6:.2f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
