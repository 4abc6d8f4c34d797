"""`xtts train` on two corpora at once (VCTK FLAC at 48 kHz and Common Voice MP3, weighted), its
speakers kept in the run, the validation renders in several voices, and `synthesize --speaker`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from training_support import TINY
from typer.testing import CliRunner

from xtts_cli.cli.app import app

CORPORA = Path(__file__).parent / "data" / "corpora"
CV_CLIENTS = {"5e1f0c7a9b" * 4, "a04d2e6b3c" * 4}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpora")
    text = (
        TINY.format(extra="")
        .replace(
            "data:\n",
            "data:\n  max_bad_file_fraction: 0.5\n  datasets:\n"
            f"    - path: {CORPORA / 'vctk'}\n    - path: {CORPORA / 'common_voice'}\n      weight: 2\n",
        )
        .replace("sample_step: 1000", "sample_step: 2")
        .replace("preprocessing_mode: cache", "preprocessing_mode: runtime")
    )
    (root / "tiny.yaml").write_text(text, encoding="utf-8")
    # In-process, as a user's command runs: the start-up lines go to stderr.
    result = CliRunner().invoke(
        app, ["train", "--config", str(root / "tiny.yaml"), "--run-dir", str(root / "run"), "--max-steps", "2"]
    )
    assert result.exit_code == 0, result.output[-3000:]
    (root / "train.log").write_text(result.stderr, encoding="utf-8")
    return root


@pytest.mark.slow
def test_both_datasets_train_together_and_the_start_up_says_how(run: Path) -> None:
    log = (run / "train.log").read_text()
    assert "(vctk, language en): 5 train + 1 validation items" in log
    assert (
        "(common_voice, language en): 5 train + 1 validation items" in log
        and "weight 2: each clip x2 an epoch, 67 % of it" in log
    )
    assert "missing_transcript" in log  # the skipped files are named before training starts
    metrics = [json.loads(line) for line in (run / "run" / "metrics.jsonl").read_text().splitlines()]
    assert max(record["step"] for record in metrics) == 2


@pytest.mark.slow
def test_the_run_keeps_every_training_speaker_and_renders_in_several_voices(run: Path) -> None:
    speakers = json.loads((run / "run" / "speakers.json").read_text())
    assert set(speakers) == {"p225", "p226", "p227"} | CV_CLIENTS
    assert {speakers["p225"]["dataset"], speakers[min(CV_CLIENTS)]["dataset"]} == {"vctk", "common_voice"}
    assert all(Path(clip).is_file() for entry in speakers.values() for clip in entry["clips"])
    rendered = sorted(path.name for path in (run / "run" / "samples").glob("step0000002-0-*.wav"))
    assert len(rendered) == 3  # the three largest speakers' voices, each named in the file


@pytest.mark.slow
def test_synthesize_speaks_in_a_named_speakers_voice(run: Path) -> None:
    from xtts_cli.errors import XttsError

    out = run / "p226.wav"
    result = CliRunner().invoke(
        app,
        [
            "synthesize",
            "the cat sat.",
            "--checkpoint",
            str(run / "run"),
            "--out",
            str(out),
            "--speaker",
            "p226",
            "--max-frames",
            "40",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output[-2000:]
    assert json.loads(result.stdout)["speaker"] == "p226" and out.stat().st_size > 44
    unknown = CliRunner().invoke(
        app, ["synthesize", "the cat sat.", "--checkpoint", str(run / "run"), "--out", str(out), "--speaker", "p2266"]
    )
    error = unknown.exception
    assert isinstance(error, XttsError)
    assert error.lines[0].startswith("speaker 'p2266' is not in") and "did you mean 'p226'" in error.hint
