"""`xtts train`."""

from __future__ import annotations

from xtts_cli.cli.not_implemented import not_implemented
from xtts_cli.cli.options import ConfigOption


def train(config: ConfigOption = None) -> None:
    """(not implemented yet)"""
    not_implemented("train")
