"""The tf.data input pipeline: scanned items -> padded, bucketed batches, with no Python in the loop.

Stages (each a graph op, so tf.data runs them on its own C++ threads):

    items (paths, header facts, token ids), split into one source per length bucket: the scan's
    lengths are exact, so each clip's bucket is known before it is decoded (see bucketing.py)
      -> [shuffle]                       the bucket's clips in full (their places: cheap)
      -> read + decode + resample + mel  parallel map (cache mode: kept as 16-bit steps)
         or, precompute: the store's shards that hold the bucket's clips (few: a shard holds clips
         of similar length), in a fresh order, four read at once and interleaved, the bucket's own
         records kept, a shuffle buffer of records, batched as records (see feature_cache.py)
      -> [cache]                         cache mode: features kept in memory after epoch 1
      -> [shuffle]                       cache mode: shuffle after the cache, fresh each epoch
      -> [prefetch pipeline_buffer_size]
      -> padded_batch straight to the bucket's planned lengths
    sources interleaved (random order when training)
      [-> records -> features]           precompute: one map (one batch at a time, on its own
                                         thread), the records' 16-bit log-mels (or samples)
                                         decoded and padded to the bucket's lengths a batch at a time
      [-> tf.data service]               training with data.service_address: everything above runs on
                                         the service's workers (see service.py)
      -> prefetch [-> prefetch_to_device]

Batch (output="mel"):
    text_ids    int32   [B, T]     the language's and the speaker's index (text.CONDITIONING_IDS), then
                                   the text's symbols; 0-padded (Tokenizer.PAD_ID)
    text_lengths int32  [B]
    mel         float32 [B, F, n_mels]  padded with log(1e-5) (runtime mode), or
                uint16  [B, F, n_mels]  16-bit steps, 0-padded (cache and precompute modes: what
                                        they keep, `features.kept_steps`)
    mel_lengths int32   [B]
The step scales 16-bit steps to float32, takes the conditioning ids off the text and crops the
speaker reference (ref_mel / ref_lengths) from mel (`features.with_reference`, which calls
`features.as_values`), on the model's device.
Batch (output="audio"): text_ids, text_lengths, audio float32 [B, S] (0-padded; int16 samples in
cache and precompute modes), audio_lengths; S is padded so that 1 + S // hop equals the bucket's
mel length, for `features.log_mel_batch`.
"""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Optional, Union

import numpy as np
import tensorflow as tf
from pydantic import BaseModel, Field

from xtts_cli.config.loading import data_variant
from xtts_cli.config.schema import DataConfig, XttsConfig
from xtts_cli.data.audio import decode_audio
from xtts_cli.data.audio_codecs import CODECS
from xtts_cli.data.bucketing import BucketPlan
from xtts_cli.data.feature_cache import (
    CorruptShards,
    PrecomputeResult,
    Shard,
    corrupt_shards,
    note_streamed,
    precompute_features,
)
from xtts_cli.data.features import KEPT_VALUE_BYTES, LOG_MEL_FLOOR, MelFeatures, kept_steps, log_mel
from xtts_cli.data.host_memory import keep_freed_memory
from xtts_cli.data.plan import (
    AudioFormats,
    Output,
    PipelinePlan,
    TokenIds,
    audio_formats,
    buckets_started,
    plan_pipeline,
    source_columns,
    tokenizer_for,
)
from xtts_cli.data.scan import DatasetItem
from xtts_cli.data.text import CONDITIONING_IDS, Tokenizer
from xtts_cli.errors import XttsError
from xtts_cli.host import usable_cpu_count

__all__ = [
    "AudioFormats",
    "PipelineInfo",
    "PipelinePlan",
    "audio_formats",
    "build_pipeline",
    "decoded_audio_dataset",
    "feature_stage",
    "parallel_calls",
    "plan_pipeline",
    "source_columns",
    "tokenizer_for",
    "write_store",
]


class PipelineInfo(BaseModel):
    """What the pipeline will do, for reports and for the trainer's retrace budget."""

    output: Output = Field(
        description="What a batch holds per clip: mel (features) or audio (a vocoder's, or the data device's to featurize)."
    )
    training: bool = Field(description="The training pipeline (shuffled, repeated) rather than the validation one.")
    preprocessing_mode: str = Field(description="Resolved: runtime, cache or precompute (never auto).")
    preprocessing_reason: str = Field("", description="Why: set in the config, or what `auto` weighed.")
    feature_bytes_estimate: int = Field(
        0,
        description="Bytes of this pipeline's features as kept (16-bit log-mels or samples), from the headers: "
        "its own clips (a training pipeline's: the training split), which `preprocessing_mode: auto` weighs.",
    )
    cache_memory_limit_bytes: Optional[int] = Field(
        None, description="The cache budget; empty: the machine did not say."
    )
    tf_native: bool = Field(description="False: the tf.numpy_function baseline.")
    num_items: int = Field(description="Clips it is built from.")
    batch_size: int = Field(description="Clips a batch.")
    drop_remainder: bool = Field(
        description="A last, smaller batch is dropped (every batch the same size: fewer shapes to trace)."
    )
    batching: Literal["bucketed", "fixed", "dynamic"] = Field(
        description="bucketed (by length), fixed (every batch padded to the longest allowed) or dynamic."
    )
    bucket_boundaries: list[int] = Field(
        default_factory=list, description="Exclusive upper mel-frame bound of each bucket."
    )
    mel_pad_lengths: list[int] = Field(default_factory=list, description="Mel frames each bucket pads to.")
    text_pad_lengths: list[int] = Field(default_factory=list, description="Text length each bucket pads to.")
    max_distinct_batch_shapes: Optional[int] = Field(
        description="Upper bound on distinct batch shapes in an epoch (compiled-step traces); empty: unbounded."
    )
    padding_efficiency: float = Field(
        description="Real mel frames / padded mel frames, from the scanned lengths (before any silence trimming)."
    )
    batches_per_epoch: int = Field(description="Batches an epoch gives.")
    bucket_batches: list[int] = Field(
        description="Batches each source (length bucket) gives per epoch; a training epoch draws one from each "
        "that has any first, so every bucket starts in the epoch's first batches."
    )
    codecs: list[str] = Field(description="Audio codecs among its clips (wav, flac, ...).")
    num_parallel_calls: Union[int, Literal["auto"]] = Field(
        description="Parallel decode and feature calls (data.num_workers; auto: tf.data's AUTOTUNE)."
    )
    prefetch_buffer_size: Union[int, Literal["auto"]] = Field(
        description="Batches prepared ahead (data.prefetch_buffer_size; auto: AUTOTUNE)."
    )
    shuffle_buffer_size: int = Field(description="Per source (bucket): at most the clips it holds.")
    deterministic: bool = Field(description="Elements come out in order (false lets a slow clip be overtaken).")
    prefetch_device: Optional[str] = Field(None, description="Device the last stage prefetches onto; empty: host.")
    feature_cache: Optional[PrecomputeResult] = Field(
        None, description="Precompute: the feature store used; null otherwise."
    )
    store_in_memory: bool = Field(
        False,
        description="Precompute: the store was read into memory (it fits data.cache_memory_limit) and batches are "
        "gathered from there; false: read from its shards every epoch.",
    )
    store_in_memory_bytes: int = Field(0, description="Bytes the store takes in memory, padded per bucket.")
    service_address: Optional[str] = Field(None, description="tf.data service the batches come from; empty: made here.")
    service_sharding: Optional[str] = Field(
        None, description="dynamic or off; with off an epoch holds batches_per_epoch batches per worker."
    )
    service_job: Optional[str] = Field(
        None, description="The tf.data service job name (pipeline fingerprint + session)."
    )

    @property
    def buckets_started(self) -> int:
        """See `plan.buckets_started`."""
        return buckets_started(self.bucket_batches, training=self.training)


