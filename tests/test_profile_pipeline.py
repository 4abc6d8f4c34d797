"""`xtts profile-pipeline` on the real pipeline: real TensorFlow, the bundled sample and the fixture
dataset, tiny batches. Speed is never asserted (benchmarks/data_pipeline.py measures it); the
figures are checked for sense and for the relations that hold whatever the machine's speed."""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from training_support import undocumented_keys

from xtts_cli.cli.app import app, main
from xtts_cli.data.scan import BUNDLED_SAMPLE
from xtts_cli.errors import DiskFullError
from xtts_cli.profiling import pipeline_profiler

DATASET = Path(__file__).parent / "data" / "dataset"
# Small and quick: a batch of 8 gives the bundled sample (39 training clips) 4 batches per epoch.
FAST = ["--batch-size", "8", "--num-batches", "8", "--warmup", "2"]


def run_json(runner, *args: str) -> dict:
    result = runner.invoke(app, ["profile-pipeline", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def check_figures(payload: dict, num_batches: int) -> None:
    assert payload["samples_per_sec"] > 0
    assert payload["audio_seconds_per_sec"] > 0 and payload["mel_frames_per_sec"] > 0
    latency = payload["latency_ms"]
    assert 0 < latency["p50"] <= latency["p95"] <= latency["p99"] <= latency["max"]
    assert latency["count"] == num_batches == len(payload["latency_series_ms"])
    assert payload["cv"] >= 0
    assert set(payload["oscillation"]) >= {"detected", "period_batches", "period_seconds"}
    assert 0 < payload["padding_efficiency"] <= 1
    assert 1 <= payload["distinct_shapes"] <= payload["max_distinct_shapes"]


def test_sample_json_has_every_figure_and_the_stages(runner) -> None:
    payload = run_json(runner, *FAST)
    check_figures(payload, 8)
    assert payload["bad_files"] == []
    # The bundled sample: LJSpeech layout, 40 clips in 4 voices, 1.6 minutes.
    assert payload["dataset"]["format"] == "ljspeech" and payload["dataset"]["items"] == 40
    assert payload["dataset"]["speakers"] == 4 and 0.02 < payload["dataset"]["hours"] < 0.03
    # 93.9 s of audio at 22,050 Hz, hop 256: about 8,100 frames of 80 float32 mels (plus one frame a clip).
    assert 80 * 2 * (93.9 * 22050 / 256) < payload["feature_bytes_estimate"] < 80 * 2 * (94 * 22050 / 256 + 40)
    assert payload["batch_size"] == 8 and payload["preprocessing_mode"] == "cache"
    assert [stage["name"] for stage in payload["stages"]] == ["read", "decode", "features", "batch"]
    previous = 0.0
    for stage in payload["stages"]:
        assert stage["samples_per_sec"] > 0 and stage["samples"] == 8 * 8
        # Incremental costs add up to the last stage's cost per sample.
        previous += stage["incremental_ms_per_sample"]
        assert stage["ms_per_sample"] == pytest.approx(previous)
    assert "baseline" in payload and payload["baseline"] is None
    # Every timed batch in the first epoch: none from memory (it had said "2 of the timed batches ..., the rest").
    one = ["--set", "data.num_buckets=1", "--batch-size", "8", "--warmup", "1", "--no-stages"]
    notes = run_json(runner, *one, "--num-batches", "2")["notes"]
    first = "cache mode: the first epoch (4 batches) computes features and fills the cache (each bucket's shuffle "
    first += "buffer, up to 80 clips, ahead of its first batch); "
    assert first + "every timed batch falls in it (none comes from memory: time more batches to see those)" in notes
    # Every key of docs/json.md, the sweep's null without --benchmark (they were left out).
    assert payload["sweep"] is None and payload["best"] is None and payload["sweep_notes"] is None
    assert payload["stages"][1]["description"] == "+ decode_audio"  # WAV only: core ops


def test_the_decode_row_of_an_mp3_corpus_names_its_decoder(runner) -> None:
    from xtts_cli.data.audio_codecs import compressed_decoder

    corpus = Path(__file__).parent / "data" / "corpora" / "common_voice"
    # One of its rows names a missing clip (tests/data/README.md): allowed, to time the rest.
    args = [
        "--data",
        str(corpus),
        "--set",
        "data.max_bad_file_fraction=0.5",
        "--set",
        "data.preprocessing_mode=runtime",
    ]
    payload = run_json(runner, *args, "--batch-size", "2", "--num-batches", "2", "--warmup", "1")
    decode = payload["stages"][1]
    decoder = "libsndfile" if compressed_decoder() == "soundfile" else "tensorflow-io"
    assert decode["description"] == f"+ decode_audio (mp3 by {decoder})" and decode["samples_per_sec"] > 0


def test_fewer_batches_than_asked_repeats_the_dataset_and_says_so(runner) -> None:
    # Batch 16: the sample gives 2 training batches per epoch, far fewer than 2 + 8.
    payload = run_json(runner, "--batch-size", "16", "--num-batches", "8", "--warmup", "2", "--no-stages")
    check_figures(payload, 8)
    assert payload["repeated"] is True and payload["batches_per_epoch"] < 10
    assert any("repeated" in note for note in payload["notes"])
    assert payload["stages"] == []


@pytest.mark.slow  # a profile of its own
def test_the_warm_up_covers_the_start_of_every_length_bucket(runner, write_config) -> None:
    # Batch 4 and 4 buckets: every bucket of the sample's 39 training clips gives batches, and a
    # training epoch starts each in its first 4 batches (opening its files or filling its buffers).
    config = str(write_config("data:\n  num_buckets: 4\n"))
    result = runner.invoke(
        app,
        [
            "profile-pipeline",
            "-c",
            config,
            "--batch-size",
            "4",
            "--num-batches",
            "4",
            "--warmup",
            "1",
            "--no-stages",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    short = json.loads(result.stdout)
    # The progress line gives the warm-up that will be drawn, known from the plan before the build.
    assert "timing 4 batches of 4 after 4 warm-up batches" in result.stderr
    started = sum(1 for count in short["pipeline"]["bucket_batches"] if count > 0)
    assert started == 4 and sum(short["pipeline"]["bucket_batches"]) == short["batches_per_epoch"]
    assert short["warmup_batches"] == started
    assert any(note.startswith("warm-up extended from 1 to 4 batches") for note in short["notes"])
    check_figures(short, 4)
    # A warm-up longer than the starts is kept as asked, with nothing to say about it.
    long = run_json(runner, "-c", config, "--batch-size", "4", "--num-batches", "4", "--warmup", "6", "--no-stages")
    assert long["warmup_batches"] == 6
    assert not any(note.startswith("warm-up extended") for note in long["notes"])


@pytest.mark.slow
def test_fixture_dataset_lists_bad_files_and_profiles_every_codec(runner, write_config) -> None:
    config = write_config("data:\n  max_bad_file_fraction: 0.6\n  preprocessing_mode: runtime\n")
    payload = run_json(
        runner,
        "-c",
        str(config),
        "--data-path",
        str(DATASET),
        "--batch-size",
        "2",
        "--num-batches",
        "6",
        "--warmup",
        "1",
        "--no-stages",
    )
    check_figures(payload, 6)
    reasons = {bad["reason"] for bad in payload["bad_files"]}
    assert {"empty", "not_audio", "truncated", "header_only", "missing", "too_short", "too_long"} <= reasons
    for bad in payload["bad_files"]:
        assert set(bad) >= {"path", "reason"}
    assert any(bad["path"] == "wavs/garbage.wav" and bad["reason"] == "not_audio" for bad in payload["bad_files"])
    assert payload["dataset_path"] == str(DATASET.resolve())


@pytest.mark.slow  # a second profile: the fast tier keeps the JSON one
def test_bad_files_come_first_in_the_terminal_report(runner, write_config) -> None:
    config = write_config("data:\n  max_bad_file_fraction: 0.6\n  preprocessing_mode: runtime\n")
    result = runner.invoke(
        app,
        [
            "profile-pipeline",
            "-c",
            str(config),
            "--data-path",
            str(DATASET),
            "--batch-size",
            "2",
            "--num-batches",
            "4",
            "--warmup",
            "1",
            "--no-stages",
        ],
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "items skipped by the dataset scan" in out and "wavs/garbage.wav" in out
    assert out.index("items skipped") < out.index("samples/s") < out.index("latency per batch")
    # Progress goes to stderr, never into the report.
    assert "timing" in result.stderr and "timing" not in out


def test_a_corpus_with_many_bad_files_lists_ten_and_counts_the_rest(runner, write_config, tmp_path: Path) -> None:
    # Its 1 % bad was a thousand rows on a large corpus before any figure; ten are listed, as at train's start.
    corpus = tmp_path / "corpus"
    shutil.copytree(BUNDLED_SAMPLE, corpus)
    with (corpus / "metadata.csv").open("a", encoding="utf-8") as rows:
        for number in range(25):
            (corpus / "wavs" / f"empty{number}.wav").write_bytes(b"")
            rows.write(f"empty{number}|Nothing was recorded.|Nothing was recorded.\n")
    config = write_config(f"data:\n  dataset_path: {corpus}\n")
    result = runner.invoke(app, ["profile-pipeline", "-c", str(config), "--num-batches", "2"])
    assert result.exit_code != 0
    assert "25 items skipped by the dataset scan" in result.stderr
    assert result.stderr.count("file is empty (0 bytes)") == 10, result.stderr
    assert "... and 15 more (`xtts validate --json` lists all)" in result.stderr


@pytest.mark.slow
def test_several_datasets_at_several_rates_are_named_in_the_terminal_report(runner, write_config) -> None:
    corpora = DATASET.parent / "corpora"
    vctk, coqui = corpora / "vctk", corpora / "coqui"  # 48 kHz FLAC and 22.05 kHz WAV: one graph, a branch per rate
    config = write_config(
        f"data:\n  max_bad_file_fraction: 0.5\n  preprocessing_mode: runtime\n  datasets:\n"
        f"    - path: {vctk}\n    - path: {coqui}\n"
    )
    args = ["profile-pipeline", "-c", str(config), "--batch-size", "2", "--num-batches", "4", "--warmup", "1"]
    result = runner.invoke(app, [*args, "--no-stages"])
    assert result.exit_code == 0, result.output
    assert f"2 datasets ({vctk}, {coqui}): " in " ".join(result.stdout.split())


@pytest.mark.slow
def test_compare_baseline_measures_the_numpy_function_path_in_the_same_run(runner) -> None:
    payload = run_json(runner, *FAST, "--compare-baseline", "--no-stages")
    baseline = payload["baseline"]
    assert baseline["samples_per_sec"] > 0 and baseline["native_samples_per_sec"] > 0
    assert baseline["speedup"] == pytest.approx(baseline["native_samples_per_sec"] / baseline["samples_per_sec"])
    # Both rows' latencies: the TF-native row's p50 had been left blank.
    assert baseline["native_latency_ms"]["p50"] > 0 and baseline["latency_ms"]["p50"] > 0


@pytest.mark.slow
def test_benchmark_sweep_ranks_cells_and_names_the_best_as_a_config_change(runner, monkeypatch) -> None:
    # The real grid takes about two minutes; two cells run the same code.
    monkeypatch.setattr(pipeline_profiler, "SWEEP_PARALLELISM", (1,))
    monkeypatch.setattr(pipeline_profiler, "SWEEP_PREFETCH", (2,))
    monkeypatch.setattr(pipeline_profiler, "SWEEP_BATCH_SIZES", (8, 16, 64))  # 64: more than the clips
    monkeypatch.setattr(pipeline_profiler, "SWEEP_MODES", ("runtime",))
    monkeypatch.setattr(pipeline_profiler, "SWEEP_SAMPLES", 16)
    monkeypatch.setattr(pipeline_profiler, "SWEEP_MIN_SECONDS", 0.02)
    payload = run_json(runner, *FAST, "--no-stages", "--benchmark")
    cells = payload["sweep"]
    # The two grid cells plus the current settings (auto workers and prefetch, batch 8, auto mode).
    assert len(cells) == 3 and sum(cell["current"] for cell in cells) == 1
    assert any(
        note.startswith("batch size 64 left out: fewer than 2 batches an epoch") for note in payload["sweep_notes"]
    )
    assert undocumented_keys("profile-pipeline", payload) == [], "add them to docs/json.md (their model's Field)"
    rates = [cell["samples_per_sec"] for cell in cells]
    assert rates == sorted(rates, reverse=True) and rates[-1] > 0
    best = payload["best"]
    current = {
        "data.num_workers": "auto",
        "data.prefetch_buffer_size": "auto",
        "data.batch_size": 8,
        "data.preprocessing_mode": "auto",
    }
    assert set(best["change"]) <= set(current)
    recommended = {**current, **best["change"]}
    # The recommendation is one of the measured cells (a cache cell keeps the current num_workers).
    measured = [
        {
            f"data.{key}": cell[key]
            for key in ("num_workers", "prefetch_buffer_size", "batch_size", "preprocessing_mode")
        }
        for cell in cells
    ]
    for settings in measured:
        if settings["data.preprocessing_mode"] in ("cache", "auto"):
            settings["data.num_workers"] = current["data.num_workers"]
    assert recommended in measured
    assert best["samples_per_sec"] > 0 and best["current_samples_per_sec"] > 0
    assert best["worth_changing"] is (bool(best["change"]) and best["speedup"] >= pipeline_profiler.SWEEP_TIE)


def _cell(workers, prefetch, batch, mode, rate):
    return pipeline_profiler.SweepCell(
        num_workers=workers,
        prefetch_buffer_size=prefetch,
        batch_size=batch,
        preprocessing_mode=mode,
        samples=1,
        seconds=1.0,
        samples_per_sec=rate,
    )


def test_sweep_recommendation_skips_prefetch_off_keeps_cache_workers_and_breaks_ties_by_fewest_changes() -> None:
    from xtts_cli.config.schema import XttsConfig

    config = XttsConfig(
        data={"batch_size": 16, "num_workers": "auto", "prefetch_buffer_size": "auto", "preprocessing_mode": "cache"}
    )
    unchanged = {"num_workers": "auto", "prefetch_buffer_size": "auto", "batch_size": 16, "preprocessing_mode": "cache"}
    prefetch_off = _cell(1, 0, 32, "cache", 5000.0)
    # Within 15 % of the fastest candidate: the current settings win the tie.
    cells = [prefetch_off, _cell(2, 2, 32, "runtime", 900.0), _cell("auto", "auto", 16, "cache", 850.0)]
    assert pipeline_profiler._recommend(cells, config, "cache") == unchanged
    # Clearly faster: recommended, all four keys.
    cells = [prefetch_off, _cell(2, 2, 32, "runtime", 900.0), _cell("auto", "auto", 16, "cache", 500.0)]
    assert pipeline_profiler._recommend(cells, config, "cache") == {
        "num_workers": 2,
        "prefetch_buffer_size": 2,
        "batch_size": 32,
        "preprocessing_mode": "runtime",
    }
    # A cache cell's num_workers was not exercised: the current value stays.
    cells = [_cell(1, 2, 32, "cache", 2000.0), _cell("auto", "auto", 16, "cache", 500.0)]
    assert pipeline_profiler._recommend(cells, config, "cache") == {
        **unchanged,
        "prefetch_buffer_size": 2,
        "batch_size": 32,
    }
    # preprocessing_mode auto: a cell of the mode auto resolves to keeps auto; when the whole dataset's
    # features would not fit in memory, cache cells (fast on the sweep's sample) are not recommended.
    auto = XttsConfig(data={"batch_size": 16, "num_workers": "auto", "prefetch_buffer_size": "auto"})
    cells = [_cell(1, 2, 32, "cache", 2000.0), _cell("auto", "auto", 16, "runtime", 500.0)]
    assert pipeline_profiler._recommend(cells, auto, "cache")["preprocessing_mode"] == "auto"
    assert pipeline_profiler._recommend(cells, auto, "precompute") == {**unchanged, "preprocessing_mode": "runtime"}


def test_missing_data_path_is_one_error_line_and_exit_1(monkeypatch, capsys, tmp_path) -> None:
    missing = tmp_path / "no-such-dataset"
    monkeypatch.setattr(sys, "argv", ["xtts", "profile-pipeline", "--data-path", str(missing)])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    errors = [line for line in captured.err.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: data.dataset_path: {str(missing)!r} is not a directory"]
    assert "Traceback" not in captured.err


def test_planted_stall_every_nth_batch_is_found_with_its_period() -> None:
    import tensorflow as tf

    from xtts_cli.config.schema import XttsConfig

    period, stall_s = 5, 0.06
    config = XttsConfig(data={"batch_size": 8, "preprocessing_mode": "cache"})
    dataset, info = pipeline_profiler.run_data_of(config).pipeline()

    def stall(index):
        if int(index) % period == 0:
            time.sleep(stall_s)
        return index

    def with_stall(index, batch):
        done = tf.py_function(stall, [index], tf.int64)
        with tf.control_dependencies([done]):
            return {name: tf.identity(value) for name, value in batch.items()}

    # The stall sits after the pipeline's own prefetch, where nothing can hide it: every 5th
    # next() waits 60 ms while a cached batch takes about 1 ms.
    planted = dataset.repeat().enumerate().map(with_stall)
    # Warm-up past the first epoch, which fills the cache and is slow for its own reasons.
    measured = pipeline_profiler.measure_batches(
        planted, num_batches=30, warmup=info.batches_per_epoch + 1, sample_rate=22050, hop_length=256
    )
    assert measured.oscillation.detected, measured.oscillation.reason
    assert measured.oscillation.period_batches == pytest.approx(period, abs=0.5)
    assert measured.oscillation.period_seconds == pytest.approx(
        measured.oscillation.period_batches * measured.latency_ms.mean / 1000.0
    )
    assert measured.latency_ms.max >= stall_s * 1000.0


def test_a_ctrl_c_while_tensorflow_pulls_a_batch_is_raised_between_batches_not_inside_it() -> None:
    # Raised inside an iterator's next(), a KeyboardInterrupt had left TensorFlow's executor mid-call:
    # glibc aborted ("free(): invalid next size"), or its __del__ swallowed it and the command went on.
    import os
    import signal
    import traceback

    import tensorflow as tf

    from xtts_cli.config.schema import XttsConfig

    dataset, _ = pipeline_profiler.run_data_of(XttsConfig(data={"batch_size": 8})).pipeline()
    pulled = []

    def press(index):  # a real SIGINT, sent while the main thread waits in TensorFlow for this batch
        if int(index) == 3:
            os.kill(os.getpid(), signal.SIGINT)
        pulled.append(int(index))
        return index

    def pressing(index, batch):
        done = tf.py_function(press, [index], tf.int64)
        with tf.control_dependencies([done]):
            return {name: tf.identity(value) for name, value in batch.items()}

    planted = dataset.repeat().enumerate().map(pressing)
    # Python's own handler, as a command started from a terminal has it (a test worker may ignore SIGINT).
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt) as pressed:
            pipeline_profiler.measure_batches(planted, num_batches=30, warmup=2, sample_rate=22050, hop_length=256)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own, back
    finally:
        signal.signal(signal.SIGINT, before)
    raised_in = traceback.extract_tb(pressed.value.__traceback__)[-1]
    assert raised_in.name == "check" and raised_in.filename.endswith("signals.py"), raised_in


def precompute_run(write_config, tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """(store folder, config, profile-pipeline arguments) of a precompute run on the bundled sample."""
    store = tmp_path / "features"
    config = write_config(f"data:\n  preprocessing_mode: precompute\n  feature_cache_dir: {store}\n")
    return store, config, ["profile-pipeline", "-c", str(config), *FAST, "--no-stages", "--json"]


def test_a_precompute_pass_that_would_not_fit_on_disk_is_refused_before_it_starts(
    runner, write_config, tmp_path, monkeypatch
) -> None:
    import shutil

    from xtts_cli.data import feature_cache

    store, config, args = precompute_run(write_config, tmp_path)
    # A disk with 1 kB free cannot be made here: the file system is asked, and says so.
    real = shutil.disk_usage
    monkeypatch.setattr(feature_cache.shutil, "disk_usage", lambda path: real(path)._replace(free=1000))
    refused = runner.invoke(app, args)
    assert isinstance(refused.exception, DiskFullError) and refused.exception.exit_code == 6
    message = str(refused.exception)
    assert re.fullmatch(
        r"precompute: the feature store needs up to \d+ MB under '.*' but its disk has 1 kB free", message
    )
    assert "data.feature_cache_dir" in refused.exception.hint and not list(store.glob("*/shard-*"))
    monkeypatch.undo()
    # With room, the same pass runs; the estimate bounds what it wrote, within the framing.
    assert runner.invoke(app, args).exit_code == 0
    shards = list(store.glob("*/shard-*.tfrecord"))
    written = sum(path.stat().st_size for path in shards)
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.data.scan import scan_dataset

    data = resolve_config(config).config.data
    estimate = feature_cache.store_bytes(scan_dataset(data).train, data, "mel", shards=len(shards))
    assert written <= estimate <= 1.2 * written


@pytest.mark.slow
def test_a_precompute_pass_is_announced_on_stderr_not_in_the_report(
    runner, write_config, tmp_path, monkeypatch
) -> None:
    from xtts_cli.data import feature_cache

    store, config, args = precompute_run(write_config, tmp_path)
    # A long pass says how far it is between shards; here after every shard but the last. Which
    # clips share a shard hangs on their paths' hashes (39 clips could all share one, depending
    # on where the checkout lies), so shards are cut at 8 clips: five of them, wherever it lies.
    monkeypatch.setattr(feature_cache, "PROGRESS_EVERY_S", 0.0)
    monkeypatch.setattr(feature_cache, "MIN_PERIOD", 8)
    monkeypatch.setattr(feature_cache, "MAX_RUN", 1)
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "precompute: computing the features of 39 clips" in first.stderr and "stored in" in first.stderr
    progress = re.findall(
        r"precompute: (\d+) of 39 clips \((\d+) %\), [\d,]+ clips/s, about \d+ (?:s|min) left", first.stderr
    )
    shards = len(list(store.glob("*/shard-*.tfrecord")))
    assert shards >= 5 and len(progress) == shards - 1, first.stderr
    assert all(0 < int(done) < 39 and int(percent) == round(100 * int(done) / 39) for done, percent in progress)
    assert json.loads(first.stdout)["preprocessing_mode"] == "precompute"
    again = runner.invoke(app, args)  # read from the store: nothing to announce
    assert again.exit_code == 0 and "precompute:" not in again.stderr
    # The store fits the budget (a quarter of this machine's memory): read into memory, and said so.
    held = json.loads(again.stdout)
    assert held["pipeline"]["store_in_memory"] and held["pipeline"]["store_in_memory_bytes"] > 0
    assert any(note.startswith("the precompute store is held in memory") for note in held["notes"]), held["notes"]
    # A limit of 0 keeps it on disk: every epoch reads the shards.
    on_disk = write_config(
        f"data:\n  preprocessing_mode: precompute\n  feature_cache_dir: {store}\n  cache_memory_limit: 0\n", "disk.yaml"
    )
    streamed = runner.invoke(app, ["profile-pipeline", "-c", str(on_disk), *args[3:]])
    assert streamed.exit_code == 0, streamed.output
    read = json.loads(streamed.stdout)
    assert not read["pipeline"]["store_in_memory"] and read["pipeline"]["store_in_memory_bytes"] == 0
    assert not any("held in memory" in note for note in read["notes"])


def test_the_sweep_leaves_two_batches_an_epoch_as_the_benchmark_does() -> None:
    from xtts_cli.config.schema import XttsConfig

    config = XttsConfig(data={"batch_size": 8})
    grid, _ = pipeline_profiler._sweep_grid(config, 39, 39)  # the bundled sample's training clips
    assert sorted({cell[2] for cell in grid}) == [8, 16]  # 32 is one batch an epoch, and 7 clips dropped
    tiny, _ = pipeline_profiler._sweep_grid(config, 10, 10)
    assert {cell[2] for cell in tiny} == {8}  # too few for any size's two batches: the config's own


def test_a_stage_that_measured_faster_than_the_one_before_it_has_no_negative_share() -> None:
    from xtts_cli.cli.profile_pipeline import stage_share

    # Decoding a WAV adds too little to be told from reading it: its cumulative rate can come out faster.
    assert [stage_share(added, 1.5) for added in (0.12, -0.03, 1.15, 0.0)] == ["8%", "~0%", "77%", "0%"]


def test_the_shares_of_the_stages_add_up_to_at_most_the_whole_when_a_stage_measured_slower_than_the_whole():
    from types import SimpleNamespace

    from rich.console import Console

    from xtts_cli.cli.profile_pipeline import _render_stages_and_baseline
    from xtts_cli.profiling.pipeline_profiler import StageTiming

    def stage(name, ms, added):
        return StageTiming(
            name=name, description=name, samples=8, seconds=ms * 0.008, samples_per_sec=1000 / ms,
            ms_per_sample=ms, incremental_ms_per_sample=added,
        )  # fmt: skip

    # features measured at 3.28 ms a clip, the whole pipeline after it at 2.55 (noise): not 107 %.
    stages = [stage("read", 0.30, 0.30), stage("decode", 0.54, 0.24), stage("features", 3.28, 2.74)]
    out = Console(record=True, width=200)
    _render_stages_and_baseline(out, SimpleNamespace(stages=[*stages, stage("batch", 2.55, -0.73)], baseline=None))
    table = out.export_text()
    assert [int(share) for share in re.findall(r"(\d+)%", table)] == [9, 7, 84, 0] and "~0%" in table
    # And a note says the split is inside the noise (the table alone had shown it as measured).
    from xtts_cli.profiling.pipeline_profiler import stages_within_noise

    assert stages_within_noise([*stages, stage("batch", 2.55, -0.73)]) == [
        "batch timed faster than the stage before it (-0.73 ms a sample): at 8 samples the stages' differences are "
        "within noise; time more batches (--batches) to split them"
    ]
    assert stages_within_noise(stages) == []
