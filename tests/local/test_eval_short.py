"""A short version of bench/eval_local.py: one question per kind, run as a user runs it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench" / "eval_local.py"


def _eval() -> ModuleType:
    spec = importlib.util.spec_from_file_location("eval_local", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_local"] = module
    spec.loader.exec_module(module)
    return module


def test_the_checks_read_answers_exactly() -> None:
    ev = _eval()
    assert ev.numbers_in("It is 1,024 or -3.5, not 7x") == [1024.0, -3.5, 7.0]
    assert ev.hours_in("2026-12-03T15:06:45+09:00, or 2:05 PM, or 12:30 am") == {15, 14, 0}
    assert ev.number(89)({"output": "The answer is 89."}) is True
    assert ev.number(89)({"output": "The answer is 89.5."}) is False
    assert ev.no_tool_no_number({"output": "Hello!", "intermediate_steps": []}) is True
    assert ev.no_tool_no_number({"output": "I am 325.", "intermediate_steps": []}) is False


def test_short_eval_through_actloop_run_json() -> None:
    ev = _eval()
    quick = [q for q in ev.QUESTIONS if q.text in ev.SHORT]
    outcomes = ev.run_eval(quick, seeds=[0], echo=False)
    assert {o.question: o.correct for o in outcomes} == dict.fromkeys(ev.SHORT, True)
    assert {o.question: o.exit_code for o in outcomes} == dict.fromkeys(ev.SHORT, 0)
