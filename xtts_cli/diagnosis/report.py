"""`xtts report`: one archive to attach to a bug report, instead of five commands' output pasted.

It holds the machine (`environment.json`: Python, packages, CPU and its cgroup quota, the GPU
variables), the resolved config, and what `validate`, `diagnose`, a short `profile-pipeline` and
`profile-step` say of it, each run as its own `xtts` process so one that fails is a section with
its error, not a lost report; with a run, its config, last metrics and every watch warning.

Before anything is written, paths under the user's home become `~`, the dataset's root `<dataset>`
and each file name under it a short hash (`--no-redact` keeps them), and the value of every
environment variable whose name looks like a secret (token, key, password ...) is removed whatever
the options: none is ever copied in, and one a tool printed is struck out.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import re
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Optional

from xtts_cli import locks
from xtts_cli.config.editing import naming

__all__ = ["Section", "gather", "redactor", "write_report"]

# The variables that shape a run, copied as they are; no other is. TensorFlow's and CUDA's own by
# their names, not by a prefix other tools share (Terraform's TF_VAR_* and TF_CLI_* hold secrets
# under plain names); TF_CONFIG with its hosts left out.
SHOWN_VARIABLES = re.compile(
    r"^(CUDA_(VISIBLE_DEVICES|DEVICE_ORDER|LAUNCH_BLOCKING|CACHE_\w+|MODULE_LOADING|HOME|PATH)"
    r"|NVIDIA_(VISIBLE_DEVICES|DRIVER_CAPABILITIES|REQUIRE_\w+)"
    r"|TF_(CPP_\w+|ENABLE_\w+|FORCE_\w+|GPU_\w+|XLA_FLAGS|CUDNN_\w+|DETERMINISTIC_OPS|USE_LEGACY_KERAS"
    r"|NUM_INTEROP_THREADS|NUM_INTRAOP_THREADS|DISABLE_\w+|CONFIG)"
    r"|XLA_FLAGS|OMP_NUM_THREADS|MKL_\w+|KMP_\w+|LD_LIBRARY_PATH|XTTS_DEBUG|PYTHONPATH)$"
)
SECRET_NAMES = re.compile(r"(TOKEN|SECRET|PASSW|KEY|CREDENTIAL|AUTH|COOKIE|SESSION)", re.IGNORECASE)
PACKAGES = (
    "tensorflow",
    "tensorflow-cpu",
    "keras",
    "tensorflow-io",
    "numpy",
    "phonemizer",
    "phonemizer-fork",
    "espeakng-loader",
    "nvidia-ml-py",
    "pydantic",
    "typer",
    "soundfile",
    "xtts-cli",  # this package, by its distribution's name ("xtts" had found nothing)
)
METRICS_KEPT = 200  # the run's last metrics.jsonl lines
WATCH_KEPT = 2000  # its last watch records (a notice is a line: a run of weeks warns that often at most)


@dataclass
class Section:
    """One file of the archive, and how its making went."""

    name: str
    text: str
    seconds: float = 0.0
    exit_code: Optional[int] = None
    notes: list[str] = field(default_factory=list)

    @property
    def reported(self) -> bool:
        """Whether its command wrote its report: exit 0, or a --json report that is not an error's
        (validate and diagnose exit 1 with a whole report of the errors they found)."""
        if self.exit_code == 0:
            return True
        try:
            payload = json.loads(self.text)
        except ValueError:
            return False
        return isinstance(payload, dict) and "error" not in payload

    @property
    def error(self) -> str:
        """The `error` of its command's --json output, or "" when it printed none."""
        try:
            payload = json.loads(self.text)
        except ValueError:
            return ""
        return str(payload.get("error") or "") if isinstance(payload, dict) else ""

    @property
    def why(self) -> str:
        """Why its command exited as it did, in the terminal's words and the archive's README.txt."""
        return "its report lists the errors it found" if self.reported else self.error


# A quoted relative path of an audio file, as the JSON reports name a clip: "wavs/ana-0001.wav"; and
# the one clip, id or transcript file a dataset's "..._example" names (an id had been left as it was).
_EXAMPLE_CLIP = re.compile(r'("\w+_example":\s*)"([^"]+)"')
_RELATIVE_CLIP = re.compile(r'(?<=")(?!<dataset>|/|~)([^"\s]+\.(?:wav|flac|ogg|mp3))(?=")', re.IGNORECASE)


