"""How fast `xtts --help` answers, next to a bare Python start-up, measured side by side.

Run: python benchmarks/cli_startup.py [--repeats 10]
Bar (docs/PERFORMANCE.md): `xtts --help` < 0.3 s and no TensorFlow import.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "xtts --help": [sys.executable, "-m", "xtts_cli", "--help"],
    "xtts validate --help": [sys.executable, "-m", "xtts_cli", "validate", "--help"],
    "import tensorflow (for scale)": [sys.executable, "-c", "import tensorflow"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    timings: dict[str, list[float]] = {name: [] for name in CASES}
    # Interleave the cases so drift on a noisy machine hits them all alike.
    for _ in range(args.repeats):
        for name, command in CASES.items():
            if name.startswith("import tensorflow") and len(timings[name]) >= 3:
                continue
            start = time.perf_counter()
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            timings[name].append(time.perf_counter() - start)
    base = statistics.median(timings["python -c pass"])
    print(f"{'case':32} {'median s':>9} {'vs python':>10}")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"{name:32} {median:9.3f} {median / base:9.1f}x")


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "performance.md"))
