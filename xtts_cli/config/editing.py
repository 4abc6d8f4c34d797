"""Edit a user's YAML config in place, changing only the lines a fix touches.

Why not a round-trip YAML library: re-emitting the document re-indents it and reflows lists, so a
"fix" would show up as a diff of lines the user never asked us to touch. Instead we let PyYAML's
composer tell us where each key and value sits (line, column, character offset) and splice new
text into exactly those spots; comments, key order, quoting and blank lines elsewhere are kept
byte for byte. Every edit is checked by parsing the result again before anything is written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Optional

import yaml

from xtts_cli.errors import XttsError
from xtts_cli.findings import ConfigChange, yaml_scalar


class EditError(XttsError):
    """A fix that cannot be applied safely to this file's layout."""


def _compose(text: str) -> Optional[yaml.Node]:
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:  # an edit that left the file unreadable is not written
        raise EditError(
            f"the fix would leave the file unreadable ({str(exc).splitlines()[0]}); fix it by hand"
        ) from None


def _find(mapping: yaml.MappingNode, key: str) -> Optional[tuple[yaml.Node, yaml.Node]]:
    for key_node, value_node in mapping.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
            return key_node, value_node
    return None


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for match in re.finditer(r"\n", text):
        starts.append(match.end())
    return starts


def _insert_line(text: str, line: int, content: str) -> str:
    starts = _line_starts(text)
    newline = _newline(text)
    if line >= len(starts) or (line == len(starts) - 1 and starts[line] == len(text)):
        if text and not text.endswith("\n"):
            text += newline
        return text + content + newline
    offset = starts[line]
    return text[:offset] + content + newline + text[offset:]


def _block_mapping(node: yaml.Node, where: str) -> yaml.MappingNode:
    if not isinstance(node, yaml.MappingNode):
        raise EditError(f"{where} is not a mapping; fix it by hand")
    if node.flow_style:
        raise EditError(f"{where} is written in flow style ({{...}}); xtts edits block-style YAML only, fix it by hand")
    return node


def _set(text: str, dotted: str, value: Any) -> str:
    section, key = dotted.split(".", 1)
    scalar = yaml_scalar(value)
    root = _compose(text)
    if root is None or (isinstance(root, yaml.ScalarNode) and root.value == ""):
        body = text if not text or text.endswith("\n") else text + _newline(text)
        return body + f"{section}:{_newline(text)}  {key}: {scalar}{_newline(text)}"
    root = _block_mapping(root, "the config's top level")
    found = _find(root, section)
    if found is None:
        return _insert_line(text, len(_line_starts(text)), f"{section}:{_newline(text)}  {key}: {scalar}")
    section_key, section_value = found
    if isinstance(section_value, yaml.ScalarNode) and section_value.value in ("", "~", "null"):
        # `data:` with nothing under it: the section starts on the next line.
        if section_value.value:
            text = text[: section_value.start_mark.index] + text[section_value.end_mark.index :]
        indent = " " * (section_key.start_mark.column + 2)
        return _insert_line(text, section_key.start_mark.line + 1, f"{indent}{key}: {scalar}")
    mapping = _block_mapping(section_value, section)
    pair = _find(mapping, key)
    if pair is not None:
        value_node = pair[1]
        if not isinstance(value_node, yaml.ScalarNode):
            raise EditError(f"{dotted} holds a list or mapping; set it to {scalar} by hand")
        start, end = value_node.start_mark.index, value_node.end_mark.index
        if text[start : start + 1] == "&":  # `num_workers: &n 1`: an alias elsewhere reads it too
            anchor = text[start:end].split()[0]
            raise EditError(f"{dotted} is written through a YAML anchor ({anchor}) other keys share; set it by hand")
        if start == end:  # `key:` with no value
            return (
                text[:start] + " " + scalar + text[end:]
                if text[start - 1 : start] == ":"
                else text[:start] + scalar + text[end:]
            )
        return text[:start] + scalar + text[end:]
    last_value = mapping.value[-1][1]
    indent = " " * mapping.value[0][0].start_mark.column
    end = last_value.end_mark
    # A block value (a list, a mapping, a `|` or `>` text) ends at the start of the next line; a
    # plain or quoted scalar ends on its own line.
    line = end.line if end.column == 0 else end.line + 1
    return _insert_line(text, line, f"{indent}{key}: {scalar}")


def _remove(text: str, dotted: str) -> str:
    section, key = dotted.split(".", 1)
    root = _compose(text)
    if not isinstance(root, yaml.MappingNode):
        return text
    found = _find(_block_mapping(root, "the config's top level"), section)
    if found is None or not isinstance(found[1], yaml.MappingNode):
        return text
    pair = _find(_block_mapping(found[1], section), key)
    if pair is None:
        return text
    key_node, value_node = pair
    first = key_node.start_mark.line
    if len(found[1].value) == 1:
        # The section's only key: the section goes with it. An empty `vocoder:` left behind would
        # be a section of its own, null, which an older layout's section may not be.
        first = found[0].start_mark.line
    last = value_node.end_mark.line
    if value_node.end_mark.column == 0 and last > key_node.start_mark.line:  # a block value: at the next line
        last -= 1
    starts = _line_starts(text)
    begin = starts[first]
    finish = starts[last + 1] if last + 1 < len(starts) else len(text)
    return text[:begin] + text[finish:]


