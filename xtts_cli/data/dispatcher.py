"""Whether a tf.data service dispatcher answers at an address, in gRPC alone: no TensorFlow, so
`xtts validate` asks it too (the service itself, in `data/service.py`, needs TensorFlow)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Optional

from xtts_cli.config.schema import service_host_port
from xtts_cli.errors import UsageError, XttsError

# TensorFlow's own examples use 5050 for the dispatcher; workers default to any free port.
DEFAULT_DISPATCHER_PORT = 5050
# A dispatcher on the LAN answers in milliseconds; nothing answering within this is down.
CONNECT_TIMEOUT_SECONDS = 3.0
# tensorflow/core/data/service/dispatcher.proto and worker.proto: package tensorflow.data.
GET_VERSION = "/tensorflow.data.DispatcherService/GetVersion"
GET_WORKERS = "/tensorflow.data.DispatcherService/GetWorkers"
GET_WORKER_TASKS = "/tensorflow.data.WorkerService/GetWorkerTasks"


def grpc_target(address: str, *, name: str = "data.service_address") -> str:
    """`grpc://HOST:PORT` for `address` (either form), or a one-line XttsError naming `name`."""
    try:
        host, port = service_host_port(address)
    except ValueError as exc:
        fix = (
            "; leave data.service_address empty for the local pipeline"
            if name == "data.service_address"
            else f"; give the address `xtts data-service dispatcher --port {DEFAULT_DISPATCHER_PORT}` printed"
        )
        # A value that does not parse: exit 2, as the same address in --set data.service_address is.
        raise UsageError(f"{name} {address!r} is not a tf.data service address: {exc}{fix}") from None
    shown = f"[{host}]" if ":" in host else host
    return f"grpc://{shown}:{port}"


def dispatcher_version(
    address: str, *, name: str = "data.service_address", timeout: float = CONNECT_TIMEOUT_SECONDS
) -> int:
    """The tf.data service protocol version of the dispatcher at `address`, or a one-line XttsError.

    TensorFlow's client retries an unreachable dispatcher for minutes without a word, so one real
    call (the dispatcher's GetVersion, with a deadline) is made here first. A TCP connect would not
    do: firewalls and proxies accept connections for hosts that are not there.
    """
    import grpc  # TensorFlow's own dependency; imported here, as TensorFlow is, only when needed

    target = grpc_target(address, name=name)
    host, port = service_host_port(address)
    where = f"{name} {address!r}"
    fix = f"start one there with `xtts data-service dispatcher --port {port} --bind 0.0.0.0`" + (
        ", or leave data.service_address empty for the local pipeline" if name == "data.service_address" else ""
    )
    try:
        reply = grpc_call(target, GET_VERSION, timeout)
    except grpc.RpcError as exc:
        code = exc.code()
        # A server that speaks no HTTP/2 (a web server, say) answers, and gRPC calls that "unavailable" too.
        spoke = any(said in (exc.details() or "").lower() for said in ("parsing http/2", "http1.x"))
        silent = code == grpc.StatusCode.DEADLINE_EXCEEDED or (code == grpc.StatusCode.UNAVAILABLE and not spoke)
        if silent and _accepts(host, port):
            # A program that takes the connection and closes it or says nothing: a dispatcher could
            # not be started on that port, as "nothing answers" had advised.
            said = (
                f"did not answer within {timeout:g} s (a dispatcher too busy to, another program, or a firewall between)"
                if code == grpc.StatusCode.DEADLINE_EXCEEDED
                else "closes them unanswered (another program, or a firewall between)"
            )
            raise XttsError(
                f"{where}: something at {host}:{port} takes connections but {said}; give the dispatcher's address, "
                "the one `xtts data-service dispatcher` printed"
            ) from None
        if code == grpc.StatusCode.UNAVAILABLE and not spoke:
            unknown = "resolv" in (exc.details() or "").lower()  # gRPC words a failed lookup this way
            raise XttsError(
                f"{where}: "
                + (
                    f"the host name {host!r} does not resolve; use the dispatcher machine's name or IP"
                    if unknown
                    else f"nothing answers at {host}:{port}; {fix}"
                )
            ) from None
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            raise XttsError(f"{where}: no answer from {host}:{port} within {timeout:g} s; {fix}") from None
        # Something listens there: starting a dispatcher on that port would fail; the address is wrong.
        raise XttsError(
            f"{where}: the server at {host}:{port} is not a tf.data service dispatcher "
            f"({'it does not speak gRPC' if spoke else code.name}: perhaps a "
            "worker's port or another program); give the dispatcher's address, the one "
            "`xtts data-service dispatcher` printed"
        ) from None
    return next((value for number, value in message_fields(reply) if number == 1), 0)


def _accepts(host: str, port: int) -> bool:
    """Whether a TCP connection to host:port is taken (within a second)."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def grpc_call(target: str, method: str, timeout: float) -> bytes:
    """The reply to a gRPC call of `method` with an empty request (b"" encodes every empty message)."""
    import grpc

    # The proxy setting of this shell must not reroute a call meant for a machine on the LAN.
    host_port = target.removeprefix("grpc://")
    with grpc.insecure_channel(host_port, options=[("grpc.enable_http_proxy", 0)]) as channel:
        return channel.unary_unary(method)(b"", timeout=timeout)


def _varint(message: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while at < len(message):
        byte = message[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    return value, at


def message_fields(message: bytes) -> Iterator[tuple[int, Any]]:
    """(field number, value) of each field of a protobuf message: an int for a varint, bytes otherwise
    (https://protobuf.dev/programming-guides/encoding/). TensorFlow ships no Python module for the
    service's messages, and the few read here are flat."""
    at = 0
    while at < len(message):
        key, at = _varint(message, at)
        wire = key & 7
        value: Any
        if wire == 0:
            value, at = _varint(message, at)
        elif wire == 2:
            size, at = _varint(message, at)
            value, at = message[at : at + size], at + size
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, at = message[at : at + size], at + size
        else:  # groups, long deprecated: not in these messages
            return
        yield key >> 3, value


def check_reachable(address: str, *, name: str = "data.service_address") -> str:
    """`address` as `grpc://HOST:PORT` once a tf.data service dispatcher has answered there."""
    dispatcher_version(address, name=name)
    return grpc_target(address, name=name)


def why_no_batches(address: str, *, timeout: float = CONNECT_TIMEOUT_SECONDS) -> str:
    """What the dispatcher at `address` and the workers it lists answer now, in a clause, for a
    trainer that waits for batches."""
    trouble, workers = _asked(address, timeout)
    if trouble is not None:
        return trouble
    # A worker skips each clip it cannot read (the pipeline's ignore_errors, logged under TensorFlow's
    # quiet level): one whose machine lacked the audio sent nothing and said nothing.
    if len(workers) == 1:
        who = f"its worker ({workers[0]}) answers but has sent none: it skips"
        machine, output = "its machine has", "its own output"
    else:
        who = f"its {len(workers)} workers ({', '.join(workers)}) answer but have sent none: each skips"
        machine, output = "their machines have", "their own output"
    return (
        f"{who} each clip it cannot read without a word, so check that {machine} the audio at the paths this "
        f"training's config gives (any other error is in {output})"
    )


def worker_trouble(address: str, *, timeout: float = CONNECT_TIMEOUT_SECONDS) -> Optional[str]:
    """Why the dispatcher at `address` can send no batch now, in a clause: it does not answer, it
    lists no worker, or a worker it lists does not answer; None when every listed worker answers."""
    return _asked(address, timeout)[0]


def _asked(address: str, timeout: float) -> tuple[Optional[str], list[str]]:
    """(`worker_trouble`'s clause, the workers the dispatcher lists). A dispatcher keeps listing a
    stopped worker for minutes (until its heartbeats are missed long enough): each is asked too."""
    import grpc

    target = grpc_target(address).removeprefix("grpc://")
    try:
        reply = grpc_call(target, GET_WORKERS, timeout)
    except grpc.RpcError as exc:
        return (
            f"its dispatcher at {target} does not answer ({exc.code().name}); restart it with the --work-dir "
            "it had (without one, its jobs are lost: stop, restart it, and run the same command to resume)"
        ), []
    workers = [
        next((value for number, value in message_fields(info) if number == 1), b"").decode("utf-8", "replace")
        for number, info in message_fields(reply)
        if number == 1
    ]
    if not workers:
        # A worker that served the dispatcher before it restarted (with no --work-dir) may not join it
        # again: it runs on, listed nowhere, and the trainer waited beside it unsaid.
        return (
            f"its dispatcher at {target} has no workers; start one with `xtts data-service worker --dispatcher "
            f"{target} --port 5051 --bind 0.0.0.0` (one that ran before the dispatcher restarted: restart it)"
        ), workers
    silent = []
    for worker in workers:
        try:
            grpc_call(worker, GET_WORKER_TASKS, timeout)
        except grpc.RpcError:
            silent.append(worker)
    if silent:
        listed, named = "workers its dispatcher lists", ", ".join(silent)
        if len(workers) == 1:
            which = f"the worker its dispatcher lists ({named}) does not answer"
        elif len(silent) == len(workers):
            which = f"none of the {len(workers)} {listed} answers ({named})"
        else:
            which = f"{len(silent)} of the {len(workers)} {listed} do{'es' if len(silent) == 1 else ''} not answer ({named})"
        # The tasks a worker had wait for a worker at its address; one started elsewhere does not
        # take them over (a trainer waited minutes beside one, and went on within seconds once a
        # worker was back at the old port).
        host, port = service_host_port(silent[0])
        again = f"`xtts data-service worker --dispatcher {target} --port {port} --bind 0.0.0.0`"
        where = "" if host in ("localhost", "::1") or host.startswith("127.") else f" on {host}"
        return (
            (
                f"{which}; restart it{where} at its port, {again}"
                if len(silent) == 1
                else f"{which}; restart each at its own port, such as {again}{where}"
            )
            + " (a dispatcher never forgets a worker: to go on without it, restart the dispatcher and its other workers)",
            workers,
        )
    return None, workers
