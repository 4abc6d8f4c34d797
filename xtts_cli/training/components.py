"""What a set-up run is made of: one frozen `RunComponents`, built once by `build_components`.

The builders below run in order, from the device plan (`devices/placement.py`): the run's settings (`settings.py`), the
dataset scan, the run directory and vocabulary, what the model kind writes besides checkpoints,
the input pipelines (`inputs.py`), the strategy, the kind's models and optimizers (`kinds/`), the
checkpoint (`checkpointing.py`, restored when resuming) and the compiled steps (`steps.py`). What
a builder changes in the process (the run directory's lock, the Keras dtype policy) it registers
on `undo`, so a set-up that fails half-way gives back what it took.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import tensorflow as tf

from xtts_cli.data.plan import speakers_it_lacks
from xtts_cli.errors import XttsError
from xtts_cli.training.events import Noted, PhaseStarted, Progress, ScanFinished

if TYPE_CHECKING:
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data.run_data import RunData
    from xtts_cli.data.scan import ScanReport
    from xtts_cli.data.text import Tokenizer
    from xtts_cli.devices.placement import DevicePlan
    from xtts_cli.kinds import KindModels, ModelKind
    from xtts_cli.run.files import RunDir
    from xtts_cli.training.checkpointing import RunCheckpoints
    from xtts_cli.training.inputs import TrainingInput
    from xtts_cli.training.parent import ParentRun
    from xtts_cli.training.settings import RunSettings
    from xtts_cli.training.steps import Steps
    from xtts_cli.training.workers import StepGather

__all__ = ["Counters", "RunComponents", "build_components"]


@dataclass(frozen=True)
class Counters:
    """The run's own variables besides the models'."""

    step: Any  # int64: steps taken (checkpointed)
    epoch: Any  # int64: epochs finished (checkpointed)
    budget_used: Any  # float32 share of training.max_minutes spent, set by the loop; None without it
    minutes: Any  # float32: minutes the run has trained toward training.max_minutes, all commands (checkpointed)
    stop_flag: Any  # multi-worker: 1.0 once this worker got SIGINT/SIGTERM, reduced in the step; else None


@dataclass(frozen=True)
class RunComponents:
    """Everything the loop, its hooks and the profilers read of a set-up run; fixed once built."""

    plan: DevicePlan
    settings: RunSettings
    cluster: Any  # the multi-worker cluster, else None
    scan: ScanReport
    run_dir: RunDir
    resumed: bool
    parent: Optional[ParentRun]  # the run this one started from (`training.init_from`), on its first start
    tokenizer: Tokenizer
    input: TrainingInput
    total_steps: int
    strategy: Any
    models: KindModels
    counters: Counters
    checkpoints: RunCheckpoints
    steps: Steps
    gather: Optional[StepGather]  # multi-worker: every worker's step, checked to agree; else None

    @property
    def is_chief(self) -> bool:
        return self.plan.is_chief


def build_components(
    config: XttsConfig,
    kind: ModelKind,
    plan: DevicePlan,
    *,
    run_dir: Path,
    fresh: bool,
    force: bool,
    progress: Progress,
    undo: contextlib.ExitStack,
) -> RunComponents:
    """Set up a run from its config, in order: settings, the process, the parent run, the scan,
    the run directory and vocabulary, the input, the strategy, the models, the checkpoint (restored
    when resuming), the parent's weights and the compiled steps."""
    from xtts_cli.training.inputs import build_input
    from xtts_cli.training.settings import resolve_settings

    settings = resolve_settings(config, plan)
    cluster, is_chief = plan.worker_cluster, plan.is_chief
    _set_up_process(config, settings, undo)

    parent = _parent(config, Path(run_dir), fresh=fresh)  # refused before the scan when it cannot be used
    scan = _scan(config, progress)
    opened, resumed, saved, kept = _open_run_dir(
        config, Path(run_dir), fresh=fresh, force=force, is_chief=is_chief, undo=undo, parent=parent, progress=progress
    )
    _say_its_base(opened, resumed and config.training.init_from is not None, progress)
    run_data = _run_data(
        config, settings, scan, saved=saved, parent=parent, vocab=opened.vocab, is_chief=is_chief, progress=progress
    )
    lacking = speakers_it_lacks(saved, scan) if saved is not None and saved.speakers else ""
    if lacking:
        progress(Noted(lacking))
    tokenizer, train_items, eval_items = run_data.tokenizer, run_data.train_items, run_data.eval_items
    training_input = build_input(run_data, settings, cluster, lambda message: progress(Noted(message)))
    strategy = _strategy(plan, cluster, config, train_items, opened)
    total_steps = settings.total_steps(training_input.steps_per_epoch)
    models, counters = _models(
        config,
        kind,
        plan=plan,
        settings=settings,
        strategy=strategy,
        cluster=cluster,
        scan=scan,
        run_dir=opened,
        tokenizer=tokenizer,
        total_steps=total_steps,
        first_item=_first_readable(eval_items or train_items, config.data, progress),
        resumed=resumed,
        is_chief=is_chief,
        progress=progress,
    )
    checkpoints = _checkpoints(config, models, counters, opened, plan, progress, restore=resumed or is_chief)
    if parent is not None:
        _take_parent_weights(kind, models, parent, tokenizer, config, progress)
        if parent.continued(scan.speakers):
            progress(Noted(parent.continued(scan.speakers)))
    # Before the record is this start's: a start the workers refuse leaves the run as it was.
    gather = _step_gather(cluster, strategy, counters, opened, config, train_items)
    if not (resumed and int(counters.step.numpy()) >= total_steps):  # one that trains nothing keeps the
        kept.done()  # run's record (a one-off --epochs 1 had become the run's own); else it is this start's
    return RunComponents(
        plan=plan,
        settings=settings,
        cluster=cluster,
        scan=scan,
        run_dir=opened,
        resumed=resumed,
        parent=parent,
        tokenizer=tokenizer,
        input=training_input,
        total_steps=total_steps,
        strategy=strategy,
        models=models,
        counters=counters,
        checkpoints=checkpoints,
        steps=_steps(config, models, plan, settings, strategy, training_input, counters),
        gather=gather,
    )


