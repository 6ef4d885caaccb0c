"""The bodies the API accepts. Unknown fields are refused (422), so a body cannot claim `by`:
who decided is always the principal of the key that sent it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator

from eudaimon.server.ids import VisibleId

SEQ_MAX = 2**62
"""No journal gets near it; larger numbers are refused (422) before they reach a store."""
RUN_ID_PATTERN = r"^[A-Za-z0-9_.:\-]{1,128}$"


class RequestBody(BaseModel):
    """A request body: a field the API does not know is refused (422), never silently dropped."""

    model_config = ConfigDict(extra="forbid")


class StartRun(RequestBody):
    input: str = Field(description="The user's message that starts the run.", max_length=500_000)
    thread_id: VisibleId | None = Field(
        None, description="The conversation this run continues.", min_length=1, max_length=256
    )
    run_id: str | None = Field(
        None, description="The id to give the run; sending it again answers with the same run.", pattern=RUN_ID_PATTERN
    )


class Approval(RequestBody):
    approved: StrictBool = Field(
        description="true to let the call run, false to deny it (the model sees the denial): a JSON boolean, "
        'never a string ("false" is refused, not read as true).'
    )
    note: str | None = Field(None, description="Why; kept in the journal with who decided.", max_length=10_000)
    arguments: dict[str, Any] | None = Field(
        None,
        description="With an approval: the approver's edit of the call's arguments, checked against the tool's "
        "schema (422 naming the problem, nothing journaled); the call runs with them.",
    )


class Reconciliation(RequestBody):
    output: str | None = Field(None, description="What the call did, as its result.", max_length=500_000)
    retry: StrictBool = Field(False, description="Run the call again instead (its idempotency key is unchanged).")

    @model_validator(mode="after")
    def _exactly_one(self) -> Reconciliation:
        if (self.output is None) == (not self.retry):
            raise ValueError("give exactly one of `output` (what the call did) or `retry: true`")
        return self


class Fork(RequestBody):
    at_seq: int = Field(ge=0, le=SEQ_MAX, description="The last event of the parent's history the fork keeps.")
    start: bool = Field(True, description="False creates the fork without driving it; start it later with resume.")


class Cancel(RequestBody):
    reason: str = Field("cancelled by an operator", max_length=10_000)


class Prompt(RequestBody):
    input: str = Field(max_length=500_000)
    thread_id: VisibleId | None = Field(None, min_length=1, max_length=256)
    agent: VisibleId | None = Field(
        None, description="The agent to prompt; may be left out when the server serves one.", min_length=1
    )
