"""Corpus layouts on the committed tiny corpora (tests/data/corpora, made by scripts/make_corpus_fixtures.py):
detection, speakers, the sample rates and codecs the real corpora ship, bad items, several datasets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from xtts_cli.config.schema import DataConfig, XttsConfig
from xtts_cli.data.scan import scan_dataset
from xtts_cli.errors import XttsError

CORPORA = Path(__file__).parent / "data" / "corpora"

# folder: (format, {speaker: clips}, {rate: clips}, {container: clips}, {(where, reason)} of the bad items)
EXPECTED = {
    "vctk": (
        "vctk",
        {"p225": 2, "p226": 2, "p227": 2},
        {48000: 6},
        {"flac": 6},
        {
            ("wav48_silence_trimmed/p225/p225_003_mic1.flac", "missing_transcript"),
            ("wav48_silence_trimmed/p226/p226_009_mic1.flac", "missing"),
        },
    ),
    "vctk_wav48": ("vctk", {"p225": 2, "p226": 2}, {48000: 4}, {"wav": 4}, set()),
    "libritts": (
        "libritts",
        {"19": 2, "26": 2},
        {24000: 4},
        {"wav": 4},
        {("train-clean-100/26/101/26_101_000000_000009.wav", "missing_transcript")},
    ),
    "common_voice": (
        "common_voice",
        {"5e1f0c7a9b" * 4: 3, "a04d2e6b3c" * 4: 3},
        {48000: 6},
        {"mp3": 6},
        {("clips/common_voice_en_9999.mp3", "missing")},
    ),
    "coqui": ("coqui", {"alice": 2, "bob": 2}, {22050: 4}, {"wav": 4}, set()),
    "nemo": ("nemo", {"3": 2, "7": 2}, {16000: 4}, {"wav": 4}, set()),
    "ljspeech2": ("ljspeech", {"ljspeech2": 4}, {22050: 4}, {"wav": 4}, set()),
}


def data(path, **settings) -> DataConfig:
    return DataConfig(**{"dataset_path": str(path), "max_bad_file_fraction": 0.5, **settings})


@pytest.mark.parametrize("folder", sorted(EXPECTED))
def test_each_layout_is_detected_with_its_speakers_rates_and_bad_items(folder):
    fmt, speakers, rates, containers, bad = EXPECTED[folder]
    report = scan_dataset(data(CORPORA / folder))
    assert report.format == fmt and report.datasets[0].format == fmt
    assert report.speakers == speakers
    assert report.sample_rates == rates and report.formats == containers
    assert {(item.path, item.reason) for item in report.bad} == bad
    assert all(item.text and item.dataset == folder for item in report.items)
    # Named explicitly, the same layout reads the same items.
    again = scan_dataset(data(CORPORA / folder, dataset_format=fmt))
    assert sorted(item.id for item in again.items) == sorted(item.id for item in report.items)


def test_transcripts_come_from_each_layouts_own_files():
    texts = {item.id: item.training_text for item in scan_dataset(data(CORPORA / "vctk")).items}
    assert texts["p225_001"] == "A red boat."  # txt/p225/p225_001.txt, its newline dropped
    libri = {item.id: item for item in scan_dataset(data(CORPORA / "libritts")).items}
    assert libri["19_100_000000_000000"].training_text == "A red boat."
    assert libri["19_100_000000_000000"].audio_path.endswith("train-clean-100/19/100/19_100_000000_000000.wav")
    # Where each came from, relative to the dataset root, as the reports list them.
    assert libri["19_100_000000_000000"].relative_path == "train-clean-100/19/100/19_100_000000_000000.wav"
    assert libri["19_100_000000_000000"].source == "train-clean-100/19/100/19_100_000000_000000.normalized.txt"
    first = {item.id: item for item in scan_dataset(data(CORPORA / "vctk")).items}["p225_001"]
    assert (first.source, first.relative_path) == (
        "txt/p225/p225_001.txt",
        "wav48_silence_trimmed/p225/p225_001_mic1.flac",
    )
    # VCTK 0.92 ships both microphones; the scan reads mic1 only.
    vctk = scan_dataset(data(CORPORA / "vctk")).items
    assert all(item.audio_path.endswith("_mic1.flac") for item in vctk)


def test_a_vctk_corpus_converted_to_another_format_or_with_its_mic_named_keeps_its_clips(tmp_path):
    import soundfile

    # wav48/ converted to FLAC (one clip), and another clip kept as a mic's: each found, none "missing".
    corpus = tmp_path / "vctk"
    shutil.copytree(CORPORA / "vctk_wav48", corpus)
    speaker = corpus / "wav48" / "p225"
    samples, rate = soundfile.read(speaker / "p225_001.wav")
    soundfile.write(speaker / "p225_001.flac", samples, rate)
    (speaker / "p225_001.wav").unlink()
    (speaker / "p225_002.wav").rename(speaker / "p225_002_mic1.wav")
    report = scan_dataset(data(corpus))
    assert report.bad == [] and len(report.items) == 4
    paths = {item.id: item.relative_path for item in report.items}
    assert (paths["p225_001"], paths["p225_002"]) == ("wav48/p225/p225_001.flac", "wav48/p225/p225_002_mic1.wav")
    # VCTK 0.92's trimmed folder converted to WAV: mic1's clip, not mic2's.
    trimmed = tmp_path / "vctk092"
    shutil.copytree(CORPORA / "vctk", trimmed)
    for clip in (trimmed / "wav48_silence_trimmed").glob("*/*.flac"):
        samples, rate = soundfile.read(clip)
        soundfile.write(clip.with_suffix(".wav"), samples, rate)
        clip.unlink()
    items = scan_dataset(data(trimmed)).items
    assert len(items) == 6 and all(item.audio_path.endswith("_mic1.wav") for item in items)


def test_a_clip_in_a_format_not_read_or_named_without_its_extension_is_said_so(tmp_path):
    import soundfile

    samples, rate = soundfile.read(
        CORPORA / "coqui" / "wavs" / sorted(p.name for p in (CORPORA / "coqui" / "wavs").iterdir())[0]
    )
    folder = tmp_path / "voice"
    folder.mkdir()
    for stem in ("a", "b", "c", "d"):
        (folder / f"{stem}.txt").write_text(f"Clip {stem} is here.\n")
    soundfile.write(folder / "a.wav", samples, rate)
    soundfile.write(folder / "d.wav", samples, rate)
    soundfile.write(folder / "b.aiff", samples, rate, format="AIFF")
    (folder / "c.m4a").write_bytes(b"\x00\x00\x00\x20ftypM4A " + bytes(2000))  # as an iPhone's recorder names it
    report = scan_dataset(data(folder, max_bad_file_fraction=0.6))
    assert sorted(item.id for item in report.items) == ["a", "d"]  # they had been left out without a word
    assert {(bad.path, bad.reason, bad.detail) for bad in report.bad} == {
        (
            "b.aiff",
            "unsupported_format",
            "AIFF audio is not read; convert it to FLAC or WAV (e.g. ffmpeg -i IN OUT.flac)",
        ),
        (
            "c.m4a",
            "unsupported_format",
            "MP4 (M4A, AAC or ALAC) audio is not read; convert it to FLAC or WAV (e.g. ffmpeg -i IN OUT.flac)",
        ),
    }
    # A list that names a clip without its extension, or with another: the file that is there is named.
    listed = tmp_path / "listed"
    shutil.copytree(folder, listed / "wavs")
    (listed / "metadata.csv").write_text(
        "audio_file|text|speaker_name\nwavs/a.wav|Clip a.|ann\nwavs/d|Clip d.|ann\nwavs/a.mp3|Clip a.|ann\nwavs/b.wav|Clip b.|ann\n"
    )
    report = scan_dataset(data(listed, max_bad_file_fraction=0.8))
    assert {(bad.path, bad.detail) for bad in report.bad} == {
        ("wavs/d", "file not found, but wavs/d.wav is there: write that name"),
        ("wavs/a.mp3", "file not found, but wavs/a.wav is there: write that name"),
        (
            "wavs/b.wav",
            "file not found, but wavs/b.aiff is there, in a format not read: convert it to FLAC or WAV (ffmpeg -i IN OUT.flac)",
        ),
    }


def test_a_clip_named_in_other_capitals_is_named_as_it_is_on_disk(tmp_path):
    """A corpus made on Windows or macOS, whose disks ignore case: `CLIP_01` of a `clip_01.wav` had
    been a bare "file not found" beside a note that clip_01.wav is in no row."""
    clip = next((CORPORA / "coqui" / "wavs").iterdir())
    ljspeech = tmp_path / "lj"
    (ljspeech / "wavs").mkdir(parents=True)
    for n in range(1, 5):
        shutil.copy(clip, ljspeech / "wavs" / f"clip_0{n}.wav")
    (ljspeech / "metadata.csv").write_text("CLIP_01|One.\nclip_02|Two.\nCLIP_03.WAV|Three.\nclip_04|Four.\n")
    report = scan_dataset(data(ljspeech, max_bad_file_fraction=0.8))
    said = "is there, its name in other capitals: names are case-sensitive, write that one"
    assert {(bad.path, bad.detail) for bad in report.bad} == {
        ("wavs/CLIP_01.wav", f"file not found, but wavs/clip_01.wav {said}"),
        ("wavs/CLIP_03.WAV", f"file not found, but wavs/clip_03.wav {said}"),  # in wavs/, as its hint says
    }
    # The files those lines meant are no audio "in no row" besides: one fault had been said twice.
    assert report.datasets[0].unlisted_audio == 0, report.datasets[0].unlisted_example
    (ljspeech / "wavs" / "clip_05.wav").write_bytes((ljspeech / "wavs" / "clip_04.wav").read_bytes())
    assert scan_dataset(data(ljspeech, max_bad_file_fraction=0.8)).datasets[0].unlisted_example == "wavs/clip_05.wav"
    manifest = tmp_path / "manifest"
    (manifest / "audio").mkdir(parents=True)
    shutil.copy(clip, manifest / "audio" / "utt01.wav")
    shutil.copy(clip, manifest / "audio" / "utt02.wav")
    shutil.copy(clip, manifest / "audio" / "utt03.wav")
    (manifest / "metadata.csv").write_text(
        "audio_file|text\nAudio/UTT01.wav|One.\naudio/utt02.wav|Two.\nAudio/x.wav|X.\naudio\\utt03.wav|Three.\n"
    )
    report = scan_dataset(data(manifest, max_bad_file_fraction=0.8))
    windows = "file not found, but audio/utt03.wav is there: write / between folders, not \\ (a Windows path)"
    assert {(bad.path, bad.detail) for bad in report.bad} == {
        ("Audio/UTT01.wav", f"file not found, but audio/utt01.wav {said}"),
        ("Audio/x.wav", "file not found"),
        ("audio\\utt03.wav", windows),
    }


def test_a_txt_that_trains_beside_a_lab_of_other_words_is_said(tmp_path):
    import soundfile

    from xtts_cli.cli.output import dataset_notes

    samples, rate = soundfile.read(
        CORPORA / "coqui" / "wavs" / sorted(p.name for p in (CORPORA / "coqui" / "wavs").iterdir())[0]
    )
    folder = tmp_path / "voice"
    folder.mkdir()
    for stem, lab in (("a", "Something else."), ("b", "Clip b  is here."), ("c", None)):
        soundfile.write(folder / f"{stem}.wav", samples, rate)
        (folder / f"{stem}.txt").write_text(f"Clip {stem} is here.\n")
        if lab is not None:
            (folder / f"{stem}.LAB").write_text(lab)
    report = scan_dataset(data(folder, eval_fraction=0.0))
    (dataset,) = report.datasets
    assert (dataset.other_transcript, dataset.other_transcript_example) == (1, "a.LAB")  # b's says the same
    assert "1 clip trains from its .txt beside a .lab of other words (e.g. a.LAB): remove the one that is wrong" in (
        dataset_notes(dataset)
    )


def test_transcripts_left_without_their_clip_are_said(tmp_path):
    # A clip deleted with its transcript left had gone without a word (a row without its audio is a
    # bad item in the other layouts); a folder's README.txt is no clip's transcript.
    import soundfile

    from xtts_cli.cli.output import dataset_notes

    samples, rate = soundfile.read(
        CORPORA / "coqui" / "wavs" / sorted(p.name for p in (CORPORA / "coqui" / "wavs").iterdir())[0]
    )
    for speaker in ("alice", "bob"):
        (tmp_path / "voices" / speaker).mkdir(parents=True)
        for stem in ("u1", "u2", "u3"):
            soundfile.write(tmp_path / "voices" / speaker / f"{stem}.wav", samples, rate)
            (tmp_path / "voices" / speaker / f"{stem}.txt").write_text(f"Clip {stem} is here.\n")
    (tmp_path / "voices" / "bob" / "u2.wav").unlink()
    (tmp_path / "voices" / "bob" / "u2.lab").write_text("Clip u2 is here.")  # its twin beside it: one clip's
    (tmp_path / "voices" / "alice" / "u3.wav").unlink()
    (tmp_path / "voices" / "alice" / "README.txt").write_text("Recorded in May.")
    report = scan_dataset(data(tmp_path / "voices", eval_fraction=0.0))
    (dataset,) = report.datasets
    assert dataset.items == 4
    assert (dataset.lone_transcript, dataset.lone_transcript_example) == (3, "alice/u3.txt")
    assert (
        "3 transcripts have no audio of their name beside them (e.g. alice/u3.txt): not trained; put the clip "
        "back, or remove the transcript"
    ) in dataset_notes(dataset)


def test_libritts_root_trains_on_its_train_splits_and_a_split_folder_on_itself():
    root = scan_dataset(data(CORPORA / "libritts"))
    assert "84" not in root.speakers  # dev-clean's speaker
    assert root.datasets[0].metadata_files == [str(CORPORA / "libritts" / "train-clean-100")]
    split = scan_dataset(data(CORPORA / "libritts" / "dev-clean"))
    assert split.format == "libritts" and split.speakers == {"84": 2}


def test_numbered_speaker_and_session_folders_of_txt_transcripts_are_not_taken_for_libritts(tmp_path):
    """Detected as LibriTTS by their numbered folders alone, every clip had been refused for a
    .normalized.txt it never had, beside the .txt it had."""
    clip = next((CORPORA / "libritts" / "dev-clean").rglob("*.wav"))
    for speaker, session in (("101", "5"), ("102", "6")):
        (tmp_path / speaker / session).mkdir(parents=True)
        shutil.copy(clip, tmp_path / speaker / session / "u0.wav")
        (tmp_path / speaker / session / "u0.txt").write_text("A clip two folders down.", encoding="utf-8")
    with pytest.raises(XttsError) as info:
        scan_dataset(data(tmp_path))
    assert "no known dataset layout" in info.value.lines[0]
    assert "clips with transcripts lie deeper (101/5/u0.wav)" in info.value.hint


def test_an_unknown_folder_is_refused_in_one_line_naming_the_layouts(tmp_path):
    (tmp_path / "audio").mkdir()
    (tmp_path / "notes.txt").write_text("not a dataset")
    with pytest.raises(XttsError) as info:
        scan_dataset(data(tmp_path))
    assert len(info.value.lines) == 1
    line = info.value.lines[0]
    assert str(tmp_path) in line
    for name in ("ljspeech", "coqui", "vctk", "libritts", "common_voice", "nemo", "manifest"):
        assert name in line
    # A layout named that is not there says which one and what it expected.
    with pytest.raises(XttsError, match="not a VCTK folder"):
        scan_dataset(data(CORPORA / "coqui", dataset_format="vctk"))


def test_nemo_manifests_may_name_absolute_paths_inside_the_dataset_as_nemo_writes_them(tmp_path):
    shutil.copytree(CORPORA / "nemo", tmp_path / "nemo")
    records = [json.loads(line) for line in (tmp_path / "nemo" / "train_manifest.json").read_text().splitlines()]
    (tmp_path / "nemo" / "train_manifest.json").unlink()
    inside = [dict(r, audio_filepath=str(tmp_path / "nemo" / r["audio_filepath"])) for r in records]
    outside = [dict(r, audio_filepath=str(CORPORA / "nemo" / r["audio_filepath"])) for r in records]
    lines = "".join(json.dumps(r) + "\n" for r in inside + outside[:1]) + "{broken\n"
    (tmp_path / "nemo" / "manifest.jsonl").write_text(lines)
    report = scan_dataset(data(tmp_path / "nemo"))
    assert report.format == "nemo" and len(report.items) == 4
    assert sorted(bad.reason for bad in report.bad) == ["malformed_line", "path_escapes_root"]
    assert report.datasets[0].outside_root == 0
    # Allowed, the clip outside is read, and the report says how many came from beyond the root.
    allowed = scan_dataset(data(tmp_path / "nemo", allow_absolute_paths=True, scan_cache=False))
    assert len(allowed.items) == 5 and allowed.datasets[0].outside_root == 1


def test_common_voice_falls_back_to_train_tsv(tmp_path):
    shutil.copytree(CORPORA / "common_voice", tmp_path / "cv")
    (tmp_path / "cv" / "validated.tsv").unlink()
    clips = tmp_path / "cv" / "clips"
    shutil.copy(clips / "common_voice_en_1002.mp3", clips / "common_voice_en_1099.mp3")  # a clip of its own
    with open(tmp_path / "cv" / "train.tsv", "a", encoding="utf-8") as table:
        # Common Voice writes sentences unquoted: quotation marks are part of the text.
        table.write(f'{"c" * 40}\tcommon_voice_en_1099.mp3\t"Stop," she said.\t2\t0\t\t\t\t\ten\t\n')
    with open(tmp_path / "cv" / "train.tsv", "a", encoding="utf-8") as table:  # a clip listed twice: once
        table.write(f"{'c' * 40}\tcommon_voice_en_1099.mp3\tAnother text.\t2\t0\t\t\t\t\ten\t\n")
    report = scan_dataset(data(tmp_path / "cv"))
    assert report.format == "common_voice" and len(report.items) == 5
    assert report.metadata_files == [str(tmp_path / "cv" / "train.tsv")]
    assert {item.speaker: item.text for item in report.items}["c" * 40] == '"Stop," she said.'
    (twice,) = report.bad
    assert (twice.source, twice.reason) == ("train.tsv:7", "malformed_line")
    # With another text, said with the one that trains: "listed twice" alone hid which transcript was wrong.
    assert twice.detail == (
        'lists clips/common_voice_en_1099.mp3, which train.tsv:6 lists too with another text (\'"Stop," she '
        "said.' trains, the first line's): each clip once (a dataset's weight repeats it)"
    )
    assert twice.path == "clips/common_voice_en_1099.mp3"
    # An LJSpeech line names its clip by id alone: the clip it means is named all the same (it had been None).
    ljspeech = tmp_path / "lj"
    shutil.copytree(CORPORA / "ljspeech2", ljspeech)
    first = (ljspeech / "metadata.csv").read_text(encoding="utf-8").splitlines()[0]
    with open(ljspeech / "metadata.csv", "a", encoding="utf-8") as rows:
        rows.write(first + "\n")
    (again,) = scan_dataset(data(ljspeech)).bad
    assert again.path == f"wavs/{first.split('|')[0]}.wav" and again.detail.startswith(f"lists {again.path}, which ")


def test_the_validation_split_keeps_every_speaker_in_training():
    # Asked for 90 % validation, the split still leaves each speaker clips to learn the voice from.
    report = scan_dataset(data(CORPORA / "vctk", eval_fraction=0.9))
    assert {item.speaker for item in report.train} == {"p225", "p226", "p227"}
    assert report.eval  # and validation is not emptied by it


def test_several_datasets_train_together_by_weight():
    settings = DataConfig(
        datasets=[
            {"path": str(CORPORA / "vctk"), "weight": 1.0},
            {"path": str(CORPORA / "coqui"), "format": "coqui", "weight": 2.0},
        ],
        max_bad_file_fraction=0.5,
    )
    report = scan_dataset(settings)
    assert report.format == "vctk+coqui" and [d.name for d in report.datasets] == ["vctk", "coqui"]
    vctk, coqui = report.datasets
    # vctk: 5 training clips at weight 1; coqui: 3 at weight 2 -> each coqui clip 3x (9 / 14 of the epoch).
    assert (vctk.train_items, coqui.train_items) == (5, 3)
    assert (vctk.repeats, coqui.repeats) == (1, 3)
    assert (vctk.epoch_share, coqui.epoch_share) == (5 / 14, 9 / 14)
    epoch = report.epoch_items()
    assert sum(item.dataset == "coqui" for item in epoch) == 9 and sum(item.dataset == "vctk" for item in epoch) == 5
    assert set(report.speakers) == {"p225", "p226", "p227", "alice", "bob"}
    assert {b.dataset for b in report.bad} == {"vctk"}  # which of the datasets a bad file is in
    # Cache mode holds each repeat: the memory validate weighs counts a coqui clip three times, as the
    # training pipeline's plan does (profile-pipeline had chosen precompute where validate said cache).
    from xtts_cli.data.plan import feature_bytes, mel_frames

    held = [mel_frames(item, settings) for item in epoch + report.eval]
    assert report.feature_bytes(settings) == feature_bytes(held, settings, "mel")
    # Weights far apart (a typed 1e-9) are one line, not an epoch of billions of clips listed until memory runs out.
    far = settings.model_copy(
        update={"datasets": [settings.datasets[0], settings.datasets[1].model_copy(update={"weight": 1e-9})]}
    )
    with pytest.raises(XttsError) as apart:
        scan_dataset(far)
    assert apart.value.lines[0].startswith(
        "data.datasets[1].weight 1e-09: to give its clips so small a share, the weights would repeat each clip of "
        "vctk x"
    ) and apart.value.lines[0].endswith("clips in all, over the 1,000,000 an epoch may hold)"), apart.value.lines
    with pytest.raises(ValueError, match="both set"):
        DataConfig(dataset_path=str(CORPORA / "vctk"), datasets=[{"path": str(CORPORA / "coqui")}])


def test_a_listed_dataset_that_gives_no_clip_is_named_not_trained_without(tmp_path):
    from xtts_cli.data.scan import DatasetScanError

    (tmp_path / "empty" / "wavs").mkdir(parents=True)
    (tmp_path / "empty" / "metadata.csv").write_text("", encoding="utf-8")
    settings = DataConfig(
        datasets=[{"path": str(CORPORA / "vctk")}, {"path": str(tmp_path / "empty"), "weight": 2}],
        max_bad_file_fraction=0.5,
    )
    with pytest.raises(DatasetScanError) as empty:  # its weight asked two thirds of each epoch
        scan_dataset(settings)
    assert empty.value.lines == [
        f"data.datasets[1] ({tmp_path / 'empty'}) gives no training clip (it lists none), so the others train without it"
    ]
    # Every clip past data.max_audio_duration: the hint names the key and its value (it had said "mend it").
    import soundfile

    (tmp_path / "long" / "wavs").mkdir(parents=True)
    tone = 0.3 * np.sin(np.arange(22050 * 12) * 2 * np.pi * 220 / 22050)
    soundfile.write(str(tmp_path / "long" / "wavs" / "a.wav"), tone, 22050)
    (tmp_path / "long" / "metadata.csv").write_text("a|A long one.|A long one.\n", encoding="utf-8")
    settings = settings.model_copy(update={"datasets": [settings.datasets[0], {"path": str(tmp_path / "long")}]})
    settings = DataConfig.model_validate(settings.model_dump())
    with pytest.raises(DatasetScanError) as long:
        scan_dataset(settings)
    assert long.value.lines[0].endswith("(0 good, 1 left out: 1 too_long), so the others train without it")
    assert long.value.hint == "raise data.max_audio_duration (10) or shorten its clips, or remove its entry"
    # Every clip under data.min_audio_duration: lowered, not "widened ... or shortened".
    (tmp_path / "short" / "wavs").mkdir(parents=True)
    soundfile.write(str(tmp_path / "short" / "wavs" / "a.wav"), tone[: 22050 // 4], 22050)
    (tmp_path / "short" / "metadata.csv").write_text("a|Hi.|Hi.\n", encoding="utf-8")
    settings = DataConfig.model_validate(
        {**settings.model_dump(), "datasets": [settings.datasets[0].model_dump(), {"path": str(tmp_path / "short")}]}
    )
    with pytest.raises(DatasetScanError) as short:
        scan_dataset(settings)
    assert short.value.hint == "lower data.min_audio_duration (0.5) or give it longer clips, or remove its entry"


def test_a_share_whole_repeats_leave_off_its_weight_is_said_with_the_one_asked():
    from xtts_cli.cli.output import weight_words

    settings = DataConfig(
        datasets=[{"path": str(CORPORA / "vctk")}, {"path": str(CORPORA / "coqui"), "format": "coqui", "weight": 0.75}],
        max_bad_file_fraction=0.5,
    )
    datasets = scan_dataset(settings).datasets
    # 5 clips at weight 1, 3 at 0.75: a coqui clip is worth 1.25 vctk ones, rounded to once each.
    assert [d.repeats for d in datasets] == [1, 1]
    assert weight_words(datasets[0], datasets) == (
        "weight 1: each clip x1 an epoch, 62 % of it where its weight asks 57 % (clips repeat a whole number of times)"
    )
    assert weight_words(datasets[1], datasets).endswith(
        "38 % of it where its weight asks 43 % (clips repeat a whole number of times)"
    )
    assert weight_words(datasets[0], datasets[:1]) == ""


def test_each_of_several_datasets_may_name_its_own_metadata_file_and_is_named_in_what_is_missing(tmp_path):
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.diagnosis.config_rules import check_config

    folder, clips = _voice(tmp_path)
    rows = [f"wavs/{name}\tLine {i}.\tann" for i, name in enumerate(clips)]
    (folder / "train.tsv").write_text("\n".join(["path\ttext\tspeaker", *rows]) + "\n", encoding="utf-8")
    datasets = [{"path": str(CORPORA / "coqui")}, {"path": str(folder), "metadata_train_file": "train.tsv"}]
    report = scan_dataset(DataConfig(datasets=datasets, eval_fraction=0.0))
    assert report.format == "coqui+manifest" and set(report.speakers) == {"alice", "bob", "ann"}
    # Without it, the key to set is this dataset's, not data.metadata_train_file (the coqui one's too).
    del datasets[1]["metadata_train_file"]
    with pytest.raises(XttsError) as unknown:
        scan_dataset(DataConfig(datasets=datasets))
    assert unknown.value.hint == "if it lists the clips, set data.datasets[1].metadata_train_file: train.tsv"
    datasets[1]["format"] = "manifest"
    loaded = resolve_config(None, sets=[f"data.datasets={json.dumps(datasets)}"])
    (missing,) = [f for f in check_config(loaded, probe_machine()) if f.id == "metadata-missing"]
    assert missing.message.startswith("data.datasets[1].metadata_train_file 'metadata.csv' not found in")


def test_one_folder_listed_twice_is_refused_not_trained_twice(tmp_path):
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.diagnosis.config_rules import check_config

    datasets = [{"path": str(CORPORA / "coqui")}, {"path": f"{CORPORA / 'coqui'}/"}]
    with pytest.raises(XttsError) as twice:
        scan_dataset(DataConfig(datasets=datasets))
    assert twice.value.lines[0].startswith("data.datasets[1].path is the folder of data.datasets[0].path again (")
    loaded = resolve_config(None, sets=[f"data.datasets={json.dumps(datasets)}"])
    assert [f.id for f in check_config(loaded, probe_machine()) if f.severity == "error"] == ["dataset-twice"]


def test_audio_another_list_of_its_folder_names_is_no_unlisted_audio(tmp_path):
    # One folder, a list per language (docs/data.md): each list had said the other's clips were in no
    # row, "not trained", though they trained.
    folder, clips = _voice(tmp_path)
    stems = [Path(clip).stem for clip in clips]
    (folder / "en.csv").write_text("".join(f"{stem}|Line {i}.\n" for i, stem in enumerate(stems[:2])), encoding="utf-8")
    (folder / "fa.csv").write_text("".join(f"{stem}|Line {i}.\n" for i, stem in enumerate(stems[2:])), encoding="utf-8")
    datasets = [
        {"path": str(folder), "metadata_train_file": "en.csv", "language": "en"},
        {"path": str(folder), "metadata_train_file": "fa.csv", "language": "fa"},
    ]
    report = scan_dataset(DataConfig(datasets=datasets, eval_fraction=0.0))
    assert [d.format for d in report.datasets] == ["ljspeech", "ljspeech"]
    assert [(d.unlisted_audio, d.unlisted_example) for d in report.datasets] == [(0, None), (0, None)]
    shutil.copy(folder / "wavs" / clips[0], folder / "wavs" / "lost.wav")  # in neither list: said by each
    report = scan_dataset(DataConfig(datasets=datasets, eval_fraction=0.0))
    assert [(d.unlisted_audio, d.unlisted_example) for d in report.datasets] == [(1, "wavs/lost.wav")] * 2


def test_one_folder_of_two_lists_is_two_datasets_and_a_clip_of_two_is_refused(tmp_path):
    # Two metadata files in one folder (a language each) had been refused as the folder twice; a
    # folder inside another's (its clips again) had trained twice, its speaker's minutes doubled.
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.diagnosis.config_rules import check_config

    folder, clips = _voice(tmp_path)
    for name, part in (("first.tsv", clips[:2]), ("second.tsv", clips[2:])):
        rows = [f"wavs/{clip}\tLine {i}.\tann" for i, clip in enumerate(part)]
        (folder / name).write_text("\n".join(["path\ttext\tspeaker", *rows]) + "\n", encoding="utf-8")
    datasets = [
        {"path": str(folder), "metadata_train_file": "first.tsv", "language": "de"},
        {"path": str(folder), "metadata_train_file": "second.tsv", "language": "en"},
    ]
    report = scan_dataset(DataConfig(datasets=datasets, eval_fraction=0.0))
    assert sorted(item.language for item in report.train) == ["de", "de"] + ["en"] * (len(clips) - 2)
    loaded = resolve_config(None, sets=[f"data.datasets={json.dumps(datasets)}"])
    assert "dataset-twice" not in [f.id for f in check_config(loaded, probe_machine())]
    (folder / "second.tsv").write_text(f"path\ttext\tspeaker\nwavs/{clips[1]}\tAgain.\tann\n", encoding="utf-8")
    with pytest.raises(XttsError) as both:
        scan_dataset(DataConfig(datasets=datasets, eval_fraction=0.0))
    assert both.value.lines[0] == (
        f"{folder / 'wavs' / clips[1]} is a clip of both data.datasets[0].path ({folder}) and data.datasets[1].path "
        f"({folder}): it would train twice, as two datasets"
    )
    voices = tmp_path / "voices"
    for speaker, part in (("ann", clips[:2]), ("bob", clips[2:])):
        (voices / speaker).mkdir(parents=True)
        for i, clip in enumerate(part):
            shutil.copy(folder / "wavs" / clip, voices / speaker / clip)
            (voices / speaker / clip).with_suffix(".txt").write_text(f"Line {i}.", encoding="utf-8")
    nested = [{"path": str(voices)}, {"path": str(voices / "ann"), "weight": 2}]
    with pytest.raises(XttsError, match=r"is a clip of both data.datasets\[0\].path"):
        scan_dataset(DataConfig(datasets=nested, eval_fraction=0.0))
    # A symlink to another dataset's clip is that clip: it had trained twice, under two speakers.
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "a.wav").symlink_to(voices / "ann" / clips[0])
    (linked / "a.txt").write_text("Line 0.", encoding="utf-8")
    shared = [{"path": str(voices / "bob")}, {"path": str(voices / "ann")}, {"path": str(linked)}]
    with pytest.raises(XttsError) as through:
        scan_dataset(DataConfig(datasets=shared, eval_fraction=0.0, allow_absolute_paths=True))
    assert through.value.lines[0].startswith(
        f"{linked / 'a.wav'} (a link to {voices / 'ann' / clips[0]}) is a clip of both data.datasets[1].path"
    )
    # And in one dataset's list, a link to a clip it lists already is that clip listed twice.
    (folder / "wavs" / "again.wav").symlink_to(folder / "wavs" / clips[1])
    rows = [f"{Path(clip).stem}|Line {i}." for i, clip in enumerate(clips)] + ["again|Once more."]
    (folder / "metadata.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (bad,) = scan_dataset(data(folder, eval_fraction=0.0)).bad
    assert bad.reason == "malformed_line" and bad.detail.startswith(
        f"lists wavs/again.wav (a link to {folder / 'wavs' / clips[1]}), which metadata.csv:2 lists too"
    ), bad
    # The link listed first: the real clip's line names it, not a line of its own clip.
    rows.insert(0, rows.pop())
    (folder / "metadata.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (bad,) = scan_dataset(data(folder, eval_fraction=0.0)).bad
    assert bad.detail.startswith(
        f"lists wavs/{clips[1]}, which metadata.csv:1 lists too through the link {folder / 'wavs' / 'again.wav'}"
    ), bad


def test_a_speaker_name_in_two_datasets_is_one_voice_and_said_so(tmp_path):
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.diagnosis.checkup import scan_findings
    from xtts_cli.run.files import load_speakers, save_speakers

    shutil.copytree(CORPORA / "coqui", tmp_path / "more")
    datasets = [{"path": str(CORPORA / "coqui")}, {"path": str(tmp_path / "more"), "weight": 2}]
    config = XttsConfig(data={"datasets": datasets, "eval_fraction": 0.0})
    scan, _, found = scan_findings(config)
    assert scan.shared_speakers() == {"alice": ["coqui", "more"], "bob": ["coqui", "more"]}
    (shared,) = [f for f in found if f.id == "dataset-shared-speaker"]
    assert shared.severity == "warning"
    assert shared.message.startswith(
        "speaker names 'alice' in coqui and more, 'bob' in coqui and more: each name's clips train as one voice"
    )
    save_speakers(tmp_path, scan.train)
    assert load_speakers(tmp_path)["alice"]["datasets"] == ["coqui", "more"]


def test_digits_in_transcripts_of_a_language_read_without_number_words_are_a_warning(tmp_path):
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.diagnosis.checkup import scan_findings

    folder, clips = _voice(tmp_path)
    lines = ["Έχω 25 βιβλία.", "Καλημέρα.", "Το 1821.", "Ναι."]
    (folder / "metadata.csv").write_text(
        "".join(f"{name[:-4]}|{line}\n" for name, line in zip(clips, lines)), encoding="utf-8"
    )
    unread = {}
    for language in ("el", "de"):  # German numbers are read as words: no warning
        _, _, found = scan_findings(XttsConfig(data={"dataset_path": str(folder), "language": language}))
        unread[language] = [f.message for f in found if f.id == "dataset-digits-unread"]
    assert unread["de"] == [] and len(unread["el"]) == 1
    assert unread["el"][0].startswith(
        "2 transcripts of dataset voice hold digits, and xtts reads no numbers as words in el"
    )


@pytest.mark.parametrize("frontend", ["characters", "phonemes"])
def test_a_transcript_that_says_more_than_its_clip_holds_is_bad_not_a_crash_in_training(tmp_path, frontend):
    folder, clips = _voice(tmp_path)
    long = "The quick brown fox jumps over the lazy dog again and again, " * 4
    lines = [f"{clips[0][:-4]}|{long}"] + [f"{name[:-4]}|Short line." for name in clips[1:]]
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = scan_dataset(data(folder, eval_fraction=0.0, text_frontend=frontend, max_text_length=400))
    assert [(b.source, b.reason) for b in report.bad] == [("metadata.csv:1", "text_outruns_audio")]
    unit = "phoneme symbols" if frontend == "phonemes" else "characters"
    assert (
        f" {unit} for " in report.bad[0].detail
        and "the transcript says more than the clip holds" in report.bad[0].detail
    )


def test_flac_at_48k_mp3_and_24k_wav_decode_into_batches_at_the_training_rate():
    import tensorflow as tf  # noqa: F401  (the pipeline is TensorFlow)

    from xtts_cli.data.pipeline import build_pipeline, tokenizer_for

    config = XttsConfig(
        data={
            "datasets": [{"path": str(CORPORA / name)} for name in ("vctk", "common_voice", "libritts")],
            "max_bad_file_fraction": 0.5,
            "batch_size": 4,
            "num_buckets": 1,
            "reference_frames": 24,
            "preprocessing_mode": "runtime",
        }
    )
    report = scan_dataset(config.data)
    tokenizer = tokenizer_for(report, config.data)
    ds, info = build_pipeline(config, report.items, tokenizer, training=False)
    lengths = sorted(int(n) for batch in ds for n in batch["mel_lengths"].numpy())
    expected = sorted(1 + item.audio.num_samples * 22050 // item.audio.sample_rate // 256 for item in report.items)
    assert len(lengths) == info.num_items == len(report.items) - len(report.items) % 4
    assert set(lengths) <= set(expected)
    batch = next(iter(ds))
    assert np.isfinite(batch["mel"].numpy()).all() and batch["mel"].numpy().max() > -5  # speech, not silence


@pytest.mark.parametrize(
    "header", ["file,text", "wav_filename,transcript,speaker_id", "filename\tsentence", "audio|transcription"]
)
def test_a_manifest_header_may_name_its_columns_as_other_tools_write_them(tmp_path, header):
    folder = tmp_path / "voice"
    shutil.copytree(CORPORA / "ljspeech2" / "wavs", folder / "wavs")
    delimiter = next(d for d in ",\t|" if d in header)
    clips = sorted(p.name for p in (folder / "wavs").glob("*.wav"))
    rows = [
        delimiter.join([f"wavs/{name}", f"Line {i}.", "ann"][: header.count(delimiter) + 1])
        for i, name in enumerate(clips)
    ]
    (folder / "metadata.csv").write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    report = scan_dataset(data(folder, eval_fraction=0.0))
    assert report.format == "manifest" and report.bad == [] and len(report.train) == len(clips)
    assert [item.text for item in report.train] == [f"Line {i}." for i in range(len(clips))]
    assert {item.speaker for item in report.train} == ({"ann"} if "speaker" in header else {"voice"})


def _voice(tmp_path: Path) -> tuple[Path, list[str]]:
    folder = tmp_path / "voice"
    shutil.copytree(CORPORA / "ljspeech2" / "wavs", folder / "wavs")
    return folder, sorted(p.name for p in (folder / "wavs").glob("*.wav"))


def test_quotation_marks_in_a_tab_separated_manifest_are_the_texts_own(tmp_path):
    folder, clips = _voice(tmp_path)
    texts = ['"Stop," she said.', '"Wait for me.', 'A "red" boat.', '"""Go,"" he said."']
    rows = [f"wavs/{name}\t{text}\tann" for name, text in zip(clips, texts)]
    (folder / "metadata.tsv").write_text("\n".join(["path\ttext\tspeaker", *rows]) + "\n", encoding="utf-8")
    report = scan_dataset(data(folder, eval_fraction=0.0, metadata_train_file="metadata.tsv"))
    # Every row is one clip: an unclosed quotation mark swallows none of the rows after it. The last
    # cell was quoted whole by a spreadsheet: it reads as written.
    assert report.bad == [] and [item.text for item in report.train] == [*texts[:3], '"Go," he said.']


