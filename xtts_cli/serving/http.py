"""`xtts serve`'s HTTP: Python's own threading server, one thread a connection.

Why the standard library and not an ASGI stack: a request's time is the generation (TensorFlow, off
the interpreter lock); the server's part is parsing a form and writing bytes, which threads do as
well as an event loop, and nothing more is installed. Every request is answered: audio, JSON, or a
4xx/5xx with a one-line JSON `{"error": ...}`; a handler's failure is one line on stderr, never a
traceback, and the server keeps serving.
"""

from __future__ import annotations

import errno
import html
import io
import json
import math
import re
import select
import socket
import sys
import threading
import time
from email.parser import BytesParser
from email.policy import HTTP
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Optional
from urllib.parse import parse_qsl, unquote, urlsplit

from xtts_cli.errors import XttsError
from xtts_cli.serving.service import AUDIO_MAGIC, Refused, VoiceService, in_api_words

__all__ = ["VoiceServer", "log_line", "make_server"]

# A client that sends nothing for this long is dropped (a request cut off mid-body).
READ_TIMEOUT_SECONDS = 30.0
# A request's line and headers arrive within this, and its body within this and a second for each
# BODY_BYTES_PER_SECOND of it: with the limit on each read alone, a client sending a byte every few
# seconds held its connection, and its thread, for ever (slowloris).
REQUEST_HEAD_SECONDS = 30.0
BODY_BYTES_PER_SECOND = 16 * 1024
# Connections served at once, a thread each: past them a new one is answered 503 and closed (2,000
# idle sockets had made 1,600 threads).
MAX_CONNECTIONS = 256
# Of them, from one address other than this machine's: one host on the network holding every place
# (idle sockets, reopened as the deadline closes them) had locked every other client out, /health too.
# This machine's own (a reverse proxy in front) may take them all.
CONNECTIONS_PER_CLIENT = 64
# Seconds a client is asked to wait (Retry-After, the loading page's reload) while the run loads.
LOADING_RETRY_SECONDS = 2
# Form fields other than the upload are short; a body past this without an upload is refused.
FORM_BYTES = 64 * 1024
# Bytes one character of text may take in a body: 4 in UTF-8, each percent-encoded in a form (%F0).
BYTES_PER_CHARACTER = 12


def form_bytes(text_chars: int) -> int:
    """The largest body of fields a request may send: room for the longest text --max-text-chars takes."""
    return max(FORM_BYTES, BYTES_PER_CHARACTER * text_chars + 4096)


def _mib(size: int, *, unit: bool = True, than: Optional[int] = None) -> str:
    """`size` bytes in MiB as --max-upload-mb counts them: 10485760 is "10 MiB", 12348542 "11.78 MiB";
    and its bytes beside, where it reads as the limit `than` it is more than."""
    mib = size / 2**20
    said = f"{mib:.2f}".rstrip("0").rstrip(".") if mib >= 1 else f"{mib:.2g}"
    if not unit:
        return said
    if than is not None and said == _mib(than, unit=False):
        return f"{said} MiB ({size} bytes, {size - than} over)"
    return f"{said} MiB"


def page() -> bytes:
    return resources.files("xtts_cli.serving").joinpath("page.html").read_bytes()


# The request headers coqui's tts-server reads its parameters from (a client may send the text as a
# `text:` header), each with the field it stands for.
COQUI_HEADERS = (
    ("text", "text"),
    ("speaker-id", "speaker_id"),
    ("language-id", "language_id"),
    ("style-wav", "style_wav"),
    ("speaker-wav", "speaker_wav"),
)


def _loading_page(run: str) -> bytes:
    """A page that reloads itself until the run is loaded, then is the page."""
    return (
        f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="{LOADING_RETRY_SECONDS}">'
        '<link rel="icon" href="data:,">'  # as the page's: each reload had asked for /favicon.ico, a 503 then
        f"<title>xtts: loading</title><p>Loading {html.escape(run)}; this page opens when the voice is ready.</p>"
    ).encode()


def log_line(line: str) -> None:
    """One line on stderr in one write: print's text and newline are two, and a line another thread
    wrote between them ran on into this one. A control character a client sent (in its path, its
    request line) is written escaped: raw, an escape sequence cleared or recoloured the terminal."""
    line = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in line)
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except OSError:  # the terminal is gone (SIGHUP's): the server stops, or serves on, all the same
        pass


