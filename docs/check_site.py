"""Checks the built keras-laf site for what `mkdocs build --strict` misses.

    python docs/check_site.py SITE_DIR

`.ci/run` runs it after the build; it exits with status 1 and one line per
problem when

- a docstring example is not a code block: `>>>` prompts in text, or
  blockquotes inside blockquotes (what Markdown makes of `>>>`);
- an API page has other than one title (`<h1>`), or headings under it
  (members, `Example`) but an empty table of contents;
- an API section has no overview page (`api/<section>/index.html`), or
  a module of `MODULE_PAGES` has no page;
- a Returns section is split into bullets without names (one per source
  line of a sentence), or text shows Markdown's backticks unrendered;
- a page of `MATH_PAGES` has no typeset formula (`pymdownx.arithmatex`),
  the home page's LAF formula is not whole, or text outside code and
  formulas holds a formula's subscript (`L_{a,b}`);
- a page needs the network to typeset its formulas: a script loaded from
  another site, or formulas with no MathJax script of the site's own;
- a tutorial page shows no figure, or an image points at no file;
- a signature shows a constant's name as a default (`DEFAULT_PRESET`)
  rather than its value;
- a class shows a private base (`Bases: _ParametricAggregation`).

MathJax typesets the formulas in the browser, from the copy the site
ships (`javascripts/mathjax/`); the check reads the markup arithmatex
leaves for it and the scripts each page loads, so it needs no network.
"""

import fnmatch
import html.parser
import pathlib
import re
import sys

# The end of the README's formula, as the home page must show it.
FORMULA_END = r"\delta L_{g,h}(1-x)"
# Pages that must show typeset formulas: glob patterns in the site.
MATH_PAGES = (
    "index.html",
    "api/layers/LAF/index.html",
    "guides/numerics/index.html",
)
# Modules with a page of their own, by their page in the site.
MODULE_PAGES = {
    "keras_laf.config": "api/config/index.html",
    "keras_laf.ops": "api/ops/index.html",
}
# A default that names a module constant: an upper-case name after `=`,
# not inside a quoted string.
CONSTANT_DEFAULT = re.compile(r"=\s*(?![\"'])[^,\n]*?\b([A-Z][A-Z0-9_]+)\b")


class PageParser(html.parser.HTMLParser):
    """Collects what `check_page` looks at in one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.blockquote_depth = 0
        self.nested_blockquotes = 0
        self.code_depth = 0
        self.prompts_in_text = []
        self.num_titles = 0
        self.num_headings = 0
        self.in_toc = 0
        self.toc_links = 0
        self.text = []
        # Typeset formulas (arithmatex), their text, and the depth inside.
        self.math_depth = 0
        self.formulas = []
        self.subscripts_in_text = []
        self.backticks_in_text = []
        # Returns sections: items per section, and which have a name.
        self.section = None
        self.returns_items = []
        self.images = []
        self.signature_depth = 0
        self.signatures = []
        self.bases_depth = 0
        self.bases = []
        self.scripts = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        for depth in ("math_depth", "signature_depth", "bases_depth"):
            if getattr(self, depth) and tag in ("div", "span", "p", "pre"):
                setattr(self, depth, getattr(self, depth) + 1)
        if "arithmatex" in classes:
            self.math_depth = 1
            self.formulas.append("")
        elif "doc-signature" in classes:
            self.signature_depth = 1
            self.signatures.append("")
        elif "doc-class-bases" in classes:
            self.bases_depth = 1
        if tag == "script" and attrs.get("src"):
            self.scripts.append(attrs["src"])
        if tag == "img":
            self.images.append(attrs.get("src", ""))
        elif tag == "li" and "doc-section-item" in classes:
            if self.section == "Returns:":
                self.returns_items[-1].append(False)
        elif tag == "b" and self.section == "Returns:":
            # A named item: `name` – description.
            if self.returns_items[-1]:
                self.returns_items[-1][-1] = True
        if tag == "blockquote":
            self.blockquote_depth += 1
            if self.blockquote_depth > 1:
                self.nested_blockquotes += 1
        elif tag in ("pre", "code"):
            self.code_depth += 1
        elif tag == "h1":
            self.num_titles += 1
        elif tag in ("h2", "h3", "h4", "h5", "h6") and not self.in_toc:
            self.num_headings += 1
        elif tag == "nav" and "md-nav--secondary" in attrs.get("class", ""):
            self.in_toc = 1
        elif tag == "nav" and self.in_toc:
            self.in_toc += 1
        elif tag == "a" and self.in_toc:
            self.toc_links += 1

    def handle_endtag(self, tag):
        for depth in ("math_depth", "signature_depth", "bases_depth"):
            if getattr(self, depth) and tag in ("div", "span", "p", "pre"):
                setattr(self, depth, getattr(self, depth) - 1)
        if tag == "ul" and self.section is not None:
            self.section = None
        if tag == "blockquote":
            self.blockquote_depth = max(self.blockquote_depth - 1, 0)
        elif tag in ("pre", "code"):
            self.code_depth = max(self.code_depth - 1, 0)
        elif tag == "nav" and self.in_toc:
            self.in_toc -= 1

    def handle_data(self, data):
        self.text.append(data)
        if self.math_depth:
            self.formulas[-1] += data
            return
        if self.signature_depth:
            self.signatures[-1] += data
        if self.bases_depth and data.strip() != "Bases:":
            self.bases.append(data.strip())
        if data.strip() == "Returns:":
            self.section = "Returns:"
            self.returns_items.append([])
        if self.code_depth:
            return
        line = data.strip().splitlines()[0][:60] if data.strip() else ""
        if ">>>" in data:
            self.prompts_in_text.append(line)
        if "_{" in data:
            self.subscripts_in_text.append(line)
        if "`" in data:
            self.backticks_in_text.append(line)


def network_problems(path, relative, parser):
    """A page that loads a script from another site, or has formulas but
    no MathJax script of the site's own: it needs the network."""
    problems = []
    for source in parser.scripts:
        if "://" in source or source.startswith("//"):
            problems.append(
                f"{relative}: a script from the network: {source!r}"
            )
    if parser.formulas:
        local = [
            source
            for source in parser.scripts
            if "://" not in source
            and not source.startswith("//")
            and "mathjax" in source.lower()
            and pathlib.PurePosixPath(source.split("?")[0]).name != "mathjax.js"
            and (path.parent / source.split("?")[0]).resolve().is_file()
        ]
        if not local:
            problems.append(
                f"{relative}: formulas but no MathJax script of the site's "
                "own: they need the network to typeset"
            )
    return problems


