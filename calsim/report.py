"""``calsim report``: run a notebook with parameters and render it as one self-contained HTML file.

Each notebook in ``notebooks/`` has a cell tagged ``parameters`` (papermill's
convention) holding its defaults, e.g. ``fleet_spec``, ``old``, ``new``,
``window_start``. :func:`report` checks the given names against that cell
before anything runs, executes a copy of the notebook with papermill (the
original is never modified) in the caller's working directory (a relative
path given as a parameter is read from where the command runs, as with
``papermill``), and exports it with nbconvert's JupyterLab template:

* self-contained: charts embedded as base64 ``data:`` images, the CSS
  inlined, and none of the template's remote scripts (require.js, MathJax,
  mermaid, widgets from a CDN), so the file opens offline, in a mail
  client or as a CI artefact, exactly as written;
* its ``<title>`` is the notebook's first heading (else the file name),
  with the parameters given;
* ``no_input=True`` (``--no-input``) leaves the code out: the prose, the
  tables and the charts only.

The kernel's connection is encrypted (CurveZMQ keys provisioned by
jupyter_client when the kernel declares support), so ipykernel 7 has no
"Kernel is running over TCP without encryption" warning to print; its log
is kept to errors anyway, and debugpy's frozen-modules warning is switched
off (``PYDEVD_DISABLE_FILE_VALIDATION=1``, as its own message suggests).

Values given as text (the CLI's ``-p name=value``) are parsed as YAML
scalars, as papermill's own ``-y`` does: ``-p n=500`` is an integer,
``-p old=2026a`` a string.

>>> from calsim.report import parse_parameter, report_title
>>> parse_parameter("n=500"), parse_parameter("old=2026a")
(('n', 500), ('old', '2026a'))
>>> report_title({"cells": [{"cell_type": "markdown", "source": "# 04 · A *tzdata* upgrade"}]}, "04.ipynb",
...              {"new": "2026f"})
'04 · A tzdata upgrade (new=2026f)'
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path
from typing import Iterator, Mapping

from .atomic import write_atomically
from .errors import InputError, did_you_mean, shown

__all__ = ["report", "notebook_parameters", "parse_parameter", "report_title"]

# The JupyterLab template without the blocks that load scripts from a CDN
# (nbconvert's lab/index.html.j2: require.js, widgets, MathJax, mermaid).
# The notebooks use none of them: tables are HTML, charts PNG.
_SELF_CONTAINED = """{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""


def notebook_parameters(notebook: str | Path) -> dict[str, object]:
    """The parameters a notebook declares (its ``parameters`` cell): name -> default, as source text."""
    import papermill

    path = _existing(notebook)
    try:
        found = papermill.inspect_notebook(str(path))
    except Exception as exc:  # nbformat/papermill raise many types for a broken file
        raise InputError(f"notebook: {str(notebook)!r} is not a readable notebook "
                         f"({type(exc).__name__}: {exc})") from None
    return {name: info.get("default") for name, info in found.items()}


def parse_parameter(text: str) -> tuple[str, object]:
    """``"name=value"`` -> ``(name, value)`` with the value read as YAML (text that is not YAML stays text).

    The value goes through the importers' one YAML loader
    (:func:`calsim.importers._yaml.load_value`): an alias bomb, nesting past
    200 levels or a recursive alias is an :class:`~calsim.InputError`
    naming the parameter, never a hang or a traceback.
    """
    from .importers._yaml import load_value

    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise InputError(f"-p: {shown(text)} is not name=value (e.g. -p old=2026a)")
    value = load_value(raw, f"-p {name.strip()[:40]}") if raw.strip() else ""
    return name.strip(), value


def report_title(nb: Mapping, filename: str | Path, parameters: Mapping[str, object] | None = None) -> str:
    """The first Markdown heading of ``nb`` (else the file's stem), with ``(name=value, ...)`` when given."""
    title = Path(filename).stem
    for cell in nb.get("cells", ()):
        if cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        heading = next((ln for ln in source.splitlines() if ln.startswith("#")), None)
        if heading is not None:
            # Markdown emphasis and code marks are not part of a title.
            title = re.sub(r"[*`]", "", heading.lstrip("#")).strip() or title
            break
    if parameters:
        title += " (" + ", ".join(f"{k}={v}" for k, v in parameters.items()) + ")"
    return title


def report(notebook: str | Path, out: str | Path, parameters: Mapping[str, object] | None = None, *,
           no_input: bool = False, progress: bool = False, timeout: int = 600) -> Path:
    """Execute ``notebook`` with ``parameters`` and write a self-contained HTML report to ``out``.

    Unknown parameter names are refused before anything runs; the HTML file
    is written atomically (a failed run leaves no partial report).
    ``no_input=True`` leaves the code cells' input out of the report.
    """
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    params = dict(parameters or {})
    declared = notebook_parameters(notebook)
    unknown = sorted(set(params) - set(declared))
    if unknown:
        allowed = ", ".join(sorted(declared)) or "none (the notebook has no cell tagged 'parameters')"
        raise InputError(f"-p: unknown parameter {unknown[0]!r} for {Path(notebook).name} (allowed: {allowed})"
                         f"{did_you_mean(unknown[0], sorted(declared))}")
    target = Path(out)
    if not target.parent.is_dir():  # checked before the notebook runs, not only when writing
        raise InputError(f"--out: directory {str(target.parent)!r} does not exist")
    src = _existing(notebook)
    with tempfile.TemporaryDirectory(prefix="calsim-report-") as work, _quiet_kernel():
        executed = Path(work) / src.name
        try:
            papermill.execute_notebook(str(src), str(executed), parameters=params, cwd=None,
                                       progress_bar=progress, kernel_name="python3", execution_timeout=timeout,
                                       **_kernel_options())
        except papermill.PapermillExecutionError as exc:
            raise InputError(f"notebook: {src.name} failed in cell {exc.exec_count}: "
                             f"{exc.ename}: {exc.evalue}") from None
        nb = nbformat.read(executed, as_version=4)
    nb.metadata["title"] = report_title(nb, src, params)
    exporter = HTMLExporter(template_name="lab", embed_images=True, exclude_input=no_input,
                            exclude_input_prompt=no_input, exclude_output_prompt=no_input)
    exporter.raw_template = _SELF_CONTAINED
    html, _ = exporter.from_notebook_node(nb)
    write_atomically(target, lambda tmp: Path(tmp).write_text(html, encoding="utf-8"), "--out")
    return target


def _kernel_options() -> dict[str, object]:
    """nbclient options for a kernel that has nothing to warn about on the terminal.

    jupyter_client 8.10+ provisions CurveZMQ keys for a kernel whose spec
    declares ``supported_encryption: ["curve"]`` (ipykernel 7's does) when
    ``KernelManager.transport_encryption`` is ``"auto"``; ipykernel then
    encrypts its sockets instead of warning that it does not. Older
    jupyter_client has no such option (traitlets ignores it) and older
    ipykernel no such warning. The kernel's own log level is ERROR either
    way: a report's terminal is for the report's errors.
    """
    from traitlets.config import Config

    config = Config()
    try:
        import zmq

        if zmq.has("curve"):  # "auto" is refused by jupyter_client without libsodium in libzmq
            config.KernelManager.transport_encryption = "auto"
    except ImportError:  # pyzmq comes with jupyter_client; this is only for a broken install
        pass
    # The kernel's own stderr is not the report's: cell errors come back through the protocol,
    # and what ipykernel logs there (a race while it shuts down: "Uncaught exception in
    # ZMQStream callback ... Socket operation on non-socket") is noise on the user's terminal.
    config.NotebookClient.kernel_manager_class = _quiet_kernel_manager()
    return {"config": config, "extra_arguments": ["--IPKernelApp.log_level=ERROR"]}


def _quiet_kernel_manager() -> type:
    """An AsyncKernelManager whose kernel process writes its stderr to /dev/null (built lazily: jupyter_client)."""
    import subprocess

    from jupyter_client.manager import AsyncKernelManager

    class QuietKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: object) -> None:
            kw.setdefault("stderr", subprocess.DEVNULL)
            await super()._async_launch_kernel(kernel_cmd, **kw)

    return QuietKernelManager


@contextlib.contextmanager
def _quiet_kernel() -> Iterator[None]:
    """The kernel inherits this environment: no debugpy frozen-modules warning (Python 3.11+)."""
    key = "PYDEVD_DISABLE_FILE_VALIDATION"
    before = os.environ.get(key)
    os.environ[key] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = before


def _existing(notebook: str | Path) -> Path:
    path = Path(notebook)
    if not path.is_file():
        raise InputError(f"notebook: {str(notebook)!r} does not exist (the notebooks are in notebooks/)")
    if path.suffix != ".ipynb":
        raise InputError(f"notebook: {str(notebook)!r} is not a .ipynb file")
    return path
