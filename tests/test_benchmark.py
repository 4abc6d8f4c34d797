"""`xtts benchmark`: isolated trials, the search rules, the report and the written config.

The end-to-end test runs real trials (real step, real pipeline, each in its own process). The
search rules are also checked against a stand-in machine whose speeds and out-of-memory limit
are known, because a GPU running out of memory at a chosen batch size cannot happen on the CPU
machines the tests run on.
"""

from __future__ import annotations

import json
import os
import time

import pytest
import yaml
from training_support import run_xtts, tiny_config, undocumented_keys

from xtts_cli.config.editing import apply_changes
from xtts_cli.config.loading import data_variant, resolve_config
from xtts_cli.config.schema import XttsConfig
from xtts_cli.data.plan import decide_mode
from xtts_cli.data.scan import BUNDLED_SAMPLE
from xtts_cli.devices.gpu_info import GpuInfo, MachineInfo
from xtts_cli.profiling.benchmark import (
    MIN_GAIN,
    TrialFinished,
    TrialStarted,
    benchmark,
    default_batch_sizes,
    plan_candidates,
    score,
)
from xtts_cli.profiling.benchmark_trial import TrialOutcome, _reason_from_stderr, run_trial

CPU_MACHINE = MachineInfo(cpu_count=2, gpu_unavailable_reason="no NVIDIA driver")


def _stand_in(speeds, oom_from: int | None = None, calls: list | None = None):
    """A machine whose samples/s is a function of the trial's settings; OOM at batch >= oom_from."""

    def runner(config, num_steps, warmup, timeout):
        if calls is not None:
            calls.append(config)
        batch = config["data"]["batch_size"]
        if oom_from is not None and batch >= oom_from:
            return TrialOutcome(status="oom", reason=f"OOM when allocating tensor for batch {batch}", seconds=1.0)
        return TrialOutcome(
            status="ok",
            samples_per_sec=speeds(config),
            step_ms_p50=10.0,
            step_ms_p95=12.0,
            step_cv=0.0,
            input_bound_percent=1.0,
            retraces=0,
            seconds=1.0,
        )

    return runner


def _loaded(tmp_path, extra=""):
    return resolve_config(tiny_config(tmp_path, extra))


def _run(loaded, runner, machine=CPU_MACHINE, **kwargs):
    canonical = {section: dict(body) for section, body in loaded.raw.items()}
    return benchmark(loaded.config, canonical, machine, train_clips=36, runner=runner, **kwargs)


def test_the_trials_table_keeps_each_setting_whole_beside_a_long_reason(tmp_path, monkeypatch, capsys) -> None:
    # On an 80-column terminal a failed trial's long reason had folded the setting to "batch_siz / e=4".
    from xtts_cli.cli.benchmark import _render

    report = _run(
        _loaded(tmp_path), _stand_in(lambda c: 10.0 * c["data"]["batch_size"], oom_from=8), batch_sizes=[4, 8]
    )
    monkeypatch.setenv("COLUMNS", "80")  # a terminal of 80 columns, as rich reads its width
    _render(report, None)
    shown = capsys.readouterr().out
    assert "│ batch_size=8 " in shown and "│ oom " in shown and "│ ok (best) " in shown, shown
    assert "trial 2 (batch_size=8): oom: OOM when allocating tensor for batch 8" in shown  # below the table
    table = shown[shown.index("# ┃") : shown.index("trial 2 (")]
    assert all(len(line) <= 80 for line in table.splitlines()), table


def test_batch_climb_stops_at_the_first_out_of_memory_size(tmp_path) -> None:
    calls: list = []
    runner = _stand_in(lambda c: 10.0 * c["data"]["batch_size"], oom_from=8, calls=calls)
    report = _run(_loaded(tmp_path), runner, batch_sizes=[2, 4, 8, 16], stages=["batch_size"])
    statuses = {t.settings["data.batch_size"]: t.status for t in report.trials if t.stage != "recheck"}
    assert statuses == {4: "ok", 2: "ok", 8: "oom", 16: "skipped"}
    assert [c["data"]["batch_size"] for c in calls] == [4, 2, 8, 4]  # 16 never started; the winner rechecked
    assert report.drift == 0.0 and report.trials[-1].stage == "recheck"
    assert report.largest_batch_size == 4
    assert report.trials[report.best].settings["data.batch_size"] == 4
    assert report.changes == []  # the config's own batch size was the best that fit


