"""The run's data, built once (`data/run_data.py`): what training, validate, diagnose, benchmark
and the profilers read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from xtts_cli.config.schema import XttsConfig
from xtts_cli.data.run_data import prepare

SAMPLE = Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample"


def _files(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


def test_prepare_imports_no_tensorflow_and_writes_nothing_beside_the_data(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    before = _files(corpus)
    store = tmp_path / "store"
    code = (
        "import json, sys\n"
        "from xtts_cli.config.schema import XttsConfig\n"
        "from xtts_cli.data.run_data import prepare\n"
        f"config = XttsConfig(data={{'dataset_path': {str(corpus)!r}, 'preprocessing_mode': 'precompute', "
        f"'feature_cache_dir': {str(store)!r}}})\n"
        "run = prepare(config)\n"
        "plan = run.plan()\n"
        "print(json.dumps({'tf': 'tensorflow' in sys.modules, 'train': len(run.train_items), "
        "'eval': len(run.eval_items), 'mode': plan.mode, 'batches': plan.batches_per_epoch}))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(result.stdout)
    assert report["tf"] is False
    assert report["train"] + report["eval"] == 40 and report["mode"] == "precompute" and report["batches"] > 0
    assert _files(corpus) == before and not store.exists()  # planned to keep a store; wrote none


def test_ensure_store_is_the_step_that_writes_and_the_pipeline_then_finds_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    config = XttsConfig(data={"preprocessing_mode": "precompute", "feature_cache_dir": str(store), "batch_size": 4})
    run = prepare(config)
    notes: list[str] = []
    assert run.ensure_store(notes.append) == 2  # the training clips' store and the validation clips'
    assert store.is_dir() and notes
    said = len(notes)
    assert run.ensure_store(notes.append) == 2 and len(notes) == said  # complete: no second pass
    _, info = run.pipeline(note=notes.append)
    assert len(notes) == said and info.feature_cache is not None and info.num_items == len(run.train_items)


@pytest.mark.slow  # computes the bundled sample's store
def test_the_bundled_sample_and_a_read_only_dataset_store_in_the_users_cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    before = _files(SAMPLE)
    run = prepare(XttsConfig(data={"preprocessing_mode": "precompute", "batch_size": 4}))
    assert run.ensure_store(lambda line: None) == 2
    assert _files(SAMPLE) == before  # nothing written into the installed package
    assert [path.name[: len("sample-")] for path in (tmp_path / "cache" / "xtts" / "features").iterdir()] == ["sample-"]
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a read-only mount needs root and unshare")
    # A dataset on a read-only disk (a read-only bind mount in a mount namespace of its own).
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    code = (
        "from xtts_cli.config.schema import XttsConfig\n"
        "from xtts_cli.data.run_data import prepare\n"
        f"run = prepare(XttsConfig(data={{'dataset_path': {str(corpus)!r}, 'preprocessing_mode': 'precompute'}}))\n"
        "print(run.ensure_store(lambda line: None))\n"
    )
    script = f'mount --bind {corpus} {corpus} && mount -o remount,ro,bind {corpus} && {sys.executable} -c "$0"'
    done = subprocess.run(["unshare", "-m", "sh", "-c", script, code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.split()[-1] == "2", done.stderr[-2000:]
    assert not (corpus / ".xtts_features").exists()
    assert len(list((tmp_path / "cache" / "xtts" / "features").glob("corpus-*/*/shard-*"))) >= 2


def test_a_separate_validation_set_joins_the_vocabulary_and_is_the_validation(tmp_path: Path, write_config) -> None:
    held_out = tmp_path / "held_out"
    (held_out / "wavs").mkdir(parents=True)
    shutil.copy(next((SAMPLE / "wavs").glob("*.wav")), held_out / "wavs" / "q1.wav")
    (held_out / "metadata.csv").write_text("q1|Quiz of the jazz zebra; na\u00efve!\n", encoding="utf-8")
    run = prepare(XttsConfig(data={"eval_dataset_path": str(held_out)}))
    assert [item.text for item in run.eval_items] == ["Quiz of the jazz zebra; na\u00efve!"]
    alone = prepare(XttsConfig()).tokenizer.characters
    assert "z" in alone and not {";", "\u00ef", "!"} & set(alone)  # the alphabet, not the sample's texts
    assert {";", "\u00ef", "!"} <= set(run.tokenizer.characters)  # they came from the validation texts
    assert len(run.train_items) == len(run.scan.epoch_items())
    # No clip of the training data is held out for a validation the other dataset makes: every one trains.
    everything = prepare(XttsConfig()).scan.items
    assert run.scan.eval == [] and len(run.train_items) == len(everything) == len(run.scan.items)


def test_a_validation_set_is_read_in_its_training_datasets_language_and_what_is_wrong_with_it_said(
    tmp_path: Path, write_config, runner
) -> None:
    """Read as data.language (en) beside datasets all `fa`, a Persian validation set had stopped a new
    run at its first step (validate said nothing); read beside English too, it validated unsaid as
    English; its bad files went unlisted, and a set of clips all too long had a false fix."""
    import soundfile

    from xtts_cli.cli.app import app
    from xtts_cli.data.plan import encode_texts

    persian = Path(__file__).resolve().parent / "data" / "persian"
    held = tmp_path / "held"
    shutil.copytree(persian, held)
    (held / "wavs" / "FA-01.wav").write_bytes(b"RIFF")  # one bad file
    config = XttsConfig(
        data={
            "datasets": [{"path": str(persian), "language": "fa"}],
            "eval_dataset_path": str(held),
            "max_bad_file_fraction": 0.2,
        }
    )
    run = prepare(config)
    assert run.eval_items and {item.language for item in run.eval_items} == {"fa"}
    encode_texts(run.eval_items, run.tokenizer)  # where the first step had stopped
    both = write_config(
        f"data:\n  eval_dataset_path: {held}\n  datasets:\n    - path: {SAMPLE}\n    - path: {persian}\n"
        "      language: fa\n  max_bad_file_fraction: 0.2\n"
    )
    said = json.loads(runner.invoke(app, ["validate", "-c", str(both), "--json"]).stdout)
    (script,) = [f["message"] for f in said["findings"] if f["id"] == "dataset-script"]
    assert script.startswith("7 of 7 transcripts of dataset held are in Arabic script, which its language en is not")
    assert [(bad["path"], bad["dataset"]) for bad in said["dataset"]["bad_files"]] == [
        ("wavs/FA-01.wav", "data.eval_dataset_path")
    ]
    (skipped,) = [f["message"] for f in said["findings"] if f["id"] == "dataset-bad-files"]
    assert skipped.startswith("validation set (data.eval_dataset_path): 1 of 8 dataset items are skipped (1 ")
    # Clips all too long: the fix is the length limit, as train says, and they are validation clips.
    long = tmp_path / "long"
    (long / "wavs").mkdir(parents=True)
    audio, rate = soundfile.read(str(next((SAMPLE / "wavs").glob("*.wav"))))
    soundfile.write(str(long / "wavs" / "l1.wav"), np.concatenate([audio] * 4), rate)
    (long / "metadata.csv").write_text("l1|A long clip.\n", encoding="utf-8")
    limit = len(audio) * 3 / rate
    result = runner.invoke(
        app, ["validate", "--val-data", str(long), "--set", f"data.max_audio_duration={limit}", "--json"]
    )
    (unusable,) = [f["message"] for f in json.loads(result.stdout)["findings"] if f["id"] == "dataset-unusable"]
    assert "no usable validation items" in unusable and "widen data.max_audio_duration" in unusable


def test_a_resumed_vocabulary_is_kept_and_the_kind_decides_what_the_pipeline_makes() -> None:
    first = prepare(XttsConfig())
    again = prepare(XttsConfig(), "audio", scan=first.scan, tokenizer=first.tokenizer)
    assert again.tokenizer is first.tokenizer and again.scan is first.scan
    assert again.plan().output == "audio" and first.plan().output == "mel"