def _scan(config: XttsConfig, progress: Progress) -> ScanReport:
    """The dataset scan, reported; refused when it leaves no training item."""
    from xtts_cli.data.scan import scan_dataset
    from xtts_cli.kinds import kind_for

    progress(PhaseStarted("scanning the dataset"))
    scan = scan_dataset(config.data)
    # The transcripts' warnings are of a kind that reads them: a vocoder learns from the audio alone.
    progress(ScanFinished(scan, config.data if kind_for(config).speaks else None))
    progress(PhaseStarted("building the input pipeline and the model"))
    if not scan.train:
        raise XttsError("no usable training items after the dataset scan", hint="see the bad files listed above")
    return scan


def _run_data(
    config: XttsConfig,
    settings: RunSettings,
    scan: ScanReport,
    *,
    saved: Optional[Tokenizer],
    parent: Optional[ParentRun],
    vocab: Path,
    is_chief: bool,
    progress: Progress,
) -> RunData:
    """The run's data on the scan, with the vocabulary the run saved (when resuming), grown from
    the parent's (when starting from one); a new vocabulary is saved to `vocab` by the chief."""
    from xtts_cli.data.run_data import prepare

    run_data = prepare(config, settings.pipeline_output, scan=scan, tokenizer=saved)
    if config.data.eval_dataset_path:
        held = len(run_data.eval_items)
        progress(
            Noted(
                f"validation: the {held:,} clip{'' if held == 1 else 's'} of {config.data.eval_dataset_path} "
                "(data.eval_dataset_path); every clip of the training data trains"
            )
        )
    if parent is not None and parent.tokenizer is not None:
        run_data = replace(run_data, tokenizer=parent.grow(run_data.tokenizer))
    if saved is None and is_chief:
        run_data.tokenizer.save(vocab)
    return run_data


