"""Every bad file is a line of the scan's report, never a traceback or a hang: headers cut short in
any format, a file the user cannot read, a FIFO among the clips, float samples that are NaN."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest
from training_support import subprocess_env

from xtts_cli.cli.app import app

SAMPLE = Path(__file__).resolve().parents[2] / "xtts_cli" / "data" / "sample"


def as_a_user(command: list[str]) -> list[str]:
    """`command` without root's power to read and write past a file's mode (as root, chmod stops nothing):
    util-linux's setpriv drops those capabilities; skipped where it is missing."""
    if os.geteuid() != 0:
        return command
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without util-linux's setpriv to drop the capabilities")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]


def dataset(root: Path, extra: dict[str, bytes | None]) -> Path:
    """Three good clips of the bundled sample, and `extra` files (None: made by the test) listed too."""
    (root / "wavs").mkdir(parents=True)
    lines = []
    for line in (SAMPLE / "metadata.csv").read_text(encoding="utf-8").splitlines()[:3]:
        clip = line.split("|")[0]
        shutil.copy(SAMPLE / "wavs" / f"{clip}.wav", root / "wavs" / f"{clip}.wav")
        lines.append(line)
    for name, content in extra.items():
        if content is not None:
            (root / "wavs" / f"{name}.wav").write_bytes(content)
        lines.append(f"{name}|A sentence of this clip.|A sentence of this clip.")
    (root / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def float_wav(samples: np.ndarray, rate: int = 22050) -> bytes:
    data = samples.astype("<f4").tobytes()
    fmt = (3).to_bytes(2, "little") + (1).to_bytes(2, "little") + rate.to_bytes(4, "little")
    fmt += (rate * 4).to_bytes(4, "little") + (4).to_bytes(2, "little") + (32).to_bytes(2, "little")
    body = b"WAVE" + b"fmt " + len(fmt).to_bytes(4, "little") + fmt + b"data" + len(data).to_bytes(4, "little") + data
    return b"RIFF" + len(body).to_bytes(4, "little") + body


def bad_files(runner, root: Path) -> dict[str, tuple[str, str]]:
    result = runner.invoke(app, ["validate", "--data", str(root), "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    report = json.loads(result.stdout)
    return {Path(b["path"]).stem: (b["reason"], b["detail"]) for b in report["dataset"]["bad_files"]}


def test_headers_cut_short_in_every_format_are_one_line_each(runner, tmp_path):
    with wave.open(str(tmp_path / "good.wav"), "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(22050)
        handle.writeframes(b"\0\0" * 22050)
    whole = (tmp_path / "good.wav").read_bytes()
    extra = {
        "ogg20": b"OggS" + b"\0" * 16,  # a 20-byte Ogg: the header reader ran off its end
        "id3short": b"ID3\x03\x00",  # an ID3 tag cut inside its own header
        "flac9": b"fLaC\0\0\0\x22\0",
        "mp3sync": b"\xff\xfb\x90",
    }
    extra.update({f"wav{n}": whole[:n] for n in (13, 30, 40, 44)})
    found = bad_files(runner, dataset(tmp_path / "data", extra))
    assert set(found) == set(extra), found
    assert all(reason in {"truncated", "not_audio", "header_only"} for reason, _ in found.values()), found


@pytest.mark.slow  # a process of its own: the fast tier reads the damaged files in-process
def test_a_fifo_among_the_clips_is_skipped_unread(tmp_path):
    root = dataset(tmp_path / "data", {"pipe": None})
    os.mkfifo(root / "wavs" / "pipe.wav")
    # In a process of its own: a scan that opened the FIFO would block there until the timeout.
    done = subprocess.run(
        [sys.executable, "-m", "xtts_cli", "validate", "--data", str(root), "--json"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
    )
    report = json.loads(done.stdout)
    [bad] = report["dataset"]["bad_files"]
    assert bad["reason"] == "not_audio" and bad["detail"] == "a FIFO, not a file: not read"


def test_nan_or_infinite_float_samples_are_reported_not_trained(runner, tmp_path):
    clean = np.sin(np.linspace(0, 2000, 22050)).astype(np.float32) * 0.1
    poisoned = clean.copy()
    poisoned[[10, 500, 9000]] = [np.nan, np.inf, -np.inf]
    found = bad_files(runner, dataset(tmp_path / "data", {"clean": float_wav(clean), "nan": float_wav(poisoned)}))
    assert found == {"nan": ("bad_samples", "3 of its 22,050 float samples are NaN or infinite")}


def validated_as_a_user(root: Path) -> dict:
    """`xtts validate --data ROOT --json`'s dataset report, run as a user who cannot read what its
    mode denies: root reads every file whatever its mode through two capabilities, dropped here."""
    command = [sys.executable, "-m", "xtts_cli", "validate", "--data", str(root), "--json"]
    command = as_a_user(command)
    done = subprocess.run(command, capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)["dataset"]


@pytest.mark.slow  # a process of its own: the fast tier reads the damaged files in-process
def test_a_folder_the_user_cannot_list_beside_clips_is_passed_over(tmp_path):
    # A mounted disk's lost+found, not the user's to list, beside a folder of one's own clips and transcripts.
    root = tmp_path / "my-voice"
    root.mkdir()
    for number, wav in enumerate(sorted((SAMPLE / "wavs").glob("*.wav"))[:3]):
        shutil.copy(wav, root / f"{number}.wav")
        (root / f"{number}.txt").write_text("A clip of mine.", encoding="utf-8")
    (root / "lost+found").mkdir()
    os.chmod(root / "lost+found", 0)  # no one's to list but with a capability this test's process drops
    report = validated_as_a_user(root)
    assert report["format"] == "folder" and report["speakers"] == 1 and not report["bad_files"]
    assert report["train_items"] + report["eval_items"] == 3


@pytest.mark.slow  # a process of its own as another user: the fast tier reads the damaged files in-process
def test_a_file_the_user_cannot_read_is_one_line(tmp_path):
    root = dataset(tmp_path / "data", {"locked": b"RIFF" + b"\0" * 40})
    os.chmod(root / "wavs" / "locked.wav", 0)
    [bad] = validated_as_a_user(root)["bad_files"]
    assert (bad["reason"], bad["detail"]) == ("unreadable", "cannot read the file: permission denied")


def test_a_line_or_a_transcript_in_another_encoding_is_one_bad_item_named_by_its_line(runner, tmp_path):
    root = dataset(tmp_path / "data", {})
    # One row pasted from a spreadsheet saved in Windows-1252 among the UTF-8 ones.
    first = (SAMPLE / "metadata.csv").read_text(encoding="utf-8").splitlines()[3]
    clip = first.split("|")[0]
    shutil.copy(SAMPLE / "wavs" / f"{clip}.wav", root / "wavs" / f"{clip}.wav")
    pasted = f"{clip}|A caf\u00e9 \u201cna\u00efve\u201d.|A caf\u00e9 \u201cna\u00efve\u201d.\n".encode("cp1252")
    (root / "metadata.csv").write_bytes((root / "metadata.csv").read_bytes() + pasted)
    result = runner.invoke(app, ["validate", "--data", str(root), "--json", "--set", "data.max_bad_file_fraction=0.5"])
    report = json.loads(result.stdout)["dataset"]
    assert [(b["source"], b["reason"]) for b in report["bad_files"]] == [("metadata.csv:4", "not_utf8")]
    assert report["bad_files"][0]["detail"].startswith(
        "not UTF-8 text (saved in another encoding, such as Windows-1252)"
    )
    assert report["train_items"] + report["eval_items"] == 3  # the three good rows train
    # A clip's own transcript in the folder layout.
    folder = tmp_path / "folder" / "Zo\u00eb"
    folder.mkdir(parents=True)
    for index, line in enumerate((SAMPLE / "metadata.csv").read_text(encoding="utf-8").splitlines()[:3]):
        name, text = line.split("|")[:2]
        shutil.copy(SAMPLE / "wavs" / f"{name}.wav", folder / f"{index}.wav")
        (folder / f"{index}.txt").write_bytes(f"{text} \u201cquoted\u201d".encode("utf-8" if index else "cp1252"))
    result = runner.invoke(
        app, ["validate", "--data", str(folder.parent), "--json", "--set", "data.max_bad_file_fraction=0.5"]
    )
    bad = json.loads(result.stdout)["dataset"]["bad_files"]
    assert [(Path(b["source"]).name, b["reason"]) for b in bad] == [("0.txt", "not_utf8")], bad
    assert bad[0]["detail"].startswith("the transcript is not UTF-8 text")


def test_a_streamed_wav_is_read_to_its_end_and_a_telephone_codec_is_named(runner, tmp_path):
    from xtts_cli.data.audio_headers import read_audio_header
    from xtts_cli.serving.service import streaming_wav_header

    # What a pipe gets from `xtts serve`'s stream=1 (or ffmpeg): sizes of 0xFFFFFFFF, "to the end".
    with wave.open(str(SAMPLE / "wavs" / "XTTS001-0001.wav")) as handle:
        rate, frames = handle.getframerate(), handle.readframes(handle.getnframes())
    streamed = tmp_path / "streamed.wav"
    streamed.write_bytes(streaming_wav_header(rate) + frames + b"\0")  # and half a sample, cut off
    header = read_audio_header(str(streamed))
    assert (header.codec, header.sample_rate, header.num_samples) == ("wav_pcm16", rate, len(frames) // 2)
    # A mu-law WAV (telephone corpora) is named as such, with the conversion that reads it.
    mulaw = tmp_path / "mulaw.wav"
    subprocess.run(["sox", str(SAMPLE / "wavs" / "XTTS001-0001.wav"), "-e", "u-law", str(mulaw)], check=True)
    # So is a 4-bit IMA ADPCM one, whose blocks hold many samples: no inconsistent header.
    adpcm = tmp_path / "adpcm.wav"
    subprocess.run(["sox", str(SAMPLE / "wavs" / "XTTS001-0001.wav"), "-e", "ima-adpcm", str(adpcm)], check=True)
    clips = {"mulaw": mulaw.read_bytes(), "adpcm": adpcm.read_bytes(), "streamed": streamed.read_bytes()}
    found = bad_files(runner, dataset(tmp_path / "data", clips))
    convert = "is not supported; convert to 16-bit PCM (sox in.wav -b 16 -e signed-integer out.wav)"
    assert found == {
        "mulaw": ("unsupported_format", f"WAV \u00b5-law 8-bit {convert}"),
        "adpcm": ("unsupported_format", f"WAV IMA ADPCM 4-bit {convert}"),
    }


def test_audio_beside_the_clips_that_no_row_names_is_counted_and_one_named(runner, tmp_path):
    root = dataset(tmp_path / "data", {})
    shutil.copy(SAMPLE / "wavs" / "XTTS001-0001.wav", root / "wavs" / "lost row.wav")
    shutil.copy(SAMPLE / "wavs" / "XTTS001-0001.wav", root / "wavs" / "another.FLAC")  # any extension's case
    (root / "wavs" / "notes.txt").write_text("not audio", encoding="utf-8")
    result = runner.invoke(app, ["validate", "--data", str(root), "--json"])
    report = json.loads(result.stdout)["dataset"]["datasets"][0]
    assert (report["unlisted_audio"], report["unlisted_example"]) == (2, "wavs/another.FLAC")
    said = runner.invoke(app, ["validate", "--data", str(root)])
    assert (
        "note: 2 audio files beside the clips metadata.csv lists, or beside the list, are in no row (e.g. wavs/another.FLAC)"
        in (said.stdout)
    )


def test_audio_a_layout_leaves_untrained_is_a_warning_once_it_is_a_tenth_of_the_dataset(runner, tmp_path):
    # A speaker's sessions in folders below its folder: half a corpus and a whole voice had gone with a note.
    root = tmp_path / "deep"
    for speaker, session in (("alice", "s1"), ("alice", "s2"), ("bob", "")):
        folder = root / speaker / session
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(3):
            shutil.copy(SAMPLE / "wavs" / f"XTTS001-000{n + 1}.wav", folder / f"c{n}.wav")
            (folder / f"c{n}.txt").write_text("The cat sat down.", encoding="utf-8")
    result = runner.invoke(app, ["validate", "--data", str(root), "--json"])
    found = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    assert found["dataset-untrained-audio"]["severity"] == "warning"
    assert found["dataset-untrained-audio"]["message"].startswith(
        "dataset deep: 6 audio files in folders below the speakers' folders (e.g. alice/s1/c0.wav), 67% of its audio"
    )
    # One stray clip beside ten listed ones stays the data report's note.
    listed = tmp_path / "data"
    (listed / "wavs").mkdir(parents=True)
    for n in range(11):
        shutil.copy(SAMPLE / "wavs" / "XTTS001-0001.wav", listed / "wavs" / f"c{n}.wav")
    (listed / "metadata.csv").write_text("".join(f"c{n}|The cat sat down.\n" for n in range(10)), encoding="utf-8")
    result = runner.invoke(app, ["validate", "--data", str(listed), "--json"])
    assert "dataset-untrained-audio" not in {f["id"] for f in json.loads(result.stdout)["findings"]}


def test_clips_beside_an_ljspeech_list_not_in_its_wavs_folder_are_named_there_once(tmp_path):
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data.scan import DatasetScanError, scan_dataset

    root = tmp_path / "flat"
    root.mkdir()
    for n in range(1, 4):
        shutil.copy(SAMPLE / "wavs" / f"XTTS001-000{n}.wav", root / f"f{n}.wav")
    (root / "metadata.csv").write_text("f1|One.\nf2|Two.\nf3|Three.\n", encoding="utf-8")
    with pytest.raises(DatasetScanError) as caught:
        scan_dataset(XttsConfig(data={"dataset_path": str(root)}).data)
    report = caught.value.report
    assert {bad.detail for bad in report.bad} == {
        f"file not found, but f{n}.wav is there, beside the metadata: LJSpeech keeps its clips in wavs/ (move them there)"
        for n in range(1, 4)
    }
    assert report.datasets[0].unlisted_audio == 0  # each said once, by its row


def test_clips_a_speakers_file_leaves_out_are_named_with_the_voice_they_train_as(runner, tmp_path):
    root = dataset(tmp_path / "data", {})
    (root / "speakers.csv").write_text("XTTS001-0001|ann\nXTTS001-0002|bob\n", encoding="utf-8")
    said = runner.invoke(app, ["validate", "--data", str(root)])
    assert (
        "note: 1 clip speakers.csv leaves out (e.g. XTTS001-0003) train as speaker data; add them to "
        "speakers.csv to name their voice" in " ".join(said.stdout.split())
    )


def test_a_clip_a_malformed_line_names_is_bad_for_its_line_not_also_unlisted_audio(runner, tmp_path):
    root = dataset(tmp_path / "data", {})
    lines = (root / "metadata.csv").read_text(encoding="utf-8").splitlines()
    lines[1] = "XTTS001-0002|A | B | C | D"  # which | ends the text is unclear
    lines[2] = "XTTS001-0003"  # an id without its text
    lines.append("XTTS001-0004\tSplit by a tab.")  # a spreadsheet's row
    shutil.copy(SAMPLE / "wavs" / "XTTS001-0004.wav", root / "wavs" / "XTTS001-0004.wav")
    (root / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", "--data", str(root), "--json"])
    report = json.loads(result.stdout)["dataset"]
    assert report["datasets"][0]["unlisted_audio"] == 0
    assert [(bad["source"], bad["reason"]) for bad in report["bad_files"]] == [
        ("metadata.csv:2", "malformed_line"),
        ("metadata.csv:3", "malformed_line"),
        ("metadata.csv:4", "malformed_line"),
    ]
    said = runner.invoke(app, ["validate", "--data", str(root)])
    assert "bad metadata.csv:2: malformed_line" in said.stdout and "in no row" not in said.stdout


def test_a_folder_the_user_may_not_write_in_names_its_mode_as_the_fix(tmp_path):
    # A run made read-only (chmod -R a-w) had been told to move to a folder one can write to.
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o555)
    command = [sys.executable, "-m", "xtts_cli", "init", "-p", "tiny-cpu", "-o", str(locked / "my.yaml")]
    command = as_a_user(command)
    done = subprocess.run(command, capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert done.returncode == 1 and done.stderr.splitlines()[-2:] == [
        f"error: --out {locked / 'my.yaml'}: nothing can be written in {locked} (Permission denied)",
        f"hint: make it writable (chmod u+w {locked}), or put the file in a folder you can write to",
    ], done.stderr


@pytest.mark.slow  # a process of its own: the fast tier reads the damaged files in-process
def test_a_precompute_store_the_user_may_not_write_is_a_validate_error(tmp_path):
    # train had found it only after its set-up ("cannot create the feature store"); validate said valid.
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o555)
    sets = ["--set", "data.preprocessing_mode=precompute", "--set", f"data.feature_cache_dir={locked / 'store'}"]
    command = [sys.executable, "-m", "xtts_cli", "validate", "-c", "tiny-cpu", *sets, "--json"]
    command = as_a_user(command)
    env = {**subprocess_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    found = {f["id"]: f for f in json.loads(done.stdout)["findings"]}
    assert done.returncode == 1 and found["feature-store-unwritable"]["severity"] == "error", done.stdout
    assert "set data.feature_cache_dir to a folder you can write" in found["feature-store-unwritable"]["message"]


@pytest.mark.slow  # a training start builds the store first
def test_a_complete_precompute_store_the_user_may_not_write_is_only_read(tmp_path):
    # train read a complete store on a read-only disk and trained; validate had refused it as unwritable.
    store = tmp_path / "store"
    sets = ["--set", "data.preprocessing_mode=precompute", "--set", f"data.feature_cache_dir={store}"]
    env = {**subprocess_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    xtts = [sys.executable, "-m", "xtts_cli"]
    built = subprocess.run(
        [*xtts, "train", "-c", "tiny-cpu", *sets, "-r", str(tmp_path / "run"), "--steps", "1"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    for folder in [store, *store.rglob("*")]:
        os.chmod(folder, 0o555 if folder.is_dir() else 0o444)
    command = [*xtts, "validate", "-c", "tiny-cpu", *sets, "--json"]
    command = as_a_user(command)
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    said = [f for f in json.loads(done.stdout)["findings"] if f["severity"] != "info"]
    assert done.returncode == 0 and "feature-store" not in done.stdout, said


@pytest.mark.slow  # two profiles
def test_a_complete_store_in_a_dataset_the_user_may_not_write_is_read_not_computed_again(tmp_path):
    # It had been computed again into the user's cache: a second pass and a second copy at size.
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    profile = [sys.executable, "-m", "xtts_cli", "profile-pipeline", "-c", "tiny-cpu", "--data", str(data)]
    profile += ["--set", "data.preprocessing_mode=precompute", "--batches", "2", "--no-stages"]
    env = {**subprocess_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    built = subprocess.run(profile, capture_output=True, text=True, env=env, timeout=300)
    assert built.returncode == 0 and "precompute: computing the features" in built.stderr, built.stderr[-2000:]
    os.chmod(data, 0o555)
    profile = as_a_user(profile)
    done = subprocess.run(profile, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and "computing the features" not in done.stderr, done.stderr[-2000:]
    assert f"precompute: reading the complete feature store in the read-only dataset, {data}/.xtts_features/" in (
        " ".join(done.stderr.split())
    )


def test_a_wav_short_by_a_sample_is_read_and_one_cut_short_or_of_a_variant_not_read_says_what_to_do(runner, tmp_path):
    """A copy that lost its last bytes is no lost word (it had been refused whole); one cut by a second
    names the repair, and RF64 (past 4 GB) and big-endian RIFX are named as such, not unknown bytes."""
    import soundfile

    from xtts_cli.data.audio_headers import read_audio_header

    whole = (SAMPLE / "wavs" / "XTTS001-0001.wav").read_bytes()
    samples, rate = soundfile.read(str(SAMPLE / "wavs" / "XTTS001-0001.wav"), dtype="int16")
    soundfile.write(str(tmp_path / "rf64.wav"), samples, rate, format="RF64", subtype="PCM_16")
    soundfile.write(str(tmp_path / "rifx.wav"), samples, rate, format="WAV", subtype="PCM_16", endian="BIG")
    (tmp_path / "short.wav").write_bytes(whole[:-3])  # a sample and a half gone
    header = read_audio_header(str(tmp_path / "short.wav"))
    assert header.num_samples == len(samples) - 2
    clips = {
        "short": whole[:-3],
        "cut": whole[: -2 * rate],
        "rf64": (tmp_path / "rf64.wav").read_bytes(),
        "rifx": (tmp_path / "rifx.wav").read_bytes(),
        # A header that says 1 Hz: resampled from, a few samples had taken 13 s (and a served clone's slot).
        "rate1": whole[:24] + (1).to_bytes(4, "little") + (2).to_bytes(4, "little") + whole[32:],
    }
    found = bad_files(runner, dataset(tmp_path / "data", clips))
    assert found == {
        "cut": (
            "truncated",
            f"WAV header declares {2 * len(samples)} bytes of audio but the file holds {2 * len(samples) - 2 * rate} "
            "(cut short in a copy or a download): copy it again, or keep what is there with sox --ignore-length "
            "in.wav out.wav",
        ),
        "rf64": (
            "unsupported_format",
            "RF64 WAV (the format of a recording past 4 GB) is not read; convert it to FLAC or WAV (e.g. sox IN OUT.flac)",
        ),
        "rifx": (
            "unsupported_format",
            "big-endian WAV (RIFX) is not read; convert it to FLAC or WAV (e.g. sox IN OUT.flac)",
        ),
        "rate1": (
            "unsupported_format",
            "its header says 1 Hz, below the 4000 Hz any voice needs (a header written wrong?); convert it at its "
            "true rate (sox -r RATE IN -r 22050 OUT.wav)",
        ),
    }


@pytest.mark.slow  # a training, its store cut short under it
def test_a_feature_store_cut_short_mid_run_keeps_the_trained_step_and_is_one_line(tmp_path):
    """The real fault: the store's shards truncated while training streams them. The run ended in
    TensorFlow's DataLossError traceback, and had saved none of the steps it trained."""
    from training_support import start_xtts, wait_for_records

    store, run = tmp_path / "store", tmp_path / "run"
    sets = ["--set", "data.preprocessing_mode=precompute", "--set", f"data.feature_cache_dir={store}"]
    sets += ["--set", "data.cache_memory_limit=1KB", "--set", "training.save_step=100000"]  # streamed from disk
    trainer = start_xtts(["train", "-c", "tiny-cpu", *sets, "-r", str(run), "--steps", "100000"], tmp_path)
    try:
        wait_for_records(trainer, run / "metrics.jsonl", lambda lines: len(lines) >= 2)
        for shard in (p for p in store.rglob("*") if p.is_file() and p.stat().st_size > 1000):
            with open(shard, "r+b") as handle:
                handle.truncate(100)
        out, err = trainer.communicate(timeout=240)
    finally:
        if trainer.poll() is None:
            trainer.kill()
            trainer.communicate()
    assert trainer.returncode == 1, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    failed = [line for line in err.splitlines() if line.startswith("error: reading the training batches failed")]
    assert len(failed) == 1, err[-3000:]
    saved = int(failed[0].split("after step ", 1)[1].split(":", 1)[0])
    assert saved >= 2 and (run / "checkpoints" / f"ckpt-{saved}.index").is_file(), err[-3000:]
