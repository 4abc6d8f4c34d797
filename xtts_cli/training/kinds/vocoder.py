"""The vocoder kind: mel frames to a waveform (`model.kind: vocoder`, the `vocoder` config section).

Its step reads the pipeline's audio (any corpus layout, cache or precompute store the acoustic
model reads), crops a random segment of `vocoder.segment_frames` frames from each clip on the
model device, computes the segment's mel exactly as the acoustic model's features are computed,
and trains the generator (`model/vocos.py`) to give the segment back:

- the L1 distance of the log-mels (HiFi-GAN, Vocos: weight 45) and the multi-resolution STFT
  loss (spectral convergence plus log-magnitude L1, Parallel WaveGAN), always;
- from `vocoder.adversarial_start_step`, least-squares GAN losses against the multi-period and
  multi-resolution discriminators, with feature matching, and the discriminators' own update in
  the same step (their optimizer is the second one the checkpoint saves).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from xtts_cli.training.kinds.base import KindContext

__all__ = ["VOCODER", "VocoderKind"]

_EPSILON = 1e-7


def crop_segments(audio, lengths, samples: int, seed=None):
    """A segment of `samples` from each clip [B, S] (its own length `lengths` [B]): at a random
    start drawn from `seed` (a stateless seed), or without one from the clip's middle; a clip
    shorter than `samples` starts at 0 and is zero-padded."""
    import tensorflow as tf

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
    import tensorflow as tf

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
    import tensorflow as tf

    return [tf.cast(v, tf.float32) for v in values]


def adversarial_losses(discriminators, real, fake):
    """(generator's least-squares loss, feature matching) for the generator's update."""
    import tensorflow as tf

    fake_scores, fake_features = discriminators(fake)
    _, real_features = discriminators(real)
    adversarial = tf.add_n([tf.reduce_mean(tf.square(1.0 - s)) for s in _as_float(fake_scores)]) / len(fake_scores)
    matching = []
    for real_maps, fake_maps in zip(real_features, fake_features):
        for r, f in zip(_as_float(real_maps), _as_float(fake_maps)):
            matching.append(tf.reduce_mean(tf.abs(tf.stop_gradient(r) - f)))
    return adversarial, tf.add_n(matching) / len(matching)


def discriminator_loss(discriminators, real, fake):
    import tensorflow as tf

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
    samples_phase: str = "vocoding the first validation clip"
    listen: str = "xtts vocode CLIP.wav --vocoder {run} -o vocoded.wav"

    def prepare_run(self, context: KindContext) -> None:
        """Nothing besides checkpoints: a vocoder reads mels, which carry no text or voice."""

    def build(self, context: KindContext) -> VocoderModels:
        from xtts_cli.model.vocos import Discriminators, build_generator
        from xtts_cli.training.optimization import build_optimizer

        config = context.config
        vocoder, training = config.vocoder, config.training
        generator = build_generator(vocoder, config.data)
        optimizer = build_optimizer(training, context.total_steps, context.mixed_precision, context.budget_used)
        optimizer.build(generator.trainable_variables)
        discriminators = discriminator_optimizer = None
        if vocoder.adversarial_start_step is not None:
            import tensorflow as tf

            discriminators = Discriminators(
                vocoder.periods,
                vocoder.discriminator_resolutions,
                vocoder.discriminator_channels,
                name="discriminators",
            )
            discriminators(tf.zeros([1, vocoder.segment_frames * config.data.hop_length]))
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
        from xtts_cli.data.features import as_values, log_mel

        audio = crop_segments(as_values(batch)["audio"], batch["audio_lengths"], self.samples, seed)
        return audio, log_mel(audio, self.data)

    def _spectral(self, real, mel, fake) -> dict[str, Any]:
        import tensorflow as tf

        from xtts_cli.data.features import log_mel

        mel_loss = tf.reduce_mean(tf.abs(log_mel(fake, self.data, differentiable=True) - mel))
        spectral = stft_loss(real, fake, self.vocoder.stft_resolutions)
        total = self.vocoder.mel_loss_weight * mel_loss + self.vocoder.stft_loss_weight * spectral
        return {"loss": total, "mel_loss": mel_loss, "stft_loss": spectral}

    def train_step(self, batch: dict) -> dict[str, Any]:
        import tensorflow as tf

        optimizer, replicas = self.optimizer, float(self.context.replicas)
        replica = tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.int64)
        draw = tf.cast(optimizer.iterations, tf.int64) * self.context.replicas + replica
        real, mel = self._segments(batch, tf.stack([tf.constant(self.data.seed, tf.int64), draw]))
        judges = self.discriminators
        with tf.GradientTape() as tape:
            fake = self.model(mel, training=True)
            losses = self._spectral(real, mel, fake)
            if judges is not None:
                # 1 from adversarial_start_step: before it the adversarial terms weigh nothing.
                active = tf.cast(optimizer.iterations >= self.vocoder.adversarial_start_step, tf.float32)
                adversarial, matching = adversarial_losses(judges, real, fake)
                extra = self.vocoder.adversarial_weight * adversarial + self.vocoder.feature_matching_weight * matching
                losses.update(
                    loss=losses["loss"] + active * extra, adversarial_loss=adversarial, feature_matching_loss=matching
                )
            scaled = optimizer.scale_loss(losses["loss"] / replicas)
        variables = self.model.trainable_variables
        optimizer.apply(tape.gradient(scaled, variables), variables)
        if judges is not None:
            with tf.GradientTape() as tape:
                judged = discriminator_loss(judges, real, tf.stop_gradient(fake))
                # Before the start the gradients are 0, and Adam moves nothing on a zero gradient.
                scaled = self.discriminator_optimizer.scale_loss(active * judged / replicas)
            variables = judges.trainable_variables
            self.discriminator_optimizer.apply(tape.gradient(scaled, variables), variables)
            losses["discriminator_loss"] = judged
        return losses

    def eval_step(self, batch: dict) -> dict[str, Any]:
        real, mel = self._segments(batch)  # each clip's middle: the same every evaluation
        spectral = self._spectral(real, mel, self.model(mel, training=False))
        return {"loss": spectral["mel_loss"]}

    def _first_clip(self, batch):

        from xtts_cli.data.features import as_values, log_mel

        audio = as_values(batch)["audio"][0, : int(batch["audio_lengths"][0])]
        return audio, self.model(log_mel(audio, self.data)[None], training=False)[0]

    def summaries(self, batch: Any, val_batch: Any, step: int) -> None:
        """`vocoder/validation`: the first validation clip, and `vocoder/recording`, the clip itself."""
        import tensorflow as tf

        if val_batch is None:
            return
        real, fake = self._first_clip(val_batch)
        rate = self.data.sample_rate
        tf.summary.audio("vocoder/validation", tf.clip_by_value(fake, -1.0, 1.0)[None, :, None], rate, step=step)
        tf.summary.audio("vocoder/recording", real[None, :, None], rate, step=step)

    def render_samples(self, step: int) -> None:
        """samples/vocoded_step_N.wav: the first validation clip's mel through the vocoder."""
        from pathlib import Path

        from xtts_cli.inference.speech import write_wav
        from xtts_cli.inference.vocoding import Vocoder, load_audio, mel_of

        audio = load_audio(Path(self.context.first_item.audio_path), self.data)
        vocoded = Vocoder("this run", self.data, self.model)(mel_of(audio, self.data))
        write_wav(self.context.run_dir.samples / f"vocoded_step_{step}.wav", vocoded, self.data.sample_rate)


VOCODER = VocoderKind()
