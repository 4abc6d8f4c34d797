"""Every command's --help reads whole at 80 and at 120 columns: no word or option name cut off with
an ellipsis, no code span broken across lines, and examples at the end."""

from __future__ import annotations

import re

import pytest

from xtts_cli.cli.app import app


def _commands(group=None, path: tuple[str, ...] = ()) -> list[list[str]]:
    """Every command the app registers, groups and their subcommands included (not a hand-kept
    list: one that missed `vocode`, `serve` and `report` left their help unchecked)."""
    import typer

    group = group or typer.main.get_command(app)
    found = [list(path)]
    for name, command in getattr(group, "commands", {}).items():
        found += _commands(command, (*path, name))
    return found


COMMANDS = _commands()


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "xtts")
def test_help_reads_whole(runner, command, width):
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": str(width), "TERM": "dumb"})
    assert result.exit_code == 0, result.output
    text = result.output
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines), "a line wider than the terminal"
    assert "…" not in text, "a word or an option name cut off:\n" + "\n".join(line for line in lines if "…" in line)
    broken = [line for line in lines if line.count("`") % 2]
    assert not broken, "a code span broken across lines:\n" + "\n".join(broken)
    # `<...>` in a help text is taken for markup and dropped: a placeholder would vanish.
    assert "runs/." not in text and ".bak backup" not in text


@pytest.mark.parametrize("command", [c for c in COMMANDS if c and c != ["data-service"]], ids=" ".join)
def test_each_command_ends_its_description_with_examples(runner, command):
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "120", "TERM": "dumb"})
    description = result.output.split("╭")[0]
    assert "Examples:" in description
    examples = [line.strip() for line in description.split("Examples:")[1].splitlines() if line.strip()]
    assert 2 <= len(examples) <= 3 and all(re.match(r"xtts ", line) for line in examples), examples


def test_the_readme_lists_every_command_once():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme.split("| command | what it does |\n")[1].split("\n\n")[0]  # the first table, at the top
    listed = re.findall(r"^\| `xtts ([a-z-]+)", table, flags=re.MULTILINE)
    assert sorted(listed) == sorted(command[0] for command in COMMANDS if len(command) == 1)


def test_init_names_every_preset_it_can_write(runner):
    from xtts_cli.config.preset_files import preset_names

    text = " ".join(runner.invoke(app, ["init", "--help"], env={"COLUMNS": "200"}).output.split())
    assert [name for name in preset_names() if name not in text] == []


def test_a_stray_argument_is_named_as_the_option_it_was_meant_for(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.yaml").write_text("data: {}\n", encoding="utf-8")
    for args, meant in (
        (["train", "my.yaml"], "pass it as --config my.yaml"),
        (["validate", "speak-cpu"], "pass it as --config speak-cpu"),
        (["serve", "run"], "pass it as --run-dir run"),
        (["export", "run"], "pass it as --run-dir run"),
    ):
        result = runner.invoke(app, args, env={"COLUMNS": "200", "TERM": "dumb"})
        assert result.exit_code == 2 and meant in " ".join(result.output.split()), (args, result.output)
    other = runner.invoke(app, ["train", "nothing"], env={"COLUMNS": "200", "TERM": "dumb"})
    assert other.exit_code == 2 and "pass it as" not in other.output and "(nothing)" in other.output


def test_a_text_that_starts_with_a_dash_is_told_to_go_after_two_dashes(runner):
    # click read "-5 degrees outside." as the options -5...: "No such option: -5", and no way on.
    for args, said in (
        (["synthesize", "-5 degrees outside.", "-r", "run"], "xtts synthesize [OPTIONS] -- '-5 degrees outside.'"),
        (["synthesize", "-r", "run", "- a list item"], "a text that starts with '-' goes after --"),
        (["vocode", "-1.wav", "--out-dir", "o"], "xtts vocode [OPTIONS] -- -1.wav"),
    ):
        result = runner.invoke(app, args, env={"COLUMNS": "200", "TERM": "dumb"})
        assert result.exit_code == 2 and said in " ".join(result.output.split()), (args, result.output)
    # A misspelt option is one still, and no preset's name starts with "-".
    for args in (["synthesize", "hi", "-x"], ["init", "-5"]):
        result = runner.invoke(app, args, env={"COLUMNS": "200", "TERM": "dumb"})
        assert result.exit_code == 2 and "goes after --" not in result.output, result.output


def test_a_word_where_a_number_belongs_is_said_to_be_no_number(runner):
    # click had said "'abc' is not a valid float range", naming its own type, not what was wanted.
    for args, said in (
        (["synthesize", "hi", "--speed", "abc"], "Invalid value for '--speed': 'abc' is not a number."),
        (["train", "--steps", "1.5"], "Invalid value for '--steps' / '-n': '1.5' is not a whole number."),
    ):
        result = runner.invoke(app, args, env={"COLUMNS": "200", "TERM": "dumb"})
        assert result.exit_code == 2 and said in " ".join(result.output.split()), (args, result.output)
