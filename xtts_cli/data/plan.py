"""The input pipeline's plan: everything about an epoch that is known before any audio is decoded.

Plain Python over the scanned items (no TensorFlow), so it can be tested, reported and reasoned
about on its own: the codecs to decode, each clip's token ids and mel length (exact, from the
headers), its length bucket and the shape its batch is padded to, the batches an epoch gives, the
features' size in memory and, from that, where features are kept (`preprocessing_mode`).
`pipeline.build_pipeline` turns a plan into a tf.data graph; the profilers read the same plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Optional

import numpy as np
from pydantic import BaseModel

from xtts_cli.config.schema import DataConfig
from xtts_cli.data.audio_codecs import CODECS
from xtts_cli.data.bucketing import BucketPlan, plan_buckets
from xtts_cli.data.features import kept_bytes
from xtts_cli.data.scan import DatasetItem, ScanReport
from xtts_cli.data.text import (
    CONDITIONING_IDS,
    Tokenizer,
    UnknownCharactersError,
    alphabet_of,
    language_normalizer,
    prepare_texts,
)
from xtts_cli.errors import XttsError

Output = Literal["mel", "audio"]
Mode = Literal["runtime", "cache", "precompute"]

# `data.cache_memory_limit: auto`: this share of the memory the machine has available when the run
# starts. The rest is left to TensorFlow, the model, the optimizer and the decode buffers. A half
# while the cache held float32 log-mels; a quarter since it holds 16-bit ones, so the same corpora
# are cached as before (about 5.5 GB of them with 22 GB available: 100,000 clips of 4 s) and
# LibriTTS-size ones are not.
AUTO_CACHE_SHARE = 0.25


class AudioFormats(BaseModel):
    """What a set of clips needs decoded: the codecs present and, when every clip shares them, the
    channel count and sample rate (None where they vary), so the graph can leave out what no clip needs."""

    codecs: list[str]
    channels: Optional[int] = None
    rate: Optional[int] = None
    rates: list[int] = []  # every sample rate present, ascending


def audio_formats(items: Sequence[DatasetItem]) -> AudioFormats:
    channels = {item.audio.channels for item in items}
    rates = {item.audio.sample_rate for item in items}
    present = {item.audio.codec for item in items}
    return AudioFormats(
        codecs=[c for c in CODECS if c in present],
        channels=channels.pop() if len(channels) == 1 else None,
        rate=next(iter(rates)) if len(rates) == 1 else None,
        rates=sorted(rates),
    )


def mel_frames(item: DatasetItem, data: DataConfig) -> int:
    """Mel frames of a clip at the training rate, from its header: 1 + samples // hop."""
    return 1 + item.audio.num_samples * data.sample_rate // item.audio.sample_rate // data.hop_length


def source_columns(items: Sequence[DatasetItem], codecs: Sequence[str]) -> dict[str, np.ndarray]:
    """Per clip, what the feature stage reads: {path, codec (index into `codecs`), rate, channels,
    offset, num_samples}, one array each."""
    index = {codec: k for k, codec in enumerate(codecs)}
    return {
        "path": np.asarray([item.audio_path for item in items], dtype=object),
        "codec": np.fromiter((index[item.audio.codec] for item in items), dtype=np.int32, count=len(items)),
        "rate": np.fromiter((item.audio.sample_rate for item in items), dtype=np.int64, count=len(items)),
        "channels": np.fromiter((item.audio.channels for item in items), dtype=np.int32, count=len(items)),
        "offset": np.fromiter((item.audio.data_offset for item in items), dtype=np.int64, count=len(items)),
        "num_samples": np.fromiter((item.audio.num_samples for item in items), dtype=np.int64, count=len(items)),
    }


