import time

import numpy as np
import pytest
import tensorflow as tf

from xtts_cli.profiling.step_timer import StepTimer, fetch_outputs, input_bound_verdict

SIZE = 512
WEIGHTS = tf.random.stateless_normal([SIZE, SIZE], seed=[1, 2])


def _chain(x, repeats: int):
    for _ in range(repeats):
        x = tf.tanh(tf.matmul(x, WEIGHTS) / SIZE**0.5)
    return tf.reduce_mean(x)


def batch_for(i):
    return tf.random.stateless_normal([SIZE, SIZE], seed=tf.stack([i, i]))


def _repeats(target_seconds: float = 0.04) -> int:
    """Matmuls for a step of about `target_seconds` on this CPU. next() on a full prefetch buffer takes
    0.2-0.4 ms, but on a loaded machine a step now and then waits a few ms for a core, and that lands
    in the data wait. With three test workers on two cores, CI measured the prefetched pipeline past
    the 5 % bar with a 384-wide step and again with 16 512-wide matmuls (13-15 ms on a quiet 2-core
    EPYC); about 40 ms on whatever CPU runs the tests keeps those waits a small share."""
    probe = tf.function(lambda batch: _chain(batch, 16))
    x = batch_for(0)
    probe(x).numpy()  # traced and warm
    began = time.perf_counter()
    probe(x).numpy()
    took = time.perf_counter() - began
    return int(min(128, max(16, 16 * target_seconds / max(took, 1e-4))))


# A real compiled TF step, scaled to about 40 ms on the machine running the tests: chained
# matmuls, a scalar out.
REPEATS = _repeats()
train_like_step = tf.function(lambda batch: _chain(batch, REPEATS))


def slow_pipeline():
    # Each element costs 150 ms of host time in Python, like the users' tf.numpy_function loaders,
    # with nothing running ahead, so the step waits the whole 150 ms whatever its own time. tf.data's
    # default rewrites (a parallel map, an injected prefetch) are turned off: with three test workers
    # on 2 cores the step once took 130-160 ms, and their buffers hid the loader (0.6 % input-bound).
    def load(i):
        time.sleep(0.150)
        return i

    ids = tf.data.Dataset.range(1000).map(lambda i: tf.py_function(load, [i], tf.int64))
    options = tf.data.Options()
    options.experimental_optimization.inject_prefetch = False
    options.experimental_optimization.map_parallelization = False
    return ids.map(lambda i: batch_for(tf.cast(i, tf.int32))).with_options(options)


def fast_pipeline():
    # Features made once and cached (the "precompute" mode), then served from memory with prefetch:
    # the batch is waiting before the step asks for it.
    batches = tf.data.Dataset.range(4).map(lambda i: batch_for(tf.cast(i, tf.int32))).cache()
    return batches.repeat().prefetch(8)


def test_verdict_bands_are_the_tf_profilers():
    assert input_bound_verdict(0.0) == "not_input_bound"
    assert input_bound_verdict(4.99) == "not_input_bound"
    assert input_bound_verdict(5.0) == "moderately_input_bound"
    assert input_bound_verdict(19.99) == "moderately_input_bound"
    assert input_bound_verdict(20.0) == "highly_input_bound"
    assert input_bound_verdict(100.0) == "highly_input_bound"


def test_warm_up_steps_are_left_out_and_share_is_wait_over_step():
    timer = StepTimer(warmup_steps=2)
    timer.record(5.0, 5.0)  # tracing-sized first steps, ignored
    timer.record(5.0, 5.0)
    for _ in range(10):
        timer.record(0.010, 0.030)
    report = timer.report()
    assert report.steps == 10 and report.warmup_steps == 2
    assert timer.input_bound_share() == pytest.approx(0.25)
    assert report.input_bound_percent == pytest.approx(25.0)
    assert report.verdict == "highly_input_bound"
    assert report.data_wait.mean == pytest.approx(10.0)
    assert report.compute.mean == pytest.approx(30.0)
    assert report.step.mean == pytest.approx(40.0)
    assert len(report.data_wait_ms) == len(report.compute_ms) == 10
    assert report.overhead_us_per_step is None  # not measured, not made up


def test_no_steps_yet():
    report = StepTimer().report()
    assert report.steps == 0 and report.input_bound_percent == 0.0


@pytest.mark.slow
def test_slow_pipeline_is_input_bound_and_prefetched_fast_one_is_not():
    slow_timer = StepTimer(warmup_steps=2)
    slow = slow_timer.run(iter(slow_pipeline()), train_like_step, steps=12)
    fast_timer = StepTimer(warmup_steps=3)
    fast = fast_timer.run(iter(fast_pipeline()), train_like_step, steps=33)
    for timer in (slow_timer, fast_timer):
        timer.measure_overhead(output=tf.constant(1.0))
    slow, fast = slow_timer.report(), fast_timer.report()

    assert slow.steps == 10 and fast.steps == 30
    assert slow.input_bound_percent >= 20.0
    assert slow.verdict == "highly_input_bound"
    assert fast.verdict == "not_input_bound"
    assert slow.input_bound_percent > fast.input_bound_percent + 15.0
    # The timer's own cost is reported, is far below the 3 % bar of PERFORMANCE.md, and cannot move
    # either verdict.
    for report in (slow, fast):
        assert report.overhead_us_per_step > 0
        assert report.overhead_percent < 3.0
        assert report.overhead_changes_verdict is False


def test_step_returns_outputs_and_stops_with_the_iterator():
    timer = StepTimer(warmup_steps=0)
    dataset = tf.data.Dataset.range(3).map(lambda i: batch_for(tf.cast(i, tf.int32)))
    report = timer.run(iter(dataset), train_like_step, steps=10)
    assert report.steps == 3
    assert all(c > 0 for c in report.compute_ms)
    out = timer.step(iter(dataset), train_like_step)
    assert out.shape == ()


def test_fetch_outputs_handles_nested_and_large_outputs():
    fetch_outputs(None)
    fetch_outputs(3.0)
    fetch_outputs(np.zeros(4))
    fetch_outputs(
        {
            "loss": tf.constant(1.0),
            "mel": tf.zeros([4, 100, 80]),
            "empty": tf.zeros([0, 3]),
            "pair": (tf.ones([2]), [tf.constant(2)]),
            "ragged": tf.ragged.constant([[1, 2], [3]]),
        }
    )


def test_negative_warmup_is_refused():
    with pytest.raises(ValueError, match="warmup_steps"):
        StepTimer(warmup_steps=-1)


def test_overhead_that_could_move_a_verdict_is_flagged():
    at_edge = StepTimer(warmup_steps=0)
    for _ in range(20):
        at_edge.record(5e-6, 95e-6)  # exactly 5 % of a 100 us step
    at_edge.measure_overhead(cycles=200)
    report = at_edge.report()
    assert report.verdict == "moderately_input_bound"
    # Any overhead at all could have been the data wait that put it over 5 %.
    assert report.overhead_changes_verdict is True

    tiny = StepTimer(warmup_steps=0)
    for _ in range(5):
        tiny.record(1e-8, 1e-8)  # steps shorter than the timer itself
    tiny.measure_overhead(cycles=200)
    assert tiny.report().overhead_changes_verdict is True
    assert '"verdict"' in tiny.report().model_dump_json()
