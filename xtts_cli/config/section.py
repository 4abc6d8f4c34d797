"""What every config section is: a pydantic model that refuses unknown keys."""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


def _a_number(annotation: Any) -> bool:
    """Whether a field holds a number and never a flag (int, float, Optional[int], int | "auto")."""
    kinds = typing.get_args(annotation) or (annotation,)
    return bool not in kinds and any(kind in (int, float) for kind in kinds)


class Section(BaseModel):
    # Unknown keys are errors (with a did-you-mean, see errors.py); assignment is validated so a CLI
    # override cannot smuggle in a bad value; nan and inf are no setting (nan passes no bound, and
    # its error would name the bound).
    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_flag_for_a_number(cls, values: Any) -> Any:
        """`batch_size: yes` is refused as the number it is not: pydantic would read true as 1.
        Handed on as the word YAML read, whose number check names the key."""
        if not isinstance(values, dict):
            return values
        fields = cls.model_fields
        return {
            name: ("true" if value else "false")
            if isinstance(value, bool) and name in fields and _a_number(fields[name].annotation)
            else value
            for name, value in values.items()
        }
