"""The pipeline's plan without TensorFlow, and where features are kept (preprocessing_mode auto)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from xtts_cli.cli.app import app
from xtts_cli.config.schema import DataConfig
from xtts_cli.data.plan import buckets_started, decide_mode, plan_pipeline
from xtts_cli.data.scan import scan_dataset
from xtts_cli.data.text import Tokenizer
from xtts_cli.errors import XttsError

ROOT = Path(__file__).resolve().parent.parent


def test_the_plan_is_made_without_tensorflow() -> None:
    script = (
        "import sys\n"
        "from xtts_cli.config.schema import DataConfig\n"
        "from xtts_cli.data.plan import plan_pipeline\n"
        "from xtts_cli.data.scan import scan_dataset\n"
        "from xtts_cli.data.text import Tokenizer\n"
        "data = DataConfig(batch_size=4, num_buckets=3, cache_memory_limit='1GB', scan_cache=False)\n"
        "scan = scan_dataset(data)\n"
        "tokenizer = Tokenizer.build((i.training_text for i in scan.items), data.text_cleaners)\n"
        "plan = plan_pipeline(data, scan.train, tokenizer, training=True)\n"
        "assert 'tensorflow' not in sys.modules, 'the plan imported TensorFlow'\n"
        "print(plan.mode, plan.batches_per_epoch, plan.num_groups)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env=dict(os.environ, XDG_CACHE_HOME=os.environ.get("XDG_CACHE_HOME", "/tmp")),
    )
    assert out.returncode == 0, out.stderr
    mode, batches, groups = out.stdout.split()
    assert mode == "cache" and int(batches) > 0 and int(groups) == 3


@pytest.fixture(scope="module")
def sample():
    data = DataConfig(batch_size=4, num_buckets=3)
    scan = scan_dataset(data)
    return data, scan, Tokenizer.build((item.training_text for item in scan.items), data.text_cleaners)


def test_the_plan_counts_batches_shapes_and_the_empty_epoch(sample) -> None:
    data, scan, tokenizer = sample
    items = scan.train
    training = plan_pipeline(data, items, tokenizer, training=True, budget_bytes=10**12)
    sizes = training.group_sizes
    assert sum(sizes) == len(items) and training.num_groups == 3 and min(sizes) >= 4
    assert training.batches_per_epoch == sum(n // 4 for n in sizes)
    assert training.max_distinct_batch_shapes == 3 and training.drop_remainder
    for k in range(3):
        text_pad, frames = training.pad_shape(k)
        members = training.group(k)
        assert max(training.frames[i] for i in members) <= frames < training.buckets.boundaries[k]
        assert max(len(training.text_ids[i]) for i in members) == text_pad
    validation = plan_pipeline(data, items, tokenizer, training=False, budget_bytes=10**12)
    assert validation.batches_per_epoch == sum(-(-n // 4) for n in validation.group_sizes)
    assert validation.shuffle_buffer_size == 0 and not validation.drop_remainder
    assert training.decision.feature_bytes == sum(training.frames) * data.n_mels * 2  # 16-bit steps
    # A training epoch opens with one batch from each bucket that has any; validation reads in order.
    assert training.buckets_started == 3 and validation.buckets_started == 0
    assert buckets_started([2, 0, 5], training=True) == 2 and buckets_started([7], training=True) == 0

    few = plan_pipeline(DataConfig(batch_size=16, num_buckets=1), items[:5], tokenizer, training=True)
    with pytest.raises(XttsError) as error:
        few.require_batches()
    assert "5 training items give no full batch of 16" in str(error.value)
    assert error.value.hint == "set data.batch_size to 5 or lower, or add data"  # fewer buckets cannot help
    one = plan_pipeline(DataConfig(batch_size=2, num_buckets=1), items[:1], tokenizer, training=True)
    with pytest.raises(XttsError) as error:
        one.require_batches()
    assert error.value.hint == "set data.batch_size to 1, or add data"  # not "1 or lower": there is none lower
    with pytest.raises(XttsError, match="no training items"):
        plan_pipeline(data, [], tokenizer, training=True)


def test_unbucketed_padding_is_planned_as_a_shuffle_pads_it(sample) -> None:
    import itertools

    from xtts_cli.data.plan import expected_batch_max

    lengths = np.array([3, 7, 1, 9, 4, 4, 12, 5])
    for size in (1, 2, 3, 8, 9):
        drawn = [max(c) for c in itertools.combinations(lengths, min(size, len(lengths)))]
        assert expected_batch_max(lengths, size) == pytest.approx(np.mean(drawn))
    # Batches of 2 from the sample, each padded to its own longest clip: the plan's figure against
    # many real shuffles. Padding every clip to the longest of all (once the figure) read far lower.
    data, scan, tokenizer = sample
    data = data.model_copy(update={"bucket_by_length": False, "batch_size": 2})
    plan = plan_pipeline(data, scan.train, tokenizer, training=True, budget_bytes=10**12)
    frames = np.asarray(plan.frames)
    rng, real, padded = np.random.default_rng(0), 0, 0
    for _ in range(500):
        batches = rng.permutation(frames)[: len(frames) // 2 * 2].reshape(-1, 2)
        real, padded = real + batches.sum(), padded + 2 * batches.max(axis=1).sum()
    assert plan.padding_efficiency == pytest.approx(real / padded, abs=0.01)
    assert plan.padding_efficiency > frames.mean() / frames.max() + 0.1


def test_token_ids_are_one_array_read_by_clip(sample) -> None:
    data, scan, tokenizer = sample
    ids = plan_pipeline(data, scan.train, tokenizer, training=True).text_ids
    assert len(ids) == len(scan.train) and ids.flat.dtype == np.int32
    assert [ids[i].tolist() for i in range(len(ids))] == [tokenizer.encode(i.training_text) for i in scan.train]
    picked = [5, 0, 5, len(ids) - 1]
    taken = ids.take(picked)
    assert [taken[k].tolist() for k in range(len(taken))] == [ids[i].tolist() for i in picked]
    assert ids.take([]).flat.size == 0 and len(ids.take([])) == 0
    assert ids[-1].tolist() == ids[len(ids) - 1].tolist() and list(ids)[-1].tolist() == ids[-1].tolist()
    with pytest.raises(IndexError):
        ids[len(ids)]
    # A clip whose text the tokenizer cannot spell is named by its metadata line.
    narrow = Tokenizer(sorted(set(tokenizer.characters) - {"a"}), data.text_cleaners)
    with pytest.raises(XttsError) as error:
        plan_pipeline(data, scan.train, narrow, training=True)
    first = next(i for i in scan.train if "a" in tokenizer.clean(i.training_text))
    assert str(error.value).startswith(
        f"{Path(first.audio_path).parents[1] / first.source} ({first.id}): text has characters not in the tokenizer"
    )


def test_auto_caches_what_fits_and_precomputes_what_does_not() -> None:
    auto = DataConfig()
    assert auto.preprocessing_mode == "auto" and auto.cache_memory_limit == "auto"
    below = decide_mode(auto, 2 * 10**9, budget_bytes=8 * 10**9)
    assert below.mode == "cache" and "2.0 GB fit the 8.0 GB" in below.reason
    above = decide_mode(auto, 20 * 10**9, budget_bytes=8 * 10**9)
    assert above.mode == "precompute" and "20.0 GB exceed the 8.0 GB" in above.reason
    # An explicit limit, with a unit.
    limited = DataConfig(cache_memory_limit="512MiB")
    assert int(limited.cache_memory_limit) == 512 * 2**20
    assert decide_mode(limited, 600 * 2**20).mode == "precompute"
    assert decide_mode(limited, 400 * 2**20).mode == "cache"
    # The service's workers compute features themselves.
    assert decide_mode(DataConfig(service_address="localhost:5050"), 1).mode == "runtime"
    # Explicit modes are kept; an explicit cache over the budget is an error with the numbers.
    assert decide_mode(DataConfig(preprocessing_mode="runtime"), 10**12, budget_bytes=1).mode == "runtime"
    with pytest.raises(XttsError) as error:
        decide_mode(DataConfig(preprocessing_mode="cache", cache_memory_limit="1GB"), 3 * 10**9)
    message = str(error.value)
    assert "need 3.0 GB" in message and "1.0 GB budget" in message and "precompute" in error.value.hint
    # The auto budget is a quarter of the memory available now.
    assert decide_mode(auto, 1).budget_bytes > 0


def test_a_precompute_store_that_fits_the_budget_is_held_in_memory(sample) -> None:
    # Held: every item's 16-bit features padded to its bucket's width, against the same budget the
    # cache is weighed against; over it, or with no budget known, or for the tf.data service, the
    # store is read from its shards every epoch.
    data, scan, tokenizer = sample
    precompute = data.model_copy(update={"preprocessing_mode": "precompute"})
    plan = plan_pipeline(precompute, scan.train, tokenizer, training=True, budget_bytes=10**12)
    held = sum(len(plan.group(k)) * plan.pad_shape(k)[1] for k in range(plan.num_groups)) * data.n_mels * 2
    assert plan.held_store_bytes == held > plan.decision.feature_bytes  # padding counted
    assert plan.store_in_memory
    assert plan_pipeline(precompute, scan.train, tokenizer, training=True, budget_bytes=held).store_in_memory
    assert not plan_pipeline(precompute, scan.train, tokenizer, training=True, budget_bytes=held - 1).store_in_memory
    unknown = replace(plan, decision=replace(plan.decision, budget_bytes=None))
    assert not unknown.store_in_memory
    served = precompute.model_copy(update={"service_address": "localhost:5050"})
    assert not plan_pipeline(served, scan.train, tokenizer, training=True, budget_bytes=10**12).store_in_memory
    # Only the store is held: cache and runtime pipelines keep their own ways.
    assert not plan_pipeline(data, scan.train, tokenizer, training=True, budget_bytes=10**12).store_in_memory
    # Padded to each batch's longest clip: held padded to the bucket's longest.
    dynamic = precompute.model_copy(update={"bucket_by_length": False})
    flat = plan_pipeline(dynamic, scan.train, tokenizer, training=True, budget_bytes=10**12)
    assert flat.held_store_bytes == len(scan.train) * max(flat.frames) * data.n_mels * 2


def test_validate_refuses_an_explicit_cache_over_budget(runner, write_config) -> None:
    over = write_config("data:\n  preprocessing_mode: cache\n  cache_memory_limit: 1MB\n")
    result = runner.invoke(app, ["validate", "-c", str(over), "--json"])
    payload = json.loads(result.stdout)
    assert result.exit_code == 1
    (finding,) = [f for f in payload["findings"] if f["id"] == "data-cache-over-budget"]
    # In bytes where the megabytes would read the same ("need 1 MB of memory, over the 1 MB budget").
    assert finding["severity"] == "error" and re.search(
        r"need 1,\d{3},\d{3} bytes of memory, over the 1,000,000-byte budget", finding["message"]
    )
    assert (finding["fix"]["key"], finding["fix"]["value"]) == ("data.preprocessing_mode", "auto")
    fits = json.loads(
        runner.invoke(
            app, ["validate", "-c", str(write_config("data:\n  cache_memory_limit: 1MB\n", name="auto.yaml")), "--json"]
        ).stdout
    )
    assert fits["dataset"]["preprocessing_mode"] == "precompute"
    assert fits["dataset"]["feature_bytes_estimate"] > 10**6 == fits["dataset"]["cache_memory_limit_bytes"]


def test_a_data_model_split_is_weighed_as_the_audio_it_caches(runner, write_config) -> None:
    # Under a data-GPU / model-GPU split the pipeline hands over (and cache mode keeps) audio: hop_length
    # 16-bit samples a frame against n_mels 16-bit log-mel steps, 3.2x with the defaults.
    def report(text: str, name: str) -> dict:
        return json.loads(runner.invoke(app, ["validate", "-c", str(write_config(text, name=name)), "--json"]).stdout)

    mel = report("data:\n  preprocessing_mode: runtime\n", "mel.yaml")["dataset"]["feature_bytes_estimate"]
    budget = f"data:\n  preprocessing_mode: cache\n  cache_memory_limit: {2 * mel}\n"
    split = "devices:\n  logical_cpu_devices: 2\n  data_gpu: 0\n  model_gpu: 1\n"
    alone, beside = report(budget, "alone.yaml"), report(budget + split, "split.yaml")
    assert (
        beside["dataset"]["feature_bytes_estimate"] * 5 == mel * 16 == alone["dataset"]["feature_bytes_estimate"] * 16
    )
    assert not [f for f in alone["findings"] if f["id"] == "data-cache-over-budget"]
    (finding,) = [f for f in beside["findings"] if f["id"] == "data-cache-over-budget"]
    assert finding["severity"] == "error"


def synthetic_items(count: int, seed: int = 0, name: str = "c") -> list:
    from xtts_cli.data.scan import AudioInfo, DatasetItem

    rng = np.random.default_rng(seed)
    items = []
    for i in range(count):
        seconds = float(rng.uniform(1.0, 10.0))
        audio = AudioInfo(
            format="wav",
            codec="pcm16",
            sample_rate=22050,
            channels=1,
            num_samples=int(seconds * 22050),
            duration=seconds,
        )
        items.append(
            DatasetItem(
                id=f"{name}{i}",
                audio_path=f"/corpus/wavs/{name}{i}.wav",
                relative_path=f"wavs/{name}{i}.wav",
                text="a",
                speaker="s",
                source=f"metadata.csv:{i + 1}",
                size_bytes=1000 + i,
                mtime_ns=1,
                audio=audio,
            )
        )
    return items


@pytest.mark.slow
def test_the_precompute_store_is_a_few_length_ordered_shards_that_change_locally(tmp_path) -> None:
    from xtts_cli.data import feature_cache

    items = synthetic_items(13_100)
    planned = feature_cache.plan_shards(items, tmp_path)
    period = feature_cache.shard_period(len(items))
    sizes = [len(shard.users) for shard, _ in planned]
    assert sum(sizes) == len(items) and max(sizes) <= feature_cache.MAX_RUN * period
    assert len(items) / period / 3 < len(planned) < len(items) / period * 3  # about `period` clips per shard
    durations = [item.audio.num_samples for _, members in planned for item in members]
    assert durations == sorted(durations)  # shards hold clips of similar length
    names = {shard.path for shard, _ in planned}

    # A touched file renames its own shard only.
    touched = list(items)
    touched[77] = replace(touched[77], mtime_ns=2)
    assert len({shard.path for shard, _ in feature_cache.plan_shards(touched, tmp_path)} - names) == 1
    # A new clip moves at most the boundaries beside it: one or two shards renamed, the rest kept.
    grown = {
        shard.path for shard, _ in feature_cache.plan_shards(items + synthetic_items(1, seed=9, name="new"), tmp_path)
    }
    assert 1 <= len(grown - names) <= 2 and len(names - grown) <= 2
    # A clip a dataset weight repeats is stored once and used by each of its items.
    repeated = feature_cache.plan_shards(items[:40] + items[:40], tmp_path)
    assert sum(len(shard.users) for shard, _ in repeated) == 40
    assert all(len(users) == 2 for shard, _ in repeated for users in shard.users)


def test_stored_values_are_16_bit_steps() -> None:
    from xtts_cli.data.features import KEPT_VALUE_BYTES, LOG_MEL_FLOOR, MEL_STEPS_PER_UNIT, stored_steps

    assert KEPT_VALUE_BYTES == 2
    floor = np.float32(LOG_MEL_FLOOR)
    rng = np.random.default_rng(3)
    mel = (floor + rng.uniform(0.0, 20.0, size=(50, 80))).astype(np.float32)
    mel[0] = floor  # silent frames: the padding value itself
    mel[1, :3] = floor + np.float32([64.0, 70.0, 1e9])  # beyond any mel of audio in [-1, 1]
    stored = stored_steps(mel, "mel")
    assert stored.dtype == np.dtype("<u2") and stored.shape == mel.shape
    assert (stored[0] == 0).all()  # so decode_raw's zero padding reads back as the floor
    assert (stored[1, :3] == np.iinfo(np.uint16).max).all()
    back = stored.astype(np.float32) / MEL_STEPS_PER_UNIT + floor
    error = np.abs(back - mel)[2:]
    assert error.max() <= 0.5 / MEL_STEPS_PER_UNIT + 1e-5 and error.mean() > 0.1 / MEL_STEPS_PER_UNIT

    # Audio samples as int16 steps of 1/32768: a 16-bit file's own samples (k / 32768) exactly, any
    # other within half a step, full scale and beyond at the end steps, silence as zero.
    pcm16 = np.arange(-32768, 32768, 7, dtype=np.int16)
    assert (stored_steps(pcm16.astype(np.float32) / 32768, "audio") == pcm16).all()
    audio = rng.uniform(-1.0, 1.0, size=1000).astype(np.float32)
    audio[:4] = [0.0, 1.0, -1.0, 1.5]
    stored = stored_steps(audio, "audio")
    assert stored.dtype == np.dtype("<i2") and stored.shape == audio.shape
    assert stored[:4].tolist() == [0, 32767, -32768, 32767]
    error = np.abs(stored.astype(np.float32) / 32768 - audio)[4:]
    assert error.max() <= 0.5 / 32768 + 1e-9 and error.mean() > 0.1 / 32768


def test_the_store_removes_what_no_run_has_used_for_a_month(tmp_path) -> None:
    from xtts_cli.data.feature_cache import STALE_AFTER_DAYS, sweep_store

    store = tmp_path / "store"
    store.mkdir()
    now = 1_800_000_000.0
    day = 24 * 3600
    files = {
        "shard-used.tfrecord": 90 * day,  # old, but this run uses it: kept, marked as used now
        "shard-stale.tfrecord": (STALE_AFTER_DAYS + 1) * day,  # no run for over a month: removed
        "shard-recent.tfrecord": 2 * day,  # another run's (another dataset, the validation set): kept
        ".tmp-killed.tfrecord": 2 * day,  # a build killed mid-shard: removed
        ".tmp-writing.tfrecord": 60,  # another run writing now: kept
        "notes.txt": 90 * day,  # not the store's: kept
    }
    for name, age in files.items():
        path = store / name
        path.write_bytes(b"x")
        os.utime(path, (now - age, now - age))
    used = str(store / "shard-used.tfrecord")
    assert sweep_store(store, {used}, now=now) == 2
    assert sorted(p.name for p in store.iterdir()) == sorted(
        {"shard-used.tfrecord", "shard-recent.tfrecord", ".tmp-writing.tfrecord", "notes.txt"}
    )
    assert os.stat(used).st_mtime == now
    # A store this run cannot write to loses nothing and raises nothing.
    assert sweep_store(store / "missing", {used}, now=now) == 0


def test_the_stores_of_other_settings_go_the_same_way(tmp_path) -> None:
    from xtts_cli.data.feature_cache import STALE_AFTER_DAYS, sweep_other_settings

    now = 1_800_000_000.0
    old = now - (STALE_AFTER_DAYS + 1) * 24 * 3600
    current, retired, mixed = (tmp_path / name for name in ("0123456789abcdef", "fedcba9876543210", "00112233445566aa"))
    mine = tmp_path / "my-notes"  # not a store's folder: never looked at
    for folder in (current, retired, mixed, mine):
        folder.mkdir()
    files = {
        current / "shard-a.tfrecord": old,  # the current store: sweep_store's business, not this
        retired / "shard-b.tfrecord": old,  # an earlier version's store, unused for a month
        retired / "shard-c.tfrecord": old,
        mixed / "shard-d.tfrecord": old,
        mixed / "shard-e.tfrecord": now - 3600,  # another config's store, used an hour ago
        mine / "shard-f.tfrecord": old,
    }
    for path, mtime in files.items():
        path.write_bytes(b"x")
        os.utime(path, (mtime, mtime))
    assert sweep_other_settings(current, now=now) == 3
    assert not retired.exists()  # emptied, so removed
    assert sorted(p.name for p in mixed.iterdir()) == ["shard-e.tfrecord"]
    assert (current / "shard-a.tfrecord").exists() and (mine / "shard-f.tfrecord").exists()
    assert sweep_other_settings(tmp_path / "missing" / "0123456789abcdef", now=now) == 0


@pytest.mark.parametrize(
    ("dataset", "language", "letters"),
    [
        ("xtts_cli/data/sample", "en", "abcdefghijklmnopqrstuvwxyz"),  # no "j" nor "z" in its transcripts
        # And its own comma, semicolon and question mark, none of them in the transcripts: ، ؛ ؟
        ("tests/data/persian", "fa", "\u0622\u0627\u0628\u067e\u062a\u0698\u06a9\u06af\u06cc\u060c\u061b\u061f"),
        ("xtts_cli/data/sample", "de", "jz\u00e4\u00f6\u00fc\u00df"),  # English transcripts called German: äöüß
    ],
)
def test_a_characters_vocabulary_holds_its_languages_whole_alphabet(dataset, language, letters):
    from xtts_cli.config.loading import build_config
    from xtts_cli.data.run_data import prepare

    root = Path(__file__).resolve().parents[1]
    config = build_config({"data": {"dataset_path": str(root / dataset), "language": language}}, "x.yaml")
    tokenizer = prepare(config).tokenizer
    assert set(letters) <= set(tokenizer.characters)
    words = {
        "en": ["jazz"],
        # ژاله; حتماً (tanvin), تأخیر, مؤسسه and مدرسهٔ (a hamza: ۀ is read as ه and ٔ), however rare in the data
        "fa": [
            "\u0698\u0627\u0644\u0647",
            "\u062d\u062a\u0645\u0627\u064b",
            "\u062a\u0623\u062e\u06cc\u0631",
            "\u0645\u0624\u0633\u0633\u0647",
            "\u0645\u062f\u0631\u0633\u06c0",
        ],
        "de": ["Stra\u00dfe \u00dcbergr\u00f6\u00dfe"],
    }[language]
    for word in words:
        assert tokenizer.encode(word, language), word


def test_a_phonemes_run_saved_before_meets_its_transcripts_as_espeak_read_them(tmp_path) -> None:
    # The scan now phonemises "Henry VIII paid $5." as words read first; a run whose vocabulary was saved
    # before (version 2) learnt espeak-ng's own reading, and must meet that again when it resumes.
    from xtts_cli.data.phonemes import phonemize
    from xtts_cli.data.plan import encode_texts, prepared_texts
    from xtts_cli.data.scan import AudioInfo, DatasetItem

    text, words = "Henry VIII paid $5.", "henry the eighth paid five dollars."
    audio = AudioInfo(format="wav", codec="pcm16", sample_rate=22050, channels=1, num_samples=22050, duration=1.0)
    item = DatasetItem(
        id="a", audio_path="/c/a.wav", relative_path="a.wav", text=text, speaker="s", source="metadata.csv:1",
        size_bytes=1, mtime_ns=1, audio=audio, language="en-us", phonemes=phonemize([words], "en-us")[0],
    )  # fmt: skip
    espeak = phonemize([text.lower()], "en-us")[0]
    new = Tokenizer.build(
        [item.phonemes], ["english_cleaners"], frontend="phonemes", languages=["en-us"], numbers="words"
    )
    assert prepared_texts([item], new) == [item.phonemes]
    saved = Tokenizer.build([espeak], ["english_cleaners"], frontend="phonemes", languages=["en-us"]).to_json()
    saved["version"], saved["numbers"] = 2, "words"  # as such a run wrote it
    (tmp_path / "vocab.json").write_text(json.dumps(saved), "utf-8")
    before = Tokenizer.load(tmp_path / "vocab.json")
    assert prepared_texts([item], before) == [espeak]
    assert encode_texts([item], before).lengths.tolist() == [len(espeak) + 2]  # every symbol its own