def available_memory_bytes() -> Optional[int]:
    """Memory the machine can give a new process now (Linux MemAvailable), else None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import os

        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def cache_budget_bytes(data: DataConfig) -> Optional[int]:
    """`data.cache_memory_limit` in bytes; `auto`: AUTO_CACHE_SHARE of the available memory (None
    when the machine does not say)."""
    if data.cache_memory_limit != "auto":
        return int(data.cache_memory_limit)
    available = available_memory_bytes()
    return None if available is None else int(available * AUTO_CACHE_SHARE)


def gigabytes(count: int) -> str:
    if count >= 1e8:
        return f"{count / 1e9:.1f} GB"
    return f"{count / 1e6:.0f} MB" if count >= 1e6 else f"{count / 1e3:.0f} kB"


class CacheOverBudgetError(XttsError):
    """`data.preprocessing_mode: cache` for features over the memory budget (`validate` reports it
    as its own finding, `data-cache-over-budget`)."""


class EmptyEpochError(XttsError):
    """An epoch of no full batch (`require_batches`); `batch_fits`: the largest batch the items fill,
    where a smaller batch is the fix (None where fewer buckets or more data are)."""

    def __init__(self, *lines: str, hint: str, batch_fits: Optional[int]) -> None:
        super().__init__(*lines, hint=hint)
        self.batch_fits = batch_fits


@dataclass(frozen=True)
class ModeDecision:
    """Where features are kept, and why."""

    mode: Mode
    reason: str
    feature_bytes: int
    budget_bytes: Optional[int]


def decide_mode(data: DataConfig, feature_bytes: int, *, budget_bytes: Optional[int] = None) -> ModeDecision:
    """Resolve `data.preprocessing_mode` for features of `feature_bytes` bytes.

    `auto`: `cache` when they fit the memory budget (`cache_budget_bytes`), else `precompute`; a
    tf.data service pipeline is `runtime` (its workers rebuild a cache per job). An explicit `cache`
    over the budget is an error naming the numbers and the fix: caching it would run out of memory.
    """
    budget = cache_budget_bytes(data) if budget_bytes is None else budget_bytes
    need, limit = gigabytes(feature_bytes), "unknown" if budget is None else gigabytes(budget)
    if (
        budget is not None and need == limit and feature_bytes != budget
    ):  # 1,313,600 over 1,000,000: not "1 MB over 1 MB"
        need, limit = f"{feature_bytes:,} bytes", f"{budget:,}-byte"
    setting = (
        "data.cache_memory_limit: auto, a quarter of the memory available now"
        if data.cache_memory_limit == "auto"
        else "data.cache_memory_limit"
    )
    fits = budget is None or feature_bytes <= budget
    if data.preprocessing_mode != "auto":
        if data.preprocessing_mode == "cache" and not fits:
            raise CacheOverBudgetError(
                f"data.preprocessing_mode is cache but the features need {need} of memory, over the "
                f"{limit} budget ({setting})",
                hint="set data.preprocessing_mode: precompute (features on disk) or auto, or raise data.cache_memory_limit",
            )
        return ModeDecision(data.preprocessing_mode, "set in the config", feature_bytes, budget)
    if data.service_address:
        return ModeDecision("runtime", "auto: the tf.data service's workers compute features", feature_bytes, budget)
    if fits:
        return ModeDecision("cache", f"auto: features {need} fit the {limit} memory budget", feature_bytes, budget)
    return ModeDecision("precompute", f"auto: features {need} exceed the {limit} memory budget", feature_bytes, budget)


@dataclass(frozen=True)
class PipelinePlan:
    """One pipeline's epoch, planned from the scan. Index i of every per-clip list is `items[i]`."""

    data: DataConfig
    output: Output
    training: bool
    items: tuple[DatasetItem, ...]
    decision: ModeDecision
    formats: AudioFormats
    text_ids: TokenIds
    frames: list[int]
    batching: Literal["bucketed", "fixed", "dynamic"]
    buckets: Optional[BucketPlan]
    bucket_of: np.ndarray = field(repr=False)

    @property
    def mode(self) -> Mode:
        return self.decision.mode

    @property
    def batch_size(self) -> int:
        return self.data.batch_size

    @property
    def drop_remainder(self) -> bool:
        """Training drops each bucket's partial batch: every step sees a full, static batch."""
        return self.training

    @property
    def num_groups(self) -> int:
        return self.buckets.num_buckets if self.buckets else 1

    def group(self, k: int) -> np.ndarray:
        """Indices of the clips in bucket `k`, in item order."""
        return np.flatnonzero(self.bucket_of == k)

    @property
    def group_sizes(self) -> list[int]:
        return np.bincount(self.bucket_of, minlength=self.num_groups).tolist()

    @property
    def batch_counts(self) -> list[int]:
        size = self.batch_size
        return [n // size if self.drop_remainder else -(-n // size) for n in self.group_sizes]

    @property
    def batches_per_epoch(self) -> int:
        return sum(self.batch_counts)

    @property
    def buckets_started(self) -> int:
        """See `buckets_started`."""
        return buckets_started(self.batch_counts, training=self.training)

    @property
    def max_distinct_batch_shapes(self) -> Optional[int]:
        """Per bucket, full batches and (without drop_remainder) one final partial one; None: dynamic padding."""
        if self.batching == "dynamic":
            return None
        size = self.batch_size
        return sum(int(n >= size) + int(not self.drop_remainder and n % size > 0) for n in self.group_sizes)

    def pad_shape(self, k: int) -> Optional[tuple[int, int]]:
        """(text length, mel frames) every batch of bucket `k` is padded to; None: each batch's longest."""
        if self.buckets is not None:
            return self.buckets.text_pads[k], self.buckets.length_pads[k]
        if self.batching == "fixed":
            return self.data.max_text_length + CONDITIONING_IDS, self.data.max_mel_frames
        return None

    @property
    def padding_efficiency(self) -> float:
        """Real mel frames / padded mel frames, from the scanned lengths (before any silence trimming).
        Dynamic padding to the batch's longest clip depends on the shuffle: its expectation."""
        frames = np.asarray(self.frames)
        if self.buckets is not None:
            return self.buckets.padding_efficiency(frames)
        if self.batching == "fixed":
            return float(frames.mean() / self.data.max_mel_frames)
        return float(frames.mean() / expected_batch_max(frames, self.batch_size))

    def held_width(self, k: int) -> int:
        """Mel frames each clip of bucket `k` is padded to when the store is held in memory: its
        planned pad, or (dynamic padding) the bucket's longest scanned clip."""
        shape = self.pad_shape(k)
        if shape is not None:
            return shape[1]
        group = self.group(k)
        return int(np.asarray(self.frames)[group].max()) if len(group) else 0

    @property
    def held_store_bytes(self) -> int:
        """Bytes the precompute store takes held in memory: every item's 16-bit features padded to
        its bucket's width (a clip a dataset weight repeats is counted each time: an upper bound)."""
        frames = sum(len(self.group(k)) * self.held_width(k) for k in range(self.num_groups))
        return kept_bytes(frames, self.data, self.output)

    @property
    def store_in_memory(self) -> bool:
        """A precompute pipeline reads its store into memory when the store, held padded, fits the
        memory budget (`data.cache_memory_limit`): its epochs then gather batches from memory
        instead of parsing records. Not for the tf.data service, whose workers would be sent it,
        nor when the machine does not say how much memory it has."""
        budget = self.decision.budget_bytes
        return (
            self.mode == "precompute"
            and not self.data.service_address
            and budget is not None
            and self.held_store_bytes <= budget
        )

    @property
    def shuffle_buffer_size(self) -> int:
        return min(self.data.shuffle_buffer_multiplier * self.batch_size, len(self.items)) if self.training else 0

    def require_batches(self, *, share: str = "", batch_flag: str = "data.batch_size", replicas: int = 1) -> None:
        """The empty-epoch error: training items that give no full batch, with the fix that can work:
        a batch the items fill, or (their buckets each too small) fewer buckets. A batch split over
        `replicas` (mirrored) is `batch_flag` times them: the fix is in the replica's batch."""
        if self.batches_per_epoch == 0:
            items = len(self.items)
            fits = items // replicas  # the largest batch_flag whose whole batch the items fill
            fix = None
            if items >= self.batch_size and self.num_groups > 1:
                hint = f"lower data.num_buckets (or {batch_flag}), or add data"
            elif fits:
                fix = fits
                lower = f"{fits} or lower" if fits > 1 else f"{fits}"  # a batch of 1 is the least there is
                each = f" ({replicas} replicas take {batch_flag} each)" if replicas > 1 else ""
                hint = f"set {batch_flag} to {lower}{each}, or add data"
            else:
                hint = "add data" + (" or use fewer devices" if replicas > 1 else "")
            raise EmptyEpochError(
                f"{items} training item{'s' if items != 1 else ''}{share} give{'s' if items == 1 else ''} no full "
                f"batch of {self.batch_size} ({self.batching} batching, {self.num_groups} "
                f"bucket{'s' if self.num_groups != 1 else ''})",
                hint=hint,
                batch_fits=fix,
            )


def buckets_started(batch_counts: Sequence[int], *, training: bool) -> int:
    """Batches a training epoch opens with: one from each length bucket that has any, where the
    bucket starts (opens its files or fills its shuffle buffer); 0 for one source or validation."""
    started = sum(1 for count in batch_counts if count > 0)
    return started if training and started > 1 else 0


@dataclass(frozen=True, eq=False)
class TokenIds(Sequence):
    """Every clip's token ids end to end: clip i's are `flat[splits[i]:splits[i + 1]]` (int32)."""

    flat: np.ndarray
    splits: np.ndarray = field(repr=False)

    @classmethod
    def from_lengths(cls, flat: np.ndarray, lengths: np.ndarray) -> TokenIds:
        return cls(flat, _splits(lengths))

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.splits)

    def __len__(self) -> int:
        return len(self.splits) - 1

    def __getitem__(self, index):
        if not isinstance(index, (int, np.integer)):
            raise TypeError(f"TokenIds are read one clip at a time, or with `take`; got {type(index).__name__}")
        if not -len(self) <= index < len(self):
            raise IndexError(f"clip {index} of {len(self)}")
        index %= len(self)
        return self.flat[self.splits[index] : self.splits[index + 1]]

    def take(self, indices: Sequence[int]) -> TokenIds:
        """The ids of the clips at `indices`, in that order."""
        rows = np.asarray(indices, dtype=np.int64)
        lengths = self.lengths[rows]
        splits = _splits(lengths)
        # Each id's place in `flat`: its clip's start there, plus how far it is into the clip.
        places = np.repeat(self.splits[rows] - splits[:-1], lengths) + np.arange(splits[-1])
        return TokenIds(self.flat[places], splits)


