"""A benchmark's record: its results written as JSON."""

import json
import pathlib


def write_record(path, results):
    """Writes `results` as indented JSON to `path` (a str or a
    `pathlib.Path`, its folder made if missing); nothing where `path` is
    None (no `--output` given)."""
    if path is None:
        return
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
