"""Text-to-speech alignment: the guided-attention loss that makes it form, and the score that tells.

The decoder's cross-attention says, for every decoder step, which text tokens it reads. Speech
reads text in order, so a model that has learnt to speak attends along a near-diagonal; one that
has not spreads its attention over the whole sentence. Two measures of that live here, both over
attention weights `[B, heads, steps, tokens]` (softmax over tokens) with the valid lengths of
each item, so padding never counts:

- `guided_attention_loss` (Tachibana et al. 2018, "Efficiently Trainable Text-to-Speech System
  Based on Deep Convolutional Networks with Guided Attention", sec. 4.1): attention is penalised
  by W[s, t] = 1 - exp(-(t/T - s/S)^2 / (2 g^2)), zero on the diagonal and near one far from it.
  ESPnet's Transformer-TTS and Tacotron 2 recipes and coqui's Tacotron turn it on by default;
  without it a small model trained for minutes never aligns (measured: focus rate 0.03-0.17 after
  2,000 steps).
- `focus_rate` (Ren et al. 2019, FastSpeech, sec. 3.2, as ESPnet reports it): the mean over
  decoder steps of the largest attention weight, in [0, 1]; 1 is a hard alignment, 1 / T a
  uniform one. `alignment_score` is this rate, averaged over heads.
"""

from __future__ import annotations

import tensorflow as tf

__all__ = ["alignment_score", "diagonal_log_prior", "focus_rate", "guided_attention_loss", "guided_attention_penalty"]


def _masks(text_lengths, step_lengths, steps, tokens):
    step_mask = tf.sequence_mask(step_lengths, steps)  # [B, S]
    token_mask = tf.sequence_mask(text_lengths, tokens)  # [B, T]
    return step_mask, token_mask


def guided_attention_penalty(text_lengths, step_lengths, steps, tokens, sigma: float) -> tf.Tensor:
    """W [B, S, T] float32: 1 - exp(-(t/T_b - s/S_b)^2 / (2 sigma^2)) inside each item, 0 outside."""
    text = tf.cast(tf.maximum(text_lengths, 1), tf.float32)[:, None, None]
    frames = tf.cast(tf.maximum(step_lengths, 1), tf.float32)[:, None, None]
    s = tf.range(steps, dtype=tf.float32)[None, :, None]
    t = tf.range(tokens, dtype=tf.float32)[None, None, :]
    penalty = 1.0 - tf.exp(-tf.square(t / text - s / frames) / (2.0 * sigma * sigma))
    step_mask, token_mask = _masks(text_lengths, step_lengths, steps, tokens)
    valid = step_mask[:, :, None] & token_mask[:, None, :]
    return tf.where(valid, penalty, 0.0)


def guided_attention_loss(attention, text_lengths, step_lengths, sigma: float) -> tf.Tensor:
    """Mean of attention x W over every head and valid (step, token) cell of the batch (scalar float32).

    As ESPnet's GuidedAttentionLoss: the sum over valid cells divided by their count, so a batch
    of short items and one of long items weigh alike.
    """
    attention = tf.cast(attention, tf.float32)
    steps, tokens = tf.shape(attention)[2], tf.shape(attention)[3]
    penalty = guided_attention_penalty(text_lengths, step_lengths, steps, tokens, sigma)  # [B, S, T]
    heads = tf.cast(tf.shape(attention)[1], tf.float32)
    step_mask, token_mask = _masks(text_lengths, step_lengths, steps, tokens)
    cells = tf.reduce_sum(tf.cast(step_mask[:, :, None] & token_mask[:, None, :], tf.float32)) * heads
    return tf.reduce_sum(attention * penalty[:, None]) / tf.maximum(cells, 1.0)


def focus_rate(attention, text_lengths, step_lengths) -> tf.Tensor:
    """Per item and head [B, heads]: the mean over valid steps of the largest weight on a valid token."""
    attention = tf.cast(attention, tf.float32)
    steps, tokens = tf.shape(attention)[2], tf.shape(attention)[3]
    step_mask, token_mask = _masks(text_lengths, step_lengths, steps, tokens)
    peaks = tf.reduce_max(tf.where(token_mask[:, None, None, :], attention, 0.0), axis=-1)  # [B, H, S]
    peaks = tf.where(step_mask[:, None, :], peaks, 0.0)
    counts = tf.cast(tf.maximum(step_lengths, 1), tf.float32)[:, None]
    return tf.reduce_sum(peaks, axis=-1) / counts


def alignment_score(attention, text_lengths, step_lengths) -> tf.Tensor:
    """The batch's focus rate averaged over items and heads: a float32 scalar in [0, 1]."""
    return tf.reduce_mean(focus_rate(attention, text_lengths, step_lengths))


def diagonal_log_prior(text_lengths, step_lengths, steps, tokens, width: float) -> tf.Tensor:
    """[B, S, T] float32: -(t - s T_b / S_b)^2 / (2 width^2), a Gaussian log-prior around each item's
    diagonal (`width` in text tokens); 0 at padded cells (the attention mask handles those).

    Added to the cross-attention scores early in training (NeMo's attention prior, Badlani et al.
    2021, "One TTS Alignment To Rule Them All"), it hands the decoder a diagonal alignment from the
    first step, so the mapping from text to sound is learnt while the attention learns to find
    its own way; the trainer fades it out (`model.attention_prior_steps`).
    """
    text = tf.cast(tf.maximum(text_lengths, 1), tf.float32)[:, None, None]
    frames = tf.cast(tf.maximum(step_lengths, 1), tf.float32)[:, None, None]
    s = tf.range(steps, dtype=tf.float32)[None, :, None]
    t = tf.range(tokens, dtype=tf.float32)[None, None, :]
    centre = (s + 0.5) * text / frames - 0.5
    log_prior = -tf.square(t - centre) / (2.0 * width * width)
    step_mask, token_mask = _masks(text_lengths, step_lengths, steps, tokens)
    return tf.where(step_mask[:, :, None] & token_mask[:, None, :], log_prior, 0.0)
