"""Helpers shared by the tests of the `keras-laf` command."""

import csv
import json

from matplotlib import image

from laf_experiments import cli

QUIET = ["--quick", "--verbose", "0"]


def run(argv, capsys):
    """Runs `keras-laf ARGV`; returns the exit status, stdout and stderr."""
    status = cli.main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def read_json(directory):
    return json.loads((directory / "results.json").read_text())


def read_csv(path):
    with open(path, newline="") as file:
        return list(csv.DictReader(file))


def assert_png(path):
    pixels = image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[0] > 50 and pixels.shape[1] > 50
    # Not a blank image.
    assert pixels.std() > 0
