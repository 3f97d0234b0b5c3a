"""MkDocs hooks that build the keras-laf site from the repository itself.

Nothing here is written to disk: the pages are generated in memory at each
build, so they cannot drift from the code.

- The API reference has one page per public name: everything in
  `keras_laf.__all__` and `keras_laf.models.__all__`, the classes of
  `keras_laf.constraints` and `keras_laf.initializers`, and the functions
  of `keras_laf.presets`, `keras_laf.aggregations` and
  `keras_laf.datasets`; and the modules `keras_laf.config` and
  `keras_laf.ops`, one page each. mkdocstrings
  renders each page from the docstrings, whose heading is the page's one
  title. Each section (the layers, `keras_laf.models`, the constraints,
  ...) opens with an overview page: what its module is for and a table of
  its names with their one-line summaries.
- `README.md` is the home page, beside `RESULTS.md` and `CHANGELOG.md`;
  the files they link to (figures, `LICENSE`, `CITATION.cff`) are copied.
- Each tutorial (`tutorials/*.py`, keras-io guides) becomes a page: the
  text cells as Markdown, the code between them as Python blocks, each
  figure it saves shown after the code that saves it (the copies kept in
  `tutorials/figures/`).
- The guides (`docs/guides/*.md`: numerics, backends) are pages of the
  docs folder as they are; README links to them are pointed at the pages.
- MathJax, which typesets the formulas in the browser, ships with the
  site: its files are copied from `node_modules/mathjax` (`npm ci` at the
  repository root installs the version `package-lock.json` pins) into
  `javascripts/mathjax/`, so that a page reads with no network.
"""

import ast
import importlib
import inspect
import pathlib
import re

import keras
from mkdocs.structure.files import File

ROOT = pathlib.Path(__file__).resolve().parent.parent
TUTORIALS = ROOT / "tutorials"
# Repository Markdown files shown as pages, by their path in the site.
MARKDOWN_PAGES = {
    "index.md": "README.md",
    "results.md": "RESULTS.md",
    "changelog.md": "CHANGELOG.md",
}
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")
MATHJAX = ROOT / "node_modules" / "mathjax" / "es5"
# MathJax's files the site needs: the TeX-to-HTML component, its fonts,
# and what it loads on demand (TeX extensions, the menu, accessibility).
MATHJAX_FILES = (
    "tex-mml-chtml.js",
    "output/chtml/fonts/woff-v2/*",
    "input/tex/extensions/**/*.js",
    "ui/*.js",
    "a11y/*.js",
)


# Public names kept only so that code and saved models using them still
# work; the reference documents what replaces them.
DEPRECATED_NAMES = ("MessagePassing",)


def object_page(path):
    """The page of one public object: its heading (`show_root_heading`) is
    the title. A constant computed from others (`NUM_ATOM_FEATURES =
    len(ATOM_FEATURES)`) shows its value rather than that expression."""
    module_name, _, name = path.rpartition(".")
    value = getattr(importlib.import_module(module_name), name, None)
    if value is None or callable(value) or inspect.ismodule(value):
        return f"::: {path}\n"
    return (
        f"::: {path}\n    options:\n      show_attribute_values: false\n\n"
        f"`{name} = {value!r}`\n"
    )


def api_pages():
    """Returns `{section: [(title, page path, object path), ...]}`."""
    import keras_laf
    import keras_laf.datasets
    import keras_laf.models

    sections = {
        "Layers": [],
        "Functions": [],
        "Constants": [],
        "Models": [],
        "Hypermodels": [],
        "Constraints": [],
        "Initializers": [],
        "Presets": [],
        "Callbacks": [],
        "Aggregations": [],
        "Datasets": [],
    }

    def add(section, name, obj, default_path):
        path = default_path
        if inspect.isclass(obj) or inspect.isfunction(obj):
            path = f"{obj.__module__}.{obj.__qualname__}"
        slug = section.lower()
        sections[section].append((name, f"api/{slug}/{name}.md", path))

    for name in keras_laf.__all__:
        obj = getattr(keras_laf, name)
        if inspect.ismodule(obj) or name in DEPRECATED_NAMES:
            continue
        if inspect.isclass(obj) and issubclass(obj, keras.layers.Layer):
            add("Layers", name, obj, f"keras_laf.{name}")
        elif inspect.isclass(obj) or inspect.isfunction(obj):
            add("Functions", name, obj, f"keras_laf.{name}")
        else:
            add("Constants", name, obj, f"keras_laf.{name}")
    for name in keras_laf.models.__all__:
        obj = getattr(keras_laf.models, name)
        section = "Hypermodels" if inspect.isclass(obj) else "Models"
        add(section, name, obj, f"keras_laf.models.{name}")
    modules = {
        "Constraints": keras_laf.constraints,
        "Initializers": keras_laf.initializers,
        "Presets": keras_laf.presets,
        "Callbacks": keras_laf.callbacks,
        "Aggregations": keras_laf.aggregations,
    }
    for section, module in modules.items():
        # A package (`keras_laf.aggregations`) documents the functions it
        # hands on; a module the classes and functions defined in it.
        if hasattr(module, "__path__"):
            names = [
                name
                for name in module.__all__
                if inspect.isfunction(getattr(module, name))
            ]
        else:
            names = [
                name
                for name, obj in vars(module).items()
                if getattr(obj, "__module__", None) == module.__name__
                and (inspect.isclass(obj) or inspect.isfunction(obj))
            ]
        for name in names:
            if not name.startswith("_"):
                obj = getattr(module, name)
                add(section, name, obj, f"{module.__name__}.{name}")
    for name in keras_laf.datasets.__all__:
        obj = getattr(keras_laf.datasets, name)
        add("Datasets", name, obj, f"keras_laf.datasets.{name}")
    return {section: pages for section, pages in sections.items() if pages}


