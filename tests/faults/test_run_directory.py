"""Nothing lost, one writer: the run directory against a user's own files, a second live run,
`--fresh` in the wrong place, and temporaries that are not ours. Each through the real thing: a
real second process holding the lock, real files beside the run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from training_support import run_xtts, subprocess_env, tiny_config

from xtts_cli.config.schema import XttsConfig
from xtts_cli.errors import XttsError
from xtts_cli.run.directory import MARKER_FILE, prepare_run_dir, release_run_dir, remove_stale_temporaries
from xtts_cli.run.files import RunDir

HOLD = """
import sys, time
from pathlib import Path
from xtts_cli import locks as run_lock
run_lock.acquire(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(120)
"""


def _saved_at(folder: Path, step: int) -> None:
    """A checkpoint of `step` in `folder`, named as training saves one (its files and the pointer)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("checkpoint", f"ckpt-{step}.index", f"ckpt-{step}.data-00000-of-00001"):
        (folder / name).write_text(f'model_checkpoint_path: "ckpt-{step}"\n' if name == "checkpoint" else "x")


_SAYS_WHETHER_TENSORFLOW_LOADED = """
import sys
from xtts_cli.cli.app import main
sys.argv = ["xtts", *sys.argv[1:]]
try:
    main()
except SystemExit as exit:
    print(f"exit {exit.code}, tensorflow loaded: {'tensorflow' in sys.modules}")
"""


def test_a_second_writer_is_refused_at_once_naming_the_holder(tmp_path):
    run = tmp_path / "run"
    prepare_run_dir(run, XttsConfig())
    release_run_dir(RunDir(run))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(run)], stdout=subprocess.PIPE, env=subprocess_env(), text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        # Refused before TensorFlow loads (seconds of the user's time): said by the process itself, not by
        # a clock a loaded machine slows.
        # A config `validate` warns of (prefetch off): the refusal is said alone, not after its warnings.
        train = ["train", "-c", str(tiny_config(tmp_path)), "-r", str(run), "--steps", "2"]
        train += ["--set", "data.prefetch_buffer_size=0"]
        done = subprocess.run(
            [sys.executable, "-c", _SAYS_WHETHER_TENSORFLOW_LOADED, *train],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=subprocess_env(),
            timeout=300,
        )
        assert done.stdout.strip() == "exit 1, tensorflow loaded: False", done.stderr[-2000:]
        errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
        assert errors[0].startswith(f"error: run directory {run} is in use by process {holder.pid} on ")
        assert done.stderr.lstrip().startswith("error: "), done.stderr[-2000:]
    finally:
        holder.kill()
        holder.wait()
    # The kernel released the lock with the process: the run is free again.
    prepare_run_dir(run, XttsConfig())
    release_run_dir(RunDir(run))


@pytest.mark.slow  # a second process trains
def test_a_run_with_no_checkpoint_yet_says_it_is_training_while_a_process_trains_it(tmp_path):
    from xtts_cli.run.files import no_checkpoint_hint
    from xtts_cli.training.parent import open_parent

    run = tmp_path / "run"
    prepare_run_dir(run, XttsConfig())
    (run / "config.yaml").write_text("{}\n", encoding="utf-8")
    release_run_dir(RunDir(run))
    assert no_checkpoint_hint(run) == f"train first: xtts train --run-dir {run}"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(run)], stdout=subprocess.PIPE, env=subprocess_env(), text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        # Started, still scanning its data: no vocabulary yet, which is not "not a run directory".
        for listing in ([], ["--list-speakers"]):
            done = run_xtts(["synthesize", "Hello.", "-r", str(run), *listing, "-o", str(tmp_path / "a.wav")], tmp_path)
            assert done.returncode == 1 and f"error: {run} holds no vocabulary yet (vocab.json)" in done.stderr
            assert f"hint: it is training now (process {holder.pid} on " in done.stderr, done.stderr
        with pytest.raises(XttsError) as refused:
            open_parent(run)
        assert refused.value.hint.startswith(f"it is training now (process {holder.pid} on ")
        assert refused.value.hint.endswith("wait for it, or pass --init-from another run")
    finally:
        holder.kill()
        holder.wait()
    assert "train it first" in no_checkpoint_hint(run, "--init-from")  # the lock went with the process


def test_a_folder_of_the_users_files_is_not_a_run_directory(tmp_path):
    mine = tmp_path / "project"
    mine.mkdir()
    config = mine / "config.yaml"
    config.write_text("# my commented config\ndata:\n  batch_size: 4\n", encoding="utf-8")
    with pytest.raises(XttsError) as caught:
        prepare_run_dir(mine, XttsConfig())
    assert caught.value.lines == [
        f"--run-dir {mine} holds files xtts did not write (config.yaml); a run writes only into an empty "
        "folder or one of its own"
    ]
    assert config.read_text(encoding="utf-8").startswith("# my commented config")  # untouched
    assert not (mine / MARKER_FILE).exists()
    # `--fresh` does not move it either.
    with pytest.raises(XttsError, match="holds files xtts did not write"):
        prepare_run_dir(mine, XttsConfig(), fresh=True)
    assert config.is_file()
    # Nor does the command: refused before the lock file is made in it, nothing written there.
    from typer.testing import CliRunner

    from xtts_cli.cli.app import app

    result = CliRunner().invoke(app, ["train", "-c", "tiny-cpu", "-r", str(mine)])
    assert isinstance(result.exception, XttsError) and "holds files xtts did not write" in result.exception.lines[0]
    assert sorted(p.name for p in mine.iterdir()) == ["config.yaml"]


