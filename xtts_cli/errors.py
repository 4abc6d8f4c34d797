"""Errors a user can fix. Kept free of heavy imports: `main()` needs it before any command runs."""

from __future__ import annotations


class XttsError(Exception):
    """An error the user can fix; the command prints its lines and exits with `exit_code`."""

    exit_code = 1

    def __init__(self, *lines: str, hint: str | None = None):
        self.lines = [line for line in lines if line]
        self.hint = hint
        super().__init__("; ".join(self.lines))


class ConfigError(XttsError):
    """The config cannot be read or does not validate: exit 2."""

    exit_code = 2