def parallel_calls(value):
    """A `data.num_workers` / `prefetch_buffer_size` value for tf.data: `auto` is AUTOTUNE."""

    return tf.data.AUTOTUNE if value == "auto" else value


# Threads a runtime-mode pipeline has beyond its decoding ones: a map call waiting on a file read
# holds its thread, and the core it left idle needs another (see `pipeline_threads`).
READS_IN_FLIGHT = 6


def pipeline_threads(data: DataConfig) -> int:
    """The thread pool of a pipeline that decodes clips (runtime mode, cache mode, the precompute
    pass): a thread per core (or per `data.num_workers`) for the decode and `READS_IN_FLIGHT` more.
    In TensorFlow's shared pool (a thread per core, which the training step's host work also uses) a
    clip read from a cold disk held a decoding thread for the read: 13,100 distinct WAV files dropped
    from the page cache read 1,028-1,057 clips/s in runtime mode, against 1,294-1,315 with a pool of
    8 on this 2-core machine; from the page cache 1,313-1,332 against 1,431-1,452. The precompute pass
    over 13,100 files: 14.2-15.2 s against 17.0-17.1 s cold, 12.5-12.8 s against 13.6 s cached
    (benchmarks/cold_disk.py). Cache mode's first epoch at 13,100 clips (page cache warm; three pairs
    of fresh processes, each right after a runtime-mode one, the order alternated): 1,078-1,259
    clips/s against 1,015-1,205, +5 % on average; its steady epochs, from memory (float32 values
    then), 36,708-36,994 against 41,242-42,224, far above what a training step draws. The store's epochs keep the shared
    pool (they decode no clip): with the pool of 8 they read 11,028 clips/s against 12,177 (one full
    run of benchmarks/data_scale.py each way)."""
    cores = usable_cpu_count()  # the cores this process may use (affinity, and a container's quota)
    workers = data.num_workers if isinstance(data.num_workers, int) else 0
    return max(cores, workers) + READS_IN_FLIGHT


def _ragged(ids: TokenIds):

    return tf.RaggedTensor.from_row_splits(ids.flat, ids.splits, validate=False)


def _source_spec():

    return {
        "path": tf.string,
        "codec": tf.int32,
        "rate": tf.int64,
        "channels": tf.int32,
        "offset": tf.int64,
        "num_samples": tf.int64,
    }


def feature_stage(data: DataConfig, output: Output, formats: AudioFormats, decoder: Optional[str] = None):
    """element {path, codec, rate, channels, offset, num_samples} -> float32 mel [F, n_mels] or audio [S].

    TF-native (graph ops) unless `data.use_tf_native_loading` is false, which selects the
    tf.numpy_function baseline. `formats`: those of the clips the stage will be fed. `decoder`: what
    decodes compressed audio (`audio.compressed_decoder()` by default).
    """

    codecs = formats.codecs
    if not data.use_tf_native_loading:
        from xtts_cli.data.numpy_baseline import make_loader

        loader = make_loader(data, output)
        shape = [None, data.n_mels] if output == "mel" else [None]

        def baseline(element):
            args = [element[k] for k in ("path", "codec", "rate", "channels", "offset", "num_samples")]
            features = tf.numpy_function(loader, args, tf.float32, stateful=False)
            return tf.ensure_shape(features, shape)

        return baseline

    return _native_stage(
        MelFeatures.of(data), output, tuple(codecs), formats.rate, formats.channels, tuple(formats.rates), decoder
    )


# One traced stage per mel identity, output and set of formats, shared by every pipeline the process
# builds (a run's training and validation pipelines, each pass of a profile): the decode branches of
# nine codecs at three rates took 0.5 s of CPU to trace, each time (2-core AMD EPYC). Keyed on
# `MelFeatures`, the settings that define a frame (the feature store's fingerprint), and handed
# those alone: a setting the stage read beyond them would fail its trace, not share a stale stage.
@functools.lru_cache(maxsize=8)
def _native_stage(
    features: MelFeatures,
    output: Output,
    codecs: tuple[str, ...],
    rate: Optional[int],
    channels: Optional[int],
    rates: tuple[int, ...],
    decoder: Optional[str],
):
    # Traced once and called from every bucket's map: with one source per bucket, tracing the
    # decode branches per source multiplied pipeline start-up time by the number of buckets.
    @tf.function(
        input_signature=[{name: tf.TensorSpec([], dtype) for name, dtype in _source_spec().items()}], autograph=False
    )
    def native(element):
        contents = tf.io.read_file(element["path"])
        audio = decode_audio(
            contents,
            element["codec"],
            rate or element["rate"],
            channels or element["channels"],
            element["offset"],
            element["num_samples"],
            features,
            codecs,
            rates,
            decoder,
            path=element["path"],
        )
        return log_mel(audio, features) if output == "mel" else audio

    return lambda element: native({name: element[name] for name in _source_spec()})


