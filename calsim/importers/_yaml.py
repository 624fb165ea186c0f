"""YAML and JSON documents read safely: bounded alias expansion and nesting, one error class, one line.

Every importer that reads YAML (Kubernetes manifests, GitHub workflows,
CloudFormation templates, ``kubectl get jobs -o yaml``) or JSON goes through
here, so the guards and the messages are the same everywhere:

* **Alias bombs.** YAML anchors and aliases share one node, so a few
  hundred bytes (``a: &a [x,x,...]``, ``b: &b [*a,*a,...]``...) describe a
  tree of a billion nodes; PyYAML builds it cheaply, and the first reader that
  walks it (a ``str()`` for a message, a ``json.dumps``) runs out of memory.
  :func:`documents` counts each document's nodes *as expanded* before any
  Python object is built and refuses more than :data:`MAX_NODES`; a
  recursive alias (``&a [*a]``) is refused too.
* **Depth.** Nesting beyond :data:`MAX_DEPTH` is refused (PyYAML and the json
  module recurse, and a ``RecursionError`` is not a message).
* **Messages** name the file and line and never quote more than a few dozen
  characters of the document.

PyYAML is imported by the functions that read YAML, not with this module, so
``import calsim.importers`` stays light (JSON-only and crontab users never
load it).

>>> [data for _, _, data in documents("a: &x [1, 2]\\nb: *x\\n", "example")]
[{'a': [1, 2], 'b': [1, 2]}]
>>> documents("a: &a [x,x,x,x,x,x,x,x,x,x]\\n" + "".join(
...     f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\\n" for p, n in zip("abcdefg", "bcdefgh")), "bomb")
Traceback (most recent call last):
    ...
calsim.errors.InputError: bomb: the YAML expands to more than 1,000,000 values through its aliases (an alias bomb?); calsim reads at most that many
"""  # noqa: E501  (a doctest output line)

from __future__ import annotations

import json
from typing import Any, Iterator

from ..errors import CalsimError, InputError

__all__ = ["documents", "load_one", "load_json", "child", "MAX_NODES", "MAX_DEPTH"]

MAX_NODES = 1_000_000  # a 20,000-object manifest is about 1 M values; a bomb is 10^9
MAX_DEPTH = 200        # Kubernetes objects nest about 12 deep; CloudFormation a little more


class NotYaml(InputError):
    """Text that is not YAML at all (a syntax error), as opposed to YAML refused by a cap."""


def documents(text: str, where: str, loader: type | None = None) -> list[tuple[int, Any, Any]]:
    """``[(number, node, data)]`` of each YAML document (the node gives line numbers).

    ``loader`` is a :class:`yaml.SafeLoader` subclass (e.g. with
    CloudFormation's ``!Ref`` tags); None is :class:`yaml.SafeLoader`.
    Raises :class:`~calsim.errors.InputError` for invalid YAML, a bomb, or
    nesting past :data:`MAX_DEPTH`.
    """
    return list(_iter(text, where, loader))


def _iter(text: str, where: str, loader_cls: type | None) -> Iterator[tuple[int, Any, Any]]:
    import yaml

    if loader_cls is None:
        loader_cls = yaml.SafeLoader
    loader = None
    try:
        loader = loader_cls(text)  # reads the stream's first characters: may raise a ReaderError
        n = 0
        while loader.check_node():
            n += 1
            node = loader.get_node()
            if node is None:
                continue
            _check(node, where)
            yield n, node, loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).strip().splitlines()[0]
        raise NotYaml(f"{where}{at}: not valid YAML ({str(problem)[:120]})") from None
    except RecursionError:
        raise InputError(f"{where}: YAML nested too deeply (at most {MAX_DEPTH} levels)") from None
    except CalsimError:
        raise
    except (ValueError, OverflowError) as exc:  # a scalar PyYAML cannot build: an int of 5,000 digits, a date
        raise InputError(f"{where}: a YAML value cannot be read ({str(exc).splitlines()[0][:100]})") from None
    finally:
        if loader is not None:
            loader.dispose()


def load_one(text: str, where: str, loader: type | None = None) -> Any:
    """The first YAML document's data (None for an empty file); ``loader`` as in :func:`documents`."""
    docs = documents(text, where, loader)
    return docs[0][2] if docs else None


