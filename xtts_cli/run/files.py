"""What a run directory holds, named once (`RunDir`, `LAYOUT`): the writer (training) and every
reader (synthesis, the Python API, export) go through these names. What each one holds is
docs/run-directory.md's table, which a test holds to `LAYOUT`.
"""

from __future__ import annotations

import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Optional

import numpy as np
from pydantic import BaseModel

from xtts_cli.config.schema import DataConfig, XttsConfig

# `--vocoder griffin-lim`: no vocoder run, the phase recovered by Griffin-Lim (speech/vocoding.py).
GRIFFIN_LIM = "griffin-lim"
REFERENCE_FILE = "speaker_reference.npy"
# Each training speaker's longest clips, for `xtts synthesize --speaker NAME` and the validation renders.
SPEAKERS_FILE = "speakers.json"
CLIPS_PER_SPEAKER = 3
SPEAKING_RATE_FILE = "speaking_rate.json"
# In samples/: each rendered WAV's sentence by file name, for `xtts serve`'s page (the default test
# sentence is the first validation clip's text, which nothing else in the run keeps).
SAMPLE_TEXTS_FILE = "texts.json"
# With a measured rate, generation may end between the training data's 10th percentile of frames
# per token (never faster than the fastest tenth of the clips it learned from) and this multiple of
# its 90th; the stop token picks the frame inside that window. The stop head is the last thing an
# autoregressive TTS model learns: until the decoder has learned to align with the text (thousands
# of steps), its stop probability does not depend on the text at all and fires within the first
# few frames; without a ceiling a model that never stops would babble to max_mel_frames.
RATE_FLOOR_SHARE = 1.0
RATE_CEILING_FACTOR = 1.25


# Written into every run directory xtts makes: what may be resumed into, and moved aside by --fresh.
MARKER_FILE = ".xtts-run"
# A vocoder run inside an acoustic run (`--run-dir RUN/vocoder`): synthesis uses it by default.
VOCODER_DIR = "vocoder"

# Every name a run directory may hold: files, then folders (a trailing slash). The lock is
# `locks.py`'s (every writer of a run takes it).
LAYOUT = (
    "config.yaml",
    "run.json",
    "vocab.json",
    SPEAKERS_FILE,
    SPEAKING_RATE_FILE,
    REFERENCE_FILE,
    "metrics.jsonl",
    MARKER_FILE,
    ".xtts-lock",
    "checkpoints/",
    "tensorboard/",
    "samples/",
    f"{VOCODER_DIR}/",
)


