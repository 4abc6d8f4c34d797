"""The run directory as training makes and reopens it: everything a user needs to resume or
compare a run (its layout: `run.files.LAYOUT`, described in docs/run-directory.md).

In a multi-worker run only the chief writes here; the other workers read the checkpoints (and
vocab) from the same path, so the run directory must be on a filesystem every worker shares.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import yaml

from xtts_cli import __version__
from xtts_cli import locks as run_lock
from xtts_cli.config.editing import with_absolute_paths, write_atomically
from xtts_cli.config.loading import MOVED, LoadedConfig
from xtts_cli.config.schema import XttsConfig
from xtts_cli.data.features import MelFeatures, with_band_top
from xtts_cli.errors import XttsError
from xtts_cli.findings import yaml_scalar
from xtts_cli.host import plan_threads
from xtts_cli.locks import LOCK_FILE
from xtts_cli.model.presets import resolved_identity
from xtts_cli.run.files import MARKER_FILE, VOCODER_DIR, RunDir, no_checkpoint_hint, read_run, same_start

# Besides what a mel frame is (`MelFeatures`), the text front end a checkpoint's ids come from.
TEXT_KEYS = ("text_cleaners", "text_frontend")


def _flatten(prefix: str, values: dict[str, Any]) -> dict[str, Any]:
    return {f"{prefix}.{k}": v for k, v in values.items()}


def model_identity(config: XttsConfig) -> dict[str, Any]:
    """The fields that must match to resume: what the model section says the network is
    (`identity()` of its kind) and the feature settings."""
    # A regulariser (dropout) is no part of it: a resume that changes one is said, not refused.
    regularisers = {f"model.{key}" for key in getattr(config.model, "NO_WEIGHT_KEYS", ())}
    identity = {key: value for key, value in config.model.identity().items() if key not in regularisers}
    identity.update(_flatten("data", MelFeatures.of(config.data).as_dict()))
    identity.update({f"data.{key}": getattr(config.data, key) for key in TEXT_KEYS})
    # Not what trains (`training.freeze`): a resume that unfreezes keeps the weights and starts the
    # optimizer's moments again (training/checkpointing.py).
    return identity


def digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def default_run_dir(config_path: Optional[Path]) -> Path:
    """runs/<config name>: the same command run again resumes the same run; a run's own config.yaml
    resumes that run."""
    if config_path is not None and own_config(config_path.parent) == config_path:
        return config_path.parent
    name = config_path.stem if config_path is not None else "default"
    return Path("runs") / name


def chosen_run_dir(loaded: LoadedConfig, run_dir: Optional[Path]) -> Path:
    """Where `xtts train` writes: --run-dir, else training.run_dir, else runs/<config name> ("~" the home's)."""
    config = loaded.config
    return (
        run_dir or (Path(config.training.run_dir) if config.training.run_dir else default_run_dir(loaded.path))
    ).expanduser()


def own_config(run_dir: Optional[Path]) -> Optional[Path]:
    """The resolved config.yaml of the run at `run_dir`, if it is one: what `xtts train --run-dir RUN`
    without --config resumes with (the header of that file says so), not the built-in defaults."""
    if run_dir is None:
        return None
    config = RunDir(Path(run_dir)).config_file
    return config if config.is_file() and is_run_dir(Path(run_dir)) else None


def resumed_config(run_dir: Optional[Path], config: Optional[Path] = None) -> Optional[Path]:
    """`config` when given, else `own_config(run_dir)`, what `xtts train --run-dir RUN` without
    --config resumes with, once it is known to hold the run's settings: a run's own config.yaml
    emptied or damaged is refused (the defaults it would otherwise read are not what the run trained
    with, and they would be written there for good), passed with -c too."""
    if config is not None:
        if own_config(config.parent) != config:
            return config
        run_dir = config.parent
    own = own_config(run_dir)
    if (
        own is None
        and run_dir is not None
        and is_run_dir(Path(run_dir))
        and not RunDir(Path(run_dir)).config_file.exists()
    ):
        # Deleted: the built-in defaults on the bundled sample had trained on, and been written there for good.
        raise XttsError(
            f"{run_dir} has no config.yaml (deleted?): the run's own copy of its config is lost, and its run.json "
            "records the settings only to compare",
            hint=f"pass the config it was trained with: xtts train -c CONFIG --run-dir {run_dir} (a config of "
            "another model is refused against the run's run.json)",
        )
    if own is not None and recorded_config(RunDir(own.parent)) is None:
        from xtts_cli.config.loading import build_config, parse_yaml, read_config_text

        raw = parse_yaml(read_config_text(own), str(own))  # a slip in a hand edit is named as it is
        if raw:
            build_config(raw, str(own))
        raise XttsError(
            f"{own} holds no settings that load (it is empty or damaged): the run's own copy of its config is lost",
            hint=f"pass the config it was trained with: xtts train -c CONFIG --run-dir {run_dir} (a config of "
            "another model is refused against the run's run.json)",
        )
    return own


def recorded_config(run: RunDir, previous: Optional[dict[str, Any]] = None) -> Optional[XttsConfig]:
    """The config the run last wrote (config.yaml); None where it has none that loads (or none that
    holds a setting: an emptied file). With `previous` (its run.json), the settings its last start
    trained with where that holds them (`config`), so a hand edit of config.yaml is a change too."""
    from xtts_cli.config.loading import build_config, parse_yaml, read_config_text
    from xtts_cli.errors import ConfigError

    started = (previous or {}).get("config")
    if isinstance(started, dict):
        try:
            return build_config(started, str(run.run_file))
        except ConfigError:
            pass
    try:
        raw = parse_yaml(read_config_text(run.config_file), str(run.config_file))
        return build_config(raw, str(run.config_file)) if raw else None
    except ConfigError:
        return None


# Settings a resume changes by design: how long it goes on, where it runs.
_RESUMED_BY_DESIGN = {"training.max_steps", "training.max_minutes", "training.epochs", "training.run_dir"}


def changed_settings(before: XttsConfig, now: XttsConfig, shown: int = 6) -> str:
    """`key (old -> new)` for each setting a resume changes (a learning rate, a batch size), beyond
    how long it trains: said, not refused, so a changed setting is never a surprise in the curves."""
    old, new = (_flatten_all(_without(c, ())) for c in (before, now))  # paths compared absolute
    keys = [key for key in new if key not in _RESUMED_BY_DESIGN and old.get(key, new[key]) != new[key]]
    said = ", ".join(f"{key} ({_change(old[key], new[key])})" for key in keys[:shown])
    return said + (f" and {len(keys) - shown} more" if len(keys) > shown else "")


def _change(old: Any, new: Any) -> str:
    """`old -> new`; for a list of datasets whose paths stay, each one's settings that changed
    (`/data/de: weight 2 -> 5`): by their paths alone, the two had read the same."""
    if _shown(old) == _shown(new) and isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        parts = [
            f"{before.get('path')}: "
            + ", ".join(
                f"{k} {_shown(before.get(k))} -> {_shown(after.get(k))}" for k in after if before.get(k) != after.get(k)
            )
            for before, after in zip(old, new)
            if isinstance(before, dict) and isinstance(after, dict) and before != after
        ]
        if parts:
            return "; ".join(parts)
    return f"{_shown(old)} -> {_shown(new)}"


def _shown(value: Any) -> str:
    """A setting as the config writes it (false, null, [a, b]), not Python's repr; a dataset by its path
    (a list of datasets had been a dump of dicts)."""
    if isinstance(value, list):
        return (
            "[" + ", ".join(str(v["path"]) if isinstance(v, dict) and "path" in v else _shown(v) for v in value) + "]"
        )
    return yaml_scalar(value) if not isinstance(value, dict) else json.dumps(value, ensure_ascii=False)


def _flatten_all(tree: dict[str, Any]) -> dict[str, Any]:
    return {
        f"{section}.{key}": value
        for section, body in tree.items()
        if isinstance(body, dict)
        for key, value in body.items()
    }


# Changes --force cannot resume across: another kind's network, and another front end, whose
# symbols the run's vocabulary (vocab.json, which a resume keeps) does not hold.
_UNFORCEABLE = ("model.kind", "data.text_frontend")


def _refuse_changed_model(
    run: RunDir, previous: Optional[dict[str, Any]], identity: dict[str, Any], force: bool = False
) -> None:
    if previous is None:
        return
    # A key the run's record lacks (recorded before it counted) is what its resolved config says,
    # else the setting's default (`text_frontend`: characters).
    # A record written before the vocoder's keys moved into `model` names them `vocoder.dim`.
    recorded = {MOVED.get(key, key): value for key, value in previous.get("model_identity", {}).items()}
    before = with_band_top(resolved_identity({**model_identity(recorded_config(run) or XttsConfig()), **recorded}))
    identity = with_band_top(resolved_identity(identity))
    changed = sorted(k for k in identity if before.get(k) != identity.get(k))
    if "model.kind" in changed:  # another kind's keys follow from it: each would read "None -> x"
        changed = ["model.kind"]
    if force:
        changed = [k for k in changed if k in _UNFORCEABLE]
    if changed:
        details = ", ".join(f"{k} ({_shown(before.get(k))} -> {_shown(identity.get(k))})" for k in changed)
        # --force resumes where the checkpoint still fits (a weight of another shape does not: the
        # set-up then fails and the run's record is put back); never across _UNFORCEABLE.
        forceable = not any(k in _UNFORCEABLE for k in changed)
        force_hint = "--force to resume anyway where the checkpoint holds every weight, " if forceable else ""
        # A run adapted from another took the base's settings: this command's own config (often a
        # preset's, writing a network of its own) is what differs.
        base = (previous.get("parent") or {}).get("run")
        resume = f"it started from {base}: resume it with `xtts train -r {run.path}` (its own config); " if base else ""
        raise XttsError(
            f"{run.path} holds a run with another model config; changed: {details}",
            hint=f"{resume}pass --fresh to start a new run (the old one is kept as <run>.old-<time>), {force_hint}"
            "or --run-dir DIR for a separate run",
        )


def _entries(path: Path) -> list[str]:
    """What a folder holds, the lock file aside (a run that died leaves it, empty of meaning)."""
    try:
        return sorted(name for name in os.listdir(path) if name != LOCK_FILE)
    except FileNotFoundError:
        return []


def is_run_dir(path: Path) -> bool:
    """xtts wrote this folder: it has the marker, or (a run from before the marker) its run.json."""
    return (path / MARKER_FILE).is_file() or (path / "run.json").is_file()


def refusal_to_start(path: Path, config: XttsConfig) -> Optional[XttsError]:
    """What `xtts train -r PATH` with `config` refuses of the folder before its first step (files it
    did not write, a resume of another model), read without writing anything: `validate -r` says it
    (it had said 0 errors of a run train then refused)."""
    run = RunDir.of(Path(path), config)
    try:
        refuse_foreign(run)
        if run.has_checkpoint():
            previous = run.read_run()
            if previous is None:  # a run.json that cannot be read (validate had said valid)
                _refuse_lost_record(run)
            _refuse_changed_model(run, previous, model_identity(config))
            _refuse_falling_back_to_the_sample(run, config)  # the data it trained on, not named
    except XttsError as error:
        return error
    return None


def only_a_vocoder(path: Path) -> bool:
    """The folder holds a vocoder trained first into RUN/vocoder (docs/vocoder.md trains it so), and
    nothing else: its acoustic run's to start in (it had been refused as "files xtts did not write"),
    and nothing for --fresh to move aside."""
    return _entries(path) == [VOCODER_DIR] and is_run_dir(path / VOCODER_DIR) and not is_run_dir(path)


def refuse_foreign(run: RunDir) -> None:
    """A run directory is an empty folder or one xtts made: anything else is the user's files."""
    entries = _entries(run.path)
    if run.path.exists() and not run.path.is_dir():
        raise XttsError(f"--run-dir {run.path} is a file, not a folder", hint="pass --run-dir DIR for the run")
    if entries and not is_run_dir(run.path) and not only_a_vocoder(run.path):
        # A vocoder trained into RUN/vocoder is xtts's own: not named as a file it did not write.
        entries = [name for name in entries if name != VOCODER_DIR or not is_run_dir(run.path / VOCODER_DIR)]
        shown = ", ".join(entries[:3]) + (f" and {len(entries) - 3} more" if len(entries) > 3 else "")
        raise XttsError(
            f"--run-dir {run.path} holds files xtts did not write ({shown}); a run writes only into an empty "
            "folder or one of its own",
            hint="pass --run-dir to a new folder, e.g. runs/my-run",
        )


def _move_aside(path: Path) -> Path:
    """Rename the run at `path` to `<name>.old-<time>` (a free name, never a merge); returns it."""
    here = Path.cwd().resolve()
    resolved = path.resolve()
    if here == resolved or resolved in here.parents:
        raise XttsError(
            f"--fresh would move {path} aside, and it holds the current directory",
            hint="run from outside the run directory, or pass --run-dir to a new folder",
        )
    # A run directory that is a link (to a larger disk) keeps it: its target is moved aside beside
    # it and made again empty, where the link had been replaced by a local folder.
    linked = path.is_symlink()
    moved = resolved if linked else path
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    for attempt in range(1, 1000):
        suffix = f".old-{stamp}" + (f"-{attempt}" if attempt > 1 else "")
        archived = moved.with_name(_shortened(moved.name, 255 - len(suffix)) + suffix)
        try:
            os.mkdir(archived)  # claims the name; another --fresh in the same second takes the next
        except FileExistsError:
            continue
        os.rmdir(archived)
        os.replace(moved, archived)
        if linked:
            os.mkdir(moved)
        return archived
    raise XttsError(f"no free name to move {path} aside to", hint="remove the old runs beside it")


def _kept_aside(path: Path, kept: Path, vocoder: bool) -> str:
    """--fresh's note: where the old run went (a link's target, the link kept), and its vocoder."""
    return (
        f"--fresh: the old run is kept as {kept}"
        + (f" ({path} still links to {path.resolve()}, made anew)" if path.is_symlink() else "")
        + (
            f", its vocoder in {kept / VOCODER_DIR} (the new run speaks with Griffin-Lim until one is trained "
            f"into {path / VOCODER_DIR}, or copied there)"
            if vocoder
            else ""
        )
    )


def _shortened(name: str, most: int) -> str:
    """`name` cut to `most` bytes of UTF-8 (a file system's names hold 255): a run named at its
    longest still has a name to be moved aside to."""
    encoded = name.encode("utf-8", "surrogateescape")
    return name if len(encoded) <= most else encoded[:most].decode("utf-8", "ignore")


# In a checkpoint folder outside its run (training.checkpoint_dir): the run whose checkpoints it holds.
OWNER_FILE = ".xtts-checkpoints-of"


def _own_checkpoint_folder(
    run: RunDir, previous: Optional[dict[str, Any]], fresh: bool, note, kept: Optional[Path] = None
) -> None:
    """A training.checkpoint_dir outside the run directory belongs to one run: another run's (or,
    for a new run, any checkpoints it holds already) is refused, where the new run took over their
    weights and two runs wrote the same files; with --fresh its checkpoints are moved aside too, and
    the old run moved aside (`kept`) is pointed at them."""
    folder = run.checkpoints
    inside = run.path.resolve() in folder.resolve().parents
    if inside:
        return
    owner_file = folder / OWNER_FILE
    owner = owner_file.read_text(encoding="utf-8").strip() if owner_file.is_file() else None
    mine = str(run.path.resolve())
    held = folder.is_dir() and any(folder.glob("ckpt-*.index"))
    if held and owner not in (None, mine) and not Path(owner).exists() and _named_by_its_record(run, previous):
        # Its run renamed or moved (`mv runs/a runs/b`): this run, whose record names the folder, is it.
        note(f"training.checkpoint_dir {folder} held the checkpoints of {owner}, which is gone: taken as {run.path}'s")
        owner = None
    if held and fresh:
        archived = _move_aside(folder)
        note(f"--fresh: the old checkpoints in training.checkpoint_dir are kept as {archived}")
        if kept is not None:
            _point_at(kept, archived)
    elif held and (owner not in (None, mine) or (owner is None and previous is None)):  # an empty one is free
        raise XttsError(
            f"training.checkpoint_dir {folder} holds the checkpoints of "
            + (f"the run {owner}" if owner else "another run")
            + f"; {run.path} would take over their weights and write over them",
            hint=f"give each run a checkpoint folder of its own, e.g. {folder / run.path.name}",
        )
    folder.mkdir(parents=True, exist_ok=True)
    if owner != mine or fresh:
        write_atomically(owner_file, mine + "\n", backup=False)


def _named_by_its_record(run: RunDir, previous: Optional[dict[str, Any]]) -> bool:
    """The run's last start wrote to the checkpoint folder it is given now."""
    recorded = recorded_config(run, previous) if previous is not None else None
    return recorded is not None and RunDir.of(run.path, recorded).checkpoints.resolve() == run.checkpoints.resolve()


def _point_at(kept: Path, checkpoints: Path) -> None:
    """The run moved aside at `kept` told where its checkpoints went (its config.yaml's
    training.checkpoint_dir, and their folder's owner): it had named the folder the new run writes,
    and spoken, resumed and exported with the new run's weights."""
    config_file = RunDir(kept).config_file
    try:
        text = config_file.read_text(encoding="utf-8")
        tree = yaml.safe_load(text)
        tree["training"]["checkpoint_dir"] = str(checkpoints)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, KeyError, TypeError):
        return  # a config that cannot be read names no folder to mend
    header = "".join(line + "\n" for line in text.splitlines() if line.startswith("#"))
    body = yaml.safe_dump(tree, sort_keys=False, allow_unicode=True, width=1 << 16)
    write_atomically(config_file, header + body, backup=False)
    write_atomically(checkpoints / OWNER_FILE, str(kept.resolve()) + "\n", backup=False)