def speaker_names(sections: list[Section]) -> list[str]:
    """The speakers the reports name (each dataset's `speaker_minutes`), in the order first named."""
    names: dict[str, None] = {}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key == "speaker_minutes" and isinstance(inner, dict):
                    names.update(dict.fromkeys(str(name) for name in inner))
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for section in sections:
        if section.name.endswith(".json"):
            try:
                walk(json.loads(section.text))
            except ValueError:
                continue
    return list(names)


# A URL's user and password (grpc://user:pass@host, a proxy's), and a host given with them where a message
# quotes it without its scheme ('user:pass@host'): a config's value had gone into six files of the archive.
# A scheme's user info runs to its authority's last "@" (a password may hold one); "git@" is no secret. Without
# a scheme, a user that starts with a letter, after a space, a quote, a bracket or "=": not a time
# (12:30@noon), a ratio, an image's digest (python:3.11@sha256:...) or mailto:.
_CREDENTIALS = re.compile(
    r"(?<=://)(?!git@)[^\s/?#'\"<>]*@"
    r"|(?:^|(?<=[\s'\"(\[=]))(?!mailto:)[A-Za-z][^\s/@'\":<>]*:[^\s/@'\"<>]+@(?=[\w.-])(?!sha\d+:)"
)


def redactor(
    *, home: Optional[str], datasets: Sequence[str], environ: dict[str, str], redact: bool, speakers: Sequence[str] = ()
):
    """text -> text with the secrets out always, and, with `redact`, home and dataset paths replaced,
    and each of `speakers` (often a person's name) as `<speaker-N>` where a report quotes it."""
    secrets = sorted(
        (value for name, value in environ.items() if SECRET_NAMES.search(name) and len(value) >= 6),
        key=len,
        reverse=True,
    )
    roots = sorted({str(Path(root)) for root in datasets if root}, key=len, reverse=True)
    # Its folder's name is a dataset's name in the reports ("name", a bad file's "dataset"), and the
    # name of its one speaker when its clips name none (a key of "speaker_minutes").
    names = "|".join(re.escape(Path(root).name) for root in roots if Path(root).name)
    named = re.compile(rf'("(?:name|dataset)":\s*)"(?:{names})"|"(?:{names})"(?=:)') if names else None
    # And where a message names it: "dataset voice (...)", "speaker 'ana' in voice and extra", each of a list.
    said = (
        re.compile(
            rf"(?:(?<=\bdataset )|(?<=\bdatasets )|(?<=' in )|(?<=<dataset-name> and )|(?<=<dataset-name>, ))"
            rf"(?:{names})(?![\w.-])"
        )
        if names
        else None
    )

    # Numbered in the order named; a dataset's own name stands for its one speaker and is said so.
    folders = {Path(root).name for root in roots}
    people = {name: f"<speaker-{n}>" for n, name in enumerate((s for s in speakers if s not in folders), 1)}
    quoted = (
        re.compile("|".join(rf"(?<=\")({re.escape(n)})(?=\")|(?<=')({re.escape(n)})(?=')" for n in people))
        if people
        else None
    )

    def hidden(path: str) -> str:
        return "/".join(
            hashlib.sha1(part.encode()).hexdigest()[:8] + Path(part).suffix for part in path.split("/") if part
        )

    def clean(text: str) -> str:
        for value in secrets:
            text = text.replace(value, "<secret>")
        text = _CREDENTIALS.sub("<credentials>@", text)
        if not redact:
            return text
        for root in roots:
            text = _whole_path(root).sub("<dataset>", text)
        text = re.sub(r"<dataset>/([^\s\"',;:|()\[\]{}]+)", lambda m: "<dataset>/" + hidden(m.group(1)), text)
        # A clip named relative to its dataset (a bad file's path, an example of unlisted audio).
        text = _RELATIVE_CLIP.sub(lambda m: hidden(m.group(1)), text)
        text = _EXAMPLE_CLIP.sub(lambda m: f'{m.group(1)}"{hidden(m.group(2))}"', text)
        if quoted is not None:
            text = quoted.sub(lambda m: people[next(g for g in m.groups() if g is not None)], text)
        if named is not None and said is not None:
            text = named.sub(lambda m: f'{m.group(1) or ""}"<dataset-name>"', text)
            while said.search(text):  # a list's next name follows the one just replaced
                text = said.sub("<dataset-name>", text)
        if home and home not in ("/", ""):
            text = _whole_path(home.rstrip("/")).sub("~", text)
        return text

    return clean


