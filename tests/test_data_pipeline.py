"""The tf.data pipeline end to end: real files, real TensorFlow, tiny batches."""

from __future__ import annotations

import errno
import os
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from xtts_cli.config.schema import XttsConfig
from xtts_cli.data import feature_cache
from xtts_cli.data.audio_codecs import compressed_decoder
from xtts_cli.data.features import LOG_MEL_FLOOR, MEL_STEPS_PER_UNIT, as_values, with_reference
from xtts_cli.data.pipeline import (
    READS_IN_FLIGHT,
    audio_formats,
    build_pipeline,
    feature_stage,
    pipeline_threads,
    plan_pipeline,
    source_columns,
    tokenizer_for,
)
from xtts_cli.data.scan import scan_dataset
from xtts_cli.data.text import Tokenizer
from xtts_cli.errors import XttsError

DATASET = Path(__file__).parent / "data" / "dataset"
PERSIAN = "سلام، من می\u200cخواهم فارسی صحبت کنم."
PYTHON_OPS = {"PyFunc", "PyFuncStateless", "EagerPyFunc", "NumpyFunction"}


def config(dataset=DATASET, **data) -> XttsConfig:
    # Two buckets unless a test is about bucketing: each bucket is its own source, and building
    # sources (not running them) is what costs test time.
    settings = dict(
        dataset_path=str(dataset) if dataset else None,
        max_bad_file_fraction=0.6,
        batch_size=2,
        num_buckets=2,
        reference_frames=24,
        preprocessing_mode="runtime",
    )
    settings.update(data)
    return XttsConfig(data=settings)


# Each way features are kept, as the data settings that choose it. The store is held in memory when
# it fits data.cache_memory_limit (here: always, but for a limit of 1 byte), else read from its shards.
KEPT = {
    "runtime": {"preprocessing_mode": "runtime"},
    "cache": {"preprocessing_mode": "cache"},
    "precompute": {"preprocessing_mode": "precompute"},
    "streamed": {"preprocessing_mode": "precompute", "cache_memory_limit": 1},
}


def kept(cfg: XttsConfig, way: str) -> XttsConfig:
    return cfg.model_copy(update={"data": cfg.data.model_copy(update=KEPT[way])})


@pytest.fixture(scope="module")
def fixture_scan():
    return scan_dataset(config().data)


@pytest.fixture(scope="module")
def sample_scan():
    return scan_dataset(config(dataset=None).data)


def graph_ops(ds) -> set[str]:
    graph = tf.compat.v1.GraphDef()
    graph.ParseFromString(ds._as_serialized_graph().numpy())
    ops = {node.op for node in graph.node}
    for function in graph.library.function:
        ops |= {node.op for node in function.node_def}
    return ops


def epoch(ds) -> list[dict]:
    """One epoch's batches, their features as the step reads them (16-bit steps scaled)."""
    return [{k: v.numpy() for k, v in as_values(batch).items()} for batch in ds]


def test_batch_layout_padding_and_reference(fixture_scan):
    cfg = config()
    tokenizer = tokenizer_for(fixture_scan, cfg.data)
    ds, info = build_pipeline(cfg, fixture_scan.items, tokenizer, training=False)
    batches = epoch(ds)
    assert sum(len(b["mel_lengths"]) for b in batches) == len(fixture_scan.items) == info.num_items
    assert info.batches_per_epoch == len(batches)
    dtypes = {"text_ids": np.int32, "text_lengths": np.int32, "mel": np.float32, "mel_lengths": np.int32}
    expected_frames = {
        1 + item.audio.num_samples * 22050 // item.audio.sample_rate // 256 for item in fixture_scan.items
    }
    for batch in batches:
        assert {k: v.dtype for k, v in batch.items()} == dtypes
        size = len(batch["mel_lengths"])
        assert batch["mel"].shape[0] == batch["text_ids"].shape[0] == size and batch["mel"].shape[2] == 80
        # The step's reference crop, without a seed (evaluation): each clip's first R frames. Its
        # text opens with the language's and the speaker's index, which the step takes off.
        reference = {k: np.asarray(v) for k, v in with_reference(batch, cfg.data, prefix=2).items()}
        assert reference["ref_mel"].shape == (size, 24, 80)
        np.testing.assert_array_equal(reference["text_ids"], batch["text_ids"][:, 2:])
        np.testing.assert_array_equal(reference["text_lengths"], batch["text_lengths"] - 2)
        np.testing.assert_array_equal(reference["language_ids"], 0)
        speakers = [tokenizer.speaker_index(item.speaker) for item in fixture_scan.items]
        assert set(reference["speaker_ids"].tolist()) <= set(speakers) and min(speakers) >= 0
        for row in range(size):
            frames, chars = batch["mel_lengths"][row], batch["text_lengths"][row]
            assert frames in expected_frames
            assert np.all(batch["mel"][row, frames:] == np.float32(LOG_MEL_FLOOR))
            assert np.all(batch["text_ids"][row, chars:] == 0) and np.all(batch["text_ids"][row, 2:chars] > 0)
            assert reference["ref_lengths"][row] == min(frames, 24)
            np.testing.assert_array_equal(reference["ref_mel"][row], batch["mel"][row, :24])


def test_the_step_reads_a_cached_batch_as_the_values_its_steps_stand_for(fixture_scan):
    cfg = config(preprocessing_mode="cache")
    ds, _ = build_pipeline(cfg, fixture_scan.items, tokenizer_for(fixture_scan, cfg.data), training=False)
    batch = next(iter(ds))
    assert batch["mel"].dtype == tf.uint16
    read = with_reference(batch, cfg.data)
    assert read["mel"].dtype == read["ref_mel"].dtype == tf.float32
    # A step is 1/1024 of a natural-log unit above the floor; padding (step 0) reads as the floor.
    expected = batch["mel"].numpy().astype(np.float32) / MEL_STEPS_PER_UNIT + np.float32(LOG_MEL_FLOOR)
    np.testing.assert_allclose(read["mel"].numpy(), expected, atol=1e-5)
    for row, frames in enumerate(batch["mel_lengths"].numpy()):
        assert np.all(read["mel"][row, frames:].numpy() == np.float32(LOG_MEL_FLOOR))
    passed = as_values(read)
    assert all(passed[k] is read[k] for k in read)  # float32 values pass as they are


