"""Each benchmark writes its own latest result into the documentation site, so nobody copies figures
by hand: `publish(main, page)` runs a script's `main`, echoes what it prints, and puts the printed
report, the command and the CPU in a section of `docs/<page>` of its own (between markers, the rest
of the page left as it is). `--no-doc` on the command line prints only.
"""

from __future__ import annotations

import contextlib
import io
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
# Clips a page lets its reader hear: docs/audio/<page>/, a few seconds of Ogg Vorbis each (tens of kB).
AUDIO = DOCS / "audio"
CLIP_SECONDS = 6.0


def needs(extras: str, *modules: str) -> None:
    """Stop before any training when a module the scoring imports is missing: it had been found
    missing after 30 minutes of training, where the scores are made."""
    import importlib.util

    missing = [module for module in modules if importlib.util.find_spec(module) is None]
    if missing:
        sys.exit(
            f"{Path(sys.argv[0]).name} scores with {', '.join(missing)}, which is not installed: "
            f'pip install -e ".[{extras}]" first (nothing was trained)'
        )


def cpu_name() -> str:
    """The CPU as lscpu names it (every figure is named with its CPU)."""
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


class _Tee(io.TextIOBase):
    def __init__(self, *streams) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


def write_section(page: Path, name: str, body: str) -> None:
    """Replace the section `name` of `page` (or add it at the end), between its markers."""
    begin, end = f"<!-- latest run: {name} -->", f"<!-- end of latest run: {name} -->"
    text = page.read_text(encoding="utf-8") if page.is_file() else f"# {page.stem}\n"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    page.write_text(text, encoding="utf-8")


# Markdown a script adds below its printed report in its section (`attach`): players of its clips.
_ATTACHED: list[str] = []
# Whether this run writes its page (`publish` without `--no-doc`).
_RECORDING = [False]


def recording() -> bool:
    """True when this run's report goes into its page: its clips are worth writing."""
    return _RECORDING[0]


def attach(lines: list[str]) -> None:
    """Put `lines` (Markdown) under this run's printed report in its section of the page."""
    _ATTACHED.extend(lines)


def guarded(main: Callable[..., int | None], *args) -> int:
    """`main(*args)` as a command runs: SIGTERM an exit, not a kill (the processes it started stopped on
    the way out: `subprocess.run` kills its child, a `finally` its server; they had been left running
    under init), and an error a user can fix one line with its hint, not a traceback."""
    import signal

    from xtts_cli.errors import XttsError

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return main(*args) or 0
    except XttsError as exc:
        for line in exc.lines:
            sys.stderr.write(f"error: {line}\n")
        if exc.hint:
            sys.stderr.write(f"hint: {exc.hint}\n")
        return 1


def publish(main: Callable[..., int | None], page: str) -> int:
    """Run the script's `main`; unless `--no-doc` is among its arguments, write what it printed to
    `docs/<page>` as this script's latest run."""
    import inspect

    args = list(sys.argv[1:])
    if "-h" in args or "--help" in args:  # said above the script's own help, which exits
        sys.stdout.write(f"A run writes its report into docs/{page}; --no-doc prints it only.\n\n")
    # A worker (`--worker JOB`, a process the script starts for one measurement) is part of a run, not one.
    record = "--no-doc" not in args and "--worker" not in args
    if "--no-doc" in args:
        args.remove("--no-doc")
    sys.argv[1:] = args  # a main that parses sys.argv itself sees the arguments it knows
    _RECORDING[0] = record
    captured = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, captured)):
        code = guarded(main, args) if inspect.signature(main).parameters else guarded(main)
    if record and code == 0:
        script = Path(sys.argv[0]).name
        command = " ".join(["python", f"benchmarks/{script}", *args])
        # A script of several parts (`--part NAME`) keeps one latest run per part.
        part = args[args.index("--part") + 1] if "--part" in args[:-1] else None
        name = f"{script} --part {part}" if part else script
        body = (
            f"### Latest run: `{name}`\n\n"
            f"`{command}`, {time.strftime('%Y-%m-%d')}, {cpu_name()} ({os.cpu_count()} cores), written by the "
            "script itself:\n\n```\n" + captured.getvalue().strip("\n") + "\n```\n"
        )
        if _ATTACHED:
            body += "\n" + "\n".join(_ATTACHED) + "\n"
        write_section(DOCS / page, name, body)
        sys.stderr.write(f"wrote the run into docs/{page}\n")
    return code


def players(page: str, clips: list[tuple[str, Path]]) -> list[str]:
    """Markdown lines that let a reader of `docs/<page>.md` hear `clips` ((label, WAV), as the
    benchmark wrote them): each cut to `CLIP_SECONDS` and converted by sox into `docs/audio/<page>/`,
    shown as a player and a plain link (what a Markdown viewer without players shows)."""
    folder = AUDIO / page
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for index, (label, wav) in enumerate(clips):
        target = folder / f"{index + 1:02d}.ogg"
        subprocess.run(["sox", str(wav), "-C", "3", str(target), "trim", "0", str(CLIP_SECONDS)], check=True)
        source = f"audio/{page}/{target.name}"
        lines += [
            f'<p>{label}<br><audio controls preload="none" src="{source}"></audio></p>',
            f"([{target.name}]({source}))",
            "",
        ]
    for stale in sorted(folder.glob("*.ogg"))[len(clips) :]:
        stale.unlink()
    return lines
