"""``python -m calsim``: the same as the ``calsim`` command."""

from .cli import entry

if __name__ == "__main__":
    entry()
