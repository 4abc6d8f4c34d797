"""The run directory's layout is named once in the code (`run.files.LAYOUT`) and described once,
in docs/run-directory.md; this holds the two together."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xtts_cli.locks import LOCK_FILE
from xtts_cli.run.files import (
    LAYOUT,
    MARKER_FILE,
    REFERENCE_FILE,
    SPEAKERS_FILE,
    SPEAKING_RATE_FILE,
    VOCODER_DIR,
    RunDir,
)

DOC = Path(__file__).resolve().parents[1] / "docs" / "run-directory.md"


def _documented() -> tuple[set[str], str]:
    text = DOC.read_text(encoding="utf-8")
    table = text.split("## The run directory", 1)[1].split("\n## ", 1)[0]
    rows = {match.group(1) for match in re.finditer(r"^\| `([^`]+)` \|", table, re.M)}
    return rows, table


def test_the_doc_describes_every_name_of_the_layout_and_no_other() -> None:
    rows, section = _documented()
    hidden = {MARKER_FILE, LOCK_FILE}  # described in the prose under the table
    assert rows == set(LAYOUT) - hidden
    assert all(f"`{name}`" in section for name in hidden)


def test_the_layout_is_the_names_the_code_uses() -> None:
    run = RunDir(Path("run"))
    used = {
        run.config_file.name,
        run.run_file.name,
        run.vocab.name,
        run.metrics.name,
        SPEAKERS_FILE,
        SPEAKING_RATE_FILE,
        REFERENCE_FILE,
        MARKER_FILE,
        LOCK_FILE,
    } | {f"{name}/" for name in (run.checkpoints.name, run.tensorboard.name, run.samples.name, VOCODER_DIR)}
    assert used == set(LAYOUT)


# A run and its config written by xtts as it was before the run's data, the loop and the mel
# identity were reworked (commit 8446019): tests/data/README.md says how it was made.
BEFORE = Path(__file__).parent / "data" / "run_before_run_data"
BEFORE_CONFIG = Path(__file__).parent / "data" / "run_before_run_data.yaml"


def test_a_run_written_before_holds_only_names_of_the_layout() -> None:
    names = {path.name + ("/" if path.is_dir() else "") for path in BEFORE.iterdir()}
    assert names <= set(LAYOUT)


def test_its_config_and_its_resolved_config_still_validate(runner) -> None:
    from xtts_cli.cli.app import app

    for config in (BEFORE_CONFIG, BEFORE / "config.yaml"):
        result = runner.invoke(app, ["validate", "-c", str(config), "--json"])
        assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_it_resumes_and_speaks_with_todays_code(runner, tmp_path: Path) -> None:
    import json
    import shutil

    from xtts_cli.cli.app import app

    run = tmp_path / "run"
    shutil.copytree(BEFORE, run)
    # Its run.json predates data.trim_silence counting for resume; its config.yaml says true.
    assert "data.trim_silence" not in json.loads((run / "run.json").read_text())["model_identity"]
    result = runner.invoke(app, ["train", "-c", str(BEFORE_CONFIG), "--run-dir", str(run), "--steps", "4", "--json"])
    assert result.exit_code == 0, result.output
    trained = json.loads(result.stdout)
    assert trained["resumed"] and trained["start_step"] == 3 and trained["final_step"] == 4
    result = runner.invoke(app, ["synthesize", "the cat sat.", "-r", str(run), "-o", str(tmp_path / "x.wav"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["step"] == 4 and (tmp_path / "x.wav").stat().st_size > 1000


def test_a_runs_config_leaves_out_what_its_kind_does_not_read_and_validates_clean(tmp_path: Path) -> None:
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.diagnosis.config_rules import check_config
    from xtts_cli.kinds import kind_for
    from xtts_cli.run.directory import prepare_run_dir, release_run_dir

    config = resolve_config(None, sets=["model.decoder=duration"]).config
    run, _ = prepare_run_dir(tmp_path / "run", config, unread=kind_for(config).ignored_keys)
    release_run_dir(run)
    text = run.config_file.read_text(encoding="utf-8")
    assert "stop_threshold" not in text and "prenet_dropout" not in text and "decoder: duration" in text
    written = resolve_config(run.config_file)
    assert written.config == config  # what it leaves out is the defaults, which it does not read
    assert [f.id for f in check_config(written, probe_machine()) if f.id == "autoregressive-key"] == []


def test_fresh_says_the_runs_vocoder_went_aside_with_it(tmp_path: Path) -> None:
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.run.directory import prepare_run_dir, release_run_dir

    run, _ = prepare_run_dir(tmp_path / "run", XttsConfig())
    release_run_dir(run)
    (run.path / "vocoder").mkdir()
    (run.path / "vocoder" / "config.yaml").write_text("model:\n  kind: vocoder\n", encoding="utf-8")
    said: list[str] = []
    again, _ = prepare_run_dir(tmp_path / "run", XttsConfig(), fresh=True, note=said.append)
    release_run_dir(again)
    (kept,) = tmp_path.glob("run.old-*")
    assert said == [
        f"--fresh: the old run is kept as {kept}, its vocoder in {kept / 'vocoder'} (the new run speaks with "
        f"Griffin-Lim until one is trained into {tmp_path / 'run' / 'vocoder'}, or copied there)"
    ]


def test_a_runs_config_names_its_data_absolute_and_resumes_from_any_folder(tmp_path: Path, monkeypatch) -> None:
    import shlex

    from xtts_cli.config.loading import resolve_config
    from xtts_cli.run.directory import changed_settings, prepare_run_dir, release_run_dir

    (tmp_path / "my data").mkdir()
    monkeypatch.chdir(tmp_path)
    config = resolve_config(None, {"data.dataset_path": "my data"}).config
    run, _ = prepare_run_dir(Path("my run"), config)
    release_run_dir(run)
    text = run.config_file.read_text(encoding="utf-8")
    assert text.splitlines()[0].endswith(f"resume: xtts train --run-dir {shlex.quote(str(tmp_path / 'my run'))}")
    written = resolve_config(tmp_path / "my run" / "config.yaml").config
    assert changed_settings(written, config) == ""  # the same folder, however it was written
    monkeypatch.chdir("/")
    assert resolve_config(tmp_path / "my run" / "config.yaml").config.data.dataset_path == str(tmp_path / "my data")


def test_a_runs_config_keeps_a_name_in_another_script_readable(tmp_path: Path) -> None:
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.run.directory import prepare_run_dir, release_run_dir

    data = tmp_path / "صدای من"  # "my voice": a Persian user's folder, read back by a person
    data.mkdir()
    run, _ = prepare_run_dir(tmp_path / "run", resolve_config(None, {"data.dataset_path": str(data)}).config)
    release_run_dir(run)
    assert f"dataset_path: {data}" in run.config_file.read_text(encoding="utf-8")
    assert resolve_config(run.config_file).config.data.dataset_path == str(data)


@pytest.mark.parametrize(
    ("max_steps", "said"),
    [
        (
            None,
            "training.epochs 5 -> 8: the learning-rate schedule now spans 8 epochs, so the rate at this step "
            "changes with it",
        ),
        (
            1000,
            "training.epochs 5 -> 8: where the epochs end the run before training.max_steps, the learning-rate "
            "schedule spans them, so the rate at this step changes with it",
        ),
    ],
)
def test_a_resume_with_other_epochs_says_the_schedule_moves_with_them(
    tmp_path: Path, max_steps: int | None, said: str
) -> None:
    import tensorflow as tf

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.run.directory import prepare_run_dir, release_run_dir

    def config(epochs: int) -> XttsConfig:
        return XttsConfig.model_validate({"training": {"epochs": epochs, "max_steps": max_steps}})

    run, resumed = prepare_run_dir(tmp_path / "run", config(5))
    tf.train.CheckpointManager(tf.train.Checkpoint(step=tf.Variable(3)), run.checkpoints, max_to_keep=1).save()
    release_run_dir(run)
    notes: list[str] = []
    again, resumed = prepare_run_dir(tmp_path / "run", config(8), note=notes.append)
    release_run_dir(again)
    assert resumed and said in notes, notes


def test_a_resume_after_its_config_yaml_was_edited_by_hand_names_the_change(tmp_path: Path) -> None:
    # `xtts train -r RUN` reads RUN/config.yaml: edited there, the change had gone unsaid (the
    # learning rate fell fourfold in metrics.jsonl), where the same change through -c was named.
    import tensorflow as tf

    from xtts_cli.config.loading import resolve_config
    from xtts_cli.run.directory import prepare_run_dir, release_run_dir

    run, _ = prepare_run_dir(tmp_path / "run", resolve_config("tiny-cpu").config)
    tf.train.CheckpointManager(tf.train.Checkpoint(step=tf.Variable(3)), run.checkpoints, max_to_keep=1).save()
    release_run_dir(run)
    text = run.config_file.read_text(encoding="utf-8")
    run.config_file.write_text(re.sub(r"(?m)^  learning_rate: .*$", "  learning_rate: 0.0005", text), encoding="utf-8")
    notes: list[str] = []
    again, resumed = prepare_run_dir(tmp_path / "run", resolve_config(run.config_file).config, note=notes.append)
    release_run_dir(again)
    assert resumed and any("training.learning_rate (" in note and "-> 0.0005)" in note for note in notes), notes


@pytest.mark.parametrize(
    "written, line",
    [
        (b"model: [oops\n", "config.yaml: line 1: a [, { or quote opened there is never closed (the file ends first)"),
        (b"\xff\xfe", "config.yaml is not UTF-8 text (line 1, byte 0)"),
    ],
)
def test_a_run_whose_config_is_damaged_is_one_line_naming_it(tmp_path, written, line):
    from xtts_cli.errors import XttsError
    from xtts_cli.run.files import read_run

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.yaml").write_bytes(written)
    with pytest.raises(XttsError) as info:
        read_run(tmp_path / "run")
    assert info.value.lines == [f"{tmp_path / 'run'}/{line}"]


def _edited_run(tmp_path: Path, written: str, edited: str):
    """A copy of BEFORE whose config.yaml says `edited` where it wrote `written`: (its path, the
    error reading it raises, its config's text before the edit)."""
    import shutil

    from xtts_cli.errors import XttsError
    from xtts_cli.run.files import read_run

    run = tmp_path / "run"
    shutil.copytree(BEFORE, run)
    text = (run / "config.yaml").read_text(encoding="utf-8")
    (run / "config.yaml").write_text(text.replace(written, edited), encoding="utf-8")
    with pytest.raises(XttsError) as info:
        read_run(run)
    return run, info.value, text


def test_a_runs_config_edited_to_other_features_is_refused_where_it_speaks(tmp_path: Path) -> None:
    # A sample rate edited in RUN/config.yaml (to pair a vocoder of another rate) had been read by
    # synthesize, serve and export: speech at the wrong rate and pitch, said nowhere.
    from training_support import run_xtts

    run, error, _ = _edited_run(tmp_path, "  sample_rate: 22050\n", "  sample_rate: 16000\n")
    assert error.lines == [
        f"{run}/config.yaml says data.sample_rate 16000, but the run was trained with data.sample_rate 22050 "
        "(its run.json): its model hears the features it was trained on"
    ]
    done = run_xtts(["synthesize", "Hello.", "-r", str(run), "-o", str(tmp_path / "out.wav")], tmp_path)
    assert done.returncode == 1 and "loading" not in done.stderr, done.stderr[-2000:]
    assert f"hint: put data.sample_rate 22050 back in {run}/config.yaml" in done.stderr
    assert not (tmp_path / "out.wav").exists()


def test_a_runs_config_edited_to_another_network_is_refused_naming_what_to_put_back(tmp_path: Path) -> None:
    # A model size edited in RUN/config.yaml had met TensorFlow's shape error where the run spoke ("retrain
    # with --fresh"), and, adapted from, one that blamed the new run's config.
    from training_support import run_xtts

    from xtts_cli.run.files import read_run

    run, error, text = _edited_run(tmp_path, "  d_model: 32\n", "  d_model: 64\n")
    assert error.lines == [
        f"{run}/config.yaml says model.d_model 64, but the run was trained with model.d_model 32 (its run.json): "
        "its checkpoints hold the model those settings made"
    ]
    assert error.hint == f"put model.d_model 32 back in {run}/config.yaml; to change them, train a new run"
    base = ["train", "-c", str(BEFORE_CONFIG), "--init-from", str(run), "-r", str(tmp_path / "new")]
    done = run_xtts([*base, "--steps", "1"], tmp_path)
    assert done.returncode == 1 and f"hint: put model.d_model 32 back in {run}/config.yaml" in done.stderr
    # A regulariser has no weight: dropout changed, or a size written out as its preset has it, reads.
    edited = text.replace("  dropout: 0.1\n", "  dropout: 0.3\n")
    assert edited != text
    (run / "config.yaml").write_text(edited, encoding="utf-8")
    read_run(run)


def test_a_resume_with_a_datasets_weight_or_language_changed_names_that_change(tmp_path: Path) -> None:
    # By their paths alone the datasets had read the same on both sides of the note: "[a, b] -> [a, b]".
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.run.directory import changed_settings

    def config(weight: float, language: str) -> XttsConfig:
        datasets = [
            {"path": str(tmp_path / "en")},
            {"path": str(tmp_path / "de"), "weight": weight, "language": language},
        ]
        return XttsConfig.model_validate({"data": {"datasets": datasets}})

    said = changed_settings(config(2, "de"), config(5, "en"))
    assert said == f"data.datasets ({tmp_path / 'de'}: weight 2.0 -> 5.0, language de -> en)"


def test_a_checkpoint_cut_short_is_found_from_its_index_without_tensorflow(tmp_path):
    import shutil
    import subprocess
    import sys

    from xtts_cli.run.bundle import cut_short

    for part in (Path(__file__).parent / "data" / "legacy_run" / "checkpoints").glob("ckpt-3.*"):
        shutil.copy(part, tmp_path / part.name)
    prefix = tmp_path / "ckpt-3"
    shard = tmp_path / "ckpt-3.data-00000-of-00001"
    whole, index = shard.read_bytes(), (tmp_path / "ckpt-3.index").read_bytes()
    assert cut_short(prefix) is None
    shard.write_bytes(whole[:-1])  # the last tensor's last byte lost
    assert cut_short(prefix) == f"ckpt-3.data-00000-of-00001 holds {len(whole) - 1:,} of its {len(whole):,} bytes"
    shard.unlink()
    assert cut_short(prefix) == "ckpt-3.data-00000-of-00001 is missing"
    shard.write_bytes(whole)
    (tmp_path / "ckpt-3.index").write_bytes(index[:-10])
    assert cut_short(prefix) == f"ckpt-3.index is cut short ({len(index) - 10:,} bytes)"
    # A table whose footer is whole but whose blocks are not its own: left to TensorFlow to say.
    (tmp_path / "ckpt-3.index").write_bytes(b"\xff" * 100 + index[-48:])
    assert cut_short(prefix) is None
    probe = "import sys, xtts_cli.run.bundle; sys.exit('tensorflow' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", probe], check=False).returncode == 0


