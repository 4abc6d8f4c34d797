"""The guided-attention loss and the alignment score on attention matrices whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from xtts_cli.model.alignment import alignment_score, focus_rate, guided_attention_loss  # noqa: E402


def diagonal(steps: int, tokens: int) -> np.ndarray:
    """A hard alignment: step s reads token round(s * tokens / steps)."""
    matrix = np.zeros((steps, tokens), np.float32)
    matrix[np.arange(steps), np.minimum((np.arange(steps) * tokens) // steps, tokens - 1)] = 1.0
    return matrix


def batch_of(*matrices, steps: int, tokens: int) -> np.ndarray:
    """[B, 1 head, steps, tokens], each matrix in the top-left corner and zeros as padding."""
    out = np.zeros((len(matrices), 1, steps, tokens), np.float32)
    for index, matrix in enumerate(matrices):
        out[index, 0, : matrix.shape[0], : matrix.shape[1]] = matrix
    return out


def test_guided_attention_loss_is_near_zero_on_the_diagonal_and_large_when_uniform():
    steps, tokens = 60, 20
    lengths, step_lengths = tf.constant([tokens]), tf.constant([steps])
    uniform = np.full((steps, tokens), 1.0 / tokens, np.float32)
    anti = diagonal(steps, tokens)[:, ::-1]
    on_diagonal = float(
        guided_attention_loss(batch_of(diagonal(steps, tokens), steps=steps, tokens=tokens), lengths, step_lengths, 0.2)
    )
    spread = float(guided_attention_loss(batch_of(uniform, steps=steps, tokens=tokens), lengths, step_lengths, 0.2))
    backwards = float(guided_attention_loss(batch_of(anti, steps=steps, tokens=tokens), lengths, step_lengths, 0.2))
    # Per cell, as ESPnet normalises it: the mean over (step, token) cells, so a hard alignment
    # (one weight of 1 per step) against W ~ 0 on the diagonal gives ~ 0.
    assert on_diagonal < 1e-3
    assert spread > 20 * on_diagonal and spread == pytest.approx(0.58 / tokens, rel=0.15)
    assert backwards > spread


def test_guided_attention_loss_ignores_padding_and_uses_each_items_own_lengths():
    # Item 1 is a diagonal over its own 30 steps x 15 tokens inside a 60 x 20 padded batch: it is
    # as good as item 0's full diagonal, and junk in its padding changes nothing.
    short = diagonal(30, 15)
    attention = batch_of(diagonal(60, 20), short, steps=60, tokens=20)
    lengths, step_lengths = tf.constant([20, 15]), tf.constant([60, 30])
    clean = float(guided_attention_loss(attention, lengths, step_lengths, 0.2))
    junk = attention.copy()
    junk[1, 0, 30:, :] = 1.0
    junk[1, 0, :, 15:] = 1.0
    assert float(guided_attention_loss(junk, lengths, step_lengths, 0.2)) == pytest.approx(clean, abs=1e-7)
    # Read against the padded shape instead, the same short diagonal would be far off.
    as_if_full = float(guided_attention_loss(attention[1:], tf.constant([20]), tf.constant([60]), 0.2))
    assert as_if_full > 10 * clean + 1e-3


def test_focus_rate_is_one_for_a_hard_alignment_and_one_over_tokens_when_uniform():
    steps, tokens = 40, 16
    uniform = np.full((steps, tokens), 1.0 / tokens, np.float32)
    half = 0.5 * diagonal(steps, tokens) + 0.5 * uniform
    attention = batch_of(diagonal(steps, tokens), uniform, half, steps=steps, tokens=tokens)
    rates = focus_rate(attention, tf.constant([tokens] * 3), tf.constant([steps] * 3)).numpy()[:, 0]
    np.testing.assert_allclose(rates, [1.0, 1.0 / tokens, 0.5 + 0.5 / tokens], rtol=1e-5)
    score = float(alignment_score(attention, tf.constant([tokens] * 3), tf.constant([steps] * 3)))
    assert score == pytest.approx(rates.mean(), rel=1e-6) and 0.0 <= score <= 1.0


def test_focus_rate_ignores_steps_and_tokens_past_each_items_length():
    attention = batch_of(diagonal(10, 5), steps=30, tokens=12)
    attention[0, 0, 10:, :] = 1.0  # padded steps
    attention[0, 0, :, 5:] = 1.0  # padded tokens: would be the peak of every row if counted
    rate = focus_rate(attention, tf.constant([5]), tf.constant([10])).numpy()
    np.testing.assert_allclose(rate, [[1.0]], rtol=1e-6)


def test_diagonal_prior_peaks_on_each_items_own_diagonal_and_is_zero_in_padding():
    from xtts_cli.model.alignment import diagonal_log_prior

    prior = diagonal_log_prior(tf.constant([10, 4]), tf.constant([20, 8]), 20, 10, width=2.0).numpy()
    # Item 0: 20 steps over 10 tokens; step s is centred on token (s + 0.5) / 2 - 0.5.
    assert prior[0].argmax(axis=1).tolist() == [min(9, round((s + 0.5) / 2 - 0.5 + 1e-6)) for s in range(20)]
    assert prior[0].max() <= 0.0 and prior[0, 0, 9] < -5.0
    # Item 1: its own 8 steps over 4 tokens, nothing past them.
    assert prior[1, :8, :4].argmax(axis=1).tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert np.all(prior[1, 8:] == 0.0) and np.all(prior[1, :, 4:] == 0.0)
