"""The training step, measured side by side in one run on the same batches of the bundled sample:

- graph mode (`tf.function`) vs eager, tiny model   (bar: graph >= 3x eager)
- XLA on vs off in graph mode, with XLA's compile time shown separately
- bucketing vs padding every batch to max_mel_frames: real (unpadded) mel frames per second
  through the graph-mode training step, the same clips and model (bar: >= 1.5x)
- the input-bound share of the default `xtts train` on this machine (bar: < 5 %)
- the optimizer update: Keras's AdamW against the fused one training uses (`FusedAdam`), the step's
  ops, its first call (the trace) and its median step, at the tiny size and at `speak-cpu`'s

Run: python benchmarks/training_step.py [--steps 20] [--batch-size 16] [--data-path DIR]
     [--only graph|padding|train|optimizer] [--passes N]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _batches(run_data, *, training: bool = True) -> list:
    """One epoch's batches of the training split (the scan's, `scan.train`) under `run_data`'s config.
    training=False keeps every clip (partial batches too, in a fixed order), so two batching
    settings can be compared on the same clips."""
    dataset, _ = run_data.pipeline(training=training, items=run_data.scan.train)
    return list(dataset)


def _time_steps(step, batches, steps: int) -> tuple[float, float]:
    """(first call seconds: trace/compile + run, median seconds of the following calls)."""
    start = time.perf_counter()
    float(step(batches[0])["loss"])
    first = time.perf_counter() - start
    # Warm every bucket shape (XLA compiles each once) before timing.
    for batch in batches[1:]:
        float(step(batch)["loss"])
    times = []
    for index in range(steps):
        batch = batches[index % len(batches)]
        start = time.perf_counter()
        float(step(batch)["loss"])
        times.append(time.perf_counter() - start)
    return first, statistics.median(times)


def _padding_comparison(run_data, passes: int) -> None:
    """Real mel frames/s of the training step on bucketed vs fixed-length batches of the same clips."""
    import keras
    import tensorflow as tf

    from xtts_cli.model.build import build_model

    config = run_data.config
    prepared, shapes = {}, {}
    for name, changes in (("bucketed", {}), ("fixed", {"pad_to_fixed_length": True, "bucket_by_length": False})):
        variant = config.model_copy(update={"data": config.data.model_copy(update=changes)})
        # Every clip of the split in both settings: bucketing's partial last batch per bucket is
        # kept (a smaller, less efficient step), where training would drop it.
        batches = _batches(run_data.with_config(variant), training=False)
        keras.utils.set_random_seed(0)
        model = build_model(variant.acoustic, variant.data, run_data.tokenizer.vocab_size)
        signature = [tf.nest.map_structure(lambda t: tf.TensorSpec([None] * t.shape.rank, t.dtype), batches[0])]
        step = _make_step(model, keras.optimizers.AdamW(1e-4), variant.data, graph=True, xla=False, signature=signature)
        for batch in batches:  # warm every shape
            float(step(batch)["loss"])
        prepared[name] = (step, batches)
        real = sum(float(tf.reduce_sum(b["mel_lengths"])) for b in batches)
        shapes[name] = (
            len(batches),
            sum(b["mel"].shape[0] for b in batches),
            real / sum(b["mel"].shape[0] * b["mel"].shape[1] for b in batches),
        )
    # Passes alternate between the two, so the machine's drift hits both alike.
    seconds, frames = dict.fromkeys(prepared, 0.0), dict.fromkeys(prepared, 0.0)
    for _ in range(passes):
        for name, (step, batches) in prepared.items():
            for batch in batches:
                start = time.perf_counter()
                float(step(batch)["loss"])
                seconds[name] += time.perf_counter() - start
                frames[name] += float(tf.reduce_sum(batch["mel_lengths"]))
    rates = {name: frames[name] / seconds[name] for name in prepared}
    print(
        f"\npadding: the same clips, model and graph-mode step, {passes} alternating pass(es) over one epoch's batches"
    )
    for name, label in (
        ("bucketed", f"bucketed ({config.data.num_buckets} buckets)"),
        ("fixed", f"fixed: every batch padded to {config.data.max_mel_frames} frames"),
    ):
        count, clips, efficiency = shapes[name]
        print(
            f"  {label:44} {clips} clips in {count:3d} batches, efficiency {efficiency:6.1%}, "
            f"real mel frames/s {rates[name]:10,.0f}"
        )
    print(
        f"  bucketed / fixed, real mel frames/s through the step: {rates['bucketed'] / rates['fixed']:.2f}x (bar >= 1.5x)"
    )


def _make_step(model, optimizer, data, *, graph: bool, xla: bool, signature=None):
    """The trainer's step on one device: reference crop (seeded by the step), loss, update."""
    import tensorflow as tf

    from xtts_cli.data.features import with_reference
    from xtts_cli.data.text import CONDITIONING_IDS

    def step(batch):
        seed = tf.stack([tf.constant(0, tf.int64), tf.cast(optimizer.iterations, tf.int64)])
        # The pipeline's texts open with their language's and speaker's index (`tokenizer_for`).
        batch = with_reference(batch, data, seed=seed, prefix=CONDITIONING_IDS)
        with tf.GradientTape() as tape:
            losses = model.compute_loss(batch, model(batch, training=True))
        gradients = tape.gradient(losses["loss"], model.trainable_variables)
        optimizer.apply(gradients, model.trainable_variables)
        return losses

    if not graph:
        return step
    return tf.function(step, jit_compile=xla, input_signature=signature)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--data-path", help="Dataset root (default: the bundled sample).")
    parser.add_argument("--only", choices=("graph", "padding", "train", "optimizer"), help="Run one section.")
    parser.add_argument("--passes", type=int, default=2, help="Passes over the epoch in the padding comparison.")
    args = parser.parse_args()

    import tensorflow as tf

    from xtts_cli.config import resolve_config
    from xtts_cli.data.run_data import prepare

    overrides = {"data.batch_size": args.batch_size}
    if args.data_path:
        overrides["data.dataset_path"] = args.data_path
    config = resolve_config(None, overrides).config
    run_data = prepare(config)
    batches, tokenizer = _batches(run_data), run_data.tokenizer
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, TF {tf.__version__}")
    print(f"data: {config.data.dataset_path or 'the bundled sample'}; tiny model, batch {args.batch_size}")
    if args.only in (None, "padding"):
        _padding_comparison(run_data, args.passes)
    if args.only == "padding":
        return
    if args.only in (None, "graph"):
        _graph_comparison(config, batches, tokenizer, args.steps)
    if args.only in (None, "train"):
        _train_share(overrides)
    if args.only in (None, "optimizer"):
        _optimizer_comparison(overrides, args.steps)


