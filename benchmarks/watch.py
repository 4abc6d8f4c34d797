#!/usr/bin/env python3
"""The training watch against its bars, side by side in one run, on the CPU it names.

- **A loader slowed mid-run** (`--part planted`): the real training loop of `--config` on `--data`,
  in process; after `--warm` steps each batch is held back `--delay` seconds more from
  `--slow-from` to `--slow-until` seconds into the timed stretch (a planted slow stage). Measured:
  the seconds from the slowdown starting to the watch's input-bound warning, and from it ending to
  the recovery line (bar: each within 60 s).
- **A real competing process** (`--part competitor`): the same, with one busy-loop process per
  core started beside the run for that stretch in place of the slowed loader: the seconds to the
  watch's host-contention warning and to its recovery line (the same bars).
- **Overhead** (`--part overhead`): blocks of `--block` steps with the watch and without it,
  alternated `--rounds` times on the same set-up run; steps/s of each (bar: with >= 0.99x without).
- **A healthy run** (`--part healthy`): `xtts train` itself for `--minutes` (bar: 0 warnings in
  its output and metrics.jsonl).

Writes its section of `docs/bottlenecks.md` unless `--no-doc`.

Usage:
    python benchmarks/watch.py [--config speak-cpu] [--data DIR] [--part planted,overhead,healthy] [--minutes 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from results_page import cpu_name, publish  # noqa: E402


class Records:
    """What the watch writes to metrics.jsonl, kept with the time it was written."""

    def __init__(self) -> None:
        self.lines: list[tuple[float, dict]] = []

    def write(self, record: dict) -> None:
        self.lines.append((time.monotonic(), record))


def set_up(config_name: str, data: Path | None, scratch: Path, overrides: dict):
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.training.controller import Controller
    from xtts_cli.training.trainer import Trainer

    settings = {"training.max_steps": 1_000_000, "training.max_minutes": None, **overrides}
    if data is not None:
        settings["data.dataset_path"] = str(data)
    config = resolve_config(config_name, settings).config
    trainer = Trainer(config, run_dir=scratch / f"run-{len(list(scratch.iterdir()))}")
    parts = trainer.setup()
    return config, trainer, parts, Controller(trainer), trainer.new_result()


def planted(args, scratch: Path) -> list[str]:
    """The loader held back `--delay` s a batch for a stretch: the input-bound warning and recovery."""
    return _disturbed(args, scratch, "loader")


def competitor(args, scratch: Path) -> list[str]:
    """A real competing process per core (a Python busy loop) for the same stretch: the
    host-contention warning and recovery."""
    return _disturbed(args, scratch, "processes")


def _disturbed(args, scratch: Path, how: str) -> list[str]:
    from xtts_cli.devices.gpu_info import usable_cpu_count
    from xtts_cli.training.watch import WatchHook

    config, trainer, parts, controller, result = set_up(args.config, args.data, scratch, {})
    busy: list[subprocess.Popen] = []
    try:
        records, events = Records(), []
        hook = WatchHook(config, usable_cpu_count(), records, events.append)
        controller.run_steps(parts, [hook], result, steps=args.warm)
        began = time.monotonic()
        slow_from, slow_until = began + args.slow_from, began + args.slow_until

        def source():
            for batch, wait in parts.steps.batches(parts.input.train_ds):
                if how == "loader" and slow_from <= time.monotonic() < slow_until:
                    time.sleep(args.delay)
                    wait += args.delay
                yield batch, wait

        batches = source()
        while time.monotonic() < began + args.slow_until + args.after:
            now = time.monotonic()
            if how == "processes" and not busy and slow_from <= now < slow_until:
                slow_from = now  # when they really started
                loop = [sys.executable, "-c", "while True: pass"]
                busy = [subprocess.Popen(loop) for _ in range(os.cpu_count() or 1)]
            if busy and now >= slow_until and busy[0].poll() is None:
                slow_until = now
                for proc in busy:
                    proc.kill()
                    proc.wait()
            controller.run_steps(parts, [hook], result, steps=5, source=batches)
    finally:
        for proc in busy:
            proc.kill()
        trainer.close()
    finding = "input-bound" if how == "loader" else "host-contention"
    hits = [(t, r) for t, r in records.lines if r["watch"].startswith(finding)]
    warned = next((t for t, r in hits if r["state"] == "warning" and t >= slow_from), None)
    back = next((t for t, r in hits if r["state"] == "recovered" and t >= slow_until), None)
    early = [r for t, r in records.lines if t < slow_from]
    others = sorted({r["watch"] for _, r in records.lines if not r["watch"].startswith(finding)})
    what = (
        f"loader held back {args.delay:g} s a batch"
        if how == "loader"
        else f"{os.cpu_count()} busy-loop processes beside it"
    )
    rows = [
        f"| {what} from {args.slow_from:g} s to {args.slow_until:g} s: {finding} warning after "
        f"| {_seconds(warned, slow_from)} | within 60 s |",
        f"| ... recovery line after it ends | {_seconds(back, slow_until)} | within 60 s |",
        f"| warnings before it | {len(early)} | 0 |",
        f"| other findings while it ran | {', '.join(others) or 'none'} | - |",
    ]
    if hits:
        fix = hits[0][1]["fix"]
        rows.append(f"| the warning | {hits[0][1]['message']} ({f'fix: {fix}' if fix else 'no config change'}) | - |")
    return rows


def _seconds(at: float | None, since: float) -> str:
    return "never" if at is None else f"{at - since:.1f} s"


def overhead(args, scratch: Path) -> list[str]:
    from xtts_cli.devices.gpu_info import usable_cpu_count
    from xtts_cli.training.watch import WatchHook

    config, trainer, parts, controller, result = set_up(args.config, args.data, scratch, {})
    rates: dict[str, list[float]] = {"with": [], "without": []}
    try:
        hook = WatchHook(config, usable_cpu_count(), Records(), lambda event: None)
        controller.run_steps(parts, [hook], result, steps=args.warm)
        for _ in range(args.rounds):
            for name, hooks in (("with", [hook]), ("without", [])):
                began = time.perf_counter()
                controller.run_steps(parts, hooks, result, steps=args.block)
                rates[name].append(args.block / (time.perf_counter() - began))
    finally:
        trainer.close()
    on, off = statistics.median(rates["with"]), statistics.median(rates["without"])
    return [
        f"| steps/s with the watch / without, median of {args.rounds} alternated blocks of {args.block} | "
        f"{on:.3f} / {off:.3f} ({on / off:.3f}x) | at least 0.99x |"
    ]


def healthy(args, scratch: Path) -> list[str]:
    run = scratch / "healthy"
    command = [sys.executable, "-m", "xtts_cli", "train", "-c", args.config, "--run-dir", str(run)]
    command += ["--set", f"training.max_minutes={args.minutes}", "--set", "training.max_steps=1000000"]
    if args.data is not None:
        command += ["--data", str(args.data)]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    if done.returncode:
        raise SystemExit(f"xtts train failed: {done.stderr[-600:]}")
    said = [line for line in done.stderr.splitlines() if line.startswith("watch:")]
    lines = (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    warnings = [r for r in records if r.get("state") == "warning"]
    steps = max(r["step"] for r in records)
    return [
        f"| `xtts train -c {args.config}` for {args.minutes:g} minutes ({steps} steps): warnings printed / "
        f"in metrics.jsonl | {len(said)} / {len(warnings)} | 0 |"
    ] + [f"| a warning | {r['watch']}: {r['message']} |  |" for r in warnings[:3]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="speak-cpu")
    parser.add_argument("--data", type=Path, default=None, help="default: the config's dataset (the bundled sample)")
    parser.add_argument("--part", default="planted,overhead,healthy")
    parser.add_argument("--warm", type=int, default=30)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--slow-from", type=float, default=45.0)
    parser.add_argument("--slow-until", type=float, default=135.0)
    parser.add_argument("--after", type=float, default=75.0)
    parser.add_argument("--block", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--minutes", type=float, default=10.0)
    args = parser.parse_args(argv)
    parts = args.part.split(",")
    unknown = sorted(set(parts) - {"planted", "competitor", "overhead", "healthy"})
    if unknown:  # it had measured nothing and written an empty table into the page
        parser.error(f"--part {','.join(unknown)}: the parts are planted, competitor, overhead, healthy")
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; config {args.config}; {time.strftime('%Y-%m-%d')}")
    print()
    print("| measured | figure | bar |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="xtts-watch-") as scratch:
        for name, part in (
            ("planted", planted),
            ("competitor", competitor),
            ("overhead", overhead),
            ("healthy", healthy),
        ):
            if name in parts:
                for row in part(args, Path(scratch)):
                    print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(publish(main, "bottlenecks.md"))
