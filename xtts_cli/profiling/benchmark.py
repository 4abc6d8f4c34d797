"""Find the fastest training settings for this machine: `xtts benchmark`'s engine.

Every trial is the real training step on the real pipeline (`profile_step`), run in a process of
its own (`benchmark_trial.run_trial`), so an out-of-memory error or a crash in one trial cannot
poison the next.

The search is coordinate descent over the settings that decide speed, in this order:

-. graph mode, only for a config that runs the step eagerly (`training.enable_graph_mode: false`
   or `enable_eager_debug`, as configs written for older trainers often do): every later trial
   would time an eager step, which no other setting makes up for;
0. the device layout, with two or more GPUs (or the CPU twin's logical devices): one card, the
   data-GPU / model-GPU split, and one replica per card (`devices.strategy: mirrored`), the three
   timed side by side (the split gives the data card only the mel computation, so on equal cards
   it rarely wins; a small card beside a big one computing features on the fly is where it pays);
1. `data.batch_size`, ascending; the first size that runs out of memory ends the climb (larger
   sizes are not tried), and the largest size that ran is reported;
2. `data.num_workers`, 3. `data.prefetch_buffer_size`, 4. `data.preprocessing_mode`,
5. `training.enable_xla_compilation`, 6. `training.mixed_precision` (only where a GPU has fast
   16-bit math).

Each stage starts from the best settings so far and changes one key. A trial's score is its
samples/s (per sample, never per batch) divided by (1 + the coefficient of variation of its step
time): a setting whose steps swing is worth less than its mean rate, because the swings are what
leave a GPU idle. A candidate replaces the incumbent only when its score is at least `MIN_GAIN`
better, so run-to-run noise does not rewrite the user's config.

A full grid would be the product of every candidate list (well over a hundred trials, each one
paying TensorFlow's start-up and the step's trace); coordinate descent needs the sum. Settings
that interact (a larger batch wanting more workers) are still found in the order above, because
the batch is chosen first and the input settings are tuned for it.

No printing here; the result is a pydantic `BenchmarkReport`.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, Field

from xtts_cli.config.schema import XttsConfig
from xtts_cli.data.plan import ModeDecision, gigabytes
from xtts_cli.data.run_data import RunData
from xtts_cli.devices.gpu_info import MachineInfo
from xtts_cli.errors import XttsError
from xtts_cli.findings import ConfigChange
from xtts_cli.profiling.benchmark_trial import TrialOutcome, run_trial
from xtts_cli.training.settings import mixed_precision_enabled, xla_enabled

# A candidate must beat the incumbent's score by this much to replace it (trial-to-trial noise on a
# busy 2-core machine is a few per cent).
MIN_GAIN = 0.03
# Fewer timed steps than this give no coefficient of variation worth ranking by (two steps' CV is
# their difference alone): such trials are ranked by samples/s, and the report says so.
MIN_CV_STEPS = 5
# Re-running the winner at the end: a rate that moved by more than this is reported.
DRIFT_WARNING = 0.10
# A trial is not started when less than this share of the mean trial time is left in the budget.
BUDGET_SHARE_TO_START = 0.5

STAGES: dict[str, str] = {
    "graph_mode": "training.enable_graph_mode",  # with training.enable_eager_debug (`plan_candidates`)
    "layout": "devices.strategy",  # with devices.data_gpu and devices.model_gpu (see `layouts`)
    "batch_size": "data.batch_size",
    "num_workers": "data.num_workers",
    "prefetch": "data.prefetch_buffer_size",
    "preprocessing": "data.preprocessing_mode",
    "xla": "training.enable_xla_compilation",
    "mixed_precision": "training.mixed_precision",
}


class TrialRecord(TrialOutcome):
    index: int = Field(description="The trial's number, from 0 in the order run (shown from 1).")
    stage: str = Field(description="The stage it belongs to (baseline, batch_size, layout, ..., recheck).")
    settings: dict[str, Any] = Field(description="The swept keys (dotted) and their values in this trial.")
    changed: dict[str, Any] = Field(description="The swept keys whose value differs from the user's config.")
    # A record also stands for a trial not run (skipped) or still running: a wider status than the outcome's.
    status: Literal["ok", "oom", "failed", "timeout", "skipped", "running"] = Field(
        description="ok, oom, failed, timeout, skipped, or running while the sweep is under way."
    )  # type: ignore[assignment]
    score: Optional[float] = Field(None, description="samples/s / (1 + step-time CV); higher is better.")


class BenchmarkReport(BaseModel):
    config_path: Optional[str] = Field(description="The config benchmarked; null for the built-in defaults.")
    cpu_count: int = Field(description="CPU cores usable.")
    gpus: list[str] = Field(description="GPUs seen, as index: name.")
    gpu_unavailable_reason: Optional[str] = Field(
        description="Why no GPU was seen (no NVML, no NVIDIA driver); null when one was."
    )
    num_steps: int = Field(description="Timed steps per trial (after warm-up).")
    budget_seconds: float = Field(description="The time budget (--budget-seconds).")
    elapsed_seconds: float = Field(description="Wall time taken.")
    trials: list[TrialRecord] = Field(description="Every trial, in the order run.")
    ranking: list[int] = Field(
        description="Indexes of the trials that ran, best score first (the recheck, a trial run again, aside)."
    )
    baseline: Optional[int] = Field(description="Index of the trial of the config as written.")
    best: Optional[int] = Field(
        description="Index of the trial chosen: the best, or the config as written when the best's gain did not "
        "hold when run again (a note says so); null when none ran."
    )
    speedup: Optional[float] = Field(
        description="Best samples/s (the mean of its run and its re-run at the end, when it had one) / baseline samples/s."
    )
    largest_batch_size: Optional[int] = Field(
        description="The largest batch size that ran without running out of memory; null when batch "
        "sizes were not swept."
    )
    drift: Optional[float] = Field(
        description="The fastest trial run again at the end (the best unless its gain was within the noise): its "
        "samples/s change (0.05 = 5 % faster)."
    )
    changes: list[ConfigChange] = Field(description="What to set in the config for the best trial.")
    not_swept: dict[str, str] = Field(description="Stages left out, with the reason.")
    notes: list[str] = Field(default_factory=list, description="What the figures mean, in words.")
    stopped: Optional[str] = Field(
        None, description="What stopped the sweep before its end (Ctrl-C, SIGTERM); null when it ran to its end."
    )


TrialRunner = Callable[[dict[str, Any], int, Optional[int], float], TrialOutcome]


@dataclass(frozen=True)
class TrialStarted:
    """A trial is about to run; `planned` trials in all, as far as the sweep knows now."""

    record: TrialRecord
    planned: int


@dataclass(frozen=True)
class TrialFinished:
    """A trial ran, failed or was skipped (its record says which)."""

    record: TrialRecord
    planned: int


# The sweep's progress protocol: one callable of typed events, as training's (training/events.py).
Progress = Callable[[Union[TrialStarted, TrialFinished]], None]


def _subprocess_runner(config: dict[str, Any], num_steps: int, warmup: Optional[int], timeout: float) -> TrialOutcome:
    return run_trial(config, num_steps=num_steps, warmup=warmup, timeout=timeout)


def score(samples_per_sec: float, step_cv: float) -> float:
    return samples_per_sec / (1.0 + max(step_cv, 0.0))


def default_batch_sizes(current: int, train_clips: int) -> list[int]:
    """The config's size, half of it, and doubling up to four times it, with at least 2 batches per epoch."""
    sizes = {max(1, current // 2), current, current * 2, current * 4}
    return sorted(size for size in sizes if size * 2 <= train_clips) or [current]


def _effective(config: XttsConfig, machine: MachineInfo) -> dict[str, Any]:
    data, training, devices = config.data, config.training, config.devices
    # The trial's trainer places the model on a GPU whenever one is visible.
    device = "GPU" if machine.gpus else "CPU"
    xla, mixed = xla_enabled(training, device), mixed_precision_enabled(training, device, machine.gpus)
    return {
        "devices.strategy": devices.strategy,
        "devices.data_gpu": devices.data_gpu,
        "devices.model_gpu": devices.model_gpu,
        "data.batch_size": data.batch_size,
        "data.num_workers": data.num_workers,
        "data.prefetch_buffer_size": data.prefetch_buffer_size,
        "data.preprocessing_mode": data.preprocessing_mode,
        "training.enable_xla_compilation": xla,
        "training.mixed_precision": mixed,
        "training.enable_graph_mode": training.enable_graph_mode,
        "training.enable_eager_debug": training.enable_eager_debug,
    }


def _unique(values: Iterable[Any]) -> list[Any]:
    seen: list[Any] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen


def layouts(config: XttsConfig, machine: MachineInfo) -> tuple[dict[str, dict[str, Any]], Optional[str]]:
    """The device layouts to time, each as the devices keys a trial sets (the config's own layout
    as written, so its trial is the baseline's), or why there is none to choose.

    The split's pair is the config's own when it has one; otherwise the model gets the card with
    the most memory and the data the smallest of the others (on equal cards: data 0, model 1).
    """
    from xtts_cli.devices.placement import plan_from_machine

    devices = config.devices
    if devices.strategy == "multi_worker":
        return {}, "devices.strategy is multi_worker: the cluster decides the layout"
    if devices.logical_cpu_devices:
        cards = [(0, index) for index in range(devices.logical_cpu_devices)]
    else:
        cards = [(gpu.memory_total_mib, gpu.index) for gpu in machine.gpus]
    if len(cards) < 2:
        return {}, "one device: there is no second card to place work on"
    if devices.splits_data_and_model:
        pair = (devices.data_gpu, devices.model_gpu)
    else:
        model = max(cards)[1]
        pair = (min(card for card in cards if card[1] != model)[1], model)
    own = {key: value for key, value in _effective(config, machine).items() if key.startswith("devices.")}
    options: dict[str, dict[str, Any]] = {
        "single": {"devices.strategy": "single", "devices.data_gpu": None, "devices.model_gpu": None},
        "split": {"devices.strategy": "auto", "devices.data_gpu": pair[0], "devices.model_gpu": pair[1]},
        "mirrored": {"devices.strategy": "mirrored", "devices.data_gpu": None, "devices.model_gpu": None},
    }
    options[plan_from_machine(devices, machine).kind] = own
    return options, None


def _batch_sizes(current: int, given: Optional[list[int]], train_clips: int) -> list[int]:
    """The batch sizes to try: `given` (--batch-sizes) or those around `current`, none over the clips."""
    sizes = sorted(set(given)) if given else default_batch_sizes(current, train_clips)
    too_big = [size for size in sizes if size > train_clips]
    if too_big and not given:  # none given: the config's own size is the one too big
        raise XttsError(
            f"data.batch_size {current}: larger than the {train_clips} training clips of the dataset",
            hint=f"pass --set data.batch_size={train_clips} or less, or --batch-sizes with sizes of at most {train_clips}",
        )
    if too_big:
        raise XttsError(
            f"--batch-sizes {','.join(map(str, too_big))}: larger than the {train_clips} training clips of the dataset",
            hint=f"pass batch sizes of at most {train_clips}",
        )
    return sizes


def plan_candidates(
    config: XttsConfig,
    machine: MachineInfo,
    *,
    batch_sizes: Optional[list[int]],
    train_clips: int,
    stages: list[str],
    features: Optional[ModeDecision] = None,
) -> tuple[dict[str, list[Any]], dict[str, str]]:
    """Candidate values per stage (the config's own value included), and the stages left out with why.

    `features`: what `preprocessing_mode: auto` resolves to for this dataset (`plan.decide_mode`);
    `cache` is not a candidate when the features exceed the memory budget, and not a second one
    when the config's own `auto` already is `cache`.
    """
    current = _effective(config, machine)
    candidates: dict[str, list[Any]] = {}
    not_swept: dict[str, str] = {}
    for stage in STAGES:
        if stage not in stages:
            not_swept[stage] = "not asked for (--sweep)"
    if "graph_mode" in stages:
        eager = {"training.enable_graph_mode": current["training.enable_graph_mode"]}
        eager["training.enable_eager_debug"] = current["training.enable_eager_debug"]
        if eager["training.enable_graph_mode"] and not eager["training.enable_eager_debug"]:
            not_swept["graph_mode"] = "the config runs the step in graph mode already"
        else:
            candidates["graph_mode"] = [
                eager,
                {"training.enable_graph_mode": True, "training.enable_eager_debug": False},
            ]
    if "layout" in stages:
        options, why_not = layouts(config, machine)
        if why_not:
            not_swept["layout"] = why_not
        else:
            candidates["layout"] = list(options.values())
    if "batch_size" in stages:
        candidates["batch_size"] = _batch_sizes(config.data.batch_size, batch_sizes, train_clips)
    elif config.data.batch_size > train_clips:  # every trial would fail on it, each after its set-up
        raise XttsError(
            f"data.batch_size {config.data.batch_size}: larger than the {train_clips} training clips of the dataset",
            hint=f"pass --set data.batch_size={train_clips} or less",
        )
    if "num_workers" in stages:
        candidates["num_workers"] = _unique(["auto", 1, machine.cpu_count, current["data.num_workers"]])
    if "prefetch" in stages:
        candidates["prefetch"] = _unique(["auto", 2, current["data.prefetch_buffer_size"]])
    if "preprocessing" in stages:
        own = current["data.preprocessing_mode"]
        modes = ["runtime"]
        fits = features is None or features.mode == "cache"
        if features is not None and not fits:
            budget = "unknown" if features.budget_bytes is None else gigabytes(features.budget_bytes)
            not_swept["preprocessing=cache"] = (
                f"the features need {gigabytes(features.feature_bytes)} of memory, over the {budget} "
                "budget (data.cache_memory_limit)"
            )
        elif not (own == "auto" and features is not None):  # else auto is cache: the same pipeline
            modes.append("cache")
        candidates["preprocessing"] = _unique([*modes, own])
        if own != "precompute" and fits:
            not_swept["preprocessing=precompute"] = (
                "precompute writes every clip's features to disk before the first step; it is for "
                "features over the memory budget (auto chooses it then), and memory serves them faster"
            )
    if "xla" in stages:
        candidates["xla"] = [False, True]
    if "mixed_precision" in stages:
        fast16 = [gpu for gpu in machine.gpus if gpu.supports_mixed_float16]
        if fast16:
            candidates["mixed_precision"] = [False, True]
        else:
            not_swept["mixed_precision"] = (
                f"no GPU with fast 16-bit math ({machine.gpu_unavailable_reason or 'compute capability below 7.0'}); "
                "on a CPU 16-bit math is slower"
            )
    return candidates, not_swept


def prepare_features(run_data: RunData, note: Callable[[str], None]) -> ModeDecision:
    """What `preprocessing_mode: auto` resolves to for the run's data; and when the config's own
    mode keeps features on disk, the stores written now, once (`RunData.ensure_store`), so that no
    trial pays the pass: it would count against that trial's time, and its rate would not be the
    store's. Each trial's set-up then finds the training and validation clips' stores complete."""
    from xtts_cli.config.loading import data_variant

    data = run_data.config.data
    auto = run_data.with_config(data_variant(run_data.config, preprocessing_mode="auto", service_address=None))
    features = auto.plan().decision
    own = data.preprocessing_mode
    if data.service_address is None and (own == "precompute" or (own == "auto" and features.mode == "precompute")):
        run_data.ensure_store(note=note)
    return features


def benchmark(
    config: XttsConfig,
    canonical: dict[str, Any],
    machine: MachineInfo,
    *,
    train_clips: int,
    config_path: Optional[str] = None,
    batch_sizes: Optional[list[int]] = None,
    stages: Optional[list[str]] = None,
    budget_seconds: float = 900.0,
    num_steps: int = 20,
    warmup: Optional[int] = None,
    progress: Optional[Progress] = None,
    runner: TrialRunner = _subprocess_runner,
    features: Optional[ModeDecision] = None,
) -> BenchmarkReport:
    """Sweep the stages of `config` (whose file content, canonicalized, is `canonical`) within the budget.

    `runner` runs one trial; the default runs it in a fresh process. It is a parameter so the
    search order and budget rules can be exercised with a stand-in machine. `features`: what
    `preprocessing_mode: auto` resolves to for this dataset (see `plan_candidates`).
    """
    unknown = [stage for stage in (stages or []) if stage not in STAGES]
    if unknown:
        raise XttsError(f"--sweep {','.join(unknown)}: unknown stage", hint=f"choose from {', '.join(STAGES)}")
    stages = list(stages) if stages else list(STAGES)
    candidates, not_swept = plan_candidates(
        config, machine, batch_sizes=batch_sizes, train_clips=train_clips, stages=stages, features=features
    )
    search = _Search(
        canonical=canonical,
        baseline_settings=_effective(config, machine),
        planned=_planned_trials(config, candidates),
        budget_seconds=budget_seconds,
        num_steps=num_steps,
        warmup=warmup,
        runner=runner,
        say=progress or (lambda event: None),
    )
    if num_steps < MIN_CV_STEPS:
        search.notes.append(
            f"--steps {num_steps}: too few steps to tell a steady step from a swinging one, so the trials are "
            f"ranked by samples/s alone; {MIN_CV_STEPS} or more weigh steadiness in"
        )
    incumbent = search.run("baseline", search.baseline_settings)
    baseline_index = incumbent.index if incumbent.status == "ok" else None
    if incumbent.status not in ("ok", "skipped"):
        search.notes.append(
            f"the config as written did not run ({incumbent.status}: {incumbent.reason}); "
            "the search starts from it all the same"
        )
    largest_batch: Optional[int] = config.data.batch_size if incumbent.status == "ok" else None
    incumbent, largest_batch = search.descend(candidates, incumbent, largest_batch)
    if "batch_size" not in candidates:
        largest_batch = None  # no batch size was tried but the config's
    drift = search.recheck(incumbent)
    return _report(
        search,
        machine,
        incumbent=incumbent,
        baseline_index=baseline_index,
        largest_batch=largest_batch,
        drift=drift,
        config_path=config_path,
        not_swept=not_swept,
    )


def _planned_trials(config: XttsConfig, candidates: dict[str, list[Any]]) -> int:
    """How many trials the sweep expects to run, as its progress events announce them."""
    planned = 2 + sum(len(values) - 1 for values in candidates.values())  # baseline, candidates, recheck
    if "batch_size" in candidates and config.data.batch_size not in candidates["batch_size"]:
        planned += 1
    return planned


def _better(challenger: TrialRecord, holder: TrialRecord) -> bool:
    """Whether `challenger` scores at least MIN_GAIN above `holder` (any score beats none)."""
    if challenger.score is None:
        return False
    if holder.score is None:
        return True
    return challenger.score > holder.score * (1.0 + MIN_GAIN)


@dataclass
class _Search:
    """The sweep's running state: the trials so far (one per distinct settings, bar the recheck),
    the budget they spend and the notes gathered on the way."""

    canonical: dict[str, Any]
    baseline_settings: dict[str, Any]
    planned: int
    budget_seconds: float
    num_steps: int
    warmup: Optional[int]
    runner: TrialRunner
    say: Progress
    trials: list[TrialRecord] = field(default_factory=list)
    by_settings: dict[tuple, TrialRecord] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    began: float = field(default_factory=time.perf_counter)
    # Ctrl-C or SIGTERM during a trial: the trials run so far are the report, no more run.
    stopped: Optional[str] = None
    # A trial beats the config as written: a trial's time is kept for running it again (the recheck
    # every recommendation waits on), not spent on later stages (a 6.6x gain had been thrown away).
    keep_for_recheck: bool = False

    def _record(self, stage: str, settings: dict[str, Any], **fields: Any) -> TrialRecord:
        """A new record for a trial of `settings`, numbered next."""
        return TrialRecord(
            index=len(self.trials),
            stage=stage,
            settings=settings,
            changed={k: v for k, v in settings.items() if v != self.baseline_settings[k]},
            **fields,
        )

    def run(self, stage: str, settings: dict[str, Any], again: bool = False) -> TrialRecord:
        """Run a trial of `settings` (or reuse the earlier one unless `again`); skipped when the budget is spent."""
        key = tuple(sorted((k, repr(v)) for k, v in settings.items()))
        if key in self.by_settings and not again:
            return self.by_settings[key]
        record = self._record(stage, dict(settings), status="running")
        if self.stopped:
            return record.model_copy(update={"status": "skipped", "reason": f"stopped by {self.stopped}"})
        elapsed = time.perf_counter() - self.began
        remaining = self.budget_seconds - elapsed
        finished = [t.seconds for t in self.trials if t.status not in ("skipped",)]
        typical = sum(finished) / len(finished) if finished else 0.0
        kept = typical if self.keep_for_recheck and stage != "recheck" else 0.0
        if remaining <= 0 or (typical and remaining < BUDGET_SHARE_TO_START * typical):
            record.status, record.reason = "skipped", f"budget spent ({elapsed:.0f} of {self.budget_seconds:.0f} s)"
        elif kept and remaining - kept < BUDGET_SHARE_TO_START * typical:
            record.status = "skipped"
            record.reason = f"the budget's last {remaining:.0f} s kept to run the best so far again"
        else:
            self.say(TrialStarted(record, self.planned))
            trial_config = _with_settings(self.canonical, settings)
            try:
                outcome = self.runner(trial_config, self.num_steps, self.warmup, remaining)
                update = outcome.model_dump()
            except (KeyboardInterrupt, SystemExit) as stop:  # the runner has stopped the trial's process
                if isinstance(stop, SystemExit) and stop.code not in (143, 129):
                    raise
                by_code = "SIGTERM" if getattr(stop, "code", None) == 143 else "SIGHUP"
                self.stopped = "Ctrl-C" if isinstance(stop, KeyboardInterrupt) else by_code
                update = {"status": "skipped", "reason": f"stopped by {self.stopped}"}
            record = record.model_copy(update=update)
            if record.status == "ok":
                steadiness = record.step_cv or 0.0 if self.num_steps >= MIN_CV_STEPS else 0.0
                record.score = score(record.samples_per_sec or 0.0, steadiness)
        self.trials.append(record)
        self.by_settings.setdefault(key, record)
        self.say(TrialFinished(record, self.planned))
        return record

    def descend(
        self, candidates: dict[str, list[Any]], incumbent: TrialRecord, largest_batch: Optional[int]
    ) -> tuple[TrialRecord, Optional[int]]:
        """Coordinate descent over the stages: (the winning trial, the largest batch size that ran)."""
        for stage, values in candidates.items():
            key = STAGES[stage]
            out_of_memory_at: Optional[int] = None
            stage_best = incumbent
            for value in values:
                if self.stopped:
                    break
                # A layout or graph mode sets several keys at once (`layouts`); every other stage one.
                settings = {**incumbent.settings, **(value if isinstance(value, dict) else {key: value})}
                if stage == "batch_size" and out_of_memory_at is not None and value > out_of_memory_at:
                    record = self._record(
                        stage,
                        settings,
                        status="skipped",
                        reason=f"larger than batch size {out_of_memory_at}, which ran out of memory",
                    )
                    self.trials.append(record)
                    self.say(TrialFinished(record, self.planned))
                    continue
                record = self.run(stage, settings)
                if stage == "batch_size":
                    if record.status == "oom" and (out_of_memory_at is None or value < out_of_memory_at):
                        out_of_memory_at = value
                    if record.status == "ok" and (largest_batch is None or value > largest_batch):
                        largest_batch = value
                if _better(record, stage_best):
                    stage_best = record
                    self.keep_for_recheck = stage_best.settings != self.baseline_settings
            incumbent = stage_best
        return incumbent, largest_batch

    def recheck(self, incumbent: TrialRecord) -> Optional[float]:
        """The winner run again: its samples/s change, with a note when it moved past DRIFT_WARNING."""
        drift = None
        if incumbent.score is not None and len(self.trials) > 1:
            # Trials run one after another on a machine whose load may change: run the winner again
            # and say how far its rate moved, the margin below which the ranking means nothing.
            recheck = self.run("recheck", incumbent.settings, again=True)
            if recheck.samples_per_sec and incumbent.samples_per_sec:
                drift = recheck.samples_per_sec / incumbent.samples_per_sec - 1.0
                if abs(drift) > DRIFT_WARNING:
                    self.notes.append(drift_note(drift))
        return drift


def _report(
    search: _Search,
    machine: MachineInfo,
    *,
    incumbent: TrialRecord,
    baseline_index: Optional[int],
    largest_batch: Optional[int],
    drift: Optional[float],
    config_path: Optional[str],
    not_swept: dict[str, str],
) -> BenchmarkReport:
    """The finished search as a report: the ranking, the best trial and its speedup and config changes."""
    trials, notes = search.trials, search.notes
    ran = [t for t in trials if t.score is not None and t.stage != "recheck"]
    ranking = [t.index for t in sorted(ran, key=lambda t: t.score or 0.0, reverse=True)]
    best = incumbent if incumbent.score is not None else None
    baseline = trials[baseline_index] if baseline_index is not None else None
    held = _held(best, baseline, trials, notes, search.stopped)
    if held is best and best is not None and best.index != (ranking[0] if ranking else None):
        notes.append(
            "the top-ranked trial was not chosen: its score beat the incumbent by less than "
            f"{MIN_GAIN:.0%}, within run-to-run noise"
        )
    best, speedup = held, None
    if best is not None and baseline is not None and baseline.samples_per_sec:
        rate = best.samples_per_sec or 0.0
        if best is incumbent and drift is not None and best is not baseline:
            rate *= 1.0 + drift / 2  # the mean of its run and its re-run: the first alone had read 2.30x for 1.5x
        speedup = rate / baseline.samples_per_sec
    changes = _changes(search.baseline_settings, best.settings) if best is not None else []
    if any(key == "data.batch_size" for key in (c.key for c in changes)):
        notes.append(
            "a different batch size changes optimisation too: scale training.learning_rate with it "
            "if the loss curve suffers"
        )
    return BenchmarkReport(
        config_path=config_path,
        cpu_count=machine.cpu_count,
        gpus=[f"{gpu.index}: {gpu.name}" for gpu in machine.gpus],
        gpu_unavailable_reason=machine.gpu_unavailable_reason,
        num_steps=search.num_steps,
        budget_seconds=search.budget_seconds,
        elapsed_seconds=time.perf_counter() - search.began,
        trials=trials,
        ranking=ranking,
        baseline=baseline_index,
        best=best.index if best is not None else None,
        speedup=speedup,
        largest_batch_size=largest_batch,
        drift=drift,
        changes=changes,
        not_swept=not_swept,
        notes=notes,
        stopped=search.stopped,
    )


def _held(
    best: Optional[TrialRecord],
    baseline: Optional[TrialRecord],
    trials: list[TrialRecord],
    notes: list[str],
    stopped: Optional[str] = None,
) -> Optional[TrialRecord]:
    """`best`, or the config as written when the winner run again (the recheck) did not score
    `MIN_GAIN` above it: a gain that does not hold is the machine's drift, not the setting's (1.17x, then
    0.94x the config's rate, in one sweep)."""
    recheck = next((t for t in trials if t.stage == "recheck" and t.score is not None), None)
    if best is None or baseline is None or best.index == baseline.index:
        return best
    if recheck is None:  # the budget spent before it: a winner no second run confirmed had been recommended
        why = (
            f"the search stopped by {stopped}: the config as written is kept"
            if stopped
            else "the budget spent: the config as written is kept (a larger --budget-seconds leaves time to check it)"
        )
        notes.append(f"the best setting (trial {best.index + 1}) was not run again to check its gain, {why}")
        return baseline
    if _better(recheck, baseline):
        return best
    notes.append(
        f"the best setting (trial {best.index + 1}) did not score {MIN_GAIN:.0%} above the config as written when run "
        f"again ({recheck.samples_per_sec or 0.0:.1f} samples/s against {baseline.samples_per_sec or 0.0:.1f}): the "
        "config as written is kept"
    )
    return baseline


def _with_settings(canonical: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    tree = copy.deepcopy(canonical)
    for dotted, value in settings.items():
        section, key = dotted.split(".", 1)
        tree.setdefault(section, {})[key] = value
    return tree


def _changes(baseline: dict[str, Any], best: dict[str, Any]) -> list[ConfigChange]:
    changes: list[ConfigChange] = []
    for key, value in best.items():
        if value == baseline[key]:
            continue
        # Only the devices keys can be None: a layout that leaves the split out removes its keys.
        changes.append(ConfigChange(key=key, action="remove") if value is None else ConfigChange(key=key, value=value))
    return changes


def drift_note(drift: float) -> str:
    """What the winner's second run says of the machine (`drift`: its samples/s change, -0.44 for 44 % slower)."""
    return (
        f"the fastest trial ran {abs(drift):.0%} {'faster' if drift > 0 else 'slower'} when run again at the end: "
        "the machine's speed changed during the benchmark (other load?), so differences smaller than "
        f"{abs(drift):.0%} between trials are not reliable"
    )