def test_fresh_never_moves_the_current_directory_and_never_merges_two_old_runs(tmp_path, monkeypatch):
    run = tmp_path / "run"
    prepare_run_dir(run, XttsConfig())
    release_run_dir(RunDir(run))
    monkeypatch.chdir(run)
    with pytest.raises(XttsError, match="holds the current directory"):
        prepare_run_dir(run, XttsConfig(), fresh=True)
    monkeypatch.chdir(tmp_path)
    names = set()
    for _ in range(3):  # within one second: three different old-run names
        (run / "metrics.jsonl").write_text("{}\n")
        prepare_run_dir(run, XttsConfig(), fresh=True)
        release_run_dir(RunDir(run))
        names = {path.name for path in tmp_path.glob("run.old-*")}
    assert len(names) == 3
    assert all((tmp_path / name / "metrics.jsonl").is_file() for name in names)


def test_fresh_keeps_a_linked_run_directory_a_link_and_a_name_at_its_longest_has_a_name_aside(tmp_path):
    # A run directory linked to a larger disk had become a local folder (the link moved aside); a name
    # of 250 bytes had no room for ".old-<time>" (File name too long, a traceback).
    target = tmp_path / "big-disk" / "run"
    prepare_run_dir(target, XttsConfig())
    release_run_dir(RunDir(target))
    (target / "metrics.jsonl").write_text("{}\n")
    link = tmp_path / "run"
    link.symlink_to(target)
    said: list[str] = []
    prepare_run_dir(link, XttsConfig(), fresh=True, note=said.append)
    release_run_dir(RunDir(link))
    (kept,) = (tmp_path / "big-disk").glob("run.old-*")
    assert link.is_symlink() and link.resolve() == target and not (target / "metrics.jsonl").exists()
    assert (kept / "metrics.jsonl").is_file()
    assert said[0].startswith(f"--fresh: the old run is kept as {kept} ({link} still links to {target}, made anew")
    longest = tmp_path / ("L" * 250)
    prepare_run_dir(longest, XttsConfig())
    release_run_dir(RunDir(longest))
    (longest / "metrics.jsonl").write_text("{}\n")
    prepare_run_dir(longest, XttsConfig(), fresh=True)
    (aside,) = tmp_path.glob("L*.old-*")
    assert len(aside.name.encode()) <= 255 and (aside / "metrics.jsonl").is_file()


def test_a_checkpoint_folder_outside_the_run_belongs_to_one_run_and_fresh_moves_it_aside(tmp_path):
    # training.checkpoint_dir on a disk of its own, shared by mistake: a second run took over the
    # first's weights (resuming at its step) and wrote over its files, and --fresh still resumed.
    shared = tmp_path / "fast-disk" / "ckpts"
    config = XttsConfig.model_validate({"training": {"checkpoint_dir": str(shared)}})
    first, second = tmp_path / "first", tmp_path / "second"
    run, resume = prepare_run_dir(first, config)
    assert not resume and run.checkpoints == shared
    _saved_at(shared, 5)
    release_run_dir(run)
    with pytest.raises(XttsError) as error:
        prepare_run_dir(second, config)
    assert str(error.value) == (
        f"training.checkpoint_dir {shared} holds the checkpoints of the run {first.resolve()}; {second} would take "
        "over their weights and write over them"
    )
    assert error.value.hint == f"give each run a checkpoint folder of its own, e.g. {shared / 'second'}"
    run, resume = prepare_run_dir(first, config)  # its own run resumes from them
    assert resume
    release_run_dir(run)
    said: list[str] = []
    run, resume = prepare_run_dir(second, config, fresh=True, note=said.append)
    assert not resume and not any(shared.glob("ckpt-*"))
    (kept,) = tmp_path.joinpath("fast-disk").glob("ckpts.old-*")
    assert (kept / "ckpt-5.index").is_file() and said[-1].endswith(f"are kept as {kept}")
    release_run_dir(run)
    # Its checkpoints moved out of it, the folder names a run but holds nothing to take over: free.
    run, resume = prepare_run_dir(tmp_path / "third", config)
    assert not resume and (shared / ".xtts-checkpoints-of").read_text().strip() == str((tmp_path / "third").resolve())
    release_run_dir(run)