def test_each_stage_keeps_the_winner_and_ignores_gains_within_noise(tmp_path) -> None:
    def speeds(config):
        data = config["data"]
        rate = 100.0 * (2.0 if data["batch_size"] == 8 else 1.0)
        rate *= 1.5 if data.get("num_workers") == 2 else 1.0
        rate *= 1.0 + MIN_GAIN / 3 if data.get("preprocessing_mode") == "runtime" else 1.0  # noise-sized
        return rate

    report = _run(
        _loaded(tmp_path), _stand_in(speeds), batch_sizes=[4, 8], stages=["batch_size", "num_workers", "preprocessing"]
    )
    best = report.trials[report.best]
    assert best.settings["data.batch_size"] == 8 and best.settings["data.num_workers"] == 2
    assert best.settings["data.preprocessing_mode"] == "cache"
    assert {c.key: c.value for c in report.changes} == {"data.batch_size": 8, "data.num_workers": 2}
    assert report.speedup == pytest.approx(3.0)
    assert report.ranking[0] != report.best  # the noise-sized "win" is ranked first but not chosen
    assert any("run-to-run noise" in note for note in report.notes)


def test_the_trial_run_again_is_named_when_it_is_not_the_one_chosen(tmp_path, capsys, monkeypatch) -> None:
    # "best: trial 1", then "the best setting run again at the end: -47.0%" of trial 2: two bests.
    from xtts_cli.cli.benchmark import _render

    runs: list = []

    def speeds(config):
        runs.append(config["data"]["batch_size"])
        return 200.0 if config["data"]["batch_size"] == 8 and runs.count(8) == 1 else 100.0

    monkeypatch.setenv("COLUMNS", "200")
    report = _run(_loaded(tmp_path), _stand_in(speeds), batch_sizes=[4, 8], stages=["batch_size"])
    _render(report, None)
    shown = capsys.readouterr().out
    assert f"best: trial {report.best + 1}," in shown
    assert "trial 2, the fastest, run again at the end: -50.0% samples/s" in shown, shown


def test_the_speedup_of_a_winner_that_ran_slower_again_is_the_mean_of_its_two_runs(tmp_path) -> None:
    # The first timing of batch 8 alone had read 2.30x, the re-run at the end 1.5x.
    runs: list = []

    def speeds(config):
        runs.append(config["data"]["batch_size"])
        if config["data"]["batch_size"] != 8:
            return 100.0
        return 230.0 if runs.count(8) == 1 else 150.0

    report = _run(_loaded(tmp_path), _stand_in(speeds), batch_sizes=[4, 8], stages=["batch_size"])
    assert report.trials[report.best].settings["data.batch_size"] == 8
    assert report.drift == pytest.approx(150.0 / 230.0 - 1.0)
    assert report.speedup == pytest.approx(1.9)


def test_the_best_line_says_its_speedup_is_of_two_runs_and_that_nothing_was_compared(
    tmp_path, capsys, monkeypatch
) -> None:
    # 230 samples/s had stood beside "1.90x", the mean of 230 and 150 over 100, unsaid; and a budget
    # that ran the config alone had said no trial beat it.
    from xtts_cli.cli.benchmark import _render

    runs: list = []

    def speeds(config):
        runs.append(config["data"]["batch_size"])
        return 230.0 if config["data"]["batch_size"] == 8 and runs.count(8) == 1 else 150.0 if runs.count(8) else 100.0

    monkeypatch.setenv("COLUMNS", "200")
    _render(_run(_loaded(tmp_path), _stand_in(speeds), batch_sizes=[4, 8], stages=["batch_size"]), None)
    shown = capsys.readouterr().out
    assert "230.0 samples/s (1.90x the config as written, the mean of its run and its re-run)" in shown
    assert "│ the fastest, run again │" in shown  # the recheck's row, read as a trial of its own had it no label
    assert "trial 2, the fastest, run again at the end: -34.8% samples/s" in shown
    report = _run(_loaded(tmp_path), _stand_in(lambda c: 100.0), stages=["batch_size"], batch_sizes=[8])
    for trial in report.trials[1:]:  # the budget spent after the config's own trial
        trial.status, trial.samples_per_sec, trial.score = "skipped", None, None
        trial.reason = "budget spent (900 of 900 s)"
    _render(report, None)
    shown = capsys.readouterr().out
    assert "no other trial finished within --budget-seconds 900: nothing was compared; raise it" in shown, shown
    # Nothing else to run (--batch-sizes 8,8 on a config of 8): no budget to raise; a faster trial the budget
    # left unchecked is said so, not "no trial beat the config" (it had been 1.40x).
    alone = _run(_loaded(tmp_path), _stand_in(lambda c: 100.0), stages=["batch_size"], batch_sizes=[4])
    _render(alone, None)
    assert "no other setting to try: the sizes and sweeps asked for are the config's own" in capsys.readouterr().out
    report = _run(_loaded(tmp_path), _stand_in(lambda c: 100.0), stages=["batch_size"], batch_sizes=[8])
    faster = next(t for t in report.trials if t.index != report.baseline)
    faster.samples_per_sec = 140.0
    for trial in report.trials:  # the budget spent before the winner's re-run: listed, skipped
        if trial.stage == "recheck":
            trial.status, trial.samples_per_sec, trial.score = "skipped", None, None
    _render(report, None)
    shown = capsys.readouterr().out
    assert f"trial {faster.index + 1} ran 1.40x the config as written, but was not run again to confirm it" in shown
    assert "run-to-run noise" not in shown, shown


