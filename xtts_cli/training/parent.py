"""The run a new run starts from (`training.init_from`, `xtts train --init-from RUN`), opened
read-only: its config, vocabulary and checkpoint, whether the new config can take its weights, the
vocabulary grown from it, and what the new run records of it. No TensorFlow: `xtts validate` reads
it too. The weights themselves move in `model.transfer.transfer_weights`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any, Optional

from pydantic import ValidationError

from xtts_cli.config.model_kinds import AcousticConfig
from xtts_cli.config.schema import XttsConfig
from xtts_cli.data.text import Tokenizer
from xtts_cli.errors import XttsError, quoted
from xtts_cli.run.bundle import cut_short
from xtts_cli.run.files import checkpoint_named, listed_runs, no_checkpoint_hint, no_vocabulary, read_run, runs_in

__all__ = ["ParentRun", "inherit", "open_parent", "with_base_network"]

_CHECKPOINT = re.compile(r"^ckpt-(\d+)$")
# Keys of a model's identity that shape no weight: an adapted run may set them its own way.
NO_WEIGHTS = frozenset(f"model.{key}" for key in AcousticConfig.NO_WEIGHT_KEYS)


@dataclass(frozen=True)
class ParentRun:
    spec: str  # as the config or the command line wrote it
    path: Path  # its run directory
    checkpoint: str  # the checkpoint's path prefix (…/ckpt-N)
    step: int
    config: XttsConfig
    tokenizer: Optional[Tokenizer]  # None for a kind that reads no text

    @property
    def named(self) -> str:
        """The run's folder as `spec` wrote it, less a checkpoint's part (runs/base of
        runs/base/checkpoints/ckpt-5: a run's vocoder and its lock are the folder's)."""
        written = Path(self.spec).expanduser()
        for folder in (written, *written.parents):
            if folder.resolve() == self.path.resolve():
                return str(folder)
        return str(self.path)

    def refusal(self, config: XttsConfig) -> Optional[str]:
        """Why `config`'s model cannot take this run's weights (one line), or None: another kind
        or decoder, other sizes, other mel features, another text front end."""
        from xtts_cli.model.presets import resolved_identity
        from xtts_cli.run.directory import model_identity

        mine, theirs = resolved_identity(model_identity(config)), resolved_identity(model_identity(self.config))
        # An optional network both runs have (a vocoder's discriminators) is taken, so must fit too.
        my_parts, their_parts = config.model.optional_parts(), self.config.model.optional_parts()
        for part in set(my_parts) & set(their_parts):
            mine.update(my_parts[part])
            theirs.update(their_parts[part])
        # What the new run trains (training.freeze) and how it regularises (dropout, noise: no
        # weight of its own) are its own choice.
        changed = sorted(
            (
                key
                for key in set(mine) | set(theirs)
                if mine.get(key) != theirs.get(key) and not key.startswith("training.") and key not in NO_WEIGHTS
            ),
            key=lambda key: (key != "model.kind", key),  # another kind first: its other keys follow from it
        )
        if not changed:
            return None
        if "model.kind" in changed:
            return (
                f"--init-from {self.spec}: that is {_a(theirs.get('model.kind'))} run, and this config trains "
                f"{_a(mine.get('model.kind'))} model"
            )
        shown = ", ".join(f"{key} {theirs.get(key)!r} -> {mine.get(key)!r}" for key in changed[:4])
        more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""
        if any(key.startswith("model.") for key in changed):
            return f"--init-from {self.spec}: its weights do not fit this config ({shown}{more})"
        # A mel or text setting leaves every weight's shape, but not what the weights learnt to read and make.
        return (
            f"--init-from {self.spec}: its weights learnt other mel features or text than this config's ({shown}{more})"
        )

    def check(self, config: XttsConfig) -> None:
        refusal = self.refusal(config)
        if refusal is not None and " run, and this config trains " in refusal:
            from xtts_cli.kinds import kind_for
            from xtts_cli.run.files import VOCODER_DIR, RunDir

            owner = self.path.parent if self.path.name == VOCODER_DIR else None
            own = self.path / VOCODER_DIR  # an acoustic run's own vocoder, beside its checkpoints
            if owner is not None and RunDir(owner).has_checkpoint() and kind_for(config).speaks:
                hint = f"--init-from {owner}: the acoustic run this vocoder belongs to"
            elif not kind_for(config).speaks and RunDir(own).has_checkpoint():
                hint = f"--init-from {own}: the vocoder this run keeps"
            else:
                hint = "start a vocoder from a vocoder run (-c vocoder-cpu), an acoustic model from an acoustic run"
            raise XttsError(refusal, hint=hint)
        if refusal is not None:
            from xtts_cli.kinds import kind_for

            # A preset writes them all out: the adapt presets are the ones that leave them to the base.
            start = (
                "from a preset: xtts init -p vocoder-cpu -o my.yaml, delete its model section, pass -c my.yaml"
                if not kind_for(config).speaks
                else "-c adapt-cpu or adapt-gpu does; from another preset, write it out with xtts init -p PRESET "
                "-o my.yaml and delete its model section"
            )
            raise XttsError(
                refusal,
                hint="leave the model section, mel features (rate, hop, mels) and text front end unwritten: "
                f"they are then the base's ({start}); change the data and the training section",
            )

    def said_of_the_base(self, config: XttsConfig) -> list[str]:
        """What a user adapting this base to `config` should know of it beyond its weights: that it is
        training now (the latest checkpoint it wrote is the one taken), an optional network of its
        that `config` builds none of (a vocoder's discriminators), and a vocoder it has that the new
        run does not take (an acoustic run speaks through Griffin-Lim until it has one)."""
        from xtts_cli import locks
        from xtts_cli.kinds import kind_for
        from xtts_cli.run.files import VOCODER_DIR

        said = [
            f"{self.named}'s {part} are left behind: this config builds none (model.{switch} is empty)"
            for part, switch in self.config.model.OPTIONAL_PARTS.items()
            if part in self.config.model.optional_parts() and part not in config.model.optional_parts()
        ]
        training = locks.held_by(self.path)
        if training is not None:
            said.append(
                f"{self.named} is training now ({training}): this run starts from its step {self.step}, the latest "
                "checkpoint it had written"
            )
        vocoder = self.path / VOCODER_DIR
        if kind_for(self.config).speaks and (vocoder / "config.yaml").is_file():
            said.append(
                f"{self.named} has a vocoder ({vocoder}), which this run does not take: it speaks through Griffin-Lim "
                f"until it has its own; pass --vocoder {vocoder} to synthesize, or adapt it to this data too, "
                f"with its own settings (xtts train -c {quoted(vocoder / 'config.yaml')} --init-from {quoted(vocoder)} "
                "-r RUN/vocoder -d DATA: a preset's model section of another size is refused)"
            )
        return said

    def grow(self, tokenizer: Tokenizer) -> Tokenizer:
        """The new run's vocabulary: the base's, with what `tokenizer` (the new data's) adds appended."""
        assert self.tokenizer is not None, "a vocoder run has no vocabulary"
        return self.tokenizer.grown(tokenizer)

    def news(self, tokenizer: Optional[Tokenizer]) -> list[str]:
        """What the new run's vocabulary adds to the base's: '3 symbols (á é ñ)', 'language fa', '1 speaker (me)'."""
        if tokenizer is None or self.tokenizer is None:
            return []
        base = self.tokenizer
        symbols = tokenizer.characters[len(base.characters) :]
        languages = tokenizer.languages[len(base.languages) :]
        speakers = tokenizer.speakers[len(base.speakers) :]
        # Named, so a stray mark in a transcript is seen joining the vocabulary (it had been "14 symbols").
        news = [f"{len(symbols)} symbol{'s' * (len(symbols) != 1)} ({_listed(symbols, 24, ' ')})"] if symbols else []
        news += [f"language{'s' * (len(languages) != 1)} {', '.join(languages)}"] if languages else []
        news += (
            [f"{len(speakers)} speaker{'s' * (len(speakers) != 1)} ({_listed(speakers, 8, ', ')})"] if speakers else []
        )
        return news

    @staticmethod
    def frozen_news(news: list[str], freeze: Sequence[str]) -> str:
        """A warning when `training.freeze` keeps the text encoder, whose tables hold the symbols and
        languages the new data adds (`news`), from training: their rows would stay as they start
        (random symbols, a language at zero); "" otherwise."""
        text = [new.split(" (")[0] for new in news if "symbol" in new or new.startswith("language")]
        if "text_encoder" not in freeze or not text:
            return ""
        return (
            f"training.freeze holds text_encoder, where the {' and '.join(text)} this data adds would learn: "
            "they would never train; leave text_encoder out of training.freeze"
        )

    def language_twins(self, grown: Optional[Tokenizer]) -> list[str]:
        """A warning for each language the data adds that is one of the base's by another name (`de-DE`
        beside `de`: no voice of espeak-ng's own, as `en-gb` beside `en` is): a second row for it starts
        at zero, where the base's own has learnt it."""
        from xtts_cli.data.phonemes import espeak_language

        def voice(code: str) -> str:
            try:
                return espeak_language(code)
            except XttsError:
                return ""

        if self.tokenizer is None or grown is None:
            return []
        base = self.tokenizer.languages
        said = []
        for added in grown.languages[len(base) :]:
            twin = next((known for known in base if known == added.replace("_", "-").split("-")[0]), None)
            if twin is not None and voice(added) in ("", voice(twin)):
                said.append(
                    f"the data's language {added} is the base's {twin} by another name: it would train as a new "
                    f"language from zero, not on the base's {twin}; set the data's language to {twin}"
                )
        return said

    def continued(self, speakers) -> str:
        """A note naming the new data's speakers the base has already, whose clips go on training
        that voice rather than a new one ("" when none)."""
        if self.tokenizer is None:
            return ""
        known = [name for name in speakers if name in self.tokenizer.speakers]
        if not known:
            return ""
        shown = (
            ", ".join(known[:3]) + f" and {len(known) - 3} more" if len(known) > 4 else ", ".join(known)
        )  # never "1 more"
        return (
            f"speaker{'s' * (len(known) > 1)} {shown} {'are' if len(known) > 1 else 'is'} the base's already: these "
            "clips go on training that voice (a new voice needs another name: its folder, or speakers.csv)"
        )

    def val_loss(self) -> Optional[float]:
        """The base's validation loss at the step it is taken from, as its metrics.jsonl recorded it."""
        import json

        found = None
        try:
            lines = (self.path / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
        except OSError:
            return None
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a crash
            if record.get("step") == self.step and "val_loss" in record:
                found = float(record["val_loss"])
        return found

    def other_checkpoints(self) -> str:
        """What to pass instead of this checkpoint: the others its run keeps, newest first."""
        folder = Path(self.checkpoint).parent
        steps = sorted(
            (int(m.group(1)) for p in folder.glob("ckpt-*.index") if (m := _CHECKPOINT.match(p.stem))), reverse=True
        )
        # An earlier checkpoint a copy cut short as well is no way out.
        others = [step for step in steps if step != self.step and cut_short(folder / f"ckpt-{step}") is None]
        if not others:
            return "it was copied or saved cut short: copy the run's checkpoints/ folder again, whole"
        if not Path(f"{self.checkpoint}.index").is_file() and others[0] > self.step:
            # Gone while it was read, a later one in its place: the base is still training.
            return (
                f"the base is still training and replaced it with step {others[0]} as it was read; pass that "
                f"checkpoint (--init-from {quoted(folder / f'ckpt-{others[0]}')}) or a copy of the run that does not change"
            )
        return (
            f"a copy or save cut short; pass an earlier one the run keeps (steps {', '.join(map(str, others))}), "
            f"e.g. --init-from {quoted(folder / f'ckpt-{others[0]}')}"
        )

    def record(self) -> dict[str, Any]:
        """What the new run's run.json keeps of its parent."""
        # Absolute: the run resumes, and is validated, from any folder.
        return {
            "run": str(self.path.absolute()),
            "step": self.step,
            "checkpoint": str(Path(self.checkpoint).absolute()),
        }


def inherit(config: XttsConfig, base: XttsConfig, where: str) -> tuple[XttsConfig, Optional[str]]:
    """`config` with what it leaves unwritten of the network taken from `base` (the run it starts
    from, or the run it resumes): the model keys its network is built from (not the training aids),
    when of the same kind, and the mel and text settings, as a fine-tuned model takes its
    architecture from its checkpoint. Written is what the file or the command line set (pydantic's
    `model_fields_set` of each section, as `resolve_config` validated them); a written key stays
    (the check then says whether the weights fit). Returns the config and a note naming what it took
    that the config alone would not have (None: nothing), after `where` ("--init-from RUN: the
    base's")."""
    from xtts_cli.data.features import MelFeatures
    from xtts_cli.run.directory import TEXT_KEYS

    taken: dict[str, Any] = {}
    written = config
    if type(config.model) is not type(base.model):
        section = _as_kind_of(config.model, base.model)
        if section is None:  # another kind, written so: the check refuses it
            return config, None
        config, taken["model.kind"] = config.model_copy(update={"model": section}), base.model.kind
    written_model, written_data = config.model.model_fields_set, config.data.model_fields_set
    # The keys the network is built from (what a resume must match), not the training aids.
    mine, theirs = config.model.identity(), base.model.identity()
    for section, keys in ((config.model, mine), (base.model, theirs)):
        keys.update({f"model.{key}": getattr(section, key) for key in section.BASE_KEYS})
    taken.update(
        {
            key: value
            for key, value in theirs.items()
            if key[len("model.") :] not in written_model and mine.get(key) != value
        }
    )
    # The longest clip in frames too: at the base's hop length it is the seconds the base trained and
    # speaks with (a preset's default of 870 frames at another hop would drop the longer clips).
    data_keys = [*(item.name for item in dataclass_fields(MelFeatures)), *TEXT_KEYS, "max_mel_frames"]
    taken.update(
        {
            f"data.{key}": getattr(base.data, key)
            for key in data_keys
            if key not in written_data and getattr(config.data, key) != getattr(base.data, key)
        }
    )
    if not taken:
        return config, None
    tree = config.model_dump()
    for key, value in taken.items():
        section, name = key.split(".", 1)
        tree[section][name] = value
    shown = ", ".join(f"{key} {value!r}" for key, value in taken.items())  # every one: each changes what it makes
    try:
        return XttsConfig.model_validate(tree), f"{where} {shown} (settings the config leaves unwritten)"
    except ValidationError:
        if "model.kind" not in taken:
            raise
        # The base's kind does not fit the rest of the config (an acoustic preset's training.freeze
        # on a vocoder base): the config as written, which the check refuses naming both kinds. It
        # had ended in pydantic's traceback blaming training.freeze.
        return written, None


def _as_kind_of(section: Any, base: Any) -> Any:
    """`section` as a section of `base`'s kind, when it leaves `model.kind` unwritten and the keys it
    writes are that kind's too (a preset's model section deleted, so the base's sizes are taken);
    else None."""
    from pydantic import ValidationError

    if "kind" in section.model_fields_set:
        return None
    written = section.model_dump(include=section.model_fields_set)
    try:
        return type(base).model_validate({**written, "kind": base.kind})
    except ValidationError:
        return None


def with_base_network(config: XttsConfig, run_dir: Optional[Path], fresh: bool) -> tuple[XttsConfig, Optional[str]]:
    """`training.init_from`: `config` with what it leaves unwritten of the network the base's
    (`inherit`), or, when the run at `run_dir` resumes, the run's own (its config.yaml holds the same,
    and the base may be gone by then). A base that cannot be opened raises its one-line error."""
    from xtts_cli.config.loading import resolve_config
    from xtts_cli.run.directory import own_config
    from xtts_cli.run.files import RunDir

    spec = config.training.init_from
    own = own_config(run_dir) if run_dir is not None and not fresh else None
    if run_dir is not None and own is not None and RunDir.of(run_dir, config).has_checkpoint():
        recorded = resolve_config(own).config
        if spec is None and recorded.training.init_from is not None:
            # An adapted run resumed without --init-from is still the base's child: its record says so.
            # A copy, not a variant validated again: which keys the config writes is what `inherit` reads.
            training = config.training.model_copy(update={"init_from": recorded.training.init_from})
            config = config.model_copy(update={"training": training})
        if config.training.init_from is None:
            return config, None
        return inherit(config, recorded, f"resuming {run_dir}: the run's own")
    if spec is None:
        return config, None
    return inherit(config, open_parent(spec, config).config, f"--init-from {spec}: the base's")


def _a(word: object) -> str:
    return f"{'an' if str(word)[:1] in 'aeiou' else 'a'} {word}"


def _latest(checkpoints: Path) -> Optional[str]:
    """The checkpoint TensorFlow's pointer file names last (read as text: no TensorFlow here; one not
    whole is refused by its caller, naming those kept), else the newest complete checkpoint in the
    folder: a pointer a copy left out, or one a crash or a full disk emptied (a base whose checkpoints
    were all there had been refused as holding none, where resume and synthesize read them)."""
    steps = [int(m.group(1)) for p in checkpoints.glob("ckpt-*.index") if (m := _CHECKPOINT.match(p.stem))]
    whole = [
        str(checkpoints / f"ckpt-{step}") for step in sorted(steps) if any(checkpoints.glob(f"ckpt-{step}.data-*"))
    ]
    try:
        text = (checkpoints / "checkpoint").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    found = re.search(r'^model_checkpoint_path:\s*"([^"]+)"', text, re.MULTILINE)
    named = Path(found.group(1)) if found else None
    named_path = str(named if named is None or named.is_absolute() else checkpoints / named)
    return named_path if named is not None else (whole[-1] if whole else None)


def _run_of_checkpoint(prefix: Path) -> Optional[Path]:
    """The run directory a checkpoint path lies in (the nearest folder above it with a config.yaml)."""
    for folder in prefix.parents:
        if (folder / "config.yaml").is_file():
            return folder
    return None


def _refuse_lost_checkpoints(spec: str | Path, run: Any, config: XttsConfig) -> None:
    """A base that trained and holds no whole checkpoint now (removed, moved), its pointer file gone
    or left behind, refused as such: it had been told to train first, which train refuses for the
    same reason, or to train it again."""
    from xtts_cli.run.directory import logged_past_first_save

    logged = None if run.complete_checkpoints() else logged_past_first_save(run, config.training.save_step)
    if logged is not None:
        raise XttsError(
            f"--init-from {spec}: {run.checkpoints} holds no whole checkpoint, though the run logged steps up to "
            f"{logged[0]} ({logged[1]}): they were removed or moved",
            hint="put them back (or set training.checkpoint_dir in the run's config.yaml to where they are), or "
            "pass another run",
        )


def refuse_own_directory(spec: Optional[str], run_dir: Path) -> None:
    """`--init-from` naming the run directory it would train into (or a checkpoint in it): refused
    in one line, before anything is read or moved."""
    if spec is None:
        return
    given, own = Path(spec).expanduser().resolve(), run_dir.resolve()
    if given == own or own in given.parents:
        raise XttsError(
            f"--init-from {spec}: that is this run's own directory",
            hint="pass --run-dir DIR for the new run (the base stays where it is)",
        )


def open_parent(spec: str | Path, config: Optional[XttsConfig] = None) -> ParentRun:
    """The run `spec` names (a run directory, its latest checkpoint; or a checkpoint path), read-only;
    `config`, the run that starts from it, picks the runs of its kind a hint offers."""
    from xtts_cli.run.directory import is_run_dir

    given = checkpoint_named(Path(spec).expanduser())
    if given.is_dir() and not (given / "config.yaml").is_file() and any(given.glob("ckpt-*.index")):
        # A run's checkpoints folder: its latest checkpoint, as the run directory gives it (it had been refused).
        latest = _latest(given)
        if latest is not None and _run_of_checkpoint(Path(latest)) is not None:
            given = Path(latest)
    if given.is_dir():
        run_path = given
        config, run = read_run(run_path, "--init-from")
        checkpoint = _latest(run.checkpoints)
        if checkpoint is None and not is_run_dir(run_path):  # a config.yaml alone: `xtts init` wrote it
            raise XttsError(
                f"--init-from {spec}: a folder with a config.yaml but no run (xtts train writes run.json and "
                "checkpoints beside it)",
                hint="pass a trained run's directory, e.g. --init-from runs/voices-cpu",
            )
        if checkpoint is None:
            _refuse_lost_checkpoints(spec, run, config)
            raise XttsError(
                f"--init-from {spec}: that run holds no checkpoint yet", hint=no_checkpoint_hint(spec, "--init-from")
            )
    elif Path(f"{given}.index").is_file() and _CHECKPOINT.match(given.name):
        found = _run_of_checkpoint(given)
        if found is None:
            raise XttsError(
                f"--init-from {spec}: no run directory (config.yaml) above that checkpoint",
                hint="pass the run directory it was trained in; its config says what the weights are",
            )
        run_path, checkpoint = found, str(given)
        config, run = read_run(run_path, "--init-from")
    elif _CHECKPOINT.match(given.name) and list(given.parent.glob("ckpt-*.index")):
        steps = sorted(int(m.group(1)) for p in given.parent.glob("ckpt-*.index") if (m := _CHECKPOINT.match(p.stem)))
        raise XttsError(
            f"--init-from {spec}: {given.parent} keeps no checkpoint {given.name}",
            hint=f"it keeps steps {', '.join(map(str, steps))}: e.g. --init-from {quoted(given.parent / f'ckpt-{steps[-1]}')}",
        )
    elif Path(f"{given}.index").is_file() and given.parent.name == "best" and (best := _run_of_checkpoint(given)):
        # Early stopping's copy of the best weights, which an interrupted run keeps: written as a checkpoint
        # is. It had been refused, its hint the run's directory, whose latest weights are not the best's.
        run_path, checkpoint = best, str(given)
        config, run = read_run(run_path, "--init-from")
    else:
        what = "not a run directory nor a checkpoint (ckpt-N with its .index)" if given.exists() else "nothing is there"
        if Path(f"{given}.index").is_file():
            what = "a checkpoint of another name than a run's (ckpt-N)"
        raise XttsError(f"--init-from {spec}: {what}", hint=_runs_beside(given, config))
    if not Path(f"{checkpoint}.index").is_file():
        kept = sorted(
            int(m.group(1)) for p in Path(checkpoint).parent.glob("ckpt-*.index") if (m := _CHECKPOINT.match(p.stem))
        )
        if not kept:  # its pointer left behind: "train this one again" had been said of a trained run
            _refuse_lost_checkpoints(spec, run, config)
        raise XttsError(
            f"--init-from {spec}: its checkpoint {checkpoint} is missing (.index)",
            hint=f"pass one of the checkpoints it keeps: e.g. --init-from {quoted(Path(checkpoint).parent / f'ckpt-{kept[-1]}')}"
            if kept
            else "it keeps no other checkpoint: pass another run, or train this one again",
        )
    from xtts_cli.kinds import kind_for

    tokenizer = _base_vocabulary(spec, run, config) if kind_for(config).speaks else None
    step_match = _CHECKPOINT.match(Path(checkpoint).name)
    step = int(step_match.group(1)) if step_match else _best_step(run)
    parent = ParentRun(str(spec), run_path, checkpoint, step, config, tokenizer)
    short = cut_short(checkpoint)
    if short is not None:  # a copy cut short: said before a model is built (and by validate)
        raise XttsError(
            f"--init-from {spec}: its checkpoint {checkpoint} cannot be read ({short})", hint=parent.other_checkpoints()
        )
    return parent


def _best_step(run: Any) -> int:
    """The step of the best weights early stopping keeps (checkpoints/early_stop.json); 0 unknown."""
    import json

    try:
        step = json.loads((run.checkpoints / "early_stop.json").read_text(encoding="utf-8")).get("step")
    except (OSError, ValueError, AttributeError):
        return 0
    return step if isinstance(step, int) else 0


def _runs_beside(given: Path, config: Optional[XttsConfig]) -> str:
    """What to pass for a base that is not there: the runs in the folder it names (`runs/`) of the kind
    `config` trains (an acoustic adaptation had been offered vocoder runs), or how one is made. The
    hint had offered runs/voices-cpu, the very path that was not there."""
    from xtts_cli.kinds import kind_for
    from xtts_cli.run.files import runs_for

    runs = runs_in(given.parent)
    if config is not None:
        runs = runs_for("--run-dir" if kind_for(config).speaks else "--vocoder", runs)
    if runs:
        return f"pass one of the runs in {given.parent}: {listed_runs(runs)}"
    return (
        "train the base first (xtts train -c voices-cpu writes runs/voices-cpu), then pass its directory, or one "
        "of its checkpoints: e.g. runs/voices-cpu/checkpoints/ckpt-4000"
    )


def _base_vocabulary(spec: str | Path, run: Any, config: XttsConfig) -> Tokenizer:
    """The base run's vocabulary, refused where its weights could not be read by it."""
    if not run.vocab.is_file():
        raise no_vocabulary(
            spec,
            f"--init-from {spec}: that run has no vocab.json",
            "pass a run `xtts train` wrote",
            named=f"--init-from {spec}: that run",
        )
    try:
        tokenizer = Tokenizer.load(run.vocab)
    except XttsError as error:  # its hint had said --fresh, which starts the new run over, not the base
        raise XttsError(
            f"--init-from {spec}: {error.lines[0]}",
            hint="put back the base's vocab.json (a copy of the run holds it: its weights' text tables are "
            "numbered by it), or pass another base",
        ) from None
    written = config.data.text_frontend
    if tokenizer.frontend != written:  # its config.yaml edited since: the weights learnt the vocabulary's
        raise XttsError(
            f"--init-from {spec}: its config.yaml says data.text_frontend {written} and its vocab.json "
            f"{tokenizer.frontend}, which its weights learnt",
            hint=f"set data.text_frontend: {tokenizer.frontend} in {quoted(run.path / 'config.yaml')} as it "
            "trained, or start from a base trained with the front end you want",
        )
    if not tokenizer.languages:
        raise XttsError(
            f"--init-from {spec}: its vocabulary was saved before runs recorded their languages and speakers",
            hint=f"it goes on training as it is (xtts train -r {run.path}, on data it can read); a new run with "
            "other speakers, languages or symbols starts from scratch, or from a base trained with this xtts",
        )
    return tokenizer


def _listed(names: Sequence[str], most: int, between: str) -> str:
    """`names` as a user reads them (a space or another unseen character by its code), the first `most`."""
    shown = [name if name.strip() and name.isprintable() else f"U+{ord(name[0]):04X}" for name in names[:most]]
    return between.join(shown) + (f"{between}and {len(names) - most} more" if len(names) > most else "")
