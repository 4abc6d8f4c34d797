"""`xtts serve`: a real server on a real socket, answered over HTTP; its page in a real browser.

The fast tests serve the committed run `tests/data/run_before_run_data` (four voices, an
autoregressive decoder); the slow ones a run trained here (a duration decoder, with samples) and
the page in Debian's chromium.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import os
import queue
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import wave
from pathlib import Path

import numpy as np
import pytest
import soundfile
import yaml
from training_support import subprocess_env, terminal_signals, tiny_config

from xtts_cli.speech.synthesis import SENTENCE_PAUSE_SECONDS, pcm16, wav_bytes

RUN = Path(__file__).parent / "data" / "run_before_run_data"
SAMPLE = Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample"
CLIP = SAMPLE / "wavs" / "XTTS001-0002.wav"
SENTENCE = "the kettle is on the stove."


def start(run: Path, **limits):
    from xtts_cli.inference import Synthesizer
    from xtts_cli.serving.http import make_server
    from xtts_cli.serving.service import Limits, VoiceService

    tts = Synthesizer.load(run)
    server = make_server(VoiceService(tts, Limits(**limits)), "127.0.0.1", 0, log=False)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return tts, server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module")
def served():
    tts, server, url = start(RUN, text_chars=300, upload_bytes=400_000, waiting=6)
    yield tts, server, url
    server.shutdown()
    server.server_close()


def dumping_env() -> dict[str, str]:
    """A child whose threads' stacks a SIGABRT writes to its stderr (`stopped_within`)."""
    return {**subprocess_env(), "PYTHONFAULTHANDLER": "1"}


def stopped_within(process: subprocess.Popen, seconds: float) -> int:
    """The exit code of a stopped `xtts serve`; one that does not exit in `seconds` fails with what each
    of its threads was doing (a child started with `dumping_env`, its output on a pipe)."""
    try:
        return process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        output = process.communicate(timeout=30)[0]
        raise AssertionError(f"not stopped in {seconds} s; its threads:\n{output[-6000:]}") from None
    finally:
        process.kill()  # never left serving after the test


