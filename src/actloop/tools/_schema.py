"""Tool argument schemas from function signatures, as langchain-core builds them.

Only public pydantic APIs are used, imported inside the functions that build schemas (never at
module import, so `import actloop` stays free of pydantic). A parameter annotated with
`RunnableConfig` (actloop's or langchain-core's) receives the run's config and never appears in a
schema; parameters named `run_manager` and `callbacks` are left out as LangChain does.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, Union, get_args, get_origin

from typing_extensions import is_typeddict

from actloop.runnables._config import RunnableConfig

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "CACHED_SCHEMAS",
    "FILTERED_ARGS",
    "HAS_FIELDS",
    "config_param",
    "copy_subset_model",
    "fields_of",
    "function_schema",
    "has_fields",
    "is_model_class",
    "model_fields",
    "model_json_schema",
    "parse_google_docstring",
    "remember",
]

FILTERED_ARGS = ("run_manager", "callbacks")
"""Parameters LangChain fills in itself and keeps out of schemas."""
_MIN_DOCSTRING_BLOCKS = 2


def is_model_class(obj: Any) -> bool:
    """True for a pydantic (v2) model class; checked without importing pydantic."""
    return isinstance(obj, type) and hasattr(obj, "model_validate") and hasattr(obj, "model_fields")


_V = TypeVar("_V")

HAS_FIELDS: dict[type[BaseModel], bool] = {}
"""`has_fields` of each model seen (a tool call reads it before calling `has_fields`)."""

CACHED_SCHEMAS = 256
"""Schema classes a per-schema cache keeps at most: a tool made per request (`tool(f)` makes a
new schema class each time) must not keep every class alive. A plain dict, emptied when full,
because a lookup runs on every tool call (a `WeakKeyDictionary` costs ten times as much)."""


def remember(cache: dict[type[BaseModel], _V], schema: type[BaseModel], value: _V) -> _V:
    """Put `value` in a per-schema cache (emptied first when it holds `CACHED_SCHEMAS`)."""
    if len(cache) >= CACHED_SCHEMAS:
        cache.clear()
    cache[schema] = value
    return value


def has_fields(model: type[BaseModel]) -> bool:
    """Whether the model declares any field (cached: pydantic's `model_fields` costs ~1 us)."""
    known = HAS_FIELDS.get(model)
    if known is None:
        known = remember(HAS_FIELDS, model, bool(fields_of(model)))
    return known


def fields_of(model: type[BaseModel]) -> dict[str, Any]:
    """The model's fields, not copied: pydantic's own mapping, read past its `model_fields`
    property (a Python-level descriptor and classmethod call, on each fresh tool's first call)."""
    fields: dict[str, Any] | None = getattr(model, "__pydantic_fields__", None)
    return fields if fields is not None else model.model_fields


def model_fields(model: type[BaseModel]) -> dict[str, Any]:
    """The model's fields, name -> FieldInfo."""
    return dict(model.model_fields)


def model_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema, cached on the class (pydantic rebuilds it on every call)."""
    cached: dict[str, Any] | None = model.__dict__.get("_actloop_json_schema")
    if cached is None:
        cached = model.model_json_schema()
        type.__setattr__(model, "_actloop_json_schema", cached)
    return cached


# -- RunnableConfig parameters -----------------------------------------------------------------


def _is_config_type(hint: Any) -> bool:
    if hint is RunnableConfig:
        return True
    if get_origin(hint) in (Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        return len(args) == 1 and _is_config_type(args[0])
    # langchain-core's RunnableConfig, so tools ported unchanged still get their config
    return (
        isinstance(hint, type)
        and hint.__name__ == "RunnableConfig"
        and hint.__module__.startswith("langchain_core")
        and is_typeddict(hint)
    )


def _type_hints(func: Callable[..., Any], *, extras: bool = False) -> dict[str, Any]:
    target: Any = getattr(func, "func", func)  # functools.partial
    try:
        return typing.get_type_hints(target, include_extras=extras)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        try:
            params = inspect.signature(func).parameters.values()
        except (TypeError, ValueError):
            return {}
        return {p.name: p.annotation for p in params if p.annotation is not p.empty}


def config_param(func: Callable[..., Any] | None) -> str | None:
    """The name of `func`'s parameter annotated `RunnableConfig`, if any (by type, not by name)."""
    if func is None:
        return None
    for name, hint in _type_hints(func).items():
        if name != "return" and _is_config_type(hint):
            return name
    return None


def accepts(func: Callable[..., Any] | None, name: str) -> bool:
    """True when `func` has a parameter called `name`."""
    if func is None:
        return False
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


# -- docstrings ---------------------------------------------------------------------------------


def parse_google_docstring(
    docstring: str | None, args: Sequence[str], *, error_on_invalid_docstring: bool = False
) -> tuple[str, dict[str, str]]:
    """Summary and argument descriptions of a Google-style docstring (langchain-core's rules)."""
    if not docstring:
        if error_on_invalid_docstring:
            raise ValueError("Found invalid Google-Style docstring.")
        return "", {}
    blocks = docstring.split("\n\n")
    if error_on_invalid_docstring:
        wanted = {a for a in args if a not in {"run_manager", "callbacks", "runtime", "return"}}
        has_args = any(block.startswith("Args:") for block in blocks[1:])
        if wanted and (len(blocks) < _MIN_DOCSTRING_BLOCKS or not has_args):
            raise ValueError("Found invalid Google-Style docstring.")
    descriptors: list[str] = []
    args_block: str | None = None
    past_descriptors = False
    for block in blocks:
        if block.startswith("Args:"):
            args_block = block
            break
        if block.startswith(("Returns:", "Example:")):
            past_descriptors = True
        elif not past_descriptors:
            descriptors.append(block)
    description = " ".join(descriptors).strip()
    return description, _parse_args_block(args_block) if args_block else {}


def _parse_args_block(block: str) -> dict[str, str]:
    out: dict[str, str] = {}
    arg: str | None = None
    arg_indent: int | None = None
    for line in block.split("\n")[1:]:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if arg_indent is None and ":" in line:
            arg_indent = indent
        continuation = arg_indent is not None and indent > arg_indent
        if arg is not None and continuation:
            out[arg] += " " + line.strip()
        elif ":" in line:
            head, desc = line.split(":", maxsplit=1)
            arg = head.strip()
            arg_name, _, annotation = arg.partition(" ")
            if annotation.startswith("(") and annotation.endswith(")"):
                arg = arg_name
            out[arg] = desc.strip()
        elif arg:
            out[arg] += " " + line.strip()
    return out


def _annotation_description(hint: Any) -> str | None:
    from pydantic.fields import FieldInfo

    if get_origin(hint) is typing.Annotated:
        for extra in get_args(hint)[1:]:
            if isinstance(extra, str):
                return extra
            if isinstance(extra, FieldInfo) and extra.description:
                return extra.description
    return None


def _descriptions(
    func: Callable[..., Any], hints: dict[str, Any], parse_docstring: bool, strict: bool
) -> tuple[str, dict[str, str]]:
    if parse_docstring:
        doc = inspect.getdoc(func)
        description, arg_desc = parse_google_docstring(
            doc, list(hints), error_on_invalid_docstring=strict
        )
        for arg in arg_desc:
            if arg not in hints:
                raise ValueError(f"Arg {arg} in docstring not found in function signature.")
    else:
        description, arg_desc = inspect.getdoc(func) or "", {}
    for arg, hint in hints.items():
        if arg not in arg_desc and (desc := _annotation_description(hint)):
            arg_desc[arg] = desc
    return description, arg_desc


# -- models -------------------------------------------------------------------------------------


def _param_field(param: inspect.Parameter, hint: Any) -> tuple[str, Any, Any]:
    """(field name, annotation, default) of one parameter, as pydantic's validate_arguments."""
    annotation = Any if param.annotation is param.empty else hint
    default: Any = ... if param.default is param.empty else param.default
    if param.kind is param.VAR_POSITIONAL:
        return param.name, tuple[annotation, ...], None
    if param.kind is param.VAR_KEYWORD:
        return param.name, dict[str, annotation], None
    return param.name, annotation, default


def function_schema(
    name: str,
    func: Callable[..., Any],
    *,
    parse_docstring: bool = False,
    error_on_invalid_docstring: bool = False,
    filter_args: Sequence[str] | None = None,
) -> type[BaseModel]:
    """A pydantic model of `func`'s arguments named `name`, equal to langchain-core's for `func`."""
    from pydantic.fields import FieldInfo

    sig = inspect.signature(func)
    hints = _type_hints(func, extras=True)
    skip = set(FILTERED_ARGS if filter_args is None else filter_args)
    params = list(sig.parameters.values())
    if (
        filter_args is None
        and params
        and params[0].name in ("self", "cls")
        and "." in getattr(func, "__qualname__", "")
    ):
        skip.add(params[0].name)
    if (cfg := config_param(func)) is not None:
        skip.add(cfg)
    description, arg_desc = _descriptions(func, hints, parse_docstring, error_on_invalid_docstring)
    fields: dict[str, Any] = {}
    for param in params:
        if param.name in skip:
            continue
        field_name, annotation, default = _param_field(param, hints.get(param.name))
        if default is ...:
            fields[field_name] = FieldInfo.from_annotation(annotation)
        else:
            fields[field_name] = FieldInfo.from_annotated_attribute(annotation, default)
    module: str = getattr(func, "__module__", None) or __name__
    return _build_model(name, fields, arg_desc, description, module)


def copy_subset_model(
    name: str,
    model: type[BaseModel],
    field_names: Sequence[str],
    *,
    descriptions: dict[str, str] | None = None,
    fn_description: str | None = None,
) -> type[BaseModel]:
    """A model named `name` with some of `model`'s fields (langchain-core's subset model)."""
    fields = {n: model.model_fields[n] for n in field_names}
    doc = fn_description or model.__doc__ or ""
    return _build_model(name, fields, descriptions or {}, doc, model.__module__)


def _build_model(
    name: str, fields: dict[str, Any], descriptions: dict[str, str], doc: str, module: str
) -> type[BaseModel]:
    """The model; `module` lets pydantic resolve string annotations get_type_hints could not."""
    from pydantic import ConfigDict, create_model
    from pydantic.fields import FieldInfo

    definitions: dict[str, Any] = {}
    for field_name, field in fields.items():
        kwargs: dict[str, Any] = {"description": descriptions.get(field_name, field.description)}
        if field.default_factory is not None:
            kwargs["default_factory"] = field.default_factory
        else:
            kwargs["default"] = field.default
        info = FieldInfo(**kwargs)
        if field.metadata:
            info.metadata = field.metadata
        definitions[field_name] = (field.annotation, info)
    model: type[BaseModel] = create_model(
        name,
        __config__=ConfigDict(arbitrary_types_allowed=True),
        __module__=module,
        **definitions,
    )
    import textwrap

    model.__doc__ = textwrap.dedent(doc)
    return model
