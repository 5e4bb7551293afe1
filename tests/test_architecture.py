"""The import contract (issue 29), read from every module's source: dependencies flow one way,
apps → dataset → core, and no module imports another's private names.

The layers, top to bottom; a module may import its own package and the layers below it, and
within a layer only the pairs named in ``WITHIN``:

- wiring: ``hctqa`` (settings, URLs, the Celery app, health, the site's views);
- apps: annotation, leaderboard, releases, ingest, tracks, discussion (and the apps to come);
- the base they build on: ``dataset`` (tables, questions, collections) and ``endpoints``;
- the shared apps below it: ``accounts`` (every app tells people things through it) and
  ``pagecache``;
- ``plumbing``, which imports no app;
- ``hctqa.core``, which imports no other part of the project (and never Django:
  ``tests/core/test_core_is_pure.py``).

The one name of the wiring that lower layers may import is the Celery app
(``hctqa.celery``), which every tasks module attaches its tasks to.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import REPO

LAYERS: list[tuple[str, frozenset[str]]] = [
    ("wiring", frozenset({"hctqa"})),
    (
        "apps",
        frozenset({"annotation", "leaderboard", "releases", "ingest", "tracks", "discussion"}),
    ),
    ("base", frozenset({"dataset", "endpoints"})),
    ("shared apps", frozenset({"accounts", "pagecache"})),
    ("plumbing", frozenset({"plumbing"})),
    ("core", frozenset({"hctqa.core"})),
]
# Imports between packages of one layer: (importer, imported), each a decision.
WITHIN = {
    # A submission records the release whose questions it was scored on.
    ("leaderboard", "releases"),
    # load_demo loads the demo's model-generated questions, waiting for verification.
    ("leaderboard", "annotation"),
    # A track's submissions, runs, baselines and boards are the leaderboard's, on its items.
    ("leaderboard", "tracks"),
    # A release carries each track's public items and its train and validation gold.
    ("releases", "tracks"),
    # The extraction track's items include the tables reviewers accepted from documents.
    ("tracks", "ingest"),
}
ANYWHERE = ("hctqa.celery",)  # below the core: tasks attach to the Celery app
# Not the platform's modules: the benchmark scripts, migrations (frozen history), and every hidden
# folder (virtualenvs, .git), pruned by _python_files.
SKIPPED_DIRS = {"benchmarks", "migrations", "node_modules", "var"}

PACKAGES = sorted((p for _, layer in LAYERS for p in layer), key=len, reverse=True)
LEVEL = {p: i for i, (_, layer) in enumerate(LAYERS) for p in layer}


def package_of(module: str) -> str | None:
    """The project package a module belongs to (the longest that names it)."""
    for package in PACKAGES:
        if module == package or module.startswith(package + "."):
            return package
    return None


def _python_files(root: Path) -> Iterator[Path]:
    """The project's Python files. Hidden folders are pruned, not filtered afterwards: on a
    fresh machine ``.venv-vllm`` is a real folder holding torch (whose files need Python 3.12
    syntax), not the symlink a worktree has."""
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [d for d in subfolders if not d.startswith(".") and d not in SKIPPED_DIRS]
        yield from (Path(folder) / f for f in files if f.endswith(".py"))


def modules(*, with_tests: bool = False) -> Iterator[tuple[str, Path, ast.Module]]:
    """Each module's dotted name (a package's ``__init__`` as ``pkg.__init__``), path and
    syntax tree."""
    for path in sorted(_python_files(REPO)):
        relative = path.relative_to(REPO)
        if relative.parts[0] in ("tests", "scripts") and not with_tests:
            continue
        name = ".".join(relative.with_suffix("").parts)
        yield name, relative, ast.parse(path.read_text(), str(relative))


def imported(tree: ast.Module, module: str) -> Iterator[tuple[int, str]]:
    """Every module an import names, with its line; ``from x import y`` names x and x.y."""
    package = module.rpartition(".")[0]  # a package's __init__ is in that package
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def test_dependencies_flow_down_the_layers() -> None:
    wrong = []
    for module, path, tree in modules():
        source = package_of(module)
        if source is None:
            continue
        for line, name in imported(tree, module):
            target = package_of(name)
            if target is None or target == source or name.startswith(ANYWHERE):
                continue
            if source == "hctqa.core" and LEVEL[target] < LEVEL["hctqa.core"]:
                wrong.append(f"{path}:{line}: the core imports {name}")
            elif LEVEL[target] < LEVEL[source]:
                wrong.append(f"{path}:{line}: {source} imports {name}, a layer above it")
            elif LEVEL[target] == LEVEL[source] and (source, target) not in WITHIN:
                wrong.append(f"{path}:{line}: {source} imports {name} (same layer, not in WITHIN)")
    assert wrong == []


def test_every_package_of_the_project_has_its_layer() -> None:
    tops = {p.name for p in REPO.iterdir() if (p / "__init__.py").is_file()} - {"tests"}
    assert tops <= set(LEVEL), f"put {sorted(tops - set(LEVEL))} in a layer of LAYERS"


def test_no_module_imports_another_modules_private_names() -> None:
    """``from x import _name`` (or a module named ``_x``) of the project: a name used across
    modules is public, or it lives where it is used. Tests count too."""
    wrong = []
    for _module, path, tree in modules(with_tests=True):
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom | ast.Import) or getattr(node, "level", 0):
                continue
            names = (
                [f"{node.module}.{a.name}" for a in node.names]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
            )
            for name in names:
                if not (package_of(name) or name.startswith("tests.")):
                    continue
                private = [p for p in name.split(".") if p.startswith("_") and p[:2] != "__"]
                if private:
                    wrong.append(f"{path}:{node.lineno}: {name}")
    assert wrong == []


def test_the_contract_catches_what_it_is_for() -> None:
    """The checks above find what they look for: an app imported by the dataset, a private
    name, a relative import reaching up."""
    tree = ast.parse("from annotation.models import Flag\nfrom .tables import _order\n")
    found = list(imported(tree, "dataset.selectors.prompts"))
    assert (1, "annotation.models.Flag") in found
    assert (2, "dataset.selectors.tables._order") in found
    assert (2, "dataset.selectors.tables") in list(imported(tree, "dataset.selectors.__init__"))
    assert LEVEL[package_of("annotation.models")] < LEVEL[package_of("dataset.models")]
    assert package_of("hctqa.core.tables") == "hctqa.core" and package_of("hctqa.urls") == "hctqa"
