"""Training behaviour that needs its own process: signals, and the two-device layouts on the CPU
twin (TensorFlow fixes its device layout once per process)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from training_support import TF_LOG_LINE, run_python, run_xtts, start_xtts, tiny_config, user_env, wait_for_records


@pytest.mark.slow
def test_sigterm_finishes_the_step_saves_and_the_rerun_resumes(tmp_path: Path) -> None:
    config = tiny_config(tmp_path)
    run_dir = tmp_path / "run"
    args = ["train", "-c", str(config), "--run-dir", str(run_dir), "--max-steps", "100000"]
    # As a user runs it: nothing set to quiet TensorFlow, which on its own does log here (the control).
    bare = run_python("import tensorflow as tf; tf.constant(1) + 1", tmp_path, env=user_env())
    assert any(TF_LOG_LINE.match(line) for line in bare.stderr.splitlines()), bare.stderr[-2000:]
    proc = start_xtts(args, tmp_path, env=user_env())
    # 6 log lines (every 2 steps): past the end of the first epoch (36 clips, batches of 4).
    wait_for_records(proc, run_dir / "metrics.jsonl", lambda lines: len(lines) >= 6)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    # A run's output is xtts's own: no TensorFlow start-up lines, no "End of sequence" per epoch.
    leaked = [line for line in stderr.splitlines() if TF_LOG_LINE.match(line) or "End of sequence" in line]
    assert leaked == [], leaked[:5]
    line = next(text for text in stderr.splitlines() if text.startswith("interrupted by SIGTERM"))
    saved = int(line.split("saved step ")[1].split()[0])
    assert saved >= 12
    assert (run_dir / "checkpoints" / f"ckpt-{saved}.index").is_file()
    # The step it saved is the last one logged, whether or not it fell on a log_step.
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if "loss" in r][-1] == saved

    again = run_xtts(
        ["train", "-c", str(config), "--run-dir", str(run_dir), "--max-steps", str(saved + 2), "--json"], tmp_path
    )
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert result["resumed"] and result["start_step"] == saved and result["final_step"] == saved + 2


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
        "error: devices.data_gpu is 0 but this machine has 0 GPUs visible to TensorFlow (available: none)"
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


@pytest.mark.slow
def test_json_keeps_stdout_for_the_result_and_still_says_the_notes(tmp_path: Path) -> None:
    args = ["train", "-c", str(tiny_config(tmp_path)), "--run-dir", str(tmp_path / "run"), "--max-steps", "1"]
    assert run_xtts(args, tmp_path).returncode == 0
    again = run_xtts([*args, "--fresh", "--json"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["final_step"] == 1
    (kept,) = tmp_path.glob("run.old-*")
    assert f"note: --fresh: the old run is kept as {kept}" in again.stderr


@pytest.mark.slow
def test_the_python_api_loads_tensorflow_as_quietly_as_the_command_line(tmp_path: Path) -> None:
    loaded = run_python("from xtts_cli.inference import Synthesizer, XttsError", tmp_path, env=user_env())
    assert loaded.returncode == 0, loaded.stderr
    assert [line for line in loaded.stderr.splitlines() if TF_LOG_LINE.match(line) or "cuInit" in line] == []
