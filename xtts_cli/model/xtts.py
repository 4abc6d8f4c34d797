"""The XTTS-style acoustic model: text + speaker reference in, log-mel frames and stop logits out.

Three parts, in the spirit of XTTS (Casanova et al. 2024) and Tortoise (Betker 2023), which
condition an autoregressive transformer on text and on a speaker reference clip:

- text encoder: token embedding (x sqrt(d), Vaswani et al. 2017 sec. 3.4) + sinusoidal positions
  + pre-LN transformer encoder layers, with a padding mask from `text_lengths`;
- speaker encoder: a projection of the reference mel, transformer layers without positions (the
  speaker identity does not depend on where in the clip a frame sits; Tortoise's conditioning
  encoder has none either), then attention pooling with a learned query over the valid frames
  into one speaker vector;
- causal decoder: the previous frame goes through a Tacotron 2 prenet (two ReLU layers with
  dropout 0.5, Shen et al. 2018 sec. 2.2), is projected to d_model, gets sinusoidal positions and
  the projected speaker vector added, then pre-LN decoder layers (causal self-attention,
  cross-attention to the text encoding, feed-forward) predict `r` mel frames and `r` stop logits
  per step. A convolutional postnet refines the whole predicted mel (Tacotron 2).

Pre-LN layers (Xiong et al. 2020) as in GPT-2, which XTTS's decoder is: trains without a
carefully tuned warm-up.

Training uses teacher forcing: the decoder input for step s is the last target frame of step
s - 1, a learned "go" frame for step 0. With reduction factor r, step s predicts frames
[s*r, s*r + r), and its input is frame s*r - 1, so the prediction of frame j depends only on target
frames < j (strictly causal for any r).

Mixed precision: layers follow the global Keras dtype policy; attention softmax, layer norm, the
output projections, the postnet's last layer and every loss are float32, so `mel_pred`,
`stop_logits`, `mel_post` and the losses are float32 under `mixed_float16` too. Masks travel as
booleans (Keras casts floating inputs of a layer to its compute dtype, and -1e9 is -inf in
float16).

Shapes: nothing branches in Python on a tensor's value; the only Python-side shape use is the
static frame count of a batch (to pad it to a multiple of r), which is part of the batch shape a
`tf.function` is traced for anyway.

Measured on our 2-core CPU (tiny preset, batch 16 x 300 mel frames, 120 text tokens, 96 reference
frames, forward + backward + Adam, other jobs sharing the machine): graph mode (`tf.function`)
0.34-0.38 s per step; eager 1.6-2.7 s (4-8x slower); XLA (`jit_compile=True`) 0.46-0.55 s per
step after a 43-65 s compile. On a CPU, plain graph mode is the fast path (XLA on a GPU is not
measured here).
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple, Optional

import keras
import tensorflow as tf

from xtts_cli.model.presets import ModelDims

__all__ = ["MEL_PAD_VALUE", "XttsModel", "dummy_batch", "sinusoidal_encoding"]

# Padding value of log-mel frames: log of the 1e-5 magnitude floor the feature pipeline clips at.
MEL_PAD_VALUE = math.log(1e-5)
# Added to masked attention scores in float32; exp(-1e9) is exactly 0.
_MASKED_SCORE = -1e9
# Clips a speaker centroid is the exact mean of before it becomes a moving average of as many.
CENTROID_CLIPS = 200
# Width (standard deviation, in text tokens) of the diagonal attention prior used in training.
ATTENTION_PRIOR_WIDTH = 3.0


def sinusoidal_encoding(positions: tf.Tensor, dim: int) -> tf.Tensor:
    """Sinusoidal position encoding (Vaswani et al. 2017 sec. 3.5), float32 [..., dim].

    `positions` is a float32 tensor of any shape; sines fill the first half, cosines the second.
    """
    half = dim // 2
    inverse_frequencies = tf.exp(-math.log(10000.0) * tf.range(half, dtype=tf.float32) / max(half, 1))
    angles = tf.expand_dims(positions, -1) * inverse_frequencies
    encoding = tf.concat([tf.sin(angles), tf.cos(angles)], axis=-1)
    if dim % 2:
        encoding = tf.pad(encoding, [[0, 0]] * (len(encoding.shape) - 1) + [[0, 1]])
    return encoding


def _frame_count(tensor: tf.Tensor, axis: int):
    """The static size of `axis` when known (a Python int), else the dynamic one."""
    static = tensor.shape[axis]
    return static if static is not None else tf.shape(tensor)[axis]


class MultiHeadAttention(keras.layers.Layer):
    """Scaled dot-product attention over heads, split so a decoder can cache keys and values."""

    def __init__(self, d_model: int, num_heads: int, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.query_projection = keras.layers.Dense(d_model, name="query")
        self.key_projection = keras.layers.Dense(d_model, name="key")
        self.value_projection = keras.layers.Dense(d_model, name="value")
        self.output_projection = keras.layers.Dense(d_model, name="output")

    def _split_heads(self, x: tf.Tensor) -> tf.Tensor:
        shape = tf.shape(x)
        return tf.reshape(x, [shape[0], shape[1], self.num_heads, self.head_dim])

    def project_keys_values(self, memory: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Keys and values [B, K, heads, head_dim] of `memory` [B, K, d_model]."""
        return self._split_heads(self.key_projection(memory)), self._split_heads(self.value_projection(memory))

    def attend(
        self,
        query_input: tf.Tensor,
        keys: tf.Tensor,
        values: tf.Tensor,
        key_mask=None,
        return_weights: bool = False,
        score_bias=None,
    ):
        """Attention of `query_input` [B, Q, d] over projected keys/values [B, K, heads, head_dim].

        `key_mask` is boolean and broadcasts to [B, Q, K]: True where a key may be attended to.
        `score_bias` (float32, broadcasting to [B, heads, Q, K]) is added to the scores before the
        softmax (an attention prior). With `return_weights`, returns (output, weights [B, heads, Q,
        K] float32).
        """
        queries = self._split_heads(self.query_projection(query_input))
        queries = queries * tf.cast(self.head_dim**-0.5, queries.dtype)
        scores = tf.cast(tf.einsum("bqhd,bkhd->bhqk", queries, keys), tf.float32)
        if score_bias is not None:
            scores = scores + score_bias
        if key_mask is not None:
            scores = tf.where(tf.expand_dims(key_mask, 1), scores, _MASKED_SCORE)
        probabilities = tf.nn.softmax(scores, axis=-1)
        context = tf.einsum("bhqk,bkhd->bqhd", tf.cast(probabilities, values.dtype), values)
        shape = tf.shape(context)
        context = tf.reshape(context, [shape[0], shape[1], self.num_heads * self.head_dim])
        output = self.output_projection(context)
        return (output, probabilities) if return_weights else output

    def call(self, query_input, memory, key_mask=None, return_weights=False, score_bias=None):
        keys, values = self.project_keys_values(memory)
        return self.attend(query_input, keys, values, key_mask, return_weights=return_weights, score_bias=score_bias)


class FeedForward(keras.layers.Layer):
    """Position-wise feed-forward block with GELU (GPT-2, the backbone of XTTS's decoder)."""

    def __init__(self, d_model: int, ffn_dim: int, **kwargs):
        super().__init__(**kwargs)
        self.expand = keras.layers.Dense(ffn_dim, activation="gelu", name="expand")
        self.contract = keras.layers.Dense(d_model, name="contract")

    def call(self, x):
        return self.contract(self.expand(x))


