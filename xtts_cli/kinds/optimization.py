"""Optimizer and learning-rate schedule from the training config.

Gradient accumulation uses Keras 3's own `gradient_accumulation_steps` (gradients averaged over
the micro-batches, one update every N calls; `optimizer.iterations` counts updates, while the
schedule reads every call: `steps_taken`), and mixed
precision wraps the optimizer in `LossScaleOptimizer` (dynamic loss scaling; steps whose
gradients overflow are skipped, not applied). Adam and AdamW update each variable with
TensorFlow's fused Adam kernel (`FusedAdam`).
"""

from __future__ import annotations

import math

import keras
import tensorflow as tf

from xtts_cli.config.schema import TrainingConfig


def build_schedule(training: TrainingConfig, total_steps: int, budget_used=None):
    """The learning rate at each optimizer step. `budget_used`: a float32 variable the training
    loop sets to the share of `training.max_minutes` it has spent (0 to 1), or None. Cosine decays
    over whichever the run spends faster, its steps or its minutes, so a run the budget ends early
    still ends at the lowest rate instead of in mid-decay (Li et al. 2020, "Budgeted Training"):
    on a machine fast enough for max_steps the steps lead and nothing changes."""
    peak = float(training.learning_rate)
    warmup = float(training.warmup_steps)
    decay_steps = float(max(1, total_steps - training.warmup_steps))
    kind = training.lr_schedule

    class WarmupSchedule(keras.optimizers.schedules.LearningRateSchedule):
        """Linear warm-up to the peak, then constant, cosine decay to 10 % of the peak (over the
        steps or the time budget, whichever is further along), or noam (inverse square root, as in
        "Attention Is All You Need", scaled to peak at the end of warm-up)."""

        def __call__(self, step):
            step = tf.cast(step, tf.float32)
            warm = peak * tf.minimum(1.0, (step + 1.0) / tf.maximum(warmup, 1.0))
            after = step - warmup
            if kind == "constant":
                later = tf.constant(peak)
            elif kind == "cosine":
                progress = tf.clip_by_value(after / decay_steps, 0.0, 1.0)
                if budget_used is not None:
                    progress = tf.maximum(progress, tf.clip_by_value(budget_used, 0.0, 1.0))
                later = peak * (0.1 + 0.9 * 0.5 * (1.0 + tf.cos(math.pi * progress)))
            else:
                later = peak * tf.sqrt(tf.maximum(warmup, 1.0)) / tf.sqrt(tf.maximum(step + 1.0, 1.0))
            return tf.where(step < warmup, warm, later)

        def get_config(self):
            return {"peak": peak, "warmup": warmup, "kind": kind}

    return WarmupSchedule()


class FusedAdam(keras.optimizers.Adam):
    """Keras's Adam, with decoupled weight decay (AdamW) when `weight_decay` is set, whose update is
    TensorFlow's fused `ResourceApplyAdam` kernel (the same formula, the one TF1's Adam ran).

    Keras builds each variable's update from about 80 ops: the schedule evaluated again for each
    variable's decay, the bias-correction powers again for each. That was two thirds of the tiny
    model's training step (7,900 of 12,000 ops): Python time at every trace and one kernel each
    at every step. Here the learning rate, its decay factor and the powers are computed once per
    update, and each variable takes its decay and one fused kernel. The variables and their order
    are Keras's own, so checkpoints are unchanged."""

    def __init__(self, **kwargs) -> None:
        if kwargs.get("amsgrad"):
            raise ValueError("FusedAdam has no AMSGrad; use keras.optimizers.Adam(amsgrad=True)")
        super().__init__(**kwargs)

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        lr = tf.cast(learning_rate, tf.float32)
        step = tf.cast(self.iterations + 1, tf.float32)
        decay = lr * float(self.weight_decay or 0.0)
        # Handed to each variable's update through Keras's own distribution path, which gives each
        # device its copy (a tuple where Keras passes the learning rate).
        beta_1, beta_2 = tf.constant(float(self.beta_1)), tf.constant(float(self.beta_2))
        shared = (
            lr,
            tf.pow(beta_1, step),
            tf.pow(beta_2, step),
            decay,
            beta_1,
            beta_2,
            tf.constant(float(self.epsilon)),
        )
        super()._backend_update_step(grads, trainable_variables, shared)

    def _apply_weight_decay(self, variables):
        """Applied in `update_step`, with the learning rate computed once."""

    def update_step(self, gradient, variable, learning_rate):
        lr, beta_1_power, beta_2_power, decay, beta_1, beta_2, epsilon = (
            tf.cast(value, variable.dtype) for value in learning_rate
        )
        gradient = tf.cast(tf.convert_to_tensor(gradient), variable.dtype)  # embedding gradients are sparse
        if self.weight_decay and self._use_weight_decay(variable):
            variable.assign_sub(variable * decay)
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle,
            m=m.value.handle,
            v=v.value.handle,
            beta1_power=beta_1_power,
            beta2_power=beta_2_power,
            lr=lr,
            beta1=beta_1,
            beta2=beta_2,
            epsilon=epsilon,
            grad=gradient,
        )


def steps_taken(optimizer):
    """The training steps the optimizer has been called for: its updates times
    gradient_accumulation_steps and the calls since. Keras's learning-rate schedule reads this count
    (`BaseOptimizer._get_current_learning_rate`), so warm-up, the schedule and the attention prior
    count steps as max_steps does; `iterations` counts only updates."""
    inner = getattr(optimizer, "inner_optimizer", optimizer)  # under a LossScaleOptimizer
    return inner._iterations


def applied_rate(optimizer) -> float:
    """The learning rate the last step trained with. Keras's `learning_rate` reads the schedule at the
    optimizer's step count, which that step has moved on: it is the next step's rate."""
    inner = getattr(optimizer, "inner_optimizer", optimizer)  # under a LossScaleOptimizer
    schedule = getattr(inner, "_learning_rate", None)
    if isinstance(schedule, keras.optimizers.schedules.LearningRateSchedule):
        return float(schedule(tf.maximum(steps_taken(inner) - 1, 0)))
    return float(optimizer.learning_rate)


def build_optimizer(training: TrainingConfig, total_steps: int, mixed_precision: bool, budget_used=None):
    schedule = build_schedule(training, total_steps, budget_used)
    common = {
        "learning_rate": schedule,
        "global_clipnorm": training.gradient_clip_norm or None,
        "gradient_accumulation_steps": training.gradient_accumulation_steps
        if training.gradient_accumulation_steps > 1
        else None,
    }
    if training.optimizer in ("adam", "adamw"):
        decay = training.weight_decay if training.optimizer == "adamw" else None
        optimizer = FusedAdam(weight_decay=decay, name=training.optimizer, **common)
    else:
        optimizer = keras.optimizers.SGD(momentum=0.9, **common)
    if mixed_precision:
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer
