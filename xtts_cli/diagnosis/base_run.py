"""`training.init_from` in `validate` and `diagnose`: the config as training takes it from its base,
and the base named with what the data adds to it, or why its weights cannot be used."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Optional

from xtts_cli.config.loading import LoadedConfig
from xtts_cli.findings import Finding

__all__ = ["parent_findings", "taken_from_base"]


def taken_from_base(loaded: LoadedConfig) -> tuple[LoadedConfig, list[Finding]]:
    """`training.init_from`: `loaded` with what it leaves unwritten of the network the base's, as
    `xtts train` takes it (`training.parent.with_base_network`); a base that cannot be opened is
    left to `parent_findings` to name."""
    from xtts_cli.errors import XttsError
    from xtts_cli.training.parent import with_base_network

    try:
        config, note = with_base_network(loaded.config, None, True)
    except XttsError:
        return loaded, []
    if note is None:
        return loaded, []
    return dataclasses.replace(loaded, config=config), [Finding(id="init-from-network", severity="info", message=note)]


def _resumed_parent(config: Any, path: Optional[Path]) -> Optional[str]:
    """What the run `xtts train` resumes started from, as its run.json records it: a run's own
    config.yaml (`path`), or the run directory the config trains (training.run_dir, else
    runs/<config name>) holding checkpoints of a start from this base, which train resumes (any
    other start it refuses, `refuse_starting_over`); None where it starts anew."""
    from xtts_cli.errors import XttsError
    from xtts_cli.run.directory import default_run_dir, own_config, refuse_starting_over, written_init_from
    from xtts_cli.run.files import RunDir

    own = path is not None and own_config(path.parent) == path
    chosen = Path(config.training.run_dir or default_run_dir(path)).expanduser()
    run = RunDir(path.parent if own and path is not None else chosen)
    parent = (run.read_run() or {}).get("parent")
    if not run.has_checkpoint() or not parent:
        return None
    # Its own config read with another --init-from too: it had said the run resumes, as train refused it.
    if not own or config.training.init_from != written_init_from(path):
        try:
            refuse_starting_over(run.path, config, path)
        except XttsError:
            return None  # its refusal is the finding
    if not own:
        return (
            f"training.init_from: {run.path} holds checkpoints of a start from {parent['run']} step "
            f"{parent['step']} (its run.json): train resumes it from them, and the base is not read again"
        )
    return (
        f"training.init_from: this run started from {parent['run']} step {parent['step']} (its run.json); "
        "it resumes from its own checkpoints, and the base is not read again"
    )


def parent_findings(config: Any, scan: Any, path: Optional[Path] = None) -> list[Finding]:
    """`training.init_from`: the run it names and what this data adds to it (info), or why its
    weights cannot be used (an error, before any training). A run's own config (`path`) that has
    checkpoints resumes from them: its parent is the one its run.json records, not read again."""
    from xtts_cli.errors import XttsError
    from xtts_cli.training.parent import open_parent

    spec = config.training.init_from
    if spec is None:
        return []
    resumed = _resumed_parent(config, path)
    if resumed is not None:
        return [Finding(id="init-from", severity="info", message=resumed)]
    from xtts_cli.run.directory import default_run_dir, refuse_starting_over

    try:
        # Where `xtts train` with this config writes (training.run_dir, else runs/<config name>): first, as
        # train refuses it.
        refuse_starting_over(Path(config.training.run_dir or default_run_dir(path)), config)
        parent = open_parent(spec, config)
        parent.check(config)
    except XttsError as error:
        message = "; ".join(error.lines) + (f" ({error.hint})" if error.hint else "")
        return [Finding(id="init-from", severity="error", message=message)]
    from xtts_cli.kinds import kind_name

    kind = kind_name(parent.config)
    article = "an" if kind[:1] in "aeiou" else "a"
    message = f"training.init_from: starts from {parent.path} step {parent.step} ({article} {kind} run"
    vocabulary = parent.tokenizer
    if vocabulary is not None:
        message += (
            f": {len(vocabulary.characters)} symbols, languages {', '.join(vocabulary.languages)}, "
            f"{len(vocabulary.speakers)} speakers"
        )
    message += ")" + "".join(f"; {said}" for said in parent.said_of_the_base(config))
    if vocabulary is not None and scan is not None and scan.items:
        from xtts_cli.data.run_data import prepare

        grown = parent.grow(prepare(config, scan=scan).tokenizer)
        news = parent.news(grown)
        message += f"; this data adds {', '.join(news) if news else 'nothing'}"
        continued = parent.continued(scan.speakers)
        message += f"; {continued}" if continued else ""
        found = [Finding(id="init-from", severity="info", message=message)]
        frozen = parent.frozen_news(news, config.training.freeze or ())
        if frozen:
            found.append(Finding(id="freeze-new-text", severity="warning", message=frozen))
        twins = parent.language_twins(grown)
        return found + [Finding(id="init-from-language-twin", severity="warning", message=said) for said in twins]
    return [Finding(id="init-from", severity="info", message=message)]
