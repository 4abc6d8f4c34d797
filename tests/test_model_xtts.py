"""The XTTS-style model: shapes, masking, causality, training, mixed precision, generation."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from xtts_cli.config.schema import AcousticConfig, DataConfig  # noqa: E402
from xtts_cli.model.build import build_model  # noqa: E402
from xtts_cli.model.presets import resolve_dims  # noqa: E402
from xtts_cli.model.xtts import MEL_PAD_VALUE, XttsModel, built_by_calling  # noqa: E402

N_MELS = 16
VOCAB_SIZE = 24
# The tiny preset (reduction factor 2, postnet on), narrowed so each test takes a second or two.
SMALL_MODEL = AcousticConfig(
    model_size="tiny", d_model=32, num_heads=2, num_text_layers=1, num_decoder_layers=2, speaker_embedding_dim=16
)


def make_batch(seed: int = 0, *, batch_size: int = 3, text_length: int = 9, frames: int = 14, ref_frames: int = 10):
    """A random batch whose items are shorter than the padded shape, padded as the pipeline pads."""
    rng = np.random.default_rng(seed)
    text_lengths = np.array([text_length, text_length - 3, 2][:batch_size], np.int32)
    mel_lengths = np.array([frames, frames - 5, 3][:batch_size], np.int32)
    ref_lengths = np.array([ref_frames, ref_frames - 4, 5][:batch_size], np.int32)
    text_ids = rng.integers(1, VOCAB_SIZE, (batch_size, text_length)).astype(np.int32)
    text_ids[np.arange(text_length)[None, :] >= text_lengths[:, None]] = 0
    mel = rng.normal(-4.0, 2.0, (batch_size, frames, N_MELS)).astype(np.float32)
    mel[np.arange(frames)[None, :] >= mel_lengths[:, None]] = MEL_PAD_VALUE
    ref_mel = rng.normal(-4.0, 2.0, (batch_size, ref_frames, N_MELS)).astype(np.float32)
    ref_mel[np.arange(ref_frames)[None, :] >= ref_lengths[:, None]] = MEL_PAD_VALUE
    return {
        "text_ids": tf.constant(text_ids),
        "text_lengths": tf.constant(text_lengths),
        "mel": tf.constant(mel),
        "mel_lengths": tf.constant(mel_lengths),
        "ref_mel": tf.constant(ref_mel),
        "ref_lengths": tf.constant(ref_lengths),
    }


def replace_padding(batch, seed: int = 99):
    """The same batch with junk in every padded position (ids, mel frames, reference frames)."""
    rng = np.random.default_rng(seed)
    changed = dict(batch)
    for values, lengths in (("text_ids", "text_lengths"), ("mel", "mel_lengths"), ("ref_mel", "ref_lengths")):
        array = batch[values].numpy().copy()
        padded = np.arange(array.shape[1])[None, :] >= batch[lengths].numpy()[:, None]
        if array.dtype == np.int32:
            array[padded] = rng.integers(1, VOCAB_SIZE, padded.sum())
        else:
            array[padded] = rng.normal(3.0, 5.0, (padded.sum(),) + array.shape[2:])
        changed[values] = tf.constant(array)
    return changed


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(0)
    return build_model(SMALL_MODEL, DataConfig(n_mels=N_MELS), VOCAB_SIZE)


def test_output_shapes_and_dtypes(model):
    batch = make_batch()
    outputs = model(batch, training=False)
    assert outputs["mel_pred"].shape == (3, 14, N_MELS)
    assert outputs["mel_post"].shape == (3, 14, N_MELS)
    assert outputs["stop_logits"].shape == (3, 14)
    # Every decoder layer's heads (2 x 2), one row per decoder step (14 frames / r 2), one column per token.
    assert outputs["cross_attention"].shape == (3, 4, 7, 9) and outputs["cross_attention"].dtype == tf.float32
    losses = model.compute_loss(batch, outputs)
    assert set(losses) == {"loss", "mel_loss", "postnet_mel_loss", "stop_loss", "attention_loss", "alignment_score"}
    for name, value in losses.items():
        assert value.dtype == tf.float32 and value.shape == () and np.isfinite(value.numpy()), name
    assert 0.0 < float(losses["alignment_score"]) <= 1.0


def test_cross_attention_reads_only_the_text_and_its_weight_enters_the_loss(model):
    batch = make_batch()
    outputs = model(batch, training=False)
    attention = outputs["cross_attention"].numpy()
    text_lengths = batch["text_lengths"].numpy()
    for item, length in enumerate(text_lengths):
        np.testing.assert_allclose(attention[item, :, :, :length].sum(axis=-1), 1.0, rtol=1e-5)
        assert np.all(attention[item, :, :, length:] == 0.0)
    plain = model.compute_loss(batch, outputs, attention_weight=0.0)
    guided = model.compute_loss(batch, outputs, attention_weight=10.0, attention_sigma=0.2)
    assert float(plain["loss"]) == pytest.approx(
        float(plain["mel_loss"] + plain["postnet_mel_loss"] + plain["stop_loss"]), rel=1e-6
    )
    expected = float(plain["loss"]) + 10.0 * float(guided["attention_loss"])
    assert float(guided["loss"]) == pytest.approx(expected, rel=1e-5)
    assert float(guided["attention_loss"]) > 0.0


def test_padded_positions_do_not_change_the_loss(model):
    batch = make_batch()
    reference = model.compute_loss(batch, model(batch, training=False))
    junk = replace_padding(batch)
    changed = model.compute_loss(junk, model(junk, training=False))
    for name in reference:
        np.testing.assert_allclose(changed[name].numpy(), reference[name].numpy(), rtol=1e-5, err_msg=name)


def test_padding_the_batch_further_does_not_change_the_loss(model):
    # The same items in a longer padded shape (another bucket) give the same loss.
    batch = make_batch()
    longer = dict(batch)
    longer["text_ids"] = tf.pad(batch["text_ids"], [[0, 0], [0, 4]])
    longer["mel"] = tf.pad(batch["mel"], [[0, 0], [0, 5], [0, 0]], constant_values=MEL_PAD_VALUE)
    longer["ref_mel"] = tf.pad(batch["ref_mel"], [[0, 0], [0, 3], [0, 0]], constant_values=MEL_PAD_VALUE)
    reference = model.compute_loss(batch, model(batch, training=False))
    padded = model.compute_loss(longer, model(longer, training=False))
    np.testing.assert_allclose(padded["loss"].numpy(), reference["loss"].numpy(), rtol=1e-5)


# 2 is the fixture model's; 3 does not divide the 14 frames of the batch (internal padding).
@pytest.mark.parametrize("reduction_factor", [2, 3])
def test_future_frames_do_not_change_earlier_predictions(model, reduction_factor):
    causal_model = model
    if reduction_factor != model.dims.reduction_factor:
        # Built as the fixture is (one eager call): Keras's own first call took 5 s more.
        config = SMALL_MODEL.model_copy(update={"reduction_factor": reduction_factor})
        causal_model = build_model(config, DataConfig(n_mels=N_MELS), VOCAB_SIZE)
    assert causal_model.dims.reduction_factor == reduction_factor
    batch = make_batch(1)
    cut = 7
    future_changed = dict(batch)
    mel = batch["mel"].numpy().copy()
    mel[:, cut:] += np.random.default_rng(5).normal(0.0, 3.0, mel[:, cut:].shape).astype(np.float32)
    future_changed["mel"] = tf.constant(mel)
    before = causal_model(batch, training=False)
    after = causal_model(future_changed, training=False)
    for name in ("mel_pred", "stop_logits"):
        np.testing.assert_allclose(after[name][:, :cut].numpy(), before[name][:, :cut].numpy(), atol=1e-5, err_msg=name)
        # Not vacuous: the change does reach the later predictions.
        assert not np.allclose(
            after[name][:, cut + reduction_factor :].numpy(), before[name][:, cut + reduction_factor :].numpy()
        )


@pytest.fixture(scope="module")
def shallow_model():
    """One decoder layer and a two-layer postnet: the training tests compile the whole step, and
    graph (and XLA) compile time grows with the number of ops."""
    keras.utils.set_random_seed(1)
    dims = dataclasses.replace(resolve_dims(SMALL_MODEL), num_decoder_layers=1, postnet_layers=2)
    shallow = XttsModel(dims=dims, n_mels=N_MELS, vocab_size=VOCAB_SIZE)
    built_by_calling(shallow, make_batch(), training=False)
    return shallow


def train_step_for(train_model, apply_gradients):
    def train_step(batch):
        with tf.GradientTape() as tape:
            losses = train_model.compute_loss(batch, train_model(batch, training=True))
        gradients = tape.gradient(losses["loss"], train_model.trainable_variables)
        apply_gradients(gradients, train_model.trainable_variables)
        return losses

    return train_step


@pytest.mark.slow
def test_train_step_compiles_with_xla_and_traces_once_per_shape(shallow_model):
    # Plain gradient descent: Keras's Adam roughly doubles the XLA compile time of the step on a
    # 2-core CPU, and the Adam test below covers the optimizer (in graph mode).
    def gradient_descent(gradients, variables):
        for gradient, variable in zip(gradients, variables):
            variable.assign_sub(1e-3 * tf.convert_to_tensor(gradient))

    saved = [variable.numpy() for variable in shallow_model.trainable_variables]
    try:
        train_step = tf.function(train_step_for(shallow_model, gradient_descent), jit_compile=True)
        for seed in (2, 3, 2):  # same shapes, new values: no retrace
            losses = train_step(make_batch(seed))
            assert all(np.isfinite(value.numpy()) for value in losses.values())
        assert train_step.experimental_get_tracing_count() == 1
        assert not np.array_equal(shallow_model.trainable_variables[0].numpy(), saved[0])
    finally:
        for variable, value in zip(shallow_model.trainable_variables, saved):
            variable.assign(value)


@pytest.mark.slow
def test_adam_lowers_the_loss_on_a_fixed_batch(shallow_model):
    adam = keras.optimizers.Adam(learning_rate=3e-3)
    adam.build(shallow_model.trainable_variables)
    train_step = tf.function(train_step_for(shallow_model, adam.apply))
    batch = make_batch(2)

    def eval_loss():
        return float(shallow_model.compute_loss(batch, shallow_model(batch, training=False))["loss"])

    initial = eval_loss()
    for _ in range(30):
        losses = train_step(batch)
    assert all(np.isfinite(value.numpy()) for value in losses.values())
    assert eval_loss() < 0.7 * initial
    assert train_step.experimental_get_tracing_count() == 1


@pytest.mark.slow
def test_mixed_float16_gives_float32_outputs_and_finite_losses():
    previous_policy = keras.mixed_precision.dtype_policy()
    keras.mixed_precision.set_dtype_policy("mixed_float16")
    try:
        mixed_model = build_model(SMALL_MODEL, DataConfig(n_mels=N_MELS), VOCAB_SIZE)
        assert mixed_model.decoder_layers[0].feed_forward.expand.compute_dtype == "float16"
        batch = make_batch(4)
        outputs = mixed_model(batch, training=True)
        for name in ("mel_pred", "mel_post", "stop_logits"):
            assert outputs[name].dtype == tf.float32, name
        losses = mixed_model.compute_loss(batch, outputs)
        for name, value in losses.items():
            assert value.dtype == tf.float32 and np.isfinite(value.numpy()), name
        # The cached decoding loop, eagerly (generate() would trace a graph): float16 caches.
        decoded = mixed_model.decode_autoregressive(
            batch["text_ids"], batch["text_lengths"], batch["ref_mel"], batch["ref_lengths"], max_frames=4
        )
        assert decoded["mel_pred"].dtype == tf.float32 and np.isfinite(decoded["mel_pred"].numpy()).all()
    finally:
        keras.mixed_precision.set_dtype_policy(previous_policy)


class forced_stop_bias:
    """Set the stop head's bias (logit offset) for a test and put it back afterwards."""

    def __init__(self, model, value: float):
        self.bias, self.value = model.stop_projection.bias, value

    def __enter__(self):
        self.saved = self.bias.numpy()
        self.bias.assign(np.full_like(self.saved, self.value))

    def __exit__(self, *exc):
        self.bias.assign(self.saved)


