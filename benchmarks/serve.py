#!/usr/bin/env python3
"""`xtts serve` under load, against the same run in-process, side by side in one run.

- **In process:** `Synthesizer.speak` of the held-out sentences of 9-11 words, after a warm-up:
  the median seconds a sentence takes with no HTTP at all.
- **One client:** the same sentences through `GET /api/tts`, one at a time: what HTTP adds.
- **Eight clients for a minute** (`--clients`, `--seconds`), each sending the next sentence as soon
  as its last came back: failed requests, p50 and p90 latency, requests per minute, and the
  server's resident memory (first 20 s against the last 20 s).
- **Streaming:** a paragraph of four held-out sentences with `stream=1`: the seconds until its
  first audio arrives, against its first sentence alone, whole.
- **Hostile requests:** 30 of them (empty, 1 MB of text, unknown speaker and language, non-audio
  and 200 MB uploads, paths in parameters, malformed bodies, clients that stop mid-request): each
  must be a 4xx or a clean close, the server's log must hold no traceback, and `/health` must
  answer after.
- **A paragraph against its sentences** (`--wer`): four paragraphs of four held-out sentences each, spoken
  whole (`/api/tts`) and one sentence at a time. Both are scored for WER by pocketsphinx, with any
  sequence of the sentences' words; the paragraph is cut at its pauses first (`pause_cuts`), as
  a recognizer's front end cuts long audio.

Writes `docs/serve.md` unless `--no-doc`.

Usage:
    python benchmarks/serve.py --run-dir RUN --data DIR [--clients 8] [--seconds 60] [--wer] [--no-doc]

RUN is a run trained on DIR, a `benchmarks/voices_data.py` dataset (its `heldout.txt` and
`sentences.jsgf`); e.g. the base `benchmarks/adapt.py` trains
(`--run-dir /tmp/xtts-adapt/runs/base --data /tmp/xtts-adapt/data/voices`). Needs the evaluation
extra (`pip install -e ".[eval]"`).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import speech_quality  # noqa: E402
from results_page import cpu_name, needs  # noqa: E402

DOC = ROOT / "docs" / "serve.md"


class Server:
    """`xtts serve` in a process of its own, on a free port."""

    def __init__(self, run: Path, log: Path, generations: int) -> None:
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        command = [sys.executable, "-m", "xtts_cli", "serve", "-r", str(run), "--port", "0", "--quiet"]
        command += ["--generations", str(generations)]
        self.log = log
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=log.open("w"), text=True, env=env, cwd=ROOT
        )
        assert self.process.stdout is not None
        try:  # stopped if it never serves, or the measuring is stopped while it builds its graphs
            for line in self.process.stdout:
                if line.startswith("serving "):
                    address = urllib.parse.urlsplit(line.split(" at ")[1].strip())
                    self.host, self.port = address.hostname or "127.0.0.1", int(address.port or 0)
                    self.wait_for_graphs()
                    return
            raise SystemExit(f"xtts serve did not start; see {log}")
        except BaseException:
            self.stop()
            raise

    def wait_for_graphs(self, timeout: float = 600) -> None:
        """Until the server has built its generation graphs: building them takes the CPU a measurement would."""
        deadline = time.monotonic() + timeout
        while json.loads(self.request("GET", "/health")[1])["graphs"] == "building":
            if time.monotonic() > deadline:
                raise SystemExit(f"xtts serve was still building its generation graphs after {timeout:.0f} s")
            time.sleep(0.5)

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        """(status, body) of one request on a connection of its own."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=600)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def tts(self, **fields: str) -> tuple[int, bytes]:
        return self.request("GET", "/api/tts?" + urllib.parse.urlencode(fields))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def median_seconds(action, items: list, repeat: int = 1) -> float:
    times = []
    for _ in range(repeat):
        for item in items:
            began = time.perf_counter()
            action(item)
            times.append(time.perf_counter() - began)
    return statistics.median(times)


def load(server: Server, sentences: list[str], clients: int, seconds: float) -> dict:
    """`clients` threads, each sending the next sentence as soon as its last came back."""
    results: list[tuple[float, float, bool]] = []  # (start, latency, ok)
    memory: list[tuple[float, float]] = []
    began = time.perf_counter()
    stop = began + seconds
    lock = threading.Lock()

    def client(index: int) -> None:
        turn = index
        while time.perf_counter() < stop:
            text = sentences[turn % len(sentences)]
            turn += clients
            start = time.perf_counter()
            try:
                status, body = server.tts(text=text)
                ok = status == 200 and body[:4] == b"RIFF"
            except OSError:
                ok = False
            with lock:
                results.append((start - began, time.perf_counter() - start, ok))

    def sample_memory() -> None:
        while time.perf_counter() < stop:
            memory.append((time.perf_counter() - began, server.rss_mib()))
            time.sleep(0.5)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    threads.append(threading.Thread(target=sample_memory))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    latencies = sorted(latency for _, latency, ok in results if ok)
    window = min(20.0, seconds / 3)
    first = [mib for at, mib in memory if at <= window]
    last = [mib for at, mib in memory if at >= seconds - window]
    return {
        "requests": len(results),
        "failed": sum(1 for *_, ok in results if not ok),
        "p50": statistics.median(latencies) if latencies else float("nan"),
        "p90": latencies[int(0.9 * (len(latencies) - 1))] if latencies else float("nan"),
        "per_minute": len(results) / (time.perf_counter() - began) * 60,
        "memory_first": statistics.mean(first),
        "memory_last": statistics.mean(last),
        "window": window,
    }


