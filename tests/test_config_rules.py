"""Each config rule fires on the config that deserves it, with the fix that repairs it, and stays
quiet on the defaults. Machine facts are passed in: no NVIDIA driver can exist on a test machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from xtts_cli.config import resolve_config
from xtts_cli.devices.gpu_info import GpuInfo, MachineInfo
from xtts_cli.diagnosis.config_rules import check_config
from xtts_cli.errors import ConfigError

CPU_ONLY = MachineInfo(cpu_count=8, gpus=(), gpu_unavailable_reason="NVML could not start")
TWO_4090 = MachineInfo(
    cpu_count=32,
    gpus=(GpuInfo(0, "NVIDIA GeForce RTX 4090", 24564, (8, 9)), GpuInfo(1, "NVIDIA GeForce RTX 4090", 24564, (8, 9))),
)
OLD_GPU = MachineInfo(cpu_count=8, gpus=(GpuInfo(0, "Tesla P100", 16280, (6, 0)),))


def findings(write_config, text: str, machine: MachineInfo = CPU_ONLY) -> dict:
    return {f.id: f for f in check_config(resolve_config(write_config(text)), machine)}


def test_a_no_effect_key_written_null_as_a_runs_own_config_writes_it_is_not_named(write_config) -> None:
    assert "no-effect-key" not in findings(write_config, "data:\n  pin_memory: null\n")
    assert "no-effect-key" in findings(write_config, "data:\n  pin_memory: true\n")


def test_defaults_raise_nothing_on_any_machine(write_config) -> None:
    for machine in (CPU_ONLY, TWO_4090, OLD_GPU):
        assert findings(write_config, "", machine) == {}


def test_parallelism_fix_is_machine_aware(write_config) -> None:
    found = findings(write_config, "data:\n  num_workers: 4\n")
    assert "8 usable cores" in found["parallelism-below-cores"].message
    assert found["parallelism-below-cores"].fix.value == "auto"
    assert findings(write_config, "data:\n  num_workers: 8\n") == {}
    # Stored features are only read: fewer threads leave the step its CPU (diagnose's host-contention fix).
    assert findings(write_config, "data:\n  num_workers: 1\n  preprocessing_mode: cache\n") == {}
    assert "parallelism-below-cores" in findings(
        write_config, "data:\n  num_workers: 1\n  preprocessing_mode: runtime\n"
    )


def test_a_batch_of_one_or_two_on_a_gpu_is_named_and_on_a_cpu_is_not(write_config) -> None:
    small = findings(write_config, "data:\n  batch_size: 2\n", OLD_GPU)["small-batch"]
    assert "data.batch_size is 2 per GPU" in small.message and small.fix.value == 16
    assert "small-batch" not in findings(write_config, "data:\n  batch_size: 2\n")  # CPU only
    assert "small-batch" not in findings(write_config, "data:\n  batch_size: 8\n", OLD_GPU)
    # Under mixed precision on tensor cores the multiple-of-8 rule says it, with its own value.
    mixed = findings(write_config, "data:\n  batch_size: 2\ntraining:\n  mixed_precision: true\n", TWO_4090)
    assert "small-batch" not in mixed and mixed["batch-not-multiple-of-8"].fix.value == 8


@pytest.mark.parametrize(
    ("text", "rule", "key", "value"),
    [
        ("training:\n  enable_graph_mode: false\n", "graph-mode-off", "training.enable_graph_mode", True),
        ("training:\n  enable_eager_debug: true\n", "eager-debug-on", "training.enable_eager_debug", False),
        ("training:\n  enable_xla_compilation: false\n", "xla-off", "training.enable_xla_compilation", "auto"),
        ("training:\n  enable_xla_compilation: true\n", "xla-on-cpu", "training.enable_xla_compilation", "auto"),
        ("data:\n  use_tf_native_loading: false\n", "tf-native-loading-off", "data.use_tf_native_loading", True),
        ("data:\n  prefetch_buffer_size: 1\n", "prefetch-too-small", "data.prefetch_buffer_size", "auto"),
        ("data:\n  bucket_by_length: false\n", "variable-shapes", "data.bucket_by_length", True),
        ("data:\n  pad_to_fixed_length: true\n", "fixed-padding-over-buckets", "data.pad_to_fixed_length", False),
        ("data:\n  max_mel_frames: 400\n", "max-mel-frames-too-small", "data.max_mel_frames", 862),
        (
            "training:\n  max_steps: 40\n  val_step: 10\n  warmup_steps: 50\n",
            "warmup-past-the-end",
            "training.warmup_steps",
            4,
        ),
        ("training:\n  max_steps: 400\n  val_step: 1000\n", "validation-past-the-end", "training.val_step", 40),
        ("training:\n  mixed_precision: true\n", "mixed-precision-without-gpu", "training.mixed_precision", "auto"),
        ("data:\n  pin_memory: false\n", "no-effect-key", "data.pin_memory", None),
        ('data:\n  batch_size: "16"\n', "number-as-string", "data.batch_size", 16),
    ],
)
def test_rule_fires_with_its_fix(write_config, text, rule, key, value) -> None:
    found = findings(write_config, text)
    assert set(found) == {rule}
    assert found[rule].fix is not None and found[rule].fix.key == key
    assert found[rule].fix.value == value


def test_a_validation_past_the_end_is_a_warning_with_early_stopping_and_unsaid_in_a_trial(write_config) -> None:
    stopping = findings(write_config, "training:\n  max_steps: 40\n  val_step: 100\n  early_stop_patience: 2\n")
    assert stopping["validation-past-the-end"].severity == "warning"
    assert "training.early_stop_patience can never end it" in stopping["validation-past-the-end"].message
    assert findings(write_config, "training:\n  max_steps: 4\n  val_step: 20\n") == {}  # a try of the set-up
    # With early stopping too (adapt-cpu's, --steps 6): it had been warned of before every such try.
    assert findings(write_config, "training:\n  max_steps: 4\n  val_step: 20\n  early_stop_patience: 2\n") == {}
    assert findings(write_config, "training:\n  max_steps: 400\n  val_step: 400\n") == {}  # the last step validates
    # A run started from another validates its base before the first step: "never validates" was untrue.
    adapted = findings(write_config, "training:\n  max_steps: 400\n  val_step: 1000\n  init_from: base-run\n")
    assert adapted["validation-past-the-end"].message.startswith(
        "training.val_step (1000) is past training.max_steps (400): the run validates only its base's weights, "
        "before its first step, and nothing when resumed (no val_loss of what it trains)"
    )


def test_xla_is_asked_for_where_it_pays(write_config) -> None:
    assert findings(write_config, "training:\n  enable_xla_compilation: true\n", TWO_4090) == {}


def test_mixed_precision_on_capable_gpus(write_config) -> None:
    assert findings(write_config, "training:\n  mixed_precision: true\ndata:\n  batch_size: 32\n", TWO_4090) == {}
    found = findings(write_config, "training:\n  mixed_precision: true\ndata:\n  batch_size: 12\n", TWO_4090)
    assert set(found) == {"batch-not-multiple-of-8"} and found["batch-not-multiple-of-8"].fix.value == 16
    assert "mixed-precision-without-gpu" in findings(write_config, "training:\n  mixed_precision: true\n", OLD_GPU)
    # auto is the fix: off here, on for the GPU the file was written for, and no finding on either.
    assert findings(write_config, "training:\n  mixed_precision: auto\n", OLD_GPU) == {}
    assert findings(write_config, "training:\n  mixed_precision: auto\n") == {}
    found = findings(write_config, "training:\n  mixed_precision: auto\ndata:\n  batch_size: 12\n", TWO_4090)
    assert set(found) == {"batch-not-multiple-of-8"}
    # On a CPU twin of a GPU layout auto is off (float32): no tensor-core advice.
    twin = "training:\n  mixed_precision: auto\ndata:\n  batch_size: 12\ndevices:\n  logical_cpu_devices: 2\n"
    assert "batch-not-multiple-of-8" not in findings(write_config, twin)


def test_memory_limits_and_isolation(write_config) -> None:
    text = (
        "devices:\n  data_gpu: 0\n  model_gpu: 1\n  enable_memory_isolation: true\n"
        "  data_gpu_memory: 8192\n  model_gpu_memory: 30000\n"
    )
    found = findings(write_config, text, TWO_4090)
    assert set(found) == {"memory-limit-above-card", "split-equal-cards"}  # two equal cards: a note on the layout
    assert found["memory-limit-above-card"].severity == "error"
    assert found["memory-limit-above-card"].fix.value == int(24564 * 0.9)
    same = findings(
        write_config, "devices:\n  data_gpu: 1\n  model_gpu: 1\n  enable_memory_isolation: true\n", TWO_4090
    )
    assert set(same) == {"same-device-memory-isolation"}
    # A limit that does nothing (train said so as it started; validate had said valid): no split, no isolation.
    alone = findings(write_config, "devices:\n  data_gpu_memory: 4096\n", TWO_4090)
    assert set(alone) == {"memory-limit-without-split"} and alone["memory-limit-without-split"].fix is None
    unisolated = findings(
        write_config, "devices:\n  data_gpu: 0\n  model_gpu: 1\n  model_gpu_memory: 20000\n", TWO_4090
    )
    assert "memory-limit-without-split" in unisolated
    assert unisolated["memory-limit-without-split"].fix.key == "devices.enable_memory_isolation"
    # The split's CPU twin: the limits cap no card (it had been "valid, no findings").
    twin = findings(
        write_config,
        "devices:\n  logical_cpu_devices: 2\n  data_gpu: 0\n  model_gpu: 1\n  enable_memory_isolation: true\n"
        "  data_gpu_memory: 4096\n",
    )
    assert set(twin) == {"memory-isolation-on-cpu"}
    assert twin["memory-isolation-on-cpu"].message.startswith(
        "devices.enable_memory_isolation and devices.data_gpu_memory cap each GPU's memory: on logical CPU devices"
    )


def test_device_indices_are_checked_against_the_machine(write_config) -> None:
    found = findings(write_config, "devices:\n  data_gpu: 1\n  model_gpu: 2\n", TWO_4090)
    assert list(found) == ["device-not-found"] and "available indices 0-1" in found["device-not-found"].message
    assert found["device-not-found"].message.endswith("or remove data_gpu/model_gpu to use one device")
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.diagnosis.config_rules import check_config

    given = resolve_config(None, {}, ["devices.data_gpu=1", "devices.model_gpu=2"])
    (said,) = [f.message for f in check_config(given, TWO_4090) if f.id == "device-not-found"]
    assert said.endswith("or leave out --set devices.data_gpu/model_gpu to use one device")
    # The CPU twin: logical CPU devices stand in for GPUs.
    assert findings(write_config, "devices:\n  data_gpu: 0\n  model_gpu: 1\n  logical_cpu_devices: 2\n") == {}


def test_autoregressive_settings_with_the_duration_decoder_are_named(write_config) -> None:
    text = "model:\n  decoder: duration\n  prenet_dropout: 0.3\ntraining:\n  self_conditioning: true\n"
    found = check_config(resolve_config(write_config(text)), CPU_ONLY)
    assert sorted(f.fix.key for f in found if f.id == "autoregressive-key") == [
        "model.prenet_dropout",
        "model.self_conditioning",
    ]
    assert findings(write_config, "model:\n  reduction_factor: 4\ntraining:\n  self_conditioning: true\n") == {}


SMALL_AND_BIG = MachineInfo(
    cpu_count=16,
    gpus=(GpuInfo(0, "NVIDIA GeForce RTX 3060", 12288, (8, 6)), GpuInfo(1, "NVIDIA H100 80GB HBM3", 81559, (9, 0))),
)


@pytest.mark.parametrize(
    ("mode", "machine", "expected"),
    [
        ("cache", TWO_4090, "split-idle-data-card"),
        ("precompute", SMALL_AND_BIG, "split-idle-data-card"),
        ("runtime", TWO_4090, "split-equal-cards"),
        ("runtime", SMALL_AND_BIG, None),  # a small card computing features beside a big one: the split pays
    ],
)
def test_the_split_is_told_when_a_second_card_would_earn_more_as_a_replica(write_config, mode, machine, expected):
    text = f"data:\n  preprocessing_mode: {mode}\ndevices:\n  data_gpu: 0\n  model_gpu: 1\n"
    found = {key for key in findings(write_config, text, machine) if key.startswith("split-")}
    assert found == ({expected} if expected else set())
    if expected == "split-idle-data-card":
        message = findings(write_config, text, machine)[expected].message
        assert message.startswith("devices.data_gpu 0 (") and "devices.strategy: mirrored" in message
        assert f"makes data.preprocessing_mode {mode} keep audio" in message  # not "nothing to do": it makes mels


def test_an_older_configs_keys_of_the_other_model_kind_are_named_and_fixed(write_config) -> None:
    from xtts_cli.config.editing import apply_changes

    text = "model:\n  kind: vocoder\n  model_size: small\nvocoder:\n  dim: 64\ntraining:\n  self_conditioning: false\n"
    loaded = resolve_config(write_config(text))
    found = [f for f in check_config(loaded, CPU_ONLY) if f.id == "other-kind-key"]
    assert sorted(f.fix.key for f in found) == ["model.model_size", "training.self_conditioning"]
    fixed = apply_changes(loaded.text, [f.fix for f in found], loaded.sources)
    assert fixed == "model:\n  kind: vocoder\nvocoder:\n  dim: 64\n"  # a section left empty goes with its key
    assert resolve_config(write_config(fixed)).config.vocoder.dim == 64
    # An acoustic config's old vocoder section: the fix leaves no empty `vocoder:`, which would not load.
    acoustic = resolve_config(write_config("# mine\nvocoder:\n  dim: 64  # big\ntraining:\n  learning_rate: 0.001\n"))
    (finding,) = [f for f in check_config(acoustic, CPU_ONLY) if f.id == "other-kind-key"]
    fixed = apply_changes(acoustic.text, [finding.fix], acoustic.sources)
    assert fixed == "# mine\ntraining:\n  learning_rate: 0.001\n" and resolve_config(write_config(fixed))


def test_a_vocoders_discriminator_keys_without_its_discriminators_are_named_and_not_the_defaults(
    write_config,
) -> None:
    """Set on a vocoder that trains on the spectral losses alone, they had done nothing, unsaid."""
    spectral = (
        "model:\n  kind: vocoder\n  discriminator_channels: 4\n  adversarial_weight: 5\n  periods: [2, 3, 5, 7, 11]\n"
    )
    found = findings(write_config, spectral)["left-out-part-key"]
    assert found.severity == "info" and found.message.startswith(
        "model.adversarial_weight, model.discriminator_channels are set, but model.adversarial_start_step is empty: "
        "the model has no discriminators"
    )  # periods as the default is no setting: a run's own config.yaml writes every key
    assert "left-out-part-key" not in findings(write_config, spectral + "  adversarial_start_step: 100\n")
    flagged = check_config(
        resolve_config(None, sets=["model.kind=vocoder", "model.feature_matching_weight=3"]), CPU_ONLY
    )
    assert [f.message.split(" is set")[0] for f in flagged if f.id == "left-out-part-key"] == [
        "model.feature_matching_weight"
    ]


def test_a_datasets_weight_written_as_a_string_is_named_with_its_place() -> None:
    from xtts_cli.diagnosis.config_rules import string_number_findings

    raw = {"data": {"datasets": [{"path": "a", "weight": 2}, {"path": "b", "weight": "1e-1"}]}}
    (found,) = string_number_findings(raw)
    assert found.message.startswith("data.datasets[1].weight is the string '1e-1', not a number")
    assert "xtts reads it as 0.1, write 0.1" in found.message and found.fix is None


def test_data_over_a_list_of_datasets_says_it_stands_for_the_whole_list(write_config) -> None:
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.diagnosis.config_rules import check_config

    sample = Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample"
    path = write_config(f"data:\n  datasets:\n  - {{path: {sample}}}\n  - {{path: {sample}, language: fa}}\n")
    loaded = resolve_config(path, {"data.dataset_path": str(sample)})
    (said,) = [f for f in check_config(loaded, probe_machine()) if f.id == "data-flag-over-datasets"]
    assert said.message.startswith(f"--data {sample} stands for the config's 2 dataset(s) (data.datasets)")
    # Given by --set, the message names --set, not a flag that was never passed.
    by_set = resolve_config(path, sets=[f"data.dataset_path={sample}"])
    (said,) = [f for f in check_config(by_set, probe_machine()) if f.id == "data-flag-over-datasets"]
    assert said.message.startswith(f"--set data.dataset_path={sample} stands for the config's 2 dataset(s)")
    assert said.message.endswith("leave --set data.dataset_path out to read the config's")
    assert [
        f.id for f in check_config(resolve_config(path), probe_machine()) if f.id == "data-flag-over-datasets"
    ] == []
    # Training says it as it starts (only validate had, and train read the one folder without a word).
    from xtts_cli.diagnosis.validation import training_advice

    assert ("note", f"data-flag-over-datasets: {said.message}") in training_advice(by_set)[0]


def test_parts_frozen_with_no_run_to_start_from_are_a_warning(write_config) -> None:
    found = findings(write_config, "training:\n  freeze: [speaker_encoder]\n")
    assert found["freeze-without-base"].severity == "warning" and found["freeze-without-base"].fix is None
    assert "keeps speaker_encoder as they start" in found["freeze-without-base"].message
    base = Path(__file__).parent / "data" / "run_before_run_data"
    assert "freeze-without-base" not in findings(
        write_config, f"training:\n  freeze: [speaker_encoder]\n  init_from: {base}\n"
    )
    # A resume (its run has a checkpoint): the frozen parts hold what it holds, not random weights.
    assert "freeze-without-base" not in findings(
        write_config, f"training:\n  freeze: [speaker_encoder]\n  run_dir: {base}\n"
    )


def test_a_whole_number_written_with_an_exponent_is_an_error_naming_the_number_not_a_warning(write_config) -> None:
    """`epochs: 1e3` (text to YAML 1.1) had an error ("should be a valid integer") beside a warning
    that xtts read it as 1000, and --fix refused: an int field takes integer text alone."""
    from xtts_cli.diagnosis.config_rules import string_number_findings

    assert string_number_findings({"training": {"epochs": "1e3", "max_steps": "20"}})[0].message.startswith(
        "training.max_steps is the string '20'"
    )
    assert len(string_number_findings({"training": {"epochs": "1e3"}})) == 0
    with pytest.raises(ConfigError) as caught:
        resolve_config(write_config("training:\n  epochs: 1e3\n"))
    assert caught.value.lines[0] == (
        "training.epochs: '1e3' is invalid: should be a valid integer, unable to parse string as an integer; "
        "write 1000 (YAML 1.1 loaders such as PyYAML read 1e3 as text)"
    )


def test_a_cluster_tf_config_names_under_another_strategy_is_an_error(write_config, monkeypatch) -> None:
    two = '{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 0}}'
    monkeypatch.setenv("TF_CONFIG", two)
    found = findings(write_config, "devices:\n  strategy: single\n")["multi-worker-cluster"]
    assert found.severity == "error" and found.message.startswith(
        "TF_CONFIG names a cluster of 2 workers (a:1, b:2) but devices.strategy is single, which trains on this "
        "machine alone; set devices.strategy: multi_worker"
    )
    assert "multi-worker-cluster" not in findings(write_config, "devices:\n  strategy: multi_worker\n")
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}}')
    assert "multi-worker-cluster" not in findings(write_config, "devices:\n  strategy: auto\n")  # a cluster of one
    # One that cannot be read may be this machine's part in a cluster (a trailing comma): passed over,
    # each machine had trained alone without a word.
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1", "b:2",]}, "task": {"type": "worker", "index": 0}}')
    found = findings(write_config, "devices:\n  strategy: auto\n")["multi-worker-cluster"]
    assert found.severity == "error" and found.message.startswith(
        "TF_CONFIG is not JSON (Expecting value at character 37): "
    )
    assert "under devices.strategy auto it would be passed over and this machine train alone" in found.message
    monkeypatch.setenv("TF_CONFIG", '{"task": {"type": "worker", "index": 0}}')  # no cluster named: not one
    assert "multi-worker-cluster" not in findings(write_config, "devices:\n  strategy: auto\n")
    monkeypatch.setenv("TF_CONFIG", "[1, 2]")  # JSON, but no object: a mistake, said as the unreadable one is
    found = findings(write_config, "devices:\n  strategy: auto\n")["multi-worker-cluster"]
    assert found.message.startswith('TF_CONFIG needs a "cluster" object and a "task" object: [1, 2]; under devices')


def test_a_split_this_machine_lacks_is_one_line_naming_every_missing_index(write_config) -> None:
    # diagnose had named the first alone, so fixing it met the second on the next run.
    from xtts_cli.devices.placement import plan_from_machine
    from xtts_cli.errors import DeviceError

    devices = resolve_config(write_config("devices:\n  data_gpu: 0\n  model_gpu: 3\n")).config.devices
    for machine, said in (
        (
            CPU_ONLY,
            "devices.data_gpu is 0 and devices.model_gpu is 3 but this machine has 0 GPUs NVML lists (available: none)",
        ),
        (TWO_4090, "devices.model_gpu is 3 but this machine has 2 GPUs NVML lists (available: indices 0-1)"),
    ):
        with pytest.raises(DeviceError) as caught:
            plan_from_machine(devices, machine)
        assert caught.value.lines == [said]


def test_mirrored_without_gpus_says_it_is_one_replica(write_config) -> None:
    found = findings(write_config, "devices:\n  strategy: mirrored\n")["mirrored-without-gpus"]
    assert found.severity == "info" and "it trains one replica on the CPU" in found.message
    assert "mirrored-without-gpus" not in findings(write_config, "devices:\n  strategy: mirrored\n", TWO_4090)
    twin = "devices:\n  strategy: mirrored\n  logical_cpu_devices: 2\n"
    assert "mirrored-without-gpus" not in findings(write_config, twin)


def test_multi_worker_without_a_cluster_here_is_a_warning_and_a_tf_config_that_does_not_parse_an_error(
    write_config, monkeypatch
) -> None:
    text = "devices:\n  strategy: multi_worker\n"
    monkeypatch.delenv("TF_CONFIG", raising=False)
    unset = findings(write_config, text)["multi-worker-cluster"]
    assert unset.severity == "warning" and unset.message.startswith("devices.strategy is multi_worker but no cluster")
    monkeypatch.setenv("TF_CONFIG", "{bad")
    assert findings(write_config, text)["multi-worker-cluster"].severity == "error"
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 0}}')
    assert "multi-worker-cluster" not in findings(write_config, text)


def test_a_split_past_the_logical_cpu_devices_hints_at_more_of_them_not_at_what_is_set() -> None:
    from xtts_cli.devices.placement import _device_error

    twin = _device_error("devices.model_gpu is 2", 2, "logical CPU devices")
    # It had said "devices.logical_cpu_devices: 2 runs the same split on CPU", set already.
    assert twin.hint.endswith("or raise devices.logical_cpu_devices past 2") and "2 runs the same" not in twin.hint
    assert _device_error("devices.model_gpu is 3", 2, "GPUs NVML lists").hint.endswith("runs the same split on CPU")


def test_a_time_budget_under_multi_worker_is_an_error_before_the_workers_start(write_config, monkeypatch) -> None:
    # train refuses it only once every machine has started and joined; validate had said "valid".
    two = '{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 0}}'
    monkeypatch.setenv("TF_CONFIG", two)
    found = findings(write_config, "devices:\n  strategy: multi_worker\ntraining:\n  max_minutes: 5\n")
    assert found["multi-worker-time-budget"].severity == "error"
    assert found["multi-worker-time-budget"].message == (
        "training.max_minutes is 5 with devices.strategy multi_worker: the workers' clocks would not agree on the "
        "step to stop at; set training.max_steps instead"
    )
    assert "multi-worker-time-budget" not in findings(write_config, "devices:\n  strategy: multi_worker\n")


def test_a_datasets_weight_of_0_says_how_to_leave_the_dataset_out(write_config) -> None:
    # A weight of 0 read as "off" had met only "should be greater than 0".
    from xtts_cli.config import resolve_config
    from xtts_cli.errors import XttsError

    path = write_config("data:\n  datasets:\n    - path: a\n    - path: b\n      weight: 0\n")
    with pytest.raises(XttsError) as refused:
        resolve_config(path)
    assert refused.value.lines == [
        "data.datasets[1].weight: 0 is invalid: should be greater than 0; to leave the dataset out, remove its entry "
        "(or comment it out)"
    ]
