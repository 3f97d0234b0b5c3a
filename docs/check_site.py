"""Checks the built keras-laf site for what `mkdocs build --strict` misses.

    python docs/check_site.py SITE_DIR

`.ci/run` runs it after the build; it exits with status 1 and one line per
problem when

- a docstring example is not a code block: `>>>` prompts in text, or
  blockquotes inside blockquotes (what Markdown makes of `>>>`);
- an API page has other than one title (`<h1>`), or headings under it
  (members, `Example`) but an empty table of contents;
- an API section has no overview page (`api/<section>/index.html`);
- the home page does not show the LAF formula whole.
"""

import html.parser
import pathlib
import sys

# The end of the README's formula, as the home page must show it.
FORMULA_END = "delta L_{g,h}(1-x))"


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

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
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
        if tag == "blockquote":
            self.blockquote_depth = max(self.blockquote_depth - 1, 0)
        elif tag in ("pre", "code"):
            self.code_depth = max(self.code_depth - 1, 0)
        elif tag == "nav" and self.in_toc:
            self.in_toc -= 1

    def handle_data(self, data):
        self.text.append(data)
        if not self.code_depth and ">>>" in data:
            self.prompts_in_text.append(data.strip().splitlines()[0][:60])


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
    if relative == pathlib.Path("index.html"):
        if FORMULA_END not in "".join(parser.text):
            problems.append(
                f"{relative}: the LAF formula is cut: {FORMULA_END!r} missing"
            )
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
