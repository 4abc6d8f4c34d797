"""The line-preserving YAML editor under `validate --fix`."""

from __future__ import annotations

import os

import pytest
import yaml

from xtts_cli.config.editing import EditError, apply_changes, write_atomically
from xtts_cli.findings import ConfigChange, yaml_scalar


def set_(key, value):
    return ConfigChange(key=key, action="set", value=value)


@pytest.mark.parametrize("value", [True, False, 0, 16, 0.0001, 1e-12, 2.5e20, "auto", "a b", "true", "1e-4", None])
def test_scalars_read_back_as_the_same_value(value) -> None:
    assert yaml.safe_load(f"k: {yaml_scalar(value)}")["k"] == value


def test_set_existing_keeps_inline_comment_and_quotes_elsewhere() -> None:
    text = 'data:\n  mode: "precompute"\n  num_workers: 1   # note\n'
    out = apply_changes(text, [set_("data.num_workers", "auto")], {})
    assert out == 'data:\n  mode: "precompute"\n  num_workers: auto   # note\n'


def test_insert_into_section_after_its_last_key_with_its_indent() -> None:
    text = "data:\n    a: 1\n    b: 2\n\n# models\nmodel:\n    model_size: tiny\n"
    out = apply_changes(text, [set_("data.bucket_by_length", True)], {})
    assert out == "data:\n    a: 1\n    b: 2\n    bucket_by_length: true\n\n# models\nmodel:\n    model_size: tiny\n"


@pytest.mark.parametrize("style", ["|", ">-"])
def test_a_section_ending_in_a_block_text_takes_a_key_after_it_and_loses_only_that_key(style) -> None:
    # A `|` or `>` text ends at the start of the next line, as a list does: the key went into the
    # next section (refused with no reason), and removing the text took the next section's line.
    text = f"data:\n  batch_size: 4\n  language: {style}\n    en\nmodel:\n  model_size: tiny\n"
    out = apply_changes(text, [set_("data.num_workers", 2)], {})
    assert out == f"data:\n  batch_size: 4\n  language: {style}\n    en\n  num_workers: 2\nmodel:\n  model_size: tiny\n"
    removed = apply_changes(text, [ConfigChange(key="data.language", action="remove")], {})
    assert removed == "data:\n  batch_size: 4\nmodel:\n  model_size: tiny\n"


def test_insert_new_section_and_into_empty_section() -> None:
    assert (
        apply_changes("data:\n  a: 1\n", [set_("training.epochs", 3)], {}) == "data:\n  a: 1\ntraining:\n  epochs: 3\n"
    )
    assert apply_changes("training:\n", [set_("training.epochs", 3)], {}) == "training:\n  epochs: 3\n"
    assert apply_changes("", [set_("training.epochs", 3)], {}) == "training:\n  epochs: 3\n"
    assert (
        apply_changes("# only a comment\n", [set_("training.epochs", 3)], {})
        == "# only a comment\ntraining:\n  epochs: 3\n"
    )


def test_remove_deletes_only_that_line() -> None:
    text = "data:\n  a: 1\n  pin_memory: true  # torch\n  b: 2\n"
    assert apply_changes(text, [ConfigChange(key="data.pin_memory", action="remove")], {}) == "data:\n  a: 1\n  b: 2\n"


def test_alias_is_edited_where_written() -> None:
    text = "data:\n  enable_xla: false\n"
    out = apply_changes(
        text, [set_("training.enable_xla_compilation", True)], {"training.enable_xla_compilation": "data.enable_xla"}
    )
    assert out == "data:\n  enable_xla: true\n"


def test_crlf_files_stay_crlf() -> None:
    text = "data:\r\n  num_workers: 1\r\n"
    out = apply_changes(text, [set_("data.num_workers", "auto"), set_("data.bucket_by_length", True)], {})
    assert out == "data:\r\n  num_workers: auto\r\n  bucket_by_length: true\r\n"


def test_first_change_for_a_key_wins() -> None:
    out = apply_changes(
        "data:\n  num_workers: '1'\n", [set_("data.num_workers", "auto"), set_("data.num_workers", 1)], {}
    )
    assert out == "data:\n  num_workers: auto\n"


def test_flow_style_is_refused_not_mangled() -> None:
    with pytest.raises(EditError):
        apply_changes("data: {num_workers: 1}\n", [set_("data.num_workers", "auto")], {})


def test_a_value_shared_through_a_yaml_anchor_is_refused_not_torn_from_its_alias() -> None:
    text = "data:\n  num_workers: &n 1\n  prefetch_buffer_size: *n\n"
    for key in ("data.num_workers", "data.prefetch_buffer_size"):  # editing either would drop the anchor
        with pytest.raises(EditError) as info:
            apply_changes(text, [set_(key, "auto")], {})
        assert info.value.lines == [f"{key} is written through a YAML anchor (&n) other keys share; set it by hand"]


def test_atomic_write_keeps_backup_and_mode(tmp_path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("old\n")
    os.chmod(path, 0o640)
    backup = write_atomically(path, "new\n")
    assert path.read_text() == "new\n" and backup.read_text() == "old\n"
    assert oct(path.stat().st_mode & 0o777) == "0o640"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
