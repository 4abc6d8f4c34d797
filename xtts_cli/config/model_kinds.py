"""The `model` section: one per model kind, told apart by `model.kind` (a pydantic discriminated
union). Each kind's section holds everything that kind alone reads, in training and after: an
acoustic model's sizes and its decoder's training aids, a vocoder's network and losses. The training
loop's own keys stay in `training`.

These live under `config/`, not beside the networks in `kinds/`, so a config is read and checked
without importing TensorFlow (`xtts validate`), and every layer can read it. A new kind is a class
here, its line in the `ModelSection` union and its module in `kinds/`.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Optional, Union, get_args

from pydantic import Discriminator, Field, Tag, field_validator

from xtts_cli.config.section import Section

__all__ = ["MODEL_SECTIONS", "AcousticConfig", "ModelSection", "VocoderConfig", "model_kind_of"]


class KindSection(Section):
    """What every model section declares beside its keys, for a run started from another."""

    # Keys beyond `identity()` a run started from another takes from it when the config leaves them
    # unwritten, as it takes the network's.
    BASE_KEYS: ClassVar[tuple[str, ...]] = ()
    # Each network a run of the kind may have or not, with the key whose empty value leaves it out.
    OPTIONAL_PARTS: ClassVar[dict[str, str]] = {}
    # Each optional part's own keys, which do nothing while it is left out (`validate` says so).
    PART_KEYS: ClassVar[dict[str, tuple[str, ...]]] = {}

    def optional_parts(self) -> dict[str, dict[str, Any]]:
        """The optional networks this section builds, each with its shape as `model.KEY`: a base's
        are taken where both runs have them, and must fit."""
        return {}


class AcousticConfig(KindSection):
    """The XTTS-style acoustic model (`model.kind: acoustic`, the default): text encoder, speaker
    encoder and mel decoder, with the decoder's training aids."""

    kind: Literal["acoustic"] = Field(
        "acoustic",
        description="What the run trains. `acoustic`: text to mel frames, by the `decoder` below. `vocoder`: mel "
        "frames to a waveform, with a model section of its own (configs/vocoder-cpu.yaml), which `xtts "
        "synthesize` then uses in place of Griffin-Lim.",
    )
    model_size: Literal["tiny", "small", "normal", "big"] = Field(
        "tiny", description="Size preset. `tiny` trains on a 2-core CPU; the others want a GPU."
    )
    decoder: Literal["autoregressive", "duration"] = Field(
        "autoregressive",
        description="How mel frames come from the text. `autoregressive`: frame after frame, each from the previous "
        "ones, reading the text through cross-attention and ending at a stop token (XTTS, Tacotron). `duration`: a "
        "learnt aligner and duration predictor say how long each character lasts and every frame is predicted at "
        "once (FastPitch, RAD-TTS); it learns to speak in far fewer steps (configs/speak-cpu.yaml). "
        "`prenet_dropout`, `decoder_input_noise`, the guided attention, the attention prior, self-conditioning "
        "and the stop token belong to the autoregressive decoder (`xtts validate` names them when set with "
        "`duration`).",
    )
    d_model: Optional[int] = Field(None, ge=8, description="Hidden width. Empty: from the preset.")
    num_heads: Optional[int] = Field(None, ge=1, description="Attention heads. Empty: from the preset.")
    num_text_layers: Optional[int] = Field(None, ge=1, description="Text encoder layers. Empty: from the preset.")
    num_decoder_layers: Optional[int] = Field(None, ge=1, description="Decoder layers. Empty: from the preset.")
    speaker_embedding_dim: Optional[int] = Field(
        None, ge=8, description="Speaker conditioning width. Empty: from the preset."
    )
    dropout: float = Field(0.1, ge=0.0, lt=1.0, description="Dropout rate.")
    reduction_factor: Optional[int] = Field(
        None,
        ge=1,
        le=8,
        description="Mel frames the decoder predicts per step, or per position with the duration decoder "
        "(Tacotron's r). A larger r makes the decoder's "
        "sequence r times shorter, so each step is cheaper, alignment forms sooner and the free-running "
        "decoder has fewer chances to drift. Empty: from the preset (tiny and small 2, normal and big 1).",
    )
    normalize_mel: bool = Field(
        True,
        description="Duration decoder: its aligner reads, and its decoder predicts, log-mels in units of each "
        "bin's mean and standard deviation over the training clips (from 64 of them, taken before step 0 and kept "
        "in the checkpoint; a resumed run keeps its own). speak-cpu reads held-out sentences as well after 1,000 "
        "steps with it as after 4,000 without it (docs/performance.md). The autoregressive decoder reads "
        "plain log-mels.",
    )
    text_prenet_layers: Optional[int] = Field(
        None,
        ge=0,
        le=8,
        description="Convolutions (kernel 5) over the character embeddings before the text encoder's attention "
        "layers (Tacotron 2's encoder, Transformer-TTS's encoder pre-net): each letter is read with its "
        "neighbours. 0: none. Empty: from the preset.",
    )
    decoder_input_noise: float = Field(
        0.0,
        ge=0.0,
        le=10.0,
        description="Standard deviation of Gaussian noise (in log-mel units) added in training to the previous "
        "frames the decoder reads, so it learns to continue from frames as imperfect as its own. 0: none.",
    )
    prenet_dropout: Optional[float] = Field(
        None,
        ge=0.0,
        lt=1.0,
        description="Dropout in the decoder's prenet, in training and in synthesis (Tacotron 2): the bottleneck "
        "that keeps an autoregressive decoder from copying its previous frame instead of reading the text. "
        "Empty: 0.5.",
    )
    guided_attention_weight: float = Field(
        10.0,
        ge=0.0,
        description="Weight of the guided-attention loss (Tachibana et al. 2018) on the decoder's cross-attention, "
        "every layer and head: attention far from the diagonal of text position against speech position is "
        "penalised, so alignment forms in minutes instead of never. ESPnet's Transformer-TTS uses 10. "
        "0 turns it off.",
    )
    attention_prior_steps: int = Field(
        0,
        ge=0,
        description="Steps over which a diagonal prior is added to the cross-attention scores (NeMo's attention "
        "prior): full strength for the first half, fading linearly to nothing by the end, so the decoder learns "
        "to turn text into sound from the first step while its attention learns the alignment it keeps after. "
        "0: no prior.",
    )
    self_conditioning: bool = Field(
        False,
        description="Train every step twice over the decoder: once reading the true previous frames (teacher "
        "forcing), once reading the model's own prediction from that first pass, the loss being the mean of "
        "the two (scheduled sampling for a parallel decoder): free-running generation then continues from "
        "frames like the ones it will have. Costs a second decoder pass per step.",
    )
    guided_attention_sigma: float = Field(
        0.4,
        gt=0.0,
        le=1.0,
        description="Width of the guided-attention diagonal, as a share of the sentence (ESPnet: 0.4; "
        "Tachibana et al.: 0.2). Narrower pulls harder towards a straight line.",
    )

    # Knobs of the training step, not of the network: a run resumes with other values.
    TRAINING_KEYS: ClassVar[tuple[str, ...]] = (
        "guided_attention_weight",
        "attention_prior_steps",
        "self_conditioning",
        "guided_attention_sigma",
    )
    # How it regularises: no weight of its own, so a resume or an adaptation may change them.
    NO_WEIGHT_KEYS: ClassVar[tuple[str, ...]] = ("dropout", "prenet_dropout", "decoder_input_noise")
    FREEZABLE_PARTS: ClassVar[tuple[str, ...]] = ("text_encoder", "speaker_encoder", "decoder", "postnet")
    # The model kind that trains and speaks with each decoder, as "module:attribute": imported on
    # first use (`kinds.kind_for`), so reading a config imports no network.
    IMPLEMENTATIONS: ClassVar[dict[str, str]] = {
        "autoregressive": "xtts_cli.kinds.acoustic:AUTOREGRESSIVE",
        "duration": "xtts_cli.kinds.acoustic:DURATION",
    }

    @property
    def kind_name(self) -> str:
        """The kind this section makes: its decoder's."""
        return self.decoder

    def identity(self) -> dict[str, Any]:
        """What must match to resume a run ("model.key": value): every key but the training aids."""
        return {f"model.{key}": value for key, value in self.model_dump(exclude=set(self.TRAINING_KEYS)).items()}