def test_a_row_that_runs_on_or_has_more_cells_than_its_header_is_named_and_the_others_kept(tmp_path):
    folder, clips = _voice(tmp_path)
    rows = [
        f"wavs/{clips[0]},The cat sat down.,ann",
        f"wavs/{clips[1]},Green trees, she said.,ann",  # the comma in the text: one cell too many
        f'wavs/{clips[2]},"A red boat, she said.,ann',  # its quotation mark is never closed ...
        f"wavs/{clips[3]},Bring the map.,ann",  # ... which ran on over this line: read again as its own
    ]
    (folder / "metadata.csv").write_text("\n".join(["file,text,speaker", *rows]) + "\n", encoding="utf-8")
    report = scan_dataset(data(folder, eval_fraction=0.0, max_bad_file_fraction=0.7))
    assert [item.text for item in report.train] == ["The cat sat down.", "Bring the map."]
    bad = {item.source: item.detail for item in report.bad}
    assert sorted(bad) == ["metadata.csv:3", "metadata.csv:4"] and all(i.reason == "malformed_line" for i in report.bad)
    assert bad["metadata.csv:3"].startswith("expected 3 columns (file, text, speaker), got 4")
    assert "runs on over the next 1 line(s)" in bad["metadata.csv:4"]
    # A coqui line is split on `|` alone: one cell too many is named the same way.
    (folder / "metadata.csv").write_text(
        f"audio_file|text|speaker_name\nwavs/{clips[0]}|Yes.|ann\nwavs/{clips[1]}|A | B.|ann\n", encoding="utf-8"
    )
    report = scan_dataset(data(folder, eval_fraction=0.0))
    assert report.format == "coqui" and [i.source for i in report.bad] == ["metadata.csv:3"]
    # There quotation marks are the text's own: the fix is to take the `|` out, not to quote. The clip
    # the row names is that row's, not audio "in no row" (it had been said of both).
    assert report.bad[0].detail.endswith("got 4: is a | inside a text? take it out of the text")
    assert report.datasets[0].unlisted_audio == len(clips) - 2  # the two clips no row names
    # A row pasted from a tab-separated file: one cell; its clip is named by it, once.
    (folder / "metadata.csv").write_text(
        f"audio_file|text|speaker_name\nwavs/{clips[0]}|Yes.|ann\nwavs/{clips[1]}\tNo.\tann\n", encoding="utf-8"
    )
    report = scan_dataset(data(folder, eval_fraction=0.0, max_bad_file_fraction=0.7))
    assert report.bad[0].detail.endswith("got 1: its cells are separated by a tab, the file's by a |")
    assert report.datasets[0].unlisted_audio == len(clips) - 2


