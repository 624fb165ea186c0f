"""Terraform's ``aws_scheduler_schedule`` resources, turned into EventBridge ``GetSchedule`` fields.

:func:`calsim.importers.from_eventbridge` reads the schedules; this module
only finds them in Terraform's three shapes and renames their arguments to
the API's (``schedule_expression`` → ``ScheduleExpression``,
``flexible_time_window { mode }`` → ``FlexibleTimeWindow.Mode``...), so one
code path decides what an EventBridge schedule does:

* HCL (``.tf`` files): ``resource "aws_scheduler_schedule" "name" {...}``,
  parsed with python-hcl2 (imported only when such a file is read);
* Terraform's JSON syntax (``.tf.json``): ``{"resource":
  {"aws_scheduler_schedule": {"name": {...}}}}``;
* ``terraform show -json`` of a state or a plan: ``values`` or
  ``planned_values`` → ``root_module`` (and ``child_modules``) →
  ``resources`` of ``type`` ``aws_scheduler_schedule``, with every
  expression already evaluated. This is the shape to use when arguments
  are variables: calsim does not evaluate Terraform expressions, so an
  argument written as ``var.zone`` or ``"${local.x}"`` refuses that
  schedule and names the argument.

Identity: the ``name`` argument, else the resource's name (Terraform would
generate a unique name when ``name`` is omitted; the note says so).

>>> found, skipped = resources('resource "aws_scheduler_schedule" "nightly" {\\n'
...     '  schedule_expression = "cron(30 2 ? * MON-FRI *)"\\n'
...     '  flexible_time_window {\\n    mode = "OFF"\\n  }\\n}\\n', "hcl")
>>> [(props["ScheduleExpression"], props["FlexibleTimeWindow"], logical) for props, logical in found]
[('cron(30 2 ? * MON-FRI *)', {'Mode': 'OFF'}, 'nightly')]
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

from ..errors import InputError

__all__ = ["RESOURCE", "is_terraform", "resources", "parse_hcl", "Expression"]

RESOURCE = "aws_scheduler_schedule"
_HCL = re.compile(r'^\s*resource\s+"?' + RESOURCE + r'"?\s', re.MULTILINE)
_HCL_ANY = re.compile(r'^\s*(resource|variable|provider|terraform|module|locals|data)\s+("[^"\n]*"\s*)*\{',
                      re.MULTILINE)

# Terraform argument → GetSchedule field; nested blocks map their own arguments.
_FIELDS = {"name": "Name", "group_name": "GroupName", "schedule_expression": "ScheduleExpression",
           "schedule_expression_timezone": "ScheduleExpressionTimezone", "start_date": "StartDate",
           "end_date": "EndDate", "state": "State", "action_after_completion": "ActionAfterCompletion",
           "description": "Description", "kms_key_arn": "KmsKeyArn", "name_prefix": "NamePrefix"}
_BLOCKS = {"flexible_time_window": ("FlexibleTimeWindow", {"mode": "Mode",
                                                           "maximum_window_in_minutes": "MaximumWindowInMinutes"}),
           "target": ("Target", {"arn": "Arn", "role_arn": "RoleArn"})}
_RETRY = {"maximum_event_age_in_seconds": "MaximumEventAgeInSeconds",
          "maximum_retry_attempts": "MaximumRetryAttempts"}


class Expression(str):
    """A Terraform expression calsim does not evaluate (``var.x``, ``"${local.y}"``)."""


def is_terraform(text: str) -> bool:
    """True for HCL with a ``resource`` block of :data:`RESOURCE` (JSON shapes are told apart after loading)."""
    return bool(_HCL.search(text)) and not text.lstrip().startswith(("{", "["))


def parse_hcl(text: str, where: str) -> dict:
    """An HCL file as python-hcl2 reads it (string literals keep their quotes; :func:`_literal` removes them)."""
    import hcl2  # a dependency; imported here so ``import calsim`` stays light
    from lark.exceptions import LarkError

    try:
        return hcl2.loads(text)
    except LarkError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{where}: not valid HCL ({first[:120]})") from None
    except (RecursionError, ValueError, TypeError) as exc:
        raise InputError(f"{where}: cannot read the HCL ({type(exc).__name__})") from None


def looks_like(data: Any) -> bool:
    """True if a loaded JSON document is Terraform's (``resource``, ``values`` or ``planned_values``)."""
    return isinstance(data, dict) and ("resource" in data or "planned_values" in data
                                       or isinstance(data.get("values"), dict) and "root_module" in data["values"])