def check_page(path, relative):
    """The problems of one page, as lines."""
    parser = PageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    problems = []
    if parser.nested_blockquotes:
        problems.append(
            f"{relative}: {parser.nested_blockquotes} nested blockquotes "
            "(a `>>>` example rendered as text?)"
        )
    for text in parser.prompts_in_text:
        problems.append(f"{relative}: `>>>` outside a code block: {text!r}")
    parts = relative.parts
    if parts[0] == "api" and len(parts) > 2:
        if parser.num_titles != 1:
            problems.append(
                f"{relative}: {parser.num_titles} titles (<h1>), expected 1"
            )
        if parser.num_headings and not parser.toc_links:
            problems.append(
                f"{relative}: {parser.num_headings} headings but an empty "
                "table of contents"
            )
    for items in parser.returns_items:
        if len(items) > 1 and not any(items):
            problems.append(
                f"{relative}: a Returns section split into {len(items)} "
                "bullets without names (one sentence per source line?)"
            )
    for text in parser.backticks_in_text:
        problems.append(f"{relative}: a backtick in text: {text!r}")
    for text in parser.subscripts_in_text:
        problems.append(
            f"{relative}: a formula as plain text, not typeset: {text!r}"
        )
    if any(fnmatch.fnmatch(relative.as_posix(), p) for p in MATH_PAGES):
        if not parser.formulas:
            problems.append(f"{relative}: no typeset formula (arithmatex)")
    problems += network_problems(path, relative, parser)
    if relative == pathlib.Path("index.html"):
        if not any(FORMULA_END in formula for formula in parser.formulas):
            problems.append(
                f"{relative}: the LAF formula is cut: {FORMULA_END!r} "
                "missing from the typeset formulas"
            )
    if parts[0] == "tutorials" and len(parts) == 3 and not parser.images:
        problems.append(f"{relative}: a tutorial page without a figure")
    for source in parser.images:
        if "://" in source:
            continue
        if not (path.parent / source).resolve().is_file():
            problems.append(f"{relative}: image {source!r} has no file")
    for signature in parser.signatures:
        for name in CONSTANT_DEFAULT.findall(signature):
            problems.append(
                f"{relative}: a signature shows the constant {name} as a "
                "default, not its value"
            )
    for base in parser.bases:
        if base.rpartition(".")[2].startswith("_"):
            problems.append(f"{relative}: a private base class: {base}")
    return problems


def check_site(site):
    """All problems of the site in folder `site`, as lines."""
    site = pathlib.Path(site)
    problems = []
    pages = sorted(site.rglob("*.html"))
    if not pages:
        return [f"{site}: no HTML pages; build the site first"]
    for path in pages:
        problems += check_page(path, path.relative_to(site))
    for section in sorted(p for p in (site / "api").iterdir() if p.is_dir()):
        if not (section / "index.html").is_file():
            problems.append(f"{section.relative_to(site)}: no overview page")
    for module, page in MODULE_PAGES.items():
        if not (site / page).is_file():
            problems.append(f"{page}: no page for the module {module}")
    return problems


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python docs/check_site.py SITE_DIR", file=sys.stderr)
        return 2
    problems = check_site(argv[0])
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problems in the built site", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