def test_a_config_that_runs_eagerly_is_timed_in_graph_mode_first(tmp_path) -> None:
    def speeds(config):
        training = config["training"]
        graph = training.get("enable_graph_mode", True) and not training.get("enable_eager_debug", False)
        return (300.0 if graph else 100.0) * (1.5 if config["data"].get("num_workers") == 2 else 1.0)

    calls: list = []
    eager = _loaded(tmp_path, "  enable_graph_mode: false\n  enable_eager_debug: true\n")
    report = _run(eager, _stand_in(speeds, calls=calls), stages=["graph_mode", "num_workers"])
    assert [t.stage for t in report.trials][:2] == ["baseline", "graph_mode"]
    assert {c.key: c.value for c in report.changes} == {
        "training.enable_graph_mode": True,
        "training.enable_eager_debug": False,
        "data.num_workers": 2,
    }
    # Every trial after the graph mode stage times the graph-mode step.
    assert all(c["training"]["enable_graph_mode"] for c in calls[2:])
    assert report.speedup == pytest.approx(4.5)
    already = _run(_loaded(tmp_path), _stand_in(speeds), stages=["graph_mode"])
    assert already.not_swept["graph_mode"] == "the config runs the step in graph mode already"


def test_a_machine_that_speeds_up_during_the_run_is_reported(tmp_path) -> None:
    calls: list = []
    runner = _stand_in(lambda c: 100.0 + 30.0 * len(calls), calls=calls)
    report = _run(_loaded(tmp_path), runner, stages=["prefetch"])
    assert [t.stage for t in report.trials] == ["baseline", "prefetch", "recheck"]
    assert report.drift == pytest.approx(190.0 / 160.0 - 1.0)
    assert any("speed changed during the benchmark" in note for note in report.notes)
    assert 2 not in report.ranking  # the recheck is not a candidate


def test_unsteady_steps_lose_to_steady_ones() -> None:
    assert score(100.0, 0.5) < score(80.0, 0.0)
    assert score(100.0, 0.0) == 100.0


def test_steadiness_is_weighed_only_over_enough_steps_to_measure_it(tmp_path) -> None:
    # The baseline swings (CV 0.5 at 100 samples/s); a prefetch depth is steady at 97. Over 20 steps
    # the steady one wins; over 2 the CV is two steps' difference alone, and 0.97x is no gain.
    def runner(config, num_steps, warmup, timeout):
        steady = config["data"].get("prefetch_buffer_size") not in (None, "auto")
        return TrialOutcome(
            status="ok",
            samples_per_sec=97.0 if steady else 100.0,
            step_ms_p50=10.0,
            step_ms_p95=12.0,
            step_cv=0.0 if steady else 0.5,
            input_bound_percent=1.0,
            retraces=0,
            seconds=1.0,
        )

    measured = _run(_loaded(tmp_path), runner, stages=["prefetch"], num_steps=20)
    assert [c.key for c in measured.changes] == ["data.prefetch_buffer_size"]
    too_few = _run(_loaded(tmp_path), runner, stages=["prefetch"], num_steps=2)
    assert too_few.changes == [] and too_few.speedup == pytest.approx(1.0)
    assert any(note.startswith("--steps 2: too few steps to tell a steady step") for note in too_few.notes)


def test_trials_that_would_not_fit_the_budget_are_skipped(tmp_path) -> None:
    def slow(config, num_steps, warmup, timeout):
        time.sleep(0.3)
        return TrialOutcome(
            status="ok",
            samples_per_sec=1.0,
            step_ms_p50=1.0,
            step_ms_p95=1.0,
            step_cv=0.0,
            input_bound_percent=0.0,
            retraces=0,
            seconds=0.3,
        )

    events: list = []
    report = _run(
        _loaded(tmp_path), slow, budget_seconds=0.5, stages=["num_workers", "prefetch"], progress=events.append
    )
    ran = [t for t in report.trials if t.status == "ok"]
    skipped = [t for t in report.trials if t.status == "skipped"]
    assert ran and skipped
    assert all("budget spent" in t.reason for t in skipped)
    # The sweep's progress: typed events, a start for each trial that runs and an end for every trial.
    assert [e.record.index for e in events if isinstance(e, TrialStarted)] == [t.index for t in ran]
    assert [e.record.index for e in events if isinstance(e, TrialFinished)] == [t.index for t in report.trials]