class TransformerEncoderLayer(keras.layers.Layer):
    """Pre-LN self-attention + feed-forward block, for the text and speaker encoders."""

    def __init__(self, dims: ModelDims, **kwargs):
        super().__init__(**kwargs)
        self.attention_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="attention_norm")
        self.self_attention = MultiHeadAttention(dims.d_model, dims.num_heads, name="self_attention")
        self.feed_forward_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="feed_forward_norm")
        self.feed_forward = FeedForward(dims.d_model, dims.ffn_dim, name="feed_forward")
        self.residual_dropout = keras.layers.Dropout(dims.dropout)

    def call(self, x, key_mask=None, training=False):
        normed = self.attention_norm(x)
        x = x + self.residual_dropout(self.self_attention(normed, normed, key_mask=key_mask), training=training)
        x = x + self.residual_dropout(self.feed_forward(self.feed_forward_norm(x)), training=training)
        return x


class TransformerDecoderLayer(keras.layers.Layer):
    """Pre-LN causal self-attention, cross-attention to the text and feed-forward."""

    def __init__(self, dims: ModelDims, **kwargs):
        super().__init__(**kwargs)
        self.self_attention_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="self_attention_norm")
        self.self_attention = MultiHeadAttention(dims.d_model, dims.num_heads, name="self_attention")
        self.cross_attention_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="cross_attention_norm")
        self.cross_attention = MultiHeadAttention(dims.d_model, dims.num_heads, name="cross_attention")
        self.feed_forward_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="feed_forward_norm")
        self.feed_forward = FeedForward(dims.d_model, dims.ffn_dim, name="feed_forward")
        self.residual_dropout = keras.layers.Dropout(dims.dropout)

    def call(self, x, memory, memory_mask, training=False, attention_prior=None):
        """(output [B, S, d], cross-attention weights [B, heads, S, T] float32); `attention_prior`
        [B, 1, S, T] float32 is added to the cross-attention scores."""
        steps = _frame_count(x, 1)
        causal_mask = tf.cast(tf.linalg.band_part(tf.ones([steps, steps]), -1, 0), tf.bool)[None]
        normed = self.self_attention_norm(x)
        attended = self.self_attention(normed, normed, key_mask=causal_mask)
        x = x + self.residual_dropout(attended, training=training)
        attended, weights = self.cross_attention(
            self.cross_attention_norm(x),
            memory,
            key_mask=memory_mask[:, None, :],
            return_weights=True,
            score_bias=attention_prior,
        )
        x = x + self.residual_dropout(attended, training=training)
        x = x + self.residual_dropout(self.feed_forward(self.feed_forward_norm(x)), training=training)
        return x, weights

    def step(self, x, key_cache, value_cache, position, memory_keys, memory_values, memory_mask, attention_prior=None):
        """One decoding step at `position` (int32 scalar) with the keys/values of earlier steps cached.

        `x` [B, 1, d]; caches [B, max_steps, heads, head_dim] hold steps < position; `memory_mask`
        [B, T] bool. Returns the output, the caches with this step written at `position`, and the
        cross-attention weights [B, heads, 1, T]. Same arithmetic as `call` (inference: no dropout).
        """
        max_steps = key_cache.shape[1]
        normed = self.self_attention_norm(x)
        keys, values = self.self_attention.project_keys_values(normed)
        at_position = tf.equal(tf.range(max_steps), position)[None, :, None, None]
        key_cache = tf.where(at_position, keys, key_cache)
        value_cache = tf.where(at_position, values, value_cache)
        visible = (tf.range(max_steps) <= position)[None, None, :]
        x = x + self.self_attention.attend(normed, key_cache, value_cache, visible)
        normed = self.cross_attention_norm(x)
        attended, weights = self.cross_attention.attend(
            normed, memory_keys, memory_values, memory_mask[:, None, :], return_weights=True, score_bias=attention_prior
        )
        x = x + attended
        x = x + self.feed_forward(self.feed_forward_norm(x))
        return x, key_cache, value_cache, weights


def built_by_calling(network, *args, **kwargs):
    """`network(*args, **kwargs)`, called once eagerly to create its weights; returns its output.

    Keras builds a layer that has no `build()` by first tracing its `call` on symbolic inputs (and,
    inside that trace, each such layer it holds again) before the real call: 2.7 s of CPU for the
    tiny model against 0.8 s this way, 8.1 against 2.5 for `normal` (benchmarks/model_build.py,
    docs/performance.md; 2-core Xeon). Ours make their own weights in `__init__` and hold
    Keras layers that build from the shapes they are called with, so they are marked built first
    and the one eager call makes every weight, in the same order and under the same names.
    """
    for layer in network._flatten_layers(include_self=True, recursive=True):
        if type(layer).build is keras.layers.Layer.build:  # no build() of its own
            layer.built = True
    return network(*args, **kwargs)


class LayerStack(keras.layers.Layer):
    """Layers used in order, each held as an attribute (`layer_0`, `layer_1`, ...).

    Not a Python list: Keras 3 wraps a list attribute in a container TensorFlow's checkpointing
    does not follow, so a `tf.train.Checkpoint(model=...)` of a model that kept its layers in a
    list saved 15 of its 139 weights (the rest only through the optimizer's variable list), and a
    model restored alone was mostly untrained. Attributes are followed by both.
    """

    def __init__(self, layers, **kwargs):
        super().__init__(**kwargs)
        self.count = len(layers)
        for index, layer in enumerate(layers):
            setattr(self, f"layer_{index}", layer)
        # No weights of its own and never called: its layers are built by whoever calls them.
        self.built = True

    def __iter__(self):
        return (getattr(self, f"layer_{index}") for index in range(self.count))

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int):
        return list(self)[index]


class SpeakerEncoder(keras.layers.Layer):
    """Reference mel [B, R, n_mels] -> speaker vector [B, speaker_embedding_dim]."""

    def __init__(self, dims: ModelDims, **kwargs):
        super().__init__(**kwargs)
        self.input_projection = keras.layers.Dense(dims.d_model, name="input_projection")
        self.encoder_layers = LayerStack(
            [TransformerEncoderLayer(dims, name=f"layer_{index}") for index in range(dims.num_speaker_layers)],
            name="encoder_layers",
        )
        self.final_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="final_norm")
        # Attention pooling with one learned query: the encoder chooses which frames speak for the
        # speaker, where a mean would weigh silence and speech alike.
        self.pooling_query = self.add_weight(
            shape=(1, 1, dims.d_model), initializer="random_normal", name="pooling_query"
        )
        self.pooling_attention = MultiHeadAttention(dims.d_model, dims.num_heads, name="pooling_attention")
        self.output_projection = keras.layers.Dense(dims.speaker_embedding_dim, name="output_projection")

    def call(self, ref_mel, ref_lengths, training=False):
        frame_mask = tf.sequence_mask(ref_lengths, _frame_count(ref_mel, 1))
        x = self.input_projection(ref_mel)
        for layer in self.encoder_layers:
            x = layer(x, key_mask=frame_mask[:, None, :], training=training)
        x = self.final_norm(x)
        query = tf.tile(tf.cast(self.pooling_query, x.dtype), [tf.shape(x)[0], 1, 1])
        pooled = self.pooling_attention(query, x, key_mask=frame_mask[:, None, :])
        return self.output_projection(pooled[:, 0, :])


