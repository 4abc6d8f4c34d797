"""Sample GPU utilisation, memory, power and clocks through NVML on a background thread.

What the figures mean (NVML API reference, https://docs.nvidia.com/deploy/nvml-api/):
- `utilization.gpu` (nvmlDeviceGetUtilizationRates): "percent of time over the past sample period
  during which one or more kernels was executing on the GPU"; the period is between 1 s and 1/6 s
  depending on the product. It says nothing about how many SMs were busy: a single tiny kernel
  running all the time reads 100 %. So we sample at >= 4 Hz (PERFORMANCE.md) to see the cycle, and
  trust host step timings for step-level stalls.
  Seen on an H100 80GB HBM3 (driver 580.159.04): the reading changes every 0.2 s, so 10 Hz sampling
  reads each value twice and 20 Hz four times; a 0.6 s busy / 0.6 s idle load read 98-99 % and 0 %
  and was detected with a period of 1.20 s, but a 0.25 s / 0.25 s load, sampled at 20 Hz, read as
  a pattern repeating every 1.0 s (its 0.5 s period does not fit the 0.2 s grid). `nvml_refresh_s`
  reports the interval observed; a cycle shorter than `RESOLVABLE_REFRESHES` of them may not show,
  or show at a multiple of its period (scripts/record_nvml_series.py recorded these series).
  An H200 (driver 580.159.04) read the same: a 0.2 s refresh, both cycles found at the same periods;
  its reading trails a change of load by about 0.3 s.
- SM activity (GPM metric NVML_GPM_METRIC_SM_UTIL, "percentage of SMs that were busy") is the
  figure that does count SMs. GPM (nvmlGpm* functions) exists on Hopper and newer GPUs only; where
  the GPU, driver or bindings lack it the field is None, silently. On the H100 above, back-to-back
  8192^2 bf16 matmuls read 98 % utilisation and 91 % SM activity; a loop of tiny kernels read 27 %
  utilisation but 2 % SM activity.
- power: nvmlDeviceGetPowerUsage, milliwatts; SM clock: nvmlDeviceGetClockInfo(NVML_CLOCK_SM), MHz;
  memory: nvmlDeviceGetMemoryInfo, bytes (reported here in MiB).

Without NVML (no driver, no GPU, bindings missing) the sampler records nothing and says why in
`unavailable_reason`; nothing here raises for that. GPU discovery and the reasons are those of
`xtts_cli.devices.gpu_info.query_nvml`.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from typing import Any, Optional

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from xtts_cli.devices.gpu_info import GpuInfo, query_nvml
from xtts_cli.stats.latency import finite_values
from xtts_cli.stats.oscillation import Oscillation, detect_oscillation

MIN_HZ = 4.0  # PERFORMANCE.md: GPU sampling runs at >= 4 Hz
MAX_HZ = 50.0  # the utilisation window is >= 1/6 s; sampling much faster only repeats values
DEFAULT_MAX_SAMPLES = 36_000  # per GPU: an hour at 10 Hz; older samples are dropped, memory stays flat
UNAVAILABLE = "GPU metrics unavailable: "

_FIELDS = (
    "t",
    "utilization_gpu",
    "memory_used_mib",
    "memory_total_mib",
    "power_w",
    "sm_clock_mhz",
    "sm_active_percent",
)


class GpuSample(BaseModel):
    """One reading of one GPU; `t` is seconds since the sampler started. None: NVML did not say."""

    model_config = ConfigDict(frozen=True)

    t: float
    utilization_gpu: Optional[float] = None
    memory_used_mib: Optional[float] = None
    memory_total_mib: Optional[float] = None
    power_w: Optional[float] = None
    sm_clock_mhz: Optional[float] = None
    sm_active_percent: Optional[float] = None


class GpuSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    index: int = Field(description="The GPU's index, as nvidia-smi numbers it.")
    name: str = Field(description="The GPU's name (NVIDIA H100 80GB HBM3).")
    samples: int = Field(description="NVML readings taken.")
    duration_s: float = Field(description="Seconds the readings span.")
    rate_hz: float = Field(description="Readings a second.")
    utilization_mean: Optional[float] = Field(
        None, description="Mean GPU utilisation, % (the share of time a kernel ran)."
    )
    utilization_min: Optional[float] = Field(None, description="Lowest reading, %.")
    utilization_max: Optional[float] = Field(None, description="Highest reading, %.")
    utilization_cv: Optional[float] = Field(
        None, description="Coefficient of variation of the readings: high when the GPU swings between busy and idle."
    )
    oscillation: Oscillation = Field(description="Whether the utilisation repeats a cycle (period in readings).")
    # The period of the oscillation in seconds (its period in samples / the sampling rate).
    oscillation_period_s: Optional[float] = Field(None, description="That cycle's period in seconds.")
    memory_used_peak_mib: Optional[float] = Field(None, description="Most device memory in use, MiB.")
    memory_total_mib: Optional[float] = Field(None, description="The card's memory, MiB.")
    power_mean_w: Optional[float] = Field(None, description="Mean power draw, W.")
    sm_clock_mean_mhz: Optional[float] = Field(None, description="Mean SM clock, MHz.")
    sm_active_mean_percent: Optional[float] = Field(
        None, description="Mean share of SMs busy (where the driver reports it), %."
    )
    # How often the utilisation reading changed (see `refresh_interval`); None: too few changes.
    nvml_refresh_s: Optional[float] = Field(
        None, description="How often the utilisation reading changed, s; empty: too few changes to tell."
    )


class GpuSamplerSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    requested_hz: float
    unavailable_reason: Optional[str] = None
    # An error that stopped sampling early (the samples before it are kept).
    stopped_by: Optional[str] = None
    gpus: list[GpuSummary]


class _GpuTrack:
    """Per-GPU NVML handle, GPM buffers and the recorded columns."""

    def __init__(self, info: GpuInfo, handle: Any, max_samples: int) -> None:
        self.info = info
        self.handle = handle
        self.columns: dict[str, deque] = {name: deque(maxlen=max_samples) for name in _FIELDS}
        self.gpm: Optional[list[Any]] = None  # [previous sample, next sample]


MIN_REFRESH_CHANGES = 5
REFRESH_MIN_SHARE = 0.1
RESOLVABLE_REFRESHES = 3  # the shortest cycle, in NVML refreshes, that its samples can be trusted to show


def refresh_interval(times: list[float], values: list[Optional[float]]) -> Optional[float]:
    """Seconds between changes of the utilisation reading, an estimate of how often NVML refreshes
    it on this GPU: the shortest gap between successive changes (in whole sampling intervals) that
    makes up at least `REFRESH_MIN_SHARE` of the gaps. Windows that read alike (a saturated or idle
    GPU) lengthen gaps, hence the shortest common one; a gap seen only rarely is sampling jitter.
    None with fewer than `MIN_REFRESH_CHANGES` changes (a steady load hides the refresh)."""
    pairs = [(t, v) for t, v in zip(times, values) if v is not None and math.isfinite(v)]
    changes = [pairs[i][0] for i in range(1, len(pairs)) if pairs[i][1] != pairs[i - 1][1]]
    if len(changes) < MIN_REFRESH_CHANGES:
        return None
    step = float(np.median(np.diff([t for t, _ in pairs])))
    gaps = [int(g) for g in np.rint(np.diff(changes) / step) if g >= 1]
    for gap in sorted(set(gaps)):
        if gaps.count(gap) >= REFRESH_MIN_SHARE * len(gaps):
            return gap * step
    return None


def _mean(values: Any) -> Optional[float]:
    finite = finite_values(values)
    return float(finite.mean()) if finite.size else None


class GpuSampler:
    """Context manager that samples the GPUs at `indices` (None: all) `hz` times a second.

    ```
    with GpuSampler(None, hz=10) as sampler:
        train()
    summary = sampler.summary()
    ```
    """

    def __init__(
        self, indices: Optional[list[int]] = None, hz: float = 10.0, *, max_samples: int = DEFAULT_MAX_SAMPLES
    ) -> None:
        if not MIN_HZ <= hz <= MAX_HZ:
            raise ValueError(
                f"hz ({hz}) must be between {MIN_HZ:g} and {MAX_HZ:g}: NVML utilisation windows are "
                "1/6-1 s, so slower sampling misses the cycle and faster sampling repeats values"
            )
        if max_samples < 2:
            raise ValueError(f"max_samples ({max_samples}) must be at least 2")
        self.indices = None if indices is None else list(indices)
        self.hz = float(hz)
        self.max_samples = max_samples
        self.unavailable_reason: Optional[str] = None
        self.stopped_by: Optional[str] = None
        self._nvml: Any = None
        self._tracks: list[_GpuTrack] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._t0 = 0.0

    def __enter__(self) -> GpuSampler:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("this GpuSampler has already been started; make a new one per measurement")
        gpus, _driver, reason = query_nvml()
        if reason is not None:
            self.unavailable_reason = UNAVAILABLE + reason
            return
        known = {gpu.index: gpu for gpu in gpus}
        wanted = sorted(known) if self.indices is None else list(dict.fromkeys(self.indices))
        missing = [index for index in wanted if index not in known]
        if not wanted and known:
            self.unavailable_reason = UNAVAILABLE + "an empty list of GPU indices was given (None means all)"
            return
        if not known or missing:
            seen = ", ".join(str(i) for i in sorted(known)) or "none"
            asked = ", ".join(str(i) for i in missing) if missing else "any"
            self.unavailable_reason = UNAVAILABLE + f"no GPU with index {asked} (NVML sees: {seen})"
            return
        try:
            import pynvml

            pynvml.nvmlInit()
        except Exception as exc:  # the module vanished or the driver went away since discovery
            self.unavailable_reason = UNAVAILABLE + f"NVML could not start ({exc})"
            return
        self._nvml = pynvml
        try:
            for index in wanted:
                track = _GpuTrack(known[index], pynvml.nvmlDeviceGetHandleByIndex(index), self.max_samples)
                track.gpm = self._gpm_buffers(track.handle)
                self._tracks.append(track)
        except pynvml.NVMLError as exc:
            self.unavailable_reason = UNAVAILABLE + f"NVML query failed: {exc}"
            self._release()
            return
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="xtts-gpu-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._release()

    def samples(self, index: int) -> list[GpuSample]:
        """What was recorded for the GPU with NVML index `index` (empty when it was not sampled)."""
        for track in self._tracks:
            if track.info.index == index:
                with self._lock:
                    rows = list(zip(*(list(track.columns[name]) for name in _FIELDS)))
                return [GpuSample(**dict(zip(_FIELDS, row))) for row in rows]
        return []

    def summary(self) -> GpuSamplerSummary:
        gpus = []
        for track in self._tracks:
            with self._lock:
                columns = {name: list(values) for name, values in track.columns.items()}
            gpus.append(self._summarize(track.info, columns))
        return GpuSamplerSummary(
            requested_hz=self.hz, unavailable_reason=self.unavailable_reason, stopped_by=self.stopped_by, gpus=gpus
        )

    def _summarize(self, info: GpuInfo, columns: dict[str, list]) -> GpuSummary:
        times = columns["t"]
        count = len(times)
        duration = times[-1] - times[0] if count > 1 else 0.0
        rate = (count - 1) / duration if duration > 0 else 0.0
        util = finite_values(columns["utilization_gpu"])
        oscillation = detect_oscillation(columns["utilization_gpu"])
        memory_used = finite_values(columns["memory_used_mib"])
        memory_total = finite_values(columns["memory_total_mib"])
        util_mean = float(util.mean()) if util.size else None
        return GpuSummary(
            index=info.index,
            name=info.name,
            samples=count,
            duration_s=duration,
            rate_hz=rate,
            utilization_mean=util_mean,
            utilization_min=float(util.min()) if util.size else None,
            utilization_max=float(util.max()) if util.size else None,
            utilization_cv=(float(util.std()) / util_mean if util_mean else 0.0) if util.size else None,
            oscillation=oscillation,
            oscillation_period_s=oscillation.period / rate if oscillation.period and rate else None,
            memory_used_peak_mib=float(memory_used.max()) if memory_used.size else None,
            memory_total_mib=float(memory_total.max()) if memory_total.size else float(info.memory_total_mib),
            power_mean_w=_mean(columns["power_w"]),
            sm_clock_mean_mhz=_mean(columns["sm_clock_mhz"]),
            sm_active_mean_percent=_mean(columns["sm_active_percent"]),
            nvml_refresh_s=refresh_interval(times, columns["utilization_gpu"]),
        )

    def _loop(self) -> None:
        period = 1.0 / self.hz
        next_tick = time.monotonic()
        try:
            while True:
                for track in self._tracks:
                    self._read(track)
                next_tick += period
                now = time.monotonic()
                if next_tick < now:  # a slow NVML call: skip the missed ticks rather than burst
                    next_tick = now
                if self._stop.wait(next_tick - now):
                    return
        except Exception as exc:  # never take the training process down for a metric
            self.stopped_by = f"{type(exc).__name__}: {exc}"

    def _read(self, track: _GpuTrack) -> None:
        nvml = self._nvml
        handle = track.handle
        t = time.monotonic() - self._t0
        util = self._call(lambda: float(nvml.nvmlDeviceGetUtilizationRates(handle).gpu))
        memory = self._call(lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
        power = self._call(lambda: nvml.nvmlDeviceGetPowerUsage(handle) / 1000.0)
        clock = self._call(lambda: float(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)))
        sm_active = self._gpm_sm_util(track)
        row = {
            "t": t,
            "utilization_gpu": util,
            "memory_used_mib": memory.used / 2**20 if memory is not None else None,
            "memory_total_mib": memory.total / 2**20 if memory is not None else None,
            "power_w": power,
            "sm_clock_mhz": clock,
            "sm_active_percent": sm_active,
        }
        with self._lock:
            for name, value in row.items():
                track.columns[name].append(value)

    def _call(self, read: Any) -> Any:
        try:
            return read()
        except self._nvml.NVMLError:  # not supported on this product, or a transient failure
            return None

    def _gpm_buffers(self, handle: Any) -> Optional[list[Any]]:
        """Two GPM sample buffers primed with a first reading, or None where GPM is not offered."""
        nvml = self._nvml
        if not all(
            hasattr(nvml, name)
            for name in ("nvmlGpmQueryDeviceSupport", "nvmlGpmSampleAlloc", "nvmlGpmSampleGet", "nvmlGpmMetricsGet")
        ):
            return None
        buffers: list[Any] = []
        try:
            if not nvml.nvmlGpmQueryDeviceSupport(handle).isSupportedDevice:
                return None
            buffers = [nvml.nvmlGpmSampleAlloc(), nvml.nvmlGpmSampleAlloc()]
            nvml.nvmlGpmSampleGet(handle, buffers[0])
            return buffers
        except Exception:  # NVMLError, or bindings older than the driver: no SM activity, silently
            self._free_gpm(buffers)
            return None

    def _gpm_sm_util(self, track: _GpuTrack) -> Optional[float]:
        """SM activity between the previous reading and now (GPM computes metrics from two samples)."""
        if track.gpm is None:
            return None
        nvml = self._nvml
        previous, current = track.gpm
        try:
            nvml.nvmlGpmSampleGet(track.handle, current)
            request = nvml.c_nvmlGpmMetricsGet_t()
            request.version = nvml.NVML_GPM_METRICS_GET_VERSION
            request.numMetrics = 1
            request.sample1 = previous
            request.sample2 = current
            request.metrics[0].metricId = nvml.NVML_GPM_METRIC_SM_UTIL
            nvml.nvmlGpmMetricsGet(request)
        except Exception:
            return None
        track.gpm = [current, previous]  # the newest reading starts the next interval
        metric = request.metrics[0]
        return float(metric.value) if metric.nvmlReturn == nvml.NVML_SUCCESS else None

    def _free_gpm(self, buffers: list[Any]) -> None:
        for buffer in buffers:
            try:
                self._nvml.nvmlGpmSampleFree(buffer)
            except Exception:
                pass

    def _release(self) -> None:
        for track in self._tracks:
            if track.gpm is not None:
                self._free_gpm(track.gpm)
                track.gpm = None
        if self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            except Exception:
                pass
            self._nvml = None
