"""Generate the reference of the `--json` reports (`docs/json.md`) from the models that make them, so
a key cannot go undocumented. `python -m xtts_cli.cli.json_reference` writes it; a test fails when it
is stale, and another when a report prints a key the page lacks.
"""

from __future__ import annotations

import sys
import typing
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
DOC_PATH = REPO_ROOT / "docs" / "json.md"

# Keys a command adds around its model's own (cli/profile_pipeline.py `_payload`, cli/benchmark.py).
PIPELINE_EXTRAS = {
    "dataset": ("object", "The dataset read: `format` (its layout), `items`, `speakers`, `hours`."),
    "dataset.format": ("str", "Its layout: ljspeech, coqui, vctk, ..."),
    "dataset.items": ("int", "Clips kept by the scan."),
    "dataset.speakers": ("int", "Speakers among them."),
    "dataset.hours": ("float", "Hours of audio kept."),
    "feature_bytes_estimate": ("int", "Bytes the whole dataset's features take as kept (16-bit log-mels)."),
}
SWEEP_EXTRAS = {"sweep_notes": ("list[str]", "With --benchmark: what the sweep's figures mean.")}
BENCHMARK_EXTRAS = {"written_config": ("str", "Where --write-config wrote the best settings; null without it.")}


def _models():
    """(command, its model, what it prints around the model) for each report documented."""
    from xtts_cli.profiling.benchmark import BenchmarkReport
    from xtts_cli.profiling.pipeline_profiler import PipelineProfile, SweepBest, SweepCell
    from xtts_cli.profiling.step_profiler import StepProfile
    from xtts_cli.training.events import TrainResult

    return [
        ("train", TrainResult, {}, ()),
        ("profile-step", StepProfile, {}, ()),
        (
            "profile-pipeline",
            PipelineProfile,
            {**PIPELINE_EXTRAS, **SWEEP_EXTRAS},
            (
                ("sweep", SweepCell, "With --benchmark: every cell of the grid, fastest first."),
                ("best", SweepBest, "With --benchmark: the recommendation."),
            ),
        ),
        ("benchmark", BenchmarkReport, BENCHMARK_EXTRAS, ()),
    ]


# Left out of a report as printed (cli/profile_pipeline.py `_payload`): said by other keys.
LEFT_OUT = {"pipeline.feature_cache"}


def _type_name(annotation: Any) -> str:
    """`annotation` as a reader of JSON meets it: `int or null`, `"ok" or "oom"`, `list of float`."""
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return " or ".join(f'"{value}"' for value in arguments)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " or ".join("null" if a is type(None) else _type_name(a) for a in arguments)
    if origin is list:
        return f"list of {_type_name(arguments[0])}"
    if origin is dict:
        return f"object of {_type_name(arguments[1])}"
    if annotation is Any:
        return "any"
    if annotation is Path:
        return "str (a path)"
    return getattr(annotation, "__name__", str(annotation))


def _nested(annotation: Any):
    """The model inside `annotation` (a model, a list or Optional of one), with whether it is a list."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    for argument in typing.get_args(annotation):
        found = _nested(argument)
        if found[0] is not None:
            origin = typing.get_origin(annotation)
            return found[0], found[1] or origin is list
    return None, False


def _fields(model) -> list[tuple[str, Any, str]]:
    """(name, type, description) of a pydantic model's fields, or a dataclass's (its `metadata`)."""
    import dataclasses

    if dataclasses.is_dataclass(model):
        hints = typing.get_type_hints(model)
        return [(f.name, hints[f.name], f.metadata.get("description", "")) for f in dataclasses.fields(model)]
    return [(name, field.annotation, field.description or "") for name, field in model.model_fields.items()]


def rows(model, prefix: str = "") -> list[tuple[str, str, str]]:
    """(dotted key, type, description) of every field of `model`, nested models' fields after their
    own row (a list of them as `key[].field`). A field without a description is an error."""
    found = []
    for name, annotation, description in _fields(model):
        key = f"{prefix}{name}"
        if key in LEFT_OUT:
            continue
        if not description:
            raise ValueError(f"{model.__name__}.{name} has no description: give it one (Field(description=...))")
        inner, many = _nested(annotation)
        shown = (f"list of {inner.__name__}" if many else inner.__name__) if inner is not None else None
        found.append((key, shown or _type_name(annotation), description))
        if inner is not None:
            found += rows(inner, f"{key}[]." if many else f"{key}.")
    return found


def documented_keys(command: str) -> set[str]:
    """Every key the page documents for `command`'s report (list items as `key[].field`)."""
    for name, model, extras, sections in _models():
        if name == command:
            keys = {key for key, _, _ in rows(model)} | set(extras)
            for key, inner, _ in sections:
                keys |= {key} | {row[0] for row in rows(inner, f"{key}[]." if key == "sweep" else f"{key}.")}
            return keys
    raise KeyError(command)


def render_markdown() -> str:
    lines = [
        "# `--json` reports",
        "",
        "What `xtts train`, `profile-step`, `profile-pipeline` and `benchmark` print with `--json`: one JSON object",
        "on stdout, every key below (a list of objects as `key[].field`; figures in milliseconds where the",
        "key says `_ms`). Generated from the models that make the reports (`python -m",
        "xtts_cli.cli.json_reference`); a test fails when a report prints a key this page lacks. Errors",
        'with `--json` are `{"error", "hint", "exit_code"}` ([run directory](run-directory.md)); `validate`',
        "and `diagnose` are described on [validate](validate.md) and [bottlenecks](bottlenecks.md).",
        "",
    ]
    for name, model, extras, sections in _models():
        lines += [f"## `xtts {name} --json`", "", "| key | type | what it is |", "|---|---|---|"]
        table = rows(model) + [(key, kind, text) for key, (kind, text) in extras.items()]
        for key, inner, text in sections:
            nested = rows(inner, f"{key}[]." if key == "sweep" else f"{key}.")
            table += [(key, f"list of {inner.__name__}" if key == "sweep" else inner.__name__, text), *nested]
        for key, kind, text in table:
            cell = " ".join(text.split()).replace("|", "\\|")
            lines.append(f"| `{key}` | {kind.replace('|', chr(92) + '|')} | {cell} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    DOC_PATH.write_text(render_markdown(), encoding="utf-8")
    sys.stdout.write(f"wrote {DOC_PATH}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
