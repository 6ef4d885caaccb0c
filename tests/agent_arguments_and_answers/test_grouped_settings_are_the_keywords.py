"""`limits=`, `approvals=` and `durability=` are the documented keywords grouped: an agent built
either way runs with the same values, and a value given both ways, differently, is refused
(never silently one of the two)."""

from __future__ import annotations

import pytest

from eudaimon import Agent, ApprovalSettings, DurabilitySettings, RunLimits
from eudaimon.agent.agent_runtime import runtime_of
from eudaimon.errors import ConfigurationError
from eudaimon.models import FunctionModel
from eudaimon.stores import MemoryStore


def _model() -> FunctionModel:
    return FunctionModel(lambda request: "ok")


def test_a_group_and_its_keywords_build_the_same_agent() -> None:
    store = MemoryStore()
    policy = lambda call, tool: None  # noqa: E731
    grouped = Agent(
        _model(),
        limits=RunLimits(max_iterations=3, max_output_retries=0, max_waits=1, tool_timeout_s=2.0),
        approvals=ApprovalSettings(policy=policy, timeout_s=60, on_timeout="cancel"),
        durability=DurabilitySettings(store=store, version="v7", on_change="refuse"),
    )
    flat = Agent(
        _model(),
        max_iterations=3,
        max_output_retries=0,
        max_waits=1,
        tool_timeout_s=2.0,
        approval_policy=policy,
        approval_timeout_s=60,
        on_approval_timeout="cancel",
        store=store,
        version="v7",
        on_change="refuse",
    )
    for agent in (grouped, flat):
        config = runtime_of(agent).config
        assert (config.decide.max_iterations, config.decide.max_finish_rejections) == (3, 1)
        assert (config.max_waits, config.tool_timeout_s) == (1, 2.0)
        assert (config.approval_policy, config.approval_timeout_s, config.on_approval_timeout) == (policy, 60, "cancel")
        assert agent.store is store and agent.approval_policy is policy
        assert (runtime_of(agent).identity.version, runtime_of(agent).identity.on_change) == ("v7", "refuse")
    assert (
        grouped.limits == flat.limits and grouped.approvals == flat.approvals and grouped.durability == flat.durability
    )


def test_a_keyword_fills_in_what_the_group_leaves_at_its_default() -> None:
    agent = Agent(_model(), limits=RunLimits(max_iterations=4), max_waits=2)
    assert agent.limits == RunLimits(max_iterations=4, max_waits=2)


def test_the_same_value_both_ways_is_no_conflict() -> None:
    agent = Agent(_model(), limits=RunLimits(max_iterations=4), max_iterations=4)
    assert agent.decide_config.max_iterations == 4


def test_a_value_given_both_ways_differently_is_refused_without_showing_it() -> None:
    with pytest.raises(ConfigurationError, match=r"max_iterations= and limits=RunLimits\(max_iterations=…\)"):
        Agent(_model(), limits=RunLimits(max_iterations=4), max_iterations=5)
    secret = "postgresql://app:hunter2@db/runs"
    with pytest.raises(ConfigurationError) as refused:
        Agent(_model(), durability=DurabilitySettings(store=secret), store="sqlite:///other.db")
    assert "hunter2" not in str(refused.value)


def test_a_group_refuses_a_value_that_cannot_work_where_it_is_written() -> None:
    with pytest.raises(ConfigurationError, match="max_iterations must be at least 1"):
        RunLimits(max_iterations=0)
    with pytest.raises(ConfigurationError, match="on_approval_timeout must be 'deny' or 'cancel'"):
        ApprovalSettings(on_timeout="wait")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="on_change must be 'continue' or 'refuse'"):
        DurabilitySettings(on_change="merge")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="limits must be a RunLimits"):
        Agent(_model(), limits={"max_iterations": 3})  # type: ignore[arg-type]


def test_one_group_serves_many_agents() -> None:
    strict = RunLimits(max_iterations=2)
    first, second = Agent(_model(), limits=strict, name="a"), Agent(_model(), limits=strict, name="b")
    assert first.limits is strict and second.limits is strict