def test_audio_files_are_found_whatever_the_case_of_their_extension(tmp_path):
    folder, clips = _voice(tmp_path)
    stems = [name[:-4] for name in clips]
    (folder / "wavs" / clips[0]).rename(folder / "wavs" / f"{stems[0]}.WAV")
    lines = [f"{stems[0]}|The cat sat down.", f"{clips[1]}|A red boat."]  # an id written with its extension
    # A two-column file: a `|` inside one transcript is its own, not a normalized column.
    lines += [f"{stems[2]}|Bring | the map.", f"{stems[3]}|Green trees grow."]
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = scan_dataset(data(folder, eval_fraction=0.0))
    assert report.bad == [] and len(report.train) == 4
    assert {item.text for item in report.train} >= {"Bring | the map."}
    assert any(item.audio_path.endswith(f"{stems[0]}.WAV") for item in report.train)
    # VCTK's FLAC and LibriTTS's WAV in capitals.
    vctk, libritts = tmp_path / "vctk", tmp_path / "libritts"
    shutil.copytree(CORPORA / "vctk", vctk)
    shutil.copytree(CORPORA / "libritts" / "train-clean-100", libritts)
    for path in [*vctk.rglob("*.flac"), *libritts.rglob("*.wav")]:
        path.rename(path.with_suffix(path.suffix.upper()))
    for renamed, original in ((vctk, CORPORA / "vctk"), (libritts, CORPORA / "libritts" / "train-clean-100")):
        report, before = scan_dataset(data(renamed)), scan_dataset(data(original))
        assert len(report.items) == len(before.items) > 0  # the fixtures' own bad items stay bad
        assert sorted(b.reason for b in report.bad) == sorted(b.reason for b in before.bad)


