"""Commands registered before their engine lands say so, print nothing else, and exit 2."""

from __future__ import annotations

import pytest

from xtts_cli.cli.app import app

PENDING = ["benchmark"]


@pytest.mark.parametrize("command", PENDING)
def test_pending_command_exits_2(runner, command: str) -> None:
    result = runner.invoke(app, [command])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"xtts {command}: not implemented yet\n"
