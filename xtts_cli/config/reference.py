"""Generate the config reference (`docs/config.md`) and the documented `configs/config.yaml` from
the model itself, so neither can drift from the code. `python -m xtts_cli.config.reference` writes
both; a test fails when either is stale.
"""

from __future__ import annotations

import sys
import typing
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo

from xtts_cli.config.loading import ALIASES, MOVED, documented_sections
from xtts_cli.findings import yaml_scalar

REPO_ROOT = Path(__file__).resolve().parents[2]
DOC_PATH = REPO_ROOT / "docs" / "config.md"
YAML_PATH = REPO_ROOT / "xtts_cli" / "presets" / "config.yaml"  # configs/config.yaml in a checkout


def _default(info: FieldInfo) -> Any:
    if info.default_factory is not None:
        return info.default_factory()  # type: ignore[call-arg]
    return info.default


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        parts = [_type_name(a) for a in args if a is not type(None)]
        text = " or ".join(parts)
        return text + (" (optional)" if type(None) in args else "")
    if origin is list:
        return f"list of {_type_name(args[0])}"
    return getattr(annotation, "__name__", str(annotation))


def _bounds(info: FieldInfo) -> str:
    parts = []
    for meta in info.metadata:
        for attr, symbol in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            value = getattr(meta, attr, None)
            if value is not None:
                parts.append(f"{symbol} {value:g}" if isinstance(value, float) else f"{symbol} {value}")
    return ", ".join(parts)


def _show_default(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show_default(v) for v in value) + "]"
    return yaml_scalar(value)


def render_markdown() -> str:
    lines = [
        "# Configuration reference",
        "",
        "Generated from `xtts_cli/config/schema.py` by `python -m xtts_cli.config.reference`; do not edit by hand.",
        "",
        "Every command that trains or checks reads one YAML file (synthesize, serve and export read the run's own "
        "`RUN/config.yaml`; `--config/-c`, default `configs/config.yaml` when it exists, else "
        "these defaults). Unknown keys are errors with a did-you-mean. On the command line, `--set KEY=VALUE` sets any key below "
        "(`--set data.batch_size=8`, repeatable) in every command that takes a config, and a few flags are "
        "shortcuts for one key each (`--batch-size`). Its value is YAML, but a path or a name is the text "
        "written (`--set training.run_dir=010`, `--set data.language=no`).",
        "",
        "Keys from older configs that belong elsewhere are accepted as aliases of their canonical place; "
        "writing both with different values is an error:",
        "",
    ]
    for written, canonical in ALIASES.items():
        lines.append(f"- `{written}` → `{canonical}`")
    vocoder_keys = [key for key in MOVED if key.startswith("vocoder.")]
    lines.append(f"- `vocoder.*` (`{vocoder_keys[0]}`, …) → `model.*` of a `model.kind: vocoder` config")
    lines += [f"- `{written}` → `{canonical}`" for written, canonical in MOVED.items() if written not in vocoder_keys]
    lines += [
        "",
        "Such configs (and every run's `config.yaml` written before) also held the other model kind's keys, "
        "which had no effect there: they are left out, and `xtts validate` names them.",
    ]
    for name, title, model in documented_sections():
        lines += [
            "",
            f"## {title}",
            "",
            " ".join((model.__doc__ or "").split()),  # a docstring's lines, as one paragraph
            "",
            "| key | type | default | range | meaning |",
            "|---|---|---|---|---|",
        ]
        for key, info in model.model_fields.items():
            meaning = (info.description or "").replace("|", "\\|")  # a | of its own, not a cell's end
            lines.append(
                f"| `{name}.{key}` | {_type_name(info.annotation)} | `{_show_default(_default(info))}` | "
                f"{_bounds(info)} | {meaning} |"
            )
    return "\n".join(lines) + "\n"


def _wrap(text: str, indent: str, width: int = 100) -> list[str]:
    words, lines, current = text.split(), [], ""
    for word in words:
        if current and len(indent) + 2 + len(current) + 1 + len(word) > width:
            lines.append(f"{indent}# {current}")
            current = word
        else:
            current = f"{current} {word}".strip()
    if current:
        lines.append(f"{indent}# {current}")
    return lines


def render_yaml() -> str:
    lines = [
        "# xtts train --config config",
        "#",
        "# Every key with its default and meaning, generated from the config model",
        "# (python -m xtts_cli.config.reference). Copy this file and change what you need;",
        "# `xtts validate --config FILE` checks it and `--fix` repairs it without losing your comments.",
        "# With these defaults `xtts train` trains the tiny model on the sample bundled with xtts.",
    ]
    shown: set[str] = set()
    for name, _, model in documented_sections():
        if name in shown:  # another kind's model section: its keys are listed in the docs
            kind = model.model_fields["kind"].default
            lines += ["", f"# With `model.kind: {kind}` the model section has other keys: docs/config.md"]
            continue
        shown.add(name)
        lines += ["", f"{name}:"]
        for key, info in model.model_fields.items():
            if isinstance(info.json_schema_extra, dict) and "no_effect" in info.json_schema_extra:
                continue  # accepted from old configs, never suggested
            lines += _wrap(info.description or "", "  ")
            lines.append(f"  {key}: {_show_default(_default(info))}")
    return "\n".join(lines) + "\n"


def main() -> None:
    DOC_PATH.parent.mkdir(parents=True, exist_ok=True)
    DOC_PATH.write_text(render_markdown(), encoding="utf-8")
    YAML_PATH.parent.mkdir(parents=True, exist_ok=True)
    YAML_PATH.write_text(render_yaml(), encoding="utf-8")
    sys.stderr.write(f"wrote {DOC_PATH} and {YAML_PATH}\n")


if __name__ == "__main__":
    main()
