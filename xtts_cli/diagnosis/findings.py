"""The one finding type shared by validate, diagnose, profile-* and benchmark."""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

Severity = Literal["error", "warning", "info"]
SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


class ConfigChange(BaseModel):
    """A change to the config file that repairs a finding."""

    key: str = Field(description="Dotted canonical key, e.g. data.num_workers.")
    action: Literal["set", "remove"] = "set"
    value: Any = None

    def describe(self) -> str:
        if self.action == "remove":
            return f"remove {self.key}"
        return f"set {self.key}: {_yaml_scalar(self.value)}"


class Finding(BaseModel):
    id: str
    severity: Severity
    message: str
    fix: Optional[ConfigChange] = None


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: SEVERITY_RANK[f.severity])