def refuse_starting_over(path: Path, config: XttsConfig, config_file: Optional[Path] = None) -> None:
    """`training.init_from` into the run directory at `path` when it holds checkpoints of another
    start: refused before the scan and the model (prepare_run_dir refuses the same), and by validate.
    A run resumed with its own config (`config_file`) names its base as its record does: a resume,
    which may take new data (`xtts train -r RUN --data NEW` had been refused for an adapted run)."""
    run = RunDir.of(path.expanduser(), config)
    if config.training.init_from is not None and run.has_checkpoint():
        previous = run.read_run()
        _refuse_other_parent(run, previous, config.training.init_from)
        own = config_file is not None and own_config(run.path) == config_file
        if not own or config.training.init_from != written_init_from(config_file):
            _refuse_other_data(run, previous, config)


def written_init_from(path: Optional[Path]) -> Any:
    """training.init_from as the config file at `path` writes it (None where it cannot be read)."""
    try:
        written = yaml.safe_load(path.read_text(encoding="utf-8")) if path is not None else None
    except (OSError, ValueError, yaml.YAMLError):
        return None
    training = written.get("training") if isinstance(written, dict) else None
    return training.get("init_from") if isinstance(training, dict) else None


def _refuse_other_data(run: RunDir, previous: Optional[dict[str, Any]], config: XttsConfig) -> None:
    """`--init-from` the base a run with checkpoints started from, on other data: a second
    adaptation, not this one's resume (both into the default run directory). Refused: the second
    voice had trained on in the first one's run, its checkpoints rotated out, with exit 0. A resume
    names no base (train fills it from run.json after this), so it may take new data."""
    spec = config.training.init_from
    before = recorded_config(run, previous) if (previous or {}).get("parent") else None
    if spec is None or before is None or _data_of(before) == _data_of(config):
        return

    def named(folders: list[str]) -> str:
        return ", ".join(folders) or "the bundled sample (no --data)"

    raise XttsError(
        f"--init-from {spec}: {run.path} holds the run adapted from it on {named(_data_of(before))}; "
        f"adapting to {named(_data_of(config))} there would go on with that run, not start one",
        hint=f"for a new run of its own pass --run-dir DIR; to go on training this run on the new data, resume it: "
        f"xtts train -r {run.path} --data ...",
    )


