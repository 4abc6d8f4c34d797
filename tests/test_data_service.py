"""The tf.data service, loopback only and real: an in-process dispatcher with two in-process workers
serves our real pipeline on the bundled sample, and its batches hold what the local pipeline's hold;
bad addresses are one-line errors; the CLI servers start and stop on a signal; validate and diagnose
rules. Batch size 1 keeps every clip in every training epoch (no partial batch sits out), so the
served and local epochs can be compared as multisets of examples; the order differs."""

from __future__ import annotations

import collections
import gc
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from training_support import start_xtts, subprocess_env, tiny_config, wait_for_records

from xtts_cli.config import resolve_config
from xtts_cli.devices.gpu_info import MachineInfo
from xtts_cli.diagnosis.checkup import data_service_finding
from xtts_cli.diagnosis.config_rules import check_config
from xtts_cli.errors import ConfigError, XttsError
from xtts_cli.host import CpuSampler

DATA = Path(__file__).parent / "data"

CPU_ONLY = MachineInfo(cpu_count=2, gpus=(), gpu_unavailable_reason="NVML could not start")


@pytest.fixture(scope="module")
def service():
    """A dispatcher and two workers in this process, stopped at the end (workers first)."""
    from xtts_cli.data.service import bound_port, start_dispatcher, start_worker

    dispatcher = start_dispatcher(0)
    address = f"localhost:{bound_port(dispatcher)}"
    workers = [start_worker(address) for _ in range(2)]
    yield {"address": address, "workers": workers}
    # Release the clients first: one whose dispatcher is gone retries its goodbye at exit, for seconds.
    gc.collect()
    for worker in workers:
        worker.stop()
    dispatcher.stop()


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The tiny test config (runtime features, batch 1), the sample's training items and tokenizer."""
    from xtts_cli.data.pipeline import tokenizer_for
    from xtts_cli.data.scan import scan_dataset

    config = resolve_config(tiny_config(tmp_path_factory.mktemp("config"))).config
    config = config.model_copy(
        update={"data": config.data.model_copy(update={"batch_size": 1, "preprocessing_mode": "runtime"})}
    )
    scan = scan_dataset(config.data)
    return config, list(scan.train), tokenizer_for(scan, config.data)


@pytest.fixture(scope="module")
def local_epoch(sample):
    """One epoch of the local pipeline: its examples counted, and their mel sums."""
    from xtts_cli.data.pipeline import build_pipeline

    config, items, tokenizer = sample
    return _examples(build_pipeline(config, items, tokenizer, training=True)[0])


def _with_data(config, **changes):
    return config.model_copy(update={"data": config.data.model_copy(update=changes)})


def _examples(dataset) -> collections.Counter:
    """Each example of an epoch as (text token ids, mel frames), counted; with its mel sums kept aside."""
    counts: collections.Counter = collections.Counter()
    sums: dict = collections.defaultdict(list)
    for batch in dataset:
        for i in range(batch["text_ids"].shape[0]):
            text = tuple(batch["text_ids"][i, : int(batch["text_lengths"][i])].numpy().tolist())
            frames = int(batch["mel_lengths"][i])
            counts[(text, frames)] += 1
            sums[(text, frames)].append(float(batch["mel"][i, :frames].numpy().sum()))
    return counts, sums


def _assert_same_features(served_sums: dict, local_sums: dict) -> None:
    for key, values in served_sums.items():
        np.testing.assert_allclose(values, [local_sums[key][0]] * len(values), rtol=1e-5)


@pytest.mark.parametrize(("sharding", "copies"), [("dynamic", 1), pytest.param("off", 2, marks=pytest.mark.slow)])
def test_served_epoch_holds_the_local_epochs_examples(service, sample, local_epoch, sharding, copies) -> None:
    from xtts_cli.data.pipeline import build_pipeline

    config, items, tokenizer = sample
    local, local_sums = local_epoch
    assert sum(local.values()) == len(items)

    served_config = _with_data(config, service_address=service["address"], service_sharding=sharding)
    dataset, info = build_pipeline(served_config, items, tokenizer, training=True)
    assert info.service_address == service["address"] and info.service_sharding == sharding
    assert info.service_job.startswith("xtts-")
    served, served_sums = _examples(dataset)
    # dynamic: the dispatcher hands each clip to one worker; off: both workers make the whole epoch.
    assert served == collections.Counter({key: n * copies for key, n in local.items()})
    _assert_same_features(served_sums, local_sums)
    if sharding == "dynamic":  # a second epoch is a new iteration of the same job, not an empty one
        assert _examples(dataset)[0] == local


@pytest.mark.slow  # a second mode of the served epoch above
def test_consumers_sharing_a_session_split_one_epoch(service, sample, local_epoch) -> None:
    """Several trainers reading one stream (multi-worker training): one job, disjoint batches."""
    import tensorflow as tf

    from xtts_cli.data.pipeline import build_pipeline

    config, items, tokenizer = sample
    served = _with_data(config, service_address=service["address"])
    built = [build_pipeline(served, items, tokenizer, training=True, service_session="run-a") for _ in range(2)]
    assert built[0][1].service_job == built[1][1].service_job
    # The service splits the epoch already; tf.distribute must not shard each share again.
    assert built[0][0].options().experimental_distribute.auto_shard_policy == tf.data.experimental.AutoShardPolicy.OFF
    iterators = [iter(dataset) for dataset, _ in built]  # both join the job's first epoch
    got: list[collections.Counter] = [collections.Counter(), collections.Counter()]
    live = [0, 1]
    while live:
        for k in list(live):
            try:
                batch = next(iterators[k])
            except StopIteration:
                live.remove(k)
                continue
            got[k][
                (
                    tuple(batch["text_ids"][0, : int(batch["text_lengths"][0])].numpy().tolist()),
                    int(batch["mel_lengths"][0]),
                )
            ] += 1
    assert got[0] + got[1] == local_epoch[0]
    assert sum(got[0].values()) > 0 and sum(got[1].values()) > 0


