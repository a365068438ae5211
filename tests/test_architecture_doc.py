"""docs/architecture.md stays true: what it names exists, and the import rule
it states is the one tests/test_import_direction.py enforces.

- every source file the page names (``crates/.../x.rs``, ``run/wire.py``,
  a path relative to its crate or package) exists;
- every function it names with its file (```find_knee` in
  python/iolab/analysis/knee.py``, ```LatSummary::of` (crates/...)``) is
  defined in that file;
- the Python layer chain in the page's code block is ``LAYERS``.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from tests.test_import_direction import LAYERS

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"

#: A source path as the page writes it: repository-relative or relative to a crate's src/ or to python/iolab.
_PATH = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.(?:rs|py))\b")
#: "`name` in path" or "`name` (path": a definition the page locates.
_NAMED = re.compile(r"`([A-Za-z_][\w:]*)` (?:in |\()((?:[\w.-]+/)*[\w.-]+\.(?:rs|py))")


@cache
def _sources() -> tuple[str, ...]:
    found = []
    for top in ("crates", "python", "tests", "bench"):
        for p in (ROOT / top).rglob("*"):
            if p.suffix in (".rs", ".py") and "target" not in p.parts:
                found.append(p.relative_to(ROOT).as_posix())
    return tuple(found)


def _resolve(path: str) -> list[Path]:
    """The files that ``path`` can name: itself, or any source ending with it."""
    return [ROOT / s for s in _sources() if s == path or s.endswith("/" + path)]


def _defines(text: str, name: str) -> bool:
    last = name.split("::")[-1]
    pattern = (
        rf"\b(?:fn|def|class|struct|enum|trait|const|static|type|impl)\s+{re.escape(last)}\b|^{re.escape(last)}\s*[:=]"
    )
    return re.search(pattern, text, re.MULTILINE) is not None


def test_every_source_file_the_page_names_exists() -> None:
    missing = sorted({p for p in _PATH.findall(DOC.read_text(encoding="utf-8")) if not _resolve(p)})
    assert missing == [], f"docs/architecture.md names files that do not exist: {missing}"


def test_every_function_the_page_locates_is_defined_there() -> None:
    wrong = []
    for name, path in _NAMED.findall(DOC.read_text(encoding="utf-8")):
        if not any(_defines(f.read_text(encoding="utf-8"), name) for f in _resolve(path)):
            wrong.append(f"{name} in {path}")
    assert wrong == [], f"docs/architecture.md locates definitions that are not there: {wrong}"


def test_the_page_states_the_import_rule_the_checker_enforces() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Python: imports flow one way", 1)[1]
    chain = section.split("```", 2)[1].strip()
    stated = tuple(tuple(p.strip() for p in layer.split(",")) for layer in chain.split("->"))
    assert stated == LAYERS, f"docs/architecture.md says {stated}; tests/test_import_direction.py checks {LAYERS}"


def test_the_checks_fail_on_a_wrong_page() -> None:
    text = "`no_such_fn` in crates/iolab-core/src/units.rs and `parse_size` in python/iolab/nowhere.py"
    named = _NAMED.findall(text)
    assert named == [("no_such_fn", "crates/iolab-core/src/units.rs"), ("parse_size", "python/iolab/nowhere.py")]
    units = _resolve("crates/iolab-core/src/units.rs")[0].read_text(encoding="utf-8")
    assert not _defines(units, "no_such_fn") and _defines(units, "parse_size")
    assert _resolve("python/iolab/nowhere.py") == []
    assert _resolve("summary/group.rs") == [ROOT / "crates/iolab-core/src/summary/group.rs"]
