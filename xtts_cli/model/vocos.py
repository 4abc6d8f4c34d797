"""The neural vocoder's generator: log-mel frames to a waveform, Vocos-style.

ConvNeXt blocks over the mel frames (no upsampling: every layer runs at the frame rate, which is
why it is fast on a CPU) and a head that predicts each frame's STFT, magnitude and phase, turned
into samples by the inverse STFT (Siuzdenovskii 2023, "Vocos", arXiv 2306.00814). The framing is
the feature pipeline's (`xtts_cli.data.features`, centred, librosa's `center=True`), the same as
Griffin-Lim's (`vocoder.py`): F frames give (F - 1) * hop_length samples, so a segment of S
samples, whose mel has 1 + S // hop frames, comes back as S samples.

The discriminators of its adversarial training are here too (HiFi-GAN's multi-period, UniVNet's
multi-resolution, both as Vocos trains with them); the losses and the step are the vocoder model
kind's (`xtts_cli/training/kinds/vocoder.py`).
"""

from __future__ import annotations

import math

import keras
import tensorflow as tf

__all__ = ["Discriminators", "VocosGenerator", "build_generator", "inverse_stft"]

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
        self.blocks = [ConvNeXtBlock(dim, width, 1.0 / num_layers, name=f"block_{i}") for i in range(num_layers)]
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
    generator(tf.zeros([1, 4, data.n_mels]), training=False)
    return generator


LEAK = 0.1  # LeakyReLU slope of every discriminator layer (HiFi-GAN)


class PeriodDiscriminator(keras.layers.Layer):
    """The waveform folded into [samples / period, period] and judged by 2-D convolutions along
    time, one column per phase of the period (HiFi-GAN's sub-discriminator)."""

    def __init__(self, period: int, channels: int, **kwargs):
        super().__init__(**kwargs)
        self.period = period
        widths = [channels, 4 * channels, 16 * channels, 32 * channels]
        self.convs = [keras.layers.Conv2D(w, (5, 1), strides=(3, 1), padding="same") for w in widths]
        self.convs.append(keras.layers.Conv2D(32 * channels, (5, 1), padding="same"))
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
        self.convs = [keras.layers.Conv2D(channels, (3, 9), padding="same")]
        self.convs += [keras.layers.Conv2D(channels, (3, 9), strides=(1, 2), padding="same") for _ in range(3)]
        self.convs.append(keras.layers.Conv2D(channels, (3, 3), padding="same"))
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
        self.judges = [PeriodDiscriminator(p, channels, name=f"period_{p}") for p in periods]
        self.judges += [ResolutionDiscriminator(tuple(r), channels, name=f"resolution_{r[0]}") for r in resolutions]

    def call(self, audio):
        scores, features = [], []
        for judge in self.judges:
            score, maps = judge(audio)
            scores.append(score)
            features.append(maps)
        return scores, features
