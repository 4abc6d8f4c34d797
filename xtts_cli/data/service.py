"""Disaggregated preprocessing on TensorFlow's own tf.data service: a dispatcher, workers, and the
hook that makes the training pipeline read its batches from them.

How it fits together (https://www.tensorflow.org/api_docs/python/tf/data/experimental/service):
- `start_dispatcher` / `start_worker` run the servers (`xtts data-service dispatcher|worker`).
- `distribute_batches` registers the training pipeline's graph with the dispatcher, which hands it
  to every worker: workers need no config, only the audio files at the paths the trainer sees (and
  the feature cache, with `preprocessing_mode: precompute`), and tensorflow-io's ops loaded where
  the `[tfio]` extra decodes compressed audio (`load_pipeline_kernels`). The graph holds graph ops
  only, which is why the `tf.numpy_function` path cannot be served, nor compressed clips decoded by
  libsndfile (`data.audio`): those precompute their features first (`check_servable`).
- The job name starts with `pipeline_fingerprint`: consumers that share a job (several trainers
  reading one stream) must build the same pipeline, and one whose features differ gets another job
  instead of batches it cannot use. It ends with a session token, fresh per pipeline unless given:
  a job whose epochs were all read stays on the dispatcher, and a second run joining it by name
  would get an empty epoch.

Nothing here prints: servers are returned to the caller, problems raised as `XttsError`.
"""

from __future__ import annotations

import hashlib
import json
import queue
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Optional

import tensorflow as tf

from xtts_cli.config.schema import DataConfig, service_host_port
from xtts_cli.data.dispatcher import (
    DEFAULT_DISPATCHER_PORT,
    check_reachable,
    why_no_batches,
)
from xtts_cli.errors import UsageError, XttsError
from xtts_cli.ports import why_port_is_taken

# Workers learn from their heartbeat that a job's iteration ended (its trainer finished or left) and
# only then drop its work and answer the calls waiting on it. With TensorFlow's default interval a
# worker kept such work, and its stop() blocked, for 3-20 s in tests/test_data_service.py; with 1 s,
# at most a second. A few workers heartbeating each second cost the dispatcher nothing.
WORKER_HEARTBEAT_MS = 1000
# A served batch comes in milliseconds, an epoch's first within seconds: a minute without one is a
# service that lost its workers (or its dispatcher), and the trainer says so.
QUIET_SECONDS = 60.0
# How long closing waits for the reader's batch in flight (milliseconds when the service is well).
CLOSE_SECONDS = 10.0
SHARDING = ("dynamic", "off")


def _lost_job(error: BaseException, address: str) -> Optional[XttsError]:
    """The one-line error for a job its dispatcher forgot (restarted without a --work-dir), which
    TensorFlow raised as a NotFoundError's traceback; None for any other error."""
    # Said as "...dispatcher restart..." where the client's iteration was lost, or, where the client
    # asked the new dispatcher for its iteration first, "Failed to get or create iteration for job
    # with id N: Dataset id M not found" (a traceback to the user, one run in six).
    said = str(error)
    lost = "dispatcher restart" in said or ("Failed to get or create iteration" in said and "not found" in said)
    if not isinstance(error, tf.errors.NotFoundError) or not lost:
        return None
    return XttsError(
        f"the tf.data service's dispatcher at {address} restarted and no longer knows this training's job "
        "(it keeps its jobs only with a --work-dir)",
        hint="run the same command to resume from the run's last checkpoint; start the dispatcher with "
        "--work-dir DIR for it to survive a restart",
    )


