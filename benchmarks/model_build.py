"""How long building a model's weights takes: Keras's own first call (a symbolic trace of every
layer without a `build()`, nested ones again) against `built_by_calling` (one eager call), side by
side, at each model size and decoder.

Each figure is one fresh process building one model once (what `xtts train`, `synthesize`, `serve`
and `export` do at start-up); the two ways alternate, --rounds times, and the medians are printed.
Both must make the same number of weights and parameters, or the script fails.

Run: python benchmarks/model_build.py [--rounds 3] [--sizes tiny,small,normal]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = """
import json, sys, time
import tensorflow as tf
from xtts_cli.config.schema import AcousticConfig, XttsConfig
from xtts_cli.kinds import kind_for
from xtts_cli.model.presets import resolve_dims
from xtts_cli.model.xtts import built_by_calling, dummy_batch
way, size, decoder = sys.argv[1:4]
config = AcousticConfig(model_size=size, decoder=decoder)
network = kind_for(XttsConfig(model=config.model_dump())).network_class()
tf.constant(1.0) + 1  # the runtime is up before the clock starts
cpu, wall = time.process_time(), time.perf_counter()
model = network(dims=resolve_dims(config), n_mels=80, vocab_size=60, input_noise=0.0, name="xtts")
build = built_by_calling if way == "eager" else (lambda net, *args, **kwargs: net(*args, **kwargs))
build(model, dummy_batch(n_mels=80), training=False)
print(json.dumps({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
                  "weights": len(model.weights), "params": model.count_params()}))
"""

WAYS = ("keras", "eager")


def measure(way: str, size: str, decoder: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, way, size, decoder],
        capture_output=True,
        text=True,
        check=True,
        env={"TF_CPP_MIN_LOG_LEVEL": "3", **os.environ},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="tiny,small,normal")
    args = parser.parse_args()
    print(f"{'size':8} {'decoder':15} {'params':>12} {'Keras first call':>17} {'one eager call':>15} {'ratio':>6}")
    print(f"{'':8} {'':15} {'':>12} {'(CPU s, median)':>17} {'(CPU s, median)':>15}")
    for size in args.sizes.split(","):
        for decoder in ("autoregressive", "duration"):
            runs: dict[str, list[dict]] = {way: [] for way in WAYS}
            for _ in range(args.rounds):
                for way in WAYS:
                    runs[way].append(measure(way, size, decoder))
            shapes = {(r["weights"], r["params"]) for way in WAYS for r in runs[way]}
            if len(shapes) != 1:
                print(f"{size} {decoder}: the two ways made different weights: {sorted(shapes)}")
                return 1
            keras, eager = (statistics.median(r["cpu"] for r in runs[way]) for way in WAYS)
            params = runs["eager"][0]["params"]
            print(f"{size:8} {decoder:15} {params:>12,} {keras:>17.2f} {eager:>15.2f} {keras / eager:>5.1f}x")
    return 0


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "performance.md"))