def _say_its_base(run_dir: RunDir, adapted_and_resumed: bool, progress: Progress) -> None:
    """An adapted run that resumes (--init-from given again, or its record's) says so: the base is not
    read again (it had been passed over in silence)."""
    started = (run_dir.read_run() or {}).get("parent") if adapted_and_resumed else None
    if started:
        progress(
            Noted(
                f"this run started from {started['run']} step {started['step']}: it resumes from its own "
                "checkpoints, and the base is not read again"
            )
        )


def _take_parent_weights(
    kind: ModelKind,
    models: KindModels,
    parent: ParentRun,
    tokenizer: Tokenizer,
    config: XttsConfig,
    progress: Progress,
) -> None:
    """Copy the parent run's weights into `models` and report what was kept, grown and new."""
    try:
        moved = kind.transfer(models, parent.checkpoint)
    except (tf.errors.OpError, IndexError, OSError) as error:  # a file cut short: "Read less bytes than requested"
        raise XttsError(
            f"--init-from {parent.spec}: its checkpoint {parent.checkpoint} cannot be read "
            f"({str(error).splitlines()[0][:120]})",
            hint=parent.other_checkpoints(),
        ) from None
    news = parent.news(tokenizer)
    progress(
        Noted(
            f"from {parent.spec} step {parent.step}: kept {len(moved.kept)} of {moved.total} tensors"
            + (f" and the first rows of {len(moved.grown)} more" if moved.grown else "")
            + (f"; new: {', '.join(news)}" if news else "; nothing new")
        )
    )
    for said in parent.said_of_the_base(config):
        progress(Noted(said))
    frozen = parent.frozen_news(news, config.training.freeze or ())
    # What validate warns of, said as training starts: a run begun without it had been told nothing.
    for warning in ([frozen] if frozen else []) + parent.language_twins(tokenizer):
        progress(Noted(warning, label="warning"))


def _step_gather(
    cluster: Any, strategy: Any, counters: Counters, run_dir: RunDir, config: XttsConfig, train_items: list
) -> Optional[StepGather]:
    """Multi-worker: the gather of every worker's step, config and clip list, checked once here after
    restoring; else None."""
    if cluster is None:
        return None
    from xtts_cli.training.workers import StepGather, clip_list, config_digest, config_slots

    clips = clip_list(train_items)
    gather = StepGather(strategy, counters.step, config_digest(config, clips), config_slots(config, clips))
    gather.check("after restoring", run_dir, cluster)
    return gather


def _set_up_process(config: XttsConfig, settings: RunSettings, undo: contextlib.ExitStack) -> None:
    """The seeds, and the Keras dtype policy of mixed precision (set back by `undo`)."""
    import keras

    tf.random.set_seed(config.training.seed)
    keras.utils.set_random_seed(config.training.seed)
    if settings.mixed_precision:
        undo.callback(keras.mixed_precision.set_dtype_policy, keras.mixed_precision.dtype_policy().name)
        keras.mixed_precision.set_dtype_policy(settings.dtype_policy)


def _parent(config: XttsConfig, path: Path, *, fresh: bool) -> Optional[ParentRun]:
    """The run `training.init_from` names, checked to fit `config`, when this run starts (not when it
    resumes: then its checkpoint holds the weights, and the parent need not be there any more)."""
    from xtts_cli.run.files import RunDir
    from xtts_cli.training.parent import open_parent, refuse_own_directory

    spec = config.training.init_from
    if spec is None or (not fresh and RunDir.of(path, config).has_checkpoint()):
        return None
    refuse_own_directory(spec, path)
    parent = open_parent(spec, config)
    parent.check(config)
    return parent


