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

# Keys a command adds around its model's own (cli/profile_pipeline.py `_payload`, cli/benchmark.py,
# cli/diagnose.py, cli/validate.py): (type, description).
PIPELINE_EXTRAS = {
    "dataset": ("object", "The dataset read (keys below)."),
    "dataset.format": ("str", "Its layout: ljspeech, coqui, vctk, ..."),
    "dataset.items": ("int", "Clips kept by the scan."),
    "dataset.speakers": ("int", "Speakers among them."),
    "dataset.hours": ("float", "Hours of audio kept."),
    "feature_bytes_estimate": (
        "int",
        "Bytes the whole dataset's features take as kept (16-bit log-mels; a training clip once per repeat its weight gives it).",
    ),
    "sweep_notes": ("list of str or null", "With --benchmark: what the sweep's figures mean; null without it."),
}
BENCHMARK_EXTRAS = {
    "written_config": ("str or null", "Where --out wrote the best settings; null without it."),
    "error": (
        "str",
        "Only when no trial ran to the end (exit 1): that there is no best setting; or when Ctrl-C or SIGTERM "
        "stopped the sweep (`stopped`, exit 130 or 143): after how many trials, `best` then ranking those that "
        "finished.",
    ),
    "hint": ("str", "Only with `error`: what to change, or how to finish the sweep."),
    "exit_code": ("int", "Only with `error`: 1, or 130 / 143 after Ctrl-C / SIGTERM."),
}
# The commands that make audio print dictionaries of their own (cli/synthesize.py `_report`, `_speak_lines`,
# `_list`; cli/export.py; cli/vocode.py `_vocode_one`, `_left_out`).
SYNTHESIZE = {
    "out": ("str", "The WAV written; - for stdout."),
    "seconds": ("float", "Length of the audio."),
    "frames": ("int", "Mel frames generated (every sentence's)."),
    "step": ("int", "The checkpoint step that spoke."),
    "run": ("str", "The run directory."),
    "ended_by": (
        "str",
        "What ended the generation: stop token, stop token at the floor, length limit, durations; of a text of "
        "several sentences, length limit where the limit cut any of them (a note names which), else its last one's.",
    ),
    "window_seconds": ("list of float", "The length the training data's speaking rate allows: [low, high] seconds."),
    "alignment_score": ("float or null", "How well the attention followed the text (0-1); null for a paced clip."),
    "speaker": ("str or null", "--speaker as given; null: the reference voice or --speaker-wav."),
    "language": ("str or null", "The language it was read in."),
    "read_as": ("str", "The text as spoken: numbers, dates and abbreviations as words."),
    "voice": ("str", "centroid (a speaker's), clip (--speaker-wav) or reference (the run's own)."),
    "vocoder": ("str", "The vocoder: a run's path, or griffin-lim."),
    "vocoder_step": ("int or null", "The vocoder run's checkpoint step; null for griffin-lim."),
    "sentences": (
        "int",
        "Generations the text was spoken in, in turn: one per sentence, and one per part of a sentence too long "
        "for one (a slower --speed cuts more).",
    ),
    "notes": ("list of str", "What was left out or read as its nearest, and which checkpoint spoke."),
}
SYNTHESIZE_LINES = {
    "out_dir": ("str", "The folder of the clips (NNNN.wav by line number) and index.jsonl."),
    "clips": ("int", "Clips written, one a line."),
    "seconds": ("float", "Their length in all."),
    "step": ("int", "The checkpoint step that spoke."),
    "run": ("str", "The run directory."),
    "vocoder": ("str", "The vocoder: a run's path, or griffin-lim."),
    "vocoder_step": ("int or null", "The vocoder run's checkpoint step; null for griffin-lim."),
    "notes": ("list of str", "Notes on loading the run; each line's own are in index.jsonl."),
    "written_over": ("list of str", "Clips of an earlier call in out_dir that this call wrote over (file names)."),
    "earlier_clips": (
        "list of str",
        "Clips in out_dir this call did not write (an earlier call's, not in index.jsonl): remove them if unwanted.",
    ),
}
SYNTHESIZE_LISTS = {
    "speakers": ("list of object", "With --list-speakers: the run's speakers (keys below)."),
    "speakers[].name": ("str", "The name --speaker takes."),
    "speakers[].minutes": (
        "float or null",
        "Minutes of it the run trained on; null: learnt in the run it started from.",
    ),
    "languages": ("list of str", "With --list-languages: the codes --language takes."),
}
EXPORT = {
    "out": ("str", "The folder written: the SavedModel and export.json."),
    "run": ("str", "The run exported."),
    "step": ("int", "Its checkpoint step."),
    "sample_rate": ("int", "The audio's sample rate."),
    "vocoder": ("str", "The vocoder inside: a vocoder run's path, or griffin-lim."),
    "vocoder_step": ("int or null", "The vocoder run's checkpoint step; null for griffin-lim."),
    "notes": ("list of str", "What loading said: an earlier checkpoint exported, a vocoder stopped early."),
}
VOCODE = {
    "[]": ("list of object", "One recording (--out): an object; several, or --out-dir: a list of them, in order."),
    "[].audio": ("str", "The recording read; or, after the recordings, a folder below one given, not read."),
    "[].out": ("str or null", "The WAV written; null when it was skipped."),
    "[].seconds": ("float or null", "Its length."),
    "[].vocoder": ("str", "The vocoder: a run's path, or griffin-lim."),
    "[].step": ("int or null", "The vocoder run's checkpoint step; null for griffin-lim."),
    "[].real_time_factor": (
        "float or null",
        "Seconds spent per second of audio (a vocoder run's graph built before the first: no trace in it).",
    ),
    "[].notes": ("list of str", "Channels mixed, a rate resampled, silence."),
    "[].skipped": (
        "str or null",
        "Why a recording in a folder (or a folder below it) was left out; null when it was vocoded.",
    ),
    "[].written_over": ("bool", "Its WAV replaced a file of that name that was there before."),
}
DIAGNOSE_EXTRAS = {
    "environment.device_plan": ("str", "Where training would run on this machine, as `train` says it."),
    "findings[].fix_text": ("str or null", "The fix as a line of the config (`set data.num_workers: auto`)."),
}
VALIDATE_EXTRAS = {
    "valid": ("bool", "No errors (warnings allowed unless --strict)."),
    "config": ("str or null", "The config file read; null for the built-in defaults."),
    "diff": ("str", "With --dry-run (or --fix): the change to the file, as a unified diff."),
    "settings": (
        "object or null",
        "What `xtts train` would run here (keys below); null when the config does not read.",
    ),
    "settings.kind": ("str", "The model kind (autoregressive, duration, vocoder)."),
    "settings.devices": (
        "str",
        "Where it would train, as `train` says it (multi_worker: the workers, each on this machine's devices).",
    ),
    "settings.replicas": ("int", "Model replicas (1 but for mirrored and multi-worker)."),
    "settings.per_replica_batch_size": ("int", "Clips each replica takes a step."),
    "settings.global_batch_size": ("int", "Clips a step on this machine, over its replicas."),
    "settings.step_batch_size": (
        "int or null",
        "Clips a step over every worker of a cluster (global_batch_size on one machine); null for a "
        "multi_worker config where TF_CONFIG is not set.",
    ),
    "settings.gradient_accumulation_steps": (
        "int",
        "training.gradient_accumulation_steps: steps whose gradients are averaged into one optimizer update (1: "
        "an update every step). Steps, warm-up and the schedule count steps, not updates.",
    ),
    "settings.steps_per_epoch": (
        "int or null",
        "Steps an epoch of the training split (a cluster's: of the whole dataset at step_batch_size); 0 when it "
        "gives no full batch; null without a usable dataset, or for a multi_worker config where TF_CONFIG is not set.",
    ),
    "settings.total_steps": (
        "int or null",
        "Steps the run would train (training.max_steps, or epochs x steps_per_epoch).",
    ),
    "settings.max_minutes": ("float or null", "training.max_minutes: the time budget; null: none."),
    "settings.graph_mode": ("bool", "The step runs as a traced tf.function."),
    "settings.xla": ("bool", "The step is compiled with XLA (auto resolved for this machine)."),
    "settings.dtype_policy": ("str", "Keras's dtype policy: float32, mixed_float16 or mixed_bfloat16."),
    "settings.pipeline_output": ("str", "What a batch holds per clip: mel or audio."),
    "settings.featurize_on_data_device": ("bool", "The data/model split computes the mels on the data device."),
    "settings.prefetch_device": ("str or null", "Device the pipeline's last stage prefetches onto; null: host."),
    "settings.multi_worker": ("bool", "devices.strategy is multi_worker."),
    "settings.service_address": (
        "str or null",
        "data.service_address: the tf.data service that makes the training batches; null: this machine.",
    ),
}