def _items_dataset(items: Sequence[DatasetItem], data: DataConfig, output: Output):
    """Features of `items`, in order (used by precompute and by `decoded_audio_dataset`)."""

    formats = audio_formats(items)
    source = source_columns(items, formats.codecs if data.use_tf_native_loading else CODECS)
    stage = feature_stage(data, output, formats)
    options = tf.data.Options()
    options.threading.private_threadpool_size = pipeline_threads(data)  # it reads every file (see there)
    return (
        tf.data.Dataset.from_tensor_slices(source)
        .map(stage, num_parallel_calls=parallel_calls(data.num_workers), deterministic=True)
        .with_options(options)
    )


def _check_device(device: Optional[str], data: DataConfig) -> Optional[str]:
    if not device or not data.prefetch_to_gpu:
        return None
    # On a CPU target the batches are already in host memory: a device prefetch would only copy.
    return device if "GPU" in device.upper() else None


def build_pipeline(
    config: XttsConfig,
    items: Sequence[DatasetItem],
    tokenizer: Tokenizer,
    *,
    training: bool,
    output: Output = "mel",
    device: Optional[str] = None,
    service_session: Optional[str] = None,
    plan: Optional[PipelinePlan] = None,
    note: Optional[Callable[[str], None]] = None,
):
    """(tf.data.Dataset of batch dicts, PipelineInfo). See the module docstring for the batch layout.

    `note`: told, in a line, of work the user waits for (a precompute pass).

    `device`: the model's device (e.g. "/GPU:1"); with `data.prefetch_to_gpu` the pipeline ends
    with a prefetch onto it. CPU targets get no device prefetch.
    With `data.service_address`, a training pipeline's batches are made by the tf.data service;
    consumers that pass the same `service_session` (and build the same pipeline) share one job and
    split its batches, otherwise the pipeline gets a job of its own (`service.job_name`).
    `plan`: the plan of these items (`plan_pipeline`), when the caller already made it; it holds
    the batching and where features are kept (`preprocessing_mode` resolved).
    """

    keep_freed_memory()  # glibc keeps the pipeline's freed buffers for reuse (see host_memory.py)
    data = config.data
    if plan is None:
        plan = plan_pipeline(data, items, tokenizer, training=training, output=output)
    items = list(plan.items)
    service = _service_of(data, training)
    if service:
        from xtts_cli.data.audio_codecs import compressed_decoder
        from xtts_cli.data.service import check_servable

        check_servable(plan.formats.codecs, plan.mode, decoder=compressed_decoder())
    if not data.use_tf_native_loading:
        from xtts_cli.data.numpy_baseline import require_decoders

        require_decoders(set(plan.formats.codecs))
    groups = [plan.group(k) for k in range(plan.num_groups)]
    shapes_of = [_padded_shapes(data, output, plan.buckets, k) for k in range(len(groups))]
    store = _FeatureStore.open(plan, items, output, shapes_of, training=training, note=note)
    epochs = _Epochs(
        plan=plan,
        items=items,
        output=output,
        training=training,
        groups=groups,
        shapes_of=shapes_of,
        store=store,
        split_by_service=bool(service) and data.service_sharding == "dynamic",
    )
    if service and data.service_sharding == "off":
        # Every worker makes the whole epoch. Seeded from data.seed they would all shuffle alike and
        # the trainer would see near-identical batches once per worker; the service's guide asks for
        # non-deterministic shuffles in this mode. The seed is read from the clock when a worker
        # starts its epoch (inside flat_map, so on the worker, not once here).
        ds = tf.data.Dataset.range(1).map(_worker_seed).flat_map(epochs.assemble)
    else:
        ds = epochs.assemble(data.seed)
    ds = ds.with_options(_pipeline_options(data, plan.mode))  # before the service: they travel with the graph
    job = None
    if service:
        ds, job = _through_service(ds, data, service, items, tokenizer, output, training, service_session)
    ds, prefetch_device = _prefetched(ds, data, device)
    if len(items) >= _FREEZE_FROM_CLIPS:
        _freeze_startup_objects()
    return ds, _pipeline_info(plan, items, output, training, epochs, store, prefetch_device, service, job)


def write_store(
    data: DataConfig, items: Sequence[DatasetItem], output: Output, *, training: bool, note=None
) -> tuple[PrecomputeResult, list[Shard]]:
    """The precompute store of `items` on disk, written where shards are missing (a pass `note`
    hears of), found where they are complete: the one place the input pipeline writes to disk."""
    return precompute_features(
        data,
        items,
        output,
        lambda todo: _items_dataset(todo, data, output),
        note=note,
        what="clip" if training else "validation clip",
    )


def _pipeline_info(plan, items, output, training, epochs, store, prefetch_device, service, job) -> PipelineInfo:
    data = plan.data
    return PipelineInfo(
        output=output,
        training=training,
        preprocessing_mode=plan.mode,
        preprocessing_reason=plan.decision.reason,
        feature_bytes_estimate=plan.decision.feature_bytes,
        cache_memory_limit_bytes=plan.decision.budget_bytes,
        tf_native=data.use_tf_native_loading,
        num_items=len(items),
        batch_size=data.batch_size,
        drop_remainder=training,
        batching=plan.batching,
        bucket_boundaries=plan.buckets.boundaries if plan.buckets else [],
        mel_pad_lengths=plan.buckets.length_pads if plan.buckets else [],
        text_pad_lengths=plan.buckets.text_pads if plan.buckets else [],
        max_distinct_batch_shapes=plan.max_distinct_batch_shapes,
        padding_efficiency=plan.padding_efficiency,
        batches_per_epoch=plan.batches_per_epoch,
        bucket_batches=epochs.counts,
        codecs=plan.formats.codecs,
        num_parallel_calls=data.num_workers,
        prefetch_buffer_size=data.prefetch_buffer_size,
        shuffle_buffer_size=plan.shuffle_buffer_size,
        deterministic=not data.optimize_cpu_gpu_overlap,
        prefetch_device=prefetch_device,
        feature_cache=store.precomputed,
        store_in_memory=store.held is not None,
        store_in_memory_bytes=store.held.nbytes if store.held is not None else 0,
        service_address=service,
        service_sharding=data.service_sharding if service else None,
        service_job=job,
    )