def test_a_trials_time_is_kept_to_run_a_winner_again_not_spent_on_later_stages(tmp_path) -> None:
    # Later stages had spent the budget, the recheck was skipped, and a 6x gain was thrown away (exit 0).
    def graph_is_faster(config, num_steps, warmup, timeout):
        time.sleep(0.2)
        fast = config["training"].get("enable_graph_mode", True)
        return TrialOutcome(
            status="ok",
            samples_per_sec=6.0 if fast else 1.0,
            step_ms_p50=1.0,
            step_ms_p95=1.0,
            step_cv=0.0,
            input_bound_percent=0.0,
            retraces=0,
            seconds=0.2,
        )

    loaded = _loaded(tmp_path, "  enable_graph_mode: false")
    report = _run(loaded, graph_is_faster, budget_seconds=0.75, stages=["graph_mode", "num_workers", "prefetch"])
    (recheck,) = [t for t in report.trials if t.stage == "recheck"]
    assert recheck.status == "ok", report.trials
    assert any("kept to run the best so far again" in (t.reason or "") for t in report.trials), report.trials
    assert "training.enable_graph_mode" in [c.key for c in report.changes]


def test_mixed_precision_is_swept_only_on_a_gpu_with_fast_16_bit_math(tmp_path) -> None:
    loaded = _loaded(tmp_path)
    cpu = _run(loaded, _stand_in(lambda c: 1.0), stages=["mixed_precision"])
    assert "mixed_precision" in cpu.not_swept and len(cpu.trials) == 1
    h100 = MachineInfo(cpu_count=16, gpus=(GpuInfo(0, "NVIDIA H100", 81559, (9, 0)),))
    calls: list = []
    gpu = _run(
        loaded,
        _stand_in(lambda c: 2.0 if c["training"].get("mixed_precision") else 1.0, calls=calls),
        machine=h100,
        stages=["mixed_precision", "xla"],
    )
    assert [c.key for c in gpu.changes] == ["training.mixed_precision"]
    assert gpu.trials[gpu.baseline].settings["training.enable_xla_compilation"] is True  # auto means on for a GPU


TWO_CARDS = MachineInfo(
    cpu_count=16,
    gpus=(GpuInfo(0, "NVIDIA GeForce RTX 4090", 24564, (8, 9)), GpuInfo(1, "Tesla T4", 15360, (7, 5))),
)


def _layout_of(config) -> str:
    devices = config.get("devices", {})
    if devices.get("data_gpu") is not None:
        return f"split {devices['data_gpu']}->{devices['model_gpu']}"
    return devices.get("strategy", "auto")


def test_two_cards_are_timed_as_one_card_the_split_and_mirrored_and_the_winner_is_written(tmp_path) -> None:
    # As written (strategy auto) two GPUs train mirrored; the split puts the data on the smaller card.
    speeds = {"auto": 100.0, "single": 60.0, "split 1->0": 130.0}
    calls: list = []
    loaded = _loaded(tmp_path)
    report = _run(loaded, _stand_in(lambda c: speeds[_layout_of(c)], calls=calls), machine=TWO_CARDS, stages=["layout"])
    assert [_layout_of(c) for c in calls] == ["auto", "single", "split 1->0", "split 1->0"]  # the last: recheck
    assert {c.key: c.value for c in report.changes} == {"devices.data_gpu": 1, "devices.model_gpu": 0}
    written = apply_changes(loaded.text, report.changes, loaded.sources)
    assert yaml.safe_load(written)["devices"] == {"data_gpu": 1, "model_gpu": 0}

    # A split as written, where two replicas win: the written config drops the split's keys.
    split = _loaded(tmp_path, "devices:\n  data_gpu: 1\n  model_gpu: 0\n")
    speeds = {"split 1->0": 100.0, "single": 60.0, "mirrored": 150.0}
    report = _run(split, _stand_in(lambda c: speeds[_layout_of(c)]), machine=TWO_CARDS, stages=["layout"])
    assert [c.describe() for c in report.changes] == [
        "set devices.strategy: mirrored",
        "remove devices.data_gpu",
        "remove devices.model_gpu",
    ]
    written = apply_changes(split.text, report.changes, split.sources)
    assert yaml.safe_load(written)["devices"] == {"strategy": "mirrored"}
    assert XttsConfig.model_validate(yaml.safe_load(written)).devices.strategy == "mirrored"


def test_one_device_has_no_layout_to_choose(tmp_path) -> None:
    h100 = MachineInfo(cpu_count=16, gpus=(GpuInfo(0, "NVIDIA H100", 81559, (9, 0)),))
    for machine in (CPU_MACHINE, h100):
        report = _run(_loaded(tmp_path), _stand_in(lambda c: 1.0), machine=machine, stages=["layout"])
        assert report.not_swept["layout"].startswith("one device") and len(report.trials) == 1