def test_a_nemo_manifest_saved_with_a_byte_order_mark_is_found(tmp_path):
    shutil.copytree(CORPORA / "nemo", tmp_path / "nemo")
    manifest = tmp_path / "nemo" / "train_manifest.json"
    manifest.write_bytes(b"\xef\xbb\xbf" + manifest.read_bytes())
    report = scan_dataset(data(tmp_path / "nemo"))
    assert report.format == "nemo" and len(report.items) == 4 and report.bad == []


def test_metadata_saved_as_utf16_is_read_and_a_nul_in_a_line_is_that_line_bad(tmp_path):
    # Windows' "Unicode text" is UTF-16: with its byte-order mark, or little-endian without one.
    # Read as UTF-8 its ASCII letters are NUL-separated, and the first path with a NUL crashed a stat.
    original = (CORPORA / "coqui" / "metadata.csv").read_text(encoding="utf-8")
    before = scan_dataset(data(CORPORA / "coqui"))
    for encoding in ("utf-16", "utf-16-le"):
        shutil.copytree(CORPORA / "coqui", tmp_path / encoding)
        (tmp_path / encoding / "metadata.csv").write_bytes(original.encode(encoding))
        report = scan_dataset(data(tmp_path / encoding))
        assert report.format == "coqui" and len(report.items) == len(before.items) > 0, encoding
    # A VCTK transcript saved so (a .txt of Notepad's "Unicode"): read, where it had been refused as
    # Windows-1252; UTF-16 that breaks off is that clip's problem, named as UTF-16.
    shutil.copytree(CORPORA / "vctk", tmp_path / "vctk")
    texts = sorted((tmp_path / "vctk" / "txt").rglob("*.txt"))
    said = texts[0].read_text(encoding="utf-8")
    texts[0].write_bytes(said.encode("utf-16"))
    texts[1].write_bytes(texts[1].read_text(encoding="utf-8").encode("utf-16") + b"\x00")
    report = scan_dataset(data(tmp_path / "vctk"))
    assert [item.text for item in report.items if item.id == texts[0].stem] == [" ".join(said.split())]
    (broken,) = [bad for bad in report.bad if bad.reason == "not_utf8"]  # the fixture's own bad clips aside
    assert broken.reason == "not_utf8" and broken.detail.startswith("the transcript is UTF-16 text that does not"), (
        broken
    )
    assert broken.detail.endswith("; re-save it as UTF-8 (e.g. iconv -f utf-16 -t utf-8)"), broken
    shutil.copytree(CORPORA / "coqui", tmp_path / "nul")
    lines = original.splitlines()
    lines[1] = lines[1].replace("|", "\x00|", 1)
    (tmp_path / "nul" / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = scan_dataset(data(tmp_path / "nul"))
    assert [(b.source, b.reason) for b in report.bad if "NUL" in b.detail] == [("metadata.csv:2", "not_utf8")]
    (nul,) = [b.detail for b in report.bad if "NUL" in b.detail]  # re-saving as UTF-8 keeps it: not that fix
    assert (
        nul
        == f"a NUL byte at character {lines[1].index(chr(0))} of the line, which no text holds; delete it from the line"
    )


def test_a_line_in_another_encoding_is_that_line_with_its_clip_and_a_whole_file_is_one_line(tmp_path):
    """One line pasted in Windows-1252: that line is bad, named by its place and its clip (the clip is
    the line's, not audio no row lists). A whole file in it: one line saying so, not a bad item per line."""
    root = tmp_path / "lj"
    shutil.copytree(CORPORA / "ljspeech2", root)
    metadata = root / "metadata.csv"
    lines = metadata.read_text(encoding="utf-8").splitlines()
    key = lines[1].split("|")[0]
    lines[1] = f"{key}|Un café très élégant.|Un café très élégant."
    metadata.write_bytes("\n".join(lines).encode("utf-8").replace("é".encode(), b"\xe9") + b"\n")
    report = scan_dataset(data(root, max_bad_file_fraction=0.9))
    (bad,) = report.bad
    assert (bad.reason, bad.place) == ("not_utf8", f"metadata.csv:2 (wavs/{key}.wav)")
    assert report.datasets[0].unlisted_audio == 0
    metadata.write_bytes("\n".join(line.replace("|", "|Café: ", 1) for line in lines).encode("cp1252"))
    with pytest.raises(XttsError) as caught:
        scan_dataset(data(root))
    assert caught.value.lines == [
        f"{metadata}: {len(lines)} of its {len(lines)} lines are not UTF-8 text (saved in another encoding, such "
        "as Windows-1252)"
    ]


@pytest.mark.parametrize("header", ["id|text|normalized_text", "ID|Text", "file|transcript"])
@pytest.mark.parametrize("columns", [2, 3])
def test_a_header_line_in_ljspeech_metadata_names_the_columns_not_a_clip(tmp_path, header, columns):
    root = tmp_path / "lj"
    shutil.copytree(CORPORA / "ljspeech2", root)
    metadata = root / "metadata.csv"
    lines = metadata.read_text(encoding="utf-8").splitlines()
    lines = ["|".join([*line.split("|")[:2], *line.split("|")[1:2]][:columns]) for line in lines]
    metadata.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    before = scan_dataset(data(root))
    metadata.write_text(f"{header}\n" + metadata.read_text(encoding="utf-8"), encoding="utf-8")
    report = scan_dataset(data(root))
    # Its clips, found by their names as LJSpeech writes them (a header naming a file column too).
    assert len(report.items) == len(before.items) > 0 and report.bad == before.bad == []
    assert [item.text for item in report.items] == [item.text for item in before.items]


@pytest.mark.parametrize("written", ["NFC", "NFD"])
def test_an_id_and_its_file_name_match_whichever_unicode_form_each_is_in(tmp_path, written):
    """macOS writes file names decomposed (NFD), most editors type composed (NFC): "café" is one clip."""
    import unicodedata

    root = tmp_path / "lj"
    shutil.copytree(CORPORA / "ljspeech2", root)
    metadata = root / "metadata.csv"
    lines = metadata.read_text(encoding="utf-8").splitlines()
    key = lines[0].split("|")[0]
    other = "NFD" if written == "NFC" else "NFC"
    (root / "wavs" / f"{key}.wav").rename(root / "wavs" / unicodedata.normalize(other, "café.wav"))
    lines[0] = lines[0].replace(key, unicodedata.normalize(written, "café"), 1)
    metadata.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = scan_dataset(data(root))
    assert report.bad == [] and report.datasets[0].unlisted_audio == 0
    assert any(unicodedata.normalize("NFC", Path(item.audio_path).name) == "café.wav" for item in report.items)


def test_a_layout_mistake_that_spoils_every_clip_is_named_not_met_with_a_higher_bad_fraction(tmp_path):
    from xtts_cli.data.scan import DatasetScanError

    flat = tmp_path / "flat"  # the clips beside metadata.csv, no wavs/ folder
    shutil.copytree(CORPORA / "ljspeech2", flat)
    for clip in (flat / "wavs").iterdir():
        clip.rename(flat / clip.name)
    (flat / "wavs").rmdir()
    tabs = tmp_path / "tabs"  # tab-separated
    shutil.copytree(CORPORA / "ljspeech2", tabs)
    metadata = tabs / "metadata.csv"
    metadata.write_text(metadata.read_text(encoding="utf-8").replace("|", "\t"), encoding="utf-8")
    commas = tmp_path / "commas"  # comma-separated
    shutil.copytree(CORPORA / "ljspeech2", commas)
    metadata = commas / "metadata.csv"
    metadata.write_text(metadata.read_text(encoding="utf-8").replace("|", ","), encoding="utf-8")
    linked = tmp_path / "linked"  # wavs/ a link to a folder outside the dataset
    shutil.copytree(CORPORA / "ljspeech2", linked)
    (linked / "wavs").rename(tmp_path / "elsewhere")
    (linked / "wavs").symlink_to(tmp_path / "elsewhere")
    for root, cause in (
        (flat, f"the clips lie beside the metadata in {flat}, not in its wavs/ folder where LJSpeech keeps them"),
        (tabs, "its lines are tab-separated: this layout separates its columns with |"),
        (commas, "its lines are comma-separated: this layout separates its columns with |"),
        (linked, "every clip lies outside the dataset's folder (a linked wavs/, or absolute paths): set data.allow"),
    ):
        with pytest.raises(DatasetScanError) as caught:
            scan_dataset(data(root))
        assert caught.value.hint.startswith(cause), caught.value.hint


def test_a_clip_with_no_speaker_among_clips_that_name_theirs_is_named_not_given_the_folders_name(tmp_path):
    folder, clips = _voice(tmp_path)
    rows = [f"wavs/{clips[0]}|One.|ann", f"wavs/{clips[1]}|Two.| ", f"wavs/{clips[2]}|Three.|bob"]
    (folder / "metadata.csv").write_text("\n".join(["audio_file|text|speaker_name", *rows]) + "\n", encoding="utf-8")
    report = scan_dataset(data(folder, eval_fraction=0.0))
    assert {item.speaker for item in report.train} == {"ann", "bob"}  # no speaker called "voice"
    assert [(b.source, b.path, b.reason) for b in report.bad] == [
        ("metadata.csv:3", f"wavs/{clips[1]}", "malformed_line")
    ]
    assert report.bad[0].detail == "names no speaker while other clips name theirs; write its speaker"
    # A speaker column empty throughout is one speaker, the folder's.
    rows = [f"wavs/{name}|Line.|" for name in clips]
    (folder / "metadata.csv").write_text("\n".join(["audio_file|text|speaker_name", *rows]) + "\n", encoding="utf-8")
    report = scan_dataset(data(folder, eval_fraction=0.0))
    assert report.bad == [] and {item.speaker for item in report.train} == {"voice"}
    # A NeMo manifest: a record without "speaker" among records with one.
    shutil.copytree(CORPORA / "nemo", tmp_path / "nemo")
    manifest = tmp_path / "nemo" / "train_manifest.json"
    records = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines() if line.strip()]
    del records[0]["speaker"]
    manifest.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    report = scan_dataset(data(tmp_path / "nemo"))
    assert [(b.source, b.reason) for b in report.bad] == [("train_manifest.json:1", "malformed_line")]


