#!/usr/bin/env python3
"""Generate tiny corpora in every layout the dataset scan reads, with espeak-ng + sox.

Usage:
    python scripts/make_corpus_fixtures.py [--out DIR]

Writes into DIR (default: tests/data/corpora/), each multi-speaker, at the rate and codec the real
corpus ships:
    vctk/           VCTK 0.92: txt/<spk>/<spk>_<n>.txt + wav48_silence_trimmed/<spk>/<spk>_<n>_mic1.flac
                    (p225 also _mic2), 48 kHz FLAC; one audio file with no transcript, one transcript
                    with no audio
    vctk_wav48/     the older VCTK: wav48/<spk>/<spk>_<n>.wav, 48 kHz WAV
    libritts/       the corpus root: train-clean-100/ and dev-clean/, <spk>/<chapter>/<utt>.wav at
                    24 kHz + .normalized.txt + .original.txt; one audio file with no transcript
    common_voice/   validated.tsv + train.tsv (client_id as speaker) + clips/*.mp3 at 48 kHz; one
                    row whose clip is missing
    coqui/          metadata.csv with the header audio_file|text|speaker_name, 22.05 kHz WAV
    nemo/           train_manifest.json (JSON lines: audio_filepath, text, duration, speaker),
                    16 kHz WAV
    ljspeech2/      metadata.csv with two columns (id|text), 22.05 kHz WAV
Clips are ~1 s; the whole set is about 1.6 MB. Deterministic: fixed texts and voices.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXTS = ["The cat sat down.", "A red boat.", "Bring the map.", "Green trees grow.", "She sang well."]
VOICES = ["en-us", "en-gb", "en-us+f3"]


def run(cmd: list[str]) -> None:
    try:
        subprocess.run(cmd, check=True, capture_output=True)
    except FileNotFoundError:
        sys.exit(f"error: {cmd[0]} not found; install espeak-ng and sox (apt-get install espeak-ng sox)")
    except subprocess.CalledProcessError as error:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{error.stderr.decode(errors='replace')}")


class Voice:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.count = 0

    def say(self, text: str, voice: str, dst: Path, options: list[str]) -> None:
        """espeak-ng speaks `text`; sox trims the silence and writes `dst` with `options` (rate, codec)."""
        self.count += 1
        raw = self.tmp / f"{self.count}.wav"
        run(["espeak-ng", "-v", voice, "-s", "190", "-w", str(raw), text])
        dst.parent.mkdir(parents=True, exist_ok=True)
        run(
            [
                "sox",
                "-D",
                str(raw),
                "-c",
                "1",
                *options,
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
                "0.05",
                "0.05",
            ]
        )


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def vctk(out: Path, voice: Voice) -> None:
    for s, speaker in enumerate(("p225", "p226", "p227")):
        for n in range(1, 3):
            stem = f"{speaker}_{n:03d}"
            text = TEXTS[(s + n) % len(TEXTS)]
            write(out / "txt" / speaker / f"{stem}.txt", text + "\n")
            audio = out / "wav48_silence_trimmed" / speaker
            voice.say(text, VOICES[s], audio / f"{stem}_mic1.flac", ["-r", "48000", "-b", "16"])
            if speaker == "p225":  # both microphones, as in the corpus; the scan takes mic1
                shutil.copy(audio / f"{stem}_mic1.flac", audio / f"{stem}_mic2.flac")
    # An audio file with no transcript (VCTK 0.92's p315 has none), a transcript with no audio.
    voice.say(
        "No words for me.",
        VOICES[0],
        out / "wav48_silence_trimmed" / "p225" / "p225_003_mic1.flac",
        ["-r", "48000", "-b", "16"],
    )
    write(out / "txt" / "p226" / "p226_009.txt", "Where did it go?\n")


def vctk_wav48(out: Path, voice: Voice) -> None:
    for s, speaker in enumerate(("p225", "p226")):
        for n in range(1, 3):
            stem = f"{speaker}_{n:03d}"
            text = TEXTS[(s + 2 * n) % len(TEXTS)]
            write(out / "txt" / speaker / f"{stem}.txt", text + "\n")
            voice.say(text, VOICES[s], out / "wav48" / speaker / f"{stem}.wav", ["-r", "48000", "-b", "16"])


def libritts(out: Path, voice: Voice) -> None:
    for split, speakers in (("train-clean-100", ("19", "26")), ("dev-clean", ("84",))):
        for s, speaker in enumerate(speakers):
            chapter = str(100 + s)
            for n in range(2):
                stem = f"{speaker}_{chapter}_000000_00000{n}"
                text = TEXTS[(s + n + 1) % len(TEXTS)]
                folder = out / split / speaker / chapter
                write(folder / f"{stem}.original.txt", text)
                write(folder / f"{stem}.normalized.txt", text)
                voice.say(text, VOICES[s % len(VOICES)], folder / f"{stem}.wav", ["-r", "24000", "-b", "16"])
    voice.say(
        "Nothing was written.",
        VOICES[1],
        out / "train-clean-100" / "26" / "101" / "26_101_000000_000009.wav",
        ["-r", "24000", "-b", "16"],
    )


def common_voice(out: Path, voice: Voice) -> None:
    header = "client_id\tpath\tsentence\tup_votes\tdown_votes\tage\tgender\taccents\tvariant\tlocale\tsegment"
    clients = ["5e1f0c7a9b" * 4, "a04d2e6b3c" * 4]
    rows = []
    for c, client in enumerate(clients):
        for n in range(3):
            name = f"common_voice_en_{1000 + 10 * c + n}.mp3"
            text = TEXTS[(c + n) % len(TEXTS)]
            voice.say(text, VOICES[c], out / "clips" / name, ["-r", "48000", "-C", "48"])
            rows.append(f"{client}\t{name}\t{text}\t2\t0\t\t\t\t\ten\t")
    rows.append(f"{clients[1]}\tcommon_voice_en_9999.mp3\tA clip that is not there.\t2\t0\t\t\t\t\ten\t")
    write(out / "validated.tsv", "\n".join([header] + rows) + "\n")
    write(out / "train.tsv", "\n".join([header] + rows[:4]) + "\n")


def coqui(out: Path, voice: Voice) -> None:
    lines = ["audio_file|text|speaker_name|emotion_name"]
    for s, speaker in enumerate(("alice", "bob")):
        for n in range(2):
            name = f"wavs/{speaker}_{n}.wav"
            text = TEXTS[(s + n + 2) % len(TEXTS)]
            voice.say(text, VOICES[s], out / name, ["-r", "22050", "-b", "16"])
            lines.append(f"{name}|{text}|{speaker}|neutral")
    write(out / "metadata.csv", "\n".join(lines) + "\n")


def nemo(out: Path, voice: Voice) -> None:
    records = []
    for s, speaker in enumerate((3, 7)):
        for n in range(2):
            name = f"audio/{speaker}_{n}.wav"
            text = TEXTS[(s + n + 3) % len(TEXTS)].lower().rstrip(".")
            voice.say(text, VOICES[s], out / name, ["-r", "16000", "-b", "16"])
            frames = int(subprocess.run(["soxi", "-s", str(out / name)], capture_output=True, check=True).stdout)
            records.append(
                {"audio_filepath": name, "text": text, "duration": round(frames / 16000, 3), "speaker": speaker}
            )
    write(out / "train_manifest.json", "".join(json.dumps(record) + "\n" for record in records))


def ljspeech2(out: Path, voice: Voice) -> None:
    lines = []
    for n in range(4):
        text = TEXTS[n]
        voice.say(text, VOICES[0], out / "wavs" / f"LJ001-{n:04d}.wav", ["-r", "22050", "-b", "16"])
        lines.append(f"LJ001-{n:04d}|{text}")
    write(out / "metadata.csv", "\n".join(lines) + "\n")


MAKERS = {
    "vctk": vctk,
    "vctk_wav48": vctk_wav48,
    "libritts": libritts,
    "common_voice": common_voice,
    "coqui": coqui,
    "nemo": nemo,
    "ljspeech2": ljspeech2,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "corpora")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        voice = Voice(Path(scratch))
        for name, make in MAKERS.items():
            target = args.out / name
            if target.exists():
                shutil.rmtree(target)
            make(target, voice)
    print(f"wrote {', '.join(MAKERS)} into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
