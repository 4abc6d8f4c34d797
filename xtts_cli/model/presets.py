"""Model size presets and the config overrides applied on top of them.

`model.model_size` picks a preset; `model.d_model`, `num_heads`, `num_text_layers`,
`num_decoder_layers`, `speaker_embedding_dim`, `reduction_factor`, `prenet_dropout` and `dropout`
override single fields of it.

Parameter counts, measured by building each preset with `build_model` (80 mel bins, a
vocabulary of 256 symbols) and reading `model.count_params()`; `estimate_param_count` gives the
same numbers without building (a test holds the two equal):

| preset | d_model | heads | text / decoder / speaker layers | ffn  | postnet     | r | parameters  |
|--------|---------|-------|---------------------------------|------|-------------|---|-------------|
| tiny   | 128     | 2     | 2 / 2 / 1                       | 512  | 3 x 64, k 5 | 2 | 1,386,882   |
| small  | 256     | 4     | 4 / 4 / 2                       | 1024 | 5 x 256, k 5| 2 | 10,752,450  |
| normal | 512     | 8     | 6 / 6 / 2                       | 2048 | 5 x 512, k 5| 1 | 56,536,561  |
| big    | 1024    | 16    | 6 / 12 / 3                      | 4096 | 5 x 512, k 5| 1 | 325,303,537 |

The vocabulary adds vocab_size x d_model (here 256 x d_model) of those.

`tiny` is sized for a 2-core CPU: a training step at batch 16 x 300 mel frames takes about 0.35 s
there in graph mode (timings in `xtts_cli/model/xtts.py`). `big` follows the width and head count
of the XTTS GPT (1024 wide, 16 heads; Casanova et al. 2024, "XTTS: a Massively Multilingual
Zero-Shot Text-to-Speech Model") with fewer layers, and wants a GPU.

`r` is the reduction factor (Tacotron, Wang et al. 2017, sec. 3.3): the decoder emits r mel frames
per step, so its sequence is r times shorter. On the tiny preset it cuts the CPU step from
0.54 s (r = 1) to 0.38 s (r = 2), measured side by side; the prediction of frame j still sees only
frames < j. The large presets, meant for GPUs, use r = 1 (XTTS and Tortoise decode one token per
step).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xtts_cli.errors import ConfigError

if TYPE_CHECKING:
    from xtts_cli.config.schema import AcousticConfig

__all__ = ["PRESETS", "ModelDims", "estimate_param_count", "resolve_dims"]


@dataclass(frozen=True)
class ModelDims:
    """Every size the model is built from. Fields are fixed once resolved."""

    d_model: int
    num_heads: int
    num_text_layers: int
    num_decoder_layers: int
    num_speaker_layers: int
    speaker_embedding_dim: int
    ffn_dim: int
    prenet_dim: int
    postnet_channels: int
    postnet_layers: int
    postnet_kernel_size: int
    reduction_factor: int
    dropout: float = 0.1
    # Convolutions over the character embeddings before the text encoder (model/xtts.py TextPrenet);
    # 0: none.
    text_prenet_layers: int = 0
    text_prenet_kernel_size: int = 5
    # Tacotron 2 (Shen et al. 2018, sec. 2.2) uses 0.5 in the prenet, higher than elsewhere: the
    # prenet is the information bottleneck that keeps the autoregressive decoder from copying
    # its previous frame.
    prenet_dropout: float = 0.5

    def __post_init__(self) -> None:
        for name in (
            "d_model",
            "num_heads",
            "num_text_layers",
            "num_decoder_layers",
            "num_speaker_layers",
            "speaker_embedding_dim",
            "ffn_dim",
            "prenet_dim",
            "postnet_channels",
            "reduction_factor",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"model {name} ({value!r}) must be a positive whole number")
        if self.text_prenet_layers < 0:
            raise ConfigError(f"model text_prenet_layers ({self.text_prenet_layers}) must be >= 0 (0 turns it off)")
        if self.text_prenet_kernel_size < 1:
            raise ConfigError(f"model text_prenet_kernel_size ({self.text_prenet_kernel_size}) must be >= 1")
        if self.postnet_layers < 0:
            raise ConfigError(f"model postnet_layers ({self.postnet_layers}) must be >= 0 (0 turns the postnet off)")
        if self.postnet_layers == 1:
            raise ConfigError("model postnet_layers (1) must be 0 or >= 2 (one hidden layer and one output layer)")
        if self.d_model % self.num_heads:
            raise ConfigError(
                f"model.d_model ({self.d_model}) must be divisible by model.num_heads ({self.num_heads}); "
                f"choose num_heads among {_divisors(self.d_model)} or change d_model"
            )
        for name in ("dropout", "prenet_dropout"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ConfigError(f"model {name} ({value}) must be in [0, 1)")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.num_heads


def _divisors(number: int) -> list[int]:
    return [candidate for candidate in range(1, min(number, 64) + 1) if number % candidate == 0]


PRESETS: dict[str, ModelDims] = {
    "tiny": ModelDims(
        d_model=128,
        num_heads=2,
        num_text_layers=2,
        num_decoder_layers=2,
        num_speaker_layers=1,
        speaker_embedding_dim=64,
        ffn_dim=512,
        prenet_dim=128,
        # A 64-channel, 3-layer postnet: at 128 channels the postnet took a quarter to a third of the
        # CPU training step (0.25 s without it, 0.34-0.40 s with it, tiny at batch 16 x 300 frames).
        postnet_channels=64,
        postnet_layers=3,
        postnet_kernel_size=5,
        reduction_factor=2,
    ),
    "small": ModelDims(
        d_model=256,
        num_heads=4,
        num_text_layers=4,
        num_decoder_layers=4,
        num_speaker_layers=2,
        speaker_embedding_dim=128,
        ffn_dim=1024,
        prenet_dim=256,
        postnet_channels=256,
        postnet_layers=5,
        postnet_kernel_size=5,
        reduction_factor=2,
    ),
    # Postnet 5 x 512, kernel 5: Tacotron 2 (Shen et al. 2018, sec. 2.2).
    "normal": ModelDims(
        d_model=512,
        num_heads=8,
        num_text_layers=6,
        num_decoder_layers=6,
        num_speaker_layers=2,
        speaker_embedding_dim=256,
        ffn_dim=2048,
        prenet_dim=256,
        postnet_channels=512,
        postnet_layers=5,
        postnet_kernel_size=5,
        reduction_factor=1,
    ),
    "big": ModelDims(
        d_model=1024,
        num_heads=16,
        num_text_layers=6,
        num_decoder_layers=12,
        num_speaker_layers=3,
        speaker_embedding_dim=512,
        ffn_dim=4096,
        prenet_dim=256,
        postnet_channels=512,
        postnet_layers=5,
        postnet_kernel_size=5,
        reduction_factor=1,
    ),
}


# The sizes a config may leave empty (None) for its `model_size` preset to give.
OVERRIDES = (
    "d_model",
    "num_heads",
    "num_text_layers",
    "num_decoder_layers",
    "speaker_embedding_dim",
    "reduction_factor",
    "prenet_dropout",
    "text_prenet_layers",
)


def resolved_identity(identity: dict[str, Any]) -> dict[str, Any]:
    """A run's model identity ("model.key": value) with each size left to the preset given as the
    preset has it: `d_model: 128` written out on `model_size: tiny` is the network `tiny` builds (every
    preset's feed-forward width is 4 x d_model, as an override's is), and resumes or adapts as one."""
    size = identity.get("model.model_size")
    preset = PRESETS.get(size) if isinstance(size, str) else None
    if preset is None:  # another kind's identity
        return identity
    return {
        key: getattr(preset, key[len("model.") :]) if value is None and key[len("model.") :] in OVERRIDES else value
        for key, value in identity.items()
    }


def resolve_dims(model_cfg: AcousticConfig) -> ModelDims:
    """The preset named by `model_cfg.model_size` with the config's overrides applied.

    A changed `d_model` also scales the feed-forward width (4 x d_model, as in the Transformer,
    Vaswani et al. 2017) so an override keeps the preset's proportions.
    """
    try:
        preset = PRESETS[model_cfg.model_size]
    except KeyError:
        raise ConfigError(
            f"model.model_size ({model_cfg.model_size!r}) is not a preset; use one of {', '.join(PRESETS)}"
        ) from None
    changes: dict[str, Any] = {"dropout": model_cfg.dropout}
    for name in OVERRIDES:
        value = getattr(model_cfg, name)
        if value is not None:
            changes[name] = value
    if model_cfg.d_model is not None:
        changes["ffn_dim"] = 4 * model_cfg.d_model
    return dataclasses.replace(preset, **changes)


def estimate_param_count(dims: ModelDims, *, n_mels: int, vocab_size: int, paced: bool = False) -> int:
    """Trainable parameters of the network `build_model` makes (`paced`: the duration decoder's,
    `DurationModel.paced`; else the autoregressive one's), counted without building it.

    Mirrors the layer lists in `xtts.py` and `duration.py`; `tests/test_model_presets.py` checks it
    against built models so the two cannot drift apart.
    """
    d, ffn, r = dims.d_model, dims.ffn_dim, dims.reduction_factor

    def dense(fan_in: int, fan_out: int) -> int:
        return fan_in * fan_out + fan_out

    layer_norm = 2 * d
    attention = 4 * dense(d, d)
    feed_forward = dense(d, ffn) + dense(ffn, d)
    encoder_layer = 2 * layer_norm + attention + feed_forward
    decoder_layer = 3 * layer_norm + 2 * attention + feed_forward

    text_encoder = vocab_size * d + dims.num_text_layers * encoder_layer + layer_norm
    if dims.text_prenet_layers:
        convolution = dims.text_prenet_kernel_size * d * d + d
        text_encoder += dims.text_prenet_layers * (convolution + layer_norm) + dense(d, d)
    speaker_encoder = (
        dense(n_mels, d)
        + dims.num_speaker_layers * encoder_layer
        + layer_norm
        + d  # pooling query
        + attention
        + dense(d, dims.speaker_embedding_dim)
    )

    def conv1d(kernel: int, fan_in: int, fan_out: int) -> int:
        return kernel * fan_in * fan_out + fan_out

    if paced:
        aligner_channels = 80  # duration.ALIGNER_CHANNELS
        aligner = (
            conv1d(3, d, 2 * d)
            + conv1d(1, 2 * d, aligner_channels)
            + conv1d(3, n_mels, 2 * n_mels)
            + conv1d(1, 2 * n_mels, n_mels)
            + conv1d(1, n_mels, aligner_channels)
        )
        duration_predictor = 2 * (conv1d(3, d, d) + layer_norm) + dense(d, 1)
        frame_layer = 2 * layer_norm + attention + conv1d(3, d, ffn) + dense(ffn, d)
        decoder_params = (
            aligner
            + duration_predictor
            + dense(2, d)  # token position features
            + dense(dims.speaker_embedding_dim, d)
            + dims.num_decoder_layers * frame_layer
            + layer_norm
            + dense(d, r * n_mels)
            + 2 * n_mels  # the mel statistics (not trained)
        )
    else:
        decoder_params = (
            n_mels  # go frame
            + dense(n_mels, dims.prenet_dim)
            + dense(dims.prenet_dim, dims.prenet_dim)
            + dense(dims.prenet_dim, d)
            + dense(dims.speaker_embedding_dim, d)
            + dims.num_decoder_layers * decoder_layer
            + layer_norm
            + dense(d, r * n_mels)
            + dense(d, r)
        )
    postnet = 0
    if dims.postnet_layers:
        channels, kernel = dims.postnet_channels, dims.postnet_kernel_size
        postnet += kernel * n_mels * channels + channels
        postnet += (dims.postnet_layers - 2) * (kernel * channels * channels + channels)
        postnet += kernel * channels * n_mels + n_mels
    return text_encoder + speaker_encoder + decoder_params + postnet
