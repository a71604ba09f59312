"""Invariant fuzzing of the whole loop: random scripted models x random tool behaviours x every
executor setting, each scenario run through invoke, ainvoke, stream, astream and iter.

Invariants checked on every run: it ends; the model is called exactly as the loop's rules say and
never more than `max_iterations` (+1 for "generate"); it raises only the documented errors (the
model's or a tool's own exception, or the parse-error ValueError) and the error carries the steps
done; `intermediate_steps` are the steps the tools ran, in action order, with the observations
they returned; streamed steps agree with the final ones; callbacks open and close the run once;
and every entry point gives the same result. Replay a failure with the seed in the header
(`ACTLOOP_RELIABILITY_SEED`) or the printed `@reproduce_failure` blob.
"""

from __future__ import annotations

import os
from collections import Counter as Multiset

from hypothesis import HealthCheck, event, given, note, seed, settings

from ._support import (
    MODES,
    PARSE_ERROR_PREFIX,
    SEED,
    Expected,
    Outcome,
    Scenario,
    expect,
    run_all_modes,
    scenarios,
)

EXAMPLES = int(os.environ.get("ACTLOOP_FUZZ_EXAMPLES", "400"))


def _is_subsequence(part: list[object], whole: list[object]) -> bool:
    it = iter(whole)
    return all(any(x == y for y in it) for x in part)


def _check_failure(exp: Expected, out: Outcome) -> None:
    assert out.error is not None, f"{out.mode}: expected an error, got output {out.output!r}"
    kind = type(out.error)
    assert kind in exp.errors, f"{out.mode}: undocumented error {out.error!r}"
    if kind is ValueError:
        assert str(out.error).startswith(PARSE_ERROR_PREFIX)
    else:
        assert str(out.error) in exp.errors[kind]
    assert out.steps[: len(exp.steps)] == exp.steps, out.mode
    assert _is_subsequence(out.steps[len(exp.steps) :], exp.extras), out.mode  # type: ignore[arg-type]
    assert not Multiset(out.ran) - Multiset(exp.ran), out.mode
    if out.counts is not None:
        assert out.counts.get("chain_start") == 1
        assert out.counts.get("chain_error") == 1
        assert "chain_end" not in out.counts


def _check_success(exp: Expected, out: Outcome) -> None:
    if out.error is not None:
        raise AssertionError(f"{out.mode}: unexpected error") from out.error
    if exp.output_prefix is not None:
        assert isinstance(out.output, str) and out.output.startswith(exp.output_prefix)
    else:
        assert out.output == exp.output, out.mode
    assert out.steps == exp.steps, out.mode
    assert Multiset(out.ran) == Multiset(exp.ran), out.mode
    if out.mode in ("stream", "astream"):
        assert out.streamed_steps == out.steps
    elif out.mode == "iter":
        assert out.streamed_steps is not None
        assert out.steps[: len(out.streamed_steps)] == out.streamed_steps
        assert len(out.streamed_steps) >= len(out.steps) - 1  # a return_direct step ends it
    if out.counts is not None:
        counts = out.counts
        assert (counts.get("chain_start"), counts.get("chain_end")) == (1, 1), counts
        assert "chain_error" not in counts and "tool_error" not in counts, counts
        assert counts.get("tool_start", 0) == counts.get("tool_end", 0) == len(out.steps), counts


def check(sc: Scenario, exp: Expected, out: Outcome) -> None:
    """Every invariant for one run."""
    assert out.model_calls == exp.model_calls, out.mode
    if sc.max_iterations is not None:
        extra = 1 if sc.early_stopping_method == "generate" else 0
        assert out.model_calls <= sc.max_iterations + extra
    if exp.fails:
        _check_failure(exp, out)
    else:
        _check_success(exp, out)


def _summary(out: Outcome) -> tuple[object, ...]:
    error = None if out.error is None else (type(out.error), str(out.error))
    return (out.output, error, out.steps, out.model_calls)


@seed(SEED)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(scenarios())
def test_loop_invariants_hold_for_random_models_and_tools(sc: Scenario) -> None:
    note(f"reliability seed {SEED}; scenario {sc!r}")
    exp = expect(sc)
    event(
        f"{sc.agent}: "
        + (f"raises {sorted(e.__name__ for e in exp.errors)}" if exp.fails else "returns")
    )
    event(f"model calls: {exp.model_calls}, steps: {min(len(exp.steps), 4)}+")
    outcomes = run_all_modes(sc)
    assert [o.mode for o in outcomes] == list(MODES)
    for out in outcomes:
        check(sc, exp, out)
    if not exp.racy:  # no failing multi-call step: nothing depends on thread timing
        first = _summary(outcomes[0])
        assert all(_summary(o) == first for o in outcomes[1:])
