"""Config errors as one readable line each: dotted location, the bad value, a hint."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Optional

from pydantic import ValidationError

from xtts_cli.config.model_kinds import MODEL_SECTIONS

__all__ = ["did_you_mean", "validation_error_lines"]


# Each section's keys by name (`loading.section_fields()`).
Sections = Mapping[str, Mapping[str, Any]]


def did_you_mean(name: str, section: str, sections: Sections) -> str | None:
    """Closest known key for a typo, looking in the key's own section first, then in the others."""
    own = sections.get(section)
    if own is not None:
        close = difflib.get_close_matches(name, list(own), n=1, cutoff=0.6)
        if close:
            return f"{section}.{close[0]}"
    for other, keys in sections.items():
        if other != section and name in keys:
            return f"{other}.{name}"
    for other, keys in sections.items():
        close = difflib.get_close_matches(name, list(keys), n=1, cutoff=0.8)
        if close:
            return f"{other}.{close[0]}"
    return None


def _other_kind(name: str, kind: str) -> str | None:
    """A `model` key another kind's section has: which kind that is."""
    return next(
        (other for other, section in MODEL_SECTIONS.items() if other != kind and name in section.model_fields), None
    )


def show_value(value: Any) -> str:
    """A value as an error line shows it: '5', 'a list', 'empty'."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "empty"
    if isinstance(value, bool):  # as YAML writes it: the file says true, not Python's True
        return "true" if value else "false"
    return str(value)


def _dotted(loc: Iterable[Any]) -> str:
    """data.datasets[0].path: a list item by its index, as the other messages name it."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _misplaced(name: str, sections: Sections) -> str:
    """Where a top-level name that is a section's key belongs: `data.batch_size: 8` (a --set's
    dotted key written in a file), or `batch_size: 8` under a `data:` left unindented."""
    head, dot, rest = name.partition(".")
    if dot and head in sections and rest in sections[head]:
        return (
            f"a file writes it nested, `{head}:` and `{rest}: ...` indented on the line below (dotted keys are --set's)"
        )
    owners = [section for section, keys in sections.items() if name in keys]
    if len(owners) > 1:  # training.seed and data.seed: the one it was meant for is the writer's
        return f"{name} is a key of {', '.join(owners[:-1])} and {owners[-1]}: indent it under the one it belongs to"
    return f"{name} is a key of {owners[0]}: indent it under `{owners[0]}:`" if owners else ""


def _unknown_key_line(where: str, loc: list, model_kind: str, sections: Sections) -> str:
    """The line of a key the schema does not know: where it belongs, or the nearest known one."""
    section = loc[0] if len(loc) > 1 else ""
    name = str(loc[-1])
    if name != name.strip() and where.endswith(name):  # "batch_size ": it had read "data.batch_size : unknown key"
        return f"{where[: -len(name)]}{name!r}: unknown key: a space is part of its name; write {name.strip()!r}"
    other = _other_kind(name, model_kind) if section == "model" else None
    if other:
        return f"{where}: a key of model.kind {other}, not of this {model_kind} model; remove it"
    if len(loc) == 1 and (placed := _misplaced(name, sections)):
        return f"{where}: unknown section; {placed}"
    if len(loc) == 1:
        close = difflib.get_close_matches(name, list(sections), n=1, cutoff=0.6)
        guess = close[0] if close else None
        known = ", ".join(sections)
        hint = f"did you mean {guess}?" if guess else f"sections are: {known}"
        return f"{where}: unknown section; {hint}"
    if len(loc) == 4 and loc[:2] == ["data", "datasets"]:  # a key of one dataset's {path, weight, ...}
        from xtts_cli.config.schema import DatasetSource

        close = difflib.get_close_matches(name, list(DatasetSource.model_fields), n=1, cutoff=0.6)
        known = ", ".join(DatasetSource.model_fields)
        return f"{where}: unknown key; " + (f"did you mean {close[0]}?" if close else f"a dataset has {known}")
    guess = did_you_mean(name, str(section), sections)
    hint = f"did you mean {guess}?" if guess else f"see docs/config.md for the keys of '{section}'"
    inner = name.removeprefix(f"{section}.")
    if inner != name and inner in sections.get(str(section), {}):  # data: then data.batch_size
        hint = f"under `{section}:` write it as {inner} (the section names itself once)"
    return f"{where}: unknown key; {hint}"