def _header_text(value: str) -> str:
    """A header's value as the client wrote it: HTTP carries bytes, read here as Latin-1, and clients send UTF-8."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value


class _DeadlineReader(io.RawIOBase):
    """A connection's reads, each given at most what is left of its request's `deadline`."""

    def __init__(self, connection: socket.socket, timeout: float) -> None:
        self.connection = connection
        self.timeout = timeout  # each read's, as the handler's
        self.deadline = math.inf

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request took longer than its deadline")
        self.connection.settimeout(min(self.timeout, left))
        try:
            return self.connection.recv_into(buffer)
        finally:
            self.connection.settimeout(self.timeout)  # the answer's writes keep the whole limit


_TOO_MANY = json.dumps({"error": "the server has too many connections open; try again shortly"}).encode()
_TOO_MANY_HERE = json.dumps(
    {"error": f"this address has {CONNECTIONS_PER_CLIENT} connections open to the server; close some, then try again"}
).encode()


class VoiceServer(ThreadingHTTPServer):
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], service: Optional[VoiceService], *, log: bool = True) -> None:
        self.service: VoiceService = service  # type: ignore[assignment]  # None while the run loads
        self.loading = ""  # the run being loaded, said by /health and the page until `service` is set
        self.log = log
        self.connections = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.per_client: dict[str, int] = {}  # open connections by address (not this machine's)
        self.per_client_lock = threading.Lock()
        if ":" in address[0]:  # an IPv6 address: ::1 (this machine), :: (every interface)
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    def server_close(self) -> None:
        super().server_close()
        if self.service is not None:
            self.service.close()

    def process_request(self, request, client_address) -> None:
        if not self._client_admitted(client_address[0]):
            self._refuse(request, client_address, _TOO_MANY_HERE, f"{CONNECTIONS_PER_CLIENT} from this address")
            return
        if not self.connections.acquire(blocking=False):
            self._client_left(client_address[0])
            self._refuse(request, client_address, _TOO_MANY, f"more than {MAX_CONNECTIONS} connections open")
            return
        # A daemon: a client that never finishes does not hold the process at exit.
        thread = threading.Thread(target=self.process_request_thread, args=(request, client_address), daemon=True)
        try:
            thread.start()
        except RuntimeError:  # no thread to answer it ("can't start new thread"): its place is given back
            self.connections.release()
            self._client_left(client_address[0])
            raise
        # A Ctrl-C or SIGTERM raised inside start() leaves the place to the thread that holds it: given
        # back here as well, a ValueError (released too many times) took the stop's place and it served on.

    def _refuse(self, request, client_address, body: bytes, why: str) -> None:
        try:
            request.sendall(
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
        except OSError:
            pass
        if self.log:
            log_line(f"{client_address[0]} - - 503 ({why})")
        self.shutdown_request(request)

    def _client_admitted(self, address: str) -> bool:
        """Count a connection from `address`; False (not counted) past CONNECTIONS_PER_CLIENT."""
        if _loopback(address):
            return True
        with self.per_client_lock:
            if self.per_client.get(address, 0) >= CONNECTIONS_PER_CLIENT:
                return False
            self.per_client[address] = self.per_client.get(address, 0) + 1
            return True

    def _client_left(self, address: str) -> None:
        if _loopback(address):
            return
        with self.per_client_lock:
            left = self.per_client.get(address, 1) - 1
            if left:
                self.per_client[address] = left
            else:
                self.per_client.pop(address, None)

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release()
            self._client_left(client_address[0])

    def handle_error(self, request, client_address) -> None:
        """One line, not the standard library's traceback; none for a client that went away (its
        connection reset between requests is its own leaving, as a 499 is)."""
        kind, value, _ = sys.exc_info()
        if isinstance(value, (ConnectionError, TimeoutError)):
            return
        log_line(f"xtts serve: {client_address[0]}: {kind.__name__ if kind else 'error'}: {value}")


def _loopback(address: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(address.removeprefix("::ffff:")).is_loopback
    except ValueError:
        return False


def make_server(
    service: Optional[VoiceService], host: str = "127.0.0.1", port: int = 5002, *, log: bool = True
) -> VoiceServer:
    """A server listening on `host`:`port`; `service` None: bound before the run is loaded (so a
    port in use is said in a second, not after the model's load), the service set before serving."""
    try:
        return VoiceServer((host, port), service, log=log)
    except OSError as exc:
        hints = {
            errno.EADDRINUSE: "pick another --port (0 picks a free one), or stop what holds this one",
            errno.EACCES: "a port below 1024 needs root; pick --port 1024 or above",
            errno.EADDRNOTAVAIL: "--host must be an address of this machine: 127.0.0.1 (this machine only) or "
            "0.0.0.0 (every interface)",
        }
        hint = hints.get(exc.errno or 0)
        if isinstance(exc, socket.gaierror):
            hint = "--host is not a name or address this machine resolves; e.g. --host 127.0.0.1"
        raise XttsError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            hint=hint or "pick another --host or --port (0 picks a free port)",
        ) from None