def _clips_beside_transcripts(root: Path, speakers: dict[str, list[str]]) -> None:
    """`root/<speaker>/<name>.wav` + `.txt` ("" as the speaker: in `root` itself), from the coqui corpus."""
    wavs = sorted((CORPORA / "coqui" / "wavs").glob("*.wav"))
    for speaker, names in speakers.items():
        (root / speaker).mkdir(parents=True, exist_ok=True)
        for number, name in enumerate(names):
            shutil.copy(wavs[number % len(wavs)], root / speaker / f"{name}.wav")
            (root / speaker / f"{name}.txt").write_text(f"Clip {name} of {speaker or 'mine'}.\n", encoding="utf-8")


def test_a_folder_of_clips_beside_their_transcripts_is_one_voice_or_a_voice_a_folder(tmp_path, monkeypatch):
    from xtts_cli.data import scan_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    mine = tmp_path / "my-voice"
    _clips_beside_transcripts(mine, {"": ["a", "b", "c"]})
    (mine / "c.txt").rename(mine / "c.lab")  # Montreal Forced Aligner's name for it
    (mine / "b.txt").rename(mine / "b.TXT")  # as some tools write the extension
    shutil.copy(mine / "a.wav", mine / "no-words.wav")
    (mine / "README.txt").write_text("Recorded at home.", encoding="utf-8")  # a text with no clip: not one
    report = scan_dataset(data(mine))
    assert report.format == "folder" and report.speakers == {"my-voice": 3}
    assert {(item.path, item.reason) for item in report.bad} == {("no-words.wav", "missing_transcript")}
    texts = {item.id: (item.training_text, item.source) for item in report.items}
    assert texts == {
        "a": ("Clip a of mine.", "a.txt"),
        "b": ("Clip b of mine.", "b.TXT"),
        "c": ("Clip c of mine.", "c.lab"),
    }
    # A folder per speaker; a name may repeat between them, and clips left in the root are the root's voice.
    voices = tmp_path / "voices"
    _clips_beside_transcripts(voices, {"alice": ["001", "002"], "bob": ["001"], "": ["extra"]})
    report = scan_dataset(data(voices, dataset_format="folder"))
    assert report.speakers == {"alice": 2, "bob": 1, "voices": 1} and not report.bad
    assert sorted(item.id for item in report.items) == ["alice/001", "alice/002", "bob/001", "extra"]
    # A second scan is the memo's, the feature store made in the root (hidden) changes nothing, and a
    # clip added to the root is found.
    read = []
    real = scan_cache.read_audio_header
    monkeypatch.setattr(scan_cache, "read_audio_header", lambda path, **look: read.append(path) or real(path, **look))
    (voices / ".xtts_features").mkdir()
    assert scan_dataset(data(voices)).model_dump() == report.model_dump() and read == []
    _clips_beside_transcripts(voices, {"": ["later"]})
    assert scan_dataset(data(voices)).speakers == {"alice": 2, "bob": 1, "voices": 2}
    # A folder with audio but no transcript beside any clip is no layout; named, it says what it lacks.
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(mine / "a.wav", bare / "a.wav")
    with pytest.raises(XttsError, match="no known dataset layout"):
        scan_dataset(data(bare))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(XttsError, match="holds no audio in it or one folder below"):
        scan_dataset(data(empty, dataset_format="folder"))


