"""What a measured symptom of a run means for its config: the findings (their ids, wording and the
config change that repairs each) that `profile-step`, `diagnose` and the training watch share, so a
slow input pipeline reads the same whichever of them saw it."""

from __future__ import annotations

from typing import Any, Literal, Optional

from xtts_cli.config.schema import CONTENTION_INFO_PERCENT, XttsConfig
from xtts_cli.findings import ConfigChange, Finding

__all__ = [
    "CONTENTION_INFO_PERCENT",
    "CONTENTION_WARNING_PERCENT",
    "HIGHLY_INPUT_BOUND_PERCENT",
    "MODERATELY_INPUT_BOUND_PERCENT",
    "InputBoundVerdict",
    "contention_findings",
    "early_stop_without_validation",
    "input_bound_verdict",
    "input_findings",
    "set_key",
]

MODERATELY_INPUT_BOUND_PERCENT = 5.0
HIGHLY_INPUT_BOUND_PERCENT = 20.0

InputBoundVerdict = Literal["not_input_bound", "moderately_input_bound", "highly_input_bound"]


def early_stop_without_validation() -> Finding:
    """training.early_stop_patience with no validation clip: `validate` warns of it, `train` says it
    as it starts (an adapt preset on a handful of clips would otherwise train every step unwarned)."""
    return Finding(
        id="early-stop-without-validation",
        severity="warning",
        message="training.early_stop_patience is set but the run has no validation clip: nothing can end it early, "
        "and it trains every step; hold some clips out (data.eval_fraction) or give data.eval_dataset_path",
    )


def input_bound_verdict(percent: float) -> InputBoundVerdict:
    """The TF Profiler's band for an input-bound share given in percent (0-100)."""
    if percent < MODERATELY_INPUT_BOUND_PERCENT:
        return "not_input_bound"
    if percent < HIGHLY_INPUT_BOUND_PERCENT:
        return "moderately_input_bound"
    return "highly_input_bound"


def set_key(key: str, value: Any) -> ConfigChange:
    return ConfigChange(key=key, value=value)


def said_percent(value: float, line: Optional[float] = None) -> str:
    """`value` (a percentage) with the decimals it needs to stand on its side of `line`: 0.7 over a line of
    0.1 %, not "0" over it; a value under 1 with one at least."""
    decimals = 0 if value >= 1 or value == 0 else 1
    while line is not None and decimals < 3 and (round(value, decimals) >= line) != (value >= line):
        decimals += 1
    return f"{value:.{decimals}f}"


def input_findings(
    config: XttsConfig,
    verdict: InputBoundVerdict,
    input_bound_percent: float,
    cpu_count: int,
    *,
    line: Optional[str] = None,
    line_percent: Optional[float] = None,
) -> list[Finding]:
    """An input-bound step: each pipeline setting that slows it, or where to look when none does.
    `line`: the bar it was judged by, where not the profiler's bands (the training watch's own), at
    `line_percent`."""
    data = config.data
    found: list[Finding] = []
    severity = "warning" if verdict == "highly_input_bound" else "info"
    share = f"{said_percent(input_bound_percent, line_percent)} % of each step waits for data ({line or verdict.replace('_', ' ')})"
    if not data.use_tf_native_loading:
        found.append(
            Finding(
                id="input-bound-numpy-function",
                severity=severity,
                message=f"{share}: audio is decoded and featurized in tf.numpy_function under "
                "Python's GIL; use the TF-native loader",
                fix=set_key("data.use_tf_native_loading", True),
            )
        )
    if isinstance(data.prefetch_buffer_size, int) and data.prefetch_buffer_size < 2:
        found.append(
            Finding(
                id="input-bound-prefetch",
                severity=severity,
                message=f"{share}: data.prefetch_buffer_size is {data.prefetch_buffer_size}, so the "
                "next batch is only made when the step asks for it; let tf.data prefetch",
                fix=set_key("data.prefetch_buffer_size", "auto"),
            )
        )
    if isinstance(data.num_workers, int) and data.num_workers < cpu_count:
        found.append(
            Finding(
                id="input-bound-num-workers",
                severity=severity,
                message=f"{share}: data.num_workers is {data.num_workers} on {cpu_count} cores; "
                "parallelise the map stages",
                fix=set_key("data.num_workers", "auto"),
            )
        )
    if data.service_address:  # auto resolves to runtime there: the service's workers make the batches
        found.append(
            Finding(
                id="input-bound-data-service",
                severity=severity,
                message=f"{share}: the batches come from the tf.data service at {data.service_address}, whose "
                "workers make them (features at runtime, whatever data.preprocessing_mode says); add service "
                "workers or give them more cores; a pause once an epoch is the service starting the next",
            )
        )
    elif data.preprocessing_mode == "runtime":
        found.append(
            Finding(
                id="input-bound-runtime-features",
                severity=severity,
                message=f"{share}: mel features are recomputed every epoch (runtime mode); let "
                "auto cache them in memory when they fit, else precompute them to disk",
                fix=set_key("data.preprocessing_mode", "auto"),
            )
        )
    if len(found) == 0:
        found.append(
            Finding(
                id="input-bound",
                severity=severity,
                # No setting to change: features kept in memory (cache) are served faster than from
                # disk (precompute), and benchmark measures which wins here.
                message=f"{share}: the pipeline settings already follow the rules; time its stages "
                "with `xtts profile-pipeline --benchmark`, and let `xtts benchmark` measure the settings",
            )
        )
    return found


# Clips a step per GPU at or under which the card idles between its small kernels, each launched by
# the host one after another: the low utilisation users come to xtts with, whatever the pipeline does.
SMALL_GPU_BATCH = 4

