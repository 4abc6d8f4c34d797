#!/usr/bin/env python3
"""Serve an `xtts export` directory over HTTP with TensorFlow and the phonemizer alone (no xtts).

    python examples/serve_export.py EXPORT_DIR --reference voice.wav [--port 5003]
    python examples/serve_export.py EXPORT_DIR --speaker NAME    # a training speaker, no clip
    curl "http://127.0.0.1:5003/tts?text=Hello+there.&language=en" -o hello.wav   # language: with several
    curl "http://127.0.0.1:5003/tts?text=Hello+there.&speed=1.5" -o fast.wav   # a paced export's (speed input)

It turns text into the model's ids the way training did, from `export.json`. It cleans the text:
lower case (Turkish and Azerbaijani I as ı), NFKC, one space between words (the `multilingual_cleaners` and `basic_cleaners` of
xtts; English abbreviations, and digits read as words where `export.json`'s `numbers` says
`words`, are not reproduced here). With the `phonemes` front end it phonemises with espeak-ng
through `phonemizer`, as `export.json` says.
Then each symbol becomes 1 + its index in `symbols`, and a symbol the model lacks is left out and
named in the answer's `X-Left-Out` header (a JSON list; a text left with no letter, another script in a
characters export, is a 400, as are digits it lacks: the amount left out changes what is said; espeak-ng
reads another script itself). Errors are JSON: {"error": "..."}.
One request is one generation, at most `max_seconds` of `export.json`: send a long text a sentence at a time.
The reference clip is 16-bit mono WAV at the export's `sample_rate`; `--speaker` speaks with the
export's `speaker` signature instead (one of `export.json`'s `speakers`: an adapted voice).
"""

from __future__ import annotations

import argparse
import io
import json
import re
import unicodedata
import wave
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import tensorflow as tf


def clean(text: str, language: str = "") -> str:
    text = unicodedata.normalize("NFKC", text)
    if language.split("-")[0] in ("tr", "az"):  # Turkish and Azerbaijani: I lowers to dotless ı
        text = text.replace("I", "\u0131")
    return " ".join(text.replace("\u0130", "i").lower().split())  # İ is i (lowered, an i and a dot)


def phonemize(text: str, voice: str, info: dict) -> str:
    """`text` as espeak-ng's phonemes, phonemizer called as export.json's `phonemizer` says training did."""
    from phonemizer.backend import EspeakBackend
    from phonemizer.separator import Separator

    called = info["phonemizer"]
    backend = EspeakBackend(voice, punctuation_marks=info["punctuation_marks"], **called["backend_settings"])
    phonemes = backend.phonemize([text], separator=Separator(**called["separator"]), strip=called["strip"], njobs=1)
    return " ".join(phonemes[0].split()) if phonemes else ""  # phonemizer returns no line for an empty text


def read_wav(path: Path, rate: int) -> np.ndarray:
    try:
        with wave.open(str(path)) as handle:
            if handle.getsampwidth() != 2 or handle.getnchannels() != 1 or handle.getframerate() != rate:
                raise SystemExit(f"{path}: give a 16-bit mono WAV at {rate} Hz")
            audio = np.frombuffer(handle.readframes(handle.getnframes()), "<i2").astype(np.float32) / 32768.0
    except (OSError, EOFError, wave.Error) as error:  # missing, empty, or not 16-bit PCM (float: format 3)
        raise SystemExit(f"{path}: {error or 'empty'}: give a 16-bit mono WAV at {rate} Hz") from None
    if len(audio) < rate // 10 or np.max(np.abs(audio)) < 1e-4:  # the export refuses it too
        raise SystemExit(f"{path}: silent or under 0.1 s: give a few seconds of the voice speaking")
    return audio


def wav_bytes(audio: np.ndarray, rate: int) -> bytes:
    peak = float(np.max(np.abs(audio))) if audio.size else 0.0
    if peak > 0.99:
        audio = audio * (0.99 / peak)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes(np.clip(np.round(audio * 32767.0), -32768, 32767).astype("<i2").tobytes())
    return buffer.getvalue()


class Voice:
    def __init__(self, export: Path, reference: Path | None = None, speaker: str | None = None) -> None:
        self.info = json.loads((export / "export.json").read_text(encoding="utf-8"))
        self.ids = {symbol: index + 1 for index, symbol in enumerate(self.info["symbols"])}
        self.signatures = signatures = tf.saved_model.load(str(export)).signatures
        self.speak = signatures["serving_default"]
        self.reference = read_wav(reference, self.info["sample_rate"]) if reference is not None else None
        self.speaker = None
        if speaker is not None:
            if not self.info.get("speaker_signature") or speaker not in self.info["speakers"]:
                raise SystemExit(f"--speaker {speaker}: the export speaks {', '.join(self.info['speakers'])} by name")
            self.speaker, self.speak_as = self.info["speakers"].index(speaker), signatures["speaker"]

    def read(self, text: str, language: str) -> tuple[list[int], list[str]]:
        """The model's ids of `text`, and the symbols it lacks (left out)."""
        prepared = clean(text, language)
        if self.info["text_frontend"] == "phonemes":
            prepared = phonemize(prepared, self.info["espeak_voices"][language], self.info)
        else:  # a letter the model lacks read without its accent, where it has that one ("café": e)
            plain = {
                c: "".join(p for p in unicodedata.normalize("NFKD", c) if not unicodedata.combining(p))
                for c in prepared
            }
            prepared = "".join(c if c in self.ids or not plain[c] else plain[c] for c in prepared)
        lacked = sorted({symbol for symbol in prepared if symbol not in self.ids})
        return [self.ids[symbol] for symbol in prepared if symbol in self.ids], lacked

    def text_ids(self, text: str, language: str) -> list[int]:
        return self.read(text, language)[0]

    def wav(self, text: str, language: str, speed: float = 1.0) -> tuple[bytes, bool]:
        """The WAV of `text`, and whether the model ended it (false: the length limit cut it)."""
        ids = tf.constant(self.text_ids(text, language), tf.int32)
        language_id = tf.constant(self.info["languages"].index(language), tf.int32)
        # Another pace: a paced export's signatures that take a speed (export.json's paced_signatures).
        paced = {"speed": tf.constant(speed, tf.float32)} if speed != 1 else {}
        if self.speaker is not None:
            speak = self.signatures["speaker_paced" if paced else "speaker"]
            out = speak(speaker_id=tf.constant(self.speaker), text_ids=ids, language_id=language_id, **paced)
        else:
            speak = self.signatures["paced" if paced else "serving_default"]
            out = speak(text_ids=ids, language_id=language_id, reference_audio=tf.constant(self.reference), **paced)
        return wav_bytes(out["audio"].numpy(), self.info["sample_rate"]), bool(out["stopped"].numpy())