def test_persian_and_pipe_texts_round_trip_through_a_batch(fixture_scan):
    cfg = config()
    tokenizer = tokenizer_for(fixture_scan, cfg.data)
    ds, _ = build_pipeline(cfg, fixture_scan.items, tokenizer, training=False)
    texts = {
        tokenizer.decode(row[2:length])  # after the language's and the speaker's index
        for batch in epoch(ds)
        for row, length in zip(batch["text_ids"], batch["text_lengths"])
    }
    assert PERSIAN in texts
    assert "press a | b to start." in texts


def test_runtime_pipeline_has_no_python_ops_beyond_the_compressed_decoder(fixture_scan):
    cfg = config()
    tokenizer = tokenizer_for(fixture_scan, cfg.data)
    wav = [item for item in fixture_scan.items if item.audio.format == "wav"]
    # libsndfile decodes FLAC, Ogg and MP3 in one numpy_function; the [tfio] extra's kernels in the graph.
    compressed_ops = {"PyFuncStateless"} if compressed_decoder() == "soundfile" else set()
    for output in ("mel", "audio"):
        ds, _ = build_pipeline(cfg, fixture_scan.items, tokenizer, training=True, output=output)
        ops = graph_ops(ds)
        assert "DecodeRaw" in ops and ops & PYTHON_OPS == compressed_ops, ops & PYTHON_OPS
        wav_only, _ = build_pipeline(cfg, wav, tokenizer, training=True, output=output)
        assert "DecodeRaw" in graph_ops(wav_only) and not graph_ops(wav_only) & PYTHON_OPS
    # The check sees Python when it is there: the baseline path is one numpy_function per clip.
    baseline, info = build_pipeline(config(use_tf_native_loading=False), fixture_scan.items, tokenizer, training=True)
    assert not info.tf_native and graph_ops(baseline) & PYTHON_OPS