def test_validation_pipeline_stays_local(sample) -> None:
    from xtts_cli.data.pipeline import build_pipeline

    config, items, tokenizer = sample
    # Nothing listens at this address: a training pipeline would fail, validation never asks.
    _, info = build_pipeline(
        _with_data(config, service_address=f"localhost:{_free_port()}"), items[:4], tokenizer, training=False
    )
    assert info.service_address is None and info.service_job is None


def test_job_name_follows_the_pipeline_fingerprint(sample) -> None:
    from xtts_cli.data.service import job_name, pipeline_fingerprint

    config, items, tokenizer = sample
    paths = [item.audio_path for item in items]

    def fingerprint(data):
        return pipeline_fingerprint(
            data, output="mel", training=True, audio_paths=paths, vocabulary=tokenizer.characters
        )

    same = fingerprint(config.data)
    assert fingerprint(config.data.model_copy(update={"service_address": "elsewhere:1"})) == same
    assert fingerprint(config.data.model_copy(update={"n_mels": 64})) != same
    assert job_name(same, "run-1") == f"xtts-{same}-run-1"
    assert job_name(same) != job_name(same)  # no session: a job of its own, never a finished one


def _first_line(process: subprocess.Popen, seconds: float = 120) -> str:
    """The process's first line of stdout; one that prints none within `seconds` is killed (a worker
    given an address it cannot register had waited for ever), its stderr the failure."""
    import threading

    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    if not lines:
        raise AssertionError(f"no line within {seconds:g} s: {_stderr_of(process)}")
    return lines[0]


def _stderr_of(process: subprocess.Popen) -> str:
    """What the process wrote to stderr, once it is stopped (read from a live one, it waits for ever)."""
    process.kill()
    return process.communicate(timeout=30)[1]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def test_unreachable_or_wrong_server_is_one_line_naming_value_and_fix(service, sample) -> None:
    from xtts_cli.data.pipeline import build_pipeline
    from xtts_cli.data.service import bound_port

    config, items, tokenizer = sample
    port = _free_port()
    start = time.perf_counter()
    with pytest.raises(XttsError) as caught:
        build_pipeline(_with_data(config, service_address=f"grpc://localhost:{port}"), items, tokenizer, training=True)
    assert time.perf_counter() - start < 10  # TensorFlow alone would wait for minutes
    assert len(caught.value.lines) == 1
    line = caught.value.lines[0]
    assert f"data.service_address 'grpc://localhost:{port}'" in line
    assert f"xtts data-service dispatcher --port {port}" in line

    # A worker answers gRPC but is no dispatcher.
    worker = f"localhost:{bound_port(service['workers'][0])}"
    with pytest.raises(XttsError, match="is not a tf.data service dispatcher") as wrong:
        build_pipeline(_with_data(config, service_address=worker), items, tokenizer, training=True)
    # Something holds that port: a dispatcher started there would fail; the address is what is wrong.
    assert "xtts data-service dispatcher --port" not in wrong.value.lines[0]
    assert wrong.value.lines[0].endswith(
        "give the dispatcher's address, the one `xtts data-service dispatcher` printed"
    )


def test_a_web_server_at_the_dispatcher_address_is_named_as_no_dispatcher() -> None:
    """A server that speaks no HTTP/2 answers too: gRPC calls it UNAVAILABLE, and the worker had said
    "nothing answers" there."""
    import http.server
    import threading

    from xtts_cli.data.dispatcher import dispatcher_version

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        address = f"localhost:{web.server_address[1]}"
        with pytest.raises(XttsError) as caught:
            dispatcher_version(address, name="--dispatcher")
    finally:
        web.shutdown()
        web.server_close()
    assert caught.value.lines[0].startswith(
        f"--dispatcher {address!r}: the server at localhost:{web.server_address[1]} is not a tf.data service "
        "dispatcher (it does not speak gRPC: perhaps a worker's port or another program)"
    )


@pytest.mark.parametrize("answer", ["closes", "says nothing"])
def test_a_program_that_takes_the_connection_is_not_called_nothing_to_start_a_dispatcher_in_place_of(answer) -> None:
    """A listener that closes each connection, or holds it unanswered, had been called "nothing answers
    ... start one there", which the taken port then refused."""
    import socket
    import threading

    from xtts_cli.data.dispatcher import dispatcher_version

    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            held.append(connection) if answer == "says nothing" else connection.close()

    threading.Thread(target=serve, daemon=True).start()
    address = f"localhost:{listener.getsockname()[1]}"
    try:
        with pytest.raises(XttsError) as caught:
            dispatcher_version(address, name="--dispatcher", timeout=1.0)
    finally:
        listener.close()
        for connection in held:
            connection.close()
    said = "did not answer within 1 s" if answer == "says nothing" else "closes them unanswered"
    assert caught.value.lines[0].startswith(
        f"--dispatcher {address!r}: something at {address} takes connections but {said}"
    )
    assert "xtts data-service dispatcher --port" not in caught.value.lines[0]


def test_a_taken_port_is_refused_not_shared(service) -> None:
    from xtts_cli.data.service import start_dispatcher

    port = int(service["address"].rsplit(":", 1)[1])
    # gRPC would bind it a second time (SO_REUSEPORT) and split the connections between two dispatchers.
    with pytest.raises(XttsError) as caught:
        start_dispatcher(port)
    assert caught.value.lines[0].startswith(f"cannot start the tf.data service dispatcher on --port {port}: ")
    assert "pick a free one with --port" in caught.value.lines[0]


def test_malformed_address_is_a_config_error(write_config) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_config(write_config("data:\n  service_address: dispatcher-without-port\n"))
    assert caught.value.lines == [
        "data.service_address: 'dispatcher-without-port' is invalid: expected grpc://HOST:PORT or HOST:PORT "
        "(e.g. grpc://10.0.0.5:5050), the address `xtts data-service dispatcher --port PORT` listens on; "
        "leave it empty for the local pipeline"
    ]
    assert resolve_config(write_config("data:\n  service_address: '  '\n")).config.data.service_address is None


def test_python_loader_cannot_be_served(write_config) -> None:
    loaded = resolve_config(
        write_config("data:\n  service_address: grpc://dispatcher:5050\n  use_tf_native_loading: false\n")
    )
    found = {f.id: f for f in check_config(loaded, CPU_ONLY)}
    assert found["data-service-python-loading"].severity == "error"
    assert found["data-service-python-loading"].fix.key == "data.use_tf_native_loading"
    assert found["data-service-python-loading"].fix.value is True
    assert "graph ops only" in found["data-service-python-loading"].message
    # The default preprocessing mode, auto, computes features on the workers (runtime); an explicit
    # cache gains nothing there: a warning with its fix.
    assert "data-service-cache" not in found
    cached = resolve_config(
        write_config(
            "data:\n  service_address: grpc://dispatcher:5050\n  preprocessing_mode: cache\n", name="cached.yaml"
        )
    )
    assert {f.id: f for f in check_config(cached, CPU_ONLY)}["data-service-cache"].fix.value == "runtime"
    served = resolve_config(
        write_config("data:\n  service_address: grpc://dispatcher:5050\n  preprocessing_mode: runtime\n")
    )
    assert check_config(served, CPU_ONLY) == []


def test_worker_cache_does_not_outlive_an_epoch(service) -> None:
    """Why the data-service-cache rule exists: every epoch rebuilds the dataset on the workers."""
    import tensorflow as tf

    from xtts_cli.data.service import distribute_batches

    calls = []
    # py_function only because the worker shares this process: it counts the clips computed.
    dataset = tf.data.Dataset.range(6).map(lambda x: tf.py_function(lambda v: calls.append(1) or v, [x], tf.int64))
    served = distribute_batches(dataset.cache(), service["address"], sharding="off", job="xtts-cache-check")
    for _ in range(2):
        assert sorted(int(x) for x in served) == sorted(list(range(6)) * 2)  # two workers, whole epoch each
    assert len(calls) == 2 * 2 * 6  # computed again in the second epoch: the cache started empty


@pytest.mark.slow
def test_cli_dispatcher_and_worker_serve_the_pipeline_and_stop_on_signals(sample, local_epoch) -> None:
    """`xtts data-service dispatcher` and `worker` as processes of their own, as on other machines:
    each loads the pipeline's tensorflow-io ops itself where the [tfio] extra decodes, and exits 0 on SIGINT / SIGTERM. Both start
    at once (TensorFlow takes seconds to import): the worker joins a dispatcher of this process that
    has no workers of its own, so every served batch comes from the worker process."""
    from xtts_cli.data.pipeline import build_pipeline
    from xtts_cli.data.service import bound_port, start_dispatcher

    def start(*args: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "xtts_cli", "data-service", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(),
        )

    config, items, tokenizer = sample
    alone = start_dispatcher(0)
    alone_address = f"localhost:{bound_port(alone)}"
    port, worker_port = _free_port(), _free_port()
    processes = [
        start("dispatcher", "--port", str(port), "--bind", "0.0.0.0"),
        # HOST:PORT as --help shows it: the worker listens at that port and registers it as given (it
        # had registered "[127.0.0.1:PORT]:PORT", which no trainer reaches).
        start(
            "worker", "--dispatcher", alone_address, "--bind", "0.0.0.0", "--worker-address", f"127.0.0.1:{worker_port}"
        ),
    ]
    dispatcher, worker = processes
    try:
        line = dispatcher.stdout.readline()
        assert line.startswith(
            f"tf.data service dispatcher listening on every interface at port {port}, no authentication: "
        ), dispatcher.stderr.read()
        assert "data.service_address: grpc://" in line and "grpc://localhost:" not in line  # others' name for it
        assert f":{port} --port {port + 1} --bind 0.0.0.0`" in line  # a worker started again keeps its address
        said = _first_line(worker)
        assert said.startswith(
            f"tf.data service worker listening on every interface at port {worker_port}, no authentication "
            f"(trainers reach it at 127.0.0.1:{worker_port})"
        ), said + _stderr_of(worker)

        dataset, _ = build_pipeline(_with_data(config, service_address=alone_address), items, tokenizer, training=True)
        assert _examples(dataset)[0] == local_epoch[0]
        # With dynamic sharding the dispatcher process builds the graph to split it when an epoch
        # starts, so where the [tfio] extra decodes compressed audio it must know tensorflow-io's
        # ops too: an iterator is enough (with no worker there, no batch would come). Without them:
        # "Op type not registered 'IO>AudioDecodeFlac'". Without the extra the graph holds core ops.
        import tensorflow as tf

        from xtts_cli.data.audio_codecs import compressed_decoder
        from xtts_cli.data.service import distribute_batches

        iterator = None
        if compressed_decoder() == "tensorflow-io":
            import tensorflow_io as tfio

            flac = (DATA / "dataset" / "wavs" / "flac16.flac").read_bytes()
            decoded = tf.data.Dataset.from_tensors(tf.constant(flac)).map(
                lambda contents: tfio.audio.decode_flac(contents, dtype=tf.int16)
            )
            iterator = iter(distribute_batches(decoded, f"localhost:{port}", sharding="dynamic", job="xtts-ops-check"))
        del iterator, dataset
        gc.collect()

        worker.send_signal(signal.SIGTERM)
        dispatcher.send_signal(signal.SIGINT)
        assert worker.wait(timeout=30) == 0, worker.stderr.read()
        assert dispatcher.wait(timeout=30) == 0, dispatcher.stderr.read()
        # A worker stopping says that its dispatcher keeps it listed, and how to go on.
        said = worker.stderr.read()
        assert f"stopping; grpc://{alone_address} still lists this worker, and a training started from now on" in said
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
            process.stderr.close()
        alone.stop()