@dataclass
class RunDir:
    path: Path
    checkpoint_dir: Optional[str] = None  # training.checkpoint_dir: relative to the run directory

    @classmethod
    def of(cls, path: Path, config: XttsConfig) -> RunDir:
        return cls(Path(path), config.training.checkpoint_dir)

    @property
    def checkpoints(self) -> Path:
        if self.checkpoint_dir:
            return self.path / Path(self.checkpoint_dir).expanduser()  # an absolute one replaces the run's
        return self.path / "checkpoints"

    @property
    def metrics(self) -> Path:
        return self.path / "metrics.jsonl"

    @property
    def tensorboard(self) -> Path:
        return self.path / "tensorboard"

    @property
    def samples(self) -> Path:
        return self.path / "samples"

    @property
    def vocab(self) -> Path:
        return self.path / "vocab.json"

    @property
    def config_file(self) -> Path:
        return self.path / "config.yaml"

    @property
    def run_file(self) -> Path:
        return self.path / "run.json"

    def has_checkpoint(self) -> bool:
        return (self.checkpoints / "checkpoint").is_file()

    def complete_checkpoints(self) -> list[str]:
        """The checkpoints whose index and data are both there (path prefixes), newest first."""
        folder = self.checkpoints
        steps = sorted(
            (
                int(found.group(1))
                for index in (folder.glob("ckpt-*.index") if folder.is_dir() else ())
                if (found := re.fullmatch(r"ckpt-(\d+)\.index", index.name))
                and any(folder.glob(f"ckpt-{found.group(1)}.data-*"))
            ),
            reverse=True,
        )
        return [str(folder / f"ckpt-{step}") for step in steps]

    def pointed_checkpoint(self) -> Optional[str]:
        """The checkpoint the pointer file (`checkpoints/checkpoint`) names, when it can be read and
        names a complete one; None for a missing, damaged or stale pointer."""
        named = self.named_checkpoint()
        return named if named is not None and named in self.complete_checkpoints() else None

    def named_checkpoint(self) -> Optional[str]:
        """The checkpoint the pointer file names (a path prefix), whole or not; None when it cannot be read."""
        try:
            text = (self.checkpoints / "checkpoint").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        found = re.search(r'^model_checkpoint_path: "([^"]+)"', text, re.MULTILINE)
        if found is None:
            return None
        path = Path(found.group(1))
        return str(path if path.is_absolute() else self.checkpoints / path)

    def read_run(self) -> Optional[dict[str, Any]]:
        if not self.run_file.is_file():
            return None
        try:
            record = json.loads(self.run_file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        return record if isinstance(record, dict) else None  # `[1, 2]`: no record xtts wrote


def no_checkpoint_hint(run_dir: str | Path, flag: str = "") -> str:
    """What to do about a run with no checkpoint: wait, when it is training now, else train it."""
    import shlex

    from xtts_cli import locks

    training = locks.held_by(Path(run_dir).expanduser())
    if training is not None:
        return (
            f"it is training now ({training}): its first checkpoint is written at training.save_step; "
            "wait for it" + (f", or pass {flag} another run" if flag else "")
        )
    train = f"xtts train --run-dir {shlex.quote(str(run_dir))}"
    return f"train it first ({train}), or pass {flag} another run" if flag else f"train first: {train}"


def no_vocabulary(run_dir: str | Path, error: str, hint: str, named: str = ""):
    """The XttsError for a run with no vocab.json: `error` and `hint`, unless it is training now and
    has not written it yet (it does once its data is scanned); `named`: how the error names the run."""
    from xtts_cli import locks
    from xtts_cli.errors import XttsError

    training = locks.held_by(Path(run_dir).expanduser())
    if training is None:
        return XttsError(error, hint=hint)
    return XttsError(
        f"{named or run_dir} holds no vocabulary yet (vocab.json)",
        hint=f"it is training now ({training}): it writes one once its data is scanned, and its first "
        "checkpoint at training.save_step; wait for it",
    )


def _exported_from(export: Path, flag: str) -> Optional[str]:
    """The hint that names the run `export` was made from (for --vocoder, its vocoder run), where it is
    still there ("e.g. runs/tiny-cpu" had been said of an export that names its run)."""
    from xtts_cli.errors import quoted

    try:
        run = json.loads((export / "export.json").read_text(encoding="utf-8")).get(
            "vocoder" if flag == "--vocoder" else "run"
        )
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(run, str) or not run:
        return None
    where = Path(run).expanduser()
    where = where if where.is_absolute() else export / where  # a moved export's, beside it
    if not (where / "config.yaml").is_file():
        return None
    return f"pass {flag} {quoted(where)}, the {'vocoder' if flag == '--vocoder' else 'run'} it was exported with"


def read_run(run_dir: Path, flag: str = "--run-dir") -> tuple[XttsConfig, RunDir]:
    """A run directory's config and its `RunDir` (checkpoints where training.checkpoint_dir put them);
    `flag`: the option it was given to, which the error's hint names."""

    from xtts_cli.config.loading import build_config, parse_yaml, read_config_text

    run = RunDir(Path(run_dir))
    hint = (
        "pass --vocoder the directory of an `xtts train -c vocoder-cpu` run, e.g. runs/vocoder-cpu, or griffin-lim"
        if flag == "--vocoder"
        else f"pass {flag} the directory of an `xtts train` run, e.g. runs/tiny-cpu"
    )
    if not run.path.is_dir() or not run.config_file.is_file():
        _not_a_run(Path(run_dir), flag, hint)
    # An empty file is the defaults, as a --config one is: what else the run lacks is said by its reader.
    config: XttsConfig = build_config(
        parse_yaml(read_config_text(run.config_file), str(run.config_file)), str(run.config_file)
    )
    run = RunDir.of(run.path, config)
    _refuse_edited_features(run, config)
    return config, run


def _refuse_edited_features(run: RunDir, config: XttsConfig) -> None:
    """Refuse a config.yaml whose mel transform or network is not the one its run trained (run.json's
    `model_identity`): its weights hear those frames alone, and have that network's shapes. A hand edit
    there (to pair a vocoder of another rate) had given speech at the wrong rate and pitch, said
    nowhere; one of the model's size, a TensorFlow shape error blaming the config of a run adapted
    from it. `xtts train` refuses a resume of either."""
    from xtts_cli.data.features import MelFeatures, with_band_top
    from xtts_cli.errors import XttsError
    from xtts_cli.findings import yaml_scalar

    recorded = (run.read_run() or {}).get("model_identity")
    if not isinstance(recorded, dict):
        return
    keys = [f"data.{key}" for key in MelFeatures.TRANSFORM]
    trained = with_band_top({key: recorded[key] for key in keys if key in recorded})
    now = with_band_top({key: getattr(config.data, key[len("data.") :]) for key in keys})
    changed = [key for key in keys if key in trained and trained[key] != now[key]]
    network = _edited_network(recorded, config)
    trained.update(network[0])
    now.update(network[1])
    changed += list(network[0])
    if not changed:
        return
    said = ", ".join(f"{key} {yaml_scalar(now[key])}" for key in changed)
    trained_with = ", ".join(f"{key} {yaml_scalar(trained[key])}" for key in changed)
    heard = (
        "model hears the features it was trained on"
        if not network[0]
        else "checkpoints hold the model those settings made"
    )
    raise XttsError(
        f"{run.config_file} says {said}, but the run was trained with {trained_with} (its run.json): its {heard}",
        hint=f"put {trained_with} back in {run.config_file}; to change them, train a new run",
    )


def _edited_network(recorded: dict, config: XttsConfig) -> tuple[dict, dict]:
    """The model keys `config` says otherwise than run.json's `recorded` identity, as each wrote them
    ({key: trained}, {key: now}), where the networks differ (a size written out as its preset has it
    is the same network); empty for a record of another kind, or one written before it held them."""
    from xtts_cli.model.presets import resolved_identity

    identity = config.model.identity()
    # A regulariser (dropout) has no weight: a run whose config changes it speaks as it did.
    regularisers = {f"model.{key}" for key in getattr(config.model, "NO_WEIGHT_KEYS", ())}
    trained = {key: value for key, value in recorded.items() if key in identity and key not in regularisers}
    if trained.get("model.kind", config.model.kind) != config.model.kind:
        return {}, {}
    now = {key: identity[key] for key in trained}
    if resolved_identity(trained) == resolved_identity(now):
        return {}, {}
    changed = [key for key in trained if trained[key] != now[key]]
    return {key: trained[key] for key in changed}, {key: now[key] for key in changed}


def runs_in(folder: Path) -> list[Path]:
    """The run directories in `folder` (xtts's marker, or a run.json from before it), by name."""
    try:
        return sorted(
            path
            for path in folder.iterdir()
            if path.is_dir() and ((path / MARKER_FILE).is_file() or (path / "run.json").is_file())
        )
    except OSError:
        return []


def runs_for(flag: str, runs: list[Path]) -> list[Path]:
    """Those of `runs` that `flag` takes: vocoder runs for --vocoder, acoustic ones for --run-dir (each had
    offered the other kind, which it then refused)."""
    return (
        [run for run in runs if _is_vocoder(run) == (flag == "--vocoder")]
        if flag in ("--vocoder", "--run-dir")
        else runs
    )


def _is_vocoder(run: Path) -> bool:
    """Whether the run's config.yaml says `model.kind: vocoder` (one that cannot be read: no)."""
    import yaml

    from xtts_cli.config.model_kinds import MODEL_SECTIONS, VocoderConfig, model_kind_of

    try:
        tree = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
        return MODEL_SECTIONS.get(model_kind_of(tree.get("model") or {})) is VocoderConfig
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError):
        return False