def _splits(lengths: np.ndarray) -> np.ndarray:
    splits = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=splits[1:])
    return splits


# The last texts prepared, by what they were prepared from: a run's set-up prepares the same texts
# twice (the corpus's for its vocabulary, then its training clips' for their ids), validate twice
# more (1.1 s of its 3.5 s on 5,000 clips, measured under cProfile).
_PREPARED: dict[tuple, Optional[list[str]]] = {}


def prepared_texts(items: Sequence[DatasetItem], tokenizer: Tokenizer) -> Optional[list[str]]:
    """Each item's text as the tokenizer's front end gives it (`Tokenizer.prepare`): the scan's
    phonemes, or the cleaned text normalised for its language; None when that is the cleaned text
    alone (characters in languages without a normaliser), which `encode_many` cleans as it reads."""
    key = (
        tuple(tokenizer.cleaners),
        tokenizer.frontend,
        tokenizer.numbers,
        tuple((item.training_text, item.language, item.phonemes) for item in items),
    )
    if key not in _PREPARED:
        while len(_PREPARED) >= 2:  # a corpus's clips and its training clips: a large one's are megabytes
            del _PREPARED[next(iter(_PREPARED))]
        _PREPARED[key] = _prepared_texts(items, tokenizer)
    prepared = _PREPARED[key]
    return None if prepared is None else list(prepared)