class Prenet(keras.layers.Layer):
    """Tacotron 2 prenet: two ReLU layers, each followed by dropout."""

    def __init__(self, units: int, dropout: float, **kwargs):
        super().__init__(**kwargs)
        self.rate = dropout
        self.hidden_layers = LayerStack(
            [keras.layers.Dense(units, activation="relu", name=f"dense_{i}") for i in range(2)], name="hidden_layers"
        )
        self.dropout = keras.layers.Dropout(dropout)

    def call(self, frames, training=False):
        x = frames
        for layer in self.hidden_layers:
            x = self.dropout(layer(x), training=training)
        return x

    def call_with_seeded_dropout(self, frames, seed):
        """The prenet with dropout from a stateless seed [2]: reproducible and XLA-friendly
        inside a `tf.while_loop`, for sampling at inference (Tacotron 2 keeps prenet dropout on then).
        """
        x = frames
        for index, layer in enumerate(self.hidden_layers):
            x = layer(x)
            if self.rate > 0:
                layer_seed = tf.stack([seed[0], seed[1] * 2 + index])
                x = tf.nn.experimental.stateless_dropout(x, rate=self.rate, seed=layer_seed)
        return x


class TextPrenet(keras.layers.Layer):
    """Convolutions over the character embeddings before the text encoder's attention layers.

    Tacotron 2's encoder (Shen et al. 2018, sec. 2.2) and Transformer-TTS's encoder pre-net
    (Li et al. 2019, sec. 3.2; ESPnet's `eprenet_conv_layers: 3`): each character is seen with its
    neighbours (kernel 5 spans two on each side), the context that turns letters into sounds
    ("th", "ee", a silent "e"), which self-attention alone learns far more slowly. Each layer is
    a convolution, layer normalisation (not batch normalisation: padded positions would enter the
    batch statistics), ReLU and dropout; padded positions are zeroed before every convolution, so
    the output does not depend on padding. A final linear projection, as ESPnet has, lets the
    residual stream start from a free linear map of the features.
    """

    def __init__(self, dims: ModelDims, **kwargs):
        super().__init__(**kwargs)
        self.convolutions = LayerStack(
            [
                keras.layers.Conv1D(dims.d_model, dims.text_prenet_kernel_size, padding="same", name=f"conv_{i}")
                for i in range(dims.text_prenet_layers)
            ],
            name="convolutions",
        )
        self.norms = LayerStack(
            [keras.layers.LayerNormalization(epsilon=1e-5, name=f"norm_{i}") for i in range(dims.text_prenet_layers)],
            name="norms",
        )
        self.dropout = keras.layers.Dropout(dims.dropout)
        self.projection = keras.layers.Dense(dims.d_model, name="projection")

    def call(self, x, token_mask, training=False):
        """`x` [B, T, d], `token_mask` [B, T, 1] bool -> [B, T, d]."""
        for convolution, norm in zip(self.convolutions, self.norms):
            x = tf.where(token_mask, x, tf.zeros_like(x))
            x = self.dropout(tf.nn.relu(norm(convolution(x))), training=training)
        return self.projection(x)


class Postnet(keras.layers.Layer):
    """Tacotron 2 postnet: 1-D convolutions with tanh predict a residual for the whole mel.

    Frames past an item's length are zeroed before every convolution, the same zeros the
    convolution's "same" padding puts past the end of the batch, so the output does not depend
    on padding or on how far a batch is padded. No batch normalisation (Tacotron 2 has it):
    batch statistics would mix padded frames into valid ones.
    """

    def __init__(self, dims: ModelDims, n_mels: int, **kwargs):
        super().__init__(**kwargs)
        kernel = dims.postnet_kernel_size
        self.convolutions = LayerStack(
            [
                keras.layers.Conv1D(dims.postnet_channels, kernel, padding="same", activation="tanh", name=f"conv_{i}")
                for i in range(dims.postnet_layers - 1)
            ],
            name="convolutions",
        )
        self.output_convolution = keras.layers.Conv1D(
            n_mels, kernel, padding="same", dtype="float32", name="output_conv"
        )
        self.dropout = keras.layers.Dropout(dims.dropout)

    def call(self, mel, frame_mask, training=False):
        """`mel` [B, F, n_mels] (silence near 0), `frame_mask` [B, F, 1] bool -> residual, float32."""
        x = tf.where(frame_mask, mel, tf.zeros_like(mel))
        for convolution in self.convolutions:
            x = self.dropout(convolution(x), training=training)
            x = tf.where(frame_mask, x, tf.zeros_like(x))
        return self.output_convolution(x)