# Not a multiple of the reduction factor (2). One value for the generate() tests, so the graph
# generate() traces for it is traced once and reused.
MAX_FRAMES = 7


def generation_inputs(batch):
    return batch["text_ids"], batch["text_lengths"], batch["ref_mel"], batch["ref_lengths"]


@pytest.mark.slow
def test_generate_stops_at_the_first_frame_when_stop_is_forced(model):
    batch = make_batch(5)
    with forced_stop_bias(model, 30.0):
        decoded = model.decode_autoregressive(*generation_inputs(batch), max_frames=MAX_FRAMES)
        generated = model.generate(*generation_inputs(batch), max_frames=MAX_FRAMES)
    mel, lengths = generated["mel"], generated["lengths"]
    assert int(decoded["steps"]) == 1
    assert lengths.numpy().tolist() == [1, 1, 1]
    assert generated["stopped"].numpy().tolist() == [True, True, True]
    assert mel.shape == (3, MAX_FRAMES, N_MELS)
    np.testing.assert_allclose(mel[:, 1:].numpy(), MEL_PAD_VALUE)


@pytest.mark.slow  # traces generation: the fast tier keeps the graph-count test
def test_generate_never_exceeds_max_frames(model):
    batch = make_batch(6)
    max_frames = MAX_FRAMES
    with forced_stop_bias(model, -30.0):
        decoded = model.decode_autoregressive(*generation_inputs(batch), max_frames=max_frames)
        generated = model.generate(*generation_inputs(batch), max_frames=max_frames)
    mel, lengths = generated["mel"], generated["lengths"]
    assert generated["stopped"].numpy().tolist() == [False, False, False]
    assert int(decoded["steps"]) == math.ceil(max_frames / model.dims.reduction_factor)
    assert mel.shape == (3, max_frames, N_MELS)
    assert lengths.numpy().tolist() == [max_frames] * 3
    assert np.isfinite(mel.numpy()).all()