def _prepared_texts(items: Sequence[DatasetItem], tokenizer: Tokenizer) -> Optional[list[str]]:
    languages = {item.language for item in items}
    if tokenizer.frontend == "phonemes" and tokenizer.numbers == "words":
        return [
            item.phonemes if item.phonemes is not None else tokenizer.prepare(item.training_text, item.language)
            for item in items
        ]
    # A phonemes run saved before numbers were read as words: the scan's phonemes read them, so
    # espeak-ng phonemises the text again as it did in training.
    if tokenizer.frontend != "phonemes" and not any(
        language_normalizer(language, "characters", tokenizer.numbers) for language in languages
    ):
        return None
    by_language = {
        language: iter(
            prepare_texts(
                [i.training_text for i in items if i.language == language],
                tokenizer.cleaners,
                tokenizer.frontend,
                language,
                tokenizer.numbers,
            )
        )
        for language in languages
    }
    return [next(by_language[item.language]) for item in items]


def item_place(item: DatasetItem) -> str:
    """`/data/de/metadata.csv:2 (LJ001-0001)`: a clip named in an error by its source in its dataset's
    folder (every dataset of a run may have its own metadata.csv, and two folders one name)."""
    source, audio = item.source, Path(getattr(item, "audio_path", "") or "")
    written = Path(getattr(item, "relative_path", "") or "").parts
    if Path(source).is_absolute() or not written or audio.parts[-len(written) :] != written:
        return f"{source} ({item.id})"
    return f"{Path(*audio.parts[: -len(written)]) / source} ({item.id})"


