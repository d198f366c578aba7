"""The package's shape (docs/architecture.md), checked on the source.

Every import counts, at module level or inside a function: the graph they
make must have no cycle, no module may import the package's public face
(``from scalewise import ...``), no layer may import a layer above it or
beside it, and nothing but the command line itself (bench included) imports
``scalewise.cli``.  The layers are read from the ``layers`` block of
docs/architecture.md, the one place they are written down.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = "scalewise"


def read_layers(markdown: str) -> list[list[list[str]]]:
    """The ``layers`` block: lines from the top layer down; on a line, sibling layers split by ``|``;
    each layer one or more module prefixes."""
    block = re.search(r"^```layers\n(.*?)^```", markdown, re.MULTILINE | re.DOTALL)
    assert block, "docs/architecture.md has no ```layers block"
    lines = [ln.split("#", 1)[0].strip() for ln in block.group(1).splitlines()]
    return [[group.split() for group in ln.split("|")] for ln in lines if ln]


def module_files(src: Path, package: str) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    out = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports_of(name: str, path: Path, modules: set[str]) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its file (functions included)."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import mod` imports the module; `from mod import name` the module itself.
            subs = {f"{base}.{a.name}" for a in node.names} & modules
            found |= subs or {base}
    return {m for m in found if m in modules}


def import_graph(src: Path, package: str) -> dict[str, set[str]]:
    files = module_files(src, package)
    return {name: imports_of(name, path, set(files)) for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def layer_of(module: str, layers: list[list[list[str]]], package: str) -> tuple[int, int] | None:
    """(line, group) of the layer holding ``module``: the longest prefix wins; the package itself only by name."""
    best, where = -1, None
    for i, line in enumerate(layers):
        for j, group in enumerate(line):
            for prefix in group:
                hit = module == prefix or (prefix != package and module.startswith(prefix + "."))
                if hit and len(prefix) > best:
                    best, where = len(prefix), (i, j)
    return where


def layer_violations(graph: dict[str, set[str]], layers: list[list[list[str]]], package: str) -> list[str]:
    out = []
    for module in sorted(graph):
        mine = layer_of(module, layers, package)
        if mine is None:
            out.append(f"{module} is in no layer of docs/architecture.md")
            continue
        for target in sorted(graph[module]):
            theirs = layer_of(target, layers, package)
            if theirs is None or theirs == mine:
                continue
            if theirs[0] < mine[0]:
                out.append(f"{module} imports {target}, a higher layer")
            elif theirs[0] == mine[0]:
                out.append(f"{module} imports {target}, a layer beside its own")
    return out


def package_self_imports(src: Path, package: str) -> list[str]:
    """Modules that import the package's public face (``from scalewise import x``, ``import scalewise``)."""
    out = []
    for name, path in module_files(src, package).items():
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.ImportFrom) and node.module == package and not node.level) or \
                    (isinstance(node, ast.Import) and any(a.name == package for a in node.names)):
                out.append(f"{name}:{node.lineno}")
    return out


# -- the real package -------------------------------------------------------------

def test_no_import_cycle():
    cycle = find_cycle(import_graph(ROOT / "src", PACKAGE))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_nothing_inside_imports_the_package_face():
    assert package_self_imports(ROOT / "src", PACKAGE) == []


def test_layers_import_only_downwards():
    layers = read_layers(DOC.read_text())
    assert layer_violations(import_graph(ROOT / "src", PACKAGE), layers, PACKAGE) == []


def test_every_layer_of_the_doc_exists():
    modules = set(module_files(ROOT / "src", PACKAGE))
    named = [p for line in read_layers(DOC.read_text()) for group in line for p in group]
    assert [p for p in named if p not in modules] == []


def cli_importers(src: Path, package: str, scripts: list[Path]) -> list[str]:
    """Modules outside ``<package>.cli``, and scripts (bench), that import the command line: it only parses,
    calls the package and prints, so nothing is built on it."""
    cli = f"{package}.cli"
    out = []
    files = [(name, path) for name, path in module_files(src, package).items()
             if name != cli and not name.startswith(cli + ".")]
    for name, path in files + [(str(s), s) for s in scripts]:
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(n == cli or n.startswith(cli + ".") for n in names):
                out.append(f"{name}:{node.lineno}")
    return out