@pytest.mark.parametrize(
    ("training", "output"),
    [
        (True, "mel"),
        pytest.param(False, "mel", marks=pytest.mark.slow),
        pytest.param(True, "audio", marks=pytest.mark.slow),
    ],
)
def test_distinct_batch_shapes_stay_within_the_reported_bound(sample_scan, training, output):
    cfg = config(dataset=None, batch_size=4, num_buckets=4)
    tokenizer = tokenizer_for(sample_scan, cfg.data)
    ds, info = build_pipeline(cfg, sample_scan.train, tokenizer, training=training, output=output)
    assert info.batching == "bucketed" and len(info.bucket_boundaries) == 4
    # Training: one shape per bucket (drop_remainder); validation adds each bucket's last partial batch.
    assert info.max_distinct_batch_shapes <= (4 if training else 8)
    for _ in range(2):  # the bound holds epoch after epoch, whatever the shuffle
        batches = epoch(ds)
        shapes = {tuple((k, v.shape) for k, v in sorted(b.items())) for b in batches}
        assert len(batches) == info.batches_per_epoch
        assert len(shapes) <= info.max_distinct_batch_shapes
    key = "mel" if output == "mel" else "audio"
    for batch in batches:
        padded = batch[key].shape[1]
        bucket = info.mel_pad_lengths.index(padded if output == "mel" else (padded + 1) // 256)
        assert batch["text_ids"].shape[1] == info.text_pad_lengths[bucket]
        if training:
            assert len(batch["text_lengths"]) == 4  # drop_remainder: the batch size is static
    assert info.padding_efficiency > 0.8


@pytest.mark.slow
def test_a_training_epoch_starts_every_bucket_in_its_first_batches(sample_scan, tmp_path):
    # A bucket starts (opens its store runs, fills its shuffle buffer) when first picked: every bucket
    # is picked once first, so no batch mid-epoch waits for a start. Then at random, as often as planned.
    # In order (the store's batches are decoded in a parallel map after the choice, which may swap
    # neighbours when order is given up for speed).
    cfg = config(
        dataset=None, batch_size=4, num_buckets=4, feature_cache_dir=str(tmp_path), optimize_cpu_gpu_overlap=False
    )
    tokenizer = tokenizer_for(sample_scan, cfg.data)
    for mode in ("runtime", "precompute", "streamed"):
        ds, info = build_pipeline(kept(cfg, mode), sample_scan.train, tokenizer, training=True)
        assert info.store_in_memory == (mode == "precompute")
        orders = []
        for _ in range(2):
            orders.append([info.mel_pad_lengths.index(b["mel"].shape[1]) for b in epoch(ds)])
            assert sorted(orders[-1][:4]) == [0, 1, 2, 3], mode
            assert len(orders[-1]) == info.batches_per_epoch
        assert orders[0] != orders[1]  # the rest reshuffled each epoch


@pytest.mark.slow
def test_the_repeated_dataset_training_reads_is_one_reshuffled_epoch_after_another(sample_scan, tmp_path):
    # Training draws every epoch from one iterator over the dataset repeated, cut every
    # batches_per_epoch batches: each such run is one epoch (every bucket as often as planned, no
    # clip twice) in an order of its own.
    base = config(dataset=None, batch_size=4, num_buckets=4, feature_cache_dir=str(tmp_path))
    tokenizer = tokenizer_for(sample_scan, base.data)
    for mode in KEPT:
        ds, info = build_pipeline(kept(base, mode), sample_scan.train, tokenizer, training=True)
        stream = iter(ds.repeat())
        orders = []
        for _ in range(3):
            batches = [{k: v.numpy() for k, v in next(stream).items()} for _ in range(info.batches_per_epoch)]
            buckets = [info.mel_pad_lengths.index(b["mel"].shape[1]) for b in batches]
            assert [buckets.count(k) for k in range(len(info.bucket_batches))] == info.bucket_batches, mode
            clips = [(text, frames, round(float(mel.sum()), 1)) for text, frames, mel in epoch_clips(batches)]
            assert len(set(clips)) == len(clips), mode
            orders.append(clips)
        assert orders[0] != orders[1] and orders[1] != orders[2], mode


def test_an_epoch_draws_from_the_whole_bucket_not_a_window_of_corpus_order(sample_scan):
    # A shuffle buffer of 2 places would keep each clip within a few places of its corpus position
    # (a corpus listed speaker by speaker would be visited speaker by speaker). The clips' order is
    # a fresh permutation of the whole bucket every epoch; a cached epoch replays the first one's.
    items = sample_scan.train
    for mode in ("runtime", "cache"):
        cfg = config(
            dataset=None,
            batch_size=2,
            num_buckets=1,
            shuffle_buffer_multiplier=1,
            preprocessing_mode=mode,
            optimize_cpu_gpu_overlap=False,
        )
        tokenizer = tokenizer_for(sample_scan, cfg.data)
        ds, _ = build_pipeline(cfg, items, tokenizer, training=True)
        text_ids = plan_pipeline(cfg.data, items, tokenizer, training=True).text_ids
        place = {tuple(ids): k for k, ids in enumerate(text_ids)}
        assert len(place) == len(items)  # every text differs: a clip is known by its token ids
        for _ in range(2):
            batches = epoch(ds)
            order = [place[tuple(b["text_ids"][i, :n])] for b in batches for i, n in enumerate(b["text_lengths"])]
            assert any(p > k + 4 for k, p in enumerate(order)), (mode, order)


def test_a_bucket_is_a_fresh_permutation_each_epoch_reproducible_from_its_seed():
    from xtts_cli.data.pipeline import _permuted_places

    def epochs(seed, count=50):
        ds = _permuted_places(count, seed)
        return [[int(p) for p in ds.as_numpy_iterator()] for _ in range(3)]

    first = epochs(7)
    assert all(sorted(order) == list(range(50)) for order in first)  # every place once
    assert len({tuple(order) for order in first}) == 3  # a new order each epoch
    assert epochs(7) == first  # the same seed, the same epochs
    assert epochs(8)[0] != first[0]
    assert list(_permuted_places(0, 7).as_numpy_iterator()) == []


def test_a_seed_made_in_the_graph_permutes_a_bucket_whatever_the_global_seed():
    # A service worker's seed is a tensor (`_worker_seed`); training sets the global seed from
    # `training.seed`, and with 0 Dataset.random's seed logic refused a tensor seed.
    from xtts_cli.data.pipeline import _permuted_places

    try:
        for global_seed in (0, 7, None):
            tf.random.set_seed(global_seed)
            seeds = tf.data.Dataset.from_tensor_slices(tf.constant([5, 6], tf.int64))
            ds = seeds.flat_map(lambda seed: _permuted_places(50, seed).batch(50))
            orders = [list(order) for order in ds.as_numpy_iterator()]
            assert [sorted(order) for order in orders] == [list(range(50))] * 2, global_seed
            assert orders[0] != orders[1], global_seed  # each seed its own order
    finally:
        tf.random.set_seed(None)


def test_an_epochs_bucket_order_is_drawn_whole_as_it_starts_each_part_permuted_in_place():
    # The buckets' first batches, then the rest: each part permuted on its own, one after the other,
    # drawn as one tensor (no shuffle buffer filled when the first part runs out).
    from xtts_cli.data.pipeline import _permuted

    starts, rest = np.array([0, 1, 2, 3]), np.array([0, 0, 1, 2, 2, 2, 3, 3])

    def epochs(seed):
        ds = _permuted([starts, rest], seed)
        return [[int(k) for k in ds.as_numpy_iterator()] for _ in range(3)]

    orders = epochs(11)
    for order in orders:
        assert sorted(order[:4]) == [0, 1, 2, 3]
        assert sorted(order[4:]) == sorted(rest.tolist())
    assert len({tuple(order) for order in orders}) > 1  # a new order each epoch
    assert epochs(11) == orders  # the same seed, the same epochs


def test_a_large_pipeline_freezes_what_start_up_made(sample_scan, monkeypatch):
    import gc

    from xtts_cli.data import pipeline

    cfg = config(dataset=None, batch_size=4)
    tokenizer = tokenizer_for(sample_scan, cfg.data)
    before = gc.get_freeze_count()
    monkeypatch.setattr(pipeline, "_FREEZE_FROM_CLIPS", len(sample_scan.train) + 1)
    build_pipeline(cfg, sample_scan.train, tokenizer, training=True)
    assert gc.get_freeze_count() == before  # a small one leaves the collector alone
    monkeypatch.setattr(pipeline, "_FREEZE_FROM_CLIPS", len(sample_scan.train))
    try:
        build_pipeline(cfg, sample_scan.train, tokenizer, training=True)
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()


def test_fixed_length_padding_gives_one_shape(sample_scan):
    cfg = config(dataset=None, batch_size=4, pad_to_fixed_length=True, max_mel_frames=420, max_text_length=100)
    tokenizer = tokenizer_for(sample_scan, cfg.data)
    ds, info = build_pipeline(cfg, sample_scan.train, tokenizer, training=True)
    shapes = {(b["text_ids"].shape, b["mel"].shape) for b in epoch(ds)}
    assert shapes == {((4, 102), (4, 420, 80))}  # the text, and its language's and speaker's index
    assert info.batching == "fixed" and info.max_distinct_batch_shapes == 1
    bucketed = build_pipeline(
        config(dataset=None, batch_size=4, num_buckets=4), sample_scan.train, tokenizer, training=True
    )[1]
    assert bucketed.padding_efficiency > 1.5 * info.padding_efficiency


def test_training_reference_is_a_random_crop_of_the_clip(sample_scan):
    # The training step crops it (features.with_reference) from the pipeline's batches.
    cfg = config(dataset=None, batch_size=4, reference_frames=32)
    tokenizer = tokenizer_for(sample_scan, cfg.data)
    ds, _ = build_pipeline(cfg, sample_scan.train, tokenizer, training=True)
    starts = []
    for step, batch in enumerate(epoch(ds)[:4]):
        refs = with_reference(batch, cfg.data, seed=tf.constant([0, step], tf.int64))["ref_mel"].numpy()
        for mel, ref, frames in zip(batch["mel"], refs, batch["mel_lengths"]):
            windows = [s for s in range(frames - 31) if np.array_equal(mel[s : s + 32], ref)]
            assert windows, "the reference must be a contiguous crop of its clip"
            starts.append(windows[0])
    assert len(set(starts)) > 4  # not always the first frames


@pytest.mark.slow  # a pipeline of its own
def test_a_clip_longer_than_scanned_is_cut_to_its_bucket_and_short_clips_pad_the_reference(fixture_scan, tmp_path):
    # A file that grew after the scan must not fail its batch: it is cut to the length its bucket
    # was planned for. FLAC decodes to the file's own length whatever the header facts say, so a
    # halved sample count stands in for the change.
    items = [
        item for item in fixture_scan.items if item.id in ("pcm16", "pcm8", "float32", "stereo", "flac24", "flac16")
    ]
    grown = next(i for i, item in enumerate(items) if item.id == "flac16")
    real_frames = 1 + items[grown].audio.num_samples // 256
    items[grown] = replace(
        items[grown], audio=replace(items[grown].audio, num_samples=items[grown].audio.num_samples // 2)
    )
    cfg = config(batch_size=2, num_buckets=1, reference_frames=400, feature_cache_dir=str(tmp_path))
    tokenizer = tokenizer_for(fixture_scan, cfg.data)
    for mode in ("runtime", "precompute", "streamed"):  # the store keeps the whole clip; reading it cuts
        ds, info = build_pipeline(kept(cfg, mode), items, tokenizer, training=True)
        assert real_frames > max(info.mel_pad_lengths)
        check_cut_batches(epoch(ds), info, cfg)


def check_cut_batches(batches, info, cfg):
    assert len(batches) == info.batches_per_epoch == 3
    for step, batch in enumerate(batches):
        assert batch["mel"].shape[1] == info.mel_pad_lengths[0]
        # R = 400 frames is longer than these clips: the reference is the clip, then floor frames.
        refs = with_reference(batch, cfg.data, seed=tf.constant([0, step], tf.int64))["ref_mel"].numpy()
        assert refs.shape[1:] == (400, 80)
        for mel, ref, frames in zip(batch["mel"], refs, batch["mel_lengths"]):
            assert frames <= info.mel_pad_lengths[0] < 400
            np.testing.assert_array_equal(ref[:frames], mel[:frames])
            assert (ref[frames:] == np.float32(LOG_MEL_FLOOR)).all()


def test_numpy_baseline_computes_the_same_features(fixture_scan):
    items = [item for item in fixture_scan.items if item.audio.sample_rate == 22050 and item.audio.format != "mp3"]
    tokenizer = tokenizer_for(fixture_scan, config().data)
    batches = {}
    for native in (True, False):
        cfg = config(use_tf_native_loading=native, optimize_cpu_gpu_overlap=False, trim_silence=True)
        ds, _ = build_pipeline(cfg, items, tokenizer, training=False)
        batches[native] = epoch(ds)
    assert len(batches[True]) == len(batches[False])
    for ours, theirs in zip(batches[True], batches[False]):
        np.testing.assert_array_equal(ours["mel_lengths"], theirs["mel_lengths"])
        # numpy FFTs in float64, TF in float32: the log of the quietest bins differs by ~1e-3.
        np.testing.assert_allclose(ours["mel"], theirs["mel"], atol=2e-3)


def test_pipelines_share_a_feature_stage_only_where_their_frames_are_defined_alike(fixture_scan):
    # The traced decode stage is shared across pipelines (data/pipeline.py `_native_stage`): a
    # setting of batching or keeping gets the same one, a setting of the frames a stage of its own.
    item = fixture_scan.items[0]
    formats = audio_formats([item])  # one codec at one rate: a small graph to trace
    base = config(trim_silence=False).data
    batched = base.model_copy(update={"batch_size": 4, "num_buckets": 3, "preprocessing_mode": "cache"})
    assert feature_stage(batched, "mel", formats) is feature_stage(base, "mel", formats)
    assert feature_stage(base, "audio", formats) is not feature_stage(base, "mel", formats)
    element = {name: tf.constant(values[0]) for name, values in source_columns([item], formats.codecs).items()}
    mel = feature_stage(base, "mel", formats)(element)
    assert mel.shape[-1] == base.n_mels
    assert feature_stage(base.model_copy(update={"n_mels": 20}), "mel", formats)(element).shape[-1] == 20
    trimmed = feature_stage(base.model_copy(update={"trim_silence": True}), "mel", formats)(element)
    assert trimmed.shape[0] < mel.shape[0]  # the clip's silent ends are cut


def test_cache_mode_serves_the_same_features_every_epoch(fixture_scan):
    # Batch size 1: no remainder is dropped, so both epochs hold every clip (in a new order).
    cfg = config(preprocessing_mode="cache", batch_size=1)
    tokenizer = tokenizer_for(fixture_scan, cfg.data)
    ds, info = build_pipeline(cfg, fixture_scan.items, tokenizer, training=True)
    # The decode before the cache: libsndfile's numpy_function for the compressed clips, if anything.
    assert "CacheDatasetV2" in graph_ops(ds) and graph_ops(ds) & PYTHON_OPS <= {"PyFuncStateless"}

    def clips(batches):
        return sorted(round(float(b["mel"][i, :n].sum()), 2) for b in batches for i, n in enumerate(b["mel_lengths"]))

    first, second = epoch(ds), epoch(ds)
    assert len(first) == len(second) == info.batches_per_epoch == len(fixture_scan.items)
    assert clips(first) == clips(second)
    assert [b["mel_lengths"][0] for b in first] != [b["mel_lengths"][0] for b in second]  # reshuffled


def copy_dataset(tmp_path: Path, ids: list[str]) -> Path:
    root = tmp_path / "dataset"
    (root / "wavs").mkdir(parents=True)
    lines = []
    for line in (DATASET / "metadata.csv").read_text(encoding="utf-8").splitlines():
        key = line.split("|")[0]
        if key in ids:
            source = next((DATASET / "wavs").glob(f"{key}.*"))
            shutil.copy2(source, root / "wavs" / source.name)
            lines.append(line)
    (root / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def epoch_clips(batches) -> list[tuple]:
    """Each clip of an epoch as (token ids, mel frames, its log-mel), in the order served."""
    clips = []
    for batch in batches:
        for i, (t, n) in enumerate(zip(batch["text_lengths"], batch["mel_lengths"])):
            clips.append((tuple(batch["text_ids"][i, :t].tolist()), int(n), np.asarray(batch["mel"][i, :n])))
    return clips


# The cache and the store keep log-mels in steps of 1 / MEL_STEPS_PER_UNIT: each value within half a step.
STORE_TOLERANCE = 0.5 / MEL_STEPS_PER_UNIT + 1e-5


def assert_same_clips(got: list[tuple], expected: list[tuple], what: str) -> None:
    """The same clips, in any order (a multiset): token ids and frames equal, log-mels within the
    store's tolerance. Clips of one text in several formats share ids and frames, so each clip is
    paired with one of `expected` whose features match, and that one is used up."""
    assert len(got) == len(expected), what
    left = list(expected)
    for ids, frames, mel in got:
        match = next(
            (
                k
                for k, (their_ids, their_frames, theirs) in enumerate(left)
                if (their_ids, their_frames) == (ids, frames) and np.abs(theirs - mel).max() <= STORE_TOLERANCE
            ),
            None,
        )
        assert match is not None, f"{what}: no clip like the one of {frames} frames, ids {ids[:8]}..."
        left.pop(match)


@pytest.mark.slow
def test_precompute_shards_rebuild_on_changed_settings_files_and_interruptions(tmp_path, monkeypatch):
    root = copy_dataset(tmp_path, ["pcm16", "flac16", "vorbis", "mp3vbr", "rate16k"])
    # One clip per shard here (five clips would otherwise share one), so that a shard's rebuild
    # is visible; how clips are grouped into shards at size is tested in test_data_plan.py.
    monkeypatch.setattr(feature_cache, "MIN_PERIOD", 1)

    notes: list[str] = []

    def build(cache=tmp_path / "features", mode="precompute", **data):
        cfg = config(
            dataset=root,
            preprocessing_mode=mode,
            feature_cache_dir=str(cache),
            eval_fraction=0.0,
            optimize_cpu_gpu_overlap=False,
            **data,
        )
        report = scan_dataset(cfg.data)
        return build_pipeline(cfg, report.items, tokenizer_for(report, cfg.data), training=False, note=notes.append)

    ds, info = build()
    store = info.feature_cache
    assert (store.built, store.reused, store.shards, store.shards_built) == (5, 0, 5, 5)
    # The user hears of the pass (it may take minutes at size) before it starts and when it is done.
    assert (
        notes[0].startswith("precompute: computing the features of 5 validation clips into ")
        and "5 shards to write" in notes[0]
    )
    assert notes[1].startswith("precompute: 5 validation clips stored in ") and len(notes) == 2
    directory = Path(store.directory)
    assert directory.parent == tmp_path / "features"
    assert len(list(directory.glob("shard-*.tfrecord"))) == 5 and not list(directory.glob(".tmp-*"))
    # Readable as the umask says, for a store a team shares (mkstemp's 0600 had kept it to its writer).
    umask = os.umask(0o022)
    os.umask(umask)
    assert {shard.stat().st_mode & 0o777 for shard in directory.glob("shard-*.tfrecord")} == {0o666 & ~umask}
    ops = graph_ops(ds)
    assert {"TFRecordDataset", "DecodePaddedRaw"} <= ops and not ops & PYTHON_OPS
    assert not ops & {"DecodeWav", "IO>AudioDecodeMP3", "ReadFile"}  # read back, not recomputed
    stored, fresh = epoch_clips(epoch(ds)), epoch_clips(epoch(build(mode="runtime")[0]))
    assert len(stored) == 5
    assert_same_clips(stored, fresh, "the store against runtime mode")

    # Unchanged: everything reused, and nothing to tell.
    assert (build()[1].feature_cache.built, build()[1].feature_cache.reused) == (0, 5)
    assert len(notes) == 2
    # A feature setting changes: a new fingerprint directory, everything rebuilt.
    changed = build(n_mels=64)[1].feature_cache
    assert changed.built == 5 and Path(changed.directory) != directory
    # A file is touched (same bytes, new mtime): its shard alone is rebuilt, once.
    wav = root / "wavs" / "pcm16.wav"
    stat = wav.stat()
    os.utime(wav, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    touched = build()[1].feature_cache
    assert (touched.built, touched.reused, touched.shards_built) == (1, 4, 1)
    assert build()[1].feature_cache.built == 0
    # Replaced by other audio of the same size, its mtime put back (cp -p, touch -r, rsync --times): its
    # shard rebuilt too (it had trained on the old clip's features, unsaid).
    stat, raw = wav.stat(), bytearray(wav.read_bytes())
    start = raw.index(b"data") + 8
    frames = np.frombuffer(bytes(raw[start:]), dtype="<i2")
    raw[start:] = frames[::-1].tobytes()
    wav.write_bytes(bytes(raw))
    os.utime(wav, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (wav.stat().st_size, wav.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    replaced = build()[1].feature_cache
    assert (replaced.built, replaced.reused) == (1, 4)
    # Shards cut short (a full disk, a copy that stopped) do not match their own index: rebuilt.
    for shard in directory.glob("shard-*.tfrecord"):
        shard.write_bytes(shard.read_bytes()[:-100])
    assert (build()[1].feature_cache.built, build()[1].feature_cache.built) == (5, 0)

    # A full disk while writing (made to happen: no disk fills up here): one line naming the folder and the fix.
    def disk_full(path, records):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(feature_cache, "_write_shard", disk_full)
    # (tests/faults/test_full_disk.py fills a real filesystem.)
    with pytest.raises(XttsError, match="the disk is full: writing the feature store .*No space left") as error:
        build(cache=tmp_path / "full")
    assert error.value.exit_code == 6 and "point the run or the store at another one" in error.value.hint
    monkeypatch.undo()
    monkeypatch.setattr(feature_cache, "MIN_PERIOD", 1)

    # An interrupted precompute (a crash while writing the third shard) is never taken as complete:
    # the two finished shards are kept, the third leaves no file under its name, and the next run
    # builds the three that are missing.
    written = []
    real_write = feature_cache._write_shard
    crash_at = [2]

    def crash_in_third(path, records):
        if len(written) == crash_at[0]:

            def cut(records):
                yield next(records)
                raise KeyboardInterrupt("simulated interruption")

            real_write(path, cut(records))
        written.append(path)
        real_write(path, records)

    monkeypatch.setattr(feature_cache, "_write_shard", crash_in_third)
    notes.clear()
    with pytest.raises(KeyboardInterrupt):
        build(cache=tmp_path / "features2")
    monkeypatch.setattr(feature_cache, "_write_shard", real_write)
    interrupted = written[0].parent
    # Ctrl-C says what the pass kept before it goes on as an interruption.
    assert notes[-1] == (
        f"precompute: interrupted with 2 of 5 shards written (2 of 5 validation clips); they are kept in {interrupted} "
        "and the next start computes the rest"
    )
    assert sorted(interrupted.glob("shard-*")) == sorted(written) and not list(interrupted.glob(".tmp-*"))
    # Interrupted again in the first shard it writes: nothing new kept, and it says so.
    written.clear()
    crash_at[0] = 0
    monkeypatch.setattr(feature_cache, "_write_shard", crash_in_third)
    with pytest.raises(KeyboardInterrupt):
        build(cache=tmp_path / "features2")
    monkeypatch.setattr(feature_cache, "_write_shard", real_write)
    assert notes[-1] == "precompute: interrupted before the first of 3 shards was written"
    assert len(list(interrupted.glob("shard-*"))) == 2 and not list(interrupted.glob(".tmp-*"))
    resumed = build(cache=tmp_path / "features2")[1].feature_cache
    assert (resumed.built, resumed.reused, resumed.shards_built) == (3, 2, 3)


def test_a_clip_that_passes_the_scan_but_does_not_decode_is_named_by_the_precompute_pass(tmp_path):
    # A FLAC whose header is intact and whose frames are not: the scan reads headers only, so the
    # pass over the clips is where it fails, and the error names that clip, not its neighbours.
    from xtts_cli.data.audio_codecs import decode_failures

    root = copy_dataset(tmp_path, ["pcm16", "flac16", "vorbis", "mp3vbr", "rate16k"])
    flac = root / "wavs" / "flac16.flac"
    body = flac.read_bytes()
    flac.write_bytes(body[:200] + bytes((i * 37 + 11) % 256 for i in range(len(body) - 200)))
    report = scan_dataset(config(dataset=root, eval_fraction=0.0).data)
    assert len(report.items) == 5  # it passed the scan
    # Decoded while training (runtime mode), it is skipped, the rest served, and named for training
    # to say: TensorFlow's own warning of the skip is hidden by its quiet log.
    assert str(flac) not in decode_failures()
    runtime = config(dataset=root, preprocessing_mode="runtime", eval_fraction=0.0, batch_size=1)
    ds, _ = build_pipeline(runtime, report.items, tokenizer_for(report, runtime.data), training=False)
    assert sum(len(batch["mel_lengths"]) for batch in epoch(ds)) == 4
    assert decode_failures()[str(flac)]  # libsndfile's reason, whatever it is for these bytes
    from xtts_cli.training.controller import MetricsHook

    said: list = []
    logging = MetricsHook.__new__(MetricsHook)  # training's logging action, as it logs a step
    logging.said_failed, logging.progress = set(), said.append
    logging._say_decode_failures()
    logging._say_decode_failures()  # named once, not at every log
    (warning,) = said
    assert warning.label == "warning" and f"{flac} (" in warning.message and "skipped every epoch" in warning.message
    cfg = config(
        dataset=root, preprocessing_mode="precompute", feature_cache_dir=str(tmp_path / "store"), eval_fraction=0.0
    )
    with pytest.raises(XttsError) as error:
        build_pipeline(cfg, report.items, tokenizer_for(report, cfg.data), training=False)
    line = str(error.value).splitlines()[0]
    assert line.startswith(f"precompute: cannot compute features of {str(flac)!r} (metadata.csv:")
    assert "{{function_node" not in line and "[Op:" not in line  # TensorFlow's framing left out
    assert "user-defined function" not in line and "Iterator::" not in line  # and tf.data's
    assert "does not decode: remove its line from the metadata" in error.value.hint


@pytest.mark.slow
def test_cache_precompute_and_runtime_give_the_same_clips_every_epoch(fixture_scan, tmp_path):
    # Batch size 1: training drops no partial batch, so each epoch holds every clip once. Two clips
    # appear twice (a dataset weight repeats them): the store keeps them once and serves both.
    tokenizer = tokenizer_for(fixture_scan, config().data)
    items = list(fixture_scan.items) + list(fixture_scan.items[:2])
    epochs, shapes = {}, {}
    for mode in KEPT:
        cfg = kept(config(batch_size=1, feature_cache_dir=str(tmp_path / "features")), mode)
        ds, info = build_pipeline(cfg, items, tokenizer, training=True)
        assert info.preprocessing_mode == KEPT[mode]["preprocessing_mode"]
        assert info.store_in_memory == (mode == "precompute")
        # What a mode keeps is what it hands over: 16-bit steps, which the step scales.
        assert ds.element_spec["mel"].dtype == (tf.float32 if mode == "runtime" else tf.uint16), mode
        batches = [epoch(ds) for _ in range(2)]
        epochs[mode] = [epoch_clips(b) for b in batches]
        shapes[mode] = sorted((b["text_ids"].shape, b["mel"].shape) for b in batches[0])
        for b in batches[0]:  # padded with the log-mel floor past each clip's length
            frames = np.arange(b["mel"].shape[1])[None, :] >= b["mel_lengths"][:, None]
            assert np.all(b["mel"][frames] == np.float32(LOG_MEL_FLOOR)), mode
    reference = epochs["runtime"][0]
    assert len(reference) == len(items)
    for mode, (first, second) in epochs.items():
        assert_same_clips(first, reference, f"{mode}, epoch 1")
        assert_same_clips(second, reference, f"{mode}, epoch 2")
        assert shapes[mode] == shapes["runtime"], mode  # the planned bucket shapes

    # The cache keeps log-mels in the store's 16-bit steps: the two serve the very same values.
    def exact(clips):
        return sorted((ids, frames, mel.tobytes()) for ids, frames, mel in clips)

    assert exact(epochs["cache"][1]) == exact(epochs["precompute"][0]) != exact(reference)
    assert exact(epochs["precompute"][1]) == exact(epochs["streamed"][0])  # held or read, the same values


@pytest.mark.slow
def test_a_store_held_in_memory_serves_what_its_shards_do_padded_either_way(fixture_scan, tmp_path):
    # Validation (every clip, in a fixed order) with padding to each batch's longest clip and to the
    # planned buckets: held or read from the shards, the same clips with the very same values, each
    # batch as wide as planned (or as its longest clip), every epoch alike.
    tokenizer = tokenizer_for(fixture_scan, config().data)
    for padding in ({"bucket_by_length": False}, {"num_buckets": 2}):
        served = {}
        for mode in ("precompute", "streamed"):
            cfg = kept(config(batch_size=3, feature_cache_dir=str(tmp_path), **padding), mode)
            ds, info = build_pipeline(cfg, fixture_scan.items, tokenizer, training=False)
            assert info.store_in_memory == (mode == "precompute")
            batches = epoch(ds)
            for b in batches:
                width = b["mel"].shape[1]
                if info.batching == "dynamic":
                    assert width == b["mel_lengths"].max(), padding
                else:
                    assert width in info.mel_pad_lengths, padding
            assert [b["mel"].tobytes() for b in epoch(ds)] == [b["mel"].tobytes() for b in batches]
            served[mode] = sorted((ids, n, mel.tobytes()) for ids, n, mel in epoch_clips(batches))
        assert len(served["precompute"]) == len(fixture_scan.items)
        assert served["precompute"] == served["streamed"], padding


@pytest.mark.slow
def test_a_shard_damaged_on_disk_is_rebuilt_when_the_store_is_held_and_named_when_it_is_read(sample_scan, tmp_path):
    # A byte flipped inside a stored clip keeps the shard's size and index, so the start takes the
    # shard as complete; its record's checksum does not match. Read into memory at the start, the
    # store finds the shard, removes it and computes its clips again: the same batches as before.
    # Read from the shards, an epoch meets it mid-way: one line that says what and how to fix it.
    from xtts_cli.errors import from_tensorflow

    cfg = config(dataset=None, batch_size=4, feature_cache_dir=str(tmp_path))
    tokenizer = tokenizer_for(sample_scan, cfg.data)
    items = sample_scan.train
    ds, _ = build_pipeline(kept(cfg, "precompute"), items, tokenizer, training=False)
    before = [b["mel"].tobytes() for b in epoch(ds)]
    shard = sorted(tmp_path.glob("*/shard-*.tfrecord"))[0]
    data = bytearray(shard.read_bytes())
    data[100] ^= 0xFF  # inside the first clip's values (its record's data starts at byte 12)
    shard.write_bytes(bytes(data))

    ds, _ = build_pipeline(kept(cfg, "streamed"), items, tokenizer, training=False)
    with pytest.raises(tf.errors.DataLossError) as raised:
        epoch(ds)
    error = from_tensorflow(raised.value)
    assert error is not None and str(error).startswith("a record of the precompute feature store fails its checksum")
    assert "data.feature_cache_dir" in error.hint and "{{function_node" not in str(error)
    # As `xtts` says it: the damaged shard found among those read, named and removed, so that the next start
    # computes its clips alone (the line had named no file, and its fix was to throw the whole store away).
    from xtts_cli.data.feature_cache import damaged_store_error

    found = damaged_store_error(raised.value)
    assert (
        found is not None
        and str(found) == f"precompute: the feature store's shard {str(shard)!r} fails its checksum: removed"
    )
    assert found.hint.startswith("run the same command again: the next start computes its clips again")
    assert not shard.exists()
    shard.write_bytes(bytes(data))  # as it was, for the held store's own repair below

    notes: list[str] = []
    ds, info = build_pipeline(kept(cfg, "precompute"), items, tokenizer, training=False, note=notes.append)
    assert info.store_in_memory
    assert notes[0] == (
        f"precompute: 1 of the store's shards failed their checksums ({shard.name}); removed, to be computed again"
    )
    assert notes[1].startswith("precompute: computing the features of ") and len(notes) == 3
    assert shard.read_bytes() != bytes(data)  # written again, whole
    assert [b["mel"].tobytes() for b in epoch(ds)] == before


@pytest.mark.slow
def test_cache_and_store_keep_samples_as_16_bit_steps(fixture_scan, tmp_path):
    # The audio a data-GPU / model-GPU split hands over: kept as int16 steps of 1/32768, a 16-bit
    # file's own. A 16-bit clip at the training rate is kept exactly; any other (24-bit, float,
    # resampled, lossy) within half a step. Cache and store serve the very same samples.
    tokenizer = tokenizer_for(fixture_scan, config().data)
    exact_formats = sum(
        1
        for item in fixture_scan.items
        if item.audio.bit_depth in (8, 16) and item.audio.sample_rate == 22050 and item.audio.channels == 1
    )
    served = {}
    for mode in KEPT:
        cfg = kept(config(batch_size=1, feature_cache_dir=str(tmp_path / "features")), mode)
        ds, info = build_pipeline(cfg, fixture_scan.items, tokenizer, training=True, output="audio")
        assert info.store_in_memory == (mode == "precompute")
        batches = epoch(ds) if mode != "cache" else [epoch(ds), epoch(ds)][1]  # the second epoch: from memory
        clips = []
        for b in batches:
            assert b["audio"].dtype == np.float32
            samples = np.arange(b["audio"].shape[1])[None, :] >= b["audio_lengths"][:, None]
            assert np.all(b["audio"][samples] == 0.0), mode  # padded with silence
            n = int(b["audio_lengths"][0])
            clips.append((tuple(b["text_ids"][0, : b["text_lengths"][0]].tolist()), n, b["audio"][0, :n]))
        served[mode] = clips
    assert len(served["runtime"]) == len(fixture_scan.items)

    def exact(clips):
        return sorted((ids, n, audio.tobytes()) for ids, n, audio in clips)

    assert exact(served["cache"]) == exact(served["precompute"]) == exact(served["streamed"])
    left, same = list(served["runtime"]), 0
    for ids, n, audio in served["cache"]:
        match = next(
            (
                k
                for k, (their_ids, their_n, theirs) in enumerate(left)
                if (their_ids, their_n) == (ids, n) and np.abs(theirs - audio).max() <= 0.5 / 32768 + 1e-9
            ),
            None,
        )
        assert match is not None, f"no runtime clip within half a step of the cached one of {n} samples"
        same += left.pop(match)[2].tobytes() == audio.tobytes()
        assert np.all(np.abs(audio) <= 1.0) and np.all(np.round(audio * 32768) == audio * 32768)
    assert exact_formats <= same < len(served["runtime"])


def test_prefetch_to_device_only_for_a_gpu_target(sample_scan):
    items = sample_scan.items[:8]
    tokenizer = tokenizer_for(sample_scan, config().data)
    _, on_cpu = build_pipeline(config(dataset=None), items, tokenizer, training=True, device="/CPU:0")
    assert on_cpu.prefetch_device is None
    _, off = build_pipeline(
        config(dataset=None, prefetch_to_gpu=False), items, tokenizer, training=True, device="/GPU:0"
    )
    assert off.prefetch_device is None
    if tf.config.list_logical_devices("GPU"):
        ds, on_gpu = build_pipeline(config(dataset=None), items, tokenizer, training=True, device="/GPU:0")
        assert on_gpu.prefetch_device == "/GPU:0"
        assert "GPU" in next(iter(ds))["mel"].device


def test_options_follow_the_overlap_setting(sample_scan, tmp_path):
    items = sample_scan.items[:8]
    tokenizer = tokenizer_for(sample_scan, config().data)
    fast, info = build_pipeline(config(dataset=None), items, tokenizer, training=True)
    options = fast.options()
    assert options.deterministic is False and info.deterministic is False
    assert options.experimental_optimization.map_parallelization and options.experimental_optimization.parallel_batch
    ordered, info = build_pipeline(
        config(dataset=None, optimize_cpu_gpu_overlap=False, num_workers=2, prefetch_buffer_size=3),
        items,
        tokenizer,
        training=True,
    )
    assert ordered.options().deterministic is True and info.num_parallel_calls == 2
    # Prefetch off is off: tf.data's autotuner injects no prefetch of its own after the last stage.
    assert fast.options().experimental_optimization.inject_prefetch is not False
    unfetched, _ = build_pipeline(config(dataset=None, prefetch_buffer_size=0), items, tokenizer, training=True)
    assert unfetched.options().experimental_optimization.inject_prefetch is False
    # Runtime mode and cache mode read and decode files: a pool of their own, with threads beyond the
    # decoding ones for files being read. The store's epochs keep TensorFlow's shared pool.
    cores = len(os.sched_getaffinity(0))
    assert fast.options().threading.private_threadpool_size == cores + READS_IN_FLIGHT  # runtime mode
    cached, info = build_pipeline(config(dataset=None, preprocessing_mode="cache"), items, tokenizer, training=True)
    assert cached.options().threading.private_threadpool_size == cores + READS_IN_FLIGHT
    assert info.preprocessing_mode == "cache"
    stored, info = build_pipeline(
        config(dataset=None, preprocessing_mode="precompute", feature_cache_dir=str(tmp_path)),
        items,
        tokenizer,
        training=True,
    )
    assert stored.options().threading.private_threadpool_size is None and info.preprocessing_mode == "precompute"
    assert pipeline_threads(config(dataset=None, num_workers=cores + 3).data) == cores + 3 + READS_IN_FLIGHT
    # The precompute pass reads every file too.
    from xtts_cli.data.pipeline import _items_dataset

    passed = _items_dataset(items, config(dataset=None).data, "mel")
    assert passed.options().threading.private_threadpool_size == cores + READS_IN_FLIGHT


def test_unknown_characters_name_the_item(fixture_scan):
    persian = [item for item in fixture_scan.items if item.id == "persian"]
    english_only = Tokenizer.build(["hello world."], ["multilingual_cleaners"])
    with pytest.raises(
        XttsError, match=r"metadata.csv:14 \(persian\): text has characters not in the tokenizer vocabulary"
    ):
        build_pipeline(config(), persian, english_only, training=True)


def test_same_seed_same_batches_when_deterministic(sample_scan):
    cfg = config(dataset=None, optimize_cpu_gpu_overlap=False, num_workers=2)
    tokenizer = tokenizer_for(sample_scan, cfg.data)
    runs = [epoch(build_pipeline(cfg, sample_scan.items[:12], tokenizer, training=True)[0]) for _ in range(2)]
    assert len(runs[0]) == len(runs[1]) > 0
    for first, second in zip(*runs):
        for key in first:
            np.testing.assert_array_equal(first[key], second[key])