def _reports():
    """(command, its model or None, what it prints around it, its sections): each report documented.
    A section is (key, model, description, a list of them)."""
    from xtts_cli.diagnosis.checkup import Checkup, DatasetSummary
    from xtts_cli.diagnosis.environment import EnvironmentReport
    from xtts_cli.diagnosis.storage import StorageReport
    from xtts_cli.findings import Finding
    from xtts_cli.profiling.benchmark import BenchmarkReport
    from xtts_cli.profiling.pipeline_profiler import PipelineProfile, SweepBest, SweepCell
    from xtts_cli.profiling.step_profiler import StepProfile
    from xtts_cli.training.events import TrainResult

    return [
        ("train", TrainResult, {}, ()),
        ("validate", None, VALIDATE_EXTRAS, (
            ("findings", Finding, "What the rules found, errors first; each with its fix.", True),
            ("fixed", Finding, "With --fix: the findings it repaired in the file.", True),
            ("dataset", DatasetSummary, "The dataset report; null when the scan could not run.", False),
        )),
        ("diagnose", Checkup, DIAGNOSE_EXTRAS, (
            ("environment", EnvironmentReport, "", False),
            ("storage", StorageReport, "", False),
        )),
        ("profile-step", StepProfile, {}, ()),
        ("profile-pipeline", PipelineProfile, PIPELINE_EXTRAS, (
            ("sweep", SweepCell, "With --benchmark: every cell of the grid, fastest first; null without it.", True),
            ("best", SweepBest, "With --benchmark: the recommendation; null without it.", False),
        )),
        ("benchmark", BenchmarkReport, BENCHMARK_EXTRAS, ()),
        ("synthesize", None, SYNTHESIZE, ()),
        ("synthesize --text-file --out-dir", None, SYNTHESIZE_LINES, ()),
        ("synthesize --list-speakers --list-languages", None, SYNTHESIZE_LISTS, ()),
        ("export", None, EXPORT, ()),
        ("vocode", None, VOCODE, ()),
    ]  # fmt: skip


