"""An MCPServer (mcp 2.x) whose tool asks a person for input (2026-07-28 `input_required`).

`book(city)` answers its first call with an elicitation (how many nights, a form) and a request
state naming the city; re-sent with the answer, it says exactly what it received. `trip(city)`
asks twice (nights, then breakfast), carrying the first answer in its request state. The request
state is sealed with a fixed key, so a server started again (a resumed CLI run) still opens it.

python asking.py                 serve over stdio
python asking.py --http PORT     serve streamable HTTP on 127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import json
import sys

from mcp.server.mcpserver import Context, MCPServer, RequestStateSecurity
from mcp.types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

PORT = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--http" else 8000
KEY = b"actloop-tests-request-state-key!!"
server = MCPServer(
    "asking",
    log_level="WARNING",
    request_state_security=RequestStateSecurity(keys=[KEY]),
)

NIGHTS = {
    "type": "object",
    "properties": {"nights": {"type": "integer", "description": "How many nights"}},
    "required": ["nights"],
}


@server.tool(structured_output=False)
async def book(city: str, ctx: Context) -> str | InputRequiredResult:
    """Book a hotel in a city (asks how many nights)."""
    answers = ctx.input_responses
    if not answers:
        form = ElicitRequestFormParams(
            message=f"How many nights in {city}?", requested_schema=NIGHTS
        )
        return InputRequiredResult(
            input_requests={"nights": ElicitRequest(params=form)},
            request_state=json.dumps({"city": city, "round": 1}),
        )
    received = {key: value.model_dump(exclude_none=True) for key, value in answers.items()}
    return f"received {json.dumps(received, sort_keys=True)} with state {ctx.request_state}"


@server.tool(structured_output=False)
async def trip(city: str, ctx: Context) -> str | InputRequiredResult:
    """Plan a trip (asks how many nights, then whether to book breakfast)."""
    answers = ctx.input_responses or {}
    state = json.loads(ctx.request_state) if ctx.request_state else {"city": city}
    if "nights" in answers:
        state["nights"] = answers["nights"].model_dump(exclude_none=True)
    if "nights" not in state:
        form = ElicitRequestFormParams(
            message=f"How many nights in {city}?", requested_schema=NIGHTS
        )
        return InputRequiredResult(
            input_requests={"nights": ElicitRequest(params=form)}, request_state=json.dumps(state)
        )
    if "breakfast" not in answers:
        schema = {"type": "object", "properties": {"breakfast": {"type": "boolean"}}}
        form = ElicitRequestFormParams(message="Breakfast too?", requested_schema=schema)
        return InputRequiredResult(
            input_requests={"breakfast": ElicitRequest(params=form)},
            request_state=json.dumps(state),
        )
    state["breakfast"] = answers["breakfast"].model_dump(exclude_none=True)
    return f"trip {json.dumps(state, sort_keys=True)}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=PORT)
    else:
        server.run("stdio")