def _graph_comparison(config, batches, tokenizer, steps: int) -> None:
    import keras
    import tensorflow as tf

    from xtts_cli.model.build import build_model

    signature = [
        tf.nest.map_structure(lambda t: tf.TensorSpec([t.shape[0]] + [None] * (t.shape.rank - 1), t.dtype), batches[0])
    ]
    results = {}
    for name, graph, xla in (("eager", False, False), ("graph", True, False), ("graph + XLA", True, True)):
        keras.utils.set_random_seed(0)
        model = build_model(config.acoustic, config.data, tokenizer.vocab_size)
        optimizer = keras.optimizers.AdamW(1e-4)
        step = _make_step(model, optimizer, config.data, graph=graph, xla=xla, signature=signature if graph else None)
        results[name] = _time_steps(step, batches, steps if graph else max(3, steps // 4))

    print(f"\n{len(batches)} bucket batches")
    print(f"{'step':14} {'first call s':>13} {'median step s':>14} {'vs eager':>9}")
    eager = results["eager"][1]
    for name, (first, median) in results.items():
        print(f"{name:14} {first:13.2f} {median:14.3f} {eager / median:8.1f}x")
    print(f"graph / eager speed-up: {eager / results['graph'][1]:.1f}x (bar >= 3x)")
    print(f"XLA / graph speed-up after compiling: {results['graph'][1] / results['graph + XLA'][1]:.2f}x")


def _optimizer_comparison(overrides: dict, steps: int) -> None:
    """Keras's AdamW against `FusedAdam` in the same graph-mode step, on the same batches and
    weights, at two model sizes; the two alternate, so the machine's drift hits both alike."""
    import keras
    import tensorflow as tf

    from xtts_cli.config import resolve_config
    from xtts_cli.data.run_data import prepare
    from xtts_cli.kinds.optimization import FusedAdam, build_schedule
    from xtts_cli.model.build import build_model

    print("\noptimizer update: Keras's AdamW against the fused one, graph-mode step, same batches and weights")
    print(f"{'size':10} {'optimizer':12} {'ops in step':>11} {'first call s':>13} {'median step s':>14}")
    for size, preset in (("tiny", None), ("speak-cpu", "speak-cpu")):
        config = resolve_config(preset, overrides if preset is None else {}).config
        run_data = prepare(config)
        batches = _batches(run_data)
        signature = [
            tf.nest.map_structure(
                lambda t: tf.TensorSpec([t.shape[0]] + [None] * (t.shape.rank - 1), t.dtype), batches[0]
            )
        ]
        training = config.training
        made = {}
        for name, kind in (("keras AdamW", keras.optimizers.AdamW), ("fused", FusedAdam)):
            keras.utils.set_random_seed(0)
            model = build_model(config.acoustic, config.data, run_data.tokenizer.vocab_size)
            schedule = build_schedule(training, training.max_steps or 1000)
            optimizer = kind(learning_rate=schedule, weight_decay=training.weight_decay, global_clipnorm=1.0)
            optimizer.build(model.trainable_variables)
            made[name] = _make_step(model, optimizer, config.data, graph=True, xla=False, signature=signature)
        timed = {name: [] for name in made}
        for _ in range(2):
            for name, step in made.items():
                timed[name].append(_time_steps(step, batches, steps))
        for name, step in made.items():
            ops = len(step.get_concrete_function().graph.get_operations())
            first = timed[name][0][0]  # the first pass's first call traced the step
            median = statistics.median(t[1] for t in timed[name])
            print(f"{size:10} {name:12} {ops:11,d} {first:13.2f} {median:14.3f}")
        keras_median = statistics.median(t[1] for t in timed["keras AdamW"])
        fused_median = statistics.median(t[1] for t in timed["fused"])
        print(
            f"{size:10} fused: steps/s {keras_median / fused_median:.2f}x Keras's, first call "
            f"{timed['keras AdamW'][0][0] - timed['fused'][0][0]:+.2f} s shorter"
        )


def _train_share(overrides: dict) -> None:
    """The default `xtts train` on this machine: its own data-wait accounting."""
    import tempfile

    from xtts_cli.config import resolve_config
    from xtts_cli.training.controller import Controller
    from xtts_cli.training.metrics import read_metrics
    from xtts_cli.training.trainer import Trainer

    with tempfile.TemporaryDirectory() as run_dir:
        overrides = {**overrides, "training.max_steps": 60, "training.log_step": 10, "training.sample_step": 1000}
        overrides.pop("data.batch_size")
        result = Controller(Trainer(resolve_config(None, overrides).config, run_dir=run_dir)).run()
        # Warm-up excluded: the first window holds the trace and the first (feature-caching) epoch.
        records = [r for r in read_metrics(Path(run_dir) / "metrics.jsonl") if "step_ms" in r][1:]
    share = 100.0 * sum(r["data_wait_ms"] for r in records) / sum(r["step_ms"] for r in records)
    print(
        f"default xtts train, steps 11-60: {1000.0 / statistics.mean(r['step_ms'] for r in records):.2f} steps/s, "
        f"data wait {share:.1f} % of step time (bar < 5 %); whole run incl. warm-up: {result.data_wait_percent:.1f} %"
    )
    print(
        f"its wall clock: {result.final_step} steps in {result.loop_seconds:.1f} s from the first to the last "
        f"({result.final_step / result.loop_seconds:.2f} steps/s), {result.step_time_percent:.0f} % of it in steps"
    )


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "performance.md"))
