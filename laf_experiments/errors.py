"""Errors a user can fix, and progress lines, of every `keras-laf` command.

`ExperimentError` is a problem the user can fix (a missing data directory,
an unwritable output directory, results of other settings), reported by
`keras-laf` as one line with exit status 2.
"""

import importlib


class ExperimentError(Exception):
    """A problem the user can fix, reported in one line with exit status 2."""


class MissingDependency(ExperimentError, ImportError):
    """An optional package that a command needs is not installed."""


def require(module, package, purpose):
    """Imports an optional dependency, or says in one line how to install it.

    Args:
        module: the module to import, e.g. `"sklearn.datasets"`.
        package: its name on PyPI, e.g. `"scikit-learn"`.
        purpose: what needs it, e.g. `"keras-laf graphs"`.

    Returns:
        The imported module.

    Raises:
        MissingDependency: the module cannot be imported.
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency(
            f"{purpose} needs {package}, which is not installed. Install "
            f"it with: pip install 'keras-laf[experiments]' (or pip install "
            f"{package})."
        ) from None


def log(experiment, message):
    """Prints a progress line of `experiment`, flushed at once."""
    print(f"keras-laf {experiment}: {message}", flush=True)
