"""The acoustic kinds: text to mel frames, by the autoregressive decoder or the duration decoder.

Both read mel batches (their text, the mel and a speaker reference cropped from a clip), train with
one optimizer and render test sentences; they differ in the network `model/build.py` makes and in
self-conditioning, which only a decoder that reads its previous frames can use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional

from xtts_cli.kinds.base import KindContext

if TYPE_CHECKING:
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data.text import Tokenizer

__all__ = ["AUTOREGRESSIVE", "DURATION", "AcousticKind"]


@dataclass(frozen=True)
class AcousticKind:
    name: str
    network: str  # its network in model/, "module:class" (imported when a run builds it: TensorFlow)
    self_conditioning: bool  # the decoder reads its previous frames: a second pass can feed it its own
    normalizes_mel: bool  # the model reads and predicts mels in units of the data's (`mel_statistics`)
    ignored_keys: tuple[str, ...] = ()
    speaks: bool = True
    vocodes: bool = False
    paced: bool = False
    reads: Literal["mel", "audio"] = "mel"
    validation: Mapping[str, str] = field(
        default_factory=lambda: {"loss": "val_loss", "alignment_score": "alignment_score"}
    )
    logged: tuple[str, ...] = (
        "loss",
        "mel_loss",
        "postnet_mel_loss",
        "stop_loss",
        "attention_loss",
        "duration_loss",
        "alignment_score",
    )
    samples_phase: str = "rendering the test sentences"

    def prepare_run(self, context: KindContext) -> None:
        """The speaking rate synthesis paces sentences by, the reference voice of the test sentences
        (the first validation clip's opening frames) and the speakers' clips, once per run."""
        from xtts_cli.run.files import (
            REFERENCE_FILE,
            SPEAKERS_FILE,
            SPEAKING_RATE_FILE,
            measure_speaking_rate,
            save_reference,
            save_speakers,
            save_speaking_rate,
        )
        from xtts_cli.speech.synthesis import reference_from_audio

        run, data = context.run_dir.path, context.config.data
        if not (run / SPEAKING_RATE_FILE).is_file():
            rate = measure_speaking_rate(context.scan.train, context.tokenizer, data)
            if rate is not None:
                save_speaking_rate(run, rate)
        if not (run / REFERENCE_FILE).is_file():
            save_reference(run, reference_from_audio(Path(context.first_item.audio_path), data))
        if not (run / SPEAKERS_FILE).is_file():
            save_speakers(run, context.scan.train)

    def build_network(self, config: XttsConfig, tokenizer: Optional[Tokenizer]) -> Any:
        from xtts_cli.model.build import build_model_for

        assert tokenizer is not None, "an acoustic model reads text: pass the run's vocabulary"
        return build_model_for(self.network_class(), config, tokenizer)

    def transfer(self, models: Any, checkpoint: str) -> Any:
        """The model from `checkpoint`; the optimizer starts anew. The base's mel statistics come
        with its weights: the decoder learned in their units."""
        from xtts_cli.model.transfer import transfer_weights

        moved = transfer_weights({"model": models.model}, checkpoint, listed_by={"model": "optimizer"})
        models.model.start_new_tables(moved.new)
        return moved

    def network_class(self) -> Any:
        """Its network's class in model/ (importing it imports TensorFlow)."""
        import importlib

        module, _, name = self.network.partition(":")
        return getattr(importlib.import_module(module), name)

    def build(self, context: KindContext) -> AcousticModels:
        from xtts_cli.kinds.optimization import build_optimizer

        config = context.config
        model = self.build_network(config, context.tokenizer)
        # Losses then use only ops XLA compiles, where a faster kernel exists that it does not (CTC).
        model.xla_compatible_losses = context.xla_step
        if self.normalizes_mel and config.acoustic.normalize_mel and not context.resumed:  # else from its checkpoint
            model.set_mel_statistics(*mel_statistics(context.scan.train, config.data))
        if config.training.freeze:
            model.freeze(config.training.freeze)
        optimizer = build_optimizer(config.training, context.total_steps, context.mixed_precision, context.budget_used)
        optimizer.build(model.trainable_variables)
        return AcousticModels(self, context, model, optimizer)


# Clips the log-mel statistics are taken from, spread evenly over the training set: ~300 frames
# each, plenty for a per-bin mean and spread (a second on a CPU).
MEL_STATISTICS_CLIPS = 64


def mel_statistics(items: list, data) -> tuple[Any, Any]:
    """Per-bin mean and standard deviation (floored at 0.1) of the log-mels of up to
    `MEL_STATISTICS_CLIPS` of `items`, taken evenly; the same on every worker of a cluster."""
    import numpy as np

    from xtts_cli.speech.vocoding import load_audio, mel_of

    chosen = items[:: max(1, len(items) // MEL_STATISTICS_CLIPS)][:MEL_STATISTICS_CLIPS]
    mels = np.concatenate([mel_of(load_audio(Path(item.audio_path), data), data) for item in chosen])
    return mels.mean(axis=0), np.maximum(mels.std(axis=0), 0.1)


def prior_strength(iterations, steps: int):
    """The attention prior's strength at this step: 1 for the first half of its `steps`, then to 0."""
    import tensorflow as tf

    if not steps:
        return None
    return tf.clip_by_value(2.0 - 2.0 * tf.cast(iterations, tf.float32) / float(steps), 0.0, 1.0)


class AcousticModels:
    def __init__(self, kind: AcousticKind, context: KindContext, model, optimizer) -> None:
        from xtts_cli.speech.samples import rendering_voices

        self.kind, self.context, self.model, self.optimizer = kind, context, model, optimizer
        config = context.config
        self.data, self.section = config.data, config.acoustic
        self.prefix = context.tokenizer.prefix_length
        self.attention = {
            "attention_weight": self.section.guided_attention_weight,
            "attention_sigma": self.section.guided_attention_sigma,
        }
        self.voices = rendering_voices(context.run_dir.path, config.data, context.tokenizer) if context.is_chief else []
        self._drawn: Any = None

    def _on_one_clip(self, batch: dict) -> dict:
        """The model's outputs for a one-clip batch, in a graph traced once for each shape: run eagerly,
        the duration decoder's alignment search looped in Python a frame at a time (1.7 s a picture
        for the tiny model on 2 cores, at every validation)."""
        import tensorflow as tf

        if self._drawn is None:
            self._drawn = tf.function(lambda inputs: self.model(inputs, training=False))
        return self._drawn(batch)

    def trackables(self) -> dict[str, Any]:
        return {"model": self.model, "optimizer": self.optimizer}

    def phase(self, step: int) -> None:
        return None

    def train_step(self, batch: dict, phase: Any = None) -> dict[str, Any]:
        import tensorflow as tf

        from xtts_cli.data.features import with_reference
        from xtts_cli.kinds.optimization import steps_taken

        model, optimizer, replicas = self.model, self.optimizer, self.context.replicas
        # The speaker reference: a random crop of each clip, drawn from the step number and the
        # replica (a checkpointed variable, so a resumed run draws what it would have drawn). Steps, not
        # updates: each step of an accumulated update draws its own.
        replica = tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.int64)
        draw = tf.cast(steps_taken(optimizer), tf.int64) * replicas + replica
        seed = tf.stack([tf.constant(self.data.seed, tf.int64), draw])
        batch = with_reference(batch, self.data, seed=seed, prefix=self.prefix)
        prior = prior_strength(steps_taken(optimizer), self.section.attention_prior_steps)
        with tf.GradientTape() as tape:
            outputs = model(batch, training=True, attention_prior_strength=prior)
            losses = model.compute_loss(batch, outputs, **self.attention)
            if self.kind.self_conditioning and self.section.self_conditioning:
                own = tf.stop_gradient(outputs["mel_pred"])
                again = model(batch, training=True, decoder_input_mel=own, attention_prior_strength=prior)
                second = model.compute_loss(batch, again, **self.attention)
                losses = dict(
                    losses, loss=0.5 * (losses["loss"] + second["loss"]), self_conditioned_mel_loss=second["mel_loss"]
                )
            scaled = optimizer.scale_loss(losses["loss"] / float(replicas))
        variables = model.trainable_variables
        optimizer.apply(tape.gradient(scaled, variables), variables)
        if self.prefix:
            model.update_speaker_centroids(batch["speaker_ids"], outputs["speaker_vector"])
        return losses

    def eval_step(self, batch: dict) -> dict[str, Any]:
        from xtts_cli.data.features import with_reference

        batch = with_reference(batch, self.data, prefix=self.prefix)  # the first frames: the same every evaluation
        return self.model.compute_loss(batch, self.model(batch, training=False), **self.attention)

    def summaries(self, batch: Any, val_batch: Any, step: int) -> None:
        """`mel/target_vs_predicted` of a training batch and `alignment/validation`: the first
        validation clip's cross-attention (every decoder layer and head averaged), text tokens
        down, decoder steps across; a model that reads the text shows one bright line from the
        top left to the bottom right."""
        import tensorflow as tf

        from xtts_cli.data.features import with_reference

        def first(batch: dict) -> dict:  # each picture draws one clip: the model runs on it alone, not the batch
            return with_reference({key: value[:1] for key, value in batch.items()}, self.data, prefix=self.prefix)

        if val_batch is not None:
            prepared = first(val_batch)
            attention = self._on_one_clip(prepared)["cross_attention"]  # [1, heads, steps, tokens]
            steps = int(self.model.decoder_steps(prepared["mel_lengths"])[0])
            tokens = int(prepared["text_lengths"][0])
            matrix = tf.reduce_mean(tf.cast(attention, tf.float32), axis=1)[0, :steps, :tokens]
            image = tf.transpose(matrix)[None, :, :, None]
            tf.summary.image("alignment/validation", image / tf.maximum(tf.reduce_max(image), 1e-6), step=step)
        prepared = first(batch)
        outputs = self._on_one_clip(prepared)
        predicted = tf.cast(outputs.get("mel_post", outputs["mel_pred"]), tf.float32)
        target = tf.cast(prepared["mel"], tf.float32)
        image = tf.transpose(tf.concat([target, predicted], axis=2), [0, 2, 1])[:, ::-1, :, tf.newaxis]
        low, high = tf.reduce_min(image), tf.reduce_max(image)
        tf.summary.image("mel/target_vs_predicted", (image - low) / tf.maximum(high - low, 1e-6), step=step)

    def _sentences(self) -> tuple[list[str], Optional[str]]:
        """The test sentences and their language (None: the run's first): `training.test_sentences`,
        else the first validation clip's text in its language."""
        config, first = self.context.config, self.context.first_item
        if config.training.test_sentences:
            return list(config.training.test_sentences), None
        return [first.training_text], first.language

    def render_samples(self, step: int) -> None:
        from xtts_cli.speech.samples import render_sentences

        sentences, language = self._sentences()
        render_sentences(
            self.model,
            self.context.tokenizer,
            self.context.config,
            self.voices,
            sentences,
            self.context.run_dir.path,
            self.context.run_dir.samples,
            step,
            note=self.context.note,
            language=language,
        )

    @property
    def listen(self) -> str:
        """`xtts synthesize` of the first test sentence: a sentence the run can spell."""
        import shlex

        from xtts_cli.errors import XttsError

        sentences, language = self._sentences()
        tokenizer = self.context.tokenizer

        def readable(sentence: str) -> bool:  # one the samples skip (another script) would fail here too
            try:
                tokenizer.spoken_ids(sentence, language)
            except XttsError:
                return False
            return True

        chosen = next((s for s in sentences if readable(s)), None)
        if chosen is None:
            chosen, language = self.context.first_item.training_text, self.context.first_item.language
        languages = tokenizer.languages
        options = " -r {run} -o speech.wav"
        if language is not None and languages and language != languages[0]:
            options += f" --language {language}"
        speaker = self.context.first_item.speaker
        if self.context.config.training.init_from is not None and speaker in tokenizer.speakers:
            options += f" --speaker {shlex.quote(speaker)}"  # an adapted run: the voice its data taught
        # A text that starts with "-" ("-5 degrees") would be read as an option: after "--", it is the text.
        if chosen.startswith("-"):
            return f"xtts synthesize{options} -- {shlex.quote(chosen)}"
        return f"xtts synthesize {shlex.quote(chosen)}{options}"


AUTOREGRESSIVE = AcousticKind(
    "autoregressive", "xtts_cli.model.xtts:XttsModel", self_conditioning=True, normalizes_mel=False
)
DURATION = AcousticKind(
    "duration",
    "xtts_cli.model.duration:DurationModel",
    self_conditioning=False,
    normalizes_mel=True,
    paced=True,
    # What only the autoregressive decoder reads: its prenet, stop token, attention and self-conditioning.
    ignored_keys=(
        "model.prenet_dropout",
        "model.decoder_input_noise",
        "model.guided_attention_weight",
        "model.guided_attention_sigma",
        "model.attention_prior_steps",
        "model.self_conditioning",
        "synthesis.stop_threshold",
        "synthesis.attention_constraint",
        "synthesis.attention_prior",
    ),
)
