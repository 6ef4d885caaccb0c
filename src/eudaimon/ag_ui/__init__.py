"""AG-UI: an eudaimon run as the event stream web front ends (CopilotKit, any AG-UI client) show.

Needs the `ag-ui` extra (`pip install -e '.[ag-ui]'`, the `ag-ui-protocol` package) and
the server: `create_app(..., ag_ui=True)` or `eudaimon serve --ag-ui` answers
`POST /v1/agents/{agent}/ag-ui` with a `RunAgentInput` by the run's AG-UI events.
"""

from eudaimon._extras import needs

with needs("ag-ui", "eudaimon.ag_ui"):
    from eudaimon.ag_ui._events import APPROVAL_SCHEMA

__all__ = ["APPROVAL_SCHEMA"]


def __dir__() -> list[str]:
    """The public names, not the helpers this module imports."""
    return sorted(__all__)
