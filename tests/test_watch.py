"""The training watch: figures over a sliding window of steps, a warning when one crosses its line and
a line when it is back; on real training steps with a loader slowed on purpose mid-run, and each GPU
read on its own through the NVML stand-in."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_devices_nvml_sampler import FakeNvml, wait_for_samples
from training_support import tiny_config

from xtts_cli.config.schema import XttsConfig
from xtts_cli.training.watch import GpuReading, Watch

SHAPE = (4, 200, 80)


def watch(**settings) -> Watch:
    return Watch(XttsConfig.model_validate({"watch": {"window_seconds": 30, "repeat_minutes": 10, **settings}}), 2)


def feed(w: Watch, start: float, seconds: float, *, wait: float, compute: float, step: int = 0, gpus=None, others=None):
    """Steps back to back for `seconds` from `start`, checked every 5 s: (notices, the time reached)."""
    t, notices, checked = start, [], start
    while t < start + seconds:
        t += wait + compute
        step += 1
        w.add(t, wait, compute, SHAPE)
        if t - checked >= 5:
            checked = t
            notices += w.check(t, step, gpus, others)
    return notices, t


def test_a_healthy_run_says_nothing_and_a_starved_one_is_named_once_then_back():
    w = watch()
    quiet, t = feed(w, 0, 120, wait=0.002, compute=0.2)
    assert quiet == []
    starved, t2 = feed(w, t, 120, wait=0.15, compute=0.2)
    # One warning, within the window, with the finding diagnose gives and its fix; not repeated
    # while it lasts (repeat_minutes 10).
    assert [(n.id.startswith("input-bound"), n.state) for n in starved] == [(True, "warning")]
    first = starved[0]
    assert first.figure >= 20 and "waits for data (over watch.data_wait_percent" in first.message
    # Settings that follow the rules: where to measure, not a mode slower than memory.
    assert first.fix is None and "xtts benchmark" in first.message
    back, _ = feed(w, t2, 120, wait=0.002, compute=0.2)
    assert [(n.id, n.state) for n in back] == [(first.id, "recovered")]
    assert "data wait back to normal" in back[0].message


def test_a_window_shorter_than_a_step_still_names_a_starved_run():
    # 5 s steps (4 of them waiting) under a 2 s window: the window had never been covered, nothing said.
    starved, _ = feed(watch(window_seconds=2), 0, 60, wait=4.0, compute=1.0)
    assert [(n.id.startswith("input-bound"), n.state) for n in starved] == [(True, "warning")]
    assert starved[0].figure == pytest.approx(80.0)


def test_every_setting_that_slows_the_input_is_named_in_the_one_warning():
    # Named one at a time, each fix had taken a run to find the next (the costliest came last).
    slow = {"prefetch_buffer_size": 0, "num_workers": 1, "preprocessing_mode": "runtime"}
    w = Watch(XttsConfig.model_validate({"watch": {"window_seconds": 30}, "data": slow}), 2)
    (starved,) = feed(w, 0, 120, wait=0.15, compute=0.2)[0]
    assert starved.fix == "set data.prefetch_buffer_size: auto"
    assert starved.message.endswith("; also set data.num_workers: auto, set data.preprocessing_mode: auto")


def test_a_figure_under_one_percent_is_said_on_its_side_of_a_line_under_one_percent():
    w = watch(data_wait_percent=0.1)
    _, t = feed(w, 0, 60, wait=0.0, compute=0.2)
    starved, t = feed(w, t, 60, wait=0.0014, compute=0.2)  # 0.7 % waits, over a line of 0.1 %
    said = f"{starved[0].figure:.1f} % of each step waits for data (over watch.data_wait_percent, 0.1 %)"
    assert 0.1 <= starved[0].figure < 1 and starved[0].message.startswith(said), starved  # it had said "0 %"
    back, _ = feed(w, t, 60, wait=0.0, compute=0.2)
    assert back[0].message.endswith("back to normal (0 %)"), back


def test_a_lasting_finding_is_said_again_after_repeat_minutes_and_a_figure_at_the_line_does_not_flap():
    w = watch(repeat_minutes=1)
    _, t = feed(w, 0, 60, wait=0.0, compute=0.2)
    starved, t = feed(w, t, 200, wait=0.15, compute=0.2)
    assert [n.state for n in starved] == ["warning"] * 3  # at 0, 1 and 2 minutes or so
    # Just under the line (20 %) is not yet back: recovery needs it under half of it.
    near, _ = feed(w, t, 120, wait=0.045, compute=0.2)
    assert "recovered" not in [n.state for n in near] and w.wait_percent() == pytest.approx(18.4, abs=0.1)


def test_a_step_that_computes_slower_with_no_data_wait_is_host_contention():
    w = watch()
    _, t = feed(w, 0, 90, wait=0.001, compute=0.2)
    slowed, t = feed(w, t, 90, wait=0.001, compute=0.3)
    assert [(n.id, n.state) for n in slowed] == [("host-contention", "warning")]
    assert "50 % slower" in slowed[0].message and "best stretch of this run" in slowed[0].message
    back, _ = feed(w, t, 90, wait=0.001, compute=0.2)
    assert [(n.id, n.state) for n in back] == [("host-contention", "recovered")]


def test_the_lowest_contention_line_a_config_takes_still_names_a_step_slowed_past_it():
    # Under 5 % a config is refused (the step's own noise); at 5, a step 1 % slower is quiet, 8 % is named.
    with pytest.raises(ValueError, match="host_contention_percent"):
        watch(host_contention_percent=3)
    w = watch(host_contention_percent=5)
    quiet, t = feed(w, 0, 90, wait=0.001, compute=0.2)
    quiet += feed(w, t, 60, wait=0.001, compute=0.202)[0]
    assert quiet == []
    slowed, _ = feed(w, t + 60, 90, wait=0.001, compute=0.216)
    assert [(n.id, n.state) for n in slowed] == [("host-contention", "warning")]


def test_contention_names_other_processes_when_they_took_the_cores_and_the_pipeline_when_they_did_not():
    def slowed(others):
        w = watch()
        _, t = feed(w, 0, 90, wait=0.001, compute=0.2, others=others)
        (notice,) = feed(w, t, 60, wait=0.001, compute=0.3, others=others)[0]
        return notice

    theirs = slowed(1.6)
    assert "other processes kept 1.6 of this machine's 2 usable cores busy" in theirs.message and not theirs.fix
    ours = slowed(0.05)  # a quiet machine: the pipeline took it, and the fix says how to stop that
    assert "the pipeline keeps up by taking the step's CPU" in ours.message
    assert ours.fix == "set data.preprocessing_mode: precompute"
    unread = slowed(None)  # no /proc/stat: either, and `top` tells
    assert "another process on this machine or the input pipeline" in unread.message


def test_the_watch_hook_reads_what_a_real_process_beside_it_takes() -> None:
    import subprocess
    import sys

    from xtts_cli.training.watch import WatchHook

    hook = WatchHook(XttsConfig.model_validate({}), 2, metrics=None, progress=lambda notice: None)
    if hook.cores is None:  # a cgroup CPU quota: other tenants' cores cannot be told from ours
        assert hook._others(30.0) is None
        return
    assert hook._others(30.0) is None  # one reading: no stretch yet
    spinner = subprocess.Popen(
        [sys.executable, "-c", "import time\nend = time.time() + 1.5\nwhile time.time() < end: pass"]
    )
    time.sleep(1.2)
    spinner.wait()
    assert hook._others(30.0) > 0.5


def test_a_process_started_mid_window_is_read_at_its_share_not_at_half_of_it() -> None:
    # A busy loop started half-way into the window had read 0.3 of 2 cores over it, under the line, and the
    # watch blamed the pipeline for the CPU the loop took (with a fix to the pipeline's threads). Reads of
    # (seconds, this process's CPU seconds, every process's): quiet for 3 s, then one core busy for 3 s.
    from xtts_cli.training.watch import others_busy

    reads = [(0.0, 0.0, 0.0), (3.0, 0.5, 0.5), (6.0, 1.0, 4.0)]
    assert others_busy(reads, 8.0) == 1.0  # its second half (from 2 s): not (4.0 - 1.0) / 6 over the whole
    assert others_busy(reads, 100.0) == 0.5  # a window whose half holds no read but the first: the whole
    assert others_busy([(0.0, 0.0, 0.0), (0.5, 0.1, 0.3)], 8.0) is None  # under a second: not read


def test_an_idle_card_fed_batches_of_two_is_told_to_take_larger_ones():
    w = Watch(XttsConfig.model_validate({"data": {"batch_size": 2}, "watch": {"window_seconds": 30}}), 2)
    notices, _ = feed(w, 0, 60, wait=0.001, compute=0.2, gpus={0: GpuReading(9.0, 5.0, "model")})
    assert [(n.id, n.state) for n in notices] == [("gpu-underused", "warning")]
    assert "a batch of 2 is a few small kernels" in notices[0].message and notices[0].fix == "set data.batch_size: 16"


def test_an_idle_card_that_gets_busy_again_is_said_to_be_back():
    w = watch()
    notices, t = feed(w, 0, 60, wait=0.001, compute=0.2, gpus={0: GpuReading(10.0, 20.0, "model")})
    assert [(n.id, n.state) for n in notices] == [("gpu-underused", "warning")]
    # Over the line of 50 but not well back (under 75 %): no recovery yet; then 90 %: back.
    near, t = feed(w, t, 60, wait=0.001, compute=0.2, gpus={0: GpuReading(70.0, 20.0, "model")})
    back, _ = feed(w, t, 60, wait=0.001, compute=0.2, gpus={0: GpuReading(90.0, 20.0, "model")})
    assert near == [] and [(n.id, n.state) for n in back] == [("gpu-underused", "recovered")]


def test_each_gpu_is_judged_on_its_own_and_an_idle_data_card_is_named_with_the_layout_advice():
    w = watch()
    gpus = {0: GpuReading(util=4.0, memory_percent=20.0, role="data"), 1: GpuReading(97.0, 40.0, "model")}
    notices, _ = feed(w, 0, 60, wait=0.001, compute=0.2, gpus=gpus)
    assert [(n.id, n.state) for n in notices] == [("gpu-underused", "warning")]
    assert "GPU 0 (data) is busy 4 %" in notices[0].message and notices[0].fix == "set devices.strategy: mirrored"


@pytest.mark.slow
def test_real_steps_with_a_loader_slowed_mid_run_warn_then_recover(tmp_path: Path) -> None:
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.training.controller import Controller
    from xtts_cli.training.trainer import Trainer
    from xtts_cli.training.watch import WatchHook

    config = resolve_config(tiny_config(tmp_path), {"training.max_steps": 10_000, "watch.window_seconds": 3}).config
    trainer = Trainer(config, run_dir=tmp_path / "run")
    records: list[dict] = []
    events: list = []

    class Records:
        def write(self, record: dict) -> None:
            records.append(record)

    slow = {"from": None, "until": None}

    def planted(parts):
        """The run's own batches; between `from` and `until` each is held back 0.3 s more."""
        for batch, wait in parts.steps.batches(parts.input.train_ds):
            now = time.monotonic()
            if slow["from"] is not None and slow["from"] <= now < slow["until"]:
                time.sleep(0.3)
                wait += 0.3
            yield batch, wait

    try:
        parts = trainer.setup()
        hook = WatchHook(config, 2, Records(), events.append)
        controller, result = Controller(trainer), trainer.new_result()
        controller.run_steps(parts, [hook], result, steps=20)  # traced and warm
        source = planted(parts)
        began = time.monotonic()
        slow["from"], slow["until"] = began + 4.5, began + 12
        while time.monotonic() < began + 19.5:
            controller.run_steps(parts, [hook], result, steps=5, source=source)
    finally:
        trainer.close()
    # (Host contention may be named too: the other tests running beside this one take its CPU.)
    starved = [r for r in records if r["watch"].startswith("input-bound")]
    assert [r["state"] for r in starved] == ["warning", "recovered"], records
    assert [e.state for e in events if e.id.startswith("input-bound")] == ["warning", "recovered"]
    assert starved[0]["figure"] >= 20
    hook.on_end(result)  # `train --json` gives them too: a script had seen none of them
    assert result.watch == records