def test_a_pipe_inside_a_three_column_ljspeech_line_is_split_where_there_is_no_doubt_or_named():
    from xtts_cli.data.layouts import _ljspeech_entries

    lines = [
        "a|One.|one.",
        "b|This text | has a pipe|This text | has a pipe",  # both columns hold it: the middle |
        "c|Press A | B to start.|",  # nothing after the last |
        "d|This text | has a pipe|has a pipe",  # the normalized text once was cut to this
    ]
    entries = {entry.source: entry for entry in _ljspeech_entries(Path("metadata.csv"), lines)}
    assert (entries["metadata.csv:2"].text, entries["metadata.csv:2"].normalized_text) == (
        "This text | has a pipe",
        "This text | has a pipe",
    )
    assert (entries["metadata.csv:3"].text, entries["metadata.csv:3"].normalized_text) == (
        "Press A | B to start.",
        None,
    )
    assert entries["metadata.csv:4"].malformed.startswith("a | inside the text of an `id|text|normalized_text` line")
    # A row a spreadsheet split by tabs: the usual cause is said, with its fix (it had been the general form).
    rows = {entry.source: entry for entry in _ljspeech_entries(Path("metadata.csv"), ["a|One.|one.", "b\tTwo.\ttwo."])}
    assert rows["metadata.csv:2"].malformed.endswith("its columns are split by tabs; split them by `|`")
    assert "tabs" not in next(_ljspeech_entries(Path("metadata.csv"), ["a one"])).malformed