class VocoderConfig(KindSection):
    """The neural vocoder (`model.kind: vocoder`): Vocos-style, ConvNeXt blocks over the mel frames and
    an inverse-STFT head (Siuzdenovskii 2023, arXiv 2306.00814). It trains on random segments of the
    clips, their mel computed as the acoustic model's is (the `data` section's rate, hop and mels)."""

    kind: Literal["vocoder"] = Field("vocoder", description="What the run trains: here mel frames to a waveform.")

    dim: int = Field(256, ge=8, le=2048, description="Channels of the ConvNeXt blocks.")
    intermediate_dim: Optional[int] = Field(
        None, ge=8, le=8192, description="Width of each block's pointwise layers. Empty: 3 x dim (Vocos)."
    )
    num_layers: int = Field(8, ge=1, le=64, description="ConvNeXt blocks.")
    segment_frames: int = Field(
        32,
        ge=4,
        le=1024,
        description="Mel frames of the random segment each clip gives a training step (x hop_length samples; 32 "
        "at hop 256 is 0.37 s at 22,050 Hz). A clip shorter than this is zero-padded.",
    )
    mel_loss_weight: float = Field(
        45.0,
        ge=0.0,
        description="Weight of the L1 distance between the log-mel of the generated audio and the segment's "
        "(HiFi-GAN's and Vocos's 45).",
    )
    stft_loss_weight: float = Field(
        1.0,
        ge=0.0,
        description="Weight of the multi-resolution STFT loss (spectral convergence plus log-magnitude L1 at the "
        "`stft_resolutions`; Parallel WaveGAN): it judges phase too, since magnitudes at other resolutions "
        "only agree when the phase does.",
    )
    stft_resolutions: list[list[int]] = Field(
        default_factory=lambda: [[512, 128, 512], [1024, 256, 1024], [2048, 512, 2048]],
        min_length=1,
        description="[n_fft, hop, window] of each resolution of the STFT loss.",
    )
    adversarial_start_step: Optional[int] = Field(
        None,
        ge=0,
        description="Step from which the discriminators train and the generator also learns to fool them "
        "(multi-period and multi-resolution, with feature matching). Before it, the spectral losses alone: a "
        "warm-up that gives the discriminators something worth judging. Empty: never (the spectral losses only; "
        "what a CPU's hour affords, configs/vocoder-cpu.yaml).",
    )
    adversarial_weight: float = Field(1.0, ge=0.0, description="Weight of the generator's adversarial loss.")
    feature_matching_weight: float = Field(
        2.0, ge=0.0, description="Weight of the feature-matching loss (HiFi-GAN's 2)."
    )
    periods: list[int] = Field(
        default_factory=lambda: [2, 3, 5, 7, 11],
        description="Periods of the multi-period discriminator (HiFi-GAN).",
    )
    discriminator_resolutions: list[list[int]] = Field(
        default_factory=lambda: [[512, 128, 512], [1024, 256, 1024], [2048, 512, 2048]],
        min_length=1,
        description="[n_fft, hop, window] of each multi-resolution discriminator (UnivNet, Vocos).",
    )
    discriminator_channels: int = Field(
        16,
        ge=1,
        le=256,
        description="Width of the discriminators: every layer of the multi-resolution ones, and the first layer of "
        "the multi-period ones (x4, x16 and x32 after it; HiFi-GAN's is 32).",
    )
    discriminator_learning_rate: Optional[float] = Field(
        None, gt=0.0, description="The discriminators' learning rate. Empty: training.learning_rate."
    )

    @field_validator("stft_resolutions", "discriminator_resolutions")
    @classmethod
    def _resolutions(cls, value: list[list[int]]) -> list[list[int]]:
        for resolution in value:
            if len(resolution) != 3 or min(resolution) < 1 or resolution[2] > resolution[0]:
                raise ValueError(
                    f"{resolution} is not [n_fft, hop, window] with a window of at most n_fft; e.g. [1024, 256, 1024]"
                )
        return value

    @field_validator("periods")
    @classmethod
    def _periods(cls, value: list[int]) -> list[int]:
        if not value or min(value) < 2:
            raise ValueError(f"{value} must list periods of 2 samples or more, e.g. [2, 3, 5, 7, 11]")
        return value

    @property
    def block_width(self) -> int:
        return self.intermediate_dim or 3 * self.dim

    FREEZABLE_PARTS: ClassVar[tuple[str, ...]] = ()
    IMPLEMENTATIONS: ClassVar[dict[str, str]] = {"vocoder": "xtts_cli.kinds.vocoder:VOCODER"}
    _DISCRIMINATOR_SHAPE: ClassVar[tuple[str, ...]] = ("periods", "discriminator_resolutions", "discriminator_channels")
    # A base's discriminators come with it (`transfer`) when the config leaves them unwritten.
    BASE_KEYS: ClassVar[tuple[str, ...]] = ("adversarial_start_step", *_DISCRIMINATOR_SHAPE)
    OPTIONAL_PARTS: ClassVar[dict[str, str]] = {"discriminators": "adversarial_start_step"}
    PART_KEYS: ClassVar[dict[str, tuple[str, ...]]] = {
        "discriminators": (
            "adversarial_weight",
            "feature_matching_weight",
            *_DISCRIMINATOR_SHAPE,
            "discriminator_learning_rate",
        )
    }

    def optional_parts(self) -> dict[str, dict[str, Any]]:
        if self.adversarial_start_step is None:
            return {}
        return {"discriminators": {f"model.{key}": getattr(self, key) for key in self._DISCRIMINATOR_SHAPE}}

    @property
    def kind_name(self) -> str:
        return "vocoder"

    def identity(self) -> dict[str, Any]:
        """The generator's shape; the discriminators may come later (`adversarial_start_step`)."""
        return {f"model.{key}": getattr(self, key) for key in ("kind", "dim", "intermediate_dim", "num_layers")}


def model_kind_of(value: Any) -> str:
    """`model.kind` of a section as written (a mapping) or built; a section without one is acoustic."""
    if isinstance(value, dict):
        kind = value.get("kind", "acoustic")
        return kind if isinstance(kind, str) else repr(kind)
    return str(getattr(value, "kind", "acoustic"))


# The one list of model kinds: a section per `model.kind`, each naming the kinds it makes
# (`IMPLEMENTATIONS`). A new kind is a section class here and its line in this union.
ModelSection = Annotated[
    Union[Annotated[AcousticConfig, Tag("acoustic")], Annotated[VocoderConfig, Tag("vocoder")]],
    Discriminator(
        model_kind_of,
        custom_error_type="model_kind",
        custom_error_message="model.kind must be acoustic or vocoder",
    ),
]

# The sections by `model.kind`, in the union's order (the order the docs list them).
MODEL_SECTIONS: dict[str, type[AcousticConfig | VocoderConfig]] = {
    member.model_fields["kind"].default: member
    for member in (get_args(tagged)[0] for tagged in get_args(get_args(ModelSection)[0]))
}
