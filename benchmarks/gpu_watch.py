#!/usr/bin/env python3
"""The training watch's GPU readings against a load we know, on a real NVIDIA GPU (issue 59).

No TensorFlow: the load is a PyTorch matrix-multiply loop, so it runs on a GPU machine whose image
has PyTorch and nvidia-ml-py only (xtts_cli's NVML sampler and watch need numpy, pydantic and PyYAML,
not TensorFlow). Three phases of `--seconds` each on GPU `--gpu`:

1. **busy**: back-to-back float16 matmuls of `--size` x `--size` (near 100 % utilisation), each one
   a "step" with no data wait;
2. **idle**: the loop waits 0.5 s per step for a "batch" and multiplies a 64 x 64 matrix (a GPU
   starved by its input, the problem users came with);
3. **busy** again.

The sampler is xtts's `GpuSampler` at `profiling.gpu_sample_hz`, read through the same
`gpu_readings` the training loop uses, and fed to the same `Watch` every 5 s. Measured and printed
side by side: NVML's mean utilisation in each phase (bars: busy >= 90 %, idle <= 5 %), and when the
watch said `gpu-underused` and `input-bound` and when it took them back (bars: the warning within
the window plus one check of the idle phase starting, the recovery within that of it ending; no
warning in the first busy phase).

    python benchmarks/gpu_watch.py [--gpu 0] [--seconds 60] [--size 8192]

Without NVML it says so and exits 2; it is not run by the tests (they have no GPU).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=60.0, help="Length of each phase.")
    parser.add_argument("--size", type=int, default=8192, help="Side of the busy phase's matrices.")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    args = parser.parse_args(argv)

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.devices.nvml_sampler import GpuSampler
    from xtts_cli.training.watch import Watch, gpu_readings

    config = XttsConfig()
    sampler = GpuSampler([args.gpu], hz=config.profiling.gpu_sample_hz)
    sampler.start()
    if sampler.unavailable_reason:
        print(sampler.unavailable_reason, file=sys.stderr)
        return 2
    import torch

    device = torch.device(f"cuda:{args.gpu}")
    big = torch.randn(args.size, args.size, device=device, dtype=torch.float16)
    small = torch.randn(64, 64, device=device, dtype=torch.float16)
    watch, window = Watch(config, cpu_count=1), config.watch.window_seconds
    began = time.monotonic()
    phases = [("busy", 0.0), ("idle", args.seconds), ("busy again", 2 * args.seconds)]
    notices: list[dict] = []
    step, checked = 0, began
    try:
        for name, start in phases:
            while time.monotonic() - began < start + args.seconds:
                wait = 0.5 if name == "idle" else 0.0
                time.sleep(wait)
                ticked = time.perf_counter()
                out = big @ big if name != "idle" else small @ small
                torch.cuda.synchronize(device)
                del out
                now, step = time.monotonic(), step + 1
                watch.add(now, wait, time.perf_counter() - ticked, ("matmul", name == "idle"))
                if now - checked >= 5.0:
                    checked = now
                    for notice in watch.check(now, step, gpu_readings(sampler, window, {args.gpu: "model"})):
                        notices.append({"t": round(now - began, 1), "id": notice.id, "state": notice.state})
                        print(f"{now - began:6.1f} s  {notice.state} {notice.id}: {notice.message}", file=sys.stderr)
    finally:
        sampler.stop()

    samples = sampler.samples(args.gpu)

    def mean_util(start: float, end: float) -> float:
        # The sampler's clock starts with it, a moment before `began`; a phase's edges are left out
        # (NVML's utilisation is averaged over its last sample period).
        values = [s.utilization_gpu for s in samples if start + 3 <= s.t <= end - 1 and s.utilization_gpu is not None]
        return sum(values) / len(values) if values else float("nan")

    def first(notice_id: str, state: str, after: float) -> float | None:
        times = [n["t"] for n in notices if n["id"].startswith(notice_id) and n["state"] == state and n["t"] >= after]
        return round(min(times) - after, 1) if times else None

    def within(after: float | None, limit: float) -> bool:
        return after is not None and after <= limit  # None: it never came

    s = args.seconds
    figures = {
        "gpu": torch.cuda.get_device_name(device),
        "host": platform.node(),
        "window_seconds": window,
        "busy_util": round(mean_util(0, s), 1),
        "idle_util": round(mean_util(s, 2 * s), 1),
        "busy_again_util": round(mean_util(2 * s, 3 * s), 1),
        "warnings_while_busy": sum(1 for n in notices if n["t"] < s and n["state"] == "warning"),
        "gpu_underused_after": first("gpu-underused", "warning", s),
        "input_bound_after": first("input-bound", "warning", s),
        "gpu_recovered_after": first("gpu-underused", "recovered", 2 * s),
        "notices": notices,
    }
    limit = window + 5.0
    bars = {
        "busy >= 90 %": figures["busy_util"] >= 90,
        "idle <= 5 %": figures["idle_util"] <= 5,
        "no warning while busy": figures["warnings_while_busy"] == 0,
        f"gpu-underused within {limit:.0f} s": within(figures["gpu_underused_after"], limit),
        f"recovered within {limit:.0f} s": within(figures["gpu_recovered_after"], limit),
    }
    if args.json:
        print(json.dumps({**figures, "bars": bars}, indent=2))
    else:
        print(f"{figures['gpu']}: NVML utilisation busy {figures['busy_util']} %, idle {figures['idle_util']} %, ")
        print(f"busy again {figures['busy_again_util']} %; window {window:g} s")
        for bar, met in bars.items():
            print(f"  {'met' if met else 'NOT MET'}: {bar}")
    return 0 if all(bars.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