def listed_runs(runs: list[Path]) -> str:
    from xtts_cli.errors import quoted

    return ", ".join(quoted(run) for run in runs[:5]) + (f" and {len(runs) - 5} more" if len(runs) > 5 else "")


def _not_a_run(given: Path, flag: str, hint: str) -> NoReturn:
    """The one line for a path that is no run directory: what it is when it is part of one (a
    checkpoint, the checkpoints folder) or an export, else what it lacks."""
    from xtts_cli.errors import XttsError

    # A checkpoint is a prefix (ckpt-10 names ckpt-10.index and its data files), not a file.
    prefix = Path(str(given)[: -len(".index")]) if given.name.endswith(".index") else given
    is_checkpoint = given.name != "" and Path(f"{prefix}.index").is_file()
    if is_checkpoint or (given.is_dir() and any(given.glob("*.index"))):
        run = next((p for p in prefix.parents if (p / "config.yaml").is_file()), None)
        what = f"{given} is a checkpoint" if is_checkpoint else f"{given} holds checkpoints"
        if run is not None:
            # --step picks the acoustic run's checkpoint: said for --run-dir (synthesize, serve, export) alone.
            step = re.fullmatch(r"ckpt-(\d+)", prefix.name) if is_checkpoint and flag == "--run-dir" else None
            raise XttsError(
                f"{what} of the run {run}: {flag} takes the run directory, which speaks with its latest checkpoint",
                hint=f"pass {flag} {run}" + (f" --step {step[1]} (this checkpoint)" if step else ""),
            )
        raise XttsError(f"{what}, not a run directory: {flag} takes the folder `xtts train` wrote", hint=hint)
    if (given / "export.json").is_file():
        raise XttsError(
            f"{given} is an `xtts export` folder, not a run directory: {flag} takes the folder `xtts train` wrote "
            "(an export is served without xtts: examples/serve_export.py)",
            hint=_exported_from(given, flag) or hint,
        )
    if not given.exists():
        beside = runs_for(flag, runs_in(given.parent))  # a name mistyped: the runs there
        raise XttsError(f"{flag} {given} does not exist", hint=f"pass one of {listed_runs(beside)}" if beside else hint)
    if not given.is_dir():
        raise XttsError(f"{given} is a file, not a run directory", hint=hint)
    if (given / MARKER_FILE).is_file() or (given / "run.json").is_file():  # a run, its config.yaml deleted
        raise XttsError(
            f"{given} is a run whose config.yaml is missing (deleted?): {flag} reads its model's settings there",
            hint="put back a copy of the config it was trained with as config.yaml (xtts train -c CONFIG "
            f"--run-dir {given} writes it again as it resumes)",
        )
    runs = runs_for(flag, runs_in(given))
    if runs:  # `-r runs`: the folder the runs are in
        raise XttsError(
            f"{given} is a folder of runs, not a run directory: {flag} takes one of them",
            hint=f"pass one of {listed_runs(runs)}",
        )
    raise XttsError(f"{given} is not an xtts run directory (no config.yaml)", hint=hint)


