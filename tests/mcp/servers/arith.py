"""An MCPServer (mcp 2.x) with one tool, `calculator`, for the CLI test with the embedded model."""

from __future__ import annotations

import ast
import operator

from mcp.server.mcpserver import MCPServer

server = MCPServer("arith", log_level="WARNING")

_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left), _eval(node.right))
    raise ValueError("only + - * / on numbers")


@server.tool(structured_output=False)
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression such as 2 * (3 + 4)."""
    value = _eval(ast.parse(expression, mode="eval").body)
    return str(int(value)) if float(value).is_integer() else str(value)


if __name__ == "__main__":
    server.run("stdio")
