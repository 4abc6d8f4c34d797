"""Generate the command reference (`docs/cli.md`) from the Typer app itself, so it cannot drift
from `--help`. `python -m xtts_cli.cli.reference` writes it; a test fails when it is stale.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DOC_PATH = REPO_ROOT / "docs" / "cli.md"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _kind(param_type) -> str:
    """What an option takes: its type, and its range where it has one (a bare "float range" had left
    the range to `--help`)."""
    low, high = getattr(param_type, "min", None), getattr(param_type, "max", None)
    base = param_type.name.removesuffix(" range")
    if low is None and high is None:
        return base
    if low is not None and high is not None:
        return f"{base}, {low:g} to {high:g}"
    return f"{base}, at least {low:g}" if low is not None else f"{base}, at most {high:g}"


def _option_rows(command) -> list[str]:
    # Typer's own copy of click's classes, read by their attributes (click is never imported).
    rows = []
    for param in command.params:
        if getattr(param, "hidden", False) or param.name == "help":
            continue
        argument = param.param_type_name == "argument"
        if argument:
            name = f"`{param.human_readable_name}`"
            kind = "argument" + ("" if param.required else " (optional)")
        else:
            names = [*param.opts, *param.secondary_opts]
            name = ", ".join(f"`{n}`" for n in names)
            kind = "flag" if param.is_flag else ""
        if getattr(param.type, "choices", None):
            kind = " \\| ".join(f"`{choice}`" for choice in param.type.choices)
        elif not kind:
            kind = _kind(param.type)
        default = ""
        if not argument and param.show_default is not False and param.default not in (None, ()):
            if not (param.is_flag and param.default is False):
                default = f"`{param.default}`"
        rows.append(f"| {name} | {kind} | {default} | {_cell(getattr(param, 'help', '') or '')} |")
    return rows


def _command_section(name: str, command, level: int = 2) -> list[str]:
    lines = [f"{'#' * level} `xtts {name}`", ""]
    if command.help:
        lines += [inspect.cleandoc(command.help), ""]
    if hasattr(command, "commands"):  # a group (`data-service`)
        for sub_name, sub in command.commands.items():
            lines += _command_section(f"{name} {sub_name}", sub, level + 1)
        return lines
    rows = _option_rows(command)
    if rows:
        lines += ["| option | takes | default | what it does |", "|---|---|---|---|", *rows, ""]
    return lines


def render_markdown() -> str:
    import typer

    from xtts_cli.cli.app import app

    root = typer.main.get_command(app)
    lines = [
        "# Commands",
        "",
        "Generated from the command line itself (`python -m xtts_cli.cli.reference`); `xtts COMMAND --help`",
        "prints the same. Every command that trains or checks reads the config given by `--config`/`-c` (a file, "
        "or a preset's name; synthesize, serve and export read the run's own `RUN/config.yaml`)",
        "and its flags override single fields of it.",
        "",
    ]
    lines += ["## `xtts`", "", "| option | takes | default | what it does |", "|---|---|---|---|"]
    lines += _option_rows(root)
    lines.append("")
    commands: dict = getattr(root, "commands", {})  # the root is a group
    for name, command in commands.items():
        lines += _command_section(name, command)
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> int:
    DOC_PATH.write_text(render_markdown(), encoding="utf-8")
    sys.stdout.write(f"wrote {DOC_PATH}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