def _refuse_other_parent(run: RunDir, previous: Optional[dict[str, Any]], spec: Optional[str]) -> None:
    """`--init-from` on a run that has checkpoints resumes it only when it started from that run:
    anything else would throw its training away."""
    if spec is None:
        return
    recorded = (previous or {}).get("parent")
    given = Path(spec).expanduser().resolve()
    if isinstance(recorded, dict) and same_start(spec, recorded):
        return
    origin = f"started from {recorded['run']}" if recorded else "trained from scratch"
    own = given == run.path.resolve() or run.path.resolve() in given.parents  # --fresh would move the base aside
    raise XttsError(
        f"--init-from {spec}: {run.path} already holds a run with checkpoints ({origin}); starting it over from "
        f"{spec} would discard them",
        # A resume reads no base: the same base moved, or gone, needs no --init-from.
        hint=f"to resume it, leave --init-from out (`xtts train -r {run.path}`); for a new run pass --run-dir DIR"
        + ("" if own else ", or --fresh to move the old one aside"),
    )


def _data_of(config: XttsConfig) -> list[str]:
    """The folders `config` trains on, as whole paths."""
    data = config.data
    paths = [data.dataset_path] if data.dataset_path else [source.path for source in data.datasets]
    return sorted(str(Path(str(path)).expanduser().resolve()) for path in paths if path)