def _whole_path(path: str) -> re.Pattern:
    """`path` where it is a whole path or a folder of one: with a home of /home/al, /home/alice is
    another folder, not "~ice"."""
    return re.compile(re.escape(path) + r"(?=$|[\s\"',;:|()\[\]{}/]|\.(?:\s|$))")


def _set_here(name: str, value: str) -> bool:
    """Whether this process set `name` to `value` itself (xtts's quiet TF_CPP_MIN_LOG_LEVEL): a
    report read it as the user's setting, hiding TensorFlow's logs."""
    from xtts_cli.quiet import QUIET_TF_LOG_LEVEL, SET_HERE

    return name in SET_HERE and value == QUIET_TF_LOG_LEVEL


def environment(environ: dict[str, str]) -> dict:
    from xtts_cli.host import cpu_budget

    budget = cpu_budget()
    cpu = platform.processor() or "unknown"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout.splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    packages = {}
    for name in PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {
        "python": sys.version,
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_budget": budget.describe(),
        "cgroup_cpu_quota": budget.quota,
        "packages": packages,
        "variables": {
            name: _without_hosts(value) if name == "TF_CONFIG" else value
            for name, value in sorted(environ.items())
            if SHOWN_VARIABLES.match(name) and not _set_here(name, value)
        },
        "written": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }


def _without_hosts(value: str) -> str:
    """TF_CONFIG with each worker's host replaced by `<host>` (its port and the layout kept)."""
    return re.sub(r'"([^"\s:]+):(\d+)"', r'"<host>:\2"', value)


def _command(name: str, args: list[str], environ: dict[str, str], timeout: float) -> Section:
    """`xtts ARGS...` in a process of its own: its stdout (JSON) as the section, or what went wrong."""
    began = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "xtts_cli", *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            # UTF-8 whatever the terminal takes: \u escapes (PYTHONIOENCODING=ascii) had hidden names from the redaction.
            env={**environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONIOENCODING": "utf-8"},
        )
    except subprocess.TimeoutExpired:
        return Section(name, json.dumps({"error": f"xtts {args[0]} ran past {timeout:.0f} s"}), timeout, None)
    except OSError as error:  # the interpreter cannot be started again (a sandbox): a section, not a lost report
        why = f"xtts {args[0]} could not start ({sys.executable}: {error.strerror or error})"
        code = 126 if isinstance(error, PermissionError) else 127  # as a shell says it
        return Section(name, json.dumps({"error": why}), time.monotonic() - began, code, notes=[why])
    text = done.stdout if done.stdout.strip() else json.dumps({"error": done.stderr.strip()[-2000:]})
    section = Section(name, text, time.monotonic() - began, done.returncode)
    if done.returncode:  # the terminal's reason: stderr's last line had been a hint, or a progress line
        section.notes.append(
            (section.why or done.stderr.strip().splitlines()[-1] if done.stderr.strip() else section.why)[:300]
        )
    return section


def gather(
    config_args: list[str],
    config_yaml: str,
    *,
    run_dir: Optional[Path],
    quick: bool,
    environ: dict[str, str],
    timeout: float = 900.0,
    done: Callable[[Section], None] = lambda section: None,
) -> list[Section]:
    """Every section, in order, each handed to `done` as it is made (the commands take minutes: said
    only at the end, a report had been silent throughout); `config_args` (-c / --set / --data as
    given) go to each command."""
    sections: list[Section] = []

    def add(*made: Section) -> None:
        for section in made:
            sections.append(section)
            done(section)

    add(Section("environment.json", json.dumps(environment(environ), indent=2)), Section("config.yaml", config_yaml))
    add(_command("validate.json", ["validate", "--json", *config_args], environ, timeout))
    diagnose = ["diagnose", "--json", *config_args] + (["--quick"] if quick else ["--batches", "20"])
    add(_command("diagnose.json", diagnose, environ, timeout))
    batches, steps = ("4", "4") if quick else ("20", "20")
    pipeline = ["profile-pipeline", "--json", "--batches", batches, *config_args]
    add(_command("profile-pipeline.json", pipeline, environ, timeout))
    add(_command("profile-step.json", ["profile-step", "--json", "--steps", steps, *config_args], environ, timeout))
    if run_dir is not None:
        add(*_run_sections(run_dir))
    return sections


