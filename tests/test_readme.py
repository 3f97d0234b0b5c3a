"""The README's quick start runs as written."""

import pathlib
import re

README = pathlib.Path(__file__).parent.parent / "README.md"


def test_quick_start_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    quick_start = blocks[0]
    assert "keras_laf.LAF" in quick_start
    namespace = {}
    exec(compile(quick_start, "README quick start", "exec"), namespace)
    formulas = namespace["layer"].formulas()
    assert len(formulas) == 3 and formulas[0].startswith("(1.00(Σx^1.00)")
