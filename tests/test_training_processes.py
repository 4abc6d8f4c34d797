"""Training behaviour that needs its own process: signals, and the two-device layouts on the CPU
twin (TensorFlow fixes its device layout once per process)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from training_support import TF_LOG_LINE, run_python, run_xtts, start_xtts, tiny_config, user_env, wait_for_records


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One `xtts train` as a user runs it, stopped by SIGTERM past its first epoch, then rerun with
    --json and a changed learning rate (a setting a resume notes, not refuses) to 2 steps further:
    the SIGTERM test and the --json test read the same two processes."""
    tmp = tmp_path_factory.mktemp("interrupted")
    config = tiny_config(tmp)
    run_dir = tmp / "run"
    args = ["train", "-c", str(config), "--run-dir", str(run_dir), "--max-steps", "100000"]
    # As a user runs it: nothing set to quiet TensorFlow (the SIGTERM test's control shows it would log).
    proc = start_xtts(args, tmp, env=user_env())
    # 6 loss records (every 2 steps): past the end of the first epoch (36 clips, batches of 4); a
    # record of the watch, which a loaded machine can draw, is no step.
    wait_for_records(proc, run_dir / "metrics.jsonl", lambda lines: sum('"loss": ' in line for line in lines) >= 6)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    line = next((text for text in stderr.splitlines() if text.startswith("interrupted by SIGTERM")), "")
    saved = int(line.split("saved step ")[1].split()[0]) if "saved step " in line else -1
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    saved_files = (run_dir / "checkpoints" / f"ckpt-{saved}.index").is_file()
    rerun = ["train", "-c", str(config), "--run-dir", str(run_dir), "--max-steps", str(saved + 2), "--json"]
    again = run_xtts([*rerun, "--set", "training.learning_rate=0.002"], tmp)
    return {
        "code": proc.returncode,
        "stderr": stderr,
        "saved": saved,
        "saved_files": saved_files,
        "records": records,
        "again": again,
    }


@pytest.mark.slow
def test_sigterm_finishes_the_step_saves_and_the_rerun_resumes(interrupted: dict, tmp_path: Path) -> None:
    # The control: as a user runs it, nothing set to quiet it, TensorFlow on its own does log here.
    bare = run_python("import tensorflow as tf; tf.constant(1) + 1", tmp_path, env=user_env())
    assert any(TF_LOG_LINE.match(line) for line in bare.stderr.splitlines()), bare.stderr[-2000:]
    stderr = interrupted["stderr"]
    assert interrupted["code"] == 143, stderr
    # A run's output is xtts's own: no TensorFlow start-up lines, no "End of sequence" per epoch.
    leaked = [line for line in stderr.splitlines() if TF_LOG_LINE.match(line) or "End of sequence" in line]
    assert leaked == [], leaked[:5]
    assert "note: SIGTERM: stopping once the step under way ends, and saving it\n" in stderr  # said at once
    saved = interrupted["saved"]
    assert saved >= 12, stderr[-2000:]
    assert interrupted["saved_files"]
    # The step it saved is the last one logged, whether or not it fell on a log_step.
    assert [r["step"] for r in interrupted["records"] if "loss" in r][-1] == saved

    again = interrupted["again"]
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert result["resumed"] and result["start_step"] == saved and result["final_step"] == saved + 2


@pytest.mark.slow
def test_a_closed_terminal_saves_the_step_though_the_output_has_nowhere_to_go(tmp_path: Path) -> None:
    # A terminal closed (SSH gone) sends SIGHUP; the pipe of `| tee`, ended by the same Ctrl-C, takes no
    # more output. Each had ended the run unsaved: SIGHUP's default, and the error of the next write.
    run_dir = tmp_path / "run"
    args = ["train", "-c", str(tiny_config(tmp_path)), "--run-dir", str(run_dir), "--max-steps", "100000"]
    proc = start_xtts(args, tmp_path)
    losses = lambda lines: sum('"loss": ' in line for line in lines)  # noqa: E731
    wait_for_records(proc, run_dir / "metrics.jsonl", lambda lines: losses(lines) >= 2)
    proc.stdout.close()  # the reader is gone: the next line written is EPIPE
    proc.stderr.close()
    wait_for_records(proc, run_dir / "metrics.jsonl", lambda lines: losses(lines) >= 4)  # lines said meanwhile
    proc.send_signal(signal.SIGHUP)
    assert proc.wait(120) == 129
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    saved = max(int(path.name[5:].split(".")[0]) for path in (run_dir / "checkpoints").glob("ckpt-*.index"))
    assert [r["step"] for r in records if "loss" in r][-1] == saved >= 8


@pytest.mark.slow
def test_model_gpu_that_does_not_exist_fails_before_any_work(tmp_path: Path) -> None:
    proc = run_xtts(
        [
            "train",
            "-c",
            str(tiny_config(tmp_path)),
            "--data-gpu",
            "0",
            "--model-gpu",
            "1",
            "--run-dir",
            str(tmp_path / "run"),
        ],
        tmp_path,
    )
    assert proc.returncode == 4  # a device that does not exist (docs/training.md's exit codes)
    assert (
        "error: devices.data_gpu is 0 and devices.model_gpu is 1 but this machine has 0 GPUs visible to TensorFlow (available: none)"
        in proc.stderr
    )
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "run").exists()


