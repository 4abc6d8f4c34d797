"""Paths stay inside the dataset: in every layout, a clip that is a symlink to a file outside the
root is refused (and named with where it resolves), and so are `..` and absolute paths, unless
`data.allow_absolute_paths` says otherwise; then the report counts what came from outside."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from xtts_cli.config.schema import DataConfig
from xtts_cli.data.scan import scan_dataset

CORPORA = Path(__file__).resolve().parents[1] / "data" / "corpora"
LAYOUTS = ["coqui", "ljspeech2", "common_voice", "nemo", "vctk", "vctk_wav48", "libritts"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_clip_linked_to_a_file_outside_the_dataset_is_refused(tmp_path, layout):
    root = tmp_path / layout
    shutil.copytree(CORPORA / layout, root)
    settings = {"dataset_path": str(root), "scan_cache": False, "eval_fraction": 0.0, "max_bad_file_fraction": 1.0}
    clip = Path(scan_dataset(DataConfig(**settings)).items[0].audio_path)  # a clip the layout reads
    outside = tmp_path / "outside" / clip.name
    outside.parent.mkdir()
    shutil.move(clip, outside)
    clip.symlink_to(outside)
    before = scan_dataset(
        DataConfig(dataset_path=str(root), scan_cache=False, eval_fraction=0.0, max_bad_file_fraction=1.0)
    )
    escaped = [bad for bad in before.bad if bad.reason == "path_escapes_root"]
    assert len(escaped) == 1, before.bad
    assert f"it resolves to {outside}" in escaped[0].detail and "allow_absolute_paths" in escaped[0].detail
    assert all(Path(item.audio_path).resolve() != outside for item in before.items)
    allowed = scan_dataset(
        DataConfig(
            dataset_path=str(root),
            scan_cache=False,
            eval_fraction=0.0,
            allow_absolute_paths=True,
            max_bad_file_fraction=1.0,
        )
    )
    assert not [bad for bad in allowed.bad if bad.reason == "path_escapes_root"]
    assert allowed.datasets[0].outside_root == 1


def test_a_manifest_naming_system_files_opens_none_of_them(tmp_path):
    root = tmp_path / "nemo"
    shutil.copytree(CORPORA / "nemo", root)
    hostile = [
        {"audio_filepath": "../../etc/passwd", "text": "one", "speaker": 3},  # speakers as the manifest names them
        {"audio_filepath": "/etc/hostname", "text": "two", "speaker": 3},
        {"audio_filepath": "../outside/x.wav", "text": "three", "speaker": 7},
    ]
    with open(root / "train_manifest.json", "a", encoding="utf-8") as manifest:
        manifest.write("".join(json.dumps(record) + "\n" for record in hostile))
    (tmp_path / "outside").mkdir()
    shutil.copy(next(root.rglob("*.wav")), tmp_path / "outside" / "x.wav")
    report = scan_dataset(DataConfig(dataset_path=str(root), scan_cache=False, max_bad_file_fraction=1.0))
    refused = {bad.path: bad.reason for bad in report.bad}
    assert {path: refused.get(path) for path in ("/etc/hostname", "../outside/x.wav")} == {
        "/etc/hostname": "path_escapes_root",
        "../outside/x.wav": "path_escapes_root",
    }
    assert [reason for path, reason in refused.items() if path.endswith("etc/passwd")] == ["path_escapes_root"]
    assert all(str(tmp_path / "nemo") in item.audio_path for item in report.items)
