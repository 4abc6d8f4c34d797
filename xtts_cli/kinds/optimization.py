"""Optimizer and learning-rate schedule from the training config.

Gradient accumulation uses Keras 3's own `gradient_accumulation_steps` (gradients averaged over
the micro-batches, one update every N calls; `optimizer.iterations` counts updates), and mixed
precision wraps the optimizer in `LossScaleOptimizer` (dynamic loss scaling; steps whose
gradients overflow are skipped, not applied).
"""

from __future__ import annotations

import math

import tensorflow as tf

from xtts_cli.config.schema import TrainingConfig


def build_schedule(training: TrainingConfig, total_steps: int, budget_used=None):
    """The learning rate at each optimizer step. `budget_used`: a float32 variable the training
    loop sets to the share of `training.max_minutes` it has spent (0 to 1), or None. Cosine decays
    over whichever the run spends faster, its steps or its minutes, so a run the budget ends early
    still ends at the lowest rate instead of in mid-decay (Li et al. 2020, "Budgeted Training"):
    on a machine fast enough for max_steps the steps lead and nothing changes."""
    import keras

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


def build_optimizer(training: TrainingConfig, total_steps: int, mixed_precision: bool, budget_used=None):
    import keras

    schedule = build_schedule(training, total_steps, budget_used)
    common = {
        "learning_rate": schedule,
        "global_clipnorm": training.gradient_clip_norm or None,
        "gradient_accumulation_steps": training.gradient_accumulation_steps
        if training.gradient_accumulation_steps > 1
        else None,
    }
    if training.optimizer == "adamw":
        optimizer = keras.optimizers.AdamW(weight_decay=training.weight_decay, **common)
    elif training.optimizer == "adam":
        optimizer = keras.optimizers.Adam(**common)
    else:
        optimizer = keras.optimizers.SGD(momentum=0.9, **common)
    if mixed_precision:
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer
