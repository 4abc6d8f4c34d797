"""Multi-worker training (devices.strategy: multi_worker): the cluster checks, and two real worker
processes on loopback training the tiny model together, then resuming and stopping together."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from training_support import subprocess_env, tiny_config

from xtts_cli.cli.app import app
from xtts_cli.devices.placement import cluster_from_environment, cluster_from_flags, parse_tf_config
from xtts_cli.errors import XttsError
from xtts_cli.training.metrics import read_metrics

SAMPLE = Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample"

TWO = {"cluster": {"worker": ["localhost:2001", "localhost:2002"]}, "task": {"type": "worker", "index": 1}}


def _error(call, *args) -> str:
    with pytest.raises(XttsError) as caught:
        call(*args)
    return str(caught.value)


def test_tf_config_gives_the_cluster_and_this_task() -> None:
    cluster = parse_tf_config(json.dumps(TWO))
    assert cluster.tasks == ("localhost:2001", "localhost:2002")
    assert (cluster.worker_index, cluster.num_workers, cluster.is_chief) == (1, 2, False)
    with_chief = {"cluster": {"chief": ["a:1"], "worker": ["b:1", "c:1"]}, "task": {"type": "worker", "index": 0}}
    cluster = parse_tf_config(json.dumps(with_chief))
    # TensorFlow's order: the chief is task 0, then the workers; worker 0 is not the chief here.
    assert (cluster.tasks, cluster.worker_index, cluster.is_chief) == (("a:1", "b:1", "c:1"), 1, False)
    assert parse_tf_config(cluster.to_tf_config()) == cluster


@pytest.mark.parametrize(
    "value, message",
    [
        (
            "{cluster: 1}",
            "TF_CONFIG is not JSON (Expecting property name enclosed in double quotes at character 1): {cluster: 1}",
        ),
        (
            json.dumps({"cluster": {"worker": ["a:1"]}}),
            'TF_CONFIG needs a "cluster" object and a "task" object: {"cluster": {"worker": ["a:1"]}}',
        ),
        (
            json.dumps({**TWO, "task": {"type": "worker", "index": 2}}),
            "TF_CONFIG's task.index is 2 but cluster.worker has 2 task(s) (indices 0-1)",
        ),
        (
            json.dumps({**TWO, "task": {"type": "ps", "index": 0}}),
            "TF_CONFIG's task.type is 'ps'; it must be one of the cluster's jobs (worker)",
        ),
        (
            json.dumps({"cluster": {"worker": ["a:1"], "ps": ["b:1"]}, "task": {"type": "worker", "index": 0}}),
            'TF_CONFIG\'s cluster has job \'ps\'; multi_worker training runs only "chief" and "worker" tasks',
        ),
        (
            json.dumps({"cluster": {"worker": ["a:1", "b"]}, "task": {"type": "worker", "index": 0}}),
            "TF_CONFIG's cluster.worker has 'b', which is not HOST:PORT (e.g. 10.0.0.5:12345)",
        ),
        (
            json.dumps({"cluster": {"worker": ["a:1", "a:1"]}, "task": {"type": "worker", "index": 0}}),
            "TF_CONFIG's cluster lists a:1 more than once; every worker needs its own port",
        ),
    ],
)
def test_malformed_tf_config_is_one_clear_error(value: str, message: str) -> None:
    with pytest.raises(XttsError) as caught:
        parse_tf_config(value)
    assert str(caught.value) == message
    assert "TF_CONFIG like {" in caught.value.hint and "--worker-hosts" in caught.value.hint


def test_worker_flags_are_checked_and_must_agree_with_tf_config() -> None:
    cluster = cluster_from_flags("localhost:2001,localhost:2002", 1, None)
    assert json.loads(cluster.to_tf_config()) == TWO
    assert cluster_from_flags("localhost:2001,localhost:2002", 1, json.dumps(TWO)) == cluster
    assert _error(cluster_from_flags, "localhost:2001,localhost:2002", 2, None) == (
        "--task-index is 2 but --worker-hosts lists 2 worker(s) (indices 0-1)"
    )
    assert _error(cluster_from_flags, "localhost:2001", None, None) == "--worker-hosts is given without --task-index"
    assert _error(cluster_from_flags, "localhost:2001,localhost", 0, None) == (
        "--worker-hosts 'localhost:2001,localhost' has 'localhost', which is not HOST:PORT (e.g. 10.0.0.5:12345)"
    )
    assert _error(cluster_from_flags, "localhost:2001,localhost:2002", 0, json.dumps(TWO)) == (
        "--worker-hosts/--task-index say task 0 of localhost:2001,localhost:2002 but TF_CONFIG says task 1 of "
        "localhost:2001,localhost:2002"
    )


def test_multi_worker_without_a_cluster_fails_before_tensorflow(runner, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("TF_CONFIG", raising=False)
    assert _error(cluster_from_environment, {}) == (
        "devices.strategy is multi_worker but no cluster is given (TF_CONFIG is not set)"
    )
    config = tiny_config(tmp_path, extra="devices:\n  strategy: multi_worker\n")
    result = runner.invoke(app, ["train", "-c", str(config), "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 1 and isinstance(result.exception, XttsError)
    assert str(result.exception) == "devices.strategy is multi_worker but no cluster is given (TF_CONFIG is not set)"
    result = runner.invoke(app, ["train", "-c", str(config), "--worker-hosts", "localhost:2001", "--task-index", "1"])
    assert result.exception.exit_code == 2  # a command line whose values do not agree, as Typer's usage errors
    assert str(result.exception) == "--task-index is 1 but --worker-hosts lists 1 worker(s) (indices 0-0)"
    assert not (tmp_path / "run").exists()
    # In a fresh process: the refusal comes before TensorFlow is imported (no seconds lost to it).
    code = (
        "import sys; from typer.testing import CliRunner; from xtts_cli.cli.app import app; "
        f"r = CliRunner().invoke(app, ['train', '-c', {str(config)!r}]); "
        "print(r.exit_code, type(r.exception).__name__, 'tensorflow' in sys.modules)"
    )
    env = subprocess_env()
    env.pop("TF_CONFIG", None)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.stdout.split() == ["1", "XttsError", "False"], proc.stderr


def test_a_worker_whose_port_is_taken_and_a_cluster_under_another_strategy_fail_before_tensorflow(
    runner, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("TF_CONFIG", "")  # recorded, so the one --worker-hosts writes is undone after the test
    config = tiny_config(tmp_path)
    with socket.create_server(("127.0.0.1", 0)) as held:  # a real listener on the worker's port
        port = held.getsockname()[1]
        hosts = f"localhost:{port},localhost:{_free_ports(1)[0]}"
        taken = runner.invoke(app, ["train", "-c", str(config), "--worker-hosts", hosts, "--task-index", "0"])
    # It had been a traceback of TensorFlow's "Could not start gRPC server".
    assert isinstance(taken.exception, XttsError) and taken.exception.lines == [
        f"this worker, task 0 of 2 (chief, localhost:{port}), cannot listen on port {port}: the port is in use "
        "(by another program, or another xtts process)"
    ]
    assert taken.exception.hint == (
        f"give this worker a free port in the cluster's list (localhost:{port} in --worker-hosts or TF_CONFIG), "
        "the same list on every worker"
    )
    monkeypatch.delenv("TF_CONFIG", raising=False)  # the flags wrote it
    # A cluster scheduler's TF_CONFIG under devices.strategy auto had trained alone on each machine.
    monkeypatch.setenv("TF_CONFIG", json.dumps(TWO))
    alone = runner.invoke(app, ["train", "-c", str(config), "--run-dir", str(tmp_path / "run")])
    assert isinstance(alone.exception, XttsError) and alone.exception.lines == [
        "TF_CONFIG names a cluster of 2 workers (localhost:2001, localhost:2002) but devices.strategy is auto, "
        "which trains on this machine alone"
    ]
    assert not (tmp_path / "run").exists()
    # validate knows the cluster's size from TF_CONFIG: a step is every worker's batch.
    sets = ["--set", "devices.strategy=multi_worker"]
    report = json.loads(runner.invoke(app, ["validate", "-c", str(config), *sets, "--json"]).stdout)
    assert report["settings"]["step_batch_size"] == 2 * report["settings"]["global_batch_size"]
    assert "multi-worker-host" not in [f["id"] for f in report["findings"]]  # localhost resolves
    # A host name that does not resolve (a misspelt 127.0.0.l; .invalid never does) is waited for forever by
    # train; validate had said valid.
    hosts = ["--worker-hosts", "127.0.0.1:2001,worker-2.invalid:2002", "--task-index", "0"]
    monkeypatch.delenv("TF_CONFIG")
    misspelt = json.loads(runner.invoke(app, ["validate", "-c", str(config), *hosts, "--json"]).stdout)
    (unresolved,) = [f for f in misspelt["findings"] if f["id"] == "multi-worker-host"]
    assert unresolved["severity"] == "warning" and unresolved["message"].startswith(
        "the host name 'worker-2.invalid' does not resolve here: training waits for a worker there until its name resolves"
    )
    monkeypatch.delenv("TF_CONFIG")
    report = json.loads(runner.invoke(app, ["validate", "-c", str(config), *sets, "--json"]).stdout)
    assert report["settings"]["step_batch_size"] is None  # the cluster is not known here


def test_multi_worker_refuses_a_device_split_or_logical_cpus_in_the_config() -> None:
    from xtts_cli.config import resolve_config
    from xtts_cli.errors import ConfigError

    for overrides in ({"devices.logical_cpu_devices": 2}, {"devices.data_gpu": 0, "devices.model_gpu": 1}):
        with pytest.raises(ConfigError) as caught:
            resolve_config(None, {"devices.strategy": "multi_worker", **overrides})
        what = "logical_cpu_devices" if "devices.logical_cpu_devices" in overrides else "data_gpu/model_gpu"
        assert f"cannot be combined with {what}; remove {what}, or set strategy: auto" in str(caught.value)


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("localhost", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _start_workers(
    config: Path,
    run_dir: Path,
    max_steps: int,
    tmp: Path,
    extra: tuple[list[str], ...] = ([], []),
    lists: tuple[str, str] | None = None,
) -> list[subprocess.Popen]:
    """Two workers of one --worker-hosts list (or each of its own of `lists`)."""
    hosts = ",".join(f"localhost:{port}" for port in _free_ports(2))
    # Each worker's scratch checkpoints go to the system temp dir: pointed here so the test can see
    # that none is left behind.
    env = {**subprocess_env(), "TMPDIR": str(tmp)}
    env.pop("TF_CONFIG", None)
    return [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "xtts_cli",
                "train",
                "-c",
                str(config),
                "--run-dir",
                str(run_dir),
                "--max-steps",
                str(max_steps),
                "--worker-hosts",
                lists[index] if lists else hosts,
                "--task-index",
                str(index),
                "--json",
                *extra[index],
            ],
            cwd=run_dir.parent,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(2)
    ]


def _finish(workers: list[subprocess.Popen], timeout: float = 240) -> list[tuple[int, dict, str]]:
    """(exit code, JSON result or {}, stderr) of each worker; kills both if either is stuck."""
    deadline = time.monotonic() + timeout
    outcomes = []
    try:
        for proc in workers:
            stdout, stderr = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            outcomes.append((proc.returncode, json.loads(stdout) if stdout.strip() else {}, stderr))
    finally:
        for proc in workers:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return outcomes


def _checkpoint_steps(run_dir: Path) -> set[int]:
    return {int(p.name.split("-")[1].split(".")[0]) for p in (run_dir / "checkpoints").glob("ckpt-*.index")}


@pytest.mark.slow
def test_two_workers_train_together_resume_and_stop_together(tmp_path: Path) -> None:
    # Validation at step 4 too: every worker must run the same eval batches or the collectives hang.
    config = tiny_config(tmp_path)
    config.write_text(config.read_text().replace("val_step: 1000", "val_step: 4"), encoding="utf-8")
    run_dir, tmp = tmp_path / "run", tmp_path / "tmp"
    tmp.mkdir()

    outcomes = _finish(_start_workers(config, run_dir, 4, tmp))
    for code, _result, stderr in outcomes:
        assert code == 0, stderr[-3000:]
    (_, chief, _), (_, worker, _) = outcomes
    assert "task 0 of 2 (chief" in chief["device_plan"] and "task 1 of 2 (worker" in worker["device_plan"]
    assert "2 replicas in sync" in chief["device_plan"]
    assert chief["final_step"] == worker["final_step"] == 4
    # One model: the losses both report are reduced over both workers' replicas.
    assert chief["last_loss"] == worker["last_loss"] and chief["last_val_loss"] == worker["last_val_loss"] is not None
    # One set of checkpoints, written by the chief; the worker's scratch copies are gone.
    files = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    assert files == ["checkpoint", "ckpt-4.data-00000-of-00001", "ckpt-4.index"]
    assert list(tmp.iterdir()) == []
    # metrics.jsonl holds the chief's records only: one per logged step, and the validation at step 4.
    records = [m for m in read_metrics(run_dir / "metrics.jsonl") if "watch" not in m]  # the watch may speak too
    assert [(m["step"], "val_loss" in m) for m in records] == [(2, False), (4, False), (4, True)]

    # Rerun both with more steps: they resume from the chief's checkpoint. A SIGTERM to the non-chief
    # worker then stops both after the same step, and both save it (once, in the run directory).
    config.write_text(config.read_text().replace("val_step: 4", "val_step: 1000"), encoding="utf-8")
    workers = _start_workers(config, run_dir, 10_000, tmp)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and all(p.poll() is None for p in workers):
        if max(record["step"] for record in read_metrics(run_dir / "metrics.jsonl")) >= 6:
            break
        time.sleep(0.2)
    workers[1].send_signal(signal.SIGTERM)
    (chief_code, chief, chief_err), (worker_code, worker, worker_err) = _finish(workers)
    assert (worker_code, chief_code) == (143, 143), chief_err[-3000:] + worker_err[-3000:]
    assert worker["interrupted"] == "SIGTERM" and chief["interrupted"] == "a signal to another worker"
    # The stop is agreed in the next step's reduction: it had said "once the step under way ends".
    assert "SIGTERM: stopping after the next step, with the cluster's other workers, and saving it" in worker_err
    assert chief["resumed"] and worker["resumed"] and chief["start_step"] == worker["start_step"] == 4
    final = chief["final_step"]
    assert worker["final_step"] == final > 6
    assert _checkpoint_steps(run_dir) == {4, final}
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir() if not p.name.startswith("ckpt-")) == [
        "checkpoint"
    ]
    assert list(tmp.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("given", ["batch", "clips", "transcripts"])
def test_workers_given_different_configs_stop_in_one_line_before_the_first_step(tmp_path: Path, given: str) -> None:
    # Another batch size on one: the chief reported a throughput a third too high; other step
    # counts: collectives that never met, and a traceback on each. A copy of the data that lists
    # other clips: each trained the shards of its own list, some clips twice and some never, unsaid.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    if given == "batch":
        second, differ = ["--set", "data.batch_size=2"], "data.batch_size"
    else:
        # Its transcripts edited, one with a character the other copy lacks: a vocabulary of another
        # size had met the chief's weights inside the model's first variable (a traceback), and the
        # same characters in other words had trained each clip on other text on each worker, unsaid.
        other = tmp_path / "other"
        shutil.copytree(SAMPLE, other)
        rows = (other / "metadata.csv").read_text(encoding="utf-8").splitlines()
        rows = rows[:-5] if given == "clips" else [rows[0].replace("|", "|ø "), *rows[1:]]
        (other / "metadata.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
        second, differ = ["--data", str(other)], "the clips each worker's data lists"
    workers = _start_workers(tiny_config(tmp_path), tmp_path / "run", 4, tmp, ([], second))
    for code, result, stderr in _finish(workers):
        assert code == 1 and "Traceback" not in stderr, stderr[-3000:]
        # Which setting: the one each worker was given its own value of (it had named none).
        assert result["error"].startswith(
            f"the workers were given different configs (2 among 2 replicas), differing in {differ}: every"
        ), result["error"]
    assert not list((tmp_path / "run" / "checkpoints").glob("ckpt-*"))
    # The refused start leaves no record of itself: a config.yaml of the refused settings, a start in run.json.
    assert not (tmp_path / "run" / "config.yaml").exists() and not (tmp_path / "run" / "run.json").exists()


@pytest.mark.slow
def test_workers_given_clusters_of_other_sizes_stop_in_one_line(tmp_path: Path) -> None:
    # Each had ended in a 90-line traceback from the model's first variable ("is joining a group with size2").
    first, second, third = _free_ports(3)
    two, three = f"127.0.0.1:{first},127.0.0.1:{second}", f"127.0.0.1:{first},127.0.0.1:{second},127.0.0.1:{third}"
    workers = _start_workers(tiny_config(tmp_path), tmp_path / "run", 2, tmp_path, lists=(two, three))
    for code, result, stderr in _finish(workers):
        assert code == 1 and "Traceback" not in stderr, stderr[-3000:]
        assert result["error"].startswith("the workers were given different clusters, of 2 and of 3 workers"), result
        assert result["hint"].startswith("start every worker with the same --worker-hosts"), result


@pytest.mark.slow
def test_workers_given_different_lists_say_which_address_and_whose_list_names_it(tmp_path: Path) -> None:
    """Each had said to see the other's output, and neither named the cause."""
    first, second, third = _free_ports(3)
    lists = (f"127.0.0.1:{first},127.0.0.1:{second}", f"127.0.0.1:{first},127.0.0.1:{third}")
    workers = _start_workers(tiny_config(tmp_path), tmp_path / "run", 2, tmp_path, lists=lists)
    hints = []
    for code, result, stderr in _finish(workers):
        assert code == 1 and "Traceback" not in stderr, stderr[-3000:]
        hints.append(result["hint"])
    assert hints[0].startswith(f"nothing answers at 127.0.0.1:{second}: check that its worker runs, and that every")
    # The other hears of it as TensorFlow tells it: the address, or at times only that the chief is gone.
    named = f"another worker's list names 127.0.0.1:{second}, which this worker's ({lists[1]}) does not: give every"
    assert hints[1].startswith(named) or hints[1].startswith(
        "see that worker's output for the cause; every worker must be given the same --worker-hosts"
    ), hints[1]