class SpeakingRate(BaseModel):
    """Mel frames per text token in the training data: what "the right length" means for this voice."""

    clips: int
    p10: float
    median: float
    p90: float

    def frame_window(self, tokens: int, max_mel_frames: int) -> tuple[int, int]:
        """(min_frames, max_frames) a sentence of `tokens` tokens may take."""
        high = min(max_mel_frames, math.ceil(RATE_CEILING_FACTOR * self.p90 * tokens) + 1)
        low = min(high, max(1, math.floor(RATE_FLOOR_SHARE * self.p10 * tokens)))
        return low, high


def measure_speaking_rate(items, tokenizer, data: DataConfig) -> Optional[SpeakingRate]:
    """Frames per token over `items` (scan results: duration from the header, text as the
    tokenizer's front end gives it: characters or phonemes)."""
    from xtts_cli.data.plan import prepared_texts

    frames_per_second = data.sample_rate / data.hop_length
    prepared = prepared_texts(items, tokenizer)
    texts = prepared if prepared is not None else [tokenizer.clean(item.training_text) for item in items]
    rates = []
    for item, text in zip(items, texts):
        tokens = len(text)
        if tokens:
            rates.append(item.audio.duration * frames_per_second / tokens)
    if not rates:
        return None
    p10, median, p90 = np.percentile(np.asarray(rates), [10, 50, 90])
    return SpeakingRate(clips=len(rates), p10=float(p10), median=float(median), p90=float(p90))


