"""Model kinds, by the name a config gives (`model.kind`, and `model.decoder` for acoustic models).

A new kind is a module here implementing `base.ModelKind`, one line in `KINDS` and its config
block in `config/schema.py`; the engine needs nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xtts_cli.training.kinds.acoustic import AUTOREGRESSIVE, DURATION
from xtts_cli.training.kinds.base import KindContext, KindModels, ModelKind
from xtts_cli.training.kinds.vocoder import VOCODER

if TYPE_CHECKING:
    from xtts_cli.config.schema import XttsConfig

__all__ = ["KINDS", "KindContext", "KindModels", "ModelKind", "kind_for", "kind_name"]

KINDS: dict[str, ModelKind] = {
    "autoregressive": AUTOREGRESSIVE,
    "duration": DURATION,
    "vocoder": VOCODER,
}


def kind_name(config: XttsConfig) -> str:
    """`model.kind`, or for an acoustic model its decoder."""
    return config.model.decoder if config.model.kind == "acoustic" else config.model.kind


def kind_for(config: XttsConfig) -> ModelKind:
    return KINDS[kind_name(config)]