@pytest.mark.slow
def test_a_cluster_of_one_waits_for_nobody_and_says_nothing_of_waiting(tmp_path: Path) -> None:
    # It had said "waiting for the cluster's other worker to start and connect ()".
    code = (
        "from xtts_cli.config.schema import DevicesConfig\n"
        "from xtts_cli.devices.placement import configure_devices\n"
        "plan = configure_devices(DevicesConfig(strategy='multi_worker'), join_cluster=True, say=print)\n"
        "print(plan.kind, plan.cluster.num_workers)\n"
    )
    tf_config = {"cluster": {"worker": [f"localhost:{_free_ports(1)[0]}"]}, "task": {"type": "worker", "index": 0}}
    env = {**subprocess_env(), "TF_CONFIG": json.dumps(tf_config)}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["multi_worker 1"]


@pytest.mark.slow
def test_a_worker_whose_partner_never_starts_says_so_and_stops_when_asked(tmp_path: Path) -> None:
    config = tiny_config(tmp_path)
    mine, partner = _free_ports(2)
    hosts = f"localhost:{mine},worker-2.invalid:{partner}"  # a name that never resolves: waited for, forever
    env = {**subprocess_env(), "TMPDIR": str(tmp_path)}
    env.pop("TF_CONFIG", None)
    command = [sys.executable, "-m", "xtts_cli", "train", "-c", str(config), "--run-dir", str(tmp_path / "run")]
    alone = subprocess.Popen(
        [*command, "--worker-hosts", hosts, "--task-index", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert alone.stderr is not None
        # Blocks until the worker says what it waits for (TensorFlow's own log lines may come first).
        lines = (line for line in alone.stderr if not line.startswith(("E0000", "W0000", "I0000")))
        line = next(lines)
        assert line.startswith("warning: multi-worker-host: the host name 'worker-2.invalid' does not resolve here"), (
            line
        )
        line = next(lines)
        assert line.startswith(
            f"note: waiting for the cluster's other worker to start and connect (worker-2.invalid:{partner})"
        )
        assert "Ctrl-C stops this one (SIGTERM does not until they connect: use kill -INT)" in line
        time.sleep(5)  # inside TensorFlow's wait
        alone.send_signal(signal.SIGINT)
        assert alone.wait(timeout=30) == -signal.SIGINT  # ended by the signal while TensorFlow waits, not hung
    finally:
        alone.kill()
        alone.wait()