def test_a_run_whose_config_yaml_was_deleted_is_refused_not_resumed_on_the_defaults(tmp_path, runner):
    import shutil

    from xtts_cli.cli.app import app

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "legacy_run", run)
    (run / "config.yaml").unlink()
    # It had trained on the bundled sample with the built-in defaults, exit 0, and written them there.
    for command in (["train", "-r", str(run), "--steps", "5"], ["validate", "-r", str(run)]):
        result = runner.invoke(app, command)
        assert result.exit_code != 0 and str(result.exception).startswith(f"{run} has no config.yaml (deleted?)")
    assert not (run / "config.yaml").exists()
    spoken = runner.invoke(app, ["synthesize", "Hi.", "-r", str(run), "-o", str(tmp_path / "a.wav")])
    assert str(spoken.exception) == (
        f"{run} is a run whose config.yaml is missing (deleted?): --run-dir reads its model's settings there"
    )
    # Emptied and passed with -c: refused as `-r RUN` refuses it (the defaults had trained, and validate said valid).
    (run / "config.yaml").write_text("", encoding="utf-8")
    for command in (
        ["train", "-c", str(run / "config.yaml"), "-r", str(run)],
        ["validate", "-c", str(run / "config.yaml")],
    ):
        result = runner.invoke(app, command)
        assert str(result.exception).startswith(f"{run / 'config.yaml'} holds no settings that load"), result.output
