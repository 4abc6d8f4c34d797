"""`xtts diagnose`."""

from __future__ import annotations

from xtts_cli.cli.not_implemented import not_implemented
from xtts_cli.cli.options import ConfigOption


def diagnose(config: ConfigOption = None) -> None:
    """(not implemented yet)"""
    not_implemented("diagnose")
