"""Python imports flow one way (docs/architecture.md):

    _native, errors, units -> jobs -> target -> run -> results -> analysis -> plans -> report
    -> fleet, lab, pts -> cli

A module may import its own package and any package to its left, never one
to its right ("upward"), lazily inside a function or not. The package root
``iolab/__init__.py`` is the public API and may import anything. Within
``run`` the observers (diskstats, wire) sit above the driver: no two
modules of one package import each other (a cycle).

The checker reads the source with ``ast`` (nothing is imported), and is
shown failing on a synthetic tree with an upward import and a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "iolab"

#: Left to right: a package may import those before it, not those after it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_native", "errors", "units"),
    ("jobs",),
    ("target",),
    ("run",),
    ("results",),
    ("analysis",),
    ("plans",),
    ("report",),
    # Whole experiments that drive runs and present them: many hosts (fleet),
    # the lab's device models (lab), SNIA PTS (pts).
    ("fleet", "lab", "pts"),
    ("cli",),
)


def _rank(part: str) -> int:
    for i, layer in enumerate(LAYERS):
        if part in layer:
            return i
    raise KeyError(f"iolab.{part} is in no layer of tests/test_import_direction.py: add it to LAYERS")


def _module_name(root: Path, path: Path) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(root: Path, path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every ``iolab`` import in ``path``."""
    here = _module_name(root, path).split(".")
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = here if is_pkg else here[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join([*pkg, base] if base else pkg)
            # ``from iolab import x`` names a module (or a name of the root).
            names = [f"{base}.{a.name}" for a in node.names] if base == root.name else [base]
        else:
            continue
        for name in names:
            if name == root.name or name.startswith(root.name + "."):
                yield node.lineno, name


def upward_imports(root: Path) -> list[str]:
    """Every import from a package to one after it in :data:`LAYERS`, as
    ``"path:line: a -> b"``."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        own = _module_name(root, path).split(".")
        if len(own) < 2:
            continue  # the package root: the public API
        for line, name in _imports(root, path):
            target = name.split(".")
            if len(target) < 2 or target[1] == own[1]:
                continue
            if _rank(target[1]) > _rank(own[1]):
                bad.append(f"{path.relative_to(root.parent)}:{line}: {own[1]} -> {target[1]} ({name})")
    return bad


def module_cycles(root: Path) -> list[str]:
    """Pairs of modules of one package that import each other (a package's
    ``__init__`` re-exporting its modules is its facade, not a cycle)."""
    edges: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        edges[_module_name(root, path)] = {n for _, n in _imports(root, path)}
    found = []
    for a, targets in sorted(edges.items()):
        for b in sorted(targets):
            facade = b.startswith(a + ".") or a.startswith(b + ".")
            if a < b and not facade and a in edges.get(b, set()) and a.split(".")[:2] == b.split(".")[:2]:
                found.append(f"{a} <-> {b}")
    return found


def test_iolab_imports_flow_one_way() -> None:
    assert upward_imports(PACKAGE) == []


def test_no_two_modules_import_each_other() -> None:
    assert module_cycles(PACKAGE) == []


def test_every_package_has_a_layer() -> None:
    for p in PACKAGE.iterdir():
        if (p.is_dir() and (p / "__init__.py").is_file()) or p.suffix in (".py", ".pyi", ".so"):
            name = p.name.split(".")[0]
            if name != "__init__":
                _rank(name)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "iolab"
    for rel, text in {"__init__.py": "", **files}.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    return root


def test_the_checker_fails_on_an_upward_import(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "run/__init__.py": "",
            "run/local.py": "from iolab.errors import E\nfrom iolab.units import fmt_ns\n",
            "run/bad.py": "def f():\n    from iolab.report.text import format_text\n",
            "results/__init__.py": "from iolab.run.local import x\n",
            "analysis/__init__.py": "from ..report import units\n",
            "report/__init__.py": "from iolab import analysis\n",
        },
    )
    assert upward_imports(root) == [
        "iolab/analysis/__init__.py:1: analysis -> report (iolab.report)",
        "iolab/run/bad.py:2: run -> report (iolab.report.text)",
    ]


def test_the_checker_fails_on_a_cycle_within_a_package(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "run/__init__.py": "",
            "run/api.py": "from iolab.run.wire import target_observer\n",
            "run/wire.py": "def f():\n    from iolab.run.api import prepare\n",
        },
    )
    assert module_cycles(root) == ["iolab.run.api <-> iolab.run.wire"]


def test_a_package_outside_the_layers_is_named(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"newpkg/__init__.py": "from iolab.run import x\n"})
    with pytest.raises(KeyError, match=r"iolab\.newpkg is in no layer"):
        upward_imports(root)
