"""The version of calsim, in a module of its own so that any module can import it.

Modules deep in the package (the store, the Dask scale-out) record the version
beside what they write. Importing it from the package root (``from . import
__version__``) would make each of them depend on ``calsim/__init__``, which
imports them back: an import circle. This leaf module imports nothing.
Keep it equal to ``version`` in pyproject.toml (tests/test_api_surface.py
checks).

>>> from calsim._version import __version__
>>> __version__.count(".")
2
"""

__version__ = "0.1.0"
