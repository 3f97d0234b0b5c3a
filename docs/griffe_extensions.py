"""Griffe extensions for the API reference of keras-laf.

- `ModelsSubpackage`: `setup.py` installs the top-level `models/` folder as
  `keras_laf.models` (`package_dir`), so Griffe, which reads the source tree
  rather than importing it, does not find that subpackage inside
  `keras_laf/`. This extension loads `models/` and attaches it to
  `keras_laf` under its installed name.
- `KerasSections`: the Keras docstring sections that Google style does not
  know ("Call arguments:", "Input shape:", ...) are shown as admonitions;
  their `name: text` items become a list rather than one paragraph. The
  doctest examples (`>>>` lines, their `...` continuations and outputs)
  become highlighted `pycon` code blocks, as keras.io shows them: left as
  text, Markdown reads `>>>` as three nested blockquotes and a `# comment`
  inside an example as a heading. An unindented `Example:` line before
  them becomes an `Example` heading, listed in the page's table of
  contents. Only the rendered text changes; the doctests run on the
  docstrings as written.
- `RuntimeDefaults`: a default given by module constants
  (`preset=DEFAULT_PRESET`, `aggregations=(DEFAULT_AGGREGATION,)`) is
  shown as its value (`preset="pooling"`), what a caller gets, when the
  constants are literals.
- `PublicBases`: a private base class (`_ParametricAggregation`) is shown
  as its own public bases, as if the reader could not see it; the page
  shows no class it does not document.
"""

import ast
import pathlib
import re

import griffe

MODELS_DIR = pathlib.Path(__file__).resolve().parent.parent / "models"


class ModelsSubpackage(griffe.Extension):
    def on_package(self, *, pkg, loader, **kwargs):
        if pkg.name != "keras_laf" or "models" in pkg.members:
            return
        models = griffe.load(
            "models",
            search_paths=[str(MODELS_DIR.parent)],
            docstring_parser=loader.docstring_parser,
            docstring_options=loader.docstring_options,
            allow_inspection=False,
            extensions=loader.extensions,
            modules_collection=loader.modules_collection,
        )
        pkg.set_member("models", models)


# Sections whose items are `name: text`, as Keras writes them.
ITEM_SECTIONS = ("Call arguments:",)
ITEM = re.compile(r"^(\s+)(\*{0,2}\w+(?:, \w+)*): ")


def list_items(docstring):
    """Turns the `name: text` items of `ITEM_SECTIONS` into a list."""
    lines = docstring.splitlines()
    section = False
    for index, line in enumerate(lines):
        if not line.startswith(" "):
            section = line.strip() in ITEM_SECTIONS
            indent = None
            continue
        if not section:
            continue
        match = ITEM.match(line)
        if match and (indent is None or len(match.group(1)) == indent):
            indent = len(match.group(1))
            names = match.group(2)
            rest = line[match.end() :]
            lines[index] = f"{match.group(1)}- `{names}`: {rest}"
    return "\n".join(lines)


PROMPT = re.compile(r"^(\s*)>>>( |$)")
EXAMPLE_TITLE = re.compile(r"^(Examples?):\s*$")


def fence_examples(docstring):
    """Puts every doctest example of `docstring` in a `pycon` code block.

    An example starts at a `>>>` line and ends, as in `doctest`, at the
    first blank line; its `...` lines and outputs stay inside. An
    unindented `Example:` or `Examples:` line followed by an example
    becomes a Markdown heading.
    """
    lines = docstring.splitlines()
    output = []
    index = 0
    while index < len(lines):
        line = lines[index]
        title = EXAMPLE_TITLE.match(line)
        if title and _next_text(lines, index + 1, PROMPT):
            output.append(f"## {title.group(1)}")
            index += 1
            continue
        prompt = PROMPT.match(line)
        if not prompt:
            output.append(line)
            index += 1
            continue
        indent = prompt.group(1)
        if output and output[-1].strip():
            output.append("")
        output.append(f"{indent}```pycon")
        while index < len(lines) and lines[index].strip():
            output.append(lines[index])
            index += 1
        output.append(f"{indent}```")
    return "\n".join(output)


def _next_text(lines, start, pattern):
    """Whether the first non-blank line from `start` matches `pattern`."""
    for line in lines[start:]:
        if line.strip():
            return bool(pattern.match(line))
    return False


class KerasSections(griffe.Extension):
    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = fence_examples(
                list_items(obj.docstring.value)
            )


def _classes_and_functions(obj):
    """Every class and function defined in module or class `obj`."""
    for member in obj.members.values():
        if member.is_alias:
            continue
        if member.is_function:
            yield member
        elif member.is_class or member.is_module:
            if member.is_class:
                yield member
            yield from _classes_and_functions(member)


def _constant_value(expression, collection):
    """The source of the literal that name `expression` is bound to, or
    None where it is not a name of a literal constant."""
    if not isinstance(expression, (griffe.ExprName, griffe.ExprAttribute)):
        return None
    try:
        target = collection[expression.canonical_path]
    except KeyError:
        return None
    if target.is_alias or not target.is_attribute:
        return None
    if isinstance(target.value, (griffe.ExprName, griffe.ExprAttribute)):
        return _constant_value(target.value, collection)
    source = str(target.value)
    try:
        ast.literal_eval(source)
    except (SyntaxError, ValueError):
        return None
    return source


def _resolved_default(expression, collection):
    """The source of default `expression` with each name in it replaced by
    the literal it is bound to, or None where a name is not a literal."""
    if not isinstance(expression, griffe.Expr):
        return None
    parts = []
    for part in expression.iterate(flat=True):
        if isinstance(part, (griffe.ExprName, griffe.ExprAttribute)):
            part = _constant_value(part, collection)
            if part is None:
                return None
        parts.append(str(part))
    source = "".join(parts)
    try:
        ast.literal_eval(source)
    except (SyntaxError, ValueError):
        return None
    return source


class RuntimeDefaults(griffe.Extension):
    def on_package(self, *, pkg, **kwargs):
        if pkg.name != "keras_laf":
            return
        for obj in _classes_and_functions(pkg):
            if not obj.is_function:
                continue
            for parameter in obj.parameters:
                value = _resolved_default(
                    parameter.default, pkg.modules_collection
                )
                if value is not None:
                    parameter.default = value


def _public_bases(cls, collection):
    """The bases of `cls`, each private one replaced by its own bases."""
    bases = []
    for base in cls.bases:
        if not str(base).rpartition(".")[2].startswith("_"):
            bases.append(base)
            continue
        bases += _public_bases(collection[base.canonical_path], collection)
    return bases


class PublicBases(griffe.Extension):
    def on_package(self, *, pkg, **kwargs):
        if pkg.name != "keras_laf":
            return
        for obj in _classes_and_functions(pkg):
            if not obj.is_class:
                continue
            bases = _public_bases(obj, pkg.modules_collection)
            if bases == obj.bases:
                continue
            # What the class inherited (the private base's `__init__`,
            # whose arguments the page shows) stays, as inherited members.
            inherited = obj.inherited_members
            obj.bases = bases
            for name, member in inherited.items():
                obj.set_member(name, member)