def speakers_it_lacks(saved: Tokenizer, scan: ScanReport) -> str:
    """A resumed run's note on the data's speakers its vocabulary, fixed when it started, lacks."""
    new = [name for name in scan.speakers if name not in saved.speakers]
    if not new:
        return ""
    shown = ", ".join(new[:3]) + f" and {len(new) - 3} more" if len(new) > 4 else ", ".join(new)  # never "1 more"
    return (
        f"speaker{'s' * (len(new) > 1)} {shown} of this data {'are' if len(new) > 1 else 'is'} not among the run's "
        f"{len(saved.speakers)} (fixed when it started): their clips train as an unknown voice; a new run that "
        "starts from this one (--init-from RUN) learns them by name"
    )


def conditioning_ids(items: Sequence[DatasetItem], tokenizer: Tokenizer) -> Optional[np.ndarray]:
    """[N, CONDITIONING_IDS] int32: each item's language and speaker index, or None for a vocabulary
    without languages. A language the vocabulary lacks is an error naming the item."""
    if not tokenizer.prefix_length:
        return None
    languages = {language: index for index, language in enumerate(tokenizer.languages)}
    rows = np.empty((len(items), 2), dtype=np.int32)
    for row, item in enumerate(items):
        if item.language not in languages:
            raise XttsError(
                f"{item_place(item)}: language {item.language!r} is not one this run was started with "
                f"({', '.join(tokenizer.languages)})",
                hint="train it in a new run that starts from this one (xtts train --init-from RUN --run-dir NEW "
                "grows its languages and keeps what it learnt), or set the dataset's language to one of those",
            )
        rows[row] = (languages[item.language], tokenizer.speaker_index(item.speaker))
    return rows


def encode_texts(items: Sequence[DatasetItem], tokenizer: Tokenizer) -> TokenIds:
    """Every item's ids: its conditioning ids, then its text's."""
    prepared = prepared_texts(items, tokenizer)
    texts = prepared if prepared is not None else [item.training_text for item in items]
    try:
        return TokenIds.from_lengths(
            *tokenizer.encode_many(texts, prepared=prepared is not None, prefixes=conditioning_ids(items, tokenizer))
        )
    except UnknownCharactersError as error:
        from xtts_cli.data.text import where_in

        item = items[error.index or 0]
        raise XttsError(
            f"{item_place(item)}: {error.lines[0]}",
            hint=f"{where_in(error.characters, item.text)}; the run's vocabulary was fixed when it started: train "
            "these transcripts in a new run that starts from this one (xtts train --init-from RUN grows it), "
            "or start over (--fresh)",
        ) from None


def _refuse_outrunning(items: Sequence[DatasetItem], text_ids: TokenIds, frames: Sequence[int]) -> None:
    """A clip whose ids outnumber its frames, which the duration decoder's aligner cannot read (the
    scan leaves out those its text shows; a reading of numbers as words can lengthen one after)."""
    over = np.flatnonzero(text_ids.lengths > np.asarray(frames))
    if len(over):
        item = items[int(over[0])]
        raise XttsError(
            f"{item_place(item)}: {int(text_ids.lengths[over[0]])} symbols for {frames[int(over[0])]} mel "
            f"frames: the transcript says more than the clip holds ({len(over)} clip(s) like it)",
            hint="correct the transcript or remove the line",
        )


def feature_bytes(frames: Sequence[int], data: DataConfig, output: Output) -> int:
    """Bytes the pipeline's features take in memory (cache mode) or on disk (the store, before its
    framing): mel frames x n_mels 16-bit steps, or 16-bit samples."""
    return kept_bytes(int(np.sum(frames, dtype=np.int64)), data, output)


