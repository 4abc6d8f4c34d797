"""Read a YAML config, map the user's vocabulary onto the model, apply CLI overrides.

Engines only ever see the resolved `XttsConfig`; `LoadedConfig` also keeps what `validate` needs
to explain and repair the file (its text, the raw values, and where each value was written).
"""

from __future__ import annotations

import copy
import difflib
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from xtts_cli.config.errors import did_you_mean, show_value, validation_error_lines
from xtts_cli.config.model_kinds import MODEL_SECTIONS, AcousticConfig, VocoderConfig, model_kind_of
from xtts_cli.config.schema import XttsConfig
from xtts_cli.errors import ConfigError

DEFAULT_CONFIG_PATH = Path("configs") / "config.yaml"

# Keys the user's documents put in one place that belong in another: written path -> canonical path.
ALIASES: dict[str, str] = {
    "data.enable_xla": "training.enable_xla_compilation",
    "data.mixed_precision": "training.mixed_precision",
    "training.enable_xla": "training.enable_xla_compilation",
}
# Configs and runs written before each model kind had its own `model` section: the `vocoder`
# section and the autoregressive decoder's training aids (`training.guided_attention_weight`) now
# live in `model`. Keys of the other kind's section, which those configs carried with no effect
# (every run's config.yaml holds every key), are left out (`LoadedConfig.left_out`).
MOVED: dict[str, str] = {
    **{f"vocoder.{key}": f"model.{key}" for key in VocoderConfig.model_fields if key != "kind"},
    **{f"training.{key}": f"model.{key}" for key in AcousticConfig.TRAINING_KEYS},
}


def section_fields() -> dict[str, dict[str, FieldInfo]]:
    """Each section's keys by name; `model` holds those of every kind (`MODEL_SECTIONS`)."""
    fields: dict[str, dict[str, FieldInfo]] = {}
    for name, info in XttsConfig.model_fields.items():
        if name == "model":
            merged: dict[str, FieldInfo] = {}
            for section in MODEL_SECTIONS.values():
                for key, field_info in section.model_fields.items():
                    merged.setdefault(key, field_info)
            fields[name] = merged
        else:
            fields[name] = info.annotation.model_fields  # type: ignore[union-attr]
    return fields


def _a_list(dotted: str) -> bool:
    """Whether `dotted` names a key whose value is a list (`data.datasets`): `data.batch_size.0` is no
    item of a list, and is said as the unknown key it is."""
    section, _, name = dotted.partition(".")
    info = section_fields().get(section, {}).get(name)
    if info is None:
        return False
    annotation = info.annotation
    return getattr(annotation, "__origin__", annotation) is list or "list[" in str(annotation)


def documented_sections() -> list[tuple[str, str, type[BaseModel]]]:
    """(section, heading, model) for each section in file order, `model` once per kind."""
    found: list[tuple[str, str, type[BaseModel]]] = []
    for name, info in XttsConfig.model_fields.items():
        if name == "model":
            found += [(name, f"`model` (`kind: {kind}`)", section) for kind, section in MODEL_SECTIONS.items()]
        else:
            found.append((name, f"`{name}`", info.annotation))  # type: ignore[arg-type]
    return found


@dataclass
class LoadedConfig:
    config: XttsConfig
    path: Optional[Path] = None
    text: Optional[str] = None
    # Canonical values as written in the file (after alias mapping), before pydantic coerced them.
    raw: dict[str, Any] = field(default_factory=dict)
    # Canonical dotted key -> dotted key as written in the file (differs for aliases).
    sources: dict[str, str] = field(default_factory=dict)
    # Dotted keys that came from command-line flags.
    overridden: set[str] = field(default_factory=set)
    # Those keys' values as given (a flag's or `--set`'s), before pydantic coerced them.
    given: dict[str, Any] = field(default_factory=dict)
    # Of those, the keys `--set` gave (a message names `--set KEY=...`, not the flag).
    set_keys: set[str] = field(default_factory=set)
    # Keys of another model kind's section an older config carried, with no effect (`MOVED`).
    left_out: list[str] = field(default_factory=list)

    def written(self, dotted: str) -> bool:
        return dotted in self.sources

    def raw_value(self, dotted: str) -> Any:
        section, key = dotted.split(".", 1)
        return self.raw.get(section, {}).get(key)