def validation_error_lines(error: ValidationError, sections: Sections, written: Iterable[str] = ()) -> list[str]:
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
        # A union's members are in the path (`cache_memory_limit.literal['auto']`): the key is the place.
        loc = [part for part in item.get("loc", ()) if not _union_member(part)]
        model_kind = ""
        if len(loc) > 1 and loc[0] == "model" and loc[1] in MODEL_SECTIONS:
            model_kind = str(loc.pop(1))  # the union's tag: `model.vocoder.dim` is written `model.dim`
        where = prefix + _dotted(loc) if loc else prefix.rstrip(".") or "config"
        kind = item.get("type", "")
        if kind == "model_kind":
            lines.append(
                f"model.kind: {show_value(item.get('input', {}).get('kind'))} is invalid: should be {' or '.join(MODEL_SECTIONS)}"
            )
            continue
        if kind == "extra_forbidden":
            lines.append(_unknown_key_line(where, loc, model_kind, sections))
            continue
        message = str(item.get("msg", "invalid"))
        for lead in ("Value error, ", "Input should be "):
            if message.startswith(lead):
                message = message[len(lead) :] if lead == "Value error, " else "should be " + message[len(lead) :]
        if kind in ("model_type", "dict_type") and loc:
            lines.append(f"{where}: expected a mapping of keys, got {show_value(item.get('input'))}")
            continue
        if isinstance(item.get("input"), dict):
            # A check across several keys of one section: the whole section is the "value"; one across
            # sections names its keys itself ("training.freeze: ...").
            lines.append(f"{where}: {message}" if loc or prefix else message)
        elif kind == "string_type" and isinstance(item.get("input"), bool):
            # YAML 1.1 reads an unquoted yes/no/on/off as true or false: Norwegian's code `no` among them.
            said = "yes, on or true" if item["input"] else "no, off or false"
            word = said.split(",")[0]
            lines.append(
                f"{where}: YAML reads an unquoted {said} as {str(item['input']).lower()}, not text; quote what you "
                f"wrote ('{word}', not {word})"
            )
        else:
            whole = _whole_number(item.get("input")) if kind == "int_parsing" else None
            fix = f"; write {whole} (YAML 1.1 loaders such as PyYAML read {item.get('input')} as text)" if whole else ""
            fix += _in_other_case(item) if kind == "literal_error" else ""  # Cache, AdamW: had no word of the case
            if loc[:2] == ["data", "datasets"] and loc[-1] == "weight" and item.get("input") == 0:
                fix += (
                    "; to leave the dataset out, remove its entry (or comment it out)"  # a weight of 0 is no off switch
                )
            lines.append(f"{where}: {show_value(item.get('input'))} is invalid: {message}{fix}")
    return _one_line_a_value(lines)


def _in_other_case(item: Mapping[str, Any]) -> str:
    """'; write cache' where `item`'s input is an allowed value in other capitals (`Cache`), or ''."""
    given = item.get("input")
    allowed = (item.get("ctx") or {}).get("expected", "")
    if not isinstance(given, str):
        return ""
    for value in re.findall(r"'([^']*)'", str(allowed)):
        if value.lower() == given.lower() and value != given:
            return f"; write {value} (in lower case)"
    return ""


def _whole_number(value: Any) -> Optional[int]:
    """1000 for the text '1e3' (a whole number written with an exponent, which an int field refuses)."""
    try:
        number = float(value) if isinstance(value, str) else math.nan
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number.is_integer() else None


def _union_member(part: Any) -> bool:
    """A union member's tag in an error's path (`literal['auto']`, `int`, `function-after[...]`), not a key."""
    return isinstance(part, str) and ("[" in part or part in ("int", "float", "str", "bool", "none", "list"))


def _one_line_a_value(lines: list[str]) -> list[str]:
    """A value every member of a union refused, as one line: `-5 is invalid: should be 'auto', or
    could not parse ...`."""
    merged: dict[str, str] = {}
    for line in lines:
        head, sep, reason = line.partition(" is invalid: ")
        if sep and head in merged:
            merged[head] += f", or {reason}"
        else:
            merged[head if sep else line] = reason if sep else ""
    return [f"{head} is invalid: {reason}" if reason else head for head, reason in merged.items()]