def _read(path: Path) -> tuple[str, list[str]]:
    """A run file's text, or "" and why it could not be read (a file this user may not read had
    ended the report in a traceback)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace"), []
    except OSError as error:
        return "", [f"{path}: cannot read it ({error.strerror or error})"]


def _run_sections(run_dir: Path) -> list[Section]:
    sections = []
    config = run_dir / "config.yaml"
    if config.is_file():
        text, unread = _read(config)
        sections.append(Section("run/config.yaml", text, notes=unread))
    record = run_dir / "run.json"  # versions, hashes and each start: what a report is read against
    if record.is_file():
        text, unread = _read(record)
        try:
            whole = isinstance(json.loads(text), dict)
        except ValueError:
            whole = False
        damaged = f"{record} is not the JSON record xtts writes: `xtts train` refuses to resume the run"
        sections.append(Section("run/run.json", text, notes=unread or ([] if whole else [damaged])))
        training = locks.held_by(run_dir)
        if training is not None:  # its record has no end yet, and the timings shared the CPU with it
            sections[-1].notes.append(
                f"{run_dir} is still training ({training}): the profiles here shared this machine with it"
            )
    else:
        sections.append(Section("run/run.json", "", notes=[f"{run_dir} has no run.json"]))
    metrics = run_dir / "metrics.jsonl"
    if metrics.is_file():
        kept, watched, unread = _tail(metrics)
        if unread:
            return [*sections, Section("run/metrics-last.jsonl", "", notes=unread)]
        cut = sum(1 for line in kept if line.strip() and not _a_record(line))
        said = [
            f"{cut} of the last {len(kept)} lines of {metrics} "
            + ("is not a whole JSON record" if cut == 1 else "are not whole JSON records")
            + " (a kill mid-write)"
        ]
        sections.append(Section("run/metrics-last.jsonl", "\n".join(kept) + "\n", notes=said if cut else []))
        left = [f"the {watched[0]:,} watch records before the last {WATCH_KEPT:,} are left out"] if watched[0] else []
        sections.append(Section("run/watch.jsonl", "".join(f"{w}\n" for w in watched[1]), notes=left))
    else:
        sections.append(Section("run/metrics-last.jsonl", "", notes=[f"{run_dir} has no metrics.jsonl yet"]))
    return sections


def _tail(path: Path) -> tuple[list[str], tuple[int, list[str]], list[str]]:
    """(its last METRICS_KEPT lines, (the watch records before the last WATCH_KEPT, those), why it
    could not be read): read line by line, as a run's metrics grow without end (80 MB had taken 640 MB)."""
    from collections import deque

    last: deque[str] = deque(maxlen=METRICS_KEPT)
    watched: deque[str] = deque(maxlen=WATCH_KEPT)
    seen = 0
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                last.append(line.rstrip("\n"))
                if '"watch"' in line:
                    seen += 1
                    watched.append(line.rstrip("\n"))
    except OSError as error:
        return [], (0, []), [f"{path}: cannot read it ({error.strerror or error})"]
    return list(last), (seen - len(watched), list(watched)), []


def _a_record(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def write_report(sections: list[Section], out: Path, clean, keep_old: Optional[Path] = None) -> int:
    """The archive (tar.gz) of `sections` and a README.txt saying what each is; returns its size.
    An archive already at `out` is moved to `keep_old` once the new one is written whole (moved
    first, a full disk had left neither at `out`); a part written is removed."""
    index = ["xtts report: what each file is and how its making went", ""]
    for section in sections:
        status = "" if section.exit_code is None else f", exit {section.exit_code}"
        index.append(f"{section.name}: {section.seconds:.1f} s{status}")
        index += [f"    {note}" for note in section.notes]
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    try:
        with tarfile.open(partial, "w:gz") as archive:
            for name, text in [("README.txt", "\n".join(index) + "\n"), *((s.name, s.text) for s in sections)]:
                data = clean(text).encode("utf-8")
                info = tarfile.TarInfo(f"xtts-report/{name}")
                info.size, info.mtime = len(data), int(time.time())
                archive.addfile(info, io.BytesIO(data))
    except BaseException as exc:
        partial.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise naming(exc, out) from None
        raise
    if keep_old is not None and out.is_file():
        os.replace(out, keep_old)
    os.replace(partial, out)
    return out.stat().st_size