class _OnceLoader(yaml.SafeLoader):
    """Safe loading, and a key written twice in one mapping is an error: YAML keeps the last and
    drops the first without a word (a second `data:` section lost the first one's batch size)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        lines: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults`: overriding is its point
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)):
                continue  # an unhashable key: the constructor below names it
            if key in lines:
                raise yaml.constructor.ConstructorError(
                    None, None, f"{key!r} is written twice (first on line {lines[key] + 1})", key_node.start_mark
                )
            lines[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


# YAML 1.1 (PyYAML) reads a number with a leading zero as octal: `batch_size: 016` is 14.
_OCTAL = re.compile(r"[-+]?0[0-7_]+")


def leading_zero(text: str, value: Any) -> Optional[str]:
    """Why `text`, read by YAML as `value`, is refused: a number with a leading zero YAML took for
    octal (016 is 14), which nobody writing a batch size means, or one with colons it took for base 60
    (`max_minutes: 2:30` is 150, `max_steps: 1:00` 60); else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and ":" in text:
        return f"{text.strip()} is a base-60 number to YAML ({value}, as a clock's): write the number you mean"
    if isinstance(value, int) and _OCTAL.fullmatch(text.strip()):
        decimal = int(text.strip().replace("_", ""), 10)
        if decimal != value:
            return f"{text.strip()} has a leading zero, which YAML reads as octal ({value}); write {decimal}"
    return None


def _as_written(construct: Callable[[yaml.SafeLoader, yaml.ScalarNode], Any]):
    """YAML's constructor of a number, refusing one it reads otherwise than it is written (`leading_zero`)."""

    def read(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
        value = construct(loader, node)
        said = leading_zero(str(node.value), value)
        if said is not None:
            raise yaml.constructor.ConstructorError(None, None, said, node.start_mark)
        return value

    return read


_OnceLoader.add_constructor("tag:yaml.org,2002:int", _as_written(yaml.SafeLoader.construct_yaml_int))
_OnceLoader.add_constructor("tag:yaml.org,2002:float", _as_written(yaml.SafeLoader.construct_yaml_float))


def read_config_text(path: Path) -> str:
    """A config file's text, CRLF line ends kept (bytes, not read_text: fixes edit the file
    verbatim); not UTF-8 or unreadable is one line."""
    try:
        raw = path.read_bytes()
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path} is not UTF-8 text (line {line}, byte {exc.start})", hint="save it as UTF-8"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}", hint="pass a YAML file") from None


def parse_yaml(text: str, where: str) -> dict[str, Any]:
    """Safe-load YAML (no object construction from tags); errors carry the line and column."""
    try:
        data = yaml.load(text, Loader=_OnceLoader)  # noqa: S506 - a SafeLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        position = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        problem = exc.problem or exc.context or "invalid YAML"
        if "'\\t'" in problem:  # PyYAML's "found character '\t' that cannot start any token"
            raise ConfigError(
                f"{where}: {position}: a tab; YAML indents, and parts a value from a comment, with spaces",
                hint="replace the tab with spaces (an editor's 'indent using spaces' does it)",
            ) from None
        context = exc.context or ""
        if "single document" in context:  # two configs pasted into one file, the second after a ---
            raise ConfigError(
                f"{where}: {position}: a second YAML document begins (after a ---): a config is one",
                hint="keep one of them in this file (the other in a file of its own)",
            ) from None
        # A [, { or quote still open when the file ends (not a document's end missing: its context is none).
        if ("flow" in context or "quoted scalar" in context) and (
            "stream end" in problem or "end of stream" in problem
        ):
            raise _never_closed(exc, text, where) from None
        # A [ or { still open lines later: where it was opened, the likelier spot to close it.
        if (
            "flow" in context
            and exc.context_mark is not None
            and mark is not None
            and exc.context_mark.line < mark.line
        ):
            problem += (
                f" (inside the {'[' if 'sequence' in context else '{'} opened on line {exc.context_mark.line + 1})"
            )
        raise ConfigError(f"{where}: {position}: {problem}", hint="fix the YAML syntax at that spot") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML: {exc}") from None
    except RecursionError:  # PyYAML reads each [ or indent within another by recursion: a traceback had ended it
        raise ConfigError(
            f"{where}: nested deeper than YAML can read (lists or mappings hundreds deep within each other)",
            hint="write each value as a number, a word or a short list",
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{where}: the top level must be a mapping of sections (data, model, training, devices, profiling, watch, synthesis), "
            f"got {type(data).__name__}",
            hint="write each section as a key with its keys indented under it (data:, then   batch_size: 16)",
        )
    return data


