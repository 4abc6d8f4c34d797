"""The config presets shipped inside the package (`xtts_cli/presets/*.yaml`; `configs/` in a
checkout links there): found by name, so `--config speak-cpu` works wherever xtts is installed,
and written out with their comments by `xtts init`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from xtts_cli.errors import UsageError

PRESETS_DIR = Path(__file__).resolve().parents[1] / "presets"


def preset_names() -> list[str]:
    """Every preset's name (its file's stem), sorted."""
    return sorted(path.stem for path in PRESETS_DIR.glob("*.yaml"))


def preset_path(name: str) -> Optional[Path]:
    """The file of preset `name` (`speak-cpu` or `speak-cpu.yaml`), or None when there is none."""
    stem = name[: -len(".yaml")] if name.endswith(".yaml") else name
    if not stem or "/" in stem or "\\" in stem or stem.startswith("."):
        return None
    path = PRESETS_DIR / f"{stem}.yaml"
    return path if path.is_file() else None


def require_preset(
    name: str, hint: str = "pass one of those names, or --config PATH to a YAML file of your own"
) -> Path:
    path = preset_path(name)
    if path is None:
        import difflib

        typed = name.removesuffix(".yaml").replace("_", "-").lower()  # tiny_cpu, Speak-CPU.yaml
        close = difflib.get_close_matches(typed, preset_names(), n=1, cutoff=0.7)
        raise UsageError(  # exit 2, as a config file that is not there and names no preset (`report -c nope`)
            f"there is no preset {name!r}"
            + (f" (did you mean {close[0]}?)" if close else "")
            + f"; the presets are {', '.join(preset_names())}",
            hint=hint,
        )
    return path