def _trained_outside(path: Path, step: int) -> tuple[Path, XttsConfig]:
    """A run at `path` whose checkpoints (one, of `step`) are in a folder on a disk of their own
    (training.checkpoint_dir beside it): that folder, and the run's config."""
    shared = path.parent / "fast-disk" / "ckpts"
    config = XttsConfig.model_validate({"training": {"checkpoint_dir": str(shared)}})
    run, _ = prepare_run_dir(path, config)
    _saved_at(shared, step)
    release_run_dir(run)
    return shared, config


def test_a_run_renamed_beside_its_checkpoint_folder_outside_it_resumes_and_a_copy_still_does_not(tmp_path):
    # `mv runs/a runs/b`: the folder named the run at runs/a, gone, and runs/b was refused as another
    # run that would take over its weights (and the hint's folder for it led nowhere).
    import shutil

    from xtts_cli.config.loading import resolve_config

    shared, _ = _trained_outside(tmp_path / "a", 5)
    shutil.copytree(tmp_path / "a", tmp_path / "copy")
    with pytest.raises(XttsError, match="holds the checkpoints of the run"):  # a copy beside its run: two writers
        prepare_run_dir(tmp_path / "copy", resolve_config(tmp_path / "copy" / "config.yaml").config)
    (tmp_path / "a").rename(tmp_path / "b")
    said: list[str] = []
    b = tmp_path / "b"
    run, resume = prepare_run_dir(b, resolve_config(b / "config.yaml").config, note=said.append)
    assert resume and said[0] == (
        f"training.checkpoint_dir {shared} held the checkpoints of {(tmp_path / 'a').resolve()}, which is gone: "
        f"taken as {b}'s"
    )
    assert (shared / ".xtts-checkpoints-of").read_text().strip() == str(b.resolve())
    release_run_dir(run)


def test_fresh_points_the_run_it_moves_aside_at_the_checkpoints_it_moves_aside(tmp_path):
    # The old run's config.yaml had named the folder the new run writes: it spoke, resumed and
    # exported with the new run's weights, and its own resume was refused as another run's.
    from xtts_cli.run.directory import recorded_config

    shared, config = _trained_outside(tmp_path / "voice", 16)
    run, resume = prepare_run_dir(tmp_path / "voice", config, fresh=True)
    assert not resume
    release_run_dir(run)
    (kept_run,) = tmp_path.glob("voice.old-*")
    (kept_checkpoints,) = (tmp_path / "fast-disk").glob("ckpts.old-*")
    recorded = recorded_config(RunDir(kept_run))
    assert recorded is not None and recorded.training.checkpoint_dir == str(kept_checkpoints)
    assert (kept_checkpoints / ".xtts-checkpoints-of").read_text().strip() == str(kept_run.resolve())
    assert RunDir.of(kept_run, recorded).pointed_checkpoint().endswith("ckpt-16")
    run, resume = prepare_run_dir(kept_run, recorded)  # the old run resumes from its own step
    assert resume
    release_run_dir(run)


def test_a_resume_whose_config_names_no_data_does_not_fall_back_to_the_sample(tmp_path):
    # `-c CONFIG` without the `-d` the run started with: it had gone on training on the bundled
    # sample, with a note that said only data.dataset_path ('...' -> None).
    data = tmp_path / "my data"
    mine = XttsConfig.model_validate({"data": {"dataset_path": str(data)}})
    run, _ = prepare_run_dir(tmp_path / "run", mine)
    run.checkpoints.mkdir()
    _saved_at(run.checkpoints, 5)
    release_run_dir(run)
    with pytest.raises(XttsError) as caught:
        prepare_run_dir(tmp_path / "run", XttsConfig())
    assert str(caught.value) == (
        f"{tmp_path / 'run'} trained on {data}, but this config names no data: the run would go on training on "
        "the bundled sample"
    )
    assert caught.value.hint.startswith(f"pass --data '{data}' as it started")
    release_run_dir(run)
    for config, force in ((mine, False), (XttsConfig(), True)):  # as it started; or asked for
        run, resume = prepare_run_dir(tmp_path / "run", config, force=force)
        assert resume
        release_run_dir(run)
    # Started on several datasets: --data names one, and the hint had named the first alone (the others dropped).
    several = XttsConfig.model_validate({"data": {"datasets": [{"path": "/d/en"}, {"path": "/d/fa"}]}})
    run, _ = prepare_run_dir(tmp_path / "run", several, force=True)
    release_run_dir(run)
    with pytest.raises(XttsError) as caught:
        prepare_run_dir(tmp_path / "run", XttsConfig())
    assert str(caught.value).startswith(f"{tmp_path / 'run'} trained on 2 datasets (/d/en, /d/fa), but this config")
    assert caught.value.hint.startswith(f"resume with its own config, which lists them: xtts train -r {tmp_path}/run;")


