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
"""

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
