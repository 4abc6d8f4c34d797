#!/usr/bin/env python3
"""The training watch's GPU readings against a load we know, on a real NVIDIA GPU (issue 59).

No TensorFlow: the load is a PyTorch matrix-multiply loop, so it runs on a GPU machine whose image
has PyTorch and nvidia-ml-py only (xtts_cli's NVML sampler and watch need numpy, pydantic and PyYAML,
not TensorFlow). Four phases of `--seconds` each on GPU `--gpu`, each loop pass a training "step":

1. **busy**: back-to-back float16 matmuls of `--size` x `--size` (near 100 % utilisation), no wait;
2. **starved**: each step waits 0.5 s for a "batch" and multiplies a 64 x 64 matrix (a GPU starved
   by its input);
3. **busy again**;
4. **swinging**: steps of 0.1 s of matmuls whose batches come in bursts: every 4th waits 0.6 s, the
   others none (the users' symptom, a GPU that swings between idle and busy in a repeating cycle).

The sampler is xtts's `GpuSampler` at `profiling.gpu_sample_hz`, read through the same
`gpu_readings` the training loop uses, and fed with the steps' waits to the same `Watch` every 5 s.
Measured and printed side by side: NVML's utilisation in each phase (bars: busy >= 90 %, starved
<= 5 %, swinging under the watch's line), and when the watch said `gpu-underused`,
`input-bound` and `input-oscillation` and when it took `gpu-underused` back (bars: each warning
within the window plus two checks of its phase starting, as a figure must cross at two checks in a
row; the recovery within that of the busy phase; no warning in the first busy phase).

    python benchmarks/gpu_watch.py [--gpu 0] [--seconds 60] [--size 8192] [--no-doc]

Writes its section of `docs/bottlenecks.md` unless `--no-doc`. Without NVML it says so and exits
2; it is not run by the tests (they have no GPU).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from results_page import publish  # noqa: E402

CHECK_SECONDS = 5.0
PHASES = ("busy", "starved", "busy again", "swinging")
SWING_EVERY, SWING_WAIT, SWING_STEP = 4, 0.6, 0.1


def run_phases(seconds: float, step, watch, readings) -> tuple[list[dict], float]:
    """Run each phase's steps for `seconds`, checking the watch every CHECK_SECONDS: (its notices,
    each with the seconds since the start, and when the phases began on the monotonic clock)."""
    began = time.monotonic()
    notices: list[dict] = []
    count, checked = 0, began
    for index, name in enumerate(PHASES):
        while time.monotonic() - began < (index + 1) * seconds:
            count += 1
            wait = {"starved": 0.5, "swinging": SWING_WAIT if count % SWING_EVERY == 0 else 0.0}.get(name, 0.0)
            time.sleep(wait)
            ticked = time.perf_counter()
            step(name)
            now = time.monotonic()
            watch.add(now, wait, time.perf_counter() - ticked, ("matmul", name == "starved"))
            if now - checked >= CHECK_SECONDS:
                checked = now
                for notice in watch.check(now, count, readings()):
                    notices.append({"t": round(now - began, 1), "id": notice.id, "state": notice.state})
                    print(f"{now - began:6.1f} s  {notice.state} {notice.id}: {notice.message}", file=sys.stderr)
    return notices, began


def torch_steps(gpu: int, size: int):
    """(the GPU's name, a step of each phase) with PyTorch on `gpu`, each step waited for."""
    import torch

    device = torch.device(f"cuda:{gpu}")
    big = torch.randn(size, size, device=device, dtype=torch.float16)
    small = torch.randn(64, 64, device=device, dtype=torch.float16)

    def step(name: str) -> None:
        if name == "starved":
            small @ small
        elif name == "swinging":
            end = time.perf_counter() + SWING_STEP
            while time.perf_counter() < end:
                big @ big
                torch.cuda.synchronize(device)
        else:
            big @ big
        torch.cuda.synchronize(device)

    step("busy")  # kernels loaded, clocks up
    return torch.cuda.get_device_name(device), step


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=60.0, help="Length of each phase.")
    parser.add_argument("--size", type=int, default=8192, help="Side of the busy phases' matrices.")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    args = parser.parse_args(argv)

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.devices.nvml_sampler import GpuSampler
    from xtts_cli.training.watch import Watch, gpu_readings

    config = XttsConfig()
    sampler = GpuSampler([args.gpu], hz=config.profiling.gpu_sample_hz)
    sampler_began = time.monotonic()  # the sampler's clock starts with it
    sampler.start()
    if sampler.unavailable_reason:
        print(sampler.unavailable_reason, file=sys.stderr)
        return 2
    driver = probe_machine().driver_version
    name, step = torch_steps(args.gpu, args.size)
    watch, window = Watch(config, cpu_count=1), config.watch.window_seconds
    try:
        notices, began = run_phases(
            args.seconds, step, watch, lambda: gpu_readings(sampler, window, {args.gpu: "model"})
        )
    finally:
        sampler.stop()
    offset = began - sampler_began
    figures = judge(args, sampler.samples(args.gpu), notices, offset, window, config.watch.gpu_util_percent)
    figures = {"gpu": name, "driver": driver, **figures}
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        report(figures, args)
    return 0 if all(figures["bars"].values()) else 1