class _Handler(BaseHTTPRequestHandler):
    server: VoiceServer
    protocol_version = "HTTP/1.1"  # keep-alive, and chunked streaming
    timeout = READ_TIMEOUT_SECONDS
    server_version = "xtts-serve"
    default_request_version = "HTTP/1.0"  # a malformed request line still gets a status line

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the socket's own file: left open, it would hold the socket past its close
        self.reader = _DeadlineReader(self.connection, self.timeout or READ_TIMEOUT_SECONDS)
        self.rfile = io.BufferedReader(self.reader)

    def handle_one_request(self) -> None:
        self.reader.deadline = time.monotonic() + REQUEST_HEAD_SECONDS
        super().handle_one_request()

    def parse_request(self) -> bool:
        # A request line the client ended before its line break is half a request: closed
        # unanswered, not answered as the request its first half names.
        if not getattr(self, "raw_requestline", b"").endswith(b"\n"):
            self.close_connection = True
            return False
        return super().parse_request()

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """`_answer` writes one line per request itself."""

    # Routing.
    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def do_HEAD(self) -> None:
        self._answer("HEAD")

    def _answer(self, method: str) -> None:
        began = time.perf_counter()
        self.body_read = self.reading_body = False
        url = urlsplit(_utf8(self.path))
        service = self.server.service
        status = 200
        self.admitted: Optional[VoiceService] = None  # a place taken in the queue, given back once logged
        try:
            if service is None:
                status = self._loading(url.path, method)
            elif url.path in ("/", "/index.html"):
                self._send(200, page(), "text/html; charset=utf-8", method=method)
            elif url.path == "/health":
                self._json(service.health(), method=method)
            elif url.path == "/api/speakers":
                self._json(service.speakers(), method=method)
            elif url.path == "/api/languages":
                self._json(service.languages(), method=method)
            elif url.path == "/api/samples":
                self._json(service.sample_list(), method=method)
            elif url.path.startswith("/samples/"):
                name = unquote(url.path.removeprefix("/samples/"))  # the page asks for a Persian voice's escaped
                samples = service.samples
                if name not in samples:  # by name from the run's own list, never a path
                    raise Refused(404, f"no training sample {name[:80]!r}; /api/samples lists them")
                try:
                    sample = samples[name].read_bytes()
                except FileNotFoundError:  # removed since the server started (the run moved aside)
                    raise Refused(
                        404, f"the training sample {name[:80]!r} is no longer in the run's samples/"
                    ) from None
                self._send_ranged(sample, "audio/wav", method=method)
            elif url.path == "/api/tts":
                if method == "HEAD":
                    raise Refused(405, "HEAD /api/tts: use GET or POST")
                status = self._tts(method, url.query)
            else:
                raise Refused(404, f"no such page {url.path[:80]!r}; try /, /api/tts, /api/speakers, /health")
        except Refused as refused:
            status = refused.status
            if refused.log:
                log_line(refused.log)
            # A busy server says when to try again (RFC 9110, 10.2.3): a client's retry loop backs off.
            retry = {"Retry-After": str(refused.retry_after)} if refused.retry_after else None
            self._error(refused.status, refused.message, refused.hint, headers=retry)
        except XttsError as exc:
            status = 400
            hint = exc.hint and in_api_words(exc.hint)
            self._error(400, in_api_words(exc.lines[0] if exc.lines else str(exc)), hint)
        except (TimeoutError, ConnectionError) as gone:
            status = 499  # the client went away; nothing to answer
            self.close_connection = True
            if isinstance(gone, TimeoutError) and self.reading_body:
                # A body that stopped short of its Content-Length, the client still there: told why, not a
                # silent close.
                status = 408
                self._error(
                    408,
                    f"the request's body stopped before its end (no byte for {self.timeout:g} s)",
                    "send as many bytes as its Content-Length says",
                )
        except Exception as exc:  # the server keeps serving whatever one request did
            status = 500
            log_line(f"xtts serve: {url.path}: {type(exc).__name__}: {exc}")
            self._error(500, f"internal error ({type(exc).__name__}); the server's log has the line")
        try:
            self._log_answer(status, time.perf_counter() - began)
        finally:
            # After its line: a server stopping waits for the requests in flight, and had exited
            # before the last one's line was written.
            if self.admitted is not None:
                self.admitted.release()

    def _loading(self, path: str, method: str) -> int:
        """Answers while the run loads (TensorFlow, the model, its graphs: seconds to a minute): a health
        check or a browser opened at once had waited on a connection that said nothing."""
        retry = {"Retry-After": str(LOADING_RETRY_SECONDS)}
        if path == "/health":  # a 503 is "not ready" to a load balancer, a container's health check and curl -f
            self._json({"status": "loading", "run": self.server.loading}, status=503, method=method, headers=retry)
        elif path in ("/", "/index.html"):
            self._send(
                503, _loading_page(self.server.loading), "text/html; charset=utf-8", method=method, headers=retry
            )
        else:
            raise Refused(
                503, "the server is loading its run", "try again in a few seconds", retry_after=LOADING_RETRY_SECONDS
            )
        return 503

    def _log_answer(self, status: int, took: float = 0.0) -> None:
        """The request's one line in the log (`xtts serve`), whatever answered it."""
        if self.server.log:
            path = urlsplit(_utf8(self.path)).path if getattr(self, "path", None) else "-"
            log_line(f"{self.client_address[0]} {getattr(self, 'command', None) or '-'} {path} {status} {took:.2f}s")

    # /api/tts
    def _tts(self, method: str, query: str) -> int:
        service = self.server.service
        try:
            fields = _once(parse_qsl(query, keep_blank_values=True, errors="strict"))
        except UnicodeDecodeError:
            raise Refused(400, "the query is not UTF-8: percent-encode the text's UTF-8 bytes") from None
        reference: Optional[bytes] = None
        # Header names in any case (RFC 9110, 5.1): Node's fetch and HTTP/2 proxies send them in lower case.
        if method == "POST" and "Content-Length" not in self.headers and "Transfer-Encoding" not in self.headers:
            # HTTP/1.1 reads no body without a length: one sent anyway would be read as the next request.
            self.close_connection = True
            if "text" not in fields and not self.headers.get("text"):  # coqui's clients send it as a header
                raise Refused(
                    411, "the POST has no Content-Length, so its body is not read; send one, or text= in the query"
                )
        elif method == "POST":
            body_fields, reference = self._read_form()
            both = sorted(set(fields) & set(body_fields))
            if both:
                raise Refused(400, f"{both[0]} is given in both the query and the body; send it once")
            fields.update(body_fields)
        for header, name in COQUI_HEADERS:  # coqui's server also reads its parameters from these headers
            if self.headers.get(header) and fields.get(name):  # one of them spoken, the other passed over
                raise Refused(400, f"{name} is given both as a field and as the {header}: header; send it once")
            if self.headers.get(header):
                fields[name] = _header_text(self.headers[header])
        # A place first: checking a long text costs a second of CPU, past the limits it had been paid for
        # every request of a flood, each in its own connection's thread.
        if not service.admit():
            raise Refused(
                503, "the server is busy (every place in its queue is taken); try again shortly", retry_after=1
            )
        self.admitted = service  # released by `_answer` once the request's line is written
        request = service.check(fields, reference)
        if request.stream:
            return self._stream(service, request)
        audio, notes = service.speak(request, gone=self._client_gone)
        headers = {"X-Xtts-Notes": json.dumps(notes)} if notes else {}
        self._send(200, audio, "audio/wav", headers=headers)
        return 200

    def _stream(self, service: VoiceService, request) -> int:
        chunks = service.stream(request)
        # The header and the first part before the status line: a text the model cannot speak is
        # still a 400, not a broken stream.
        first = next(chunks) + next(chunks)
        self._leave_unread_body()
        # An HTTP/1.0 client reads no chunks (RFC 9112, 6.1): its stream ends where the connection closes.
        self.chunked = self.request_version != "HTTP/1.0"
        self.close_connection = self.close_connection or not self.chunked
        self.send_response(200)
        self.send_header("Content-Type", "audio/wav")
        if self.chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-store")
        if request.notes:  # the whole text's: checked before its first part (`VoiceService.stream`)
            self.send_header("X-Xtts-Notes", json.dumps(request.notes))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        try:
            self._chunk(first)
            for chunk in chunks:
                self._chunk(chunk)
            if self.chunked:
                self._chunk(b"")
        except (TimeoutError, ConnectionError):
            raise
        except Exception as exc:  # after the 200: no error response can follow, so the stream ends unfinished
            log_line(f"xtts serve: a stream stopped after its first part: {type(exc).__name__}: {exc}")
            self.close_connection = True
            return 500
        finally:
            chunks.close()
        return 200

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode("ascii") + data + b"\r\n" if self.chunked else data)
        self.wfile.flush()

    def _client_gone(self) -> bool:
        """Whether the client closed its connection (read as an end of file that is waiting, not a
        byte of a next request): a request it no longer waits for stops at its next sentence."""
        try:
            if not select.select([self.connection], [], [], 0)[0]:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def handle_expect_100(self) -> bool:
        """`Expect: 100-continue` (curl's, for a large upload): a body this server would refuse is
        refused before the client sends it, not after a 100 Continue."""
        if self.command == "POST" and urlsplit(self.path).path == "/api/tts":
            try:
                if self.server.service is None:  # its limits unknown yet: the 503 of every request while loading
                    self._loading("/api/tts", "POST")
                self._declared_length()
            except Refused as refused:
                self.close_connection = True
                retry = {"Retry-After": str(refused.retry_after)} if refused.retry_after else None
                self._error(refused.status, refused.message, refused.hint, headers=retry)
                self._log_answer(refused.status)
                return False
        return super().handle_expect_100()

    def _declared_length(self) -> Optional[int]:
        """The body's length as its one Content-Length says (None for a chunked body, whose length is
        counted as it is read), refused when it is not one number or is more than this server takes."""
        codings = self.headers.get_all("Transfer-Encoding")
        # Each header is a part of one list (RFC 9110, 5.3): chunked then identity in two had been read as chunked.
        coding = ", ".join(value.strip() for value in codings) if codings else None
        if coding is not None:
            # Its body, unread, would be read as the next request (RFC 9112, 6.1); a 400, not the RFC's
            # 501: every bad request this server answers is a client's 4xx.
            if coding.strip().lower() != "chunked":
                self.close_connection = True
                raise Refused(
                    400,
                    f"Transfer-Encoding {coding.strip()[:20]!r} is not read; send the body chunked or with a Content-Length",
                )
            if "Content-Length" in self.headers:  # which one frames the body is a proxy's guess (RFC 9112, 6.3)
                self.close_connection = True
                raise Refused(400, "the body is given both a Content-Length and Transfer-Encoding: chunked; send one")
            self._body_deadline(self._body_limit())
            return None
        lengths = {value.strip() for value in self.headers.get_all("Content-Length", [])}
        if len(lengths) > 1:  # which one the body has is a guess, and a proxy may guess the other way
            self.close_connection = True
            raise Refused(
                400, f"Content-Length is given {len(lengths)} ways ({', '.join(sorted(lengths))[:40]}); send one"
            )
        raw_length = self.headers.get("Content-Length")
        if raw_length is not None and not re.fullmatch(r"[0-9]+", raw_length.strip()):  # int() takes 1_0 and +8
            self.close_connection = True
            raise Refused(400, f"Content-Length {raw_length.strip()[:20]!r} is not a number of bytes")
        length = int(raw_length) if raw_length is not None else 0
        self._body_deadline(length)
        self._check_size(length)
        return length

    def _body_deadline(self, length: int) -> None:
        self.reader.deadline = time.monotonic() + REQUEST_HEAD_SECONDS + length / BODY_BYTES_PER_SECOND

    def _body_limit(self) -> int:
        """The largest body taken: the fields, and the upload when it is multipart."""
        fields = form_bytes(self.server.service.limits.text_chars)
        if self.headers.get_content_type() == "multipart/form-data":
            return self.server.service.limits.upload_bytes + fields
        return fields

    def _check_size(self, length: int) -> None:
        limit = self._body_limit()
        if length > limit:
            self.close_connection = True  # the rest of the body is not read
            upload = self.server.service.limits.upload_bytes
            multipart = self.headers.get_content_type() == "multipart/form-data"
            raise Refused(
                413,
                f"the request body is {_mib(length, than=limit)}, more than this server takes ({_mib(limit)}: "
                + (f"a --max-upload-mb {_mib(upload, unit=False)} upload, and " if multipart else "")
                + "the fields of a --max-text-chars text)",
            )

    def _read_form(self) -> tuple[dict[str, str], Optional[bytes]]:
        """The body's fields (JSON, URL-encoded or multipart) and the `speaker_wav` upload."""
        length = self._declared_length()
        body = self._read_body(length)
        kind = self.headers.get_content_type()
        if kind == "application/json":
            # JSON is UTF-8, 16 or 32 (RFC 8259), told by its bytes as before; one that is none of them is
            # read in the charset its Content-Type names (an older client's Latin-1): "Café" had been
            # "the body is not valid JSON", as if its syntax were wrong.
            declared = self.headers.get_content_charset()
            try:
                try:
                    decoded = json.loads(body or b"{}", object_pairs_hook=_once)
                except UnicodeDecodeError:
                    readable = _form_charset(declared)
                    if readable is None or readable == "utf-8":
                        raise
                    decoded = json.loads(body.decode(readable, errors="strict"), object_pairs_hook=_once)
            except UnicodeError:
                said = (
                    f"the {declared[:40]} its Content-Type names, nor UTF-8; send it as UTF-8"
                    if declared
                    else "UTF-8; send it as UTF-8, or name its charset in its Content-Type"
                )
                raise Refused(400, f"the JSON body is not {said}") from None
            except ValueError:
                raise Refused(400, "the body is not valid JSON") from None
            except RecursionError:  # Python's parser recurses once a level
                raise Refused(400, 'the JSON body nests too deeply; send {"text": "..."}') from None
            if not isinstance(decoded, dict):
                raise Refused(400, 'the JSON body is not an object; send {"text": "..."}')
            return {str(k): _scalar(str(k), v) for k, v in decoded.items()}, None
        if kind == "application/x-www-form-urlencoded" or not body:
            # The charset a form declares (an older client's "; charset=iso-8859-1"), else UTF-8.
            declared = _form_charset(self.headers.get_content_charset())
            charset = declared or "utf-8"
            try:
                # A BOM some editors and PowerShell put first had been read into the first name ("\ufefftext").
                form = body.decode(charset).removeprefix("\ufeff")
                return _once(parse_qsl(form, keep_blank_values=True, encoding=charset, errors="strict")), None
            except UnicodeError:
                said = f"{declared[:40]}, as its Content-Type says" if declared else "UTF-8"
                raise Refused(400, f"the form body is not {said}") from None
        if kind == "multipart/form-data":
            return self._multipart(body)
        # With no Content-Type, the standard library says text/plain: a client had been told it sent that.
        sent = f"of type {kind!r}" if self.headers.get("Content-Type") else "with no Content-Type"
        raise Refused(415, f"a body {sent}; send JSON, a form, or multipart/form-data with the upload")

    def _read_body(self, length: Optional[int]) -> bytes:
        self.reading_body = True
        body = self._read_chunked() if length is None else self._read_exactly(length)
        self.body_read, self.reading_body = True, False
        return body

    def _read_exactly(self, length: int) -> bytes:
        chunks, left = [], length
        while left:
            chunk = self.rfile.read(min(left, 1 << 16))
            if not chunk:  # the client stopped mid-body
                raise ConnectionError("the client closed the connection mid-request")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _read_chunked(self) -> bytes:
        """A chunked body (RFC 9112, 7.1: what requests, Go and curl send for a body of unknown length),
        its size checked against the limit chunk by chunk; extensions and trailer fields are passed over."""
        asked_to_close, self.close_connection = self.close_connection, True  # until the whole body is read
        chunks: list[bytes] = []
        size = -1
        while size:
            line = self._chunk_line()
            size_text = line.split(b";", 1)[0].strip()
            if not re.fullmatch(rb"[0-9A-Fa-f]{1,8}", size_text):
                raise Refused(400, f"the chunk size {size_text[:20].decode('latin-1')!r} is not a hexadecimal number")
            size = int(size_text, 16)
            self._check_size(sum(map(len, chunks)) + size)
            chunks.append(self._read_exactly(size))
            if size and self._chunk_line().strip():
                raise Refused(400, f"a chunk is longer than its size {size_text.decode('latin-1')!r} says")
        while self._chunk_line().strip():  # trailer fields, up to the empty line
            pass
        self.close_connection = asked_to_close
        return b"".join(chunks)

    def _chunk_line(self) -> bytes:
        line = self.rfile.readline(FORM_BYTES)
        if len(line) == FORM_BYTES and not line.endswith(b"\n"):
            raise Refused(400, "a line of the chunked body is longer than this server reads")
        if not line.endswith(b"\n"):  # nothing, or part of a line: the client closed the connection
            raise ConnectionError("the client closed the connection mid-request")
        return line

    def _leave_unread_body(self) -> None:
        """A body this request declared and was not read (another page than /api/tts, a request refused
        before its body): the connection closes, or its bytes would be read as the next request."""
        headers = getattr(self, "headers", None)  # none yet for a request line the server refused
        if headers is None:
            return
        declared = headers.get("Content-Length", "0").strip() not in ("", "0") or "Transfer-Encoding" in headers
        if declared and not getattr(self, "body_read", False):
            self.close_connection = True

    def _multipart(self, body: bytes) -> tuple[dict[str, str], Optional[bytes]]:
        head = f"Content-Type: {self.headers.get('Content-Type')}\r\n\r\n".encode("latin-1")
        message = BytesParser(policy=HTTP).parsebytes(head + body)
        if not message.is_multipart():
            raise Refused(400, "the multipart body cannot be parsed (its boundary is missing or wrong)")
        fields: dict[str, str] = {}
        reference: Optional[bytes] = None
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            decoded = part.get_payload(decode=True)
            payload = decoded if isinstance(decoded, bytes) else b""
            if part.get_filename() == "" and not payload:
                continue  # a form's file input with no file chosen (HTML's empty part): no clip, not an empty one
            if name in fields or (name == "speaker_wav" and reference is not None):
                raise Refused(400, f"{str(name)[:40]} is given twice; send it once")
            # A clip sent as a field's value (curl -F 'speaker_wav=<clip.wav') is the upload too.
            if name == "speaker_wav" and (part.get_filename() is not None or payload.startswith(AUDIO_MAGIC)):
                if len(payload) > self.server.service.limits.upload_bytes:
                    limit = self.server.service.limits.upload_bytes
                    raise Refused(
                        413,
                        f"the speaker_wav upload is {_mib(len(payload), than=limit)}, more than this server's "
                        "--max-upload-mb "
                        f"{_mib(limit, unit=False)}",
                    )
                reference = payload
            elif part.get_filename() is not None:  # a file under another name (file=, speaker-wav=)
                raise Refused(
                    400,
                    f"a file is sent as {str(name)[:40]!r}, which is not read; send the clip to clone as speaker_wav",
                )
            elif isinstance(name, str):
                try:
                    fields[name] = payload.decode("utf-8")
                except UnicodeDecodeError:
                    raise Refused(400, f"the form field {name[:40]!r} is not UTF-8") from None
        return fields, reference

    # Answers.
    def _json(
        self, value: Any, *, status: int = 200, method: str = "GET", headers: Optional[dict[str, str]] = None
    ) -> None:
        body = json.dumps(value, ensure_ascii=False).encode("utf-8")
        self._send(status, body, "application/json", method=method, headers=headers)

    def _error(
        self, status: int, message: str, hint: Optional[str] = None, headers: Optional[dict[str, str]] = None
    ) -> None:
        if status == 405:  # it names the methods that are answered (RFC 9110, 15.5.6)
            headers = {**(headers or {}), "Allow": self._allowed()}
        try:
            self._json({"error": message, **({"hint": hint} if hint else {})}, status=status, headers=headers)
        except (TimeoutError, ConnectionError):
            self.close_connection = True

    def _send(
        self, status: int, body: bytes, kind: str, *, method: str = "GET", headers: Optional[dict[str, str]] = None
    ) -> None:
        self._leave_unread_body()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        # No body to a HEAD, an error's included: its bytes would be read as the next answer on the connection.
        if method != "HEAD" and getattr(self, "command", None) != "HEAD":
            self.wfile.write(body)

    def _send_ranged(self, body: bytes, kind: str, *, method: str) -> None:
        """A file, or the one byte range its request's `Range` names (RFC 9110, 14): Safari plays an <audio>
        only from a server that answers `bytes=0-1` with 206 (it had been sent the whole file, and stayed
        silent). Several ranges, or a header not of bytes, get the whole file, as the RFC lets a server."""
        total = len(body)
        wanted = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", self.headers.get("Range") or "")
        if wanted is None or wanted.groups() == ("", ""):
            self._send(200, body, kind, method=method, headers={"Accept-Ranges": "bytes"})
            return
        first, last = wanted.groups()
        if first and last and int(last) < int(first):  # not a range at all: ignored, as RFC 9110 14.2 says
            self._send(200, body, kind, method=method, headers={"Accept-Ranges": "bytes"})
            return
        if first:
            start, end = int(first), min(int(last), total - 1) if last else total - 1
        else:  # bytes=-500: the last 500
            start, end = max(0, total - int(last)), total - 1
        if start >= total or start > end:
            self._error(
                416,
                f"the range {wanted.group(0).strip()!r} is past the file's {total} bytes",
                headers={"Content-Range": f"bytes */{total}"},
            )
            return
        headers = {"Accept-Ranges": "bytes", "Content-Range": f"bytes {start}-{end}/{total}"}
        self._send(206, body[start : end + 1], kind, method=method, headers=headers)

    def log_error(self, format: str, *args: Any) -> None:
        # A connection kept alive that sends no next request is closed after READ_TIMEOUT_SECONDS (a
        # browser keeps a few open): the standard library logs it as "Request timed out", no fault.
        if not format.startswith("Request timed out"):
            self.log_message(format, *args)

    def log_message(self, format: str, *args: Any) -> None:
        """The standard library's own lines (a malformed request line): one line, when logging."""
        if self.server.log:
            log_line(f"{self.client_address[0]} {format % args}")

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        """A request the standard library itself refuses (a malformed request line, headers too long):
        the same one-line JSON as every other error."""
        self.close_connection = True
        if code == HTTPStatus.NOT_IMPLEMENTED:  # a method with no do_ handler: PUT, DELETE, OPTIONS, ...
            code = 405
            *methods, last = self._allowed().split(", ")  # as its Allow header says them
            self._error(
                405, f"{self.command[:20]} is not a method this server answers; use {', '.join(methods)} or {last}"
            )
        elif code == HTTPStatus.REQUEST_URI_TOO_LONG:  # http.server's limit on a request line: 64 KiB
            service = getattr(self.server, "service", None)  # None while the run loads
            most = f", at most {service.limits.text_chars} characters" if service is not None else ""
            self._error(
                414, f"the request's URL is over 65536 bytes; send a long text as a POST body (JSON or a form){most}"
            )
        else:
            try:
                self._json({"error": f"{HTTPStatus(code).phrase}: {message or ''}".strip(": ")}, status=code)
            except (TimeoutError, ConnectionError, ValueError):
                pass
        self._log_answer(code)

    def _allowed(self) -> str:
        """The methods the request's page answers: /api/tts speaks to GET and POST, not to HEAD."""
        tts = getattr(self, "path", None) and urlsplit(_utf8(self.path)).path == "/api/tts"
        return "GET, POST" if tts else "GET, POST, HEAD"


