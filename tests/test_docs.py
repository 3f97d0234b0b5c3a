"""Tests of the documentation hooks (docs/hooks.py): every public name has
an API page, and the tutorials and the README become pages. `.ci/run`
builds the whole site with `mkdocs build --strict`."""

import importlib.util
import inspect
import pathlib
import subprocess

import pytest

import keras_laf
import keras_laf.datasets
import keras_laf.models

pytest.importorskip("mkdocs", reason="needs the docs extra")

ROOT = pathlib.Path(__file__).resolve().parent.parent


def load_hooks():
    spec = importlib.util.spec_from_file_location(
        "docs_hooks", ROOT / "docs" / "hooks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = load_hooks()


def public_classes(module):
    return {
        name
        for name, obj in vars(module).items()
        if inspect.isclass(obj)
        and obj.__module__ == module.__name__
        and not name.startswith("_")
    }


def test_every_public_name_has_one_api_page():
    pages = [page for pages in hooks.api_pages().values() for page in pages]
    titles = [title for title, _, _ in pages]
    expected = {
        *(
            name
            for name in keras_laf.__all__
            if not inspect.ismodule(getattr(keras_laf, name))
            and name not in hooks.DEPRECATED_NAMES
        ),
        *keras_laf.models.__all__,
        *keras_laf.datasets.__all__,
        *public_classes(keras_laf.constraints),
        *public_classes(keras_laf.initializers),
    }
    assert expected <= set(titles)
    # A deprecated name keeps working but has no page of its own.
    assert not set(hooks.DEPRECATED_NAMES) & set(titles)
    paths = [page for _, page, _ in pages]
    assert len(paths) == len(set(paths))


def test_api_pages_point_at_where_objects_are_defined():
    sections = hooks.api_pages()
    layers = dict((title, path) for title, _, path in sections["Layers"])
    assert layers["LAF"] == "keras_laf.aggregations.laf.layer.LAF"
    models = dict((title, path) for title, _, path in sections["Models"])
    # `keras_laf.models.deep_sets` is also a module: the page names the
    # function inside it.
    assert models["deep_sets"] == "keras_laf.models.deep_sets.deep_sets"


def test_tutorial_becomes_markdown():
    source = '''"""
Title: A guide
Author: someone
Description: What it shows,
    on two lines.
"""

# ruff: noqa: E402

"""
## Setup

Some text.
"""

import keras

# A comment stays with its code.
x = 1

"""
The end.
"""
'''
    markdown = hooks.tutorial_to_markdown(source)
    assert markdown.startswith("# A guide\n")
    assert "**Description:** What it shows, on two lines." in markdown
    assert "ruff" not in markdown
    assert "## Setup\n\nSome text." in markdown
    assert (
        "```python\nimport keras\n\n# A comment stays with its code.\n"
        "x = 1\n```" in markdown
    )
    assert markdown.rstrip().endswith("The end.")


def test_every_tutorial_is_a_page():
    pages = hooks.tutorial_pages()
    assert {file.name for _, _, file in pages} == {
        file.name for file in (ROOT / "tutorials").glob("*.py")
    }
    for title, page, file in pages:
        markdown = hooks.tutorial_to_markdown(file.read_text("utf-8"))
        assert markdown.startswith(f"# {title}\n")
        assert "```python" in markdown
        assert page == f"tutorials/{file.stem}.md"


def test_readme_links_point_at_pages_and_copied_files():
    linked = set()
    markdown = hooks.rewrite_links(
        "[a](tutorials/ragged_sets.py) [b](RESULTS.md#layer-benchmark) "
        "[c](LICENSE) [d](https://keras.io) [e](#citing)",
        linked,
    )
    assert markdown == (
        "[a](tutorials/ragged_sets.md) [b](results.md#layer-benchmark) "
        "[c](LICENSE) [d](https://keras.io) [e](#citing)"
    )
    assert linked == {"LICENSE"}


def test_call_arguments_become_a_list():
    spec = importlib.util.spec_from_file_location(
        "docs_griffe_extensions", ROOT / "docs" / "griffe_extensions.py"
    )
    extensions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extensions)
    docstring = (
        "Summary.\n\nCall arguments:\n    inputs: a tensor\n"
        "        on two lines.\n    mask, training: as usual.\n\n"
        "Args:\n    units: int. Left alone."
    )
    assert extensions.list_items(docstring) == (
        "Summary.\n\nCall arguments:\n    - `inputs`: a tensor\n"
        "        on two lines.\n    - `mask, training`: as usual.\n\n"
        "Args:\n    units: int. Left alone."
    )