def first_audio_seconds(server: Server, text: str) -> float:
    """Seconds from sending a streamed request to holding its first audio (past the WAV header)."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=600)
    try:
        began = time.perf_counter()
        connection.request("GET", "/api/tts?" + urllib.parse.urlencode({"text": text, "stream": "1"}))
        response = connection.getresponse()
        assert response.status == 200, response.read()
        response.read(44 + 2)  # the header and one sample: the first part has been made
        seconds = time.perf_counter() - began
        response.read()
        return seconds
    finally:
        connection.close()


def multipart(fields: dict[str, str], upload: bytes | None) -> tuple[bytes, dict]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode() for k, v in fields.items()
    ]
    if upload is not None:
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="speaker_wav"; filename="a.wav"\r\n\r\n'.encode()
            + upload
            + b"\r\n"
        )
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), {
        "Content-Type": f"multipart/form-data; boundary={boundary}"
    }


def raw(server: Server, payload: bytes, *, wait: bool = True) -> str:
    """`payload` on a socket of its own: the status code the server answered, or "closed"."""
    with socket.create_connection((server.host, server.port), timeout=30) as connection:
        try:
            connection.sendall(payload)
            if not wait:
                return "closed"  # this client gives up mid-request
            answer = connection.recv(64)
        except (ConnectionResetError, BrokenPipeError):
            return "closed"
    return answer.split(b" ")[1].decode() if answer.startswith(b"HTTP/") else "closed"


def hostile(server: Server, clip: bytes) -> list[tuple[str, str]]:
    """35 requests no client should send: (what, the status answered or "closed")."""
    out: list[tuple[str, str]] = []

    def get(name: str, **fields: str) -> None:
        out.append((name, str(server.tts(**fields)[0])))

    def post(name: str, body: bytes, headers: dict) -> None:
        try:
            out.append((name, str(server.request("POST", "/api/tts", body, headers)[0])))
        except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
            out.append((name, "closed"))

    get("empty text", text="")
    get("blank text", text="   ")
    get("no text at all")
    get("100 kB of text", text="a" * 100_000)
    post(
        "1 MB of text (form)",
        urllib.parse.urlencode({"text": "b" * 1_000_000}).encode(),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    post("1 MB of text (JSON)", json.dumps({"text": "c" * 1_000_000}).encode(), {"Content-Type": "application/json"})
    get("unknown speaker", text="hello", speaker_id="nobody")
    get("unknown language", text="hello", language_id="xx")
    get("speed 0", text="hello", speed="0")
    get("speed not a number", text="hello", speed="fast")
    get("another script", text="Привет мир")
    get("a path as style_wav", text="hello", style_wav="/etc/passwd")
    get("a path as speaker_wav", text="hello", speaker_wav="../../config.yaml")
    out.append(("a path as a sample", str(server.request("GET", "/samples/..%2F..%2Fconfig.yaml")[0])))
    out.append(("a path as a page", str(server.request("GET", "/../../etc/passwd")[0])))
    post("a non-audio upload", *multipart({"text": "hello"}, b"MZ\x90\x00this is not audio" * 100))
    post("a broken WAV upload", *multipart({"text": "hello"}, b"RIFF\x24\x00\x00\x00WAVEjunk" * 10))
    post("an empty upload", *multipart({"text": "hello"}, b""))
    post("an upload and a speaker", *multipart({"text": "hello", "speaker_id": "x"}, clip))
    head = b"POST /api/tts HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
    out.append(("a 200 MB upload", raw(server, head + b"Content-Length: 209715200\r\n\r\n" + bytes(1 << 20))))
    post("malformed JSON", b"{text: ", {"Content-Type": "application/json"})
    post("JSON that is a list", b"[1, 2, 3]", {"Content-Type": "application/json"})
    post("JSON nested 5,000 deep", b"[" * 5000 + b"]" * 5000, {"Content-Type": "application/json"})
    post("JSON true as the text", b'{"text": true}', {"Content-Type": "application/json"})
    post("a number as the text", b'{"text": 5}', {"Content-Type": "application/json"})
    post("a multipart body without its boundary", b"--x\r\nnothing\r\n", {"Content-Type": "multipart/form-data"})
    post("an unknown body type", b"\x00\x01\x02", {"Content-Type": "application/octet-stream"})
    post("a form that is not UTF-8", b"text=\xff\xfe", {"Content-Type": "application/x-www-form-urlencoded"})
    out.append(
        (
            "a Content-Length that is not a number",
            raw(server, b"POST /api/tts HTTP/1.1\r\nContent-Length: lots\r\n\r\n"),
        )
    )
    out.append(
        (
            "two different Content-Lengths",
            raw(server, b"POST /api/tts HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 9\r\n\r\n{}"),
        )
    )
    out.append(("a POST with no Content-Length", raw(server, b"POST /api/tts HTTP/1.1\r\nHost: x\r\n\r\n")))
    out.append(("a malformed request line", raw(server, b"NONSENSE\r\n\r\n")))
    body = b"POST /api/tts HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
    out.append(("a client that stops mid-body", raw(server, body, wait=False)))
    out.append(("a client that stops mid-request-line", raw(server, b"GET /api/t", wait=False)))
    out.append(("a page that does not exist", str(server.request("GET", "/admin")[0])))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--generations", type=int, default=2, help="xtts serve --generations")
    # Off by default: pocketsphinx took over five minutes on the first 15-second paragraph here.
    parser.add_argument("--wer", action="store_true", help="also the paragraph-against-sentences WER (slow)")
    parser.add_argument("--no-doc", action="store_true")
    args = parser.parse_args(argv)
    needs("eval", "pocketsphinx", "jiwer")

    from xtts_cli.errors import XttsError
    from xtts_cli.kinds import speaking_run

    # Both checked before TensorFlow loads (seconds): a wrong path is said at once.
    if not (args.data / "heldout.txt").is_file():
        raise XttsError(
            f"--data {args.data} holds no heldout.txt: it is the dataset benchmarks/speech_data.py writes",
            hint="python benchmarks/speech_data.py --out DIR first, then --data DIR",
        )
    speaking_run(args.run_dir)

    from xtts_cli.evaluation.recognizer import Recognizer, grammar_words, word_error_rate
    from xtts_cli.inference import Synthesizer

    heldout = (args.data / "heldout.txt").read_text(encoding="utf-8").splitlines()
    short = [s for s in heldout if 9 <= len(s.split()) <= 11]
    tts = Synthesizer.load(args.run_dir)
    tts.speak(short[0])  # the generation graph
    began, cpu_began = time.perf_counter(), time.process_time()
    in_process = median_seconds(tts.speak, short, repeat=2)
    cores_busy = (time.process_time() - cpu_began) / (time.perf_counter() - began)
    print(f"in process: {in_process:.3f} s a sentence (median of {2 * len(short)})", flush=True)
    # What of it is the vocoder: the same sentences' mels turned into audio, nothing else.
    mels = [tts.speak(text).mel for text in short]
    vocoding = median_seconds(tts.vocoder, mels, repeat=2)
    vocoder_name = tts.vocoder.name
    clip_path = next(iter(sorted((args.data / "clone").rglob("*.wav"))))
    del tts

    scratch = Path(tempfile.mkdtemp(prefix="xtts-serve-bench-"))
    server = Server(args.run_dir, scratch / "server.log", args.generations)
    try:  # the server stopped however the measuring ends (it had been left running under init)
        server.tts(text=short[0])
        one_client = median_seconds(lambda text: server.tts(text=text), short, repeat=2)
        print(f"one client: {one_client:.3f} s", flush=True)
        loaded = load(server, short, args.clients, args.seconds)
        print(f"{args.clients} clients: {loaded}", flush=True)
        paragraph = " ".join(heldout[:4])
        streamed = statistics.median(first_audio_seconds(server, paragraph) for _ in range(3))
        first_alone = statistics.median(
            median_seconds(lambda text: server.tts(text=text), [heldout[0]]) for _ in range(3)
        )
        print(f"streaming: first audio {streamed:.3f} s, first sentence alone {first_alone:.3f} s", flush=True)
        answers = hostile(server, clip_path.read_bytes())
        health = server.request("GET", "/health")[0]
        # Any sequence of the grammar's words, for the paragraph and its sentences alike; the
        # paragraph is heard stretch by stretch between its pauses (searched whole, it took
        # pocketsphinx minutes), with no knowledge of where its sentences were joined.
        grammar = (args.data / "sentences.jsgf").read_text(encoding="ascii")
        recognizer = Recognizer.word_loop(grammar_words(grammar))
        paragraphs = [heldout[i : i + 4] for i in range(0, 16, 4)] if args.wer else []
        whole, apart = [], []
        for group in paragraphs:
            path = scratch / "paragraph.wav"
            path.write_bytes(server.tts(text=" ".join(group))[1])
            whole.append(recognizer.transcribe_long(*speech_quality.read_wav(path)))
            heard = []
            for sentence in group:
                path.write_bytes(server.tts(text=sentence)[1])
                heard.append(recognizer.transcribe(*speech_quality.read_wav(path)))
            apart.append(" ".join(heard))
        references = [" ".join(group) for group in paragraphs]
        wer_whole = word_error_rate(references, whole) if references else float("nan")
        wer_apart = word_error_rate(references, apart) if references else float("nan")
    finally:
        server.stop()
    tracebacks = server.log.read_text(encoding="utf-8", errors="replace").count("Traceback")
    shutil.rmtree(scratch, ignore_errors=True)  # its log read: kept only where the measuring failed
    clean = [(name, status) for name, status in answers if status == "closed" or status.startswith("4")]

    cpu = f"CPU: {cpu_name()}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}; run {args.run_dir}"
    rows = [
        "| measured | figure | bar |",
        "|---|---|---|",
        f"| a 9-11 word sentence in process (`Synthesizer.speak`), median | {in_process:.3f} s | - |",
        f"| cores one sentence keeps busy (CPU time over wall time) | {cores_busy:.2f} of {os.cpu_count()} | - |",
        f"| of which the vocoder ({vocoder_name}), median | {vocoding:.3f} s ({vocoding / in_process:.0%}) | - |",
        f"| the same through the server, one client, median | {one_client:.3f} s ({one_client / in_process:.2f}x) | at most 1.3x |",
        f"| {args.clients} clients for {args.seconds:g} s: requests, failed | {loaded['requests']}, {loaded['failed']} | 0 failed |",
        f"| {args.clients} clients: p50, p90 latency | {loaded['p50']:.2f} s ({loaded['p50'] / in_process:.1f}x), {loaded['p90']:.2f} s "
        f"(a queue of {args.clients} spoken one at a time: {args.clients * in_process:.2f} s) | p50 at most 1.3x |",
        f"| {args.clients} clients: sentences a minute | {loaded['per_minute']:.0f} (one at a time: {60 / in_process:.0f}) | - |",
        # Every client waiting at most 1.3 sentences' time means the server finishing all of them in that time.
        f"| what the p50 bar asks of the server: {args.clients} sentences every {1.3 * in_process:.3f} s | "
        f"{args.clients * 60 / (1.3 * in_process):.0f} sentences a minute, {args.clients * 60 / (1.3 * in_process) / loaded['per_minute']:.1f}x what it makes | - |",
        f"| server memory, first {loaded['window']:.0f} s / last {loaded['window']:.0f} s | {loaded['memory_first']:.0f} / {loaded['memory_last']:.0f} MiB ({(loaded['memory_last'] / loaded['memory_first'] - 1) * 100:+.1f} %) | within 5 % |",
        f"| 4-sentence paragraph, `stream=1`: first audio | {streamed:.3f} s ({streamed / first_alone:.2f}x its first sentence alone, {first_alone:.3f} s) | at most 1.5x |",
        f"| {len(answers)} hostile requests: a 4xx or a clean close | {len(clean)} of {len(answers)}; tracebacks in the log: {tracebacks}; /health after: {health} | all; 0; 200 |",
    ]
    if args.wer:
        rows.append(
            f"| WER of 4 paragraphs of 4 sentences, whole / one sentence at a time | {wer_whole:.3f} / {wer_apart:.3f} "
            f"(difference {wer_whole - wer_apart:+.3f}) | within 0.05 |"
        )
    hostile_rows = ["| request | answer |", "|---|---|", *(f"| {name} | {status} |" for name, status in answers)]
    print("\n".join([cpu, "", *rows, "", *hostile_rows]))
    if not args.no_doc:
        command = " ".join(["python benchmarks/serve.py", *(argv if argv is not None else sys.argv[1:])])
        DOC.write_text(
            "\n".join(
                [
                    "# `xtts serve` under load: measured",
                    "",
                    f"Written by `{command}` (what it measures and how: the script's docstring); every figure "
                    f"is from that one run, on the machine named. The server speaks {args.generations} "
                    f"request(s) at once (`xtts serve --generations`); with {args.clients} clients a request "
                    "mostly waits for the others, so the loaded latency is the queue, and the one-client row is "
                    "what HTTP adds. Each sentence costs the CPU time it costs; most of it is the vocoder. The "
                    "p50 bar asks for the sentences a minute in the row below it.",
                    "",
                    cpu,
                    "",
                    *rows,
                    "",
                    "## The hostile requests",
                    "",
                    *hostile_rows,
                    "",
                ]
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    from results_page import guarded

    raise SystemExit(guarded(main))