# Host contention at or above these shares is a warning, an info note.
CONTENTION_WARNING_PERCENT = 20.0


# Cores other processes keep busy beside a measurement, as a share of the usable ones, at which
# its figures are theirs to share: a warning, and host contention is not blamed on the pipeline.
OTHERS_BUSY_SHARE = 0.2


def busy_host_finding(others: Optional[float], cpu_count: int, what: str) -> Optional[Finding]:
    """Other processes that took `others` cores of `cpu_count` while `what` was timed; None below
    OTHERS_BUSY_SHARE or where it could not be read."""
    if others is None or others < OTHERS_BUSY_SHARE * cpu_count:
        return None
    return Finding(
        id="host-busy",
        severity="warning",
        message=f"other processes kept {others:.1f} of this machine's {cpu_count} usable cores busy while {what} "
        "were timed: every rate here is lower than the machine gives, and the step's lost CPU is theirs; "
        "stop them (`top` shows which) and time again",
    )


def contention_findings(
    config: XttsConfig,
    percent: float,
    input_bound_percent: float,
    *,
    while_training: bool = False,
    resolved_mode: Optional[str] = None,
    others: Optional[float] = None,
    cpu_count: int = 0,
    spread: Optional[float] = None,
) -> list[Finding]:
    """What host contention says, and what to change: the input-bound share's blind spot, a pipeline
    that outruns the step by taking its CPU. `while_training`: measured by the training watch against
    the run's own best stretch, where another process may be what took it. `resolved_mode`: what
    `preprocessing_mode: auto` chose for the pipeline measured (cache: the features are made once already).
    `others`: cores other processes kept busy meanwhile, of `cpu_count` (None: not readable here);
    from OTHERS_BUSY_SHARE of them the CPU is theirs and no pipeline setting is blamed. `spread`: how
    far, in percent, the step's p95 on resident batches lies above its p50; a figure no larger than
    that is the step's own run-to-run noise (a healthy config read 9 and 28 % on 2 cores, spreads 79 and 70 %)."""
    if percent < CONTENTION_INFO_PERCENT:
        return []
    if spread is not None and percent <= spread:
        return []
    data = config.data
    severity = "warning" if percent >= CONTENTION_WARNING_PERCENT else "info"
    busy = others is not None and cpu_count > 0 and others >= OTHERS_BUSY_SHARE * cpu_count
    slower = (
        f"the step computes {percent:.0f} % slower than in its best stretch of this run"
        if while_training
        else f"the step computes {percent:.0f} % slower with the input pipeline beside it than on resident batches"
    )
    cause = (
        f"{slower}, though it waits for data only {input_bound_percent:.0f} % of the time: the pipeline keeps up "
        "by taking the step's CPU (on a GPU host, the thread that launches its kernels)"
    )
    if busy:
        cause = (
            f"{slower}: other processes kept {others:.1f} of this machine's {cpu_count} usable cores busy "
            "meanwhile, so the CPU it lost is theirs before the pipeline's (`top` shows which)"
        )
    elif while_training and others is None:
        cause = (
            f"{slower}, though it waits for data only {input_bound_percent:.0f} % of the time: something takes its "
            "CPU (on a GPU host, the thread that launches its kernels), another process on this machine or the "
            "input pipeline"
        )
    fix, why = _contention_fix(data, resolved_mode, busy=busy, blind=while_training and others is None)
    return [Finding(id="host-contention", severity=severity, message=cause + why, fix=fix)]


def step_spread(p50: float, p95: float) -> float:
    """How far, in percent, a step's p95 lies above its p50: its own noise (`contention_findings`)."""
    return 100.0 * (p95 - p50) / p50 if p50 > 0 else 0.0


def _contention_fix(
    data: Any, resolved_mode: Optional[str], *, busy: bool, blind: bool
) -> tuple[Optional[ConfigChange], str]:
    """(the change that leaves the step its CPU, the words that say why) for `contention_findings`.
    `busy`: other processes took the cores; `blind`: while training, with no reading of whose."""
    stored = data.preprocessing_mode in ("cache", "precompute") or (
        data.preprocessing_mode == "auto" and resolved_mode in ("cache", "precompute")
    )
    if busy:
        return None, ""
    if not data.use_tf_native_loading and not (stored and resolved_mode is not None):
        # Measured on stored features (cache filled, or a store), the loader no longer runs.
        return (
            set_key("data.use_tf_native_loading", True),
            "; its Python loader (tf.numpy_function) is the costliest way to make batches",
        )
    if data.preprocessing_mode == "runtime" or (
        data.preprocessing_mode == "auto" and resolved_mode in (None, "runtime")
    ):
        return (
            set_key("data.preprocessing_mode", "precompute"),
            "; computing the features once (cache or precompute) leaves the step the CPU",
        )
    if blind:
        return None, " (`top` shows which)"
    if data.preprocessing_mode == "auto":
        # validate asks for a thread per core unless the features are stored (cache or precompute):
        # pinning the mode auto chose comes first, so the fewer threads that follow are not undone.
        return set_key("data.preprocessing_mode", resolved_mode), (
            f"; fewer pipeline threads leave the step more of the CPU: pin data.preprocessing_mode: {resolved_mode} "
            "(what auto chose), then set data.num_workers: 1"
        )
    if data.num_workers != 1:
        return set_key("data.num_workers", 1), "; fewer pipeline threads leave the step more of the CPU"
    return None, (
        "; the pipeline already runs one thread on stored features (data.num_workers: 1): this is the share "
        "of these cores it needs, and more cores (or a GPU for the step) is what is left"
    )