def load_value(text: str, where: str) -> Any:
    """A value a user typed (``calsim report -p name=value``): YAML with the same caps, else the text itself.

    Text that is not YAML at all (``[1,2``) is taken as the string it is;
    YAML that breaks a cap (an alias bomb, nesting past :data:`MAX_DEPTH`,
    a recursive alias, an integer of thousands of digits) is an
    :class:`~calsim.errors.InputError` naming ``where``, never a hang.

    >>> load_value("2026a", "-p old"), load_value("[1, 2]", "-p x"), load_value("[1,2", "-p x")
    ('2026a', [1, 2], '[1,2')
    """
    try:
        docs = documents(text, where)
    except NotYaml:
        return text
    return docs[0][2] if docs else ""


def load_json(text: str, where: str) -> Any:
    """A JSON document, with the same depth guard and one-line errors."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply (at most {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise InputError(f"{where}: cannot read the JSON ({str(exc).splitlines()[0][:100]})") from None
    _depth(data, where)
    return data


def child(node: Any, key: str, *, ignore_case: bool = False) -> Any:
    """The value node of ``key`` in a YAML mapping node (None when absent or not a mapping), for line numbers.

    A key is given once (:func:`documents` refuses a mapping that repeats one).

    >>> _, node, _ = documents("On:\\n  schedule: []\\n", "example")[0]
    >>> child(node, "on", ignore_case=True).start_mark.line, child(node, "on")
    (1, None)
    """
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and (k.value.lower() == key.lower() if ignore_case else k.value == key):
            return v
    return None


def _check(root: Any, where: str) -> None:
    """Refuse a node graph whose expansion is larger than MAX_NODES or deeper than MAX_DEPTH."""
    import yaml

    def children(node: Any) -> list[Any]:
        if isinstance(node, yaml.SequenceNode):
            return list(node.value)
        if isinstance(node, yaml.MappingNode):
            return [part for pair in node.value for part in pair]
        return []

    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    busy: set[int] = set()
    # Iterative post-order walk: sizes and depths of shared (aliased) nodes are computed once.
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            busy.discard(key)
            if isinstance(node, yaml.MappingNode):
                _unique_keys(node, where)
            kids = children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
            if size[key] > MAX_NODES:
                raise InputError(f"{where}: the YAML expands to more than {MAX_NODES:,} values through its "
                                 f"aliases (an alias bomb?); calsim reads at most that many")
            if depth[key] > MAX_DEPTH:
                line = node.start_mark.line + 1 if getattr(node, "start_mark", None) else "?"
                raise InputError(f"{where} line {line}: YAML nested too deeply (at most {MAX_DEPTH} levels)")
            continue
        if key in size:
            continue
        if key in busy:
            line = node.start_mark.line + 1 if getattr(node, "start_mark", None) else "?"
            raise InputError(f"{where} line {line}: a YAML alias refers to a node that contains it "
                             "(a recursive structure); calsim refuses it")
        busy.add(key)
        stack.append((node, True))
        for kid in children(node):
            if id(kid) not in size:
                stack.append((kid, False))


def _unique_keys(node: Any, where: str) -> None:
    """Refuse a mapping that gives one key twice.

    YAML 1.2 (§3.2.1.1) requires a mapping's keys to be unique; PyYAML keeps
    the last value silently, so ``schedule:`` given twice in a workflow would
    drop the first schedule without a word. GitHub Actions and ``kubectl``
    refuse such a document; so does calsim. (``<<`` merge keys may repeat.)
    """
    import yaml

    counts: dict[tuple[str, str], list[int]] = {}
    for k, _ in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value != "<<":
            counts.setdefault((k.tag, k.value), []).append(k.start_mark.line + 1)
    for (_, name), lines in counts.items():
        if len(lines) > 1:
            raise InputError(f"{where} line {lines[1]}: key {name[:40]!r} is given twice in one mapping (lines "
                             f"{lines[0]} and {lines[1]}); YAML keys are unique, and calsim does not guess which "
                             "one is meant")


def _depth(data: Any, where: str) -> None:
    """Refuse JSON nested deeper than MAX_DEPTH (json.loads allows ~1000 before its RecursionError)."""
    level = [data]
    for _ in range(MAX_DEPTH + 1):
        nxt = [v for item in level if isinstance(item, (dict, list))
               for v in (item.values() if isinstance(item, dict) else item)]
        if not nxt:
            return
        level = nxt
    raise InputError(f"{where}: JSON nested too deeply (at most {MAX_DEPTH} levels)")