def _service_of(data: DataConfig, training: bool) -> Optional[str]:
    """The tf.data service a training pipeline's batches come from, checked now (not after a
    precompute pass that may take an hour). Validation stays local: it is small, must see every
    clip in a fixed order (dynamic sharding drops each worker's partial batches), and the trainer
    stops reading it after max_val_batches, which would leave a service job making batches nobody reads."""
    service = data.service_address if training else None
    if service and not data.use_tf_native_loading:
        raise XttsError(
            f"data.service_address is {service!r} but data.use_tf_native_loading is false: the tf.data service "
            "runs graph ops only, and the tf.numpy_function path is Python; set data.use_tf_native_loading: true"
        )
    if service:
        from xtts_cli.data.dispatcher import check_reachable

        check_reachable(service)
    return service


@dataclass
class _FeatureStore:
    """Precompute mode's store: its shards on disk, and in memory when the plan holds it there."""

    precomputed: Optional[PrecomputeResult] = None
    shards: Optional[list[Shard]] = None
    held: Optional[_HeldStore] = None
    texts: Any = None  # token ids of every item, for the store's batch-level lookup

    @classmethod
    def open(cls, plan: PipelinePlan, items, output: Output, shapes_of, *, training: bool, note) -> _FeatureStore:
        if plan.mode != "precompute":
            return cls()
        data = plan.data

        def precompute():
            return write_store(data, items, output, training=training, note=note)

        precomputed, shards = precompute()
        texts = _ragged(plan.text_ids)  # built once for all buckets
        held = None
        if plan.store_in_memory:
            try:
                held = _HeldStore(plan, shards, shapes_of, texts)
            except CorruptShards as error:
                # A shard damaged on disk since it was written: removed, computed again, read again.
                for path in error.paths:
                    os.unlink(path)
                if note is not None:
                    note(
                        f"precompute: {len(error.paths)} of the store's shards failed their checksums "
                        f"({', '.join(os.path.basename(path) for path in error.paths)}); removed, to be computed again"
                    )
                precomputed, shards = precompute()
                held = _HeldStore(plan, shards, shapes_of, texts)
        return cls(precomputed, shards, held, texts)