def get(url: str, data: bytes | None = None, headers: dict | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def error_of(answer: tuple[int, dict, bytes]) -> tuple[int, str]:
    status, headers, body = answer
    assert headers["Content-Type"] == "application/json", body[:200]
    return status, json.loads(body)["error"]


def samples_of(wav: bytes) -> np.ndarray:
    with wave.open(io.BytesIO(wav)) as handle:
        return np.frombuffer(handle.readframes(handle.getnframes()), "<i2")


def multipart(fields: dict[str, str], upload: bytes | None = None) -> tuple[bytes, dict]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    if upload is not None:
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="speaker_wav"; filename="clip.wav"\r\n'
        parts.append(head.encode() + b"Content-Type: audio/wav\r\n\r\n" + upload + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}


def raw(url: str, payload: bytes, *, read: bool = True) -> bytes:
    """`payload` sent as is on a socket of its own; what comes back until the server closes or 10 s."""
    address = urllib.parse.urlsplit(url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as connection:
        connection.sendall(payload)
        if not read:
            return b""
        answer = b""
        try:
            while chunk := connection.recv(65536):
                answer += chunk
                if b"\r\n\r\n" in answer and b"Content-Length" in answer:
                    head, _, body = answer.partition(b"\r\n\r\n")
                    length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                    if len(body) >= length:
                        break
        except (TimeoutError, ConnectionResetError):
            pass
        return answer


def test_the_run_is_listed_and_a_sentence_is_the_audio_it_speaks_in_process(served):
    tts, _, url = served
    status, _, body = get(f"{url}/health")
    assert status == 200 and json.loads(body) == {
        "status": "ok",
        "run": str(RUN),
        "step": tts.step,
        "latest_step": tts.step,  # the run's newest checkpoint now
        "step_asked": None,  # `serve --step`'s
        "vocoder": "griffin-lim",
        "vocoder_step": None,  # a vocoder run's checkpoint step
        "graphs": "built on first use",  # `xtts serve` builds them as it starts (`warm_up`)
        "speed": False,  # an autoregressive decoder: the page's speed is off
        "speeds": [0.25, 4.0],  # what `synthesize --speed` takes
        "text_chars": 300,  # the most a text may hold (this server's limits): the page counts toward it
        "notes": [],  # what loading said of every answer's sound
    }
    assert json.loads(get(f"{url}/api/speakers")[2]) == ["en-us+f3", "en-us", "en-gb+m3", "en-gb"]
    assert json.loads(get(f"{url}/api/languages")[2]) == ["en"]
    assert json.loads(get(f"{url}/api/samples")[2]) == []
    page = get(f"{url}/")
    assert page[0] == 200 and page[1]["Content-Type"].startswith("text/html") and b"/api/tts" in page[2]

    query = urllib.parse.urlencode({"text": SENTENCE, "speaker_id": "en-gb"})
    status, headers, wav = get(f"{url}/api/tts?{query}")
    assert status == 200 and headers["Content-Type"] == "audio/wav"
    alone = wav_bytes(tts.speak(SENTENCE, speaker="en-gb").waveform, tts.sample_rate)
    np.testing.assert_allclose(samples_of(wav) / 32767.0, samples_of(alone) / 32767.0, atol=1e-3)
    # The query coqui's own page and its clients send: empty style_wav and language_id.
    coqui = f"text={urllib.parse.quote(SENTENCE)}&speaker_id=en-gb&style_wav=&language_id="
    assert get(f"{url}/api/tts?{coqui}")[2] == wav
    assert get(f"{url}/api/tts", None, {"text": SENTENCE, "speaker-id": "en-gb"})[2] == wav  # or as its headers
    # POST with coqui's form fields, and as JSON: the same.
    form = urllib.parse.urlencode({"text": SENTENCE, "speaker_id": "en-gb"}).encode()
    assert get(f"{url}/api/tts", form, {"Content-Type": "application/x-www-form-urlencoded"})[2] == wav
    body = json.dumps({"text": SENTENCE, "speaker_id": "en-gb", "language_id": "en"}).encode()
    assert get(f"{url}/api/tts", body, {"Content-Type": "application/json"})[2] == wav
    # A language in capitals is the run's code, as synthesize --language and Python read it.
    capitals = json.dumps({"text": SENTENCE, "speaker_id": "en-gb", "language_id": " EN "}).encode()
    assert get(f"{url}/api/tts", capitals, {"Content-Type": "application/json"})[2] == wav


def test_an_older_run_reads_numbers_in_its_letters_and_says_which_alphabet_it_lacks(served):
    from xtts_cli.errors import XttsError

    tts, _, _ = served
    # Saved before numbers were read as words, from transcripts without a digit, "j" or "z".
    assert tts.speak("It costs $5.").text == "It costs $5."  # "it costs five dollars."
    with pytest.raises(XttsError) as refused:
        tts.speak("The lazy dog jumps.")
    assert "'j' (U+006A), 'z' (U+007A)" in refused.value.lines[0]
    assert "saved before it held the whole alphabet of en" in refused.value.hint
    assert "--init-from" in refused.value.hint


@pytest.mark.slow
def test_requests_spoken_at_once_are_each_the_audio_spoken_alone(served):
    # Two generations at a time (Limits.generations): four voices asked for together, each
    # answered with its own sentence in its own voice, as the run speaks it with nothing beside it.
    from concurrent.futures import ThreadPoolExecutor

    tts, server, url = served
    assert server.service.limits.generations == 2
    asked = [("the kettle is on.", "en-us"), ("close the window.", "en-gb"), ("the cat sat.", "en-us+f3")] * 2
    with ThreadPoolExecutor(len(asked)) as pool:
        answers = list(
            pool.map(
                lambda item: get(f"{url}/api/tts?{urllib.parse.urlencode({'text': item[0], 'speaker_id': item[1]})}"),
                asked,
            )
        )
    alone = {item: wav_bytes(tts.speak(item[0], speaker=item[1]).waveform, tts.sample_rate) for item in set(asked)}
    for item, (status, _, wav) in zip(asked, answers):
        assert status == 200
        np.testing.assert_allclose(samples_of(wav) / 32767.0, samples_of(alone[item]) / 32767.0, atol=1e-3)


@pytest.mark.slow
def test_a_clip_uploaded_is_cloned_and_a_long_text_streams_part_by_part_as_it_speaks_whole(served):
    tts, _, url = served
    body, headers = multipart({"text": SENTENCE}, CLIP.read_bytes())
    status, _, wav = get(f"{url}/api/tts", body, headers)
    cloned = wav_bytes(tts.speak(SENTENCE, speaker_wav=CLIP).waveform, tts.sample_rate)
    assert status == 200
    np.testing.assert_allclose(samples_of(wav) / 32767.0, samples_of(cloned) / 32767.0, atol=1e-3)
    # A clip shorter than what the model reads of a voice still clones, and the answer says so.
    rate = tts.sample_rate
    short = wav_bytes(samples_of(CLIP.read_bytes())[: rate // 5].astype(np.float32) / 32768.0, rate)
    status, headers, _ = get(f"{url}/api/tts", *multipart({"text": SENTENCE}, short))
    assert status == 200 and json.loads(headers["X-Xtts-Notes"]) == [
        "the voice's clip is 0.20 s, less than the 1.11 s the model reads of a voice (data.reference_frames): "
        "a longer clip clones it better"
    ]

    paragraph = "the kettle is on. close the window. the cat sat."
    query = urllib.parse.urlencode({"text": paragraph, "speaker_id": "en-us", "stream": "true"})
    status, headers, streamed = get(f"{url}/api/tts?{query}")
    assert status == 200 and headers["Transfer-Encoding"] == "chunked"
    assert streamed[:4] == b"RIFF" and streamed[36:40] == b"data" and streamed[40:44] == b"\xff\xff\xff\xff"
    # Each part as it was made (each scaled on its own when it would clip), a pause between two.
    spoken = list(tts.speak_parts(paragraph, voice=tts.voice("en-us")))
    assert len(spoken) == 3 and all(speech.sentences == 1 for speech in spoken)
    pause = bytes(2 * int(SENTENCE_PAUSE_SECONDS * tts.sample_rate))
    expected = np.frombuffer(pause.join(pcm16(part.waveform) for part in spoken), "<i2")
    np.testing.assert_allclose(np.frombuffer(streamed[44:], "<i2") / 32767.0, expected / 32767.0, atol=1e-3)
    # Spoken whole in process: the same sentences, one by one, a pause between two.
    whole = tts.speak(paragraph, speaker="en-us")
    silence = np.zeros(int(SENTENCE_PAUSE_SECONDS * tts.sample_rate), np.float32)
    assert whole.sentences == 3
    between = [spoken[0].waveform, silence, spoken[1].waveform, silence, spoken[2].waveform]
    np.testing.assert_array_equal(whole.waveform, np.concatenate(between))
    assert whole.alignment.shape == tuple(sum(s.alignment.shape[axis] for s in spoken) for axis in (0, 1))
    # Kept by sentence, made whole when asked: whole, a 5,000-word text's had asked for 31.7 GiB.
    dense, rows, columns = np.asarray(whole.alignment), spoken[0].alignment.shape[0], spoken[0].alignment.shape[1]
    assert [block.shape for block in whole.alignment.blocks] == [s.alignment.shape for s in spoken]
    np.testing.assert_array_equal(dense[:rows, :columns], spoken[0].alignment)
    assert not dense[:rows, columns:].any() and not dense[rows:, :columns].any()
    assert "X-Xtts-Notes" not in headers
    # A stream's headers say its notes before it plays: what its later sentences leave out, and the
    # voice's clip, as the whole WAV's do.
    noted = "the cat sat. the dog ran \U0001f600."
    body, form = multipart({"text": noted, "stream": "1"}, short)
    status, headers, _ = get(f"{url}/api/tts", body, form)
    assert status == 200 and headers["Transfer-Encoding"] == "chunked"
    assert json.loads(headers["X-Xtts-Notes"]) == [
        "left out what the run never saw: \U0001f600",
        "the voice's clip is 0.20 s, less than the 1.11 s the model reads of a voice (data.reference_frames): "
        "a longer clip clones it better",
    ]
    # A last sentence in another script is refused before the stream starts, not after its first
    # sentence went out under a 200 and the connection dropped.
    query = urllib.parse.urlencode({"text": "the cat sat. \u06a9\u062a\u0627\u0628.", "stream": "true"})
    assert error_of(get(f"{url}/api/tts?{query}")) == (
        400,
        "text has characters the run was not trained on: "
        "'\u0627' (U+0627), '\u0628' (U+0628), '\u062a' (U+062A), '\u06a9' (U+06A9)",
    )


@pytest.mark.parametrize(
    "query, status, message",
    [
        ({"text": ""}, 400, "text is empty"),
        ({"text": "x" * 301}, 413, "text is 301 characters, more than this server's 300"),
        # 160 characters of digits are a minute's work: the limit counts what is read aloud.
        ({"text": "1234567 " * 20}, 413, "text reads aloud as 1559 characters (its numbers, symbols and abbrev"),
        (
            {"text": "hello", "speaker_id": "nobody"},
            400,
            "speaker_id 'nobody' is not one of this run's speakers: en-us+f3",
        ),
        ({"text": "hello", "language_id": "fa"}, 400, "language_id 'fa' is not one of this run's languages: en"),
        ({"text": "hello", "speed": "fast"}, 400, "speed 'fast' is not a number"),
        ({"text": "hello", "speed": "9"}, 400, "speed 9 is outside 0.25-4"),
        ({"text": "hello", "speed": "NaN"}, 400, "speed 'NaN' is not a number"),
        ({"text": "hello", "speed": "1_0"}, 400, "speed '1_0' is not a number"),
        ({"text": "hello", "speed": "1.5"}, 400, "speed 1.5: this run's decoder (autoregressive)"),
        ({"text": "hello", "style_wav": "/etc/passwd"}, 400, "style_wav names a file on the server"),
        ({"text": "hello", "speaker_wav": "../config.yaml"}, 400, "speaker_wav names a file on the server"),
        ({"text": "Привет"}, 400, "characters the run was not trained on"),
    ],
)
def test_a_bad_request_is_a_4xx_with_one_line_and_the_server_goes_on(served, query, status, message):
    _, _, url = served
    answer = error_of(get(f"{url}/api/tts?{urllib.parse.urlencode(query)}"))
    assert answer[0] == status and message in answer[1], answer
    assert "\n" not in answer[1] and "Traceback" not in answer[1]
    assert get(f"{url}/health")[0] == 200


@pytest.mark.slow  # speaks each form it accepts
def test_a_parameter_given_twice_or_as_a_list_is_refused_and_an_error_carries_its_hint(served):
    _, _, url = served
    assert error_of(get(f"{url}/api/tts?text=One.&text=Two.")) == (400, "text is given twice; send it once")
    json_type = {"Content-Type": "application/json"}
    listed = json.dumps({"text": ["One.", "Two."]}).encode()
    assert error_of(get(f"{url}/api/tts", listed, json_type)) == (400, "text is a JSON list; send a string")
    truth = json.dumps({"text": "Hello.", "speed": True}).encode()
    assert error_of(get(f"{url}/api/tts", truth, json_type))[1].startswith("speed 'true' is not a number")
    # In the body as well: in both the query and the body, a JSON key twice, a form field or upload twice.
    both = get(f"{url}/api/tts?text=Something+longer.", b"text=Hello.")
    assert error_of(both) == (400, "text is given in both the query and the body; send it once")
    header = get(f"{url}/api/tts?text=Hello.", None, {"text": "Bye."})  # the header had been passed over, unsaid
    assert error_of(header) == (400, "text is given both as a field and as the text: header; send it once")
    twice = b'{"text": "hello", "text": "bye"}'
    assert error_of(get(f"{url}/api/tts", twice, json_type)) == (400, "text is given twice; send it once")
    for fields, upload in (([("text", "Hello."), ("text", "Bye.")], None), ([("text", "Hi.")], 2)):
        body, headers = multipart(dict(fields[:1]), CLIP.read_bytes() if upload else None)
        extra = body.replace(f"--{headers['Content-Type'].split('=')[1]}--".encode(), b"", 1)
        boundary = headers["Content-Type"].split("=")[1]
        if upload:
            head = f'--{boundary}\r\nContent-Disposition: form-data; name="speaker_wav"; filename="b.wav"\r\n'
            extra += head.encode() + b"Content-Type: audio/wav\r\n\r\n" + CLIP.read_bytes() + b"\r\n"
        else:
            extra += f'--{boundary}\r\nContent-Disposition: form-data; name="text"\r\n\r\nBye.\r\n'.encode()
        name = "speaker_wav" if upload else "text"
        answer = get(f"{url}/api/tts", extra + f"--{boundary}--\r\n".encode(), headers)
        assert error_of(answer) == (400, f"{name} is given twice; send it once")
    status, _, body = get(f"{url}/api/tts?{urllib.parse.urlencode({'text': 'Привет'})}")
    assert status == 400 and "the run reads en" in json.loads(body)["hint"]
    status, _, body = get(f"{url}/api/tts?text=Hello.&speaker_id=en-us+f3")  # the + unescaped: a space
    assert status == 400 and json.loads(body)["hint"] == "a + in a URL's query is a space: write en-us+f3 as en-us%2Bf3"
    status, _, body = get(f"{url}/api/tts?text=Hello.&speaker_id=EN-US+F3")  # in capitals too
    assert status == 400 and json.loads(body)["hint"] == "a + in a URL's query is a space: write en-us+f3 as en-us%2Bf3"
    # A region's tag names the run's code of its language; a long reading, the part that fits.
    status, _, body = get(f"{url}/api/tts?text=Hello.&language_id=en-US")
    assert status == 400 and json.loads(body)["hint"] == "send language_id=en", body
    status, _, body = get(f"{url}/api/tts?{urllib.parse.urlencode({'text': 'We have ' + '1234567 ' * 20})}")
    assert (
        status == 413
        and json.loads(body)["hint"] == "its first 31 characters fit ('We have 1234567 1234567 1234567' ends them)"
    )
    fits = urllib.parse.urlencode({"text": "We have 1234567 1234567 1234567"})
    assert get(f"{url}/api/tts?{fits}")[0] == 200  # the part named is one the server takes
    status, _, body = get(f"{url}/api/tts?{urllib.parse.urlencode({'text': '7' * 300})}")
    assert status == 413 and json.loads(body)["hint"].startswith(
        "its first word ('77777777777777777777...') alone reads"
    )
    assert json.loads(body)["hint"].endswith("characters: split it, or leave it out")


def test_a_misspelt_parameter_a_stream_neither_yes_nor_no_and_a_long_url_are_named(served):
    # Each had been spoken in the default voice with a 200 (a misspelling, or the command line's
    # --speaker), streamed or not without a word, or answered a bare "Request-URI Too Long".
    _, _, url = served
    for query, meant in (("speaker=nobody", "speaker_id"), ("speakr_id=x&languag_id=xx", "speaker_id")):
        said = error_of(get(f"{url}/api/tts?text=Hi.&{query}"))
        assert said[0] == 400 and f"did you mean {meant}? It reads text, speaker_id, language_id" in said[1], said
    json_type = {"Content-Type": "application/json"}
    said = error_of(get(f"{url}/api/tts", json.dumps({"text": "Hi.", "language": "en"}).encode(), json_type))
    assert said[0] == 400 and said[1].startswith("language is no parameter of /api/tts: did you mean language_id?")
    # A form led by a BOM (PowerShell's, an editor's) is the form: it had been "\ufefftext is no parameter".
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    assert get(f"{url}/api/tts", "\ufefftext=Hi.".encode(), form)[0] == 200
    status, headers, _ = get(f"{url}/api/tts?text=Hi.&_=1733400000")  # a cache-buster: spoken, and said
    assert status == 200 and "not read: _ (it reads text, " in json.loads(headers["X-Xtts-Notes"])[-1]
    assert error_of(get(f"{url}/api/tts?text=Hi.&stream=2")) == (
        400,
        "stream '2' is neither yes nor no; stream=1 streams the answer, stream=0 not",
    )
    assert get(f"{url}/api/tts?text=Hi.&stream=off")[1].get("Transfer-Encoding") is None
    status, said = error_of(get(f"{url}/api/tts?text={'x' * 70_000}"))
    assert (status, said) == (
        414,
        "the request's URL is over 65536 bytes; send a long text as a POST body (JSON or a form), at most 300 characters",
    )
    assert get(f"{url}/health")[0] == 200


def _wav(samples) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1), out.setsampwidth(2), out.setframerate(22050)
        out.writeframes((np.asarray(samples) * 32767).astype("<i2").tobytes())
    return buffer.getvalue()


def _speech():
    import soundfile

    return soundfile.read(str(CLIP))[0]


def test_hostile_bodies_uploads_and_connections(served):
    tts, server, url = served
    json_type = {"Content-Type": "application/json"}
    assert error_of(get(f"{url}/api/tts", b"{not json", json_type)) == (400, "the body is not valid JSON")
    assert error_of(get(f"{url}/api/tts", b"[1, 2]", json_type))[0] == 400
    # Latin-1 JSON is read as its charset says, and without one said to be no UTF-8 (it had been "not valid JSON").
    latin = '{"text": "Caf\u00e9 au lait."}'.encode("latin-1")
    assert get(f"{url}/api/tts", latin, {"Content-Type": "application/json; charset=iso-8859-1"})[0] == 200
    assert error_of(get(f"{url}/api/tts", latin, json_type)) == (
        400,
        "the JSON body is not UTF-8; send it as UTF-8, or name its charset in its Content-Type",
    )
    labelled = {"Content-Type": "application/json; charset=utf-8"}
    assert error_of(get(f"{url}/api/tts", latin, labelled)) == (
        400,
        "the JSON body is not the utf-8 its Content-Type names, nor UTF-8; send it as UTF-8",
    )
    # Bytes that say their own encoding are read as they say, whatever the label (it had refused these).
    for body in ('\ufeff{"text": "Hi."}'.encode(), '{"text": "Hi."}'.encode("utf-16-le")):
        assert get(f"{url}/api/tts", body, {"Content-Type": "application/json; charset=iso-8859-1"})[0] == 200
    untyped = raw(
        url, b"POST /api/tts HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nConnection: close\r\n\r\ntext=Hello"
    )
    assert untyped.startswith(b"HTTP/1.1 415") and b"a body with no Content-Type; send JSON" in untyped, untyped[:300]
    assert error_of(get(f"{url}/api/tts", b"\x00\x01", {"Content-Type": "application/octet-stream"}))[0] == 415
    # A form's file input with no file chosen sends an empty part named "": no clip (it had been refused as
    # an empty upload); an empty file that has a name is still one.
    unchosen, headers = multipart({"text": "hello"}, b"")
    assert get(f"{url}/api/tts", unchosen.replace(b'filename="clip.wav"', b'filename=""'), headers)[0] == 200
    assert error_of(get(f"{url}/api/tts", unchosen, headers)) == (
        400,
        "the speaker_wav upload is empty; upload a clip of the voice to clone",
    )
    body, headers = multipart({"text": "hello"}, b"MZ\x90\x00 not audio at all")
    assert error_of(get(f"{url}/api/tts", body, headers)) == (
        415,
        "the speaker_wav upload is not WAV, FLAC, Ogg or MP3 audio",
    )
    body, headers = multipart({"text": "hello"}, b"RIFF\x24\x00\x00\x00WAVE broken")
    status, message = error_of(get(f"{url}/api/tts", body, headers))
    assert status == 415 and message.startswith("the speaker_wav upload cannot be read as audio")
    assert "--speaker-wav" not in message and "xtts-serve" not in message  # its words, not a flag's and a scratch path
    assert "Error" not in message  # no exception's name (an Ogg cut inside its header had said IndexError)
    # A clip under another field's name is said to be unread (it had been "the form field 'file' is not
    # UTF-8"); one sent as speaker_wav's value rather than as a file (curl -F 'speaker_wav=<clip.wav') is read.
    body, headers = multipart({"text": "hello"}, CLIP.read_bytes())
    renamed = body.replace(b'name="speaker_wav"; filename', b'name="file"; filename')
    assert error_of(get(f"{url}/api/tts", renamed, headers)) == (
        400,
        "a file is sent as 'file', which is not read; send the clip to clone as speaker_wav",
    )
    valued = body.replace(b'; filename="clip.wav"', b"")
    assert get(f"{url}/api/tts", valued, headers)[0] == 200
    # A FLAC whose header is sound and whose frames are not: a 415 too, not a 500.
    flac = io.BytesIO()
    soundfile.write(flac, _speech(), 22050, format="FLAC")
    body, headers = multipart({"text": "hello"}, flac.getvalue()[:200] + bytes(len(flac.getvalue()) - 200))
    status, message = error_of(get(f"{url}/api/tts", body, headers))
    assert status == 415 and message.startswith("the speaker_wav upload cannot be decoded ("), message
    # Audio with no voice in it: a second of silence, and 5 ms of speech.
    for clip, said in ((_wav(np.zeros(22050)), "is silent"), (_wav(_speech()[:110]), "is 0.005 s: too short")):
        body, headers = multipart({"text": "hello"}, clip)
        answer = get(f"{url}/api/tts", body, headers)
        status, message = error_of(answer)
        assert status == 400 and message.startswith(f"the speaker_wav upload {said}")
        # With what to do, as synthesize says it (it had been left out).
        assert json.loads(answer[2])["hint"] == "pass a few seconds of the voice speaking"
    body, headers = multipart({"text": "hello"}, b"RIFF" + bytes(500_000))
    assert error_of(get(f"{url}/api/tts", body, headers)) == (
        413,
        "the request body is 0.48 MiB, more than this server takes (0.44 MiB: a --max-upload-mb 0.38 upload, "
        "and the fields of a --max-text-chars text)",
    )
    body, headers = multipart({"text": "hello"}, b"RIFF" + bytes(400_000))  # the body fits; its upload does not
    assert error_of(get(f"{url}/api/tts", body, headers)) == (
        413,
        "the speaker_wav upload is 0.38 MiB (400004 bytes, 4 over), more than this server's --max-upload-mb 0.38",
    )
    body, headers = multipart({"text": "hello", "speaker_id": "en-gb"}, CLIP.read_bytes())
    assert "both name a voice" in error_of(get(f"{url}/api/tts", body, headers))[1]
    # A 200 MB upload is refused from its Content-Length, before its body is read.
    head = b"POST /api/tts HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
    answer = raw(url, head + b"Content-Length: 209715200\r\n\r\n" + bytes(65536))
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert (
        b"the request body is 200 MiB, more than this server takes (0.44 MiB: a --max-upload-mb 0.38 upload" in answer
    )
    # A client that stops mid-body, one that sends half a request line, and a malformed one.
    raw(
        url,
        b"POST /api/tts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{",
        read=False,
    )
    raw(url, b"GET /api/t", read=False)
    address = urllib.parse.urlsplit(url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as half:
        half.sendall(b"GET /api/t")
        half.shutdown(socket.SHUT_WR)
        assert half.recv(65536) == b""  # closed unanswered: half a request line is no request to answer
    # Nesting past Python's parser, and a JSON boolean or number as the text (a client's bug, not words).
    deep = b"[" * 5000 + b"]" * 5000
    assert error_of(get(f"{url}/api/tts", deep, json_type)) == (
        400,
        'the JSON body nests too deeply; send {"text": "..."}',
    )
    for value, kind in ((b"true", "boolean"), (b"5", "number")):
        answer = get(f"{url}/api/tts", b'{"text": ' + value + b"}", json_type)
        assert error_of(answer) == (400, f"text is a JSON {kind}; send a string")
    # Two lengths (a proxy in front may read the other), and a body sent with no length at all.
    head = b"POST /api/tts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    two = raw(url, head + b"Content-Length: 15\r\nContent-Length: 3\r\n\r\n" + b'{"text": "Hi."}')
    assert two.startswith(b"HTTP/1.1 400") and b"Content-Length is given 2 ways (15, 3); send one" in two, two
    unsized = raw(url, head + b"Connection: close\r\n\r\n" + b'{"text": "Hi."}')
    assert unsized.startswith(b"HTTP/1.1 411") and b"the POST has no Content-Length" in unsized, unsized
    # coqui's server reads the text from a header: a POST of no body at all is such a request (it had been a 411).
    headed = raw(url, b"POST /api/tts HTTP/1.1\r\nHost: x\r\ntext: Hi.\r\nConnection: close\r\n\r\n")
    assert headed.startswith(b"HTTP/1.1 200") and b"audio/wav" in headed, headed[:300]
    assert raw(url, b"BLAH\r\n\r\n").startswith(b"HTTP/1.1 400")
    # A negative length, a method the server has no answer for, a query whose escapes are not UTF-8.
    # So are a length int() reads (1_0, +8) and another coding than chunked, whose body had been
    # read as a next request on the connection (a request smuggled past a proxy in front).
    for length in (b"-5", b"1_0", b"+8"):
        refused = raw(url, b"POST /api/tts HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + b"\r\n\r\nHi.ab")
        assert refused.startswith(b"HTTP/1.1 400") and b"is not a number of bytes" in refused, refused
    # A chunked body that also has a length is framed one way by this server and maybe the other by a proxy.
    for coding in (b"identity", b"gzip", b"gzip, chunked", b"chunked ", b"x"):
        sent = (
            b"POST /api/tts HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nTransfer-Encoding: "
            + coding
            + b"\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        answer = _all_of(url, sent)
        assert answer.count(b"HTTP/1.1 ") == 1 and b"Connection: close" in answer, answer
        assert answer.startswith(b"HTTP/1.1 400"), answer
        said = b"both a Content-Length and Transfer-Encoding" if coding.strip() == b"chunked" else b"is not read"
        assert said in answer, answer
    for method in (b"PUT", b"DELETE", b"OPTIONS"):
        refused = raw(url, method + b" /api/tts HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        assert refused.startswith(b"HTTP/1.1 405") and b"Allow: GET, POST\r\n" in refused, refused  # HEAD is a 405 too
        assert b"is not a method this server answers; use GET or POST" in refused
        elsewhere = raw(url, method + b" /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        assert elsewhere.startswith(b"HTTP/1.1 405") and b"Allow: GET, POST, HEAD\r\n" in elsewhere, elsewhere
        assert b"answers; use GET, POST or HEAD" in elsewhere  # the error says what its Allow header says
    # Text typed into the URL unescaped (as curl sends it) is read as the UTF-8 it is.
    typed = raw(url, "GET /api/tts?text=Привет HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert typed.startswith(b"HTTP/1.1 400") and "'п' (U+043F)".encode() in typed, typed
    assert error_of(get(f"{url}/api/tts?text=%ff%fe")) == (
        400,
        "the query is not UTF-8: percent-encode the text's UTF-8 bytes",
    )
    # A form in the charset its Content-Type declares (an older client's Latin-1) is read in it; it had
    # been refused as not UTF-8.
    for charset, status, said in (
        (b"; charset=iso-8859-1", b"200", b"audio/wav"),
        (b"", b"400", b"the form body is not UTF-8"),
        # ... one Python does not know as UTF-8 (it had been refused whatever the body), as is ASCII (below).
        (b"; charset=x-nothing", b"400", b"the form body is not UTF-8"),
        # ... and a codec that is no text encoding (it had been a 500), or one that writes ASCII otherwise (UTF-16).
        (b"; charset=base64", b"400", b"the form body is not UTF-8"),
        (b"; charset=utf-16", b"400", b"the form body is not UTF-8"),
    ):
        head = b"POST /api/tts HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 8\r\n"
        form = raw(url, head + b"Content-Type: application/x-www-form-urlencoded" + charset + b"\r\n\r\ntext=Hi\xe9")
        assert form.startswith(b"HTTP/1.1 " + status) and said in form, form[:400]
    head = b"POST /api/tts HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 13\r\n"
    ascii_form = raw(
        url, head + b"Content-Type: application/x-www-form-urlencoded; charset=us-ascii\r\n\r\ntext=Hi%C3%A9"
    )
    assert ascii_form.startswith(b"HTTP/1.1 200"), ascii_form[:400]
    # A body the server does not read (a page other than /api/tts) closes the connection after the
    # answer: its bytes are not read as a next request on it. One it reads keeps it open.
    length, chunked = (
        b"Content-Length: 10\r\n\r\ntext=Hello",
        b"Transfer-Encoding: chunked\r\n\r\nA\r\ntext=Hello\r\n0\r\n\r\n",
    )
    for page, head, answers in (
        (b"/health", length, 1),
        (b"/health", chunked, 1),
        (b"/api/tts", chunked, 2),
        (b"/api/tts", length, 2),
    ):
        # The next request asks to close: a connection kept open had been waited on until the client's timeout.
        follows = b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        answer = _all_of(url, b"POST " + page + b" HTTP/1.1\r\nHost: x\r\n" + head + follows)
        first = answer.partition(b"\r\n\r\n")[0]
        assert answer.count(b"HTTP/1.1 ") == answers and (b"Connection: close" in first) == (answers == 1), answer
        assert answers == 1 or answer.split(b"HTTP/1.1 ")[2].startswith(b"200"), answer
    # A HEAD answered with an error carries no body either: the next answer on the connection follows its head.
    for page in (b"/nope", b"/api/tts"):
        sent = (
            b"HEAD "
            + page
            + b" HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        first, _, rest = _all_of(url, sent).partition(b"\r\n\r\n")
        assert first.startswith((b"HTTP/1.1 404", b"HTTP/1.1 405")) and rest.startswith(b"HTTP/1.1 200"), rest[:80]
        assert (b"\r\nAllow: GET, POST\r\n" in first + b"\r\n") == first.startswith(b"HTTP/1.1 405"), first
    assert error_of(get(f"{url}/samples/..%2Fconfig.yaml"))[0] == 404
    assert error_of(get(f"{url}/etc/passwd"))[0] == 404
    # A full queue: every turn and every place to wait taken, the next request is told so at once.
    service = server.service
    places = service.limits.generations + service.limits.waiting
    assert all(service.admit() for _ in range(places))
    try:
        busy = get(f"{url}/api/tts?text=hello")
        assert error_of(busy)[0] == 503 and busy[1]["Retry-After"] == "1"  # a client's retry loop backs off
        # A long text is checked in a place too: a flood of them had each paid a second of the
        # check's CPU in its own thread, before the limits turned any away.
        long = urllib.parse.quote("Hi there. " * 300 + "\u0628")
        assert error_of(get(f"{url}/api/tts?text={long}"))[0] == 503
    finally:
        for _ in range(places):
            service.release()
    assert get(f"{url}/health")[0] == 200 and get(f"{url}/api/tts?text=hello")[0] == 200


def test_an_idle_connection_closed_by_its_timeout_or_reset_by_its_client_is_no_line_in_the_log(
    served, capfd, monkeypatch
):
    from xtts_cli.serving import http

    monkeypatch.setattr(http._Handler, "timeout", 0.3)  # READ_TIMEOUT_SECONDS, 30 s, for a browser's kept-alive
    from xtts_cli.serving.service import VoiceService

    server = http.make_server(VoiceService(served[0]), "127.0.0.1", 0, log=True)  # its close ends its service
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(server.server_address) as idle:
            idle.settimeout(10)
            assert idle.recv(1) == b""  # closed by the server, unanswered
        # A browser's kept-alive connection reset after its answer (a tab closed): its leaving, not a line.
        for _ in range(2):
            with socket.create_connection(server.server_address) as reset:
                reset.sendall(b"GET /api/tts?text=The+kettle+is+on. HTTP/1.1\r\nHost: x\r\n\r\n")
                reset.settimeout(60)
                assert reset.recv(100).startswith(b"HTTP/1.1 200")
                reset.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # closed with a RST
            time.sleep(0.5)
        assert get(f"http://127.0.0.1:{server.server_address[1]}/health")[0] == 200
    finally:
        server.shutdown()
        server.server_close()
    logged = capfd.readouterr().err
    assert "GET /health 200" in logged and "timed out" not in logged and "Connection" not in logged, logged


def test_a_control_character_a_client_sends_is_logged_escaped(served, capfd):
    # Raw, an escape sequence in a request's path cleared, recoloured or rang the operator's terminal.
    from xtts_cli.serving import http
    from xtts_cli.serving.service import VoiceService

    server = http.make_server(VoiceService(served[0]), "127.0.0.1", 0, log=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for line in (b"GET /\x1b[31mRED\x1b[0m\x07 HTTP/1.1", b"G\x1b[2JET / HTTP/1.1"):
            with socket.create_connection(server.server_address) as client:
                client.sendall(line + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
                client.settimeout(10)
                assert client.recv(100).startswith(b"HTTP/1.1 4")
    finally:
        server.shutdown()
        server.server_close()
    logged = capfd.readouterr().err
    assert "\x1b" not in logged and "\x07" not in logged, repr(logged)
    assert "GET /\\x1b[31mRED\\x1b[0m\\x07 404" in logged and "G\\x1b[2JET" in logged, logged


def _past_the_limit(connect, count: int, url: str, said: bytes, meanwhile=lambda: True) -> None:
    """With `count` idle connections `connect` makes, one more to `url` is a 503 saying `said`
    (and `meanwhile()` holds); once they close, `url` answers."""
    idle = [connect() for _ in range(count)]
    try:
        refused = _all_of(url, b"GET /health HTTP/1.1\r\n\r\n")
        assert refused.startswith(b"HTTP/1.1 503") and said in refused, refused
        assert meanwhile()
    finally:
        for connection in idle:
            connection.close()
    time.sleep(0.3)  # their threads see the close
    assert get(f"{url}/health")[0] == 200


def _this_machines_address() -> str:
    """An address of this machine's other than loopback (none: the test is skipped): a UDP socket's
    connect sends nothing, and says which interface would."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
        except OSError:
            pytest.skip("no network interface but loopback")
        return probe.getsockname()[0]


def test_one_address_of_the_network_takes_a_share_of_the_connections_not_all(served, monkeypatch):
    # One host holding every place with idle sockets had locked every other client out, /health too.
    from xtts_cli.serving import http
    from xtts_cli.serving.service import VoiceService

    host = _this_machines_address()
    monkeypatch.setattr(http, "CONNECTIONS_PER_CLIENT", 2)
    server = http.make_server(VoiceService(served[0]), "0.0.0.0", 0, log=False)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        # Another client (this machine's own, as a proxy in front would be) is answered meanwhile.
        other = lambda: get(f"http://127.0.0.1:{port}/health")[0] == 200  # noqa: E731
        _past_the_limit(
            lambda: socket.create_connection((host, port)), 2, f"http://{host}:{port}", b"this address", other
        )
    finally:
        server.shutdown()
        server.server_close()


def test_a_slow_client_is_closed_at_its_deadline_and_connections_past_the_limit_at_once(served, monkeypatch):
    # A header byte every 0.3 s passed a per-read limit for ever (slowloris), and 2,000 idle sockets
    # had made 1,600 threads.
    from xtts_cli.serving import http
    from xtts_cli.serving.service import VoiceService

    monkeypatch.setattr(http._Handler, "timeout", 0.6)
    monkeypatch.setattr(http, "REQUEST_HEAD_SECONDS", 1.5)
    monkeypatch.setattr(http, "MAX_CONNECTIONS", 3)
    server = http.make_server(VoiceService(served[0]), "127.0.0.1", 0, log=False)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(server.server_address) as slow:
            began = time.monotonic()
            with pytest.raises(OSError):
                for byte in b"GET /health HTTP/1.1\r\nX-Slow: " + b"a" * 100:
                    slow.sendall(bytes([byte]))
                    time.sleep(0.3)
                    if select.select([slow], [], [], 0)[0] and slow.recv(1) == b"":
                        raise ConnectionAbortedError("closed by the server")
            assert time.monotonic() - began < 5
        url = f"http://127.0.0.1:{server.server_address[1]}"
        _past_the_limit(lambda: socket.create_connection(server.server_address), 3, url, b"too many connections")
    finally:
        server.shutdown()
        server.server_close()


def test_a_stop_that_comes_as_a_connections_thread_starts_stops_the_server() -> None:
    # SIGTERM landed in Thread.start() after the thread had begun: the place given back twice, a
    # ValueError took the stop's place and `xtts serve` served on (a `docker stop` waited for its kill).
    from xtts_cli.serving.http import MAX_CONNECTIONS, VoiceServer

    class Stop(BaseException):
        pass

    main = threading.get_ident()

    class Stopped(VoiceServer):
        def finish_request(self, request, client_address) -> None:
            signal.pthread_kill(main, signal.SIGUSR1)  # the stop, as the connection's thread runs

    def stop(*_) -> None:
        raise Stop

    errors: list = []
    handler, hook, interval = signal.signal(signal.SIGUSR1, stop), threading.excepthook, sys.getswitchinterval()
    threading.excepthook = lambda failed: errors.append(failed.exc_value)
    sys.setswitchinterval(1e-6)  # the main thread gives way often: the stop lands inside start()
    server = Stopped(("127.0.0.1", 0), None, log=False)
    stops = 0
    try:
        for _ in range(60):
            with socket.create_connection(server.server_address):
                request, address = server.get_request()
                try:
                    try:
                        server.process_request(request, address)
                    except Stop:
                        stops += 1
                    else:
                        time.sleep(1)  # the stop comes after start() returned
                except Stop:
                    stops += 1
        time.sleep(0.3)  # the last thread gives its place back
    finally:
        signal.signal(signal.SIGUSR1, handler)
        threading.excepthook = hook
        sys.setswitchinterval(interval)
        server.server_close()
    assert stops == 60 and not errors, errors
    assert server.connections._value == MAX_CONNECTIONS  # each place given back once


def test_clients_of_every_kind_are_answered_as_http_says(served):
    tts, server, url = served
    # Header names in lower case (Node's fetch, HTTP/2 proxies): a body with its length, read.
    body = b'{"text": "the cat sat."}'
    lower = raw(
        url,
        b"POST /api/tts HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        b"connection: close\r\n\r\n%s" % (len(body), body),
    )
    assert lower.startswith(b"HTTP/1.1 200") and b"RIFF" in lower, lower[:200]
    # An HTTP/1.0 client reads no chunks: its stream is the WAV itself, ended by the connection's close.
    query = urllib.parse.urlencode({"text": "the cat sat. the dog ran.", "stream": "1"})
    old = _all_of(url, f"GET /api/tts?{query} HTTP/1.0\r\nHost: x\r\n\r\n".encode())
    head, _, wav = old.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"Transfer-Encoding" not in head and b"Connection: close" in head
    assert wav[:4] == b"RIFF" and len(wav) == 44 + 2 * (
        sum(len(part.waveform) for part in tts.speak_parts("the cat sat. the dog ran.", voice=tts.voice()))
        + int(SENTENCE_PAUSE_SECONDS * tts.sample_rate)
    )
    # Expect: 100-continue with a body larger than the server takes: refused before it is sent.
    address = urllib.parse.urlsplit(url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as connection:
        connection.sendall(
            b"POST /api/tts HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
            b"Content-Length: 50000000\r\nExpect: 100-continue\r\n\r\n"
        )
        answer = connection.recv(65536)
    assert answer.startswith(b"HTTP/1.1 413") and b"100 Continue" not in answer, answer[:200]
    assert get(f"{url}/health")[0] == 200
    # What is left out is no part of the length: 600 emoji are not a text too long for a generation.
    # A note names a few of what it left out, and how many more (a header past 16 KiB is refused).
    many = "the cat sat " + "".join(chr(0x1F300 + i) for i in range(250)) + " on the mat."
    status, headers, _ = get(f"{url}/api/tts?{urllib.parse.urlencode({'text': many})}")
    assert status == 200 and json.loads(headers["X-Xtts-Notes"]) == [
        "left out what the run never saw: " + " ".join(chr(0x1F300 + i) for i in range(24)) + " and 226 more"
    ]
    assert tts.speak("the cat sat " + "\U0001f600" * 600 + " on the mat.").notes == [
        "left out what the run never saw: \U0001f600"
    ]


def test_a_chunked_body_is_read_as_a_body_with_its_length_is(served):
    tts, server, url = served
    # What requests, Go and Node send for a body of unknown length: http.client's own encoder here.
    address = urllib.parse.urlsplit(url)
    client = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    parts = iter([b'{"text": "the cat', b' sat."}'])
    client.request("POST", "/api/tts", body=parts, headers={"Content-Type": "application/json"}, encode_chunked=True)
    answer = client.getresponse()
    spoken = answer.read()
    assert answer.status == 200 and samples_of(spoken).size == tts.speak("the cat sat.").waveform.size
    assert client.sock is not None  # kept alive: the next request goes on the same connection
    client.close()
    # Chunk extensions and trailer fields are passed over, and the connection serves on after them.
    body = b"5;name=value\r\ntext=\r\n7\r\nthe cat\r\n0\r\nX-Checksum: 1\r\n\r\n"
    head = b"POST /api/tts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
    form = head + b"Content-Type: application/x-www-form-urlencoded\r\n\r\n"
    answer = _all_of(url, form + body + b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200") and answer.count(b"HTTP/1.1 200") == 2, answer[:300]
    # Past the limit, a size that is no number, and a chunk longer than it says: each a 400/413 that closes.
    chunk = b"%X\r\n" % 40_000 + b"a" * 40_000 + b"\r\n"
    for sent, said in (
        (form + chunk * 3, b"HTTP/1.1 413"),
        (form + b"zz\r\ntext=\r\n0\r\n\r\n", b"the chunk size 'zz' is not a hexadecimal number"),
        (form + b"2\r\ntext=a\r\n0\r\n\r\n", b"a chunk is longer than its size '2' says"),
    ):
        answer = _all_of(url, sent + b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert said in answer and answer.count(b"HTTP/1.1 ") == 1 and b"Connection: close" in answer, answer[:300]
    # Two Transfer-Encoding headers are one list, "chunked, identity": refused, as that one header is
    # (the first alone had been read, and the body framed as a proxy reading both might not).
    twice = _all_of(url, head.replace(b"chunked\r\n", b"chunked\r\nTransfer-Encoding: identity\r\n") + b"\r\n" + body)
    assert twice.startswith(b"HTTP/1.1 400") and b"'chunked, identity' is not read" in twice, twice[:300]
    # A client that hangs up inside a chunk's size line is gone, not told its line is too long.
    with socket.create_connection((address.hostname, address.port), timeout=10) as gone:
        gone.sendall(form + b"1")
        gone.shutdown(socket.SHUT_WR)
        assert gone.recv(65536) == b""
    assert get(f"{url}/health")[0] == 200


def test_a_client_that_leaves_before_its_answer_gives_its_turn_back_at_the_next_sentence(served):
    tts, server, url = served
    service = server.service
    sentence = "the kettle is on the stove."
    tts.speak(sentence)  # its graph built
    began = time.monotonic()
    tts.speak(sentence)
    one = time.monotonic() - began
    text = " ".join([sentence] * 10)  # ten sentences, within the fixture's 300 characters
    address = urllib.parse.urlsplit(url)
    connection = socket.create_connection((address.hostname, address.port), timeout=10)
    connection.sendall(f"GET /api/tts?{urllib.parse.urlencode({'text': text})} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    deadline = time.monotonic() + 30
    while service.in_flight == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert service.in_flight == 1
    connection.close()
    left = time.monotonic()
    while service.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    # Its place freed within a sentence or two, not after the other eight or nine.
    assert service.in_flight == 0 and time.monotonic() - left < 4 * one + 0.5, (time.monotonic() - left, one)
    assert get(f"{url}/api/tts?text=hello")[0] == 200


def _all_of(url: str, payload: bytes) -> bytes:
    """What the server sends back on one connection after `payload`, until it closes it (or 5 s)."""
    address = urllib.parse.urlsplit(url)
    answer = b""
    with socket.create_connection((address.hostname, address.port), timeout=5) as connection:
        connection.sendall(payload)
        try:
            while chunk := connection.recv(65536):
                answer += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return answer


def test_the_serving_line_names_an_address_a_browser_opens() -> None:
    # Every interface is no address to open: it had printed http://0.0.0.0:5104/.
    from xtts_cli.cli.serve import open_at

    assert open_at("127.0.0.1", 5002) == "http://127.0.0.1:5002/" and open_at("::1", 80) == "http://[::1]:80/"
    # For other machines, the machine's name and the address its network sees: a name had been all,
    # one only this machine's /etc/hosts resolved.
    line = open_at("0.0.0.0", 5104)
    assert line.startswith(f"http://127.0.0.1:5104/ (from other machines: http://{socket.gethostname()}:5104/")
    seen = re.findall(r" or http://([0-9.]+):5104/\)$", line)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # a route out: the machine has an address on a network
            routed = not probe.getsockname()[0].startswith("127.")
        except OSError:
            routed = False
    assert bool(seen) == routed, line
    if seen:  # an address of this machine's own: one can be listened on
        with socket.socket() as listener:
            listener.bind((seen[0], 0))
    assert open_at("::", 5104).startswith("http://[::1]:5104/ (from other machines: http://")


@pytest.mark.slow  # three processes, each loading TensorFlow
def test_xtts_serve_listens_on_loopback_and_says_when_others_can_reach_it(tmp_path):
    def serve(*extra: str, until: str = "serving "):
        command = [sys.executable, "-m", "xtts_cli", "serve", "-r", str(RUN), "--port", "0", "--quiet", *extra]
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dumping_env()
        )
        said: queue.Queue = queue.Queue()  # read by a thread: a line that never comes fails, not hangs
        threading.Thread(target=lines_into, args=(process.stdout, said), daemon=True).start()
        lines: list[str] = []
        read_until(said, lines, until)
        return process, said, lines

    def lines_into(stream, said: queue.Queue) -> None:
        for line in stream:
            said.put(line)
        said.put("")  # the end: the process closed its output

    def read_until(said: queue.Queue, lines: list[str], until: str) -> None:
        deadline = time.monotonic() + 240
        while not (lines and (lines[-1].startswith(until) or not lines[-1])):
            lines.append(said.get(timeout=max(0.0, deadline - time.monotonic())))

    process, said, lines = serve(until="listening at ")
    try:
        # Answered while the run loads: a health check had waited on a silent connection until it was served.
        address = lines[-1].split(" at ")[1].split(": /health")[0]
        assert address.startswith("http://127.0.0.1:"), lines
        health = get(f"{address}health")
        page = get(address)
        tts = get(f"{address}api/tts?text=Hello")
        still_loading = get(f"{address}health")[0] == 503
        assert health[0] == 503 and json.loads(health[2]) == {"status": "loading", "run": str(RUN)}, health
        assert health[1]["Retry-After"] == "2"
        if still_loading:  # the load takes seconds after TensorFlow's import; a fast machine may be done
            assert page[0] == 503 and b'http-equiv="refresh"' in page[2] and b"Loading" in page[2], page
            assert b'<link rel="icon" href="data:,">' in page[2]  # each reload had asked for /favicon.ico: a 503
            assert error_of(tts) == (503, "the server is loading its run"), tts
        read_until(said, lines, "serving ")
        assert json.loads(get(f"{address}health")[2])["status"] == "ok"
        assert not any("reachable by other machines" in line for line in lines)
    finally:
        process.terminate()  # while it builds the other lengths' graphs: it exits all the same
        stopped = stopped_within(process, 60)
    assert stopped == 143
    # Said as the port opens, before the model's load: the process goes before TensorFlow is in.
    process, _, lines = serve("--host", "0.0.0.0", until="note: ")
    try:
        assert "--host 0.0.0.0 is reachable by other machines, with no authentication" in lines[-1], lines
        assert not any(line.startswith("serving ") for line in lines)
    finally:
        process.terminate()
        process.wait(30)
    # A port another process holds is said before the run is loaded, not after the model's load.
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = subprocess.run(
            [sys.executable, "-m", "xtts_cli", "serve", "-r", str(RUN), "--port", str(held.getsockname()[1])],
            capture_output=True,
            text=True,
            env=subprocess_env(),
            timeout=120,
        )
    assert taken.returncode == 1 and "Address already in use" in taken.stderr, taken.stderr
    assert "loading" not in taken.stderr and "Traceback" not in taken.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_ctrl_c_or_a_closed_terminal_answers_the_requests_in_flight_whole(tmp_path, stop, code):
    # SIGHUP (its terminal closed) had skipped the answering, and TensorFlow aborted the exit (134).
    command = [sys.executable, "-m", "xtts_cli", "serve", "-r", str(RUN), "--port", "0"]
    with (tmp_path / "stderr").open("w") as stderr:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=subprocess_env(), preexec_fn=terminal_signals
        )
        try:
            line = ""
            while not line.startswith("serving ") and process.poll() is None:
                line = process.stdout.readline()
            url = line.split(" at ")[1].strip()
            text = " ".join(["The kettle is on the stove, so the water will be hot."] * 20)
            answers: list = []
            asking = threading.Thread(
                target=lambda: answers.append(get(f"{url}api/tts", urllib.parse.urlencode({"text": text}).encode()))
            )
            asking.start()
            time.sleep(2.0)  # the request is in flight: its text takes seconds to speak
            process.send_signal(stop)
            if stop == signal.SIGHUP:  # a closed terminal may send two (the kernel's, the shell's): one stop
                time.sleep(0.3)
                process.send_signal(stop)
            asking.join(120)
            assert process.wait(120) == code
        finally:
            process.kill()
    said = (tmp_path / "stderr").read_text()
    assert "stopping: finishing 1 request(s) in flight" in said and said.rstrip().endswith("stopped"), said
    # The request's own line before "stopped": the last one answered had gone unlogged.
    assert re.search(r"POST /api/tts 200 [\d.]+s\nstopped\n?$", said), said
    status, _, wav = answers[0]
    with wave.open(io.BytesIO(wav)) as handle:  # whole: as many samples as its header says
        assert status == 200 and handle.getnframes() * 2 == len(wav) - 44 and handle.getnframes() > 22050 * 10
    assert "Traceback" not in said


@pytest.mark.slow
def test_a_burst_of_stop_signals_while_idle_exits_143_with_no_traceback(tmp_path):
    # A service manager may signal the process group and then the process: a second SIGTERM had landed in
    # the closing (the executor's shutdown) as a traceback. A race: each try sends a tight burst.
    command = [sys.executable, "-m", "xtts_cli", "serve", "-r", str(RUN), "--port", "0"]
    for attempt in range(2):
        said = tmp_path / f"said{attempt}"
        with said.open("w") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=subprocess_env())
            try:
                while "serving " not in said.read_text() and process.poll() is None:
                    time.sleep(0.1)
                while process.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.send_signal(signal.SIGTERM)
                assert process.wait(60) == 143, said.read_text()
            finally:
                process.kill()
        assert "Traceback" not in said.read_text() and "Exception ignored" not in said.read_text(), said.read_text()


def test_an_address_that_cannot_be_listened_on_names_the_option_to_change():
    from xtts_cli.errors import XttsError
    from xtts_cli.serving.http import make_server

    # 192.0.2.1 is a documentation address (RFC 5737) no machine holds; .invalid never resolves (RFC 2606).
    for host, hint in (
        ("192.0.2.1", "--host must be an address of this machine"),
        ("nosuchhost.invalid", "--host is not a name or address this machine resolves"),
    ):
        with pytest.raises(XttsError) as refused:
            make_server(None, host, 0)
        assert refused.value.lines[0].startswith(f"cannot listen on {host}:0") and refused.value.hint.startswith(hint)


@pytest.mark.skipif(not socket.has_ipv6, reason="this Python has no IPv6")
def test_an_ipv6_address_is_listened_on():
    from xtts_cli.serving.http import make_server

    server = make_server(None, "::1", 0)
    try:
        assert server.server_address[0] == "::1" and server.socket.family == socket.AF_INET6
    finally:
        server.server_close()


@pytest.mark.slow  # loads a second run
def test_a_run_with_no_voice_of_its_own_and_a_sample_gone_since_the_start_are_a_clients_4xx(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (run / "speaker_reference.npy").unlink()
    (run / "speaking_rate.json").unlink()  # a note loading says of every answer
    (run / "samples").mkdir()
    shutil.copyfile(CLIP, run / "samples" / "step000004-00.wav")
    _, server, url = start(run)
    try:
        status, _, body = get(f"{url}/api/tts?text=hello")
        assert status == 400 and json.loads(body)["hint"].startswith("send speaker_id= (/api/speakers lists them)")
        status, headers, _ = get(f"{url}/api/tts?text=hello&speaker_id=%20EN-GB")  # as language_id is read
        # Said of each answer and in /health, as synthesize --json says it (the server's log alone had).
        (note,) = json.loads(get(f"{url}/health")[2])["notes"]
        assert note.startswith(f"{run} has no readable speaking_rate.json: how long each sentence may run")
        assert status == 200 and note in json.loads(headers["X-Xtts-Notes"])
        assert get(f"{url}/samples/step000004-00.wav")[0] == 200
        # Safari plays an <audio> only from a server that answers its Range with 206 (it had the whole file).
        whole = CLIP.read_bytes()
        for asked, part in (("bytes=0-1", whole[:2]), ("bytes=100-", whole[100:]), ("bytes=-10", whole[-10:])):
            status, headers, body = get(f"{url}/samples/step000004-00.wav", headers={"Range": asked})
            assert (status, body, headers["Accept-Ranges"]) == (206, part, "bytes"), asked
        first = len(whole) - len(part)
        assert headers["Content-Range"] == f"bytes {first}-{len(whole) - 1}/{len(whole)}"
        status, headers, _ = get(f"{url}/samples/step000004-00.wav", headers={"Range": f"bytes={len(whole)}-"})
        assert (status, headers["Content-Range"]) == (416, f"bytes */{len(whole)}")
        assert get(f"{url}/samples/step000004-00.wav", headers={"Range": "bytes=0-1,5-9"})[2] == whole  # several: all
        backwards = get(f"{url}/samples/step000004-00.wav", headers={"Range": "bytes=5-2"})  # no range: ignored
        assert backwards[0] == 200 and backwards[2] == whole
        assert [sample["name"] for sample in json.loads(get(f"{url}/api/samples")[2])] == ["step000004-00.wav"]
        (run / "samples" / "step000004-00.wav").unlink()
        assert json.loads(get(f"{url}/api/samples")[2]) == []  # the page lists no sample that is gone
        assert error_of(get(f"{url}/samples/step000004-00.wav")) == (
            404,
            "no training sample 'step000004-00.wav'; /api/samples lists them",
        )
        shutil.rmtree(run)  # the whole run: /health had gone on saying "ok" and nothing more
        health = json.loads(get(f"{url}/health")[2])
        assert health["notes"][-1].startswith(f"{run} is gone: this server speaks with the model it loaded")
        assert get(f"{url}/api/tts?text=hello&speaker_id=en-gb")[0] == 200
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_the_graph_of_every_buffer_length_is_built_before_a_request_needs_it():
    from xtts_cli.inference import Synthesizer
    from xtts_cli.model.vocoder import _phase_search
    from xtts_cli.serving.service import VoiceService
    from xtts_cli.speech.synthesis import FRAME_BLOCK, buffer_lengths

    tts = Synthesizer.load(RUN)
    # Two buffer lengths instead of the run's seven (870 frames): the same code, two traces.
    data = tts.config.data.model_copy(update={"max_mel_frames": 2 * FRAME_BLOCK})
    tts.config = tts.config.model_copy(update={"data": data})
    # What `xtts serve` builds before it answers, without a sentence (a run of any script): the
    # shortest sentences' graph and Griffin-Lim's, the one a sentence uses (counted from none).
    _phase_search.cache_clear()
    tts.warm_up()
    assert tts.model.generation_traces() == 1 and _phase_search.cache_info().currsize == 1
    service = VoiceService(tts)
    assert service.health()["graphs"] == "built on first use"
    building = service.warm_up()
    assert service.health()["graphs"] in ("building", "ready")
    building.join(timeout=240)
    assert service.health()["graphs"] == "ready"
    traced = tts.model.generation_traces()
    assert traced == len(buffer_lengths(tts.model, data)) == 2
    short, long = tts.speak("Yes."), tts.speak("A sentence of a good many words, long enough for the longer buffer.")
    assert short.frame_window[1] <= FRAME_BLOCK < long.frame_window[1]
    assert tts.model.generation_traces() == traced  # what `xtts serve` built is what requests use
    assert _phase_search.cache_info().currsize == 1


# The slow tier: a run trained here, its samples, and the page in a browser.


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory) -> Path:
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.training.controller import Controller
    from xtts_cli.training.trainer import Trainer

    root = tmp_path_factory.mktemp("served")
    path = tiny_config(root, "  max_steps: 4\n")
    settings = yaml.safe_load(path.read_text(encoding="utf-8"))
    settings["data"]["dataset_path"] = str(SAMPLE)
    settings["model"]["decoder"] = "duration"
    settings["training"]["sample_step"] = 2
    settings["training"]["test_sentences"] = [SENTENCE]
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    Controller(Trainer(resolve_config(path, {}).config, run_dir=root / "run")).run()
    return root / "run"


@pytest.fixture(scope="module")
def trained_served(trained_run):
    """The trained run served, once for the tests that ask it (its graphs are built by the first)."""
    tts, server, url = start(trained_run)
    yield tts, server, url
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_the_runs_training_samples_are_listed_by_step_and_served_by_name_only(trained_run, trained_served):
    tts, _, url = trained_served
    assert tts.build_graphs() == 1  # a duration decoder's buffer length is an input: one graph for all
    listed = json.loads(get(f"{url}/api/samples")[2])
    on_disk = sorted(p.name for p in (trained_run / "samples").glob("*.wav"))
    assert sorted(item["name"] for item in listed) == on_disk and {item["step"] for item in listed} == {2, 4}
    assert {(item["sentence"], item["text"]) for item in listed} == {(0, SENTENCE)}  # the page shows the words
    # Each voice by the name /api/speakers gives and speaker_id takes, not its file name's "en-gb_m3".
    speakers = json.loads(get(f"{url}/api/speakers")[2])
    voices = {item["voice"] for item in listed}
    assert voices <= set(speakers) and {"en-gb+m3", "en-us+f3"} <= voices, voices
    recorded = json.loads((trained_run / "samples" / "texts.json").read_text(encoding="utf-8"))
    assert recorded == {item["name"]: SENTENCE for item in listed}  # as the run kept them, not read from its config
    status, headers, body = get(f"{url}/samples/{listed[0]['name']}")
    assert status == 200 and body == (trained_run / "samples" / listed[0]["name"]).read_bytes()
    assert get(f"{url}/samples/{urllib.parse.quote('../config.yaml')}")[0] == 404
    query = urllib.parse.urlencode({"text": SENTENCE, "speed": "1.5"})
    fast, slow = get(f"{url}/api/tts?{query}")[2], get(f"{url}/api/tts?text={urllib.parse.quote(SENTENCE)}")[2]
    assert len(samples_of(fast)) < len(samples_of(slow))


@pytest.mark.slow
def test_a_sample_in_another_script_or_written_after_the_start_is_served_by_its_escaped_name(trained_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(trained_run, run)
    first = sorted((run / "samples").glob("*.wav"))[0]
    persian = first.with_name("step0000004-0-\u0645\u0631\u06cc\u0645.wav")  # as a speaker folder named مریم writes it
    shutil.copy(first, persian)
    from xtts_cli.serving.service import VoiceService

    tts, server, url = start(run)
    try:
        assert persian.name in {item["name"] for item in json.loads(get(f"{url}/api/samples")[2])}
        status, _, body = get(f"{url}/samples/{urllib.parse.quote(persian.name)}")  # as the page asks for it
        assert status == 200 and body == persian.read_bytes()
        # A run still training writes samples after the server started: listed and served (they had been a 404).
        later = first.with_name("step0000006-0-en-us_f3.wav")
        shutil.copy(first, later)
        assert (6, later.name) in {(item["step"], item["name"]) for item in json.loads(get(f"{url}/api/samples")[2])}
        assert get(f"{url}/samples/{later.name}")[:3:2] == (200, later.read_bytes())
        # ... and checkpoints past the step served: /health says so (the page, that a restart speaks it).
        assert json.loads(get(f"{url}/health")[2])["latest_step"] == 4
        for kept in (run / "checkpoints").glob("ckpt-4.*"):
            shutil.copy(kept, kept.with_name(kept.name.replace("ckpt-4.", "ckpt-6.")))
        assert {key: json.loads(get(f"{url}/health")[2])[key] for key in ("step", "latest_step")} == {
            "step": 4,
            "latest_step": 6,
        }
        # A step chosen with --step: the page says the newer one is served without it, not by a restart.
        assert VoiceService(tts, step_asked=4).health()["step_asked"] == 4
    finally:
        server.shutdown()
        server.server_close()


def chromium() -> str | None:
    return next(
        (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None
    )


@pytest.fixture
def scratch():
    """A temp folder with a short path, removed after: a UNIX socket's path holds at most 107 bytes,
    and a test's tmp_path under a pytest-xdist worker can be longer."""
    folder = Path(tempfile.mkdtemp(prefix="xtts-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.skipif(
    chromium() is None or shutil.which("chromedriver") is None,
    reason="needs chromium and chromedriver (.ci/run installs them)",
)
def test_the_page_speaks_lists_voices_plays_samples_and_shows_errors_in_a_browser(
    trained_run, trained_served, served, scratch
):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    _, _, url = trained_served
    options = webdriver.ChromeOptions()
    options.binary_location = chromium()
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--autoplay-policy=no-user-gesture-required",
    ):
        options.add_argument(flag)
    # Chromium keeps its profile and singleton socket in the temp dir: one of the test's own.
    options.add_argument(f"--user-data-dir={scratch / 'profile'}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(shutil.which("chromedriver"), env={**os.environ, "TMPDIR": str(scratch)})
    browser = webdriver.Chrome(options=options, service=service)
    try:
        browser.get(f"{url}/")
        wait = WebDriverWait(browser, 120)
        wait.until(lambda b: "step 4" in b.find_element(By.ID, "run").text)
        voices = [o.get_attribute("value") for o in Select(browser.find_element(By.ID, "speaker")).options]
        assert voices == ["", "en-us+f3", "en-us", "en-gb+m3", "en-gb"]
        assert [o.text for o in Select(browser.find_element(By.ID, "language")).options] == ["en"]
        rows = browser.find_elements(By.CSS_SELECTOR, "#samples tbody tr")
        assert len(rows) == len(list((trained_run / "samples").glob("*.wav")))
        # The text box shows a sentence the run spoke, and lays out a right-to-left script as one.
        first = rows[0].find_elements(By.TAG_NAME, "td")[2].find_element(By.TAG_NAME, "div")
        box = browser.find_element(By.ID, "text")
        assert box.get_attribute("placeholder") == f"Type what to say, e.g. {first.text}" and first.text == SENTENCE
        assert box.get_attribute("dir") == first.get_attribute("dir") == "auto"
        # Every player is named for a screen reader, and a sample's is wide enough to press, on a phone too
        # (in an automatic table layout its column had shrunk to 0 px).
        named = "return [...document.querySelectorAll('audio')].map(a => a.getAttribute('aria-label') || '')"
        labels = browser.execute_script(named)
        assert len(labels) == len(rows) + 1 and all(labels) and labels[1].startswith("step "), labels
        widths = "return [...document.querySelectorAll('#samples audio')].map(a => a.getBoundingClientRect().width)"
        for width in (375, 1200):
            browser.set_window_size(width, 900)
            assert min(browser.execute_script(widths)) >= 150, (width, browser.execute_script(widths))
            sideways = "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
            assert browser.execute_script(sideways) <= 0, width  # the clip's file input had pushed it 3 px wider
        slider = browser.find_element(By.ID, "speed")
        assert slider.is_enabled()  # a duration decoder's pace, over the range the server takes
        assert (slider.get_attribute("min"), slider.get_attribute("max")) == ("0.25", "4")
        # A sample plays: its audio element loads the file the run wrote.
        duration = browser.execute_async_script(
            "const done = arguments[0]; const a = document.querySelector('#samples audio');"
            "a.preload = 'auto'; a.onloadedmetadata = () => done(a.duration); a.onerror = () => done(-1); a.load();"
        )
        assert duration > 0

        # The characters typed are counted against the server's limit (a long text had been refused only once sent).
        assert browser.find_element(By.ID, "count").text == "0 of 2,000 characters"
        # Speak: a sentence in a chosen voice comes back as audio the player can play.
        browser.find_element(By.ID, "text").send_keys(SENTENCE)
        assert browser.find_element(By.ID, "count").text == f"{len(SENTENCE)} of 2,000 characters"
        Select(browser.find_element(By.ID, "speaker")).select_by_value("en-gb")
        browser.find_element(By.ID, "go").click()
        wait.until(lambda b: b.find_element(By.ID, "status").text.startswith("made in"))
        played = browser.execute_async_script(
            "const done = arguments[0]; const a = document.getElementById('player');"
            "if (a.readyState >= 1) done(a.duration); else { a.onloadedmetadata = () => done(a.duration); a.onerror = () => done(-1); }"
        )
        assert played > 0.2
        # The button, disabled while it spoke, has the keyboard's focus back (it had been left on the page).
        assert browser.execute_script("return document.activeElement.id") == "go"
        # Several sentences play as they are made (streamed, part by part), and the player then holds the
        # whole WAV, its sizes said: it had played nothing until the last sentence was made.
        browser.execute_script(
            "window.seen = []; new MutationObserver(() => window.seen.push(document.getElementById('status')"
            ".textContent)).observe(document.getElementById('status'), {childList: true, characterData: true, subtree: true});"
        )
        browser.find_element(By.ID, "text").clear()
        browser.find_element(By.ID, "text").send_keys("the cat sat. the dog ran. the kettle is on the stove.")
        browser.find_element(By.ID, "go").click()
        wait.until(lambda b: b.find_element(By.ID, "status").text.startswith("made in"))
        seen = browser.execute_script("return window.seen")
        assert any(text.startswith("speaking ... (playing the first part") for text in seen), seen
        whole = browser.execute_async_script(
            "const done = arguments[0]; const a = document.getElementById('player');"
            "if (a.readyState >= 1) done(a.duration); else { a.onloadedmetadata = () => done(a.duration); a.onerror = () => done(-1); }"
        )
        assert 2 * played < whole < 60, (played, whole)
        browser.find_element(By.ID, "text").clear()
        browser.find_element(By.ID, "text").send_keys(SENTENCE)

        # An error is shown as its one line, the last clip is not left to play under it, and the page
        # still speaks after it.
        browser.find_element(By.ID, "text").clear()
        browser.find_element(By.ID, "go").click()
        wait.until(lambda b: b.find_element(By.ID, "status").get_attribute("class") == "error")
        assert browser.find_element(By.ID, "status").text == "Type the text to speak first."
        browser.find_element(By.ID, "text").send_keys(
            "\u0645\u0646"
        )  # a script the run does not read: the server's error
        browser.find_element(By.ID, "go").click()
        wait.until(lambda b: b.find_element(By.ID, "status").text.startswith("text has characters the run was not"))
        assert browser.find_element(By.ID, "player").get_attribute("src") in ("", None)
        browser.find_element(By.ID, "text").clear()
        # Editing the text takes the old error away (it had stayed under a new text until the next Speak).
        browser.find_element(By.ID, "text").send_keys("a")
        assert browser.find_element(By.ID, "status").text == ""
        # The run's own error (it did not load) stays: the one sign the page cannot speak.
        browser.execute_script("status('cannot load the run: gone', true)")
        browser.find_element(By.ID, "text").send_keys("b")
        assert browser.find_element(By.ID, "status").text == "cannot load the run: gone"
        browser.execute_script("status('', false)")
        # A speech made after an error keeps its line (its notes) as the text is edited.
        browser.find_element(By.ID, "text").clear()
        browser.find_element(By.ID, "go").click()
        assert browser.find_element(By.ID, "status").text == "Type the text to speak first."
        browser.execute_script("document.getElementById('text').value = 'the cat sat.'")  # no input event
        browser.find_element(By.ID, "text").send_keys(Keys.CONTROL, Keys.ENTER)
        wait.until(lambda b: b.find_element(By.ID, "status").text.startswith("made in"))
        browser.find_element(By.ID, "text").send_keys("c")
        assert browser.find_element(By.ID, "status").text.startswith("made in")
        # Near the limit, numbers (read as their words, as the server counts them) are said to count longer.
        browser.execute_script(
            "const t = document.getElementById('text'); t.value = 'Call 555 0100. '.repeat(110);"
            "t.dispatchEvent(new Event('input'));"
        )
        assert browser.find_element(By.ID, "count").text == (
            "1,650 of 2,000 characters (its numbers and symbols count as the words they are read as: it may be too long)"
        )
        browser.find_element(By.ID, "text").clear()
        # Cloning from an uploaded clip.
        browser.find_element(By.ID, "text").send_keys(SENTENCE)
        browser.find_element(By.ID, "reference").send_keys(str(CLIP))
        assert Select(browser.find_element(By.ID, "speaker")).first_selected_option.get_attribute("value") == ""
        browser.find_element(By.ID, "go").click()
        wait.until(lambda b: b.find_element(By.ID, "status").text.startswith("made in"))
        # A listed voice picked after the clip replaces it: one voice is sent, not a refused pair.
        browser.execute_script("document.getElementById('status').textContent = ''")
        Select(browser.find_element(By.ID, "speaker")).select_by_value("en-us")
        assert browser.find_element(By.ID, "reference").get_attribute("value") == ""
        browser.find_element(By.ID, "go").click()
        wait.until(lambda b: b.find_element(By.ID, "status").text not in ("", "speaking ..."))
        assert browser.find_element(By.ID, "status").text.startswith("made in")

        # An autoregressive run (the module's served one): its speed is off, and the page says why
        # where the value is shown.
        browser.get(f"{served[2]}/")
        wait.until(lambda b: "step" in b.find_element(By.ID, "run").text)
        assert not browser.find_element(By.ID, "speed").is_enabled()
        assert "fixed: this run's decoder (autoregressive)" in browser.find_element(By.ID, "speed-value").text
        # Ctrl+Enter in the text box speaks it, as the button's line says.
        assert browser.find_element(By.ID, "keys").text == "or Ctrl+Enter in the text"
        browser.find_element(By.ID, "text").send_keys(SENTENCE, Keys.CONTROL, Keys.ENTER)
        wait.until(lambda b: b.find_element(By.ID, "status").text.startswith("made in"))
        # Nothing but the refused request was an error in the console (the favicon's 404 was, at every load).
        severe = [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert (
            len(severe) == 1
            and "/api/tts - Failed to load resource: the server responded with a status of 400" in severe[0]
        )
        # A proxy's own error page (HTML, not xtts's JSON) is said as its status, not as a parse error.
        browser.execute_script(
            "window.fetch = async () => new Response('<html><body>502 Bad Gateway</body></html>', "
            "{status: 502, statusText: 'Bad Gateway', headers: {'Content-Type': 'text/html'}});"
        )
        browser.find_element(By.ID, "go").click()
        wait.until(lambda b: b.find_element(By.ID, "status").get_attribute("class") == "error")
        assert browser.find_element(By.ID, "status").text == (
            "the server answered 502 Bad Gateway: not xtts's own answer (a proxy in front of it?)"
        )
        # A server closed since the page loaded: a request on the connection the browser kept is told
        # it is stopping (it had been a 500 of the closed executor); one that reaches no server at all
        # (fetch's TypeError) is said so, not as the browser's "Failed to fetch".
        _, stopped, stopped_url = start(RUN)
        browser.get(f"{stopped_url}/")
        wait.until(lambda b: "step" in b.find_element(By.ID, "run").text)
        stopped.shutdown()
        stopped.server_close()
        browser.find_element(By.ID, "text").send_keys(SENTENCE)
        browser.find_element(By.ID, "go").click()
        wait.until(lambda b: b.find_element(By.ID, "status").get_attribute("class") == "error")
        assert browser.find_element(By.ID, "status").text.startswith("the server is stopping"), browser.find_element(
            By.ID, "status"
        ).text
        browser.execute_script("window.fetch = () => Promise.reject(new TypeError('Failed to fetch'));")
        browser.find_element(By.ID, "go").click()
        wait.until(
            lambda b: b.find_element(By.ID, "status").text.startswith("cannot reach the xtts server (stopped, or ")
        )
    finally:
        browser.quit()


@pytest.mark.slow
def test_the_example_client_serves_an_export_with_tensorflow_alone(tmp_path, runner, served):
    """examples/serve_export.py: the ids it makes from text are the run's own, and what it serves
    is what the SavedModel makes of them."""
    import importlib.util

    import tensorflow as tf

    from xtts_cli.cli.app import app
    from xtts_cli.data.phonemes import PUNCTUATION, phonemize
    from xtts_cli.inference.export import phonemizer_call

    source = Path(__file__).resolve().parents[1] / "examples" / "serve_export.py"
    assert "xtts_cli" not in source.read_text(encoding="utf-8")
    spec = importlib.util.spec_from_file_location("serve_export", source)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    # One language is the default; of several, none is guessed (Persian text read with English ids).
    assert example.language_of({}, ["en"]) == ("en", None) and example.language_of(
        {"language": "fa"}, ["en", "fa"]
    ) == (
        "fa",
        None,
    )
    assert example.language_of({}, ["en", "fa"]) == (None, "the export speaks en, fa: pass one as language=")
    assert example.language_of({"language": "de"}, ["en"]) == (None, "language de is not the export's: en")
    paced, stopped = {"paced_signatures": {"names": {"serving_default": "paced"}}}, {"paced_signatures": None}
    assert example.speed_of({"speed": "1.5"}, paced) == (1.5, None) and example.speed_of({}, stopped) == (1.0, None)
    assert example.speed_of({"speed": "nan"}, paced) == (None, "speed nan is not a pace from 0.25 to 4")
    assert example.speed_of({"speed": "2"}, stopped)[1].endswith("it has no pace to set")
    called = {"punctuation_marks": PUNCTUATION, "phonemizer": phonemizer_call()}  # as export.json holds them
    for text, language in (("The kettle, it's ON the stove!", "en-us"), ("کتاب روی میز است.", "fa")):
        assert example.phonemize(example.clean(text), language, called) == phonemize([text.lower()], language)[0]
    # Turkish capitals lower as training lowered them: I is ı, İ is i (not i and a stray dot, left out).
    from xtts_cli.data.text import prepare_texts

    for text in ("Işık İstanbul IRMAK", "Hello Ivy"):
        assert example.clean(text, "tr") == prepare_texts([text], ["multilingual_cleaners"], "characters", "tr")[0]

    out = tmp_path / "exported"
    exported = runner.invoke(app, ["export", "-r", str(RUN), "-o", str(out)])
    assert (
        exported.exit_code == 0
        and "; speaker: speaker_id, text_ids, language_id -> mel, stopped, audio)" in exported.stdout
    )
    voice = example.Voice(out, CLIP)
    (tmp_path / "empty.wav").write_bytes(b"")
    for bad in (tmp_path / "empty.wav", tmp_path / "missing.wav"):  # a one-line exit, not a traceback
        with pytest.raises(SystemExit, match=f"{bad}: .*give a 16-bit mono WAV at 22050 Hz"):
            example.read_wav(bad, 22050)
    tokenizer = served[0].tokenizer  # the module's Synthesizer of RUN: its tokenizer as it speaks
    text = "The kettle   is ON the stove."
    assert voice.text_ids(text, "en") == tokenizer.symbol_ids(tokenizer.prepare(text))
    command = [sys.executable, str(source), str(out), "--reference", str(CLIP), "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=subprocess_env())
    try:
        address = process.stdout.readline().split(" at ")[1].strip()
        # A text the model has no letter of (another script, its space read) is a 400, and the next request is answered.
        for other in ("Привет", "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645"):
            assert error_of(get(f"{address}?{urllib.parse.urlencode({'text': other})}"))[0] == 400
        # A letter it lacks read without its accent, as the run reads it; another method's error is JSON too.
        cafe = urllib.parse.urlencode({"text": "Caf\u00e9 au lait."})
        accented = get(f"{address}?{cafe}")
        assert accented[0] == 200 and accented[1]["X-Left-Out"] == "[]"
        assert voice.text_ids("Caf\u00e9", "en") == tokenizer.symbol_ids(
            tokenizer.speakable(tokenizer.prepare("Caf\u00e9"))[0]
        )
        assert error_of(get(address, b"text=hi")) == (501, "POST is not served: use GET /tts?text=...")
        # A repeated key, a query not UTF-8 and a text of digits alone: named (had been spoken, or "no symbol").
        assert error_of(get(f"{address}?text=a&text=b")) == (400, "text given more than once: pass each once")
        assert error_of(get(f"{address}?text=%ff%fe")) == (
            400,
            "the query is not UTF-8: percent-encode the text's UTF-8 bytes",
        )
        assert error_of(get(f"{address}?text=123")) == (400, "digits are not read here (123): write numbers in words")
        assert error_of(get(f"{address}?text=")) == (400, "text is empty; pass the text to speak as text=")
        status, headers, wav = get(f"{address}?{urllib.parse.urlencode({'text': text})}")
        assert status == 200 and headers["Content-Type"] == "audio/wav" and headers["X-Left-Out"] == "[]"
        assert headers["X-Stopped"] in ("true", "false")  # false: the length limit cut the clip
        # Digits the run never wrote (it reads no numbers here): refused, not spoken without them (answered 200).
        said = error_of(get(f"{address}?{urllib.parse.urlencode({'text': 'It costs $12.50.'})}"))
        assert said == (400, "digits are not read here (12.50): write numbers in words")
        said = error_of(get(f"{address}?{urllib.parse.urlencode({'text': 'x² plus y'})}"))  # NFKC: x2
        assert said == (400, "digits are not read here (2): write numbers in words")
        speak = tf.saved_model.load(str(out)).signatures["serving_default"]
        # A reference with no voice in it is refused by the graph, as synthesize and the server refuse it.
        nan, infinite = voice.reference.copy(), voice.reference.copy()
        nan[100], infinite[100] = np.nan, np.inf
        for reference, says in (
            (np.zeros(22050), "is silent"),
            (_speech()[:100], "is too short to hear a voice in"),
            (nan, "holds samples that are not numbers"),
            (infinite, "holds samples that are not numbers"),  # it had made NaN audio
        ):
            with pytest.raises(tf.errors.InvalidArgumentError, match=f"reference_audio {says}"):
                speak(
                    text_ids=tf.constant(voice.text_ids(text, "en"), tf.int32),
                    language_id=tf.constant(0),
                    reference_audio=tf.constant(reference, tf.float32),
                )
        expected = speak(
            text_ids=tf.constant(voice.text_ids(text, "en"), tf.int32),
            language_id=tf.constant(0),
            reference_audio=tf.constant(voice.reference),
        )["audio"].numpy()
        # A lead-in of silence is passed over to where the voice starts, as synthesize passes it over (the
        # first window had been all silence, and cloned); a clip far past full scale is refused as it refuses it.
        voiced = np.concatenate([np.zeros(2205, np.float32), voice.reference])
        heard = [
            speak(
                text_ids=tf.constant(voice.text_ids(text, "en"), tf.int32),
                language_id=tf.constant(0),
                reference_audio=tf.constant(np.concatenate([np.zeros(lead, np.float32), voiced])),
            )["audio"].numpy()
            for lead in (0, 26448)  # whole frames of the voice's search (VOICE_FRAME_SECONDS)
        ]
        np.testing.assert_array_equal(heard[0], heard[1])
        with pytest.raises(tf.errors.InvalidArgumentError, match="reference_audio reaches far past full scale"):
            speak(
                text_ids=tf.constant(voice.text_ids(text, "en"), tf.int32),
                language_id=tf.constant(0),
                reference_audio=tf.constant(voice.reference * 32768.0),
            )
        np.testing.assert_allclose(
            samples_of(wav) / 32767.0, samples_of(wav_bytes(expected, 22050)) / 32767.0, atol=1e-3
        )
    finally:
        process.terminate()
        process.wait(30)


def test_serve_step_loads_and_names_the_step_asked_for(runner, tmp_path) -> None:
    # `--step 3` had said "the model and its latest checkpoint" as it loaded step 3 (here its data is
    # cut short, so the load fails once it has named the step, rather than serving on).
    import shutil

    from xtts_cli.cli.app import app
    from xtts_cli.errors import XttsError

    run = shutil.copytree(RUN, tmp_path / "run")
    (run / "checkpoints" / "ckpt-3.data-00000-of-00001").write_bytes(b"")
    result = runner.invoke(app, ["serve", "-r", str(run), "--step", "3", "--port", "0"])
    assert "(TensorFlow, the model and step 3 checkpoint)" in result.output, result.output
    assert isinstance(result.exception, XttsError), result.output
    # A step the run does not keep is refused before the port opens: it had said "listening", then failed.
    missing = runner.invoke(app, ["serve", "-r", str(RUN), "--step", "99", "--port", "0"])
    assert missing.exception.lines == [f"{RUN}/checkpoints keeps no checkpoint of step 99"]
    assert "listening" not in missing.output, missing.output
    # export likewise: it had said "exporting ... (tracing the generator ...)" first.
    out = tmp_path / "exported"
    missing = runner.invoke(app, ["export", "-r", str(RUN), "--step", "99", "-o", str(out)])
    assert missing.exception.lines == [f"{RUN}/checkpoints keeps no checkpoint of step 99"]
    assert "exporting" not in missing.output and not out.exists(), missing.output


@pytest.mark.parametrize("size", ["nan", "inf"])
def test_an_upload_limit_that_is_no_size_is_refused_as_the_flag_is_read(runner, size: str) -> None:
    from xtts_cli.cli.app import app

    result = runner.invoke(app, ["serve", "-r", str(RUN), "--max-upload-mb", size])
    assert result.exit_code == 2 and result.exception is not None and not isinstance(result.exception, ValueError)
    assert f"{size} is no size in MiB" in " ".join(result.output.split())


@pytest.mark.parametrize(
    "host, said",
    [
        ("", "is empty: give 127.0.0.1 (this machine) or 0.0.0.0 (every interface)"),  # --host "$HOST", HOST unset
        ("http://127.0.0.1", "'http://127.0.0.1' is a URL: give its host alone, e.g. --host 127.0.0.1"),
        ("127.0.0.1:8080", "'127.0.0.1:8080' holds a port: give --host 127.0.0.1 --port 8080"),
    ],
)
def test_a_host_that_is_empty_a_url_or_holds_a_port_is_refused_as_the_flag_is_read(runner, host, said) -> None:
    from xtts_cli.cli.app import app

    # An empty one had listened on every interface, reachable from other machines.
    result = runner.invoke(app, ["serve", "-r", str(RUN), "--host", host, "--port", "0"])
    assert result.exit_code == 2 and "listening" not in result.output, result.output
    assert said in " ".join(result.output.replace("│", " ").split()), result.output


def test_a_longer_text_limit_makes_room_for_its_body() -> None:
    from xtts_cli.serving.http import FORM_BYTES, form_bytes

    # --max-text-chars 100000 of Persian, percent-encoded in a form: 6 bytes a letter, and the body takes them.
    assert form_bytes(2000) == FORM_BYTES and form_bytes(100_000) >= 6 * 100_000


def test_a_sigterm_that_lands_while_a_connection_is_handled_stops_the_server():
    import socketserver

    from xtts_cli.cli.serve import _Stopped

    # The handler raises the stop wherever the signal lands; here, in the middle of a connection's handling.
    class Server(socketserver.TCPServer):
        def process_request(self, request, client_address):
            self.shutdown_request(request)
            raise _Stopped(143)

    with Server(("127.0.0.1", 0), socketserver.BaseRequestHandler) as server:
        with socket.create_connection(server.server_address):
            with pytest.raises(_Stopped):
                server.handle_request()


def test_an_upload_that_expects_100_continue_while_the_run_loads_gets_the_loading_503() -> None:
    # curl sends Expect: 100-continue before an upload over 1 MB: while loading, the body's limits (the
    # service's) were unknown and the connection had closed with no answer, not the 503 to retry on.
    from xtts_cli.serving.http import make_server

    server = make_server(None, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(server.server_address[:2], timeout=10) as connection:
            connection.sendall(
                b"POST /api/tts HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                b"Content-Length: 2000000\r\nExpect: 100-continue\r\n\r\n"
            )
            answer = b"".join(iter(lambda: connection.recv(65536), b""))  # the server closes the connection
    finally:
        server.shutdown()
        server.server_close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503") and b"Retry-After: 2" in head, answer[:300]
    assert json.loads(body)["error"] == "the server is loading its run"


def test_a_body_shorter_than_its_content_length_is_answered_408(served, monkeypatch) -> None:
    # The client waited out the read limit and got the connection closed, no answer (a 499 in the log).
    from xtts_cli.serving import http
    from xtts_cli.serving.service import VoiceService

    monkeypatch.setattr(http._Handler, "timeout", 0.5)
    server = http.make_server(VoiceService(served[0]), "127.0.0.1", 0, log=False)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(server.server_address, timeout=10) as short:
            short.sendall(
                b"POST /api/tts HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                b"Content-Length: 100\r\n\r\ntext=hi"
            )
            answer = b"".join(iter(lambda: short.recv(65536), b""))
    finally:
        server.shutdown()
        server.server_close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:200]
    assert json.loads(body) == {
        "error": "the request's body stopped before its end (no byte for 0.5 s)",
        "hint": "send as many bytes as its Content-Length says",
    }