def plan_pipeline(
    data: DataConfig,
    items: Sequence[DatasetItem],
    tokenizer: Tokenizer,
    *,
    training: bool,
    output: Output = "mel",
    budget_bytes: Optional[int] = None,
) -> PipelinePlan:
    """Plan a training (shuffled, full batches only) or validation (every clip, in order) pipeline.

    `budget_bytes`: the cache memory budget to decide `preprocessing_mode: auto` against; default
    `cache_budget_bytes(data)`.
    """
    items = tuple(items)
    if not items:
        raise XttsError(
            f"no {'training' if training else 'validation'} items to build a pipeline from",
            hint="check the dataset scan report (xtts validate) and data.eval_fraction",
        )
    if output not in ("mel", "audio"):
        raise ValueError(f"output must be 'mel' or 'audio', got {output!r}")
    text_ids = encode_texts(items, tokenizer)
    frames = [mel_frames(item, data) for item in items]
    _refuse_outrunning(items, text_ids, frames)
    buckets: Optional[BucketPlan] = None
    bucket_of = np.zeros(len(items), dtype=np.int64)
    batching: Literal["bucketed", "fixed", "dynamic"]
    if data.pad_to_fixed_length:
        batching = "fixed"
    elif data.bucket_by_length:
        batching = "bucketed"
        buckets = plan_buckets(
            frames, text_ids.lengths.tolist(), data.num_buckets, min_size=data.batch_size if training else 1
        )
        bucket_of = buckets.bucket_of(frames).astype(np.int64)
    else:
        batching = "dynamic"
    return PipelinePlan(
        data=data,
        output=output,
        training=training,
        items=items,
        decision=decide_mode(data, feature_bytes(frames, data, output), budget_bytes=budget_bytes),
        formats=audio_formats(items),
        text_ids=text_ids,
        frames=frames,
        batching=batching,
        buckets=buckets,
        bucket_of=bucket_of,
    )


def tokenizer_for(report: ScanReport, data: DataConfig, items: Optional[Sequence[DatasetItem]] = None) -> Tokenizer:
    """A tokenizer over every kept item's text (`items`, default the scan's), training and
    validation alike, with the config's languages and the scan's speakers (largest first).

    The vocabulary is only a symbol inventory, so including validation texts leaks nothing, and it
    keeps a symbol that happens to occur only in validation from failing the eval set.
    """
    items = report.items if items is None else list(items)
    prepared = prepared_texts(items, Tokenizer([], data.text_cleaners, frontend=data.text_frontend, numbers="words"))
    minutes: dict[str, float] = {}
    for item in report.train or items:
        minutes[item.speaker] = minutes.get(item.speaker, 0.0) + item.audio.duration
    texts = list(prepared if prepared is not None else (item.training_text for item in items))
    if data.text_frontend == "characters":
        # The languages' whole alphabets: a letter the transcripts lack is still read (module text.py).
        texts.append("".join(sorted(alphabet_of(data.languages, data.text_cleaners))))
    return Tokenizer.build(
        texts,
        data.text_cleaners,
        frontend=data.text_frontend,
        languages=data.languages,
        speakers=sorted(minutes, key=lambda name: (-minutes[name], name)),
        prepared=prepared is not None,
        numbers="words",
    )


def expected_batch_max(lengths: np.ndarray, batch_size: int) -> float:
    """The expected longest of `batch_size` lengths drawn without replacement, as a uniform
    shuffle draws a batch: the i-th shortest of n is the longest with probability
    C(i-1, B-1) / C(n, B), built up as a running product in logs (n may be millions)."""
    import math

    ordered = np.sort(np.asarray(lengths, dtype=np.float64))
    n, b = len(ordered), min(batch_size, len(ordered))
    if n == 0:
        return 0.0
    first = -(math.lgamma(n + 1) - math.lgamma(b + 1) - math.lgamma(n - b + 1))  # i = b: C(b-1, b-1) = 1
    i = np.arange(b, n, dtype=np.float64)  # from i to i + 1: times i / (i - b + 1)
    log_p = first + np.concatenate([[0.0], np.cumsum(np.log(i) - np.log(i - b + 1))])
    return float(np.dot(np.exp(log_p), ordered[b - 1 :]))