class _Epochs:
    """The batches of one epoch, from each length bucket's source."""

    def __init__(self, *, plan, items, output, training, groups, shapes_of, store, split_by_service) -> None:
        self.plan, self.items, self.output, self.training = plan, items, output, training
        self.groups, self.shapes_of, self.store = groups, shapes_of, store
        self.split_by_service = split_by_service
        data = plan.data
        self.counts = [len(g) // data.batch_size if training else -(-len(g) // data.batch_size) for g in groups]
        # Built once for all sources: the decode stage is a tf.function traced a single time.
        self.stage = None if store.precomputed else feature_stage(data, output, plan.formats)

    def _source(self, k: int, seed):
        plan, store, data, shapes = self.plan, self.store, self.plan.data, self.shapes_of[k]
        if store.held is not None:
            return store.held.batches(k, training=self.training, seed=seed + k)
        if store.shards is not None:
            return _stored_batches(plan, store.shards, k, training=self.training, seed=seed + k)
        group = self.groups[k]
        elements = _group_elements(
            data,
            plan.mode,
            self.output,
            self.stage,
            plan.formats.codecs,
            [self.items[i] for i in group],
            plan.text_ids.take(group),
            training=self.training,
            deterministic=not data.optimize_cpu_gpu_overlap,
            seed=seed + k,
            max_length=shapes[self.output][0] if shapes else None,
            split_by_service=self.split_by_service,
        )
        return _pad_batches(elements, data, self.output, shapes, training=self.training)

    def assemble(self, seed):
        """The batches of one epoch; `seed` (an int, or a tensor on service workers) seeds the shuffles."""

        sources = [self._source(k, seed) for k in range(len(self.groups))]
        if len(sources) == 1:
            return self._decoded(sources[0])
        # One source per bucket, visited in random order (training) or one after the other
        # (validation), each exactly as often as it has batches.
        counts = self.counts
        order = np.repeat(np.arange(len(sources), dtype=np.int64), counts)
        choices = tf.data.Dataset.from_tensor_slices(order)
        if self.training:
            # Every bucket once first (in random order), then the rest at random: a bucket starts
            # (opens its files, fills its shuffle buffer) in the epoch's first batches, not whenever
            # chance first picks it, which stalled a batch mid-epoch for as long as that start took
            # (up to 170 ms in a cached first epoch, measured).
            present = np.flatnonzero(np.asarray(counts) > 0).astype(np.int64)
            rest = np.repeat(np.arange(len(sources), dtype=np.int64), np.maximum(np.asarray(counts) - 1, 0))
            # Both drawn as the epoch starts, as one tensor (seeded apart from the buckets' `seed +
            # k`): a shuffle buffer of the rest, filled when the starts ran out, held up that batch
            # by 5-6 ms at 131,000 clips (7,771 choices), against about 1 ms for a batch.
            choices = _permuted([present, rest], seed + len(sources))
        # A clip skipped by ignore_errors leaves its bucket a batch short: move on, don't stop.
        return self._decoded(tf.data.Dataset.choose_from_datasets(sources, choices, stop_on_empty_dataset=False))

    def _decoded(self, ds):
        # The cache's batches hold its 16-bit steps as they are (see `_group_elements`): the step
        # scales them (`features.as_values`).
        store = self.store
        if store.shards is None:
            return ds
        # One batch at a time, as below: the held store's gather.
        if store.held is not None:
            return ds.map(store.held.to_batch, num_parallel_calls=1)
        to_batch = _decode_stored(self.plan, self.shapes_of, store.texts)
        # One batch at a time, on a thread of its own (a parallel map of width 1: tf.data's
        # map_parallelization leaves it so). Decoding batches in parallel made their completions
        # interleave at random: batch-latency CV 0.52-0.62 (3 runs) against 0.39-0.40 (2 runs) with
        # one call at a time, at 12,400-13,700 against 10,400-10,800 clips/s (131,000 clips, 800
        # batches timed per run); a training step draws far fewer.
        return ds.map(to_batch, num_parallel_calls=1)


def _pipeline_options(data: DataConfig, mode: str):

    options = tf.data.Options()
    options.deterministic = not data.optimize_cpu_gpu_overlap
    options.experimental_optimization.map_parallelization = data.optimize_cpu_gpu_overlap
    options.experimental_optimization.parallel_batch = data.optimize_cpu_gpu_overlap
    # AUTOTUNE values need the autotuner; with fixed numbers it only resizes buffers, which is
    # part of what optimize_cpu_gpu_overlap asks for.
    options.autotune.enabled = data.optimize_cpu_gpu_overlap or "auto" in (data.num_workers, data.prefetch_buffer_size)
    # 0 asks for no batch made ahead of the step. The autotuner injects a prefetch of its own after the
    # last stage (inject_prefetch, on by default), which had kept prefetch on: a tiny-model step's data
    # wait 0.1 % with it, 22-28 % without (and 0.4-1.1 % at auto), runtime-mode FLAC, one worker.
    if data.prefetch_buffer_size == 0:
        options.experimental_optimization.inject_prefetch = False
    if mode != "precompute":  # clips read and decoded (see `pipeline_threads`)
        options.threading.private_threadpool_size = pipeline_threads(data)
    return options


def _through_service(ds, data: DataConfig, service: str, items, tokenizer, output, training, session):
    """(the batches as the tf.data service makes them, its job's name)."""

    from xtts_cli.data import service as data_service

    job = data_service.job_name(
        data_service.pipeline_fingerprint(
            data,
            output=output,
            training=training,
            audio_paths=[item.audio_path for item in items],
            # Symbols, then each language and speaker: the batches' conditioning ids index them.
            vocabulary=[*tokenizer.characters, *tokenizer.languages, *tokenizer.speakers],
        ),
        session,
    )
    ds = data_service.distribute_batches(ds, service, sharding=data.service_sharding, job=job)
    if session:
        # Consumers sharing the job already receive disjoint batches: a tf.distribute auto-shard
        # on top (multi-worker training) would keep only 1/N of each consumer's share.
        unsharded = tf.data.Options()
        unsharded.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
        ds = ds.with_options(unsharded)
    return ds, job


def _prefetched(ds, data: DataConfig, device: Optional[str]):
    """(the pipeline with its host prefetch and, onto a GPU, its device prefetch; that device or None)."""

    if data.prefetch_buffer_size != 0:
        ds = ds.prefetch(parallel_calls(data.prefetch_buffer_size))
    prefetch_device = _check_device(device, data)
    if prefetch_device:
        if data.enhanced_gpu_prefetch and data.prefetch_buffer_size != 0:
            buffer = None if data.prefetch_buffer_size == "auto" else data.prefetch_buffer_size
        else:
            buffer = 1
        ds = ds.apply(tf.data.experimental.prefetch_to_device(prefetch_device, buffer_size=buffer))
    return ds, prefetch_device


def _freeze_startup_objects() -> None:
    """Exempt what start-up made (the scan's items, the plan: objects that live for the whole run)
    from Python's garbage collection, after one collection now.

    A full collection walks every tracked object; with 13,100 scanned clips it stalled a batch
    for 240 ms in the first epoch (measured: CV of batch latency 1.78 with it, 0.27 without), and
    the cost grows with the corpus. `gc.freeze` moves the objects alive now out of every later
    collection; objects made afterwards are collected as usual.
    """
    gc.collect()
    gc.freeze()


# Below this many clips a full collection is short (it grows with the objects alive), and a
# process that builds many small pipelines (the test suite) keeps collecting what they leave.
_FREEZE_FROM_CLIPS = 2000


def _bucket_runs(plan: PipelinePlan, shards: Sequence[Shard], bucket: int) -> list[tuple[Shard, int, list[list[int]]]]:
    """Bucket `bucket`'s runs of store records: (shard, first record, the users of each record).
    A shard holds clips in order of length, so a bucket's clips in it are one run (a shard at a
    bucket's edge holds two buckets' runs)."""
    runs = []
    for shard in shards:
        inside = np.concatenate([plan.bucket_of[shard.first_users] == bucket, [False]])
        edges = np.flatnonzero(np.diff(np.concatenate([[False], inside]).astype(np.int8)))
        for start, stop in zip(edges[::2], edges[1::2]):
            runs.append((shard, int(start), shard.users[start:stop]))
    return runs


def _stored_batches(plan: PipelinePlan, shards: Sequence[Shard], bucket: int, *, training: bool, seed):
    """Batches of bucket `bucket`'s store records and the items they are (`_decode_stored` makes
    them features once the buckets are merged): graph ops only, none per clip beyond reading it.

    A shard holds clips in order of length, so the bucket's clips in it are one run of records (a
    shard at a bucket's edge holds two buckets' runs). The bucket reads its runs in a fresh order
    each epoch, a few at once with their records interleaved, shuffles the records (strings: cheap
    to move) and batches them. Which item a record is comes from its place in the shard
    (`Shard.users`).
    """

    data = plan.data
    runs = _bucket_runs(plan, shards, bucket)
    note_streamed(shard.path for shard, _, _ in runs)  # a record failing its checksum mid-epoch is found among them
    repeated = any(len(users) > 1 for _, _, run in runs for users in run)
    # [run, record, user], built from flat arrays (tf.ragged.constant of 124,500 nested lists took seconds).
    per_record = [users for _, _, run in runs for users in run]
    users = tf.RaggedTensor.from_row_lengths(
        tf.RaggedTensor.from_row_lengths(
            np.fromiter((u for record in per_record for u in record), dtype=np.int64),
            np.fromiter((len(record) for record in per_record), dtype=np.int64, count=len(per_record)),
        ),
        np.asarray([len(run) for _, _, run in runs], dtype=np.int64),
    )
    entries = tf.data.Dataset.from_tensor_slices(
        {
            "file": np.asarray([shard.path for shard, _, _ in runs], dtype=object),
            "start": np.asarray([start for _, start, _ in runs], dtype=np.int64),
            "count": np.asarray([len(run) for _, _, run in runs], dtype=np.int64),
            "run": np.arange(len(runs), dtype=np.int64),
        }
    )
    if training:
        entries = entries.shuffle(len(runs), seed=seed, reshuffle_each_iteration=True)

    def read(entry):
        records = tf.data.TFRecordDataset(entry["file"], buffer_size=_READ_BUFFER)
        records = records.skip(entry["start"]).take(entry["count"])
        run = users[entry["run"]]
        if not repeated:
            return tf.data.Dataset.zip((records, tf.data.Dataset.from_tensor_slices(run.flat_values)))
        # A clip a dataset weight repeats: stored once, used by each item that repeats it.
        pairs = tf.data.Dataset.zip((records, tf.data.Dataset.from_tensor_slices(run)))
        return pairs.flat_map(
            lambda record, indices: tf.data.Dataset.from_tensor_slices(indices).map(lambda index: (record, index))
        )

    cycle = max(1, min(len(runs), _RUNS_READ_AT_ONCE))  # a bucket with no clips reads nothing
    ds = entries.interleave(read, cycle_length=cycle)
    if plan.shuffle_buffer_size:
        ds = ds.shuffle(
            min(plan.shuffle_buffer_size, len(plan.group(bucket))), seed=seed, reshuffle_each_iteration=True
        )
    ds = ds.batch(data.batch_size, drop_remainder=training)
    if data.pipeline_buffer_size:
        ds = ds.prefetch(data.pipeline_buffer_size)
    return ds


def _decode_stored(plan: PipelinePlan, shapes_of: list[Optional[dict]], texts):
    """The function turning a batch of store records (and the items they are) into the batch: one
    `decode_raw` pads every record to the bucket's length at once; token ids are gathered from
    `texts` (every item's, ragged). It runs after the buckets are merged, in one map: as a map per
    bucket, tf.data parallelised each one, and the buckets' maps finished batches in bursts (batch
    latency CV 1.8 against 0.5 at 13,100 clips, measured)."""

    data, output = plan.data, plan.output
    step = KEPT_VALUE_BYTES * (data.n_mels if output == "mel" else 1)
    bucket_of = tf.constant(plan.bucket_of, tf.int64)
    pad, text_pad = _text_pads(shapes_of, output)

    def to_batch(records, indices):
        lengths = tf.cast(tf.strings.length(records) // step, tf.int32)
        bucket = tf.gather(bucket_of, indices[0])
        width = tf.reduce_max(lengths) if pad is None else pad(bucket)
        lengths = tf.minimum(lengths, width)  # a file changed since the scan is cut to its bucket's length
        # Zero-padded to the batch's width in the decode itself; mels are stored as steps above the
        # padding value (the log-mel floor), so the step's scale (`features.as_values`) pads with
        # the floor at no cost of its own (a mask and a select cost 40 % of the rate, measured); a
        # zero sample is silence.
        steps = tf.io.decode_raw(
            records, tf.uint16 if output == "mel" else tf.int16, little_endian=True, fixed_length=width * step
        )
        if output == "mel":
            steps = tf.reshape(steps, [-1, width, data.n_mels])
        return {**_batch_texts(texts, indices, text_pad, bucket), output: steps, f"{output}_lengths": lengths}

    return to_batch


def _per_bucket(values: list[int], dtype):
    """A bucket's pad, looked up from its number; a Python int (a static shape) when all agree."""

    if len(set(values)) == 1:
        return lambda bucket: values[0]
    table = tf.constant(values, dtype)
    return lambda bucket: tf.gather(table, bucket)


def _text_pads(shapes_of: list[Optional[dict]], output: Output):
    """(feature pad, text pad) lookups of each bucket; (None, None) when batches pad to their longest."""

    if not all(shapes is not None for shapes in shapes_of):
        return None, None
    return (
        _per_bucket([shapes[output][0] for shapes in shapes_of], tf.int32),  # type: ignore[index]
        _per_bucket([shapes["text_ids"][0] for shapes in shapes_of], tf.int64),  # type: ignore[index]
    )


def _batch_texts(texts, indices, text_pad, bucket) -> dict:
    """A batch's token ids (padded to its bucket's text length, or its longest) and their lengths,
    gathered from `texts` (every item's, ragged)."""

    ids = tf.gather(texts, indices)
    shape = None
    if text_pad is not None:
        target = text_pad(bucket)
        shape = [None, target] if isinstance(target, int) else tf.stack([ids.nrows(), target])
    return {"text_ids": ids.to_tensor(0, shape=shape), "text_lengths": tf.cast(ids.row_lengths(), tf.int32)}


class _HeldStore:
    """The precompute store read into memory, when it fits the memory budget
    (`PipelinePlan.store_in_memory`): per bucket one tensor of its clips, each padded to the
    bucket's width, made at build time from the bucket's records (tf.data's record reader, as
    streamed epochs read them, so their checksums are checked) and kept by a tf.data memory cache.
    A bucket's batches are drawn as item indices (a fresh permutation of the whole bucket each
    training epoch) and, once the buckets are merged, made by one gather of their rows (16-bit
    steps, which the step scales: `features.as_values`). The tensors travel as elements, from the
    cache: captured in a function or held by a `from_tensors` they were copied into the graph
    tf.data rewrites when an iterator is made (a second copy of the store, measured). Measured
    against reading the shards, see docs/data_at_scale.md."""

    def __init__(self, plan: PipelinePlan, shards: Sequence[Shard], shapes_of: list[Optional[dict]], texts):

        self.plan, self.texts = plan, texts
        output = plan.output
        values = plan.data.n_mels if output == "mel" else 1
        row_of = np.zeros(len(plan.items), dtype=np.int64)
        lengths = np.zeros(len(plan.items), dtype=np.int32)
        self.wholes, self.nbytes = [], 0
        for k, shapes in enumerate(shapes_of):
            runs = _bucket_runs(plan, shards, k)
            stored = [length for shard, start, run in runs for length in shard.lengths[start : start + len(run)]]
            width = shapes[output][0] if shapes else max(stored, default=0)
            for row, (users, length) in enumerate(zip((u for _, _, run in runs for u in run), stored)):
                row_of[users] = row
                lengths[users] = min(length, width)
            dtype = tf.uint16 if output == "mel" else tf.int16
            shape = [width, values] if output == "mel" else [width]

            def decode(record, width=width, dtype=dtype, shape=shape):
                steps = tf.io.decode_raw(
                    record, dtype, little_endian=True, fixed_length=width * values * KEPT_VALUE_BYTES
                )
                return tf.reshape(steps, shape)

            if runs:
                # The bucket's records in run order (row r is its r-th record), batched whole.
                paths = sorted({shard.path for shard, _, _ in runs})
                entries = tf.data.Dataset.from_tensor_slices(
                    (
                        np.asarray([shard.path for shard, _, _ in runs], dtype=object),
                        np.asarray([start for _, start, _ in runs], dtype=np.int64),
                        np.asarray([len(run) for _, _, run in runs], dtype=np.int64),
                    )
                )
                records = entries.flat_map(
                    lambda path, start, count: (
                        tf.data.TFRecordDataset(path, buffer_size=_READ_BUFFER).skip(start).take(count)
                    )
                )
                # Each record decoded (padded) as it is read, then batched: its bytes are freed at
                # once, and the bucket is held once more only while its rows are batched.
                whole = records.map(decode).batch(len(stored)).cache()
                try:
                    for _ in whole:  # fills the cache now, at build time
                        pass
                except tf.errors.DataLossError:
                    raise CorruptShards(corrupt_shards(paths) or paths) from None
            else:
                whole = tf.data.Dataset.from_tensors(tf.zeros([0, *shape], dtype))
            self.wholes.append(whole)
            self.nbytes += len(stored) * width * values * KEPT_VALUE_BYTES
        self.row_of = tf.constant(row_of)
        self.lengths = tf.constant(lengths)
        self.bucket_of = tf.constant(plan.bucket_of, tf.int64)
        self.pad, self.text_pad = _text_pads(shapes_of, output)

    def batches(self, k: int, *, training: bool, seed):
        """(bucket k's held clips, item indices of a batch), a batch's worth each."""

        group = self.plan.group(k)
        places = _permuted_places(len(group), seed) if training else tf.data.Dataset.range(len(group))
        members = tf.constant(group, tf.int64)
        indices = places.batch(self.plan.batch_size, drop_remainder=training).map(
            lambda batch: tf.gather(members, batch)
        )
        return tf.data.Dataset.zip((self.wholes[k].repeat(), indices))

    def to_batch(self, clips, indices):

        output = self.plan.output
        bucket = tf.gather(self.bucket_of, indices[0])
        steps = tf.gather(clips, tf.gather(self.row_of, indices))
        lengths = tf.gather(self.lengths, indices)
        if self.pad is None:  # padded to the batch's longest clip
            steps = steps[:, : tf.reduce_max(lengths)]
        return {
            **_batch_texts(self.texts, indices, self.text_pad, bucket),
            output: steps,
            f"{output}_lengths": lengths,
        }


# Runs of records a bucket reads at once (interleaved, in one thread: reading threads per bucket
# were no faster and burstier, measured), and the read buffer of each.
_RUNS_READ_AT_ONCE = 4
_READ_BUFFER = 1 << 20


def _worker_seed(_):
    """A seed from the clock, in microseconds: different on every worker and every epoch."""

    return tf.cast(tf.math.floormod(tf.timestamp() * 1e6, 2.0**31 - 1), tf.int64)


def _group_elements(
    data: DataConfig,
    mode: str,
    output: Output,
    stage,
    codecs: list[str],
    items,
    text_ids,
    *,
    training: bool,
    deterministic: bool,
    seed: int,
    max_length: Optional[int],
    split_by_service: bool = False,
):
    """Per-clip elements of one source (bucket): token ids, features and their lengths.

    `max_length`: the mel frames (or audio samples) the source's batches are padded to. The scan's
    lengths are exact, so no clip exceeds it; the cut only keeps a file that changed since the
    scan from failing its batch.
    """

    # The source is the clips' places in the bucket; each element's columns are gathered in the
    # decode map, so a shuffle moves only the places (int64s), however many clips the bucket holds.
    columns = {
        name: tf.constant(values)
        for name, values in source_columns(items, codecs if data.use_tf_native_loading else CODECS).items()
    }
    texts = _ragged(text_ids)
    flat_ids, splits = texts.flat_values, texts.row_splits
    # The cache keeps 16-bit steps, as the store does (`features.kept_steps`): half the memory of
    # float32, and the first epoch, which writes it all to pages new to the process, runs faster
    # (see docs/data_at_scale.md). The batches hand them over; the step scales them
    # (`features.as_values`).
    held_as_steps = mode == "cache"

    # Not converted by autograph (tf.data's map would): it branches on Python values only, and
    # converting it and everything it calls took 0.5 s of CPU of each training's start (2-core Xeon).
    @tf.autograph.experimental.do_not_convert
    def with_features(index):
        element = {name: tf.gather(column, index) for name, column in columns.items()}
        ids = flat_ids[splits[index] : splits[index + 1]]
        values = stage(element)
        if max_length is not None:
            values = values[:max_length]
        if held_as_steps:
            values = kept_steps(values, output)
        return {
            "text_ids": ids,
            "text_lengths": tf.shape(ids, out_type=tf.int32)[0],
            output: values,
            f"{output}_lengths": tf.shape(values, out_type=tf.int32)[0],
        }

    parallel = parallel_calls(data.num_workers)
    shuffle = min(data.shuffle_buffer_multiplier * data.batch_size, len(items)) if training else 0
    ds = _places(
        len(items), data, mode, training=training, shuffled=bool(shuffle), seed=seed, split_by_service=split_by_service
    )
    ds = ds.map(with_features, num_parallel_calls=parallel, deterministic=deterministic)
    # The scan vouched for every header; a file that still fails to decode (corrupt frames inside
    # a valid container) is skipped with a logged warning instead of ending the epoch.
    ds = ds.ignore_errors(log_warning=True)
    if mode == "cache":
        ds = ds.cache()
        if shuffle:
            ds = ds.shuffle(shuffle, seed=seed, reshuffle_each_iteration=True)  # after the cache: new order each epoch
    if data.pipeline_buffer_size:
        ds = ds.prefetch(data.pipeline_buffer_size)
    return ds


def _places(count: int, data: DataConfig, mode: str, *, training: bool, shuffled: bool, seed, split_by_service: bool):
    """The clips' places in their bucket, in the order an epoch decodes them."""

    ds = tf.data.Dataset.range(count)
    if shuffled:
        # The whole bucket, in a fresh order every epoch (a cached epoch replays the first epoch's
        # order, shuffled again after the cache). A buffer of `shuffle` places would draw each batch
        # from a window of the corpus order: in a corpus listed speaker by speaker (VCTK, LibriTTS),
        # an epoch would visit the speakers one after another.
        if split_by_service:
            # The service's dynamic sharding splits the places among its workers; it can split a
            # range, not a permutation drawn in a flat_map (each place came back twice, measured).
            ds = ds.shuffle(max(count, 1), seed=seed, reshuffle_each_iteration=True)
        else:
            ds = _permuted_places(count, seed)
    if training and mode != "cache":
        # Training drops each bucket's partial last batch; decoding those clips first would be
        # wasted work (a third of the decodes on small buckets). The shuffle above varies which
        # clips sit out each epoch. Not in cache mode: the cache must see every clip once.
        ds = ds.take(count // data.batch_size * data.batch_size)
    return ds


def _permuted_places(count: int, seed):
    """0..count-1 in a fresh random order every epoch (each new iterator), reproducible from `seed`
    (an int, or a tensor on service workers). One permutation tensor of `count` int64s: a shuffle
    buffer of the whole bucket held a tensor per place and filled before its first element, which
    for one bucket of 1,244,386 places took 1.1-1.3 s and 0.25 GB, against 50-70 ms and 0.07 GB."""
    return _permuted([count], seed)


def _permuted(parts: list, seed):
    """Each of `parts` (a count n: 0..n-1, made in the graph, so no constant holds it; or an array
    of int64s) in a fresh random order every epoch (each new iterator), one after the other;
    reproducible from `seed` (an int, or a tensor on service workers). One tensor, drawn as the
    epoch starts: no shuffle buffer to fill on the way."""

    @tf.autograph.experimental.do_not_convert  # as `with_features` in `_group_elements`
    def permutation(draw):
        shuffled = [
            tf.random.experimental.stateless_shuffle(
                tf.range(part, dtype=tf.int64) if np.ndim(part) == 0 else tf.constant(part, dtype=tf.int64),
                seed=tf.stack([draw, tf.constant(n, tf.int64)]),
            )
            for n, part in enumerate(parts)
        ]
        return tf.data.Dataset.from_tensor_slices(tf.concat(shuffled, axis=0))

    if isinstance(seed, tf.Tensor):
        # A seed made in the graph (a service worker's, from the clock) is new every epoch already.
        # Dataset.random cannot take one when the global seed is 0 (`training.seed: 0`): its Python
        # seed logic compares the pair to (0, 0), a symbolic tensor as a bool.
        draws = tf.data.Dataset.from_tensors(tf.cast(seed, tf.int64))
    else:
        draws = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).take(1)
    return draws.flat_map(permutation)


def _padded_shapes(data: DataConfig, output: Output, plan: Optional[BucketPlan], bucket: int) -> Optional[dict]:
    """The per-clip shapes bucket `bucket`'s batches are padded to; None: to each batch's longest."""
    if plan is not None:
        text, frames = plan.text_pads[bucket], plan.length_pads[bucket]
    elif data.pad_to_fixed_length:
        text, frames = data.max_text_length + CONDITIONING_IDS, data.max_mel_frames
    else:
        return None
    # For audio, S = P * hop - 1 samples give 1 + S // hop == P frames.
    values = [frames, data.n_mels] if output == "mel" else [frames * data.hop_length - 1]
    return {"text_ids": [text], "text_lengths": [], output: values, f"{output}_lengths": []}


def _pad_batches(ds, data: DataConfig, output: Output, shapes: Optional[dict], *, training: bool):
    """Batches of one source, padded to `shapes` (or to each batch's longest clip)."""

    values = {
        # Values held as steps (cache mode) pad with step 0: the floor once scaled back, or silence.
        name: tf.constant(0 if ds.element_spec[name].dtype in (tf.uint16, tf.int16) else v, ds.element_spec[name].dtype)
        for name, v in _padding_values(output).items()
        if name in ds.element_spec
    }
    # Straight to the planned shapes: padding to the batch maximum and then to the plan in a map
    # copied every batch twice (measured 1.1-1.2x slower on cached features).
    return ds.padded_batch(data.batch_size, padded_shapes=shapes, padding_values=values, drop_remainder=training)


def _padding_values(output: Output) -> dict[str, float]:
    values: dict[str, float] = {"text_ids": 0, "text_lengths": 0}
    if output == "mel":
        values.update(mel=LOG_MEL_FLOOR, mel_lengths=0)
    else:
        values.update(audio=0.0, audio_lengths=0)
    return values


def decoded_audio_dataset(config: XttsConfig, items: Sequence[DatasetItem]):
    """Each item's decoded, resampled mono audio, held in memory: {"audio": float32 [S]} per clip.

    For the "compute bound" benchmark: mapping `features.log_mel` over it times the feature
    computation alone, with file reading and decoding already paid for.
    """

    native = data_variant(config, use_tf_native_loading=True).data
    clips = list(_items_dataset(items, native, "audio").as_numpy_iterator())
    lengths = np.asarray([len(c) for c in clips], dtype=np.int64)
    audio = tf.RaggedTensor.from_row_lengths(np.concatenate(clips).astype(np.float32), lengths)
    return tf.data.Dataset.from_tensor_slices({"audio": audio})
