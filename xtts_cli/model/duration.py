"""The duration decoder (`model.decoder: duration`): text read at a learnt pace, every frame at once.

The autoregressive decoder (`model/xtts.py`) must learn where it is in the text (its attention)
and what the text sounds like at the same time, from its own previous frames; in the 30 CPU
minutes of `configs/speak-cpu.yaml` it learns the first and not the second (README, "Listening
to a run"). This decoder takes the alignment out of the decoder's hands, as FastPitch and
RAD-TTS do (Łańcucki 2021; Badlani et al. 2022, "One TTS Alignment To Rule Them All"):

- an **aligner** (two convolutions over the character embeddings, three over the mel) scores
  every (frame, token) pair by the negative squared distance of their projections; with a
  beta-binomial prior that favours the diagonal, a softmax over tokens is a soft alignment. It is
  trained by the **forward-sum loss**: the CTC likelihood of reading the tokens in order, each at
  least once (TensorFlow's `ctc_loss`, the tokens as labels and a blank that is never used);
- **monotonic alignment search** (Viterbi over the soft alignment, Kim et al. 2020, Glow-TTS)
  turns it into hard **durations**: how many frames each token lasts, summing to the clip's
  frames. No gradient flows through them;
- a **duration predictor** (two convolutions over the text encoding) learns log(1 + duration);
- the text encoding is **expanded** by the durations (each token repeated for its frames; the
  aligner's in training, the predictor's in synthesis), gets positions and the speaker vector,
  and **decoder layers** (self-attention over the frames, a feed-forward whose first layer is a
  convolution: FastSpeech's FFT block) predict every frame at once; the postnet refines it.

The clip's length is the sum of the predicted durations: no stop token. The aligner's soft
alignment is the model's `cross_attention` output, so `alignment_score` (its focus rate) and the
TensorBoard alignment image mean what they mean for the autoregressive decoder.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from xtts_cli.model.presets import ModelDims
from xtts_cli.model.xtts import (
    MEL_PAD_VALUE,
    AcousticModel,
    LayerStack,
    MultiHeadAttention,
    _frame_count,
    sinusoidal_encoding,
)

__all__ = [
    "DurationModel",
    "beta_binomial_log_prior",
    "expand_by_durations",
    "forward_sum_loss",
    "monotonic_alignment",
    "token_positions",
]

# The aligner's distance scale (RAD-TTS, NeMo's AlignmentEncoder): scores are
# -ALIGNER_TEMPERATURE x squared distance.
ALIGNER_TEMPERATURE = 0.0005
ALIGNER_CHANNELS = 80
# Log-probability of CTC's blank in the forward-sum loss (NeMo's ForwardSumLoss): a constant
# column the softmax sees, never a label.
BLANK_LOG_PROB = -1.0
# Weight of the duration predictor's loss (log-duration MSE) in the total (FastPitch's 0.1).
DURATION_LOSS_WEIGHT = 0.1
# Weight of the forward-sum (alignment) loss in the total.
ALIGNMENT_LOSS_WEIGHT = 1.0
_NEGATIVE = -1e4  # masked log-probabilities: finite, so 0 x it is 0 in any sum


def beta_binomial_log_prior(text_lengths, mel_lengths, frames, tokens, scaling: float = 1.0) -> tf.Tensor:
    """[B, F, T] float32: log P(token t | frame f) under a beta-binomial over each item's tokens
    whose mean moves from the first token to the last as f goes through the clip (RAD-TTS's
    static prior, `scaling` 1); 0 outside the item.

    P(k) = C(n, k) B(k + a, n - k + b) / B(a, b), with n = T_b - 1, a = scaling (f + 1),
    b = scaling (F_b - f).
    """
    n = tf.cast(tf.maximum(text_lengths, 1) - 1, tf.float32)[:, None, None]
    clip_frames = tf.cast(tf.maximum(mel_lengths, 1), tf.float32)[:, None, None]
    f = tf.range(frames, dtype=tf.float32)[None, :, None]
    k = tf.range(tokens, dtype=tf.float32)[None, None, :]
    a = scaling * (f + 1.0)
    b = scaling * tf.maximum(clip_frames - f, 1.0)
    k_valid = tf.minimum(k, n)

    def log_beta(x, y):
        return tf.math.lgamma(x) + tf.math.lgamma(y) - tf.math.lgamma(x + y)

    log_choose = tf.math.lgamma(n + 1.0) - tf.math.lgamma(k_valid + 1.0) - tf.math.lgamma(n - k_valid + 1.0)
    log_prior = log_choose + log_beta(k_valid + a, n - k_valid + b) - log_beta(a, b)
    valid = tf.sequence_mask(mel_lengths, frames)[:, :, None] & tf.sequence_mask(text_lengths, tokens)[:, None, :]
    return tf.where(valid, log_prior, 0.0)


def forward_sum_loss(log_probs, text_lengths, mel_lengths, *, dense_labels: bool = False) -> tf.Tensor:
    """Scalar float32: the mean over the batch of -log P(the tokens, in order) / T_b, summed over
    every monotonic path through `log_probs` [B, F, T] (log-softmax over tokens, or any scores:
    they are renormalised with the blank over each item's own tokens).

    CTC with labels 1..T_b and blank 0: a path may stay on a token, move to the next, never skip
    one or go back. Each item is read over its own `mel_lengths` frames.

    `dense_labels` selects TensorFlow's CTC written in graph ops, which XLA compiles; the default
    (sparse labels) selects its CTC kernel, which XLA does not, and which on a CPU is ~18x faster
    (0.045 s against 0.81 s for loss and gradient at 16 clips x 400 frames x 60 tokens).
    """
    log_probs = tf.cast(log_probs, tf.float32)
    batch = tf.shape(log_probs)[0]
    frames, tokens = tf.shape(log_probs)[1], tf.shape(log_probs)[2]
    token_mask = tf.sequence_mask(text_lengths, tokens)
    scores = tf.where(token_mask[:, None, :], log_probs, _NEGATIVE)
    blank = tf.fill([batch, frames, 1], BLANK_LOG_PROB)
    logits = tf.concat([blank, scores], axis=2)
    labels = tf.tile(tf.range(1, tokens + 1)[None, :], [batch, 1])
    labels = tf.where(token_mask, labels, 0)
    losses = tf.nn.ctc_loss(
        labels=labels if dense_labels else tf.sparse.from_dense(labels),
        logits=logits,
        label_length=tf.cast(text_lengths, tf.int32),
        logit_length=tf.cast(mel_lengths, tf.int32),
        logits_time_major=False,
        blank_index=0,
    )
    return tf.reduce_mean(losses / tf.cast(tf.maximum(text_lengths, 1), tf.float32))


def monotonic_alignment(log_probs, text_lengths, mel_lengths):
    """The most likely monotonic path through `log_probs` [B, F, T] (Viterbi; Glow-TTS's monotonic
    alignment search): each frame reads one token, the first frame token 0, the item's last frame
    its last token, and from one frame to the next the token stays or moves on by one.

    Returns (`tokens` [B, F] int32: the token each frame reads, -1 past the item's frames;
    `durations` [B, T] int32: frames per token, summing to `mel_lengths`, 0 past the item's
    tokens). Assumes T_b <= F_b (a clip has at least a frame per token; the data's scan checks it).
    No gradient.
    """
    log_probs = tf.stop_gradient(tf.cast(log_probs, tf.float32))
    frames, tokens = tf.shape(log_probs)[1], tf.shape(log_probs)[2]
    token_mask = tf.sequence_mask(text_lengths, tokens)
    scores = tf.where(token_mask[:, None, :], log_probs, _NEGATIVE)
    by_frame = tf.transpose(scores, [1, 0, 2])  # [F, B, T]
    start = tf.where(tf.range(tokens)[None, :] == 0, by_frame[0], 2 * _NEGATIVE * tf.cast(frames, tf.float32))

    def forward(carry, frame_scores):
        best, _ = carry
        from_previous = tf.pad(best[:, :-1], [[0, 0], [1, 0]], constant_values=4 * _NEGATIVE * 1e3)
        moved = from_previous > best
        return tf.maximum(best, from_previous) + frame_scores, moved

    _, moved = tf.scan(forward, by_frame[1:], initializer=(start, tf.zeros_like(token_mask)))
    # moved[f - 1]: did the best path into (f, t) come from token t - 1 at frame f - 1.
    moved = tf.concat([tf.zeros_like(token_mask)[None], moved], axis=0)  # [F, B, T]
    last_frame = tf.cast(mel_lengths, tf.int32) - 1
    last_token = tf.cast(text_lengths, tf.int32) - 1

    def backward(token, frame):
        inside = frame <= last_frame
        token = tf.where(frame > last_frame, last_token, token)
        step_back = tf.gather(moved[frame], tf.maximum(token, 0), batch_dims=1)
        here = tf.where(inside, token, -1)
        after = tf.where(inside & step_back, token - 1, token)
        return after, here

    _, here = tf.scan(
        lambda carry, frame: backward(carry[0], frame),
        tf.range(frames - 1, -1, -1),
        initializer=(last_token, tf.zeros_like(last_token)),
    )
    path = tf.transpose(tf.reverse(here, axis=[0]))  # [B, F]
    durations = tf.reduce_sum(tf.one_hot(path, tokens, dtype=tf.int32), axis=1)  # -1 is all zeros
    return path, durations


def expand_by_durations(encoding, durations, frames):
    """Each token's encoding repeated for its frames: ([B, frames, d], token index per frame
    [B, frames] int32, -1 past the durations' sum). `durations` [B, T] >= 0; a sum beyond
    `frames` is cut."""
    ends = tf.cumsum(tf.cast(durations, tf.int32), axis=1)  # [B, T]
    positions = tf.range(frames)[None, :]
    # The token whose span holds the frame: how many tokens end at or before it (a comparison,
    # not tf.searchsorted, so XLA compiles it).
    index = tf.reduce_sum(tf.cast(ends[:, None, :] <= positions[:, :, None], tf.int32), axis=2)
    inside = positions < ends[:, -1:]
    index = tf.where(inside, index, -1)
    expanded = tf.gather(encoding, tf.maximum(index, 0), batch_dims=1)
    expanded = tf.where(inside[:, :, None], expanded, tf.zeros([], expanded.dtype))
    return expanded, index


def token_positions(durations, index, frames) -> tf.Tensor:
    """[B, frames, 2] float32: for each frame, how far through its token it is ((offset + 0.5) /
    duration, in (0, 1)) and how long the token lasts (log(1 + duration) / 3); 0 past the end.

    The expanded encoding is the same for every frame of a token; these say where in the sound
    of a letter a frame sits, so the decoder can shape its onset, middle and transition into the
    next instead of smearing one average over them.
    """
    durations = tf.cast(durations, tf.int32)
    starts = tf.cumsum(durations, axis=1, exclusive=True)
    safe = tf.maximum(index, 0)
    start = tf.gather(starts, safe, batch_dims=1)
    length = tf.cast(tf.maximum(tf.gather(durations, safe, batch_dims=1), 1), tf.float32)
    offset = tf.cast(tf.range(frames)[None, :] - start, tf.float32)
    features = tf.stack([(offset + 0.5) / length, tf.math.log1p(length) / 3.0], axis=-1)
    return tf.where((index >= 0)[:, :, None], features, 0.0)


class AlignmentEncoder(keras.layers.Layer):
    """RAD-TTS's aligner: (character embeddings, mel) -> log-probabilities [B, F, T] over tokens."""

    def __init__(self, d_model: int, n_mels: int, **kwargs):
        super().__init__(**kwargs)
        channels = ALIGNER_CHANNELS
        self.key_layers = LayerStack(
            [
                keras.layers.Conv1D(2 * d_model, 3, padding="same", activation="relu", name="conv_0"),
                keras.layers.Conv1D(channels, 1, name="conv_1"),
            ],
            name="key_layers",
        )
        self.query_layers = LayerStack(
            [
                keras.layers.Conv1D(2 * n_mels, 3, padding="same", activation="relu", name="conv_0"),
                keras.layers.Conv1D(n_mels, 1, activation="relu", name="conv_1"),
                keras.layers.Conv1D(channels, 1, name="conv_2"),
            ],
            name="query_layers",
        )

    def call(self, embeddings, mel, text_mask, log_prior):
        keys, queries = embeddings, mel
        for layer in self.key_layers:
            keys = layer(keys)
        for layer in self.query_layers:
            queries = layer(queries)
        keys, queries = tf.cast(keys, tf.float32), tf.cast(queries, tf.float32)
        distance = (
            tf.reduce_sum(tf.square(queries), -1)[:, :, None]
            - 2.0 * tf.matmul(queries, keys, transpose_b=True)
            + tf.reduce_sum(tf.square(keys), -1)[:, None, :]
        )
        scores = -ALIGNER_TEMPERATURE * distance
        scores = tf.where(text_mask[:, None, :], scores, -1e9)
        # The prior arrives in the compute dtype (Keras casts a layer's float inputs under mixed precision).
        return tf.nn.log_softmax(scores, axis=-1) + tf.cast(log_prior, tf.float32)


class ConvolutionStack(keras.layers.Layer):
    """Convolutions (ReLU, layer norm, dropout) over the valid positions, then a projection."""

    def __init__(self, channels: int, outputs: int, kernel_size: int, layers: int, dropout: float, **kwargs):
        super().__init__(**kwargs)
        self.convolutions = LayerStack(
            [
                keras.layers.Conv1D(channels, kernel_size, padding="same", activation="relu", name=f"conv_{i}")
                for i in range(layers)
            ],
            name="convolutions",
        )
        self.norms = LayerStack(
            [keras.layers.LayerNormalization(epsilon=1e-5, name=f"norm_{i}") for i in range(layers)], name="norms"
        )
        self.dropout = keras.layers.Dropout(dropout)
        self.projection = keras.layers.Dense(outputs, dtype="float32", name="projection")

    def call(self, x, mask, training=False):
        mask = tf.cast(mask[:, :, None], x.dtype)
        for convolution, norm in zip(self.convolutions, self.norms):
            x = self.dropout(norm(convolution(x * mask)), training=training)
        return self.projection(x * mask)


class FrameDecoderLayer(keras.layers.Layer):
    """FastSpeech's FFT block, pre-LN: self-attention over the frames, then a feed-forward whose
    first layer is a convolution (kernel 3) so each frame hears its neighbours."""

    def __init__(self, dims: ModelDims, **kwargs):
        super().__init__(**kwargs)
        self.attention_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="attention_norm")
        self.self_attention = MultiHeadAttention(dims.d_model, dims.num_heads, name="self_attention")
        self.feed_forward_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="feed_forward_norm")
        self.expand = keras.layers.Conv1D(dims.ffn_dim, 3, padding="same", activation="gelu", name="expand")
        self.contract = keras.layers.Dense(dims.d_model, name="contract")
        self.residual_dropout = keras.layers.Dropout(dims.dropout)

    def call(self, x, frame_mask, training=False):
        normed = self.attention_norm(x)
        attended = self.self_attention(normed, normed, key_mask=frame_mask[:, None, :])
        x = x + self.residual_dropout(attended, training=training)
        normed = self.feed_forward_norm(x) * tf.cast(frame_mask[:, :, None], x.dtype)
        return x + self.residual_dropout(self.contract(self.expand(normed)), training=training)


class DurationModel(AcousticModel):
    """The XTTS model's text and speaker encoders with the duration decoder (module docstring).

    Same interface as the autoregressive `XttsModel`: `call` gives `mel_pred`, `mel_post`, `stop_logits` (zeros:
    there is no stop token) and `cross_attention` (the aligner's soft alignment [B, 1, F, T]);
    `compute_loss` the same keys plus `duration_loss`, with `attention_loss` the forward-sum loss;
    `generate` the same keys, `stopped` meaning the predicted durations, not `max_frames`, ended
    the clip.
    """

    paced = True
    static_frame_buffer = False
    weights_added_since_first = ("mel_mean", "mel_scale")  # identity in runs from before them

    def _build_decoder(self) -> None:
        dims, n_mels = self.dims, self.n_mels
        self.aligner = AlignmentEncoder(dims.d_model, n_mels, name="aligner")
        self.duration_predictor = ConvolutionStack(
            dims.d_model, 1, kernel_size=3, layers=2, dropout=dims.dropout, name="duration_predictor"
        )
        self.token_position_projection = keras.layers.Dense(dims.d_model, name="token_position_projection")
        self.speaker_projection = keras.layers.Dense(dims.d_model, name="speaker_projection")
        # Runs whose vocabulary lists speakers (all since it does) only: older checkpoints lack it.
        self.memory_speaker_projection = (
            keras.layers.Dense(dims.d_model, name="memory_speaker_projection") if self.num_speakers else None
        )
        self.decoder_dropout = keras.layers.Dropout(dims.dropout)
        self.decoder_layers = LayerStack(
            [FrameDecoderLayer(dims, name=f"decoder_layer_{i}") for i in range(dims.num_decoder_layers)],
            name="decoder_layers",
        )
        self.decoder_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="decoder_norm")
        self.mel_projection = keras.layers.Dense(dims.reduction_factor * n_mels, dtype="float32", name="mel_projection")
        # Per-bin mean and spread of the training log-mels (`set_mel_statistics`): the aligner reads
        # the mel and the decoder predicts it in those units (the global mean-variance normalisation
        # ESPnet gives FastSpeech 2's features). Measured on speak-cpu: held-out word error rate
        # after 1,100 steps 0.28-0.31 in four runs against 0.33-0.42 without it
        # (docs/speech_quality.md). Identity until set, and in runs from before them, whose
        # checkpoints lack them.
        self.mel_mean = self.add_weight(
            shape=(n_mels,), initializer="zeros", trainable=False, autocast=False, name="mel_mean"
        )
        self.mel_scale = self.add_weight(
            shape=(n_mels,), initializer="ones", trainable=False, autocast=False, name="mel_scale"
        )

    def set_mel_statistics(self, mean, scale) -> None:
        """The training log-mels' per-bin mean and standard deviation [n_mels], before step 0."""
        self.mel_mean.assign(tf.cast(mean, tf.float32))
        self.mel_scale.assign(tf.cast(scale, tf.float32))

    def _with_speaker(self, memory, speaker_vector):
        """The text encoding with the speaker's vector added at every token (FastSpeech 2's
        multi-speaker recipe), so the durations, and the frames decoded from them, follow the voice."""
        if self.memory_speaker_projection is None:
            return memory
        return memory + self.memory_speaker_projection(speaker_vector)[:, None, :]

    def decoder_steps(self, mel_lengths):
        """Rows of the alignment (`cross_attention`, the generation's `alignment`): one per frame."""
        return tf.cast(mel_lengths, tf.int32)

    def _decode_frames(self, memory, durations, speaker_vector, frames, training=False):
        """Mel [B, frames, n_mels] float32 from the text encoding expanded by `durations`, and the
        token index per frame.

        With reduction factor r each decoder position stands for r frames: it reads the mean of
        their expanded encodings and predicts all r, so the decoder's sequence is r times shorter.
        """
        r = self.dims.reduction_factor
        expanded, index = expand_by_durations(memory, durations, frames)
        expanded += self.token_position_projection(token_positions(durations, index, frames))
        steps = -(-frames // r)
        batch = tf.shape(expanded)[0]
        expanded = tf.pad(expanded, [[0, 0], [0, steps * r - frames], [0, 0]])
        valid = tf.reshape(tf.pad(index, [[0, 0], [0, steps * r - frames]], constant_values=-1) >= 0, [batch, steps, r])
        counts = tf.reduce_sum(tf.cast(valid, expanded.dtype), axis=2)
        x = tf.reduce_sum(tf.reshape(expanded, [batch, steps, r, self.dims.d_model]), axis=2)
        x = x / tf.maximum(counts, 1.0)[:, :, None]
        step_mask = counts > 0
        x = x + self.speaker_projection(speaker_vector)[:, None, :]
        x = x + tf.cast(sinusoidal_encoding(tf.range(steps, dtype=tf.float32), self.dims.d_model), x.dtype)[None]
        x = self.decoder_dropout(x, training=training)
        for layer in self.decoder_layers:
            x = layer(x, step_mask, training=training)
        mel = tf.reshape(self.mel_projection(self.decoder_norm(x)), [batch, steps * r, self.n_mels])
        mel = mel * self.mel_scale + self.mel_mean
        return mel[:, :frames], index

    def call(self, batch, training=False, decoder_input_mel=None, attention_prior_strength=None):
        """Outputs with the aligner's durations (the decoder reads the text as the clip says it)."""
        del decoder_input_mel, attention_prior_strength  # the autoregressive decoder's
        text_ids, text_lengths = batch["text_ids"], batch["text_lengths"]
        mel, mel_lengths = batch["mel"], batch["mel_lengths"]
        frames, tokens = _frame_count(mel, 1), _frame_count(text_ids, 1)
        memory, text_mask = self.encode_text(text_ids, text_lengths, training, language_ids=batch.get("language_ids"))
        speaker_vector = self.speaker_vector(batch, training=training)
        memory = self._with_speaker(memory, speaker_vector)

        log_prior = beta_binomial_log_prior(text_lengths, mel_lengths, frames, tokens)
        normalized = (tf.cast(mel, tf.float32) - self.mel_mean) / self.mel_scale
        log_probs = self.aligner(self.token_embedding(text_ids), normalized, text_mask, log_prior)
        _, durations = monotonic_alignment(log_probs, text_lengths, mel_lengths)
        log_durations = tf.squeeze(self.duration_predictor(memory, text_mask, training=training), -1)
        mel_pred, _ = self._decode_frames(memory, durations, speaker_vector, frames, training)
        frame_mask = tf.sequence_mask(mel_lengths, frames)
        outputs = {
            "mel_pred": mel_pred,
            "stop_logits": tf.zeros([tf.shape(mel)[0], frames], tf.float32),
            "cross_attention": tf.where(frame_mask[:, None, :, None], tf.nn.softmax(log_probs)[:, None], 0.0),
            "alignment_log_probs": log_probs,
            "durations": durations,
            "log_durations": log_durations,
            "speaker_vector": speaker_vector,
        }
        if self.postnet is not None:
            outputs["mel_post"] = self.refine(mel_pred, mel_lengths, training)
        return outputs

    def compute_loss(self, batch, outputs, *, attention_weight=0.0, attention_sigma: float = 0.4):
        """L1 on the mel before and after the postnet, the forward-sum loss (`attention_loss`) and
        the log-duration MSE (`duration_loss`), weighted `ALIGNMENT_LOSS_WEIGHT` and
        `DURATION_LOSS_WEIGHT`; `stop_loss` 0. `attention_weight` and `attention_sigma` (the
        guided attention of the autoregressive decoder) do not apply."""
        from xtts_cli.model.alignment import alignment_score

        del attention_weight, attention_sigma
        lengths = tf.cast(batch["mel_lengths"], tf.int32)
        text_lengths = tf.cast(batch["text_lengths"], tf.int32)
        mel_loss, postnet_mel_loss = self.mel_losses(batch, outputs)
        attention_loss = forward_sum_loss(
            outputs["alignment_log_probs"], text_lengths, lengths, dense_labels=self.xla_compatible_losses
        )
        token_mask = tf.sequence_mask(text_lengths, _frame_count(batch["text_ids"], 1))
        target = tf.math.log1p(tf.cast(outputs["durations"], tf.float32))
        error = tf.where(token_mask, tf.square(outputs["log_durations"] - target), 0.0)
        duration_loss = tf.reduce_sum(error) / tf.maximum(tf.reduce_sum(tf.cast(token_mask, tf.float32)), 1.0)
        return {
            "loss": mel_loss
            + postnet_mel_loss
            + ALIGNMENT_LOSS_WEIGHT * attention_loss
            + DURATION_LOSS_WEIGHT * duration_loss,
            "mel_loss": mel_loss,
            "postnet_mel_loss": postnet_mel_loss,
            "stop_loss": tf.zeros([]),
            "attention_loss": attention_loss,
            "duration_loss": duration_loss,
            "alignment_score": alignment_score(outputs["cross_attention"], text_lengths, lengths),
        }

    def predict_durations(self, memory, text_mask, pace: float | tf.Tensor = 1.0):
        """Frames per token [B, T] int32 from the predictor: (exp(log d) - 1) / pace, >= 0, rounded
        along the text (each token ends at its rounded running total, so the clip's length is the
        rounded sum: rounding each token alone made a length step with the pace, 1-frame tokens all
        dropping out at once), 0 past the text, at least one frame in all."""
        log_durations = tf.squeeze(self.duration_predictor(memory, text_mask, training=False), -1)
        frames = tf.math.expm1(tf.cast(log_durations, tf.float32)) / tf.cast(pace, tf.float32)
        frames = tf.where(text_mask, tf.maximum(frames, 0.0), 0.0)
        ends = tf.cast(tf.round(tf.cumsum(frames, axis=1)), tf.int32)
        durations = ends - tf.pad(ends[:, :-1], [[0, 0], [1, 0]])
        empty = tf.reduce_sum(durations, axis=1, keepdims=True) < 1
        first = tf.equal(tf.range(tf.shape(durations)[1])[None, :], 0)
        return tf.where(empty & first, 1, durations)

    def _generate(
        self, text_ids, text_lengths, speaker_vector, language_ids, frame_limit, controls, *, max_frames, decoding
    ):
        """The predicted durations' frames at `controls["speed"]`, cut at `frame_limit`. Nothing is
        decided frame by frame, so the other controls and `decoding` (the stop token, prenet dropout,
        attention window and prior of a decoder that is) have nothing to steer."""
        memory, text_mask = self.encode_text(text_ids, text_lengths, training=False, language_ids=language_ids)
        memory = self._with_speaker(memory, speaker_vector)
        durations = self.predict_durations(memory, text_mask, pace=controls.get("speed", 1.0))
        total = tf.reduce_sum(durations, axis=1)
        limit = tf.minimum(tf.cast(frame_limit, tf.int32), max_frames)
        lengths = tf.minimum(total, limit)
        mel_pred, index = self._decode_frames(memory, durations, speaker_vector, max_frames)
        mel = tf.cast(self.refine(mel_pred, lengths, training=False), tf.float32)
        frame_mask = tf.sequence_mask(lengths, max_frames)
        mel = tf.where(frame_mask[:, :, None], mel, MEL_PAD_VALUE)
        tokens = _frame_count(text_ids, 1)
        alignment = tf.where(frame_mask[:, :, None], tf.one_hot(index, tokens, dtype=tf.float32), 0.0)
        return {
            "mel": mel,
            "lengths": lengths,
            "stopped": total <= limit,
            "alignment": alignment,
            # A hard alignment by construction: the focus rate is 1 wherever a frame exists.
            "alignment_score": tf.where(lengths > 0, 1.0, 0.0),
        }
