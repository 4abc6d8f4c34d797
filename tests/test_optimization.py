"""The fused Adam update against Keras's own Adam and AdamW, on real variables and gradients."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from xtts_cli.kinds.optimization import FusedAdam


def train(optimizer_factory, steps: int = 5) -> tuple[list[np.ndarray], object, list]:
    """A few compiled steps of an embedding (sparse gradients) and a dense layer from fixed weights."""
    import keras

    embedding, dense = keras.layers.Embedding(20, 8), keras.layers.Dense(4)
    ids = tf.constant(np.arange(15).reshape(5, 3) % 20)
    embedding.build((5, 3))
    dense.build((5, 3, 8))
    start = [np.linspace(-1, 1, 160).reshape(20, 8), np.linspace(-0.5, 0.5, 32).reshape(8, 4), np.full(4, 0.1)]
    variables = embedding.trainable_variables + dense.trainable_variables
    for variable, value in zip(variables, start):
        variable.assign(value.astype("float32"))
    optimizer = optimizer_factory()
    optimizer.build(variables)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(dense(embedding(ids)) - 1.0))
        optimizer.apply(tape.gradient(loss, variables), variables)

    for _ in range(steps):
        step()
    return [variable.numpy() for variable in variables], optimizer, variables


@pytest.mark.parametrize(
    "options",
    [{}, {"weight_decay": 0.1}, {"weight_decay": 0.1, "global_clipnorm": 1.0}, {"gradient_accumulation_steps": 2}],
    ids=["adam", "adamw", "adamw-clipped", "accumulated"],
)
def test_the_fused_update_is_kerass_adam(options) -> None:
    import keras

    schedule = keras.optimizers.schedules.CosineDecay(0.01, 10)
    reference = keras.optimizers.AdamW if options.get("weight_decay") else keras.optimizers.Adam
    expected, keras_optimizer, _ = train(lambda: reference(learning_rate=schedule, **options))
    fused, optimizer, _ = train(lambda: FusedAdam(learning_rate=schedule, **options))
    for ours, theirs in zip(fused, expected):
        np.testing.assert_allclose(ours, theirs, atol=2e-6)
    updates = 5 // options.get("gradient_accumulation_steps", 1)  # `iterations` counts updates
    assert int(optimizer.iterations) == int(keras_optimizer.iterations) == updates
    # The moments too (summed in another order: equal to float32's rounding), the state a resumed
    # run continues from.
    for ours, theirs in zip(optimizer.variables, keras_optimizer.variables):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=2e-6)


def test_a_checkpoint_of_kerass_adamw_restores_into_the_fused_one(tmp_path) -> None:
    """Runs written before the fused update resume with their moments."""
    import keras

    _, keras_optimizer, variables = train(lambda: keras.optimizers.AdamW(learning_rate=0.01, weight_decay=0.1))
    path = tf.train.Checkpoint(optimizer=keras_optimizer).write(str(tmp_path / "ckpt"))
    fresh = FusedAdam(learning_rate=0.01, weight_decay=0.1)
    fresh.build(variables)
    tf.train.Checkpoint(optimizer=fresh).read(path).assert_consumed()
    assert int(fresh.iterations) == 5
    for ours, theirs in zip(fresh.variables, keras_optimizer.variables):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_amsgrad_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="AMSGrad"):
        FusedAdam(amsgrad=True)


@pytest.mark.parametrize("mixed_precision", [False, True], ids=["float32", "mixed"])
def test_with_gradient_accumulation_the_schedule_and_the_rate_said_count_steps_not_updates(mixed_precision) -> None:
    from xtts_cli.config.schema import TrainingConfig
    from xtts_cli.kinds.optimization import applied_rate, build_optimizer, steps_taken

    def rates(every: int) -> tuple[float, int, int]:
        training = TrainingConfig(
            lr_schedule="cosine", warmup_steps=0, learning_rate=1e-3, gradient_accumulation_steps=every
        )
        _, optimizer, _ = train(lambda: build_optimizer(training, 6, mixed_precision), steps=6)
        return applied_rate(optimizer), int(steps_taken(optimizer)), int(optimizer.iterations)

    plain, accumulated = rates(1), rates(2)
    # Six steps of a cosine over six: the last at the schedule's 6th step either way (it had been said
    # at the 3rd update's rate, 7.75e-4, as if the decay were half done).
    assert accumulated[:2] == pytest.approx(plain[:2]) and plain[1] == 6
    assert accumulated[0] < 2e-4
    assert accumulated[2] == 3  # updates


def test_validate_says_how_many_clips_an_update_takes_with_gradient_accumulation(runner) -> None:
    from xtts_cli.cli.app import app

    result = runner.invoke(app, ["validate", "-c", "tiny-cpu", "--set", "training.gradient_accumulation_steps=2"])
    assert "batch 8 a step (8 per replica x 1); an optimizer update every 2 steps (16 clips);" in result.output
