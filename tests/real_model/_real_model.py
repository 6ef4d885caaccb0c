"""Where the real model of `conftest.py` answers."""

from __future__ import annotations

from dataclasses import dataclass

MODEL_NAME = "smollm2-135m"


@dataclass(frozen=True)
class RealModelServer:
    """Where the real model answers: `base_url` ends in `/v1`, as the OpenAI SDK wants it."""

    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model_string(self) -> str:
        return f"openai-compatible:{MODEL_NAME}"