def test_generate_is_one_graph_per_buffer_length_for_any_batch_and_text(model):
    # A server's sentences, or a book's: each length of text and number of sentences is generated
    # by its buffer length's graph, traced once (traced for the first call's shapes, the second
    # text length traced it again).
    model.generate(*generation_inputs(make_batch(11)), max_frames=MAX_FRAMES)
    traced = model.generation_traces()
    for batch in (make_batch(12, batch_size=1, text_length=5), make_batch(13, batch_size=2, text_length=13)):
        assert model.generate(*generation_inputs(batch), max_frames=MAX_FRAMES)["mel"].shape[0] == len(batch["mel"])
    assert model.generation_traces() == traced
    model.generate(*generation_inputs(make_batch(14)), max_frames=MAX_FRAMES + 2)
    assert model.generation_traces() == traced + 1  # another buffer length: a graph of its own


def test_cached_decoding_matches_teacher_forcing_on_its_own_output(model):
    # The key/value-cached loop and the parallel causal decoder compute the same function: feeding
    # the generated frames back as targets reproduces them.
    batch = make_batch(7)
    with forced_stop_bias(model, -30.0):
        decoded = model.decode_autoregressive(*generation_inputs(batch), max_frames=10, prenet_dropout=False)
        replay = dict(batch, mel=decoded["mel_pred"], mel_lengths=tf.fill([3], 10))
        outputs = model(replay, training=False)
    np.testing.assert_allclose(outputs["mel_pred"].numpy(), decoded["mel_pred"].numpy(), atol=1e-4)
    np.testing.assert_allclose(outputs["stop_logits"].numpy(), decoded["stop_logits"].numpy(), atol=1e-4)