def prepare_run_dir(
    path: Path,
    config: XttsConfig,
    *,
    fresh: bool = False,
    force: bool = False,
    read_only: bool = False,
    parent: Optional[dict[str, Any]] = None,
    unread: tuple[str, ...] = (),
    note: Callable[[str], None] = lambda line: None,
) -> tuple[RunDir, bool]:
    """Create or reopen a run directory; returns it and whether training resumes.

    Resuming with a changed model or feature setting is refused (naming the fields) unless
    `fresh` (the old run is moved aside, never deleted) or `force`. A folder holding files xtts
    did not write is refused, and so is a run another process is writing: this process holds the
    run's lock (`run_lock`) from here until `release_run_dir`, or its end. `parent`: the run a new
    run starts from (`ParentRun.record`), kept in run.json; `training.init_from` on a run that has
    checkpoints resumes it only when it started from there. `unread`: keys the model kind does not
    read (`ModelKind.ignored_keys`), left out of its config.yaml so that it validates clean.

    `read_only`: a non-chief worker of a multi-worker run. The chief writes the run directory;
    this makes the same resume decision (and the same refusal) from what is there, writing
    nothing. With `fresh` it never resumes: the chief moves the old run aside.
    """
    run = RunDir.of(Path(path), config)
    identity = model_identity(config)
    if read_only:
        resume = not fresh and run.has_checkpoint()
        if resume:
            _refuse_other_parent(run, run.read_run(), config.training.init_from)
        if resume:
            _refuse_changed_model(run, run.read_run(), identity, force)
        return run, resume
    refuse_foreign(run)
    kept = None  # where --fresh moved the old run
    if fresh and _entries(run.path) and not only_a_vocoder(run.path):
        run_lock.acquire(run.path)  # no one else is writing the run about to be moved
        try:
            vocoder = (run.path / VOCODER_DIR).is_dir()
            kept = _move_aside(run.path)
            note(_kept_aside(run.path, kept, vocoder))
        finally:
            run_lock.release(run.path)
    run.path.mkdir(parents=True, exist_ok=True)
    run_lock.acquire(run.path)
    if not (run.path / MARKER_FILE).is_file():
        write_atomically(
            run.path / MARKER_FILE, "an xtts run directory: `xtts train` writes here, and only here\n", backup=False
        )
    previous = run.read_run()
    if previous is None and not force:
        _refuse_lost_record(run)
    elif previous is None and run.run_file.exists():
        _keep_unread_record(run, note)
    if not fresh:
        _refuse_moved_checkpoint_dir(run, config)
    _own_checkpoint_folder(run, previous, fresh, note, kept)
    _restore_pointer(run, note)
    resume = run.has_checkpoint()
    if not resume and previous is not None:
        _refuse_lost_checkpoints(run, config)
    if resume:
        _refuse_other_parent(run, previous, config.training.init_from)
    if resume:
        _refuse_changed_model(run, previous, identity, force)
    if resume and not force:
        _refuse_falling_back_to_the_sample(run, config)
    if resume and _trains_nothing(run, config):
        # `--steps 3` on a run at step 4: nothing is trained, so nothing of the run is rewritten (its
        # config.yaml had taken max_steps 3, and the next resume named a schedule the run never had).
        return run, resume
    if resume:
        _say_what_changed(run, config, previous, note)
        _say_vocoder_unfit(run, config, note)
        _say_other_versions(previous, note)
    _write_record(run, config, _run_record(config, identity, previous, resume, parent), unread)
    return run, resume


