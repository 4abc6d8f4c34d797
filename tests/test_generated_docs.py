"""docs/config.md and configs/config.yaml are generated from the config model; stale copies fail.
Regenerate with: python -m xtts_cli.config.reference"""

from __future__ import annotations

from pathlib import Path

from xtts_cli.config import resolve_config
from xtts_cli.config.reference import DOC_PATH, YAML_PATH, render_markdown, render_yaml

REPO = Path(__file__).resolve().parents[1]


def test_config_reference_is_current() -> None:
    assert DOC_PATH.read_text(encoding="utf-8") == render_markdown(), "run: python -m xtts_cli.config.reference"


def test_documented_config_yaml_is_current_and_loads_to_the_defaults() -> None:
    assert YAML_PATH.read_text(encoding="utf-8") == render_yaml(), "run: python -m xtts_cli.config.reference"
    from xtts_cli.config.schema import XttsConfig

    assert resolve_config(YAML_PATH).config == XttsConfig()


def test_presets_load_and_open_with_their_command() -> None:
    for preset in sorted(YAML_PATH.parent.glob("*.yaml")):
        text = preset.read_text(encoding="utf-8")
        assert text.startswith("# xtts "), f"{preset.name} must open with the command that runs it"
        resolve_config(preset)


def test_the_pages_that_list_the_sections_and_presets_list_them_all() -> None:
    from xtts_cli.config.preset_files import preset_names
    from xtts_cli.config.schema import XttsConfig

    sections = ", ".join(f"`{name}`" for name in XttsConfig.model_fields)
    assert len(XttsConfig.model_fields) == 7  # "seven sections", as the pages say
    for page in ("README.md", "docs/validate.md"):
        text = " ".join((REPO / page).read_text(encoding="utf-8").split())
        assert "seven sections" in text and sections in text, page
        assert not [name for name in preset_names() if name != "config" and f"`{name}`" not in text], page


def test_command_reference_is_current() -> None:
    from xtts_cli.cli import reference

    assert reference.DOC_PATH.read_text(encoding="utf-8") == reference.render_markdown(), (
        "run: python -m xtts_cli.cli.reference"
    )


def test_the_docs_home_page_links_every_page_of_the_site() -> None:
    import yaml

    def pages(node) -> list[str]:
        if isinstance(node, str):
            return [node]
        items = node.values() if isinstance(node, dict) else node
        return [page for item in items for page in pages(item)]

    nav = pages(yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    home = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    assert sorted(set(nav) - {"index.md"}) == sorted(
        p.name for p in (REPO / "docs").glob("*.md") if p.name != "index.md"
    )
    missing = [page for page in nav if page != "index.md" and f"]({page}" not in home]
    assert not missing, f"docs/index.md links none of {missing}"


def test_json_report_reference_is_current() -> None:
    from xtts_cli.cli import json_reference

    assert json_reference.DOC_PATH.read_text(encoding="utf-8") == json_reference.render_markdown(), (
        "run: python -m xtts_cli.cli.json_reference"
    )