class AcousticModel(keras.Model):
    """Text in, mel frames out, in a voice: what every acoustic decoder shares (the text encoder, the
    speaker encoder and centroids, the postnet, the mel losses, `generate`'s graph). A decoder is a
    subclass that builds its layers (`_build_decoder`) and gives `call`, `compute_loss` and
    `_generate`: `XttsModel` (autoregressive) and `duration.DurationModel`.

    The training loop lives in `xtts_cli.training`; `fit()` is not used, and `compute_loss` here
    takes the batch and the outputs of `call` rather than Keras's (x, y, y_pred).
    """

    # Its length comes from predicted durations (no stop token decides where it ends).
    paced: bool = False
    # The generated frames' buffer has a static length (a frame-by-frame decoder writes into it):
    # `generate` traces once per `max_frames`; else once for every length.
    static_frame_buffer: bool = True
    # Attributes holding weights added after runs were already written: restoring an older run's
    # checkpoint leaves them at their initial values instead of refusing it.
    weights_added_since_first: tuple[str, ...] = ()
    xla_compatible_losses = False

    def __init__(
        self,
        *,
        dims: ModelDims,
        n_mels: int,
        vocab_size: int,
        stop_positive_weight: float = 5.0,
        input_noise: float = 0.0,
        num_languages: int = 0,
        num_speakers: int = 0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if vocab_size < 2:
            raise ValueError(f"vocab_size ({vocab_size}) must be >= 2: id 0 is padding")
        self.dims = dims
        self.n_mels = n_mels
        self.vocab_size = vocab_size
        # One positive (the last frame) per clip against hundreds of negatives: weigh it up so the
        # stop probability crosses 0.5 at the end of speech instead of never.
        self.stop_positive_weight = stop_positive_weight
        # Gaussian noise (log-mel units) on the previous frames the decoder reads in training.
        self.input_noise = input_noise
        self.num_languages = num_languages
        self.num_speakers = num_speakers
        d_model = dims.d_model

        self.token_embedding = keras.layers.Embedding(vocab_size, d_model, name="token_embedding")
        # XTTS reads a [lang] token before the text; here the language's vector is added to every
        # text position, so the duration decoder's aligner has no token to give frames to.
        self.language_embedding = (
            keras.layers.Embedding(num_languages, d_model, name="language_embedding") if num_languages > 1 else None
        )
        # Each training speaker's conditioning, averaged over its clips as training sees them
        # (`update_speaker_centroids`): the voice `xtts synthesize --speaker NAME` speaks in, kept in
        # the checkpoint so a run needs no dataset to speak. "mean": replicas average their updates.
        self.speaker_centroids = self.speaker_clip_counts = None
        if num_speakers:
            self.speaker_centroids = self.add_weight(
                shape=(num_speakers, dims.speaker_embedding_dim),
                initializer="zeros",
                trainable=False,
                aggregation="mean",
                name="speaker_centroids",
            )
            self.speaker_clip_counts = self.add_weight(
                shape=(num_speakers,),
                initializer="zeros",
                trainable=False,
                aggregation="mean",
                name="speaker_clip_counts",
            )
        self.text_prenet = TextPrenet(dims, name="text_prenet") if dims.text_prenet_layers else None
        self.text_dropout = keras.layers.Dropout(dims.dropout)
        self.text_layers = LayerStack(
            [TransformerEncoderLayer(dims, name=f"text_layer_{i}") for i in range(dims.num_text_layers)],
            name="text_layers",
        )
        self.text_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="text_norm")

        self.speaker_encoder = SpeakerEncoder(dims, name="speaker_encoder")
        self._build_decoder()
        self.postnet = Postnet(dims, n_mels, name="postnet") if dims.postnet_layers else None

    def get_config(self):
        return {
            "dims": dataclasses.asdict(self.dims),
            "n_mels": self.n_mels,
            "vocab_size": self.vocab_size,
            "stop_positive_weight": self.stop_positive_weight,
            "input_noise": self.input_noise,
            "num_languages": self.num_languages,
            "num_speakers": self.num_speakers,
            "name": self.name,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["dims"] = ModelDims(**config["dims"])
        return cls(**config)

    def part_variables(self) -> dict[str, list]:
        """The variables of each part `training.freeze` may name (config.model_kinds: AcousticConfig.FREEZABLE_PARTS):
        the text encoder, the speaker encoder, the postnet, and the decoder (everything else)."""
        # `weights`, not `variables`: the dropout layers' random-number states are no part's.
        text = [self.token_embedding, self.language_embedding, self.text_prenet, self.text_layers, self.text_norm]
        parts = {
            "text_encoder": [v for layer in text if layer is not None for v in layer.weights],
            "speaker_encoder": list(self.speaker_encoder.weights),
            "postnet": list(self.postnet.weights) if self.postnet is not None else [],
        }
        named = {id(v) for variables in parts.values() for v in variables}
        parts["decoder"] = [v for v in self.weights if id(v) not in named]
        return parts

    def start_new_tables(self, new: list[str]) -> None:
        """After `transfer_weights`: a language table the base lacked (it spoke one language) starts
        at zero, so the base's language reads its text as the base did and a new one starts there."""
        if self.language_embedding is not None and any("language_embedding" in name for name in new):
            table = self.language_embedding.embeddings
            table.assign(tf.zeros_like(table))

    def freeze(self, parts) -> int:
        """Stop `parts` (names of `part_variables`) from training; returns how many variables."""
        chosen = [v for name in parts for v in self.part_variables()[name]]
        for variable in chosen:
            variable.trainable = False
        return len(chosen)

    def encode_text(self, text_ids, text_lengths, training=False, language_ids=None):
        """Text encoding [B, T, d] and its validity mask [B, T] (bool); `language_ids` [B] (int32,
        default 0) choose the language vector of a multilingual model."""
        text_mask = tf.sequence_mask(text_lengths, _frame_count(text_ids, 1))
        x = self.token_embedding(text_ids)
        x = x * tf.cast(math.sqrt(self.dims.d_model), x.dtype)
        if self.language_embedding is not None:
            if language_ids is None:
                language_ids = tf.zeros([tf.shape(text_ids)[0]], tf.int32)
            x = x + self.language_embedding(language_ids)[:, None, :]
        if self.text_prenet is not None:
            x = self.text_prenet(x, text_mask[:, :, None], training=training)
        positions = tf.range(_frame_count(text_ids, 1), dtype=tf.float32)
        x = x + tf.cast(sinusoidal_encoding(positions, self.dims.d_model), x.dtype)[None]
        x = self.text_dropout(x, training=training)
        for layer in self.text_layers:
            x = layer(x, key_mask=text_mask[:, None, :], training=training)
        return self.text_norm(x), text_mask

    def refine(self, mel_pred, mel_lengths, training=False):
        """Postnet-refined mel: `mel_pred` plus the postnet's residual over the valid frames."""
        if self.postnet is None:
            return mel_pred
        frame_mask = tf.sequence_mask(mel_lengths, _frame_count(mel_pred, 1))[:, :, None]
        # Shifted so the padding level (silence) is 0, like the convolutions' own zero padding.
        residual = self.postnet(mel_pred - MEL_PAD_VALUE, frame_mask, training=training)
        return mel_pred + residual

    def speaker_vector(self, batch, training=False):
        """The speaker conditioning [B, speaker_embedding_dim] of the batch's reference (`ref_mel`,
        `ref_lengths`), or the batch's `speaker_vector` when it carries one (a voice chosen by name)."""
        if "speaker_vector" in batch:
            return tf.cast(batch["speaker_vector"], self.compute_dtype)
        return self.speaker_encoder(batch["ref_mel"], batch["ref_lengths"], training=training)

    def update_speaker_centroids(self, speaker_ids, speaker_vectors):
        """Move each known speaker's centroid (`speaker_ids` >= 0) towards the mean of its vectors in
        the batch: an exact running mean over its first CENTROID_CLIPS clips, then an exponential one
        over about as many, so it follows the encoder as it trains. No gradient."""
        if self.speaker_centroids is None:
            return
        vectors = tf.stop_gradient(tf.cast(speaker_vectors, tf.float32))
        one_hot = tf.one_hot(speaker_ids, self.num_speakers, dtype=tf.float32)  # -1: a row of zeros
        counts = tf.reduce_sum(one_hot, axis=0)  # [S]
        sums = tf.matmul(one_hot, vectors, transpose_a=True)  # [S, D]
        seen = self.speaker_clip_counts + counts
        rate = counts / tf.maximum(tf.minimum(seen, float(CENTROID_CLIPS)), 1.0)
        means = sums / tf.maximum(counts, 1.0)[:, None]
        centroids = self.speaker_centroids + rate[:, None] * (means - self.speaker_centroids)
        self.speaker_centroids.assign(centroids)
        self.speaker_clip_counts.assign(seen)

    def speaker_centroid(self, index: int) -> tf.Tensor:
        """[1, speaker_embedding_dim]: speaker `index`'s averaged conditioning."""
        if self.speaker_centroids is None or not 0 <= index < self.num_speakers:
            raise ValueError(f"this model keeps no centroid for speaker index {index}")
        return tf.convert_to_tensor(self.speaker_centroids)[index][None]

    def decoder_steps(self, mel_lengths):
        """Decoder steps [B] int32 that cover `mel_lengths` frames: ceil(frames / r)."""
        r = self.dims.reduction_factor
        return (tf.cast(mel_lengths, tf.int32) + r - 1) // r

    def mel_losses(self, batch, outputs) -> tuple[tf.Tensor, tf.Tensor]:
        """(L1 of `mel_pred`, L1 of `mel_post` or 0) against `batch["mel"]` over the valid frames and
        bins, float32."""
        target = tf.cast(batch["mel"], tf.float32)
        frame_mask = tf.sequence_mask(batch["mel_lengths"], _frame_count(target, 1))
        valid_frames = tf.maximum(tf.reduce_sum(tf.cast(frame_mask, tf.float32)), 1.0)

        def masked_l1(prediction):
            error = tf.abs(tf.cast(prediction, tf.float32) - target)
            error = tf.where(frame_mask[:, :, None], error, 0.0)
            return tf.reduce_sum(error) / (valid_frames * self.n_mels)

        postnet_mel_loss = masked_l1(outputs["mel_post"]) if "mel_post" in outputs else tf.zeros([])
        return masked_l1(outputs["mel_pred"]), postnet_mel_loss

    def generate(
        self,
        text_ids,
        text_lengths,
        ref_mel,
        ref_lengths,
        max_frames: int,
        stop_threshold: float = 0.5,
        *,
        prenet_dropout: bool = True,
        seed: int = 0,
        min_frames: int = 1,
        attention_window: Optional[tuple[int, int]] = None,
        frame_limit: Optional[int] = None,
        steps_per_token: Optional[float] = None,
        speaker_vector=None,
        language_ids=None,
        speed: float = 1.0,
    ) -> dict[str, tf.Tensor]:
        """Synthesise log-mel frames: `mel` [B, max_frames, n_mels] float32, `lengths` [B] int32,
        `stopped` [B] bool (the stop token ended it, rather than `max_frames`), `alignment`
        [B, ceil(max_frames / r), T] and `alignment_score` [B] (its focus rate over each item's
        steps and tokens).

        The buffer is always `max_frames` long so the shape is static; frames at and past an item's
        length are `MEL_PAD_VALUE`. Postnet-refined when the model has a postnet. Called eagerly, it
        runs as a graph (traced once per max_frames / threshold / dropout / window setting, any
        input length): eager op-by-op decoding is ~35x slower (13 s against 0.4 s for 400 frames
        with the tiny preset on our CPU). Inside a `tf.function` (with `jit_compile=True` too) it is
        traced into the caller's graph.

        The voice is the reference's (`ref_mel` [B, R, n_mels], `ref_lengths` [B]) or, when given,
        `speaker_vector` [B, speaker_embedding_dim] (a speaker's centroid); `language_ids` [B] int32
        (default 0) the language of a multilingual model. `speed` (a paced decoder's: `paced`) reads
        the text that many times faster than the predicted durations say.
        """
        if speaker_vector is None:
            speaker_vector = self.speaker_encoder(
                tf.convert_to_tensor(ref_mel), tf.convert_to_tensor(ref_lengths), training=False
            )
        if language_ids is None:
            language_ids = tf.zeros([tf.shape(text_ids)[0]], tf.int32)
        window = None if attention_window is None else (int(attention_window[0]), int(attention_window[1]))
        decoding = {
            "stop_threshold": stop_threshold,
            "prenet_dropout": prenet_dropout,
            "attention_window": window,
            "prior": steps_per_token is not None,
        }
        limit = max_frames if frame_limit is None else frame_limit
        pace = 1.0 if steps_per_token is None else steps_per_token
        inputs = (text_ids, text_lengths, speaker_vector, language_ids, limit)
        # synthesis.seed takes any integer: wrapped into int32 as TensorFlow wraps one under 2**32 (a
        # larger one had crashed the conversion).
        seed = (int(seed) + 2**31) % 2**32 - 2**31
        controls = {"seed": seed, "min_frames": min_frames, "steps_per_token": pace, "speed": speed}
        if tf.executing_eagerly():
            inputs = tuple(
                tf.convert_to_tensor(value, tf.int32 if index == 4 else None) for index, value in enumerate(inputs)
            )
            controls = {
                "seed": tf.constant(seed, tf.int32),
                "min_frames": tf.constant(min_frames, tf.int32),
                "steps_per_token": tf.constant(pace, tf.float32),
                "speed": tf.constant(speed, tf.float32),
            }
            if self.static_frame_buffer:
                return self._generation_graph(inputs, controls, max_frames, decoding)(*inputs, controls)
            # A buffer whose length need not be static is a tensor: one trace for every length.
            frames = tf.constant(max_frames, tf.int32)
            return self._generation_graph(inputs, controls, None, decoding)(*inputs, controls, frames)
        return self._generate(*inputs, controls, max_frames=max_frames, decoding=decoding)

    def _generation_graph(self, inputs, controls, max_frames: Optional[int], decoding: dict):
        """`_generate` as a graph for one buffer length (`max_frames`; None: the length is an input)
        and decoding setting, traced once for every batch size and text length. Traced on the first
        call's shapes instead (`reduce_retracing`), each new buffer length was traced twice, the
        second time for any text: 8 traces of about 3 s in 10 sentences (tiny-cpu, 2 cores)."""
        # Kept outside Keras's attribute tracking (they are not layers). `setdefault`, because a
        # server's warm-up thread and its requests may ask for the same graph at once: one is kept.
        graphs = self.__dict__.setdefault("_generation_graphs", {})
        key = (max_frames, tuple(sorted(decoding.items())), tuple(value.dtype for value in inputs))
        graph = graphs.get(key)
        if graph is None:
            text_ids, text_lengths, speaker_vector, language_ids, limit = inputs
            signature = [
                tf.TensorSpec([None, None], text_ids.dtype),
                tf.TensorSpec([None], text_lengths.dtype),
                tf.TensorSpec([None, speaker_vector.shape[-1]], speaker_vector.dtype),
                tf.TensorSpec([None], language_ids.dtype),
                tf.TensorSpec([], limit.dtype),
                {name: tf.TensorSpec([], value.dtype) for name, value in controls.items()},
            ]
            if max_frames is None:
                signature.append(tf.TensorSpec([], tf.int32))

            def generate(*args):
                frames = args[-1] if max_frames is None else max_frames
                return self._generate(*args[:6], max_frames=frames, decoding=decoding)

            # No autograph: decoding loops with `tf.while_loop` itself, and converting every function
            # it calls cost about a second of the first sentence (2 cores).
            graph = graphs.setdefault(key, tf.function(generate, input_signature=signature, autograph=False))
        return graph

    def generation_traces(self) -> int:
        """How many times `generate` called eagerly has traced its graphs: once for each buffer length
        and decoding setting (a decoder whose buffer length is an input: once for each setting)."""
        graphs = self.__dict__.get("_generation_graphs", {})
        return sum(graph.experimental_get_tracing_count() for graph in graphs.values())

    def _build_decoder(self) -> None:
        """The decoder's layers, made in `__init__` between the speaker encoder and the postnet."""
        raise NotImplementedError

    def _generate(
        self, text_ids, text_lengths, speaker_vector, language_ids, frame_limit, controls, *, max_frames, decoding
    ):
        """`generate`'s work, traced: see `generate` for the outputs. `controls` (seed, min_frames,
        steps_per_token: tensors) and `decoding` (stop_threshold, prenet_dropout, attention_window,
        prior: settings fixed per trace) steer a decoder that decides frame by frame."""
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class _DecodeContext:
    """What every step of one `decode_autoregressive` call reads and no step changes."""

    batch_size: tf.Tensor  # int32 scalar
    max_steps: int  # ceil(max_frames / r): the buffers' length in decoder steps
    limit: tf.Tensor  # int32 scalar: no frame at or past it is generated
    compute_dtype: tf.DType  # the decoder's activations' (float16 under mixed precision)
    speaker_vector: tf.Tensor  # [B, speaker_embedding_dim]
    memory_keys_values: list  # per decoder layer, the cross-attention's (keys, values) of the text
    text_mask: tf.Tensor  # [B, T] bool, True on each item's tokens
    token_index: tf.Tensor  # [1, T] int32, 0 .. T - 1
    last_token: tf.Tensor  # [B] int32, each item's last token
    seed: tf.Tensor  # int32 scalar, with the step the prenet dropout's seed
    prenet_dropout: bool
    stop_threshold: float
    min_frames: int
    attention_window: Optional[tuple[int, int]]
    steps_per_token: Optional[tf.Tensor]
    teacher_inputs: Optional[tf.Tensor]  # [B, max_steps, n_mels]: step s reads frame s*r - 1 of the teacher


class _DecodeState(NamedTuple):
    """What the decoding loop carries from one step to the next."""

    step: tf.Tensor  # int32 scalar: steps run so far
    previous_frame: tf.Tensor  # [B, n_mels]: the frame the next step reads
    finished: tf.Tensor  # [B] bool: the stop token has ended the item
    lengths: tf.Tensor  # [B] int32: an item's frame count once it has stopped, else the limit
    position: tf.Tensor  # [B] int32: the furthest token the attention has reached (never moves back)
    mel_buffer: tf.Tensor  # [B, max_steps, r * n_mels]
    stop_buffer: tf.Tensor  # [B, max_steps, r]
    alignment_buffer: tf.Tensor  # [B, max_steps, T]
    caches: list  # per decoder layer, its self-attention (keys, values) [B, max_steps, heads, head_dim]


class XttsModel(AcousticModel):
    """XTTS-style text- and speaker-conditioned autoregressive mel decoder (see module docstring).

    The training loop lives in `xtts_cli.training`; `fit()` is not used, and `compute_loss` here
    takes the batch and the outputs of `call` rather than Keras's (x, y, y_pred).
    """

    def _build_decoder(self) -> None:
        """The autoregressive decoder's layers."""
        dims, n_mels = self.dims, self.n_mels
        d_model, r = dims.d_model, dims.reduction_factor
        self.go_frame = self.add_weight(shape=(n_mels,), initializer="zeros", name="go_frame")
        self.prenet = Prenet(dims.prenet_dim, dims.prenet_dropout, name="prenet")
        self.prenet_projection = keras.layers.Dense(d_model, name="prenet_projection")
        self.speaker_projection = keras.layers.Dense(d_model, name="speaker_projection")
        self.decoder_dropout = keras.layers.Dropout(dims.dropout)
        self.decoder_layers = LayerStack(
            [TransformerDecoderLayer(dims, name=f"decoder_layer_{i}") for i in range(dims.num_decoder_layers)],
            name="decoder_layers",
        )
        self.decoder_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="decoder_norm")
        # float32 heads: the outputs and the losses built on them stay float32 under mixed precision.
        self.mel_projection = keras.layers.Dense(r * n_mels, dtype="float32", name="mel_projection")
        self.stop_projection = keras.layers.Dense(r, dtype="float32", name="stop_projection")

    def _decoder_inputs(self, prenet_output, speaker_vector, positions, training=False):
        x = self.prenet_projection(prenet_output)
        x = x + self.speaker_projection(speaker_vector)[:, None, :]
        x = x + tf.cast(sinusoidal_encoding(positions, self.dims.d_model), x.dtype)[None]
        return self.decoder_dropout(x, training=training)

    def call(self, batch, training=False, decoder_input_mel=None, attention_prior_strength=None):
        """Teacher-forced outputs: `mel_pred` [B, F, n_mels], `stop_logits` [B, F], `mel_post` (with a
        postnet) and `cross_attention` [B, layers x heads, ceil(F / r), T] float32, every decoder
        layer's heads in order (layer 0's first).

        `decoder_input_mel` [B, F, n_mels], when given, is what the decoder reads as its previous
        frames instead of `batch["mel"]` (its own earlier prediction, in self-conditioned training).
        `attention_prior_strength` (a float32 scalar, 0 for none) scales the diagonal attention
        prior (`model/alignment.py`) added to every cross-attention's scores, from each item's own
        text and mel lengths.
        """
        r, n_mels = self.dims.reduction_factor, self.n_mels
        memory, text_mask = self.encode_text(
            batch["text_ids"], batch["text_lengths"], training, language_ids=batch.get("language_ids")
        )
        speaker_vector = self.speaker_vector(batch, training=training)

        mel = batch["mel"] if decoder_input_mel is None else tf.cast(decoder_input_mel, batch["mel"].dtype)
        frames = _frame_count(mel, 1)
        steps = -(-frames // r)
        padded = tf.pad(mel, [[0, 0], [0, steps * r - frames], [0, 0]], constant_values=MEL_PAD_VALUE)
        grouped = tf.reshape(padded, [-1, steps, r * n_mels])
        # Teacher forcing: step s reads the last frame of step s - 1; step 0 reads the go frame.
        go_frames = tf.tile(tf.cast(self.go_frame, mel.dtype)[None, None, :], [tf.shape(mel)[0], 1, 1])
        previous_frames = tf.concat([go_frames, grouped[:, :-1, -n_mels:]], axis=1)
        if training and self.input_noise > 0:
            previous_frames += tf.random.normal(tf.shape(previous_frames), stddev=self.input_noise, dtype=mel.dtype)

        x = self._decoder_inputs(
            self.prenet(previous_frames, training=training),
            speaker_vector,
            tf.range(steps, dtype=tf.float32),
            training,
        )
        prior = None
        if attention_prior_strength is not None:
            from xtts_cli.model.alignment import diagonal_log_prior

            log_prior = diagonal_log_prior(
                batch["text_lengths"],
                self.decoder_steps(batch["mel_lengths"]),
                steps,
                _frame_count(batch["text_ids"], 1),
                ATTENTION_PRIOR_WIDTH,
            )
            prior = tf.cast(attention_prior_strength, tf.float32) * log_prior[:, None]
        attention = []
        for layer in self.decoder_layers:
            x, weights = layer(x, memory, text_mask, training=training, attention_prior=prior)
            attention.append(weights)
        x = self.decoder_norm(x)
        mel_pred = tf.reshape(self.mel_projection(x), [-1, steps * r, n_mels])[:, :frames]
        stop_logits = tf.reshape(self.stop_projection(x), [-1, steps * r])[:, :frames]
        outputs = {
            "mel_pred": mel_pred,
            "stop_logits": stop_logits,
            "cross_attention": tf.concat(attention, axis=1),
            "speaker_vector": speaker_vector,
        }
        if self.postnet is not None:
            outputs["mel_post"] = self.refine(mel_pred, batch["mel_lengths"], training)
        return outputs

    def compute_loss(self, batch, outputs, *, attention_weight=0.0, attention_sigma: float = 0.4):
        """Masked losses, float32: L1 on the mel before and after the postnet, weighted BCE on stop,
        and the guided-attention loss on the cross-attention (`model/alignment.py`).

        The stop target is 1 on the last valid frame (Tacotron 2); frames past `mel_lengths` count
        nowhere. Returns `loss` (the sum to minimise: the mel and stop terms plus
        `attention_weight` x `attention_loss`), `mel_loss`, `postnet_mel_loss`, `stop_loss`,
        `attention_loss` and `alignment_score` (the focus rate, a measure, not minimised).
        """
        from xtts_cli.model.alignment import alignment_score, guided_attention_loss

        lengths = tf.cast(batch["mel_lengths"], tf.int32)
        frames = _frame_count(batch["mel"], 1)
        frame_mask = tf.sequence_mask(lengths, frames)
        valid_frames = tf.maximum(tf.reduce_sum(tf.cast(frame_mask, tf.float32)), 1.0)
        mel_loss, postnet_mel_loss = self.mel_losses(batch, outputs)
        stop_target = tf.cast(tf.equal(tf.range(frames)[None, :], (lengths - 1)[:, None]), tf.float32)
        stop_bce = tf.nn.weighted_cross_entropy_with_logits(
            labels=stop_target,
            logits=tf.cast(outputs["stop_logits"], tf.float32),
            pos_weight=self.stop_positive_weight,
        )
        stop_loss = tf.reduce_sum(tf.where(frame_mask, stop_bce, 0.0)) / valid_frames
        attention, text_lengths = outputs["cross_attention"], batch["text_lengths"]
        steps = self.decoder_steps(lengths)
        attention_loss = guided_attention_loss(attention, text_lengths, steps, attention_sigma)
        return {
            "loss": mel_loss + postnet_mel_loss + stop_loss + tf.cast(attention_weight, tf.float32) * attention_loss,
            "mel_loss": mel_loss,
            "postnet_mel_loss": postnet_mel_loss,
            "stop_loss": stop_loss,
            "attention_loss": attention_loss,
            "alignment_score": alignment_score(attention, text_lengths, steps),
        }

    def decode_autoregressive(
        self,
        text_ids,
        text_lengths,
        ref_mel,
        ref_lengths,
        max_frames: int,
        stop_threshold: float = 0.5,
        *,
        prenet_dropout: bool = True,
        seed=0,
        min_frames: int = 1,
        attention_window: Optional[tuple[int, int]] = None,
        teacher_mel=None,
        frame_limit=None,
        steps_per_token=None,
        speaker_vector=None,
        language_ids=None,
    ) -> dict[str, tf.Tensor]:
        """Decoder output without the postnet: `mel_pred` [B, max_frames, n_mels], `stop_logits`
        [B, max_frames], `lengths` [B] int32, `stopped` [B] bool (the stop token ended the item),
        `alignment` [B, ceil(max_frames / r), T] (cross-attention averaged over every layer and
        head; zero past an item's end) and `steps` (decoder steps run, int32 scalar).

        A `tf.while_loop` over at most ceil(max_frames / r) steps with a key/value cache per
        decoder layer (fixed-size buffers, so it compiles with XLA), ending when every item's stop
        probability has exceeded `stop_threshold`. An item's length is the index of the first such
        frame + 1; frames past it are `MEL_PAD_VALUE`. `prenet_dropout` keeps the prenet's dropout
        on, as Tacotron 2 does at inference, seeded by `seed` and the step. A stop before
        `min_frames` is ignored (ESPnet's `minlenratio`): an under-trained stop head otherwise
        ends a sentence after a few frames.

        `attention_window` (back, ahead) constrains the cross-attention of every layer to the
        tokens from `back` before to `ahead` after the furthest token the alignment has reached,
        which only moves forward (ESPnet's Tacotron 2 attention constraint, applied to a
        transformer): speech reads text once and in order, and a free-running decoder that
        loses its place can then neither skip ahead nor read a word twice.

        `steps_per_token` (a float32 scalar), when given, adds the diagonal attention prior the
        model may have trained with, centred where a sentence read at that pace would be.

        `frame_limit` (an int or int32 scalar tensor <= max_frames) ends generation earlier than
        the buffer's `max_frames`: the buffer's size is part of the traced graph, the limit is not,
        so one graph serves sentences of every length.

        `teacher_mel` [B, F >= max_frames, n_mels] feeds the decoder the true previous frames
        instead of its own (teacher forcing through the cached path, which must then give what
        `call` gives).

        `speaker_vector` [B, speaker_embedding_dim], when given, is the voice instead of the
        reference (`ref_mel` and `ref_lengths` may then be None); `language_ids` [B] the language.
        """
        if max_frames < 1:
            raise ValueError(f"max_frames ({max_frames}) must be >= 1")
        if speaker_vector is None:
            speaker_vector = self.speaker_encoder(ref_mel, ref_lengths, training=False)
        context = self._decoding_context(
            text_ids,
            text_lengths,
            language_ids,
            speaker_vector,
            max_frames,
            frame_limit,
            teacher_mel,
            seed=seed,
            prenet_dropout=prenet_dropout,
            stop_threshold=stop_threshold,
            min_frames=min_frames,
            attention_window=attention_window,
            steps_per_token=steps_per_token,
        )
        # A tuple of loop variables reaches the body as arguments: the state travels in a list of one.
        (final,) = tf.while_loop(
            lambda state: self._decoding_continues(state, context),
            lambda state: [self._decode_step(state, context)],
            [self._initial_decode_state(context)],
            maximum_iterations=context.max_steps,
        )
        return self._decoded_outputs(final, context, max_frames)

    def _decoding_context(
        self, text_ids, text_lengths, language_ids, speaker, max_frames, frame_limit, teacher_mel, seed, **settings
    ) -> _DecodeContext:
        """Everything the decoding steps read, computed once: the encoded text, the voice
        (`speaker`, its speaker vector), the frame limit, the teacher's frames, the dropout seed
        and the fixed `settings` (prenet_dropout, stop_threshold, min_frames, attention_window,
        steps_per_token)."""
        limit = tf.constant(max_frames, tf.int32)
        if frame_limit is not None:
            limit = tf.minimum(tf.cast(frame_limit, tf.int32), limit)
        memory, text_mask = self.encode_text(text_ids, text_lengths, training=False, language_ids=language_ids)
        max_steps = -(-max_frames // self.dims.reduction_factor)
        return _DecodeContext(
            batch_size=tf.shape(text_ids)[0],
            max_steps=max_steps,
            limit=limit,
            compute_dtype=memory.dtype,
            speaker_vector=speaker,
            # The text's keys and values are the same at every step: projected once, here.
            memory_keys_values=[layer.cross_attention.project_keys_values(memory) for layer in self.decoder_layers],
            text_mask=text_mask,
            token_index=tf.range(tf.shape(text_ids)[1])[None, :],
            last_token=tf.cast(text_lengths, tf.int32) - 1,
            teacher_inputs=None if teacher_mel is None else self._teacher_step_inputs(teacher_mel, max_steps),
            seed=tf.cast(seed, tf.int32),
            **settings,
        )

    def _teacher_step_inputs(self, teacher_mel, max_steps: int):
        """The frame each step reads under teacher forcing, [B, max_steps, n_mels]: the last true
        frame of the step before (padded with `MEL_PAD_VALUE` past the teacher's end)."""
        r = self.dims.reduction_factor
        teacher = tf.cast(teacher_mel, tf.float32)[:, : max_steps * r]
        teacher = tf.pad(
            teacher, [[0, 0], [0, max_steps * r - tf.shape(teacher)[1]], [0, 0]], constant_values=MEL_PAD_VALUE
        )
        return tf.reshape(teacher, [tf.shape(teacher)[0], max_steps, r, self.n_mels])[:, :, -1]

    def _initial_decode_state(self, context: _DecodeContext) -> _DecodeState:
        """Step 0: every item reads the go frame, nothing has stopped, the buffers are zero."""
        dims, r, n_mels = self.dims, self.dims.reduction_factor, self.n_mels
        batch_size, tokens = context.batch_size, tf.shape(context.token_index)[1]
        empty_cache = tf.zeros([batch_size, context.max_steps, dims.num_heads, dims.head_dim], context.compute_dtype)
        return _DecodeState(
            step=tf.constant(0, tf.int32),
            previous_frame=tf.tile(tf.cast(self.go_frame, tf.float32)[None, :], [batch_size, 1]),
            finished=tf.zeros([batch_size], tf.bool),
            lengths=tf.fill([batch_size], context.limit),
            position=tf.zeros([batch_size], tf.int32),
            mel_buffer=tf.zeros([batch_size, context.max_steps, r * n_mels], tf.float32),
            stop_buffer=tf.zeros([batch_size, context.max_steps, r], tf.float32),
            alignment_buffer=tf.zeros([batch_size, context.max_steps, tokens], tf.float32),
            caches=[(empty_cache, empty_cache) for _ in self.decoder_layers],
        )

    def _decoding_continues(self, state: _DecodeState, context: _DecodeContext):
        """Another step is due: the buffer and the limit have room, and some item has not stopped."""
        r = self.dims.reduction_factor
        return (
            (state.step < context.max_steps)
            & (state.step * r < context.limit)
            & tf.logical_not(tf.reduce_all(state.finished))
        )

    def _decode_step(self, state: _DecodeState, context: _DecodeContext) -> _DecodeState:
        """One decoder step: read the previous frame, predict the next r frames and their stop
        logits, record them, and note which items stopped."""
        r, n_mels, step = self.dims.reduction_factor, self.n_mels, state.step
        frames_in = state.previous_frame[:, None, :]
        if context.prenet_dropout:
            prenet_output = self.prenet.call_with_seeded_dropout(frames_in, tf.stack([context.seed, step]))
        else:
            prenet_output = self.prenet(frames_in, training=False)
        x = self._decoder_inputs(prenet_output, context.speaker_vector, tf.cast(step, tf.float32)[None])
        x, caches, attended = self._decoder_layers_step(x, state, context)
        attended = tf.where(state.finished[:, None], 0.0, attended)
        peak = tf.argmax(attended, axis=1, output_type=tf.int32)
        # The position only moves forward, and never past the item's last token.
        position = tf.where(
            state.finished, state.position, tf.minimum(tf.maximum(state.position, peak), context.last_token)
        )
        x = self.decoder_norm(x)
        step_frames = tf.reshape(self.mel_projection(x), [context.batch_size, r * n_mels])
        step_stop_logits = tf.reshape(self.stop_projection(x), [context.batch_size, r])
        at_step = tf.equal(tf.range(context.max_steps), step)[None, :, None]
        finished, lengths = self._record_stops(step_stop_logits, state, context)
        if context.teacher_inputs is not None:
            previous_frame = context.teacher_inputs[:, step]
        else:
            previous_frame = step_frames[:, -n_mels:]
        return _DecodeState(
            step=step + 1,
            previous_frame=previous_frame,
            finished=finished,
            lengths=lengths,
            position=position,
            mel_buffer=tf.where(at_step, step_frames[:, None, :], state.mel_buffer),
            stop_buffer=tf.where(at_step, step_stop_logits[:, None, :], state.stop_buffer),
            alignment_buffer=tf.where(at_step, attended[:, None, :], state.alignment_buffer),
            caches=caches,
        )

    def _decoder_layers_step(self, x, state: _DecodeState, context: _DecodeContext):
        """Run the step's input `x` [B, 1, d] through every decoder layer with its cache. Returns
        the output, the updated caches and the cross-attention [B, T] averaged over layers and heads.
        """
        memory_mask, step_prior = self._step_text_focus(state, context)
        caches, step_weights = [], []
        for layer, (key_cache, value_cache), (memory_keys, memory_values) in zip(
            self.decoder_layers, state.caches, context.memory_keys_values
        ):
            x, key_cache, value_cache, weights = layer.step(
                x, key_cache, value_cache, state.step, memory_keys, memory_values, memory_mask, step_prior
            )
            caches.append((key_cache, value_cache))
            step_weights.append(weights[:, :, 0, :])
        return x, caches, tf.reduce_mean(tf.concat(step_weights, axis=1), axis=1)

    def _step_text_focus(self, state: _DecodeState, context: _DecodeContext):
        """Where this step's cross-attention may look: the tokens it may attend to, [B, T] bool
        (the attention window around the position, when set), and the score bias of the diagonal
        prior [B, 1, 1, T] float32 (None without `steps_per_token`)."""
        step_prior = None
        if context.steps_per_token is not None:
            # The training prior's diagonal for a sentence read at the given pace.
            centre = (tf.cast(state.step, tf.float32) + 0.5) / context.steps_per_token - 0.5
            offsets = tf.cast(context.token_index, tf.float32) - centre
            step_prior = (-tf.square(offsets) / (2.0 * ATTENTION_PRIOR_WIDTH**2))[:, None, None, :]
        memory_mask = context.text_mask
        if context.attention_window is not None:
            back, ahead = context.attention_window
            token_index, position = context.token_index, state.position[:, None]
            memory_mask = memory_mask & (token_index >= position - back) & (token_index <= position + ahead)
        return memory_mask, step_prior

    def _record_stops(self, step_stop_logits, state: _DecodeState, context: _DecodeContext):
        """`finished` and `lengths` after a step whose stop logits are `step_stop_logits` [B, r]:
        an item stops at its first frame over the threshold, counting only frames from
        `min_frames` on and before the limit."""
        r = self.dims.reduction_factor
        frame_index = state.step * r + tf.range(r)
        allowed = (frame_index >= context.min_frames - 1) & (frame_index < context.limit)
        over_threshold = (tf.sigmoid(step_stop_logits) > context.stop_threshold) & allowed[None, :]
        stops_now = tf.reduce_any(over_threshold, axis=1)
        first_stop = tf.argmax(tf.cast(over_threshold, tf.int32), axis=1, output_type=tf.int32)
        lengths = tf.where(stops_now & ~state.finished, state.step * r + first_stop + 1, state.lengths)
        return state.finished | stops_now, lengths

    def _decoded_outputs(self, final: _DecodeState, context: _DecodeContext, max_frames: int) -> dict[str, tf.Tensor]:
        """`decode_autoregressive`'s outputs from the loop's last state: the buffers cut to
        `max_frames` and blanked past each item's length."""
        r, n_mels, max_steps = self.dims.reduction_factor, self.n_mels, context.max_steps
        stopped = final.finished & (final.lengths <= context.limit)
        lengths = tf.minimum(final.lengths, context.limit)
        frame_mask = tf.sequence_mask(lengths, max_frames)
        mel_pred = tf.reshape(final.mel_buffer, [context.batch_size, max_steps * r, n_mels])[:, :max_frames]
        mel_pred = tf.where(frame_mask[:, :, None], mel_pred, MEL_PAD_VALUE)
        stop_logits = tf.reshape(final.stop_buffer, [context.batch_size, max_steps * r])[:, :max_frames]
        step_mask = tf.sequence_mask(self.decoder_steps(lengths), max_steps)
        return {
            "mel_pred": mel_pred,
            "stop_logits": stop_logits,
            "lengths": lengths,
            "stopped": stopped,
            "alignment": tf.where(step_mask[:, :, None], final.alignment_buffer, 0.0),
            "steps": final.step,
        }

    def _generate(
        self, text_ids, text_lengths, speaker_vector, language_ids, frame_limit, controls, *, max_frames, decoding
    ):
        from xtts_cli.model.alignment import focus_rate

        decoded = self.decode_autoregressive(
            text_ids,
            text_lengths,
            None,
            None,
            max_frames,
            decoding["stop_threshold"],
            prenet_dropout=decoding["prenet_dropout"],
            seed=controls["seed"],
            min_frames=controls["min_frames"],
            attention_window=decoding["attention_window"],
            frame_limit=frame_limit,
            steps_per_token=controls["steps_per_token"] if decoding["prior"] else None,
            speaker_vector=speaker_vector,
            language_ids=language_ids,
        )
        lengths = decoded["lengths"]
        mel = tf.cast(self.refine(decoded["mel_pred"], lengths, training=False), tf.float32)
        mel = tf.where(tf.sequence_mask(lengths, max_frames)[:, :, None], mel, MEL_PAD_VALUE)
        alignment = decoded["alignment"]
        score = focus_rate(alignment[:, None], text_lengths, self.decoder_steps(lengths))[:, 0]
        return {
            "mel": mel,
            "lengths": lengths,
            "stopped": decoded["stopped"],
            "alignment": alignment,
            "alignment_score": score,
        }


def dummy_batch(*, n_mels: int, batch_size: int = 1, text_length: int = 8, mel_frames: int = 8, ref_frames: int = 8):
    """A minimal valid batch (all lengths full) used to build the weights."""
    return {
        "text_ids": tf.ones([batch_size, text_length], tf.int32),
        "text_lengths": tf.fill([batch_size], text_length),
        "mel": tf.fill([batch_size, mel_frames, n_mels], MEL_PAD_VALUE),
        "mel_lengths": tf.fill([batch_size], mel_frames),
        "ref_mel": tf.fill([batch_size, ref_frames, n_mels], MEL_PAD_VALUE),
        "ref_lengths": tf.fill([batch_size], ref_frames),
    }
