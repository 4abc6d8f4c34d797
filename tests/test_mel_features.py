"""One identity of what a mel frame is, read by the resume check, the feature store and a vocoder's
pairing with an acoustic run."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest
import yaml

from xtts_cli.config.schema import DataConfig, XttsConfig
from xtts_cli.data.feature_cache import feature_fingerprint, feature_settings
from xtts_cli.data.features import MelFeatures
from xtts_cli.errors import XttsError
from xtts_cli.run.directory import model_identity, prepare_run_dir


def _a_run_with_a_checkpoint(path, config: XttsConfig):
    run, resumed = prepare_run_dir(path, config)
    assert not resumed
    run.checkpoints.mkdir(parents=True)
    (run.checkpoints / "checkpoint").write_text('model_checkpoint_path: "ckpt-1"\n')
    return run


@pytest.mark.parametrize("name", [item.name for item in fields(MelFeatures)])
def test_every_setting_of_a_frame_counts_for_resume_and_for_the_store(name: str) -> None:
    assert f"data.{name}" in model_identity(XttsConfig())
    assert name in feature_settings(DataConfig(), "mel")


def test_the_store_keeps_its_folder_name_for_the_same_settings() -> None:
    # Pinned from the stores written before MelFeatures: a default corpus's store is found again.
    assert feature_fingerprint(DataConfig(), "mel") == "e777b5061e6b7664"
    assert feature_fingerprint(DataConfig(), "audio") == "345090e3161e1f85"


def test_resuming_with_silence_trimmed_is_refused_as_other_features(tmp_path) -> None:
    _a_run_with_a_checkpoint(tmp_path / "run", XttsConfig())
    trimmed = XttsConfig(data={"trim_silence": True})
    with pytest.raises(XttsError, match=r"changed: data.trim_silence \(false -> true\)"):
        prepare_run_dir(tmp_path / "run", trimmed)


def test_force_resumes_across_other_features_but_not_across_another_text_front_end(tmp_path) -> None:
    _a_run_with_a_checkpoint(tmp_path / "run", XttsConfig())
    assert prepare_run_dir(tmp_path / "run", XttsConfig(data={"trim_silence": True}), force=True)[1]
    # The run's vocabulary (vocab.json) holds the letters it trained on: phonemes cannot be forced on it.
    phonemes = XttsConfig(data={"text_frontend": "phonemes", "trim_silence": True})
    for read_only in (False, True):
        with pytest.raises(XttsError) as info:
            prepare_run_dir(tmp_path / "run", phonemes, force=True, read_only=read_only)
        assert info.value.lines[0].endswith("changed: data.text_frontend (characters -> phonemes)")
        assert "--force" not in (info.value.hint or "")


def test_a_run_recorded_before_clip_settings_counted_resumes_with_its_own(tmp_path) -> None:
    loud = XttsConfig(data={"normalize_loudness": True})
    run = _a_run_with_a_checkpoint(tmp_path / "run", loud)
    record = json.loads(run.run_file.read_text())
    for key in ("data.trim_silence", "data.normalize_loudness"):
        del record["model_identity"][key]  # what the record of an older run holds
    run.run_file.write_text(json.dumps(record))
    assert yaml.safe_load(run.config_file.read_text())["data"]["normalize_loudness"] is True
    assert prepare_run_dir(tmp_path / "run", loud)[1]  # its config.yaml says what it used: resumes
    with pytest.raises(XttsError, match=r"data.normalize_loudness \(true -> false\)"):
        prepare_run_dir(tmp_path / "run", XttsConfig())


def test_a_vocoder_pairs_on_the_transform_alone() -> None:
    ours = MelFeatures.of(DataConfig())
    assert ours.transform_mismatch(MelFeatures.of(DataConfig(trim_silence=True, normalize_loudness=True))) == []
    assert ours.transform_mismatch(MelFeatures.of(DataConfig(hop_length=200))) == ["hop_length 256 against 200"]
    # An empty fmax is the Nyquist frequency it stands for: the same frames as 11025 written out at 22050 Hz.
    empty, nyquist = MelFeatures.of(DataConfig(fmax=None)), MelFeatures.of(DataConfig(fmax=11025))
    assert empty.transform_mismatch(nyquist) == [] and nyquist.transform_mismatch(empty) == []
    assert empty.transform_mismatch(ours) == ["fmax empty (= 11025 Hz) against 8000.0"]


def test_a_run_resumed_with_its_empty_fmax_written_out_is_the_same_run(tmp_path) -> None:
    _a_run_with_a_checkpoint(tmp_path / "run", XttsConfig(data={"fmax": None}))
    assert prepare_run_dir(tmp_path / "run", XttsConfig(data={"fmax": 11025}))[1]  # resumes, not refused
    with pytest.raises(XttsError, match=r"data.fmax \(11025.0 -> 8000.0\)"):
        prepare_run_dir(tmp_path / "run", XttsConfig(data={"fmax": 8000}))