def test_a_file_of_id_text_lines_reads_the_normalized_text_of_a_line_that_has_it(tmp_path):
    # Most lines `id|text`, some `id|text|normalized_text` (a file put together from two sources):
    # "The cat sat.|The cat sat." had trained as one transcript, its `|` a symbol of the vocabulary.
    folder, clips = _voice(tmp_path)
    for copy in range(8):  # most lines `id|text`: more clips than the four
        shutil.copy(folder / "wavs" / clips[copy % len(clips)], folder / "wavs" / f"more{copy}.wav")
    stems = [name[:-4] for name in clips] + [f"more{copy}" for copy in range(8)]
    lines = [
        f"{stems[0]}|The cat sat.|The cat sat.",
        f"{stems[1]}|I have 2 cats.|I have two cats.",  # its normalized text, numbers read out
        f"{stems[2]}|Bring | the map. | Bring | the map.",  # spaced: the transcript's own (a lyric's line break)
        f"{stems[3]}|Green trees grow.|",  # nothing after the last |
        f"{stems[4]}|A red boat.|A red boat.|take two",  # a cell too many: named, not guessed
        *(f"{stem}|Plain text {n}." for n, stem in enumerate(stems[5:])),
    ]
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = scan_dataset(data(folder, eval_fraction=0.0))
    read = {item.id: (item.text, item.training_text) for item in report.train}
    assert read[stems[0]] == ("The cat sat.", "The cat sat.")
    assert read[stems[1]] == ("I have 2 cats.", "I have two cats.")
    assert read[stems[2]] == ("Bring | the map. | Bring | the map.",) * 2
    assert read[stems[3]] == ("Green trees grow.", "Green trees grow.")
    assert [(bad.reason, bad.detail) for bad in report.bad] == [
        (
            "malformed_line",
            "several | with no space around them in a line of a file whose lines are `id|text`: which is the text "
            "is unclear; keep one, to end the text before its normalized text, or none",
        )
    ]


def test_a_nemo_line_whose_text_is_null_or_a_list_is_bad_not_the_word_none(tmp_path):
    shutil.copytree(CORPORA / "nemo", tmp_path / "nemo")
    manifest = tmp_path / "nemo" / "train_manifest.json"
    lines = manifest.read_text(encoding="utf-8").splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    first["text"], second["text"] = None, ["green", "trees"]
    lines[:2] = [json.dumps(first), json.dumps(second)]
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = scan_dataset(data(tmp_path / "nemo"))
    assert all(item.text != "None" for item in report.items)
    reasons = {b.source: b.reason for b in report.bad}
    assert reasons["train_manifest.json:2"] == "malformed_line"
    assert reasons["train_manifest.json:1"] == "empty_text"  # as an empty string is


