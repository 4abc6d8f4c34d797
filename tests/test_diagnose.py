"""`xtts diagnose`: the checks, the ranking and the exit code, on the bundled speech and the tiny
model, in-process. No timing is asserted; the timed run is checked for sense only."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest
from training_support import tiny_config, undocumented_keys

from xtts_cli.cli.app import app
from xtts_cli.diagnosis.checkup import EAGER_STEP_FINDINGS, RankedFinding, _dedupe, input_bound_share, rank
from xtts_cli.findings import SEVERITY_RANK, ConfigChange


def run_json(runner, *args: str, code: int = 0) -> dict:
    result = runner.invoke(app, ["diagnose", *args, "--json"])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def by_fix(payload: dict) -> dict:
    return {f["fix"]["key"]: f for f in payload["findings"] if f["fix"]}


def test_default_config_quick_has_no_error(runner) -> None:
    payload = run_json(runner, "--quick")
    assert undocumented_keys("diagnose", payload) == [], "add them to docs/json.md (their model's Field)"
    assert payload["quick"] is True
    assert not [f for f in payload["findings"] if f["severity"] == "error"]
    for key in ("input_bound_percent", "pipeline_samples_per_sec", "model_samples_per_sec"):
        assert key in payload and payload[key] is None  # not timed with --quick
    for finding in payload["findings"]:
        assert set(finding) >= {"id", "severity", "message", "fix"}
    data = payload["dataset"]
    assert data["train_items"] + data["eval_items"] == 40 and data["bad_items"] == 0
    assert sum(b["count"] for b in data["duration_histogram"]) == 40
    assert data["formats"] == {"wav": 40}
    assert not any("--batches" in note for note in payload["notes"])
    # --batches with --quick is said to time nothing (it was dropped without a word).
    batches = run_json(runner, "--quick", "--batches", "5")
    assert "--batches 5 times the pipeline, which --quick does not time" in batches["notes"]
    assert payload["python_ops_in_pipeline"] == []
    import tensorflow as tf

    assert payload["environment"]["tensorflow"]["version"] == tf.__version__
    assert payload["environment"]["audio_decoder"] in ("soundfile", "tensorflow-io")


def test_an_mp3_corpus_in_runtime_mode_names_its_decoder_and_the_fix(runner) -> None:
    from xtts_cli.data.audio_codecs import compressed_decoder

    corpus = Path(__file__).parent / "data" / "corpora" / "common_voice"
    # One row names a clip that is not there (tests/data/README.md): allowed, to see the rest.
    allow = ("--set", "data.max_bad_file_fraction=0.5", "--set", "data.batch_size=2")
    payload = run_json(runner, "--quick", "--data", str(corpus), "--set", "data.preprocessing_mode=runtime", *allow)
    findings = {f["id"]: f for f in payload["findings"]}
    compressed = findings["dataset-compressed-audio"]
    where = "libsndfile, in a tf.numpy_function" if compressed_decoder() == "soundfile" else "tensorflow-io's kernels"
    assert (
        compressed["message"].startswith("compressed audio, mp3 (")
        and f"every epoch ({where})" in compressed["message"]
    )
    assert compressed["fix"]["key"] == "data.preprocessing_mode" and compressed["fix"]["value"] == "auto"
    # libsndfile's numpy_function is in the graph, but it is the decoder, not a loader to replace.
    assert set(payload["python_ops_in_pipeline"]) == ({"PyFuncStateless"} if where.startswith("lib") else set())
    assert "python-ops-in-pipeline" not in findings


def test_graph_mode_off_and_unbucketed_shapes_are_flagged(runner, tmp_path: Path) -> None:
    eager = tiny_config(tmp_path, name="eager.yaml")
    eager.write_text(eager.read_text().replace("training:\n", "training:\n  enable_graph_mode: false\n"))
    payload = run_json(runner, "--config", str(eager), "--quick")
    fix = by_fix(payload)["training.enable_graph_mode"]
    assert fix["fix"]["value"] is True and fix["severity"] == "warning"
    assert payload["graph_mode"] is False

    loose = tiny_config(tmp_path, name="loose.yaml")
    loose.write_text(loose.read_text().replace("data:\n", "data:\n  bucket_by_length: false\n"))
    payload = run_json(runner, "--config", str(loose), "--quick")
    # No XLA on this CPU: one trace whatever the shapes (the step's signature leaves lengths unknown),
    # and the cost named is the padding: planned from the scan, it stands in for validate's
    # variable-shapes rule, which has the same fix.
    ids = {f["id"] for f in payload["findings"]}
    assert "retracing" not in ids and "variable-shapes" not in ids
    (padding,) = [f for f in payload["findings"] if f["fix"] and f["fix"]["key"] == "data.bucket_by_length"]
    assert padding["id"] == "padding-waste" and padding["fix"]["value"] is True
    # Rounded down to a tenth, as the text report's line and profile-pipeline's table print it: the
    # finding had said 63 % beside a table's 64.0 %.
    shown = f"{math.floor(1000 * payload['padding_efficiency']) / 10:.1f} %"
    assert f"padding efficiency is {shown} (real / padded" in padding["message"]
    assert "XLA" not in padding["message"]
    assert payload["shape_bound"] is None


def test_missing_dataset_is_an_error_and_exits_1(runner, tmp_path: Path) -> None:
    payload = run_json(runner, "--quick", "--data-path", str(tmp_path / "nowhere"), code=1)
    # One error for one cause: the scan that would say it again is not run.
    (error,) = [f for f in payload["findings"] if f["severity"] == "error"]
    assert error["id"] == "dataset-missing" and "nowhere" in error["message"], error
    assert payload["dataset"] is None
    # Where relative paths start is said for a relative path, which it explains, not an absolute one.
    assert "relative paths start at" not in error["message"]
    relative = run_json(runner, "--quick", "--data-path", "nowhere", code=1)
    (error,) = [f for f in relative["findings"] if f["severity"] == "error"]
    assert f"'nowhere' does not exist (relative paths start at {Path.cwd()})" in error["message"]
    # Its metadata file given for the folder: the folder that holds it is named.
    sample = Path(__file__).parent.parent / "xtts_cli" / "data" / "sample"
    a_file = run_json(runner, "--quick", "--data-path", str(sample / "metadata.csv"), code=1)
    (error,) = [f for f in a_file["findings"] if f["severity"] == "error"]
    assert error["message"].endswith(
        f"is a file, not the dataset's folder; point it at the folder that holds it, {sample}"
    )


def test_each_missing_dataset_is_named_as_validate_names_them(runner, tmp_path: Path) -> None:
    config = tmp_path / "two.yaml"
    config.write_text(
        f"data:\n  datasets:\n    - path: {tmp_path / 'first'}\n    - path: {tmp_path / 'second'}\n", encoding="utf-8"
    )
    payload = run_json(runner, "--quick", "-c", str(config), code=1)
    errors = [f["message"] for f in payload["findings"] if f["id"] == "dataset-missing"]
    # Both, not the first alone: a user mending one would meet the next on the next run.
    assert len(errors) == 2 and "first" in errors[0] and "second" in errors[1], errors


def test_what_training_refuses_is_reported_with_the_timings_skipped_not_a_bare_error(runner, tmp_path: Path) -> None:
    # Timed, not --quick: an epoch of no batch stopped the timing with a bare error, and a split onto
    # a GPU this machine lacks exited 4 before any report.
    for sets, refused, times in (
        (["data.batch_size=64"], "dataset-no-batch", 1),
        (["devices.data_gpu=0", "devices.model_gpu=1"], "device-not-found", 2),  # each device, as validate says
    ):
        payload = run_json(runner, "-c", str(tiny_config(tmp_path)), *[f"--set={s}" for s in sets], code=1)
        errors = [f["id"] for f in payload["findings"] if f["severity"] == "error"]
        assert errors == [refused] * times, payload["findings"]
        assert payload["dataset"]["train_items"] > 0 and payload["pipeline_samples_per_sec"] is None
        assert payload["notes"] == [
            f"the pipeline, model and storage timings were skipped: training refuses this config ({refused}); "
            "fix the errors and run diagnose again"
        ]
        if refused == "dataset-no-batch":  # padding is a share of no batches there
            assert "padding-waste" not in {f["id"] for f in payload["findings"]}
            assert payload["shape_bound"] == 0 and payload["padding_efficiency"] is None  # it had been 85.9 %
    assert payload["environment"]["device_plan"] == "no device plan: devices.* names a device this machine lacks"


def test_a_fix_to_a_preset_says_where_it_goes_as_validate_says_it(runner) -> None:
    # diagnose had printed "fix: set data.batch_size: 3" for a preset the package holds.
    corpus = Path(__file__).parent / "data" / "corpora" / "ljspeech2"
    said = runner.invoke(app, ["diagnose", "-c", "tiny-cpu", "--quick", "-d", str(corpus)])
    assert said.exit_code == 1, said.output
    assert "fix: set data.batch_size: 3  (in your copy: xtts init -p tiny-cpu -o my.yaml)" in said.output
    # A value the command line gives is fixed there: set in a copy, --batch-size 64 would override it again.
    for given in (["--batch-size", "64"], ["--set", "data.batch_size=64"]):
        said = runner.invoke(app, ["diagnose", "-c", "tiny-cpu", "--quick", *given])
        assert "fix: set data.batch_size: 39  (the command line gives data.batch_size: change it there)" in said.output


@pytest.mark.slow
def test_timed_run_compares_pipeline_and_model_rates(runner, tmp_path: Path) -> None:
    # The numpy_function baseline: its Python ops show in the dataset graph.
    config = tiny_config(tmp_path)
    config.write_text(config.read_text().replace("data:\n", "data:\n  use_tf_native_loading: false\n"))
    payload = run_json(runner, "--config", str(config), "--num-batches", "8")
    assert undocumented_keys("diagnose", payload) == [], "add them to docs/json.md (their model's Field)"
    x, y = payload["pipeline_samples_per_sec"], payload["model_samples_per_sec"]
    assert x > 0 and y > 0
    # The rates' share, or the step's measured wait on the real pipeline where that is the larger.
    assert abs(payload["input_bound_percent"] - max(max(0.0, 1 - x / y) * 100, payload["data_wait_percent"])) < 1e-6
    assert payload["retraces"] == 0 and payload["traces"] >= 1
    # The model rate is the step on resident batches, timed after the same step beside the real
    # pipeline: the difference is the host contention, its own figure.
    assert payload["host_contention_percent"] is not None and payload["host_contention_percent"] >= 0
    assert payload["notes"][0].startswith("the pipeline delivers")
    assert payload["python_ops_in_pipeline"] and set(payload["python_ops_in_pipeline"]) <= {
        "PyFunc",
        "EagerPyFunc",
        "PyFuncStateless",
    }
    assert "python-ops-in-pipeline" in {f["id"] for f in payload["findings"]}
    assert payload["storage"]["files_sampled"] > 0
    # Cache mode reads the audio once per run: measured, but no storage warning about training's pace.
    assert payload["storage"]["read_every_epoch"] is False and payload["storage"]["needed_mb_per_s"] is None
    assert any(note.startswith("storage: cache mode reads the audio files once per run") for note in payload["notes"])
    assert payload["findings"] == sorted(
        payload["findings"],
        key=lambda f: (
            SEVERITY_RANK[f["severity"]],
            f["id"] not in EAGER_STEP_FINDINGS,
            -(f["expected_gain_percent"] if f["expected_gain_percent"] is not None else -1),
        ),
    )


@pytest.mark.slow
def test_a_pipeline_that_makes_no_batch_while_the_step_runs_is_input_bound_by_its_measured_wait(
    runner, tmp_path
) -> None:
    # No prefetch, the Python loader, features made at each step: the pipeline alone outran the step, so the
    # rates said "not input bound" while the step waited a fifth of its time on it (and training's watch said so).
    slow = ["data.use_tf_native_loading=false", "data.preprocessing_mode=runtime", "data.prefetch_buffer_size=0"]
    sets = [arg for key in slow for arg in ("--set", key)]
    payload = run_json(runner, "--config", str(tiny_config(tmp_path)), *sets, "--num-batches", "12")
    x, y, waited = payload["pipeline_samples_per_sec"], payload["model_samples_per_sec"], payload["data_wait_percent"]
    allowed = max(0.0, 1 - x / y) * 100
    assert waited > allowed, (waited, allowed)  # each batch is made after the step that came before it
    assert payload["input_bound_percent"] == waited
    if waited >= 5:
        assert "the step waited that share on the real pipeline, where the rates alone allow" in payload["notes"][0]


def test_ranking_puts_errors_first_then_warnings_by_their_gain_then_notes() -> None:
    def f(id: str, severity: str, gain=None) -> RankedFinding:
        return RankedFinding(id=id, severity=severity, message=id, source="test", expected_gain_percent=gain)

    ranked = rank(
        [
            f("info", "info"),
            f("small", "warning", 10.0),
            f("err", "error"),
            f("big", "info", 60.0),
            f("warn", "warning"),
        ]
    )
    assert [x.id for x in ranked] == ["err", "small", "warn", "big", "info"]
    # An eager step goes first among warnings, above a measured one: what is measured beside it
    # changes once it runs as a graph.
    eager = rank([f("host-contention", "warning", 78.0), f("eager-step", "warning"), f("err", "error")])
    assert [x.id for x in eager] == ["err", "eager-step", "host-contention"]
    # One fix named by two measurements keeps both (each its own evidence); by a config rule besides, not it.
    precompute = ConfigChange(key="data.preprocessing_mode", value="precompute")
    kept = _dedupe(
        [
            f("input-bound", "info", 6.0).model_copy(update={"fix": precompute}),
            f("host-contention", "warning", 78.0).model_copy(update={"fix": precompute}),
            f("runtime-features", "warning").model_copy(update={"fix": precompute}),
        ]
    )
    assert [x.id for x in kept] == ["input-bound", "host-contention"]
    # Input-bound, what touches the input is credited with the share; a note of how the storage was
    # measured (from the page cache) addresses none of it (it had been ranked by that gain).
    from xtts_cli.diagnosis.checkup import _credit_input_fixes

    credited = [f("storage-figures-warm", "info"), f("storage-network-filesystem", "info")]
    _credit_input_fixes(9.0, credited)
    assert [x.expected_gain_percent for x in credited] == [None, 9.0]
    assert input_bound_share(50.0, 100.0) == 50.0
    assert input_bound_share(200.0, 100.0) == 0.0


def test_the_verdict_comes_first_and_bucket_advice_fits_the_data(runner):
    from xtts_cli.cli.app import app

    result = runner.invoke(app, ["diagnose", "--quick"])
    lines = result.stdout.splitlines()
    assert lines[0].startswith("verdict: ") and "finding" in lines[0]
    padding = next(line for line in lines if "padding-waste" in line)
    # The bundled sample's 39 clips at batch 16: two batches, no room for finer length buckets.
    assert "39 clips at batch 16 make 2 batches, too few for finer buckets" in padding
    assert "fix: set data.num_buckets" not in result.stdout
    shown = re.search(r"padding efficiency is (\d+\.\d %) ", padding)
    assert shown and f"pipeline graph: padding efficiency {shown.group(1)}," in result.stdout  # the same figure
    # Padded to the longest clip allowed: the fix is to stop that, not more data.
    fixed = runner.invoke(app, ["diagnose", "--quick", "--set", "data.pad_to_fixed_length=true"])
    lines = fixed.stdout.splitlines()
    padding = next(line for line in lines if "padding-waste" in line)
    assert "data.pad_to_fixed_length pads every batch to data.max_mel_frames" in padding
    assert "too few for finer buckets" not in padding
    assert "fix: set data.pad_to_fixed_length: false" in fixed.stdout


def _with_two_long_clips(tmp_path: Path) -> Path:
    """The bundled sample three times over and two clips of 34 s."""
    import numpy as np
    import soundfile

    from xtts_cli.data.scan import BUNDLED_SAMPLE

    rows = (BUNDLED_SAMPLE / "metadata.csv").read_text(encoding="utf-8").splitlines()
    (tmp_path / "c" / "wavs").mkdir(parents=True)
    listed = []
    for number in range(3 * len(rows)):
        clip, *texts = rows[number % len(rows)].split("|")
        # Copied, not linked: a link changes the sample's change time, and every other test's scan of it.
        shutil.copyfile(BUNDLED_SAMPLE / "wavs" / f"{clip}.wav", tmp_path / "c" / "wavs" / f"c{number:04d}.wav")
        listed.append("|".join([f"c{number:04d}", *texts]))
    for number in range(2):
        clip, *texts = rows[number].split("|")
        audio, rate = soundfile.read(BUNDLED_SAMPLE / "wavs" / f"{clip}.wav")
        soundfile.write(
            tmp_path / "c" / "wavs" / f"long{number}.wav", np.concatenate([audio, np.zeros(30 * rate)]), rate
        )
        listed.append("|".join([f"long{number}", *texts]))
    (tmp_path / "c" / "metadata.csv").write_text("\n".join(listed) + "\n", encoding="utf-8")
    return tmp_path / "c"


LONG_CLIPS_SAID = (
    r"the 2 longest clips \(up to 34\.\d s\) set their bucket's length, and every clip of it is padded to it: "
    r"data\.max_audio_duration 4\.\d leaves them out, [89]\d % then"
)


@pytest.mark.parametrize(
    "command",
    [
        "diagnose --quick",
        "profile-pipeline --batches 2 --no-stages",
        pytest.param("profile-step --steps 2 --warmup 0", marks=pytest.mark.slow),  # two steps of 34 s clips
    ],
)
def test_a_few_very_long_clips_are_named_as_the_padding_they_cost(runner, tmp_path: Path, command: str) -> None:
    # Two 34 s clips among 117 of 1.5-4.8 s padded their whole bucket to 34 s (30 %): the fix had been
    # finer buckets, which could not reach the bar; leaving the two out does. The profilers measured the
    # same padding and said nothing of it.
    data = _with_two_long_clips(tmp_path)
    sets = ["--set", "data.max_audio_duration=45", "--set", "data.max_mel_frames=3900"]
    result = runner.invoke(app, [*command.split(), "-c", "tiny-cpu", "--data", str(data), *sets])
    assert result.exit_code in (0, 1), result.output
    assert re.search(r"padding efficiency is \d+\.\d % .*; " + LONG_CLIPS_SAID, result.stdout), result.stdout
    assert "fix: set data.max_audio_duration: 4." in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("command", ["diagnose", "profile-step"])
def test_the_old_profilers_data_and_model_gpu_flags_plan_the_split(tmp_path: Path, command: str) -> None:
    # The seeds' dual-GPU profiler took --data-gpu/--model-gpu; here on the CPU twin's two devices.
    import subprocess
    import sys

    from training_support import subprocess_env

    # The tiny model: the default one took 45 s of a 2-core machine to profile three steps.
    args = ["--quick"] if command == "diagnose" else ["--steps", "3", "--config", str(tiny_config(tmp_path))]
    done = subprocess.run(
        [sys.executable, "-m", "xtts_cli", command, *args, "--json", "--data-gpu", "0", "--model-gpu", "1"]
        + ["--set", "devices.logical_cpu_devices=2"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert "data on /device:CPU:0, model on /device:CPU:1" in done.stdout, done.stdout[-2000:]


def test_clips_too_short_are_not_told_that_longer_clips_cost_memory() -> None:
    from types import SimpleNamespace

    from xtts_cli.config.schema import DataConfig
    from xtts_cli.diagnosis.checkup import outside_limits_finding

    def said(reasons: dict) -> str:
        scan = SimpleNamespace(bad_reasons=reasons, outside_limits=sum(reasons.values()), total_items=40, bad=[])
        return outside_limits_finding(scan, DataConfig()).message

    assert "lower data.min_audio_duration (each listed" in said({"too_short": 1})
    assert "memory" not in said({"too_short": 1})
    assert "raise data.max_audio_duration" in said({"too_long": 2}) and "cost memory and padding" in said(
        {"too_long": 2}
    )


@pytest.mark.slow
def test_ctrl_c_while_the_step_is_timed_ends_the_check_up_as_an_interrupt(runner, monkeypatch) -> None:
    from training_support import ctrl_c_at_timed_step

    # A real SIGINT as the third timed step ends: the check-up had gone on to time the storage and
    # exited 0, its report's figures from 3 steps and its contention left out without a word.
    ctrl_c_at_timed_step(monkeypatch, 3)
    result = runner.invoke(app, ["diagnose", "-c", "tiny-cpu", "--batches", "20", "--json"])
    # 130, and no report: `main` then says "interrupted (Ctrl-C)", as it does in the check-up's other phases.
    assert result.exit_code == 130 and isinstance(result.exception, SystemExit), result.output
    assert "findings" not in result.stdout and "storage" not in result.output


def test_a_dataset_of_no_usable_clip_says_the_timings_were_skipped_and_why(runner, tmp_path) -> None:
    # An epoch of no batch said so; a dataset whose every clip is unreadable had said nothing of them.
    from xtts_cli.data.scan import BUNDLED_SAMPLE

    shutil.copytree(BUNDLED_SAMPLE, tmp_path / "data")
    for clip in (tmp_path / "data" / "wavs").glob("*.wav"):
        clip.write_text("not audio", encoding="utf-8")
    result = runner.invoke(app, ["diagnose", "-c", "tiny-cpu", "--data", str(tmp_path / "data"), "--json"])
    assert result.exit_code == 1, result.output
    notes = json.loads(result.stdout)["notes"]
    assert "the pipeline, model and storage timings were skipped: training refuses this config (dataset-unusable)" in (
        " ".join(notes)
    ), notes


def test_quick_with_devices_the_machine_lacks_says_neither_that_a_step_ran_nor_that_training_runs(runner) -> None:
    payload = run_json(
        runner, "--quick", "--data-gpu", "0", "--model-gpu", "1", "--set", "training.enable_graph_mode=false", code=1
    )
    said = {f["id"]: f["message"] for f in payload["findings"]}
    # No step was timed: the config's eager step is one it would run.
    assert said["eager-step"].startswith("the step runs eagerly (training.enable_graph_mode is false)")
    # The devices came from flags: leaving the file's keys out would change nothing.
    assert said["device-not-found"].endswith(  # train's hint too: it had been said by train alone
        "pick an existing index, or leave out --data-gpu/--model-gpu to use one device; on a machine without "
        "GPUs, devices.logical_cpu_devices: 2 runs the same split on CPU"
    )
    assert said["no-gpu"].endswith("training runs on the CPU once devices.* names no GPU")