def _refuse_falling_back_to_the_sample(run: RunDir, config: XttsConfig) -> None:
    """A run that trained on the user's data, resumed with a config that names none (`-c CONFIG`
    without the `-d` it started with): refused, where it had gone on training on the bundled sample
    with a note that said only `data.dataset_path ('...' -> None)`."""
    recorded = recorded_config(run)
    if recorded is None or config.data.dataset_path or config.data.datasets:
        return
    own = f"xtts train -r {shlex.quote(str(run.path))}"
    if len(recorded.data.datasets) > 1:  # --data names one: the others would be dropped
        paths = [source.path for source in recorded.data.datasets]
        raise XttsError(
            f"{run.path} trained on {len(paths)} datasets ({', '.join(paths)}), but this config names no data: the "
            "run would go on training on the bundled sample",
            hint=f"resume with its own config, which lists them: {own}; --force trains it on the bundled sample",
        )
    was = recorded.data.dataset_path or (recorded.data.datasets[0].path if recorded.data.datasets else None)
    if was is None:
        return
    raise XttsError(
        f"{run.path} trained on {was}, but this config names no data: the run would go on training on the "
        "bundled sample",
        hint=f"pass --data {shlex.quote(str(was))} as it started (or resume with its own config: {own}); --force "
        "trains it on the bundled sample",
    )


def _write_record(run: RunDir, config: XttsConfig, record: dict[str, Any], unread: tuple[str, ...]) -> None:
    """The run's config.yaml (the resolved config, to resume with) and run.json (its record)."""
    header = (
        f"# Resolved config of this run (hash {record['config_hash']}); resume: xtts train --run-dir "
        f"{shlex.quote(str(run.path.absolute()))}\n"
    )
    # Names in any script as written, and a long path on one line: a person reads this file.
    tree = _without(config, unread)
    body = yaml.safe_dump(tree, sort_keys=False, allow_unicode=True, width=1 << 16)
    write_atomically(run.config_file, header + body, backup=False)
    record["config"] = tree  # what this start trains with, against a later hand edit of config.yaml
    write_atomically(run.run_file, json.dumps(record, indent=2, default=str) + "\n", backup=False)


