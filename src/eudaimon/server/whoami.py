"""`GET /v1/whoami`: who the presented key signs in as, so a page can show it and offer only
what that role may do (the API refuses the rest anyway)."""

from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from eudaimon.server.auth import Principal
from eudaimon.server.context import ServerContext, guards
from eudaimon.server.responses import ERRORS


class WhoAmI(BaseModel):
    principal: str = Field(description="The name journaled as `by` for this key's decisions.")
    role: str = Field(description="viewer (reads) or operator (also starts runs and decides).")


def router(ctx: ServerContext) -> APIRouter:
    viewer, _ = guards(ctx)
    api = APIRouter(prefix="/v1", tags=["auth"], responses=ERRORS)

    @api.get("/whoami", summary="Who this key is", response_model=WhoAmI)
    async def whoami(principal: Annotated[Principal, Depends(viewer)]) -> dict[str, str]:
        """The principal and role of the key sent (`anonymous`, operator, on a server without keys)."""
        return {"principal": principal.name, "role": principal.role.value}

    return api
