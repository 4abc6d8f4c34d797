#!/usr/bin/env python3
"""Generate the audio fixtures the data-engine tests read, with espeak-ng + sox.

Usage:
    python scripts/make_test_fixtures.py [--out DIR]

Writes into DIR (default: tests/data/):
    dataset/            LJSpeech layout: metadata.csv, speakers.csv, wavs/...
        metadata.csv    good items in every supported format / rate / channel count / bit depth,
                        Persian text, a `|` inside a transcript, a first column that is a path,
                        and one bad item per reason the scan reports
        metadata_eval.csv   an explicit validation list
        manifest.tsv    the same files as a `path<TAB>text<TAB>speaker` manifest
        manifest.csv    a comma-separated manifest with quoted text
    outside/escape.wav  audio outside the dataset root (for the path-escape rule)
    fixtures.json       what `soxi` says each good file holds (rate, channels, bits, samples), and
                        for lossy files the sample count of the audio that was encoded

Total size stays well under 1.5 MB (clips are ~1 s). Needs `espeak-ng` and `sox` on PATH; the
tests need neither (they read the committed output). Deterministic: fixed texts, voices and
seeds, no sox dither (-D); only the Ogg files differ between runs, in the stream serial number
libvorbis picks at random (the audio and lengths are the same).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "tests" / "data"
RATE = 22050
MAX_TOTAL_BYTES = 1_500_000

PERSIAN_TEXT = "سلام، من می\u200cخواهم فارسی صحبت کنم."

# id, voice, spoken text, sox output options, extension
GOOD = [
    ("pcm16", "en-us", "Hello world.", ["-b", "16", "-e", "signed-integer"], ".wav"),
    ("pcm24", "en-gb", "Twenty four bits.", ["-b", "24", "-e", "signed-integer"], ".wav"),
    ("pcm32", "en-us", "Thirty two bits.", ["-b", "32", "-e", "signed-integer"], ".wav"),
    ("pcm8", "en-gb", "Eight bits.", ["-b", "8", "-e", "unsigned-integer"], ".wav"),
    ("float32", "en-us", "A float file.", ["-b", "32", "-e", "floating-point"], ".wav"),
    ("stereo", "en-gb", "Two channels.", ["-b", "16", "-c", "2"], ".wav"),
    ("rate16k", "en-us", "Sixteen kilohertz.", ["-b", "16", "-r", "16000"], ".wav"),
    ("rate44k", "en-gb", "High rate.", ["-b", "16", "-r", "44100"], ".wav"),
    ("flac16", "en-us", "A lossless file.", ["-b", "16"], ".flac"),
    ("flac24", "en-gb", "Deep lossless.", ["-b", "24"], ".flac"),
    ("vorbis", "en-us", "An ogg file.", ["-C", "3"], ".ogg"),
    ("mp3cbr", "en-gb", "A constant rate file.", ["-C", "32"], ".mp3"),
    ("mp3vbr", "en-us", "A variable rate file.", ["-C", "-4.2"], ".mp3"),
    ("persian", "fa", PERSIAN_TEXT, ["-b", "16"], ".wav"),
    ("pipe_text", "en-gb", "Press A or B to start.", ["-b", "16"], ".wav"),
]
SPEAKERS = {"en-us": "us", "en-gb": "gb", "fa": "fa"}
ODD_LENGTH = {"pcm8", "pcm24"}
BAD_STEMS = {"empty", "garbage", "truncated", "header_only", "truncated_ogg", "truncated_mp3", "too_short", "too_long"}


def run(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, check=True, capture_output=True).stdout.decode()
    except FileNotFoundError:
        sys.exit(f"error: {cmd[0]} not found; install espeak-ng and sox (apt-get install espeak-ng sox)")
    except subprocess.CalledProcessError as error:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{error.stderr.decode(errors='replace')}")


def speak(text: str, voice: str, tmp: Path, name: str, speed: int = 185) -> Path:
    raw = tmp / f"{name}.raw.wav"
    run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(raw), text])
    trimmed = tmp / f"{name}.wav"
    # Trim espeak's leading / trailing silence so clips stay ~1 s and the fixtures small.
    run(
        [
            "sox",
            "-D",
            str(raw),
            "-r",
            str(RATE),
            "-c",
            "1",
            "-b",
            "16",
            str(trimmed),
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
    return trimmed


def convert(src: Path, dst: Path, options: list[str], effects: list[str] = ()) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    run(["sox", "-D", str(src), *options, str(dst), *effects])


def pcm16_samples(path: Path) -> bytes:
    data = path.read_bytes()
    assert data[36:40] == b"data", "sox wrote an unexpected WAV layout"
    return data[44:]


def riff(chunks: list[tuple[bytes, bytes]]) -> bytes:
    body = b"WAVE" + b"".join(cid + struct.pack("<I", len(c)) + c + (b"\0" if len(c) % 2 else b"") for cid, c in chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def extensible_pcm16(samples: bytes) -> bytes:
    """16-bit mono WAV with a WAVE_FORMAT_EXTENSIBLE header after an odd-sized JUNK chunk.

    Both trip tf.audio.decode_wav; the raw data-chunk read must not care.
    """
    pcm_guid = bytes.fromhex("0100000000001000800000aa00389b71")
    fmt = struct.pack("<HHIIHH", 0xFFFE, 1, RATE, RATE * 2, 2, 16) + struct.pack("<HHI", 22, 16, 4) + pcm_guid
    return riff([(b"JUNK", b"odd-size!"), (b"fmt ", fmt), (b"data", samples)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    out: Path = args.out
    dataset = out / "dataset"
    for stale in (dataset, out / "outside"):
        if stale.exists():
            shutil.rmtree(stale)
    wavs = dataset / "wavs"
    wavs.mkdir(parents=True)
    (out / "outside").mkdir(parents=True)

    lines: list[str] = []
    speakers: list[str] = []
    source_samples: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for key, voice, text, options, ext in GOOD:
            source = speak(text, voice, tmp, key)
            effects = []
            if key in ODD_LENGTH:
                # An odd sample count makes the 8/24-bit data chunk odd-sized (word-padded), the
                # case tensorflow-io's WAV decoder fails on.
                count = len(pcm16_samples(source)) // 2
                effects = ["trim", "0", f"{count - 1 + count % 2}s"]
            convert(source, wavs / f"{key}{ext}", options, effects)
            if ext in (".mp3", ".ogg"):
                # Lossy files: the length of what was encoded, the reference for decoded lengths.
                source_samples[f"wavs/{key}{ext}"] = len(pcm16_samples(source)) // 2
            speakers.append(f"{key}|{SPEAKERS[voice]}")
        # LJSpeech columns: id|text|normalized_text.
        lines += [
            "pcm16|Hello world.|Hello world.",
            "pcm24|Twenty-four bits.|Twenty four bits.",
            "pcm32|Thirty-two bits.|Thirty two bits.",
            "pcm8|Eight bits.",
            "float32|A float file.|A float file.",
            "stereo|Two channels.|Two channels.",
            "rate16k|16 kHz.|Sixteen kilohertz.",
            "rate44k|High rate.|High rate.",
            "flac16|A lossless file.|A lossless file.",
            "flac24|Deep lossless.|Deep lossless.",
            "vorbis|An ogg file.|An ogg file.",
            "mp3cbr|A constant rate file.|A constant rate file.",
            "mp3vbr|A variable rate file.|A variable rate file.",
            f"persian|{PERSIAN_TEXT}|{PERSIAN_TEXT}",
            # A `|` inside the transcript and an empty normalized column: the text keeps its `|`.
            "pipe_text|Press A | B to start.|",
        ]

        # A first column that is a relative path with an extension, in a subfolder.
        nested = speak("A nested path.", "en-us", tmp, "nested")
        convert(nested, wavs / "nested" / "clip.wav", ["-b", "16"])
        lines.append("wavs/nested/clip.wav|A nested path.|A nested path.")

        # 16-bit with a header core TF cannot read (EXTENSIBLE + odd chunk): tensorflow-io route.
        extensible = speak("Extensible header.", "en-gb", tmp, "extensible")
        (wavs / "extensible16.wav").write_bytes(extensible_pcm16(pcm16_samples(extensible)))
        lines.append("extensible16|Extensible header.|Extensible header.")
        speakers.append("extensible16|gb")

        # Bad items, one per reason.
        (wavs / "empty.wav").write_bytes(b"")
        lines.append("empty|An empty file.|An empty file.")
        noise = random.Random(7)
        (wavs / "garbage.wav").write_bytes(b"\x00GARBAGE" + bytes(noise.randrange(256) for _ in range(1500)))
        lines.append("garbage|Not audio at all.|Not audio at all.")
        cut = speak("This file was cut short.", "en-us", tmp, "cut")
        whole = cut.read_bytes()
        (wavs / "truncated.wav").write_bytes(whole[: len(whole) * 6 // 10])
        lines.append("truncated|This file was cut short.|This file was cut short.")
        (wavs / "header_only.wav").write_bytes(
            riff([(b"fmt ", struct.pack("<HHIIHH", 1, 1, RATE, RATE * 2, 2, 16)), (b"data", b"")])
        )
        lines.append("header_only|Only a header.|Only a header.")
        ogg_whole = (wavs / "vorbis.ogg").read_bytes()
        (wavs / "truncated_ogg.ogg").write_bytes(ogg_whole[: len(ogg_whole) // 2])
        lines.append("truncated_ogg|An ogg cut short.|An ogg cut short.")
        mp3_whole = (wavs / "mp3cbr.mp3").read_bytes()
        (wavs / "truncated_mp3.mp3").write_bytes(mp3_whole[: len(mp3_whole) // 2 + 7])
        lines.append("truncated_mp3|An mp3 cut short.|An mp3 cut short.")
        short = speak("Hi.", "en-us", tmp, "short", speed=300)
        convert(short, wavs / "too_short.wav", ["-b", "16"], ["trim", "0", "0.3"])
        lines.append("too_short|Hi.|Hi.")
        # 10.5 s (above the default max_audio_duration of 10 s), mostly silence: FLAC keeps it small.
        long_speech = speak("This one goes on for a long time.", "en-gb", tmp, "long")
        convert(long_speech, wavs / "too_long.flac", ["-b", "16", "-r", "8000"], ["pad", "0", "9"])
        lines.append("too_long|This one goes on for a long time.|This one goes on for a long time.")
        lines.append("missing_file|No file has this id.|No file has this id.")
        lines.append("this line has no separator at all")
        outside = speak("Outside the root.", "en-us", tmp, "outside")
        convert(outside, out / "outside" / "escape.wav", ["-b", "16", "-r", "8000"])
        lines.append("../outside/escape.wav|Outside the root.|Outside the root.")
        lines.append("wavs/pcm16.wav|" + ("This transcript is far too long. " * 8).strip() + "|")

    (dataset / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (dataset / "speakers.csv").write_text("\n".join(speakers) + "\n", encoding="utf-8")
    (dataset / "metadata_eval.csv").write_text(
        "flac16|A lossless file.|A lossless file.\nvorbis|An ogg file.|An ogg file.\n", encoding="utf-8"
    )
    (dataset / "manifest.tsv").write_text(
        "path\ttext\tspeaker\n"
        "wavs/pcm16.wav\tHello world.\talice\n"
        "wavs/flac16.flac\tA lossless file.\tbob\n"
        f"wavs/persian.wav\t{PERSIAN_TEXT}\tsara\n"
        "wavs/mp3vbr.mp3\tA variable rate file.\t\n",
        encoding="utf-8",
    )
    (dataset / "manifest.csv").write_text(
        'path,text,speaker\nwavs/pcm16.wav,"Hello, world.",alice\nwavs/stereo.wav,"Two channels, one voice.",bob\n',
        encoding="utf-8",
    )

    # What sox itself says each good file holds: an independent reference for the decode tests.
    facts = {}
    for path in sorted(wavs.rglob("*")):
        name = path.relative_to(dataset).as_posix()
        if not path.is_file() or path.stem in BAD_STEMS:
            continue
        facts[name] = {
            "sample_rate": int(run(["soxi", "-r", str(path)])),
            "channels": int(run(["soxi", "-c", str(path)])),
            "bits": int(run(["soxi", "-b", str(path)])),
            "samples": int(run(["soxi", "-s", str(path)])),
        }
        if name in source_samples:
            facts[name]["source_samples"] = source_samples[name]
    (out / "fixtures.json").write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")

    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    if total > MAX_TOTAL_BYTES:
        sys.exit(f"error: fixtures total {total} bytes, above the {MAX_TOTAL_BYTES} byte budget")
    print(f"wrote {dataset} and {out / 'outside'} ({total / 1000:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