def record_sample_texts(samples: Path, texts: dict[str, str]) -> None:
    """Add `texts` (a sample WAV's name -> the sentence it says) to samples/texts.json."""
    from xtts_cli.config.editing import write_atomically

    if texts:
        kept = {**load_sample_texts(samples), **texts}
        write_atomically(
            samples / SAMPLE_TEXTS_FILE, json.dumps(kept, ensure_ascii=False, indent=1) + "\n", backup=False
        )


def load_sample_texts(samples: Path) -> dict[str, str]:
    """samples/texts.json: each sample WAV's sentence by name; {} where a run has none (written
    before it was kept) or it cannot be read."""
    try:
        texts = json.loads((samples / SAMPLE_TEXTS_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    if not isinstance(texts, dict):
        return {}
    return {str(name): text for name, text in texts.items() if isinstance(text, str)}


def save_speaking_rate(run_dir: Path, rate: SpeakingRate) -> None:
    from xtts_cli.config.editing import write_atomically

    write_atomically(run_dir / SPEAKING_RATE_FILE, rate.model_dump_json(indent=2) + "\n", backup=False)


def load_speaking_rate(run_dir: Path) -> Optional[SpeakingRate]:
    path = Path(run_dir) / SPEAKING_RATE_FILE
    if not path.is_file():
        return None
    try:
        return SpeakingRate.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError:
        return None  # unreadable: fall back to the fixed bounds rather than refuse to speak


def save_reference(run_dir: Path, reference: np.ndarray) -> None:
    """speaker_reference.npy, written whole or not at all (a kill mid-write broke every later start)."""
    from xtts_cli.config.editing import write_atomically

    buffer = io.BytesIO()
    np.save(buffer, reference.astype(np.float32))
    write_atomically(run_dir / REFERENCE_FILE, buffer.getvalue(), backup=False)


def save_speakers(run_dir: Path, items) -> None:
    """speakers.json: every training speaker, largest first, with its minutes, dataset and longest clips."""
    import json

    by_speaker: dict[str, list] = {}
    for item in items:
        by_speaker.setdefault(item.speaker, []).append(item)
    minutes = {name: sum(item.audio.duration for item in group) / 60 for name, group in by_speaker.items()}
    payload = {
        name: {
            # The dataset most of its minutes come from; `datasets`: each one it is in.
            "dataset": _datasets(by_speaker[name])[0],
            "datasets": _datasets(by_speaker[name]),
            "minutes": round(minutes[name], 3),
            "clips": [
                item.audio_path
                for item in sorted(by_speaker[name], key=lambda i: -i.audio.duration)[:CLIPS_PER_SPEAKER]
            ],
        }
        for name in sorted(by_speaker, key=lambda name: (-minutes[name], name))
    }
    from xtts_cli.config.editing import write_atomically

    write_atomically(run_dir / SPEAKERS_FILE, json.dumps(payload, indent=1, ensure_ascii=False) + "\n", backup=False)


def _datasets(items) -> list[str]:
    minutes: dict[str, float] = {}
    for item in items:
        minutes[item.dataset] = minutes.get(item.dataset, 0.0) + item.audio.duration
    return sorted(minutes, key=lambda name: (-minutes[name], name))


def load_speakers(run_dir: Path) -> dict[str, dict]:
    import json

    from xtts_cli.errors import XttsError

    path = run_dir / SPEAKERS_FILE
    if not path.is_file():
        return {}
    try:
        speakers = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise XttsError(
            f"{path} cannot be read ({str(exc).splitlines()[0][:80]}): the run's list of its speakers' clips is lost",
            hint="copy it again from where the run trained; --speaker NAME still speaks a voice the checkpoint "
            "keeps, --speaker-wav FILE any other",
        ) from None
    return speakers if isinstance(speakers, dict) else {}


def is_griffin_lim(spec: str | Path) -> bool:
    """`--vocoder griffin-lim` however it is written (Griffin-Lim), unless a run of that name is there."""
    return str(spec).lower() == GRIFFIN_LIM and not Path(spec).is_dir()


def check_vocoder_spec(spec: Any, named: Optional[str] = None, left_out: str = "the run's own") -> None:
    """An empty `--vocoder` (an unset variable in a script: "--vocoder $VOC") or one of another type
    is refused, not the current folder read as a run, nor taken for Griffin-Lim. `left_out`: what
    the command uses without one (`vocode` has no run of its own: Griffin-Lim)."""
    if spec is not None and (not isinstance(spec, (str, Path)) or not str(spec).strip()):
        from xtts_cli.errors import XttsError

        raise XttsError(
            f"{named or '--vocoder'} {spec!r} is no vocoder run",
            hint=f"pass a vocoder run's folder (e.g. runs/vocoder-cpu) or griffin-lim; leave it out for {left_out}",
        )


def checkpoint_named(given: Path) -> Path:
    """The checkpoint a path names: a checkpoint's file as `ls` shows it (ckpt-4.index), or early
    stopping's best/ folder, its copy (the folder had been "holds checkpoints")."""
    pasted = re.fullmatch(r"(ckpt-\d+)\.(index|data-\d+-of-\d+)", given.name)
    if pasted and given.is_file():
        return given.with_name(pasted.group(1))
    return given / "ckpt" if given.name == "best" and Path(f"{given}/ckpt.index").is_file() else given


def same_start(spec: str, parent: dict[str, Any]) -> bool:
    """Whether `spec` (training.init_from as written) names the base run.json's `parent` records: its run,
    its checkpoint, that checkpoint's file as ls shows it (ckpt-4.index) or the run's checkpoints/ folder
    (a run started so had been refused its resume, as started from elsewhere)."""
    written = Path(spec).expanduser()
    # By its name too: the base's best/ copy goes when it ends, and an old ckpt-N rotates out.
    pasted = re.fullmatch(r"(ckpt-\d+)\.(index|data-\d+-of-\d+)", written.name)
    named = written.with_name(pasted.group(1)) if pasted else written / "ckpt" if written.name == "best" else written
    given = {checkpoint_named(written).resolve(), named.resolve(), written.resolve()}
    recorded = [Path(str(parent[key])).expanduser().resolve() for key in ("run", "checkpoint") if parent.get(key)]
    folder = bool(recorded) and written.resolve().name == "checkpoints" and written.resolve().parent == recorded[0]
    return bool(given.intersection(recorded)) or folder