def test_a_resume_whose_features_no_longer_fit_the_runs_own_vocoder_says_so(tmp_path):
    # --force with another data.fmax: the vocoder in RUN/vocoder was refused by synthesize from then on, unsaid.
    import yaml

    run, _ = prepare_run_dir(tmp_path / "run", XttsConfig())
    (run.checkpoints).mkdir(parents=True)
    (run.checkpoints / "checkpoint").write_text('model_checkpoint_path: "ckpt-5"\n')
    release_run_dir(run)
    vocoder = tmp_path / "run" / "vocoder"
    vocoder.mkdir()
    settings = XttsConfig.model_validate({"model": {"kind": "vocoder"}}).model_dump(mode="json")
    (vocoder / "config.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    said: list[str] = []
    run, resume = prepare_run_dir(tmp_path / "run", XttsConfig(), note=said.append)  # the same features: no word
    release_run_dir(run)
    assert resume and not any("vocoder" in line for line in said), said
    changed = XttsConfig.model_validate({"data": {"fmax": 7600.0}})
    run, resume = prepare_run_dir(tmp_path / "run", changed, force=True, note=said.append)
    release_run_dir(run)
    assert said[-1] == (
        f"the run's own vocoder {vocoder} was trained on other features than these: fmax 7600.0 against 8000.0 "
        "(this run's first): synthesize, export and serve refuse it until it is trained again on this run's data "
        "section, or given --vocoder griffin-lim"
    )


def test_each_start_keeps_its_versions_and_a_resume_under_others_says_so(tmp_path):
    # A run half trained on TensorFlow 2.21 and resumed on 2.16 kept only the latest: it read as one version's.
    import tensorflow as tf

    from xtts_cli import __version__

    run, _ = prepare_run_dir(tmp_path / "run", XttsConfig())
    _saved_at(run.checkpoints, 5)
    release_run_dir(run)
    record = json.loads(run.run_file.read_text(encoding="utf-8"))
    assert record["history"][0]["tensorflow_version"] == record["tensorflow_version"] == tf.__version__
    assert record["history"][0]["xtts_version"] == __version__
    record["tensorflow_version"] = record["history"][0]["tensorflow_version"] = "2.16.2"  # as 2.16 wrote it
    run.run_file.write_text(json.dumps(record), encoding="utf-8")
    said: list[str] = []
    run, resume = prepare_run_dir(tmp_path / "run", XttsConfig(), note=said.append)
    release_run_dir(run)
    assert resume and said == [
        f"this run last trained under other versions: TensorFlow 2.16.2 -> {tf.__version__} (run.json's history "
        "keeps each start's)"
    ]
    starts = json.loads(run.run_file.read_text(encoding="utf-8"))["history"]
    assert [start["tensorflow_version"] for start in starts] == ["2.16.2", tf.__version__]


def test_a_resumes_changed_settings_are_said_as_the_config_writes_them(tmp_path):
    # Python's reprs had been said: (False -> True), (['multilingual_cleaners'] -> ...), and datasets as dicts.
    first = XttsConfig.model_validate({"data": {"datasets": [{"path": "/d/en"}, {"path": "/d/fa"}]}})
    run, _ = prepare_run_dir(tmp_path / "run", first)
    _saved_at(run.checkpoints, 5)
    release_run_dir(run)
    then = XttsConfig.model_validate(
        {"data": {"dataset_path": "/d/people", "bucket_by_length": False}, "training": {"learning_rate": 0.002}}
    )
    said: list[str] = []
    run, _ = prepare_run_dir(tmp_path / "run", then, note=said.append)
    release_run_dir(run)
    changed = next(line for line in said if line.startswith("resuming with settings changed"))
    assert "data.bucket_by_length (true -> false)" in changed and "data.datasets ([/d/en, /d/fa] -> [])" in changed
    assert (
        'data.dataset_path (null -> "/d/people")' in changed and "training.learning_rate (0.0005 -> 0.002)" in changed
    )


def test_a_run_record_that_cannot_be_read_is_refused_not_taken_for_none(tmp_path):
    # A damaged run.json had let any model config resume the run (nothing to check it against), and
    # one that is a list had been an AttributeError traceback.
    first, _ = prepare_run_dir(tmp_path / "run", XttsConfig())
    first.checkpoints.mkdir()
    _saved_at(first.checkpoints, 5)
    release_run_dir(first)
    other = XttsConfig.model_validate({"data": {"trim_silence": True}})
    for damaged in ("garbage\n", "", "[1, 2]\n", "\udcff"):
        first.run_file.write_text(damaged, encoding="utf-8", errors="surrogateescape")
        with pytest.raises(XttsError) as caught:
            prepare_run_dir(tmp_path / "run", other)
        assert str(caught.value) == (
            f"{first.run_file} cannot be read (it is not the JSON record xtts writes): the run's record of its "
            "model is lost"
        ), damaged
        assert caught.value.hint.startswith("mend it or put back a copy of it; or pass --force to resume with")
        release_run_dir(first)
    said: list[str] = []
    run, resume = prepare_run_dir(tmp_path / "run", other, force=True, note=said.append)  # as the hint says
    assert resume and run.read_run() is not None  # the record written again, of this config's model
    release_run_dir(run)
    # The damaged record is kept beside it, with its history (it had been written over, unsaid).
    (kept,) = first.path.glob("run.json.unread-*")
    assert kept.read_text(encoding="utf-8", errors="surrogateescape") == "\udcff"
    assert said[0] == (
        f"--force: {first.run_file} could not be read: kept as {kept.name}; the run's history of starts begins "
        "again with this one (mend that file and put it back to keep its history)"
    )


def test_a_file_where_the_run_keeps_a_folder_is_one_line_before_the_scan(tmp_path, runner):
    from xtts_cli.cli.app import app

    run, _ = prepare_run_dir(tmp_path / "run", XttsConfig())
    release_run_dir(run)
    run.checkpoints.write_text("x")  # it had trained, then met NotADirectoryError saving early_stop.json
    result = runner.invoke(app, ["train", "-c", "tiny-cpu", "-r", str(run.path), "--steps", "1"])
    assert isinstance(result.exception, XttsError) and result.exception.lines == [
        f"{run.checkpoints} is a file, where the run keeps its checkpoints folder"
    ]
    assert run.checkpoints.read_text() == "x"  # the user's file, kept


def test_a_run_config_emptied_or_damaged_is_not_read_as_the_defaults(tmp_path, runner):
    from xtts_cli.cli.app import app

    run, _ = prepare_run_dir(tmp_path / "run", XttsConfig())
    run.checkpoints.mkdir()
    _saved_at(run.checkpoints, 5)
    release_run_dir(run)
    for damaged in ("", "# all comments\n", "data: [\n  x: {"):
        run.config_file.write_text(damaged, encoding="utf-8")
        # --run-dir alone had resumed with the built-in defaults and written them there for good.
        result = runner.invoke(app, ["train", "--run-dir", str(run.path), "--steps", "6"])
        assert isinstance(result.exception, XttsError), damaged
        assert result.exception.lines == (
            [
                f"{run.config_file} holds no settings that load (it is empty or damaged): the run's own copy of its "
                "config is lost"
            ]
            if "[" not in damaged  # a hand edit's slip is named where it is
            else [f"{run.config_file}: line 2: a [, {{ or quote opened there is never closed (the file ends first)"]
        )
        assert run.config_file.read_text(encoding="utf-8") == damaged  # left for the user to see
        # With a config given, the resume had named "changes" from the defaults the run never had:
        # run.json's record of its last start's settings says there are none; a run.json written
        # before it kept them, that what changed is not known.
        said: list[str] = []
        resumed, resume = prepare_run_dir(run.path, XttsConfig(), note=said.append)
        assert resume and said == []
        release_run_dir(resumed)
        record = json.loads(run.run_file.read_text(encoding="utf-8"))
        run.run_file.write_text(json.dumps({k: v for k, v in record.items() if k != "config"}), encoding="utf-8")
        run.config_file.write_text(damaged, encoding="utf-8")
        resumed, resume = prepare_run_dir(run.path, XttsConfig(), note=said.append)
        assert resume and f"{run.config_file} held no settings that load: what changed since" in said[-1]
        assert not any("resuming with settings changed" in line for line in said)
        release_run_dir(resumed)


def test_a_start_that_trains_nothing_rewrites_nothing_of_the_run(tmp_path):
    # `--steps 3` on a run at step 5 had written max_steps 3 into its config.yaml and noted a
    # learning-rate schedule of 3 steps, which the next resume then took for the run's own.
    four = XttsConfig.model_validate({"training": {"max_steps": 5}})
    run, _ = prepare_run_dir(tmp_path / "run", four)
    run.checkpoints.mkdir()
    _saved_at(run.checkpoints, 5)
    release_run_dir(run)
    written = run.config_file.read_bytes(), run.run_file.read_bytes()
    said: list[str] = []
    fewer = XttsConfig.model_validate({"training": {"max_steps": 3}})
    again, resume = prepare_run_dir(run.path, fewer, note=said.append)
    assert resume and (run.config_file.read_bytes(), run.run_file.read_bytes()) == written
    assert not any("max_steps" in line for line in said), said
    release_run_dir(again)
    more, _ = prepare_run_dir(run.path, XttsConfig.model_validate({"training": {"max_steps": 8}}), note=said.append)
    assert "max_steps: 8" in run.config_file.read_text() and any("max_steps 5 -> 8" in line for line in said)
    release_run_dir(more)


def test_cleanup_removes_only_what_a_crashed_save_left(tmp_path):
    run = tmp_path / "run"
    prepared, _ = prepare_run_dir(run, XttsConfig())
    prepared.checkpoints.mkdir()
    ours = [prepared.checkpoints / "ckpt-12_temp", prepared.checkpoints / ".checkpoint.tmp"]
    ours[0].mkdir()
    ours[1].write_text("x")
    theirs = [prepared.checkpoints / "notes_temp.txt", prepared.checkpoints / "results.tmp"]
    for path in theirs:
        path.write_text("mine")
    removed = remove_stale_temporaries(prepared)
    assert sorted(removed) == sorted(ours) and not any(path.exists() for path in ours)
    assert all(path.read_text() == "mine" for path in theirs)
    release_run_dir(prepared)


def test_files_written_atomically_keep_symlinks_and_hard_links_and_follow_the_umask(tmp_path, runner):
    from xtts_cli.cli.app import app
    from xtts_cli.config.editing import write_atomically

    os.umask(0o022)
    target = tmp_path / "real.yaml"
    target.write_text("training:\n  enable_graph_mode: false\n", encoding="utf-8")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    result = runner.invoke(app, ["validate", "-c", str(link), "--fix"])
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and "enable_graph_mode: true" in target.read_text(encoding="utf-8")
    # A hard link is kept too: both names read the fixed file, the backup the old one.
    other = tmp_path / "other-name.yaml"
    os.link(target, other)
    target.write_text("training:\n  enable_graph_mode: false\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", "-c", str(other), "--fix"])
    assert result.exit_code == 0, result.output
    assert other.stat().st_ino == target.stat().st_ino
    assert "enable_graph_mode: true" in target.read_text(encoding="utf-8")
    assert "enable_graph_mode: false" in (tmp_path / "other-name.yaml.bak").read_text(encoding="utf-8")
    # A run's own files are not: a copy made with `cp -al` had written its run.json through to the run copied.
    snapshot = tmp_path / "run.json"
    snapshot.write_text("{}\n", encoding="utf-8")
    os.link(snapshot, tmp_path / "copy-run.json")
    write_atomically(tmp_path / "copy-run.json", '{"resumed": true}\n', backup=False)
    assert snapshot.read_text(encoding="utf-8") == "{}\n" and snapshot.stat().st_nlink == 1
    fresh = tmp_path / "new.json"
    write_atomically(fresh, "{}\n", backup=False)
    assert (fresh.stat().st_mode & 0o777) == 0o644
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.slow
def test_an_unreadable_latest_checkpoint_falls_back_to_the_one_before(tmp_path, runner):
    import json

    from xtts_cli.cli.app import app
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.training.controller import Controller
    from xtts_cli.training.events import Noted
    from xtts_cli.training.trainer import Trainer

    settings = {"training.max_steps": 4, "training.save_step": 2, "training.log_step": 2}
    config = resolve_config(tiny_config(tmp_path), settings).config
    Controller(Trainer(config, run_dir=tmp_path / "run")).run()
    checkpoints = tmp_path / "run" / "checkpoints"
    # The latest checkpoint's data cut short, as a full disk or an interrupted copy leaves it.
    data = next(checkpoints.glob("ckpt-4.data-*"))
    data.write_bytes(data.read_bytes()[:100])
    from xtts_cli.inference import Synthesizer

    # `synthesize --step` speaks with a checkpoint the run keeps: how it sounded then.
    result = runner.invoke(app, ["synthesize", "Hello.", "-r", str(tmp_path / "run"), "--step", "2", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["step"] == 2
    # Synthesis speaks with the one before too, and says so.
    tts = Synthesizer.load(tmp_path / "run")
    assert tts.step == 2
    assert [note.split(" (")[0] for note in tts.notes] == [f"{tmp_path / 'run'}: ckpt-4 cannot be read"]
    assert tts.notes[0].endswith("; restored ckpt-2, the newest before it that reads")
    # Its files deleted by hand, the pointer left naming it: the one before speaks, and says so too.
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "run", copy)
    for path in (copy / "checkpoints").glob("ckpt-4.*"):
        path.unlink()
    tts = Synthesizer.load(copy)
    assert tts.step == 2 and tts.notes == [
        f"{copy}: its pointer names ckpt-4, whose files are not all there; ckpt-2, the newest whole checkpoint, "
        "is restored"
    ]
    for path in (copy / "checkpoints").glob("ckpt-*"):  # every one gone: no "train first" to a trained run
        path.unlink()
    with pytest.raises(XttsError, match="holds no whole checkpoint: its pointer names ckpt-4, whose files are not"):
        Synthesizer.load(copy)
    said: list[str] = []
    with pytest.raises(XttsError) as error:  # nor TensorFlow's "Unsuccessful TensorSliceReader constructor"
        Controller(Trainer(config, run_dir=copy, progress=lambda e: said.append(getattr(e, "message", "")))).run()
    assert not [line for line in said if "resuming from" in line]  # ckpt-2's files are gone too: no fallback named
    assert (
        str(error.value)
        == f"cannot read {copy / 'checkpoints' / 'ckpt-4'}, nor any checkpoint before it: its files are not there"
    )
    # Its pointer gone too: refused, where it had started again at step 0 and dropped the steps it logged.
    (copy / "checkpoints" / "checkpoint").unlink()
    logged = (copy / "metrics.jsonl").read_bytes()
    with pytest.raises(XttsError) as error:
        prepare_run_dir(copy, config)
    assert str(error.value) == (
        f"{copy} logged steps up to 4 (metrics.jsonl), past its first checkpoint at step 2 (training.save_step), but "
        f"{copy / 'checkpoints'} holds no checkpoint: they were removed or moved"
    )
    assert (copy / "metrics.jsonl").read_bytes() == logged
    with pytest.raises(XttsError) as error:  # synthesis says the same, not "train first"
        Synthesizer.load(copy)
    assert str(error.value) == (
        f"{copy / 'checkpoints'} holds no checkpoint, though the run logged steps up to 4 (metrics.jsonl): they were "
        "removed or moved"
    )
    # metrics.jsonl moved away with them: run.json's history still says how far the run got.
    (copy / "metrics.jsonl").rename(tmp_path / "metrics-kept.jsonl")
    with pytest.raises(XttsError, match=r"logged steps up to 4 \(run\.json\), past its first checkpoint at step 2"):
        prepare_run_dir(copy, config)
    with pytest.raises(XttsError, match=r"the run logged steps up to 4 \(run\.json\): they were removed or moved"):
        Synthesizer.load(copy)
    notes: list[str] = []
    resumed = Trainer(
        resolve_config(tiny_config(tmp_path), {**settings, "training.max_steps": 6}).config,
        run_dir=tmp_path / "run",
        progress=lambda event: notes.append(event.message) if isinstance(event, Noted) else None,
    )
    result = Controller(resumed).run()
    assert result.start_step == 2 and result.final_step == 6
    assert any(note.startswith(f"checkpoint {checkpoints / 'ckpt-4'} cannot be read") for note in notes), notes
    # Every checkpoint cut short: the error names the latest, the one a user expects to be read.
    for data in checkpoints.glob("ckpt-*.data-*"):
        data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(XttsError, match=f"^cannot read {checkpoints / 'ckpt-6'}, nor any checkpoint before it: "):
        Synthesizer.load(tmp_path / "run")
    # A step asked for is the one tried: no "nor any before it", nor --fresh, which would throw the run away.
    with pytest.raises(XttsError) as asked:
        Synthesizer.load(tmp_path / "run", step=6)
    assert str(asked.value).startswith(f"cannot read {checkpoints / 'ckpt-6'}: ") and "--fresh" not in asked.value.hint


@pytest.mark.slow
def test_checkpoint_dir_puts_the_checkpoints_there_and_synthesis_finds_them(tmp_path, runner):
    from xtts_cli.cli.app import app
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.training.controller import Controller
    from xtts_cli.training.trainer import Trainer

    settings = {"training.max_steps": 2, "training.checkpoint_dir": "weights"}
    Controller(Trainer(resolve_config(tiny_config(tmp_path), settings).config, run_dir=tmp_path / "run")).run()
    assert (tmp_path / "run" / "weights" / "checkpoint").is_file()
    assert not (tmp_path / "run" / "checkpoints").exists()
    out = tmp_path / "a.wav"
    result = runner.invoke(app, ["synthesize", "Hello there.", "-r", str(tmp_path / "run"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "from step 2 of" in result.stdout
    # Resumed with the checkpoints set to go elsewhere (a larger disk): refused, where it had started
    # over at step 0 beside them; once moved there, it resumes from them.
    moved = resolve_config(tiny_config(tmp_path), {**settings, "training.checkpoint_dir": str(tmp_path / "disk")})
    with pytest.raises(XttsError) as error:
        prepare_run_dir(tmp_path / "run", moved.config)
    assert str(error.value) == (
        f"training.checkpoint_dir is {tmp_path / 'disk'}, but the run's checkpoints are in "
        f"{tmp_path / 'run' / 'weights'} (training.checkpoint_dir weights at its last start), and "
        f"{tmp_path / 'disk'} holds none: the run would start again at step 0"
    )
    assert error.value.hint.startswith(f"move them first (mkdir -p {tmp_path / 'disk'} && mv ")
    assert (tmp_path / "run" / "metrics.jsonl").stat().st_size > 0  # nothing of the run lost
    shutil.move(tmp_path / "run" / "weights", tmp_path / "disk")
    run, resume = prepare_run_dir(tmp_path / "run", moved.config)
    assert resume and run.checkpoints == tmp_path / "disk"
    release_run_dir(run)


@pytest.mark.slow
def test_a_feature_store_being_built_has_one_builder_and_a_second_start_waits_for_it(tmp_path):
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.data.feature_cache import cache_root, feature_fingerprint

    config_path = tiny_config(tmp_path)
    text = config_path.read_text().replace("  preprocessing_mode: cache\n", "  preprocessing_mode: precompute\n")
    config_path.write_text(text.replace("data:\n", f"data:\n  feature_cache_dir: {tmp_path / 'store'}\n", 1))
    data = resolve_config(config_path).config.data
    store = cache_root(data) / feature_fingerprint(data, "mel")
    store.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(store)], stdout=subprocess.PIPE, env=subprocess_env(), text=True
    )
    command = [sys.executable, "-m", "xtts_cli", "train", "-c", str(config_path), "-r", str(tmp_path / "run")]
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        # A second start waits, saying for whom (a sweep's parallel starts had all failed but the first's).
        second = subprocess.Popen(
            [*command, "--steps", "2"], stderr=subprocess.PIPE, text=True, env=subprocess_env(), cwd=tmp_path
        )
        assert second.stderr is not None
        said = next(line for line in second.stderr if "precompute: " in line or line.startswith("error: "))
        assert said.startswith(f"note: precompute: feature store {store} is in use by process {holder.pid} on "), said
        assert said.rstrip().endswith("waiting for it to finish, then reading what it stored (Ctrl-C stops)")
        assert not list(store.glob("shard-*"))  # it writes nothing beside the first builder meanwhile
        holder.kill()  # the first builder gone: the lock is free, and the second builds and trains
        holder.wait()
        assert second.wait(timeout=300) == 0, second.stderr.read()[-2000:]
        assert list(store.glob("shard-*"))
    finally:
        holder.kill()
        holder.wait()


def test_a_config_whose_weights_the_checkpoint_does_not_fit_is_one_line_not_tensorflows_traceback(tmp_path):
    # A run's config.yaml edited after training (another d_model): the checkpoint's weights are of
    # other shapes. Training refuses it by name; synthesis raised TensorFlow's ValueError.
    from xtts_cli.errors import XttsError
    from xtts_cli.inference import Synthesizer

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parents[1] / "data" / "run_before_run_data", run)
    config = run / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("  d_model: 32", "  d_model: 48"), encoding="utf-8")
    with pytest.raises(XttsError) as error:  # named by run.json's record of what it trained
        Synthesizer.load(run)
    assert error.value.hint == f"put model.d_model 32 back in {config}; to change them, train a new run"
    (run / "run.json").unlink()  # without that record, the checkpoint's shapes say it
    with pytest.raises(XttsError) as error:
        Synthesizer.load(run)
    assert "does not hold every weight of this run's model" in str(error.value)
    assert "no longer describes the model that was trained (its model section edited?)" in error.value.hint


