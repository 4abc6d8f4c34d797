"""The presets ship inside the package: found by name, written out by `xtts init`, and each one's
opening command line parses and validates as a new user would copy it."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from xtts_cli.cli.app import app
from xtts_cli.config.loading import resolve_config
from xtts_cli.config.preset_files import PRESETS_DIR, preset_names
from xtts_cli.errors import XttsError

SAMPLE = Path(__file__).resolve().parents[1] / "xtts_cli" / "data" / "sample"
# Findings that depend on the machine, not on the preset: a GPU preset checked on a CPU.
MACHINE_FINDINGS = {"device-not-found", "mixed-precision-without-gpu"}


def opening_command(name: str) -> list[str]:
    first = (PRESETS_DIR / f"{name}.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# xtts "), f"{name} must open with the command that runs it"
    words = shlex.split(first[2:])
    # The placeholders a user replaces with their own dataset.
    return [str(SAMPLE) if word in ("DATASET_DIR", "./data") else word for word in words[1:]]


def test_every_preset_is_found_by_name():
    assert {"tiny-cpu", "speak-cpu", "voices-cpu", "rtx4090", "dual-gpu", "config"} <= set(preset_names())
    for name in preset_names():
        assert resolve_config(name).path == PRESETS_DIR / f"{name}.yaml"
        with pytest.raises(XttsError, match="not found"):  # a file's name: not here, not the preset
            resolve_config(f"{name}.yaml")


@pytest.mark.parametrize("name", preset_names())
def test_a_presets_opening_line_parses_and_validates(runner, name):
    args = opening_command(name)
    parsed = runner.invoke(app, [*args, "--help"])  # the parser reads every flag before --help answers
    assert parsed.exit_code == 0, parsed.output
    config = args[args.index("--config") + 1]
    result = runner.invoke(app, ["validate", "--config", config, "--data", str(SAMPLE), "--json"])
    import json

    report = json.loads(result.stdout)
    errors = [f["id"] for f in report["findings"] if f["severity"] == "error"]
    assert set(errors) <= MACHINE_FINDINGS, report["findings"]


def test_a_missing_config_names_the_presets(runner):
    with pytest.raises(XttsError) as caught:
        resolve_config("speek-cpu")
    assert caught.value.lines[0].endswith("no preset has that name; did you mean speak-cpu?")
    assert "speak-cpu" in caught.value.hint
    with pytest.raises(XttsError) as caught:
        resolve_config("tiny_cpu.yaml")
    assert caught.value.lines[0].endswith("did you mean tiny-cpu?")
    # A preset's name as a file (`xtts init` writes tiny-cpu.yaml) run from another folder: it had
    # trained the built-in preset, without the edits, unsaid.
    with pytest.raises(XttsError) as caught:
        resolve_config("tiny-cpu.yaml")
    assert caught.value.lines[0] == f"config file 'tiny-cpu.yaml' not found in {Path.cwd()}"
    assert caught.value.hint == "pass the path of your file, or --config tiny-cpu (no .yaml) for the built-in preset"
    Path("tiny-cpu.yaml").write_text("data:\n  batch_size: 2\n", encoding="utf-8")
    with pytest.raises(XttsError) as caught:
        resolve_config("tiny-cpu.yml")
    assert caught.value.lines[0].endswith("; did you mean tiny-cpu.yaml?")
    assert (
        resolve_config("tiny-cpu").config.data.batch_size != 2 == resolve_config("tiny-cpu.yaml").config.data.batch_size
    )


def test_init_writes_a_preset_with_its_comments_and_keeps_what_it_replaces(runner, tmp_path):
    result = runner.invoke(app, ["init", "--preset", "speak-cpu"])
    assert result.exit_code == 0, result.output
    written = Path("speak-cpu.yaml")
    # The preset, its first line's command reading the written file: `--config speak-cpu` would read
    # the package's preset without the user's edits (and says so when it does).
    preset = (PRESETS_DIR / "speak-cpu.yaml").read_text(encoding="utf-8")
    own = preset.replace("# xtts train --config speak-cpu ", "# xtts train --config speak-cpu.yaml ", 1)
    assert own != preset and written.read_text(encoding="utf-8") == own
    written.write_text(own.replace("batch_size: 16", "batch_size: 4"), encoding="utf-8")
    read = runner.invoke(app, ["validate", "-c", "speak-cpu", "--data", str(SAMPLE), "--json"])
    assert "note: --config speak-cpu reads the preset, not ./speak-cpu.yaml; pass --config speak-cpu.yaml" in (
        read.stderr
    )
    again = runner.invoke(app, ["init", "--preset", "speak-cpu"])
    assert isinstance(again.exception, XttsError) and "exists already" in again.exception.lines[0]
    written.write_text("# mine\n", encoding="utf-8")
    forced = runner.invoke(app, ["init", "-p", "speak-cpu", "--force"])
    assert forced.exit_code == 0 and Path("speak-cpu.yaml.bak").read_text() == "# mine\n"
    other = runner.invoke(app, ["init", "-p", "tiny-cpu", "-o", str(tmp_path / "mine.yaml")])
    assert other.exit_code == 0 and resolve_config(tmp_path / "mine.yaml").config.data.batch_size == 8
    # Its comments name the run its own name trains into (runs/mine), not the preset's (runs/tiny-cpu).
    written_out = (tmp_path / "mine.yaml").read_text(encoding="utf-8")
    assert "--run-dir runs/mine --out hello.wav" in written_out and "runs/tiny-cpu" not in written_out
    unknown = runner.invoke(app, ["init", "-p", "gpu-max"])
    assert isinstance(unknown.exception, XttsError) and "the presets are" in unknown.exception.lines[0]


def test_init_refuses_a_folder_named_with_a_slash_and_a_link_into_no_folder(runner, tmp_path):
    # "newdir/" had been written as a plain file named newdir (the slash lost as a Path).
    named = runner.invoke(app, ["init", "tiny-cpu", "-o", "newdir/"])
    assert isinstance(named.exception, XttsError) and named.exception.lines == ["--out newdir/ names a folder"]
    assert named.exception.hint == "name a file, such as newdir/tiny-cpu.yaml" and not Path("newdir").exists()
    # A link whose target's folder is missing had been a FileNotFoundError traceback.
    Path("dangling.yaml").symlink_to(tmp_path / "gone" / "target.yaml")
    dangling = runner.invoke(app, ["init", "tiny-cpu", "-o", "dangling.yaml"])
    assert isinstance(dangling.exception, XttsError), dangling.exception
    assert dangling.exception.lines == [
        f"--out dangling.yaml is a link to {tmp_path / 'gone' / 'target.yaml'}, whose folder does not exist"
    ]
    (tmp_path / "gone").mkdir()  # the link's folder made: the preset is written through the link
    assert runner.invoke(app, ["init", "tiny-cpu", "-o", "dangling.yaml"]).exit_code == 0
    assert Path("dangling.yaml").is_symlink() and (tmp_path / "gone" / "target.yaml").is_file()


def test_fix_refuses_to_edit_a_preset_inside_the_package(runner):
    from xtts_cli.devices.gpu_info import query_nvml

    before = (PRESETS_DIR / "rtx4090.yaml").read_text(encoding="utf-8")
    result = runner.invoke(app, ["validate", "--config", "rtx4090", "--fix"])
    assert isinstance(result.exception, XttsError) and "xtts init --preset rtx4090" in result.exception.hint
    assert (PRESETS_DIR / "rtx4090.yaml").read_text(encoding="utf-8") == before
    # Its preview shows the fix (without a GPU: mixed precision left to the machine) and says how to keep it.
    preview = runner.invoke(app, ["validate", "--config", "rtx4090", "--fix", "--dry-run"])
    note = "note: rtx4090 is a preset shipped with xtts: to keep these fixes, xtts init --preset rtx4090"
    assert (note in preview.stderr) == ("+  mixed_precision: auto" in preview.stdout)
    assert note in preview.stderr or query_nvml()[0]  # a machine with no GPU has the fix to show
    assert (PRESETS_DIR / "rtx4090.yaml").read_text(encoding="utf-8") == before


def test_old_flag_names_still_work_and_two_names_at_once_are_refused(runner):
    import json

    for flag in ("--data", "--train-data", "--data-path", "-d"):
        result = runner.invoke(app, ["validate", "-c", "tiny-cpu", flag, str(SAMPLE), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["dataset"]["dataset_path"] == str(SAMPLE)
    both = runner.invoke(app, ["validate", "--data", str(SAMPLE), "--data-path", "/elsewhere"])
    assert isinstance(both.exception, XttsError)
    assert both.exception.lines == [f"the dataset is given twice: --data {SAMPLE} and --data-path /elsewhere"]
