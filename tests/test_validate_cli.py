"""`xtts validate`: exit codes, findings, --json, and a --fix that keeps the user's file intact."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from training_support import undocumented_keys

from xtts_cli.cli.app import app

SAMPLE_DATA = Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample"

COMMENTED = """# My training config -- keep these notes!
data:
  use_tf_native_loading: false   # the old librosa loader
  num_workers: 1                 # was 16 on the big box
  prefetch_buffer_size: 0
  pin_memory: true               # from the PyTorch days

  # shapes
  pad_to_fixed_length: false
  bucket_by_length: false
  enable_xla: false              # alias of training.enable_xla_compilation

training:
  # debugging leftovers
  enable_graph_mode: false
  learning_rate: 1e-4            # PyYAML reads this as a string
  epochs: 10
"""


def _ids(payload: dict) -> set[str]:
    return {f["id"] for f in payload["findings"]}


def test_defaults_are_valid(runner) -> None:
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 0, result.output
    assert "built-in defaults: valid, no findings" in result.stdout
    # No dataset named: what it checked is the sample, said where the dataset is (a preset for your
    # own data, checked without --data, is not your data found valid).
    assert "/sample (the bundled sample: no --data given): 39 train" in " ".join(result.stdout.split())


def test_a_thread_count_train_refuses_is_an_error_here(runner, monkeypatch) -> None:
    # It had been "valid, no findings", and the training it cleared stopped as it started.
    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "abc")
    result = runner.invoke(app, ["validate", "--json"])
    assert result.exit_code == 1
    found = [f for f in json.loads(result.stdout)["findings"] if f["id"] == "thread-count"]
    assert [f["severity"] for f in found] == ["error"]
    assert found[0]["message"].startswith("TF_NUM_INTRAOP_THREADS='abc' is not a thread count; set")


def test_typo_negative_batch_and_string_number_give_three_lines_and_exit_2(runner, write_config) -> None:
    path = write_config("data:\n  batch_sise: 16\n  batch_size: -4\ntraining:\n  learning_rate: 1e-4\n")
    result = runner.invoke(app, ["validate", "--config", str(path)])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith(("error", "warning"))]
    assert lines == [
        "error: data.batch_sise: unknown key; did you mean data.batch_size?",
        "error: data.batch_size: -4 is invalid: should be greater than or equal to 1",
        "warning: training.learning_rate is the string '1e-4', not a number (YAML 1.1 loaders such as "
        "PyYAML read exponents without a dot, like 1e-4, as text); xtts reads it as 0.0001, write 0.0001 so every tool does",
    ]
    assert "Traceback" not in result.output


def test_schema_errors_as_json_keep_the_shape(runner, write_config) -> None:
    from xtts_cli.config.preset_files import preset_names

    path = write_config("data:\n  batch_size: -4\n")
    result = runner.invoke(app, ["validate", "--config", str(path), "--json"])
    assert result.exit_code == 2
    payload = json.loads(result.stdout)
    assert payload["valid"] is False
    assert payload["findings"][0]["severity"] == "error"
    assert payload["findings"][0]["message"].startswith("data.batch_size: -4")
    # The same keys as a config that reads (docs/json.md), with nothing read.
    valid = json.loads(runner.invoke(app, ["validate", "--json", "--fix"]).stdout)
    result = runner.invoke(app, ["validate", "--config", str(path), "--json", "--fix"])
    payload = json.loads(result.stdout)
    assert set(payload) == set(valid) and payload["config"] == str(path) and payload["diff"] == ""
    assert payload["settings"] is None and payload["dataset"] is None and payload["fixed"] == []
    result = runner.invoke(app, ["validate", "--config", str(path), "--fix"])
    assert result.exit_code == 2 and "nothing fixed: --fix edits a config that loads" in result.output
    assert path.read_text() == "data:\n  batch_size: -4\n"
    # The hint the terminal prints under the error is in its message (it had been left out).
    missing = json.loads(runner.invoke(app, ["validate", "-c", "nosuch.yaml", "--json"]).stdout)["findings"]
    assert [f["message"] for f in missing] == [
        "config file 'nosuch.yaml' not found, and no preset has that name; pass --config PATH to an existing YAML "
        f"file or a preset's name ({', '.join(preset_names())})"
    ]


def test_yaml_syntax_error_exit_2_with_position(runner, write_config) -> None:
    path = write_config("data:\n  batch_size: [16\n")
    result = runner.invoke(app, ["validate", "-c", str(path)])
    assert result.exit_code == 2
    assert "line 2: a [, { or quote opened there is never closed" in result.stderr  # not line 3, past the end


def test_findings_as_json(runner, write_config) -> None:
    result = runner.invoke(app, ["validate", "-c", str(write_config(COMMENTED)), "--json"])
    assert result.exit_code == 0  # warnings only
    payload = json.loads(result.stdout)
    assert payload["valid"] is True
    assert _ids(payload) == {
        "tf-native-loading-off",
        "parallelism-below-cores",
        "prefetch-too-small",
        "no-effect-key",
        "variable-shapes",
        "xla-off",
        "graph-mode-off",
        "number-as-string",
        "warmup-past-the-end",  # 10 epochs of the sample are 20 steps, under the warm-up's 200
    }
    for finding in payload["findings"]:
        assert set(finding) == {"id", "severity", "message", "fix"}
    xla = next(f for f in payload["findings"] if f["id"] == "xla-off")
    assert xla["fix"] == {"key": "training.enable_xla_compilation", "action": "set", "value": "auto"}
    assert payload["fixed"] == []
    assert undocumented_keys("validate", payload) == [], "add them to docs/json.md (cli/json_reference.py)"


def test_strict_fails_on_warnings(runner, write_config) -> None:
    result = runner.invoke(app, ["validate", "-c", str(write_config(COMMENTED)), "--strict"])
    assert result.exit_code == 1
    said = runner.invoke(app, ["validate", "-c", str(write_config(COMMENTED)), "--strict", "--json"])
    assert said.exit_code == 1 and json.loads(said.stdout)["valid"] is False  # what the exit code says


def test_a_fix_names_the_command_that_writes_it_into_this_file(runner, write_config) -> None:
    # "(xtts validate --fix)", pasted as printed, checked the built-in defaults and said all was well.
    import shlex

    path = write_config(COMMENTED, name="my cfg.yaml")
    result = runner.invoke(app, ["validate", "-c", str(path)])
    assert f"  (xtts validate -c {shlex.quote(str(path))} --fix)" in result.stdout, result.stdout


def test_fix_keeps_comments_and_untouched_lines_and_is_idempotent(runner, write_config) -> None:
    path = write_config(COMMENTED)
    result = runner.invoke(app, ["validate", "-c", str(path), "--fix"])
    assert result.exit_code == 0, result.output
    fixed = path.read_text()
    backup = path.with_name("config.yaml.bak")
    assert backup.read_text() == COMMENTED
    # Every comment survives, in order.
    comments = [line.split("#", 1)[1] for line in COMMENTED.splitlines() if "#" in line]
    assert [line.split("#", 1)[1] for line in fixed.splitlines() if "#" in line] == [
        c for c in comments if "PyTorch" not in c
    ]
    # Lines no fix touched are byte for byte the same.
    for line in ("  # shapes", "  pad_to_fixed_length: false", "  epochs: 10", ""):
        assert line in fixed.splitlines()
    data = yaml.safe_load(fixed)
    assert data["data"]["use_tf_native_loading"] is True
    assert data["data"]["num_workers"] == "auto"
    assert data["data"]["prefetch_buffer_size"] == "auto"
    assert "pin_memory" not in data["data"]
    assert data["data"]["bucket_by_length"] is True
    assert data["data"]["enable_xla"] == "auto"  # fixed where the user wrote it
    assert "enable_xla_compilation" not in data["training"]
    assert data["training"]["enable_graph_mode"] is True
    assert data["training"]["learning_rate"] == pytest.approx(1e-4) and isinstance(
        data["training"]["learning_rate"], float
    )
    # The diff went to stdout.
    assert "-  num_workers: 1" in result.stdout and "+  num_workers: auto" in result.stdout

    again = runner.invoke(app, ["validate", "-c", str(path), "--fix", "--json"])
    assert again.exit_code == 0
    payload = json.loads(again.stdout)
    assert payload["fixed"] == [] and payload["diff"] == "" and payload["findings"] == []
    assert path.read_text() == fixed
    assert backup.read_text() == COMMENTED  # a no-op --fix does not overwrite the backup


def test_fix_keeps_each_backup_and_writes_nothing_over_an_edit_saved_while_it_scanned(runner, write_config) -> None:
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.diagnosis.validation import validate_config
    from xtts_cli.errors import ConfigError

    path = write_config(COMMENTED)
    assert runner.invoke(app, ["validate", "-c", str(path), "--fix"]).exit_code == 0
    # Edited again and fixed again: the first backup (the file as its user wrote it) is kept beside the second.
    first = path.read_text(encoding="utf-8")
    path.write_text(first.replace("num_workers: auto", "num_workers: 1"), encoding="utf-8")
    again = runner.invoke(app, ["validate", "-c", str(path), "--fix"])
    assert again.exit_code == 0 and f"(backup: {path}.bak.1)" in again.output, again.output
    assert path.with_name("config.yaml.bak").read_text(encoding="utf-8") == COMMENTED
    # Saved while the data was scanned (seconds to minutes of a corpus): it had been written over.
    path.write_text(COMMENTED, encoding="utf-8")
    mine = COMMENTED + "# my new edit\n"

    def edit(phase: str) -> None:
        if phase.startswith("scanning"):
            path.write_text(mine, encoding="utf-8")

    with pytest.raises(ConfigError) as changed:
        validate_config(resolve_config(path), {}, fix=True, phase=edit)
    assert changed.value.lines == [f"{path} changed while validate read the data: --fix wrote nothing over that edit"]
    assert path.read_text(encoding="utf-8") == mine
    # A file its user made read-only is kept so: the rename into its folder had replaced it regardless.
    path.chmod(0o444)
    refused = runner.invoke(app, ["validate", "-c", str(path), "--fix"])
    assert refused.exception.lines == [f"{path} is read-only: --fix writes nothing over it"]
    assert path.read_text(encoding="utf-8") == mine


@pytest.mark.parametrize("flags", [["--dry-run"], ["--fix", "--dry-run"]])
def test_dry_run_writes_nothing(runner, write_config, flags) -> None:
    path = write_config(COMMENTED)
    result = runner.invoke(app, ["validate", "-c", str(path), *flags])
    assert result.exit_code == 0
    assert "+  use_tf_native_loading: true" in result.stdout
    assert path.read_text() == COMMENTED
    assert not path.with_name("config.yaml.bak").exists()


def test_fix_makes_the_fixes_only_the_scan_finds(runner, write_config) -> None:
    # 16 kHz clips resampled every epoch: the scan offers the fix, and --fix makes it.
    nemo = Path(__file__).parent / "data" / "corpora" / "nemo"
    path = write_config(f"data:\n  dataset_path: {nemo}\n  preprocessing_mode: runtime  # mine\n")
    result = runner.invoke(app, ["validate", "-c", str(path), "--fix", "--json"])
    payload = json.loads(result.stdout)
    # And the batch the 4 clips fill (a batch of 16 gave no step at all).
    assert sorted(f["id"] for f in payload["fixed"]) == ["dataset-no-batch", "dataset-resampling"]
    assert "preprocessing_mode: auto  # mine" in path.read_text() and "batch_size: 3" in path.read_text()
    assert "dataset-resampling" not in [f["id"] for f in payload["findings"]]
    # Resampled up, 16 kHz clips hold nothing above 8 kHz of the 11 a 22050 Hz run learns: said, not fixed.
    low = {f["id"]: f for f in payload["findings"]}["dataset-low-sample-rate"]
    assert low["severity"] == "info" and low["fix"] is None
    assert "22050 Hz), 4 at 16000 Hz: resampled up, they hold nothing above 8 kHz" in low["message"]
    result = runner.invoke(app, ["validate", "-c", str(path), "--set", "data.sample_rate=16000", "--json"])
    assert "dataset-low-sample-rate" not in [f["id"] for f in json.loads(result.stdout)["findings"]]


def test_fix_leaves_a_key_the_command_line_sets_to_the_command_line(runner, write_config) -> None:
    # Written into the file, the fix would lose to the --set on every run, and be made again each time.
    path = write_config("data:\n  num_workers: auto\n  batch_size: 8\n")
    args = ["validate", "-c", str(path), "--set", "data.num_workers=1", "--set", "data.prefetch_buffer_size=0"]
    result = runner.invoke(app, [*args, "--fix", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["fixed"] == [] and path.read_text() == "data:\n  num_workers: auto\n  batch_size: 8\n"
    named = {f["id"]: f for f in payload["findings"] if f["id"] in ("parallelism-below-cores", "prefetch-too-small")}
    assert len(named) == 2 and all(f["fix"] is None and "command line's" in f["message"] for f in named.values())
    # How the file writes a value is the file's to fix, whatever the command line sets: the file's '8'
    # had been blamed on the --set's 4.
    path.write_text('data:\n  batch_size: "8"\n')
    result = runner.invoke(app, ["validate", "-c", str(path), "--set", "data.batch_size=4", "--fix", "--json"])
    assert [f["id"] for f in json.loads(result.stdout)["fixed"]] == ["number-as-string"]
    assert path.read_text() == "data:\n  batch_size: 8\n"


def test_fix_makes_the_fixes_the_files_layout_takes_and_names_the_others(runner, write_config) -> None:
    # A key written through an anchor had made --fix refuse every fix, after validate counted them all fixable.
    path = write_config('training:\n  max_steps: &s "6"\n  sample_step: *s\n  warmup_steps: "5"\n')
    checked = json.loads(runner.invoke(app, ["validate", "-c", str(path), "--json"]).stdout)
    fixes = {f["message"].split(" ")[0]: f["fix"] for f in checked["findings"] if f["id"] == "number-as-string"}
    assert fixes["training.warmup_steps"] is not None and fixes["training.max_steps"] is None
    anchored = next(f for f in checked["findings"] if f["message"].startswith("training.max_steps"))
    assert anchored["message"].endswith(
        "(--fix cannot write it: training.max_steps is written through a YAML anchor (&s) other keys share; set it by hand)"
    )
    result = runner.invoke(app, ["validate", "-c", str(path), "--fix", "--json"])
    assert [f["id"] for f in json.loads(result.stdout)["fixed"]] == ["number-as-string"]
    assert path.read_text() == 'training:\n  max_steps: &s "6"\n  sample_step: *s\n  warmup_steps: 5\n'


def test_fix_leaves_what_only_the_command_lines_values_break_and_fixes_what_the_file_breaks(
    runner, write_config
) -> None:
    # A warm-up cut to fit a --set max_steps of 20 would hold for that command only: the file trains 300.
    text = "training:\n  max_steps: 300\n  val_step: 10\n  warmup_steps: 50\n"
    path = write_config(text)
    args = ["validate", "-c", str(path), "--fix", "--json"]
    result = runner.invoke(app, [*args, "--set", "training.max_steps=20"])
    payload = json.loads(result.stdout)
    assert payload["fixed"] == [] and path.read_text() == text
    (warmup,) = [f for f in payload["findings"] if f["id"] == "warmup-past-the-end"]
    assert warmup["fix"] is None and warmup["message"].endswith(
        "(it follows from the command line's values, not the file's: change them there)"
    )
    path.write_text(text.replace("300", "20"))  # the file's own: fixed
    payload = json.loads(runner.invoke(app, args).stdout)
    assert [f["id"] for f in payload["fixed"]] == ["warmup-past-the-end"] and "warmup_steps: 2\n" in path.read_text()


def test_fix_inserts_missing_keys_into_the_right_section(runner, write_config) -> None:
    path = write_config("data:\n  batch_size: 12   # small card\ntraining:\n  mixed_precision: true\n")
    runner.invoke(app, ["validate", "-c", str(path), "--fix"])
    text = path.read_text()
    # No GPU here: mixed precision is left to the machine (off here, on for a GPU's tensor cores), and the batch alone.
    assert text == "data:\n  batch_size: 12   # small card\ntraining:\n  mixed_precision: auto\n"


def test_fix_edits_a_key_in_its_old_place_too_so_the_file_still_loads(runner, write_config) -> None:
    # The seeds' configs write mixed precision twice: as data.mixed_precision and as training's.
    path = write_config("data:\n  mixed_precision: true   # old place\ntraining:\n  mixed_precision: true\n")
    result = runner.invoke(app, ["validate", "-c", str(path), "--fix"])
    assert result.exit_code == 0, result.output
    assert path.read_text() == "data:\n  mixed_precision: auto   # old place\ntraining:\n  mixed_precision: auto\n"
    again = runner.invoke(app, ["validate", "-c", str(path), "--fix", "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["fixed"] == []


def test_errors_exit_1_and_are_not_auto_fixed(runner, write_config, tmp_path: Path) -> None:
    path = write_config(f"data:\n  dataset_path: {tmp_path / 'missing'}\n")
    result = runner.invoke(app, ["validate", "-c", str(path), "--fix", "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    (finding,) = payload["findings"]
    assert finding["id"] == "dataset-missing" and finding["fix"] is None
    assert "missing" in finding["message"]


def test_a_folder_in_no_known_layout_and_a_missing_metadata_file(runner, write_config, tmp_path: Path) -> None:
    (tmp_path / "ds").mkdir()
    path = write_config(f"data:\n  dataset_path: {tmp_path / 'ds'}\n")
    payload = json.loads(runner.invoke(app, ["validate", "-c", str(path), "--json"]).stdout)
    assert _ids(payload) == {"dataset-layout-unknown"}
    assert "vctk" in payload["findings"][0]["message"] and payload["dataset"] is None
    named = write_config(f"data:\n  dataset_path: {tmp_path / 'ds'}\n  dataset_format: ljspeech\n", name="named.yaml")
    payload = json.loads(runner.invoke(app, ["validate", "-c", str(named), "--json"]).stdout)
    assert _ids(payload) == {"metadata-missing"}


def test_validate_reports_the_data_per_dataset_with_its_bad_files(runner, write_config) -> None:
    corpora = Path(__file__).parent / "data" / "corpora"
    path = write_config(
        "data:\n  max_bad_file_fraction: 0.5\n  batch_size: 2\n  datasets:\n"
        f"    - path: {corpora / 'vctk'}\n    - path: {corpora / 'libritts'}\n      weight: 2\n"
    )
    result = runner.invoke(app, ["validate", "-c", str(path), "--json"])
    payload = json.loads(result.stdout)
    assert result.exit_code == 0 and "dataset-bad-files" in _ids(payload)
    vctk, libritts = payload["dataset"]["datasets"]
    assert (vctk["format"], vctk["items"], vctk["bad_items"]) == ("vctk", 6, 2)
    assert (libritts["format"], libritts["items"], libritts["weight"]) == ("libritts", 4, 2.0)
    assert set(libritts["speaker_minutes"]) == {"19", "26"}
    reasons = {(bad["path"], bad["reason"]) for bad in payload["dataset"]["bad_files"]}
    assert ("wav48_silence_trimmed/p225/p225_003_mic1.flac", "missing_transcript") in reasons
    text = runner.invoke(app, ["validate", "-c", str(path)]).stdout
    assert "dataset vctk (vctk, language en, weight 1" in text and "3 speakers: p2" in text
    assert "missing_transcript" in text


def test_clips_outside_the_length_limits_are_left_out_and_named_not_counted_as_bad(runner, write_config) -> None:
    # A corpus with a long tail (LibriTTS) against the length limits: most of the sample's
    # clips are longer than 2 s. That is the config's choice, not a broken file: the scan goes on
    # with the rest (it used to refuse the corpus above data.max_bad_file_fraction, 10 %), and
    # says how many were left out and which setting keeps them.
    path = write_config("data:\n  max_audio_duration: 2.0\n  max_mel_frames: 174\n")
    payload = json.loads(runner.invoke(app, ["validate", "-c", str(path), "--json"]).stdout)
    (finding,) = [f for f in payload["findings"] if f["id"] == "dataset-outside-limits"]
    left_out = len(payload["dataset"]["bad_files"])
    assert payload["dataset"]["outside_limits"] == payload["dataset"]["bad_items"] == left_out
    assert 4 < left_out < 40 and payload["dataset"]["train_items"] + payload["dataset"]["eval_items"] == 40 - left_out
    assert finding["severity"] == "warning" and f"{left_out} of 40 clips" in finding["message"]
    assert "raise data.max_audio_duration" in finding["message"] and "dataset-bad-files" not in _ids(payload)
    text = runner.invoke(app, ["validate", "-c", str(path)]).stdout
    assert f"0 bad, {left_out} outside the length limits" in text and "left out wavs/" in text
    # One clip over a limit is a note, not a warning: within what the config lets bad files be.
    one = write_config("data:\n  max_text_length: 77\n", name="one.yaml")
    (finding,) = json.loads(runner.invoke(app, ["validate", "-c", str(one), "--json"]).stdout)["findings"]
    assert (finding["id"], finding["severity"]) == ("dataset-outside-limits", "info")
    assert "1 text_too_long" in finding["message"] and "raise data.max_text_length" in finding["message"]


def test_a_clip_past_two_length_limits_names_both_fixes(runner, write_config, tmp_path) -> None:
    # A long transcript of the longest clip: the fix had named data.max_text_length alone, and raised,
    # the clip stayed out for its audio, with a second fix to find.
    import shutil

    from xtts_cli.data.scan import BUNDLED_SAMPLE

    data = tmp_path / "data"
    shutil.copytree(BUNDLED_SAMPLE, data)
    lines = (data / "metadata.csv").read_text(encoding="utf-8").splitlines()
    long = "The river was calm and quiet, and the boats rested by the wooden pier until the morning came."
    lines[18] = f"XTTS001-0019|{long}|{long}"  # the clip of 4.81 s
    (data / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = write_config(f"data:\n  dataset_path: {data}\n  max_text_length: 90\n  max_audio_duration: 4.7\n")
    payload = json.loads(runner.invoke(app, ["validate", "-c", str(path), "--json"]).stdout)
    (finding,) = [f for f in payload["findings"] if f["id"] == "dataset-outside-limits"]
    assert (
        "(1 text_too_long); to train on them, raise data.max_text_length; raise data.max_audio_duration"
        in (finding["message"])
    )
    (bad,) = payload["dataset"]["bad_files"]
    assert bad["detail"].endswith("above data.max_text_length (90); and 4.81 s, above data.max_audio_duration (4.7 s)")


def test_fix_on_built_in_defaults_is_a_no_op(runner) -> None:
    result = runner.invoke(app, ["validate", "--fix"])
    assert result.exit_code == 0  # defaults have nothing to fix


def test_fix_says_it_changed_nothing_where_the_data_alone_is_bad(runner, tmp_path: Path) -> None:
    # --fix had printed the findings alone: bad clips, left as they were, read as repaired.
    import shutil

    from xtts_cli.data.scan import BUNDLED_SAMPLE

    shutil.copytree(BUNDLED_SAMPLE, tmp_path / "data")
    for clip in sorted((tmp_path / "data" / "wavs").glob("*.wav"))[:6]:
        clip.write_text("not audio", encoding="utf-8")
    config = tmp_path / "my.yaml"
    config.write_text("data:\n  batch_size: 4\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", "-c", str(config), "-d", str(tmp_path / "data"), "--fix"])
    assert result.exit_code == 1 and "dataset-unusable" in result.stdout
    assert result.stdout.count("nothing to fix: --fix edits the config alone") == 1, result.stdout
    assert config.read_text(encoding="utf-8") == "data:\n  batch_size: 4\n" and not (tmp_path / "my.yaml.bak").exists()


def test_device_index_on_a_machine_without_it(runner, write_config) -> None:
    path = write_config("devices:\n  data_gpu: 0\n  model_gpu: 1\n")
    result = runner.invoke(app, ["validate", "-c", str(path), "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    messages = [f["message"] for f in payload["findings"] if f["id"] == "device-not-found"]
    assert len(messages) == 2 and "available none" in messages[0]
    # No layout is shown as "what xtts train runs here": training refuses this one.
    assert payload["settings"] is None
    assert "resolved settings" not in runner.invoke(app, ["validate", "-c", str(path)]).stdout


def test_runtime_mode_over_compressed_audio_at_other_rates_is_pointed_to_auto(runner, write_config) -> None:
    corpora = Path(__file__).parent / "data" / "corpora"
    datasets = f"  datasets:\n    - path: {corpora / 'vctk'}\n    - path: {corpora / 'common_voice'}\n"
    findings = {}
    for mode in ("runtime", "auto"):
        path = write_config(f"data:\n  max_bad_file_fraction: 0.5\n  preprocessing_mode: {mode}\n{datasets}")
        result = runner.invoke(app, ["validate", "-c", str(path), "--json"])
        findings[mode] = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    # 48 kHz FLAC and MP3: runtime mode would resample and decode them every epoch.
    resampling, compressed = findings["runtime"]["dataset-resampling"], findings["runtime"]["dataset-compressed-audio"]
    assert "48000 Hz (12)" in resampling["message"] and "flac (6), mp3 (6)" in compressed["message"]
    for finding in (resampling, compressed):
        assert finding["fix"] == {"key": "data.preprocessing_mode", "action": "set", "value": "auto"}
    # A cache or a store does it once: nothing to say.
    assert not {"dataset-resampling", "dataset-compressed-audio"} & set(findings["auto"])


def test_data_path_on_the_command_line_stands_in_for_the_configs_datasets(runner, write_config) -> None:
    corpora = Path(__file__).parent / "data" / "corpora"
    path = write_config(f"data:\n  batch_size: 2\n  datasets:\n    - path: {corpora / 'vctk'}\n")
    result = runner.invoke(app, ["validate", "-c", str(path), "--data-path", str(corpora / "coqui"), "--json"])
    payload = json.loads(result.stdout)
    assert result.exit_code == 0, result.stdout
    assert [d["format"] for d in payload["dataset"]["datasets"]] == ["coqui"]
    # Too many bad files: an error that names the command listing them.
    bad = json.loads(runner.invoke(app, ["validate", "--data-path", str(corpora / "vctk"), "--json"]).stdout)
    (finding,) = [f for f in bad["findings"] if f["id"] == "dataset-unusable"]
    assert "2 of 8 dataset items are bad" in finding["message"]
    assert {b["reason"] for b in bad["dataset"]["bad_files"]} == {"missing", "missing_transcript"}


@pytest.mark.slow
def test_the_resolved_settings_are_the_ones_training_runs_with(runner, tmp_path: Path) -> None:
    from training_support import tiny_config

    from xtts_cli.config import resolve_config
    from xtts_cli.training.trainer import Trainer

    # Epochs, not max_steps: the total comes from the pipeline's batches per epoch.
    path = tiny_config(tmp_path, extra="  epochs: 3\n  max_minutes: 20")
    result = runner.invoke(app, ["validate", "-c", str(path), "--json"])
    assert result.exit_code == 0, result.output
    settings = json.loads(result.stdout)["settings"]
    trainer = Trainer(resolve_config(path, {}).config, run_dir=tmp_path / "run")
    try:
        parts = trainer.setup()
    finally:
        trainer.close()
    assert settings["steps_per_epoch"] == parts.input.steps_per_epoch > 1
    assert settings["total_steps"] == parts.total_steps == 3 * parts.input.steps_per_epoch
    assert settings["step_batch_size"] == parts.input.batch_size == 4
    assert (settings["xla"], settings["graph_mode"], settings["dtype_policy"]) == (False, True, "float32")
    assert settings["kind"] == parts.settings.kind == "autoregressive" and settings["max_minutes"] == 20

    shown = runner.invoke(app, ["validate", "-c", str(path)]).stdout
    assert "resolved settings" in shown
    per_epoch = parts.input.steps_per_epoch
    assert (
        f"batch 4 a step (4 per replica x 1); {per_epoch} steps an epoch; {3 * per_epoch} steps or 20 minutes" in shown
    )
    # Under multi_worker the budget is refused (multi-worker-time-budget): the plan had promised it all the same.
    from xtts_cli.training.settings import describe_settings

    planned = describe_settings({**settings, "multi_worker": True})[1]
    assert f"{3 * per_epoch} steps (training.max_minutes 20 is no budget under multi_worker)" in planned, planned


def test_a_run_given_without_a_config_is_checked_with_its_own_as_train_resumes_it(runner, tmp_path: Path) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "run_before_run_data", run)
    result = runner.invoke(app, ["validate", "-r", str(run), "--data", str(SAMPLE_DATA), "--json"])
    assert result.exit_code == 0, result.output
    checked = json.loads(result.stdout)
    # Its batch of 4 and 3 steps, not the built-in defaults' 16 and 2,000 (called "what xtts train runs here").
    assert checked["config"] == str(run / "config.yaml")
    assert (checked["settings"]["step_batch_size"], checked["settings"]["total_steps"]) == (4, 3)
    own = (run / "config.yaml").read_text(encoding="utf-8")
    (run / "config.yaml").write_text("", encoding="utf-8")  # emptied: refused as train refuses it
    result = runner.invoke(app, ["validate", "-r", str(run), "--data", str(SAMPLE_DATA)])
    assert "holds no settings that load" in str(result.exception), result.output
    # A slip in a hand edit is named as it is, exit 2 (it had been called lost, exit 1, the value unsaid).
    (run / "config.yaml").write_text(own.replace("stop_threshold: 0.5", "stop_threshold: 1.5"), encoding="utf-8")
    result = runner.invoke(app, ["validate", "-r", str(run)])
    assert result.exit_code == 2 and "synthesis.stop_threshold: 1.5 is invalid" in result.output, result.output
    result = runner.invoke(app, ["train", "-r", str(run), "--steps", "1"])  # a ConfigError: main exits 2
    assert str(result.exception) == "synthesis.stop_threshold: 1.5 is invalid: should be less than 1", result.output


def test_minutes_of_speech_trained_from_zero_are_pointed_to_adapting_a_trained_run(runner, write_config, tmp_path):
    import shutil

    from xtts_cli.data.scan import BUNDLED_SAMPLE

    data = tmp_path / "my-voice"
    shutil.copytree(BUNDLED_SAMPLE, data)  # 1.5 minutes of speech, somebody's own this time

    def ids(*args: str) -> set[str]:
        result = runner.invoke(app, ["validate", "--data", str(data), "--json", *args])
        assert result.exit_code == 0, result.output
        return _ids(json.loads(result.stdout))

    base = Path(__file__).parent / "data" / "run_before_run_data"
    assert "dataset-small" in ids("-c", str(base / "config.yaml"))
    # Adapting a trained run: what minutes are for.
    # Into a run directory of its own: the base's own config would resume the base, which train refuses.
    adapted = ("--init-from", str(base), "--set", f"training.run_dir={tmp_path / 'adapted'}")
    assert "dataset-small" not in ids("-c", str(base / "config.yaml"), *adapted)
    assert "dataset-small" not in ids("-c", str(write_config("model:\n  kind: vocoder\n")))  # it reads no text
    assert "dataset-small" not in _ids(json.loads(runner.invoke(app, ["validate", "--json"]).stdout))  # the sample
    # Under a minute is said in seconds, not as "0.0 min".
    rows = (data / "metadata.csv").read_text(encoding="utf-8").splitlines()
    (data / "metadata.csv").write_text("\n".join(rows[:6]) + "\n", encoding="utf-8")
    small = runner.invoke(app, ["validate", "--data", str(data), "-c", str(base / "config.yaml"), "--json"])
    found = next(f for f in json.loads(small.stdout)["findings"] if f["id"] == "dataset-small")
    assert re.match(r"the training split holds \d+ s of speech", found["message"]), found["message"]


def test_a_speaker_of_a_clip_beside_others_of_minutes_is_a_warning(runner, tmp_path) -> None:
    # One 2 s clip of "alice" among "bob"'s minute and a half had passed every check: a voice of one clip.
    import shutil

    from xtts_cli.data.scan import BUNDLED_SAMPLE

    data = tmp_path / "two"
    shutil.copytree(BUNDLED_SAMPLE / "wavs", data / "wavs")
    rows = [row.split("|") for row in (BUNDLED_SAMPLE / "metadata.csv").read_text(encoding="utf-8").splitlines()]
    lines = [f"wavs/{clip}.wav|{text}|{'alice' if n == 0 else 'bob'}" for n, (clip, text, *_) in enumerate(rows)]
    (data / "metadata.csv").write_text("audio_file|text|speaker_name\n" + "\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", "--data", str(data), "--json"])
    (found,) = [f for f in json.loads(result.stdout)["findings"] if f["id"] == "dataset-thin-speaker"]
    assert re.match(
        r"1 of 2 speakers hold under 30 s of speech \(alice \d s\): too little to learn a voice", found["message"]
    )
    assert found["severity"] == "warning"


def test_init_from_takes_the_network_the_config_leaves_unwritten_from_the_base(runner, write_config, tmp_path):
    base = Path(__file__).parent / "data" / "run_before_run_data"  # tiny autoregressive, d_model 32, characters

    def findings(config: Path) -> dict[str, tuple[str, str]]:
        result = runner.invoke(app, ["validate", "-c", str(config), "--init-from", str(base), "--json"])
        return {f["id"]: (f["severity"], f["message"]) for f in json.loads(result.stdout)["findings"]}

    # A config with no model section trains the base's network: nothing to refuse, and it says what it took.
    found = findings(write_config("data:\n  batch_size: 4\n"))
    assert found["init-from"][0] == "info", found["init-from"]
    assert f"starts from {base} step 3 (an autoregressive run: " in found["init-from"][1]
    assert found["init-from-network"] == (
        "info",
        f"--init-from {base}: the base's model.d_model 32, model.num_heads 2, model.num_text_layers 1, "
        "model.num_decoder_layers 1, model.speaker_embedding_dim 16, data.trim_silence True (settings the config "
        "leaves unwritten)",
    )
    # What the config writes stays written, and is refused where the base's weights do not fit it.
    found = findings(write_config("model:\n  d_model: 64\n"))
    assert found["init-from"][0] == "error" and "model.d_model 32 -> 64" in found["init-from"][1]


def test_init_from_a_base_it_cannot_start_from_says_the_way_on(tmp_path):
    import shutil

    from xtts_cli.errors import XttsError
    from xtts_cli.training.parent import open_parent

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "run_before_run_data", run)
    checkpoints = run / "checkpoints"
    (checkpoints / "best").mkdir()
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copy(checkpoints / f"ckpt-3{suffix}", checkpoints / "best" / f"ckpt{suffix}")
        shutil.copy(checkpoints / f"ckpt-3{suffix}", checkpoints / f"ckpt-2{suffix}")
    # Early stopping's copy, which an interrupted run keeps: the best's weights, of the step early_stop.json
    # names (it had been refused, its hint the run's directory, whose latest weights are not the best's).
    (checkpoints / "early_stop.json").write_text('{"val_loss": 1.5, "step": 2, "since_best": 1}', encoding="utf-8")
    for spec in (checkpoints / "best" / "ckpt", checkpoints / "best"):
        best = open_parent(str(spec))
        assert (best.checkpoint, best.path, best.step) == (str(checkpoints / "best" / "ckpt"), run, 2)
    # The latest checkpoint gone: a kept one is named, or none said to be left (the hint had pointed at them).
    for suffix in (".index", ".data-00000-of-00001"):
        (checkpoints / f"ckpt-3{suffix}").unlink()
    with pytest.raises(XttsError) as stale:
        open_parent(str(run))
    assert stale.value.lines == [f"--init-from {run}: its checkpoint {checkpoints / 'ckpt-3'} is missing (.index)"]
    assert stale.value.hint == f"pass one of the checkpoints it keeps: e.g. --init-from {checkpoints / 'ckpt-2'}"
    (checkpoints / "ckpt-2.index").unlink()
    with pytest.raises(XttsError) as none:
        open_parent(str(run))
    assert none.value.hint == "it keeps no other checkpoint: pass another run, or train this one again"
    # A base's vocabulary that cannot be read: put back, or another base (--fresh had been said, which starts
    # the new run over and leaves the base as it is).
    whole = tmp_path / "whole"
    shutil.copytree(Path(__file__).parent / "data" / "run_before_run_data", whole)
    (whole / "vocab.json").write_text('{"format":', encoding="utf-8")
    with pytest.raises(XttsError) as unread:
        open_parent(str(whole))
    assert unread.value.lines[0].startswith(f"--init-from {whole}: cannot read tokenizer vocabulary")
    assert "--fresh" not in unread.value.hint and unread.value.hint.endswith("or pass another base")


def test_a_fix_a_bases_value_calls_for_is_the_files_to_make_not_the_command_lines(runner, write_config, tmp_path):
    import shutil

    base = tmp_path / "base"
    shutil.copytree(Path(__file__).parent / "data" / "run_before_run_data", base)
    written = (base / "config.yaml").read_text(encoding="utf-8").replace("max_mel_frames: 870", "max_mel_frames: 400")
    (base / "config.yaml").write_text(written, encoding="utf-8")
    config = write_config("data:\n  batch_size: 4\n")
    result = runner.invoke(app, ["validate", "-c", str(config), "--init-from", str(base), "--json"])
    (found,) = [f for f in json.loads(result.stdout)["findings"] if f["id"] == "max-mel-frames-too-small"]
    # The 400 is the base's (--init-from takes what the file leaves unwritten), and the file writing
    # its own fixes it: the fix had been withheld, "it follows from the command line's values".
    assert "command line" not in found["message"] and found["message"].endswith("set it to 862"), found
    fixed = runner.invoke(app, ["validate", "-c", str(config), "--init-from", str(base), "--fix"])
    assert fixed.exit_code == 0, fixed.output
    assert "max_mel_frames: 862" in config.read_text(encoding="utf-8")


def test_init_from_takes_the_bases_longest_clip_with_its_hop_length(write_config, tmp_path):
    """A base trained at hop 200 with clips up to 1,103 frames: the adaptation reads its clips in those
    frames, and keeps that limit (the preset's 870 frames would be 7.9 s at hop 200, dropping longer clips)."""
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.training.parent import inherit

    base = resolve_config(write_config("data:\n  hop_length: 200\n  max_mel_frames: 1103\n", name="base.yaml")).config
    config = resolve_config(write_config("data:\n  batch_size: 4\n", name="adapt.yaml")).config
    taken, note = inherit(config, base, "the base's")
    assert (taken.data.hop_length, taken.data.max_mel_frames) == (200, 1103)
    assert note is not None and "data.max_mel_frames 1103" in note
    written = resolve_config(write_config("data:\n  max_mel_frames: 900\n", name="own.yaml")).config
    assert inherit(written, base, "the base's")[0].data.max_mel_frames == 900  # what the config writes stays


def test_a_resumed_adapted_run_takes_its_network_from_itself_when_the_base_is_gone(write_config, tmp_path):
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.errors import XttsError
    from xtts_cli.run.directory import prepare_run_dir
    from xtts_cli.training.parent import with_base_network

    gone = tmp_path / "base-deleted"
    config = resolve_config(write_config(f"training:\n  init_from: {gone}\n")).config
    adapted = config.model_copy(update={"model": config.model.model_copy(update={"d_model": 32, "num_heads": 2})})
    run, _ = prepare_run_dir(tmp_path / "run", adapted)  # what the adapted run wrote, with a checkpoint
    run.checkpoints.mkdir(parents=True)
    (run.checkpoints / "checkpoint").write_text('model_checkpoint_path: "ckpt-1"\n')
    resumed, note = with_base_network(config, run.path, False)
    assert (resumed.model.d_model, resumed.model.num_heads) == (32, 2)
    assert note.startswith(f"resuming {run.path}: the run's own model.d_model 32")
    with pytest.raises(XttsError, match=str(gone)):  # started over: from the base, which is gone
        with_base_network(config, run.path, True)


def test_train_says_what_validate_warns_of_as_it_starts(runner, write_config, tmp_path) -> None:
    # The rules' warnings, said where the GPU idles, before the scan (here a missing dataset stops it).
    path = write_config(COMMENTED.replace("num_workers: 1 ", f"dataset_path: {tmp_path / 'none'}\n  num_workers: 1 "))
    result = runner.invoke(
        app, ["train", "-c", str(path), "--run-dir", str(tmp_path / "run"), "--set", "training.enable_graph_mode=true"]
    )
    assert result.exit_code == 1, result.output
    said = [line for line in result.stderr.splitlines() if line.startswith(("warning: ", "hint: xtts validate"))]
    assert "warning: tf-native-loading-off: " in said[0] and not any("graph-mode-off" in line for line in said)
    # The graph mode set on the command line is not the file's to repair.
    assert said[-1] == f"hint: xtts validate -c {path} --fix repairs {len(said) - 1} of these in the config file"
    assert "is not a directory" in str(result.exception)
    # A path with a space is quoted, so the hint runs as pasted.
    spaced = path.rename(tmp_path / "my config.yaml")
    result = runner.invoke(app, ["train", "-c", str(spaced), "--run-dir", str(tmp_path / "run")])
    assert f"hint: xtts validate -c '{spaced}' --fix repairs " in result.stderr


def test_a_cache_over_its_budget_is_one_finding_with_the_budget_in_its_own_unit(runner) -> None:
    sets = ["--set", "data.preprocessing_mode=cache", "--set", "data.cache_memory_limit=100KB"]
    result = runner.invoke(app, ["validate", "-c", "tiny-cpu", *sets, "--json"])
    payload = json.loads(result.stdout)
    over = [f for f in payload["findings"] if f["severity"] == "error"]
    assert [f["id"] for f in over] == ["data-cache-over-budget"], over
    assert "over the 100 kB budget" in over[0]["message"]


def test_the_data_report_names_clips_that_are_not_mono(runner) -> None:
    dataset = Path(__file__).parent / "data" / "dataset"  # one stereo clip among mono ones
    text = runner.invoke(app, ["validate", "--data", str(dataset), "--set", "data.max_bad_file_fraction=0.9"]).stdout
    assert "mono 16, stereo 1" in text
    sample = runner.invoke(app, ["validate"]).stdout  # all mono: not said
    assert "audio: wav 40; 22050 Hz 40\n" in sample


def test_epochs_that_end_the_run_first_are_its_length_and_the_warm_up_is_checked_against_them(runner) -> None:
    result = runner.invoke(
        app,
        ["validate", "-c", "tiny-cpu", "--set", "training.epochs=10", "--set", "training.warmup_steps=100", "--json"],
    )
    payload = json.loads(result.stdout)
    per_epoch = payload["settings"]["steps_per_epoch"]
    assert payload["settings"]["total_steps"] == 10 * per_epoch < 300  # not max_steps, which it never reaches
    (warmup,) = [f for f in payload["findings"] if f["id"] == "warmup-past-the-end"]
    assert f"not below the {10 * per_epoch} steps training.epochs (10) ends the run at" in warmup["message"]


def test_a_value_in_brackets_is_shown_as_written_not_read_as_terminal_markup(runner, tmp_path) -> None:
    import shutil

    from xtts_cli.data.scan import BUNDLED_SAMPLE

    data = tmp_path / "take[old]"
    shutil.copytree(BUNDLED_SAMPLE, data)
    result = runner.invoke(app, ["validate", "--set", f"data.dataset_path={data}"])
    assert f"dataset take[old] (ljspeech, language en): {data}: 39 train" in result.stdout, result.stdout
    missing = runner.invoke(app, ["validate", "--set", f"data.dataset_path={tmp_path / 'gone[old]'}"])
    assert f"data.dataset_path '{tmp_path / 'gone[old]'}' does not exist" in missing.stdout, missing.stdout


def test_a_validation_dataset_with_too_many_bad_files_is_reported_as_that_dataset_with_its_files(
    runner, tmp_path
) -> None:
    import shutil

    from xtts_cli.data.scan import BUNDLED_SAMPLE

    held = tmp_path / "held"
    (held / "wavs").mkdir(parents=True)
    rows = (BUNDLED_SAMPLE / "metadata.csv").read_text(encoding="utf-8").splitlines()[:8]
    for row in rows:
        shutil.copy(BUNDLED_SAMPLE / "wavs" / f"{row.split('|')[0]}.wav", held / "wavs")
    for name in ("a", "b", "c"):
        (held / "wavs" / f"{name}.wav").write_text("x")
        rows.append(f"{name}|Some text.|Some text.")
    (held / "metadata.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", "--set", f"data.eval_dataset_path={held}", "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)  # validate's own report, not a bare error
    # Every clip of the training data trains: the other dataset is the validation, none is held out here.
    assert payload["valid"] is False and payload["dataset"]["train_items"] == 40
    listed = {bad["path"]: bad["dataset"] for bad in payload["dataset"]["bad_files"]}
    assert listed == {f"wavs/{n}.wav": "data.eval_dataset_path" for n in "abc"}
    (unusable,) = [f for f in payload["findings"] if f["id"] == "dataset-unusable"]
    assert unusable["message"].startswith("data.eval_dataset_path: 3 of 11 dataset items are bad")
    assert "each is listed with its reason" in unusable["message"]
    # As training data, the same: validate lists them (it had said to run `xtts validate --json`).
    alone = json.loads(runner.invoke(app, ["validate", "--data", str(held), "--json"]).stdout)
    (unusable,) = [f for f in alone["findings"] if f["id"] == "dataset-unusable"]
    assert "each is listed with its reason" in unusable["message"] and "xtts validate" not in unusable["message"]
    missing = runner.invoke(app, ["validate", "--val-data", str(tmp_path / "gone")])  # train's flag, here too
    assert f"data.eval_dataset_path: '{tmp_path / 'gone'}' is not a directory" in missing.stdout
    assert "empty for the bundled sample" not in missing.stdout  # that is training's fallback, not validation's
    listed_twice = f"data.datasets=[{{path: {BUNDLED_SAMPLE}}}, {{path: {tmp_path / 'gone'}}}]"
    result = runner.invoke(app, ["validate", "--set", listed_twice])
    assert "point it at that dataset's folder, or remove the entry" in result.stdout
    assert "bundled sample" not in result.stdout
    # Its good clips are counted as the validation, and the training data itself given as one is named.
    for row in ("a", "b", "c"):
        shutil.copy(BUNDLED_SAMPLE / "wavs" / "XTTS001-0001.wav", held / "wavs" / f"{row}.wav")
    usable = runner.invoke(app, ["validate", "--val-data", str(held)])
    assert (
        "39 train + 1 validation clips" not in usable.stdout
        and "validation: 11 clips of data.eval_dataset_path" in usable.stdout
    )
    same = json.loads(runner.invoke(app, ["validate", "--val-data", str(BUNDLED_SAMPLE), "--json"]).stdout)
    assert same["dataset"]["eval_items"] == 40
    (inside,) = [f for f in same["findings"] if f["id"] == "dataset-eval-in-train"]
    assert inside["message"].startswith("40 validation clips (e.g. ") and "--val-data" in inside["message"]


@pytest.mark.parametrize("frontend", ["characters", "phonemes"])
def test_transcripts_holding_markup_or_emoji_are_a_warning_naming_the_first(runner, tmp_path, frontend, capsys) -> None:
    import shutil

    from xtts_cli.data.scan import BUNDLED_SAMPLE

    data = tmp_path / "data"
    shutil.copytree(BUNDLED_SAMPLE, data)
    lines = (data / "metadata.csv").read_text(encoding="utf-8").splitlines()
    lines[2] = "XTTS001-0003|I paid for pizzas \U0001f355 here.|I paid for pizzas \U0001f355 here."
    lines[5] = lines[5].split("|")[0] + "|Fish &amp; chips <b>tonight</b>.|Fish &amp; chips <b>tonight</b>."
    (data / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    sets = ["--set", f"data.dataset_path={data}", "--set", f"data.text_frontend={frontend}", "--json"]
    findings = {f["id"]: f for f in json.loads(runner.invoke(app, ["validate", *sets]).stdout)["findings"]}
    found = findings["dataset-unspoken-text"]
    if frontend == "characters":  # the emoji would be a symbol of the vocabulary
        assert found["message"].startswith("2 transcripts hold what nobody says (e.g. metadata.csv:3: 'I paid for")
        assert "tags and entities, emoji and invisible characters as sounds" in found["message"]
    else:  # espeak-ng is given no emoji: the markup alone is read
        assert found["message"].startswith("1 transcript holds what nobody says (e.g. metadata.csv:6: 'Fish &amp;")
    clean = runner.invoke(app, ["validate", "--json"]).stdout
    assert "dataset-unspoken-text" not in clean
    # train says it too as the scan ends (it had said nothing, and learnt the tags as sounds).
    from xtts_cli.cli.progress import TrainingProgress
    from xtts_cli.config import resolve_config
    from xtts_cli.data.scan import scan_dataset
    from xtts_cli.training.events import ScanFinished

    data_config = resolve_config(None, {"data.dataset_path": str(data), "data.text_frontend": frontend}).config.data
    scanned = ScanFinished(scan_dataset(data_config), data_config)
    for enabled in (False, True):  # --json, then the terminal's progress
        capsys.readouterr()
        TrainingProgress(enabled=enabled).update(scanned)
        assert f"warning: {found['message']}" in " ".join(capsys.readouterr().err.split()), enabled


def test_validation_clips_the_training_file_lists_too_are_a_warning(runner, tmp_path: Path) -> None:
    import shutil

    from xtts_cli.data.scan import BUNDLED_SAMPLE

    data = tmp_path / "ds"
    shutil.copytree(BUNDLED_SAMPLE, data)
    rows = (data / "metadata.csv").read_text(encoding="utf-8").splitlines()
    (data / "eval.csv").write_text("\n".join(rows[:3]) + "\n", encoding="utf-8")
    args = ["validate", "--set", f"data.dataset_path={data}", "--set", "data.metadata_eval_file=eval.csv", "--json"]
    payload = json.loads(runner.invoke(app, args).stdout)
    (found,) = [f for f in payload["findings"] if f["id"] == "dataset-eval-in-train"]
    assert found["severity"] == "warning" and found["message"].startswith(
        f"3 validation clips (e.g. {rows[0].split('|')[0]}) train too"
    )
    (data / "eval.csv").write_text("\n".join(rows[-3:]) + "\n", encoding="utf-8")
    (data / "metadata.csv").write_text("\n".join(rows[:-3]) + "\n", encoding="utf-8")
    payload = json.loads(runner.invoke(app, args).stdout)
    assert "dataset-eval-in-train" not in {f["id"] for f in payload["findings"]}


def test_a_dataset_of_no_clip_prints_no_empty_speaker_or_audio_line(runner, tmp_path: Path) -> None:
    (tmp_path / "wavs").mkdir()
    (tmp_path / "metadata.csv").write_text("", encoding="utf-8")
    result = runner.invoke(app, ["validate", "--data", str(tmp_path)])
    assert result.exit_code == 1 and "dataset-unusable" in result.stdout, result.output
    assert "0 speakers" not in result.stdout and "audio: ;" not in result.stdout, result.stdout


def test_validate_of_a_run_it_resumes_refuses_data_the_runs_vocabulary_cannot_read(runner, tmp_path: Path) -> None:
    import shutil

    # A resume keeps the vocabulary the run started with: a dataset in another language, or with
    # letters the run never had, is refused by `xtts train` after its scan. validate had said
    # "0 errors" of the same config and run.
    here = Path(__file__).parent / "data"
    run = tmp_path / "run"
    shutil.copytree(here / "run_before_run_data", run)
    for name in ("en", "de"):
        shutil.copytree(here / "corpora" / "ljspeech2", tmp_path / name)
    config = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
    config["data"].update(batch_size=2, dataset_path=None)

    def findings(*datasets: tuple[str, str]) -> dict[str, dict]:
        config["data"]["datasets"] = [{"path": str(tmp_path / name), "language": code} for name, code in datasets]
        (tmp_path / "two.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        result = runner.invoke(app, ["validate", "-c", str(tmp_path / "two.yaml"), "-r", str(run), "--json"])
        return {f["id"]: f for f in json.loads(result.stdout)["findings"] if f["id"].startswith("resume-")}

    found = findings(("en", "en"))  # letters it knows, a speaker it does not
    assert list(found) == ["resume-speakers"] and found["resume-speakers"]["severity"] == "warning"
    assert (
        "speaker en of this data is not among the run's 4 (fixed when it started)"
        in found["resume-speakers"]["message"]
    )
    found = findings(("en", "en"), ("de", "de"))
    assert found["resume-vocabulary"]["severity"] == "error"
    assert (
        f"{run} resumes: {tmp_path / 'de' / 'metadata.csv'}:2 (LJ001-0001): language 'de' is not one this run was started with (en)"
        in (found["resume-vocabulary"]["message"])
    )
    with open(tmp_path / "de" / "metadata.csv", "r+", encoding="utf-8") as metadata:
        lines = metadata.read().replace("The cat sat down.", "Grüße aus Köln.")
        metadata.seek(0)
        metadata.write(lines)
    found = findings(("en", "en"), ("de", "en"))
    assert (
        f"{tmp_path / 'de' / 'metadata.csv'}:1 (LJ001-0000): text has characters not in the tokenizer vocabulary"
        in (found["resume-vocabulary"]["message"])
    )
    assert "'ß' (U+00DF)" in found["resume-vocabulary"]["message"]
    # A run with no checkpoint yet starts anew: its vocabulary is this data's.
    shutil.rmtree(run / "checkpoints")
    assert findings(("en", "en"), ("de", "de")) == {}


def test_a_finding_on_a_key_written_under_its_older_name_names_it_as_written(runner, write_config) -> None:
    # The file says data.enable_xla; the finding had named training.enable_xla_compilation, a key it lacks.
    path = write_config("data:\n  enable_xla: false\n")
    payload = json.loads(runner.invoke(app, ["validate", "-c", str(path), "--json"]).stdout)
    (xla,) = [f for f in payload["findings"] if f["id"] == "xla-off"]
    assert xla["message"].startswith("data.enable_xla (training.enable_xla_compilation now) is false"), xla
    # Its fix line names the line --fix edits; --json keeps today's name for scripts.
    assert xla["fix"]["key"] == "training.enable_xla_compilation"
    said = runner.invoke(app, ["validate", "-c", str(path)]).stdout
    assert "fix: set data.enable_xla: auto  (xtts validate" in said, said


def test_validate_takes_the_flags_train_sets_the_config_with(runner, write_config) -> None:
    # `xtts train ... --batch-size 64 --steps 40` checked as written: validate had no such options.
    payload = json.loads(runner.invoke(app, ["validate", "-c", "tiny-cpu", "--batch-size", "64", "--json"]).stdout)
    (empty,) = [f for f in payload["findings"] if f["id"] == "dataset-no-batch"]
    assert "no full batch of 64" in empty["message"] and empty["message"].endswith("change it there)"), empty
    assert empty["fix"] is None  # the command line's value: not the file's to fix
    steps = json.loads(
        runner.invoke(app, ["validate", "-c", "tiny-cpu", "--steps", "40", "--epochs", "20", "--json"]).stdout
    )
    assert steps["settings"]["total_steps"] == 40
    twice = runner.invoke(app, ["validate", "-c", "tiny-cpu", "--steps", "4", "--max-steps", "5"])
    assert "the number of steps is given twice: --steps 4 and --max-steps 5" in str(twice.exception)
    # And the launch flags: an optimization level's bundle, a cluster's workers (it had refused both).
    level = runner.invoke(app, ["validate", "-c", "tiny-cpu", "--optimization-level", "maximum", "--json"])
    assert json.loads(level.stdout)["dataset"]["preprocessing_mode"] == "precompute", level.output
    hosts = ["--worker-hosts", "127.0.0.1:23456,127.0.0.1:23457", "--task-index", "0"]
    cluster = runner.invoke(app, ["validate", "-c", "tiny-cpu", *hosts, "--json"])
    assert json.loads(cluster.stdout)["settings"]["multi_worker"] is True, cluster.output


def test_validate_says_what_train_refuses_of_its_run_directory(runner, tmp_path: Path) -> None:
    # validate -r had said 0 errors of a run train then refused: another model, files of the user's,
    # an acoustic run where the vocoder goes.
    import shutil

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "run_before_run_data", run)

    def refused(*args: str) -> list[str]:
        result = runner.invoke(app, ["validate", *args, "--json"])
        return [f["message"] for f in json.loads(result.stdout)["findings"] if f["id"] == "run-dir"]

    assert refused("-r", str(run)) == []
    (changed,) = refused("-r", str(run), "--model-size", "big")
    assert changed.startswith(f"xtts train would refuse it: {run} holds a run with another model config; changed: ")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine", encoding="utf-8")
    (foreign,) = refused("-c", "tiny-cpu", "-r", str(tmp_path / "mine"))
    assert "holds files xtts did not write (notes.txt)" in foreign
    shutil.copytree(run, tmp_path / "spoken" / "vocoder")
    (speaks,) = refused("-c", "tiny-cpu", "-r", str(tmp_path / "spoken"))
    assert "vocoder holds a run that speaks (model.kind acoustic)" in speaks
    # A run trained on the user's data, resumed with a config that names none; a run.json that cannot be read.
    unnamed = tmp_path / "unnamed.yaml"
    unnamed.write_text((run / "config.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    mine = (
        (run / "config.yaml").read_text(encoding="utf-8").replace("dataset_path: null", "dataset_path: /data/mine", 1)
    )
    (run / "config.yaml").write_text(mine, encoding="utf-8")
    (sample,) = refused("-c", str(unnamed), "-r", str(run))
    assert f"{run} trained on /data/mine, but this config names no data" in sample
    (run / "run.json").write_text('{"history": 5', encoding="utf-8")
    (record,) = refused("-c", str(unnamed), "-r", str(run))
    assert f"{run / 'run.json'} cannot be read" in record


def test_a_fix_to_a_runs_own_config_is_offered_in_a_copy_resumed_into_the_run(runner, tmp_path) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "legacy_run", run)
    text = (run / "config.yaml").read_text(encoding="utf-8")
    (run / "config.yaml").write_text(text.replace("mixed_precision: false", "mixed_precision: true"), encoding="utf-8")
    result = runner.invoke(app, ["validate", "-c", str(run / "config.yaml")])
    # The record of what the run trained with: --fix had been offered on it.
    assert (
        f"(in a copy: cp {run / 'config.yaml'} my.yaml; xtts validate -c my.yaml --fix; xtts train -c my.yaml -r {run})"
        in " ".join(result.output.split())
    ), result.output