class ServedBatches:
    """Batches from an iterator over a served dataset, read on a thread of their own.

    TensorFlow's client waits for a worker without end, inside C++ where no Python signal handler
    runs: a trainer whose only worker stopped hung, deaf to Ctrl-C and SIGTERM, as did one whose
    dispatcher stopped before its iterator was made (`make`, called on that thread too). Read here, the wait
    stays in Python: once `stop()` is true it ends as the data would (the caller saves and exits as
    on any interrupt), and each time the wait doubles past `quiet_seconds`, `note` says what the
    dispatcher and its workers answer. A worker that joins ends the wait: the job goes on.
    """

    POLL_SECONDS = 0.25  # how soon a signal is seen while waiting

    def __init__(
        self,
        make: Callable[[], Iterator[Any]],
        address: str,
        *,
        stop: Callable[[], bool],
        note: Callable[[str], None],
        quiet_seconds: float = QUIET_SECONDS,
    ) -> None:
        self.address, self._stop, self._note, self.quiet_seconds = address, stop, note, quiet_seconds
        self._ready: queue.Queue = queue.Queue(maxsize=1)
        self._closed = threading.Event()
        self.abandoned = False  # stopped while the reader waited inside TensorFlow
        # A daemon: one left waiting inside TensorFlow must not keep the process from exiting.
        self._reader = threading.Thread(target=self._read, args=(make,), name="served-batches", daemon=True)
        self._reader.start()

    def _read(self, make: Callable[[], Iterator[Any]]) -> None:
        iterator: Optional[Iterator[Any]] = None
        while not self._closed.is_set():
            try:
                iterator = make() if iterator is None else iterator  # asks the dispatcher: may wait too
                item: tuple[str, Any] = ("batch", next(iterator))
            except StopIteration:
                item = ("end", None)
            except Exception as exc:  # raised again where the batch is asked for
                item = ("error", exc)
            while not self._closed.is_set():
                try:
                    self._ready.put(item, timeout=self.POLL_SECONDS)
                    break
                except queue.Full:
                    continue
            if item[0] != "batch":
                return
        # Closed: the iterator goes with this frame, which ends the job's iteration on the service.

    def __iter__(self) -> ServedBatches:
        return self

    def __next__(self) -> Any:
        began, said = time.monotonic(), self.quiet_seconds
        while True:
            try:
                kind, value = self._ready.get(timeout=self.POLL_SECONDS)
            except queue.Empty:
                if self._stop():
                    self.abandoned = True
                    raise StopIteration from None
                waited = time.monotonic() - began
                if waited >= said:
                    self._note(f"no batch from the tf.data service for {waited:.0f} s: {why_no_batches(self.address)}")
                    said *= 2
                continue
            if kind == "batch":
                return value
            if kind == "error":
                raise _lost_job(value, self.address) or value
            raise StopIteration

    def close(self) -> None:
        """Stop reading and let the reader drop the iterator (at once, unless it waits inside TensorFlow)."""
        self._closed.set()
        while not self._ready.empty():
            self._ready.get_nowait()
        if not self.abandoned:
            # Bounded: a reader fetching ahead from a service that stalled just as the run ended
            # would otherwise keep a finished run from exiting (it is a daemon: the exit ends it).
            self._reader.join(timeout=CLOSE_SECONDS)


def sharding_policy(sharding: str):
    """`data.service_sharding` as TensorFlow's ShardingPolicy (see the field's description)."""

    policies = {
        "dynamic": tf.data.experimental.service.ShardingPolicy.DYNAMIC,
        "off": tf.data.experimental.service.ShardingPolicy.OFF,
    }
    if sharding not in policies:
        raise XttsError(f"data.service_sharding {sharding!r} is not one of {', '.join(SHARDING)}; use dynamic")
    return policies[sharding]


def pipeline_fingerprint(
    data: DataConfig, *, output: str, training: bool, audio_paths: Sequence[str], vocabulary: Sequence[str]
) -> str:
    """Hash of everything the served batches depend on: the feature settings (the feature cache's
    fingerprint), every other data setting, the clips and the vocabulary that encodes their text."""
    from xtts_cli.data.feature_cache import feature_fingerprint

    settings = data.model_dump(mode="json", exclude={"service_address"})
    blob = json.dumps(
        {
            "features": feature_fingerprint(data, output),
            "data": settings,
            "output": output,
            "training": training,
            "clips": hashlib.sha256("\0".join(audio_paths).encode("utf-8")).hexdigest(),
            "vocabulary": list(vocabulary),
        },
        sort_keys=True,
    ).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def job_name(fingerprint: str, session: Optional[str] = None) -> str:
    """`xtts-<fingerprint>-<session>`: consumers passing the same session share one job (and split its
    batches between them); without one, a fresh token gives this pipeline a job of its own."""
    return f"xtts-{fingerprint}-{session or uuid.uuid4().hex[:12]}"


