"""`xtts serve`: a run loaded once and spoken over HTTP, with a page to listen on."""

from __future__ import annotations

import ipaddress
import math
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated, Optional
from urllib.parse import urlsplit

import typer

from xtts_cli.cli.options import (
    CheckpointAlias,
    RunDirOption,
    StepOption,
    VerboseOption,
    VocoderOption,
    run_dir_given,
)


def _host(value: str) -> str:
    """--host as the socket takes it, checked as the command line is read: an empty one (`--host
    "$HOST"` with HOST unset) had listened on every interface; a URL or a port in it is named."""
    if not value.strip():
        raise typer.BadParameter("is empty: give 127.0.0.1 (this machine) or 0.0.0.0 (every interface)")
    if "://" in value:
        raise typer.BadParameter(f"{value!r} is a URL: give its host alone, e.g. --host {urlsplit(value).hostname}")
    if value.startswith("[") and value.endswith("]"):  # [::1], as a URL writes an IPv6 address
        return value[1:-1]
    name, colon, port = value.rpartition(":")
    if colon and "." in name and port.isdigit():
        raise typer.BadParameter(f"{value!r} holds a port: give --host {name} --port {port}")
    return value


# serve's own options, declared once beside it (the shared ones are in cli/options.py).
HostOption = Annotated[
    str,
    typer.Option(
        "--host",
        callback=_host,
        help="Address to listen on. The default answers this machine only; 0.0.0.0 answers anyone who can "
        "reach it (there is no authentication).",
    ),
]
PortOption = Annotated[
    int, typer.Option("--port", "-p", min=0, max=65535, help="Port (coqui tts-server's; 0: a free one).")
]
MaxTextOption = Annotated[
    int,
    typer.Option(
        "--max-text-chars",
        min=1,
        help="Longest text a request may send, counted as it reads aloud (its numbers in words).",
    ),
]


def _a_size(value: float) -> float:
    if not math.isfinite(value):  # NaN passes the range check (every comparison with it is false); inf has no bytes
        raise typer.BadParameter(f"{value} is no size in MiB; give one such as 10")
    return value


