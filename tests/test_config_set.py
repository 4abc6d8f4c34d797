"""`--set KEY=VALUE`: any config key from the command line, checked by the schema like the file,
the same in every command that takes a config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from training_support import tiny_config

from xtts_cli.cli.app import app
from xtts_cli.config import resolve_config
from xtts_cli.errors import ConfigError

CONFIG_COMMANDS = ["train", "validate", "diagnose", "profile-pipeline", "profile-step", "benchmark"]


def test_values_are_read_as_yaml_and_applied_over_the_file(write_config) -> None:
    path = write_config("data:\n  batch_size: 16\ntraining:\n  epochs: 3\n")
    config = resolve_config(
        path,
        sets=[
            "data.batch_size=8",
            "data.text_cleaners=[basic_cleaners]",
            "training.run_dir=",
            "data.enable_xla=true",  # an alias lands on its canonical key
        ],
    ).config
    assert config.data.batch_size == 8
    assert config.training.epochs == 3  # what --set does not name stays as the file has it
    assert config.data.text_cleaners == ["basic_cleaners"]
    assert config.training.run_dir is None
    assert config.training.enable_xla_compilation is True


@pytest.mark.parametrize(
    ("item", "line"),
    [
        ("data.batchsize=8", "--set data.batchsize: unknown key; did you mean data.batch_size?"),
        ("batch_size=8", "--set batch_size: unknown key; did you mean data.batch_size?"),
        ("data.batch_size", "--set 'data.batch_size': expected KEY=VALUE"),
        # A list's item: the list is set whole (it had been "did you mean data.dataset_path?").
        ("data.datasets[0].path=/x", "--set data.datasets[0].path: one item of a list cannot be set"),
        ("data.datasets.1.weight=2", "--set data.datasets.1.weight: one item of a list cannot be set"),
        # A key that holds no list is no list's item (it had been said to be one).
        ("data.batch_size.0=3", "--set data.batch_size.0: unknown key; did you mean data.batch_size?"),
        # Nothing close in a section: its keys (it had said "keys are section.name", as watch.foo is).
        (
            "watch.foo=1",
            "--set watch.foo: unknown key; watch has 9 keys: enabled, window_seconds, data_wait_percent, "
            "host_contention_percent, oscillation_cv, gpu_util_percent, gpu_memory_percent, recover_fraction, ...",
        ),
    ],
)
def test_a_bad_key_is_one_line_naming_the_closest_key(item: str, line: str) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_config(None, sets=[item])
    assert caught.value.lines == [line]
    if "[0]" in item:
        assert caught.value.hint == "set the whole list, e.g. --set 'data.datasets=[{path: /x}, ...]'"
    if ".1." in item:
        assert caught.value.hint == "set the whole list, e.g. --set 'data.datasets=[{path: PATH, weight: 2}, ...]'"


def test_a_bad_value_points_at_the_command_line_not_the_file(write_config) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_config(write_config("data:\n  batch_size: 16\n"), sets=["data.batch_size=many"])
    assert len(caught.value.lines) == 1 and caught.value.lines[0].startswith("data.batch_size: 'many' is invalid")
    assert "command line" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("item", "example"),
    [
        ("training.test_sentences=Hello there.", '--set \'training.test_sentences=["Hello there.", '),
        ("data.datasets=/data/voice", "--set 'data.datasets=[{path: /data/voice-a}, "),
        ("data.text_cleaners=basic_cleaners", "--set 'data.text_cleaners=[multilingual_cleaners]'"),  # its default
    ],
)
def test_a_list_key_given_one_value_is_shown_a_list_to_copy(item: str, example: str, runner) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_config(None, sets=[item])
    assert "should be a valid list" in caught.value.lines[0]
    hint = caught.value.hint or ""
    assert f"a list is written in brackets, e.g. {example}" in hint
    resolve_config(None, sets=[hint.split("--set '")[-1].removesuffix("'")])  # the example loads as it is
    # As validate shows it: the brackets are text, not terminal markup it swallows.
    result = runner.invoke(app, ["validate", "--set", item])
    assert result.exit_code == 2 and example in result.output, result.output


def test_a_flag_and_a_set_that_disagree_are_refused() -> None:
    with pytest.raises(ConfigError, match="data.batch_size is given twice: 4 by a flag and 8 by --set"):
        resolve_config(None, {"data.batch_size": 4}, sets=["data.batch_size=8"])
    assert resolve_config(None, {"data.batch_size": 8}, sets=["data.batch_size=8"]).config.data.batch_size == 8
    # One key written twice under its old name and its own: both named, the values as YAML writes them.
    with pytest.raises(ConfigError) as caught:
        resolve_config(None, sets=["data.enable_xla=true", "training.enable_xla_compilation=false"])
    assert caught.value.lines == [
        "--set training.enable_xla_compilation (as data.enable_xla and as training.enable_xla_compilation) "
        "is given twice: true and false"
    ]


def test_a_flag_given_as_text_and_a_set_of_the_same_value_agree() -> None:
    # --num-workers takes "auto" or a number, so its value comes as text: "4" and 4 had been "given twice".
    loaded = resolve_config(None, {"data.num_workers": "4"}, sets=["data.num_workers=4"])
    assert loaded.config.data.num_workers == 4
    with pytest.raises(ConfigError, match="given twice: '4' by a flag and 5 by --set"):
        resolve_config(None, {"data.num_workers": "4"}, sets=["data.num_workers=5"])


def test_a_hash_in_a_value_is_kept_not_read_as_a_comment(tmp_path: Path) -> None:
    # YAML had cut "take #2" at its comment: the run went to another folder without a word.
    for written in (
        f"training.run_dir={tmp_path}/take #2",
        f'training.run_dir="{tmp_path}/take #2"',
        f"training.run_dir=  '{tmp_path}/take #2'",  # quoted after spaces: not its quotes kept
    ):
        assert resolve_config(None, sets=[written]).config.training.run_dir == str(tmp_path / "take #2")
    assert resolve_config(None, sets=["data.text_cleaners=[english_cleaners]"]).config.data.text_cleaners == [
        "english_cleaners"
    ]
    with pytest.raises(ConfigError, match="batch_size"):  # a number with a comment is no number, not 8
        resolve_config(None, sets=["data.batch_size=8 # eight"])


def test_an_option_of_one_value_given_twice_is_refused_not_the_last_taken(runner, tmp_path: Path) -> None:
    # `--data A --data B` had validated and trained on B alone, without a word.
    for args, said in (
        (["validate", "--data", str(tmp_path), "-d", str(tmp_path / "b")], "--data is given twice"),
        (["validate", "-c", "tiny-cpu", "--config", "speak-cpu"], "--config is given twice"),
        (["synthesize", "Hi.", "-o", "a.wav", "--out", "b.wav", "-r", str(tmp_path)], "--out is given twice"),
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and said in " ".join(result.output.replace("\u2502", " ").split()), result.output
    several = runner.invoke(app, ["validate", "-d", "x", "-d", "y"])
    assert "several datasets are listed under data.datasets" in " ".join(several.output.replace("\u2502", " ").split())
    # Many --set, a flag twice, an option's value that reads like an option: as they were.
    fine = runner.invoke(
        app, ["validate", "-c", "tiny-cpu", "--set", "data.batch_size=2", "--set", "data.num_workers=1"]
    )
    assert fine.exit_code == 0, fine.output
    text = runner.invoke(app, ["synthesize", "--config", "-r", str(tmp_path / "none")])
    assert "given twice" not in text.output


@pytest.mark.parametrize("command", CONFIG_COMMANDS)
def test_every_config_command_takes_set_and_refuses_a_bad_key_before_any_work(runner, command: str) -> None:
    result = runner.invoke(app, [command, "-c", "tiny-cpu", "--set", "data.batch_sise=8"])
    assert result.exit_code != 0
    text = result.output + (str(result.exception) if result.exception else "")
    assert "--set data.batch_sise: unknown key; did you mean data.batch_size?" in text


def test_validate_reports_the_value_set(runner) -> None:
    result = runner.invoke(app, ["validate", "-c", "tiny-cpu", "--set", "data.batch_size=8", "--json"])
    assert result.exit_code == 0, result.output
    settings = json.loads(result.stdout)["settings"]
    assert settings["global_batch_size"] == 8 and settings["steps_per_epoch"] == 4  # 39 clips, batches of 8


@pytest.mark.slow
def test_train_runs_with_the_values_set(runner, tmp_path: Path) -> None:
    config = tiny_config(tmp_path)
    result = runner.invoke(
        app,
        ["train", "-c", str(config), "--run-dir", str(tmp_path / "run"), "--json"]
        + ["--set", "training.max_steps=3", "--set", "data.batch_size=2"],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["final_step"] == 3
    written = (tmp_path / "run" / "config.yaml").read_text(encoding="utf-8")
    assert "batch_size: 2" in written


def test_a_section_given_as_a_key_says_so_with_a_key_of_it() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_config(None, sets=["data=4"])
    assert caught.value.lines == ["--set data: a section, not a key"]
    assert caught.value.hint == "give one of its keys, e.g. --set data.batch_size=16"
