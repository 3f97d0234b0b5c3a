"""A Griffe extension that finds `keras_laf.models` for the API reference.

`setup.py` installs the top-level `models/` folder as `keras_laf.models`
(`package_dir`), so Griffe, which reads the source tree rather than importing
it, does not find that subpackage inside `keras_laf/`. This extension loads
`models/` and attaches it to `keras_laf` under its installed name.
"""

import pathlib

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
            modules_collection=loader.modules_collection,
        )
        pkg.set_member("models", models)
