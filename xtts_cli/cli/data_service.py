"""`xtts data-service dispatcher|worker`: TensorFlow's tf.data service servers, run until Ctrl-C.

A dispatcher on one machine, a worker on each machine with spare CPUs, and `data.service_address`
in the trainer's config: the training batches are then made on the workers (docs/scaling.md).
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated, Optional

import typer

from xtts_cli.cli.options import XttsGroup

app = typer.Typer(
    name="data-service",
    cls=XttsGroup,
    help="Run the tf.data service that makes training batches on other machines' CPUs (docs/scaling.md).",
    no_args_is_help=True,
    add_completion=False,
)


BindOption = Annotated[
    Optional[str],
    typer.Option(
        "--bind",
        metavar="ADDRESS",
        help="The interface to listen on. TensorFlow's tf.data servers listen on every interface and have no "
        "authentication: anyone who reaches the port can run TensorFlow graphs as you. Pass --bind 0.0.0.0 to "
        "accept that on a trusted network (docs/scaling.md); without it the server does not start.",
        show_default=False,
    ),
]
# What TensorFlow 2.16's tf.data servers bind: every interface ("0.0.0.0:PORT"), no other choice.
EVERY_INTERFACE = ("0.0.0.0", "::", "[::]", "*", "all")


def _check_bind(bind: Optional[str], what: str) -> None:
    """Refuse to start a server open to the network unless the user named that, knowing it."""
    import getpass

    from xtts_cli.errors import XttsError

    if bind is None:
        raise XttsError(
            f"the tf.data service {what} would listen on every network interface (TensorFlow offers no other) with "
            f"no authentication: anyone who reaches its port could run TensorFlow graphs as {getpass.getuser()}",
            hint="on a trusted network or behind a firewall that admits only your machines, pass --bind 0.0.0.0; "
            "docs/scaling.md shows the SSH tunnel for anything else",
        )
    if bind.strip().lower() not in EVERY_INTERFACE:
        # An empty one named: "--bind : ... cannot be held to " had named nothing.
        given, held = (f"--bind {bind}", bind) if bind.strip() else ("--bind is empty", "an interface")
        raise XttsError(
            f"{given}: TensorFlow's tf.data service listens on every interface and cannot be held to {held}",
            hint="pass --bind 0.0.0.0 on a trusted network, or keep the port closed and use an SSH tunnel "
            "(docs/scaling.md)",
        )


# How long a server's stop may take before the process exits without it.
STOP_SECONDS = 15.0


def _serve(server, line: str, stopping: str = "stopping") -> None:
    """Print where `server` listens, then run until SIGINT or SIGTERM, say `stopping`, stop it and
    return (exit 0); a stop that holds on past STOP_SECONDS exits 0 without it, and one that keeps
    the interpreter from running at all (it holds the GIL) is ended 5 s later, exit 1."""
    stop = threading.Event()
    handlers = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    try:
        # A timed wait: the main thread must return to Python for the signal handler to run.
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    sys.stderr.write(stopping + "\n")
    # Stopped in a thread of its own, waited for a while: a worker whose dispatcher had gone while it
    # served a training hung in TensorFlow's stop, past SIGTERM and Ctrl-C (their handlers never ran).
    stopper = threading.Thread(target=server.stop, daemon=True)
    # The timed join needs the GIL back: a stop that held it hung the worker past SIGTERM and a second
    # Ctrl-C. faulthandler's watchdog is a C thread that needs none; it ends the process (exit 1).
    silent = open(os.devnull, "w")  # its traceback dump: the Python side is only waiting here
    faulthandler.dump_traceback_later(STOP_SECONDS + 5, exit=True, file=silent)
    stopper.start()
    stopper.join(STOP_SECONDS)
    faulthandler.cancel_dump_traceback_later()
    silent.close()
    if stopper.is_alive():
        sys.stderr.write(f"note: TensorFlow's server did not stop within {STOP_SECONDS:g} s; exiting without it\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(0)


@app.command("dispatcher")
def dispatcher(
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, metavar="PORT", help="Port to listen on (0: any free port).")
    ] = 5050,
    work_dir: Annotated[
        Optional[Path],
        typer.Option(
            "--work-dir",
            metavar="DIR",
            help="Journal the dispatcher's state here (fault-tolerant mode): a restart with "
            "the same directory resumes its jobs. Default: state in memory only.",
            show_default=False,
        ),
    ] = None,
    bind: BindOption = None,
) -> None:
    """Run the dispatcher: it hands the trainer's pipeline to the workers and tracks their jobs.

    Trainers set data.service_address to grpc://THIS_HOST:PORT. Runs until Ctrl-C or SIGTERM (exit 0).

    Examples:

        xtts data-service dispatcher --port 5050 --bind 0.0.0.0

        xtts data-service dispatcher --port 5050 --bind 0.0.0.0 --work-dir /shared/dispatcher
    """

    _check_bind(bind, "dispatcher")
    if work_dir is not None:  # a file there would fail as a port problem, after TensorFlow loads
        from xtts_cli.config.editing import can_write

        can_write(work_dir.expanduser(), "--work-dir", folder=True)
    from xtts_cli.data.service import bound_port, start_dispatcher, this_host

    server = start_dispatcher(port, str(work_dir.expanduser().resolve()) if work_dir else None)
    bound = bound_port(server)
    # The name the other machines type ("localhost" had been shown wherever getfqdn answered it).
    host = this_host()
    journal = f"; state journaled in {work_dir}" if work_dir else ""
    _serve(
        server,
        f"tf.data service dispatcher listening on every interface at port {bound}, no authentication: workers run "
        # A fixed --port: a worker started again at the address the dispatcher lists (docs/scaling.md).
        f"`xtts data-service worker --dispatcher {host}:{bound} --port {bound + 1 if bound < 65535 else bound - 1} --bind 0.0.0.0`, trainers set "
        f"data.service_address: grpc://{host}:{bound}{journal}",
    )


@app.command("worker")
def worker(
    dispatcher_address: Annotated[
        str,
        typer.Option(
            "--dispatcher",
            metavar="HOST:PORT",
            help="The dispatcher, HOST:PORT or grpc://HOST:PORT.",
            show_default=False,
        ),
    ],
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, metavar="PORT", help="Port to listen on (0: any free port).")
    ] = 0,
    worker_address: Annotated[
        Optional[str],
        typer.Option(
            "--worker-address",
            metavar="HOST:PORT",
            help="Host name or IP trainers reach this worker at, alone or as HOST:PORT (the port --port "
            "gives, or gives it). Default: localhost when the dispatcher is on this machine, else this "
            "machine's fully qualified name (its host name, or its address toward the dispatcher, where that "
            "name is localhost).",
            show_default=False,
        ),
    ] = None,
    bind: BindOption = None,
) -> None:
    """Run a worker: it registers with the dispatcher and makes batches for the trainers that read from it.

    Workers need the audio (and any feature cache) at the paths the trainer's config gives.
    Runs until Ctrl-C or SIGTERM (exit 0).

    Examples:

        xtts data-service worker --dispatcher 10.0.0.5:5050 --port 5051 --bind 0.0.0.0

        xtts data-service worker --dispatcher 10.0.0.5:5050 --port 5051 --bind 0.0.0.0 --worker-address 10.0.0.7:5051
    """
    from xtts_cli.data.dispatcher import grpc_target
    from xtts_cli.data.service import bound_port, default_worker_host, start_worker, worker_host_port

    _check_bind(bind, "worker")
    target = grpc_target(dispatcher_address, name="--dispatcher")
    if worker_address is not None:
        host, port = worker_host_port(worker_address, port)
    else:
        host = default_worker_host(dispatcher_address)
    server = start_worker(dispatcher_address, port=port, worker_host=host)
    _serve(
        server,
        f"tf.data service worker listening on every interface at port {bound_port(server)}, no authentication "
        f"(trainers reach it at "
        f"{host}:{bound_port(server)}), registered with {target}",
        # TensorFlow's dispatcher keeps a worker in every job it starts, even one stopped cleanly
        # (its worker_timeout_ms dropped none in a probe): a trainer started later waits for it.
        f"stopping; {target} still lists this worker, and a training started from now on waits for it: start it "
        f"again at port {bound_port(server)}, or restart the dispatcher and its other workers",
    )
