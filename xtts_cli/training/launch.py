"""What `xtts train` does before and around the run: the settings its launch flags imply, the
cluster and the run directory checked before TensorFlow loads, then the run itself."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Optional

from xtts_cli.config.loading import LoadedConfig
from xtts_cli.errors import XttsError
from xtts_cli.training.events import Progress, TrainResult

__all__ = ["launch_settings", "train_run"]


def launch_settings(
    overrides: dict[str, Any],
    optimization_level: Any,
    worker_hosts: Optional[str],
    task_index: Optional[int],
    sets: Sequence[str] = (),
) -> dict[str, Any]:
    """`overrides` with what the launch flags imply: an optimization level's bundle under the user's
    own settings (its flags and `sets`, the --set values), and `devices.strategy: multi_worker` with
    TF_CONFIG written from --worker-hosts."""
    overrides = dict(overrides)
    if worker_hosts is not None or task_index is not None:
        from xtts_cli.devices.placement import cluster_from_flags

        # Checked before anything loads; TensorFlow's cluster resolver then reads TF_CONFIG. One
        # already set must agree with the flags, and is kept as it is (the other workers may use it).
        cluster = cluster_from_flags(worker_hosts, task_index, os.environ.get("TF_CONFIG"))
        if not os.environ.get("TF_CONFIG", "").strip():
            os.environ["TF_CONFIG"] = cluster.to_tf_config()
        overrides["devices.strategy"] = "multi_worker"
    if optimization_level is not None:
        from xtts_cli.config.optimization_levels import apply_optimization_level
        from xtts_cli.devices.gpu_info import probe_machine

        name = getattr(optimization_level, "value", optimization_level)
        mixed_precision_gpu = any(gpu.supports_mixed_float16 for gpu in probe_machine().gpus)
        from xtts_cli.config.loading import parse_sets

        given = parse_sets(sets)  # a --set is the user's own too: the level gives way to it
        level = apply_optimization_level(name, overrides, mixed_precision_gpu)
        overrides = {key: value for key, value in level.items() if key not in given or key in overrides}
    return overrides


def _recorded_start(loaded: LoadedConfig, chosen: Path, fresh: bool = False):
    """`loaded`'s config, resumed from the run's own config.yaml (no --init-from given, no --fresh)
    whose training.init_from is not the base run.json records: where nothing is there (written relative
    to another folder, the base moved), or the recorded base is gone, the recorded base, which a resume
    does not read; where another run is beside it, refused naming both. Either had been refused as
    "another start", its hint naming the same command again; --fresh starts over from what the file
    names."""
    from xtts_cli.config.loading import config_variant
    from xtts_cli.run.directory import own_config
    from xtts_cli.run.files import RunDir

    config = loaded.config
    spec = config.training.init_from
    own = own_config(chosen) if "training.init_from" not in loaded.overridden and not fresh else None
    if own is None or loaded.path is None or own.resolve() != loaded.path.resolve() or not spec:
        return config
    run = RunDir.of(chosen, config)
    parent = (run.read_run() or {}).get("parent") if run.has_checkpoint() else None
    if not isinstance(parent, dict) or not isinstance(parent.get("run"), str):
        return config
    from xtts_cli.run.files import same_start

    if same_start(spec, parent):
        return config
    # Edited to another base while the recorded one is there too: which the user means, the command cannot
    # tell. The recorded one gone (moved, and the config edited to where it went): a resume reads none.
    if Path(spec).expanduser().exists() and Path(parent["run"]).expanduser().exists():
        raise XttsError(
            f"{own} names training.init_from {spec}, but the run started from {parent['run']} (its run.json)",
            hint=f"to resume it, put {parent['run']} back there; to start over from {spec}, pass --fresh (the "
            "old run is kept as <run>.old-<time>)",
        )
    return config_variant(config, {"training.init_from": parent["run"]})


def _open_base(config, run, fresh: bool) -> None:
    """The base a run starts from, opened to refuse one that is not there. Of a run begun before and
    stopped before its first checkpoint, that base is the one its config.yaml names: said so, where
    "--init-from BASE: nothing is there" had named a flag not given."""
    from xtts_cli.config.loading import parse_yaml, read_config_text
    from xtts_cli.training.parent import open_parent

    try:
        open_parent(config.training.init_from, config)
    except XttsError as error:
        try:
            recorded = (parse_yaml(read_config_text(run.config_file), "") or {}).get("training", {}).get("init_from")
        except (XttsError, OSError, AttributeError):
            recorded = None
        if fresh or recorded != config.training.init_from:
            raise
        from xtts_cli.errors import quoted

        said = error.lines[0].removeprefix("--init-from ")
        error.lines[0] = (
            f"{run.path} holds no checkpoint yet, so starts again from the base its config.yaml names: {said}"
        )
        error.hint = (
            "put that base back there, or start the run again from another: "
            f"xtts train -r {quoted(run.path)} --fresh --init-from BASE"
        )
        raise


def train_run(
    loaded: LoadedConfig,
    run_dir: Optional[Path],
    *,
    fresh: bool,
    force: bool,
    progress: Progress,
    started: Optional[float] = None,
    checked: Optional[Callable[[], None]] = None,
) -> TrainResult:
    """Train `loaded`'s config into `run_dir` (default: training.run_dir, else runs/<config name>).
    `started`: the `time.monotonic()` the command began at, which training.max_minutes counts from
    (default: now). `checked`: called once the run may start (its directory writable, not another
    process's), before TensorFlow loads."""
    from xtts_cli import locks as run_lock
    from xtts_cli.config.editing import can_write
    from xtts_cli.run.directory import chosen_run_dir, refuse_foreign, refuse_starting_over
    from xtts_cli.run.files import RunDir
    from xtts_cli.training.parent import refuse_own_directory

    if fresh and force:  # --force resumes the run there across a config change; --fresh resumes nothing
        from xtts_cli.errors import UsageError

        raise UsageError(
            "--fresh and --force: --fresh starts a new run, --force resumes the one there across a config change",
            hint="give one of them",
        )
    config = loaded.config
    from xtts_cli.devices.placement import check_listening_port, cluster_from_environment, cluster_left_out

    if config.devices.strategy == "multi_worker":
        # A missing or malformed TF_CONFIG, or a port taken, fails before the scan and TensorFlow.
        check_listening_port(cluster_from_environment(os.environ))
    left_out = cluster_left_out(config.devices, os.environ)
    if left_out is not None:
        raise left_out
    # "~/runs/a" in the config (or quoted on the command line) is the home's, as every other path is.
    chosen = chosen_run_dir(loaded, run_dir)
    config = _recorded_start(loaded, chosen, fresh)
    refuse_own_directory(config.training.init_from, chosen)
    if not fresh:  # --fresh moves the old run aside
        refuse_starting_over(chosen, config, loaded.path)
    # Where the run writes: checked before the scan and TensorFlow (a file there, a read-only place).
    can_write(chosen, "--run-dir", folder=True)
    run = RunDir.of(chosen, config)
    if config.training.checkpoint_dir:
        can_write(run.checkpoints, "training.checkpoint_dir", folder=True)
    for folder in (run.checkpoints, run.tensorboard, run.samples):  # a file where the run keeps a folder
        if folder.exists() and not folder.is_dir():
            raise XttsError(
                f"{folder} is a file, where the run keeps its {folder.name} folder",
                hint="move the file out of the run directory, then run the same command",
            )
    if config.devices.strategy != "multi_worker" and chosen.is_dir():
        refuse_foreign(RunDir(chosen))  # the user's own folder: refused before the lock file is made in it
        # Before TensorFlow loads (seconds): a run another process is writing is refused at once.
        # The trainer takes the lock again for the run (and workers of a cluster share it).
        run_lock.acquire(chosen)
        run_lock.release(chosen)
    if config.training.init_from and (fresh or not run.complete_checkpoints()):
        _open_base(config, run, fresh)  # a base that is not there: said alone, not under the warnings
    if checked is not None:  # the config's warnings: a run refused above is that one line alone
        checked()
    # TensorFlow loads with these (seconds): only once the checks above have passed.
    from xtts_cli.training.controller import Controller
    from xtts_cli.training.trainer import Trainer

    trainer = Trainer(config, run_dir=chosen, fresh=fresh, force=force, progress=progress)
    return Controller(trainer, started=started).run()
