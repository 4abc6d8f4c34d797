"""Options shared by several commands, defined once so they read the same everywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

ConfigOption = Annotated[
    Optional[Path],
    typer.Option(
        "--config",
        "-c",
        help="YAML config file. Default: configs/config.yaml when it exists, else built-in defaults.",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]
BatchSizeOption = Annotated[
    Optional[int], typer.Option("--batch-size", min=1, help="Override data.batch_size.", show_default=False)
]
NumWorkersOption = Annotated[
    Optional[str],
    typer.Option("--num-workers", help="Override data.num_workers (a number or 'auto').", show_default=False),
]
DataPathOption = Annotated[
    Optional[str],
    typer.Option("--data-path", help="Override data.dataset_path.", show_default=False),
]