MaxUploadOption = Annotated[
    float,
    typer.Option(
        "--max-upload-mb",
        min=0.01,
        callback=_a_size,
        help="Largest reference clip a request may upload (MiB).",
    ),
]
MaxWaitingOption = Annotated[
    int,
    typer.Option(
        "--max-waiting", min=0, help="Requests that may wait for their turn; past it a request is refused (503)."
    ),
]
GenerationsOption = Annotated[
    int,
    typer.Option(
        "--generations",
        min=1,
        help="Requests spoken at once; the rest wait their turn. One sentence leaves part of the CPU idle, which a "
        "second one fills: on 2 cores, 2 answered about a third more a minute than one at a time (docs/serve.md).",
    ),
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No line per request.")]


def serve(
    run_dir: RunDirOption = None,
    vocoder: VocoderOption = None,
    step: StepOption = None,
    host: HostOption = "127.0.0.1",
    port: PortOption = 5002,
    max_text_chars: MaxTextOption = 2000,
    max_upload_mb: MaxUploadOption = 10.0,
    max_waiting: MaxWaitingOption = 32,
    generations: GenerationsOption = 2,  # serving.service.Limits's default
    quiet: QuietOption = False,
    checkpoint: CheckpointAlias = None,
    verbose: VerboseOption = False,
) -> None:
    """Serve a run over HTTP: `/api/tts` (coqui tts-server's parameters), `/api/speakers`,
    `/api/languages`, `/health`, and a page at `/` to type, pick a voice, clone one from a clip and
    listen, with the samples the run wrote while it trained. Open the address its "serving" line
    prints (http://127.0.0.1:5002/ by default).

    Examples:

        xtts serve -r runs/speak-cpu

        xtts serve -r runs/speak-cpu --vocoder griffin-lim --port 8080

        xtts serve -r runs/voices-cpu --host 0.0.0.0
    """
    run = run_dir_given(run_dir, checkpoint, to="serve", example="xtts serve -r runs/speak-cpu", vocoder=vocoder)
    from xtts_cli.serving.http import make_server
    from xtts_cli.serving.service import Limits

    limits = Limits(
        text_chars=max_text_chars,
        upload_bytes=int(max_upload_mb * 1024 * 1024),
        generations=generations,
        waiting=max_waiting,
    )
    if step is not None:  # a step the run does not keep: said before "listening", not after
        from xtts_cli.run.directory import step_kept

        step_kept(run, step)
    server = make_server(None, host, port, log=not quiet)  # a port in use is said before TensorFlow loads
    if not _loopback(host):  # said as the port opens, not a model's load later
        print(
            f"note: --host {host} is reachable by other machines, with no authentication; "
            "--host 127.0.0.1 keeps it to this one",
            flush=True,
        )
    tts, service = _load(server, run, step, vocoder, limits)
    for note in tts.notes:
        print(f"note: {note}", flush=True)
    where = open_at(str(server.server_address[0]), int(server.server_address[1]))
    # SIGTERM (a service manager, `docker stop`) stops it as Ctrl-C does: the requests in flight finish.
    # Taken before "serving" is said: one sent once it was said had killed the process (-15), unanswered.
    stopping = _Stopping()
    signal.signal(signal.SIGTERM, stopping.on(lambda: _Stopped(143)))
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where it is ignored (started with &)
        signal.signal(signal.SIGINT, stopping.on(KeyboardInterrupt))
    if signal.getsignal(signal.SIGHUP) != signal.SIG_IGN:  # the terminal closed, as SIGTERM (not under nohup)
        signal.signal(signal.SIGHUP, stopping.on(lambda: _Stopped(129)))
    try:
        print(f"serving {run} (step {tts.step}, vocoder {tts.vocoder.name}) at {where}", flush=True)
        service.warm_up()  # the other lengths' graphs, while it answers
        server.serve_forever()
    except (KeyboardInterrupt, _Stopped) as stop:
        _finish(server, service, stopping)
        server.server_close()
        sys.stdout.flush()
        sys.stderr.flush()
        # Every request is answered: the interpreter's own exit would wait on the thread still building
        # graphs in TensorFlow (a SIGTERM during the warm-up waited past 30 s).
        os._exit(stop.code if isinstance(stop, _Stopped) else 130)
    finally:
        server.server_close()


def _load(server, run: Path, step: Optional[int], vocoder: Optional[str], limits):
    """The run loaded while the server answers: /health and every request a 503 "loading" (a health
    check opened at once had waited on a silent connection for the load's seconds)."""
    from xtts_cli.cli.output import Phases

    server.loading = str(run)
    where = open_at(str(server.server_address[0]), int(server.server_address[1]))
    answering = threading.Thread(target=server.serve_forever, kwargs=dict(poll_interval=0.1), daemon=True)
    answering.start()
    # Said before TensorFlow's import, which holds the interpreter for seconds: answers wait for it.
    print(f'listening at {where}: /health answers "loading" (503) until the run is served', flush=True)
    try:
        from xtts_cli.inference import Synthesizer
        from xtts_cli.serving.service import VoiceService

        with Phases() as phase:
            which = "its latest" if step is None else f"step {step}"
            phase(f"loading {run} (TensorFlow, the model and {which} checkpoint)")
            tts = Synthesizer.load(run, step=step, vocoder=vocoder, flags=True)
            # What the first request would wait for, built before it comes; the graphs of longer
            # sentences are built while the server answers (`warm_up` in `serve`).
            phase("building the generation graph and the vocoder's")
            tts.warm_up()
            server.service = service = VoiceService(tts, limits, step_asked=step)
    except BaseException:
        server.shutdown()
        server.server_close()
        raise
    server.shutdown()  # the main thread serves from here: Ctrl-C and SIGTERM land there
    answering.join()
    return tts, service


class _Stopped(BaseException):
    """SIGTERM's stop. Not an Exception, as KeyboardInterrupt is not: raised while the server handles
    a connection, socketserver's `except Exception` would print it and serve on."""

    def __init__(self, code: int) -> None:
        self.code = code


class _Stopping:
    """The stop signals once the run is served: the first stops the server; another stops at once only
    while the requests in flight are waited for (`_finish`), and is passed over otherwise. A service
    manager signals the group, then the process: a second signal in the closing had broken it with a
    traceback, and one during the exit's last steps had left the process for seconds."""

    def __init__(self) -> None:
        self.stopped = False
        self.waiting = False

    def on(self, stop):
        def handler(*_) -> None:
            if not self.stopped or self.waiting:
                self.stopped = True
                raise stop()

        return handler


def _finish(server, service, stopping: _Stopping) -> None:
    """Listen no more and answer the requests in flight whole (a WAV cut short would still be a
    200); a second Ctrl-C or SIGTERM stops at once, saying how many were cut off."""
    from xtts_cli.serving.http import log_line

    server.socket.close()
    # A closed terminal may send SIGHUP twice (the kernel's and the shell's): only Ctrl-C stops at once.
    if signal.getsignal(signal.SIGHUP) != signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    if service.in_flight:
        # Each line one write: the requests' threads write their lines as they finish.
        log_line(f"stopping: finishing {service.in_flight} request(s) in flight; Ctrl-C again stops at once")
        try:
            stopping.waiting = True
            while not service.finish(0.25):
                pass
            stopping.waiting = False
        except (KeyboardInterrupt, _Stopped) as again:
            log_line(f"stopped at once: {service.in_flight} request(s) cut off")
            sys.stdout.flush()
            # Not the interpreter's exit, which would wait for the generations; 143 for a SIGTERM.
            os._exit(again.code if isinstance(again, _Stopped) else 130)
    service.finish(0)
    log_line("stopped")


def open_at(host: str, port: int) -> str:
    """The address the serving line names, one a browser can open: every interface (0.0.0.0, ::) is
    none, so this machine's loopback, and for the others its name and the address its network sees
    (a name alone is often one only this machine resolves)."""
    if host in ("0.0.0.0", "::"):
        import socket

        local = "127.0.0.1" if host == "0.0.0.0" else "[::1]"
        seen = _network_address(socket.AF_INET) or (_network_address(socket.AF_INET6) if host == "::" else None)
        also = f" or {_url(seen, port)}" if seen else ""
        return f"http://{local}:{port}/ (from other machines: http://{socket.gethostname()}:{port}/{also})"
    return _url(host, port)


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def _network_address(family: int) -> Optional[str]:
    """This machine's address on the interface its default route leaves by; None without one. A UDP
    socket's connect picks the route and sends nothing (the documentation addresses of RFC 5737 and
    RFC 3849 are its target)."""
    import socket

    target = ("192.0.2.1", 9) if family == socket.AF_INET else ("2001:db8::1", 9)
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect(target)
            address = ipaddress.ip_address(probe.getsockname()[0].split("%")[0])
    except (OSError, ValueError):
        return None
    return None if address.is_loopback or address.is_unspecified or address.is_link_local else str(address)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