def judge(args, samples, notices: list[dict], offset: float, window: float, util_line: float) -> dict:
    s = args.seconds

    def utils(phase: int) -> list[float]:
        # A phase's edges are left out (NVML's utilisation is averaged over its last sample period).
        start, end = phase * s + offset, (phase + 1) * s + offset
        return [x.utilization_gpu for x in samples if start + 3 <= x.t <= end - 1 and x.utilization_gpu is not None]

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 1) if values else float("nan")

    def first(notice_id: str, state: str, phase: int) -> float | None:
        after = phase * s
        times = [n["t"] for n in notices if n["id"] == notice_id and n["state"] == state and n["t"] >= after]
        return round(min(times) - after, 1) if times else None

    swing = utils(3)
    figures = {
        "window_seconds": window,
        "util": {name: mean(utils(i)) for i, name in enumerate(PHASES)},
        "swinging_range": [min(swing), max(swing)] if swing else None,
        "warnings_while_busy": sum(1 for n in notices if n["t"] < s and n["state"] == "warning"),
        "gpu_underused_after": first("gpu-underused", "warning", 1),
        "input_bound_after": first("input-bound", "warning", 1),
        "gpu_recovered_after": first("gpu-underused", "recovered", 2),
        "swinging_underused_after": first("gpu-underused", "warning", 3),
        "swinging_oscillation_after": first("input-oscillation", "warning", 3),
        "notices": notices,
    }
    # A figure warns at its second check across the line in a row; one that needs a full window of the
    # new phase to show (a cycle) comes at worst a window and two checks after it starts.
    limit = window + 2 * CHECK_SECONDS

    def within(after: float | None) -> bool:
        return after is not None and after <= limit  # None: it never came

    util = figures["util"]
    figures["bars"] = {
        "busy >= 90 %": util["busy"] >= 90,
        "starved <= 5 %": util["starved"] <= 5,
        f"swinging under the line, {util_line:g} %": util["swinging"] < util_line,
        "no warning while busy": figures["warnings_while_busy"] == 0,
        f"starved: gpu-underused within {limit:.0f} s": within(figures["gpu_underused_after"]),
        f"busy again: recovered within {limit:.0f} s": within(figures["gpu_recovered_after"]),
        f"swinging: gpu-underused within {limit:.0f} s": within(figures["swinging_underused_after"]),
        f"swinging: input-oscillation within {limit:.0f} s": within(figures["swinging_oscillation_after"]),
    }
    return figures


def report(figures: dict, args) -> None:
    def seconds(value: float | None) -> str:
        return "never" if value is None else f"{value:g} s"

    util, low_high = figures["util"], figures["swinging_range"]
    swing = f"{util['swinging']} % ({low_high[0]:g}-{low_high[1]:g} % a reading)" if low_high else "-"
    print(f"GPU: {figures['gpu']}, driver {figures['driver']}; {args.seconds:g} s a phase; {time.strftime('%Y-%m-%d')}")
    print(f"load: float16 matmuls of {args.size} x {args.size} (PyTorch); watch window {figures['window_seconds']:g} s")
    print()
    print("| measured | figure |")
    print("|---|---|")
    print(
        f"| NVML utilisation: busy / starved / busy again | {util['busy']} / {util['starved']} / {util['busy again']} % |"
    )
    print(f"| NVML utilisation, swinging (every {SWING_EVERY}th batch {SWING_WAIT:g} s late) | {swing} |")
    print(f"| warnings in the first busy phase | {figures['warnings_while_busy']} |")
    print(
        f"| starved: gpu-underused / input-bound after | {seconds(figures['gpu_underused_after'])} / "
        f"{seconds(figures['input_bound_after'])} |"
    )
    print(f"| busy again: gpu-underused recovered after | {seconds(figures['gpu_recovered_after'])} |")
    print(
        f"| swinging: gpu-underused / input-oscillation after | {seconds(figures['swinging_underused_after'])} / "
        f"{seconds(figures['swinging_oscillation_after'])} |"
    )
    print()
    for bar, met in figures["bars"].items():
        print(f"{'met' if met else 'NOT MET'}: {bar}")


if __name__ == "__main__":
    raise SystemExit(publish(main, "bottlenecks.md"))