def distribute_batches(dataset, address: str, *, sharding: str, job: str):
    """`dataset` (batches) made by the tf.data service at `address` instead of in this process.

    Each new iterator over the result is a new epoch of the same job, as with a local dataset.
    """

    target = check_reachable(address)  # `distribute` registers the dataset now, and would wait silently
    return dataset.apply(
        tf.data.experimental.service.distribute(
            processing_mode=sharding_policy(sharding),
            service=target,
            job_name=job,
        )
    )


def load_pipeline_kernels() -> None:
    """Register tensorflow-io's ops in this process when they decode compressed audio here (the
    `[tfio]` extra on TensorFlow 2.16): a pipeline's graph then holds its FLAC/MP3/Vorbis decoders,
    and a dispatcher or worker can only parse and run ops its own process has loaded; the trainer
    loads them by building the graph. Without the extra the graph holds core ops only."""
    from xtts_cli.data.audio_codecs import compressed_decoder

    compressed_decoder()  # its probe loads the kernels when they run


def check_servable(codecs: Sequence[str], mode: str, *, decoder: str) -> None:
    """A one-line XttsError when a served pipeline would decode compressed audio outside the graph:
    libsndfile runs in a tf.numpy_function, which lives in the trainer's process, and a worker
    would fail on the first such clip. A precomputed store's epochs decode no clip."""
    from xtts_cli.data.audio_codecs import COMPRESSED_CODECS

    compressed = [codec for codec in codecs if codec in COMPRESSED_CODECS]
    if not compressed or mode == "precompute" or decoder != "soundfile":
        return
    raise XttsError(
        f"data.service_address is set and the clips include {', '.join(compressed)}, which {mode} mode decodes "
        "with libsndfile in the trainer's process, not on the service's workers",
        hint="set data.preprocessing_mode: precompute (decoded once, here), or convert the clips to WAV",
    )


def _check_port_free(port: int, what: str) -> None:
    """A one-line XttsError when something listens on `port` already (see xtts_cli/ports.py)."""
    reason = why_port_is_taken(port)
    if reason is not None:
        raise XttsError(
            f"cannot start the tf.data service {what} on --port {port}: {reason}; pick a free one with "
            "--port, or --port 0 for any"
        )


def _server_error(what: str, port: int, exc: Exception) -> XttsError:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return XttsError(
        f"cannot start the tf.data service {what} on port {port}: {detail}; "
        "if another program holds the port, pick a free one with --port"
    )


def start_dispatcher(port: int = DEFAULT_DISPATCHER_PORT, work_dir: Optional[str] = None):
    """A running `tf.data.experimental.service.DispatchServer` on `port` (0: any free port).

    With `work_dir`, fault-tolerant mode: the dispatcher journals its state there and a restart with
    the same directory resumes its jobs; without, its state lives in memory only.
    """
    _check_port_free(port, "dispatcher")

    load_pipeline_kernels()
    service = tf.data.experimental.service
    config = service.DispatcherConfig(port=port, work_dir=work_dir, fault_tolerant_mode=work_dir is not None)
    try:
        return service.DispatchServer(config, start=True)
    except (tf.errors.OpError, RuntimeError) as exc:
        raise _server_error("dispatcher", port, exc) from None


def default_worker_host(dispatcher: str) -> str:
    """The host name a worker tells the dispatcher clients should use to reach it.

    TensorFlow's default is `localhost`, right only when the trainer runs on the worker's machine:
    with a dispatcher on another host, this machine's fully qualified name is the better guess.
    """
    host, _ = service_host_port(dispatcher)
    if _loopback(host):
        return "localhost"
    return this_host(towards=host)