def test_cached_decoding_path_matches_call_on_the_same_ground_truth_frames(model):
    # The while-loop with its key/value caches, fed the true previous frames, computes what the
    # parallel teacher-forced `call` computes: the mel, the stop logits and the attention.
    batch = make_batch(9)
    frames = batch["mel"].shape[1]
    with forced_stop_bias(model, -30.0):
        decoded = model.decode_autoregressive(
            *generation_inputs(batch), max_frames=frames, prenet_dropout=False, teacher_mel=batch["mel"]
        )
        outputs = model(batch, training=False)
    np.testing.assert_allclose(decoded["mel_pred"].numpy(), outputs["mel_pred"].numpy(), atol=1e-4)
    np.testing.assert_allclose(decoded["stop_logits"].numpy(), outputs["stop_logits"].numpy(), atol=1e-4)
    averaged = tf.reduce_mean(outputs["cross_attention"], axis=1).numpy()
    np.testing.assert_allclose(decoded["alignment"].numpy(), averaged, atol=1e-5)


@pytest.mark.slow
def test_attention_window_keeps_generation_reading_forward(model):
    batch = make_batch(10)
    with forced_stop_bias(model, -30.0):
        free = model.decode_autoregressive(*generation_inputs(batch), max_frames=24, prenet_dropout=False)
        held = model.decode_autoregressive(
            *generation_inputs(batch), max_frames=24, prenet_dropout=False, attention_window=(0, 2)
        )
    window = held["alignment"].numpy()
    for item, length in enumerate(batch["text_lengths"].numpy()):
        position = 0
        for row in window[item]:
            support = np.flatnonzero(row > 0)
            assert support.min() >= position and support.max() <= min(position + 2, length - 1)
            position = max(position, int(row.argmax()))
    # Not vacuous: left alone, the untrained model's attention spreads over the whole text.
    assert (free["alignment"].numpy()[0] > 0).sum(axis=-1).max() == batch["text_lengths"].numpy()[0]


