"""No module-level value of keras_laf is assigned from outside its module.

Knobs a user or a benchmark may change are public configuration
(`keras_laf.config`); a constant that a test or a script rewrites is a
private knob by another name. This reads every Python file of the
repository and fails on an assignment to an attribute of a keras_laf
module (`keras_laf.core.backend.jax.NAME = ...`, through any alias), on
`setattr` of one (`monkeypatch.setattr` included), and on the backend
dispatch `keras_laf.core.backend._module` used outside its module.
"""

import ast
import pathlib

import pytest

REPOSITORY = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = REPOSITORY / "keras_laf"
SKIPPED = {".venv", "build", "site", ".git", "node_modules"}
DISPATCH = REPOSITORY / "keras_laf" / "ops" / "backend" / "__init__.py"


def python_files():
    for path in sorted(REPOSITORY.rglob("*.py")):
        relative = path.relative_to(REPOSITORY)
        if not SKIPPED & set(relative.parts[:-1]) and not any(
            part.endswith(".egg-info") for part in relative.parts
        ):
            yield path


def is_module(dotted):
    """Whether `keras_laf.a.b` names a module or package of keras_laf."""
    parts = dotted.split(".")
    if parts[0] != "keras_laf":
        return False
    path = REPOSITORY.joinpath(*parts)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def module_aliases(tree):
    """Local names bound to keras_laf modules by the file's imports."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for name in node.names:
                if name.name.split(".")[0] == "keras_laf":
                    local = name.asname or name.name.split(".")[0]
                    aliases[local] = name.asname and name.name or "keras_laf"
        elif isinstance(node, ast.ImportFrom) and node.module:
            for name in node.names:
                dotted = f"{node.module}.{name.name}"
                if is_module(dotted):
                    aliases[name.asname or name.name] = dotted
    return aliases


def dotted_name(node, aliases):
    """`keras_laf.x.y` for an expression that names a keras_laf module
    (through an alias or an attribute chain), else None."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value, aliases)
        if base is not None and is_module(f"{base}.{node.attr}"):
            return f"{base}.{node.attr}"
    return None


def outside_assignments(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    aliases = module_aliases(tree)
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute):
                module = dotted_name(target.value, aliases)
                if module is not None:
                    found.append(
                        f"{module}.{target.attr} = ... (line {node.lineno})"
                    )
        if isinstance(node, ast.Call):
            function = node.func
            name = (
                function.attr
                if isinstance(function, ast.Attribute)
                else getattr(function, "id", None)
            )
            if name == "setattr" and node.args:
                first = node.args[0]
                module = dotted_name(first, aliases)
                if module is None and isinstance(first, ast.Constant):
                    text = str(first.value)
                    module = text if text.startswith("keras_laf.") else None
                if module is not None:
                    found.append(f"setattr({module}, ...) (line {node.lineno})")
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "_module"
            and path != DISPATCH
        ):
            found.append(f"._module (line {node.lineno})")
    return found


@pytest.mark.parametrize(
    "path",
    list(python_files()),
    ids=lambda path: str(path.relative_to(REPOSITORY)),
)
def test_no_module_value_assigned_from_outside(path):
    assert outside_assignments(path) == []


def test_the_check_catches_an_outside_assignment(tmp_path):
    # Each form the check looks for, in a file it would read.
    script = tmp_path / "rewrites.py"
    script.write_text(
        "import keras_laf\n"
        "from keras_laf.core.backend import jax as hooks\n"
        "import keras_laf.ops.power_sums as sums\n"
        "keras_laf.core.backend.jax.MOST_TERMS_WRITTEN_OUT = 1\n"
        "hooks.LONGEST_SET_SUMMED_BY_REDUCTION = 2\n"
        "sums.NAME += 1\n"
        "setattr(hooks, 'NAME', 3)\n"
        "monkeypatch.setattr('keras_laf.config.NAME', 4)\n"
        "keras_laf.core.backend._module()\n"
        "keras_laf.config.set_chunk_budget(padded=2)\n"
    )
    found = outside_assignments(script)
    assert len(found) == 6, found
    assert "keras_laf.core.backend.jax.MOST_TERMS_WRITTEN_OUT" in found[0]