def _open_run_dir(
    config: XttsConfig,
    path: Path,
    *,
    fresh: bool,
    force: bool,
    is_chief: bool,
    undo: contextlib.ExitStack,
    parent: Optional[ParentRun],
    progress: Progress,
) -> tuple[RunDir, bool, Optional[Tokenizer], _KeptRecord]:
    """The run directory (non-chief workers read the chief's and write nothing), whether it resumes,
    the vocabulary it saved when it resumes (else None: built from the scan, the same on every
    worker of a cluster), and its record as it was (`_KeptRecord`)."""
    from xtts_cli.data.text import Tokenizer
    from xtts_cli.kinds import kind_for
    from xtts_cli.run.directory import prepare_run_dir, release_run_dir, remove_stale_temporaries

    _refuse_unfit_for_its_run(path, config)
    refuse_unfit_for_its_vocoder(Path(path), config)
    kept = _KeptRecord(path if is_chief and not fresh else None)
    run_dir, resumed = prepare_run_dir(
        path,
        config,
        fresh=fresh,
        force=force,
        read_only=not is_chief,
        parent=parent.record() if parent else None,
        unread=kind_for(config).ignored_keys,
        note=lambda line: progress(Noted(line)),
    )
    if is_chief:
        undo.callback(kept.remove_if_new)  # runs last, once the lock is given back
        undo.callback(release_run_dir, run_dir)  # its lock
        undo.callback(kept.restore)  # runs first: the lock is still held
        remove_stale_temporaries(run_dir)
    if resumed and run_dir.vocab.is_file():
        return run_dir, resumed, Tokenizer.load(run_dir.vocab), kept
    return run_dir, resumed, None, kept


def _first_readable(items: list, data: Any, progress: Progress):
    """The first of `items` (validation clips, else training ones) whose audio decodes and is not
    silent: the voice and text of the run's test sentences. A damaged one is skipped with a note
    (the pipeline skips it too), not raised as a reference the user never passed."""
    from xtts_cli.speech.synthesis import SILENT_PEAK
    from xtts_cli.speech.vocoding import ClipReadError, load_audio

    skipped = []
    for item in items[:20]:  # a dataset whose first 20 clips are all unreadable fails in the pipeline anyway
        try:
            audio = load_audio(Path(item.audio_path), data, what="clip")
        except ClipReadError as exc:
            skipped.append(f"{item.audio_path} {exc.why}")
            continue
        if float(abs(audio).max(initial=0.0)) < SILENT_PEAK:
            skipped.append(f"{item.audio_path} is silent")
            continue
        if skipped:
            progress(Noted(f"the test sentences speak with {item.audio_path}'s voice: {'; '.join(skipped[:2])}"))
        return item
    return items[0]


def _refuse_unfit_for_its_run(path: Path, config: XttsConfig) -> None:
    """Training into RUN/vocoder, where synthesize, export and serve take the run's own vocoder from:
    anything but a vocoder of RUN's features is refused as it starts (it had trained, and been found
    unfit only when RUN spoke, or stood for a vocoder that was none)."""
    from xtts_cli.data.features import MelFeatures
    from xtts_cli.errors import XttsError
    from xtts_cli.kinds import kind_for
    from xtts_cli.run.directory import is_run_dir, recorded_config
    from xtts_cli.run.files import VOCODER_DIR, RunDir

    acoustic = RunDir(Path(path).parent)
    if Path(path).name != VOCODER_DIR or not is_run_dir(acoustic.path):
        return
    recorded = recorded_config(acoustic)
    if recorded is None or not kind_for(recorded).speaks:
        return
    if kind_for(config).speaks:
        raise XttsError(
            f"{path} is where the run {acoustic.path} keeps its own vocoder, and this config trains a model that "
            "speaks: it would stand for a vocoder there",
            hint="pass --run-dir another folder for it",
        )
    differ = MelFeatures.of(config.data).transform_mismatch(MelFeatures.of(recorded.data))
    if differ:
        raise XttsError(
            f"{path} is where the run {acoustic.path} keeps its own vocoder, and this vocoder would hear other "
            f"features than that run makes: {'; '.join(differ)} (this config's first)",
            hint=f"set the data section's features as {acoustic.config_file} has them, or pass --run-dir another "
            "folder (and --vocoder it where its features fit)",
        )


