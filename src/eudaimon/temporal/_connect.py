"""How eudaimon reaches a Temporal server: where, from its engine URL; how, from Temporal's own
client configuration.

The address and namespace are the engine's (`temporal://host:port/queue?namespace=N`). TLS, mTLS
client certificates, an API key and gRPC metadata come from Temporal's environment configuration,
as Temporal's CLI and SDKs read it: `TEMPORAL_TLS_*`, `TEMPORAL_API_KEY`, `TEMPORAL_GRPC_META_*`,
or a profile of its TOML file (`TEMPORAL_PROFILE`, `TEMPORAL_CONFIG_FILE`). Credentials never
travel in the engine URL, which every run's `run_started` journals and operators are shown:
each process that reaches the fleet (a caller, a worker, a server, the CLI) reads them from its
own environment.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client
from temporalio.envconfig import ClientConfig

from eudaimon.core.errors import ConfigurationError


def connection_options() -> dict[str, Any]:
    """`Client.connect`'s TLS, API key and metadata from Temporal's client configuration (none
    when nothing is configured); its address and namespace are left to the engine URL.

    Raises:
        ConfigurationError: the configuration does not load (a certificate path that does not
            exist, a profile file that does not parse).
    """
    try:
        config = ClientConfig.load_client_connect_config()
    except Exception as exc:
        raise ConfigurationError(
            f"Temporal's client configuration does not load: {exc}. Fix the TEMPORAL_* environment variables "
            "or the profile file (TEMPORAL_CONFIG_FILE) they name"
        ) from exc
    return {key: config[key] for key in ("tls", "api_key", "rpc_metadata") if key in config}


async def connect(target: str, namespace: str) -> Client:
    """A client of the Temporal server at `target`, configured as Temporal's tools would be."""
    return await Client.connect(target, namespace=namespace, **connection_options())