# The module each API section documents, for its overview page.
SECTION_MODULES = {
    "Layers": "keras_laf",
    "Functions": "keras_laf",
    "Constants": "keras_laf",
    "Models": "keras_laf.models",
    "Hypermodels": "keras_laf.models.hypermodels",
    "Constraints": "keras_laf.constraints",
    "Initializers": "keras_laf.initializers",
    "Presets": "keras_laf.presets",
    "Callbacks": "keras_laf.callbacks",
    "Aggregations": "keras_laf.aggregations",
    "Datasets": "keras_laf.datasets",
}


# Modules documented whole, on one page each: `(title, page path, module,
# the members shown or None for all)`.
MODULE_PAGES = [
    ("keras_laf.config", "api/config.md", "keras_laf.core.config", None),
    ("keras_laf.ops", "api/ops.md", "keras_laf.ops", ["laf"]),
]


def module_page(module, members):
    """The Markdown of a module's page: its docstring and `members`."""
    if members is None:
        return f"::: {module}\n"
    return f"::: {module}\n    options:\n      members: {members}\n"


def public_module(name):
    """The module a public path names: `keras_laf.constraints` is an
    attribute of `keras_laf` (the module
    `keras_laf.aggregations.laf.constraints`), not a module path of its
    own."""
    import importlib

    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        parent, _, attribute = name.rpartition(".")
        return getattr(public_module(parent), attribute)


def overview_page(section, pages):
    """The Markdown of a section's overview: its module and its names."""
    import importlib

    module_name = SECTION_MODULES[section]
    module = public_module(module_name)
    about = inspect.cleandoc(module.__doc__ or "").split("\n\n")[0]
    lines = [
        f"# {section}",
        "",
        f"In `{module_name}`. {about}",
        "",
        "| Name | What it is |",
        "| --- | --- |",
    ]
    for title, page, path in pages:
        module_path, _, attribute = path.rpartition(".")
        obj = getattr(importlib.import_module(module_path), attribute, None)
        summary = ""
        if inspect.isclass(obj) or inspect.isfunction(obj):
            summary = (inspect.getdoc(obj) or "").split("\n\n")[0]
        summary = " ".join(summary.split()).replace("|", "\\|")
        lines.append(f"| [`{title}`]({page.rpartition('/')[2]}) | {summary} |")
    return "\n".join(lines) + "\n"


def overview_path(section):
    return f"api/{section.lower()}/index.md"


# A figure a tutorial saves: `path = output_dir / "name.png"`.
FIGURE = re.compile(r"""^path = output_dir / ["']([\w.-]+\.png)["']""", re.M)


def tutorial_figures(name, source):
    """The figures tutorial `name` saves, as `tutorials/figures/` paths,
    in the order it saves them."""
    return [
        f"tutorials/figures/{name}/{file}" for file in FIGURE.findall(source)
    ]


def tutorial_to_markdown(source, name=None):
    """Turns a keras-io guide into Markdown.

    The module docstring is the header (Title, Author, Date created, ...);
    every other top-level string is a text cell, and the lines between text
    cells are code. A code cell that saves a figure is followed by the
    figure, the copy kept in `tutorials/figures/<name>/` from a full run.
    """
    tree = ast.parse(source)
    lines = source.splitlines()
    cells = [
        node
        for node in tree.body
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]
    header, text_cells = cells[0], cells[1:]
    fields = {}
    key = None
    for line in inspect.cleandoc(header.value.value).splitlines():
        match = re.match(r"^([A-Z][A-Za-z ]*): (.*)$", line)
        if match:
            key = match.group(1)
            fields[key] = match.group(2).strip()
        elif key is not None:
            fields[key] += " " + line.strip()
    title = fields.pop("Title")
    parts = [f"# {title}\n"]
    parts += [f"**{key}:** {value}  " for key, value in fields.items()]
    parts.append("")

    def code(start, stop):
        block = [
            line
            for line in lines[start:stop]
            if not line.startswith("# ruff: noqa")
        ]
        text = "\n".join(block).strip("\n")
        if text.strip():
            parts.append(f"```python\n{text}\n```\n")
        if name is not None:
            for figure in tutorial_figures(name, text):
                caption = pathlib.Path(figure).stem.replace("_", " ")
                # Relative to the page, `tutorials/<name>.md`.
                relative = figure.removeprefix("tutorials/")
                parts.append(f"![{caption.capitalize()}]({relative})\n")

    position = header.end_lineno
    for cell in text_cells:
        code(position, cell.lineno - 1)
        parts.append(inspect.cleandoc(cell.value.value) + "\n")
        position = cell.end_lineno
    code(position, len(lines))
    return "\n".join(parts)


