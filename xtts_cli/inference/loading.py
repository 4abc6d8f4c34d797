"""A run's network, built by its model kind (`xtts_cli.kinds`) from its config and vocabulary and
restored from its checkpoint (`run.restore`): an acoustic run's (`load_run`) or a vocoder run's
(`load_vocoder`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from xtts_cli import locks
from xtts_cli.config.schema import DataConfig
from xtts_cli.errors import quoted
from xtts_cli.run.files import check_vocoder_spec, is_griffin_lim, no_vocabulary
from xtts_cli.run.restore import restore_run
from xtts_cli.speech.vocoding import GRIFFIN_LIM, Vocoder

__all__ = ["check_vocoder_spec", "is_griffin_lim", "load_run", "load_vocoder"]


def load_run(run_dir: Path, step: Optional[int] = None, notes: Optional[list[str]] = None):
    """(config, tokenizer, model with the latest checkpoint restored, step, run) from an acoustic
    run directory; `step`: that step's checkpoint instead of the latest (one the run still keeps).
    `notes` gets a line when the latest checkpoint cannot be read and an earlier one is restored."""
    from xtts_cli.data.text import Tokenizer
    from xtts_cli.kinds import kind_for, speaking_run

    config, run = speaking_run(run_dir)
    kind = kind_for(config)
    if not run.vocab.is_file():
        raise no_vocabulary(
            run_dir,
            f"{run_dir} is not an xtts run directory (no vocab.json)",
            "pass the --run-dir of an `xtts train` run, e.g. runs/tiny-cpu",
        )
    tokenizer = Tokenizer.load(run.vocab)
    model = kind.build_network(config, tokenizer)
    restored = restore_run(model, run, run_dir, step, notes, config.training.save_step)
    best = _best_kept_at(run, restored)
    if best is not None and notes is not None:
        notes.append(f"step {restored}'s checkpoint holds the weights of step {best}, the run's best validation")
    return config, tokenizer, model, restored, run


def _best_kept_at(run, step: int) -> Optional[int]:
    """The step whose weights a run ended with at `step` (early stopping, or a time budget after worse
    validations, restores its best: checkpoints/early_stop.json); None where they are `step`'s own."""
    import json

    try:
        record = json.loads((run.checkpoints / "early_stop.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("stopped_at") != step:
        return None
    best = record.get("step")
    return best if isinstance(best, int) and best < step else None


def load_vocoder(
    spec: Optional[str | Path],
    data: DataConfig,
    *,
    acoustic_run: str = "the acoustic run",
    notes: Optional[list[str]] = None,
    named: Optional[str] = None,
) -> Vocoder:
    """`spec`: "griffin-lim" (or None), or a vocoder run directory whose features must be `data`'s
    (else the load stops with both named): a `Vocoder`, log-mel [frames, n_mels] to samples. `notes`:
    as `load_run`'s. `named`: how the errors name it (by default `--vocoder SPEC`, as it was given)."""
    check_vocoder_spec(spec, named)
    if spec is None or is_griffin_lim(spec):
        return Vocoder(GRIFFIN_LIM, data)
    from xtts_cli.kinds import kind_for, vocoding_run

    path = Path(spec)
    config, run = vocoding_run(path, data, acoustic_run=acoustic_run, named=named or f"--vocoder {spec}")
    generator = kind_for(config).build_network(config, None)
    step = restore_run(generator, run, path, notes=notes, save_step=config.training.save_step)
    stopped, training = _stopped_early(run), locks.held_by(path.expanduser())
    if stopped and notes is not None:  # its noise had been blamed on the acoustic run
        notes.append(
            f"{spec}: its training stopped at step {step} ({stopped}), before its planned end: a vocoder this "
            f"early can sound like noise; xtts train -r {quoted(spec)} goes on"
        )
    elif training is not None and notes is not None:  # as said of one with no checkpoint yet
        planned = f" of {config.training.max_steps}" if config.training.max_steps else ""
        notes.append(
            f"{spec} is still training ({training}): its checkpoint of step {step}{planned} is used; a vocoder "
            "this early can sound like noise, a later checkpoint better"
        )
    return Vocoder(str(spec), config.data, generator, step)


def _stopped_early(run) -> str:
    """How a run's last start ended where that was before its planned end (an interrupt, an error),
    from run.json's history; "" when it ran to its end or nothing says (a start killed, or recorded
    before starts' ends were, says nothing)."""
    history = (run.read_run() or {}).get("history") or []
    last = history[-1] if history and isinstance(history[-1], dict) else {}
    ended_by = str(last.get("ended_by") or "")
    return ended_by if ended_by.startswith(("interrupted", "a second Ctrl-C", "error")) else ""
