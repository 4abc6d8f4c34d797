"""`--optimization-level`: named bundles of settings, so a user need not know every key.

Each level is a set of config changes applied over the config file (the level is asked for on the
command line, for this run) and under the user's own command-line flags (a flag the user gave
always wins). Levels build on each other:

| level | adds |
|---|---|
| `basic` | graph mode on, eager debugging off |
| `enhanced` | + XLA where it pays (`auto`: on GPUs), TF-native loading, length bucketing, features cached in memory when they fit (`auto`), auto parallelism and prefetch |
| `maximum` | + features precomputed to disk; mixed precision when a GPU of compute capability >= 7.0 is visible |
"""

from __future__ import annotations

from typing import Any, Optional

from xtts_cli.errors import ConfigError

BASIC: dict[str, Any] = {"training.enable_graph_mode": True, "training.enable_eager_debug": False}
ENHANCED: dict[str, Any] = {
    **BASIC,
    "training.enable_xla_compilation": "auto",
    "data.use_tf_native_loading": True,
    "data.bucket_by_length": True,
    "data.preprocessing_mode": "auto",
    "data.num_workers": "auto",
    "data.prefetch_buffer_size": "auto",
}
MAXIMUM: dict[str, Any] = {**ENHANCED, "data.preprocessing_mode": "precompute"}
LEVELS = {"basic": BASIC, "enhanced": ENHANCED, "maximum": MAXIMUM}


def level_settings(name: str, mixed_precision_gpu: bool) -> dict[str, Any]:
    """The level's settings; `mixed_precision_gpu`: a GPU of compute capability >= 7.0 is visible."""
    key = name.strip().lower()
    if key not in LEVELS:
        raise ConfigError(f"--optimization-level {name!r} is unknown; use one of: {', '.join(LEVELS)}")
    settings: dict[str, Any] = dict(LEVELS[key])
    if key == "maximum" and mixed_precision_gpu:
        settings["training.mixed_precision"] = True
    return settings


def apply_optimization_level(name: str, overrides: dict[str, Any], mixed_precision_gpu: bool) -> dict[str, Any]:
    """The level's settings with the user's explicit flags (non-None overrides) on top."""
    merged = level_settings(name, mixed_precision_gpu)
    merged.update({k: v for k, v in overrides.items() if v is not None})
    return merged


def replaced_by_level(name: Any, loaded: Any, own: set[str]) -> Optional[str]:
    """What the level set over values the config file wrote (`own`: the keys the user's own flags and
    --set gave, which the level gives way to), as one note; None when it replaced none. A file's
    `preprocessing_mode: precompute` had become `auto` under `enhanced` without a word."""
    level = getattr(name, "value", name)
    if level is None or loaded.path is None:
        return None
    replaced = [
        f"{key} {loaded.raw_value(key)} -> {loaded.given[key]}"
        for key in level_settings(str(level), True)
        if key not in own
        and key in loaded.given
        and loaded.written(key)
        and str(loaded.raw_value(key)).lower() != str(loaded.given[key]).lower()
    ]
    if not replaced:
        return None
    return (
        f"--optimization-level {level} sets over what {loaded.path.name} writes: {', '.join(replaced)} "
        "(a flag or --set KEY=VALUE of your own keeps yours)"
    )