def this_host(towards: Optional[str] = None) -> str:
    """A name of this machine that other machines reach it by: its fully qualified name, or its host
    name where that is a loopback name (a container's /etc/hosts maps its name to 127.0.0.1, and
    getfqdn answers "localhost"); failing both, the address of the interface the route to `towards`
    (or any route out) leaves by. "THIS_HOST" where there is none: a placeholder, not a wrong name."""
    for name in (socket.getfqdn(), socket.gethostname()):
        if name and not _loopback(name):
            return name
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((towards or "192.0.2.1", 9))  # a UDP connect sends nothing: it picks the route
            address = probe.getsockname()[0]
    except OSError:  # no route, or `towards` does not resolve
        return "THIS_HOST"
    return "THIS_HOST" if _loopback(address) else address


def _loopback(host: str) -> bool:
    """A name of this machine alone (0.0.0.0, connected to, is this machine too)."""
    names = ("localhost", "localhost.localdomain", "ip6-localhost", "::1", "0.0.0.0")
    return host.lower() in names or host.startswith("127.")


def worker_host_port(value: str, port: int) -> tuple[str, int]:
    """(host, port) of `--worker-address`: a host (`10.0.0.7`, `[::1]` or `::1`) or HOST:PORT, whose
    port must be `port` or fill an unset one (0); the port it listens on is the one it advertises.
    Raises UsageError naming the value: `10.0.0.7:5051` had been registered as `[10.0.0.7:5051]:5051`,
    an address no trainer reaches (every later training on the dispatcher waited for it)."""

    text = value.strip()
    bracketed = re.fullmatch(r"\[([^\]]+)\](?::(\d*))?", text)
    if bracketed:
        host, given = bracketed[1], bracketed[2]
    elif text.count(":") == 1:
        host, given = text.split(":")
    else:  # a name, an IPv4 address or a bare IPv6 one
        host, given = text, None
    if not host or any(c.isspace() or c in "/[]" for c in host) or (given is not None and not given.isdigit()):
        raise UsageError(
            f"--worker-address {value!r} is not a host or HOST:PORT",
            hint="give the host trainers reach this worker at, e.g. --worker-address 10.0.0.7",
        )
    if given is None:
        return host, port
    if not 0 < int(given) < 65536:
        raise UsageError(f"--worker-address {value!r}: port {given} is not one (1-65535)", hint=f"e.g. {host}:5051")
    if port and int(given) != port:
        raise UsageError(
            f"--worker-address {value} says port {given}, --port {port}: trainers would be sent to a port it "
            "does not listen on",
            hint="give one port, or the host alone (the worker advertises the port it listens on)",
        )
    return host, int(given)


def start_worker(dispatcher: str, *, port: int = 0, worker_host: Optional[str] = None) -> Any:
    """A running `WorkerServer` on `port` (0: any free port), registered with `dispatcher`
    (`HOST:PORT` or `grpc://HOST:PORT`) and advertising `worker_host` (default: `default_worker_host`)."""
    target = check_reachable(dispatcher, name="--dispatcher")  # first: TensorFlow would wait for it silently
    _check_port_free(port, "worker")

    from xtts_cli.data.host_memory import keep_freed_memory

    keep_freed_memory()  # the worker runs the trainers' pipelines (see host_memory.py)
    load_pipeline_kernels()
    service = tf.data.experimental.service
    host = worker_host or default_worker_host(dispatcher)
    shown = f"[{host}]" if ":" in host else host
    config = service.WorkerConfig(
        dispatcher_address=target[len("grpc://") :],
        # TensorFlow substitutes the bound port for %port%, so port 0 advertises the right address.
        worker_address=f"{shown}:%port%",
        port=port,
        heartbeat_interval_ms=WORKER_HEARTBEAT_MS,
    )
    try:
        return service.WorkerServer(config, start=True)
    except (tf.errors.OpError, RuntimeError) as exc:
        raise _server_error("worker", port, exc) from None


def bound_port(server) -> int:
    """The port a DispatchServer or WorkerServer listens on (the chosen one when started on port 0)."""
    # TensorFlow exposes it only through `_address` ("localhost:PORT"); `target` is dispatcher-only.
    return int(server._address.rsplit(":", 1)[1])
