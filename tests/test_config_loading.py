"""The config model: the user's vocabulary loads, bad input gives one readable line per error."""

from __future__ import annotations

from pathlib import Path

import pytest

from xtts_cli.config import resolve_config
from xtts_cli.errors import ConfigError

USER_VOCABULARY = """
data:
  use_tf_native_loading: true
  prefetch_to_gpu: true
  enhanced_gpu_prefetch: true
  optimize_cpu_gpu_overlap: true
  num_workers: 16
  prefetch_buffer_size: 16
  batch_size: 16
  preprocessing_mode: "precompute"
  pad_to_fixed_length: true
  max_text_length: 200
  max_mel_frames: 870
  enable_xla: true
  mixed_precision: true
  pipeline_buffer_size: 100
  pin_memory: true
  shuffle_buffer_multiplier: 20
  dataset_path: ./data
  metadata_train_file: metadata_train.csv
  metadata_eval_file: metadata_eval.csv
  sample_rate: 22050
  n_mels: 80
  n_fft: 1024
  hop_length: 256
  win_length: 1024
  fmin: 0
  fmax: 8000
  text_cleaners: ["english_cleaners"]
model:
  model_size: small
training:
  enable_graph_mode: true
  enable_xla_compilation: true
  enable_eager_debug: false
  gradient_accumulation_steps: 2
  mixed_precision: true
  epochs: 200
  learning_rate: 1e-4
  optimizer: adamw
  gradient_clip_norm: 1.0
  save_step: 5000
  val_step: 1000
  log_step: 100
  checkpoint_dir: ./checkpoints
devices:
  data_gpu: 0
  model_gpu: 1
  enable_memory_isolation: true
  data_gpu_memory: 8192
  model_gpu_memory: 16384
"""


def test_every_key_from_the_users_documents_loads_with_its_meaning(write_config) -> None:
    loaded = resolve_config(write_config(USER_VOCABULARY))
    config = loaded.config
    assert config.data.preprocessing_mode == "precompute"
    assert config.data.num_workers == 16 and config.data.prefetch_buffer_size == 16
    assert config.data.pad_to_fixed_length is True
    assert config.data.pin_memory is True
    # data.enable_xla and data.mixed_precision are aliases of the training fields.
    assert config.training.enable_xla_compilation is True
    assert config.training.mixed_precision is True
    assert loaded.sources["training.mixed_precision"] == "training.mixed_precision"
    assert config.training.learning_rate == pytest.approx(1e-4)
    assert config.training.gradient_accumulation_steps == 2
    assert (config.devices.data_gpu, config.devices.model_gpu) == (0, 1)
    assert config.model.model_size == "small"


def test_alias_alone_sets_the_canonical_field_and_remembers_where_it_was_written(write_config) -> None:
    loaded = resolve_config(write_config("data:\n  enable_xla: false\n"))
    assert loaded.config.training.enable_xla_compilation is False
    assert loaded.sources["training.enable_xla_compilation"] == "data.enable_xla"


