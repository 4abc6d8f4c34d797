"""`build_model`: an acoustic network (`xtts.XttsModel`, `duration.DurationModel`: which one a
config asks for is its kind's, xtts_cli/kinds) with its weights built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xtts_cli.model.presets import resolve_dims
from xtts_cli.model.xtts import AcousticModel, XttsModel, built_by_calling, dummy_batch

if TYPE_CHECKING:
    from xtts_cli.config.schema import AcousticConfig, DataConfig

__all__ = ["build_model", "build_model_for"]


def build_model(
    model_cfg: AcousticConfig,
    data_cfg: DataConfig,
    vocab_size: int,
    *,
    network: type[AcousticModel] = XttsModel,
    languages: int = 0,
    speakers: int = 0,
) -> AcousticModel:
    """The `network` for a config, with its weights built (so `count_params()` works). `languages`
    and `speakers`: how many the run's vocabulary lists (`Tokenizer`; 0 for one saved before it did)."""
    model = network(
        dims=resolve_dims(model_cfg),
        n_mels=data_cfg.n_mels,
        vocab_size=vocab_size,
        input_noise=model_cfg.decoder_input_noise,
        num_languages=languages,
        num_speakers=speakers,
        name="xtts",
    )
    built_by_calling(model, dummy_batch(n_mels=data_cfg.n_mels), training=False)
    return model


def build_model_for(network: type[AcousticModel], config, tokenizer) -> AcousticModel:
    """`build_model` for a config's model and data sections and a run's vocabulary (`Tokenizer`)."""
    return build_model(
        config.acoustic,
        config.data,
        tokenizer.vocab_size,
        network=network,
        languages=len(tokenizer.languages),
        speakers=len(tokenizer.speakers),
    )