def load_docs_module(name):
    spec = importlib.util.spec_from_file_location(
        f"docs_{name}", ROOT / "docs" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_examples_become_code_blocks():
    extensions = load_docs_module("griffe_extensions")
    docstring = (
        "Summary.\n\nExample:\n\n>>> x = [\n...     1,\n... ]\n"
        ">>> # A comment, not a heading.\n>>> x\n[1]\n\nText after.\n\n"
        "Args:\n    units: int. Example:\n        >>> units\n        3"
    )
    assert extensions.fence_examples(docstring) == (
        "Summary.\n\n## Example\n\n```pycon\n>>> x = [\n...     1,\n... ]\n"
        ">>> # A comment, not a heading.\n>>> x\n[1]\n```\n\nText after.\n\n"
        "Args:\n    units: int. Example:\n\n        ```pycon\n"
        "        >>> units\n        3\n        ```"
    )
    # A docstring without examples is unchanged.
    assert extensions.fence_examples("Example: none.\n\nText.") == (
        "Example: none.\n\nText."
    )


LAF_FORMULA = '<div class="arithmatex">\\[L_{a,b}(x)\\]</div>'
LAF_PAGE = (
    '<nav class="md-nav md-nav--secondary"><a href="#e">Example</a></nav>'
    "<h1>LAF</h1>"
    '<div class="doc-signature"><pre><code>LAF(units=1, preset="pooling")'
    "</code></pre></div>"
    '<p class="doc doc-class-bases">Bases: <code>Layer</code></p>'
    + LAF_FORMULA
    + (
        '<p><span class="doc-section-title">Returns:</span></p><ul>'
        '<li class="doc-section-item"><p>A tensor, one sentence</p>'
        "<p>on two lines.</p></li></ul>"
        "<h3 id='e'>Example</h3>"
        "<pre><code><span>&gt;&gt;&gt; </span>LAF(2)</code></pre>"
    )
)
GOOD_PAGES = {
    "index.html": (
        '<div class="arithmatex">\\[\\frac{...}{... + \\delta '
        "L_{g,h}(1-x)}\\]</div>"
    ),
    "api/layers/index.html": "<h1>Layers</h1>",
    "api/layers/LAF/index.html": LAF_PAGE,
    "api/config/index.html": "<h1>keras_laf.config</h1>",
    "api/ops/index.html": "<h1>keras_laf.ops</h1>",
    "guides/numerics/index.html": '<span class="arithmatex">\\(0^0\\)</span>',
    "tutorials/ragged_sets/index.html": (
        '<img src="../figures/ragged_sets/mask.png">'
    ),
}


MATHJAX = "javascripts/mathjax/tex-mml-chtml.js"


def write_site(tmp_path, pages):
    """The pages, each loading the site's MathJax (relative to the page)."""
    for relative, body in pages.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        up = "../" * (len(pathlib.PurePosixPath(relative).parts) - 1)
        script = f'<script src="{up}{MATHJAX}"></script>'
        path.write_text(f"<html><body>{body}{script}</body></html>", "utf-8")
    mathjax = tmp_path / MATHJAX
    mathjax.parent.mkdir(parents=True, exist_ok=True)
    mathjax.write_text("")
    figure = tmp_path / "tutorials" / "figures" / "ragged_sets" / "mask.png"
    figure.parent.mkdir(parents=True, exist_ok=True)
    figure.write_bytes(b"")
    return tmp_path


def test_site_check_passes_a_good_site(tmp_path):
    check = load_docs_module("check_site")
    assert check.check_site(write_site(tmp_path, GOOD_PAGES)) == []
    assert check.main([str(tmp_path)]) == 0


@pytest.mark.parametrize(
    "page, body, problem",
    [
        (
            # What Markdown made of a `>>>` example.
            "api/layers/MAB/index.html",
            "<h1>LAF</h1><p>Example:</p><blockquote><blockquote><blockquote>"
            "<p>model = LAF(2)</p></blockquote></blockquote></blockquote>",
            "nested blockquotes",
        ),
        (
            "api/layers/MAB/index.html",
            "<h1>LAF</h1><p>&gt;&gt;&gt; LAF(2)</p>",
            "`>>>` outside a code block",
        ),
        ("api/layers/MAB/index.html", "<h1>LAF</h1><h1>LAF</h1>", "2 titles"),
        (
            "api/layers/MAB/index.html",
            '<nav class="md-nav md-nav--secondary"></nav><h1>LAF</h1>'
            "<h2>call</h2>",
            "empty table of contents",
        ),
        ("api/layers/index.html", "", None),
        (
            "index.html",
            '<div class="arithmatex">\\[L_{g,h\\]</div>',
            "formula is cut",
        ),
        (
            # What Google-style parsing made of one sentence on two lines.
            "api/layers/LAF/index.html",
            LAF_PAGE.replace(
                "<p>on two lines.</p>",
                '</li><li class="doc-section-item"><p>on two lines.</p>',
            ),
            "Returns section split into 2 bullets",
        ),
        (
            "api/layers/LAF/index.html",
            LAF_PAGE.replace("one sentence", "`one sentence"),
            "a backtick in text",
        ),
        (
            "api/layers/LAF/index.html",
            LAF_PAGE.replace(LAF_FORMULA, ""),
            "no typeset formula",
        ),
        (
            "guides/numerics/index.html",
            '<span class="arithmatex">\\(0^0\\)</span><p>L_{a,b} is 1</p>',
            "a formula as plain text",
        ),
        (
            "tutorials/ragged_sets/index.html",
            "<p>No figure.</p>",
            "a tutorial page without a figure",
        ),
        (
            "tutorials/ragged_sets/index.html",
            '<img src="../figures/ragged_sets/gone.png">',
            "has no file",
        ),
        (
            "api/layers/LAF/index.html",
            LAF_PAGE.replace('preset="pooling"', "preset=DEFAULT_PRESET"),
            "the constant DEFAULT_PRESET",
        ),
        (
            "api/layers/LAF/index.html",
            LAF_PAGE.replace("<code>Layer</code>", "<code>_Private</code>"),
            "a private base class: _Private",
        ),
        ("api/ops/index.html", "", "no page for the module keras_laf.ops"),
        (
            "guides/numerics/index.html",
            '<span class="arithmatex">\\(0^0\\)</span><script src='
            '"https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js">'
            "</script>",
            "a script from the network",
        ),
    ],
)
def test_site_check_finds_each_problem(tmp_path, page, body, problem):
    check = load_docs_module("check_site")
    pages = dict(GOOD_PAGES)
    pages[page] = body
    site = write_site(tmp_path, pages)
    if problem is None:
        # A section without its overview page.
        (site / page).unlink()
        problem = "no overview page"
    elif problem.startswith("no page for"):
        (site / page).unlink()
        (site / page).parent.rmdir()
    problems = check.check_site(site)
    assert len(problems) == 1 and problem in problems[0], problems
    assert check.main([str(site)]) == 1


def test_site_check_finds_formulas_that_need_the_network(tmp_path):
    # The site's MathJax missing: every page with formulas needs the CDN.
    check = load_docs_module("check_site")
    site = write_site(tmp_path, GOOD_PAGES)
    (site / MATHJAX).unlink()
    problems = check.check_site(site)
    assert len(problems) == 3, problems
    assert all("need the network to typeset" in p for p in problems)


def test_every_tutorial_figure_has_its_copy_in_the_figures_folder():
    for _, _, file in hooks.tutorial_pages():
        source = file.read_text("utf-8")
        figures = hooks.tutorial_figures(file.stem, source)
        assert figures, file.name
        for figure in figures:
            assert (ROOT / figure).is_file(), figure
        markdown = hooks.tutorial_to_markdown(source, file.stem)
        assert markdown.count("](figures/") == len(figures)


def test_the_results_page_stays_a_results_page():
    # One table per claim: the page within 450 lines, its summary (the
    # first table) within 15 rows.
    text = (hooks.ROOT / "RESULTS.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 450
    summary = text.split("\n\n## ")[0]
    rows = [line for line in summary.splitlines() if line.startswith("| ")]
    assert 1 < len(rows) - 1 <= 15


def test_the_records_stay_what_a_reader_needs():
    # results/ keeps the summaries RESULTS.md cites and the figures: at
    # most 3 MB in at most 250 files.
    listed = subprocess.run(
        ["git", "ls-files", "-z", "results"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    records = [ROOT / name.decode() for name in listed if name]
    assert 0 < len(records) <= 250
    assert sum(record.stat().st_size for record in records) <= 3_000_000


def test_the_changelog_says_what_changed_for_a_user_briefly():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    assert "## [0.1.0]" in text