def tutorial_pages():
    """Returns `[(title, page path, tutorial file), ...]`, in README order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    order = re.findall(r"\(tutorials/(\w+)\.py\)", readme)
    files = sorted(TUTORIALS.glob("*.py"))
    files.sort(key=lambda f: order.index(f.stem) if f.stem in order else 99)
    pages = []
    for file in files:
        source = file.read_text(encoding="utf-8")
        title = re.search(r"^Title: (.*)$", source, re.M).group(1)
        pages.append((title, f"tutorials/{file.stem}.md", file))
    return pages


def guide_paths():
    """The guides, Markdown pages of `docs/guides/`, in name order."""
    return sorted((ROOT / "docs" / "guides").glob("*.md"))


def rewrite_links(markdown, linked_files):
    """Points repository links at their pages; lists the other files."""

    def replace(match):
        target, anchor = match.group(1), match.group(2) or ""
        if "://" in target or target.startswith("mailto:"):
            return match.group(0)
        pages = {source: page for page, source in MARKDOWN_PAGES.items()}
        if target in pages:
            target = pages[target]
        elif target.startswith("docs/") and target.endswith(".md"):
            # A page of the docs folder itself, such as a guide.
            target = target[len("docs/") :]
        elif target.startswith("tutorials/") and target.endswith(".py"):
            target = target[: -len(".py")] + ".md"
        elif (ROOT / target).is_file():
            linked_files.add(target)
        return f"]({target}{anchor})"

    return LINK.sub(replace, markdown)


def mathjax_files():
    """`{path in the site: file}` of MathJax's files under
    `javascripts/mathjax/`."""
    if not (MATHJAX / "tex-mml-chtml.js").is_file():
        raise FileNotFoundError(
            f"MathJax is missing from {MATHJAX}: run `npm ci` at the "
            "repository root before building the site."
        )
    found = {}
    for pattern in MATHJAX_FILES:
        for path in sorted(MATHJAX.glob(pattern)):
            if path.is_file():
                relative = path.relative_to(MATHJAX).as_posix()
                found[f"javascripts/mathjax/{relative}"] = path
    return found


def on_config(config):
    nav = [{"Home": "index.md"}]
    nav.append(
        {"Tutorials": [{title: page} for title, page, _ in tutorial_pages()]}
    )
    nav.append({"Guides": [f"guides/{path.name}" for path in guide_paths()]})
    nav.append(
        {
            "API reference": [
                {
                    section: [
                        overview_path(section),
                        *({title: page} for title, page, _ in pages),
                    ]
                }
                for section, pages in api_pages().items()
            ]
            + [{title: page} for title, page, _, _ in MODULE_PAGES]
        }
    )
    nav.append({"Results": "results.md"})
    nav.append({"Changelog": "changelog.md"})
    config["nav"] = nav
    return config


def on_files(files, config):
    linked_files = set()
    for page, source in MARKDOWN_PAGES.items():
        text = (ROOT / source).read_text(encoding="utf-8")
        content = rewrite_links(text, linked_files)
        files.append(File.generated(config, page, content=content))
    for _, page, file in tutorial_pages():
        source = file.read_text(encoding="utf-8")
        content = tutorial_to_markdown(source, file.stem)
        files.append(File.generated(config, page, content=content))
        linked_files.update(tutorial_figures(file.stem, source))
    for section, pages in api_pages().items():
        files.append(
            File.generated(
                config,
                overview_path(section),
                content=overview_page(section, pages),
            )
        )
        for title, page, path in pages:
            content = object_page(path)
            files.append(File.generated(config, page, content=content))
    for _, page, module, members in MODULE_PAGES:
        content = module_page(module, members)
        files.append(File.generated(config, page, content=content))
    for target in sorted(linked_files):
        if target.endswith(".md"):
            # A linked page (the results archive) shows its own figures.
            folder = pathlib.PurePosixPath(target).parent
            text = (ROOT / target).read_text(encoding="utf-8")
            linked_files.update(
                str(folder / link)
                for link, _ in LINK.findall(text)
                if (ROOT / folder / link).is_file()
            )
    for target in sorted(linked_files):
        files.append(
            File.generated(config, target, abs_src_path=str(ROOT / target))
        )
    for target, path in mathjax_files().items():
        files.append(File.generated(config, target, abs_src_path=str(path)))
    return files
