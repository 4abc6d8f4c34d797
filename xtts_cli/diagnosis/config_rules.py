"""Config rules: what in a config keeps the GPU idle or cannot work, and the change that fixes it.

Shared by `xtts validate` and `xtts diagnose`. Each rule reads the resolved config (and, for
machine-aware rules, a `MachineInfo`), and returns findings; none prints or touches files.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Optional

from xtts_cli.config.loading import LoadedConfig, section_fields
from xtts_cli.config.remedies import SMALL_GPU_BATCH
from xtts_cli.devices.gpu_info import MachineInfo
from xtts_cli.findings import ConfigChange, Finding, relative_to_here, sort_findings, yaml_scalar
from xtts_cli.training.settings import xla_enabled

# tf.data's guide: a prefetch of at least one or two batches lets input overlap the step.
MIN_PREFETCH = 2

Rule = Callable[[LoadedConfig, MachineInfo], Iterable[Finding]]


def _set(key: str, value: Any) -> ConfigChange:
    return ConfigChange(key=key, action="set", value=value)


def _graph_mode(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    training = loaded.config.training
    if not training.enable_graph_mode:
        yield Finding(
            id="graph-mode-off",
            severity="warning",
            message="training.enable_graph_mode is false: the step runs eagerly, op by op, and the GPU "
            "idles between ops (GPU utilisation stuck near 15 %); set it to true",
            fix=_set("training.enable_graph_mode", True),
        )
    if training.enable_eager_debug:
        yield Finding(
            id="eager-debug-on",
            severity="warning",
            message="training.enable_eager_debug is true: every step runs eagerly for debugging and is "
            "several times slower; set it to false for real training",
            fix=_set("training.enable_eager_debug", False),
        )


def _why_no_gpu(machine: MachineInfo) -> str:
    """` (NVML's reason)` for a machine without GPUs, to follow "no GPU is visible"; "" when none is known."""
    return f" ({machine.gpu_unavailable_reason})" if machine.gpu_unavailable_reason else ""


def _xla(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    setting = loaded.config.training.enable_xla_compilation
    if setting is True and not machine.gpus and loaded.config.devices.logical_cpu_devices == 0:
        # The step XLA compiles for a CPU runs slower than plain graph mode, and the compile comes first
        # (training/settings.py: XLA_MIN_PLANNED_STEPS).
        why = _why_no_gpu(machine)
        yield Finding(
            id="xla-on-cpu",
            severity="warning",
            message=f"training.enable_xla_compilation is true and no GPU is visible{why}: on a CPU the "
            "compiled step runs slower than plain graph mode, after its compile; set it to auto (on for GPUs)",
            fix=_set("training.enable_xla_compilation", "auto"),
        )
        return
    if setting is not False:
        return
    if machine.gpus:
        yield Finding(
            id="xla-off",
            severity="warning",
            message="training.enable_xla_compilation is false: on a GPU, XLA fuses the step's ops into fewer "
            "kernels and launches; set it to auto (on for GPUs)",
            fix=_set("training.enable_xla_compilation", "auto"),
        )
    else:
        yield Finding(
            id="xla-off",
            severity="info",
            message="training.enable_xla_compilation is false: right for this CPU-only machine, but a GPU "
            "run wants XLA; set it to auto to get both",
            fix=_set("training.enable_xla_compilation", "auto"),
        )


def _tf_native(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    if not loaded.config.data.use_tf_native_loading:
        yield Finding(
            id="tf-native-loading-off",
            severity="warning",
            message="data.use_tf_native_loading is false: audio is decoded in tf.numpy_function under "
            "Python's GIL, one clip at a time (on a GPU, the cause of its 2-40 % swings); set it to true",
            fix=_set("data.use_tf_native_loading", True),
        )


def _data_service(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    data = loaded.config.data
    if not data.service_address:
        return
    if not data.use_tf_native_loading:
        yield Finding(
            id="data-service-python-loading",
            severity="error",
            message=f"data.service_address is {data.service_address!r} but data.use_tf_native_loading is false: "
            "the tf.data service workers run graph ops only and cannot call the tf.numpy_function loader; "
            "set data.use_tf_native_loading to true",
            fix=_set("data.use_tf_native_loading", True),
        )
    if data.preprocessing_mode == "cache":
        # Each epoch is a new iteration of the service job, which rebuilds the dataset on every worker:
        # the in-memory cache starts empty each time (checked in tests/test_data_service.py).
        yield Finding(
            id="data-service-cache",
            severity="warning",
            message="data.preprocessing_mode is cache with data.service_address set: service workers rebuild the "
            "pipeline every epoch, so the in-memory cache is refilled and never read; set it to runtime (or to "
            "precompute, with data.feature_cache_dir on storage every worker reads at the same path)",
            fix=_set("data.preprocessing_mode", "runtime"),
        )


def _prefetch(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    size = loaded.config.data.prefetch_buffer_size
    if isinstance(size, int) and size < MIN_PREFETCH:
        state = "off" if size == 0 else f"only {size} batch"
        yield Finding(
            id="prefetch-too-small",
            severity="warning",
            message=f"data.prefetch_buffer_size is {size} (prefetch {state}): the step waits while the "
            "next batch is made; set it to auto (AUTOTUNE)",
            fix=_set("data.prefetch_buffer_size", "auto"),
        )


def _parallelism(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    data = loaded.config.data
    workers = data.num_workers
    # With stored features (cache, precompute) the threads only read them: fewer is what diagnose's
    # host-contention finding asks for when the pipeline takes the step's CPU.
    if data.preprocessing_mode in ("cache", "precompute"):
        return
    if isinstance(workers, int) and workers < machine.cpu_count:
        yield Finding(
            id="parallelism-below-cores",
            severity="warning",
            message=f"data.num_workers is {workers} but this machine has {machine.cpu_count} usable cores: "
            "the input pipeline leaves cores idle; set it to auto (AUTOTUNE follows the cores)",
            fix=_set("data.num_workers", "auto"),
        )


def _static_shapes(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    data = loaded.config.data
    if data.pad_to_fixed_length == data.bucket_by_length:
        # Both off: the step's input signature leaves the lengths unknown, so plain graph mode traces
        # it once and XLA compiles it for every new shape (training/steps.py). Both on: the plan pads
        # to the fixed length first (data/plan.py), and the buckets change nothing.
        if data.pad_to_fixed_length:
            found, key, value = "fixed-padding-over-buckets", "data.pad_to_fixed_length", False
            said = (
                f"data.pad_to_fixed_length pads every batch to data.max_mel_frames ({data.max_mel_frames} "
                "frames), so data.bucket_by_length's buckets save no padding"
            )
        else:
            found, key, value = "variable-shapes", "data.bucket_by_length", True
            said = "data.bucket_by_length and data.pad_to_fixed_length are both false: " + (
                "XLA compiles the step again for every new batch shape, seconds each"
                if xla_enabled(loaded.config.training, "GPU" if machine.gpus else "CPU")
                else "each batch is padded to its longest clip, so short clips shuffled beside long ones can be "
                "mostly padding (`xtts profile-pipeline` measures the share)"
            )
        yield Finding(
            id=found,
            severity="warning",
            message=f"{said}; set {key} to {str(value).lower()}",
            fix=_set(key, value),
        )


def _mel_frames(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    data = loaded.config.data
    needed = data.mel_frames_for(data.max_audio_duration)
    if data.max_mel_frames < needed:
        yield Finding(
            id="max-mel-frames-too-small",
            severity="warning",
            message=f"data.max_mel_frames is {data.max_mel_frames} but a {data.max_audio_duration:g} s clip "
            f"(data.max_audio_duration) at {data.sample_rate} Hz and hop {data.hop_length} has {needed} "
            f"frames: such clips would be dropped; set it to {needed}",
            fix=_set("data.max_mel_frames", needed),
        )


def _frozen_from_zero(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    from xtts_cli.run.files import RunDir

    training = loaded.config.training
    if training.run_dir and RunDir.of(Path(training.run_dir).expanduser(), loaded.config).has_checkpoint():
        return  # a resume: the frozen parts hold what the run's checkpoint holds
    if training.freeze and training.init_from is None:
        parts = ", ".join(training.freeze)
        yield Finding(
            id="freeze-without-base",
            severity="warning",
            message=f"training.freeze keeps {parts} as they start, and with no training.init_from they start "
            "at random: nothing learnt is kept, and they never learn; pass --init-from RUN (the run to "
            "adapt), or leave training.freeze empty",
        )  # no fix: which of the two is the user's to say


# Fewer steps are a try of the set-up, whose learning rate nobody is after.
TRIAL_STEPS = 20


def _warmup_past_the_end(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    training = loaded.config.training
    if training.max_steps is not None:
        yield from _warmup_past(training, training.max_steps, f"training.max_steps ({training.max_steps})")


def _never_reached(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    """A validation due later than training.max_steps, of a run of TRIAL_STEPS or more: it never has
    one. With early stopping, nothing can end it early (a warning), else an info. (A sample
    step past the end is left alone: speak-cpu sets one so as to spend its minutes training.)"""
    training = loaded.config.training
    steps = training.max_steps
    if steps is None:
        return
    every = max(1, steps // 10)
    if training.val_step > steps and steps >= TRIAL_STEPS:  # a try of 6 steps had been warned with early stopping
        stops = training.early_stop_patience is not None
        # A run started from another validates its base's weights before the first step (and never after);
        # its resume reads no base, so validates nothing.
        said = (
            "validates only its base's weights, before its first step, and nothing when resumed"
            if training.init_from
            else "never validates"
        )
        yield Finding(
            id="validation-past-the-end",
            severity="warning" if stops else "info",
            message=f"training.val_step ({training.val_step}) is past training.max_steps ({steps}): the run {said}"
            + (", so training.early_stop_patience can never end it" if stops else " (no val_loss of what it trains)")
            + f"; set training.val_step to {every}",
            fix=_set("training.val_step", every),
        )


def warmup_past_the_epochs(training, total_steps: Optional[int]) -> list[Finding]:
    """`warmup-past-the-end` where training.epochs ends the run before max_steps (the data says when)."""
    if total_steps is None or (training.max_steps is not None and training.max_steps <= total_steps):
        return []  # max_steps ends it: `_warmup_past_the_end` looks at that
    ends = f"the {total_steps} steps training.epochs ({training.epochs}) ends the run at"
    return _warmup_past(training, total_steps, ends)


def _warmup_past(training, total_steps: int, ends: str) -> list[Finding]:
    """A warm-up as long as the run, `ends` naming where it ends: the learning rate still rising at
    its end. A run under TRIAL_STEPS is a try of the set-up, left alone."""
    if not TRIAL_STEPS <= total_steps <= training.warmup_steps:
        return []
    shorter = total_steps // 10
    return [
        Finding(
            id="warmup-past-the-end",
            severity="warning",
            message=f"training.warmup_steps ({training.warmup_steps}) is not below {ends}: the learning rate is "
            f"still rising when the run ends and never reaches training.learning_rate; set "
            f"training.warmup_steps to {shorter} (a tenth of the run)",
            fix=_set("training.warmup_steps", shorter),
        )
    ]


def _mixed_precision(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    training = loaded.config.training
    if not training.mixed_precision:
        return
    capable = [gpu for gpu in machine.gpus if gpu.supports_mixed_float16]
    if not capable and loaded.config.devices.logical_cpu_devices == 0:
        if training.mixed_precision is True:  # auto is off here already
            yield Finding(
                id="mixed-precision-without-gpu",
                severity="warning",
                message="training.mixed_precision is true but no GPU of compute capability >= 7.0 is visible"
                f"{_why_no_gpu(machine)}: 16-bit math is slower on CPUs and older GPUs; set it to auto, off here "
                "and on for a GPU that has it",
                fix=_set("training.mixed_precision", "auto"),
            )
        return
    if training.mixed_precision == "auto" and not capable:  # off: a CPU twin (logical devices) trains float32
        return
    if training.mixed_precision_dtype == "bfloat16" and capable and not any(g.supports_bfloat16 for g in capable):
        yield Finding(
            id="bfloat16-unsupported",
            severity="warning",
            message="training.mixed_precision_dtype is bfloat16 but no visible GPU has compute capability "
            ">= 8.0; use float16",
            fix=_set("training.mixed_precision_dtype", "float16"),
        )
    batch = loaded.config.data.batch_size
    if batch % 8:
        better = max(8, int(round(batch / 8)) * 8)
        yield Finding(
            id="batch-not-multiple-of-8",
            severity="warning",
            message=f"data.batch_size is {batch}: under mixed precision tensor cores want multiples of 8; "
            f"set it to {better}",
            fix=_set("data.batch_size", better),
        )


def _small_batch(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    config = loaded.config
    batch = config.data.batch_size
    if not machine.gpus or batch > SMALL_GPU_BATCH:
        return
    if config.training.mixed_precision and batch % 8 and any(g.supports_mixed_float16 for g in machine.gpus):
        return  # batch-not-multiple-of-8 says it, with its own value
    default = type(config.data).model_fields["batch_size"].default
    yield Finding(
        id="small-batch",
        severity="warning",
        message=f"data.batch_size is {batch} per GPU: each step is a few small kernels the host launches one by one, "
        f"and the card idles between them; set it to {default} (if {batch} was for memory, `xtts benchmark` finds "
        "the largest that fits)",
        fix=_set("data.batch_size", default),
    )


def _split_layout(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    """Whether the data-GPU / model-GPU split earns its second card: the split gives the data card
    only each batch's mel computation, a fraction of a step, and makes a cache or store keep audio
    for it (3.2x the bytes of mels) where one card or two replicas keep the mels themselves; so
    two equal cards train faster as two replicas. A small card beside a big one computing features
    on the fly is where it pays."""
    devices, data = loaded.config.devices, loaded.config.data
    if devices.data_gpu is None or devices.model_gpu is None or devices.data_gpu == devices.model_gpu:
        return
    cards = {gpu.index: gpu for gpu in machine.gpus}
    feeder, model = cards.get(devices.data_gpu), cards.get(devices.model_gpu)
    if feeder is None or model is None:
        return  # device-not-found says so
    layout = "remove devices.data_gpu and devices.model_gpu and set devices.strategy: mirrored"
    if data.preprocessing_mode in ("cache", "precompute"):
        yield Finding(
            id="split-idle-data-card",
            severity="warning",
            message=f"devices.data_gpu {feeder.index} ({feeder.name}) idles most of each step: the split gives it "
            f"only each batch's mel computation, and makes data.preprocessing_mode {data.preprocessing_mode} keep "
            f"audio for it (3.2x the bytes of mels) where two replicas would keep the mels once; two cards train "
            f"faster as two replicas: {layout}",
        )
    elif feeder.name == model.name and feeder.memory_total_mib == model.memory_total_mib:
        yield Finding(
            id="split-equal-cards",
            severity="info",
            message=f"GPUs {feeder.index} and {model.index} are both {model.name}: the split gives the data card "
            f"only the mel computation, a fraction of a step, so two equal cards are usually faster as two "
            f"replicas ({layout}); `xtts benchmark` times both on this machine",
        )


def _cluster(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    """`multi_worker` with no cluster here: `xtts train` refuses it without --worker-hosts (a warning:
    the machine that trains may set TF_CONFIG); a TF_CONFIG set here that does not parse, an error. A
    cluster TF_CONFIG names under another strategy, an error: training refuses it."""
    import os

    from xtts_cli.devices.placement import (
        budget_on_a_cluster,
        cluster_from_environment,
        cluster_left_out,
        unresolved_hosts,
        unresolved_note,
    )
    from xtts_cli.errors import XttsError

    left_out = cluster_left_out(loaded.config.devices, os.environ)
    if left_out is not None:
        yield Finding(id="multi-worker-cluster", severity="error", message=f"{left_out.lines[0]}; {left_out.hint}")
    if loaded.config.devices.strategy != "multi_worker":
        return
    budgeted = budget_on_a_cluster(loaded.config)  # train refuses it once every worker has started
    if budgeted is not None:
        yield Finding(id="multi-worker-time-budget", severity="error", message=f"{budgeted.lines[0]}; {budgeted.hint}")
    try:
        cluster = cluster_from_environment(os.environ)
    except XttsError as error:
        unset = not os.environ.get("TF_CONFIG", "").strip()
        yield Finding(
            id="multi-worker-cluster",
            severity="warning" if unset else "error",
            message=f"{error.lines[0]}; {error.hint}",
        )
        return
    unknown = unresolved_hosts(cluster.tasks)  # a warning: a scheduler may name a worker before it starts
    if unknown:
        yield Finding(id="multi-worker-host", severity="warning", message=unresolved_note(unknown))


def _unused_limit(message: str, fix: Optional[ConfigChange] = None) -> Finding:
    """A GPU memory limit that does nothing as the devices are set (train says so as it starts)."""
    return Finding(id="memory-limit-without-split", severity="warning", message=message, fix=fix)


def _isolation_on_cpu(limits: list[str]) -> Finding:
    capped = f" and {', '.join(limits)}" if limits else ""
    return Finding(
        id="memory-isolation-on-cpu",
        severity="info",
        message=f"devices.enable_memory_isolation{capped} {'cap' if limits else 'caps'} each GPU's memory: on logical CPU devices "
        "(devices.logical_cpu_devices) they have no effect; on GPUs they will",
    )


def _how_to_remove_devices(loaded: LoadedConfig) -> str:
    """Where data_gpu/model_gpu came from, to leave them out there: a flag's value, a --set's, the file's."""
    given = {f"devices.{key}" for key in ("data_gpu", "model_gpu")} & loaded.overridden
    if given and given <= loaded.set_keys:
        return "leave out --set devices.data_gpu/model_gpu"
    return "leave out --data-gpu/--model-gpu" if given else "remove data_gpu/model_gpu"


