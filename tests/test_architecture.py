"""The layering rules: Qt lives in ``kvswitch.ui`` only, no two modules import each other (even from
inside a function), and the app has one way in (``kvswitch.cli``).

The layer contracts themselves (ui → commands → verify → logs | targets | platform | servers → core) are
checked by ``lint-imports`` (``[tool.importlinter]`` in pyproject.toml); the circle test below also sees
the imports hidden inside functions, which is where circles used to hide.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "app" / "kvswitch"
QT_PACKAGES = {"PySide6", "shiboken6", "PyQt6", "PyQt5", "PySide2"}


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_qt_outside_ui() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "ui" in path.relative_to(PACKAGE).parts[:1]:
            continue
        qt = {name for name in _imported_modules(path) if name.split(".")[0] in QT_PACKAGES}
        if qt:
            offenders.append(f"{path.relative_to(PACKAGE)}: {sorted(qt)}")
    assert offenders == []


def test_cli_help_does_not_load_qt() -> None:
    """The headless engine must work where Qt cannot even be imported (servers, CI without X)."""
    code = (
        "import sys; from kvswitch.cli import build_parser; build_parser().format_help();"
        "print(sorted(m for m in sys.modules if m.startswith('PySide6')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- import circles -------------------------------------------------------------------------------------


def _module_files(package: Path) -> dict[str, Path]:
    """Dotted name → source file, for every module of the package (a package is its ``__init__``)."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _run_time_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run, at any depth (functions included), except the
    ``if TYPE_CHECKING:`` ones, which only the type checker follows."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _run_time_imports(child)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _run_time_imports(node)


def _bound_names(path: Path) -> set[str]:
    """Names a package's ``__init__`` defines or imports at its top level."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the package's modules it imports at run time, wherever the import statement sits."""
    modules = _module_files(package)
    root = package.name

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        deps: set[str] = set()
        for node in _run_time_imports(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                deps.update(filter(None, (owner(a.name) for a in node.names if a.name.split(".")[0] == root)))
                continue
            base = node.module or ""  # relative imports are banned (ruff TID252), so all are absolute
            if node.level or base.split(".")[0] != root:
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in modules:
                    deps.add(full)  # a submodule
                elif base in modules and modules[base].name == "__init__.py" \
                        and alias.name not in _bound_names(modules[base]):
                    continue  # a submodule with no Python source (a compiled extension)
                elif (found := owner(base)) is not None:
                    deps.add(found)
        deps.discard(module)
        graph[module] = deps
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph.get(node, ())):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(circles)


def test_circle_finder_sees_imports_inside_functions(tmp_path: Path) -> None:
    """The finder itself: a circle closed by an import inside a function is one, a TYPE_CHECKING
    import is not, and importing a compiled submodule from its package is not a circle with it."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pkg.a import thing\n")
    (pkg / "a.py").write_text("thing = 1\ndef later():\n    from pkg import b\n    from pkg import _native\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nimport pkg.a\nif TYPE_CHECKING:\n"
                              "    from pkg import c\n")
    (pkg / "c.py").write_text("from pkg.b import x\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.a"}
    assert import_circles(graph) == [["pkg.a", "pkg.b"]]


def test_no_import_circles() -> None:
    """Two modules that import each other (even lazily, inside a function) cannot be understood, tested
    or moved apart one at a time; a shared piece belongs in a third module both import."""
    assert import_circles(import_graph()) == []


def test_ui_never_imports_the_cli() -> None:
    """``kvswitch.cli`` is the one composition root: it starts the window, never the other way round."""
    graph = import_graph()
    offenders = sorted(m for m, deps in graph.items()
                       if m.startswith("kvswitch.ui") and "kvswitch.cli" in deps)
    assert offenders == []


def test_gui_entry_point_reports_errors_in_one_line(fake_home: Path) -> None:
    """``kvswitch-gui use nosuch`` runs through the CLI's error handling: one line, no traceback."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    entry = pyproject["project"]["gui-scripts"]["kvswitch-gui"]
    module, func = entry.split(":")
    assert module == "kvswitch.cli"
    code = f"import sys; from {module} import {func} as entry; sys.exit(entry())"
    env = {**os.environ, "HOME": str(fake_home), "KVSWITCH_CONFIG_DIR": str(fake_home / "cfg")}
    env.pop("KVSWITCH_DEBUG", None)
    run = subprocess.run([sys.executable, "-c", code, "use", "nosuch"], capture_output=True, text=True,
                         env=env, timeout=60)
    assert run.returncode != 0
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("kvswitch: ")
    assert "nosuch" in lines[0]


def test_log_reader_process_loads_no_qt(tmp_path: Path) -> None:
    """The reader process the log panel starts (``python -m kvswitch.logs.follow``) follows a real file,
    sends its first batch, and never imports Qt: a flood costs it only the log engine."""
    import pickle  # noqa: PLC0415
    import struct  # noqa: PLC0415

    written = ["srv  load_model: loading model", "slot launch_slot_: id  0 | task 1 | processing task"]
    log_file = tmp_path / "server.log"
    log_file.write_text("".join(line + "\n" for line in written), encoding="utf-8")
    source = json.dumps({"kind": "file", "path": str(log_file)})
    code = ("import atexit, runpy, sys; atexit.register(lambda: sys.stderr.write('QT=%r\\n' % sorted("
            "m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6'))));"
            f"sys.argv = ['follow', {source!r}, 'llama.cpp', '10', '100'];"
            "runpy.run_module('kvswitch.logs.follow', run_name='__main__', alter_sys=True)")
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
    try:
        assert child.stdout is not None
        seen: list[str] = []
        deadline = time.monotonic() + 30
        while len(seen) < 2 and time.monotonic() < deadline:
            (size,) = struct.unpack(">I", child.stdout.read(4))
            frame = pickle.loads(child.stdout.read(size))
            assert "error" not in frame, frame
            seen.extend(line.text for line in frame.get("lines", []))
        assert seen == written
        _, stderr = child.communicate(input=b"", timeout=30)  # stdin closes: the reader exits
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, stderr
    assert "QT=[]" in stderr.decode(), stderr


def test_log_scan_loads_only_the_log_engine(tmp_path: Path) -> None:
    """``kvswitch log scan`` in a script loop must not pay for the switching engine, pydantic or httpx:
    the dispatcher loads its one command module, which needs the log engine and nothing else."""
    log_file = tmp_path / "server.log"
    log_file.write_text("srv  load_model: loading model\n", encoding="utf-8")
    code = ("import json, sys; from kvswitch.cli import main;"
            f"code = main(['log', 'scan', {str(log_file)!r}, '--jsonl']);"
            "print(json.dumps([code, sorted(sys.modules)]), file=sys.stderr)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    status, modules = json.loads(run.stderr.strip().splitlines()[-1])
    assert status == 0
    assert '"summary"' in run.stdout
    ours = {m for m in modules if m.startswith("kvswitch")}
    assert {m for m in ours if not m.startswith("kvswitch.logs")} == {
        "kvswitch", "kvswitch.cli", "kvswitch.commands", "kvswitch.commands.log", "kvswitch.core",
        "kvswitch.core.errors", "kvswitch.core.verdicts",  # verdicts: the thresholds logs and verify share
        "kvswitch.core.strictparse",  # the one JSON entry (JSON log lines); the standard library only
        "kvswitch.core.text"}  # the one terminal sanitiser (log text reaches a terminal); re only
    assert not {"pydantic", "httpx", "platformdirs", "PySide6"} & set(modules)
