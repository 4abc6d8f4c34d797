"""Dataset scan on the committed fixtures (tests/data, made by scripts/make_test_fixtures.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from xtts_cli.config.schema import DataConfig
from xtts_cli.data.scan import DatasetScanError, scan_dataset, split_hash
from xtts_cli.errors import XttsError

DATA = Path(__file__).parent / "data"
DATASET = DATA / "dataset"
FACTS = json.loads((DATA / "fixtures.json").read_text())
# sha256("1234:pcm16")[:8] / 2**64: the split must not change across Python versions or machines.
PINNED_PCM16_HASH = 0.38685700322256

EXPECTED_BAD = {
    "wavs/empty.wav": "empty",
    "wavs/garbage.wav": "not_audio",
    "wavs/truncated.wav": "truncated",
    "wavs/header_only.wav": "header_only",
    "wavs/truncated_ogg.ogg": "truncated",
    "wavs/truncated_mp3.mp3": "truncated",
    "wavs/too_short.wav": "too_short",
    "wavs/too_long.flac": "too_long",
    "wavs/missing_file.wav": "missing",
    "../outside/escape.wav": "path_escapes_root",
    "wavs/pcm16.wav": "text_too_long",
    None: "malformed_line",
}


def fixture_config(**overrides) -> DataConfig:
    # The fixture set is mostly bad items on purpose: allow them so the scan reports instead of failing.
    return DataConfig(dataset_path=str(DATASET), max_bad_file_fraction=0.6, **overrides)


@pytest.fixture(scope="module")
def report():
    return scan_dataset(fixture_config())


def test_bundled_sample_scans_clean():
    report = scan_dataset(DataConfig())
    assert len(report.items) == 40
    assert report.bad == []
    assert report.total_items == 40
    assert report.formats == {"wav": 40}
    assert report.sample_rates == {22050: 40}
    assert len(report.speakers) == 4 and sum(report.speakers.values()) == 40
    assert report.total_hours == pytest.approx(93.9 / 3600, abs=0.1 / 3600)


def test_every_bad_item_is_reported_with_its_reason_and_excluded(report):
    found = {bad.path: bad.reason for bad in report.bad}
    assert found == EXPECTED_BAD
    for bad in report.bad:
        assert bad.detail and bad.source.startswith("metadata.csv:")
    kept = {item.relative_path for item in report.items}
    assert not kept & {path for path in EXPECTED_BAD if path and path != "wavs/pcm16.wav"}
    # Clips outside the length limits are listed with the bad ones, but are not bad files.
    outside = {"too_short", "too_long", "text_too_long"}
    assert report.outside_limits == sum(reason in outside for reason in EXPECTED_BAD.values()) == 3
    assert report.bad_fraction == pytest.approx((len(EXPECTED_BAD) - 3) / report.total_items)
    assert report.bad_reasons["truncated"] == 3


def test_bad_fraction_above_the_limit_fails_naming_fraction_limit_and_key():
    with pytest.raises(DatasetScanError) as caught:
        scan_dataset(DataConfig(dataset_path=str(DATASET), max_bad_file_fraction=0.25))
    message = str(caught.value)
    assert "9 of 29" in message and "31.0%" in message and "too_long" not in message
    assert "data.max_bad_file_fraction (25.0%)" in message
    assert isinstance(caught.value, XttsError) and caught.value.hint
    assert len(caught.value.report.bad) == 12


def test_header_facts_match_what_sox_reports(report):
    items = {item.relative_path: item for item in report.items}
    assert set(FACTS) <= set(items) | {"wavs/pcm16.wav"}
    for path, facts in FACTS.items():
        audio = items[path].audio
        assert (audio.sample_rate, audio.channels) == (facts["sample_rate"], facts["channels"]), path
        if audio.format == "mp3":
            # What tensorflow-io's minimp3 returns: the encoded audio exactly when a LAME tag gives
            # the encoder delay and padding (VBR here), else every frame, delay and padding included.
            encoded = facts["source_samples"]
            if path.endswith("vbr.mp3"):
                assert audio.num_samples == encoded, path
            else:
                assert encoded < audio.num_samples <= encoded + 3 * 576, path
        else:
            assert audio.num_samples == facts["samples"], path
            assert audio.bit_depth == (facts["bits"] or None), path


def test_formats_rates_channels_histograms(report):
    assert report.formats == {"wav": 12, "flac": 2, "mp3": 2, "ogg": 1}
    assert report.sample_rates == {22050: 15, 16000: 1, 44100: 1}
    assert report.channels == {1: 16, 2: 1}
    assert report.bit_depths == {"8": 1, "16": 9, "24": 2, "32": 2, "lossy": 3}
    assert report.total_hours == pytest.approx(sum(i.audio.duration for i in report.items) / 3600)


def test_pipe_inside_text_survives_and_normalized_text_is_preferred(report):
    items = {item.id: item for item in report.items}
    assert items["pipe_text"].training_text == "Press A | B to start."
    assert items["rate16k"].text == "16 kHz." and items["rate16k"].training_text == "Sixteen kilohertz."
    assert items["pcm8"].normalized_text is None and items["pcm8"].training_text == "Eight bits."


def test_persian_text_is_read_as_utf8(report):
    persian = next(item for item in report.items if item.id == "persian")
    assert persian.training_text == "سلام، من می\u200cخواهم فارسی صحبت کنم."


def test_first_column_path_and_speakers_file(report):
    items = {item.relative_path: item for item in report.items}
    assert items["wavs/nested/clip.wav"].id == "wavs/nested/clip"
    assert items["wavs/pcm24.wav"].speaker == "gb"
    assert items["wavs/persian.wav"].speaker == "fa"
    # Not in speakers.csv: the speaker is named after its dataset's folder (tests/data/dataset).
    assert items["wavs/nested/clip.wav"].speaker == "dataset"
    # ... and the report names it: speakers.csv names the others, so it was likely forgotten.
    assert [(d.unnamed_speaker, d.unnamed_speaker_example) for d in report.datasets] == [(1, "wavs/nested/clip")]
    # Every row of it names a clip, good or bad: none is said to be unknown.
    assert [d.unknown_speaker_rows for d in report.datasets] == [0]


def test_a_speakers_row_that_names_no_clip_is_said(tmp_path):
    from xtts_cli.cli.output import dataset_notes

    # A mistyped id had been passed over unsaid: its clip trained as the dataset's voice.
    root = _sample_copy(tmp_path / "sample")
    with open(root / "speakers.csv", "a", encoding="utf-8") as rows:
        rows.write("ghost.wav|carl\n")
    dataset = scan_dataset(DataConfig(dataset_path=str(root), scan_cache=False)).datasets[0]
    assert (dataset.unknown_speaker_rows, dataset.unknown_speaker_rows_example) == (1, "ghost")
    assert "speakers.csv names 1 clip no line lists (e.g. ghost): a mistyped id? correct it to the clip's" in (
        dataset_notes(dataset)
    )


def test_without_a_speakers_file_no_clip_is_named_as_left_out(tmp_path):
    root = tmp_path / "ds"
    shutil.copytree(DATASET, root)
    (root / "speakers.csv").unlink()
    report = scan_dataset(DataConfig(dataset_path=str(root), max_bad_file_fraction=0.6, scan_cache=False))
    assert {item.speaker for item in report.items} == {"ds"} and report.datasets[0].unnamed_speaker == 0


SAMPLE = Path(__file__).parent.parent / "xtts_cli" / "data" / "sample"


def _sample_copy(root: Path) -> Path:
    shutil.copytree(SAMPLE, root)
    return root


def test_a_broken_link_is_a_missing_clip_named_so_and_an_absolute_ljspeech_id_is_that_clip(tmp_path):
    """A link to nowhere had been "outside the root", with a setting that then called it missing; an id
    written as an absolute path had been looked for under wavs//tmp/..."""
    root = _sample_copy(tmp_path / "ds")
    elsewhere = _sample_copy(tmp_path / "other")
    (root / "wavs" / "XTTS001-0001.wav").unlink()
    (root / "wavs" / "XTTS001-0001.wav").symlink_to("/nonexistent/x.wav")
    (root / "wavs" / "XTTS001-0002.wav").unlink()
    (root / "wavs" / "XTTS001-0002.wav").symlink_to("XTTS001-0099.wav")  # inside the root
    lines = (root / "metadata.csv").read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace("XTTS001-0003", str(elsewhere / "wavs" / "XTTS001-0003"), 1)
    (root / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for allow in (False, True):
        report = scan_dataset(DataConfig(dataset_path=str(root), allow_absolute_paths=allow, scan_cache=False))
        bad = {item.path: (item.reason, item.detail) for item in report.bad}
        assert bad["wavs/XTTS001-0001.wav"] == (
            "missing",
            "a broken link: wavs/XTTS001-0001.wav points to /nonexistent/x.wav, which is not there; link it to "
            "the clip, or copy the clip in its place",
        )
        assert (
            bad["wavs/XTTS001-0002.wav"][0] == "missing"
            and f"points to XTTS001-0099.wav ({root / 'wavs' / 'XTTS001-0099.wav'}), which"
            in bad["wavs/XTTS001-0002.wav"][1]
        )
        absolute = str(elsewhere / "wavs" / "XTTS001-0003.wav")
        if allow:
            assert absolute not in bad and absolute in {item.relative_path for item in report.items}
        else:
            assert bad[absolute][0] == "path_escapes_root"


def test_a_speakers_file_of_another_form_is_refused_naming_its_line(tmp_path):
    """A comma-separated speakers.csv read as no speakers would train the sample's 4 voices as one."""
    root = _sample_copy(tmp_path / "ds")
    lines = (root / "speakers.csv").read_text(encoding="utf-8").splitlines()
    (root / "speakers.csv").write_text("id|speaker\n" + "\n".join(lines) + "\n", encoding="utf-8")
    assert len(scan_dataset(DataConfig(dataset_path=str(root), scan_cache=False)).speakers) == 4  # a header is fine
    # Ids written with their file's extension name the same clips, as metadata.csv's may.
    with_extension = [f"{line.split('|')[0]}.wav|{line.split('|')[1]}" for line in lines]
    (root / "speakers.csv").write_text("\n".join(with_extension) + "\n", encoding="utf-8")
    named = scan_dataset(DataConfig(dataset_path=str(root), scan_cache=False))
    assert len(named.speakers) == 4 and all(part.unnamed_speaker == 0 for part in named.datasets)
    commas = [line.replace("|", ",") for line in lines]
    (root / "speakers.csv").write_text("\n".join(commas) + "\n", encoding="utf-8")
    with pytest.raises(XttsError) as caught:
        scan_dataset(DataConfig(dataset_path=str(root), scan_cache=False))
    # Every line of another form, said at once (the first alone had been named, one a run).
    named = ", ".join(f"line {number + 1} {line!r}" for number, line in enumerate(commas[:3]))
    assert caught.value.lines == [
        f"{root / 'speakers.csv'}: {len(commas)} lines are not `id|speaker`: {named} and {len(commas) - 3} more"
    ]
    # A third cell, or a clip given a second speaker further down: refused, not read as a name or the last line.
    first = lines[0].split("|")[0]
    for extra, said in (
        (f"{lines[0]}|extra", f"1: expected `id|speaker`, got {lines[0] + '|extra'!r}"),
        (f"{first}|someone else", f"{len(lines) + 1}: {first!r} is 'someone else' here and {lines[0].split('|')[1]!r}"),
    ):
        written = [extra, *lines[1:]] if extra.endswith("|extra") else [*lines, extra]
        (root / "speakers.csv").write_text("\n".join(written) + "\n", encoding="utf-8")
        with pytest.raises(XttsError) as caught:
            scan_dataset(DataConfig(dataset_path=str(root), scan_cache=False))
        assert caught.value.lines[0].startswith(f"{root / 'speakers.csv'}:{said}"), caught.value.lines


def test_speaker_names_in_the_normalized_text_column_are_refused_not_trained_as_text(tmp_path):
    root = _sample_copy(tmp_path / "ds")
    speakers = dict(line.split("|") for line in (root / "speakers.csv").read_text(encoding="utf-8").splitlines())
    rows = [line.split("|") for line in (root / "metadata.csv").read_text(encoding="utf-8").splitlines()]
    written = "".join(f"{key}|{text}|{speakers[key]}\n" for key, text, _ in rows)
    (root / "metadata.csv").write_text(written, encoding="utf-8")
    (root / "speakers.csv").unlink()
    with pytest.raises(XttsError) as caught:
        scan_dataset(DataConfig(dataset_path=str(root), scan_cache=False))
    names = sorted(set(speakers.values()))
    assert caught.value.lines[0].startswith(
        f"{root / 'metadata.csv'}: its third column holds {len(names)} short values ({names[0]!r}, "
    )
    assert "speakers.csv" in caught.value.hint and "audio_file|text|speaker_name" in caught.value.hint
    # LJSpeech's own normalized column (numbers read out) is the text's, however short its lines.
    own = "".join(f"{key}|{text}|{text.replace('3', 'three')}\n" for key, text, _ in rows)
    (root / "metadata.csv").write_text(own, encoding="utf-8")
    assert len(scan_dataset(DataConfig(dataset_path=str(root), scan_cache=False)).items) == len(rows)


def test_allow_absolute_paths_admits_the_escaping_path():
    report = scan_dataset(fixture_config(allow_absolute_paths=True))
    escape = next(item for item in report.items if item.relative_path == "../outside/escape.wav")
    assert escape.audio.sample_rate == 8000
    assert "path_escapes_root" not in report.bad_reasons


def test_tsv_and_csv_manifests_with_speaker_column():
    tsv = scan_dataset(fixture_config(metadata_train_file="manifest.tsv", eval_fraction=0.0))
    assert tsv.format == "manifest" and tsv.bad == []
    speakers = {item.relative_path: item.speaker for item in tsv.items}
    # An empty speaker cell falls back to speakers.csv beside the metadata (mp3vbr -> us).
    assert speakers == {
        "wavs/pcm16.wav": "alice",
        "wavs/flac16.flac": "bob",
        "wavs/persian.wav": "sara",
        "wavs/mp3vbr.mp3": "us",
    }
    csv = scan_dataset(fixture_config(metadata_train_file="manifest.csv", eval_fraction=0.0))
    assert [item.text for item in csv.items] == ["Hello, world.", "Two channels, one voice."]


def test_hash_split_is_deterministic_and_follows_the_seed(report):
    again = scan_dataset(fixture_config())
    assert [i.id for i in again.eval] == [i.id for i in report.eval]
    assert report.split == "hash" and report.eval
    half = scan_dataset(fixture_config(eval_fraction=0.5))
    assert {i.id for i in half.eval} == {i.id for i in half.items if split_hash(i.id, 1234) < 0.5}
    assert split_hash("pcm16", 1234) == split_hash("pcm16", 1234) != split_hash("pcm16", 99)
    assert split_hash("pcm16", 1234) == PINNED_PCM16_HASH
    other_seed = scan_dataset(fixture_config(eval_fraction=0.5, seed=7))
    assert {i.id for i in other_seed.eval} != {i.id for i in half.eval}


def test_explicit_eval_file():
    report = scan_dataset(fixture_config(metadata_eval_file="metadata_eval.csv"))
    assert report.split == "file"
    assert [item.id for item in report.eval] == ["flac16", "vorbis"]
    assert len(report.train) == 17


def test_missing_dataset_and_metadata_are_clear_errors(tmp_path):
    with pytest.raises(XttsError, match="data.dataset_path"):
        scan_dataset(DataConfig(dataset_path=str(tmp_path / "nope")))
    with pytest.raises(XttsError, match="data.metadata_train_file"):
        scan_dataset(DataConfig(dataset_path=str(tmp_path)))


def test_text_length_limit_counts_cleaned_characters(tmp_path):
    root = tmp_path / "ds"
    (root / "wavs").mkdir(parents=True)
    shutil.copy(DATASET / "wavs" / "pcm16.wav", root / "wavs" / "a.wav")
    (root / "metadata.csv").write_text("a|" + "x  " * 10 + "|\n", encoding="utf-8")
    # 30 characters as written, 19 after whitespace collapsing: kept at max_text_length 19.
    assert len(scan_dataset(DataConfig(dataset_path=str(root), max_text_length=19)).items) == 1
    with pytest.raises(DatasetScanError, match="text_too_long"):
        scan_dataset(DataConfig(dataset_path=str(root), max_text_length=18))


def test_a_broken_file_is_bad_whatever_its_length_and_a_sound_one_outside_the_limits_is_left_out(tmp_path):
    root = tmp_path / "ds"
    (root / "wavs").mkdir(parents=True)
    for name in ("good", "long"):
        shutil.copy(DATASET / "wavs" / "pcm16.wav", root / "wavs" / f"{name}.wav")
    shutil.copy(DATASET / "wavs" / "garbage.wav", root / "wavs" / "broken.wav")
    long_text = "word " * 30
    (root / "metadata.csv").write_text(f"good|short|\nlong|{long_text}|\nbroken|{long_text}|\n", encoding="utf-8")
    report = scan_dataset(DataConfig(dataset_path=str(root), max_text_length=100, max_bad_file_fraction=0.5))
    assert {bad.path: bad.reason for bad in report.bad} == {
        "wavs/long.wav": "text_too_long",
        "wavs/broken.wav": "not_audio",
    }
    assert report.outside_limits == 1 and report.bad_fraction == pytest.approx(1 / 3)


def test_a_wav_whose_recorder_stopped_before_writing_its_sizes_says_so_and_how_to_repair_it(tmp_path):
    from xtts_cli.data.audio_headers import AudioHeaderError, read_audio_header

    clip = bytearray((DATASET / "wavs" / "pcm16.wav").read_bytes())
    data = clip.index(b"data")
    clip[4:8] = clip[data + 4 : data + 8] = bytes(4)  # both sizes 0, the audio after them
    (tmp_path / "cut.wav").write_bytes(clip)
    with pytest.raises(AudioHeaderError) as said:
        read_audio_header(str(tmp_path / "cut.wav"))
    assert said.value.reason == "header_only"  # it had been "WAV header with no audio data"
    assert said.value.detail == (
        f"WAV header says its audio is 0 bytes, yet {len(clip) - data - 8} bytes follow it (a recording stopped "
        "before its sizes were written): repair it with sox --ignore-length in.wav out.wav"
    )


def test_a_silent_wav_is_a_bad_item_and_a_quiet_one_or_one_that_starts_silent_is_not(tmp_path, monkeypatch):
    import numpy as np
    import soundfile

    from xtts_cli.data.scan import BUNDLED_SAMPLE

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "ds"
    shutil.copytree(BUNDLED_SAMPLE, root)
    wavs = root / "wavs"
    speech, rate = soundfile.read(str(wavs / "XTTS001-0004.wav"), dtype="float32")
    silence = np.zeros(2 * rate, np.float32)
    soundfile.write(str(wavs / "XTTS001-0001.wav"), silence, rate, subtype="PCM_16")
    soundfile.write(str(wavs / "XTTS001-0002.wav"), silence, rate, subtype="PCM_24")
    soundfile.write(str(wavs / "XTTS001-0003.wav"), np.stack([silence, silence], 1), rate, subtype="FLOAT")
    # A silent opening before the voice (a window of the look falls in it), and a voice at -70 dBFS.
    soundfile.write(str(wavs / "XTTS001-0004.wav"), np.concatenate([silence, speech]), rate, subtype="PCM_16")
    soundfile.write(str(wavs / "XTTS001-0005.wav"), speech * (10 ** (-70 / 20) / np.abs(speech).max()), rate)
    soundfile.write(str(wavs / "XTTS001-0006.wav"), silence, rate, subtype="PCM_U8")
    for n, subtype in ((7, "FLOAT"), (8, "PCM_24"), (9, "PCM_U8")):  # a voice in each sample format
        soundfile.write(str(wavs / f"XTTS001-000{n}.wav"), speech, rate, subtype=subtype)
    # Stereo whose right channel is the left inverted (a wiring fault): mixed to one, as training
    # mixes it, nothing is left. An offset alone (DC) is no sound either; a voice on one is.
    soundfile.write(str(wavs / "XTTS001-0010.wav"), np.stack([speech, -speech], 1), rate, subtype="PCM_16")
    soundfile.write(str(wavs / "XTTS001-0011.wav"), silence + 0.2, rate, subtype="PCM_24")
    soundfile.write(str(wavs / "XTTS001-0012.wav"), speech * 0.5 + 0.3, rate, subtype="PCM_16")
    soundfile.write(str(wavs / "XTTS001-0013.wav"), np.stack([speech, 0 * speech], 1), rate, subtype="PCM_U8")
    # Float samples of integers' range (a 16-bit clip's values saved as float32) and a float clip a
    # little past full scale, which is a level a float file may hold.
    soundfile.write(str(wavs / "XTTS001-0014.wav"), speech * 20000, rate, subtype="FLOAT")
    soundfile.write(str(wavs / "XTTS001-0015.wav"), speech / np.abs(speech).max() * 1.5, rate, subtype="FLOAT")
    for _ in range(2):  # the second scan reads the stored headers, and still finds them silent
        report = scan_dataset(DataConfig(dataset_path=str(root), max_bad_file_fraction=0.2))
        assert {bad.path: bad.reason for bad in report.bad} == {
            **{f"wavs/XTTS001-000{n}.wav": "silent" for n in (1, 2, 3, 6)},
            "wavs/XTTS001-0010.wav": "silent",
            "wavs/XTTS001-0011.wav": "silent",
            "wavs/XTTS001-0014.wav": "bad_samples",
        }
        said = {bad.path[-8:-4]: bad.detail for bad in report.bad}
        assert said["0001"] == "its loudest sample is under -80 dBFS: silence, no speech to learn"
        assert said["0010"] == (
            "its 2 channels cancel when mixed to one, as training mixes them (one is the other inverted: a wiring "
            "fault): keep one of them (sox IN OUT remix 1)"
        )
        assert said["0011"] == "it holds a steady offset (DC) and no sound: no speech to learn"
        assert said["0014"].startswith(f"its float samples reach {20000 * np.abs(speech).max():,.1f} where full")
        assert len(report.items) == 33


def test_a_file_or_speaker_name_that_is_not_utf8_is_a_bad_item_shown_with_escapes(tmp_path, monkeypatch, runner):
    """A Windows zip's Latin-1 names: os.listdir gives them as surrogates, which cannot be hashed for
    the split, stored in the memo or written as JSON."""
    from xtts_cli.cli.app import app
    from xtts_cli.data.scan import BUNDLED_SAMPLE

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    clip = BUNDLED_SAMPLE / "wavs" / "XTTS001-0001.wav"
    folder = tmp_path / "folder"
    for speaker in ("me", os.fsdecode(b"J\xfcrgen")):
        (folder / speaker).mkdir(parents=True)
        for n in range(4):
            shutil.copy(clip, folder / speaker / f"c{n}.wav")
            (folder / speaker / f"c{n}.txt").write_text(f"Sentence {n}.", encoding="utf-8")
    shutil.copy(clip, folder / "me" / os.fsdecode(b"caf\xe9.wav"))  # and no transcript
    listed = tmp_path / "listed"
    shutil.copytree(BUNDLED_SAMPLE, listed)
    shutil.copy(clip, listed / "wavs" / os.fsdecode(b"caf\xe9.wav"))  # beside the clips, in no row
    for _ in range(2):  # and from the scan's memo
        report = scan_dataset(DataConfig(dataset_path=str(folder), max_bad_file_fraction=0.9))
        assert sorted(bad.path for bad in report.bad if bad.reason == "not_utf8") == [
            *(f"J\\xfcrgen/c{n}.wav" for n in range(4)),
            "me/caf\\xe9.wav",
        ]
        assert len(report.items) == 4 and set(report.speakers) == {"me"}
    result = runner.invoke(app, ["validate", "--set", f"data.dataset_path={folder}", "--json"])
    bad = {item["path"]: item["detail"] for item in json.loads(result.stdout)["dataset"]["bad_files"]}
    assert bad["me/caf\\xe9.wav"].startswith("its file or folder name is not UTF-8")
    result = runner.invoke(app, ["validate", "--set", f"data.dataset_path={listed}", "--json"])
    assert json.loads(result.stdout)["dataset"]["datasets"][0]["unlisted_example"] == "wavs/caf\\xe9.wav"


def test_a_second_scan_reads_only_the_headers_of_files_that_changed(tmp_path, monkeypatch):
    from xtts_cli.data import scan_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "ds"
    shutil.copytree(DATASET, root)
    read = []
    real = scan_cache.read_audio_header
    monkeypatch.setattr(scan_cache, "read_audio_header", lambda path, **look: read.append(path) or real(path, **look))
    settings = DataConfig(dataset_path=str(root), max_bad_file_fraction=0.6)
    first = scan_dataset(settings)
    # Every file but those refused before their header: the malformed line, the escaping path and the
    # missing file (a transcript too long is checked after its header: a broken file is bad, not
    # left out by a length limit).
    assert len(read) == first.total_items - 3
    read.clear()
    again = scan_dataset(settings)
    assert read == []  # good and bad files alike come from the cache
    assert again.model_dump() == first.model_dump()
    # A file rewritten in place (new size and mtime) is read again, and what it now holds is used.
    (root / "wavs" / "garbage.wav").write_bytes((DATASET / "wavs" / "pcm16.wav").read_bytes())
    third = scan_dataset(settings)
    assert read == [str(root / "wavs" / "garbage.wav")]
    assert "wavs/garbage.wav" not in {bad.path for bad in third.bad}
    # Switched off, every header is read.
    read.clear()
    scan_dataset(DataConfig(dataset_path=str(root), max_bad_file_fraction=0.6, scan_cache=False))
    assert len(read) == first.total_items - 3


@pytest.mark.parametrize("cold", [True, False])
def test_files_are_read_ahead_only_when_a_sample_of_them_reads_cold(cold, tmp_path, monkeypatch):
    import threading

    from xtts_cli.data import read_ahead

    root = tmp_path / "ds"
    shutil.copytree(DATASET, root)
    settings = DataConfig(dataset_path=str(root), max_bad_file_fraction=0.6, scan_cache=False)
    alone = scan_dataset(settings)
    started = []
    real = read_ahead.ReadAhead.__enter__

    def enter(self):
        real(self)
        started.append((self.started, list(self.paths)))
        return self

    monkeypatch.setattr(read_ahead.ReadAhead, "__enter__", enter)
    monkeypatch.setattr(read_ahead.ReadAhead, "SAMPLED", 2)
    # Every read counts as cold, or none does (a cached read takes microseconds).
    monkeypatch.setattr(read_ahead.ReadAhead, "COLD_READ_SECONDS", -1.0 if cold else 3600.0)
    again = scan_dataset(settings)
    ((ran, paths),) = started
    assert ran is cold
    # The paths the scan checks, the missing file among them (its read ahead is skipped, its check
    # reports it), and not the lines that name no file.
    assert str(root / "wavs" / "missing_file.wav") in paths and len(paths) == alone.total_items - 2
    assert not [t for t in threading.enumerate() if t.name.startswith("xtts-read-ahead")]
    assert again.model_dump() == alone.model_dump()


def test_a_stored_scan_is_used_only_while_its_files_and_settings_are_unchanged(tmp_path, monkeypatch):
    from xtts_cli.data import scan as scan_module

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "ds"
    shutil.copytree(DATASET, root)
    (root / "speakers.csv").unlink()
    walks = []
    real = scan_module._scan_files
    monkeypatch.setattr(scan_module, "_scan_files", lambda *args: walks.append(1) or real(*args))
    settings = DataConfig(dataset_path=str(root), max_bad_file_fraction=0.6)
    first = scan_dataset(settings)
    assert scan_dataset(settings).model_dump() == first.model_dump() and len(walks) == 1
    # Each of these makes the next scan read the dataset again, and see the change.
    (root / "speakers.csv").write_text("pcm16|ann\n", encoding="utf-8")
    assert {i.id: i.speaker for i in scan_dataset(settings).items}["pcm16"] == "ann" and len(walks) == 2
    with open(root / "metadata.csv", "a", encoding="utf-8") as metadata:
        metadata.write("pcm16|Another line for the same file.\n")
    assert scan_dataset(settings).total_items == first.total_items + 1 and len(walks) == 3
    shutil.copy(DATASET / "wavs" / "pcm16.wav", root / "wavs" / "missing_file.wav")
    assert "missing" not in scan_dataset(settings).bad_reasons and len(walks) == 4
    scan_dataset(DataConfig(dataset_path=str(root), max_bad_file_fraction=0.6, max_text_length=300))
    assert len(walks) == 5
    scan_dataset(DataConfig(dataset_path=str(root), max_bad_file_fraction=0.6, max_text_length=300))
    assert len(walks) == 5


def test_a_stored_scan_read_line_by_line_is_the_scan_and_one_cut_short_is_not_used(tmp_path, monkeypatch):
    from xtts_cli.data import scan as scan_module
    from xtts_cli.data import scan_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(scan_cache, "MEMO_CHUNK", 2)  # several lines for each of train, eval and bad
    walks = []
    real = scan_module._scan_files
    monkeypatch.setattr(scan_module, "_scan_files", lambda *args: walks.append(1) or real(*args))
    root = tmp_path / "ds"
    shutil.copytree(DATASET, root)
    settings = DataConfig(dataset_path=str(root), max_bad_file_fraction=0.6)
    first = scan_dataset(settings)
    (memo,) = (tmp_path / "cache").rglob("*.scan.json")
    lines = memo.read_bytes().split(b"\n")
    assert len(first.train) > 2 and len(first.bad) > 2 and len(lines) > 5
    assert scan_dataset(settings).model_dump() == first.model_dump() and len(walks) == 1
    memo.write_bytes(b"\n".join(lines[:-2]) + b"\n" + lines[-2][:-5])  # its last line cut short
    assert scan_dataset(settings).model_dump() == first.model_dump() and len(walks) == 2
    assert memo.read_bytes().split(b"\n") == lines  # stored whole again
    assert scan_dataset(settings).model_dump() == first.model_dump() and len(walks) == 2


@pytest.mark.parametrize("corpus", ["libritts", "vctk"])
def test_a_layout_with_a_transcript_per_clip_is_remembered_until_one_changes(corpus, tmp_path, monkeypatch):
    from xtts_cli.data import scan as scan_module

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / corpus
    shutil.copytree(Path(__file__).parent / "data" / "corpora" / corpus, root)
    walks = []
    real = scan_module._scan_files
    monkeypatch.setattr(scan_module, "_scan_files", lambda *args: walks.append(1) or real(*args))
    settings = DataConfig(dataset_path=str(root), max_bad_file_fraction=0.5)
    first = scan_dataset(settings)
    # The feature store made in the root (its default place) changes the root's mtime, not the scan.
    (root / ".xtts_features").mkdir()
    assert scan_dataset(settings).model_dump() == first.model_dump() and len(walks) == 1
    # A transcript edited in place is read again, and its new text used.
    transcript = sorted(root.glob("train-clean-100/*/*/*.normalized.txt" if corpus == "libritts" else "txt/*/*.txt"))[0]
    transcript.write_text("An edited transcript.", encoding="utf-8")
    edited = {item.id: item.text for item in scan_dataset(settings).items}
    assert len(walks) == 2 and edited[transcript.name.split(".")[0]] == "An edited transcript."
    # A clip added next to the others (its transcript with it) is found.
    wav = sorted(root.glob("train-clean-100/*/*/*.wav" if corpus == "libritts" else "*/*/*_mic1.flac"))[0]
    stem = wav.name.split(".")[0] if corpus == "libritts" else wav.name[: -len("_mic1.flac")]
    shutil.copy(wav, wav.with_name(wav.name.replace(stem, stem + "9")))
    shutil.copy(transcript, transcript.with_name(transcript.name.replace(stem, stem + "9")))
    added = scan_dataset(settings)
    assert len(walks) == 3 and added.total_items == first.total_items + 1
    # A new speaker folder is found too (for LibriTTS: a new name in a split's own listing).
    speakers = [wav.parent.parent] if corpus == "libritts" else [wav.parent, root / "txt" / wav.parent.name]
    for folder in speakers:
        for path in folder.rglob("*.*"):
            renamed = folder.with_name("999") / path.relative_to(folder)
            if corpus == "vctk":
                renamed = folder.with_name("p999") / path.name.replace(folder.name, "p999")
            renamed.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, renamed)
    assert scan_dataset(settings).total_items > added.total_items and len(walks) == 4
    assert scan_dataset(settings).total_items > added.total_items and len(walks) == 4