def _trains_nothing(run: RunDir, config: XttsConfig) -> bool:
    """The run's checkpoint is at or past the config's training.max_steps (its name holds the step)."""
    pointed = run.pointed_checkpoint()
    step = re.fullmatch(r"ckpt-(\d+)", Path(pointed).name) if pointed else None
    return step is not None and config.training.max_steps is not None and config.training.max_steps <= int(step[1])


def _refuse_moved_checkpoint_dir(run: RunDir, config: XttsConfig) -> None:
    """A resume whose training.checkpoint_dir is another folder than the run's last start wrote to,
    and holds none of its checkpoints: refused, where the run had started over from step 0 beside
    them (and dropped its logged steps). Checkpoints moved there first resume."""
    recorded = recorded_config(run)
    if recorded is None or recorded.training.checkpoint_dir == config.training.checkpoint_dir:
        return
    before = RunDir.of(run.path, recorded)
    kept = before.complete_checkpoints()
    if not kept or before.checkpoints.resolve() == run.checkpoints.resolve() or run.complete_checkpoints():
        return
    was, now = recorded.training.checkpoint_dir, config.training.checkpoint_dir
    raise XttsError(
        f"training.checkpoint_dir is {now or 'unset (RUN/checkpoints)'}, but the run's checkpoints are in "
        f"{before.checkpoints} (training.checkpoint_dir {was or 'unset'} at its last start), and "
        f"{run.checkpoints} holds none: the run would start again at step 0",
        hint=f"move them first (mkdir -p {shlex.quote(str(run.checkpoints))} && mv "
        f"{shlex.quote(str(before.checkpoints))}/ckpt-* {shlex.quote(str(before.checkpoints))}/checkpoint "
        f"{shlex.quote(str(run.checkpoints))}/), or set "
        f"training.checkpoint_dir back to {was or 'unset'}; --fresh starts a new run",
    )


def _refuse_lost_checkpoints(run: RunDir, config: XttsConfig) -> None:
    """A run that logged steps past its first checkpoint and holds none (deleted, moved): refused,
    where it had started again at step 0 and dropped its logged steps. Steps logged before the first
    checkpoint (a run killed early) start again, as they always did."""
    recorded = recorded_config(run)
    save = (recorded or config).training.save_step  # what the logged attempts saved by
    logged = logged_past_first_save(run, save)
    if logged is None:
        return
    last, witness = logged
    saved = (
        f"past its first checkpoint at step {save} (training.save_step)"
        if last > save
        else "and saved its last step as it ended"
    )
    raise XttsError(
        f"{run.path} logged steps up to {last} ({witness}), {saved}, but {run.checkpoints} holds no checkpoint: "
        "they were removed or moved",
        hint="put them back (or set training.checkpoint_dir to where they are); --fresh keeps this run aside and "
        "starts a new one",
    )


def logged_past_first_save(run: RunDir, save_step: int) -> Optional[tuple[int, str]]:
    """(the highest step the run recorded, the file that says so) where it is past the first
    checkpoint's (`save_step`): the run had checkpoints. metrics.jsonl, else run.json's history (its
    starts' ends), so metrics moved away with the checkpoints still say it. None otherwise (a run
    killed before its first)."""
    logged = _last_logged_step(run.metrics)
    if logged is not None and logged > save_step:
        return logged, run.metrics.name
    starts = [
        start
        for start in (run.read_run() or {}).get("history") or []
        if isinstance(start, dict) and isinstance(start.get("steps"), list) and start["steps"]
    ]
    ended = [start["steps"][-1] for start in starts if isinstance(start["steps"][-1], int)]
    last = max(ended, default=None)
    # A start that ended as planned or by a signal saved its last step, before any save_step: a
    # 4-step vocoder (save_step 2000) whose checkpoints went had read as one never trained.
    saved = any(
        isinstance(start["steps"][-1], int)
        and start["steps"][-1] > 0
        and not str(start.get("ended_by", "error")).startswith(("error", "a second Ctrl-C", "nothing"))
        for start in starts
    )
    return (last, run.run_file.name) if last is not None and (last > save_step or saved) else None


