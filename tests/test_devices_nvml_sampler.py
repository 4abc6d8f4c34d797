"""The sampler against this machine's real absence of NVML, and against a stand-in `pynvml` module.

No NVIDIA driver can exist on our CI machines, so the sampling path runs against a module that
offers the same functions as nvidia-ml-py (the names and return shapes our code calls) and answers
with a utilisation square wave. Discovery goes through the real `xtts_cli.devices.gpu_info` code.
"""

import sys
import threading
import time
import types

import pytest

from xtts_cli.devices.nvml_sampler import UNAVAILABLE, GpuSampler

HALF_PERIOD = 4  # samples high, then samples low: a period of 8 samples


class FakeNvml(types.ModuleType):
    NVML_CLOCK_SM = 1
    NVML_SUCCESS = 0
    NVML_GPM_METRICS_GET_VERSION = 1
    NVML_GPM_METRIC_SM_UTIL = 2

    class NVMLError(Exception):
        pass

    def __init__(self, gpus=2, gpm_on=(0,), fail_after=None):
        super().__init__("pynvml")
        self.gpus = gpus
        self.gpm_on = set(gpm_on)
        self.fail_after = fail_after
        self.inits = 0
        self.shutdowns = 0
        self.reads = {}
        self.freed = 0
        self.lock = threading.Lock()

        class MetricsGet:
            def __init__(self):
                self.metrics = [types.SimpleNamespace(metricId=0, nvmlReturn=1, value=0.0) for _ in range(4)]

        self.c_nvmlGpmMetricsGet_t = MetricsGet

    def nvmlInit(self):
        self.inits += 1

    def nvmlShutdown(self):
        self.shutdowns += 1

    def nvmlSystemGetDriverVersion(self):
        return b"550.54.15"

    def nvmlDeviceGetCount(self):
        return self.gpus

    def nvmlDeviceGetHandleByIndex(self, index):
        return ("handle", index)

    def nvmlDeviceGetName(self, handle):
        return "NVIDIA GeForce RTX 4090"

    def nvmlDeviceGetCudaComputeCapability(self, handle):
        return (8, 9)

    def nvmlDeviceGetMemoryInfo(self, handle):
        return types.SimpleNamespace(total=24 * 2**30, used=(handle[1] + 1) * 2**30, free=0)

    def _utilisation(self, index):
        with self.lock:
            count = self.reads.get(index, 0)
            self.reads[index] = count + 1
        if self.fail_after is not None and count >= self.fail_after:
            raise RuntimeError("driver went away")
        return 90 if (count // HALF_PERIOD) % 2 == 0 else 10

    def nvmlDeviceGetUtilizationRates(self, handle):
        return types.SimpleNamespace(gpu=self._utilisation(handle[1]), memory=0)

    def nvmlDeviceGetPowerUsage(self, handle):
        if handle[1] == 1:
            raise self.NVMLError("Not Supported")
        return 250_000  # milliwatts

    def nvmlDeviceGetClockInfo(self, handle, clock):
        assert clock == self.NVML_CLOCK_SM
        return 2520

    def nvmlGpmQueryDeviceSupport(self, handle):
        return types.SimpleNamespace(isSupportedDevice=int(handle[1] in self.gpm_on))

    def nvmlGpmSampleAlloc(self):
        return types.SimpleNamespace(sm=None)

    def nvmlGpmSampleFree(self, sample):
        self.freed += 1

    def nvmlGpmSampleGet(self, handle, sample):
        sample.sm = 42.0

    def nvmlGpmMetricsGet(self, request):
        assert request.version == self.NVML_GPM_METRICS_GET_VERSION and request.numMetrics == 1
        assert request.sample1 is not request.sample2
        metric = request.metrics[0]
        if metric.metricId == self.NVML_GPM_METRIC_SM_UTIL:
            metric.value, metric.nvmlReturn = request.sample2.sm, self.NVML_SUCCESS
        return request


@pytest.fixture
def fake_nvml(monkeypatch):
    def install(**kwargs):
        module = FakeNvml(**kwargs)
        monkeypatch.setitem(sys.modules, "pynvml", module)
        return module

    return install


def wait_for_samples(sampler, index, count, timeout=10.0):
    deadline = time.monotonic() + timeout
    while len(sampler.samples(index)) < count and time.monotonic() < deadline:
        time.sleep(0.05)


def test_without_nvml_it_records_nothing_and_says_why():
    # This machine has no NVIDIA driver: the real pynvml fails to start.
    with GpuSampler(None, hz=10) as sampler:
        time.sleep(0.05)
    assert sampler.unavailable_reason.startswith(UNAVAILABLE)
    assert not sampler.running
    summary = sampler.summary()
    assert summary.gpus == []
    assert summary.unavailable_reason == sampler.unavailable_reason
    assert sampler.samples(0) == []


def test_without_the_bindings_it_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    with GpuSampler([0]) as sampler:
        pass
    assert sampler.unavailable_reason == UNAVAILABLE + "nvidia-ml-py is not installed"


@pytest.mark.parametrize("hz", [0, 2, 3.9, 51])
def test_rates_outside_the_useful_range_are_refused(hz):
    with pytest.raises(ValueError, match="hz"):
        GpuSampler(None, hz=hz)


def test_samples_a_utilisation_square_wave_and_finds_the_cycle(fake_nvml):
    nvml = fake_nvml(gpus=2, gpm_on=(0,))
    with GpuSampler(None, hz=40) as sampler:
        assert sampler.running
        wait_for_samples(sampler, 1, 48)
    assert not sampler.running
    summary = sampler.summary()
    assert summary.unavailable_reason is None and summary.stopped_by is None
    assert [gpu.index for gpu in summary.gpus] == [0, 1]

    for gpu in summary.gpus:
        assert gpu.samples >= 48
        assert gpu.name == "NVIDIA GeForce RTX 4090"
        assert gpu.rate_hz >= 4.0
        assert gpu.utilization_min == 10 and gpu.utilization_max == 90
        assert 40 <= gpu.utilization_mean <= 60
        assert gpu.utilization_cv > 0.5
        assert gpu.oscillation.detected, gpu.oscillation.reason
        assert abs(gpu.oscillation.period - 2 * HALF_PERIOD) <= 1
        assert gpu.oscillation_period_s == pytest.approx(gpu.oscillation.period / gpu.rate_hz)
        assert gpu.memory_total_mib == 24 * 1024
        assert gpu.sm_clock_mean_mhz == 2520
        # The stand-in changes its reading every HALF_PERIOD reads: that is the refresh the summary sees.
        assert gpu.nvml_refresh_s == pytest.approx(HALF_PERIOD / gpu.rate_hz, rel=0.3)

    gpu0, gpu1 = summary.gpus
    assert gpu0.memory_used_peak_mib == 1024 and gpu1.memory_used_peak_mib == 2048
    assert gpu0.power_mean_w == 250.0
    assert gpu1.power_mean_w is None  # NVML said "not supported": None, no error
    assert gpu0.sm_active_mean_percent == 42.0  # GPM offered on GPU 0 only
    assert gpu1.sm_active_mean_percent is None

    samples = sampler.samples(0)
    times = [s.t for s in samples]
    assert times == sorted(times) and times[0] >= 0
    assert {s.utilization_gpu for s in samples} == {10.0, 90.0}
    # Every nvmlInit is matched by an nvmlShutdown, and the GPM buffers are given back.
    assert nvml.inits == nvml.shutdowns >= 2
    assert nvml.freed == 2


def test_only_the_requested_gpus_are_sampled(fake_nvml):
    fake_nvml(gpus=2)
    with GpuSampler([1], hz=20) as sampler:
        wait_for_samples(sampler, 1, 3)
    assert [gpu.index for gpu in sampler.summary().gpus] == [1]
    assert sampler.samples(0) == []


def test_a_missing_index_is_named_with_what_exists(fake_nvml):
    nvml = fake_nvml(gpus=1)
    with GpuSampler([0, 3]) as sampler:
        pass
    assert sampler.unavailable_reason == UNAVAILABLE + "no GPU with index 3 (NVML sees: 0)"
    assert sampler.summary().gpus == []
    assert nvml.inits == nvml.shutdowns


def test_an_error_mid_run_stops_sampling_but_keeps_what_was_recorded(fake_nvml):
    fake_nvml(gpus=1, gpm_on=(), fail_after=5)
    with GpuSampler(None, hz=50) as sampler:
        deadline = time.monotonic() + 5
        while sampler.running and time.monotonic() < deadline:
            time.sleep(0.02)
    summary = sampler.summary()
    assert summary.stopped_by == "RuntimeError: driver went away"
    assert summary.gpus[0].samples == 5


def test_an_empty_index_list_samples_nothing_and_says_so(fake_nvml):
    fake_nvml(gpus=1)
    with GpuSampler([]) as sampler:
        assert not sampler.running
    assert "empty list of GPU indices" in sampler.unavailable_reason
