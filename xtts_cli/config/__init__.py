"""The config model and its loader. Import inside commands: pydantic is not free to import."""

from xtts_cli.config.loading import LoadedConfig, resolve_config
from xtts_cli.config.schema import XttsConfig

__all__ = ["LoadedConfig", "XttsConfig", "resolve_config"]
