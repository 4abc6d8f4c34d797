"""Configs as users write them and command lines as they type them: what is refused, in one line that
says where, before any work."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from xtts_cli.cli.app import app
from xtts_cli.config.loading import resolve_config
from xtts_cli.config.preset_files import preset_path
from xtts_cli.errors import ConfigError, XttsError

SAMPLE = Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample"


@pytest.mark.parametrize(
    "text, line",
    [
        (
            "data:\n  batch_size: 4\ndata:\n  n_mels: 80\n",
            "line 3, column 1: 'data' is written twice (first on line 1)",
        ),
        (
            "data:\n  batch_size: 4\n  batch_size: 8\n",
            "line 3, column 3: 'batch_size' is written twice (first on line 2)",
        ),
    ],
)
def test_a_key_written_twice_is_named_with_its_lines_not_dropped(write_config, text, line):
    path = write_config(text)
    with pytest.raises(ConfigError) as refused:
        resolve_config(path)
    assert refused.value.lines == [f"{path}: {line}"]


def test_a_flag_is_not_a_number_and_a_value_every_union_member_refuses_is_one_line(write_config):
    with pytest.raises(ConfigError) as flag:
        resolve_config(write_config("data:\n  batch_size: yes\n"))
    assert flag.value.lines == [
        "data.batch_size: 'true' is invalid: should be a valid integer, unable to parse string as an integer"
    ]
    assert resolve_config(write_config("data:\n  pin_memory: yes\n")).config.data.pin_memory is True  # a flag stays one
    with pytest.raises(ConfigError) as union:
        resolve_config(None, sets=["data.cache_memory_limit=-5"])
    with pytest.raises(ConfigError) as nan:
        resolve_config(None, sets=["training.learning_rate=nan"])
    assert nan.value.lines == ["training.learning_rate: 'nan' is invalid: should be a finite number"]
    assert union.value.lines == [
        "data.cache_memory_limit: -5 is invalid: should be 'auto', or could not parse value and unit from byte string"
    ]


def test_a_misspelt_key_of_one_dataset_is_matched_among_a_datasets_keys():
    with pytest.raises(ConfigError) as typo:
        resolve_config(None, sets=[f"data.datasets=[{{path: {SAMPLE}, wieght: 2}}]"])
    assert typo.value.lines == ["data.datasets[0].wieght: unknown key; did you mean weight?"]


def test_a_config_that_is_a_folder_or_not_utf8_is_named_so(tmp_path):
    with pytest.raises(ConfigError) as folder:
        resolve_config(tmp_path)
    assert folder.value.lines == [f"--config {tmp_path} is a folder, not a config file"]
    os.mkfifo(tmp_path / "pipe")  # there, but no file: it had been "not found, and no preset has that name"
    for there in ("/dev/null", str(tmp_path / "pipe")):
        with pytest.raises(ConfigError) as special:
            resolve_config(there)
        assert special.value.lines == [f"--config {there} is not a regular file"]
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"data:\n  batch_size: 4  # caf\xe9\n")
    with pytest.raises(ConfigError) as encoded:
        resolve_config(latin)
    assert (
        encoded.value.lines == [f"{latin} is not UTF-8 text (line 2, byte 28)"]
        and encoded.value.hint == "save it as UTF-8"
    )


def test_a_bad_value_from_the_command_line_over_a_preset_points_at_the_command_line_not_the_preset():
    with pytest.raises(ConfigError) as given:
        resolve_config("tiny-cpu", sets=["training.freeze=[foo]"])
    assert given.value.hint == "fix the value given on the command line for training.freeze (--set or its flag)"
    with pytest.raises(ConfigError) as both:
        resolve_config("tiny-cpu", {"data.dataset_path": str(SAMPLE)}, sets=[f"data.datasets=[{{path: {SAMPLE}}}]"])
    assert both.value.hint.startswith("fix the value given on the command line for data.dataset_path, data.datasets")


def test_an_epoch_of_no_batch_is_fixed_with_the_batch_its_message_names(runner, write_config):
    # The message named data.batch_size 39; its fix had been null, so --fix and scripts could not make it.
    path = write_config("data:\n  batch_size: 64\n")
    found = {
        f["id"]: f for f in json.loads(runner.invoke(app, ["validate", "-c", str(path), "--json"]).stdout)["findings"]
    }
    assert found["dataset-no-batch"]["fix"] == {"key": "data.batch_size", "action": "set", "value": 39}
    fixed = runner.invoke(app, ["validate", "-c", str(path), "--fix", "--json"])
    assert fixed.exit_code == 0 and "dataset-no-batch" not in {f["id"] for f in json.loads(fixed.stdout)["findings"]}
    assert "batch_size: 39" in path.read_text()
    # Found on the --data given, its fix line's command gives it too (without it: "nothing to fix").
    path.write_text("data:\n  batch_size: 64\n", encoding="utf-8")
    corpus = Path(__file__).parent / "data" / "corpora" / "ljspeech2"
    said = runner.invoke(app, ["validate", "-c", str(path), "-d", str(corpus)]).stdout
    assert f"fix: set data.batch_size: 3 (xtts validate -c {path} -d {corpus} --fix)" in " ".join(said.split()), said
    # And the --set values it was found under: pasted without them, the fix had not been the one found.
    said = runner.invoke(
        app, ["validate", "-c", str(path), "-d", str(corpus), "--set", "data.max_bad_file_fraction=0.5", "--steps", "3"]
    ).stdout
    command = " ".join(said.split()).split("fix: set data.batch_size: 3 (xtts ")[1].split(")")[0]
    assert command == (
        f"validate -c {path} -d {corpus} --set data.max_bad_file_fraction=0.5 --set training.max_steps=3 --fix"
    )
    assert runner.invoke(app, command.split()).exit_code == 0 and "batch_size: 3" in path.read_text()


def test_validate_says_what_train_would_refuse_an_epoch_of_no_batch_and_an_unknown_language(runner):
    result = runner.invoke(
        app, ["validate", "-c", "tiny-cpu", "--set", "data.batch_size=64", "--set", "data.language=eng", "--json"]
    )
    findings = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    assert result.exit_code == 1 and findings["dataset-no-batch"]["severity"] == "error"
    assert findings["dataset-no-batch"]["message"].startswith("39 training items give no full batch of 64")
    assert findings["dataset-no-batch"]["message"].endswith(
        "set data.batch_size to 39 or lower, or add data (the value is the command line's: change it there)"
    )
    assert json.loads(result.stdout)["settings"]["steps_per_epoch"] == 0  # not the 1 step a run never takes
    said = runner.invoke(app, ["validate", "-c", "tiny-cpu", "--set", "data.batch_size=64"]).output
    assert "batch 64 a step (64 per replica x 1); no full batch an epoch" in said
    # A batch two replicas split (20 each: 40 a step) or a worker's share of the clips: refused as train
    # refuses it (validate had said valid), the hint in the replica's batch (39 had failed again, as 78).
    mirrored = ["--set", "devices.logical_cpu_devices=2", "--set", "devices.strategy=mirrored"]
    split = runner.invoke(app, ["validate", "-c", "tiny-cpu", *mirrored, "--set", "data.batch_size=20", "--json"])
    refused = {f["id"]: f for f in json.loads(split.stdout)["findings"]}["dataset-no-batch"]["message"]
    assert split.exit_code == 1 and refused.startswith("39 training items give no full batch of 40"), refused
    assert refused.endswith(
        "set data.batch_size to 19 or lower (2 replicas take data.batch_size each), or add data (the value is the "
        "command line's: change it there)"
    )
    cluster = '{"cluster": {"worker": ["localhost:24456", "localhost:24457"]}, "task": {"type": "worker", "index": 1}}'
    share = runner.invoke(
        app,
        ["validate", "-c", "tiny-cpu", "--set", "devices.strategy=multi_worker", "--set", "data.batch_size=20"],
        env={"TF_CONFIG": cluster},
    )
    assert (
        share.exit_code == 1
        and "19 training items (this worker's share of 39) give no full batch of 20" in " ".join(share.output.split())
    )
    # What a worker of that cluster runs: its epoch counted from the whole dataset, its devices as one worker's.
    planned = runner.invoke(
        app,
        ["validate", "-c", "tiny-cpu", "--set", "devices.strategy=multi_worker", "--json"],
        env={"TF_CONFIG": cluster},
    )
    settings = json.loads(planned.stdout)["settings"]
    assert (settings["step_batch_size"], settings["steps_per_epoch"]) == (16, 39 // 16), settings  # it was null
    assert settings["devices"].startswith("multi-worker, 2 workers each on one device")
    assert findings["language-unknown"]["severity"] == "warning"
    assert findings["language-unknown"]["message"].startswith("data.language 'eng' is no language espeak-ng knows")
    assert findings["language-unknown"]["message"].endswith("(did you mean en, en-gb, nog, en-us?)")
    # A region espeak-ng has no voice of: the language itself first (it had offered fr, fi, fa, ar).
    regional = runner.invoke(app, ["validate", "-c", "tiny-cpu", "--set", "data.language=fa-IR", "--json"])
    unknown = {f["id"]: f for f in json.loads(regional.stdout)["findings"]}["language-unknown"]
    assert unknown["message"].endswith("(did you mean fa, fr, fi, ar?)"), unknown
    # A three-letter code (ISO 639-2, as catalogues write Persian): its two-letter one first (it had offered pt-br).
    from xtts_cli.data.phonemes import espeak_language

    with pytest.raises(XttsError, match=r"'per'; did you mean fa, pt-br\?"):
        espeak_language("per")


@pytest.mark.parametrize(
    "args, line",
    [
        (["-r", "{tmp}/a-file"], "--run-dir {tmp}/a-file is a file"),
        (["-r", "{tmp}/a-file/run"], "--run-dir {tmp}/a-file/run: {tmp}/a-file is a file, not a folder"),
        (["-r", "/proc/xtts-run"], "--run-dir /proc/xtts-run: nothing can be written in /proc"),
        (
            ["-r", "{tmp}/run", "--set", "training.checkpoint_dir={tmp}/a-file"],
            "training.checkpoint_dir {tmp}/a-file is a file",
        ),
        # "~" is the home's (here tmp), not a folder named "~" in the current one.
        (["--set", "training.run_dir=~/a-file"], "--run-dir {tmp}/a-file is a file"),
        (["-r", "~/a-file"], "--run-dir {tmp}/a-file is a file"),
    ],
)
def test_a_run_directory_that_cannot_be_written_is_refused_before_the_scan(runner, tmp_path, monkeypatch, args, line):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "a-file").write_text("mine", encoding="utf-8")
    result = runner.invoke(app, ["train", "-c", "tiny-cpu", *[arg.format(tmp=tmp_path) for arg in args]])
    assert isinstance(result.exception, XttsError), result.output
    assert result.exception.lines[0].startswith(line.format(tmp=tmp_path)) and "scanning" not in result.output


def test_init_writes_into_a_new_folder_and_refuses_a_folder_or_a_place_it_cannot_write(runner, tmp_path):
    made = runner.invoke(app, ["init", "-p", "tiny-cpu", "-o", str(tmp_path / "new" / "mine.yaml")])
    assert made.exit_code == 0 and (tmp_path / "new" / "mine.yaml").is_file()
    # --force over the user's file keeps it as .bak; a second --force does not replace that backup.
    (tmp_path / "new" / "mine.yaml").write_text("# my own\n", encoding="utf-8")
    said = [runner.invoke(app, ["init", "-p", "tiny-cpu", "-o", str(tmp_path / "new" / "mine.yaml"), "--force"])]
    said += [runner.invoke(app, ["init", "-p", "tiny-cpu", "-o", str(tmp_path / "new" / "mine.yaml"), "--force"])]
    assert [result.exit_code for result in said] == [0, 0]
    assert (tmp_path / "new" / "mine.yaml.bak").read_text(encoding="utf-8") == "# my own\n"
    # Where the user's file went is said (it had been "wrote mine.yaml" alone).
    assert said[0].stdout.startswith(
        f"wrote {tmp_path / 'new' / 'mine.yaml'} (preset tiny-cpu); the earlier file is {tmp_path / 'new' / 'mine.yaml.bak'}\n"
    )
    # Another preset over the unedited one, then the user's edits, then another: the .bak holding the
    # user's file had been replaced by a preset as init wrote it, their edits lost with exit 0.
    mine = tmp_path / "new" / "mine.yaml"
    other = runner.invoke(app, ["init", "-p", "speak-cpu", "-o", str(mine), "--force"])
    assert other.stdout.endswith("the earlier file was the preset tiny-cpu as init writes it, unedited: not kept\n")
    mine.write_text(mine.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    again = runner.invoke(app, ["init", "-p", "tiny-cpu", "-o", str(mine), "--force"])
    assert again.stdout.endswith(f"the earlier file is {mine}.bak.1\n"), again.stdout
    assert (tmp_path / "new" / "mine.yaml.bak").read_text(encoding="utf-8") == "# my own\n"
    assert (tmp_path / "new" / "mine.yaml.bak.1").read_text(encoding="utf-8").endswith("# edited\n")
    for force in ([], ["--force"]):  # without --force too: its hint must not point to --force
        folder = runner.invoke(app, ["init", "-p", "tiny-cpu", "-o", str(tmp_path / "new"), *force])
        assert folder.exception.lines == [f"--out {tmp_path / 'new'} is a folder"]
        assert folder.exception.hint == f"name a file, such as {tmp_path / 'new' / 'tiny-cpu.yaml'}"
    # A pipe where the file goes (a device alike: /dev/null, /dev/stdout), with --force or without:
    # refused, never replaced by a file nor a traceback.
    os.mkfifo(tmp_path / "pipe")
    for force in ([], ["--force"]):
        pipe = runner.invoke(app, ["init", "-p", "tiny-cpu", "-o", str(tmp_path / "pipe"), *force])
        assert pipe.exception.lines == [
            f"--out {tmp_path / 'pipe'} is not a file (a device, a pipe or a socket): writing it would replace it"
        ]
        assert (tmp_path / "pipe").is_fifo() and not (tmp_path / "pipe.bak").exists()
    empty = runner.invoke(app, ["init", "-p", "tiny-cpu", "-o", ""])  # `-o "$OUT"` with OUT unset
    assert empty.exception.exit_code == 2 and empty.exception.lines == ["--out is empty"]
    for args in (["", "-o", "e.yaml"], ["-p", " ", "-o", "e.yaml"]):  # the preset's variable unset: not `config`
        empty = runner.invoke(app, ["init", *args])
        assert empty.exception.exit_code == 2 and empty.exception.lines == ["the preset is empty"]
        assert not Path("e.yaml").exists()
    proc = runner.invoke(app, ["init", "-p", "tiny-cpu", "-o", "/proc/mine.yaml"])
    assert proc.exception.lines[0].startswith("--out /proc/mine.yaml: nothing can be written in /proc")
    # A name with a space: the command it says to run next reads it as one argument.
    spaced = tmp_path / "my configs" / "é.yaml"
    made = runner.invoke(app, ["init", "-p", "tiny-cpu", "-o", str(spaced)])
    assert made.exit_code == 0 and f"next: xtts train --config '{spaced}'" in made.output
    unknown = runner.invoke(app, ["init", "-p", "nope"])
    assert (
        unknown.exception.hint == "pass one of those names: xtts init NAME (or --preset NAME)"
    )  # init takes no --config
    assert unknown.exception.exit_code == 2  # a name the command line got wrong, as `report -c nope` (it had been 1)
    typed = runner.invoke(app, ["init", "-p", "tiny_cpu"])
    assert typed.exception.lines[0].startswith("there is no preset 'tiny_cpu' (did you mean tiny-cpu?); the presets")
    # The preset may be named as the command's argument, as --preset's value; not both, differently.
    named = runner.invoke(app, ["init", "speak-cpu", "-o", str(tmp_path / "named.yaml")])
    assert named.exit_code == 0 and "(preset speak-cpu)" in named.stdout, named.output
    twice = runner.invoke(app, ["init", "speak-cpu", "-p", "tiny-cpu"])
    assert twice.exception.lines == ["the preset is given twice: speak-cpu and --preset tiny-cpu"]
    assert twice.exception.exit_code == 2  # a command line that does not agree with itself: exit 2


def test_an_empty_path_or_config_flag_is_refused_not_read_as_the_current_folder(runner, tmp_path):
    # `-o "$OUT"`, `--init-from "$BASE"` with the variable unset: Path("") is ".", the current folder.
    for args, said in (
        (
            ["synthesize", "Hi.", "-r", str(tmp_path), "-o", ""],
            "-o is empty: give it a file, or leave it out",  # not "or folder": a folder is refused
        ),
        (["benchmark", "-c", "tiny-cpu", "-o", ""], "-o is empty: give it a file, or leave it out"),
        (["report", "-o", ""], "-o is empty: give it a file, or leave it out"),
        (["export", "--run-dir="], "--run-dir is empty: give it a folder, or leave it out"),
        # an argument too: `xtts vocode ""` had vocoded every recording of the current folder
        (["vocode", "", "--out-dir", str(tmp_path / "v")], "AUDIO is empty: give it a file or folder"),
        (["vocode", "--vocoder", "griffin-lim", " "], "AUDIO is empty: give it a file or folder"),
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and said in result.output, result.output
    result = runner.invoke(app, ["train", "-c", "tiny-cpu", "--init-from", " ", "-r", str(tmp_path / "run")])
    assert result.exception.exit_code == 2 and result.exception.lines == ["--init-from is empty"]
    assert not (tmp_path / "run").exists()
    both = runner.invoke(app, ["train", "-c", "tiny-cpu", "--fresh", "--force", "-r", str(tmp_path / "run")])
    assert both.exception.exit_code == 2 and both.exception.lines[0].startswith("--fresh and --force: ")
    twice = runner.invoke(app, ["train", "-c", "tiny-cpu", "--steps", "3", "--max-steps", "4"])
    assert twice.exception.exit_code == 2 and twice.exception.lines[0].startswith("the number of steps is given")
    # In a config an empty path is the field's "Empty: ..." meaning, as data.dataset_path's is.
    blank = resolve_config(None, sets=["training.init_from=''", "training.checkpoint_dir=' '"]).config.training
    assert (blank.init_from, blank.checkpoint_dir) == (None, None)


def test_a_path_with_an_environment_variable_is_refused_not_made_a_folder_of_that_name(runner, tmp_path):
    # A config expands no variable: `run_dir: ${WALK}/runs/e` had trained into a folder named '${WALK}'.
    (tmp_path / "e.yaml").write_text(
        "training:\n  run_dir: ${WALK}/runs/e\ndata:\n  datasets:\n    - path: $HOME/data\n", encoding="utf-8"
    )
    result = runner.invoke(app, ["train", "-c", str(tmp_path / "e.yaml"), "--steps", "1"], env={"WALK": str(tmp_path)})
    assert isinstance(result.exception, ConfigError), result.output
    said = "holds the environment variable {}, which a config does not expand: write the path (~ is read as your home)"
    lines = "\n".join(result.exception.lines)
    assert "training.run_dir: '${WALK}/runs/e' is invalid: " + said.format("${WALK}") in lines
    assert "data.datasets[0].path: '$HOME/data' is invalid: " + said.format("$HOME") in lines
    assert not any("$" in p.name for p in tmp_path.rglob("*"))
    # A shell's default (${WALK:-/tmp}) as well: it had made a folder named '${WALK:-'.
    with pytest.raises(ConfigError, match=r"holds the environment variable \$\{WALK:-/tmp\}"):
        resolve_config(None, sets=["training.checkpoint_dir=${WALK:-/tmp}/ck"])
    # What a shell expanded is a path as any other; a $ not before a name is a character of it.
    resolved = resolve_config(None, sets=[f"data.feature_cache_dir={tmp_path}/cost$5"]).config.data
    assert resolved.feature_cache_dir == f"{tmp_path}/cost$5"


def test_init_to_a_dash_prints_the_preset_and_writes_no_file(runner, tmp_path, monkeypatch):
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    printed = runner.invoke(app, ["init", "-p", "tiny-cpu", "-o", "-"])
    assert printed.exit_code == 0 and not list((tmp_path / "here").iterdir())
    assert yaml.safe_load(printed.stdout) == yaml.safe_load(preset_path("tiny-cpu").read_text(encoding="utf-8"))


def test_an_empty_dataset_path_is_the_bundled_sample_in_a_config_and_refused_on_the_command_line(runner):
    blank = resolve_config(None, sets=["data.dataset_path=' '", "data.eval_dataset_path=''"]).config.data
    assert (blank.dataset_path, blank.eval_dataset_path) == (None, None)  # not '.', the current folder
    with pytest.raises(ConfigError) as empty:
        resolve_config(None, sets=["data.datasets=[{path: ''}]"])
    assert empty.value.lines == ["data.datasets[0].path: '' is invalid: is empty; give the dataset's folder"]
    result = runner.invoke(app, ["validate", "--data", ""])  # `--data "$DATA"` with DATA unset
    assert isinstance(result.exception, XttsError)
    assert result.exception.lines == ["--data is empty"] and "leave --data out" in result.exception.hint


@pytest.mark.parametrize(
    "args, line",
    [
        (["report", "-o", "{tmp}"], "--out {tmp} is a folder"),
        (["report", "-r", "{tmp}/nowhere"], "--run-dir {tmp}/nowhere does not exist"),
        (["report", "-r", "{tmp}"], "--run-dir {tmp} is not an xtts run directory"),
        (["profile-step", "-c", "tiny-cpu", "--trace", "{tmp}/a-file"], "--trace {tmp}/a-file is a file"),
        (
            ["profile-step", "-c", "tiny-cpu", "--tensorboard", "/proc/tb"],
            "--tensorboard /proc/tb: nothing can be written",
        ),
        (
            ["data-service", "dispatcher", "--bind", "0.0.0.0", "--work-dir", "{tmp}/a-file"],
            "--work-dir {tmp}/a-file is a file",
        ),
    ],
)
def test_an_output_the_profilers_could_not_write_is_refused_before_they_measure(runner, tmp_path, args, line):
    (tmp_path / "a-file").write_text("mine", encoding="utf-8")
    result = runner.invoke(app, [arg.format(tmp=tmp_path) for arg in args])
    assert isinstance(result.exception, XttsError), result.output
    assert result.exception.lines[0].startswith(line.format(tmp=tmp_path))
    assert (tmp_path / "a-file").read_text(encoding="utf-8") == "mine" and not list(tmp_path.glob("*.partial"))


def test_train_names_the_fix_of_a_batch_it_was_given_by_its_flag(runner, tmp_path: Path):
    # --batch-size 64 had been told to "set data.batch_size to 39 or lower", which the flag overrides again.
    result = runner.invoke(app, ["train", "-c", "tiny-cpu", "--batch-size", "64", "-r", str(tmp_path / "run")])
    assert result.exit_code == 1 and result.exception.hint == "pass --batch-size 39 or lower, or add data"
    given = runner.invoke(app, ["train", "-c", "tiny-cpu", "--set", "data.batch_size=64", "-r", str(tmp_path / "r2")])
    assert given.exception.hint == "set data.batch_size to 39 or lower, or add data"  # a --set is the key's
    # profile-pipeline names it as the user gave it too (it had said "--batch-size" for a --set).
    for args, hint in (
        (["--batch-size", "64"], "pass --batch-size 39 or lower, or add data"),
        (["--set", "data.batch_size=64"], "set data.batch_size to 39 or lower, or add data"),
    ):
        profiled = runner.invoke(app, ["profile-pipeline", "-c", "tiny-cpu", "--batches", "2", *args])
        assert profiled.exit_code == 1 and profiled.exception.hint == hint, profiled.output
