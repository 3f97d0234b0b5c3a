"""What a user of the package finds: version, license, citation, metadata,
and the subpackages after `import keras_laf`."""

import pathlib
import re
import sys
from importlib import metadata

from packaging.requirements import Requirement
from packaging.version import Version

import keras_laf

ROOT = pathlib.Path(__file__).parent.parent
PAPER_DOI = "10.24963/ijcai.2021/398"
# The versions the tests run on, and so the lowest ones declared.
TESTED_MINIMUMS = {"tensorflow": "2.21", "keras": "3.15"}


def read(name):
    return (ROOT / name).read_text(encoding="utf-8")


def test_subpackages_are_reachable_after_importing_the_package(monkeypatch):
    # As in a fresh interpreter, where nothing has imported them yet.
    for name in ("models", "datasets"):
        monkeypatch.delattr(keras_laf, name, raising=False)
        monkeypatch.delitem(sys.modules, f"keras_laf.{name}", raising=False)
    assert callable(keras_laf.models.deep_sets)
    assert callable(keras_laf.datasets.to_padded_batches)
    assert {"models", "datasets"} <= set(dir(keras_laf))


def test_unknown_attribute_still_raises_attribute_error():
    try:
        keras_laf.no_such_thing
    except AttributeError as error:
        assert "no_such_thing" in str(error)
    else:
        raise AssertionError("keras_laf.no_such_thing did not raise")


def test_version_is_single_sourced():
    assert re.fullmatch(r"\d+\.\d+\.\d+", keras_laf.__version__)
    assert metadata.version("keras-laf") == keras_laf.__version__
    # setup.py reads the version from the package, never writes its own.
    assert "version=VERSION" in read("setup.py")
    assert not re.search(r'version="\d', read("setup.py"))


def test_license_is_apache_2():
    license_text = read("LICENSE")
    assert "Apache License" in license_text
    assert "Version 2.0, January 2004" in license_text
    assert "END OF TERMS AND CONDITIONS" in license_text
    package = metadata.metadata("keras-laf")
    assert package["License"] == "Apache-2.0"
    assert (
        "License :: OSI Approved :: Apache Software License"
        in package.get_all("Classifier")
    )
    assert package["Author"] == "keras-laf developers"


def test_citation_names_the_paper_and_this_version():
    citation = read("CITATION.cff")
    assert re.search(
        rf"^version: {re.escape(keras_laf.__version__)}$", citation, re.M
    )
    assert "title: Learning Aggregation Functions" in citation
    for author in ["Pellegrini", "Tibo", "Frasconi", "Passerini", "Jaeger"]:
        assert f"family-names: {author}" in citation
    assert f"doi: {PAPER_DOI}" in citation
    (bibtex,) = re.findall(r"```bibtex\n(.*?)```", read("README.md"), re.S)
    assert "title     = {Learning Aggregation Functions}" in bibtex
    assert f"doi       = {{{PAPER_DOI}}}" in bibtex


def test_changelog_has_this_version():
    changelog = read("CHANGELOG.md")
    assert f"## [{keras_laf.__version__}]" in changelog


def test_declared_minimum_versions_are_the_tested_ones():
    declared = {
        requirement.name: requirement.specifier
        for requirement in map(Requirement, metadata.requires("keras-laf"))
        if requirement.name in TESTED_MINIMUMS
    }
    assert set(declared) == set(TESTED_MINIMUMS)
    for name, tested in TESTED_MINIMUMS.items():
        # The floor is not below the tested version, and what is installed
        # here (and tested) satisfies it.
        (floor,) = [spec for spec in declared[name] if spec.operator == ">="]
        assert Version(floor.version) >= Version(tested), name
        assert declared[name].contains(metadata.version(name)), name


def test_readme_says_to_import_keras_laf_before_loading():
    readme = read("README.md")
    assert "`import keras_laf` must come before" in readme
    assert "keras.models.load_model" in readme


def extra_requirements(extra):
    """The names a `pip install ".[extra]"` adds to the package's own."""
    return {
        requirement.name
        for requirement in map(Requirement, metadata.requires("keras-laf"))
        if requirement.marker is not None
        and requirement.marker.evaluate({"extra": extra})
    }


def test_each_backend_beside_tensorflow_has_its_extra():
    assert "jax" in extra_requirements("jax")
    assert "torch" in extra_requirements("torch")
    # The dev extra brings both through the same lists.
    assert {"jax", "torch"} <= extra_requirements("dev")
    readme = read("README.md")
    installation = readme.split("## Installation")[1].split("\n## ")[0]
    for extra in ("jax", "torch"):
        assert f'pip install ".[{extra}]"' in installation
    # An unpinned torch from PyPI is a CUDA build of several GB.
    assert "--index-url https://download.pytorch.org/whl/cpu" in installation