def _last_logged_step(path: Path) -> Optional[int]:
    """The highest step metrics.jsonl records; None without one."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    steps = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            steps.append(record["step"])
    return max(steps, default=None)


def record_end(run: RunDir, ended: dict[str, Any]) -> None:
    """`ended` (when, the steps, how: `xtts train`'s end) into run.json's last start; a start with no
    end recorded was killed. Best effort: a full disk that ended the run leaves the record as it was."""
    record = run.read_run()
    if not record or not record.get("history"):
        return
    record["history"][-1].update(ended=_dt.datetime.now().isoformat(timespec="seconds"), **ended)
    try:
        write_atomically(run.run_file, json.dumps(record, indent=2, default=str) + "\n", backup=False)
    except OSError:
        pass


def _refuse_lost_record(run: RunDir) -> None:
    """A run.json there that cannot be read, beside checkpoints: its record of the model is what a
    resume is checked against, and without it any config had resumed the run."""
    if run.run_file.exists() and run.complete_checkpoints():
        raise XttsError(
            f"{run.run_file} cannot be read (it is not the JSON record xtts writes): the run's record of its "
            "model is lost",
            hint="mend it or put back a copy of it; or pass --force to resume with this config's model (its "
            "checkpoint must hold every weight; the file is kept beside it, and the run's history of starts begins "
            "again), --fresh to start a new run, or --run-dir DIR for a separate run",
        )


def _keep_unread_record(run: RunDir, note: Callable[[str], None]) -> None:
    """--force over a run.json that cannot be read (a hand edit's trailing comma): the file is kept
    beside the new record, which begins its history of starts again; it had been written over."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    kept = run.run_file.with_name(f"{run.run_file.name}.unread-{stamp}")
    os.replace(run.run_file, kept)
    note(
        f"--force: {run.run_file} could not be read: kept as {kept.name}; the run's history of starts begins "
        "again with this one (mend that file and put it back to keep its history)"
    )


def _restore_pointer(run: RunDir, note: Callable[[str], None]) -> None:
    """Checkpoints whose pointer file (`checkpoints/checkpoint`) is gone (a copy that left it out, a
    hand that deleted it), damaged, or names one that is not there: the pointer written again over
    the complete ones it keeps, newest last, so the run resumes from them rather than starting over
    beside them and overwriting them."""
    folder = run.checkpoints
    complete = run.complete_checkpoints()
    if not complete or run.pointed_checkpoint() is not None:
        return
    names = [Path(path).name for path in reversed(complete)]
    # With their times, which TensorFlow's CheckpointManager needs to manage them: a checkpoint listed
    # without one counts as older than its last preserved time, kept forever and read by nobody (the
    # next save's pointer had named only itself, and keep_checkpoints never removed the rest).
    times = [(folder / f"{name}.index").stat().st_mtime for name in names]
    kept = "".join(
        f'all_model_checkpoint_paths: "{name}"\nall_model_checkpoint_timestamps: {time!r}\n'
        for name, time in zip(names, times)
    )
    pointer = folder / "checkpoint"
    what = "no pointer file (checkpoint)"
    if pointer.exists():
        named = re.search(r'^model_checkpoint_path: "([^"]+)"', _text_or_empty(pointer), re.MULTILINE)
        what = (
            f"a pointer file (checkpoint) naming {named.group(1)}, which is not whole"
            if named
            else "a damaged pointer file (checkpoint)"
        )
    pointer_text = f'model_checkpoint_path: "{names[-1]}"\n{kept}last_preserved_timestamp: {min(times) - 1.0!r}\n'
    write_atomically(pointer, pointer_text, backup=False)
    note(
        f"{folder} had checkpoints but {what}: written again, naming {names[-1]}, the newest whole one, to resume from"
    )


def _text_or_empty(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _say_what_changed(
    run: RunDir, config: XttsConfig, previous: Optional[dict[str, Any]], note: Callable[[str], None]
) -> None:
    """A resume's settings that differ from the run's last start (a `-c` of others, or its
    config.yaml edited by hand), said, not refused."""
    recorded = recorded_config(run, previous)
    if recorded is None:  # emptied or damaged: a diff against the defaults would name changes never made
        note(f"{run.config_file} held no settings that load: what changed since the run's last start is not known")
        return
    changed = changed_settings(recorded, config)
    if changed:
        note(f"resuming with settings changed since the run's last start: {changed}")
    steps = (recorded.training.max_steps, config.training.max_steps)
    epochs = (recorded.training.epochs, config.training.epochs)
    # Resumed by design, but the learning-rate schedule spans the run's steps: the rate jumps.
    if steps[0] != steps[1] and None not in steps:
        note(
            f"training.max_steps {steps[0]} -> {steps[1]}: the learning-rate schedule now spans {steps[1]} "
            "steps, so the rate at this step changes with it"
        )
    elif epochs[0] != epochs[1]:
        spans = (
            f"the learning-rate schedule now spans {epochs[1]} epochs"
            if steps == (None, None)
            else "where the epochs end the run before training.max_steps, the learning-rate schedule spans them"
        )
        note(f"training.epochs {epochs[0]} -> {epochs[1]}: {spans}, so the rate at this step changes with it")


def _say_vocoder_unfit(run: RunDir, config: XttsConfig, note: Callable[[str], None]) -> None:
    """A resume whose features (`--force`: data.fmax, the mels) no longer fit the run's own vocoder
    (RUN/vocoder), said as it starts: synthesize, export and serve refuse that vocoder from then on."""
    vocoder = recorded_config(RunDir(run.path / VOCODER_DIR))
    if vocoder is None:
        return
    differ = MelFeatures.of(config.data).transform_mismatch(MelFeatures.of(vocoder.data))
    if differ:
        note(
            f"the run's own vocoder {run.path / VOCODER_DIR} was trained on other features than these: "
            f"{'; '.join(differ)} (this run's first): synthesize, export and serve refuse it until it is trained "
            "again on this run's data section, or given --vocoder griffin-lim"
        )


def _versions() -> dict[str, str]:
    """The xtts and TensorFlow of this process, as run.json and each start of its history keep them."""
    versions = {"xtts_version": __version__}
    try:
        import tensorflow as tf

        versions["tensorflow_version"] = tf.__version__
    except ImportError:  # pragma: no cover - tensorflow is a dependency
        pass
    return versions


def _say_other_versions(previous: Optional[dict[str, Any]], note: Callable[[str], None]) -> None:
    """A resume under another TensorFlow or xtts than the run last trained with, said: the record had
    kept only the latest, and a run half trained on each read as trained on one."""
    now = _versions()
    changed = [
        f"{label} {previous[key]} -> {now[key]}"
        for key, label in (("tensorflow_version", "TensorFlow"), ("xtts_version", "xtts"))
        if previous and previous.get(key) and now.get(key) and previous[key] != now[key]
    ]
    if changed:
        note(
            f"this run last trained under other versions: {', '.join(changed)} (run.json's history keeps each start's)"
        )


def _run_record(
    config: XttsConfig,
    identity: dict[str, Any],
    previous: Optional[dict[str, Any]],
    resume: bool,
    parent: Optional[dict[str, Any]],
) -> dict[str, Any]:
    """run.json of this start: versions, hashes, the history of starts and the run it came from."""
    history = (previous or {}).get("history", [])
    # The CPU threads each start planned (the cores a slower or shared machine gave it).
    started = {"started": _dt.datetime.now().isoformat(timespec="seconds"), "resumed": resume}
    history.append({**started, **_versions(), "cpu_threads": plan_threads().record()})
    record = {
        **_versions(),
        "config_hash": digest(config.model_dump()),
        "model_hash": digest(identity),
        "model_identity": identity,
        "history": history,
    }
    # The run this one started from: kept from the record when it resumes.
    started_from = (previous or {}).get("parent") if resume else parent
    if started_from:
        record["parent"] = started_from
    return record


def release_run_dir(run: RunDir) -> None:
    """Give back the run's lock (`prepare_run_dir` took it)."""
    run_lock.release(run.path)


# What xtts's own interrupted writes leave (the pointer moves only after a checkpoint is complete):
# TensorFlow's files in progress: `ckpt-N_temp/` shards, `ckpt-N.index.tempstate<n>` (and `.tmp`) before
# their rename, `checkpoint.tmp<hex>` for the pointer.
_TEMPORARY = re.compile(
    r"^(ckpt-\d+_temp.*|ckpt-\d+\.(index|data-\d+-of-\d+)\.(tmp|tempstate).*|checkpoint\.tmp.*|\..+\.tmp)$"
)


def remove_stale_temporaries(run: RunDir) -> list[Path]:
    """Checkpoint writes that never finished (a crash mid-save) leave temp files; drop them, and
    nothing else: only names xtts and TensorFlow give their temporaries, and only while this
    process holds the run's lock (no other run is mid-save here)."""
    removed: list[Path] = []
    if not run.checkpoints.is_dir() or not run_lock.holds(run.path):
        return removed
    for item in run.checkpoints.iterdir():
        if _TEMPORARY.match(item.name):
            if item.is_dir():
                shutil.rmtree(item, ignore_errors=True)
            else:
                item.unlink(missing_ok=True)
            removed.append(item)
    return removed


def _without(config, keys: tuple[str, ...]) -> dict:
    """Every key of `config` but `keys` (`section.name`), its dataset and base-run paths made
    absolute: the run resumes from its config.yaml from any folder, not only the one it was started in."""
    tree = config.model_dump(mode="json")
    for key in keys:
        section, name = key.split(".")
        tree.get(section, {}).pop(name, None)
    return with_absolute_paths(tree)


def step_kept(run_dir: Path, step: int) -> None:
    """Refuse a --step the run does not keep, from its files, before a command says it starts work."""
    config, run = read_run(run_dir)
    checkpoints_to_restore(run, run_dir, step, config.training.save_step)


def checkpoints_to_restore(
    run: RunDir, run_dir: Path, step: Optional[int] = None, save_step: Optional[int] = None
) -> tuple[list[str], Optional[str]]:
    """(the whole checkpoints to restore from, newest first: `step`'s alone when given; the name of
    one the pointer names whose files are not all there, or None), or the error of a run with none to
    restore, said from its files alone: before TensorFlow and a model load (a --vocoder's, checked
    first)."""
    complete = run.complete_checkpoints()
    if step is not None and complete:
        wanted = str(run.checkpoints / f"ckpt-{step}")
        if wanted not in complete:
            steps = sorted(int(Path(path).name[5:]) for path in complete)
            raise XttsError(
                f"{run.checkpoints} keeps no checkpoint of step {step}",
                hint=f"it keeps steps {', '.join(map(str, steps))} (training.save_step, training.keep_checkpoints)",
            )
        complete = [wanted]
    named = run.named_checkpoint() if step is None else None
    # The pointer names one whose files are not all there (deleted by hand, a copy cut short).
    gone = Path(named).name if named is not None and named not in complete else None
    if not complete and gone:
        raise XttsError(
            f"{run.checkpoints} holds no whole checkpoint: its pointer names {gone}, whose files are not all there",
            hint="copy the run's checkpoints folder again, whole; else xtts train --fresh starts it over",
        )
    logged = logged_past_first_save(run, save_step) if not complete and save_step else None
    if logged is not None:  # a trained run whose checkpoints are gone: not one to train first
        raise XttsError(
            f"{run.checkpoints} holds no checkpoint, though the run logged steps up to {logged[0]} ({logged[1]}): "
            "they were removed or moved",
            hint="put them back (or set training.checkpoint_dir in the run's config.yaml to where they are)",
        )
    if not complete:
        raise XttsError(f"{run.checkpoints} holds no checkpoint yet", hint=no_checkpoint_hint(run_dir))
    return complete, gone


def has_trained(run_dir: Path) -> bool:
    """Whether the run at `run_dir` trained: it has a checkpoint (where its training.checkpoint_dir
    put it), or logged steps past its first save or ended a start (its checkpoints since lost), or has
    a config.yaml that cannot be read. A run still before its first save, or emptied, did not."""
    from xtts_cli.run.files import read_run

    try:
        config, run = read_run(run_dir)
    except XttsError:
        return RunDir(run_dir).config_file.is_file()  # there, and damaged: its reader says how
    return run.has_checkpoint() or logged_past_first_save(run, config.training.save_step) is not None
