"""The run directory: everything a user needs to resume or compare a run.

    <run_dir>/config.yaml        the resolved config, as the run used it
    <run_dir>/run.json           hashes of what must not change on resume, versions, history
    <run_dir>/vocab.json         the tokenizer: front end, cleaners, symbols, languages, speakers
    <run_dir>/speaking_rate.json mel frames per token in the training data (bounds synthesis length)
    <run_dir>/speaker_reference.npy  the reference clip's mel that test sentences are spoken with
    <run_dir>/checkpoints/       tf.train.CheckpointManager (keep N, pointer moved after the data)
    <run_dir>/metrics.jsonl      one line per logged step
    <run_dir>/tensorboard/       losses, learning rate, timings, mel images, audio
    <run_dir>/samples/           test sentences rendered to WAV

In a multi-worker run only the chief writes here; the other workers read the checkpoints (and
vocab) from the same path, so the run directory must be on a filesystem every worker shares.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import yaml

from xtts_cli import __version__
from xtts_cli.config.editing import write_atomically
from xtts_cli.config.schema import XttsConfig
from xtts_cli.errors import XttsError

# Settings a checkpoint depends on: a change makes old weights or features meaningless.
FEATURE_KEYS = (
    "sample_rate",
    "n_mels",
    "n_fft",
    "hop_length",
    "win_length",
    "fmin",
    "fmax",
    "mel_filterbank",
    "text_cleaners",
    "text_frontend",
)


def _flatten(prefix: str, values: dict[str, Any]) -> dict[str, Any]:
    return {f"{prefix}.{k}": v for k, v in values.items()}


def model_identity(config: XttsConfig) -> dict[str, Any]:
    """The fields that must match to resume: the model section and the feature settings."""
    identity = _flatten("model", config.model.model_dump())
    data = config.data.model_dump()
    identity.update({f"data.{k}": data[k] for k in FEATURE_KEYS})
    return identity


def digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def default_run_dir(config_path: Optional[Path]) -> Path:
    """runs/<config name>: the same command run again resumes the same run."""
    name = config_path.stem if config_path is not None else "default"
    return Path("runs") / name


@dataclass
class RunDir:
    path: Path

    @property
    def checkpoints(self) -> Path:
        return self.path / "checkpoints"

    @property
    def metrics(self) -> Path:
        return self.path / "metrics.jsonl"

    @property
    def tensorboard(self) -> Path:
        return self.path / "tensorboard"

    @property
    def samples(self) -> Path:
        return self.path / "samples"

    @property
    def vocab(self) -> Path:
        return self.path / "vocab.json"

    @property
    def config_file(self) -> Path:
        return self.path / "config.yaml"

    @property
    def run_file(self) -> Path:
        return self.path / "run.json"

    def has_checkpoint(self) -> bool:
        return (self.checkpoints / "checkpoint").is_file()

    def read_run(self) -> Optional[dict[str, Any]]:
        if not self.run_file.is_file():
            return None
        try:
            return json.loads(self.run_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            return None


def _refuse_changed_model(run: RunDir, previous: Optional[dict[str, Any]], identity: dict[str, Any]) -> None:
    if previous is None:
        return
    # A run recorded before a setting existed used its default (`text_frontend`: characters).
    before = {**model_identity(XttsConfig()), **previous.get("model_identity", {})}
    changed = sorted(k for k in set(before) | set(identity) if before.get(k) != identity.get(k))
    if changed:
        details = ", ".join(f"{k} ({before.get(k)!r} -> {identity.get(k)!r})" for k in changed)
        raise XttsError(
            f"{run.path} holds a run with another model config; changed: {details}",
            hint="pass --fresh to start a new run (the old one is kept as <run>.old-<time>), "
            "--force to resume anyway, or --run-dir DIR for a separate run",
        )


def prepare_run_dir(
    path: Path, config: XttsConfig, *, fresh: bool = False, force: bool = False, read_only: bool = False
) -> tuple[RunDir, bool]:
    """Create or reopen a run directory; returns it and whether training resumes.

    Resuming with a changed model or feature setting is refused (naming the fields) unless
    `fresh` (the old run is moved aside, never deleted) or `force`.

    `read_only`: a non-chief worker of a multi-worker run. The chief writes the run directory;
    this makes the same resume decision (and the same refusal) from what is there, writing
    nothing. With `fresh` it never resumes: the chief moves the old run aside.
    """
    run = RunDir(Path(path))
    identity = model_identity(config)
    if read_only:
        resume = not fresh and run.has_checkpoint()
        if resume and not force:
            _refuse_changed_model(run, run.read_run(), identity)
        return run, resume
    if fresh and run.path.exists() and any(run.path.iterdir()):
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        archived = run.path.with_name(f"{run.path.name}.old-{stamp}")
        os.replace(run.path, archived)
    run.path.mkdir(parents=True, exist_ok=True)
    previous = run.read_run()
    resume = run.has_checkpoint()
    if resume and not force:
        _refuse_changed_model(run, previous, identity)
    history = (previous or {}).get("history", [])
    history.append({"started": _dt.datetime.now().isoformat(timespec="seconds"), "resumed": resume})
    record = {
        "xtts_version": __version__,
        "config_hash": digest(config.model_dump()),
        "model_hash": digest(identity),
        "model_identity": identity,
        "history": history,
    }
    try:
        import tensorflow as tf

        record["tensorflow_version"] = tf.__version__
    except ImportError:  # pragma: no cover - tensorflow is a dependency
        pass
    header = f"# Resolved config of this run (hash {record['config_hash']}); resume: xtts train --run-dir {run.path}\n"
    write_atomically(
        run.config_file, header + yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False), backup=False
    )
    write_atomically(run.run_file, json.dumps(record, indent=2, default=str) + "\n", backup=False)
    return run, resume


def remove_stale_temporaries(run: RunDir) -> list[Path]:
    """Checkpoint writes that never finished (a crash mid-save) leave temp files; drop them.

    TensorFlow writes shards to `*_temp*` paths and moves the `checkpoint` pointer only after the
    data is complete, so anything temporary is never referenced; removing it keeps disk use flat.
    """
    removed: list[Path] = []
    if not run.checkpoints.is_dir():
        return removed
    for item in run.checkpoints.iterdir():
        if "_temp" in item.name or item.name.endswith(".tmp"):
            if item.is_dir():
                shutil.rmtree(item, ignore_errors=True)
            else:
                item.unlink(missing_ok=True)
            removed.append(item)
    return removed
