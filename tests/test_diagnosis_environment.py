"""`check_environment` on this machine (real TensorFlow, XLA, NVML, tensorflow-io where installed), and its
comparison logic on machines we do not have.

No NVIDIA driver or GPU can exist here, so the GPU facts of other machines are passed in as data
(`tf_gpus`, `nvml`, `build`, `environ`); the probes and the findings logic still run for real. The
failures of tensorflow-io and XLA are real failures too: a shared object with an undefined symbol
loaded through `tf.load_op_library` (what a mismatched tensorflow-io does), and an op XLA cannot
compile.
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

from xtts_cli.devices.gpu_info import GpuInfo, query_nvml
from xtts_cli.diagnosis.environment import (
    EnvironmentReport,
    TensorFlowBuild,
    TfGpu,
    check_environment,
    environment_findings,
    kernel_support,
    probe_xla,
    run_probe,
)

CUDA_BUILD = TensorFlowBuild(
    version="2.16.2", is_cuda_build=True, cuda_version="12.3", cudnn_version="8",
    cuda_compute_capabilities=["sm_50", "sm_60", "sm_70", "sm_80", "compute_90"],
)  # fmt: skip
CPU_BUILD = TensorFlowBuild(version="2.16.2", is_cuda_build=False)
A100 = GpuInfo(index=1, name="NVIDIA A100-SXM4-40GB", memory_total_mib=40960, compute_capability=(8, 0))
T4 = GpuInfo(index=0, name="Tesla T4", memory_total_mib=15360, compute_capability=(7, 5))
DRIVER = "550.54.15"


def ids(report: EnvironmentReport) -> dict[str, str]:
    return {finding.id: finding.severity for finding in report.findings}


def message(report: EnvironmentReport, finding_id: str) -> str:
    return next(f.message for f in report.findings if f.id == finding_id)


@pytest.fixture(scope="module")
def real_report() -> EnvironmentReport:
    return check_environment()


def test_real_machine_facts(real_report: EnvironmentReport) -> None:
    import tensorflow as tf

    report = real_report
    assert report.python_version == platform.python_version()
    info = tf.sysconfig.get_build_info()
    assert report.tensorflow.version == tf.__version__
    assert report.tensorflow.is_cuda_build == bool(info.get("is_cuda_build"))
    assert report.tensorflow.cuda_version == info.get("cuda_version")
    assert report.tensorflow.cudnn_version == info.get("cudnn_version")
    assert report.tensorflow.cuda_compute_capabilities == list(info.get("cuda_compute_capabilities", []))
    # tensorflow-io is optional: absent, nothing is probed and libsndfile decodes; installed (the
    # [tfio] extra, TensorFlow 2.16), its kernels run and decode in the graph.
    if report.tensorflow_io_version is None:
        assert report.tensorflow_io_kernels is None and report.audio_decoder == "soundfile"
    else:
        assert report.tensorflow_io_kernels is not None and report.tensorflow_io_kernels.ok
        assert "decode_wav" in report.tensorflow_io_kernels.detail
        assert report.audio_decoder == "tensorflow-io"
    assert report.xla_cpu.ok, report.xla_cpu.detail
    assert not any(f.severity == "error" for f in report.findings), report.findings
    assert json.loads(report.model_dump_json())["tensorflow"]["version"] == tf.__version__


def test_real_machine_gpus_agree_with_nvml_and_tensorflow(real_report: EnvironmentReport) -> None:
    import tensorflow as tf

    report = real_report
    gpus, driver, reason = query_nvml()
    assert report.nvml_gpus == list(gpus)
    assert report.driver_version == driver
    assert report.nvml_unavailable_reason == reason
    assert len(report.tf_gpus) == len(tf.config.list_physical_devices("GPU"))
    if reason:
        # This machine: no driver, no NVML; reported, never raised.
        assert message(report, "gpu-metrics-unavailable") == f"GPU metrics unavailable: {reason}"
    if not report.tf_gpus and not report.nvml_gpus:
        assert ids(report)["no-gpu"] == "info"
        assert "training runs on the CPU" in message(report, "no-gpu")
        assert report.xla_gpu is None
        assert not report.mixed_float16_supported and not report.bfloat16_supported


def test_cuda_build_with_gpus_tensorflow_cannot_see_is_an_error() -> None:
    report = check_environment(tf_gpus=[], nvml=((T4, A100), DRIVER, None), build=CUDA_BUILD, environ={})
    assert ids(report)["cuda-libraries-missing"] == "error"
    text = message(report, "cuda-libraries-missing")
    assert "NVML sees 2 GPU(s)" in text and "CUDA 12.3" in text and DRIVER in text
    assert text.endswith("pip install 'xtts-cli[gpu]'")
    assert report.findings[0].id == "cuda-libraries-missing"  # errors first
    assert "no-gpu" not in ids(report)


def test_cpu_only_tensorflow_with_nvml_gpus_is_an_error() -> None:
    report = check_environment(tf_gpus=[], nvml=((A100,), DRIVER, None), build=CPU_BUILD, environ={})
    assert ids(report)["tensorflow-cpu-only"] == "error"
    assert "CPU-only build" in message(report, "tensorflow-cpu-only")
    assert "pip install 'xtts-cli[gpu]'" in message(report, "tensorflow-cpu-only")


def test_driver_older_than_the_cuda_build_needs() -> None:
    report = check_environment(tf_gpus=[], nvml=((A100,), "470.82.01", None), build=CUDA_BUILD, environ={})
    assert ids(report) == {"driver-too-old": "error"}
    assert ">= 525.60.13" in message(report, "driver-too-old")


@pytest.mark.parametrize("visible", ["", "-1"])
def test_gpus_hidden_by_cuda_visible_devices_is_not_an_error(visible: str) -> None:
    environ = {"CUDA_VISIBLE_DEVICES": visible}
    report = check_environment(tf_gpus=[], nvml=((A100,), DRIVER, None), build=CUDA_BUILD, environ=environ)
    assert ids(report) == {"gpus-hidden": "info"}


def test_order_mismatch_without_pci_bus_order_warns() -> None:
    # CUDA's default FASTEST_FIRST puts the A100 first; NVML lists by PCI bus (T4 first).
    tf_gpus = [
        TfGpu(index=0, name=A100.name, compute_capability=(8, 0)),
        TfGpu(index=1, name=T4.name, compute_capability=(7, 5)),
    ]
    report = check_environment(tf_gpus=tf_gpus, nvml=((T4, A100), DRIVER, None), build=CUDA_BUILD, environ={})
    assert ids(report) == {"gpu-order-mismatch": "warning"}
    text = message(report, "gpu-order-mismatch")
    assert "0: NVIDIA A100-SXM4-40GB, 1: Tesla T4" in text and "0: Tesla T4, 1: NVIDIA A100-SXM4-40GB" in text
    assert text.endswith("export CUDA_DEVICE_ORDER=PCI_BUS_ID")
    assert report.mixed_float16_supported and not report.bfloat16_supported  # the T4 is 7.5


def test_same_order_or_pci_bus_order_is_quiet() -> None:
    tf_gpus = [
        TfGpu(index=0, name=T4.name, compute_capability=(7, 5)),
        TfGpu(index=1, name=A100.name, compute_capability=(8, 0)),
    ]
    nvml = ((T4, A100), DRIVER, None)
    for environ in ({}, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}):
        assert check_environment(tf_gpus=tf_gpus, nvml=nvml, build=CUDA_BUILD, environ=environ).findings == []


def test_cuda_visible_devices_index_read_in_fastest_first_order_warns() -> None:
    # CUDA_VISIBLE_DEVICES=1 means nvidia-smi's GPU 1 (the A100) only under PCI_BUS_ID; here CUDA
    # picked its own device 1, the T4.
    tf_gpus = [TfGpu(index=0, name=T4.name, compute_capability=(7, 5))]
    report = check_environment(
        tf_gpus=tf_gpus, nvml=((T4, A100), DRIVER, None), build=CUDA_BUILD, environ={"CUDA_VISIBLE_DEVICES": "1"}
    )
    assert ids(report) == {"gpu-order-mismatch": "warning"}
    assert "CUDA_VISIBLE_DEVICES='1'" in message(report, "gpu-order-mismatch")


def test_gpu_tensorflow_cannot_use_is_named() -> None:
    k80 = GpuInfo(index=1, name="Tesla K80", memory_total_mib=11441, compute_capability=(3, 7))
    tf_gpus = [TfGpu(index=0, name=T4.name, compute_capability=(7, 5))]
    report = check_environment(tf_gpus=tf_gpus, nvml=((T4, k80), DRIVER, None), build=CUDA_BUILD, environ={})
    assert ids(report) == {"gpus-not-visible-to-tensorflow": "warning"}
    text = message(report, "gpus-not-visible-to-tensorflow")
    assert "TensorFlow lacks 1: Tesla K80" in text and "below compute capability 5.0" in text


def test_tensorflow_gpus_without_nvml_report_metrics_unavailable() -> None:
    tf_gpus = [TfGpu(index=0, name="Tesla P100-PCIE-16GB", compute_capability=(6, 0))]
    reason = "nvidia-ml-py is not installed"
    report = check_environment(tf_gpus=tf_gpus, nvml=((), None, reason), build=CUDA_BUILD, environ={})
    assert ids(report) == {"gpu-metrics-unavailable": "info", "no-tensor-cores": "info"}
    assert message(report, "gpu-metrics-unavailable") == f"GPU metrics unavailable: {reason}"
    assert "compute capability 6.0" in message(report, "no-tensor-cores")
    assert not report.mixed_float16_supported
    dumped = json.loads(report.model_dump_json())
    assert dumped["tf_gpus"][0]["supports_mixed_float16"] is False


def test_no_gpu_anywhere_is_info() -> None:
    report = check_environment(tf_gpus=[], nvml=((), DRIVER, None), build=CUDA_BUILD, environ={})
    assert ids(report) == {"no-gpu": "info"}
    assert report.gpu_kernels == []


# TensorFlow 2.21.0's own build info (tf.sysconfig.get_build_info() of its Linux wheel).
BUILD_2_21 = TensorFlowBuild(
    version="2.21.0", is_cuda_build=True, cuda_version="12.5.1", cudnn_version="9",
    cuda_compute_capabilities=["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"],
)  # fmt: skip


@pytest.mark.parametrize(
    "capability, build, support, architecture",
    [
        ((8, 0), BUILD_2_21, "native", "sm_80"),  # A100
        ((8, 6), BUILD_2_21, "native", "sm_80"),  # RTX 3090: sm_80 code runs on 8.x, x >= 0
        ((8, 9), BUILD_2_21, "native", "sm_89"),  # RTX 4090, L4
        ((8, 9), CUDA_BUILD, "native", "sm_80"),  # the 2.16 build had no sm_89 of its own
        ((9, 0), BUILD_2_21, "ptx", "compute_90"),  # H100 / H200: compiled from PTX at start
        ((12, 0), BUILD_2_21, "ptx", "compute_90"),  # RTX 5090: no sm_120, PTX only
        ((5, 2), BUILD_2_21, "none", None),  # Maxwell: the 2.21 build starts at sm_60
        ((5, 2), CUDA_BUILD, "native", "sm_50"),
        ((9, 0), BUILD_2_21.model_copy(update={"cuda_compute_capabilities": ["sm_80", "sm_90a"]}), "native", "sm_90a"),
        ((10, 0), BUILD_2_21.model_copy(update={"cuda_compute_capabilities": ["sm_80", "sm_90a"]}), "none", None),
    ],
)
def test_which_gpus_the_build_has_kernels_for(capability, build, support, architecture) -> None:
    gpu = kernel_support(0, "GPU", capability, build)
    assert (gpu.support, gpu.architecture) == (support, architecture)


def test_a_gpu_the_build_runs_only_from_ptx_warns_and_one_it_cannot_run_is_an_error() -> None:
    h200 = TfGpu(index=0, name="NVIDIA H200", compute_capability=(9, 0))
    m40 = TfGpu(index=1, name="Tesla M40", compute_capability=(5, 2))
    report = check_environment(tf_gpus=[h200, m40], nvml=((), None, "no NVML"), build=BUILD_2_21, environ={})
    assert [(g.index, g.support) for g in report.gpu_kernels] == [(0, "ptx"), (1, "none")]
    assert ids(report)["gpu-ptx-only"] == "warning" and ids(report)["gpu-no-kernels"] == "error"
    ptx = message(report, "gpu-ptx-only")
    assert ptx.startswith("GPU 0: NVIDIA H200 (compute capability 9.0): TensorFlow 2.21.0 (CUDA 12.5.1) is built for ")
    assert "compute_90 PTX" in ptx and "CUDA_CACHE_MAXSIZE" in ptx
    assert "Tesla M40 (compute capability 5.2)" in message(report, "gpu-no-kernels")
    # The GPUs TensorFlow cannot list are judged from the driver's list.
    hidden = check_environment(tf_gpus=[], nvml=((A100,), DRIVER, None), build=BUILD_2_21, environ={})
    assert [(g.name, g.support, g.architecture) for g in hidden.gpu_kernels] == [(A100.name, "native", "sm_80")]
    # A CPU-only build runs no GPU code: unknown, not an error.
    cpu = check_environment(tf_gpus=[], nvml=((A100,), DRIVER, None), build=CPU_BUILD, environ={})
    assert [g.support for g in cpu.gpu_kernels] == ["unknown"] and "gpu-no-kernels" not in ids(cpu)


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler to build the broken library")
def test_tensorflow_io_kernel_failure_names_the_fix(tmp_path: Path, real_report: EnvironmentReport) -> None:
    import tensorflow as tf

    # What tensorflow-io 0.37.1 does on a TensorFlow it was not built for: its .so refers to a symbol
    # this TensorFlow lacks, and tf.load_op_library fails with NotFoundError "undefined symbol".
    source = tmp_path / "broken_op.c"
    source.write_text("extern int xtts_missing_tf_symbol(void);\nint f(void) { return xtts_missing_tf_symbol(); }\n")
    library = tmp_path / "libbroken_op.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    probe = run_probe(lambda: tf.load_op_library(str(library)))
    assert not probe.ok and "NotFoundError" in probe.detail and "undefined symbol" in probe.detail

    broken = real_report.model_copy(update={"tensorflow_io_kernels": probe, "tensorflow_io_version": "0.37.1"})
    findings = {f.id: f for f in environment_findings(broken)}
    finding = findings["tensorflow-io-kernels"]
    # A warning, not an error: libsndfile decodes what tensorflow-io would have.
    assert finding.severity == "warning"
    assert "undefined symbol" in finding.message and "decoded by libsndfile instead" in finding.message
    assert finding.message.endswith(
        "pip uninstall tensorflow-io (libsndfile decodes compressed audio without it), or keep it with "
        "TensorFlow 2.16: pip install 'xtts-cli[tfio]'"
    )


@pytest.mark.slow
@pytest.mark.parametrize("level", ["3", "0"])
def test_the_xla_probe_keeps_xlas_first_compile_logs_off_a_quiet_stderr(level: str) -> None:
    # XLA's first compilation in a process logs through absl past TF_CPP_MIN_LOG_LEVEL; a fresh
    # process is the only place it happens. Quiet (as the CLI runs): nothing; asked for: the logs.
    import os
    import sys

    code = "from xtts_cli.diagnosis.environment import probe_xla; print(probe_xla().ok)"
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": level}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True", done.stderr
    assert ("Compiled cluster using XLA" in done.stderr) == (level == "0"), done.stderr


def test_xla_failure_is_reported_with_the_config_fix(real_report: EnvironmentReport) -> None:
    import tensorflow as tf

    # A real XLA compile error: string ops have no XLA kernel.
    probe = probe_xla("/CPU:0", compute=lambda x: tf.strings.as_string(x))
    assert not probe.ok and "InvalidArgumentError" in probe.detail

    findings = {f.id: f for f in environment_findings(real_report.model_copy(update={"xla_cpu": probe}))}
    finding = findings["xla-unavailable"]
    assert finding.severity == "error"
    assert finding.fix is not None and finding.fix.describe() == "set training.enable_xla_compilation: false"
