"""`GET /v1/webhooks/deliveries`: each webhook delivery and the receiver's answers (operators only).

No request here names a URL or changes where deliveries go: the receiver is the server's
configuration (`server.webhooks`).
"""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from eudaimon.server import outbox
from eudaimon.server.context import Ctx, Operator
from eudaimon.server.responses import ERRORS
from eudaimon.stores.records import RecordStore


class Attempt(BaseModel):
    at: str
    status: int | None = Field(description="The receiver's HTTP status; null when it could not be reached.")
    error: str | None
    duration_ms: int


class DeliveryView(BaseModel):
    id: str = Field(description="The `webhook-id` sent: the same on every attempt.")
    event: str
    run_id: str
    seq: int
    state: str = Field(description="pending, delivered, or failed (attempts spent).")
    created_at: str
    attempts: list[Attempt]


class DeliveryList(BaseModel):
    configured: bool = Field(description="Whether this server delivers webhooks.")
    deliveries: list[DeliveryView]


router = APIRouter(prefix="/v1/webhooks", tags=["webhooks"], responses=ERRORS)


@router.get("/deliveries", summary="List webhook deliveries", response_model=DeliveryList)
async def list_deliveries(
    ctx: Ctx, principal: Operator, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> dict[str, Any]:
    """Deliveries, newest first, each with its attempts and the receiver's answers."""
    store = ctx.store
    if not isinstance(store, RecordStore):
        return {"configured": ctx.delivers_webhooks, "deliveries": []}
    found = await outbox.deliveries(store, limit)
    return {
        "configured": ctx.delivers_webhooks,
        "deliveries": [{k: v for k, v in d.to_dict().items() if k != "payload"} for d in found],
    }
