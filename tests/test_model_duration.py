"""The duration decoder's parts on inputs whose answer is known: the monotonic alignment search
against a brute-force Viterbi, the forward-sum loss, the beta-binomial prior, the expansion by
durations, and the model's outputs, generation and XLA-compilable loss."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from xtts_cli.config.schema import AcousticConfig, DataConfig  # noqa: E402
from xtts_cli.model.duration import (  # noqa: E402
    beta_binomial_log_prior,
    expand_by_durations,
    forward_sum_loss,
    monotonic_alignment,
)


def best_path_brute_force(log_probs: np.ndarray) -> tuple[float, list[int]]:
    """Every monotonic path (start at token 0, end at the last, stay or move on by one) scored."""
    frames, tokens = log_probs.shape
    best = (-np.inf, [])
    for moves in itertools.combinations(range(1, frames), tokens - 1):
        path, token = [], 0
        for frame in range(frames):
            if frame in moves:
                token += 1
            path.append(token)
        score = float(sum(log_probs[f, t] for f, t in enumerate(path)))
        best = max(best, (score, path))
    return best


def test_monotonic_alignment_finds_the_best_path_of_each_item_within_its_lengths():
    rng = np.random.default_rng(3)
    lengths = [(7, 3), (5, 4), (8, 1)]  # (frames, tokens) per item, padded to 9 x 5
    log_probs = rng.normal(size=(3, 9, 5)).astype(np.float32)
    path, durations = monotonic_alignment(
        tf.constant(log_probs), tf.constant([t for _, t in lengths]), tf.constant([f for f, _ in lengths])
    )
    for item, (frames, tokens) in enumerate(lengths):
        _, expected = best_path_brute_force(log_probs[item, :frames, :tokens])
        assert path[item, :frames].numpy().tolist() == expected
        assert (path[item, frames:].numpy() == -1).all()
        assert durations[item].numpy().tolist() == [expected.count(t) for t in range(5)]
        assert int(tf.reduce_sum(durations[item])) == frames


def test_forward_sum_loss_prefers_a_diagonal_and_ignores_padding():
    frames, tokens = 12, 4
    diagonal = np.full((frames, tokens), -8.0, np.float32)
    diagonal[np.arange(frames), np.arange(frames) * tokens // frames] = 0.0
    uniform = np.zeros((frames, tokens), np.float32)
    backwards = diagonal[:, ::-1].copy()

    def loss(matrix, pad_frames=0, pad_tokens=0):
        padded = np.pad(matrix, [(0, pad_frames), (0, pad_tokens)], constant_values=5.0)  # junk in the padding
        return float(forward_sum_loss(tf.constant(padded[None]), tf.constant([tokens]), tf.constant([frames])))

    assert loss(diagonal) < loss(uniform) < loss(backwards)
    assert loss(diagonal, pad_frames=6, pad_tokens=3) == pytest.approx(loss(diagonal), abs=1e-5)
    dense = forward_sum_loss(
        tf.constant(diagonal[None]), tf.constant([tokens]), tf.constant([frames]), dense_labels=True
    )
    assert float(dense) == pytest.approx(loss(diagonal), rel=1e-4)


def test_beta_binomial_prior_is_a_distribution_over_each_items_tokens_that_moves_forward():
    prior = np.exp(beta_binomial_log_prior(tf.constant([5, 3]), tf.constant([20, 9]), 20, 5).numpy())
    np.testing.assert_allclose(prior[0].sum(axis=1), 1.0, rtol=1e-4)
    np.testing.assert_allclose(prior[1, :9, :3].sum(axis=1), 1.0, rtol=1e-4)
    expected_token = (prior[0] * np.arange(5)).sum(axis=1)
    assert (np.diff(expected_token) > 0).all() and expected_token[0] < 0.5 and expected_token[-1] > 3.5


def test_expand_by_durations_repeats_each_token_for_its_frames():
    encoding = tf.constant([[[1.0], [2.0], [3.0]]])
    expanded, index = expand_by_durations(encoding, tf.constant([[2, 0, 3]]), 7)
    assert index.numpy().tolist() == [[0, 0, 2, 2, 2, -1, -1]]
    assert expanded.numpy()[0, :, 0].tolist() == [1, 1, 3, 3, 3, 0, 0]
    _, cut = expand_by_durations(encoding, tf.constant([[4, 4, 4]]), 6)
    assert cut.numpy().tolist() == [[0, 0, 0, 0, 1, 1]]


@pytest.fixture(scope="module")
def model_and_batch():
    from xtts_cli.model.build import build_model
    from xtts_cli.model.duration import DurationModel
    from xtts_cli.model.xtts import dummy_batch

    model = build_model(
        AcousticConfig(decoder="duration", d_model=32, num_heads=2, num_text_layers=1, num_decoder_layers=1),
        DataConfig(n_mels=20),
        30,
        network=DurationModel,
    )
    batch = dummy_batch(n_mels=20, batch_size=2, text_length=6, mel_frames=24, ref_frames=10)
    batch["mel"] = tf.random.stateless_normal([2, 24, 20], seed=[1, 2]) - 4.0
    batch["text_lengths"] = tf.constant([6, 4])
    batch["mel_lengths"] = tf.constant([24, 15])
    return model, batch


def test_duration_model_reads_the_clip_through_durations_that_cover_it(model_and_batch):
    model, batch = model_and_batch
    outputs = model(batch, training=False)
    assert outputs["mel_pred"].shape == (2, 24, 20) and outputs["mel_post"].shape == (2, 24, 20)
    assert tf.reduce_sum(outputs["durations"], axis=1).numpy().tolist() == [24, 15]
    assert outputs["durations"][1, 4:].numpy().tolist() == [0, 0]
    attention = outputs["cross_attention"].numpy()  # [B, 1, F, T]: a distribution over tokens per frame
    np.testing.assert_allclose(attention[1, 0, :15].sum(axis=-1), 1.0, rtol=1e-5)
    assert (attention[1, 0, 15:] == 0).all() and (attention[1, 0, :, 4:] < 1e-6).all()
    losses = model.compute_loss(batch, outputs)
    assert {"mel_loss", "postnet_mel_loss", "attention_loss", "duration_loss", "alignment_score"} <= set(losses)
    assert 0.0 < float(losses["alignment_score"]) <= 1.0 and float(losses["stop_loss"]) == 0.0


def test_generation_lasts_the_predicted_durations(model_and_batch):
    model, batch = model_and_batch
    projection = model.duration_predictor.projection
    saved = [weight.numpy() for weight in projection.weights]
    # A predictor that says three frames for every character: log(1 + 3) whatever the text.
    projection.kernel.assign(tf.zeros_like(projection.kernel))
    projection.bias.assign(tf.fill(projection.bias.shape, float(np.log(4.0))))
    try:
        inputs = (batch["text_ids"], batch["text_lengths"], batch["ref_mel"], batch["ref_lengths"])
        generated = model.generate(*inputs, 400)
        assert generated["lengths"].numpy().tolist() == [18, 12]
        assert generated["stopped"].numpy().all()
        alignment = generated["alignment"].numpy()
        assert alignment[1, :12].argmax(axis=-1).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
        assert (alignment[1, 12:] == 0).all()
        assert (generated["mel"][1, 12:].numpy() == generated["mel"][1, -1].numpy()).all()  # padding
        limited = model.generate(*inputs, 400, frame_limit=15)
        assert limited["lengths"].numpy().tolist() == [15, 12]
        assert limited["stopped"].numpy().tolist() == [False, True]
        # Each sentence's own buffer length (synthesis sizes it by the text) is one trace for all.
        traced = model.generation_traces()
        for frames in (30, 64, 200):
            shorter = model.generate(*inputs, frames)
            assert shorter["mel"].shape == (2, frames, 20) and shorter["lengths"].numpy().tolist() == [18, 12]
        assert model.generation_traces() == traced
        # --speed: three frames a character read 1.5 times faster is two, 0.75 times is four; one trace.
        assert model.generate(*inputs, 400, speed=1.5)["lengths"].numpy().tolist() == [12, 8]
        assert model.generate(*inputs, 400, speed=0.75)["lengths"].numpy().tolist() == [24, 16]
        # Faster than a frame a character: the length still goes as 1 / speed (18 / 2.5 = 7.2, 18 / 4 =
        # 4.5), not by steps of whole frames a character (each rounded alone: 6 at 2.5, 3 and 4 alike).
        lengths = [model.generate(*inputs, 400, speed=s)["lengths"].numpy().tolist() for s in (2.5, 3.0, 4.0)]
        assert lengths == [[7, 5], [6, 4], [4, 3]]
        assert model.generation_traces() == traced
    finally:
        for weight, value in zip(projection.weights, saved):
            weight.assign(value)


@pytest.mark.slow
def test_the_xla_compilable_loss_compiles_and_agrees(model_and_batch):
    model, batch = model_and_batch
    expected = model.compute_loss(batch, model(batch, training=False))

    @tf.function(jit_compile=True)
    def compiled(batch):
        return model.compute_loss(batch, model(batch, training=False))

    model.xla_compatible_losses = True
    try:
        losses = compiled(batch)
    finally:
        model.xla_compatible_losses = False
    for name in ("loss", "attention_loss", "duration_loss", "mel_loss"):
        assert float(losses[name]) == pytest.approx(float(expected[name]), rel=1e-3), name


def test_token_positions_say_where_in_its_token_each_frame_is():
    from xtts_cli.model.duration import token_positions

    durations = tf.constant([[2, 0, 3]])
    _, index = expand_by_durations(tf.zeros([1, 3, 1]), durations, 6)
    features = token_positions(durations, index, 6).numpy()[0]
    np.testing.assert_allclose(features[:5, 0], [0.25, 0.75, 1 / 6, 0.5, 5 / 6], rtol=1e-6)
    np.testing.assert_allclose(features[:5, 1], np.log1p([2, 2, 3, 3, 3]) / 3, rtol=1e-6)
    assert (features[5] == 0).all()