def _mp3_clips(folder: Path, count: int, kind: str = "mp3") -> list[Path]:
    """`count` MP3 (or FLAC) clips of a rising tone, as libsndfile writes them (an MP3 with LAME's
    Info/Xing tag)."""
    import numpy as np
    import soundfile

    (folder / "wavs").mkdir(parents=True)
    paths = []
    for index in range(count):
        t = np.arange(int(22050 * 2.0)) / 22050
        path = folder / "wavs" / f"c{index}.{kind}"
        soundfile.write(path, 0.3 * np.sin(2 * np.pi * (200 + 40 * index) * t), 22050, format=kind.upper())
        paths.append(path)
    lines = [f"c{index}|A sentence of about two seconds, {index}." for index in range(count)]
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def _frame_ends(data: bytes) -> list[int]:
    from xtts_cli.data.audio_headers import _mp3_frame

    ends, pos = [], 0
    while (frame := _mp3_frame(data[pos : pos + 4])) is not None:
        pos += frame[0]
        ends.append(pos)
    return ends


def test_an_mp3_cut_at_a_frame_or_damaged_mid_stream_is_truncated_not_trained_as_silence(tmp_path):
    # A copy cut at a frame's end reads as whole MP3 frames; only its Xing/Info tag's frame count
    # says the rest is gone. Decoded, it was padded with zeros to the tag's length: its transcript
    # trained against seconds of silence.
    import random

    cut, damaged, whole = _mp3_clips(tmp_path / "data", 3)
    data = cut.read_bytes()
    cut.write_bytes(data[: _frame_ends(data)[len(_frame_ends(data)) // 5]])
    noisy = bytearray(damaged.read_bytes())
    rng = random.Random(2)
    for index in range(400, len(noisy)):
        noisy[index] = rng.randrange(256)
    damaged.write_bytes(bytes(noisy))
    report = scan_dataset(DataConfig(dataset_path=str(tmp_path / "data"), max_bad_file_fraction=0.9))
    found = {bad.path: (bad.reason, bad.detail) for bad in report.bad}
    assert set(found) == {"wavs/c0.mp3", "wavs/c1.mp3"} and [i.relative_path for i in report.items] == ["wavs/c2.mp3"]
    assert all(reason == "truncated" for reason, _ in found.values())
    fix = " (cut short in a copy or a download): copy it again, or keep what is there with ffmpeg -i in.mp3 out.flac"
    assert re.fullmatch(
        r"MP3 holds \d+ of the \d+ frames its Xing/Info header counts" + re.escape(fix), found["wavs/c0.mp3"][1]
    )


def test_an_mp3_of_varying_bitrate_with_no_xing_header_is_refused_before_its_decoder_cuts_it(tmp_path):
    # libsndfile reckons such a file's length from its first frame and reads no further: 5,419 of
    # 45,504 samples here, so the scan passed it and training skipped it. A constant bitrate's
    # reckoning is right (Common Voice's clips carry no tag).
    import soundfile

    from xtts_cli.data.audio_headers import AudioHeaderError, _mp3_frame, read_audio_header

    (tagged,) = _mp3_clips(tmp_path / "data", 1)
    data = tagged.read_bytes()
    tagged.write_bytes(data[_mp3_frame(data[:4])[0] :])  # the Info frame gone: audio frames alone
    with pytest.raises(AudioHeaderError) as refused:
        read_audio_header(str(tagged))
    decoded = len(soundfile.read(str(tagged))[0])
    assert refused.value.reason == "unsupported_format" and refused.value.detail == (
        f"MP3 of varying bitrate with no Xing/Info header: its decoder reads {decoded} of its 45504 samples; "
        "re-encode it (to FLAC, or MP3 with a Xing header)"
    )
    for clip in (DATA / "corpora" / "common_voice" / "clips").glob("*.mp3"):
        header = read_audio_header(str(clip))
        assert abs(len(soundfile.read(str(clip))[0]) - header.num_samples) <= 1152


def test_an_mp3_damaged_mid_stream_with_no_xing_header_is_truncated_not_half_read(tmp_path):
    # The frame walk stopped at the damage and called the clip that long; the decoder reads on past
    # it, and training cut the audio to the walk's length: half the clip against the whole text.
    import soundfile

    from xtts_cli.data.audio_headers import AudioHeaderError, read_audio_header

    clip = tmp_path / "clip.mp3"
    data = bytearray((DATA / "corpora" / "common_voice" / "clips" / "common_voice_en_1000.mp3").read_bytes())
    data[len(data) // 2 : len(data) // 2 + 100] = bytes(100)
    clip.write_bytes(bytes(data))
    assert len(soundfile.read(str(clip))[0]) > 50_000  # of 55,296: read on past the damage
    with pytest.raises(AudioHeaderError) as damaged:
        read_audio_header(str(clip))
    assert damaged.value.reason == "truncated"
    assert re.fullmatch(r"MP3 damaged mid-stream: its frames break off at byte \d+", damaged.value.detail)


def test_a_flac_cut_short_is_truncated_by_its_last_frames(tmp_path):
    # STREAMINFO keeps the whole stream's length; a copy cut mid-frame or after a frame's end passed
    # the scan and validate, then training's decoder came short and skipped it.
    cut, torn, whole = _mp3_clips(tmp_path / "data", 3, "flac")
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size * 3 // 4])
    torn.write_bytes(torn.read_bytes()[:-3])
    report = scan_dataset(DataConfig(dataset_path=str(tmp_path / "data"), max_bad_file_fraction=0.9))
    found = {bad.path: (bad.reason, bad.detail) for bad in report.bad}
    assert [i.relative_path for i in report.items] == ["wavs/c2.flac"]
    fix = ": copy it again, or keep what is there with ffmpeg -i in.flac out.flac"
    assert found["wavs/c1.flac"] == ("truncated", "FLAC's final frame is cut short (its CRC-16 never closes)" + fix)
    assert found["wavs/c0.flac"][0] == "truncated"  # each with its fix: it had named none
    fix = " (cut short in a copy or a download)" + fix
    assert re.fullmatch(
        r"FLAC holds \d+ of the 44100 samples its STREAMINFO counts" + re.escape(fix), found["wavs/c0.flac"][1]
    )


def test_a_decode_far_shorter_than_the_scan_said_fails_the_clip_instead_of_padding_it(tmp_path):
    from xtts_cli.data.audio import _soundfile_read

    (path,) = _mp3_clips(tmp_path / "data", 1)
    contents = path.read_bytes()
    samples = scan_dataset(DataConfig(dataset_path=str(tmp_path / "data"))).items[0].audio.num_samples
    assert _soundfile_read(contents, 1, samples + 100).shape == (samples + 100, 1)  # a decoder's rounding: padded
    with pytest.raises(ValueError, match=f"decoded \\d+ of the {2 * samples} samples its header promises"):
        _soundfile_read(contents, 1, 2 * samples)


def test_every_clip_missing_from_a_clips_folder_named_otherwise_says_to_rename_it(tmp_path):
    # No item is good, so raising data.max_bad_file_fraction would train on nothing: the hint says what is.
    data = tmp_path / "data"
    shutil.copytree(_sample(), data)
    (data / "wavs").rename(data / "Wavs")
    with pytest.raises(DatasetScanError) as caught:
        scan_dataset(DataConfig(dataset_path=str(data)))
    assert caught.value.hint == "there is no wavs/ folder, and Wavs/ holds the clips: rename it to wavs/"
    (data / "Wavs").rename(data / "wavs")
    for clip in (data / "wavs").iterdir():
        clip.write_bytes(b"")  # every clip empty: nothing good, and no single layout mistake
    with pytest.raises(DatasetScanError) as empty:
        scan_dataset(DataConfig(dataset_path=str(data)))
    assert empty.value.hint.endswith(
        "none of the dataset's items is usable, so fix them (raising data.max_bad_file_fraction would train on nothing)"
    )
    assert "max_bad_file_fraction to train on the good ones" not in empty.value.hint


def _sample() -> Path:
    from xtts_cli.data.scan import BUNDLED_SAMPLE

    return Path(BUNDLED_SAMPLE)


def test_a_row_pointing_into_another_folder_does_not_count_that_folders_files_as_unlisted(tmp_path):
    data, other = tmp_path / "data", tmp_path / "other"
    shutil.copytree(_sample(), data)
    shutil.copytree(_sample(), other)
    lines = (data / "metadata.csv").read_text(encoding="utf-8").splitlines()
    first = lines[0].split("|")[0]
    lines[0] = lines[0].replace(first, str(other / "wavs" / f"{first}.wav"), 1)
    (data / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (part,) = scan_dataset(DataConfig(dataset_path=str(data), scan_cache=False)).datasets
    # Its own file, which no row names now, is; the other folder's 39 are not this dataset's.
    assert (part.unlisted_audio, part.unlisted_example) == (1, f"wavs/{first}.wav")


def test_clips_beside_the_metadata_file_in_no_row_are_unlisted_audio(tmp_path):
    """Clips put beside metadata.csv (a folder corpus beside an LJSpeech one) had gone unsaid: only
    the listed clips' own folder was looked through."""
    data = tmp_path / "data"
    shutil.copytree(_sample(), data)
    for n in range(3):
        shutil.copy(data / "wavs" / "XTTS001-0001.wav", data / f"x{n}.wav")
        (data / f"x{n}.txt").write_text("A clip beside the list.", encoding="utf-8")
    (part,) = scan_dataset(DataConfig(dataset_path=str(data), scan_cache=False)).datasets
    assert (part.format, part.unlisted_audio, part.unlisted_example) == ("ljspeech", 3, "x0.wav")


def test_an_ogg_of_joined_streams_and_a_float_wav_of_nans_say_what_is_wrong_with_them(tmp_path):
    """Two Ogg files joined (`cat a.ogg b.ogg`): the decoder reads the first stream alone, the last
    page's length is the second's, so a piece of the first had trained against both texts. A float WAV
    with a NaN in every window of the sound check had read as silence."""
    import numpy as np
    import soundfile

    data = tmp_path / "data"
    shutil.copytree(_sample(), data)
    speech, rate = soundfile.read(str(data / "wavs" / "XTTS001-0001.wav"), dtype="float32")
    for part in ("a", "b"):
        soundfile.write(str(tmp_path / f"{part}.ogg"), speech, rate, format="OGG", subtype="VORBIS")
    joined = (tmp_path / "a.ogg").read_bytes() + (tmp_path / "b.ogg").read_bytes()
    (data / "wavs" / "XTTS001-0001.ogg").write_bytes(joined)
    (data / "wavs" / "XTTS001-0001.wav").unlink()
    # One file joined to itself: both streams of one serial number.
    (data / "wavs" / "XTTS001-0003.ogg").write_bytes((tmp_path / "a.ogg").read_bytes() * 2)
    (data / "wavs" / "XTTS001-0003.wav").unlink()
    speech[::1000] = np.nan
    soundfile.write(str(data / "wavs" / "XTTS001-0002.wav"), speech, rate, subtype="FLOAT")
    report = scan_dataset(DataConfig(dataset_path=str(data), scan_cache=False, max_bad_file_fraction=0.2))
    said = {bad.path: (bad.reason, bad.detail) for bad in report.bad}
    assert (
        said["wavs/XTTS001-0001.ogg"]
        == said["wavs/XTTS001-0003.ogg"]
        == (
            "unsupported_format",
            "an Ogg file of several streams (files joined one after another?): only the first would be read, against "
            "the whole text; re-encode it as one stream (sox IN.ogg OUT.wav)",
        )
    )
    count = len(speech)
    assert said["wavs/XTTS001-0002.wav"] == (
        "bad_samples",
        f"{len(range(0, count, 1000)):,} of its {count:,} float samples are NaN or infinite",
    )


def test_a_dataset_that_lists_no_clip_or_only_clips_outside_the_limits_says_which(tmp_path):
    # Both got "check the dataset path, its format and the duration / text limits in `data`".
    empty = tmp_path / "empty"
    (empty / "wavs").mkdir(parents=True)
    (empty / "metadata.csv").write_text("", encoding="utf-8")
    with pytest.raises(DatasetScanError) as nothing:
        scan_dataset(DataConfig(dataset_path=str(empty)))
    assert nothing.value.hint.startswith("it lists no clip: an LJSpeech metadata.csv holds a line a clip")
    with pytest.raises(DatasetScanError) as short:
        scan_dataset(DataConfig(dataset_path=str(_sample()), min_audio_duration=30.0, max_audio_duration=40.0))
    assert (
        short.value.hint == "every item is outside the length limits: widen data.min_audio_duration, or check the clips"
    )


def test_a_memo_unused_for_a_month_goes_and_one_read_stays(tmp_path, monkeypatch):
    # A renamed or deleted dataset's memo and header cache had stayed in ~/.cache/xtts/scan for ever.
    import time

    from xtts_cli.data.scan import BUNDLED_SAMPLE
    from xtts_cli.data.scan_cache import SCAN_STALE_DAYS, cache_folder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    scan_dataset(DataConfig(dataset_path=str(BUNDLED_SAMPLE)))
    folder = cache_folder()
    kept = sorted(folder.glob("*.json"))
    assert kept
    old = time.time() - (SCAN_STALE_DAYS + 1) * 24 * 3600
    gone = folder / "renamed-0123456789abcdef.scan.json"
    gone.write_text("{}", encoding="utf-8")
    for path in [gone, *kept]:
        os.utime(path, (old, old))
    scan_dataset(DataConfig(dataset_path=str(BUNDLED_SAMPLE)))  # reads its own memo: marked used
    copy = tmp_path / "sample"
    shutil.copytree(BUNDLED_SAMPLE, copy)
    scan_dataset(DataConfig(dataset_path=str(copy)))  # a scan that saves sweeps the folder
    assert not gone.exists() and all(path.exists() for path in kept)


def test_a_cache_folder_that_cannot_be_written_is_said_once_and_the_scan_goes_on(tmp_path, monkeypatch, runner):
    """A home whose cache cannot be written (here a file where its folder would be): each start reads
    every header again, which on a large corpus is minutes; the scan says where and what to set."""
    from xtts_cli.cli.app import app
    from xtts_cli.data.scan import BUNDLED_SAMPLE

    (tmp_path / "cache").write_text("not a folder\n", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    report = scan_dataset(DataConfig(dataset_path=str(BUNDLED_SAMPLE)))
    assert len(report.items) == 40
    assert report.datasets[0].scan_cache_unwritable == f"{tmp_path / 'cache' / 'xtts' / 'scan'} (Not a directory)"
    assert scan_dataset(DataConfig(scan_cache=False)).datasets[0].scan_cache_unwritable is None
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 0
    assert "the scan could not keep what it read in" in " ".join(result.output.split())
    assert "set XDG_CACHE_HOME to a folder you can write, or data.scan_cache: false" in " ".join(result.output.split())


def test_a_clip_that_is_no_regular_file_is_named_for_what_it_is(tmp_path: Path) -> None:
    # "--speaker-wav clips" (a folder) had been told "a FIFO, a device or a folder".
    import os

    from xtts_cli.data.audio_headers import AudioHeaderError, read_audio_header

    os.mkfifo(tmp_path / "pipe.wav")  # never opened: it would block
    for path, what in ((tmp_path, "a folder"), (tmp_path / "pipe.wav", "a FIFO"), (Path("/dev/null"), "a device")):
        with pytest.raises(AudioHeaderError) as refused:
            read_audio_header(str(path))
        assert (refused.value.reason, refused.value.detail) == ("not_audio", f"{what}, not a file: not read")


def test_a_header_cut_short_is_not_offered_to_be_kept(tmp_path):
    """Its fix is a copy: no audio follows to keep (ffmpeg had been offered for it)."""
    clip = tmp_path / "d" / "wavs" / "a.wav"
    clip.parent.mkdir(parents=True)
    clip.write_bytes((SAMPLE / "wavs" / "XTTS001-0001.wav").read_bytes()[:30])
    (tmp_path / "d" / "metadata.csv").write_text("a|Hello there.|Hello there.\n", encoding="utf-8")
    from xtts_cli.data.scan import DatasetScanError

    with pytest.raises(DatasetScanError) as caught:  # its one clip bad: unusable, the clip in the report it carries
        scan_dataset(DataConfig(dataset_path=str(tmp_path / "d"), scan_cache=False))
    assert [(bad.reason, bad.detail) for bad in caught.value.report.bad] == [
        ("truncated", "WAV 'fmt ' chunk is cut short: copy it again")
    ]
