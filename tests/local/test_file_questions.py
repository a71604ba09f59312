"""The embedded agent on file questions (issue 19): the grammar's paths and a real run."""

from __future__ import annotations

from pathlib import Path

from actloop.models._local_prompt import reply_schema, root_paths
from actloop.models.local import LocalChatModel, local_json_agent
from actloop.tools.builtin import get_builtin_tools

from ._run import run_json


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.md").write_text("- water the plants\n")
    (tmp_path / "motto.txt").write_text("Measure twice, cut once.\n")
    (tmp_path / ".hidden").write_text("secret\n")
    return tmp_path


def test_root_paths_lists_files_and_folders_without_hidden_ones(tmp_path: Path) -> None:
    assert root_paths(_folder(tmp_path)) == (["motto.txt", "notes/todo.md"], [".", "notes"])
    assert root_paths(tmp_path / "missing") is None


def test_root_paths_gives_up_on_a_big_tree(tmp_path: Path) -> None:
    for i in range(501):
        (tmp_path / f"f{i}.txt").write_text("x")
    assert root_paths(tmp_path) is None


def test_reply_schema_puts_arguments_first_and_limits_paths_to_the_root(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    tools = get_builtin_tools(["read_file", "list_dir"], root=root)
    replies = reply_schema(tools, root)["oneOf"]
    assert [list(r["properties"]) for r in replies] == [["action_input", "action"]] * 3
    read, listing, final = (r["properties"] for r in replies)
    assert read["action"] == {"const": "read_file"}
    assert read["action_input"]["properties"]["path"] == {"enum": ["motto.txt", "notes/todo.md"]}
    assert listing["action_input"]["properties"]["path"] == {"enum": [".", "notes"]}
    assert final == {"action_input": {"type": "string"}, "action": {"const": "Final Answer"}}
    unlimited = reply_schema(tools)["oneOf"][0]["properties"]["action_input"]["properties"]
    assert unlimited["path"] == {"type": "string", "pattern": "^[A-Za-z0-9_./-]+$"}


def test_the_agent_reads_the_file_the_question_names(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    tools = get_builtin_tools(["read_file", "list_dir"], root=root)
    agent = local_json_agent(LocalChatModel(seed=0), tools, root)
    step = agent.invoke({"input": "What does the file motto.txt say?", "intermediate_steps": []})
    assert getattr(step, "tool", None) == "read_file"
    assert getattr(step, "tool_input", None) == {"path": "motto.txt"}


def test_file_question_through_actloop_run_json(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    options = ("--tools", "read_file,list_dir", "--root", str(root))
    result = run_json("What does the file motto.txt say?", *options)
    steps = result["intermediate_steps"]
    assert [s[0]["kwargs"]["tool"] for s in steps] == ["read_file"]
    assert steps[0][1] == "Measure twice, cut once.\n"
    assert "measure twice, cut once" in result["output"].lower()  # as bench/eval_local.py scores
