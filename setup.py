from setuptools import find_packages
from setuptools import setup

setup(
    name="keras-laf",
    version="0.1.0",
    description="Learnable Aggregation Functions (LAF) for Keras 3",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["keras_laf", "keras_laf.*"])
    + ["keras_laf.models"],
    # The model builders live in the top-level `models/` folder and are
    # installed as `keras_laf.models`.
    package_dir={"keras_laf.models": "models"},
    install_requires=[
        "tensorflow>=2.16",
        "keras>=3.3",
        "numpy",
        "h5py",
        "matplotlib",
        "tensorflow-datasets",
        "keras-tuner",
        # keras-tuner imports it in every trial; TensorFlow 2.21 no longer
        # installs it.
        "tensorboard",
    ],
    entry_points={
        "console_scripts": ["keras-laf = keras_laf.experiments.cli:main"]
    },
    extras_require={
        # Offline fallback of the MNIST-digit sets.
        "digits": ["scikit-learn"],
        # The graph-properties benchmark.
        "graphs": ["networkx"],
        "dev": ["pytest", "ruff", "scipy", "scikit-learn", "networkx"],
    },
)
