"""`validate` and a run it resumes: the data read against the vocabulary the run fixed when it
started, as `xtts train` reads it, so a language or letters the run never had are refused here,
not after the scan and the model's build."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from xtts_cli.findings import Finding

__all__ = ["resume_findings", "run_dir_findings"]


def resume_findings(config: Any, scan: Any, path: Optional[Path] = None) -> list[Finding]:
    """Where `xtts train` with `config` (read from `path`) resumes a run, one with a checkpoint and
    its vocab.json in training.run_dir (else runs/<config name>): an error for data the run's
    vocabulary cannot encode (train's own refusal), and its note on speakers it lacks."""
    from xtts_cli.data.plan import encode_texts, speakers_it_lacks
    from xtts_cli.data.run_data import prepare
    from xtts_cli.data.text import Tokenizer
    from xtts_cli.errors import XttsError
    from xtts_cli.run.directory import default_run_dir
    from xtts_cli.run.files import RunDir

    if scan is None or not scan.items:
        return []
    run = RunDir(Path(config.training.run_dir or default_run_dir(path)).expanduser())
    if not run.has_checkpoint() or not run.vocab.is_file():
        return []  # a new run: its vocabulary is built from this data
    try:
        saved = Tokenizer.load(run.vocab)
    except (XttsError, ValueError, OSError):
        return []  # train names what is wrong with it
    found = []
    lacking = speakers_it_lacks(saved, scan) if saved.speakers else ""
    if lacking:
        found.append(Finding(id="resume-speakers", severity="warning", message=f"{run.path} resumes: {lacking}"))
    try:
        data = prepare(config, scan=scan, tokenizer=saved)
        encode_texts(data.train_items + data.eval_items, saved)
    except XttsError as error:
        said = "; ".join(error.lines) + (f" ({error.hint})" if error.hint else "")
        found.append(Finding(id="resume-vocabulary", severity="error", message=f"{run.path} resumes: {said}"))
    return found


def run_dir_findings(config: Any, path: Optional[Path] = None) -> list[Finding]:
    """What `xtts train` refuses of its run directory (training.run_dir, else runs/<config name>)
    before its first step: a folder of files it did not write, a resume of another model, an
    acoustic run kept where the vocoder goes. One error, with train's own words and hint."""
    from xtts_cli.errors import XttsError
    from xtts_cli.run.directory import default_run_dir, refusal_to_start
    from xtts_cli.training.components import refuse_unfit_for_its_vocoder

    where = Path(config.training.run_dir or default_run_dir(path)).expanduser()
    if not where.is_dir():
        return []  # a new run: train makes the folder
    error = refusal_to_start(where, config)
    if error is None:
        try:
            refuse_unfit_for_its_vocoder(where, config)
        except XttsError as refused:
            error = refused
    if error is None:
        return []
    said = "; ".join(error.lines) + (f" ({error.hint})" if error.hint else "")
    return [Finding(id="run-dir", severity="error", message=f"xtts train would refuse it: {said}")]
