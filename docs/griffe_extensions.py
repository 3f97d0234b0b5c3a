"""Griffe extensions for the API reference of keras-laf.

- `ModelsSubpackage`: `setup.py` installs the top-level `models/` folder as
  `keras_laf.models` (`package_dir`), so Griffe, which reads the source tree
  rather than importing it, does not find that subpackage inside
  `keras_laf/`. This extension loads `models/` and attaches it to
  `keras_laf` under its installed name.
- `KerasSections`: the Keras docstring sections that Google style does not
  know ("Call arguments:", "Input shape:", ...) are shown as admonitions;
  their `name: text` items become a list rather than one paragraph.
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


class KerasSections(griffe.Extension):
    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = list_items(obj.docstring.value)