def _thread_counts(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    """A TF_NUM_*_THREADS variable that is no count: train refuses it as it starts (validate had said valid)."""
    from xtts_cli.errors import XttsError
    from xtts_cli.host import plan_threads

    try:
        plan_threads()
    except XttsError as error:
        yield Finding(id="thread-count", severity="error", message=f"{error.lines[0]}; {error.hint}")


def _devices(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    devices = loaded.config.devices
    if devices.strategy == "mirrored" and not machine.gpus and not devices.logical_cpu_devices:
        why = _why_no_gpu(machine)
        yield Finding(
            id="mirrored-without-gpus",
            severity="info",
            message=f"devices.strategy is mirrored and no GPU is visible{why}: it trains one replica on the CPU; "
            "set it to auto, or devices.logical_cpu_devices: 2 to try the mirrored layout on the CPU",
        )
    limits = [f"devices.{name}" for name in ("data_gpu_memory", "model_gpu_memory") if getattr(devices, name)]
    if devices.data_gpu is None or devices.model_gpu is None:
        if devices.enable_memory_isolation:
            yield Finding(
                id="memory-isolation-without-split",
                severity="warning",
                message="devices.enable_memory_isolation is true but devices.data_gpu/model_gpu are not set: "
                "there is nothing to isolate; set it to false or set both devices",
                fix=_set("devices.enable_memory_isolation", False),
            )
        if limits:  # --data-gpu-memory alone: train says so as it starts, validate had said valid
            yield _unused_limit(
                f"{', '.join(limits)} limits a card of a data/model split, and devices.data_gpu/model_gpu are not "
                "set: it has no effect; set both devices (--data-gpu / --model-gpu), or leave it out"
            )
        return
    if devices.data_gpu == devices.model_gpu and devices.enable_memory_isolation:
        yield Finding(
            id="same-device-memory-isolation",
            severity="warning",
            message=f"devices.data_gpu and devices.model_gpu are both {devices.data_gpu} with memory isolation "
            "on: two memory limits on one card only split it; set enable_memory_isolation to false",
            fix=_set("devices.enable_memory_isolation", False),
        )
    yield from _devices_not_found(loaded, machine)
    if not devices.enable_memory_isolation:
        if limits:
            yield _unused_limit(
                f"{', '.join(limits)}: no effect without devices.enable_memory_isolation (--enable-memory-isolation); "
                "set it to true, or leave the limit out",
                _set("devices.enable_memory_isolation", True),
            )
        return
    if devices.logical_cpu_devices:  # the CPU twin of the split: one host memory, no card to cap
        yield _isolation_on_cpu(limits)
        return
    by_index = {gpu.index: gpu for gpu in machine.gpus}
    for name in ("data_gpu", "model_gpu"):
        limit = getattr(devices, f"{name}_memory")
        gpu = by_index.get(getattr(devices, name))
        if limit is None or gpu is None:
            continue
        if limit > gpu.memory_total_mib:
            # Leave room for the CUDA context and cuDNN workspaces.
            safe = int(gpu.memory_total_mib * 0.9)
            yield Finding(
                id="memory-limit-above-card",
                severity="error",
                message=f"devices.{name}_memory is {limit} MiB but GPU {gpu.index} ({gpu.name}) has "
                f"{gpu.memory_total_mib} MiB; set it to at most {safe}",
                fix=_set(f"devices.{name}_memory", safe),
            )


def _devices_not_found(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    """device-not-found: a data_gpu or model_gpu past the devices this machine has."""
    devices = loaded.config.devices
    if devices.logical_cpu_devices:
        count, kind = devices.logical_cpu_devices, "logical CPU devices (devices.logical_cpu_devices)"
    elif machine.gpus or machine.gpu_facts_known:
        count, kind = len(machine.gpus), "GPUs"
    else:
        count, kind = 0, f"GPUs ({machine.gpu_unavailable_reason})"
    for name in ("data_gpu", "model_gpu"):
        index = getattr(devices, name)
        if index >= count:
            available = f"indices 0-{count - 1}" if count else "none"
            remove = _how_to_remove_devices(loaded)
            # As train's own error says it: the split's CPU twin, where no GPU is there to pick.
            twin = (
                ""
                if devices.logical_cpu_devices or machine.gpus
                else "; on a machine without GPUs, devices.logical_cpu_devices: 2 runs the same split on CPU"
            )
            yield Finding(
                id="device-not-found",
                severity="error",
                message=f"devices.{name} is {index} but this machine has {count} {kind}: available {available}; "
                f"pick an existing index, or {remove} to use one device{twin}",
            )


def _no_effect_keys(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    for key, why in no_effect_keys().items():
        # Written null, as a run's own config.yaml writes every key: it says nothing to remove.
        if loaded.written(key) and loaded.raw_value(key) is not None:
            yield Finding(
                id="no-effect-key",
                severity="info",
                message=f"{key} has no effect in TensorFlow ({why}); remove it",
                fix=ConfigChange(key=key, action="remove"),
            )


def _decoder_keys(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    """A key the config's model kind does not read (the kind lists them beside its code)."""
    from xtts_cli.kinds import kind_for, kind_name

    kind = kind_for(loaded.config)
    for key in kind.ignored_keys:
        if loaded.written(key):
            yield Finding(
                id="autoregressive-key",
                severity="info",
                message=f"{key} is not a setting of the {kind_name(loaded.config)} model kind and does nothing "
                "with it; remove it",
                fix=ConfigChange(key=key, action="remove"),
            )


def _left_out_part_keys(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    """Keys of an optional part the config leaves out (a vocoder's discriminators without
    model.adversarial_start_step), set to other than their defaults: they had trained nothing, unsaid."""
    model = loaded.config.model
    for part, switch in model.OPTIONAL_PARTS.items():
        if getattr(model, switch) is not None:
            continue
        fields = type(model).model_fields
        unused = [
            f"model.{key}"
            for key in model.PART_KEYS.get(part, ())
            if (loaded.written(f"model.{key}") or f"model.{key}" in loaded.overridden)
            and getattr(model, key) != fields[key].get_default(call_default_factory=True)
        ]
        if unused:
            yield Finding(
                id="left-out-part-key",
                severity="info",
                message=f"{', '.join(unused)} {'is' if len(unused) == 1 else 'are'} set, but model.{switch} is "
                f"empty: the model has no {part}, so {'it does' if len(unused) == 1 else 'they do'} nothing; set "
                f"model.{switch} to the step the {part} start from, or remove {'it' if len(unused) == 1 else 'them'}",
            )


def _other_kind_keys(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    """Keys of another model kind's section an older config carried (`loading.MOVED`)."""
    for key in loaded.left_out:
        yield Finding(
            id="other-kind-key",
            severity="info",
            message=f"{key} belongs to another model kind than this config's ({loaded.config.model.kind}): it "
            "had no effect and is left out; remove it",
            fix=ConfigChange(key=key, action="remove"),
        )


def _languages(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    """Every dataset's language is one espeak-ng speaks: with the phoneme front end it must be; with
    letters a code it does not know is most likely a typo ("eng"), which trains all the same but
    reads no number, date or abbreviation as words."""
    data = loaded.config.data
    from xtts_cli.data.phonemes import espeak_language
    from xtts_cli.errors import DiskFullError, XttsError

    where = {d.language or data.language: f"data.datasets[{i}].language" for i, d in enumerate(data.datasets)}
    for language in data.languages:
        try:
            espeak_language(language, where=where.get(language, "data.language"))
        except DiskFullError:
            if data.text_frontend == "phonemes":
                raise
            return  # letters need no espeak-ng: only the check for a typo is left out
        except XttsError as error:
            if data.text_frontend == "phonemes":
                yield Finding(id="language-unknown", severity="error", message=f"{error.lines[0]} ({error.hint})")
            else:
                close = error.lines[0].partition("; did you mean ")[2].rstrip("?")
                yield Finding(
                    id="language-unknown",
                    severity="warning",
                    message=f"{where.get(language, 'data.language')} {language!r} is no language espeak-ng knows: "
                    "it trains on the letters all the same, but its language's own reading (numbers, dates and "
                    "abbreviations as words, its script's normalisation) may not apply; use an espeak-ng code "
                    + (f"(did you mean {close}?)" if close else "(en, de, fa, pt-br, ...)"),
                )


def no_effect_keys() -> dict[str, str]:
    """Keys accepted so old configs load but meaning nothing in TensorFlow: dotted key -> why."""
    found = {}
    for section, fields in section_fields().items():
        for key, info in fields.items():
            extra = info.json_schema_extra
            if isinstance(extra, dict) and "no_effect" in extra:
                found[f"{section}.{key}"] = str(extra["no_effect"])
    return found


DATASET_PATH_FINDINGS = ("dataset-missing", "dataset-layout-unknown", "metadata-missing", "dataset-twice")


def nothing_to_scan(findings: Iterable[Finding]) -> bool:
    """A dataset missing, or a language espeak-ng lacks: the scan would only say it again, as a second
    error of one cause (`validate` and `diagnose`)."""
    return any(f.id in DATASET_PATH_FINDINGS or (f.id, f.severity) == ("language-unknown", "error") for f in findings)


def _dataset(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    """Each dataset folder exists and holds a layout we read (the cheap part; the scan does the rest)."""
    from xtts_cli.data.layouts import detect_format
    from xtts_cli.data.scan import dataset_sources, listing, twice
    from xtts_cli.errors import XttsError

    data = loaded.config.data
    if not data.datasets and data.dataset_path is None:
        return  # the bundled sample
    seen: dict[tuple[Path, str], str] = {}
    for source in dataset_sources(data):
        if listing(source, data) in seen:
            yield Finding(id="dataset-twice", severity="error", message=twice(source, seen[listing(source, data)]))
            continue
        seen[listing(source, data)] = source.key
        path = data.dataset_path if source.key == "data.dataset_path" else data.datasets[_index(source.key)].path
        if not source.root.is_dir():
            # A file (its metadata.csv) is in the folder to point at; a path that is not there is neither.
            what = "is a file, not the dataset's folder" if source.root.exists() else "does not exist"
            fix = (
                f"point it at the folder that holds it, {source.root.parent}"
                if source.root.is_file()
                else (
                    "point it at your dataset, or leave it empty for the bundled sample"
                    if source.key == "data.dataset_path"
                    else "point it at that dataset's folder, or remove the entry"
                )
            )
            yield Finding(
                id="dataset-missing",
                severity="error",
                message=f"{source.key} {path!r} {what}{'' if source.root.exists() else relative_to_here(path)}; {fix}",
            )
            continue
        own = data.model_copy(update={"metadata_train_file": source.metadata_train_file or data.metadata_train_file})
        fmt = source.format
        if fmt == "auto":
            try:
                fmt = detect_format(source.root, own)
            except XttsError as error:
                yield Finding(
                    id="dataset-layout-unknown",
                    severity="error",
                    message=source.scoped(f"{error.lines[0]}; {error.hint}" if error.hint else error.lines[0]),
                )
                continue
        metadata = (
            ("metadata_train_file", "metadata_eval_file")
            if fmt in ("ljspeech", "coqui", "manifest")
            else (("metadata_eval_file",) if fmt == "nemo" else ())
        )
        for name_key in metadata:
            name = getattr(own, name_key)
            if name is not None and not (source.root / name).is_file():
                yield Finding(
                    id="metadata-missing",
                    severity="error",
                    message=source.scoped(
                        f"data.{name_key} {name!r} not found in {str(source.root)!r}; name the metadata file that is there"
                    ),
                )
        # One dataset's own validation manifest (data.metadata_eval_file is every dataset's), where
        # validation clips are split off its training manifest.
        single = len(dataset_sources(data)) == 1 and data.eval_dataset_path is None and data.eval_fraction > 0
        if fmt == "nemo" and own.metadata_eval_file is None and single:
            yield from _manifests_unread(source, own)


def _manifests_unread(source, data) -> Iterable[Finding]:
    """NeMo's train / validation / test manifests in one folder: training reads the one named for
    training, and validation splits its clips off it; the validation manifest is read only when named."""
    from xtts_cli.data.layouts import nemo_manifests_unread

    picked = nemo_manifests_unread(source.root, data)
    if picked is None:
        return
    train, others = picked
    held_out = next((p for p in others if any(w in p.name.lower() for w in ("val", "dev", "eval"))), None)
    fix = (
        f"set data.metadata_eval_file: {held_out.name} to validate on its clips"
        if held_out is not None
        else "set data.metadata_eval_file to the one to validate on"
    )
    yield Finding(
        id="dataset-manifests-unread",
        severity="warning",
        message=source.scoped(
            f"{str(source.root)!r} holds {len(others) + 1} NeMo manifests: training reads {train.name}; "
            f"{' and '.join(p.name for p in others)} {'is' if len(others) == 1 else 'are'} not read, and validation "
            f"clips are split off {train.name}; {fix}"
        ),
    )


def _data_flag_over_datasets(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    """`--data DIR` over a config that lists `data.datasets`: it stands for the whole list, said so."""
    data = loaded.raw.get("data")
    listed = data.get("datasets") if isinstance(data, dict) else None
    if listed and "data.dataset_path" in loaded.overridden and loaded.config.data.dataset_path:
        path = loaded.config.data.dataset_path
        given, flag = (
            (f"--set data.dataset_path={path}", "--set data.dataset_path")
            if "data.dataset_path" in loaded.set_keys
            else (f"--data {path}", "--data")
        )
        yield Finding(
            id="data-flag-over-datasets",
            severity="info",
            message=f"{given} stands for the config's {len(listed)} dataset(s) (data.datasets): only it is read, "
            f"in data.language {loaded.config.data.language}; leave {flag} out to read the config's",
        )


def _index(key: str) -> int:
    """2 of `data.datasets[2].path`."""
    return int(key[key.index("[") + 1 : key.index("]")])


def _numeric_annotation(annotation: Any) -> Optional[type]:
    """float or int when a field takes a number (possibly Optional, or a number-or-'auto')."""
    options = typing.get_args(annotation) or (annotation,)
    if float in options:
        return float
    if int in options:
        return int
    return None


def _parse_number(text: str, kind: type) -> Optional[float | int]:
    """The number xtts reads `text` as where a `kind` is asked for (None: refused, or not a number): an int
    field takes integer text alone ('1000', not '1e3', which the schema's error names)."""
    if kind is int:
        try:
            return int(text.strip())
        except ValueError:
            return None
    try:
        number = float(text.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _why_text(value: str) -> str:
    if "e" in value.lower() and "." not in value:
        return " (YAML 1.1 loaders such as PyYAML read exponents without a dot, like 1e-4, as text)"
    return ""


def string_number_findings(raw: dict[str, Any]) -> list[Finding]:
    """Numbers written as strings (`learning_rate: 1e-4` is a string to YAML 1.1 loaders).

    Works on the raw file values, so it also runs when the config has schema errors.
    """
    findings = []
    for section, fields in section_fields().items():
        body = raw.get(section)
        if not isinstance(body, dict):
            continue
        for key, value in body.items():
            info = fields.get(key)
            if info is None or not isinstance(value, str) or value.strip().lower() == "auto":
                continue
            kind = _numeric_annotation(info.annotation)
            if kind is None:
                continue
            number = _parse_number(value, kind)
            if number is None:
                continue
            findings.append(
                Finding(
                    id="number-as-string",
                    severity="warning",
                    message=f"{section}.{key} is the string {value!r}, not a number{_why_text(value)}; "
                    f"xtts reads it as {number!r}, write {yaml_scalar(number)} so every tool does",
                    fix=_set(f"{section}.{key}", number),
                )
            )
    return findings + _dataset_string_numbers(raw)


def _dataset_string_numbers(raw: dict[str, Any]) -> list[Finding]:
    """`string_number_findings` of each `data.datasets` entry (a weight written '2'); no fix: the
    editor sets a section's keys, not a list item's."""
    from xtts_cli.config.schema import DatasetSource

    data = raw.get("data")
    datasets = data.get("datasets") if isinstance(data, dict) else None
    findings = []
    for index, dataset in enumerate(datasets if isinstance(datasets, list) else []):
        for key, value in dataset.items() if isinstance(dataset, dict) else ():
            info = DatasetSource.model_fields.get(key)
            kind = _numeric_annotation(info.annotation) if info is not None else None
            number = _parse_number(value, kind) if kind is not None and isinstance(value, str) else None
            if number is not None:
                findings.append(
                    Finding(
                        id="number-as-string",
                        severity="warning",
                        message=f"data.datasets[{index}].{key} is the string {value!r}, not a number"
                        f"{_why_text(value)}; xtts reads it as {number!r}, write {yaml_scalar(number)} so every tool does",
                    )
                )
    return findings


def _string_numbers(loaded: LoadedConfig, machine: MachineInfo) -> Iterable[Finding]:
    return string_number_findings(loaded.raw)


RULES: tuple[Rule, ...] = (
    _dataset,
    _data_flag_over_datasets,
    _languages,
    _cluster,
    _thread_counts,
    _devices,
    _graph_mode,
    _xla,
    _tf_native,
    _data_service,
    _prefetch,
    _parallelism,
    _static_shapes,
    _mel_frames,
    _frozen_from_zero,
    _warmup_past_the_end,
    _never_reached,
    _mixed_precision,
    _small_batch,
    _split_layout,
    _no_effect_keys,
    _decoder_keys,
    _left_out_part_keys,
    _other_kind_keys,
    _string_numbers,
)


def check_config(loaded: LoadedConfig, machine: MachineInfo) -> list[Finding]:
    """Every rule's findings, errors first."""
    findings: list[Finding] = []
    for rule in RULES:
        findings.extend(rule(loaded, machine))
    return sort_findings(findings)
