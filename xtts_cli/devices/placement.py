"""Map the config's device request onto TensorFlow devices, before TensorFlow touches a GPU.

- Indices mean what `nvidia-smi` shows: CUDA_DEVICE_ORDER=PCI_BUS_ID is set before TensorFlow
  initialises CUDA (CUDA's default order is "fastest first", which differs on mixed machines).
  Every physical GPU keeps exactly one logical device, so TF's `/GPU:i` is physical GPU i, also
  when the data GPU's index is above the model GPU's.
- Memory isolation gives the data and model GPUs a fixed memory limit through a logical device
  configuration and never also turns on memory growth on those GPUs (TensorFlow refuses the two
  together; the old trainer hit exactly that). Other GPUs get memory growth.
- The CPU twin (`devices.logical_cpu_devices: N`) splits the CPU into N logical devices and uses
  them where GPUs would be, so the two-device and mirrored code paths run on any machine.

A request the machine cannot meet fails here, before any work, saying what is available.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal, Optional

from xtts_cli.config.schema import DevicesConfig
from xtts_cli.devices.gpu_info import GpuInfo, query_nvml
from xtts_cli.errors import XttsError

StrategyKind = Literal["single", "split", "mirrored"]


@dataclass(frozen=True)
class DevicePlan:
    kind: StrategyKind
    # Where input-side feature work runs (None: inside tf.data on the host CPU).
    data_device: Optional[str]
    # Where the model runs ("single"/"split"); the replica devices for "mirrored".
    model_device: str
    replica_devices: tuple[str, ...] = field(default_factory=tuple)
    device_type: Literal["GPU", "CPU"] = "CPU"
    gpus: tuple[GpuInfo, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def num_replicas(self) -> int:
        return max(1, len(self.replica_devices))

    def describe(self) -> str:
        if self.kind == "split":
            return f"data on {self.data_device}, model on {self.model_device}"
        if self.kind == "mirrored":
            return f"mirrored over {', '.join(self.replica_devices)}"
        return f"one device: {self.model_device}"


_configured: Optional[tuple[DevicesConfig, DevicePlan]] = None


def _device_error(what: str, index: int, count: int, kind: str) -> XttsError:
    available = f"indices 0-{count - 1}" if count else "none"
    return XttsError(
        f"devices.{what} is {index} but this machine has {count} {kind} (available: {available})",
        hint="pick an existing index, or leave data_gpu/model_gpu unset to train on one device; "
        "on a machine without GPUs, devices.logical_cpu_devices: 2 runs the same split on CPU",
    )


def configure_devices(devices: DevicesConfig) -> DevicePlan:
    """Set up TensorFlow's devices for this request and say where things run.

    TensorFlow allows device configuration only once per process; a second call with the same
    request returns the same plan, a different one is an error.
    """
    global _configured
    if _configured is not None:
        if _configured[0] == devices:
            return _configured[1]
        raise XttsError(
            "TensorFlow's devices are already set up for another device request in this process",
            hint="run each device layout in its own process",
        )
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    import tensorflow as tf

    if devices.logical_cpu_devices:
        plan = _plan_cpu_twin(tf, devices)
    else:
        plan = _plan_gpus(tf, devices)
    _configured = (devices.model_copy(), plan)
    return plan


def _plan_cpu_twin(tf, devices: DevicesConfig) -> DevicePlan:
    count = devices.logical_cpu_devices
    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * count)
    except RuntimeError as exc:  # TF already initialised in this process with another layout
        existing = len(tf.config.list_logical_devices("CPU"))
        if existing < count:
            raise XttsError(f"cannot split the CPU into {count} logical devices: {exc}") from None
    names = tuple(f"/device:CPU:{i}" for i in range(count))
    return _plan_from_names(devices, names, "CPU", "logical CPU devices", ())


def _plan_gpus(tf, devices: DevicesConfig) -> DevicePlan:
    physical = tf.config.list_physical_devices("GPU")
    nvml_gpus, _, _ = query_nvml()
    split = devices.data_gpu is not None and devices.model_gpu is not None
    if split:
        for what in ("data_gpu", "model_gpu"):
            index = getattr(devices, what)
            if index >= len(physical):
                raise _device_error(what, index, len(physical), "GPUs visible to TensorFlow")
    isolated: dict[int, int] = {}
    if split and devices.enable_memory_isolation:
        for what in ("data_gpu", "model_gpu"):
            index, limit = getattr(devices, what), getattr(devices, f"{what}_memory")
            if limit is None:
                continue
            card = next((g for g in nvml_gpus if g.index == index), None)
            if card is not None and limit > card.memory_total_mib:
                raise XttsError(
                    f"devices.{what}_memory is {limit} MiB but GPU {index} ({card.name}) has "
                    f"{card.memory_total_mib} MiB",
                    hint=f"set it to at most {int(card.memory_total_mib * 0.9)}",
                )
            if index in isolated and isolated[index] != limit:
                raise XttsError(f"GPU {index} is both data and model GPU with different memory limits; give one limit")
            isolated[index] = limit
    notes = []
    try:
        for index, device in enumerate(physical):
            if index in isolated:
                tf.config.set_logical_device_configuration(
                    device, [tf.config.LogicalDeviceConfiguration(memory_limit=isolated[index])]
                )
            else:
                tf.config.experimental.set_memory_growth(device, True)
    except RuntimeError as exc:
        notes.append(f"GPU memory settings not applied: {exc}")
    names = tuple(f"/device:GPU:{i}" for i in range(len(physical)))
    if not names:
        return DevicePlan(kind="single", data_device=None, model_device="/device:CPU:0", device_type="CPU",
                          notes=("no GPU visible to TensorFlow: training on the CPU",))
    return _plan_from_names(devices, names, "GPU", "GPUs visible to TensorFlow", tuple(nvml_gpus), tuple(notes))


def _plan_from_names(
    devices: DevicesConfig,
    names: tuple[str, ...],
    device_type: Literal["GPU", "CPU"],
    kind_label: str,
    gpus: tuple[GpuInfo, ...],
    notes: tuple[str, ...] = (),
) -> DevicePlan:
    if devices.data_gpu is not None and devices.model_gpu is not None:
        for what in ("data_gpu", "model_gpu"):
            index = getattr(devices, what)
            if index >= len(names):
                raise _device_error(what, index, len(names), kind_label)
        if devices.strategy == "mirrored":
            raise XttsError(
                "devices.strategy is mirrored but data_gpu/model_gpu ask for a data/model split",
                hint="use one: remove data_gpu/model_gpu for mirrored, or set strategy: single",
            )
        return DevicePlan(
            kind="split",
            data_device=names[devices.data_gpu],
            model_device=names[devices.model_gpu],
            replica_devices=(names[devices.model_gpu],),
            device_type=device_type,
            gpus=gpus,
            notes=notes,
        )
    mirrored = devices.strategy == "mirrored" or (devices.strategy == "auto" and len(names) > 1 and device_type == "GPU")
    if mirrored:
        if len(names) < 2 and devices.strategy == "mirrored":
            notes = notes + (f"strategy mirrored over a single device ({names[0]})",)
        return DevicePlan(kind="mirrored", data_device=None, model_device=names[0], replica_devices=names,
                          device_type=device_type, gpus=gpus, notes=notes)
    return DevicePlan(kind="single", data_device=None, model_device=names[0], replica_devices=(names[0],),
                      device_type=device_type, gpus=gpus, notes=notes)
