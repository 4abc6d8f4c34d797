"""Config errors as one readable line each: dotted location, the bad value, a hint."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

__all__ = ["did_you_mean", "validation_error_lines"]


def did_you_mean(name: str, section: str, sections: dict[str, type[BaseModel]]) -> str | None:
    """Closest known key for a typo, looking in the key's own section first, then in the others."""
    own = sections.get(section)
    if own is not None:
        close = difflib.get_close_matches(name, list(own.model_fields), n=1, cutoff=0.6)
        if close:
            return f"{section}.{close[0]}"
    for other, model in sections.items():
        if other != section and name in model.model_fields:
            return f"{other}.{name}"
    for other, model in sections.items():
        close = difflib.get_close_matches(name, list(model.model_fields), n=1, cutoff=0.8)
        if close:
            return f"{other}.{close[0]}"
    return None


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "empty"
    return str(value)


def _dotted(loc: Iterable[Any]) -> str:
    return ".".join(str(part) for part in loc)


def validation_error_lines(
    error: ValidationError, sections: dict[str, type[BaseModel]], written: Iterable[str] = ()
) -> list[str]:
    """One line per pydantic error, written for a person editing a YAML file, in file order.

    `written` lists the dotted keys in the order they appear in the file.
    """
    position = {key: index for index, key in enumerate(written)}
    items = sorted(
        error.errors(include_url=False),
        key=lambda item: position.get(_dotted(item.get("loc", ())[:2]), len(position)),
    )
    prefix = ""
    lines: list[str] = []
    for item in items:
        loc = list(item.get("loc", ()))
        where = prefix + _dotted(loc) if loc else prefix.rstrip(".") or "config"
        kind = item.get("type", "")
        if kind == "extra_forbidden":
            section = loc[0] if len(loc) > 1 else ""
            name = str(loc[-1])
            if len(loc) == 1:
                close = difflib.get_close_matches(name, list(sections), n=1, cutoff=0.6)
                guess = close[0] if close else None
                known = ", ".join(sections)
                hint = f"did you mean {guess}?" if guess else f"sections are: {known}"
                lines.append(f"{where}: unknown section; {hint}")
                continue
            guess = did_you_mean(name, str(section), sections)
            hint = f"did you mean {guess}?" if guess else f"see docs/config.md for the keys of '{section}'"
            lines.append(f"{where}: unknown key; {hint}")
            continue
        message = str(item.get("msg", "invalid"))
        for lead in ("Value error, ", "Input should be "):
            if message.startswith(lead):
                message = message[len(lead) :] if lead == "Value error, " else "should be " + message[len(lead) :]
        if kind in ("model_type", "dict_type") and loc:
            lines.append(f"{where}: expected a mapping of keys, got {_show(item.get('input'))}")
            continue
        if isinstance(item.get("input"), dict):
            # A check across several keys of one section: the whole section is the "value".
            lines.append(f"{where}: {message}")
        else:
            lines.append(f"{where}: {_show(item.get('input'))} is invalid: {message}")
    return lines