def _lookup(data: Any, dotted: str) -> tuple[bool, Any]:
    section, key = dotted.split(".", 1)
    body = data.get(section) if isinstance(data, dict) else None
    if not isinstance(body, dict) or key not in body:
        return False, None
    return True, body[key]


def apply_changes(
    text: str,
    changes: Iterable[ConfigChange],
    sources: Mapping[str, str],
    skipped: Optional[list[tuple[ConfigChange, str]]] = None,
) -> str:
    """Apply changes to the YAML text; each canonical key is edited where the user wrote it, and
    checked by reading the text back. With `skipped`, a change this file's layout does not take (an
    anchor, flow style) is left out and listed there with why; without it, it raises EditError.

    The first change for a key wins, so two rules can never undo each other (which would make a
    second `--fix` change the file again).
    """
    seen: set[str] = set()
    for change in changes:
        if change.key in seen:
            continue
        seen.add(change.key)
        try:
            text = _one_change(text, sources.get(change.key, change.key), change)
        except EditError as error:
            if skipped is None:
                raise
            skipped.append((change, str(error)))
    return text


def _one_change(text: str, where: str, change: ConfigChange) -> str:
    """`text` with `change` made at `where`, read back to check it holds what was asked."""
    edited = _remove(text, where) if change.action == "remove" else _set(text, where, change.value)
    try:
        result = yaml.safe_load(edited) or {}
    except yaml.YAMLError as exc:
        raise EditError(
            f"applying '{change.describe()}' would break the YAML ({str(exc).splitlines()[0]}); edit it by hand"
        ) from None
    present, value = _lookup(result, where)
    ok = (
        not present
        if change.action == "remove"
        else present and value == change.value and type(value) is type(change.value)
    )
    if not ok:
        raise EditError(f"could not apply '{change.describe()}' to this file's layout; edit it by hand")
    return edited


def own_header(text: str, target: Path) -> str:
    """`text` with its first line's command (`# xtts train --config NAME ...`, as presets begin)
    reading `target`, the file it is written to: NAME would load the source, without the edits."""
    import shlex

    first, newline, rest = text.partition("\n")
    if first.startswith("# xtts "):
        named = re.search(r"(?:--config|-c) (\S+)", first)
        first = re.sub(r"(--config|-c) \S+", lambda m: f"{m.group(1)} {shlex.quote(str(target))}", first, count=1)
        if named and "--run-dir" not in first:  # the run goes to runs/<this file's name>, as the comments say
            run = shlex.quote(f"runs/{target.stem}")
            rest = re.sub(rf"^(#.*)runs/{re.escape(named.group(1))}\b", rf"\g<1>{run}", rest, flags=re.MULTILINE)
    return first + newline + rest


# Keys whose values are paths read from the folder a command runs in: a config written for use from
# any folder (a run's config.yaml, benchmark -o, a report) holds them absolute.
PATH_KEYS = ("data.dataset_path", "data.eval_dataset_path", "data.feature_cache_dir", "training.init_from")


def absolute_path(key: str, value: Any) -> Any:
    """`value` of `key`, made absolute from this folder when `key` holds a path (each of
    `data.datasets`'s too); any other key's as it is."""
    if key in PATH_KEYS and isinstance(value, str) and value:
        return os.path.abspath(os.path.expanduser(value))
    if key == "data.datasets" and isinstance(value, list):
        return [
            {**entry, "path": absolute_path("data.dataset_path", entry["path"])}
            if isinstance(entry, dict) and isinstance(entry.get("path"), str)
            else entry
            for entry in value
        ]
    return value


def with_absolute_paths(tree: dict) -> dict:
    """A config tree (`model_dump(mode="json")`) with every path key's value made absolute, in place."""
    for key in (*PATH_KEYS, "data.datasets"):
        section, name = key.split(".")
        body = tree.get(section)
        if isinstance(body, dict) and body.get(name):
            body[name] = absolute_path(key, body[name])
    return tree


def free_backup(target: Path) -> Path:
    """FILE.bak, or FILE.bak.1, .2 ... where an earlier write kept one there already (a second
    `validate --fix` had written over the first one's, the file as its user wrote it)."""
    backup = target.with_name(target.name + ".bak")
    number = 0
    while backup.exists():
        number += 1
        backup = target.with_name(f"{target.name}.bak.{number}")
    return backup