def test_clips_in_folders_below_the_speakers_folders_are_counted_or_hinted_not_dropped_silently(tmp_path):
    source = sorted((CORPORA / "ljspeech2" / "wavs").glob("*.wav"))[:3]
    root = tmp_path / "voices"
    for index, clip in enumerate(source):
        session = root / "ann" / "session1"
        session.mkdir(parents=True, exist_ok=True)
        shutil.copy(clip, session / f"c{index}.wav")
        (session / f"c{index}.txt").write_text("A clip two folders down.\n", encoding="utf-8")
    with pytest.raises(XttsError) as error:  # nothing the folder layout reads: where the clips are
        scan_dataset(data(root))
    assert error.value.hint.startswith("clips with transcripts lie deeper (ann/session1/c0.wav)")
    shutil.copy(source[0], root / "ann" / "top.wav")
    (root / "ann" / "top.txt").write_text("A clip in its speaker's folder.\n", encoding="utf-8")
    report = scan_dataset(data(root, eval_fraction=0.0))
    (dataset,) = report.datasets
    assert report.format == "folder" and len(report.items) == 1
    assert (dataset.unlisted_audio, dataset.unlisted_example) == (3, "ann/session1/c0.wav")


def test_a_second_recording_of_a_clips_name_in_the_folder_layout_is_named_not_passed_over(tmp_path):
    from xtts_cli.cli.output import dataset_notes

    folder, clips = _voice(tmp_path)
    voice = folder / "wavs"
    for name in clips:
        (voice / name).with_suffix(".txt").write_text(f"Clip {name}.", encoding="utf-8")
    twin = (voice / clips[0]).with_suffix(".flac")
    shutil.copy(next((CORPORA / "vctk").rglob("*.flac")), twin)
    (report,) = scan_dataset(data(voice, eval_fraction=0.0)).datasets
    assert report.format == "folder" and report.train_items == len(clips) and report.bad_items == 0
    assert (report.same_name_audio, report.same_name_example) == (1, twin.name)
    assert dataset_notes(report) == [
        f"1 audio file shares its name and transcript with a clip beside it (e.g. {twin.name}): not trained, the "
        "other is; keep one recording of each, or rename the other and give it its own transcript"
    ]


def test_a_metadata_file_with_classic_mac_line_ends_reads_line_by_line(tmp_path):
    root = tmp_path / "mac"
    shutil.copytree(CORPORA / "ljspeech2", root)
    metadata = root / "metadata.csv"
    lines = metadata.read_text(encoding="utf-8").splitlines()
    metadata.write_bytes("\r".join(lines).encode("utf-8") + b"\r")  # a spreadsheet's "CSV (Macintosh)"
    report = scan_dataset(data(root, eval_fraction=0.0))
    assert report.bad == [] and len(report.items) == len(lines)


def test_a_transcript_of_punctuation_alone_is_bad_not_trained(tmp_path):
    root = tmp_path / "dots"
    shutil.copytree(CORPORA / "ljspeech2", root)
    metadata = root / "metadata.csv"
    lines = metadata.read_text(encoding="utf-8").splitlines()
    first = lines[0].split("|")[0]
    second = lines[1].split("|")[0]
    metadata.write_text("\n".join([f"{first}|...", f"{second}|\U0001f600!", *lines[2:]]) + "\n", encoding="utf-8")
    report = scan_dataset(data(root, eval_fraction=0.0, max_bad_file_fraction=0.5))
    assert [(bad.reason, bad.detail) for bad in report.bad] == [
        ("empty_text", "transcript '...' holds no word, only punctuation"),
        ("empty_text", "transcript '\U0001f600!' holds no word, only symbols (an emoji) and punctuation"),
    ]
    assert len(report.items) == len(lines) - 2


def test_a_corpus_one_folder_down_or_a_metadata_file_named_otherwise_is_pointed_at(tmp_path):
    # LJSpeech's archive unpacks into LJSpeech-1.1/; a metadata file is often train.csv. Both got the
    # generic list of every layout looked for.
    from xtts_cli.data.scan import BUNDLED_SAMPLE

    nested = tmp_path / "nested"
    shutil.copytree(BUNDLED_SAMPLE, nested / "LJSpeech-1.1")
    with pytest.raises(XttsError) as down:
        scan_dataset(data(nested))
    assert down.value.lines[0].endswith("LJSpeech-1.1/metadata.csv is one folder down")
    assert down.value.hint == f"point the dataset path at {nested / 'LJSpeech-1.1'} (--data {nested / 'LJSpeech-1.1'})"
    # One folder up: its wavs/ given for the corpus, and a VCTK's txt/.
    for corpus, inner, layout in ((nested / "LJSpeech-1.1", "wavs", "ljspeech"), (CORPORA / "vctk", "txt", "vctk")):
        with pytest.raises(XttsError) as up:
            scan_dataset(data(corpus / inner))
        assert up.value.lines[0].endswith(f"it is the {inner}/ folder of the {layout} corpus in {corpus}")
        assert up.value.hint == f"point the dataset path at {corpus} (--data {corpus})"
    renamed = tmp_path / "renamed"
    shutil.copytree(BUNDLED_SAMPLE, renamed)
    (renamed / "metadata.csv").rename(renamed / "train.csv")
    with pytest.raises(XttsError) as named:
        scan_dataset(data(renamed))
    assert named.value.lines[0].endswith("no metadata.csv, but train.csv beside wavs/")
    assert named.value.hint == "if it lists the clips, set data.metadata_train_file: train.csv"
    assert len(scan_dataset(data(renamed, metadata_train_file="train.csv")).items) == 40  # the fix it gives works


def test_a_dataset_whose_bad_share_passes_the_limit_is_named_though_the_others_are_clean():
    from xtts_cli.data.scan import DatasetScanError

    broken = Path(__file__).parent / "data" / "dataset"  # 9 of its 29 items bad
    sample = Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample"
    datasets = [{"path": str(sample)}, {"path": str(broken), "weight": 2.0}]
    # Over every dataset, 9 of 69 (13 %); its own share is 31 %, which the clean one's clips hid: under a
    # limit of 20 % it had trained, each of its good clips twice an epoch.
    with pytest.raises(DatasetScanError) as caught:
        scan_dataset(DataConfig(datasets=datasets, max_bad_file_fraction=0.2))
    assert str(caught.value).startswith(
        f"dataset dataset ({broken}): 9 of 29 of its items are bad (31.0%), above data.max_bad_file_fraction (20.0%): "
    )
    assert len(scan_dataset(DataConfig(datasets=datasets, max_bad_file_fraction=0.35)).datasets) == 2


def test_nemo_train_validation_and_test_manifests_in_one_folder_say_which_is_read(tmp_path):
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.diagnosis.config_rules import check_config

    folder = tmp_path / "nemo"
    shutil.copytree(CORPORA / "nemo", folder)
    lines = (folder / "train_manifest.json").read_text(encoding="utf-8").splitlines()
    (folder / "val_manifest.json").write_text(lines[0] + "\n", encoding="utf-8")
    (folder / "test_manifest.json").write_text(lines[-1] + "\n", encoding="utf-8")

    def found(*sets):
        loaded = resolve_config(None, sets=[f"data.dataset_path={folder}", *sets])
        return [f for f in check_config(loaded, probe_machine()) if f.id == "dataset-manifests-unread"]

    (unread,) = found()
    assert unread.severity == "warning"
    assert "training reads train_manifest.json; test_manifest.json and val_manifest.json are not read" in unread.message
    assert unread.message.endswith("set data.metadata_eval_file: val_manifest.json to validate on its clips")
    # Naming the validation manifest, or the one to train on, says which is read: nothing to tell.
    assert found("data.metadata_eval_file=val_manifest.json") == []
    assert found("data.metadata_train_file=train_manifest.json") == []
    # Validation from elsewhere, or none: nothing is split off the training manifest.
    assert found("data.eval_fraction=0") == [] and found(f"data.eval_dataset_path={CORPORA / 'coqui'}") == []
    # One dataset listed in data.datasets is that one dataset; of two, data.metadata_eval_file would name both.
    listed = f"data.datasets=[{{path: {folder}}}]"
    (one,) = [f for f in check_config(resolve_config(None, sets=[listed]), probe_machine()) if f.id == unread.id]
    assert one.message == unread.message
    listed = f"data.datasets=[{{path: {folder}}}, {{path: {CORPORA / 'coqui'}}}]"
    assert unread.id not in [f.id for f in check_config(resolve_config(None, sets=[listed]), probe_machine())]
    assert scan_dataset(data(folder, metadata_eval_file="val_manifest.json")).format == "nemo"