def _utf8(path: str) -> str:
    """The request's target as its client sent it: http.server reads the request line as Latin-1, so
    Persian typed into a URL (`?text=سلام`, which curl sends unescaped) arrives as UTF-8 bytes in
    Latin-1 letters. A target that is not UTF-8 is read as Latin-1, as it came."""
    try:
        return path.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return path


def _form_charset(declared: Optional[str]) -> Optional[str]:
    """The charset a form's escapes are read in: the one it declares where it is a text encoding that
    writes ASCII as ASCII (Latin-1, windows-1252), and UTF-8 for ASCII (its escapes are UTF-8's bytes:
    "us-ascii" had refused caf%C3%A9), for UTF-16 and EBCDIC (as browsers do), for one Python does not
    know, and for a codec that is no text encoding (base64, rot13: they had been a 500)."""
    import codecs

    try:
        info = codecs.lookup(declared) if declared else None
        readable = (
            info is not None
            and getattr(info, "_is_text_encoding", True)
            and "text=%+&".encode(info.name) == b"text=%+&"
        )
    except (LookupError, UnicodeError, TypeError):
        return None
    return None if info is None or not readable or info.name == "ascii" else info.name


def _once(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """A query's or form's parameters, each given once: a second `text=` is refused, not one of the
    two spoken."""
    fields: dict[str, str] = {}
    for name, value in pairs:
        if name in fields:
            raise Refused(400, f"{name} is given twice; send it once")
        fields[name] = value
    return fields


def _scalar(name: str, value: Any) -> str:
    """A JSON body's value as the form would carry it: true as `true`, null as empty; a list or an
    object is refused, not spoken as Python would print it."""
    if isinstance(value, (list, dict)):
        raise Refused(400, f"{name} is a JSON {'list' if isinstance(value, list) else 'object'}; send a string")
    if name == "text" and isinstance(value, (bool, int, float)):  # a client's bug, not words to speak
        raise Refused(400, f"text is a JSON {'boolean' if isinstance(value, bool) else 'number'}; send a string")
    return "" if value is None else json.dumps(value) if isinstance(value, bool) else str(value)