def write_atomically(
    path: Path, text: str | bytes, backup: bool = True, *, backup_as: Optional[Path] = None, keep_links: bool = False
) -> Optional[Path]:
    """Write `text` (or bytes) to `path` via a temp file, fsync and rename, then fsync the folder:
    a reader sees the old file or the new one, never half of one, even after a power cut. Keep the
    old file as `<name>.bak` (or `backup_as`). A symlink stays a symlink (its target is written); a new
    file gets the mode the umask gives, an existing one keeps its own. With `keep_links` (a user's own
    file, `validate --fix`), one with other hard links is rewritten in place after its backup, as vim's
    `backupcopy=auto` does: a rename would leave them the old text. A run's files never are: a copy
    made with `cp -al` would write through to the run it was copied from."""
    link = Path(path)
    path = link.resolve() if link.is_symlink() else link
    backup_path = (backup_as or link.with_name(link.name + ".bak")) if backup else None
    if backup_path is not None and path.exists():
        # Copied whole, then renamed: a full disk had left a cut-off .bak in place of a good older one.
        kept = backup_path.with_name(f".{backup_path.name}.tmp")
        try:
            shutil.copy2(path, kept)
            os.replace(kept, backup_path)
        except OSError as exc:
            with contextlib.suppress(OSError):  # a read-only folder refuses the unlink too
                kept.unlink(missing_ok=True)
            raise naming(exc, backup_path, replace=True) from None
    if keep_links and backup_path is not None and path.exists() and path.stat().st_nlink > 1:
        _write_in_place(path, text)
        return backup_path
    try:
        descriptor, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise naming(exc, path) from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            shutil.copymode(path, temp_name)
        else:
            os.chmod(temp_name, 0o666 & ~current_umask())  # mkstemp makes 0600
        os.replace(temp_name, path)
        _fsync_folder(path.parent)
    except BaseException as exc:
        if os.path.exists(temp_name):
            os.unlink(temp_name)
        if isinstance(exc, OSError):
            raise naming(exc, path) from None
        raise
    return backup_path


def _write_in_place(path: Path, text: str | bytes) -> None:
    try:
        with open(path, "r+b") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise naming(exc, path) from None


def naming(error: OSError, path: Path, *, replace: bool = False) -> OSError:
    """`error` naming the file it was writing: a write that fills the disk names none (the user's
    error had said "writing a file failed"); `replace`: `path` over the file it names (a copy's, by
    shutil, is the file copied from)."""
    if error.errno is None or (error.filename is not None and not replace):
        return error
    return type(error)(error.errno, error.strerror, str(path))


def _refuse_unreachable(path: Path) -> None:
    """Raise the OSError of a path no file can be made at, a loop of links on the way or a name
    longer than its file system holds (main names either in one line): said now, not after the scan
    and the model, and before a folder on the way is made."""
    try:
        os.stat(path)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENAMETOOLONG):
            raise
    existing = path.absolute()
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    try:
        longest = os.pathconf(existing, "PC_NAME_MAX")
    except (OSError, ValueError):
        longest = 255
    for part in path.parts:
        if len(part.encode("utf-8", "surrogateescape")) > longest:
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), str(path))


def can_write(path: Path, flag: str, *, folder: bool = False, name: str = "") -> None:
    """Refuse, before the model loads and the work is done, an output the command could not write:
    a folder where it writes a file (or a file where it makes a folder), a file on the way, or a
    place where no file can be made (tried with a temporary file: permission bits say nothing for
    root, nor for /proc or a read-only mount)."""
    if str(path) == "-":
        return
    _refuse_unreachable(Path(path))
    kind = "folder" if folder else "file"
    if path.exists() and not path.is_dir() and not path.is_file():
        # A device or a pipe (/dev/null, /dev/stdout): the rename that writes a file would replace it.
        raise XttsError(
            f"{flag} {path} is not a file (a device, a pipe or a socket): writing it would replace it",
            hint=f"name a regular {kind}" + (f", such as {name}" if name else ""),
        )
    if path.exists() and path.is_dir() != folder:
        example = f", such as {path / name}" if name and not folder else ""
        raise XttsError(f"{flag} {path} is {'a file' if folder else 'a folder'}", hint=f"name a {kind}{example}")
    place = path.absolute() if folder else path.absolute().parent
    if not folder and path.is_symlink():  # the file is written through the link, in its target's folder
        place = path.resolve().parent
        if not place.is_dir():
            raise XttsError(
                f"{flag} {path} is a link to {path.resolve()}, whose folder does not exist",
                hint=f"make {place}, or remove the link and name a file",
            )
    while not place.exists() and place != place.parent:
        place = place.parent
    if not place.is_dir():
        raise XttsError(f"{flag} {path}: {place} is a file, not a folder", hint=f"put the {kind} in a folder")
    try:
        tempfile.TemporaryFile(dir=place).close()
    except OSError as error:
        # Its permissions (a run made read-only, chmod -R a-w) are mended where it is; a read-only disk is not.
        mend = (
            f"make it writable (chmod u+w {shlex.quote(str(place))}), or "
            if error.errno in (errno.EACCES, errno.EPERM)
            else ""
        )
        raise XttsError(
            f"{flag} {path}: nothing can be written in {place} ({error.strerror})",
            hint=f"{mend}put the {kind} in a folder you can write to",
        ) from None


def current_umask() -> int:
    """The process's umask (read by setting it, so set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_folder(folder: Path) -> None:
    """The rename itself durable: fsync the folder that holds the entry (POSIX; a no-op elsewhere)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
