"""``calsim report``: run a notebook with parameters and render it as one self-contained HTML file.

Each notebook in ``notebooks/`` has a cell tagged ``parameters`` (papermill's
convention) holding its defaults, e.g. ``fleet``, ``old``, ``new``,
``horizon_start``. :func:`report` checks the given names against that cell
before anything runs, executes a copy of the notebook with papermill (the
original is never modified), and exports it with nbconvert's HTML exporter,
which embeds every chart as a base64 ``data:`` image, so the HTML file can be
mailed or attached to a CI run as it is.

Values given as text (the CLI's ``-p name=value``) are parsed as YAML
scalars, as papermill's own ``-y`` does: ``-p n=500`` is an integer,
``-p old=2026a`` a string.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Mapping

from .atomic import write_atomically
from .errors import InputError

__all__ = ["report", "notebook_parameters", "parse_parameter"]


def notebook_parameters(notebook: str | Path) -> dict[str, object]:
    """The parameters a notebook declares (its ``parameters`` cell): name -> default, as source text."""
    import papermill

    path = _existing(notebook)
    try:
        found = papermill.inspect_notebook(str(path))
    except Exception as exc:  # nbformat/papermill raise many types for a broken file
        raise InputError(f"notebook: {str(notebook)!r} is not a readable notebook ({type(exc).__name__}: {exc})") from None
    return {name: info.get("default") for name, info in found.items()}


def parse_parameter(text: str) -> tuple[str, object]:
    """``"name=value"`` -> ``(name, value)`` with the value read as a YAML scalar."""
    import yaml

    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise InputError(f"-p: {text!r} is not name=value (e.g. -p old=2026a)")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return name.strip(), value


def report(notebook: str | Path, out: str | Path, parameters: Mapping[str, object] | None = None, *,
           progress: bool = False, timeout: int = 600) -> Path:
    """Execute ``notebook`` with ``parameters`` and write a self-contained HTML report to ``out``.

    Unknown parameter names are refused before anything runs; the HTML file
    is written atomically (a failed run leaves no partial report).
    """
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    params = dict(parameters or {})
    declared = notebook_parameters(notebook)
    unknown = sorted(set(params) - set(declared))
    if unknown:
        allowed = ", ".join(sorted(declared)) or "none (the notebook has no cell tagged 'parameters')"
        raise InputError(f"-p: unknown parameter {unknown[0]!r} for {Path(notebook).name} (allowed: {allowed})")
    target = Path(out)
    if not target.parent.is_dir():  # checked before the notebook runs, not only when writing
        raise InputError(f"--out: directory {str(target.parent)!r} does not exist")
    src = _existing(notebook)
    with tempfile.TemporaryDirectory(prefix="calsim-report-") as work:
        executed = Path(work) / src.name
        try:
            papermill.execute_notebook(str(src), str(executed), parameters=params, cwd=str(src.parent),
                                       progress_bar=progress, kernel_name="python3", execution_timeout=timeout)
        except papermill.PapermillExecutionError as exc:
            raise InputError(f"notebook: {src.name} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}") from None
        nb = nbformat.read(executed, as_version=4)
        html, _ = HTMLExporter(embed_images=True).from_notebook_node(nb)
        write_atomically(target, lambda tmp: Path(tmp).write_text(html, encoding="utf-8"), "--out")
    return target


def _existing(notebook: str | Path) -> Path:
    path = Path(notebook)
    if not path.is_file():
        raise InputError(f"notebook: {str(notebook)!r} does not exist (the notebooks are in notebooks/)")
    if path.suffix != ".ipynb":
        raise InputError(f"notebook: {str(notebook)!r} is not a .ipynb file")
    return path
