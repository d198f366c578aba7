"""The package's import direction (docs/architecture.md), checked on the source."""

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "scalewise"

# package -> packages it must never import
FORBIDDEN = {
    "logfile": {"analysis", "report", "campaign", "launch", "cli"},
    "model": {"analysis", "report", "campaign", "launch", "cli"},
    "analysis": {"report", "campaign", "launch", "cli"},
    "report": {"campaign", "launch", "cli"},
    "campaign": {"cli", "report"},
    "launch": {"cli", "report", "analysis", "campaign"},
}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return {n.split(".")[1] for n in names if n.startswith("scalewise.") and n.count(".") >= 1}


def test_import_direction():
    violations = []
    for package, forbidden in FORBIDDEN.items():
        for path in sorted((PKG / package).rglob("*.py")):
            bad = imported_packages(path) & forbidden
            if bad:
                violations.append(f"{path.relative_to(PKG)} imports {', '.join(sorted(bad))}")
    assert not violations, "\n".join(violations)


def test_the_check_sees_imports(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text("from scalewise.report.html import render\nimport scalewise.cli.main\n")
    assert imported_packages(sample) == {"report", "cli"}
