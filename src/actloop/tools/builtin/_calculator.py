"""Safe arithmetic for the built-in calculator tool: an AST walker with size limits, never `eval`.

The walk is iterative (postfix order), so nesting depth cannot exhaust the Python stack; the
expression length bounds both the node count and the depth the parser accepts.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import TypeAlias

__all__ = [
    "MAX_EXPRESSION_LENGTH",
    "MAX_RESULT_DIGITS",
    "CalculatorError",
    "calculate",
]

Number: TypeAlias = "int | float"

MAX_EXPRESSION_LENGTH = 1_000
"""Longest expression accepted, in characters."""
MAX_RESULT_DIGITS = 1_000
"""Integers (results and intermediate values) may have about this many decimal digits."""
_MAX_BITS = math.ceil(MAX_RESULT_DIGITS / math.log10(2))
_MAX_ROUND_DIGITS = 100
_MAX_FACTORIAL = 1_000


class CalculatorError(ValueError):
    """The expression cannot be evaluated; the message says why, for the model to read."""


def _round(x: Number, ndigits: Number | None = None) -> Number:
    if ndigits is None:
        return round(x)
    if not isinstance(ndigits, int) or abs(ndigits) > _MAX_ROUND_DIGITS:
        raise CalculatorError(
            f"round() takes a whole number of digits between -{_MAX_ROUND_DIGITS} "
            f"and {_MAX_ROUND_DIGITS}"
        )
    return round(x, ndigits)


def _factorial(n: Number) -> int:
    if not isinstance(n, int) or not 0 <= n <= _MAX_FACTORIAL:
        raise CalculatorError(f"factorial() takes a whole number from 0 to {_MAX_FACTORIAL}")
    return math.factorial(n)


def _log(x: Number, base: Number | None = None) -> float:
    return math.log(x) if base is None else math.log(x, base)


def _abs(x: Number) -> Number:
    return abs(x)


def _floor(x: Number) -> int:
    return math.floor(x)


def _ceil(x: Number) -> int:
    return math.ceil(x)


def _min(*args: Number) -> Number:
    return min(args)


def _max(*args: Number) -> Number:
    return max(args)


_Function = Callable[..., Number]
# name -> (function, fewest arguments, most arguments or None for no limit)
_FUNCTIONS: dict[str, tuple[_Function, int, int | None]] = {
    "abs": (_abs, 1, 1),
    "round": (_round, 1, 2),
    "min": (_min, 1, None),
    "max": (_max, 1, None),
    "sqrt": (math.sqrt, 1, 1),
    "exp": (math.exp, 1, 1),
    "log": (_log, 1, 2),
    "log10": (math.log10, 1, 1),
    "log2": (math.log2, 1, 1),
    "sin": (math.sin, 1, 1),
    "cos": (math.cos, 1, 1),
    "tan": (math.tan, 1, 1),
    "asin": (math.asin, 1, 1),
    "acos": (math.acos, 1, 1),
    "atan": (math.atan, 1, 1),
    "floor": (_floor, 1, 1),
    "ceil": (_ceil, 1, 1),
    "factorial": (_factorial, 1, 1),
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}

_BINARY_SYMBOLS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
}
_SUPPORTED = "numbers, + - * / // % ** and parentheses"


def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression such as `2 * (3 + 4) ** 2` or `sqrt(2) / 3`.

    Supports numbers, + - * / // % ** (use ** for powers, not ^), parentheses, the constants
    pi, e, tau and the functions abs, round, min, max, sqrt, exp, log (log(x) or log(x, base)),
    log10, log2, sin, cos, tan, asin, acos, atan (radians), floor, ceil, factorial.
    round() rounds halves to even (round(2.5) is 2).
    Whole numbers print without a decimal point ("12", also for 24 / 2); other results print
    with up to 15 significant digits ("0.3", "1.4142135623731", "1e+20").
    Raises CalculatorError with a readable message for anything it cannot compute.
    """
    tree = _parse(expression)
    return _format(_evaluate(_postfix(tree.body)))


def _parse(expression: str) -> ast.Expression:
    text = expression.strip()
    if not text:
        raise CalculatorError("the expression is empty")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise CalculatorError(
            f"the expression is too long ({len(text)} characters; the limit is "
            f"{MAX_EXPRESSION_LENGTH})"
        )
    try:
        return ast.parse(text, mode="eval")
    except SyntaxError as exc:
        if "nested" in str(exc):
            raise CalculatorError("the expression is nested too deeply") from None
        detail = f" ({exc.msg})" if exc.msg else ""
        raise CalculatorError(f"the expression is not valid arithmetic{detail}") from None
    except (ValueError, RecursionError, MemoryError, OverflowError):
        raise CalculatorError("the expression is not valid arithmetic") from None


def _postfix(root: ast.expr) -> list[ast.expr]:
    """Check every node and return them children-first, without recursion."""
    order: list[ast.expr] = []
    pending: list[tuple[ast.expr, bool]] = [(root, False)]
    while pending:
        node, expanded = pending.pop()
        if expanded:
            order.append(node)
            continue
        pending.append((node, True))
        pending.extend((child, False) for child in reversed(_children(node)))
    return order


