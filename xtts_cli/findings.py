"""The findings vocabulary every layer shares: a finding, the config change that repairs it, and
how a config value is written as YAML.

`validate`, `diagnose`, `profile-*` and `benchmark` report `Finding`s; `validate --fix` applies
their `ConfigChange`s to the user's file (config/editing.py). It sits at the bottom of the package
with `errors.py`, so the config, profiling and diagnosis layers use it without importing each other.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from xtts_cli.errors import XttsError

__all__ = ["SEVERITY_RANK", "ConfigChange", "Finding", "Severity", "sort_findings", "yaml_scalar"]

Severity = Literal["error", "warning", "info"]
SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def yaml_scalar(value: Any) -> str:
    """A scalar as YAML text that PyYAML (YAML 1.1) reads back as the same value and type."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise XttsError(f"cannot write {value!r} into a config")
        text = repr(value)
        if "e" in text:
            # YAML 1.1 floats need a dot in the mantissa and a signed exponent: 1.0e-05, not 1e-05.
            mantissa, exponent = text.split("e")
            if "." not in mantissa:
                mantissa += ".0"
            if exponent[0] not in "+-":
                exponent = "+" + exponent
            text = f"{mantissa}e{exponent}"
        return text
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)


class ConfigChange(BaseModel):
    """A change to the config file that repairs a finding."""

    key: str = Field(description="Dotted canonical key, e.g. data.num_workers.")
    action: Literal["set", "remove"] = Field("set", description="set (to `value`) or remove the key.")
    value: Any = Field(None, description="The value to set; null for remove.")

    def describe(self) -> str:
        if self.action == "remove":
            return f"remove {self.key}"
        return f"set {self.key}: {yaml_scalar(self.value)}"


class Finding(BaseModel):
    id: str = Field(description="Stable name of the rule (e.g. input-bound-prefetch): what scripts match on.")
    severity: Severity = Field(description="error, warning or info.")
    message: str = Field(description="What was found and what to do, in one line.")
    fix: Optional[ConfigChange] = Field(
        None, description="The config change that repairs it (`xtts validate --fix` makes it); null when none can."
    )


def relative_to_here(path: Any) -> str:
    """ " (relative paths start at CWD)" for a relative path a finding says is missing; "" for an
    absolute one, which that would not explain."""
    from pathlib import Path

    return "" if Path(str(path)).expanduser().is_absolute() else f" (relative paths start at {Path.cwd()})"


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: SEVERITY_RANK[f.severity])
