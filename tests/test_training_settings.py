"""Settings worked out once from the config and the device plan, and config variants that are
validated like a file. Plain Python: the plans are built as the device planner returns them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from xtts_cli.config.loading import config_variant, data_variant
from xtts_cli.config.schema import XttsConfig
from xtts_cli.devices.placement import DevicePlan
from xtts_cli.errors import ConfigError
from xtts_cli.training.settings import graph_mode, resolve_settings, xla_enabled

ONE_GPU = DevicePlan(kind="single", data_device=None, model_device="/GPU:0", device_type="GPU")
SPLIT_GPUS = DevicePlan(kind="split", data_device="/GPU:0", model_device="/GPU:1", device_type="GPU")
TWO_REPLICAS = DevicePlan(
    kind="mirrored", data_device=None, model_device="/GPU:0", replica_devices=("/GPU:0", "/GPU:1"), device_type="GPU"
)
CPU = DevicePlan(kind="single", data_device=None, model_device="/CPU:0", device_type="CPU")


def _config(**training) -> XttsConfig:
    return XttsConfig.model_validate({"training": training})


def test_graph_mode_and_xla_auto_follow_the_model_device() -> None:
    assert graph_mode(_config().training)
    assert not graph_mode(_config(enable_eager_debug=True).training)
    assert not graph_mode(_config(enable_graph_mode=False).training)
    auto = _config(enable_xla_compilation="auto").training
    assert xla_enabled(auto, "GPU") and not xla_enabled(auto, "CPU")
    # auto weighs the compile against the planned length: a short run skips it, a CPU always does.
    assert not xla_enabled(_config(enable_xla_compilation="auto", max_steps=999).training, "GPU")
    assert not xla_enabled(_config(enable_xla_compilation="auto", max_minutes=5).training, "GPU")
    assert xla_enabled(_config(enable_xla_compilation="auto", max_steps=1000, max_minutes=30).training, "GPU")
    assert not xla_enabled(_config(enable_xla_compilation="auto", max_steps=10**6).training, "CPU")
    assert xla_enabled(_config(enable_xla_compilation=True).training, "CPU")
    assert not xla_enabled(_config(enable_xla_compilation=True, enable_eager_debug=True).training, "GPU")
    assert not xla_enabled(_config(enable_xla_compilation=False).training, "GPU")


def test_resolved_settings_per_device_plan() -> None:
    config = XttsConfig.model_validate(
        {"data": {"batch_size": 12}, "training": {"enable_xla_compilation": "auto", "max_steps": 5000}}
    )
    one = resolve_settings(config, ONE_GPU)
    assert (one.xla, one.replicas, one.global_batch_size, one.prefetch_device) == (True, 1, 12, "/GPU:0")
    assert one.pipeline_output == "mel" and one.dtype_policy == "float32" and not one.mixed_precision
    split = resolve_settings(config, SPLIT_GPUS)
    assert split.pipeline_output == "audio" and split.prefetch_device == "/GPU:0"
    mirrored = resolve_settings(config, TWO_REPLICAS)
    assert (mirrored.replicas, mirrored.per_replica_batch_size, mirrored.global_batch_size) == (2, 12, 24)
    assert mirrored.prefetch_device is None  # the strategy distributes the batches
    cpu = resolve_settings(config, CPU)
    assert not cpu.xla and cpu.prefetch_device is None
    assert cpu.total_steps(steps_per_epoch=7) == 5000
    by_epochs = XttsConfig.model_validate({"training": {"epochs": 3}})
    assert resolve_settings(by_epochs, CPU).total_steps(steps_per_epoch=7) == 21
    # The first of the two ends the run, and the schedule is laid over it: not 300 steps that never run.
    both = XttsConfig.model_validate({"training": {"epochs": 3, "max_steps": 300}})
    assert resolve_settings(both, CPU).total_steps(steps_per_epoch=7) == 21
    assert resolve_settings(both, CPU).total_steps(steps_per_epoch=200) == 300
    bf16 = XttsConfig.model_validate({"training": {"mixed_precision": True, "mixed_precision_dtype": "bfloat16"}})
    assert resolve_settings(bf16, ONE_GPU).dtype_policy == "mixed_bfloat16"


def test_mixed_precision_auto_is_on_where_each_gpu_has_the_tensor_cores_and_off_on_a_cpu() -> None:
    from xtts_cli.devices.gpu_info import GpuInfo

    a4090, a_t4, a_p100 = (
        GpuInfo(0, "RTX 4090", 24564, (8, 9)),
        GpuInfo(0, "T4", 15360, (7, 5)),
        GpuInfo(0, "P100", 16280, (6, 0)),
    )

    def policy(plan: DevicePlan, gpus: tuple, dtype: str = "float16") -> str:
        config = XttsConfig.model_validate({"training": {"mixed_precision": "auto", "mixed_precision_dtype": dtype}})
        return resolve_settings(config, replace(plan, gpus=gpus)).dtype_policy

    assert policy(ONE_GPU, (a4090,)) == "mixed_float16" and policy(ONE_GPU, (a4090,), "bfloat16") == "mixed_bfloat16"
    assert policy(ONE_GPU, (a_t4,)) == "mixed_float16" and policy(ONE_GPU, (a_t4,), "bfloat16") == "float32"
    assert policy(TWO_REPLICAS, (a4090, a_p100)) == "float32"  # a replica without tensor cores holds the step back
    assert policy(ONE_GPU, ()) == "float32"  # NVML unread: capability unknown
    assert policy(CPU, ()) == "float32" and policy(CPU, (a4090,)) == "float32"  # a CPU twin of a GPU machine
    config = XttsConfig.model_validate({"training": {"mixed_precision": "auto"}})
    assert config.training.mixed_precision == "auto"


def test_config_variants_are_validated_like_a_file() -> None:
    config = XttsConfig.model_validate({"data": {"batch_size": 8}})
    variant = config_variant(config, {"data.batch_size": 32, "training.max_steps": 5})
    assert (variant.data.batch_size, variant.training.max_steps) == (32, 5)
    assert config.data.batch_size == 8  # the original is untouched
    assert data_variant(config, preprocessing_mode="runtime").data.preprocessing_mode == "runtime"
    with pytest.raises(ConfigError, match=r"data\.batch_size: 0 is invalid"):
        data_variant(config, batch_size=0)
    with pytest.raises(ConfigError, match="unknown key"):
        config_variant(config, {"data.batch_sise": 4})


def test_the_config_names_its_model_kind_and_the_kind_says_what_the_pipeline_delivers() -> None:
    import importlib

    from xtts_cli.kinds import kind_for, registered

    duration = XttsConfig.model_validate({"model": {"decoder": "duration"}})
    vocoder = XttsConfig.model_validate({"model": {"kind": "vocoder"}})
    assert [kind_for(c).name for c in (XttsConfig(), duration, vocoder)] == ["autoregressive", "duration", "vocoder"]
    for name, entry in registered().items():  # every registry line names a kind of that name
        module, _, attribute = entry.partition(":")
        assert getattr(importlib.import_module(module), attribute).name == name
    assert kind_for(duration) is kind_for(duration)  # one object per kind, not one per call
    # The vocoder's step crops segments of the clips' audio; an acoustic step reads mels, computed
    # on the data device in a split (the vocoder's step computes its segments' mels itself).
    on_cpu = resolve_settings(vocoder, CPU)
    assert (on_cpu.kind, on_cpu.pipeline_output, on_cpu.featurize_on_data_device) == ("vocoder", "audio", False)
    assert not resolve_settings(vocoder, SPLIT_GPUS).featurize_on_data_device
    assert resolve_settings(duration, SPLIT_GPUS).featurize_on_data_device
    assert resolve_settings(XttsConfig(), TWO_REPLICAS).step_batch_size == 2 * XttsConfig().data.batch_size


def test_reading_an_acoustic_kind_does_not_import_tensorflow() -> None:
    """The registry imports a kind's module when a config names it: the vocoder's defines Keras
    networks, which `xtts validate` on an acoustic config must not pay for."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from xtts_cli.config.schema import XttsConfig\n"
        "from xtts_cli.kinds import kind_for\n"
        "for decoder in ('autoregressive', 'duration'):\n"
        "    kind_for(XttsConfig.model_validate({'model': {'decoder': decoder}})).reads\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras')))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_an_optimization_level_goes_under_the_users_own_settings() -> None:
    from xtts_cli.config.optimization_levels import apply_optimization_level, level_settings
    from xtts_cli.errors import ConfigError

    enhanced = apply_optimization_level(
        "enhanced", {"data.use_tf_native_loading": False, "data.batch_size": None}, False
    )
    assert enhanced["training.enable_xla_compilation"] == "auto" and enhanced["training.enable_graph_mode"] is True
    assert enhanced["data.use_tf_native_loading"] is False  # the user's flag wins
    assert "data.batch_size" not in enhanced  # a flag not given sets nothing
    assert "training.mixed_precision" not in level_settings("maximum", mixed_precision_gpu=False)
    assert level_settings("Maximum", mixed_precision_gpu=True)["training.mixed_precision"] is True
    with pytest.raises(ConfigError, match="--optimization-level 'fastest' is unknown; use one of: basic, enhanced"):
        level_settings("fastest", mixed_precision_gpu=False)

    # A --set is the user's own setting too: the level gives way, and the config reads the --set.
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.training.launch import launch_settings

    sets = ["training.enable_graph_mode=false"]
    overrides = launch_settings({}, "enhanced", None, None, sets)
    assert "training.enable_graph_mode" not in overrides and overrides["training.enable_xla_compilation"] == "auto"
    assert resolve_config("tiny-cpu", overrides, sets).config.training.enable_graph_mode is False