def test_an_early_stop_record_edited_or_cut_short_is_no_record():
    # A resume would have raised KeyError on it; a new best is what a run without one starts.
    import tempfile

    from xtts_cli.training.checkpointing import RunCheckpoints

    folder = Path(tempfile.mkdtemp())
    (folder / "checkpoints").mkdir()
    checkpoints = RunCheckpoints.__new__(RunCheckpoints)  # reading the record needs no model
    checkpoints.run_dir = RunDir(folder)
    record = folder / "checkpoints" / "early_stop.json"
    for text in ('{"step": 3}', "[1]", '{"val_loss": "low", "step": 3, "since_best": 0}', '{"val_loss": 2.5'):
        record.write_text(text)
        assert checkpoints.early_stop_record() is None, text
    record.write_text('{"val_loss": 2.5, "step": 3, "since_best": 1, "stopped_at": null}')
    assert checkpoints.early_stop_record()["step"] == 3


@pytest.mark.slow  # loads a run and sets up its training
def test_a_checkpoint_damaged_on_disk_is_named_whole_by_synthesis_and_by_a_resume(tmp_path):
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.inference import Synthesizer
    from xtts_cli.training.controller import Controller
    from xtts_cli.training.trainer import Trainer

    # Bytes flipped through its weights, as a failing disk or a bad copy leaves them: the resume had
    # said "Checksum does not match: stored 3214191365 vs. calculated ", cut off mid-sentence.
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parents[1] / "data" / "run_before_run_data", run)
    (data,) = (run / "checkpoints").glob("ckpt-3.data-*")
    damaged = bytearray(data.read_bytes())
    for index in range(0, len(damaged), 5000):
        damaged[index] ^= 0xFF
    data.write_bytes(bytes(damaged))
    said = (
        f"cannot read {run / 'checkpoints' / 'ckpt-3'}, nor any checkpoint before it: its bytes do not match the "
        "checksums saved with them (damaged on disk or in a copy)"
    )
    with pytest.raises(XttsError) as error:
        Synthesizer.load(run)
    assert str(error.value) == said
    config = resolve_config(run / "config.yaml", {"training.run_dir": str(run), "training.max_steps": 5}).config
    with pytest.raises(XttsError) as error:
        Controller(Trainer(config, run_dir=run)).run()
    assert str(error.value) == said


def test_a_run_copied_with_hard_links_logs_its_steps_into_its_own_record(tmp_path):
    # `cp -al` shares metrics.jsonl with the run copied: appended to, the original had logged the copy's steps.
    from xtts_cli.training.metrics import MetricsWriter, read_metrics

    original, copy = tmp_path / "run" / "metrics.jsonl", tmp_path / "copy" / "metrics.jsonl"
    original.parent.mkdir()
    copy.parent.mkdir()
    original.write_text('{"step": 4, "loss": 1.0}\n', encoding="utf-8")
    os.link(original, copy)
    with MetricsWriter(copy, resumed_at=4) as writer:
        writer.write({"step": 6, "loss": 0.5})
    assert [record["step"] for record in read_metrics(original)] == [4]
    assert [record["step"] for record in read_metrics(copy)] == [4, 6]