def test_cache_is_swept_only_when_the_features_fit_the_memory_budget(tmp_path) -> None:
    def modes(preprocessing_mode, feature_bytes=None):
        loaded = _loaded(tmp_path)
        cfg = loaded.config.model_copy(
            update={"data": loaded.config.data.model_copy(update={"preprocessing_mode": preprocessing_mode})}
        )
        features = None
        if feature_bytes is not None:
            auto = cfg.data.model_copy(update={"preprocessing_mode": "auto"})
            features = decide_mode(auto, feature_bytes, budget_bytes=10**9)
        return plan_candidates(
            cfg, CPU_MACHINE, batch_sizes=None, train_clips=36, stages=["preprocessing"], features=features
        )

    candidates, not_swept = modes("auto", 3 * 10**9)  # auto is precompute here
    assert candidates["preprocessing"] == ["runtime", "auto"]
    assert not_swept["preprocessing=cache"] == (
        "the features need 3.0 GB of memory, over the 1.0 GB budget (data.cache_memory_limit)"
    )
    assert "preprocessing=precompute" not in not_swept  # the config's own auto is precompute
    candidates, not_swept = modes("auto", 10**8)  # auto is cache: not a second cache trial
    assert candidates["preprocessing"] == ["runtime", "auto"] and "preprocessing=cache" not in not_swept
    assert "auto chooses it" in not_swept["preprocessing=precompute"]
    assert modes("precompute", 10**8)[0]["preprocessing"] == ["runtime", "cache", "precompute"]
    assert modes("cache")[0]["preprocessing"] == ["runtime", "cache"]  # nothing known of the features


def test_the_store_a_config_reads_is_written_before_the_trials(tmp_path) -> None:
    # Else the first trial that reads the store pays the pass over every clip within its time.
    from xtts_cli.kinds import run_data_of
    from xtts_cli.profiling.benchmark import prepare_features

    loaded = _loaded(tmp_path)
    data = loaded.config.data.model_copy(
        update={"preprocessing_mode": "auto", "cache_memory_limit": 10**6, "feature_cache_dir": str(tmp_path / "store")}
    )
    cfg = loaded.config.model_copy(update={"data": data})
    run_data = run_data_of(cfg)
    notes: list[str] = []
    assert prepare_features(run_data, notes.append).mode == "precompute"
    written = len(notes)
    assert written > 0  # the pass was here, said in notes
    run_data.pipeline(note=notes.append)
    assert len(notes) == written  # the trial's pipeline finds every shard complete: nothing to compute
    # With precompute named, the validation clips are stored too (auto keeps these few in memory),
    # and every trial's Trainer.setup builds their pipeline: that store is written before as well.
    named = run_data.with_config(data_variant(cfg, preprocessing_mode="precompute"))
    assert named.eval_items and prepare_features(named, notes.append).mode == "precompute"
    written = len(notes)
    named.pipeline(training=False, note=notes.append)
    assert len(notes) == written
    store = tmp_path / "other"
    runtime = run_data.with_config(data_variant(cfg, preprocessing_mode="runtime", feature_cache_dir=str(store)))
    assert prepare_features(runtime, notes.append).mode == "precompute" and not store.exists()  # runtime reads no store


def test_default_batch_sizes_keep_two_batches_per_epoch() -> None:
    assert default_batch_sizes(16, 36) == [8, 16]
    assert default_batch_sizes(4, 1000) == [2, 4, 8, 16]
    assert default_batch_sizes(64, 10) == [64]


def test_out_of_memory_is_recognised_in_a_crashed_trial_output() -> None:
    stderr = "Traceback ...\ntensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,1024]\n"
    status, reason = _reason_from_stderr(stderr)
    assert status == "oom" and "OOM when allocating" in reason
    assert _reason_from_stderr("Traceback\nValueError: bad shape\n") == ("failed", "ValueError: bad shape")


@pytest.mark.slow
def test_a_failing_trial_is_contained_and_named(tmp_path) -> None:
    loaded = _loaded(tmp_path)
    canonical = {section: dict(body) for section, body in loaded.raw.items()}
    canonical["data"]["dataset_path"] = str(tmp_path / "no-such-dataset")
    outcome = run_trial(canonical, num_steps=2, warmup=0, timeout=120)
    assert outcome.status == "failed"
    assert "no-such-dataset" in outcome.reason


@pytest.mark.slow
def test_a_trial_past_its_time_limit_is_stopped(tmp_path) -> None:
    loaded = _loaded(tmp_path)
    canonical = {section: dict(body) for section, body in loaded.raw.items()}
    began = time.perf_counter()
    outcome = run_trial(canonical, num_steps=50, warmup=0, timeout=2)
    assert outcome.status == "timeout"
    assert time.perf_counter() - began < 30


