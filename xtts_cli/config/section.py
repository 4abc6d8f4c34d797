"""What every config section is: a pydantic model that refuses unknown keys."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    # Unknown keys are errors (with a did-you-mean, see errors.py); assignment is validated so a CLI
    # override cannot smuggle in a bad value.
    model_config = ConfigDict(extra="forbid", validate_assignment=True)
