"""The vocoder kind: mel frames to a waveform (`model.kind: vocoder`, the `vocoder` config section).

The network is a Vocos-style generator: ConvNeXt blocks over the mel frames (no upsampling: every
layer runs at the frame rate, which is why it is fast on a CPU) and a head that predicts each
frame's STFT, magnitude and phase, turned into samples by the inverse STFT (Siuzdenovskii 2023,
"Vocos", arXiv 2306.00814). The framing is the feature pipeline's (`xtts_cli.data.features`,
centred, librosa's `center=True`), the same as Griffin-Lim's (`model/vocoder.py`): F frames give
(F - 1) * hop_length samples, so a segment of S samples, whose mel has 1 + S // hop frames, comes
back as S samples.

Its step reads the pipeline's audio (any corpus layout, cache or precompute store the acoustic
model reads), crops a random segment of `model.segment_frames` frames from each clip on the
model device, computes the segment's mel exactly as the acoustic model's features are computed,
and trains the generator to give the segment back:

- the L1 distance of the log-mels (HiFi-GAN, Vocos: weight 45) and the multi-resolution STFT
  loss (spectral convergence plus log-magnitude L1, Parallel WaveGAN), always;
- from `model.adversarial_start_step`, least-squares GAN losses against the multi-period
  (HiFi-GAN) and multi-resolution (UnivNet) discriminators, as Vocos trains with them, with
  feature matching, and the discriminators' own update in the same step (their optimizer is the
  second one the checkpoint saves).

This module imports TensorFlow (its networks are Keras classes); the registry imports it only
when a config names the kind.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional

import keras
import numpy as np
import tensorflow as tf

from xtts_cli.data.features import as_values, log_mel
from xtts_cli.kinds.base import KindContext
from xtts_cli.kinds.optimization import build_optimizer, steps_taken
from xtts_cli.model.transfer import Transferred, transfer_weights
from xtts_cli.model.xtts import LayerStack, built_by_calling
from xtts_cli.speech.synthesis import within_full_scale, write_wav
from xtts_cli.speech.vocoding import Vocoder, load_audio, mel_of

if TYPE_CHECKING:
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data.text import Tokenizer

__all__ = ["VOCODER", "Discriminators", "VocoderKind", "VocosGenerator", "build_generator", "inverse_stft"]

# The head's log-magnitude is clipped to these before exp. Above: Vocos clips the magnitude at 1e2,
# so an early step's large output cannot overflow the inverse STFT. Below: silence pushed the
# magnitudes of whole frames under float32's range (exp(-104) is 0), and a frame of exact zeros
# made the losses' magnitudes sqrt(0), whose gradient is a NaN (step 1,618 of a CPU run).
MAX_LOG_MAGNITUDE = math.log(1e2)
MIN_LOG_MAGNITUDE = math.log(1e-7)


def _window(n_fft: int, win_length: int) -> tf.Tensor:
    """Periodic Hann of `win_length` centred in `n_fft` (the analysis window of the features)."""
    window = tf.signal.hann_window(win_length, periodic=True, dtype=tf.float32)
    left = (n_fft - win_length) // 2
    return tf.pad(window, [[left, n_fft - win_length - left]])


def inverse_stft(spectrum: tf.Tensor, *, n_fft: int, hop_length: int, win_length: int) -> tf.Tensor:
    """[..., F, n_fft // 2 + 1] complex64 -> [..., (F - 1) * hop_length] float32: windowed
    overlap-add divided by the window's summed square (librosa.istft, centred)."""
    window = _window(n_fft, win_length)
    frames = tf.signal.irfft(spectrum, fft_length=[n_fft]) * window
    signal = tf.signal.overlap_and_add(frames, hop_length)
    count = tf.shape(spectrum)[-2]
    envelope = tf.signal.overlap_and_add(tf.tile(tf.square(window)[None], [count, 1]), hop_length)
    envelope = tf.where(envelope > 1e-10, envelope, 1.0)
    half = n_fft // 2
    return (signal / envelope)[..., half : tf.shape(signal)[-1] - half]


class ConvNeXtBlock(keras.layers.Layer):
    """Depthwise convolution (kernel 7), layer norm, pointwise up, GELU, pointwise down, scaled
    residual (ConvNeXt, Liu et al. 2022; Vocos's block, without the 2-D downsampling)."""

    def __init__(self, dim: int, width: int, layer_scale: float, **kwargs):
        super().__init__(**kwargs)
        self.depthwise = keras.layers.DepthwiseConv1D(7, padding="same")
        self.norm = keras.layers.LayerNormalization(epsilon=1e-6)
        self.up = keras.layers.Dense(width)
        self.down = keras.layers.Dense(dim)
        self.layer_scale = layer_scale

    def build(self, input_shape):
        self.gamma = self.add_weight(
            shape=(input_shape[-1],), initializer=keras.initializers.Constant(self.layer_scale), name="gamma"
        )
        super().build(input_shape)

    def call(self, x):
        h = self.down(keras.activations.gelu(self.up(self.norm(self.depthwise(x)))))
        return x + tf.cast(self.gamma, h.dtype) * h


class VocosGenerator(keras.Model):
    """log-mel [B, F, n_mels] -> audio [B, (F - 1) * hop_length] float32 in [-1, 1]-ish."""

    weights_added_since_first: tuple[str, ...] = ()  # every run's checkpoint holds all its weights

    def __init__(
        self,
        *,
        n_mels: int,
        n_fft: int,
        hop_length: int,
        win_length: int,
        dim: int,
        width: int,
        num_layers: int,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.n_mels, self.n_fft, self.hop_length, self.win_length = n_mels, n_fft, hop_length, win_length
        self.embed = keras.layers.Conv1D(dim, 7, padding="same")
        self.norm = keras.layers.LayerNormalization(epsilon=1e-6)
        self.blocks = LayerStack(
            [ConvNeXtBlock(dim, width, 1.0 / num_layers, name=f"block_{i}") for i in range(num_layers)]
        )
        self.final_norm = keras.layers.LayerNormalization(epsilon=1e-6)
        # float32 whatever the policy: exp, cos and the inverse FFT want the range.
        self.head = keras.layers.Dense(n_fft + 2, dtype="float32")

    def spectrum(self, mel, training=False):
        """The predicted STFT [B, F, n_fft // 2 + 1] complex64."""
        x = self.norm(self.embed(mel))
        for block in self.blocks:
            x = block(x)
        out = self.head(self.final_norm(x))
        log_magnitude, phase = tf.split(out, 2, axis=-1)
        magnitude = tf.exp(tf.clip_by_value(log_magnitude, MIN_LOG_MAGNITUDE, MAX_LOG_MAGNITUDE))
        return tf.complex(magnitude * tf.cos(phase), magnitude * tf.sin(phase))

    def call(self, mel, training=False):
        return inverse_stft(
            self.spectrum(mel, training=training),
            n_fft=self.n_fft,
            hop_length=self.hop_length,
            win_length=self.win_length,
        )


def build_generator(vocoder, data) -> VocosGenerator:
    """The generator for a config's `vocoder` and `data` sections, with its weights built."""
    generator = VocosGenerator(
        n_mels=data.n_mels,
        n_fft=data.n_fft,
        hop_length=data.hop_length,
        win_length=data.win_length,
        dim=vocoder.dim,
        width=vocoder.block_width,
        num_layers=vocoder.num_layers,
        name="vocoder",
    )
    built_by_calling(generator, tf.zeros([1, 4, data.n_mels]), training=False)
    return generator


LEAK = 0.1  # LeakyReLU slope of every discriminator layer (HiFi-GAN)


class PeriodDiscriminator(keras.layers.Layer):
    """The waveform folded into [samples / period, period] and judged by 2-D convolutions along
    time, one column per phase of the period (HiFi-GAN's sub-discriminator)."""

    def __init__(self, period: int, channels: int, **kwargs):
        super().__init__(**kwargs)
        self.period = period
        widths = [channels, 4 * channels, 16 * channels, 32 * channels]
        convs = [keras.layers.Conv2D(w, (5, 1), strides=(3, 1), padding="same") for w in widths]
        self.convs = LayerStack([*convs, keras.layers.Conv2D(32 * channels, (5, 1), padding="same")])
        self.out = keras.layers.Conv2D(1, (3, 1), padding="same", dtype="float32")

    def call(self, audio):
        length = tf.shape(audio)[1]
        pad = (self.period - length % self.period) % self.period
        x = tf.pad(audio, [[0, 0], [0, pad]], mode="REFLECT")
        x = tf.reshape(x, [tf.shape(x)[0], -1, self.period, 1])
        features = []
        for conv in self.convs:
            x = tf.nn.leaky_relu(conv(x), LEAK)
            features.append(x)
        return self.out(x), features


class ResolutionDiscriminator(keras.layers.Layer):
    """The magnitude spectrogram at one resolution, judged by 2-D convolutions over time and
    frequency (UnivNet's multi-resolution discriminator)."""

    def __init__(self, resolution: tuple[int, int, int], channels: int, **kwargs):
        super().__init__(**kwargs)
        self.n_fft, self.hop, self.window = resolution
        convs = [keras.layers.Conv2D(channels, (3, 9), padding="same")]
        convs += [keras.layers.Conv2D(channels, (3, 9), strides=(1, 2), padding="same") for _ in range(3)]
        self.convs = LayerStack([*convs, keras.layers.Conv2D(channels, (3, 3), padding="same")])
        self.out = keras.layers.Conv2D(1, (3, 3), padding="same", dtype="float32")

    def call(self, audio):
        spectrum = tf.signal.stft(
            tf.cast(audio, tf.float32), self.window, self.hop, fft_length=self.n_fft, pad_end=True
        )
        # sqrt(|z|^2 + eps), not tf.abs: a finite gradient where a bin is exactly 0 (silence).
        magnitude = tf.sqrt(tf.math.real(spectrum) ** 2 + tf.math.imag(spectrum) ** 2 + 1e-12)
        x = tf.cast(magnitude[..., None], self.compute_dtype)
        features = []
        for conv in self.convs:
            x = tf.nn.leaky_relu(conv(x), LEAK)
            features.append(x)
        return self.out(x), features


class Discriminators(keras.Model):
    """Every sub-discriminator: `call(audio)` -> (scores, features), one entry per
    sub-discriminator, each features entry a list of its layers' activations."""

    def __init__(self, periods, resolutions, channels: int, **kwargs):
        super().__init__(**kwargs)
        judges = [PeriodDiscriminator(p, channels, name=f"period_{p}") for p in periods]
        judges += [ResolutionDiscriminator(tuple(r), channels, name=f"resolution_{r[0]}") for r in resolutions]
        self.judges = LayerStack(judges)

    def call(self, audio):
        scores, features = [], []
        for judge in self.judges:
            score, maps = judge(audio)
            scores.append(score)
            features.append(maps)
        return scores, features


_EPSILON = 1e-7


def crop_segments(audio, lengths, samples: int, seed=None):
    """A segment of `samples` from each clip [B, S] (its own length `lengths` [B]): at a random
    start drawn from `seed` (a stateless seed), or without one from the clip's middle; a clip
    shorter than `samples` starts at 0 and is zero-padded."""
    audio = tf.pad(audio, [[0, 0], [0, tf.maximum(samples - tf.shape(audio)[1], 0)]])
    room = tf.maximum(tf.cast(lengths, tf.int32) - samples, 0)
    if seed is None:
        starts = room // 2
    else:
        draw = tf.random.stateless_uniform(tf.shape(room), seed, dtype=tf.float32)
        starts = tf.cast(tf.floor(draw * tf.cast(room + 1, tf.float32)), tf.int32)
    positions = starts[:, None] + tf.range(samples)[None, :]
    segments = tf.gather(audio, positions, batch_dims=1)
    return tf.where(positions < tf.cast(lengths, tf.int32)[:, None], segments, 0.0)


def stft_loss(real, fake, resolutions):
    """Multi-resolution STFT loss: mean over resolutions of spectral convergence plus the L1
    distance of log magnitudes (Yamamoto et al. 2020, Parallel WaveGAN)."""

    def magnitude(audio, n_fft, hop, window):
        spectrum = tf.signal.stft(audio, window, hop, fft_length=n_fft, pad_end=True)
        # Not tf.abs: its gradient is a NaN where a bin is exactly 0 (silence).
        return tf.sqrt(tf.math.real(spectrum) ** 2 + tf.math.imag(spectrum) ** 2 + _EPSILON**2)

    total = 0.0
    for n_fft, hop, window in resolutions:
        real_magnitude = magnitude(real, n_fft, hop, window)
        fake_magnitude = magnitude(fake, n_fft, hop, window)
        convergence = tf.norm(real_magnitude - fake_magnitude) / tf.maximum(tf.norm(real_magnitude), _EPSILON)
        log_distance = tf.reduce_mean(
            tf.abs(tf.math.log(real_magnitude + _EPSILON) - tf.math.log(fake_magnitude + _EPSILON))
        )
        total += convergence + log_distance
    return total / len(resolutions)


def _as_float(values):
    return [tf.cast(v, tf.float32) for v in values]


def adversarial_losses(discriminators, real, fake):
    """(generator's least-squares loss, feature matching) for the generator's update."""
    fake_scores, fake_features = discriminators(fake)
    _, real_features = discriminators(real)
    adversarial = tf.add_n([tf.reduce_mean(tf.square(1.0 - s)) for s in _as_float(fake_scores)]) / len(fake_scores)
    matching = []
    for real_maps, fake_maps in zip(real_features, fake_features):
        for r, f in zip(_as_float(real_maps), _as_float(fake_maps)):
            matching.append(tf.reduce_mean(tf.abs(tf.stop_gradient(r) - f)))
    return adversarial, tf.add_n(matching) / len(matching)


def discriminator_loss(discriminators, real, fake):
    real_scores, _ = discriminators(real)
    fake_scores, _ = discriminators(fake)
    terms = [
        tf.reduce_mean(tf.square(1.0 - r)) + tf.reduce_mean(tf.square(f))
        for r, f in zip(_as_float(real_scores), _as_float(fake_scores))
    ]
    return tf.add_n(terms) / len(terms)


@dataclass(frozen=True)
class VocoderKind:
    name: str = "vocoder"
    speaks: bool = False
    vocodes: bool = True
    paced: bool = False
    ignored_keys: tuple[str, ...] = ()
    reads: Literal["mel", "audio"] = "audio"
    validation: Mapping[str, str] = field(default_factory=lambda: {"loss": "val_loss"})
    logged: tuple[str, ...] = (
        "loss",
        "mel_loss",
        "stft_loss",
        "adversarial_loss",
        "feature_matching_loss",
        "discriminator_loss",
    )
    samples_phase: str = "vocoding the sample clip (the first validation clip, else the first training clip)"

    def prepare_run(self, context: KindContext) -> None:
        """Nothing besides checkpoints: a vocoder reads mels, which carry no text or voice."""

    def build_network(self, config: XttsConfig, tokenizer: Optional[Tokenizer]) -> VocosGenerator:
        return build_generator(config.vocoder, config.data)

    def transfer(self, models: VocoderModels, checkpoint: str) -> Transferred:
        """The generator and, when both runs have them, the discriminators (a trained generator
        beside untrained judges would first be pushed off what it learned); the optimizers start anew."""
        parts = {"model": models.model}
        if models.discriminators is not None:
            parts["discriminators"] = models.discriminators
        return transfer_weights(
            parts, checkpoint, listed_by={"model": "optimizer", "discriminators": "discriminator_optimizer"}
        )

    def build(self, context: KindContext) -> VocoderModels:
        config = context.config
        vocoder, training = config.vocoder, config.training
        generator = self.build_network(config, context.tokenizer)
        optimizer = build_optimizer(training, context.total_steps, context.mixed_precision, context.budget_used)
        optimizer.build(generator.trainable_variables)
        discriminators = discriminator_optimizer = None
        if vocoder.adversarial_start_step is not None:
            discriminators = Discriminators(
                vocoder.periods,
                vocoder.discriminator_resolutions,
                vocoder.discriminator_channels,
                name="discriminators",
            )
            built_by_calling(discriminators, tf.zeros([1, vocoder.segment_frames * config.data.hop_length]))
            rate = vocoder.discriminator_learning_rate or training.learning_rate
            discriminator_optimizer = build_optimizer(
                training.model_copy(update={"learning_rate": rate}),
                context.total_steps,
                context.mixed_precision,
                context.budget_used,
            )
            discriminator_optimizer.build(discriminators.trainable_variables)
        return VocoderModels(context, generator, optimizer, discriminators, discriminator_optimizer)


class VocoderModels:
    def __init__(self, context: KindContext, generator, optimizer, discriminators, discriminator_optimizer) -> None:
        self.context, self.model, self.optimizer = context, generator, optimizer
        self.discriminators, self.discriminator_optimizer = discriminators, discriminator_optimizer
        config = context.config
        self.data, self.vocoder = config.data, config.vocoder
        self.samples = self.vocoder.segment_frames * self.data.hop_length

    def trackables(self) -> dict[str, Any]:
        parts = {"model": self.model, "optimizer": self.optimizer}
        if self.discriminators is not None:
            parts.update(discriminators=self.discriminators, discriminator_optimizer=self.discriminator_optimizer)
        return parts

    def _segments(self, batch, seed=None):
        """(audio segments [B, samples], their log-mel [B, segment_frames + 1, n_mels])."""
        audio = crop_segments(as_values(batch)["audio"], batch["audio_lengths"], self.samples, seed)
        return audio, log_mel(audio, self.data)

    def _spectral(self, real, mel, fake) -> dict[str, Any]:
        mel_loss = tf.reduce_mean(tf.abs(log_mel(fake, self.data, differentiable=True) - mel))
        spectral = stft_loss(real, fake, self.vocoder.stft_resolutions)
        total = self.vocoder.mel_loss_weight * mel_loss + self.vocoder.stft_loss_weight * spectral
        return {"loss": total, "mel_loss": mel_loss, "stft_loss": spectral}

    def phase(self, step: int) -> bool:
        """Whether the step after `step` steps is adversarial: the step numbered
        model.adversarial_start_step (as metrics.jsonl numbers them, from 1) is the first."""
        start = self.vocoder.adversarial_start_step
        return self.discriminators is not None and start is not None and step + 1 >= start

    def train_step(self, batch: dict, phase: Any = None) -> dict[str, Any]:
        """The spectral losses' step; adversarial (`phase` True), the discriminators judge it and
        their own update follows. Before the start they are not run at all: run and weighed by 0,
        they had cost 30 times a spectral step, and AdamW's weight decay still shrank them."""
        optimizer, replicas = self.optimizer, float(self.context.replicas)
        replica = tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.int64)
        draw = tf.cast(steps_taken(optimizer), tf.int64) * self.context.replicas + replica  # each step its own
        real, mel = self._segments(batch, tf.stack([tf.constant(self.data.seed, tf.int64), draw]))
        judges = self.discriminators if phase else None
        with tf.GradientTape() as tape:
            fake = self.model(mel, training=True)
            losses = self._spectral(real, mel, fake)
            if judges is not None:
                adversarial, matching = adversarial_losses(judges, real, fake)
                extra = self.vocoder.adversarial_weight * adversarial + self.vocoder.feature_matching_weight * matching
                losses.update(loss=losses["loss"] + extra, adversarial_loss=adversarial, feature_matching_loss=matching)
            scaled = optimizer.scale_loss(losses["loss"] / replicas)
        variables = self.model.trainable_variables
        optimizer.apply(tape.gradient(scaled, variables), variables)
        if judges is not None:
            with tf.GradientTape() as tape:
                judged = discriminator_loss(judges, real, tf.stop_gradient(fake))
                scaled = self.discriminator_optimizer.scale_loss(judged / replicas)
            variables = judges.trainable_variables
            self.discriminator_optimizer.apply(tape.gradient(scaled, variables), variables)
            losses["discriminator_loss"] = judged
        return losses

    def eval_step(self, batch: dict) -> dict[str, Any]:
        real, mel = self._segments(batch)  # each clip's middle: the same every evaluation
        spectral = self._spectral(real, mel, self.model(mel, training=False))
        return {"loss": spectral["mel_loss"]}

    def _first_clip(self, batch):

        audio = as_values(batch)["audio"][0, : int(batch["audio_lengths"][0])]
        return audio, self.model(log_mel(audio, self.data)[None], training=False)[0]

    def summaries(self, batch: Any, val_batch: Any, step: int) -> None:
        """`vocoder/validation`: the first validation clip, and `vocoder/recording`, the clip itself."""
        if val_batch is None:
            return
        real, fake = self._first_clip(val_batch)
        rate = self.data.sample_rate
        # As samples/vocoded_step_N.wav holds it: TensorBoard clips what passes full scale.
        fake = within_full_scale(np.asarray(fake, np.float32))
        tf.summary.audio("vocoder/validation", fake[None, :, None], rate, step=step)
        tf.summary.audio("vocoder/recording", real[None, :, None], rate, step=step)

    @property
    def listen(self) -> str:
        """`xtts vocode` of the first validation clip."""
        import shlex

        return f"xtts vocode {shlex.quote(self.context.first_item.audio_path)} --vocoder {{run}} -o vocoded.wav"

    def render_samples(self, step: int) -> None:
        """samples/vocoded_step_N.wav: the first validation clip's mel through the vocoder."""
        audio = load_audio(Path(self.context.first_item.audio_path), self.data)
        vocoded = Vocoder("this run", self.data, self.model)(mel_of(audio, self.data))
        write_wav(self.context.run_dir.samples / f"vocoded_step_{step}.wav", vocoded, self.data.sample_rate)


VOCODER = VocoderKind()