def _worker_process(dispatcher: str, port: int = 0) -> tuple[subprocess.Popen, str]:
    """`xtts data-service worker` in a process of its own (a worker that can crash), once it
    listens, and the address trainers reach it at."""
    worker = subprocess.Popen(
        [sys.executable, "-m", "xtts_cli", "data-service", "worker", "--dispatcher", dispatcher]
        + ["--port", str(port), "--bind", "0.0.0.0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )
    line = worker.stdout.readline()
    assert line.startswith("tf.data service worker listening"), worker.stderr.read()
    return worker, line.split("trainers reach it at ", 1)[1].split(")", 1)[0]


def _killed(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.communicate(timeout=30)


def test_what_the_service_answers_a_trainer_that_waits(service) -> None:
    """Why no batch comes, as a trainer waiting for one says it: a dispatcher with no workers, one
    whose workers all answer, and none at all."""
    from xtts_cli.data.service import bound_port, start_dispatcher, start_worker, why_no_batches

    alone = start_dispatcher(0)
    try:
        address = f"localhost:{bound_port(alone)}"
        assert why_no_batches(address) == (  # with a fixed --port, as docs/scaling.md asks of workers
            f"its dispatcher at {address} has no workers; start one with `xtts data-service worker --dispatcher "
            f"{address} --port 5051 --bind 0.0.0.0` (one that ran before the dispatcher restarted: restart it)"
        )
    finally:
        alone.stop()
    workers = sorted(f"localhost:{bound_port(worker)}" for worker in service["workers"])
    answer = why_no_batches(service["address"])
    said = (
        ") answer but have sent none: each skips each clip it cannot read without a word, so check that their machines"
    )
    assert answer.startswith("its 2 workers (") and said in answer, answer
    assert all(worker in answer for worker in workers)
    alone = start_dispatcher(0)
    address = f"localhost:{bound_port(alone)}"
    worker = start_worker(address)
    try:  # one worker is one ("its 1 worker ... answer but sent none; their own output" had been said)
        one = f"localhost:{bound_port(worker)}"
        assert why_no_batches(address) == (
            f"its worker ({one}) answers but has sent none: it skips each clip it cannot read without a word, so check "
            "that its machine has the audio at the paths this training's config gives (any other error is in its own output)"
        )
    finally:
        worker.stop()
        alone.stop()
    port = _free_port()
    assert why_no_batches(f"grpc://localhost:{port}", timeout=2).startswith(
        f"its dispatcher at localhost:{port} does not answer (UNAVAILABLE); restart it with the --work-dir it had"
    )


@pytest.mark.slow
def test_a_wait_for_a_dead_worker_says_why_ends_on_stop_and_its_restart_ends_it(sample) -> None:
    """The real fault: the only worker is killed mid-epoch. TensorFlow's client would wait inside C++
    for ever; read through ServedBatches the wait is told (the dead worker named, with the command
    that brings it back), ends once `stop()` says so, and the worker restarted at its port delivers
    the job's batches again."""
    from xtts_cli.data.pipeline import build_pipeline
    from xtts_cli.data.service import ServedBatches, bound_port, start_dispatcher

    config, items, tokenizer = sample
    dispatcher = start_dispatcher(0)
    address = f"localhost:{bound_port(dispatcher)}"
    worker, worker_address = _worker_process(address)
    port = int(worker_address.rsplit(":", 1)[1])
    notes: list[str] = []
    stopping = {"now": False}

    def note(text: str) -> None:
        notes.append(text)
        stopping["now"] = len(notes) == 1  # the first time told, the caller stops

    try:
        dataset, _ = build_pipeline(_with_data(config, service_address=address), items, tokenizer, training=True)
        # Repeated, as training reads it: the epoch the worker died in may end short.
        repeated = iter(dataset.repeat())
        served = ServedBatches(lambda: repeated, address, stop=lambda: stopping["now"], note=note, quiet_seconds=1)
        next(served)
        _killed(worker)
        with pytest.raises(StopIteration):
            while True:  # the batches it had made, then the wait
                next(served)
        assert served.abandoned and len(notes) == 1
        assert notes[0] == (
            f"no batch from the tf.data service for 1 s: the worker its dispatcher lists ({worker_address}) does not "
            f"answer; restart it at its port, `xtts data-service worker --dispatcher {address} --port {port} "
            "--bind 0.0.0.0` (a dispatcher never forgets a worker: to go on without it, restart the dispatcher and "
            "its other workers)"
        )
        stopping["now"] = False
        worker, _ = _worker_process(address, port)
        assert int(next(served)["mel_lengths"][0]) > 0  # the job goes on
        served.close()
    finally:
        _killed(worker)
        gc.collect()
        dispatcher.stop()


@pytest.mark.slow
def test_a_dispatcher_gone_before_the_iterator_is_made_is_a_wait_that_says_why_and_ends_on_stop(sample) -> None:
    """The real fault: the dispatcher stops between the pipeline's build and its iterator. Making
    the iterator asks the dispatcher, and TensorFlow waits for it inside C++: made on the caller's
    thread, a trainer hung there for good, deaf to Ctrl-C and SIGTERM, with no note."""
    from xtts_cli.data.pipeline import build_pipeline
    from xtts_cli.data.service import ServedBatches, bound_port, start_dispatcher

    config, items, tokenizer = sample
    dispatcher = start_dispatcher(0)
    address = f"localhost:{bound_port(dispatcher)}"
    worker, _ = _worker_process(address)
    notes: list[str] = []
    try:
        dataset, _ = build_pipeline(_with_data(config, service_address=address), items, tokenizer, training=True)
        dispatcher.stop()
        made = time.monotonic()
        served = ServedBatches(
            lambda: iter(dataset), address, stop=lambda: bool(notes), note=notes.append, quiet_seconds=1
        )
        assert time.monotonic() - made < 1  # the caller's thread is free: a signal is heard
        with pytest.raises(StopIteration):
            next(served)
        assert served.abandoned and len(notes) == 1
        assert notes[0].startswith(
            f"no batch from the tf.data service for 1 s: its dispatcher at {address} does not answer"
        )
        served.close()
    finally:
        _killed(worker)
        gc.collect()


@pytest.mark.slow
def test_a_dispatcher_restarted_without_its_work_dir_is_a_lost_job_said_in_one_line(sample) -> None:
    """The real fault: the dispatcher restarted at its port mid-job, without --work-dir. Its client
    raised TensorFlow's NotFoundError ("Unknown iteration client id"), a traceback to the user."""
    from xtts_cli.data.pipeline import build_pipeline
    from xtts_cli.data.service import ServedBatches, bound_port, start_dispatcher
    from xtts_cli.errors import XttsError

    config, items, tokenizer = sample
    dispatcher = start_dispatcher(0)
    port = bound_port(dispatcher)
    address = f"localhost:{port}"
    worker, _ = _worker_process(address)
    again = None
    try:
        dataset, _ = build_pipeline(_with_data(config, service_address=address), items, tokenizer, training=True)
        repeated = dataset.repeat()
        served = ServedBatches(lambda: iter(repeated), address, stop=lambda: False, note=lambda text: None)
        next(served)
        dispatcher.stop()
        again = start_dispatcher(port)
        with pytest.raises(XttsError) as lost:
            for _ in range(10_000):
                next(served)
        assert str(lost.value).startswith(f"the tf.data service's dispatcher at {address} restarted and no longer")
        assert lost.value.hint.startswith("run the same command to resume from the run's last checkpoint")
        served.close()
    finally:
        _killed(worker)
        gc.collect()
        if again is not None:
            again.stop()


@pytest.mark.slow
def test_ctrl_c_while_training_waits_for_a_dead_worker_saves_and_exits_130(tmp_path) -> None:
    """`xtts train` reading from the service, its only worker killed: Ctrl-C ends the wait as it ends
    a step (TensorFlow's client alone waited inside C++ for ever, deaf to Ctrl-C and SIGTERM), and
    the steps it trained are saved for the same command to resume."""
    from xtts_cli.data.service import bound_port, start_dispatcher

    dispatcher = start_dispatcher(0)
    address = f"localhost:{bound_port(dispatcher)}"
    worker, _ = _worker_process(address)
    run = tmp_path / "run"
    config = tiny_config(tmp_path, "  max_steps: 100000")
    args = ["train", "-c", str(config), "-r", str(run), "--set", f"data.service_address={address}"]
    trainer = start_xtts([*args, "--set", "data.preprocessing_mode=runtime"], tmp_path, ctrl_c=True)
    try:
        wait_for_records(trainer, run / "metrics.jsonl", lambda lines: len(lines) >= 2)
        _killed(worker)
        time.sleep(5)  # the batches made before, then the wait
        trainer.send_signal(signal.SIGINT)
        out, err = trainer.communicate(timeout=60)
    finally:
        _killed(worker)
        if trainer.poll() is None:
            trainer.kill()
            trainer.communicate()
        dispatcher.stop()
    assert trainer.returncode == 130, err
    assert f"note: training batches come from the tf.data service at {address}; validation's are made here" in err
    saved = int(err.split("interrupted by SIGINT: saved step ", 1)[1].split()[0])
    assert (run / "checkpoints" / f"ckpt-{saved}.index").is_file()
    # The wait is said as a wait, not left in the wall clock as "validation, checkpoints, samples".
    waited = re.search(
        r"then waited ([\d.,]+) s for the next batch, which had not come when SIGINT stopped the run", out
    )
    assert waited and float(waited[1].replace(",", "")) >= 4, out


@pytest.mark.slow
def test_a_dispatcher_that_forgot_the_job_ends_training_with_its_trained_steps_saved(tmp_path) -> None:
    """The real fault: the dispatcher restarted at its port mid-training without --work-dir. The run
    failed with 'run the same command to resume from the last checkpoint' and had saved none: the
    steps it trained, with the model intact, were lost."""
    from xtts_cli.data.service import bound_port, start_dispatcher

    dispatcher = start_dispatcher(0)
    port = bound_port(dispatcher)
    address = f"localhost:{port}"
    worker, _ = _worker_process(address)
    run, again = tmp_path / "run", None
    config = tiny_config(tmp_path, "  max_steps: 100000\n  save_step: 100000")
    args = ["train", "-c", str(config), "-r", str(run), "--set", f"data.service_address={address}"]
    trainer = start_xtts([*args, "--set", "data.preprocessing_mode=runtime"], tmp_path)
    try:
        wait_for_records(trainer, run / "metrics.jsonl", lambda lines: len(lines) >= 2)
        dispatcher.stop()
        again = start_dispatcher(port)
        out, err = trainer.communicate(timeout=240)
    finally:
        _killed(worker)
        if trainer.poll() is None:
            trainer.kill()
            trainer.communicate()
        if again is not None:
            again.stop()
    assert trainer.returncode == 1, err
    assert f"the tf.data service's dispatcher at {address} restarted and no longer knows" in err, err[-3000:]
    saved = int(err.split("trained before the error below: saved it", 1)[0].rsplit("step ", 1)[1].split()[0])
    assert saved >= 2 and (run / "checkpoints" / f"ckpt-{saved}.index").is_file(), err


def test_a_worker_address_is_a_host_or_host_port_of_the_port_it_listens_on() -> None:
    from xtts_cli.data.service import worker_host_port
    from xtts_cli.errors import UsageError

    assert worker_host_port("10.0.0.7", 5051) == ("10.0.0.7", 5051)
    assert worker_host_port("10.0.0.7:5051", 5051) == worker_host_port("10.0.0.7:5051", 0) == ("10.0.0.7", 5051)
    assert worker_host_port("[::1]:5051", 0) == ("::1", 5051) and worker_host_port("fe80::1", 0) == ("fe80::1", 0)
    for value, said in [
        ("10.0.0.7:5052", "--worker-address 10.0.0.7:5052 says port 5052, --port 5051"),
        ("10.0.0.7:70000", "--worker-address '10.0.0.7:70000': port 70000 is not one"),
        ("grpc://10.0.0.7", "--worker-address 'grpc://10.0.0.7' is not a host or HOST:PORT"),
        ("", "--worker-address '' is not a host or HOST:PORT"),
    ]:
        with pytest.raises(UsageError) as refused:
            worker_host_port(value, 5051)
        assert refused.value.lines[0].startswith(said), refused.value.lines


def test_a_dispatcher_address_that_does_not_parse_is_a_usage_error(runner) -> None:
    from xtts_cli.cli.app import app

    for address in ("grpc://localhost", "localhost:0"):
        result = runner.invoke(app, ["data-service", "worker", "--dispatcher", address, "--bind", "0.0.0.0"])
        assert result.exception.exit_code == 2, result.output  # as --set data.service_address=localhost is
        assert result.exception.lines[0].startswith(f"--dispatcher {address!r} is not a tf.data service address")


def test_worker_cli_refuses_a_dispatcher_that_is_not_there(runner) -> None:
    from xtts_cli.cli.app import app

    port = _free_port()
    result = runner.invoke(app, ["data-service", "worker", "--dispatcher", f"localhost:{port}", "--bind", "0.0.0.0"])
    assert result.exit_code == 1
    assert isinstance(result.exception, XttsError)
    assert result.exception.lines == [
        f"--dispatcher 'localhost:{port}': nothing answers at localhost:{port}; start one there with "
        f"`xtts data-service dispatcher --port {port} --bind 0.0.0.0`"
    ]


def test_diagnose_recommends_the_service_only_when_input_bound_on_saturated_cpus(sample) -> None:
    config = sample[0]

    def finding(cfg=config, x=40.0, y=100.0, busy=1.9, cores=2):
        return data_service_finding(cfg, pipeline_rate=x, model_rate=y, cores_busy=busy, cpu_count=cores)

    found = finding()
    assert found is not None and found.id == "data-service"
    assert "1.9 of 2 cores busy" in found.message and "data.service_address" in found.message
    assert "about 3 worker(s)" in found.message  # 100 / 40 samples/s, rounded up
    assert finding(busy=1.0) is None  # cores to spare: a local setting can still help
    assert finding(x=99.0) is None  # not input-bound (1 %)
    assert finding(cfg=_with_data(config, use_tf_native_loading=False)) is None  # the service cannot run it
    assert finding(cfg=_with_data(config, service_address="grpc://d:5050")) is None  # already served


def test_diagnose_names_an_unreachable_service_and_skips_the_timings(runner, write_config) -> None:
    import json

    from xtts_cli.cli.app import app

    port = _free_port()
    config = write_config(f"data:\n  service_address: localhost:{port}\n  preprocessing_mode: runtime\n")
    result = runner.invoke(app, ["diagnose", "--config", str(config), "--json"])
    assert result.exit_code == 1, result.output
    payload = json.loads(result.stdout)
    first = payload["findings"][0]
    assert first["id"] == "data-service-unreachable" and f"localhost:{port}" in first["message"]
    assert payload["pipeline_samples_per_sec"] is None
    assert any("timings were skipped" in note for note in payload["notes"])
    # validate asks it too (it had said valid: its module needs no TensorFlow now), as train would refuse it.
    validated = runner.invoke(app, ["validate", "--config", str(config), "--json"])
    assert validated.exit_code == 1, validated.output
    (said,) = [f for f in json.loads(validated.stdout)["findings"] if f["id"] == "data-service-unreachable"]
    assert said["severity"] == "error" and said["message"] == first["message"]


def test_validate_warns_of_a_dispatcher_with_no_worker_and_says_who_makes_the_batches(runner, write_config) -> None:
    from xtts_cli.cli.app import app
    from xtts_cli.data.service import bound_port, start_dispatcher, start_worker

    # It had said "valid, no findings" and "the pipeline makes mels": a training then waited a
    # minute before it said why no batch came.
    alone = start_dispatcher(0)
    address = f"localhost:{bound_port(alone)}"
    config = write_config(f"data:\n  service_address: {address}\n  preprocessing_mode: runtime\n")
    try:
        validated = runner.invoke(app, ["validate", "--config", str(config), "--json"])
        assert validated.exit_code == 0, validated.output
        payload = json.loads(validated.stdout)
        (said,) = [f for f in payload["findings"] if f["id"] == "data-service-workers"]
        assert said["severity"] == "warning" and f"its dispatcher at {address} has no workers" in said["message"]
        assert payload["settings"]["service_address"] == address
        text = runner.invoke(app, ["validate", "--config", str(config)]).output
        assert f"the tf.data service at {address} makes mels for training; validation's pipeline runs here" in text
        worker = start_worker(address)
        try:  # one that answers: nothing to warn of
            validated = runner.invoke(app, ["validate", "--config", str(config), "--json"])
            assert "data-service-workers" not in validated.stdout, validated.stdout
        finally:
            worker.stop()
    finally:
        alone.stop()


def test_cpu_sampler_reads_the_cores_a_stretch_kept_busy() -> None:
    with CpuSampler() as busy:
        start, cpu = time.perf_counter(), time.process_time()
        while time.perf_counter() < start + 0.6:  # one thread spinning: one core at most
            pass
        # What it got: a core, or less where other processes share the machine.
        got = (time.process_time() - cpu) / (time.perf_counter() - start)
    assert abs(busy.cores_busy(1.0) - got) < 0.35 and busy.cores_busy(1.0) < 1.3  # clipped to the 0.6 s run

    # The window arithmetic, on known samples (wall seconds, CPU seconds): idle 2 s, then 2 cores busy 2 s.
    sampler = CpuSampler()
    sampler.samples = [(0.0, 0.0), (1.0, 0.0), (2.0, 0.0), (3.0, 2.0), (4.0, 4.0)]
    assert sampler.cores_busy(2.0) == pytest.approx(2.0)  # the last 2 s: the timed batches
    assert sampler.cores_busy(0.5) == pytest.approx(2.0)  # raised to MIN_CPU_WINDOW_SECONDS
    assert sampler.cores_busy(3.0) == pytest.approx(4.0 / 3.0)  # 1 idle s dilutes it (interpolated start)
    assert sampler.cores_busy(100.0) == pytest.approx(1.0)  # clipped to the whole run


def test_cpu_sampler_reads_the_cores_another_process_takes_beside_it() -> None:
    from xtts_cli.host import busy_cpu_seconds

    stat = "cpu  9 9 9 9 9 9 9 9 0 0\ncpu0 100 10 50 900 40 5 5 2 0 0\ncpu1 7 0 0 0 0 0 0 0 0 0\nintr 1\n"
    assert busy_cpu_seconds({0}, stat) * os.sysconf("SC_CLK_TCK") == 172  # idle and iowait are not busy
    spinner = subprocess.Popen(
        [sys.executable, "-c", "import time\nend = time.time() + 1.5\nwhile time.time() < end: pass"]
    )
    try:
        with CpuSampler() as sampler:
            time.sleep(1.2)  # this process idles while the other spins
    finally:
        spinner.wait()
    others = sampler.others_busy()
    if others is None:  # a CPU quota: other tenants' cores cannot be told from ours
        assert sampler._cpus is None
        return
    assert others > 0.6 and sampler.cores_busy() < 0.3


@pytest.mark.slow  # the stop it stands for spins a core for 6 s
def test_a_stop_that_holds_the_interpreter_ends_the_service_all_the_same() -> None:
    """A worker's TensorFlow stop that held the GIL had kept it alive past SIGTERM and a second
    Ctrl-C: the timed wait for it never ran again. A stop that holds it here (a regular expression
    that backtracks for ever, which runs without giving the GIL back) stands for it."""
    code = (
        "import re\n"
        "from xtts_cli.cli import data_service\n"
        "data_service.STOP_SECONDS = 1.0\n"
        "class Server:\n"
        "    def stop(self):\n"
        "        re.match(r'(a+)+$', 'a' * 60 + 'b')\n"
        "data_service._serve(Server(), 'listening')\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env()
    )
    try:
        assert process.stdout.readline() == "listening\n"
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 1 and stderr == "stopping\n", stderr


def test_a_server_open_to_the_network_starts_only_when_asked_for(runner) -> None:
    """TensorFlow's tf.data servers bind every interface, with no authentication and no option for
    one address: without --bind they do not start, and nothing listens."""
    from xtts_cli.cli.app import app

    for command in (["dispatcher", "--port", "0"], ["worker", "--dispatcher", "localhost:1"]):
        result = runner.invoke(app, ["data-service", *command])
        assert isinstance(result.exception, XttsError)
        assert "would listen on every network interface" in result.exception.lines[0]
        assert "--bind 0.0.0.0" in result.exception.hint and "SSH tunnel" in result.exception.hint
        narrowed = runner.invoke(app, ["data-service", *command, "--bind", "127.0.0.1"])
        assert isinstance(narrowed.exception, XttsError)
        assert "cannot be held to 127.0.0.1" in narrowed.exception.lines[0]
        # An empty one is named (the line had ended "cannot be held to ", naming nothing).
        empty = runner.invoke(app, ["data-service", *command, "--bind", ""])
        assert empty.exception.lines[0].startswith("--bind is empty: "), empty.exception.lines


def test_the_host_others_are_told_to_reach_is_no_loopback_name(monkeypatch) -> None:
    # Where /etc/hosts maps the machine's name to 127.0.0.1 (a container's), getfqdn answers
    # "localhost": the dispatcher had told the workers on other machines to reach it there.
    import socket

    from xtts_cli.data.service import default_worker_host, this_host

    assert this_host() not in ("localhost", "::1") and not this_host().startswith("127.")
    monkeypatch.setattr(socket, "getfqdn", lambda *name: "localhost")
    monkeypatch.setattr(socket, "gethostname", lambda: "localhost")
    # Then the address of the interface the route leaves by, or a placeholder: never "localhost".
    found = this_host(towards="192.0.2.7")
    assert found == "THIS_HOST" or (found.count(".") == 3 and not found.startswith("127.")), found
    assert default_worker_host("localhost:5050") == "localhost"  # the dispatcher on this machine
    assert default_worker_host("0.0.0.0:5050") == "localhost"
    assert default_worker_host("192.0.2.7:5050") == found


@pytest.mark.parametrize(
    "codecs, mode, decoder, refused",
    [
        (["wav_pcm16", "mp3"], "runtime", "soundfile", True),
        (["flac16"], "cache", "soundfile", True),
        (["flac16", "vorbis"], "precompute", "soundfile", False),  # the store's epochs decode no clip
        (["mp3"], "runtime", "tensorflow-io", False),  # graph ops a worker runs
        (["wav_pcm16", "wav_float32"], "runtime", "soundfile", False),
    ],
)
def test_a_served_pipeline_never_decodes_compressed_audio_outside_the_graph(codecs, mode, decoder, refused) -> None:
    from xtts_cli.data.service import check_servable

    if not refused:
        check_servable(codecs, mode, decoder=decoder)
        return
    with pytest.raises(XttsError) as caught:
        check_servable(codecs, mode, decoder=decoder)
    compressed = [c for c in codecs if not c.startswith("wav_")]
    assert str(caught.value).startswith(f"data.service_address is set and the clips include {', '.join(compressed)}")
    assert f"which {mode} mode decodes with libsndfile" in str(caught.value)
    assert "data.preprocessing_mode: precompute" in caught.value.hint


def test_input_bound_advice_fits_where_the_batches_come_from() -> None:
    from xtts_cli.config.remedies import input_findings
    from xtts_cli.config.schema import XttsConfig

    def advice(**data) -> list[tuple[str, object]]:
        config = XttsConfig.model_validate({"data": {"num_workers": "auto", **data}})
        found = input_findings(config, "highly_input_bound", 62.0, 2)
        return [(f.id, f.fix.value if f.fix else None) for f in found]

    # From the service: its workers make the batches, whatever preprocessing_mode says ("auto" there is runtime).
    served = advice(service_address="grpc://localhost:5050", preprocessing_mode="runtime")
    assert served == [("input-bound-data-service", None)]
    assert advice(preprocessing_mode="runtime") == [("input-bound-runtime-features", "auto")]
    # Settings that follow the rules: measured, not precompute (slower than memory where cache fits).
    assert advice(preprocessing_mode="cache") == [("input-bound", None)]


@pytest.mark.slow
def test_profile_pipeline_on_a_service_with_no_worker_says_so_and_ends_on_ctrl_c(tmp_path) -> None:
    """TensorFlow's client waits for a worker inside C++, where no signal is heard: profile-pipeline
    (and diagnose's timing of the pipeline) had hung there, deaf to Ctrl-C and SIGTERM, with no word."""

    from xtts_cli.data.service import bound_port, start_dispatcher

    alone = start_dispatcher(0)  # no worker joins it
    command = [sys.executable, "-m", "xtts_cli", "profile-pipeline", "-c", "tiny-cpu", "-n", "4", "--no-stages"]
    command += ["--set", f"data.service_address=grpc://localhost:{bound_port(alone)}"]
    command += ["--set", "data.preprocessing_mode=runtime", "--json"]
    proc = subprocess.Popen(
        command,
        cwd=tmp_path,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal gives it
    )
    try:
        said = ""
        deadline = time.monotonic() + 180
        while "timing 4 batches" not in said and time.monotonic() < deadline:
            said += proc.stderr.readline()
        time.sleep(2)  # waiting for a batch no worker sends
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()  # one that hung is no one's
    assert proc.returncode == 130
    assert json.loads(stdout)["error"] == "interrupted (Ctrl-C)"


@pytest.mark.slow
def test_profile_step_on_a_service_with_no_worker_ends_on_the_first_ctrl_c(tmp_path) -> None:
    """Its batches came from its own source, whose wait never heard the loop's signal: a Ctrl-C
    promised a stop that never came, and the wait was said to no one."""
    from xtts_cli.data.service import bound_port, start_dispatcher

    alone = start_dispatcher(0)  # no worker joins it
    address = f"grpc://localhost:{bound_port(alone)}"
    command = ["profile-step", "-c", "tiny-cpu", "--steps", "2", "--json", "--set", f"data.service_address={address}"]
    proc = start_xtts([*command, "--set", "data.preprocessing_mode=runtime"], tmp_path, ctrl_c=True)
    try:
        said, deadline = "", time.monotonic() + 180
        while "then timing 2 step(s)" not in said and time.monotonic() < deadline:
            said += proc.stderr.readline()  # type: ignore[union-attr]
        time.sleep(2)  # waiting for a batch no worker sends
        proc.send_signal(signal.SIGINT)
        stdout, rest = proc.communicate(timeout=60)
    finally:
        proc.kill()  # one that hung is no one's
    assert proc.returncode == 130, said + rest
    assert json.loads(stdout)["error"] == "interrupted (Ctrl-C)"
