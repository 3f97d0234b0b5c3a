"""keras_laf's modules import each other without cycles, and downwards.

Read from the source (`ast`), so imports inside functions count as much as
those at the top of a module: a function-level import that closes a cycle
still ties the two modules together. `from package import name` counts as
an import of `package.name` where that is a module, of `package`
otherwise; `keras_laf`'s subpackages imported on first use
(`_LAZY_SUBPACKAGES`) count as imports of `keras_laf/__init__.py`, and a
package that imports its folder's modules through
`pkgutil.iter_modules(__path__)` (`keras_laf.aggregations`) imports each.
"""

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# `keras_laf.models` is installed from the top-level `models/` folder.
SOURCES = {"keras_laf": ROOT / "keras_laf", "keras_laf.models": ROOT / "models"}

# From the bottom up, the folders of the package: a module imports modules
# of its own layer or below, never above. The first prefix that names a
# module gives its layer.
LAYERS = [
    # The core: the backend hooks (one dispatch), the checks of arguments
    # and tensors, which device computes, the chunk budgets, the set
    # layouts.
    ["keras_laf.core"],
    # LAF as a function of tensors; NumPy and tf.data input pipelines; the
    # set layers (attention blocks, per-element and equivariant layers).
    ["keras_laf.ops", "keras_laf.datasets", "keras_laf.layers"],
    # The aggregations, LAF among them, and the registry that names them.
    ["keras_laf.aggregations"],
    # The graph layers, which hold aggregations.
    ["keras_laf.graphs"],
    # What keras-laf 0.1.0 shipped and 0.2.0 replaced, deprecated.
    ["keras_laf.compat"],
    ["keras_laf.models"],
    # The public names.
    ["keras_laf"],
]


def module_files():
    modules = {}
    for package, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join([package, *parts])] = path
    return modules


MODULES = module_files()


def imported_modules(name, path):
    """The keras_laf modules that module `name` imports, anywhere in it."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()

    def add(module):
        # The module itself, or the package that holds the name.
        while module and module not in MODULES:
            module = module.rpartition(".")[0]
        if module and module != name:
            found.add(module)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name if is_package else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                add(submodule if submodule in MODULES else base)
        elif (
            is_package
            and isinstance(node, ast.Call)
            and ast.unparse(node.func) == "pkgutil.iter_modules"
            and [ast.unparse(arg) for arg in node.args] == ["__path__"]
        ):
            for module in MODULES:
                if module.rpartition(".")[0] == name:
                    add(module)
        elif (
            isinstance(node, ast.Assign)
            and name == "keras_laf"
            and any(
                getattr(target, "id", None) == "_LAZY_SUBPACKAGES"
                for target in node.targets
            )
        ):
            for element in node.value.elts:
                add(f"keras_laf.{element.value}")
    return found


IMPORTS = {name: imported_modules(name, path) for name, path in MODULES.items()}


def layer_of(module):
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                return index
    raise AssertionError(f"{module} is in no layer of LAYERS")


def import_cycles(graph):
    """The groups of modules of `graph` (`{module: imported modules}`)
    that import each other, directly or not: its strongly connected
    components of more than one module (Tarjan), each a sorted tuple."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(tuple(sorted(group)))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(groups)


def test_the_walk_finds_the_modules_and_their_imports():
    assert {
        "keras_laf",
        "keras_laf.core.config",
        "keras_laf.aggregations.laf.layer",
        "keras_laf.aggregations.registry",
        "keras_laf.core.backend.tensorflow",
        "keras_laf.ops.tensorflow_programs",
        "keras_laf.models.deep_sets",
    } <= set(MODULES)
    # A top-level import, a function-level one and a package's name.
    assert (
        "keras_laf.aggregations.base"
        in IMPORTS["keras_laf.aggregations.laf.layer"]
    )
    assert (
        "keras_laf.core.backend.tensorflow" in IMPORTS["keras_laf.core.backend"]
    )
    assert (
        "keras_laf.aggregations.registry"
        in IMPORTS["keras_laf.aggregations.multi"]
    )
    assert "keras_laf.core.backend" in IMPORTS["keras_laf.ops"]
    # The modules a package imports through `pkgutil.iter_modules`.
    assert {
        "keras_laf.aggregations.kolmogorov_mean",
        "keras_laf.aggregations.laf",
    } <= IMPORTS["keras_laf.aggregations"]


def test_the_backend_hooks_import_none_of_the_math():
    # The hooks sit below the power sums and the formula, which call them.
    hooks = [
        module
        for module in MODULES
        if module.startswith("keras_laf.core.backend")
    ]
    for module in hooks:
        assert IMPORTS[module] <= set(hooks), (module, IMPORTS[module])


def test_import_cycles_finds_a_function_level_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [("a", "b", "c")]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    cycles = import_cycles(IMPORTS)
    assert not cycles, "import cycles: " + "; ".join(
        " <-> ".join(cycle) for cycle in cycles
    )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_its_own_layer_or_below(module):
    upwards = sorted(
        imported
        for imported in IMPORTS[module]
        if layer_of(imported) > layer_of(module)
    )
    assert not upwards, (
        f"{module} (layer {layer_of(module)}) imports modules of higher "
        f"layers: {upwards}"
    )


def test_one_backend_dispatch():
    # Only `keras_laf.core.backend` asks which backend runs; everything
    # else asks it what the backend does (`is_traced`,
    # `needs_static_shapes`, ...).
    branching = re.compile(r"keras\.config\.backend\(\)\s*(==|!=|not in|in)")
    dispatch = SOURCES["keras_laf"] / "core" / "backend" / "__init__.py"
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in MODULES.values()
        if path != dispatch
        for number, line in enumerate(
            path.read_text(encoding="utf-8").splitlines(), 1
        )
        if branching.search(line)
    ]
    assert not found, found
