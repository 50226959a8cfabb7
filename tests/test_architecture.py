"""Dependencies point one way: each layer imports only the layers inside it (every import counts, even lazy ones)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "src" / "perfcast"

# The layers, from the inside out. A part may import itself and what its entry lists; `cli` may import anything.
BASE = {"errors", "units", "safe_yaml", "output_files"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "units": {"errors"},
    "safe_yaml": {"errors"},
    "output_files": {"errors"},
    "models": set(),  # pure: numbers in, dataclasses out
    "devices": {"models"} | BASE,
    "species": {"models"} | BASE,
    "kernels": BASE,
    "tune": {"kernels", "models"} | BASE,
    "plots": {"models", "tune"} | BASE,
    "profiles": {"models", "kernels"} | BASE,  # kernels: its native build (the Oclgrind plugin)
    # tune: its Ray glue (tune/cluster.py), which a campaign on several workers starts
    "campaign": {"bench", "devices", "species", "models", "kernels", "profiles", "plots", "tune"} | BASE,
    "bench": {"devices", "species", "models", "kernels", "plots"} | BASE,
    # bench and kernels: the validations that time perfcast's own primitives on this machine
    "validation": {"bench", "devices", "species", "models", "kernels", "tune", "plots"} | BASE,
    # choose: one workload (profile, archive, application, corpus space) predicted and ranked over devices
    "choose": {"devices", "species", "models", "profiles", "campaign", "validation"} | BASE,
}


def _part(module: str) -> str:
    """Return the top-level part of perfcast a dotted module name belongs to ('perfcast.devices.x' -> 'devices')."""
    pieces = module.split(".")
    # perfcast.__version__ and its kind are attributes of the package itself, not a part.
    return pieces[1] if len(pieces) > 1 and not pieces[1].startswith("__") else ""


def _imports(path: Path) -> list[tuple[int, str]]:
    """Return (line, module) for every perfcast import in a source file, at any depth, TYPE_CHECKING included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "perfcast":
                found += [(node.lineno, f"perfcast.{alias.name}") for alias in node.names]
            elif node.module.startswith("perfcast."):
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("perfcast.")]
    return found


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] not in ("cli",))


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(PACKAGE)) for p in SOURCES])
def test_imports_point_inward(path: Path) -> None:
    relative = path.relative_to(PACKAGE)
    own = relative.parts[0].removesuffix(".py")
    if own in ("__init__", "__main__"):
        return
    assert own in ALLOWED, f"{relative}: a new part of perfcast; give it a place in ALLOWED (and docs/architecture.md)"
    wrong = [
        f"line {line}: {module}"
        for line, module in _imports(path)
        if _part(module) not in ALLOWED[own] | {own, ""}
    ]
    assert not wrong, f"{relative} ({own}) may import only {sorted(ALLOWED[own])}: " + "; ".join(wrong)


def test_the_test_sees_lazy_imports(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from perfcast.bench.detect import detect_cpu\n")
    assert _imports(sample) == [(2, "perfcast.bench.detect")]


def test_the_command_line_starts_without_the_heavy_libraries() -> None:
    """`perfcast --help` must stay fast: numpy, pydantic, PyYAML and matplotlib load only when a command runs."""
    import subprocess
    import sys

    code = ("import sys, perfcast.cli; "
            "print(sorted(m for m in ('numpy', 'pydantic', 'yaml', 'matplotlib', 'scipy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"


# Inside species/classify the steps of the analysis import one way: each module only the ones listed before it.
CLASSIFY_STEPS = ["result", "costs", "declarations", "nest", "dimensions", "access", "work_units", "nest_species",
                  "__init__"]


@pytest.mark.parametrize("step", CLASSIFY_STEPS)
def test_the_classifier_s_steps_import_one_way(step: str) -> None:
    path = PACKAGE / "species" / "classify" / f"{step}.py"
    earlier = set(CLASSIFY_STEPS[:CLASSIFY_STEPS.index(step)])
    prefix = "perfcast.species.classify."
    used = {module.removeprefix(prefix) for _, module in _imports(path) if module.startswith(prefix)}
    assert used <= earlier, f"species/classify/{step}.py imports {sorted(used - earlier)}, which come after it"
    assert sorted(p.stem for p in path.parent.glob("*.py")) == sorted(CLASSIFY_STEPS)