def language_of(query: dict, languages: list[str]) -> tuple[str | None, str | None]:
    """(language, None) for a request, or (None, its error): with several, the text names its own."""
    language = query.get("language", languages[0] if len(languages) == 1 else None)
    if language is None:
        return None, f"the export speaks {', '.join(languages)}: pass one as language="
    if language not in languages:
        return None, f"language {language} is not the export's: {', '.join(languages)}"
    return language, None


def speed_of(query: dict, info: dict) -> tuple[float | None, str | None]:
    """(speed, None) for a request, or (None, its error): 1 unless a paced export is asked for another."""
    try:
        speed = float(query.get("speed", "1"))
    except ValueError:
        return None, f"speed {query['speed']!r} is not a number"
    if not 0.25 <= speed <= 4:  # NaN fails it too
        return None, f"speed {query['speed']} is not a pace from 0.25 to 4"
    if speed != 1 and not info.get("paced_signatures"):
        return None, "this export's model ends each sentence by its stop token: it has no pace to set"
    return speed, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", type=Path)
    voice_of = parser.add_mutually_exclusive_group(required=True)
    voice_of.add_argument("--reference", type=Path, help="16-bit mono WAV of the voice")
    voice_of.add_argument("--speaker", help="a training speaker of the export (its speakers)")
    parser.add_argument("--port", type=int, default=5003)
    args = parser.parse_args()
    voice = Voice(args.export, args.reference, args.speaker)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            try:
                given = parse_qs(urlsplit(self.path).query, errors="strict")
            except UnicodeDecodeError:
                self.answer(400, {"error": "the query is not UTF-8: percent-encode the text's UTF-8 bytes"})
                return
            twice = sorted(key for key, values in given.items() if len(values) > 1)
            query = {key: values[0] for key, values in given.items()}
            language, wrong = language_of(query, voice.info["languages"])
            speed, too = speed_of(query, voice.info)
            if urlsplit(self.path).path != "/tts":
                self.answer(404, {"error": "the one path is GET /tts?text=...&language=..."})
            elif twice:  # text=a&text=b had spoken "a" alone
                self.answer(400, {"error": f"{', '.join(twice)} given more than once: pass each once"})
            elif not query.get("text", "").strip():
                self.answer(400, {"error": "text is empty; pass the text to speak as text="})
            elif language is None or speed is None:
                self.answer(400, {"error": wrong or too})
            else:
                ids, lacked = voice.read(query["text"], language)
                if any(c.isdigit() for c in lacked):  # left out, "$12.50 on 3/4" had been spoken as "on", answered 200
                    said = clean(query["text"], language)  # as read: NFKC makes x² an x2
                    numbers = ", ".join(re.findall(r"\d+(?:[.,:/]\d+)*", said)) or "".join(
                        c for c in lacked if c.isdigit()
                    )
                    self.answer(400, {"error": f"digits are not read here ({numbers}): write numbers in words"})
                elif not any(voice.info["symbols"][i - 1].isalpha() for i in ids):  # another script: no letter read
                    self.answer(
                        400,
                        {
                            "error": f"no symbol of {query['text'][:80]!r} is a letter the model reads ({language} as "
                            "trained)"
                        },
                    )
                else:
                    wav, stopped = voice.wav(
                        query["text"], language, speed
                    )  # not stopped: cut; send a sentence at a time
                    self.answer(200, wav, {"X-Left-Out": json.dumps(lacked), "X-Stopped": json.dumps(stopped)})

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            if code == 501:  # POST, HEAD, ...: the method, and the one served
                message = f"{self.command} is not served: use GET /tts?text=..."
            self.answer(code, {"error": message or "use GET /tts?text=..."})  # an error is JSON, as the rest

        def answer(self, status: int, body: bytes | dict, headers: dict | None = None) -> None:
            kind = "audio/wav" if isinstance(body, bytes) else "application/json"
            data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
            self.send_response(status)
            for name, value in {"Content-Type": kind, "Content-Length": str(len(data)), **(headers or {})}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"serving {args.export} at http://127.0.0.1:{server.server_address[1]}/tts", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
