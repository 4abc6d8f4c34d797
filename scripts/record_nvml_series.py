#!/usr/bin/env python3
"""Record NVML utilisation series under known GPU loads, through xtts's own GpuSampler.

Usage (on a machine with an NVIDIA GPU, its driver and nvidia-ml-py):
    python scripts/record_nvml_series.py [--out tests/data/nvml_h100_utilization.json]

The load comes from TensorFlow, or from PyTorch where TensorFlow cannot see a GPU (the committed
series were recorded on a GPU machine whose image had PyTorch only). Phases: idle; back-to-back
large bf16 matmuls; a loop of tiny kernels (high utilisation, few busy SMs); a 0.6 s busy / 0.6 s
idle cycle at 10 Hz; a 0.25 s / 0.25 s cycle at 20 Hz. Each phase's summary (utilisation, SM
activity, oscillation, NVML refresh) is printed; the series go to --out for the tests
(tests/test_devices_nvml_sampler.py), which check the refresh and oscillation rules on them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xtts_cli.devices.gpu_info import probe_machine  # noqa: E402
from xtts_cli.devices.nvml_sampler import GpuSampler  # noqa: E402


def kernels() -> tuple[str, Callable[[], None], Callable[[], None]]:
    """(framework, one burst of large matmuls, one burst of tiny kernels), each waited for."""
    try:
        import tensorflow as tf

        if tf.config.list_physical_devices("GPU"):
            with tf.device("/GPU:0"):
                big = tf.random.normal([8192, 8192], dtype=tf.bfloat16)
                tiny = tf.Variable(tf.random.normal([32]))

            def matmuls():
                with tf.device("/GPU:0"):
                    for _ in range(4):
                        out = tf.matmul(big, big)
                    out.numpy()  # waits for the GPU

            def tiny_kernels():
                with tf.device("/GPU:0"):
                    for _ in range(200):
                        tiny.assign(tiny * 1.0000001)
                    tiny.numpy()

            return "tensorflow", matmuls, tiny_kernels
    except ImportError:
        pass
    import torch

    big = torch.randn(8192, 8192, device="cuda:0", dtype=torch.bfloat16)
    tiny = torch.randn(32, device="cuda:0")

    def matmuls():
        for _ in range(4):
            big @ big
        torch.cuda.synchronize()

    def tiny_kernels():
        for _ in range(200):
            tiny.mul_(1.0000001)
        torch.cuda.synchronize()

    return "pytorch", matmuls, tiny_kernels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tests/data/nvml_h100_utilization.json")
    args = parser.parse_args()

    machine = probe_machine()
    if not machine.gpus:
        sys.exit(f"no GPU: {machine.gpu_unavailable_reason}")
    framework, matmuls, tiny_kernels = kernels()

    def busy(seconds: float, burst: Callable[[], None] = matmuls) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            burst()

    def cycle(on: float, off: float, times: int) -> None:
        for _ in range(times):
            busy(on)
            time.sleep(off)

    phases = [
        ("idle 3 s", 10.0, lambda: time.sleep(3)),
        ("steady big matmuls 5 s", 10.0, lambda: busy(5)),
        ("steady tiny kernels 5 s", 10.0, lambda: busy(5, tiny_kernels)),
        ("cycle 0.6 s busy / 0.6 s idle x10", 10.0, lambda: cycle(0.6, 0.6, 10)),
        ("cycle 0.25/0.25 x20 at 20 Hz", 20.0, lambda: cycle(0.25, 0.25, 20)),
    ]
    gpu = machine.gpus[0]
    record = {"gpu": gpu.name, "driver": machine.driver_version, "load": framework, "series": {}}
    busy(1.0)  # clocks up, kernels loaded
    for name, hz, run in phases:
        with GpuSampler([gpu.index], hz=hz) as sampler:
            run()
        summary = sampler.summary().gpus[0]
        print(
            json.dumps(
                {
                    "phase": name,
                    **summary.model_dump(exclude={"oscillation"}),
                    "oscillation": summary.oscillation.reason,
                }
            ),
            flush=True,
        )
        record["series"][name] = {"hz": hz, "utilization_gpu": [s.utilization_gpu for s in sampler.samples(gpu.index)]}
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {os.path.abspath(args.out)}")


if __name__ == "__main__":
    main()