def refuse_unfit_for_its_vocoder(path: Path, config: XttsConfig) -> None:
    """A new run in a folder that holds only a vocoder trained first (RUN/vocoder), refused before
    anything is written unless it speaks and makes the features that vocoder hears: synthesize would
    refuse the pair when it spoke. An acoustic run kept there is no vocoder."""
    from xtts_cli.data.features import MelFeatures
    from xtts_cli.errors import XttsError
    from xtts_cli.kinds import kind_for
    from xtts_cli.run.directory import only_a_vocoder, recorded_config
    from xtts_cli.run.files import VOCODER_DIR, RunDir

    own = path / VOCODER_DIR
    vocoder = recorded_config(RunDir(own)) if only_a_vocoder(path) else None
    if vocoder is None:
        return
    if kind_for(vocoder).speaks:  # it had trained, and synthesize then refused RUN/vocoder as no vocoder
        raise XttsError(
            f"{own} holds a run that speaks (model.kind {vocoder.model.kind}), where a run keeps its own vocoder",
            hint=f"move it out of {path}, or pass --run-dir another folder",
        )
    other = f"or pass --run-dir another folder (and --vocoder {own} where its features fit)"
    if not kind_for(config).speaks:
        raise XttsError(
            f"{path} holds a vocoder in {own}, kept for the acoustic run trained here, and this config trains a vocoder",
            hint=f"train an acoustic config here, {other}",
        )
    differ = MelFeatures.of(config.data).transform_mismatch(MelFeatures.of(vocoder.data))
    if differ:
        raise XttsError(
            f"{path} holds a vocoder in {own} trained on other features than this run would make: "
            f"{'; '.join(differ)} (this config's first)",
            hint=f"set the data section's features as {own / 'config.yaml'} has them, {other}",
        )


class _KeptRecord:
    """The run's record (config.yaml, run.json, its vocabulary, speakers, speaking rate and reference
    voice) as it was before this start wrote it, put back when its set-up fails (a `--force` resume
    whose checkpoint does not fit the changed model): the run then resumes as it did before, and a
    file it did not have is removed again. A run directory this start made is removed instead
    (`remove_if_new`): a half-made vocoder run in RUN/vocoder would stand for a vocoder. `done()`
    once the set-up has succeeded."""

    def __init__(self, path: Optional[Path]) -> None:
        from xtts_cli.run.files import REFERENCE_FILE, SPEAKERS_FILE, SPEAKING_RATE_FILE, RunDir

        self.run = RunDir(Path(path)) if path is not None else None  # None: a worker's, or a run moved aside
        run = self.run
        record = (
            [
                run.config_file,
                run.run_file,
                run.vocab,
                *(run.path / f for f in (SPEAKERS_FILE, SPEAKING_RATE_FILE, REFERENCE_FILE)),
            ]
            if run
            else []
        )
        self.files: dict[Path, Optional[bytes]] = {f: f.read_bytes() if f.is_file() else None for f in record}
        self.new = run is not None and not run.path.exists()

    def done(self) -> None:
        self.files = {}
        self.new = False

    def remove_if_new(self) -> None:
        if self.new and self.run is not None and not self.run.has_checkpoint():
            import shutil

            shutil.rmtree(self.run.path, ignore_errors=True)

    def restore(self) -> None:
        from xtts_cli.config.editing import write_atomically

        for path, data in self.files.items():
            if data is None:
                path.unlink(missing_ok=True)
            else:
                write_atomically(path, data, backup=False)