def resources(data: Any, shape: str, where: str = "terraform") -> tuple[list[tuple[dict, str]], list[str]]:
    """``([(GetSchedule fields, resource name)], [other resource addresses])`` of a Terraform document.

    ``shape``: ``"hcl"`` (text, parsed here), or ``"json"`` (a loaded
    ``.tf.json`` or ``terraform show -json`` document).
    """
    if shape == "hcl":
        data = parse_hcl(data, where)
    found: list[tuple[dict, str]] = []
    others: list[str] = []
    for kind, name, address, args in _walk(data):
        if kind == RESOURCE:
            found.append((_properties(args), name))
        else:
            others.append(address)
    return found, others


def _walk(data: Any) -> Iterator[tuple[str, str, str, Any]]:
    """``(type, name, address, arguments)`` of every managed resource in any of the three shapes."""
    if not isinstance(data, dict):
        return
    for key in ("values", "planned_values"):
        if isinstance(data.get(key), dict):
            yield from _module(data[key].get("root_module"))
            return
    blocks = data.get("resource")
    for block in blocks if isinstance(blocks, list) else [blocks]:
        if not isinstance(block, dict):
            continue
        for kind, named in block.items():
            for named_one in named if isinstance(named, list) else [named]:
                if isinstance(named_one, dict):
                    for name, args in named_one.items():
                        kind, name = str(_literal(kind)), str(_literal(name))
                        yield kind, name, f"{kind}.{name}", args


def _module(module: Any) -> Iterator[tuple[str, str, str, Any]]:
    """Resources of a ``terraform show -json`` module and its child modules (data sources left out)."""
    if not isinstance(module, dict):
        return
    for res in module.get("resources") or []:
        if isinstance(res, dict) and res.get("mode", "managed") == "managed":
            kind, name = str(res.get("type")), str(res.get("name"))
            yield kind, name, str(res.get("address") or f"{kind}.{name}"), res.get("values")
    for child in module.get("child_modules") or []:
        yield from _module(child)


def _properties(args: Any) -> dict:
    """The GetSchedule fields of one resource's arguments (unknown arguments are left out)."""
    args = _block(args)
    if not isinstance(args, dict):
        return {"Resource": args}  # the reader refuses it: "expected an object"
    props: dict[str, Any] = {}
    for key, value in args.items():
        key = _literal(key)
        if value == "" or value is None:
            continue  # terraform show -json writes an unset optional argument as "" (or null)
        if key in _FIELDS:
            props[_FIELDS[key]] = _literal(value)
        elif key in _BLOCKS:
            field, names = _BLOCKS[key]
            block = _block(value)
            if not isinstance(block, dict):
                props[field] = block  # the reader names the field and says it is not an object
                continue
            inner = {names[k]: _literal(v) for k, v in block.items() if k in names}
            if key == "target" and "retry_policy" in block:
                retry = _block(block["retry_policy"])
                inner["RetryPolicy"] = ({_RETRY[k]: _literal(v) for k, v in retry.items() if k in _RETRY}
                                        if isinstance(retry, dict) else retry)
            props[field] = inner
    return props


def _block(value: Any) -> Any:
    """A nested block: HCL and state JSON give a one-item list, ``.tf.json`` may give the object itself."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k != "__is_block__"}
    return value


def _literal(value: Any) -> Any:
    """A value without python-hcl2's quotes; an unevaluated expression as :class:`Expression`."""
    if not isinstance(value, str):
        return value
    if len(value) >= 2 and value[0] == value[-1] == '"':
        inner = value[1:-1]
        if "${" not in inner:
            try:
                return json.loads(value)  # HCL's escapes are JSON's for what schedules hold
            except ValueError:
                return inner
        return Expression(inner)
    if value.startswith("${") and value.endswith("}") and value.count("${") == 1:
        return Expression(value[2:-1])  # python-hcl2 writes a bare expression (var.x) as "${var.x}"
    if "${" in value:
        return Expression(value)
    return value
