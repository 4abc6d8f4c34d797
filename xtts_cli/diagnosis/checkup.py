"""`xtts diagnose`'s engine: every check that explains an idle GPU, in one report, ranked.

What it runs, in order (device configuration first: TensorFlow allows it once per process and the
environment probes start the runtime):
- environment: `check_environment()` (TensorFlow build, CUDA kernels per GPU, tensorflow-io if installed, XLA, GPUs, NVML);
- config rules: `check_config()` against this machine (`probe_machine()`);
- dataset: the scan (counts, formats, rates, duration histogram, bad files);
- the pipeline's graph: Python ops (`tf.numpy_function` -> PyFunc/EagerPyFunc) found in the
  serialized tf.data graph, the planned padding efficiency and the bound on batch shapes;
- timed (skipped with `quick`): the pipeline's rate (`profile_pipeline`, nothing else running),
  the model's rate (`profile_step(synthetic=True)`: resident batches, no pipeline), traces and
  retraces of the real step, and storage reads (`check_storage`) against the rate training reads.

pipeline X samples/s vs model Y samples/s gives the input-bound share training must have:
Z = max(0, 1 - X / Y) x 100 (the step waits for data for that share of its time when the pipeline
cannot keep up, even with perfect overlap). Findings are ranked errors, warnings, notes; within
each, the measured ones by expected gain (largest first), then the config's own.

When the pipeline is input-bound (Z >= 5 %) and this machine's CPUs are saturated while it is timed
(process CPU seconds per wall second over the timed batches >= 0.9 x usable cores), no local setting
can make it faster: the data-service finding gives the commands that move it onto other machines.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from typing import Any, Optional

from pydantic import BaseModel, Field

from xtts_cli.config.loading import LoadedConfig, data_variant
from xtts_cli.config.schema import XttsConfig
from xtts_cli.data.scan import OUTSIDE_LIMITS, DatasetReport
from xtts_cli.errors import XttsError
from xtts_cli.findings import SEVERITY_RANK, ConfigChange, Finding
from xtts_cli.host import CpuSampler
from xtts_cli.profiling.padding import padding_finding
from xtts_cli.profiling.step_timer import MODERATELY_INPUT_BOUND_PERCENT, input_bound_verdict
from xtts_cli.training.settings import graph_mode, xla_enabled

Progress = Optional[Callable[[str], None]]

PYTHON_OPS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})
HISTOGRAM_BINS = 10
# Config keys whose change makes the pipeline faster: their findings gain the measured input bound.
INPUT_KEYS = frozenset({
    "data.use_tf_native_loading", "data.prefetch_buffer_size", "data.num_workers", "data.preprocessing_mode",
    "data.feature_cache_dir", "data.pipeline_buffer_size", "data.optimize_cpu_gpu_overlap",
})  # fmt: skip
INPUT_FINDING_PREFIXES = ("input-bound", "storage-", "python-ops")
# Findings that say how a figure was measured, no remedy: no input-bound share is theirs to gain.
MEASUREMENT_NOTES = frozenset({"storage-figures-warm"})
# Cores kept busy / usable cores at which the CPU counts as saturated: a tf.data pipeline on AUTOTUNE
# that cannot go faster uses every core, minus the Python thread waiting in next() and the OS.
CPU_SATURATED_SHARE = 0.9


class RankedFinding(Finding):
    source: str = Field(description="environment, config, dataset, pipeline, model, storage or rates.")
    expected_gain_percent: Optional[float] = Field(
        None,
        description="The input-bound share this change addresses (measured; for host-contention, the "
        "contention measured); empty: not measured or not input.",
    )


class DurationBin(BaseModel):
    low: float = Field(description="Shortest duration of the bin, s.")
    high: float = Field(description="Longest duration of the bin, s.")
    count: int = Field(description="Clips in it.")


class DatasetSummary(BaseModel):
    dataset_path: str = Field(description="The dataset (the first, with data.datasets).")
    format: str = Field(
        description="Its layout (ljspeech, coqui, ...; mixed for several datasets of different layouts)."
    )
    datasets: list[DatasetReport] = Field(
        description="Per dataset: format, clips, hours, minutes per speaker, bad files."
    )
    train_items: int = Field(description="Good training items.")
    eval_items: int = Field(description="Good validation items.")
    bad_items: int = Field(description="Items skipped: bad files and lines, and those outside the length limits.")
    outside_limits: int = Field(0, description="Of bad_items, those left out by the length limits in `data`.")
    total_hours: float = Field(description="Hours of good audio.")
    min_duration: float = Field(description="Shortest good clip, s.")
    mean_duration: float = Field(description="Mean good clip, s.")
    max_duration: float = Field(description="Longest good clip, s.")
    formats: dict[str, int] = Field(description="Clips per audio format (wav, flac, ...).")
    sample_rates: dict[int, int] = Field(description="Clips per sample rate, Hz.")
    channels: dict[int, int] = Field(description="Clips per channel count.")
    speakers: int = Field(description="Speakers among the good clips.")
    duration_histogram: list[DurationBin] = Field(description="The good clips' durations in equal bins.")
    bad_files: list[dict[str, Optional[str]]] = Field(
        description="Items left out, each its path, reason, detail and source line."
    )
    feature_bytes_estimate: int = Field(
        0,
        description="Features of every clip as cache mode keeps them in memory, from the headers: 16-bit "
        "log-mels, or 16-bit audio samples when devices.data_gpu/model_gpu split the run; a training clip as "
        "often as its dataset's weight repeats it in an epoch (cache mode holds each repeat).",
    )
    cache_memory_limit_bytes: Optional[int] = Field(
        None, description="data.cache_memory_limit resolved; empty: unknown."
    )
    preprocessing_mode: Optional[str] = Field(None, description="data.preprocessing_mode resolved for this dataset.")


class Checkup(BaseModel):
    config: Optional[str] = Field(description="The config checked; null for the built-in defaults.")
    quick: bool = Field(description="--quick: the pipeline and the model were not timed.")
    environment: dict[str, Any] = Field(description="The environment checks (keys below).")
    dataset: Optional[DatasetSummary] = Field(None, description="The dataset report; null when it could not be read.")
    python_ops_in_pipeline: list[str] = Field(
        default_factory=list,
        description="Python ops (tf.numpy_function, tf.py_function) found in the input pipeline's graph: each runs under Python's GIL.",
    )
    padding_efficiency: Optional[float] = Field(
        None, description="Real mel frames / padded mel frames, from the pipeline plan."
    )
    shape_bound: Optional[int] = Field(
        None, description="The pipeline's bound on distinct batch shapes; null: unbounded."
    )
    pipeline_samples_per_sec: Optional[float] = Field(
        None, description="Clips a second the input pipeline delivers alone."
    )
    model_samples_per_sec: Optional[float] = Field(
        None, description="Clips a second the training step computes on resident batches (no pipeline)."
    )
    input_bound_percent: Optional[float] = Field(
        None,
        description="Share of step time spent waiting for data when the pipeline delivers "
        "pipeline_samples_per_sec and the step consumes model_samples_per_sec: max(0, 1 - pipeline / model) x 100, "
        "%, or data_wait_percent where the step waited more on the real pipeline (its batches not made while the "
        "step runs: no prefetch, or bursts).",
    )
    data_wait_percent: Optional[float] = Field(
        None,
        description="Share of step time the timed step waited for its batch on the real pipeline, % (profile-step's).",
    )
    verdict: Optional[str] = Field(
        None, description="That share in TensorFlow Profiler's bands (not, moderately or highly input bound)."
    )
    host_contention_percent: Optional[float] = Field(
        None,
        description="How much slower the step computes with the real pipeline beside it than on resident batches "
        "(profile-step's figure): the CPU the pipeline takes from the step.",
    )
    pipeline_cpu_cores_busy: Optional[float] = Field(
        None, description="Process CPU seconds per wall second while the pipeline's batches were timed (all threads)."
    )
    other_processes_cores_busy: Optional[float] = Field(
        None,
        description="Cores other processes kept busy, on the cores this one may use, while the pipeline and the "
        "step were timed (the larger of the two); null where that cannot be read (not Linux, a cgroup CPU quota).",
    )
    cpu_count: Optional[int] = Field(None, description="Usable CPU cores of this machine.")
    data_service_commands: list[str] = Field(
        default_factory=list, description="With the data-service finding: the commands that start the tf.data service."
    )
    traces: Optional[int] = Field(None, description="Traces of the training step.")
    retraces: Optional[int] = Field(None, description="Traces after warm-up (0 is healthy).")
    graph_mode: Optional[bool] = Field(None, description="The step ran as a traced tf.function.")
    storage: Optional[dict[str, Any]] = Field(
        None, description="The storage read test (keys below); null when not run."
    )
    findings: list[RankedFinding] = Field(
        description="What keeps the GPU idle: errors, warnings, then notes, each by expected gain "
        "(largest first); each with its fix."
    )
    notes: list[str] = Field(default_factory=list, description="What the figures mean here, in words.")

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)


def duration_histogram(durations: list[float], bins: int = HISTOGRAM_BINS) -> list[DurationBin]:
    if not durations:
        return []
    low, high = min(durations), max(durations)
    if high <= low:
        return [DurationBin(low=low, high=high, count=len(durations))]
    width = (high - low) / bins
    counts = [0] * bins
    for value in durations:
        counts[min(int((value - low) / width), bins - 1)] += 1
    return [DurationBin(low=low + i * width, high=low + (i + 1) * width, count=c) for i, c in enumerate(counts)]


def summarize_dataset(scan, data=None, output: str = "mel") -> DatasetSummary:
    """The scan's report; with `data` (the config's DataConfig) also the feature memory and the mode it
    gives, for the pipeline `output` the run uses ("audio" under a data/model split)."""
    memory = {}
    if data is not None:
        from xtts_cli.data.plan import cache_budget_bytes, decide_mode

        need = scan.feature_bytes(data, output)
        budget = cache_budget_bytes(data)
        mode = None
        try:
            mode = decide_mode(data, need, budget_bytes=budget).mode
        except XttsError:
            pass  # an explicit cache over budget: scan_findings reports it
        memory = dict(feature_bytes_estimate=need, cache_memory_limit_bytes=budget, preprocessing_mode=mode)
    return DatasetSummary(
        **memory,
        dataset_path=scan.dataset_path,
        format=scan.format,
        datasets=scan.datasets,
        train_items=len(scan.train),
        eval_items=len(scan.eval),
        bad_items=len(scan.bad),
        outside_limits=scan.outside_limits,
        total_hours=scan.total_hours,
        min_duration=scan.min_duration,
        mean_duration=scan.mean_duration,
        max_duration=scan.max_duration,
        formats=scan.formats,
        sample_rates=scan.sample_rates,
        channels=scan.channels,
        speakers=len(scan.speakers),
        duration_histogram=duration_histogram([item.audio.duration for item in scan.items]),
        bad_files=[
            {"path": b.path, "reason": b.reason, "detail": b.detail, "source": b.source, "dataset": b.dataset}
            for b in scan.bad
        ],
    )


# What keeps the clips each length limit leaves out.
LIMIT_FIXES = {
    "too_long": "raise data.max_audio_duration (and data.max_mel_frames to cover it)",
    "too_many_frames": "raise data.max_mel_frames",
    "text_too_long": "raise data.max_text_length",
    "too_short": "lower data.min_audio_duration",
}


# Under this much training speech a model trained from zero does not learn to read new sentences:
# the speak-cpu recipe takes about 20 minutes (docs/performance.md); adapting a trained run needs
# one to a few (docs/adapt.md).
FROM_ZERO_MINUTES = 10.0


def small_data_findings(scan, config: XttsConfig) -> list[Finding]:
    """A warning when a run that learns to speak from zero (no `training.init_from`) has less speech
    than it needs, naming the way that works on little: adapting a trained run. Not for the bundled
    sample, a smoke test the README calls too small to speak."""
    from pathlib import Path

    from xtts_cli.data.scan import BUNDLED_SAMPLE
    from xtts_cli.kinds import kind_for

    minutes = scan.train_hours * 60
    sample = all(Path(dataset.path).resolve() == BUNDLED_SAMPLE for dataset in scan.datasets)
    if sample or config.training.init_from or minutes >= FROM_ZERO_MINUTES or not kind_for(config).speaks:
        return []
    return [
        Finding(
            id="dataset-small",
            severity="warning",
            message=f"the training split holds {f'{minutes:.1f} min' if minutes >= 1 else f'{minutes * 60:.0f} s'} "
            "of speech: a model trained from zero needs about "
            "20 minutes to read new sentences (the speak-cpu preset); on a few minutes of a voice or a language, adapt a "
            "trained run instead: --init-from RUN with the adapt-cpu preset (docs/training.md#starting-from-a-trained-run)",
        )
    ]


# A speaker with less speech than this, among others, gives a voice of a clip or two: `--speaker` averages
# their clips' references (the voices preset learns each voice from about 7 minutes).
THIN_SPEAKER_SECONDS = 30.0


def thin_speaker_findings(scan, config: XttsConfig) -> list[Finding]:
    """A warning naming the speakers with under THIN_SPEAKER_SECONDS of speech beside others with more
    (one 2 s clip among another speaker's 50 had passed every check, and `speakers.json` listed her)."""
    from xtts_cli.kinds import kind_for

    minutes: dict[str, float] = {}
    for dataset in scan.datasets:
        for speaker, said in dataset.speaker_minutes.items():
            minutes[speaker] = minutes.get(speaker, 0.0) + said
    thin = sorted((seconds, name) for name, said in minutes.items() if (seconds := 60 * said) < THIN_SPEAKER_SECONDS)
    # Among speakers of a few minutes: where every one is thin, dataset-small says what matters.
    if len(thin) == len(minutes) or not thin or not kind_for(config).speaks:
        return []
    shown = ", ".join(f"{name} {seconds:.0f} s" for seconds, name in thin[:5]) + (
        f" and {len(thin) - 5} more" if len(thin) > 5 else ""
    )
    return [
        Finding(
            id="dataset-thin-speaker",
            severity="warning",
            message=f"{len(thin)} of {len(minutes)} speakers hold under {THIN_SPEAKER_SECONDS:.0f} s of speech ({shown}): "
            "too little to learn a voice from, and --speaker NAME speaks one made of those clips alone; give each "
            "speaker a few minutes, or leave their clips out",
        )
    ]


def outside_limits_finding(scan, data) -> Finding:
    """The clips the length limits leave out: how many, why, what keeps them. A warning when they
    are a larger share of the corpus than `data.max_bad_file_fraction` would let bad files be."""
    reasons = sorted(((r, n) for r, n in scan.bad_reasons.items() if r in OUTSIDE_LIMITS), key=lambda kv: -kv[1])
    # A limit a clip crosses beside its reason's needs raising too (a long text of a long clip).
    also = [r for r in dict.fromkeys(r for item in scan.bad for r in item.beyond) if r not in dict(reasons)]
    share = scan.outside_limits / scan.total_items
    return Finding(
        id="dataset-outside-limits",
        severity="warning" if share > data.max_bad_file_fraction else "info",
        message=f"{scan.outside_limits:,} of {scan.total_items:,} clips ({share:.1%}) are outside the length limits "
        f"and left out ({', '.join(f'{n:,} {r}' for r, n in reasons)}); to train on them, "
        f"{'; '.join([LIMIT_FIXES[r] for r, _ in reasons] + [LIMIT_FIXES[r] for r in also])}"
        + (": longer clips and texts cost memory and padding" if set(dict(reasons)) - {"too_short"} else "")
        + " (each listed with its reason in the dataset report; --json: dataset.bad_files)",
    )


def script_findings(scan, data) -> list[Finding]:
    """A dataset whose transcripts are mostly in a script its language is not written in (Persian
    under `en`): espeak-ng spells them letter by letter ("arabic seen"), and the number readers miss."""
    from xtts_cli.data.text import language_scripts, script_languages, text_script

    found = []
    for index, dataset in enumerate(scan.datasets):
        items = [item for item in scan.items if item.dataset == dataset.name]
        scripts = [text_script(item.text) for item in items]
        # Those put out for their text too: in the wrong language, most are (spelt letter by letter).
        scripts += [b.script for b in scan.bad if b.script and b.dataset in (dataset.name, None)]
        others = [s for s in scripts if s is not None and s not in language_scripts(dataset.language)]
        if others and len(others) * 2 <= len(scripts):
            found += _stray_scripts(items, dataset, data)  # of those trained (the bad ones' scripts aside)
        elif scripts and len(others) * 2 > len(scripts):
            key = f"data.datasets[{index}].language" if data.datasets else "data.language"
            script = max(set(others), key=others.count)
            name, codes = script.title(), script_languages(script)
            # Which of them, the user knows: named, and the flag's form (the message had named neither);
            # a list's item is set in the file.
            flag = f"; --set {key}=CODE" if key == "data.language" else ""
            which = (
                f" ({name} script: {', '.join(codes[:6])}{', ...' if len(codes) > 6 else ''}{flag})" if codes else ""
            )
            found.append(
                Finding(
                    id="dataset-script",
                    # Phonemes spelt letter by letter are no speech to learn: an error, not a warning.
                    severity="error" if data.text_frontend == "phonemes" else "warning",
                    message=f"{len(others):,} of {len(scripts):,} transcripts of dataset {dataset.name} are in {name} "
                    f"script, which its language {dataset.language} is not written in: "
                    + (
                        "espeak-ng would spell them letter by letter"
                        if data.text_frontend == "phonemes"
                        else f"they would train as {dataset.language}"
                    )
                    + f" and numbers would be read in {dataset.language}; set {key} to their language{which}",
                )
            )
    return found


def _stray_scripts(items: list, dataset, data) -> list[Finding]:
    """A few transcripts wholly in a script their dataset's language is not written in (a Russian line
    among English ones): a clip listed in the wrong corpus, or its text pasted from another. They had
    trained as the dataset's language, their letters new symbols, without a word."""
    from xtts_cli.data.text import language_scripts, text_script

    own = language_scripts(dataset.language)
    stray = [
        (item.id, script) for item in items if (script := text_script(item.text)) is not None and script not in own
    ]
    shown = ", ".join(f"{script.title()} in {clip}" for clip, script in stray[:3]) + (", ..." if len(stray) > 3 else "")
    if not stray:
        return []
    spoken = "espeak-ng would spell them letter by letter" if data.text_frontend == "phonemes" else "they would train"
    finding = Finding(
        id="dataset-stray-script",
        severity="warning",
        message=f"{len(stray):,} of {len(items):,} transcripts of dataset {dataset.name} are in a script its language "
        f"{dataset.language} is not written in ({shown}): {spoken} as {dataset.language}; check those clips "
        "are its speech and their texts theirs, or leave them out",
    )
    return [finding]


def foreign_word_findings(scan, data) -> list[Finding]:
    """Words in another script inside transcripts of their dataset's own (a Persian سلام in a German
    sentence): the phonemes front end reads each transcript in its dataset's language, and espeak-ng
    spells such a word by its letters' names ("arabisch sin, arabisch lam ..."), unsaid; synthesis
    reads the same word in a language of its script. A Latin word (and but in English a Greek one) is
    read in a voice of its script, not spelt (`voiced_scripts`)."""
    from xtts_cli.data.text import language_scripts, text_script, voiced_scripts

    if data.text_frontend != "phonemes":
        return []
    found = []
    for dataset in scan.datasets:
        own = language_scripts(dataset.language)
        marked, texts = [], [item for item in scan.items if item.dataset == dataset.name]
        for item in texts:
            if text_script(item.text) not in own:
                continue  # a transcript mostly in another script: `script_findings` says it
            read = (None, *voiced_scripts(dataset.language), *own)
            words = [w for w in item.text.split() if text_script(w) not in read]
            if words:
                marked.append((item.id, words[0]))
        if marked:
            shown = ", ".join(f"{word!r} in {clip}" for clip, word in marked[:3])
            found.append(
                Finding(
                    id="dataset-foreign-words",
                    severity="warning",
                    message=f"{len(marked):,} of {len(texts):,} transcripts of dataset {dataset.name} hold words in a "
                    f"script its language "
                    f"{dataset.language} is not written in ({shown}{', ...' if len(marked) > 3 else ''}): espeak-ng "
                    f"would spell each by its letters' names in {dataset.language}; write them as they are said in "
                    f"{dataset.language}'s letters, or leave those clips out",
                )
            )
    return found


def letter_findings(scan, data) -> list[Finding]:
    """A dataset whose transcripts are in its language's script but, many of them, with letters its
    alphabet lacks (Spanish under `en`: á é ñ): they would train as new symbols of that language, and
    its numbers be read in it ("tengo twenty five años"), without a word said."""
    from xtts_cli.data.text import ALPHABETS, language_scripts, text_script

    found = []
    for index, dataset in enumerate(scan.datasets):
        alphabet = ALPHABETS.get(dataset.language.split("-")[0].lower())
        if alphabet is None or "LATIN" not in language_scripts(dataset.language):
            continue
        texts = [item.text.lower() for item in scan.items if item.dataset == dataset.name]
        foreign = [
            {c for c in text if c.isalpha() and c not in alphabet and text_script(c) == "LATIN"} for text in texts
        ]
        marked = [letters for letters in foreign if letters]
        if len(marked) < 2 or len(marked) * 4 < len(texts):  # a loanword's café here and there is English
            continue
        # The commonest first, ties in the alphabet's order: a set's order changed from run to run.
        letters = sorted(set().union(*marked), key=lambda c: (-sum(c in m for m in marked), c))
        codes = [code for code, own in ALPHABETS.items() if set(letters) <= set(own)]
        key = f"data.datasets[{index}].language" if data.datasets else "data.language"
        found.append(
            Finding(
                id="dataset-letters",
                severity="warning",
                message=f"{len(marked):,} of {len(texts):,} transcripts of dataset {dataset.name} hold letters its "
                f"language {dataset.language} is not written with ({' '.join(letters[:12])}): they would train as new "
                f"symbols of {dataset.language}, and numbers be read in {dataset.language}; if they are another "
                f"language, set {key} to it"
                + (
                    f" ({', '.join(codes[:6])} {'is' if len(codes) == 1 else 'are'} written with them)" if codes else ""
                ),
            )
        )
    return found


def _transcript_findings(scan, config: XttsConfig) -> list[Finding]:
    """What the transcripts hold that a run would read wrongly; none for a kind that reads no text
    (a vocoder adapted to German data had been warned of its letters)."""
    from xtts_cli.kinds import kind_for

    if not kind_for(config).speaks:
        return []
    found = unread_digits_findings(scan, config.data) + script_findings(scan, config.data)
    found += letter_findings(scan, config.data) + foreign_word_findings(scan, config.data)
    return found + test_sentence_findings(scan, config) + unspoken_text_findings(scan, config.data)


def test_sentence_findings(scan, config: XttsConfig) -> list[Finding]:
    """A `training.test_sentences` entry in a script none of the run's languages is written in: its
    samples would say nothing a listener can judge (skipped, or spelt letter by letter)."""
    from xtts_cli.data.text import language_scripts, text_script

    languages = list(dict.fromkeys(dataset.language for dataset in scan.datasets))
    found = []
    for index, sentence in enumerate(config.training.test_sentences):
        script = text_script(sentence)
        if script is None or any(script in language_scripts(language) for language in languages):
            continue
        shown = sentence if len(sentence) <= 40 else sentence[:40] + "..."
        found.append(
            Finding(
                id="test-sentence-script",
                severity="warning",
                message=f"training.test_sentences[{index}] {shown!r} is in {script.title()} script, which the run's "
                f"{'language' if len(languages) == 1 else 'languages'} {', '.join(languages)} "
                f"{'is' if len(languages) == 1 else 'are'} not written in: "
                + (
                    "espeak-ng would spell it letter by letter"
                    if config.data.text_frontend == "phonemes"
                    else "its samples would be skipped"
                )
                + "; write it in the run's language, or train on data in its language too",
            )
        )
    return found


def unread_digits_findings(scan, data) -> list[Finding]:
    """Transcripts with digits in a language xtts reads no numbers of as words (Greek, Hindi), for a
    characters run: each digit is learnt as a sign, and a number the data lacks is refused."""
    if data.text_frontend != "characters":
        return []  # espeak-ng reads the numbers of every language it speaks
    from xtts_cli.data.numbers import number_reader

    found = []
    for dataset in scan.datasets:
        if number_reader(dataset.language) is not None:
            continue
        texts = [item.text for item in scan.items if item.dataset == dataset.name]
        with_digits = sum(any(c.isdigit() for c in text) for text in texts)
        if with_digits:
            found.append(
                Finding(
                    id="dataset-digits-unread",
                    severity="warning",
                    message=f"{with_digits:,} transcripts of dataset {dataset.name} hold digits, and xtts reads no "
                    f"numbers as words in {dataset.language}: the run learns each digit as a sign and cannot say a "
                    "number whose digits its data lacks; write the numbers in words in the transcripts",
                )
            )
    return found


# Markup a transcript exported from a web page or subtitles keeps: a tag (<b>, </i>, <br/>) or an
# entity (&amp;, &#39;). Nobody says it; the run would learn its brackets and letters as sounds.
_MARKUP = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>|&(?:[A-Za-z]+|#[0-9]+);")


def unspoken_text_findings(scan, data) -> list[Finding]:
    """Transcripts holding markup (both front ends read it as text) or, for a characters run, emoji
    and invisible characters (the phonemes front end leaves those out): a warning naming the first."""
    from xtts_cli.data.text import unspoken

    characters = data.text_frontend == "characters"
    marked = [
        item
        for item in scan.items
        if _MARKUP.search(item.text) or (characters and any(unspoken(c) and not c.isspace() for c in item.text))
    ]
    if not marked:
        return []
    first = marked[0]
    shown = first.text if len(first.text) <= 60 else first.text[:57] + "..."
    learnt = "tags and entities" + (", emoji and invisible characters" if characters else "")
    return [
        Finding(
            id="dataset-unspoken-text",
            severity="warning",
            message=f"{len(marked):,} transcript{'s hold' if len(marked) > 1 else ' holds'} what nobody says "
            f"(e.g. {first.source}: {shown!r}): the run learns their {learnt} as sounds; take them out of the "
            "transcripts",
        )
    ]


def shared_speakers_line(shared: dict[str, list[str]]) -> str:
    """ "speaker 'anna' is in datasets de and fa: ... one voice" for `ScanReport.shared_speakers`."""
    named = [f"{speaker!r} in {' and '.join(datasets)}" for speaker, datasets in list(shared.items())[:3]]
    more = f" and {len(shared) - 3} more" if len(shared) > 3 else ""
    if len(shared) == 1:
        return f"speaker name {named[0]}: its clips train as one voice"
    return f"speaker names {', '.join(named)}{more}: each name's clips train as one voice"


def memory_findings(summary: DatasetSummary, data) -> list[Finding]:
    """An explicit `cache` whose features would not fit the cache budget: an error, with the numbers."""
    from xtts_cli.data.plan import decide_mode

    try:
        decide_mode(data, summary.feature_bytes_estimate, budget_bytes=summary.cache_memory_limit_bytes)
    except XttsError as exc:
        return [
            Finding(
                id="data-cache-over-budget",
                severity="error",
                message=f"{exc.lines[0]} ({exc.hint})",
                fix=ConfigChange(key="data.preprocessing_mode", value="auto"),
            )
        ]
    return []


# Formats whose decoders (libsndfile's, or the [tfio] extra's) cost a multiple of a WAV's read.
COMPRESSED_FORMATS = ("flac", "mp3", "ogg")


def runtime_decoding_findings(scan, data) -> list[Finding]:
    """What runtime mode redoes every epoch that a cache or store would do once: resampling, and the
    decoding of compressed audio (48 kHz FLAC and MP3 read 98 and 160 clips/s on a 2-core machine, 48
    kHz WAV 675: benchmarks/sample_rates.py)."""
    found = []
    fix = ConfigChange(key="data.preprocessing_mode", value="auto")
    # Decoding first: it costs more than resampling, and `diagnose` keeps one finding per fix.
    compressed = {name: n for name, n in scan.formats.items() if name in COMPRESSED_FORMATS}
    if compressed:
        from xtts_cli.data.audio_codecs import compressed_decoder

        kinds = ", ".join(f"{name} ({n:,})" for name, n in sorted(compressed.items()))
        decoder = compressed_decoder()
        where = "libsndfile, in a tf.numpy_function" if decoder == "soundfile" else "tensorflow-io's kernels"
        found.append(
            Finding(
                id="dataset-compressed-audio",
                severity="info",
                message=f"compressed audio, {kinds}: runtime mode decodes every clip every epoch ({where}), at "
                "several times the cost of a WAV's (the decode row of xtts profile-pipeline); cache or precompute "
                "features so it happens once",
                fix=fix,
            )
        )
    if len(scan.sample_rates) > 1 or any(rate != data.sample_rate for rate in scan.sample_rates):
        rates = ", ".join(f"{rate} Hz ({n:,})" for rate, n in sorted(scan.sample_rates.items()))
        found.append(
            Finding(
                id="dataset-resampling",
                severity="info",
                message=f"audio sample rates {rates} differ from data.sample_rate ({data.sample_rate} Hz): runtime mode "
                "resamples every clip every epoch; cache or precompute features so it happens once",
                fix=fix,
            )
        )
    return found


def _eval_in_train(scan: Any, held_out: list, *, separate: bool) -> list[Finding]:
    """Validation clips (a metadata_eval_file's, or with `separate` data.eval_dataset_path's, when the
    whole scan trains) that train too."""
    trained = {os.path.normpath(item.audio_path) for item in (scan.items if separate else scan.train)}
    both = [item for item in held_out if os.path.normpath(item.audio_path) in trained]
    if not both:
        return []
    fix = (
        "point data.eval_dataset_path (--val-data) at clips the training data does not hold"
        if separate
        else "list each clip in one of the metadata files"
    )
    return [
        Finding(
            id="dataset-eval-in-train",
            severity="warning",
            message=f"{len(both):,} validation clip{'' if len(both) == 1 else 's'} (e.g. {both[0].id}) "
            f"train too: the validation loss and early stopping would measure clips the model learns; {fix}",
        )
    ]


def _below_the_rate(scan: Any, data: Any) -> list[Finding]:
    """Clips recorded below data.sample_rate: resampling adds no sound above half their rate (Nyquist),
    so a voice that learns from them is muffled: a telephone's 8 kHz holds nothing over 4 kHz."""
    low = {rate: n for rate, n in scan.sample_rates.items() if rate < data.sample_rate}
    if not low:
        return []
    rates = ", ".join(f"{n:,} at {rate} Hz" for rate, n in sorted(low.items()))
    top = min(low) / 2000
    return [
        Finding(
            id="dataset-low-sample-rate",
            severity="warning" if min(low) <= data.sample_rate // 2 else "info",
            message=f"clips below data.sample_rate ({data.sample_rate} Hz), {rates}: resampled up, they hold "
            f"nothing above {top:g} kHz, and a voice learnt from them sounds muffled there; use recordings at "
            f"{data.sample_rate} Hz or more where you have them, or lower data.sample_rate",
        )
    ]


def _bad_and_shared(scan: Any) -> list[Finding]:
    """The skipped bad files, and a speaker name two datasets share (one voice for two people?)."""
    found = []
    broken = {r: n for r, n in scan.bad_reasons.items() if r not in OUTSIDE_LIMITS}
    if broken:
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(broken.items(), key=lambda kv: -kv[1]))
        found.append(
            Finding(
                id="dataset-bad-files",
                severity="warning",
                message=f"{sum(broken.values()):,} of {scan.total_items:,} dataset items are skipped ({reasons}); fix or "
                "remove them (each listed with its reason in the dataset report; --json: dataset.bad_files)",
            )
        )
    shared = scan.shared_speakers()
    if shared:
        found.append(
            Finding(
                id="dataset-shared-speaker",
                severity="warning",
                message=f"{shared_speakers_line(shared)}; if they are different people, give them different "
                "names (a speaker column, speakers.csv, or the speaker's folder in a folder layout)",
            )
        )
    return found


# A dataset that leaves this share of its audio untrained (a speaker's sessions in folders below its
# folder, a metadata file that lost rows) is a warning, not the data report's note alone: half a corpus
# and a whole voice had gone with a note.
UNTRAINED_AUDIO_SHARE = 0.1


def _untrained_audio(scan: Any) -> list[Finding]:
    found = []
    for dataset in scan.datasets:
        count = dataset.unlisted_audio
        share = count / max(1, count + dataset.items + dataset.bad_items)
        if share < UNTRAINED_AUDIO_SHARE:
            continue
        files = f"{count:,} audio file{'' if count == 1 else 's'}"
        if dataset.format == "folder":
            where = f"in folders below the speakers' folders (e.g. {dataset.unlisted_example})"
            fix = (
                "the folder layout reads one folder per speaker: move each speaker's clips up into its folder, "
                "or list each folder that holds clips in data.datasets"
            )
        else:
            where = f"beside its clips that no row names (e.g. {dataset.unlisted_example})"
            fix = "add their rows to the metadata, or move them out of the dataset"
        found.append(
            Finding(
                id="dataset-untrained-audio",
                severity="warning",
                message=f"dataset {dataset.name}: {files} {where}, {share:.0%} of its audio, are not trained; {fix}",
            )
        )
    return found


def scan_findings(config: XttsConfig, machine: Any = None) -> tuple[Any, Optional[DatasetSummary], list[Finding]]:
    """(scan or None when unusable, its summary, findings): the data report of `validate` and `diagnose`."""
    from xtts_cli.data.run_data import eval_scan_of
    from xtts_cli.data.scan import DatasetScanError, scan_dataset
    from xtts_cli.errors import XttsError

    try:
        scan = scan_dataset(config.data)
    except DatasetScanError as exc:
        summary = summarize_dataset(exc.report) if exc.report is not None else None
        hint = _scan_error_hint(exc)
        unusable = Finding(
            id="dataset-unusable", severity="error", message="; ".join(exc.lines) + (f" ({hint})" if hint else "")
        )
        # Transcripts in another language's script are often why (spelt letter by letter, too long).
        scripts = script_findings(exc.report, config.data) if exc.report else []
        return None, summary, _after_the_language([*scripts, unusable])
    except XttsError as exc:  # no dataset directory, an unknown layout, a missing metadata file
        return (
            None,
            None,
            [
                Finding(
                    id="dataset-unusable",
                    severity="error",
                    message="; ".join(exc.lines) + (f" ({exc.hint})" if exc.hint else ""),
                )
            ],
        )
    held_out = eval_dataset_failure(config, scan)
    if held_out is not None:
        return None, *held_out
    found = _bad_and_shared(scan) + _untrained_audio(scan)
    if scan.outside_limits:
        found.append(outside_limits_finding(scan, config.data))
    found += _transcript_findings(scan, config)
    if config.training.early_stop_patience is not None and not scan.eval and not config.data.eval_dataset_path:
        from xtts_cli.config.remedies import early_stop_without_validation

        found.append(early_stop_without_validation())
    found += small_data_findings(scan, config) + thin_speaker_findings(scan, config)
    held = eval_scan_of(config, scan)  # data.eval_dataset_path's (eval_dataset_failure read it), or None
    validation = list(scan.eval) if held is None else held.items
    found += _eval_in_train(scan, validation, separate=held is not None)
    if held is not None:  # its script, read in the run's language, and its bad files (both had gone unsaid)
        found += script_findings(held, config.data.model_copy(update={"datasets": []}))
        found += [
            f.model_copy(update={"message": f"validation set (data.eval_dataset_path): {f.message}"})
            for f in _bad_and_shared(held)
            if f.id == "dataset-bad-files"
        ]
    found += _below_the_rate(scan, config.data)
    if config.data.preprocessing_mode == "runtime":
        found += runtime_decoding_findings(scan, config.data)
    from xtts_cli.data.plan import CacheOverBudgetError, EmptyEpochError
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.kinds import kind_for, run_data_of
    from xtts_cli.training.settings import require_full_batches

    try:  # what `xtts train` refuses after its set-up: an epoch of no full batch of this machine's batch
        require_full_batches(config, machine or probe_machine(), run_data_of(config, scan))
    except CacheOverBudgetError:
        pass  # memory_findings names it: data-cache-over-budget
    except XttsError as exc:
        # The batch the message names as the fix, for --fix and scripts to make (it had been null).
        fits = exc.batch_fits if isinstance(exc, EmptyEpochError) else None
        fix = ConfigChange(key="data.batch_size", value=fits) if fits else None
        found.append(Finding(id="dataset-no-batch", severity="error", message=f"{exc.lines[0]}; {exc.hint}", fix=fix))

    # What the pipeline keeps per clip: audio for a kind that reads it or for a data/model split.
    audio = config.devices.splits_data_and_model or kind_for(config).reads == "audio"
    summary = summarize_dataset(scan, config.data, "audio" if audio else "mel")
    summary.eval_items = len(validation)  # data.eval_dataset_path's clips, where it names them
    if held is not None:
        _add_held_bad_files(summary, held)
    found += _store_findings(summary, config.data, [scan.train, validation], "audio" if audio else "mel")
    return scan, summary, _after_the_language(found + memory_findings(summary, config.data))


# What a dataset read in the wrong language's phonemes causes: its texts, spelt letter by letter, run long.
_SPELT_LONG = frozenset({"dataset-no-batch", "dataset-outside-limits", "dataset-unusable"})


def _after_the_language(found: list[Finding]) -> list[Finding]:
    """`found`, where a dataset's language is wrong for its script (an error: `script_findings`), with
    what its spelt-out texts cause said to follow from it and given no fix of its own: --fix had set
    data.batch_size to 1 for a batch the wrong language had emptied."""
    if not any(f.id == "dataset-script" and f.severity == "error" for f in found):
        return found
    follows = " (but first set the dataset's language: its texts, spelt letter by letter, run long)"
    return [
        f.model_copy(update={"fix": None, "message": f.message + follows}) if f.id in _SPELT_LONG else f for f in found
    ]


def _store_findings(summary: DatasetSummary, data, splits: list[list], output: str) -> list[Finding]:
    """A precompute store with shards to write whose folder cannot be written (a read-only dataset and
    HOME, a feature_cache_dir of another user's) or whose disk has no room for them: train had found it
    only after its set-up. A complete store is only read (validate had refused a read-only one)."""
    if summary.preprocessing_mode != "precompute":
        return []
    from xtts_cli.config.editing import can_write
    from xtts_cli.data.feature_cache import cache_root, require_room, store_bytes, unbuilt_store
    from xtts_cli.errors import XttsError

    unbuilt = [unbuilt_store(data, items, output) for items in splits if items]  # each split its own shards
    todo, shards = [item for _, clips, _ in unbuilt for item in clips], sum(count for _, _, count in unbuilt)
    if not todo:
        return []
    directory = unbuilt[0][0]
    try:
        can_write(cache_root(data), "the feature store", folder=True)
    except XttsError as error:
        why = f"{error.lines[0]}: precompute writes its features there; set data.feature_cache_dir to a folder you can write"
        return [Finding(id="feature-store-unwritable", severity="error", message=why)]
    try:
        require_room(directory, store_bytes(todo, data, output, shards=shards))
    except XttsError as error:
        return [Finding(id="feature-store-no-room", severity="error", message=f"{error.lines[0]}; {error.hint}")]
    return []


def eval_dataset_failure(config: XttsConfig, scan) -> Optional[tuple[DatasetSummary, list[Finding]]]:
    """What `scan_findings` reports when data.eval_dataset_path cannot be used (training would stop at
    it): the data report with its bad files listed under the training data's, and the error; None
    when it can (or there is none)."""
    from xtts_cli.data.run_data import eval_items_of
    from xtts_cli.data.scan import DatasetScanError

    if not config.data.eval_dataset_path:
        return None
    summary = summarize_dataset(scan)
    try:
        eval_items_of(config, scan)
    except DatasetScanError as exc:
        if exc.report is not None:
            _add_held_bad_files(summary, exc.report)
        hint = _scan_error_hint(exc)
        message = "; ".join(exc.lines) + (f" ({hint})" if hint else "")
        return summary, [Finding(id="dataset-unusable", severity="error", message=message)]
    except XttsError as exc:
        message = "; ".join(exc.lines) + (f" ({exc.hint})" if exc.hint else "")
        return summary, [Finding(id="dataset-unusable", severity="error", message=message)]
    return None


def _scan_error_hint(exc) -> Optional[str]:
    """A DatasetScanError's hint as the data report gives it: where it says to run `xtts validate`
    (this is it), that each bad file is listed; a hint of its own cause (widen
    data.max_audio_duration) as it is."""
    from xtts_cli.data.scan import bad_files_remedy

    if exc.report is not None and exc.hint and exc.hint.startswith("xtts validate"):
        return f"each is listed with its reason: {bad_files_remedy(len(exc.report.items))}"
    return exc.hint


def _add_held_bad_files(summary: DatasetSummary, held: Any) -> None:
    """data.eval_dataset_path's bad files, listed under the training data's (they had gone unsaid)."""
    summary.bad_files += [{**bad, "dataset": "data.eval_dataset_path"} for bad in summarize_dataset(held).bad_files]


def python_ops(dataset) -> list[str]:
    """Python-callback op types (tf.numpy_function / tf.py_function) in a tf.data graph."""
    import tensorflow as tf

    graph = tf.compat.v1.GraphDef()
    graph.ParseFromString(dataset._as_serialized_graph().numpy())
    found = {node.op for node in graph.node if node.op in PYTHON_OPS}
    for function in graph.library.function:
        found.update(node.op for node in function.node_def if node.op in PYTHON_OPS)
    return sorted(found)


def input_bound_share(pipeline_rate: float, model_rate: float) -> float:
    """Z = max(0, 1 - X / Y) x 100: the share of step time spent waiting when the pipeline delivers
    X samples/s and the model consumes Y samples/s."""
    if model_rate <= 0:
        return 0.0
    return max(0.0, 1.0 - pipeline_rate / model_rate) * 100.0


def _ranked(finding: Finding, source: str, gain: Optional[float] = None) -> RankedFinding:
    return RankedFinding(**finding.model_dump(), source=source, expected_gain_percent=gain)


# A step run eagerly is several times slower op by op, and every figure measured beside it (its
# host contention, the input-bound share) changes once it runs as a graph: fixed first.
EAGER_STEP_FINDINGS = frozenset({"eager-step", "graph-mode-off", "eager-debug-on"})


def rank(findings: list[RankedFinding]) -> list[RankedFinding]:
    """By severity; within it an eager step first, then by expected gain (largest first, unmeasured
    last); stable otherwise. A measured note (5-20 % of the step) never outranks a warning it would hide."""

    def key(f: RankedFinding) -> tuple:
        gain = f.expected_gain_percent if f.expected_gain_percent is not None else -1.0
        return (SEVERITY_RANK[f.severity], f.id not in EAGER_STEP_FINDINGS, -gain)

    return sorted(findings, key=key)


def _dedupe(findings: list[RankedFinding]) -> list[RankedFinding]:
    """One finding per id and what it names: a rule found by two sources once (the measured ones
    come first and win), one that names three missing datasets three times, as `validate` lists
    them (the user had mended one a run). A config rule whose fix a measured finding gives already
    is left out. Two measurements that point at one fix both stay: each is its own evidence (host
    contention at 78 % is not hidden behind an input bound at 6 %)."""
    seen_ids: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    seen_fixes: set[tuple] = set()
    kept = []
    for f in findings:
        fix = (f.fix.key, f.fix.action, repr(f.fix.value)) if f.fix is not None else None
        again = (f.id, f.message) in seen or seen_ids.get(f.id, f.source) != f.source
        if again or (fix is not None and fix in seen_fixes and f.expected_gain_percent is None):
            continue
        seen_ids[f.id] = f.source
        seen.add((f.id, f.message))
        if fix is not None:
            seen_fixes.add(fix)
        kept.append(f)
    return kept


def service_problem(config: XttsConfig) -> Optional[Finding]:
    """An error finding when data.service_address is set and no dispatcher answers there; a warning
    when it answers but no worker of its could send a batch (diagnose's and validate's: gRPC calls,
    no TensorFlow). With no worker, a training started had waited a minute before it said why."""
    address = config.data.service_address
    if not address:
        return None
    from xtts_cli.data.dispatcher import check_reachable, worker_trouble
    from xtts_cli.errors import XttsError

    try:
        check_reachable(address)
    except XttsError as exc:
        return Finding(id="data-service-unreachable", severity="error", message=exc.lines[0])
    trouble = worker_trouble(address)
    if trouble is None:
        return None
    return Finding(
        id="data-service-workers",
        severity="warning",
        message=f"data.service_address {address!r}: {trouble}; a training waits until a worker sends batches",
    )


def data_service_commands(port: int = 5050) -> list[str]:
    """The command lines that start the tf.data service and point training at it (docs/scaling.md)."""
    return [
        f"on the dispatcher machine:   xtts data-service dispatcher --port {port} --bind 0.0.0.0",
        f"on each worker machine:      xtts data-service worker --dispatcher DISPATCHER_HOST:{port} --port {port + 1} "
        "--bind 0.0.0.0",
        f"in the trainer's config:     data.service_address: grpc://DISPATCHER_HOST:{port}   (then xtts train as before)",
    ]


def data_service_finding(
    config: XttsConfig, *, pipeline_rate: float, model_rate: float, cores_busy: float, cpu_count: int
) -> Optional[Finding]:
    """The tf.data service recommendation, when the pipeline is input-bound on saturated CPUs."""
    data = config.data
    if data.service_address or not data.use_tf_native_loading or cpu_count < 1:
        return None  # already served; or the Python loader, which the service cannot run (fix that first)
    if input_bound_share(pipeline_rate, model_rate) < MODERATELY_INPUT_BOUND_PERCENT:
        return None
    if cores_busy < CPU_SATURATED_SHARE * cpu_count:
        return None
    # A worker with this machine's cores makes about pipeline_rate samples/s.
    workers = math.ceil(model_rate / pipeline_rate) if pipeline_rate > 0 else 1
    return Finding(
        id="data-service",
        severity="info",
        message=f"the input pipeline kept {cores_busy:.1f} of {cpu_count} cores busy and still delivers "
        f"{pipeline_rate:,.1f} samples/s of the {model_rate:,.1f} the model consumes: this machine's CPUs are the "
        f"limit; make the batches on other machines with the tf.data service (about {workers} worker(s) with "
        "this machine's cores) and set data.service_address (commands below, docs/scaling.md)",
    )


def checkup(
    loaded: LoadedConfig,
    *,
    num_batches: int,
    quick: bool = False,
    progress: Progress = None,
) -> Checkup:
    """Run every check on `loaded` (see the module docstring); `quick` skips the timed ones."""
    from xtts_cli.devices.gpu_info import probe_machine
    from xtts_cli.devices.placement import configure_devices
    from xtts_cli.diagnosis.base_run import parent_findings, taken_from_base
    from xtts_cli.diagnosis.config_rules import check_config, nothing_to_scan
    from xtts_cli.diagnosis.environment import check_environment

    say = progress or (lambda message: None)
    # The config as training takes it from its base (`training.init_from`), as validate reads it.
    loaded, inherited = taken_from_base(loaded)
    config = loaded.config
    measured: list[RankedFinding] = []
    static: list[RankedFinding] = []
    notes: list[str] = []

    machine = probe_machine()
    config_found = [_ranked(f, "config") for f in check_config(loaded, machine)]
    # A device the machine lacks is one of the errors below, not an exit before the report.
    missing = any(f.id == "device-not-found" for f in config_found)
    plan = None if missing else configure_devices(config.devices)
    say("checking the environment (TensorFlow, XLA, GPUs, audio decoders)")
    environment = check_environment()
    static += [_ranked(f, "environment") for f in _beside_missing_devices(environment.findings, missing)]
    static += config_found
    static += [_ranked(f, "config") for f in inherited]
    device_plan = plan.describe() if plan is not None else "no device plan: devices.* names a device this machine lacks"
    report = Checkup(
        config=str(loaded.path) if loaded.path else None,
        quick=quick,
        environment={**environment.model_dump(mode="json", exclude={"findings"}), "device_plan": device_plan},
        findings=[],
    )

    scan = None
    if not nothing_to_scan(static):
        say("scanning the dataset")
        scan, report.dataset, found = scan_findings(config, machine)
        static += [_ranked(finding, "dataset") for finding in found]
    static += [_ranked(finding, "config") for finding in parent_findings(config, scan, loaded.path)]
    if scan is None:
        report.findings = rank(_dedupe(static))
        refused = _untimed(config, static, quick=quick, unserved=None)
        if refused is not None:  # a dataset of no usable clip: said, as an epoch of no batch is
            report.notes = [refused]
        return report

    info, python_found = _pipeline_graph(config, scan, report)
    measured += python_found
    padding = padding_finding(config, info, xla_enabled(config.training, "GPU" if machine.gpus else "CPU"), scan)
    if padding is not None:  # planned from the scan: it outranks a config rule with the same fix
        measured.append(_ranked(padding, "pipeline"))

    compiled = graph_mode(config.training)
    retraces = 0
    unserved = service_problem(config)
    if unserved is not None:
        static.append(_ranked(unserved, "config"))
    skipped = _untimed(config, static, quick=quick, unserved=unserved)
    if skipped is None:
        x, y, compiled, retraces = _timed_rates(config, scan, info, report, machine, measured, notes, num_batches, say)
        static += _storage(config, report, min(x, y), notes, say, scan)
    else:
        notes.append(skipped)
        report.graph_mode = compiled

    measured += _model_findings(config, compiled, retraces, info, machine, ran=skipped is None)
    _credit_input_fixes(report.input_bound_percent, measured + static)
    report.findings = rank(_dedupe(measured + static))
    report.notes = notes
    return report


def _untimed(
    config: XttsConfig, static: list[RankedFinding], *, quick: bool, unserved: Optional[Finding]
) -> Optional[str]:
    """Why the pipeline, model and storage are not timed (a note), or None when they are."""
    # What training refuses (a device it lacks, an epoch of no batch) cannot be timed either.
    refused = [f.id for f in static if f.severity == "error" and f.source != "environment"]
    skipped = "the pipeline, model and storage timings were skipped"
    if quick:
        return f"--quick: {skipped}"
    if refused:
        return (
            f"{skipped}: training refuses this config ({', '.join(dict.fromkeys(refused))}); fix the errors and "
            "run diagnose again"
        )
    if unserved is not None and unserved.severity == "warning":  # timed, it would wait for a worker
        return (
            f"{skipped}: no worker of the tf.data service at {config.data.service_address} can send the training "
            "batches now (see the warning); run diagnose again once one can"
        )
    if unserved or (config.data.service_address and not config.data.use_tf_native_loading):
        return (
            f"{skipped}: the training batches come from the tf.data service at {config.data.service_address}, "
            "which cannot serve this config (see the errors)"
        )
    return None


def _beside_missing_devices(found: list[Finding], missing: bool) -> list[Finding]:
    """The environment's findings; beside a device the machine lacks, no-gpu's "training runs on the
    CPU" says once what (it had stood beside the errors that refuse to train)."""
    if not missing:
        return found
    return [
        f.model_copy(update={"message": f"{f.message} once devices.* names no GPU"}) if f.id == "no-gpu" else f
        for f in found
    ]


def _model_findings(
    config: XttsConfig, compiled: bool, retraces: int, info: Any, machine: Any, *, ran: bool
) -> list[RankedFinding]:
    """The step's own findings (eager, retracing), from how it ran (`compiled`: graph mode), or from
    the config where no step was timed (`ran` false)."""
    from xtts_cli.profiling.step_profiler import recommendations

    return [
        _ranked(f, "model")
        for f in recommendations(
            config,
            verdict="not_input_bound",
            input_bound_percent=0.0,
            retraces=retraces,
            graph_mode=compiled,
            shape_bound=info.max_distinct_batch_shapes,
            cpu_count=machine.cpu_count,
            xla=compiled and xla_enabled(config.training, "GPU" if machine.gpus else "CPU"),
            ran=ran,
        )
    ]


def _pipeline_graph(config: XttsConfig, scan: Any, report: Checkup) -> tuple[Any, list[RankedFinding]]:
    """(the training pipeline's PipelineInfo, findings read off its graph): built as training builds
    it, in runtime mode so nothing is cached or written, and locally: with data.service_address the
    same graph runs on the workers, and only a local dataset's serialized graph holds its own ops."""
    from xtts_cli.kinds import run_data_of

    found: list[RankedFinding] = []
    graph_config = data_variant(config, preprocessing_mode="runtime", service_address=None)
    dataset, info = run_data_of(graph_config, scan).pipeline()
    report.python_ops_in_pipeline = python_ops(dataset)
    report.shape_bound = info.max_distinct_batch_shapes
    # No full batch (dataset-no-batch says why): padding is a share of nothing, not the plan's 85.9 %.
    report.padding_efficiency = info.padding_efficiency if report.shape_bound != 0 else None
    # With TF-native loading the graph's only Python op is libsndfile decoding compressed clips
    # (data/audio.py), a cost `dataset-compressed-audio` reports with its own fix.
    if report.python_ops_in_pipeline and not config.data.use_tf_native_loading:
        # Seen in the graph itself: it outranks the config rule with the same fix.
        found.append(
            _ranked(
                Finding(
                    id="python-ops-in-pipeline",
                    severity="warning",
                    message=f"the input pipeline's graph holds Python callbacks ({', '.join(report.python_ops_in_pipeline)}): "
                    "they run under the GIL, one at a time, whatever data.num_workers says; load with TensorFlow ops",
                    fix=ConfigChange(key="data.use_tf_native_loading", value=True),
                ),
                "pipeline",
            )
        )
    return info, found


def _timed_rates(
    config, scan, info, report, machine, measured, notes, num_batches, say
) -> tuple[float, float, bool, int]:
    """Time the pipeline alone and the model alone (`profile_pipeline`, `profile_step`): the rates
    X and Y, the input-bound share and what it ranks into `measured`; (X, Y, graph mode, retraces)."""
    from xtts_cli.profiling.pipeline_profiler import profile_pipeline
    from xtts_cli.profiling.step_profiler import profile_step

    warmup = config.profiling.warmup_batches
    if report.dataset is not None and report.dataset.preprocessing_mode == "cache":
        # Time the cached epochs, as training sees them after the first.
        warmup = max(warmup, info.batches_per_epoch)
    # profile_pipeline extends the warm-up to the epoch's bucket starts, and says so in a note.
    say(f"timing the input pipeline alone: {num_batches} batches after {max(warmup, info.buckets_started)} warm-up")
    with CpuSampler() as cpu:
        pipeline = profile_pipeline(config, num_batches=num_batches, warmup=warmup, stages=False, scan=scan)
    # The timed batches are the end of that call: CPU use over them, not over building and warm-up.
    timed = pipeline.num_batches * pipeline.batch_size / pipeline.samples_per_sec if pipeline.samples_per_sec else 0.0
    report.pipeline_cpu_cores_busy, report.cpu_count = cpu.cores_busy(timed), machine.cpu_count
    others_beside_pipeline = cpu.others_busy(timed)
    say(f"timing the step: {num_batches} steps on the real pipeline, then on resident batches (the model alone)")
    model = profile_step(config, num_steps=num_batches, cpu_count=machine.cpu_count)
    if model.interrupted:  # a Ctrl-C ends the check-up, as in its other phases: it had gone on, and exited 0
        raise KeyboardInterrupt
    # The model alone: the same step on resident batches of the shapes training meets.
    alone_ms = model.resident_compute_ms.p50 if model.resident_compute_ms else model.compute_ms.p50
    x, y = pipeline.samples_per_sec, model.batch_size * 1000.0 / max(alone_ms, 1e-9)
    report.host_contention_percent = model.host_contention_percent
    # The rates assume the pipeline works while the step runs; the step on the real pipeline waited
    # what it waited (prefetch 0: a faster pipeline, and a step waiting 27 % of its time had been "not input bound").
    allowed, waited = input_bound_share(x, y), model.input_bound_percent
    z = max(allowed, waited)
    report.pipeline_samples_per_sec, report.model_samples_per_sec = x, y
    report.input_bound_percent, report.data_wait_percent = z, waited
    report.verdict = input_bound_verdict(z)
    report.traces, report.retraces, report.graph_mode = model.traces, model.retraces, model.graph_mode
    notes += pipeline.notes + model.notes
    rates = f"the pipeline delivers {x:,.1f} samples/s, the model consumes {y:,.1f} → input-bound {z:.0f} %"
    if waited >= MODERATELY_INPUT_BOUND_PERCENT and waited > allowed:
        rates += (
            f" (the step waited that share on the real pipeline, where the rates alone allow {allowed:.0f} %: "
            "its batches are not made while the step runs)"
        )
    notes.insert(0, rates)
    read = [v for v in (others_beside_pipeline, model.other_processes_cores_busy) if v is not None]
    report.other_processes_cores_busy = max(read) if read else None
    measured += _rate_findings(config, report, model, machine.cpu_count, rates)

    return x, y, model.graph_mode, model.retraces


def _rate_findings(config, report, model, cpu_count: int, rates: str) -> list[RankedFinding]:
    """What the timed rates say (`report`'s figures, `model` the step's profile): other processes
    that took cores, an input bound and its settings, host contention, the tf.data service."""
    from xtts_cli.config.remedies import busy_host_finding, step_spread
    from xtts_cli.profiling.step_profiler import contention_findings, recommendations

    measured: list[RankedFinding] = []
    z, x, y = report.input_bound_percent, report.pipeline_samples_per_sec, report.model_samples_per_sec
    busy = busy_host_finding(report.other_processes_cores_busy, cpu_count, "the pipeline and the step")
    if busy is not None:
        measured.append(_ranked(busy, "rates"))
    if z >= MODERATELY_INPUT_BOUND_PERCENT:
        specific = recommendations(
            config,
            verdict=report.verdict,
            input_bound_percent=z,
            retraces=0,
            graph_mode=True,
            shape_bound=1,
            cpu_count=cpu_count,
        )
        severity = "warning" if report.verdict == "highly_input_bound" else "info"
        first = specific[0] if specific else None
        measured.append(
            _ranked(
                Finding(
                    id="input-bound",
                    severity=severity,
                    message=f"{rates} ({report.verdict.replace('_', ' ')})",
                    fix=first.fix if first else None,
                ),
                "rates",
                z,
            )
        )
        measured += [_ranked(f, "rates", z) for f in specific[1:]]
    if model.host_contention_percent is not None:
        measured += [
            _ranked(f, "rates", model.host_contention_percent)
            for f in contention_findings(
                config,
                model.host_contention_percent,
                model.input_bound_percent,
                resolved_mode=getattr(model, "preprocessing_mode", None),
                others=report.other_processes_cores_busy,
                cpu_count=cpu_count,
                spread=step_spread(model.resident_compute_ms.p50, model.resident_compute_ms.p95)
                if model.resident_compute_ms
                else None,
            )
        ]
    service = data_service_finding(
        config,
        pipeline_rate=x,
        model_rate=y,
        cores_busy=report.pipeline_cpu_cores_busy,
        cpu_count=cpu_count,
    )
    if service is not None:
        measured.append(_ranked(service, "rates", z))
        report.data_service_commands = data_service_commands()
    return measured


def _storage(config, report, rate: float, notes: list[str], say, scan) -> list[RankedFinding]:
    """Read a sample of the audio files at the rate training reads them (`rate` samples/s)."""
    from xtts_cli.data.scan import dataset_root
    from xtts_cli.diagnosis.storage import check_storage

    say("reading a sample of the audio files (storage)")
    # Training reads the audio at the rate it runs, the slower of the pipeline and the model;
    # and every epoch only in runtime mode (cache: the first epoch; precompute: the store's pass).
    mode = report.dataset.preprocessing_mode if report.dataset is not None else config.data.preprocessing_mode
    storage = check_storage(
        [dataset_root(config.data)],
        budget_seconds=3.0,
        samples_per_second=rate,
        read_every_epoch=mode == "runtime",
        clips=[item.audio_path for item in scan.train + scan.eval],
    )
    if mode != "runtime":
        once = (
            "once per run, in the first epoch, which fills the cache"
            if mode == "cache"
            else "once, in the pass that stores their features; later runs read the store"
        )
        notes.append(
            f"storage: {mode} mode reads the audio files {once}: how fast they read does not set the pace of training"
        )
    report.storage = storage.model_dump(mode="json", exclude={"findings"})
    return [_ranked(f, "storage") for f in storage.findings]


def _credit_input_fixes(bound: Optional[float], findings: list[RankedFinding]) -> None:
    """When the run is input-bound, what touches the input is credited with that share as its gain; a
    note of how a figure was measured (the storage's, read from the page cache) addresses none of it."""
    if bound is None or bound < MODERATELY_INPUT_BOUND_PERCENT:
        return
    for f in findings:
        if f.expected_gain_percent is not None or f.id in MEASUREMENT_NOTES:
            continue
        touches_input = (f.fix is not None and f.fix.key in INPUT_KEYS) or f.id.startswith(INPUT_FINDING_PREFIXES)
        if touches_input and f.severity != "error":
            f.expected_gain_percent = bound
