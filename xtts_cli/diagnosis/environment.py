"""The software and GPUs training will run on: facts from TensorFlow and NVML, and what is wrong.

`check_environment()` asks TensorFlow (its build: version, CUDA and cuDNN, the GPU architectures it
carries kernels for; the GPUs it can use; whether XLA compiles; whether the optional tensorflow-io's
kernels load) and NVML (the GPUs and driver `nvidia-smi` shows), then compares the two. Each probe
runs the real thing (a tensorflow-io op on an in-memory WAV, an XLA-compiled function) because the
failures users hit only show when a kernel is loaded or a program compiled: `import tensorflow_io`
succeeds on a mismatched TensorFlow and the undefined symbol appears at the first op.

The TensorFlow and NVML facts can be passed in (`tf_gpus`, `nvml`, `build`, `environ`) so the
comparison logic runs against machines we do not have; by default the real queries run.
"""

from __future__ import annotations

import os
import platform
import struct
import time
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, computed_field

from xtts_cli.devices.gpu_info import GpuInfo, query_nvml
from xtts_cli.findings import ConfigChange, Finding, sort_findings
from xtts_cli.quiet import native_stderr_quieted

NvmlFacts = tuple[tuple[GpuInfo, ...], Optional[str], Optional[str]]  # what query_nvml() returns

GPU_EXTRA_FIX = "pip install 'xtts-cli[gpu]'"
# tensorflow-io is optional (the [tfio] extra): its last release, 0.37.1, is built against TensorFlow
# 2.16.x, and its kernels fail with an undefined symbol on other TensorFlow versions.
TFIO_FIX = (
    "pip uninstall tensorflow-io (libsndfile decodes compressed audio without it), or keep it with "
    "TensorFlow 2.16: pip install 'xtts-cli[tfio]'"
)
PCI_ORDER_FIX = "export CUDA_DEVICE_ORDER=PCI_BUS_ID"

# Tensor cores (and so a float16 mixed-precision speed-up) start at compute capability 7.0, bfloat16
# math at 8.0: https://www.tensorflow.org/guide/mixed_precision#supported_hardware. The thresholds
# live on GpuInfo (xtts_cli/devices/gpu_info.py) and are reused here.

# Oldest Linux driver a CUDA major version runs on (minor-version compatibility), from the CUDA
# Toolkit release notes, table "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor
# Version Compatibility": https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html
MIN_DRIVER_FOR_CUDA_MAJOR = {11: (450, 80, 2), 12: (525, 60, 13)}


class TensorFlowBuild(BaseModel):
    """`tf.__version__` and `tf.sysconfig.get_build_info()`."""

    version: str = Field(description="TensorFlow's version.")
    is_cuda_build: bool = Field(description="Built with CUDA (it can use an NVIDIA GPU).")
    cuda_version: Optional[str] = Field(None, description="The CUDA it was built against; null for a CPU build.")
    cudnn_version: Optional[str] = Field(None, description="The cuDNN it was built against.")
    # The GPU architectures the build carries code for, e.g. ["sm_50", ..., "compute_90"].
    cuda_compute_capabilities: list[str] = Field(
        default_factory=list, description="GPU architectures it carries code for (sm_80, compute_90, ...)."
    )


class GpuKernels(BaseModel):
    """Whether the TensorFlow build carries code a GPU runs (`kernel_support`)."""

    index: int = Field(description="The GPU's index.")
    name: str = Field(description="The GPU's name.")
    compute_capability: Optional[tuple[int, int]] = Field(None, description="Its compute capability, [major, minor].")
    # native: machine code for its architecture; ptx: only PTX, which the driver compiles when
    # TensorFlow starts; none: nothing it can run; unknown: its compute capability is not known.
    support: str = Field(
        description="native (machine code for it), ptx (compiled by the driver at start-up), none or unknown."
    )
    architecture: Optional[str] = Field(None, description="The build's architecture it runs, e.g. sm_80.")


