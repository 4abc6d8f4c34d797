"""Commands registered before their engine lands: they say so and exit 2, printing nothing else."""

from __future__ import annotations

import sys

import typer


def not_implemented(name: str) -> None:
    sys.stderr.write(f"xtts {name}: not implemented yet\n")
    raise typer.Exit(code=2)