@pytest.mark.slow
def test_a_trial_stopped_in_its_steps_leaves_no_temporary_folder_behind(tmp_path, monkeypatch) -> None:
    import tempfile

    loaded = _loaded(tmp_path)
    canonical = {section: dict(body) for section, body in loaded.raw.items()}
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    # Long enough to start timing its steps (its profiler's scratch folder made), far too short for them.
    outcome = run_trial(canonical, num_steps=100_000, warmup=0, timeout=25)
    assert outcome.status == "timeout"
    assert list(scratch.iterdir()) == []


def test_bad_arguments_fail_before_any_trial(runner, tmp_path) -> None:
    from xtts_cli.cli.app import app
    from xtts_cli.errors import XttsError

    config = tiny_config(tmp_path)
    # Usage errors (exit 2), read with the command line: before the dataset's scan.
    usage = {
        ("--batch-sizes", "4,x"): "not a comma-separated list",
        ("--batch-sizes", " "): "' ' names no batch size",
        ("--sweep", "batch_size,warp"): "warp: unknown stage; choose from graph_mode,",
        ("--sweep", ","): "',' names no stage",  # not every stage, as no --sweep is
        ("--budget-seconds", "nan"): "is not a number of seconds",
        ("--budget-seconds", "3e6"): "3e+06 is more than a week",  # a wait's timeout overflowed past 24.8 days
    }
    for args, expected in usage.items():
        result = runner.invoke(app, ["benchmark", "-c", str(config), *args])
        assert result.exit_code == 2 and expected in " ".join(result.output.split()), result.output
        assert "scanning the dataset" not in result.output
    cases = {
        ("--batch-sizes", "4,5000"): "--batch-sizes 5000: larger than the",
        ("--set", "data.batch_size=100"): "data.batch_size 100: larger than the",  # not --batch-sizes, not given
        # Not swept, it is what every trial would have failed on, each after its set-up.
        ("--set", "data.batch_size=100", "--sweep", "num_workers"): "data.batch_size 100: larger than the",
        ("--write-config", str(tmp_path / "missing" / "best.yaml")): "does not exist",
        ("--out", str(config / "best.yaml")): "is a file, not a folder",  # said not to exist
        ("--out", str(tmp_path)): "is a folder",  # found before the trials, not after them
        ("--out", "-"): "--out -: the best config is written to a file",  # it had written a file named "-"
    }
    for args, expected in cases.items():
        result = runner.invoke(app, ["benchmark", "-c", str(config), *args])
        assert result.exit_code == 1 and isinstance(result.exception, XttsError), result.output
        assert expected in result.exception.lines[0]
        assert "trial 1" not in result.output
    assert not (tmp_path / "-").exists() and not os.path.exists("-")
    # A folder cannot be created where a file is: the hint says where the config can go instead.
    under_a_file = runner.invoke(app, ["benchmark", "-c", str(config), "--out", str(config / "best.yaml")])
    assert under_a_file.exception.hint == "pass a path in a folder, such as -o best.yaml"


@pytest.mark.slow
def test_no_trial_to_the_end_is_one_json_object_with_the_error_and_exit_1(tmp_path) -> None:
    """A budget no trial fits: stdout is still one JSON object (the report, with the error's keys),
    not the report followed by an error object that no JSON reader takes."""
    config = tiny_config(tmp_path)
    result = run_xtts(["benchmark", "-c", str(config), "--steps", "2", "--budget-seconds", "3", "--json"], tmp_path)
    assert result.returncode == 1, result.stderr
    payload = json.loads(result.stdout)
    assert payload["best"] is None and payload["exit_code"] == 1
    assert payload["error"] == "no trial ran to the end, so there is no best setting"
    # Out of time, not of memory: the hint is the budget's alone.
    assert payload["hint"].startswith("see the reasons in the table; raise --budget-seconds (a trial ran past ")
    assert payload["hint"].endswith(" s unfinished; the default is 900)")  # how far: "raise" alone had not said
    assert "error: no trial ran to the end" in result.stderr
    assert undocumented_keys("benchmark", payload) == []


