"""The model options of ``study run``, ``episode run`` and ``design``, generated from the fields of
``mcbuild.llm.settings.ModelSettings``: one option per field, named as the field (``max_tokens`` is
``--max-tokens``, a yes/no field ``--x/--no-x``), its help the field's description and the default
it has there (or in the command's own ``defaults`` layer), its range and choices the field's.

Every option is None unless given, so that only what the command line gives is laid over a study's
settings (:func:`given_settings`). A field whose values are tables (``extra_body``) has no option.
"""
from __future__ import annotations

import types
import typing
from typing import Any, Callable, Literal, Mapping

import annotated_types
import click
from pydantic.fields import FieldInfo

from mcbuild.llm.settings import ModelSettings

F = Callable[..., Any]


def model_options(defaults: Mapping[str, Any] | None = None) -> Callable[[F], F]:
    """A decorator adding ``--model`` and one option per setting to a command; ``defaults`` is the
    command's own layer of defaults for some settings (shown in the help; ``model``: that of ``--model``)."""
    own = dict(defaults or {})
    model_default = own.get("model")

    def decorate(command: F) -> F:
        for name, field in reversed(list(ModelSettings.model_fields.items())):
            if name == "model":
                command = click.option("--model", default=model_default, show_default=model_default is not None,
                                       help=field.description)(command)
                continue
            option = _option(name, field, own.get(name, field.default), name in own)
            if option is not None:
                command = option(command)
        return command

    return decorate


def given_settings(options: Mapping[str, Any]) -> dict[str, Any]:
    """The settings the command line gave (options left at None are not given; ``--model`` excluded)."""
    return {k: v for k, v in options.items() if k in OPTIONS and v is not None}


def _option(name: str, field: FieldInfo, default: Any, own: bool) -> Callable[[F], F] | None:
    kind = _scalar(field.annotation)
    if kind is None:
        return None
    flag = "--" + name.replace("_", "-")
    shown = _shown(field, default, own)
    text = f"{field.description} ({shown})" if shown else field.description
    if kind is bool:
        return click.option(f"{flag}/--no-{flag[2:]}", name, default=None, help=text)
    return click.option(flag, name, type=_type(kind, field), default=None, help=text)


def _scalar(annotation: Any) -> Any:
    """The command-line type of a field: bool, int, float, str or a Literal; None for tables."""
    args = typing.get_args(annotation) if isinstance(annotation, types.UnionType) or \
        typing.get_origin(annotation) is typing.Union else (annotation,)
    for arg in args:
        if arg in (bool, int, float, str) or typing.get_origin(arg) is Literal:
            return arg
    return None


def _type(kind: Any, field: FieldInfo) -> click.ParamType:
    if typing.get_origin(kind) is Literal:
        return click.Choice([str(v) for v in typing.get_args(kind)])
    if kind is str:
        return click.STRING
    bounds: dict[str, Any] = {}
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            bounds["min"] = rule.ge
        elif isinstance(rule, annotated_types.Gt):
            bounds.update(min=rule.gt, min_open=True)
        elif isinstance(rule, annotated_types.Le):
            bounds["max"] = rule.le
        elif isinstance(rule, annotated_types.Lt):
            bounds.update(max=rule.lt, max_open=True)
    if not bounds:
        return click.INT if kind is int else click.FLOAT
    return click.IntRange(**bounds) if kind is int else click.FloatRange(**bounds)


def _shown(field: FieldInfo, default: Any, own: bool) -> str:
    """The default as the help shows it: nothing when neither the field nor the command has one."""
    if default is None:
        return "default: not sent" if own else ""
    if isinstance(default, bool):
        return f"default {'on' if default else 'off'}"
    return f"default {default}"


OPTIONS = tuple(name for name, field in ModelSettings.model_fields.items()
                if name != "model" and _scalar(field.annotation) is not None)
