"""The NVML rules on utilisation series recorded on real GPUs (an H100 and an H200, by
scripts/record_nvml_series.py through GpuSampler, under the same known loads): the refresh estimate
and the oscillation detector, including the aliasing the sampler's docstring warns about. Each rule
holds on each card's recording."""

import json
from pathlib import Path

import pytest

from xtts_cli.devices.nvml_sampler import RESOLVABLE_REFRESHES, refresh_interval
from xtts_cli.stats.oscillation import detect_oscillation

CARDS = ("h100", "h200")
RECORDINGS = {
    card: json.loads((Path(__file__).parent / "data" / f"nvml_{card}_utilization.json").read_text()) for card in CARDS
}
RECORDED = RECORDINGS["h100"]


def series(card, name):
    values, hz = RECORDINGS[card]["series"][name]["utilization_gpu"], RECORDINGS[card]["series"][name]["hz"]
    return [i / hz for i in range(len(values))], values, hz


@pytest.fixture(params=CARDS)
def phase(request):
    return lambda name: series(request.param, name)


@pytest.mark.parametrize("card", CARDS)
def test_the_recording_is_from_a_gpu_under_the_named_loads(card):
    assert RECORDINGS[card]["gpu"].startswith(f"NVIDIA {card.upper()}") and len(RECORDINGS[card]["series"]) == 5


def test_each_recording_reads_busy_and_idle(phase):
    _, busy, _ = phase("steady big matmuls 5 s")
    assert sum(v >= 95 for v in busy) >= 0.8 * len(busy)
    _, idle, _ = phase("idle 3 s")
    assert sum(v == 0 for v in idle) >= 0.8 * len(idle)


@pytest.mark.parametrize(
    "name", ["steady tiny kernels 5 s", "cycle 0.6 s busy / 0.6 s idle x10", "cycle 0.25/0.25 x20 at 20 Hz"]
)
def test_the_refresh_is_the_gpus_whatever_the_sampling_rate(name, phase):
    # NVML changed each card's reading every 0.2 s: 2 samples at 10 Hz, 4 at 20 Hz. In the 0.6 s
    # cycle most gaps are 0.6 s (saturated windows read alike); the shortest common one is the refresh.
    times, values, _ = phase(name)
    assert refresh_interval(times, values) == pytest.approx(0.2)


@pytest.mark.parametrize("name", ["idle 3 s", "steady big matmuls 5 s"])
def test_a_steady_reading_hides_the_refresh(name, phase):
    times, values, _ = phase(name)
    assert refresh_interval(times, values) is None


def test_a_cycle_of_many_refreshes_is_found_at_its_period(phase):
    times, values, hz = phase("cycle 0.6 s busy / 0.6 s idle x10")
    found = detect_oscillation(values)
    assert found.detected and found.period / hz == pytest.approx(1.2, abs=0.05)
    assert 1.2 >= RESOLVABLE_REFRESHES * refresh_interval(times, values)


def test_a_cycle_of_few_refreshes_reads_at_a_multiple_of_its_period(phase):
    # 0.5 s of load cycle is 2.5 refreshes: the readings repeat only every 1.0 s, so that is the
    # period the detector reports. Hence the warning below RESOLVABLE_REFRESHES refreshes.
    times, values, hz = phase("cycle 0.25/0.25 x20 at 20 Hz")
    found = detect_oscillation(values)
    assert found.detected and found.period / hz == pytest.approx(1.0, abs=0.05)
    assert 0.5 < RESOLVABLE_REFRESHES * refresh_interval(times, values)


def test_the_refresh_needs_enough_changes_and_ignores_rare_jitter():
    step = 0.1
    assert refresh_interval([0, step, 2 * step], [1.0, 2.0, 3.0]) is None
    values = []
    for level in [10, 20] * 20:  # two samples per reading ...
        values += [float(level)] * 2
    values[41] = 15.0  # ... and one reading caught mid-change
    times = [i * step for i in range(len(values))]
    assert refresh_interval(times, values) == pytest.approx(0.2)
    assert refresh_interval(times, [None, float("nan")] + values[2:]) == pytest.approx(0.2)


def test_the_step_report_names_the_cycle_the_sm_activity_and_the_refresh():
    from xtts_cli.cli.profile_step import gpu_lines
    from xtts_cli.devices.nvml_sampler import GpuSummary

    times, values, hz = series("h100", "cycle 0.6 s busy / 0.6 s idle x10")
    found = detect_oscillation(values)
    summary = GpuSummary(
        index=0,
        name=RECORDED["gpu"],
        samples=len(values),
        duration_s=times[-1],
        rate_hz=hz,
        utilization_mean=sum(values) / len(values),
        oscillation=found,
        oscillation_period_s=found.period / hz,
        sm_active_mean_percent=47.2,
        nvml_refresh_s=refresh_interval(times, values),
    )
    text = "\n".join(gpu_lines([summary]))
    assert "mean utilisation 50 %, SM activity 47 %, 121 samples at 10.0 Hz" in text
    assert "utilisation cycles every 1.20 s" in text
    assert "every 0.20 s: a cycle shorter than 0.60 s may not show" in text
    steady = summary.model_copy(
        update={"oscillation": detect_oscillation([50.0] * 40), "nvml_refresh_s": None, "sm_active_mean_percent": None}
    )
    assert gpu_lines([steady]) == [f"GPU 0 ({RECORDED['gpu']}): mean utilisation 50 %, 121 samples at 10.0 Hz"]
