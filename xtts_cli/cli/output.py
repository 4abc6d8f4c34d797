"""The one place commands print through: results to stdout, progress and problems to stderr."""

from __future__ import annotations

import json
import sys
from typing import Any, Iterable


def console(stderr: bool = False):
    """A rich console built when the command runs (a module-level one freezes the terminal width)."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def print_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")


def error_lines(lines: Iterable[str], hint: str | None = None) -> None:
    for line in lines:
        sys.stderr.write(f"error: {line}\n")
    if hint:
        sys.stderr.write(f"hint: {hint}\n")


SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