# Left out of a report as printed: said by other keys (cli/profile_pipeline.py `_payload`), or the
# report's own findings list, joined to the top-level `findings` (cli/diagnose.py, diagnosis/checkup.py).
LEFT_OUT = {"pipeline.feature_cache", "environment.findings", "storage.findings"}


def _table(command: str) -> list[tuple[str, str, str]]:
    """(key, type, description) of every key `command`'s report prints."""
    for name, model, extras, sections in _reports():
        if name != command:
            continue
        table = rows(model) if model is not None else []
        for key, inner, text, many in sections:
            if not any(row[0] == key for row in table):
                table.append((key, f"list of {inner.__name__}" if many else inner.__name__, text))
            table += [row for row in rows(inner, f"{key}[]." if many else f"{key}.") if row[0] not in LEFT_OUT]
        return table + [(key, kind, text) for key, (kind, text) in extras.items()]
    raise KeyError(command)


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
    import dataclasses

    from pydantic import BaseModel

    if isinstance(annotation, type) and (issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation)):
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
    fields = [(name, field.annotation, field.description or "") for name, field in model.model_fields.items()]
    computed = model.model_computed_fields.items()  # properties a dump prints too
    return fields + [(name, field.return_type, field.description or "") for name, field in computed]


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
    return {key for key, _, _ in _table(command)}


def render_markdown() -> str:
    lines = [
        "# `--json` reports",
        "",
        "What `xtts train`, `validate`, `diagnose`, `profile-step`, `profile-pipeline`, `benchmark`, `synthesize`,",
        "`export` and `vocode` print with `--json`: one JSON document on stdout (an object; `vocode`'s a list of",
        "them for several recordings), every key below (a list of objects as `key[].field`;",
        "durations in milliseconds where the key says `_ms`). Generated from the models that make the",
        "reports (`python -m xtts_cli.cli.json_reference`); a test fails when a report prints a key this",
        'page lacks. An error with `--json` is `{"error", "hint", "exit_code"}` instead',
        "([run directory](run-directory.md)), and so is a Ctrl-C or SIGTERM that stops a command before its",
        'report (`"exit_code"` 130 or 143, 129 for a SIGHUP, its `"hint"` null: there is nothing to change; in',
        "training's loop a first one saves, and its report says",
        '`"interrupted"`). One',
        "exception: a worker of a cluster waiting for the others to connect is inside TensorFlow, where no",
        "handler runs, so a Ctrl-C there ends the process at once (status 130, stdout empty;",
        "[scaling](scaling.md) says why).",
        "",
    ]
    for name, *_ in _reports():
        lines += [f"## `xtts {name} --json`", "", "| key | type | what it is |", "|---|---|---|"]
        for key, kind, text in _table(name):
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