def test_nothing_but_the_cli_imports_the_cli():
    scripts = sorted((ROOT / "bench").glob("*.py")) + sorted((ROOT / "scripts").rglob("*.py"))
    assert cli_importers(ROOT / "src", PACKAGE, scripts) == []


# -- the checker itself, on planted packages ----------------------------------------

PLANTED_LAYERS = """
```layers
pkg
pkg.top
pkg.left | pkg.right
pkg.base
```
"""


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        for folder in reversed(path.relative_to(tmp_path).parents[:-1]):
            (tmp_path / folder).mkdir(exist_ok=True)
            (tmp_path / folder / "__init__.py").touch()
        path.write_text(text)
    return tmp_path


def test_checker_sees_a_cycle_through_a_function_level_import(tmp_path):
    src = _plant(tmp_path, {"pkg/base/a.py": "from pkg.base import b\n",
                            "pkg/base/b.py": "def f():\n    from pkg.base.a import g\n"})
    assert find_cycle(import_graph(src, "pkg")) in (["pkg.base.a", "pkg.base.b", "pkg.base.a"],
                                                     ["pkg.base.b", "pkg.base.a", "pkg.base.b"])


def test_checker_passes_a_clean_package(tmp_path):
    src = _plant(tmp_path, {"pkg/base/a.py": "", "pkg/left/x.py": "import pkg.base.a\n",
                            "pkg/top/t.py": "from pkg.left import x\nfrom pkg.right.y import z\n",
                            "pkg/right/y.py": "from .. import base\nz = 1\n"})
    graph = import_graph(src, "pkg")
    assert graph["pkg.top.t"] == {"pkg.left.x", "pkg.right.y"} and graph["pkg.right.y"] == {"pkg.base"}
    assert find_cycle(graph) is None
    assert layer_violations(graph, read_layers(PLANTED_LAYERS), "pkg") == []


def test_checker_sees_upward_and_sideways_imports(tmp_path):
    src = _plant(tmp_path, {"pkg/base/a.py": "def f():\n    import pkg.top.t\n",
                            "pkg/left/x.py": "from pkg.right import y\n", "pkg/right/y.py": "",
                            "pkg/top/t.py": "", "pkg/stray.py": ""})
    found = layer_violations(import_graph(src, "pkg"), read_layers(PLANTED_LAYERS), "pkg")
    assert found == ["pkg.base.a imports pkg.top.t, a higher layer",
                     "pkg.left.x imports pkg.right.y, a layer beside its own",
                     "pkg.stray is in no layer of docs/architecture.md"]


def test_checker_sees_the_cli_imported_from_outside(tmp_path):
    src = _plant(tmp_path, {"pkg/cli/main.py": "", "pkg/cli/sub.py": "from pkg.cli import main\n",
                            "pkg/base/a.py": "def f():\n    from pkg.cli.main import x\n",
                            "bench.py": "import pkg.cli.sub\n"})
    assert cli_importers(src, "pkg", [src / "bench.py"]) == ["pkg.base.a:2", f"{src / 'bench.py'}:1"]


def test_checker_sees_the_package_face_imported(tmp_path):
    src = _plant(tmp_path, {"pkg/base/a.py": "x = 1\ndef f():\n    from pkg import top\n",
                            "pkg/top/t.py": "import pkg\n", "pkg/left/x.py": "import pkg.base.a\n"})
    assert package_self_imports(src, "pkg") == ["pkg.base.a:3", "pkg.top.t:1"]


def test_test_files_have_names_of_their_own():
    """The test folders are not packages, so pytest imports each test file by its base name: two
    files of one name in two folders make the second fail to collect ("import file mismatch")."""
    seen: dict[str, Path] = {}
    clashes = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path.name in seen:
            clashes.append(f"{seen[path.name].relative_to(ROOT)} and {path.relative_to(ROOT)}")
        seen.setdefault(path.name, path)
    assert not clashes, clashes