class Probe(BaseModel):
    """A small real run of something training needs; `detail` says what ran or the error."""

    ok: bool = Field(description="It ran.")
    detail: str = Field(description="What ran, or the error.")
    seconds: float = Field(description="How long it took.")


class TfGpu(BaseModel):
    """A GPU as TensorFlow sees it (`tf.config.experimental.get_device_details`)."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(description="The GPU's index as TensorFlow numbers it.")
    name: str = Field(description="Its name.")
    compute_capability: Optional[tuple[int, int]] = Field(None, description="Its compute capability, [major, minor].")

    @computed_field(description="Its compute capability is 7.0 or more: tensor cores, float16 mixed precision pays.")  # type: ignore[prop-decorator]
    @property
    def supports_mixed_float16(self) -> bool:
        return GpuInfo(self.index, self.name, 0, self.compute_capability).supports_mixed_float16

    @computed_field(description="Its compute capability is 8.0 or more: bfloat16 math.")  # type: ignore[prop-decorator]
    @property
    def supports_bfloat16(self) -> bool:
        return GpuInfo(self.index, self.name, 0, self.compute_capability).supports_bfloat16


class EnvironmentReport(BaseModel):
    python_version: str = Field(description="Python's version.")
    tensorflow: TensorFlowBuild = Field(description="The TensorFlow build.")
    tensorflow_io_version: Optional[str] = Field(
        description="tensorflow-io's version; null when not installed (the [tfio] extra)."
    )
    # None when tensorflow-io is not installed (it is optional: the [tfio] extra).
    tensorflow_io_kernels: Optional[Probe] = Field(
        description="Whether tensorflow-io's kernels load and run; null when not installed."
    )
    audio_decoder: str = Field(description="What decodes FLAC, Ogg and MP3: soundfile or tensorflow-io.")
    xla_cpu: Probe = Field(description="A small XLA compilation on the CPU.")
    # Only when TensorFlow really sees a GPU: XLA on GPU needs ptxas/libdevice, which CPU XLA does not.
    xla_gpu: Optional[Probe] = Field(None, description="A small XLA compilation on the GPU; null without one.")
    tf_gpus: list[TfGpu] = Field(description="The GPUs TensorFlow sees.")
    nvml_gpus: list[GpuInfo] = Field(
        description="The GPUs NVML (the driver) sees: index, name, memory_total_mib, compute_capability."
    )
    nvml_unavailable_reason: Optional[str] = Field(
        description="Why NVML could not be read (no NVIDIA driver, no nvidia-ml-py); null when it could."
    )
    driver_version: Optional[str] = Field(description="The NVIDIA driver's version.")
    cuda_device_order: Optional[str] = Field(
        description="CUDA_DEVICE_ORDER as set (xtts sets PCI_BUS_ID, nvidia-smi's numbering)."
    )
    cuda_visible_devices: Optional[str] = Field(description="CUDA_VISIBLE_DEVICES as set.")
    # Per GPU TensorFlow sees (else per GPU NVML sees): does the build carry kernels for it.
    gpu_kernels: list[GpuKernels] = Field(
        default_factory=list, description="Per GPU: whether the TensorFlow build carries code it runs."
    )
    findings: list[Finding] = Field(default_factory=list)

    @computed_field(description="Every GPU TensorFlow trains on has tensor cores (float16 mixed precision pays).")  # type: ignore[prop-decorator]
    @property
    def mixed_float16_supported(self) -> bool:
        """Every GPU TensorFlow trains on has tensor cores (MirroredStrategy uses them all)."""
        return bool(self.tf_gpus) and all(gpu.supports_mixed_float16 for gpu in self.tf_gpus)

    @computed_field(description="Every GPU TensorFlow trains on does bfloat16 math.")  # type: ignore[prop-decorator]
    @property
    def bfloat16_supported(self) -> bool:
        return bool(self.tf_gpus) and all(gpu.supports_bfloat16 for gpu in self.tf_gpus)


def run_probe(body: Callable[[], str]) -> Probe:
    """Run `body`; its return value is the detail. Any exception is the probe's answer, not a crash:
    a broken install shows up as ImportError, NotFoundError, NotImplementedError (tensorflow-io wraps
    its load failure in one), InvalidArgumentError (XLA), and others."""
    started = time.perf_counter()
    try:
        detail = body()
        ok = True
    except Exception as exc:  # noqa: BLE001 - the failure is what we report
        detail = f"{type(exc).__name__}: {_first_lines(str(exc))}"
        ok = False
    return Probe(ok=ok, detail=detail, seconds=time.perf_counter() - started)


def _first_lines(text: str, limit: int = 3) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[:limit]) or "(no message)"


def tensorflow_build() -> TensorFlowBuild:
    import tensorflow as tf

    info = dict(tf.sysconfig.get_build_info())
    return TensorFlowBuild(
        version=tf.__version__,
        is_cuda_build=bool(info.get("is_cuda_build", False)),
        cuda_version=_text_or_none(info.get("cuda_version")),
        cudnn_version=_text_or_none(info.get("cudnn_version")),
        cuda_compute_capabilities=[str(c) for c in info.get("cuda_compute_capabilities", []) or []],
    )


def _text_or_none(value: Any) -> Optional[str]:
    return None if value in (None, "") else str(value)


def tensorflow_gpus() -> list[TfGpu]:
    """The GPUs TensorFlow can use, in its own order (CUDA's, which CUDA_DEVICE_ORDER sets)."""
    import tensorflow as tf

    gpus = []
    for index, device in enumerate(tf.config.list_physical_devices("GPU")):
        details = tf.config.experimental.get_device_details(device)
        capability = details.get("compute_capability")
        gpus.append(
            TfGpu(
                index=index,
                name=str(details.get("device_name", device.name)),
                compute_capability=tuple(capability) if capability else None,
            )
        )
    return gpus


def _wav_bytes(samples: Any, sample_rate: int) -> bytes:
    """A 16-bit mono PCM WAV file (RIFF header + data), the format of the bundled sample."""
    data = samples.astype("<i2").tobytes()
    header = struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF", 36 + len(data), b"WAVE",
        b"fmt ", 16, 1, 1, sample_rate, sample_rate * 2, 2, 16,
        b"data", len(data),
    )  # fmt: skip
    return header + data


