"""The one config model every command reads.

Each field is typed, ranged, documented and has a default; `docs/config.md` is generated from
these descriptions (`python -m xtts_cli.config.reference`), and a test fails when it is stale.
Keys from the user's old configs are accepted with their meaning; keys the user wrote under `data`
that belong to `training` are aliases resolved in `loading.py` before this model sees them.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Literal, Optional, Union

from pydantic import ByteSize, Field, field_validator, model_validator

from xtts_cli.config.model_kinds import AcousticConfig, ModelSection, VocoderConfig
from xtts_cli.config.section import Section as _Section

# Keras and NumPy take a seed of 32 unsigned bits: a negative or larger training.seed had passed validate
# and ended training in a traceback. (data.seed and synthesis.seed take any integer, as they always did.)
SEED_MAX = 2**32 - 1

# Host contention under this share is the step's own noise: no finding names it (config/remedies.py).
CONTENTION_INFO_PERCENT = 5.0

Auto = Literal["auto"]

TEXT_CLEANERS = ("basic_cleaners", "english_cleaners", "multilingual_cleaners", "no_cleaners")
# Corpus layouts the scan reads (xtts_cli/data/layouts.py); `auto` detects one from the folder.
DATASET_FORMATS = ("ljspeech", "coqui", "manifest", "vctk", "libritts", "common_voice", "nemo", "folder")
DatasetFormat = Literal["auto", "ljspeech", "coqui", "manifest", "vctk", "libritts", "common_voice", "nemo", "folder"]


def service_host_port(address: str) -> tuple[str, int]:
    """(host, port) of a tf.data service address, `grpc://HOST:PORT` or `HOST:PORT` (`[::1]:PORT` for IPv6).

    Raises ValueError saying what is expected when it is not one (`data.service_address` and the
    `xtts data-service worker --dispatcher` option both use it).
    """
    rest = address[len("grpc://") :] if address.startswith("grpc://") else address
    host, sep, port = rest.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or "/" in rest or " " in rest or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError("expected grpc://HOST:PORT or HOST:PORT (e.g. grpc://10.0.0.5:5050)")
    return host, int(port)


# The highest mel filter (Hz) by default: LJSpeech-era vocoders' 8 kHz (coqui, TensorFlowTTS).
DEFAULT_FMAX = 8000.0
_LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{1,8})*$")


def _blank_is_none(value: object) -> object:
    """An empty or blank path reads as not given (the field's "Empty: ..." meaning), not as the
    current directory that `Path("")` would make of it."""
    return None if isinstance(value, str) and not value.strip() else _no_variable(value)


# $HOME, ${DATA}: a shell's words, which a config file does not expand.
_VARIABLE = re.compile(r"\$(\{[A-Za-z_]\w*(?:[:?+=-][^}]*)?\}|[A-Za-z_]\w*)")  # ${WALK:-/tmp} too


def _no_variable(value: object) -> object:
    """A path with an environment variable in it is refused: read as written, it had made a folder
    named `${WALK}` (and a dataset path `${HOME}/data` was said not to exist)."""
    found = _VARIABLE.search(value) if isinstance(value, str) else None
    if found:
        raise ValueError(
            f"holds the environment variable {found.group()}, which a config does not expand: write the path "
            "(~ is read as your home), or give it with --set from a shell, which expands it"
        )
    return value


def _language_code(value: object) -> object:
    """A language code as espeak-ng spells them (`en`, `en-us`, `fa`, `cmn`), lower-cased; a locale's
    underscore (`pt_BR`, as datasets and operating systems write it) read as its hyphen."""
    if value is None or not isinstance(value, str):
        return value
    code = value.strip().lower().replace("_", "-")
    if not _LANGUAGE_CODE.match(code):
        raise ValueError(f"{value!r} is not a language code; write an espeak-ng code such as en, en-us, fa or de")
    return code


class DatasetSource(_Section):
    """One of several datasets trained on together (`data.datasets`)."""

    path: str = Field(description="Dataset root, as `data.dataset_path`.")
    format: DatasetFormat = Field("auto", description="Its layout, as `data.dataset_format`.")
    weight: float = Field(
        1.0,
        gt=0.0,
        le=1000.0,
        description="Share of training draws from this dataset, relative to the others' weights. Every clip "
        "is seen at least once an epoch; a dataset's clips repeat (rounded to whole repeats) until its share "
        "of the epoch matches its weight.",
    )
    language: Optional[str] = Field(
        None, description="Language of its transcripts, an espeak-ng code (`en`, `fa`, `de`). Empty: `data.language`."
    )
    metadata_train_file: Optional[str] = Field(
        None,
        description="Its metadata file, relative to its `path` (a manifest's `train.tsv`). Empty: "
        "`data.metadata_train_file`.",
    )

    _language = field_validator("language", mode="before")(lambda value: _language_code(value))
    _blank_file = field_validator("metadata_train_file", mode="before")(_blank_is_none)

    @field_validator("path")
    @classmethod
    def _a_path(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("is empty; give the dataset's folder")
        return _no_variable(value)  # type: ignore[return-value]


class DataConfig(_Section):
    """Where the speech is and how it becomes batches."""

    dataset_path: Optional[str] = Field(
        None,
        description="Dataset root (any layout of `dataset_format`). Relative paths are taken from the current "
        "directory. Empty (and no `datasets`): the sample bundled with xtts.",
    )
    dataset_format: DatasetFormat = Field(
        "auto",
        description="Layout of `dataset_path`: `ljspeech` (metadata.csv, 2 or 3 columns), `coqui` (metadata.csv "
        "with the header audio_file|text|speaker_name), `manifest` (CSV/TSV whose header names the audio and text columns: path or file, text or transcript, ...), `vctk` "
        "(0.92 FLAC or the older wav48), `libritts` (a split folder or the corpus root: its train-* splits), "
        "`common_voice` (validated.tsv, else train.tsv, with clips/), `nemo` (JSON-lines manifest), `folder` (each "
        "clip beside its transcript, clip.wav + clip.txt or clip.lab, in the folder or one folder per speaker). "
        "`auto`: detected from the folder.",
    )
    datasets: list[DatasetSource] = Field(
        default_factory=list,
        description="Several datasets trained on together, each `{path, format, weight, language, "
        "metadata_train_file}` (all but `path` optional); instead of `dataset_path`. Validation takes "
        "`eval_fraction` of each.",
    )
    metadata_train_file: str = Field(
        "metadata.csv",
        description="Training metadata file, relative to `dataset_path` (ljspeech, coqui, manifest; for nemo and "
        "common_voice, when it names an existing manifest or .tsv).",
    )
    metadata_eval_file: Optional[str] = Field(
        None,
        description="Validation metadata file, relative to `dataset_path`. Empty: a deterministic "
        "split of the training metadata by id hash (`eval_fraction`).",
    )
    eval_dataset_path: Optional[str] = Field(
        None,
        description="A separate validation dataset root (same layout as `dataset_path`, every item used "
        "for validation, and every item of `dataset_path` trained: `eval_fraction` holds none out), read in "
        "the language the training datasets share (`datasets[].language`), else in `language`. Empty: "
        "validation items come from `dataset_path`.",
    )
    eval_fraction: float = Field(
        0.05, ge=0.0, lt=1.0, description="Share of items held out for validation when no eval file is given."
    )
    max_bad_file_fraction: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        description="The dataset scan reports and skips bad files; above this share of bad items it fails. Clips "
        "outside the length limits below are left out and reported, but not counted as bad.",
    )
    scan_cache: bool = Field(
        True,
        description="Remember each audio file's header, keyed by its size and modification time, in "
        "~/.cache/xtts/scan ($XDG_CACHE_HOME), so a second start reads only the files that changed.",
    )
    allow_absolute_paths: bool = Field(
        False,
        description="Let metadata name audio outside the dataset root (absolute paths, `..`, or symlinks that "
        "lead out); the scan then counts the clips read from outside.",
    )
    sample_rate: int = Field(
        22050, ge=8000, le=96000, description="Sample rate (Hz) training runs at; files at other rates are resampled."
    )
    n_mels: int = Field(80, ge=8, le=512, description="Mel bins.")
    n_fft: int = Field(1024, ge=64, le=16384, description="FFT size in samples.")
    hop_length: int = Field(256, ge=16, le=8192, description="Hop between mel frames in samples.")
    win_length: int = Field(1024, ge=16, le=16384, description="Analysis window length in samples (<= n_fft).")
    fmin: float = Field(0.0, ge=0.0, description="Lowest mel filter frequency (Hz).")
    fmax: Optional[float] = Field(
        DEFAULT_FMAX,
        gt=0.0,
        description="Highest mel filter frequency (Hz). Empty: sample_rate / 2, which it also is by default "
        "below 16 kHz.",
    )
    mel_filterbank: Literal["slaney", "htk"] = Field(
        "slaney", description="Mel scale and filter normalisation, as in librosa (`slaney` is librosa's default)."
    )
    text_cleaners: list[Literal[TEXT_CLEANERS]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: ["multilingual_cleaners"],
        description="Text cleaners applied in order: `basic_cleaners` (lowercase, collapse whitespace), "
        "`english_cleaners` (also what capitals tell in English: a street's St., an acronym's letters), "
        "`multilingual_cleaners` (Unicode NFKC, lowercase, whitespace; safe for any script), `no_cleaners`. "
        "Numbers, abbreviations and units are read as words by each language's reading after them, whichever "
        "cleaner (data.md).",
    )
    text_frontend: Literal["characters", "phonemes"] = Field(
        "characters",
        description="What the model reads. `characters`: the transcript's letters after the cleaners, for any "
        "script with no language knowledge. `phonemes`: espeak-ng's phonemes of each dataset's `language` "
        "(word boundaries and the common punctuation kept: ; : , . ! ? ¡ ¿ — … quotes « » “ ” brackets ( ) and ، ؛ ؟; "
        "an en dash or a hyphen between spaces is read as the dash, ‹ › [ ] as « » ( ); other marks espeak-ng reads "
        "as words where the language has one, `/` as slash, and as nothing where not, `{ }`), computed once with the dataset scan and cached with it; one "
        "spelling per sound, which letters lack (English spelling, Persian's unwritten short vowels).",
    )
    language: str = Field(
        "en",
        description="Language of the transcripts, an espeak-ng code (`en`, `fa`, `de`; `xtts validate` lists "
        "them): the phonemes' language, its text normalisation (Persian: letter forms, ZWNJ, digits read out), "
        "and the language id the model is conditioned on. Each `datasets` entry may set its own.",
    )
    reference_from_other_clips: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Share of training clips whose speaker reference is cropped from another clip of the same "
        "speaker in the batch instead of from the clip itself (when the batch has one), so the speaker encoder "
        "learns the voice, not the clip: a crop of the target lets the model copy what it is about to say. 0: "
        "always the clip itself.",
    )
    max_text_length: int = Field(
        200,
        ge=1,
        le=10000,
        description="Longest text in characters; longer items are filtered out and counted, never truncated.",
    )
    min_audio_duration: float = Field(
        0.5, ge=0.0, description="Shortest clip kept (seconds, the file's length: before `trim_silence`)."
    )
    max_audio_duration: float = Field(
        10.0, gt=0.0, description="Longest clip kept (seconds, the file's length: before `trim_silence`)."
    )
    max_mel_frames: int = Field(
        870,
        ge=8,
        description="Longest mel sequence in frames; must cover `max_audio_duration` at this hop and rate.",
    )
    reference_frames: int = Field(
        96,
        ge=8,
        description="Length in mel frames of the speaker reference the model is conditioned on: a crop "
        "of each clip's own mel, from a random start every training step (the first frames in evaluation).",
    )
    trim_silence: bool = Field(
        False,
        description="Trim leading and trailing silence from each clip (the duration limits and buckets still see its whole length).",
    )
    normalize_loudness: bool = Field(False, description="Scale each clip to a common RMS loudness.")
    batch_size: int = Field(
        16,
        ge=1,
        le=65536,
        description="Samples per batch, per replica: with `devices.strategy` mirrored or multi_worker a step "
        "trains on batch_size x the replicas in sync (every GPU of every worker).",
    )
    num_workers: Union[int, Auto] = Field(
        "auto",
        description="Parallel calls in the input pipeline's map stages. `auto`: TensorFlow's AUTOTUNE, "
        "which tracks the machine's cores.",
    )
    prefetch_buffer_size: Union[int, Auto] = Field(
        "auto", description="Batches prepared ahead of the training step. `auto`: AUTOTUNE. 0 turns prefetch off."
    )
    pipeline_buffer_size: int = Field(
        0,
        ge=0,
        description="Decoded examples buffered between the feature stage and batching, so a slow file "
        "does not stall the batcher. 0: none.",
    )
    shuffle_buffer_multiplier: int = Field(
        10,
        ge=0,
        description="Shuffle buffer of decoded clips (cache mode, after the cache) and of store records "
        "(precompute), as a multiple of `batch_size`; the order of each bucket's clips is shuffled in full "
        "every epoch (runtime, and cache's first epoch) whatever the value. 0: no shuffling.",
    )
    use_tf_native_loading: bool = Field(
        True,
        description="Decode audio and compute mel features with TensorFlow ops inside the graph. "
        "`false` is the old `tf.numpy_function` path, kept only as a measured baseline.",
    )
    preprocessing_mode: Literal["auto", "runtime", "cache", "precompute"] = Field(
        "auto",
        description="`runtime`: features every epoch; `cache`: computed once and kept in memory; "
        "`precompute`: written to disk under `feature_cache_dir` in a few large shards of clips of similar "
        "length, keyed by the feature settings and each file's size, mtime and ctime (a changed file rebuilds its "
        "shard), and read into memory at the start when they fit `cache_memory_limit` padded to their length "
        "buckets, else read from the shards every epoch; `auto`: `cache` when the features, estimated from the scan "
        "before anything is decoded, fit `cache_memory_limit`, else `precompute`.",
    )
    cache_memory_limit: Union[Auto, ByteSize] = Field(
        "auto",
        description="Memory the in-memory feature cache, or the precompute store read into memory, may take, in "
        "bytes or with a unit (`8GB`, `512MiB`). `auto`: a quarter of the memory the machine has available when "
        "the run starts. `auto` mode caches only below it; an explicit `cache` over it is an error; a precompute "
        "store over it is read from its shards every epoch (`0`: always).",
    )
    feature_cache_dir: Optional[str] = Field(
        None,
        description="Where `precompute` writes features. Empty: `<dataset_path>/.xtts_features`; for the "
        "bundled sample, or a dataset on a disk xtts cannot write, `~/.cache/xtts/features/` (`$XDG_CACHE_HOME`).",
    )
    pad_to_fixed_length: bool = Field(
        False,
        description="Pad every batch to `max_text_length` x `max_mel_frames`: one static shape, most padding.",
    )
    bucket_by_length: bool = Field(
        True,
        description="Group clips of similar length and pad to bucket boundaries: few static shapes, little padding.",
    )
    num_buckets: int = Field(8, ge=1, le=64, description="Length buckets when `bucket_by_length` is on.")
    prefetch_to_gpu: bool = Field(
        True, description="End the pipeline with a prefetch onto the model's device, so the hand-off overlaps the step."
    )
    enhanced_gpu_prefetch: bool = Field(
        True,
        description="With `prefetch_to_gpu`, keep `prefetch_buffer_size` batches on the device instead of one.",
    )
    optimize_cpu_gpu_overlap: bool = Field(
        True,
        description="Let tf.data parallelise map and batch, autotune buffers and give up element order "
        "for speed (`deterministic: false`).",
    )
    pin_memory: Optional[bool] = Field(
        None,
        description="PyTorch DataLoader setting with no effect in TensorFlow; accepted so old configs load, "
        "and `validate --fix` removes it.",
        json_schema_extra={"no_effect": "a PyTorch DataLoader setting; TensorFlow has no pinned-memory switch"},
    )
    seed: int = Field(1234, description="Seed for shuffling and the train/validation split.")
    service_address: Optional[str] = Field(
        None,
        description="tf.data service dispatcher (`grpc://HOST:PORT` or `HOST:PORT`) whose workers make the "
        "training batches on their own CPUs: start it with `xtts data-service dispatcher --port PORT --bind 0.0.0.0` "
        "and each worker with `xtts data-service worker --dispatcher HOST:PORT --bind 0.0.0.0` on a trusted network "
        "(docs/scaling.md: the servers have no authentication). Workers read the audio "
        "at the paths the trainer sees. Validation batches are always made locally. Empty: the local pipeline.",
    )
    service_sharding: Literal["dynamic", "off"] = Field(
        "dynamic",
        description="How the tf.data service splits an epoch between its workers. `dynamic` "
        "(ShardingPolicy.DYNAMIC): the dispatcher hands clips out on demand, so each clip is made once per "
        "epoch (a worker's last partial batch per bucket sits out, as training drops partial batches). `off` "
        "(ShardingPolicy.OFF): every worker makes the whole epoch in its own random order (not reproducible "
        "from `seed`), so one epoch holds each clip once per worker.",
    )

    _language = field_validator("language", mode="before")(lambda value: _language_code(value))
    # YAML 1.1 reads a bare `off` as false: what the user wrote, as the docs spell it.
    _sharding_off = field_validator("service_sharding", mode="before")(lambda value: "off" if value is False else value)

    @property
    def languages(self) -> list[str]:
        """The languages of the datasets, in the order they are listed (`data.language` first without `datasets`)."""
        if not self.datasets:
            return [self.language]
        return list(dict.fromkeys(d.language or self.language for d in self.datasets))

    @field_validator("service_address", mode="before")
    @classmethod
    def _service_address(cls, value: object) -> object:
        if isinstance(value, str):
            value = value.strip() or None
        if value is not None:
            try:
                service_host_port(str(value))
            except ValueError as exc:
                raise ValueError(
                    f"{exc}, the address `xtts data-service dispatcher --port PORT` listens on; "
                    "leave it empty for the local pipeline"
                ) from None
        return value

    _blank_paths = field_validator(
        "dataset_path", "eval_dataset_path", "metadata_eval_file", "feature_cache_dir", mode="before"
    )(_blank_is_none)
    _written_file = field_validator("metadata_train_file")(_no_variable)

    @field_validator("num_workers", "prefetch_buffer_size", mode="before")
    @classmethod
    def _whole_number_or_auto(cls, value: object, info) -> object:
        lowest = 0 if info.field_name == "prefetch_buffer_size" else 1
        if isinstance(value, str) and value.strip().lower() == "auto":
            return "auto"
        number = value
        if isinstance(value, str):
            try:
                number = int(value.strip())
            except ValueError:
                number = None
        if isinstance(number, bool) or not isinstance(number, int) or number < lowest:
            raise ValueError(f"must be a whole number >= {lowest} or 'auto'")
        return number

    @model_validator(mode="before")
    @classmethod
    def _fmax_follows_a_low_rate(cls, values: Any) -> Any:
        """At 8 or 11.025 kHz the default 8 kHz lies above the audio: unwritten, fmax is the rate's half."""
        if isinstance(values, dict) and "fmax" not in values:
            rate = values.get("sample_rate")
            if isinstance(rate, (int, float)) and not isinstance(rate, bool) and rate / 2 < DEFAULT_FMAX:
                return {**values, "fmax": None}
        return values

    @model_validator(mode="after")
    def _consistent(self) -> DataConfig:
        if self.datasets and self.dataset_path:
            raise ValueError(
                "dataset_path and datasets are both set; list every dataset under datasets, or give one as dataset_path"
            )
        if self.win_length > self.n_fft:
            raise ValueError(f"win_length ({self.win_length}) must be <= n_fft ({self.n_fft})")
        nyquist = self.sample_rate / 2
        if self.fmax is not None and self.fmax > nyquist:
            raise ValueError(
                f"fmax ({self.fmax:g}) must be <= sample_rate / 2 ({nyquist:g}); set fmax to {nyquist:g} or lower"
            )
        if self.fmax is not None and self.fmin >= self.fmax:
            raise ValueError(f"fmin ({self.fmin:g}) must be below fmax ({self.fmax:g})")
        if self.min_audio_duration >= self.max_audio_duration:
            raise ValueError(
                f"min_audio_duration ({self.min_audio_duration:g}) must be below "
                f"max_audio_duration ({self.max_audio_duration:g})"
            )
        return self

    @property
    def mel_frames_per_second(self) -> float:
        return self.sample_rate / self.hop_length

    def mel_frames_for(self, seconds: float) -> int:
        """Frames a clip of `seconds` yields with centred STFT framing (1 + samples // hop)."""
        return 1 + int(round(seconds * self.sample_rate)) // self.hop_length


class TrainingConfig(_Section):
    """The training loop."""

    epochs: int = Field(
        1000, ge=1, description="Epochs to train (training stops at whichever of epochs and max_steps comes first)."
    )
    max_steps: Optional[int] = Field(
        None,
        ge=1,
        description="Steps (batches) to train; with gradient_accumulation_steps N, an optimizer update every N. "
        "Empty: no step limit.",
    )
    max_minutes: Optional[float] = Field(
        None,
        gt=0,
        description="Wall-clock budget of the run, start-up included, over all the commands that train it (a "
        "resumed run spends what is left): after the step that "
        "passes it, training ends as at max_steps (a checkpoint of that step is saved), so a slower machine or "
        "longer clips train fewer steps instead of running long; a cosine schedule decays over the budget too "
        "when it runs out before max_steps. Empty: none. Not with a multi_worker strategy.",
    )
    learning_rate: float = Field(5e-4, gt=0.0, le=1.0, description="Peak learning rate.")
    optimizer: Literal["adamw", "adam", "sgd"] = Field("adamw", description="Optimizer.")
    weight_decay: float = Field(0.01, ge=0.0, description="Decoupled weight decay (AdamW).")
    lr_schedule: Literal["constant", "cosine", "noam"] = Field(
        "cosine",
        description="Learning-rate schedule after warm-up. cosine: down to 10 % of the peak over max_steps, or "
        "over max_minutes when the time runs out first (whichever is further along).",
    )
    warmup_steps: int = Field(200, ge=0, description="Linear warm-up steps.")
    gradient_clip_norm: float = Field(1.0, ge=0.0, description="Clip gradients to this global norm. 0: no clipping.")
    gradient_accumulation_steps: int = Field(
        1,
        ge=1,
        description="Steps whose gradients are averaged into one optimizer update (an effective batch N times "
        "data.batch_size). max_steps, warmup_steps and the schedule still count steps.",
    )
    enable_graph_mode: bool = Field(True, description="Compile the training step with `tf.function`.")
    enable_xla_compilation: Union[bool, Auto] = Field(
        "auto",
        description="Compile the training step with XLA (`jit_compile`). `auto`: on when the model runs on a "
        "GPU and the run is planned to last (`max_steps` >= 1000 or unset, `max_minutes` >= 10 or unset); off on "
        "a CPU at any length, where XLA's step measured slower than plain graph mode "
        "(benchmarks/cpu_scaling.py --part xla).",
    )
    enable_eager_debug: bool = Field(False, description="Run the step eagerly for debugging. Slow.")
    mixed_precision: Union[bool, Auto] = Field(
        False,
        description="Compute in 16-bit floats with float32 master weights (needs a GPU of compute capability >= 7.0). "
        "`auto`: on where the model runs on GPUs NVML names, each of compute capability >= 7.0 (>= 8.0 for "
        "bfloat16); off on a CPU, so one file trains right on both.",
    )
    mixed_precision_dtype: Literal["float16", "bfloat16"] = Field(
        "float16", description="16-bit type for mixed precision; `bfloat16` needs compute capability >= 8.0."
    )
    save_step: int = Field(1000, ge=1, description="Save a checkpoint every this many steps.")
    val_step: int = Field(500, ge=1, description="Compute validation loss every this many steps.")
    log_step: int = Field(50, ge=1, description="Write a metrics line every this many steps.")
    max_val_batches: int = Field(20, ge=1, description="Batches averaged for one validation loss.")
    sample_step: int = Field(1000, ge=1, description="Render the test sentences to WAV every this many steps.")
    test_sentences: list[str] = Field(
        default_factory=list,
        description="Sentences rendered to `<run_dir>/samples/` every `sample_step`, read as `xtts synthesize` "
        "reads them: a letter the run lacks read as its plain one, a mark it lacks left out, each said once; a "
        "sentence in a script the run does not read is said and skipped. Empty: the first validation clip's text.",
    )
    keep_checkpoints: int = Field(5, ge=1, description="Checkpoints kept in the run directory.")
    checkpoint_dir: Optional[str] = Field(
        None,
        description="Where checkpoints go: a folder relative to the run directory, or an absolute path (a faster "
        "or larger disk), one per run (another run's is refused; --fresh moves it aside too); to change it on a run, "
        "move its checkpoints there first (a resume that finds none there is refused). Empty: `<run_dir>/checkpoints`.",
    )
    run_dir: Optional[str] = Field(
        None,
        description="Run directory. Empty: `runs/` and the config's name (`runs/speak-cpu`; the same command "
        "resumes it).",
    )
    seed: int = Field(1234, ge=0, le=SEED_MAX, description="Seed for weights and dropout.")
    init_from: Optional[str] = Field(
        None,
        description="Start a new run from another run's weights (`xtts train --init-from RUN`): its run directory "
        "(its latest checkpoint) or a checkpoint path (`runs/base/checkpoints/ckpt-4000`). Weights are matched "
        "by name and shape; the new data's symbols, languages and speakers get new rows and the base's keep "
        "their ids. The same kind, sizes, mel features and text front end as the base. Empty: random weights.",
    )
    freeze: list[str] = Field(
        default_factory=list,
        description="Parts of the model that do not train (adapting a base to little data): for an acoustic "
        "model `text_encoder`, `speaker_encoder`, `decoder`, `postnet` (a vocoder has none).",
    )
    early_stop_patience: Optional[int] = Field(
        None,
        ge=1,
        description="Stop when the validation loss has not improved for this many validations in a row; the "
        "run ends with the weights of its best validation (its last checkpoint holds them), as does one "
        "max_steps or max_minutes ends after a worse validation. Empty: train to max_steps or max_minutes.",
    )

    _blank_paths = field_validator("checkpoint_dir", "run_dir", "init_from", mode="before")(_blank_is_none)


class DevicesConfig(_Section):
    """Which devices do what. Indices are the ones `nvidia-smi` shows."""

    strategy: Literal["auto", "single", "mirrored", "multi_worker"] = Field(
        "auto",
        description="`single`: one device; `mirrored`: MirroredStrategy over all chosen GPUs; `auto`: "
        "mirrored when more than one GPU is visible and no data/model split is asked for; `multi_worker`: "
        "MultiWorkerMirroredStrategy over several machines, each using all its visible GPUs (or its CPU), the "
        "cluster from TF_CONFIG or `xtts train --worker-hosts H1:P1,H2:P2 --task-index I` (docs/scaling.md).",
    )
    data_gpu: Optional[int] = Field(
        None, ge=0, description="GPU that runs input-side feature work. Set together with `model_gpu`."
    )
    model_gpu: Optional[int] = Field(None, ge=0, description="GPU that runs the model.")
    enable_memory_isolation: bool = Field(
        False,
        description="Give the data and model GPUs fixed memory limits (logical devices) instead of memory growth.",
    )
    data_gpu_memory: Optional[int] = Field(
        None, ge=1, description="Memory limit (MiB) on the data GPU under memory isolation."
    )
    model_gpu_memory: Optional[int] = Field(
        None, ge=1, description="Memory limit (MiB) on the model GPU under memory isolation."
    )
    logical_cpu_devices: int = Field(
        0,
        ge=0,
        le=16,
        description="CPU twin for machines without GPUs: split the CPU into this many logical devices and "
        "use them where GPUs would be (`data_gpu`/`model_gpu` then index these). 0: off.",
    )

    @property
    def splits_data_and_model(self) -> bool:
        """A data-GPU / model-GPU split is asked for: the pipeline then hands over audio, and the data
        device computes the log-mels."""
        return self.data_gpu is not None and self.model_gpu is not None

    @model_validator(mode="after")
    def _split_is_a_pair(self) -> DevicesConfig:
        if (self.data_gpu is None) != (self.model_gpu is None):
            given = "data_gpu" if self.data_gpu is not None else "model_gpu"
            missing = "model_gpu" if given == "data_gpu" else "data_gpu"
            raise ValueError(
                f"{given} is set but {missing} is not; set both (e.g. --data-gpu 0 --model-gpu 1) or neither"
            )
        if self.strategy == "multi_worker" and (self.data_gpu is not None or self.logical_cpu_devices):
            # MultiWorkerMirroredStrategy runs one replica per visible GPU of each worker (or one on
            # its CPU); it has no data/model split and ignores logical CPU devices.
            what = "data_gpu/model_gpu" if self.data_gpu is not None else "logical_cpu_devices"
            raise ValueError(
                f"strategy multi_worker uses every GPU of each worker (or its CPU) and cannot be combined with "
                f"{what}; remove {what}, or set strategy: auto"
            )
        return self


class ProfilingConfig(_Section):
    """Defaults for `profile-pipeline`, `profile-step`, `diagnose` and `benchmark`."""

    warmup_batches: int = Field(
        5,
        ge=0,
        description="Batches or steps run before timing starts; the profilers run at least one per length bucket "
        "(a training epoch starts every bucket in its first batches).",
    )
    num_batches: int = Field(50, ge=2, description="Batches timed by `profile-pipeline` and `diagnose`.")
    num_steps: int = Field(100, ge=2, description="Training steps timed by `profile-step`.")
    gpu_sample_hz: float = Field(
        10.0, ge=4.0, le=100.0, description="NVML sampling rate per GPU (NVML's own window is 1/6 s to 1 s)."
    )


class WatchConfig(_Section):
    """What `xtts train` watches while it runs, over a sliding window of the last steps: one warning
    when a figure crosses its line (the finding, the figure and the fix, as `diagnose` words it),
    said again at most every `repeat_minutes` while it lasts, and one line when it is back (a figure
    that crosses again after that is a new warning)."""

    enabled: bool = Field(True, description="Watch the run; off, nothing is measured beyond the progress line.")
    window_seconds: float = Field(
        30.0, ge=1.0, le=3600.0, description="The stretch of steps each figure is taken over, in seconds."
    )
    data_wait_percent: float = Field(
        20.0,
        gt=0.0,
        le=100.0,
        description="Share of step time spent waiting for data at which the run is input-bound (the TF "
        "Profiler's 'highly input-bound' band starts at 20 %).",
    )
    host_contention_percent: float = Field(
        20.0,
        ge=CONTENTION_INFO_PERCENT,
        description="How much slower the step computes than its own best stretch of the run, with little "
        "data wait, before something is named as taking its CPU (profile-step's host contention line); "
        f"under {CONTENTION_INFO_PERCENT:g} % is the step's own noise.",
    )
    oscillation_cv: float = Field(
        0.25,
        gt=0.0,
        description="The data wait's coefficient of variation at which a regular cycle in it (found by its "
        "autocorrelation) is reported: the pipeline delivering in bursts.",
    )
    gpu_util_percent: float = Field(
        50.0,
        ge=0.0,
        le=100.0,
        description="A GPU in use whose utilisation stays under this over the window is named (NVML; each card "
        "on its own).",
    )
    gpu_memory_percent: float = Field(
        95.0, gt=0.0, le=100.0, description="A GPU's memory in use at or above this share is named."
    )
    recover_fraction: float = Field(
        0.5,
        gt=0.0,
        lt=1.0,
        description="A finding is back to normal once its figure is under this fraction of its line (a GPU's "
        "utilisation: once its distance to 100 % is under this fraction of the line's, 75 % for a line of 50 and "
        "0.5), so a figure hovering at the line does not warn and recover in turn.",
    )
    repeat_minutes: float = Field(
        10.0,
        ge=0.0,
        description="The least time before the same finding is warned of again while it lasts; 0 warns again at "
        "every check it lasts through (every few steps: a line a second or two).",
    )


class SynthesisConfig(_Section):
    """How `xtts synthesize` and the samples rendered during training generate speech. `synthesize`,
    `serve` and `export` read them from the run's own RUN/config.yaml: edit them there (or resume
    training with `--set synthesis.KEY=VALUE`, which writes them there)."""

    attention_constraint: bool = Field(
        True,
        description="Keep every decoding step's cross-attention within a window around the furthest text "
        "position the alignment has reached, which only moves forward (ESPnet's Tacotron 2 attention "
        "constraint, applied to every layer and head): speech reads the text once and in order, so a "
        "free-running decoder can neither skip words nor repeat them.",
    )
    attention_window_back: int = Field(
        1, ge=0, le=64, description="Text tokens behind the alignment's position the decoder may still attend to."
    )
    attention_window_ahead: int = Field(
        3, ge=1, le=64, description="Text tokens ahead of the alignment's position the decoder may attend to."
    )
    attention_prior: bool = Field(
        False,
        description="Add the diagonal attention prior of training (`model.attention_prior_steps`) to the "
        "cross-attention in synthesis too, centred where a sentence read at the training data's median pace "
        "would be (`speaking_rate.json`).",
    )
    stop_threshold: float = Field(0.5, gt=0.0, lt=1.0, description="Stop probability at which a sentence ends.")
    seed: int = Field(0, description="Seed of the prenet dropout kept on in synthesis (Tacotron 2 keeps it on).")

    @property
    def attention_window(self) -> Optional[tuple[int, int]]:
        """(back, ahead) for `XttsModel.generate`, or None without the constraint."""
        return (self.attention_window_back, self.attention_window_ahead) if self.attention_constraint else None


class XttsConfig(_Section):
    """The whole config: one file, seven sections."""

    data: DataConfig = Field(default_factory=DataConfig)
    model: ModelSection = Field(default_factory=AcousticConfig)
    training: TrainingConfig = Field(default_factory=TrainingConfig)
    devices: DevicesConfig = Field(default_factory=DevicesConfig)
    profiling: ProfilingConfig = Field(default_factory=ProfilingConfig)
    watch: WatchConfig = Field(default_factory=WatchConfig)
    synthesis: SynthesisConfig = Field(default_factory=SynthesisConfig)

    @model_validator(mode="after")
    def _freeze_names_parts(self) -> XttsConfig:
        parts = self.model.FREEZABLE_PARTS
        unknown = [name for name in self.training.freeze if name not in parts]
        if unknown:
            close = difflib.get_close_matches(unknown[0], parts, n=1, cutoff=0.6)
            listed = f"its parts are {', '.join(parts)}" if parts else "it has no parts to freeze"
            listed = f"did you mean {close[0]}? {listed}" if close else listed
            raise ValueError(
                f"training.freeze: {', '.join(map(repr, unknown))} is not a part of a model.kind "
                f"{self.model.kind} model; {listed}"
            )
        if parts and set(parts) <= set(self.training.freeze):
            raise ValueError(
                f"training.freeze names every part ({', '.join(parts)}): nothing would train; leave out the "
                "part to adapt (the decoder learns a voice)"
            )
        return self

    @property
    def acoustic(self) -> AcousticConfig:
        """The model section of an acoustic run (a vocoder run's config has none)."""
        if not isinstance(self.model, AcousticConfig):
            raise ValueError(f"model.kind is {self.model.kind}: this config has no acoustic model")
        return self.model

    @property
    def vocoder(self) -> VocoderConfig:
        """The model section of a vocoder run."""
        if not isinstance(self.model, VocoderConfig):
            raise ValueError(f"model.kind is {self.model.kind}: this config has no vocoder")
        return self.model