def _children(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY_SYMBOLS:
            raise CalculatorError(_unsupported_operator(node.op))
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.UAdd, ast.USub)):
            raise CalculatorError(f"only + and - can come before a number; supported: {_SUPPORTED}")
        return [node.operand]
    if isinstance(node, ast.Call):
        return _check_call(node)
    if isinstance(node, ast.Name):
        if node.id not in _CONSTANTS:
            raise CalculatorError(
                f"unknown name {node.id!r}; constants are {', '.join(_CONSTANTS)}"
            )
        return []
    if isinstance(node, ast.Constant):
        if type(node.value) not in (int, float):
            raise CalculatorError(f"{node.value!r} is not a number; supported: {_SUPPORTED}")
        return []
    raise CalculatorError(f"this kind of expression is not supported; supported: {_SUPPORTED}")


def _check_call(node: ast.Call) -> list[ast.expr]:
    name = node.func.id if isinstance(node.func, ast.Name) else None
    if name not in _FUNCTIONS:
        known = ", ".join(_FUNCTIONS)
        shown = f"function {name!r}" if name else "this function call"
        raise CalculatorError(f"unknown {shown}; available functions: {known}")
    if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
        raise CalculatorError(f"{name}() takes plain positional arguments only")
    _, fewest, most = _FUNCTIONS[name]
    if len(node.args) < fewest or (most is not None and len(node.args) > most):
        wanted = f"{fewest}" if fewest == most else f"at least {fewest}"
        if most is not None and most != fewest:
            wanted = f"{fewest} or {most}"
        raise CalculatorError(f"{name}() takes {wanted} argument(s), got {len(node.args)}")
    return list(node.args)


def _unsupported_operator(op: ast.operator) -> str:
    if isinstance(op, ast.BitXor):
        return "^ is not supported; use ** for powers, e.g. 2 ** 10"
    return f"this operator is not supported; supported: {_SUPPORTED}"


def _evaluate(order: list[ast.expr]) -> Number:
    stack: list[Number] = []
    for node in order:
        if isinstance(node, ast.BinOp):
            right = stack.pop()
            left = stack.pop()
            value = _binary(node.op, left, right)
        elif isinstance(node, ast.UnaryOp):
            operand = stack.pop()
            value = -operand if isinstance(node.op, ast.USub) else operand
        elif isinstance(node, ast.Call):
            count = len(node.args)
            args = stack[len(stack) - count :]
            del stack[len(stack) - count :]
            value = _call(node, args)
        elif isinstance(node, ast.Name):
            value = _CONSTANTS[node.id]
        else:
            assert isinstance(node, ast.Constant)
            value = _as_number(node.value)
        stack.append(_checked(value))
    return stack.pop()


def _as_number(value: object) -> Number:
    assert isinstance(value, (int, float))
    return value


def _binary(op: ast.operator, left: Number, right: Number) -> Number:
    try:
        if isinstance(op, ast.Add):
            return left + right
        if isinstance(op, ast.Sub):
            return left - right
        if isinstance(op, ast.Mult):
            return left * right
        if isinstance(op, ast.Div):
            return left / right
        if isinstance(op, ast.FloorDiv):
            return left // right
        if isinstance(op, ast.Mod):
            return left % right
        return _power(left, right)
    except ZeroDivisionError:
        raise CalculatorError("division by zero") from None
    except OverflowError:
        raise CalculatorError("the result is too large") from None


def _power(base: Number, exponent: Number) -> Number:
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        # Refuse before computing: |base| ** exponent has about exponent * log2|base| bits.
        if exponent > _MAX_BITS or exponent * math.log2(abs(base)) > _MAX_BITS + 1:
            raise _too_large()
    result = base**exponent
    if isinstance(result, complex):
        raise CalculatorError("the result is a complex number, which is not supported")
    return result


def _call(node: ast.Call, args: list[Number]) -> Number:
    assert isinstance(node.func, ast.Name)
    name = node.func.id
    function = _FUNCTIONS[name][0]
    try:
        return function(*args)
    except ZeroDivisionError:
        raise CalculatorError("division by zero") from None
    except OverflowError:
        raise CalculatorError(f"the result of {name}() is too large") from None
    except (ValueError, TypeError) as exc:
        if isinstance(exc, CalculatorError):
            raise
        raise CalculatorError(f"{name}() is not defined for these arguments") from None


def _checked(value: Number) -> Number:
    if isinstance(value, int):
        if value.bit_length() > _MAX_BITS:
            raise _too_large()
    elif not math.isfinite(value):
        raise CalculatorError("the result is too large (not a finite number)")
    return value


def _too_large() -> CalculatorError:
    return CalculatorError(
        f"the result is too large (integers are limited to about {MAX_RESULT_DIGITS} digits)"
    )


def _format(value: Number) -> str:
    if isinstance(value, int):
        return str(value)
    text = f"{value:.15g}"
    return "0" if text == "-0" else text
