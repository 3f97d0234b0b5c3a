"""The tutorials in `tutorials/`: what they import, their data, and a run
of each in quick mode.

A tutorial is a script a reader copies: it imports the library, NumPy,
the standard library and the packages its text says to install, never
the experiments (`laf_experiments`), and builds its own data in a few
lines. Where its text says its sets are those of a `keras-laf` command,
its data functions are compared with the command's.

Each tutorial takes `--quick` (a run of seconds) and `--output DIR`
(where its figures go); the test runs it in a fresh interpreter, as a
user would, and checks that it exits cleanly and saves at least one
figure.
"""

import ast
import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

TUTORIALS_DIR = pathlib.Path(__file__).resolve().parent.parent / "tutorials"
TUTORIALS = sorted(TUTORIALS_DIR.glob("*.py"))
# Generous: a quick run takes 10 to 30 seconds on two CPU cores.
TIMEOUT_SECONDS = 300
# Tutorials that need an optional package, and the package.
NEEDS = {"laf_on_molecules": "rdkit"}


def tutorial_param(path):
    package = NEEDS.get(path.stem)
    marks = []
    if package and importlib.util.find_spec(package) is None:
        marks.append(pytest.mark.skip(reason=f"needs {package}"))
    return pytest.param(path, id=path.stem, marks=marks)


# The packages a tutorial may import beside the standard library: those
# `pip install keras-laf` installs, and the optional ones with what the
# tutorial's text names, beside `pip install`, to install them.
INSTALLED = {"keras", "keras_laf", "numpy", "tensorflow"}
OPTIONAL = {
    "matplotlib": "matplotlib",
    "keras_tuner": "keras-laf[tuner]",
    "rdkit": "keras-laf[molecules]",
}


def imported_packages(tree):
    """The top-level packages that a tutorial's syntax tree imports."""
    packages = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            packages.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            packages.add(node.module.split(".")[0])
    return packages


def text_cells(tree):
    """The text of a tutorial: its top-level strings, keras.io's cells."""
    return "\n".join(
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    )


def tutorial_definitions(stem, names, **given):
    """`{name: value}`: the top-level functions and values `names` of
    tutorial `stem`, defined alone (the script is not run), with NumPy as
    `np` and the values `given`."""
    path = TUTORIALS_DIR / f"{stem}.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    wanted = [
        node
        for node in tree.body
        if getattr(node, "name", None) in names
        or any(
            getattr(target, "id", None) in names
            for target in getattr(node, "targets", ())
        )
    ]
    namespace = {"np": np, **given}
    code = compile(ast.Module(wanted, type_ignores=[]), str(path), "exec")
    exec(code, namespace)
    return {name: namespace[name] for name in names}


def assert_same_sets(sets, expected):
    assert len(sets) == len(expected)
    for elements, expected_elements in zip(sets, expected, strict=True):
        np.testing.assert_array_equal(elements, expected_elements)


def test_tutorials_are_found():
    assert TUTORIALS, f"No tutorials found in {TUTORIALS_DIR}"


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda path: path.stem)
def test_tutorial_imports_the_library_and_what_its_text_installs(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    packages = imported_packages(tree) - set(sys.stdlib_module_names)
    assert "laf_experiments" not in packages, (
        f"{path.name} imports the experiments; a tutorial builds its data "
        "with keras_laf and NumPy"
    )
    unknown = packages - INSTALLED - set(OPTIONAL)
    assert not unknown, f"{path.name} imports {sorted(unknown)}"
    text = text_cells(tree)
    for package in sorted(packages & set(OPTIONAL)):
        assert "pip install" in text and OPTIONAL[package] in text, (
            f"{path.name} imports {package}, and its text does not say to "
            f"install {OPTIONAL[package]}"
        )


def test_the_import_check_finds_the_experiments():
    tree = ast.parse(
        '"""Text."""\nimport os\nimport keras_laf.datasets\n'
        "from laf_experiments.data import make_training_sets\n"
    )
    assert imported_packages(tree) == {"os", "keras_laf", "laf_experiments"}
    assert text_cells(tree) == "Text."


def test_learning_aggregators_draws_the_sets_of_keras_laf_scalars():
    from laf_experiments.data import make_test_sets_by_max_size
    from laf_experiments.data import make_training_sets

    tutorial = tutorial_definitions(
        "learning_aggregators",
        (
            "training_sets",
            "diversified_sets",
            "labels_of",
            "kurtosis",
            "TARGET_FUNCTIONS",
        ),
        TRAIN_MAX_SIZE=10,
    )
    labels_of = tutorial["labels_of"]
    sets = tutorial["training_sets"](200, seed=0)
    suite = {
        max_size: tutorial["diversified_sets"](100, max_size, seed=1)
        for max_size in (5, 50)
    }
    for target in ("count", "sum", "mean", "median", "kurtosis"):
        expected = make_training_sets(200, target, seed=0)
        assert_same_sets(sets, expected.sets)
        np.testing.assert_allclose(labels_of(sets, target), expected.labels)
        expected_suite = make_test_sets_by_max_size(
            100, target, max_sizes=(5, 50), seed=1
        )
        for max_size, test_sets in suite.items():
            expected = expected_suite[max_size]
            assert_same_sets(test_sets, expected.sets)
            np.testing.assert_allclose(
                labels_of(test_sets, target), expected.labels, rtol=1e-6
            )


def test_tune_laf_units_draws_the_sets_of_keras_laf_scalars():
    from laf_experiments.data import make_test_sets
    from laf_experiments.data import make_training_sets

    tutorial = tutorial_definitions(
        "tune_laf_units", ("training_sets", "diversified_sets", "spreads")
    )
    spreads = tutorial["spreads"]
    expected = make_training_sets(200, "max_minus_min", seed=1)
    sets = tutorial["training_sets"](200, seed=1)
    assert_same_sets(sets, expected.sets)
    np.testing.assert_array_equal(spreads(sets), expected.labels)
    expected = make_test_sets(100, "max_minus_min", max_size=50, seed=1)
    sets = tutorial["diversified_sets"](100, 50, seed=1)
    assert_same_sets(sets, expected.sets)
    np.testing.assert_array_equal(spreads(sets), expected.labels)


def test_set_transformer_draws_the_sets_of_keras_laf_unique_sum():
    from keras_laf.datasets import DigitImages
    from laf_experiments.data import make_unique_digit_sets

    tutorial = tutorial_definitions(
        "set_transformer_unique_sum", ("unique_sum_sets",)
    )
    # A pool of 40 "images", 4 of each digit in a shuffled order: each
    # image's single pixel is its own row number.
    labels = np.random.default_rng(0).permutation(np.arange(40) % 10)
    pool = DigitImages(
        images=np.arange(40, dtype="float32")[:, None],
        labels=labels.astype("int32"),
        split="train",
        source="test",
    )
    sets, set_labels = tutorial["unique_sum_sets"](pool, 50, 10, seed=3)
    expected = make_unique_digit_sets(pool, 50, max_size=10, seed=3)
    assert_same_sets(sets, expected.image_indices)
    np.testing.assert_array_equal(set_labels, expected.labels)
    # Each image shows its element's digit; the label sums the distinct ones.
    for rows, label in zip(sets, set_labels, strict=True):
        assert label == np.unique(labels[rows]).sum()


@pytest.mark.parametrize("path", [tutorial_param(path) for path in TUTORIALS])
@pytest.mark.slow
def test_tutorial_runs_in_quick_mode(path, tmp_path):
    environment = {
        **os.environ,
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "MPLBACKEND": "Agg",
    }
    result = subprocess.run(
        [sys.executable, str(path), "--quick", "--output", str(tmp_path)],
        cwd=TUTORIALS_DIR.parent,
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
    )
    assert result.returncode == 0, (
        f"{path.name} --quick failed with exit code {result.returncode}.\n"
        f"stdout (end):\n{result.stdout[-3000:]}\n"
        f"stderr (end):\n{result.stderr[-3000:]}"
    )
    figures = sorted(tmp_path.rglob("*.png"))
    assert figures, f"{path.name} --quick saved no PNG in {tmp_path}"