@pytest.mark.slow
def test_generate_compiles_with_xla_and_is_reproducible(model):
    batch = make_batch(8)
    compiled = tf.function(lambda *inputs: model.generate(*inputs, max_frames=MAX_FRAMES, seed=3), jit_compile=True)
    first_mel, first_lengths = (compiled(*generation_inputs(batch))[key] for key in ("mel", "lengths"))
    second_mel = compiled(*generation_inputs(batch))["mel"]
    eager = model.generate(*generation_inputs(batch), max_frames=MAX_FRAMES, seed=3)
    eager_mel, eager_lengths = eager["mel"], eager["lengths"]
    assert first_mel.shape == (3, MAX_FRAMES, N_MELS)
    np.testing.assert_array_equal(first_mel.numpy(), second_mel.numpy())
    np.testing.assert_array_equal(first_lengths.numpy(), eager_lengths.numpy())
    np.testing.assert_allclose(first_mel.numpy(), eager_mel.numpy(), atol=1e-4)


def test_a_seed_past_int32_wraps_as_tensorflow_wraps_one_under_two_to_the_32(model):
    # synthesis.seed takes any integer: 2**31 had been TensorFlow's -2**31, and one past 2**32 a traceback.
    inputs = generation_inputs(make_batch(2))
    mels = [model.generate(*inputs, max_frames=8, seed=seed)["mel"].numpy() for seed in (-(2**31), 2**31, 2**63 + 5)]
    np.testing.assert_array_equal(mels[0], mels[1])
    np.testing.assert_array_equal(mels[2], model.generate(*inputs, max_frames=8, seed=5)["mel"].numpy())


def test_attention_prior_pulls_every_head_onto_the_diagonal(model):
    from xtts_cli.model.alignment import diagonal_log_prior

    batch = make_batch()
    steps = int(model.decoder_steps(batch["mel_lengths"]).numpy().max())
    target = diagonal_log_prior(batch["text_lengths"], model.decoder_steps(batch["mel_lengths"]), steps, 9, 3.0).numpy()

    def diagonal_mass(attention):
        # Mean over valid steps of the weight within one token of each item's diagonal centre.
        masses = []
        for item, (tokens, item_steps) in enumerate(
            zip(batch["text_lengths"].numpy(), model.decoder_steps(batch["mel_lengths"]).numpy())
        ):
            near = target[item, :item_steps, :tokens] > -0.5 / 9.0 - 1e-6  # |t - centre| <= 1
            masses.append((attention[item, :, :item_steps, :tokens] * near).sum(-1).mean())
        return float(np.mean(masses))

    plain = model(batch, training=False)["cross_attention"].numpy()
    pulled = model(batch, training=False, attention_prior_strength=tf.constant(10.0))["cross_attention"].numpy()
    off = model(batch, training=False, attention_prior_strength=tf.constant(0.0))["cross_attention"].numpy()
    np.testing.assert_allclose(off, plain, atol=1e-6)
    assert diagonal_mass(pulled) > diagonal_mass(plain) + 0.1
    # Still a distribution over each item's own tokens.
    for item, length in enumerate(batch["text_lengths"].numpy()):
        np.testing.assert_allclose(pulled[item, :, :, :length].sum(-1), 1.0, rtol=1e-5)
        assert np.all(pulled[item, :, :, length:] == 0.0)


def test_self_conditioning_input_replaces_the_teacher_frames(model):
    batch = make_batch()
    teacher = model(batch, training=False)
    same = model(batch, training=False, decoder_input_mel=batch["mel"])
    np.testing.assert_allclose(same["mel_pred"].numpy(), teacher["mel_pred"].numpy(), atol=1e-5)
    own = model(batch, training=False, decoder_input_mel=teacher["mel_pred"])
    assert not np.allclose(own["mel_pred"].numpy(), teacher["mel_pred"].numpy(), atol=1e-3)
    # Step 0 reads the go frame either way: the first step's frames do not change.
    np.testing.assert_allclose(own["mel_pred"].numpy()[:, :2], teacher["mel_pred"].numpy()[:, :2], atol=1e-5)