@pytest.mark.slow
@pytest.mark.parametrize(("stop", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_sigterm_or_a_closed_terminal_stops_the_running_trial_and_leaves_no_scratch(tmp_path, stop, code) -> None:
    # SIGHUP had ended the sweep at once, the trials that finished untold.
    import os
    import signal
    import subprocess
    import sys

    from training_support import subprocess_env, terminal_signals

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    config = tiny_config(tmp_path)
    command = [
        sys.executable,
        "-m",
        "xtts_cli",
        "benchmark",
        "-c",
        str(config),
        "--sweep",
        "num_workers",
        "--steps",
        "50",
    ]
    process = subprocess.Popen(
        command,
        env={**subprocess_env(), "TMPDIR": str(scratch)},
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=terminal_signals,
    )
    deadline = time.monotonic() + 120
    # The trial's spec, not its folder: made a moment before the spec, the folder alone had been met empty.
    while not list(scratch.glob("xtts-benchmark-trial-*/spec.json")) and time.monotonic() < deadline:
        time.sleep(0.2)
    spec = next(scratch.glob("xtts-benchmark-trial-*/spec.json"))
    time.sleep(1.0)  # the trial's process is running
    process.send_signal(getattr(signal, stop))
    _, said = process.communicate(timeout=60)
    assert process.returncode == code and f"error: stopped by {stop} after " in said, said[-2000:]
    assert not list(scratch.glob("xtts-benchmark-trial-*"))
    running = subprocess.run(["pgrep", "-f", str(spec)], capture_output=True, text=True).stdout.split()
    assert [pid for pid in running if int(pid) != os.getpid()] == []


@pytest.mark.slow
def test_ctrl_c_keeps_the_trials_that_finished_and_writes_no_config(tmp_path) -> None:
    import signal
    import subprocess
    import sys

    from training_support import subprocess_env

    scratch, out = tmp_path / "tmp", tmp_path / "best.yaml"
    scratch.mkdir()
    command = [sys.executable, "-m", "xtts_cli", "benchmark", "-c", str(tiny_config(tmp_path)), "--json"]
    command += ["--sweep", "num_workers", "--steps", "20", "-o", str(out)]
    with (tmp_path / "stderr").open("w") as stderr, (tmp_path / "stdout").open("w") as stdout:
        process = subprocess.Popen(
            command,
            env={**subprocess_env(), "TMPDIR": str(scratch)},
            stdout=stdout,
            stderr=stderr,
            # SIGINT as a terminal leaves it: a test worker may run with it ignored, which the child inherits.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        deadline = time.monotonic() + 300
        # Stopped in its second trial, once the first has finished.
        while "trial 1 (" not in (tmp_path / "stderr").read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        while not list(scratch.glob("xtts-benchmark-trial-*")) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)
        process.send_signal(signal.SIGINT)
        assert process.wait(60) == 130
    report = json.loads((tmp_path / "stdout").read_text())
    assert report["stopped"] == "Ctrl-C" and report["exit_code"] == 130
    assert report["trials"][0]["status"] == "ok" and report["trials"][0]["samples_per_sec"] > 0
    assert report["trials"][-1]["reason"] == "stopped by Ctrl-C" and len(report["trials"]) == 2
    assert (
        report["error"]
        == f"stopped by Ctrl-C after 1 trial(s); the table holds those that finished, and {out} was not written"
    )
    assert report["hint"] == "run it again to finish the sweep: --sweep num_workers"  # the stages it had not finished
    assert not out.exists() and not list(scratch.glob("xtts-benchmark-trial-*"))
    assert "Traceback" not in (tmp_path / "stderr").read_text()


@pytest.mark.slow
def test_benchmark_times_the_layouts_with_real_trials_and_writes_the_best_config(tmp_path) -> None:
    # The CPU twin's two logical devices stand for two GPUs: one device, the data/model split and
    # mirrored each train for real, in processes of their own.
    # The file's dataset is gone and --set names the one to read: the trials read that too.
    config = tiny_config(tmp_path, extra="devices:\n  logical_cpu_devices: 2  # tuned on the laptop\n")
    text = config.read_text(encoding="utf-8").replace("data:\n", f"data:\n  dataset_path: {tmp_path / 'gone'}\n", 1)
    config.write_text("# xtts train --config tiny.yaml  # my settings, keep this comment\n" + text, encoding="utf-8")
    out = tmp_path / "best.yaml"
    sample = f"--set=data.dataset_path={os.path.relpath(BUNDLED_SAMPLE, tmp_path)}"  # typed for this folder
    result = run_xtts(
        ["benchmark", "-c", str(config), sample, "--sweep", "layout", "--steps", "3", "-o", str(out), "--json"],
        cwd=tmp_path,
        timeout=400,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    ran = [t for t in report["trials"] if t["status"] == "ok" and t["stage"] != "recheck"]
    layouts = sorted(_layout_of({"devices": {k.split(".")[1]: v for k, v in t["settings"].items()}}) for t in ran)
    assert layouts == ["auto", "mirrored", "split 0->1"]  # auto: one device on a CPU
    assert report["trials"][-1]["stage"] == "recheck" and report["drift"] is not None
    assert all(t["samples_per_sec"] > 0 and t["retraces"] == 0 for t in ran)
    assert report["baseline"] == 0 and report["best"] is not None
    assert report["largest_batch_size"] is None  # no batch size was swept
    assert undocumented_keys("benchmark", report) == [], "add them to docs/json.md (their model's Field)"
    assert sorted(report["ranking"]) == [t["index"] for t in ran]
    assert "trial 1 (config as written)" in result.stderr
    text = out.read_text(encoding="utf-8")
    # Its first line's command reads the written file, and the value --set gave is in it.
    assert text.startswith(f"# xtts train --config {out}  # my settings, keep this comment\n")
    assert "# tuned on the laptop" in text and yaml.safe_load(text)["data"]["dataset_path"] == str(BUNDLED_SAMPLE)
    best = report["trials"][report["best"]]["settings"]
    devices = yaml.safe_load(text)["devices"]
    assert devices.get("strategy", "auto") == best["devices.strategy"]
    assert (devices.get("data_gpu"), devices.get("model_gpu")) == (best["devices.data_gpu"], best["devices.model_gpu"])
    assert report["written_config"] == str(out)


def test_the_drift_note_says_slower_without_a_minus_sign():
    from xtts_cli.profiling.benchmark import drift_note

    assert drift_note(-0.44).startswith("the fastest trial ran 44% slower when run again at the end")
    assert drift_note(0.12).startswith("the fastest trial ran 12% faster")
    assert drift_note(0.12).endswith("smaller than 12% between trials are not reliable")


def test_a_winner_whose_gain_does_not_hold_when_run_again_leaves_the_config_as_written(tmp_path) -> None:
    # One sweep wrote num_workers 2 at 1.17x, and its own recheck ran it below the config as written.
    seen: list = []

    def speeds(config) -> float:
        again = config in seen
        seen.append(config)
        if config == seen[0]:
            return 100.0  # the config as written
        return 90.0 if again else 117.0  # the winner: fast once, slower than the config when run again

    report = _run(_loaded(tmp_path), _stand_in(speeds), stages=["prefetch"])
    assert report.trials[-1].stage == "recheck" and report.trials[-1].samples_per_sec == 90.0
    assert report.best == report.baseline and report.changes == [] and report.speedup == 1.0
    assert any(note.endswith("the config as written is kept") for note in report.notes), report.notes
    steady = _run(_loaded(tmp_path), _stand_in(lambda c: 100.0 if c == seen[0] else 117.0), stages=["prefetch"])
    assert steady.best != steady.baseline and steady.changes  # a gain that holds is kept


def test_a_gain_that_does_not_hold_keeps_the_config_as_written_and_names_the_trial_as_shown() -> None:
    from xtts_cli.profiling.benchmark import TrialRecord, _held

    def trial(index: int, stage: str, rate: float) -> TrialRecord:
        return TrialRecord(
            index=index, stage=stage, settings={}, changed={}, status="ok", samples_per_sec=rate, score=rate
        )

    baseline, best = trial(0, "baseline", 41.8), trial(1, "batch_size", 50.0)
    notes: list[str] = []
    assert _held(best, baseline, [baseline, best, trial(2, "recheck", 34.0)], notes) is baseline
    # Trials are shown from 1 (stderr's "trial 2 (batch_size=4)"): the note names the same one.
    assert notes == [
        "the best setting (trial 2) did not score 3% above the config as written when run again "
        "(34.0 samples/s against 41.8): the config as written is kept"
    ]
    # The budget spent before the winner ran again: no second run confirmed it, so it is not recommended.
    notes.clear()
    skipped = TrialRecord(index=2, stage="recheck", settings={}, changed={}, status="skipped", reason="budget spent")
    assert _held(best, baseline, [baseline, best, skipped], notes) is baseline
    assert notes == [
        "the best setting (trial 2) was not run again to check its gain, the budget spent: the config as written "
        "is kept (a larger --budget-seconds leaves time to check it)"
    ]
    # Stopped by a signal before it: said so, not the budget blamed.
    notes.clear()
    assert _held(best, baseline, [baseline, best], notes, "SIGTERM") is baseline
    assert notes == [
        "the best setting (trial 2) was not run again to check its gain, the search stopped by SIGTERM: the config "
        "as written is kept"
    ]


def test_a_second_out_to_the_same_file_keeps_the_first_backup(tmp_path) -> None:
    # Each run to the same --out had written over FILE.bak: after two, the config its user wrote was gone.
    from xtts_cli.cli.benchmark import _write_best
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.findings import ConfigChange

    config = tmp_path / "cfg.yaml"
    config.write_text("data:\n  num_buckets: 4  # my own note\n", encoding="utf-8")
    for buckets in (2, 3):
        change = ConfigChange(key="data.num_buckets", value=buckets)
        written, kept = _write_best(resolve_config(config), [change], config)
        assert written == config and kept is not None and kept.is_file()
    assert (tmp_path / "cfg.yaml.bak").read_text(encoding="utf-8").endswith("num_buckets: 4  # my own note\n")
    assert "num_buckets: 2" in (tmp_path / "cfg.yaml.bak.1").read_text(encoding="utf-8")
    assert "num_buckets: 3  # my own note" in config.read_text(encoding="utf-8")