def _strategy(plan: DevicePlan, cluster: Any, config: XttsConfig, train_items: list, run_dir: RunDir) -> Any:
    """The run's strategy; multi-worker, once every worker agrees on the config and clips (`agree_before_building`)."""
    if cluster is not None:
        from xtts_cli.training.workers import agree_before_building, clip_list

        agree_before_building(plan.strategy, cluster, config, clip_list(train_items), run_dir)
        return plan.strategy
    if plan.kind == "mirrored":
        return tf.distribute.MirroredStrategy(list(plan.replica_devices))
    return tf.distribute.OneDeviceStrategy(plan.model_device)


def _models(config: XttsConfig, kind: ModelKind, **run: Any) -> tuple[KindModels, Counters]:
    """The kind's models and optimizers and the run's counters, in the strategy's scope."""

    from xtts_cli.kinds import KindContext

    plan, settings, strategy = run["plan"], run["settings"], run["strategy"]
    with strategy.scope():
        # Not checkpointed: set from `minutes` (which is) before each step.
        budget_used = None
        if config.training.max_minutes is not None:
            budget_used = tf.Variable(0.0, dtype=tf.float32, trainable=False, name="budget_used")
        context = KindContext(
            config=config,
            tokenizer=run["tokenizer"],
            scan=run["scan"],
            run_dir=run["run_dir"],
            is_chief=run["is_chief"],
            first_item=run["first_item"],
            resumed=run["resumed"],
            total_steps=run["total_steps"],
            mixed_precision=settings.mixed_precision,
            xla_step=settings.graph_mode and settings.xla and not plan.distributed,
            replicas=int(strategy.num_replicas_in_sync),
            budget_used=budget_used,
            note=lambda message: run["progress"](Noted(message)),
        )
        if run["is_chief"]:
            kind.prepare_run(context)
        models = kind.build(context)
        step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
        epoch = tf.Variable(0, dtype=tf.int64, trainable=False, name="epoch")
        # The time budget is the run's, as max_steps is: a resumed run spends what is left of it.
        minutes = tf.Variable(0.0, dtype=tf.float32, trainable=False, name="budget_minutes")
    # The stop flag is local to this worker: made outside the strategy's scope.
    stop_flag = tf.Variable(0.0, trainable=False, name="stop_requested") if run["cluster"] is not None else None
    return models, Counters(step=step, epoch=epoch, budget_used=budget_used, minutes=minutes, stop_flag=stop_flag)


def _checkpoints(
    config: XttsConfig,
    models: KindModels,
    counters: Counters,
    run_dir: RunDir,
    plan: DevicePlan,
    progress: Progress,
    *,
    restore: bool,
) -> RunCheckpoints:
    """The run's checkpoints, the latest restored when resuming (a non-chief worker resumes from the
    chief's only when its run directory says so)."""

    from xtts_cli.training.checkpointing import RunCheckpoints

    checkpoints = RunCheckpoints(
        {**models.trackables(), "step": counters.step, "epoch": counters.epoch, "minutes": counters.minutes},
        run_dir,
        keep=config.training.keep_checkpoints,
        is_chief=plan.is_chief,
        worker_index=plan.worker_cluster.worker_index if plan.worker_cluster is not None else 0,
        progress=progress,
    )
    latest = checkpoints.latest() if restore else None
    if latest:
        checkpoints.restore(latest)
    return checkpoints


def _steps(
    config: XttsConfig,
    models: KindModels,
    plan: DevicePlan,
    settings: RunSettings,
    strategy: Any,
    training_input: TrainingInput,
    counters: Counters,
) -> Steps:
    from xtts_cli.training.steps import Steps

    return Steps(
        models,
        strategy=strategy,
        plan=plan,
        settings=settings,
        data=config.data,
        train_ds=training_input.train_ds,
        eval_ds=training_input.eval_ds,
        stop_flag=counters.stop_flag,
    )
