"""`GET /v1/whoami`: who the presented key signs in as, so a page can show it and offer only
what that role may do (the API refuses the rest anyway)."""

from fastapi import APIRouter
from pydantic import BaseModel, Field

from eudaimon.server.context import Ctx, Viewer
from eudaimon.server.responses import ERRORS


class WhoAmI(BaseModel):
    principal: str = Field(description="The name journaled as `by` for this key's decisions.")
    role: str = Field(description="viewer (reads) or operator (also starts runs and decides).")


router = APIRouter(prefix="/v1", tags=["auth"], responses=ERRORS)


@router.get("/whoami", summary="Who this key is", response_model=WhoAmI)
async def whoami(ctx: Ctx, principal: Viewer) -> dict[str, str]:
    """The principal and role of the key sent (`anonymous`, operator, on a server without keys)."""
    return {"principal": principal.name, "role": principal.role.value}
