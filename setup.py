from setuptools import find_packages
from setuptools import setup

TUNER = ["keras-tuner", "tensorboard"]
EXPERIMENTS = [
    "matplotlib",
    "tensorflow-datasets",
    "importlib_resources",
    # ModelNet40 is read from HDF5 files.
    "h5py",
    "scikit-learn",
    "networkx",
    *TUNER,
]

setup(
    name="keras-laf",
    version="0.1.0",
    description="Learnable Aggregation Functions (LAF) for Keras 3",
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
    install_requires=["tensorflow>=2.16", "keras>=3.3", "numpy"],
    entry_points={"console_scripts": ["keras-laf = laf_experiments.cli:main"]},
    extras_require={
        # The KerasTuner hypermodels of `keras_laf.models`; keras-tuner
        # imports tensorboard in every trial and TensorFlow 2.21 no longer
        # installs it.
        "tuner": TUNER,
        # The `keras-laf` command: plots, MNIST through tensorflow-datasets
        # (which needs importlib_resources without declaring it), the
        # offline digits, the graph benchmark and `keras-laf tune`.
        "experiments": EXPERIMENTS,
        # Kept for existing installs: parts of `experiments`.
        "digits": ["scikit-learn"],
        "graphs": ["networkx"],
        "dev": ["pytest", "ruff", "scipy", *EXPERIMENTS],
    },
)