def test_the_split_featurizer_makes_the_mels_the_pipeline_makes() -> None:
    # The data/model split's CPU twin: audio batches featurized on the data device equal the
    # pipeline's own mel batches of the same clips (validation order is fixed).
    import numpy as np

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data.run_data import prepare
    from xtts_cli.training.featurize import make_featurizer

    config = XttsConfig(data={"batch_size": 2, "preprocessing_mode": "runtime"})
    mels = prepare(config, "mel")
    audio = prepare(config, "audio", scan=mels.scan, tokenizer=mels.tokenizer)
    featurize = make_featurizer(config.data, "/CPU:0")
    made = featurize(next(iter(audio.pipeline(training=False)[0])))
    expected = next(iter(mels.pipeline(training=False)[0]))
    assert made["mel_lengths"].numpy().tolist() == expected["mel_lengths"].numpy().tolist()
    frames = int(expected["mel_lengths"].numpy().max())
    np.testing.assert_allclose(made["mel"].numpy()[:, :frames], expected["mel"].numpy()[:, :frames], atol=2e-3)


def test_memory_settings_without_a_split_are_said_to_do_nothing() -> None:
    from xtts_cli.config.schema import DevicesConfig
    from xtts_cli.devices.placement import _unused_memory_settings

    alone = DevicesConfig(data_gpu_memory=10240, model_gpu_memory=20480, enable_memory_isolation=True)
    assert _unused_memory_settings(alone, split=False) == [
        "devices.data_gpu_memory, devices.model_gpu_memory, devices.enable_memory_isolation: no effect without a "
        "data/model split (devices.data_gpu and devices.model_gpu, --data-gpu / --model-gpu), which this run has not"
    ]
    split = DevicesConfig(data_gpu=0, model_gpu=1, data_gpu_memory=10240)
    assert _unused_memory_settings(split, split=True) == [
        "devices.data_gpu_memory: no effect without devices.enable_memory_isolation (--enable-memory-isolation)"
    ]
    isolated = DevicesConfig(data_gpu=0, model_gpu=1, data_gpu_memory=10240, enable_memory_isolation=True)
    assert _unused_memory_settings(isolated, split=True) == [] and _unused_memory_settings(DevicesConfig(), False) == []


def test_a_note_of_new_speakers_names_a_fourth_rather_than_one_more() -> None:
    # "speakers a, b, c and 1 more" had hidden a name it had room for.
    from types import SimpleNamespace

    from xtts_cli.data.plan import speakers_it_lacks as _unknown_speakers
    from xtts_cli.data.text import Tokenizer

    saved = Tokenizer.build(["the cat"], ["english_cleaners"], languages=["en"], speakers=["ann"])
    four = _unknown_speakers(saved, SimpleNamespace(speakers=["ann", "bo", "cy", "di", "ed"]))
    assert four.startswith("speakers bo, cy, di, ed of this data are not among the run's 1"), four
    five = _unknown_speakers(saved, SimpleNamespace(speakers=["bo", "cy", "di", "ed", "flo"]))
    assert five.startswith("speakers bo, cy, di and 2 more of this data"), five