def _tfio_roundtrip() -> str:
    import numpy as np
    import tensorflow as tf
    import tensorflow_io as tfio

    rate = 16000
    samples = np.round(8000 * np.sin(2 * np.pi * 440 * np.arange(160) / rate)).astype(np.int16)
    # The op library loads lazily, at the first op: this is where a mismatched pair fails.
    decoded = tfio.audio.decode_wav(tf.constant(_wav_bytes(samples, rate)), dtype=tf.int16)
    if not np.array_equal(decoded.numpy()[:, 0], samples):
        raise ValueError("tfio.audio.decode_wav returned other samples than the WAV holds")
    return "tfio.audio.decode_wav ran on a 160-sample in-memory WAV"


def probe_tensorflow_io() -> tuple[Optional[str], Optional[Probe]]:
    """(tensorflow-io version, whether its kernels run), or (None, None) when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        tfio_version: Optional[str] = version("tensorflow-io")
    except PackageNotFoundError:
        return None, None
    # `import tensorflow_io` only warns when its plugin library fails to load; keep that text, it
    # names the real cause when the op then fails.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        probe = run_probe(_tfio_roundtrip)
    notes = [
        str(w.message) for w in caught if "tensorflow_io" in str(w.message) or "libtensorflow_io" in str(w.message)
    ]
    if not probe.ok and notes:
        probe = probe.model_copy(update={"detail": f"{probe.detail} | import warned: {_first_lines(notes[0], 2)}"})
    return tfio_version, probe


def _native_logs_quieted():
    """XLA's first compilation in a process logs through absl before absl's logging is set up, past
    TF_CPP_MIN_LOG_LEVEL, and put four lines ("XLA service ... initialized", "Compiled cluster using
    XLA!") at the top of `xtts diagnose`."""
    return native_stderr_quieted()


def probe_xla(device: str = "/CPU:0", compute: Optional[Callable[[Any], Any]] = None) -> Probe:
    """Compile and run a tiny function with `jit_compile=True` on `device`; `compute` replaces the
    function (tests pass one XLA cannot compile, to see the real error)."""
    import tensorflow as tf

    def square_sum(x: Any) -> Any:
        return tf.reduce_sum(x * x + 1.0)

    body = compute or square_sum

    def run() -> str:
        with tf.device(device), _native_logs_quieted():
            result = tf.function(body, jit_compile=True, autograph=False)(tf.ones([4]))
        if compute is None and float(result) != 8.0:
            raise ValueError(f"XLA computed {float(result)} for sum(1*1+1) over 4 ones, expected 8.0")
        return f"a jit_compile=True function compiled and ran on {device}"

    return run_probe(run)


def check_environment(
    *,
    tf_gpus: Optional[Sequence[TfGpu]] = None,
    nvml: Optional[NvmlFacts] = None,
    build: Optional[TensorFlowBuild] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> EnvironmentReport:
    """Facts about Python, TensorFlow, tensorflow-io, XLA and the GPUs, with findings.

    `tf_gpus`, `nvml` (as `query_nvml()` returns it), `build` and `environ` default to the real
    queries of this machine and process; pass them to describe another machine.

    The probes run ops, which starts TensorFlow's runtime: device configuration
    (`xtts_cli.devices.placement.configure_devices`) must come before this call in one process.
    """
    env = os.environ if environ is None else environ
    real_tf_gpus = tf_gpus is None
    gpus = tensorflow_gpus() if real_tf_gpus else list(tf_gpus)  # type: ignore[arg-type]
    nvml_gpus, driver, reason = query_nvml() if nvml is None else nvml
    tfio_version, tfio_probe = probe_tensorflow_io()
    from xtts_cli.data.audio_codecs import compressed_decoder

    build = build or tensorflow_build()
    report = EnvironmentReport(
        python_version=platform.python_version(),
        tensorflow=build,
        tensorflow_io_version=tfio_version,
        tensorflow_io_kernels=tfio_probe,
        audio_decoder=compressed_decoder(),
        xla_cpu=probe_xla("/CPU:0"),
        xla_gpu=probe_xla("/GPU:0") if real_tf_gpus and gpus else None,
        tf_gpus=gpus,
        nvml_gpus=list(nvml_gpus),
        nvml_unavailable_reason=reason,
        driver_version=driver,
        cuda_device_order=env.get("CUDA_DEVICE_ORDER"),
        cuda_visible_devices=env.get("CUDA_VISIBLE_DEVICES"),
        gpu_kernels=[
            kernel_support(index, name, capability, build)
            # TensorFlow's view, else the driver's.
            for index, name, capability in [(g.index, g.name, g.compute_capability) for g in gpus]
            or [(g.index, g.name, g.compute_capability) for g in nvml_gpus]
        ],
    )
    report.findings = environment_findings(report)
    return report


def environment_findings(report: EnvironmentReport) -> list[Finding]:
    """What in these facts keeps training off the GPU or fails it, errors first."""
    findings: list[Finding] = []
    findings += _probe_findings(report)
    if report.nvml_unavailable_reason:
        findings.append(
            Finding(
                id="gpu-metrics-unavailable",
                severity="info",
                message=f"GPU metrics unavailable: {report.nvml_unavailable_reason}",
            )
        )
    if not report.tf_gpus:
        findings += _no_tf_gpu_findings(report)
    elif report.nvml_gpus:
        findings += _order_findings(report)
    findings += _tensor_core_findings(report)
    findings += _kernel_findings(report)
    return sort_findings(findings)


def _probe_findings(report: EnvironmentReport) -> list[Finding]:
    findings = []
    tfio = report.tensorflow_io_kernels
    if tfio is not None and not tfio.ok:
        installed = f"tensorflow-io {report.tensorflow_io_version} with TensorFlow {report.tensorflow.version}"
        why = " (an undefined symbol: built for another TensorFlow)" if "undefined symbol" in tfio.detail else ""
        findings.append(
            Finding(
                id="tensorflow-io-kernels",
                severity="warning",
                message=f"tensorflow-io's kernels do not run ({installed}){why} [{tfio.detail}]: FLAC, Ogg and MP3 are "
                f"decoded by libsndfile instead; {TFIO_FIX}",
            )
        )
    if not report.xla_cpu.ok:
        findings.append(
            Finding(
                id="xla-unavailable",
                severity="error",
                message=f"XLA cannot compile on the CPU [{report.xla_cpu.detail}]: a step with "
                "training.enable_xla_compilation true fails; set it to false",
                fix=ConfigChange(key="training.enable_xla_compilation", value=False),
            )
        )
    if report.xla_gpu is not None and not report.xla_gpu.ok:
        findings.append(
            Finding(
                id="xla-gpu-unavailable",
                severity="error",
                message=f"XLA cannot compile on the GPU [{report.xla_gpu.detail}] (usually ptxas or libdevice "
                f"missing); {GPU_EXTRA_FIX} brings them, or set training.enable_xla_compilation to false",
                fix=ConfigChange(key="training.enable_xla_compilation", value=False),
            )
        )
    return findings


def _visible_devices_hide_all(value: Optional[str]) -> bool:
    # CUDA stops at the first invalid entry of CUDA_VISIBLE_DEVICES, so "" and "-1" hide every GPU:
    # https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars
    return value is not None and (value.strip() == "" or value.split(",")[0].strip().startswith("-"))


def _driver_tuple(driver: str) -> Optional[tuple[int, ...]]:
    try:
        return tuple(int(part) for part in driver.split("."))
    except ValueError:
        return None


def _names(gpus: Sequence[Any]) -> str:
    return ", ".join(f"{gpu.index}: {gpu.name}" for gpu in gpus)


def _no_tf_gpu_findings(report: EnvironmentReport) -> list[Finding]:
    build, nvml_gpus = report.tensorflow, report.nvml_gpus
    if not nvml_gpus:
        nvml_part = "NVML unavailable" if report.nvml_unavailable_reason else "NVML lists none"
        return [
            Finding(
                id="no-gpu",
                severity="info",
                message=f"no GPU found (TensorFlow sees none; {nvml_part}): training runs on the CPU",
            )
        ]
    seen = f"NVML sees {len(nvml_gpus)} GPU(s) ({_names(nvml_gpus)}) but TensorFlow sees none"
    if _visible_devices_hide_all(report.cuda_visible_devices):
        return [
            Finding(
                id="gpus-hidden",
                severity="info",
                message=f"{seen}: CUDA_VISIBLE_DEVICES={report.cuda_visible_devices!r} hides them, so training "
                "runs on the CPU; unset CUDA_VISIBLE_DEVICES to train on the GPUs",
            )
        ]
    if not build.is_cuda_build:
        return [
            Finding(
                id="tensorflow-cpu-only",
                severity="error",
                message=f"{seen}: TensorFlow {build.version} is a CPU-only build, so training runs on the CPU; "
                f"{GPU_EXTRA_FIX}",
            )
        ]
    major = _cuda_major(build.cuda_version)
    minimum = MIN_DRIVER_FOR_CUDA_MAJOR.get(major) if major is not None else None
    driver = _driver_tuple(report.driver_version) if report.driver_version else None
    if minimum and driver and driver < minimum:
        wanted = ".".join(str(part) for part in minimum)
        return [
            Finding(
                id="driver-too-old",
                severity="error",
                message=f"{seen}: TensorFlow {build.version} is built for CUDA {build.cuda_version}, which needs an "
                f"NVIDIA driver >= {wanted}, and this driver is {report.driver_version}; update the driver",
            )
        ]
    return [
        Finding(
            id="cuda-libraries-missing",
            severity="error",
            message=f"{seen}: TensorFlow {build.version} is a CUDA {build.cuda_version or '?'} / cuDNN "
            f"{build.cudnn_version or '?'} build whose CUDA libraries are missing or do not load (driver "
            f"{report.driver_version or 'unknown'}), so training runs on the CPU; {GPU_EXTRA_FIX}",
        )
    ]


def _cuda_major(version: Optional[str]) -> Optional[int]:
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return None


def _normalized_name(name: str) -> str:
    name = name.strip().lower()
    # Older drivers leave the vendor off some names ("Tesla V100" vs "NVIDIA Tesla V100").
    return name[len("nvidia ") :] if name.startswith("nvidia ") else name


def _expected_nvml_order(report: EnvironmentReport) -> Optional[list[GpuInfo]]:
    """The NVML GPUs TensorFlow should list, in the order it should list them, when CUDA numbers
    GPUs by PCI bus like NVML does; None when CUDA_VISIBLE_DEVICES names GPUs by UUID or MIG id,
    which we do not map."""
    visible = report.cuda_visible_devices
    if visible is None:
        return list(report.nvml_gpus)
    chosen = []
    for entry in visible.split(","):
        entry = entry.strip()
        if not entry.lstrip("-").isdigit():
            return None
        index = int(entry)
        if index < 0 or index >= len(report.nvml_gpus):
            break  # CUDA ignores this entry and every one after it
        chosen.append(report.nvml_gpus[index])
    return chosen


def _order_findings(report: EnvironmentReport) -> list[Finding]:
    expected = _expected_nvml_order(report)
    if expected is None:
        return []
    tf_names = [_normalized_name(gpu.name) for gpu in report.tf_gpus]
    nvml_names = [_normalized_name(gpu.name) for gpu in expected]
    if tf_names == nvml_names:
        return []
    pci_order = (report.cuda_device_order or "").strip().upper() == "PCI_BUS_ID"
    if len(tf_names) == len(nvml_names) and not pci_order:
        # CUDA's default order is FASTEST_FIRST; nvidia-smi/NVML (and CUDA_VISIBLE_DEVICES read with
        # PCI_BUS_ID) go by PCI bus: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars
        order = report.cuda_device_order or "unset (CUDA's default FASTEST_FIRST)"
        visible = (
            f" and CUDA_VISIBLE_DEVICES={report.cuda_visible_devices!r} picks by CUDA's order"
            if (report.cuda_visible_devices is not None)
            else ""
        )
        return [
            Finding(
                id="gpu-order-mismatch",
                severity="warning",
                message=f"GPU order differs: TensorFlow lists [{_names(report.tf_gpus)}], nvidia-smi/NVML lists "
                f"[{_names(expected)}]; CUDA_DEVICE_ORDER is {order}{visible}, so a GPU index "
                f"(devices.data_gpu/model_gpu, nvidia-smi) names another card in TensorFlow; {PCI_ORDER_FIX}",
            )
        ]
    unmatched = Counter(nvml_names) - Counter(tf_names)
    missing = []
    for gpu in expected:
        if unmatched[_normalized_name(gpu.name)] > 0:
            unmatched[_normalized_name(gpu.name)] -= 1
            missing.append(f"{gpu.index}: {gpu.name}")
    lowest = _lowest_capability(report.tensorflow.cuda_compute_capabilities)
    too_old = [
        gpu for gpu in expected
        if lowest and gpu.compute_capability is not None and gpu.compute_capability < lowest
    ]  # fmt: skip
    why = ""
    if too_old:
        why = (
            f": {_names(too_old)} below compute capability {lowest[0]}.{lowest[1]}, the oldest that "  # type: ignore[index]
            f"TensorFlow {report.tensorflow.version} is built for"
        )
    return [
        Finding(
            id="gpus-not-visible-to-tensorflow",
            severity="warning",
            message=f"TensorFlow lists [{_names(report.tf_gpus)}] but NVML lists [{_names(expected)}]"
            f"{'; TensorFlow lacks ' + ', '.join(missing) if missing else ''}{why}; training uses only the GPUs "
            f"TensorFlow lists: check CUDA_VISIBLE_DEVICES ({report.cuda_visible_devices!r}) and {PCI_ORDER_FIX}",
        )
    ]


def _lowest_capability(architectures: Sequence[str]) -> Optional[tuple[int, int]]:
    """(5, 0) from ["sm_50", "sm_60", "compute_90"]: the oldest GPU the build has code for."""
    found = []
    for arch in architectures:
        digits = arch.rsplit("_", 1)[-1]
        if digits.isdigit() and len(digits) >= 2:
            found.append((int(digits[:-1]), int(digits[-1])))
    return min(found) if found else None


def _tensor_core_findings(report: EnvironmentReport) -> list[Finding]:
    old = [gpu for gpu in report.tf_gpus if gpu.compute_capability is not None and not gpu.supports_mixed_float16]
    if not old:
        return []
    described = ", ".join(
        f"{gpu.index}: {gpu.name} (compute capability {gpu.compute_capability[0]}.{gpu.compute_capability[1]})"  # type: ignore[index]
        for gpu in old
    )
    return [
        Finding(
            id="no-tensor-cores",
            severity="info",
            message=f"GPU {described} has no tensor cores (compute capability < 7.0): mixed precision gives no "
            "speed-up there; keep training.mixed_precision false",
        )
    ]


def kernel_support(index: int, name: str, capability: Optional[tuple[int, int]], build: TensorFlowBuild) -> GpuKernels:
    """Whether `build` carries code a GPU of compute capability `capability` runs.

    Machine code for sm_XY runs on GPUs of major version X and minor >= Y (an "a" variant such as
    sm_90a only on X.Y itself); PTX for compute_XY is compiled by the driver for any GPU of compute
    capability >= X.Y, when TensorFlow starts (minutes for TensorFlow's kernels, cached by the
    driver): https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility
    """
    gpu = GpuKernels(index=index, name=name, compute_capability=capability, support="unknown")
    if capability is None or not build.is_cuda_build:
        return gpu
    native, ptx = [], []
    for arch in build.cuda_compute_capabilities:
        kind, _, digits = arch.partition("_")
        specific = digits.endswith(("a", "f"))
        digits = digits.rstrip("af")
        if not digits.isdigit() or len(digits) < 2:
            continue
        version = (int(digits[:-1]), int(digits[-1]))
        if kind == "sm" and (
            version == capability or (not specific and version[0] == capability[0] and version < capability)
        ):
            native.append((version, arch))
        elif kind == "compute" and version <= capability:
            ptx.append((version, arch))
    if native:
        return gpu.model_copy(update={"support": "native", "architecture": max(native)[1]})
    if ptx:
        return gpu.model_copy(update={"support": "ptx", "architecture": max(ptx)[1]})
    return gpu.model_copy(update={"support": "none"})


def _kernel_findings(report: EnvironmentReport) -> list[Finding]:
    build = report.tensorflow
    archs = ", ".join(build.cuda_compute_capabilities) or "none listed"
    findings = []
    for gpu in report.gpu_kernels:
        if gpu.support not in ("ptx", "none") or gpu.compute_capability is None:
            continue
        major, minor = gpu.compute_capability
        built = f"TensorFlow {build.version} (CUDA {build.cuda_version or '?'}) is built for {archs}"
        if gpu.support == "ptx":
            findings.append(
                Finding(
                    id="gpu-ptx-only",
                    severity="warning",
                    message=f"GPU {gpu.index}: {gpu.name} (compute capability {major}.{minor}): {built}, so it runs "
                    f"{gpu.architecture} PTX, which the driver compiles when TensorFlow starts (minutes the first "
                    "time); keep the driver's cache big enough to hold it (export CUDA_CACHE_MAXSIZE=4294967296), "
                    "or install a TensorFlow built for this GPU",
                )
            )
        else:
            findings.append(
                Finding(
                    id="gpu-no-kernels",
                    severity="error",
                    message=f"GPU {gpu.index}: {gpu.name} (compute capability {major}.{minor}): {built}, none of which "
                    "this GPU runs, so TensorFlow cannot use it; train on another GPU or on the CPU",
                )
            )
    return findings
