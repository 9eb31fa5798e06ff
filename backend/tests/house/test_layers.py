"""The house rules a newcomer relies on: layers as import-linter contracts (and that they bite), no private
name imported across modules, no virtualenv or big file tracked."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import BACKEND

PACKAGE = BACKEND / "iodiag"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(cwd / "pyproject.toml"), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"},
        check=False,
    )


def test_the_layer_contracts_hold() -> None:
    r = _lint(BACKEND)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "broken" in r.stdout and " 0 broken" in r.stdout


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(PACKAGE, root / "iodiag", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(BACKEND / "pyproject.toml", root / "pyproject.toml")
    return root


def test_a_back_arrow_breaks_the_layers(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    # The analysis reaching up into the service: what the contracts exist to stop.
    (root / "iodiag" / "analysis" / "shortcut.py").write_text("from iodiag.services import intake  # noqa\n")
    r = _lint(root)
    assert r.returncode == 1, r.stdout
    assert "iodiag.analysis.shortcut -> iodiag.services.intake" in r.stdout


def test_a_cycle_breaks_the_acyclic_contract(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    # render/text.py already imports render/wording.py; the reverse makes a cycle inside one layer.
    wording = root / "iodiag" / "render" / "wording.py"
    wording.write_text(wording.read_text() + "\n\ndef _cycle() -> None:\n    import iodiag.render.text  # noqa\n")
    r = _lint(root)
    assert r.returncode == 1 and "No import cycles" in r.stdout and "BROKEN" in r.stdout


def test_no_private_name_is_imported_across_modules() -> None:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        here = ".".join(path.relative_to(BACKEND).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("iodiag"):
                parts = node.module.split(".")
                first_private = next(
                    (i for i, p in enumerate(parts) if p.startswith("_") and not p.startswith("__")), None
                )
                # A private module belongs to its package: only that package's modules may import it.
                private_module = first_private is not None and not here.startswith(
                    ".".join(parts[:first_private]) + "."
                )
                names = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                if (private_module or names) and node.module != here:
                    bad.append(f"{here}: from {node.module} import {', '.join(names) or '...'}")
    assert not bad, bad


def test_no_module_reaches_our_own_code_through_importlib() -> None:
    bad = [
        str(p.relative_to(BACKEND))
        for p in PACKAGE.rglob("*.py")
        if 'import_module("iodiag' in p.read_text(encoding="utf-8")
        or 'import_module(f"iodiag' in p.read_text(encoding="utf-8")
    ]
    assert not bad, bad


def test_a_view_reaching_into_a_check_breaks_the_floors(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    # Views are what checks judge; a view that asks a check what it decided turns the floors upside down.
    (root / "iodiag" / "analysis" / "views" / "shortcut.py").write_text(
        "from iodiag.analysis.checks import posix  # noqa\n"
    )
    r = _lint(root)
    assert r.returncode == 1, r.stdout
    assert (
        "Analysis floors" in r.stdout and "iodiag.analysis.views.shortcut -> iodiag.analysis.checks.posix" in r.stdout
    )


def test_a_check_importing_another_check_breaks_independence(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    stdio = root / "iodiag" / "analysis" / "checks" / "stdio.py"
    stdio.write_text(stdio.read_text() + "\n\ndef _peek() -> None:\n    import iodiag.analysis.checks.posix  # noqa\n")
    r = _lint(root)
    assert r.returncode == 1 and "A check module never imports another check module BROKEN" in r.stdout
