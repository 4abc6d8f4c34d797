"""The house rules a newcomer relies on, held to the code (docs/development.md "Layout"): functions a
screen long, command bodies that are one library call plus rendering, TensorFlow imported behind a few
entry points, and a model kind's name compared only where the kinds live."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "xtts_cli"
KIND_NAMES = {"acoustic", "vocoder", "autoregressive", "duration"}


@cache
def _modules() -> tuple[tuple[str, tuple[ast.AST, ...]], ...]:
    """Each module of the package with every node of its tree, parsed and walked once for all the tests."""
    return tuple(
        (str(p.relative_to(PACKAGE.parent)), tuple(ast.walk(ast.parse(p.read_text(encoding="utf-8")))))
        for p in sorted(PACKAGE.rglob("*.py"))
    )


def _functions(nodes: tuple[ast.AST, ...]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _body_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the end: what the function does, not
    its signature (a command's options) or its help text."""
    body = function.body
    if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return (function.end_lineno or function.lineno) - body[0].lineno + 1


def test_no_function_is_over_80_lines_and_no_command_body_over_60() -> None:
    too_long, fat_commands = [], []
    for path, nodes in _modules():
        for function in _functions(nodes):
            lines = (function.end_lineno or function.lineno) - function.lineno + 1
            if lines > 80:
                too_long.append(f"{path}:{function.lineno} {function.name} ({lines} lines)")
            if path.startswith("xtts_cli/cli/") and _body_lines(function) > 60:
                fat_commands.append(f"{path}:{function.lineno} {function.name} ({_body_lines(function)} lines)")
    assert too_long == [] and fat_commands == [], (too_long, fat_commands)


def test_tensorflow_is_imported_inside_functions_in_at_most_30_places() -> None:
    # The function-level imports: every import statement but the module's own top-level ones.
    places = [
        f"{path}:{node.lineno}"
        for path, nodes in _modules()
        for node in nodes
        if isinstance(node, ast.Import)
        and node.col_offset > 0
        and any(alias.name == "tensorflow" for alias in node.names)
    ]
    assert len(places) <= 30, places


def test_a_kind_name_is_compared_as_a_string_only_inside_kinds() -> None:
    def names(node: ast.expr) -> set[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return {node.value}
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        return set()

    found = [
        f"{path}:{node.lineno}"
        for path, nodes in _modules()
        if not path.startswith("xtts_cli/kinds/")
        for node in nodes
        if isinstance(node, ast.Compare) and any(names(side) & KIND_NAMES for side in [node.left, *node.comparators])
    ]
    assert found == [], found
