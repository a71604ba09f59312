"""`convert_to_openai_tool`: tools, pydantic models, functions and dicts as OpenAI tool schemas.

The output equals langchain-core's `convert_to_openai_tool` for the same input: `$ref`s inlined,
`$defs` dropped, `title`s removed except for properties named "title".
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, cast

from actloop.runnables._foreign import adopt
from actloop.tools import _schema
from actloop.tools._base import BaseTool

__all__ = ["ToolLike", "convert_to_openai_function", "convert_to_openai_tool"]

ToolLike: TypeAlias = "Mapping[str, Any] | type | Callable[..., Any] | BaseTool"
"""What `bind_tools` accepts: a tool, a pydantic model, a function, or an OpenAI-style dict."""

_WELL_KNOWN = (
    "function",
    "file_search",
    "computer",
    "computer_use_preview",
    "code_interpreter",
    "mcp",
    "image_generation",
    "web_search_preview",
    "web_search",
    "tool_search",
    "apply_patch",
    "namespace",
)


def convert_to_openai_tool(tool: ToolLike, *, strict: bool | None = None) -> dict[str, Any]:
    """`{"type": "function", "function": {"name", "description", "parameters"}}` for `tool`."""
    tool = adopt(tool)  # a LangChain tool is described like ours
    if isinstance(tool, dict):
        as_dict = cast("dict[str, Any]", tool)
        kind = str(as_dict.get("type") or "")
        if kind in _WELL_KNOWN or kind.startswith("web_search_preview"):
            return as_dict
    from actloop.tools._structured import Tool

    if isinstance(tool, Tool) and (tool.metadata or {}).get("type") == "custom_tool":
        out: dict[str, Any] = {"type": "custom", "name": tool.name, "description": tool.description}
        if tool.metadata is not None and "format" in tool.metadata:
            out["format"] = tool.metadata["format"]
        return out
    return {
        "type": "function",
        "function": convert_to_openai_function(cast(Any, tool), strict=strict),
    }


def convert_to_openai_function(
    function: ToolLike,
    *,
    strict: bool | None = None,
) -> dict[str, Any]:
    """The `{"name", "description", "parameters"}` part of an OpenAI tool for `function`."""
    if isinstance(function, Mapping):
        mapping = dict(cast("Mapping[str, Any]", function))
        result = _from_dict(copy.deepcopy(mapping) if strict else mapping)
    elif _schema.is_model_class(function):
        result = _from_json_schema(_schema.model_json_schema(function))  # pyright: ignore[reportArgumentType]
    elif isinstance(function, BaseTool):
        result = _from_tool(function)
    elif callable(function):
        model = _schema.function_schema(
            function.__name__, function, parse_docstring=True, filter_args=()
        )
        schema = _schema.model_json_schema(model)
        result = _from_json_schema(schema, name=function.__name__, description=model.__doc__)
    else:
        raise ValueError(
            f"Unsupported function\n\n{function}\n\nFunctions must be passed in as Dict, "
            "pydantic.BaseModel, or Callable. If they're a dict they must either be in OpenAI "
            "function format or valid JSON schema with top-level 'title' key."
        )
    if strict is not None:
        if "strict" in result and result["strict"] != strict:
            raise ValueError(
                f"Tool/function already has a 'strict' key with value {result['strict']} which is "
                f"different from the explicit `strict` arg received {strict=}."
            )
        result["strict"] = strict
        if strict:
            result["parameters"] = _strict(result["parameters"])
    return result


def _from_dict(function: dict[str, Any]) -> dict[str, Any]:
    if "name" in function and "input_schema" in function:  # Anthropic
        out = {"name": function["name"], "parameters": function["input_schema"]}
        if "description" in function:
            out["description"] = function["description"]
        return out
    if "toolSpec" in function:  # Amazon Bedrock Converse
        spec = function["toolSpec"]
        out = {"name": spec["name"], "parameters": spec["inputSchema"]["json"]}
        if "description" in spec:
            out["description"] = spec["description"]
        return out
    if "name" in function:  # already an OpenAI function
        keep = ("name", "description", "parameters", "strict")
        return {k: v for k, v in function.items() if k in keep}
    if "title" in function:  # a JSON schema with a title
        rest = dict(function)
        out = {"name": rest.pop("title")}
        if "description" in rest:
            out["description"] = rest.pop("description")
        if rest and "properties" in rest:
            out["parameters"] = rest
        return out
    if "type" in function or "properties" in function:
        raise ValueError(
            f"Unsupported function\n\n{function}\n\nTo use a JSON schema as a function, it must "
            "have a top-level 'title' key to be used as the function name."
        )
    raise ValueError(
        f"Unsupported function\n\n{function}\n\nFunctions must be passed in as Dict, ..."
    )


def _from_tool(tool: BaseTool) -> dict[str, Any]:
    from actloop.tools._structured import Tool

    if isinstance(tool, Tool) and not tool.args_schema:
        return {
            "name": tool.name,
            "description": tool.description,
            "parameters": {
                "properties": {"__arg1": {"title": "__arg1", "type": "string"}},
                "required": ["__arg1"],
                "type": "object",
            },
        }
    schema = tool.tool_call_schema
    if not isinstance(schema, dict):
        schema = _schema.model_json_schema(schema)
    return _from_json_schema(schema, name=tool.name, description=tool.description)


def _from_json_schema(
    schema: dict[str, Any], *, name: str | None = None, description: str | None = None
) -> dict[str, Any]:
    schema = _deref(schema, schema, set())
    schema.pop("definitions", None)
    schema.pop("$defs", None)
    title = schema.pop("title", "")
    default_description = schema.pop("description", "")
    return {
        "name": name or title,
        "description": description or default_description,
        "parameters": _rm_titles(schema),
    }


def _index(part: str, size: int) -> int | None:
    """`part` as an index below `size`: ASCII digits only (`²` passes isdigit(), not int())."""
    if part.isascii() and part.isdigit() and len(part) <= len(str(size)) and int(part) < size:
        return int(part)
    return None


def _lookup(path: str, root: dict[str, Any]) -> Any:
    parts = path.split("/")
    if parts[0] != "#":
        raise ValueError(
            "ref paths are expected to be URI fragments, meaning they should start with #."
        )
    node: Any = root
    for part in parts[1:]:
        if isinstance(node, dict) and part in node:
            node = cast("dict[str, Any]", node)[part]
        elif isinstance(node, list) and (index := _index(part, len(node))) is not None:  # pyright: ignore[reportUnknownArgumentType]
            node = cast("list[Any]", node)[index]
        else:
            raise KeyError(f"Reference '{path}' not found.")
    return copy.deepcopy(node)


def _deref(obj: Any, root: dict[str, Any], active: set[str]) -> Any:
    """Inline `$ref`s (cycles cut), leaving `$defs` as is: langchain-core's `dereference_refs`."""
    if isinstance(obj, list):
        return [_deref(item, root, active) for item in obj]  # pyright: ignore[reportUnknownVariableType]
    if not isinstance(obj, dict):
        return obj
    ref = obj.get("$ref")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    rest = {k: v for k, v in obj.items() if k != "$ref"}  # pyright: ignore[reportUnknownVariableType]
    if ref is None or ref in active:
        return _deref_items(rest, root, active)  # pyright: ignore[reportUnknownArgumentType]
    active.add(ref)  # pyright: ignore[reportUnknownArgumentType]
    resolved = _deref(_lookup(ref, root), root, active)  # pyright: ignore[reportUnknownArgumentType]
    active.remove(ref)  # pyright: ignore[reportUnknownArgumentType]
    if not rest:
        return resolved
    merged: dict[str, Any] = dict(resolved) if isinstance(resolved, dict) else {}  # pyright: ignore[reportUnknownArgumentType]
    merged.update(_deref_items(rest, root, active))  # pyright: ignore[reportUnknownArgumentType]
    return merged