def _never_closed(exc: yaml.MarkedYAMLError, text: str, where: str) -> ConfigError:
    """A bracket or quote the file never closes: PyYAML names the end of the file, a line past the
    last one; the line it was opened on (its context), or else the last line written, is the spot."""
    written = [number for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    last = written[-1] if written else 1
    opened = exc.context_mark.line + 1 if exc.context_mark is not None else last
    line = opened if opened <= last else last
    return ConfigError(
        f"{where}: line {line}: a [, {{ or quote opened there is never closed (the file ends first)",
        hint="close it: [ with ], { with }, a quote with the same quote",
    )


def _has(data: Mapping[str, Any], dotted: str) -> bool:
    section, key = dotted.split(".", 1)
    body = data.get(section)
    return isinstance(body, dict) and key in body


def _left_out(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`data` without the keys of the model kind it is not, when it is laid out as configs were
    before each kind had its own section (which held every kind's keys); in today's layout such a
    key is an error."""
    model = data.get("model")
    kind = model_kind_of(model if isinstance(model, dict) else {})
    if kind not in MODEL_SECTIONS or not any(_has(data, written) for written in MOVED):
        return dict(data), []  # the schema names a bad kind or key
    own = MODEL_SECTIONS[kind].model_fields
    pruned = dict(data)
    dropped = [
        written for written, dotted in MOVED.items() if _has(data, written) and dotted[len("model.") :] not in own
    ]
    for written in dropped:
        section, key = written.split(".", 1)
        pruned[section] = {k: v for k, v in pruned[section].items() if k != key}
    if isinstance(model, dict):
        others = [k for k in model if k not in own and any(k in s.model_fields for s in MODEL_SECTIONS.values())]
        pruned["model"] = {k: v for k, v in model.items() if k not in others}
        dropped += [f"model.{k}" for k in others]
    if pruned.get("vocoder") == {}:
        del pruned["vocoder"]
    return pruned, dropped


def canonicalize(data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """Move aliased and moved keys to their canonical place; two places that disagree are
    reported as errors."""
    canonical: dict[str, Any] = {}
    sources: dict[str, str] = {}
    conflicts: list[str] = []
    renamed = {**ALIASES, **MOVED}
    for section, body in data.items():
        if body is None:  # `data:` with nothing under it
            body = {}
        if not isinstance(body, dict):
            canonical[section] = copy.deepcopy(body)
            continue
        kept = {key: value for key, value in body.items() if f"{section}.{key}" not in renamed}
        if not kept and body and all(f"{section}.{key}" in MOVED for key in body):
            continue  # a section that moved whole (`vocoder`)
        target = canonical.setdefault(section, {})
        if not isinstance(target, dict):
            continue
        for key, value in kept.items():
            target[key] = copy.deepcopy(value)
            sources[f"{section}.{key}"] = f"{section}.{key}"
    for written, dotted in renamed.items():
        w_section, w_key = written.split(".", 1)
        body = data.get(w_section)
        if not isinstance(body, dict) or w_key not in body:
            continue
        value = body[w_key]
        section, key = dotted.split(".", 1)
        target = canonical.setdefault(section, {})
        if not isinstance(target, dict):
            continue
        if key in target and target[key] != value:
            conflicts.append(
                f"{written}: {show_value(value)} disagrees with {sources.get(dotted, dotted)}: "
                f"{show_value(target[key])}; "
                f"keep only {dotted}"
            )
            continue
        target[key] = copy.deepcopy(value)
        sources.setdefault(dotted, written)
    return canonical, sources, conflicts


def other_places(data: Mapping[str, Any], dotted: str) -> list[str]:
    """The places other than its own where a config file as read (`data`) writes canonical key
    `dotted` under an older name (`data.mixed_precision` for `training.mixed_precision`): a fix
    edits them too, or the file would say two things and not load."""
    found = []
    for written, canonical in {**ALIASES, **MOVED}.items():
        section, key = written.split(".", 1)
        body = data.get(section)
        if canonical == dotted and isinstance(body, dict) and key in body:
            found.append(written)
    return found


def written_config(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A config tree as a file holds it, in today's places (`_left_out`, then `canonicalize`), with
    the conflicts found."""
    pruned, _ = _left_out(data)
    canonical, _, conflicts = canonicalize(pruned)
    return canonical, conflicts


def _set_dotted(tree: dict[str, Any], dotted: str, value: Any) -> None:
    section, key = dotted.split(".", 1)
    body = tree.setdefault(section, {})
    if not isinstance(body, dict):
        raise ConfigError(f"{section}: expected a mapping of keys, got {show_value(body)}")
    body[key] = value


def build_config(
    canonical: Mapping[str, Any],
    where: str = "config",
    earlier: tuple[str, ...] = (),
    given: Sequence[str] = (),
    sources: Mapping[str, str] = {},
) -> XttsConfig:
    """Validate; `earlier` errors (alias conflicts) are reported together with the schema's own.
    `given`: keys set on the command line, which the hint points at when one of them is wrong.
    `sources`: where the file wrote a key (`canonicalize`), which its error line names."""
    from xtts_cli.config.preset_files import PRESETS_DIR

    hint = f"edit {where} (every key is described in docs/config.md)"
    if Path(where).resolve().parent == PRESETS_DIR:  # installed with xtts: not the user's to edit
        name = Path(where).stem
        hint = f"write the preset out with xtts init -p {name} and edit that (every key is in docs/config.md)"
    if not given:  # a tree as some file wrote it (a run's config.yaml): older keys move as on loading
        canonical, conflicts = written_config(canonical)
        earlier = (*earlier, *conflicts)
    try:
        config = XttsConfig.model_validate(canonical)
    except ValidationError as exc:
        order = [f"{section}.{key}" for section, body in canonical.items() if isinstance(body, dict) for key in body]
        lines = validation_error_lines(exc, section_fields(), order)
        moved = {f"{key}:": f"{written}:" for key, written in sources.items() if key != written}
        lines = [next((moved[k] + line[len(k) :] for k in moved if line.startswith(k)), line) for line in lines]
        wrong = [key for key in given if any(_names(key, line) for line in [*earlier, *lines])]
        if wrong:
            hint = f"fix the value given on the command line for {', '.join(wrong)} (--set or its flag)"
            lists = [key for key in wrong if any(_names(key, line) and "a valid list" in line for line in lines)]
            if lists:
                hint += "; a list is written in brackets, e.g. " + ", ".join(_list_example(key) for key in lists)
        raise ConfigError(*earlier, *lines, hint=hint) from None
    if earlier:
        wrong = [key for key in given if any(_names(key, line) for line in earlier)]
        if wrong:
            hint = f"fix the value given on the command line for {', '.join(wrong)} (--set or its flag)"
        raise ConfigError(*earlier, hint=hint)
    return config


# A list key's --set written out, where its default shows no item to copy.
_LIST_EXAMPLES = {
    "data.datasets": "[{path: /data/voice-a}, {path: /data/vctk, format: vctk}]",
    "training.test_sentences": '["Hello there.", "How are you today?"]',
    "training.freeze": "[text_encoder, speaker_encoder]",
}


def _list_example(key: str) -> str:
    """`--set 'KEY=[...]'` for a list key: its own example, else its default in YAML's flow style."""
    import yaml

    section, _, name = key.partition(".")
    example = _LIST_EXAMPLES.get(key)
    if example is None:
        field_info = section_fields().get(section, {}).get(name)
        default = field_info.get_default(call_default_factory=True) if field_info is not None else None
        example = yaml.safe_dump(default, default_flow_style=True).strip() if default else "[a, b]"
    return f"--set '{key}={example}'"


def _names(key: str, line: str) -> bool:
    """Whether an error line is about `key` (`data.datasets`, or `datasets` in a line of its section)."""
    section, _, name = key.partition(".")
    return key in line or (line.startswith(f"{section}:") and re.search(rf"\b{re.escape(name)}\b", line) is not None)


def known_keys() -> list[str]:
    """Every dotted key the schema has (`data.batch_size`), in schema order."""
    return [f"{section}.{key}" for section, fields in section_fields().items() for key in fields]


# A value YAML would cut at a " #" (its comment), unless quoted or a list or mapping written inline: a
# command line has no comments, so "#" is the value's own.
_UNQUOTED_COMMENT = re.compile(r"(?![\"'\[{])(?:#|.*?\s#)")


def parse_sets(items: Sequence[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` values: a known dotted key (else one line with the closest one) and a YAML
    value (`8` is a number, `true` a flag, `[a, b]` a list, nothing at all is empty)."""
    keys = known_keys()
    parsed: dict[str, Any] = {}
    written: dict[str, str] = {}  # each canonical key as the command line wrote it (an alias, maybe)
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE", hint="e.g. --set data.batch_size=8")
        given, key = key, {**ALIASES, **MOVED}.get(key, key)
        if key not in keys:
            listed = re.fullmatch(r"(\w+\.\w+)(?:\[\d*\]|\.\d+)(?:\.(\w+))?", key)
            if listed and _a_list(listed.group(1)):  # `data.datasets[0].path`, `data.datasets.1.weight`: set whole
                field, path = listed.group(2), "" if listed.group(2) in (None, "path") else "path: PATH, "
                example = f"[{{{path}{field}: {text.strip() or '...'}}}, ...]" if field else "[...]"
                raise ConfigError(
                    f"--set {key}: one item of a list cannot be set",
                    hint=f"set the whole list, e.g. --set '{listed.group(1)}={example}'",
                )
            if key in section_fields():
                raise ConfigError(
                    f"--set {key}: a section, not a key", hint=f"give one of its keys, e.g. --set {_example(key)}"
                )
            section, _, name = key.partition(".")
            guess = did_you_mean(name, section, section_fields()) if name else None
            guess = guess or next(iter(difflib.get_close_matches(key, keys, n=1, cutoff=0.6)), None)
            sections = section_fields()
            if guess:
                said = f"did you mean {guess}?"
            elif section in sections:  # `watch.foo`: the section's own keys, not the form every key has
                names = list(sections[section])
                said = f"{section} has {len(names)} keys: {', '.join(names[:8])}{', ...' if len(names) > 8 else ''}"
            else:
                said = f"keys are section.name, the sections {', '.join(sections)}"
            raise ConfigError(f"--set {key}: unknown key; {said}", hint="every key is described in docs/config.md")
        try:
            value = yaml.safe_load(text) if text.strip() else None
        except (yaml.YAMLError, RecursionError):
            value = text  # a string YAML cannot read as anything else (`a: b`) stays a string
        if _UNQUOTED_COMMENT.match(text.lstrip()):  # "run_dir=/runs/take #2": YAML had cut it at its comment
            value = text.strip()
        anchored = text.lstrip().startswith("&")  # "&x" alone had been null: the default run directory
        if _a_text_key(key) and (anchored or value is not None and not isinstance(value, str)):
            # A path or a name is the text written: run_dir=010 (not 8), "runs/take: 2" (not a mapping),
            # language=no (not false), &x y (not an anchor and y).
            value = text.strip() if text.lstrip()[:1] not in "[{" else value
        if leading_zero(text, value) is not None:
            raise ConfigError(
                f"--set {given}={text}: {leading_zero(text, value)}",
                hint=f"--set {given}={int(text.strip().replace('_', ''))}" if ":" not in text else None,
            )
        if key in parsed and parsed[key] != value:
            both = key if written[key] == given else f"{key} (as {written[key]} and as {given})"
            raise ConfigError(
                f"--set {both} is given twice: {_as_yaml(parsed[key])} and {_as_yaml(value)}", hint="give it once"
            )
        parsed[key], written[key] = value, given
    return parsed


def _a_text_key(key: str) -> bool:
    section, _, name = key.partition(".")
    field = section_fields().get(section, {}).get(name)
    return field is not None and field.annotation in (str, Optional[str])


def _example(section: str) -> str:
    """A key of `section` with its default, as --set takes it."""
    fields = section_fields()[section]
    name = "batch_size" if "batch_size" in fields else next(iter(fields))
    return f"{section}.{name}={_as_yaml(fields[name].default)}"


def _as_yaml(value: Any) -> str:
    """A value as the YAML it was written in (true, null, 1e-4), not Python's repr (True, None)."""
    return yaml.safe_dump(value, default_flow_style=True, allow_unicode=True).strip().removesuffix("...").strip()


_SAID: set[str] = set()


def _say_once(line: str) -> None:
    """`line` on stderr, once a process (a command may load its config more than once)."""
    if line not in _SAID:
        _SAID.add(line)
        sys.stderr.write(line)


def _say_the_preset_is_read(preset: Path) -> None:
    """`--config speak-cpu` reads the preset; `xtts init` wrote `speak-cpu.yaml` here for the user
    to edit, and edits there would be silently not read."""
    own = Path(preset.name)
    if own.is_file() and own.resolve() != preset.resolve() and own.read_bytes() != preset.read_bytes():
        sys.stderr.write(f"note: --config {preset.stem} reads the preset, not ./{own}; pass --config {own} for yours\n")


def _refuse_a_file_not_here(chosen: Path, preset: Optional[Path]) -> None:
    """`--config tiny-cpu.yaml` names a file: run from another folder than the one `xtts init` wrote
    it in, it had trained the built-in preset without the user's edits, unsaid."""
    twin = next((chosen.with_suffix(s) for s in (".yaml", ".yml") if chosen.with_suffix(s).is_file()), None)
    if twin is None and preset is None:
        return  # no file, no preset: the error that names the presets
    raise ConfigError(
        f"config file {str(chosen)!r} not found in {Path.cwd()}" + (f"; did you mean {twin}?" if twin else ""),
        hint="pass the path of your file"
        + (f", or --config {preset.stem} (no .yaml) for the built-in preset" if preset else ""),
    )


def _config_file(path: Optional[Path | str], measures: bool) -> Optional[Path]:
    """The file `resolve_config` reads: `path`, or the preset of that name; without it
    configs/config.yaml when it exists, else None (the built-in defaults, which a command that
    `measures` says it measures)."""
    if path is None:
        if DEFAULT_CONFIG_PATH.is_file():
            return DEFAULT_CONFIG_PATH
        if measures:  # the docs' commands copied as written had profiled batch 16, not the run's batch 8
            _say_once(
                f"note: no --config, and no {DEFAULT_CONFIG_PATH} here: this measures the built-in defaults, not "
                "the config you train; pass -c CONFIG (a run's own: -c RUN/config.yaml)\n"
            )
        return None
    chosen = Path(path)
    if chosen.is_dir():
        raise ConfigError(f"--config {path} is a folder, not a config file", hint="pass a YAML file or a preset's name")
    if chosen.is_file():
        return chosen
    if chosen.exists():  # /dev/null, a pipe: there, but no file to read a config from
        raise ConfigError(f"--config {path} is not a regular file", hint="pass a YAML file or a preset's name")
    from xtts_cli.config.preset_files import preset_names, preset_path

    preset = preset_path(str(path))
    if chosen.suffix in (".yaml", ".yml"):
        _refuse_a_file_not_here(chosen, preset)
    if preset is None:
        close = difflib.get_close_matches(str(path).removesuffix(".yaml"), preset_names(), n=1, cutoff=0.7)
        raise ConfigError(
            f"config file {str(chosen)!r} not found, and no preset has that name"
            + (f"; did you mean {close[0]}?" if close else ""),
            hint=f"pass --config PATH to an existing YAML file or a preset's name ({', '.join(preset_names())})",
        )
    _say_the_preset_is_read(preset)
    return preset


def resolve_config(
    path: Optional[Path | str] = None,
    overrides: Optional[Mapping[str, Any]] = None,
    sets: Sequence[str] = (),
    *,
    measures: bool = False,
) -> LoadedConfig:
    """Load `path` (a file, or a preset's name: `speak-cpu`; without it `configs/config.yaml` when it
    exists, else defaults) and apply overrides. A file of that name wins over a preset. `measures`:
    a command that measures a training (diagnose, profile-*, benchmark) says when, given no config,
    it measures the built-in defaults rather than the config a user trains.

    `overrides` maps dotted keys (`data.batch_size`) to values from command-line flags; `None`
    values mean "flag not given" and are skipped. A dataset path given on the command line
    (`--train-data`, `--data-path`) stands in for the config's `data.datasets` list.

    `sets` are `--set KEY=VALUE` strings (`parse_sets`), applied like flags; a flag and a `--set`
    that give one key two values are an error naming both.
    """
    chosen = _config_file(path, measures)
    text = read_config_text(chosen) if chosen is not None else None
    data, left_out = _left_out(parse_yaml(text, str(chosen)) if text is not None else {})
    if text is not None and not data and not left_out:  # saved empty, or commented out whole: said, not passed over
        _say_once(f"note: {chosen} holds no settings (it is empty or all comments): the built-in defaults apply\n")
    canonical, sources, conflicts = canonicalize(data)
    raw = copy.deepcopy(canonical)
    overridden: set[str] = set()
    overrides = {key: value for key, value in (overrides or {}).items() if value is not None}
    set_values = parse_sets(sets)
    for key, value in set_values.items():
        # A flag that takes a word or a number (--num-workers auto|4) gives its value as text: 4 and "4" agree.
        if (
            key in overrides
            and overrides[key] != value
            and not (isinstance(overrides[key], str) and str(value) == overrides[key])
        ):
            raise ConfigError(
                f"{key} is given twice: {_as_yaml(overrides[key])} by a flag and {_as_yaml(value)} by --set",
                hint="give it once",
            )
        overrides[key] = value
    data_section = canonical.get("data")  # not a mapping (`data: 5`): _set_dotted names it
    if overrides.get("data.dataset_path") is not None and isinstance(data_section, dict) and "datasets" in data_section:
        overrides.setdefault("data.datasets", [])
    for dotted, value in overrides.items():
        _set_dotted(canonical, dotted, value)
        overridden.add(dotted)
    config = build_config(
        canonical, str(chosen) if chosen else "the command-line flags", tuple(conflicts), sorted(overridden), sources
    )
    return LoadedConfig(
        config=config,
        path=chosen,
        text=text,
        raw=raw,
        sources=sources,
        overridden=overridden,
        given=dict(overrides),
        set_keys=set(set_values),
        left_out=left_out,
    )


def config_variant(config: XttsConfig, changes: Mapping[str, Any], where: str = "a derived config") -> XttsConfig:
    """`config` with `changes` (dotted keys: `data.batch_size`) applied and the whole validated again,
    so a variant made in code obeys every rule a file does (unlike `model_copy(update=...)`)."""
    tree = config.model_dump(mode="python")
    for dotted, value in changes.items():
        _set_dotted(tree, dotted, value)
    return build_config(tree, where)


def data_variant(config: XttsConfig, **changes: Any) -> XttsConfig:
    """`config` with data settings changed (`data_variant(config, batch_size=32)`), validated again."""
    return config_variant(config, {f"data.{key}": value for key, value in changes.items()})