def test_alias_disagreeing_with_canonical_is_an_error(write_config) -> None:
    path = write_config("data:\n  mixed_precision: true\ntraining:\n  mixed_precision: false\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(path)
    assert info.value.exit_code == 2
    assert info.value.lines == [
        "data.mixed_precision: true disagrees with training.mixed_precision: false; keep only training.mixed_precision"
    ]


def test_typo_negative_and_wrong_type_each_get_one_line(write_config) -> None:
    path = write_config("data:\n  batch_sise: 16\n  batch_size: -4\ntraining:\n  learning_rate: fast\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(path)
    assert info.value.lines == [
        "data.batch_sise: unknown key; did you mean data.batch_size?",
        "data.batch_size: -4 is invalid: should be greater than or equal to 1",
        "training.learning_rate: 'fast' is invalid: should be a valid number, unable to parse string as a number",
    ]


def test_a_file_of_two_yaml_documents_says_a_config_is_one(write_config) -> None:
    path = write_config("data:\n  batch_size: 8\n---\ndata:\n  batch_size: 16\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(path)
    assert info.value.lines == [
        f"{path}: line 3, column 1: a second YAML document begins (after a ---): a config is one"
    ]


def test_a_key_with_a_space_in_its_name_says_so(write_config) -> None:
    # It had read "data.batch_size : unknown key; did you mean data.batch_size?", the key suggesting itself.
    with pytest.raises(ConfigError) as info:
        resolve_config(write_config('data:\n  "batch_size ": 8\n'))
    assert info.value.lines == ["data.'batch_size ': unknown key: a space is part of its name; write 'batch_size'"]


def test_key_in_the_wrong_section_suggests_its_home(write_config) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_config(write_config("data:\n  learning_rate: 0.001\n"))
    assert info.value.lines == ["data.learning_rate: unknown key; did you mean training.learning_rate?"]


def test_unknown_section(write_config) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_config(write_config("trainig:\n  epochs: 3\n"))
    assert info.value.lines == ["trainig: unknown section; did you mean training?"]


def test_a_choice_written_in_other_capitals_names_it_in_lower_case(write_config) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_config(write_config("data:\n  preprocessing_mode: Cache\ntraining:\n  optimizer: AdamW\n"))
    assert [line.split("; ")[-1] for line in info.value.lines] == [
        "write cache (in lower case)",
        "write adamw (in lower case)",
    ]


def test_a_key_written_dotted_or_unindented_and_a_tab_say_how_the_file_writes_them(write_config) -> None:
    # A --set's dotted key in a file, and a key left under an unindented section, had been "unknown section;
    # sections are: ..."; a tab, PyYAML's "found character '\t' that cannot start any token".
    with pytest.raises(ConfigError) as info:
        resolve_config(write_config("data.batch_size: 8\ndata:\nnum_workers: 2\n"))
    assert info.value.lines == [
        "data.batch_size: unknown section; a file writes it nested, `data:` and `batch_size: ...` indented on the "
        "line below (dotted keys are --set's)",
        "num_workers: unknown section; num_workers is a key of data: indent it under `data:`",
    ]
    # A key of several sections is not sent to the first; one dotted inside its own section is not "did you
    # mean" itself.
    with pytest.raises(ConfigError) as info:
        resolve_config(write_config("training:\nseed: 5\ndata:\n  data.batch_size: 8\n"))
    assert sorted(info.value.lines) == [
        "data.data.batch_size: unknown key; under `data:` write it as batch_size (the section names itself once)",
        "seed: unknown section; seed is a key of data, training and synthesis: indent it under the one it belongs to",
    ]
    for text, column in (("data:\n\tbatch_size: 8\n", 1), ("data:\n  batch_size: 8\t# eight\n", 16)):
        path = write_config(text)
        with pytest.raises(ConfigError) as info:
            resolve_config(path)
        assert info.value.lines == [
            f"{path}: line 2, column {column}: a tab; YAML indents, and parts a value from a comment, with spaces"
        ]
        assert info.value.hint.startswith("replace the tab with spaces")
    # A bracket or quote never closed: PyYAML names the end of the file, a line past the last one.
    for text, line in (
        ("data:\n  batch_size: 8\ntraining:\n  max_steps: [\n\n", 4),
        ('data:\n  dataset_path: "a b\n', 2),
    ):
        path = write_config(text)
        with pytest.raises(ConfigError) as info:
            resolve_config(path)
        assert info.value.lines == [
            f"{path}: line {line}: a [, {{ or quote opened there is never closed (the file ends first)"
        ]


def test_a_section_written_as_a_value_is_one_line_with_a_flag_that_sets_one_of_its_keys_too(write_config) -> None:
    for flags in ({}, {"data.dataset_path": "corpus"}):
        with pytest.raises(ConfigError) as info:
            resolve_config(write_config("data: 5\n"), flags)
        assert info.value.lines == ["data: expected a mapping of keys, got 5"], flags


def test_yaml_syntax_error_names_line_and_column(write_config) -> None:
    path = write_config("data:\n  batch_size: 16\n  num_workers: [1, 2\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(path)
    (line,) = info.value.lines
    assert line.startswith(f"{path}: line 3: a [, {{ or quote opened there")  # not line 4, past the file's end
    path = write_config("data:\n  batch_size: 16:\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(path)
    assert info.value.lines[0].startswith(f"{path}: line 2, column ")
    # A directive with no document after it ends the file too, with nothing left open: PyYAML's own words.
    path = write_config("model: {}\n...\n%YAML 1.1\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(path)
    assert info.value.lines == [f"{path}: line 4, column 1: expected '<document start>', but found '<stream end>'"]
    # A [ left open in the middle: PyYAML names the line it gave up on; where it was opened is said too.
    path = write_config("data:\n  batch_size: 8\n  datasets: [\n    {path: /tmp/x}\ntraining:\n  epochs: 2\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(path)
    assert info.value.lines[0].endswith("but got '<scalar>' (inside the [ opened on line 3)"), info.value.lines


def test_yaml_tags_are_not_constructed(write_config) -> None:
    path = write_config("data: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(path)
    assert "line 1" in info.value.lines[0]


def test_numbers_written_as_strings_load_as_numbers(write_config) -> None:
    config = resolve_config(write_config('training:\n  learning_rate: 1e-4\ndata:\n  batch_size: "32"\n')).config
    assert config.training.learning_rate == pytest.approx(1e-4)
    assert config.data.batch_size == 32


def test_num_workers_accepts_auto_or_a_positive_number(write_config) -> None:
    assert resolve_config(write_config("data:\n  num_workers: AUTO\n")).config.data.num_workers == "auto"
    with pytest.raises(ConfigError) as info:
        resolve_config(write_config("data:\n  num_workers: 0\n"))
    assert info.value.lines == ["data.num_workers: 0 is invalid: must be a whole number >= 1 or 'auto'"]


def test_cross_field_checks(write_config) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_config(write_config("data:\n  win_length: 2048\n  n_fft: 1024\n"))
    assert info.value.lines == ["data: win_length (2048) must be <= n_fft (1024)"]
    with pytest.raises(ConfigError) as info:
        resolve_config(write_config("devices:\n  model_gpu: 1\n"))
    assert "model_gpu is set but data_gpu is not" in info.value.lines[0]


def test_a_low_rate_alone_takes_its_own_half_as_fmax_and_a_written_fmax_above_it_is_one_line(write_config) -> None:
    from xtts_cli.data.features import mel_filterbank

    # 8 kHz telephone speech: the default 8 kHz top filter lies above its 4 kHz.
    data = resolve_config(write_config("data:\n  sample_rate: 8000\n")).config.data
    assert data.fmax is None
    top = mel_filterbank(data)[:, -1].nonzero()[0]  # the FFT bins the top filter weighs
    assert 3500 < top.max() * 8000 / 1024 <= 4000
    assert resolve_config(write_config("data:\n  sample_rate: 16000\n")).config.data.fmax == 8000.0
    with pytest.raises(ConfigError) as info:
        resolve_config(write_config("data:\n  sample_rate: 8000\n  fmax: 6000\n"))
    assert info.value.lines == ["data: fmax (6000) must be <= sample_rate / 2 (4000); set fmax to 4000 or lower"]


def test_a_config_file_with_no_settings_loads_the_defaults_and_says_so_once(write_config, capsys) -> None:
    path = write_config("# data:\n#   batch_size: 8\n")
    assert resolve_config(path).config == resolve_config(None).config
    resolve_config(path)
    assert capsys.readouterr().err.count(f"note: {path} holds no settings (it is empty or all comments)") == 1
    # A file of an older layout's other-kind keys holds settings, left out and named by validate: not "empty".
    resolve_config(write_config("vocoder:\n  dim: 128\n", "old.yaml"))
    assert "holds no settings" not in capsys.readouterr().err


def test_missing_config_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_config(tmp_path / "nope.yaml")
    assert "not found" in info.value.lines[0]


def test_default_config_path_is_used_when_present(tmp_path: Path) -> None:
    assert resolve_config().path is None
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "config.yaml").write_text("data:\n  batch_size: 24\n")
    loaded = resolve_config()
    assert loaded.path == Path("configs") / "config.yaml"
    assert loaded.config.data.batch_size == 24


def test_overrides_win_and_are_validated(write_config) -> None:
    path = write_config("data:\n  batch_size: 8\n")
    loaded = resolve_config(path, {"data.batch_size": 32, "data.num_workers": None})
    assert loaded.config.data.batch_size == 32
    assert loaded.overridden == {"data.batch_size"}
    with pytest.raises(ConfigError) as info:
        resolve_config(path, {"devices.data_gpu": 0})
    assert "data_gpu is set but model_gpu is not" in info.value.lines[0]


def test_empty_sections_and_empty_file_mean_defaults(write_config) -> None:
    assert resolve_config(write_config("")).config.data.batch_size == 16
    assert resolve_config(write_config("data:\ntraining:\n")).config.training.enable_graph_mode is True


# The model section is one per kind (config/model_kinds.py); configs written before held a
# `vocoder:` section, the autoregressive decoder's aids under `training:`, and every kind's keys.
OLD_VOCODER = """
model:
  kind: vocoder
  model_size: small
  prenet_dropout: 0.5
vocoder:
  dim: 64
  num_layers: 3
training:
  guided_attention_weight: 10.0
  learning_rate: 0.002
"""


def test_each_kind_has_its_own_model_section(write_config) -> None:
    from xtts_cli.config.schema import AcousticConfig, VocoderConfig

    vocoder = resolve_config(write_config("model:\n  kind: vocoder\n  dim: 64\n")).config
    assert isinstance(vocoder.model, VocoderConfig) and vocoder.vocoder.dim == 64
    acoustic = resolve_config(write_config("model:\n  decoder: duration\n  self_conditioning: true\n")).config
    assert isinstance(acoustic.model, AcousticConfig) and acoustic.acoustic.self_conditioning
    with pytest.raises(ValueError, match="model.kind is acoustic: this config has no vocoder"):
        acoustic.vocoder  # noqa: B018


def test_an_older_vocoder_config_moves_its_keys_and_leaves_out_the_acoustic_ones(write_config) -> None:
    loaded = resolve_config(write_config(OLD_VOCODER))
    assert loaded.config.vocoder.model_dump(include={"dim", "num_layers"}) == {"dim": 64, "num_layers": 3}
    assert loaded.config.training.learning_rate == 0.002
    assert sorted(loaded.left_out) == ["model.model_size", "model.prenet_dropout", "training.guided_attention_weight"]
    assert loaded.sources["model.dim"] == "vocoder.dim"  # `validate --fix` edits it where it is written


def test_an_older_acoustic_config_moves_the_decoders_training_keys(write_config) -> None:
    text = "training:\n  guided_attention_weight: 3.0\n  self_conditioning: true\nvocoder:\n  dim: 64\n"
    loaded = resolve_config(write_config(text))
    assert (loaded.config.acoustic.guided_attention_weight, loaded.config.acoustic.self_conditioning) == (3.0, True)
    assert loaded.left_out == ["vocoder.dim"]
    clash = "model:\n  guided_attention_weight: 5.0\ntraining:\n  guided_attention_weight: 3.0\n"
    with pytest.raises(ConfigError) as error:
        resolve_config(write_config(clash))
    assert error.value.lines == [
        "training.guided_attention_weight: 3.0 disagrees with model.guided_attention_weight: 5.0; "
        "keep only model.guided_attention_weight"
    ]


def test_a_key_of_the_other_kind_or_a_bad_kind_is_one_line(write_config) -> None:
    cases = {
        "model:\n  dim: 64\n": "model.dim: a key of model.kind vocoder, not of this acoustic model; remove it",
        "model:\n  kind: vocoder\n  dim: 4\n": "model.dim: 4 is invalid: should be greater than or equal to 8",
        "model:\n  kind: voc\n": "model.kind: 'voc' is invalid: should be acoustic or vocoder",
        "model:\n  kind: vocoder\n  dimm: 64\n": "model.dimm: unknown key; did you mean model.dim?",
    }
    for text, line in cases.items():
        with pytest.raises(ConfigError) as error:
            resolve_config(write_config(text))
        assert error.value.lines == [line], text
    with pytest.raises(ConfigError) as error:
        resolve_config(write_config("model:\n  kind: vocoder\n"), sets=["model.model_size=small"])
    assert error.value.lines == ["model.model_size: a key of model.kind acoustic, not of this vocoder model; remove it"]
    assert resolve_config(write_config("model:\n  kind: vocoder\n"), sets=["vocoder.dim=48"]).config.vocoder.dim == 48


def test_an_unquoted_no_where_text_belongs_says_yaml_read_it_as_false(write_config) -> None:
    from xtts_cli.config.loading import resolve_config

    # Norwegian's code: YAML 1.1 reads `no` as false, which no language code is.
    for config, sets, where in (
        (write_config("data:\n  language: no\n"), [], "data.language"),
        (
            write_config("data:\n  datasets:\n    - {path: a, language: off}\n", "b.yaml"),
            [],
            "data.datasets[0].language",
        ),
    ):
        with pytest.raises(ConfigError) as refused:
            resolve_config(config, {}, sets)
        assert refused.value.lines == [
            f"{where}: YAML reads an unquoted no, off or false as false, not text; quote what you wrote ('no', not no)"
        ]
    assert resolve_config(None, {}, ["data.language='no'"]).config.data.language == "no"
    assert resolve_config(None, {}, ["data.language=no"]).config.data.language == "no"  # --set: the text written


def test_a_value_nested_thousands_deep_is_one_line_not_a_traceback(write_config) -> None:
    from xtts_cli.config.loading import resolve_config

    deep = write_config("data:\n  batch_size: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError) as refused:
        resolve_config(deep)
    assert refused.value.lines == [
        f"{deep}: nested deeper than YAML can read (lists or mappings hundreds deep within each other)"
    ]
    with pytest.raises(ConfigError):  # on the command line: the text itself, which is no number
        resolve_config(None, {}, ["data.batch_size=" + "[" * 5000 + "]" * 5000])


def test_a_number_with_a_leading_zero_is_refused_not_read_as_octal(write_config) -> None:
    from xtts_cli.config.loading import resolve_config

    with pytest.raises(ConfigError) as written:
        resolve_config(write_config("data:\n  batch_size: 016\n"))
    assert written.value.lines[0].endswith(
        "line 2, column 15: 016 has a leading zero, which YAML reads as octal (14); write 16"
    )
    with pytest.raises(ConfigError) as given:
        resolve_config(None, {}, ["training.max_steps=0100"])
    assert (
        given.value.lines[0]
        == "--set training.max_steps=0100: 0100 has a leading zero, which YAML reads as octal (64); write 100"
    )
    # Colons make a base-60 number to YAML 1.1: a budget of 2:30 had run 150 minutes, unsaid.
    with pytest.raises(ConfigError) as clock:
        resolve_config(write_config("training:\n  max_minutes: 2:30\n"))
    assert clock.value.lines[0].endswith(
        "line 2, column 16: 2:30 is a base-60 number to YAML (150, as a clock's): write the number you mean"
    )
    for written, value in (("max_minutes=1:30.5", "90.5"), ("max_steps=1:00", "60")):
        with pytest.raises(ConfigError) as given:
            resolve_config(None, {}, [f"training.{written}"])
        assert f"to YAML ({value}, as a clock's)" in given.value.lines[0]
    # A zero alone, or a leading zero YAML reads as the same number, is the number.
    assert (
        resolve_config(write_config("training:\n  warmup_steps: 0\n  save_step: 07\n")).config.training.save_step == 7
    )


def test_a_measuring_command_given_no_config_says_it_measures_the_built_in_defaults(tmp_path, monkeypatch, capsys):
    from xtts_cli.config import loading

    # bottlenecks.md's commands copied as written profiled the defaults' batch of 16 beside a run of 8,
    # without a word.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(loading, "_SAID", set())
    loading.resolve_config(None)
    assert capsys.readouterr().err == ""  # train, validate: the defaults are the quick start's own
    loading.resolve_config(None, measures=True)
    assert capsys.readouterr().err == (
        "note: no --config, and no configs/config.yaml here: this measures the built-in defaults, not the config "
        "you train; pass -c CONFIG (a run's own: -c RUN/config.yaml)\n"
    )
    monkeypatch.setattr(loading, "_SAID", set())
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "config.yaml").write_text("data:\n  batch_size: 8\n", encoding="utf-8")
    assert loading.resolve_config(None, measures=True).config.data.batch_size == 8
    assert loading.resolve_config("tiny-cpu", measures=True).path is not None
    assert capsys.readouterr().err == ""


def test_service_sharding_off_written_bare_is_off_not_a_boolean(write_config) -> None:
    from xtts_cli.config.loading import resolve_config

    # YAML 1.1 reads a bare off as false; the docs and `xtts init` spell it bare.
    assert resolve_config(write_config("data:\n  service_sharding: off\n")).config.data.service_sharding == "off"
    assert resolve_config(None, {}, ["data.service_sharding=off"]).config.data.service_sharding == "off"
    with pytest.raises(ConfigError, match="should be 'dynamic' or 'off'"):
        resolve_config(None, {}, ["data.service_sharding=yes"])


def test_an_optimization_level_names_the_values_of_the_file_it_sets_over(write_config) -> None:
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.config.optimization_levels import replaced_by_level
    from xtts_cli.training.launch import launch_settings

    path = write_config("data:\n  preprocessing_mode: precompute\n  num_workers: 8\n  bucket_by_length: true\n")
    flags = {"data.num_workers": 2}  # the user's own flag: the level gives way to it
    loaded = resolve_config(path, launch_settings(flags, "enhanced", None, None))
    assert loaded.config.data.preprocessing_mode == "auto"
    assert replaced_by_level("enhanced", loaded, set(flags)) == (
        f"--optimization-level enhanced sets over what {path.name} writes: data.preprocessing_mode precompute -> "
        "auto (a flag or --set KEY=VALUE of your own keeps yours)"
    )
    assert replaced_by_level("maximum", resolve_config(path, launch_settings({}, "maximum", None, None)), set()) == (
        f"--optimization-level maximum sets over what {path.name} writes: data.num_workers 8 -> auto (a flag or "
        "--set KEY=VALUE of your own keeps yours)"
    )
    assert replaced_by_level(None, loaded, set()) is None


def test_a_path_or_name_given_with_set_is_the_text_written(tmp_path) -> None:
    from xtts_cli.config.loading import resolve_config

    sets = ["training.run_dir=010", "data.language=no", f"data.feature_cache_dir={tmp_path}/take: 2"]
    config = resolve_config(None, {}, sets).config
    # YAML had read them as 8 (and "write 10", another folder), false and a mapping.
    assert (config.training.run_dir, config.data.language) == ("010", "no")
    assert config.data.feature_cache_dir == f"{tmp_path}/take: 2"
    assert resolve_config(None, {}, ["training.run_dir=&x runs/a"]).config.training.run_dir == "&x runs/a"
    assert resolve_config(None, {}, ["training.run_dir=&x"]).config.training.run_dir == "&x"  # it had been null
    # Quoted, null and a number's key are YAML's as before.
    assert resolve_config(None, {}, ["training.run_dir='010'"]).config.training.run_dir == "010"
    assert resolve_config(None, {}, ["training.run_dir=null"]).config.training.run_dir is None
    with pytest.raises(ConfigError, match="leading zero"):
        resolve_config(None, {}, ["training.max_steps=0100"])


def test_a_training_seed_keras_cannot_take_is_refused_before_training() -> None:
    # Keras had refused it mid-start, in a traceback, after validate said valid.
    for value in (-1, 2**32):
        with pytest.raises(ConfigError) as refused:
            resolve_config(None, {}, [f"training.seed={value}"])
        assert refused.value.lines[0].startswith(f"training.seed: {value} is invalid: should be")
    assert resolve_config(None, {}, [f"training.seed={2**32 - 1}"]).config.training.seed == 2**32 - 1
    # The others take any integer, as they always did: runs trained with one resume.
    for key in ("data.seed", "synthesis.seed"):
        assert resolve_config(None, {}, [f"{key}=-1"]).config is not None
        assert resolve_config(None, {}, [f"{key}={2**64}"]).config is not None
