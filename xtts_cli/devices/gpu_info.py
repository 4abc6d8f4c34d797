"""What the machine offers: CPU cores and GPUs, found through NVML without importing TensorFlow.

NVML indices follow the PCI bus order that `nvidia-smi` shows, which is also what TensorFlow uses
when `CUDA_DEVICE_ORDER=PCI_BUS_ID` is set (our trainer sets it). Without NVML (no NVIDIA driver,
or a CPU-only machine) GPU facts are "unavailable" with the reason, never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class GpuInfo:
    index: int = field(metadata={"description": "The GPU's index, as nvidia-smi numbers it."})
    name: str = field(metadata={"description": "Its name."})
    memory_total_mib: int = field(metadata={"description": "Its memory, MiB."})
    compute_capability: Optional[tuple[int, int]] = field(
        default=None, metadata={"description": "Its compute capability, [major, minor]; null where unknown."}
    )

    @property
    def supports_mixed_float16(self) -> bool:
        # Tensor cores, and so a mixed-precision speed-up, start at compute capability 7.0.
        return self.compute_capability is not None and self.compute_capability >= (7, 0)

    @property
    def supports_bfloat16(self) -> bool:
        return self.compute_capability is not None and self.compute_capability >= (8, 0)


@dataclass(frozen=True)
class MachineInfo:
    cpu_count: int
    gpus: tuple[GpuInfo, ...] = field(default_factory=tuple)
    gpu_unavailable_reason: Optional[str] = None
    driver_version: Optional[str] = None

    @property
    def gpu_facts_known(self) -> bool:
        return self.gpu_unavailable_reason is None


def usable_cpu_count() -> int:
    from xtts_cli.host import usable_cpu_count as cores

    return cores()


def _decode(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def query_nvml() -> tuple[tuple[GpuInfo, ...], Optional[str], Optional[str]]:
    """(gpus, driver version, reason unavailable) from NVML."""
    try:
        import pynvml
    except ImportError:
        return (), None, "nvidia-ml-py is not installed"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return (), None, f"NVML could not start ({exc}); no NVIDIA driver on this machine?"
    try:
        driver = _decode(pynvml.nvmlSystemGetDriverVersion())
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
            try:
                capability = tuple(pynvml.nvmlDeviceGetCudaComputeCapability(handle))
            except pynvml.NVMLError:
                capability = None
            gpus.append(
                GpuInfo(
                    index=index,
                    name=_decode(pynvml.nvmlDeviceGetName(handle)),
                    memory_total_mib=int(memory.total // (1024 * 1024)),
                    compute_capability=capability,
                )
            )
        return tuple(gpus), driver, None
    except pynvml.NVMLError as exc:
        return (), None, f"NVML query failed: {exc}"
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass


def probe_machine() -> MachineInfo:
    gpus, driver, reason = query_nvml()
    return MachineInfo(cpu_count=usable_cpu_count(), gpus=gpus, gpu_unavailable_reason=reason, driver_version=driver)
