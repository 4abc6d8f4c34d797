"""`build_model`: the model a config asks for, autoregressive (`xtts.XttsModel`) or duration-based
(`duration.DurationModel`), with its weights built.

Its own module so that `xtts` (the shared `AcousticModel` and the autoregressive decoder) and
`duration` (the duration decoder) do not import each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xtts_cli.model.duration import DurationModel
from xtts_cli.model.presets import resolve_dims
from xtts_cli.model.xtts import AcousticModel, XttsModel, dummy_batch

if TYPE_CHECKING:
    from xtts_cli.config.schema import DataConfig, ModelConfig

__all__ = ["DECODERS", "build_model", "build_model_for"]

DECODERS: dict[str, type[AcousticModel]] = {"autoregressive": XttsModel, "duration": DurationModel}


def build_model(
    model_cfg: ModelConfig, data_cfg: DataConfig, vocab_size: int, *, languages: int = 0, speakers: int = 0
) -> AcousticModel:
    """The model for a config, with its weights built (so `count_params()` works). `languages` and
    `speakers`: how many the run's vocabulary lists (`Tokenizer`; 0 for one saved before it did)."""
    model = DECODERS[model_cfg.decoder](
        dims=resolve_dims(model_cfg),
        n_mels=data_cfg.n_mels,
        vocab_size=vocab_size,
        input_noise=model_cfg.decoder_input_noise,
        num_languages=languages,
        num_speakers=speakers,
        name="xtts",
    )
    model(dummy_batch(n_mels=data_cfg.n_mels), training=False)
    return model


def build_model_for(config, tokenizer) -> AcousticModel:
    """`build_model` for a config's model and data sections and a run's vocabulary (`Tokenizer`)."""
    return build_model(
        config.model,
        config.data,
        tokenizer.vocab_size,
        languages=len(tokenizer.languages),
        speakers=len(tokenizer.speakers),
    )