def _deref_items(obj: dict[str, Any], root: dict[str, Any], active: set[str]) -> dict[str, Any]:
    return {
        k: copy.deepcopy(v) if k == "$defs" else _deref(v, root, active) for k, v in obj.items()
    }


def _rm_titles(kv: dict[str, Any], prev_key: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in kv.items():
        if key == "title":
            if isinstance(value, dict) and prev_key == "properties":
                out[key] = _rm_titles(value, key)  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(value, dict):
            out[key] = _rm_titles(value, key)  # pyright: ignore[reportUnknownArgumentType]
        else:
            out[key] = value
    return out


def _strict(schema: Any) -> Any:
    """Close every object (`additionalProperties: false`), all fields required: OpenAI strict."""
    if not isinstance(schema, dict):
        return schema
    properties = schema.get("properties")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if isinstance(properties, dict) and properties:
        schema["required"] = list(properties)  # pyright: ignore[reportUnknownArgumentType]
    if (
        "required" in schema
        or ("properties" in schema and not schema["properties"])
        or ("additionalProperties" in schema)
    ):
        schema["additionalProperties"] = False
    for key in ("anyOf", "allOf"):
        for sub in schema.get(key) or ():  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            _strict(sub)
    for sub in (schema.get("properties") or {}).values():  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        _strict(sub)
    if "items" in schema:
        _strict(schema["items"])
    for key in ("$defs", "definitions"):
        if isinstance(defs := schema.get(key), dict):  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            for sub in defs.values():  # pyright: ignore[reportUnknownVariableType]
                _strict(sub)
    return schema  # pyright: ignore[reportUnknownVariableType]