PLACEMENT_PROBE = """
import json, sys
from xtts_cli.config import resolve_config
from xtts_cli.training.controller import Controller
from xtts_cli.training.trainer import Trainer
config = resolve_config(sys.argv[1] if len(sys.argv) > 1 else {config!r}, {{"training.max_steps": 4}}).config
trainer = Trainer(config, run_dir={run_dir!r})
result = Controller(trainer).run()
parts = trainer.parts
report = {{"final_step": result.final_step, "last_loss": result.last_loss, "plan": result.device_plan,
          "replicas": parts.strategy.num_replicas_in_sync}}
variable = parts.models.model.trainable_variables[0]
inner = getattr(variable, "value", variable)  # Keras 3 wraps the tf.Variable (or MirroredVariable)
report["variable_devices"] = sorted(v.device for v in getattr(inner, "values", [inner]))
if parts.steps.featurize is not None:
    handed = next(iter(parts.input.train_ds))
    batch = parts.steps.featurize(handed)
    report["dtypes"] = [handed["audio"].dtype.name, batch["mel"].dtype.name]
    report["feature_device"] = batch["mel"].device
    report["loss_device"] = parts.steps.train(batch)["loss"].device
if parts.strategy.num_replicas_in_sync > 1:
    # One validation clip on two replicas: one of them has none. The loss is that clip's.
    one = parts.input.eval_ds.unbatch().take(1).batch(1)
    spread = [parts.steps.eval(batch)["loss"] for batch, _ in parts.steps.batches(one)]
    with parts.strategy.scope():
        alone = parts.models.eval_step(next(iter(one)))["loss"]
    report["one_clip"] = [float(spread[0]), float(alone)]
print(json.dumps(report))
"""


def _probe(tmp_path: Path, devices: str) -> dict:
    config = tiny_config(tmp_path, extra=devices)
    code = PLACEMENT_PROBE.format(config=str(config), run_dir=str(tmp_path / "run"))
    proc = run_python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_data_model_split_places_features_and_model_where_asked(tmp_path: Path) -> None:
    report = _probe(tmp_path, "devices:\n  logical_cpu_devices: 2\n  data_gpu: 0\n  model_gpu: 1\n")
    assert report["plan"].startswith("data on /device:CPU:0, model on /device:CPU:1; ")
    # The cache hands its 16-bit samples over; the featurizer scales them on the data device.
    assert report["dtypes"] == ["int16", "float32"]
    assert report["feature_device"].endswith("device:CPU:0")
    assert all(d.endswith("device:CPU:1") for d in report["variable_devices"])
    assert report["loss_device"].endswith("device:CPU:1")
    assert report["final_step"] == 4 and report["last_loss"] == report["last_loss"]  # finite, not NaN


@pytest.mark.slow
def test_split_with_data_index_above_model_index(tmp_path: Path) -> None:
    report = _probe(tmp_path, "devices:\n  logical_cpu_devices: 2\n  data_gpu: 1\n  model_gpu: 0\n")
    assert report["feature_device"].endswith("device:CPU:1")
    assert all(d.endswith("device:CPU:0") for d in report["variable_devices"])


@pytest.mark.slow
def test_mirrored_trains_one_replica_per_device(tmp_path: Path) -> None:
    report = _probe(tmp_path, "devices:\n  logical_cpu_devices: 2\n  strategy: mirrored\n")
    assert report["replicas"] == 2
    assert report["plan"].startswith("mirrored over /device:CPU:0, /device:CPU:1; ")
    assert [d.rsplit("/", 1)[-1] for d in report["variable_devices"]] == ["device:CPU:0", "device:CPU:1"]
    assert report["final_step"] == 4 and report["last_loss"] == report["last_loss"]
    assert report["one_clip"][0] == pytest.approx(report["one_clip"][1], rel=1e-5)


@pytest.mark.slow
def test_json_keeps_stdout_for_the_result_and_still_says_the_notes(interrupted: dict) -> None:
    # The rerun of the shared run, with --json and a changed learning rate, in a process of its own.
    again = interrupted["again"]
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["final_step"] == interrupted["saved"] + 2  # stdout is the result alone
    note = "note: resuming with settings changed since the run's last start: training.learning_rate (0.003 -> 0.002)"
    assert note in again.stderr.splitlines(), again.stderr[-2000:]
    # Fewer steps than the first start planned: the schedule follows them, and says so.
    steps = f"note: training.max_steps 100000 -> {interrupted['saved'] + 2}: the learning-rate schedule now spans"
    assert any(line.startswith(steps) for line in again.stderr.splitlines()), again.stderr[-2000:]


@pytest.mark.slow
def test_the_python_api_loads_tensorflow_as_quietly_as_the_command_line(tmp_path: Path) -> None:
    loaded = run_python("from xtts_cli.inference import Synthesizer, XttsError", tmp_path, env=user_env())
    assert loaded.returncode == 0, loaded.stderr
    assert [line for line in loaded.stderr.splitlines() if TF_LOG_LINE.match(line) or "cuInit" in line] == []


def test_a_signal_after_the_last_step_promises_no_step_after_it() -> None:
    # Met after the loop (the last save, the samples), it had promised to stop "after the next step",
    # then said nothing more: the run ended complete.
    import os
    import time

    from xtts_cli.training.signals import GracefulInterrupt

    said: list[str] = []
    for ending in (False, True):
        with GracefulInterrupt(said=said.append, together=True) as interrupt:
            interrupt.ending = ending
            os.kill(os.getpid(), signal.SIGTERM)  # a real signal, to this process's handler
            time.sleep(0.1)
        assert interrupt.signal_name == "SIGTERM"
    assert said == [
        "SIGTERM: stopping after the next step, with the cluster's other workers, and saving it",
        "SIGTERM: the last step is trained: saving it, then stopping",
    ]
