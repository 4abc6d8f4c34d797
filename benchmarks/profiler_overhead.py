"""What the step profiler costs: the real tiny-model step timed bare and under StepTimer, side by
side in one run (alternating blocks, so drift on a shared machine hits both alike).

Run: python benchmarks/profiler_overhead.py [--blocks 6] [--steps-per-block 10]
Bar (docs/PERFORMANCE.md): a profiled step within 3 % of an unprofiled one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--steps-per-block", type=int, default=10)
    args = parser.parse_args()

    import keras
    import tensorflow as tf

    from xtts_cli.config import resolve_config
    from xtts_cli.data.features import with_reference
    from xtts_cli.data.run_data import prepare
    from xtts_cli.model.build import build_model
    from xtts_cli.profiling.step_timer import StepTimer

    config = resolve_config(None, {"data.batch_size": 8}).config
    run_data = prepare(config)
    tokenizer = run_data.tokenizer
    dataset, _ = run_data.pipeline(items=run_data.scan.train)  # the scan's training share, as before
    dataset = dataset.repeat()
    model = build_model(config.acoustic, config.data, tokenizer.vocab_size)
    optimizer = keras.optimizers.AdamW(1e-4)
    signature = [
        tf.nest.map_structure(
            lambda s: tf.TensorSpec([s.shape[0]] + [None] * (s.shape.rank - 1), s.dtype), dataset.element_spec
        )
    ]

    @tf.function(input_signature=signature)
    def step(batch):
        batch = with_reference(
            batch,
            config.data,
            seed=tf.stack([tf.constant(0, tf.int64), tf.cast(optimizer.iterations, tf.int64)]),
            prefix=tokenizer.prefix_length,
        )
        with tf.GradientTape() as tape:
            losses = model.compute_loss(batch, model(batch, training=True))
        optimizer.apply(tape.gradient(losses["loss"], model.trainable_variables), model.trainable_variables)
        return losses["loss"]

    iterator = iter(dataset)
    for _ in range(6):  # trace and fill the cache
        float(step(next(iterator)))

    bare: list[float] = []
    profiled: list[float] = []
    timer = StepTimer(warmup_steps=0)
    for _ in range(args.blocks):
        start = time.perf_counter()
        for _ in range(args.steps_per_block):
            float(step(next(iterator)))
        bare.append((time.perf_counter() - start) / args.steps_per_block)
        start = time.perf_counter()
        for _ in range(args.steps_per_block):
            timer.step(iterator, step)
        profiled.append((time.perf_counter() - start) / args.steps_per_block)
    b, p = statistics.median(bare), statistics.median(profiled)
    print(f"tiny model, batch 8, {args.blocks} alternating blocks of {args.steps_per_block} steps")
    print(f"bare step:     {1000 * b:8.2f} ms (median of blocks)")
    print(f"profiled step: {1000 * p:8.2f} ms")
    print(
        f"profiled / bare: {p / b:.3f} (bar <= 1.03); timer's own bookkeeping: {timer.measure_overhead():.1f} us per step"
    )


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "performance.md"))