def test_per_gpu_fields_and_roles_from_nvml(monkeypatch) -> None:
    from xtts_cli.devices.nvml_sampler import GpuSampler
    from xtts_cli.training.events import StepLogged

    class IdleDataCard(FakeNvml):
        def _utilisation(self, index):
            super()._utilisation(index)
            return 3 if index == 0 else 96

    monkeypatch.setitem(__import__("sys").modules, "pynvml", IdleDataCard(gpus=2, gpm_on=()))
    with GpuSampler([0, 1], hz=40) as sampler:
        wait_for_samples(sampler, 1, 8)
        readings = {}
        for index, role in ((0, "data"), (1, "model")):
            samples = sampler.samples(index)
            util = sum(s.utilization_gpu for s in samples) / len(samples)
            memory = 100.0 * samples[-1].memory_used_mib / samples[-1].memory_total_mib
            readings[index] = GpuReading(util, memory, role)
    logged = StepLogged(1, 0, {"loss": 1.0}, 1e-3, 100.0, 1.0, 40.0, 1, 49.5, gpus=readings)
    record = logged.record()
    assert record["gpu0_util"] == pytest.approx(3) and record["gpu1_util"] == pytest.approx(96)
    assert record["gpu0_memory_percent"] == pytest.approx(100 / 24) and "gpu1_memory_percent" in record
    notices, _ = feed(watch(), 0, 60, wait=0.001, compute=0.2, gpus=readings)
    assert [n.message.split(":")[0] for n in notices] == ["GPU 0 (data) is busy 3 % of the last 30 s"]


def test_a_watch_finding_is_said_on_stderr_under_json_as_on_the_terminal(capsys):
    from xtts_cli.cli.progress import TrainingProgress
    from xtts_cli.training.events import Watched

    for enabled in (False, True):  # --json, then the terminal's progress
        progress = TrainingProgress(enabled=enabled)
        progress.update(Watched(12, "input-bound-prefetch", "warning", 31.0, "waits 31 %", "set data.prefetch: 2"))
        progress.update(Watched(40, "input-bound-prefetch", "recovered", 4.0, "data wait back to normal (4 %)"))
        out, err = capsys.readouterr()
        assert out == "" and err.splitlines() == [
            "watch: step 12: input-bound-prefetch: waits 31 % (fix: set data.prefetch: 2)",
            "watch: step 40: input-bound-prefetch recovered: data wait back to normal (4 %)",
        ], (enabled, err)
