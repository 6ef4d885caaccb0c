"""Bad input gets a clear JSON error and changes nothing.

Every error answers `{"detail": …}`: a sentence, or for a malformed request (422) FastAPI's
list of problems, each with the `loc` of the field, plus a one-line `message` naming them.
Journal errors map to statuses here, once: an unknown run is 404, a decision the run cannot
take now is 409. A body over the limit is refused (413) before it is read in full.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from eudaimon.core.errors import ConfigurationError, InvalidOperation, LeaseHeld, RunNotFound

MAX_BODY_BYTES = 1_000_000


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(RunNotFound, _status(404))
    app.add_exception_handler(InvalidOperation, _status(409))
    app.add_exception_handler(LeaseHeld, _status(409))
    app.add_exception_handler(ConfigurationError, _status(422))


async def _invalid(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems: list[dict[str, Any]] = [
        {k: v for k, v in error.items() if k in ("type", "loc", "msg")} for error in exc.errors()
    ]
    named = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in problems)
    return JSONResponse({"detail": jsonable_encoder(problems), "message": f"invalid request: {named}"}, status_code=422)


def _status(code: int) -> Any:
    async def handler(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=code)

    return handler


class BodyLimit:
    """Refuse request bodies over `max_bytes` with 413, by `Content-Length` or while streaming."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._refuse(send)
                return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if not started:
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        body = f'{{"detail":"the request body is over {self.max_bytes} bytes; send less"}}'.encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass
