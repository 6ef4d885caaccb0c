"""What an MCP server reports a call spent (`_meta["io.eudaimon/usage"]`) can only add to the
caller's run: a count that is negative, not a number, a bool or past 2**53 is read as 0, a
cost that is not a finite non-negative number as unpriced, and a result without the key as
nothing spent."""

from __future__ import annotations

import math

import mcp_types

from eudaimon.core.messages import Usage
from eudaimon.mcp._tools import USAGE_META_KEY, spent


def _result(reported: object) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=[], meta={USAGE_META_KEY: reported})


def test_a_plain_report_is_read_as_sent() -> None:
    report = {"input_tokens": 100, "output_tokens": 20, "cached_tokens": 40, "cost_usd": 0.12}
    assert spent(_result(report)) == (Usage(100, 20, 40), 0.12)


def test_malformed_counts_add_nothing_and_a_bad_cost_is_unpriced() -> None:
    for bad in (-5, "100", True, None, math.inf, math.nan, [1]):
        report = {"input_tokens": bad, "output_tokens": 3, "cost_usd": bad}
        assert spent(_result(report)) == (Usage(0, 3, 0), None), bad
    assert spent(_result({"input_tokens": 2**60}))[0] == Usage(0, 0, 0)  # no count past 2**53


def test_no_report_is_nothing_spent() -> None:
    assert spent(mcp_types.CallToolResult(content=[])) == (None, None)
    assert spent(_result("a lot")) == (None, None)
