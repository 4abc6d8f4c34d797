"""`xtts init`: write a preset out as a config file of your own, its comments kept."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer


def init(
    named: Annotated[
        Optional[str],
        typer.Argument(
            metavar="[PRESET]", help="The preset, as --preset takes it (xtts init speak-cpu).", show_default=False
        ),
    ] = None,
    preset: Annotated[
        Optional[str],
        typer.Option(
            "--preset",
            "-p",
            metavar="NAME",
            help="The preset to start from: tiny-cpu, speak-cpu, voices-cpu, adapt-cpu, vocoder-cpu (CPU); rtx4090, "
            "base-gpu, adapt-gpu, vocoder-gpu, dual-gpu (GPU); or config (every key). Default: config.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Optional[str],  # not a Path: "newdir/" would lose the slash that says the user means a folder
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            help="File to write ('-': standard output). Default: PRESET.yaml here.",
            show_default=False,
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Replace FILE when it exists (kept as FILE.bak, or FILE.bak.1 where that is taken)."
        ),
    ] = False,
) -> None:
    """Write a preset out as your own config file, with its comments, to edit and pass to --config.

    Examples:

        xtts init speak-cpu

        xtts init -p rtx4090 -o my-gpu.yaml && xtts train -c my-gpu.yaml --data /data/my-voice
    """
    from xtts_cli.config.editing import can_write, free_backup, own_header
    from xtts_cli.config.preset_files import require_preset
    from xtts_cli.errors import UsageError, XttsError

    if named is not None and preset is not None and named != preset:
        raise UsageError(f"the preset is given twice: {named} and --preset {preset}", hint="give it once")
    for given in (named, preset):
        if given is not None and not given.strip():  # `xtts init "$PRESET"` unset: it had written `config`
            raise UsageError(
                "the preset is empty", hint="name one (xtts init --help lists them), or leave it out for config"
            )
    source = require_preset(
        named or preset or "config", hint="pass one of those names: xtts init NAME (or --preset NAME)"
    )
    if out is not None and not out.strip():  # `-o "$OUT"` with OUT unset: not the current folder
        raise UsageError("--out is empty", hint=f"give it a file, such as {source.name}, or leave it out")
    if out == "-":  # the preset's text alone, to pipe or redirect
        sys.stdout.write(source.read_text(encoding="utf-8"))
        return
    target = Path(out) if out is not None else Path(source.name)
    if out is not None and out.endswith(("/", os.sep)) and not target.is_dir():
        raise XttsError(f"--out {out} names a folder", hint=f"name a file, such as {target / source.name}")
    if target.exists() and not target.is_file():  # --force would not help: a folder or a device is not replaced
        can_write(target, "--out", name=source.name)
    if target.exists() and not force:
        raise XttsError(
            f"{target} exists already",
            hint=f"pass --out OTHER.yaml, or --force to replace it (kept as {free_backup(target)})",
        )
    can_write(target, "--out", name=source.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = own_header(source.read_text(encoding="utf-8"), target)
    _write_preset(target, text, source.stem)
    first = text.splitlines()[0].lstrip("# ").strip()
    if first.startswith("xtts "):
        sys.stderr.write(f"next: {first}\n")


def _write_preset(target: Path, text: str, preset: str) -> None:
    """`text`, the preset `preset` with its header, written to `target`, and where the earlier file went."""
    from xtts_cli.config.editing import free_backup, write_atomically

    unedited = _unedited_preset(target)
    if unedited == preset:
        # Already the preset: a backup now would replace the one of the user's own file.
        sys.stdout.write(f"{target} is the preset {preset} already; left as it is\n")
        return
    # A preset as init wrote it holds nothing of the user's: its backup would have replaced theirs,
    # edits and all, on a second --force. Their file is never written over: the next free name.
    kept = write_atomically(target, text, backup=target.exists() and unedited is None, backup_as=free_backup(target))
    earlier = f"; the earlier file is {kept}" if kept else ""
    if unedited is not None:
        earlier = f"; the earlier file was the preset {unedited} as init writes it, unedited: not kept"
    sys.stdout.write(f"wrote {target} (preset {preset}){earlier}\n")


def _unedited_preset(target: Path) -> Optional[str]:
    """The preset `target` holds as init wrote it there, unedited; None for a file of the user's own."""
    from xtts_cli.config.editing import own_header
    from xtts_cli.config.preset_files import preset_names, preset_path

    if not target.is_file():
        return None
    held = target.read_bytes()
    for name in preset_names():
        path = preset_path(name)
        if path is not None and held == own_header(path.read_text(encoding="utf-8"), target).encode("utf-8"):
            return name
    return None
