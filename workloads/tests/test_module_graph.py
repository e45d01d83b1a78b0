"""The worker's modules import one way: no module of workloads/*.py imports, directly or through
others, a module that imports it (tests/module_graph.rs holds the same rule for src/)."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import WORKLOADS, child_env


def imports(path: Path, modules: set[str]) -> set[str]:
    """The modules of `modules` that the file imports: every `import X` and `from X import`
    anywhere in it, inside functions and `if` blocks included; itself excluded."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return (found & modules) - {path.stem}


def graph(folder: Path) -> dict[str, set[str]]:
    files = {p.stem: p for p in folder.glob("*.py")}
    return {name: imports(path, set(files)) for name, path in sorted(files.items())}


def cycle_through(edges: dict[str, set[str]], start: str) -> list[str] | None:
    """The shortest import path from `start` back to itself, or None (breadth first)."""
    parent, queue = {}, [start]
    for module in queue:
        for nxt in sorted(edges[module]):
            if nxt == start:
                path = [module]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if nxt not in parent:
                parent[nxt] = module
                queue.append(nxt)
    return None


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle for each module that imports itself through others."""
    return [c for start in edges if (c := cycle_through(edges, start))]


def test_no_module_of_workloads_imports_one_that_imports_it():
    edges = graph(WORKLOADS)
    assert {"harness", "harness_models", "harness_outcome", "openloop"} <= set(edges)
    found = [" -> ".join(c) for c in cycles(edges)]
    assert not found, "import cycles in workloads/: " + "; ".join(found)


def test_the_worker_modules_stack_in_one_order():
    edges = graph(WORKLOADS)
    assert edges["harness_outcome"] == set()
    assert edges["openloop"] == {"harness_outcome"}
    assert edges["harness_models"] == {"harness_outcome", "openloop"}
    assert edges["harness_interpreters"] == {"harness_models", "harness_outcome", "openloop"}
    assert edges["harness"] == {"harness_interpreters", "harness_models", "harness_outcome"}


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    (tmp_path / "a.py").write_text("import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from c import x\n")
    (tmp_path / "c.py").write_text("if True:\n    import a\nimport c\n")
    (tmp_path / "d.py").write_text("import a, json\n")
    edges = graph(tmp_path)
    assert edges == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c", "a"], ["b", "c", "a", "b"], ["c", "a", "b", "c"]]


def test_a_script_without_open_loop_never_loads_openloop():
    # openloop is imported where a schedule is used: its compile garbage would lower the memory
    # scenario's figures if every worker loaded it.
    code = textwrap.dedent(
        """
        import sys
        import harness, memory
        workload = memory.VARIANTS["threads"]({**memory.PARAMS, "units": 10}, {})
        workload.run()
        workload.close()
        assert "openloop" not in sys.modules, sorted(sys.modules)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=WORKLOADS,
        env={**child_env(), "PYTHONPATH": str(WORKLOADS)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
