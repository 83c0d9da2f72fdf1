"""The MCP server over streamable HTTP on 127.0.0.1, behind a static bearer token.

Any local process (and any web page, which may POST to localhost) can reach a loopback
port, and ``browser_evaluate`` runs script in the user's pages, so (design.md §8):

- every request to ``/mcp`` must carry ``Authorization: Bearer <token>``; anything else
  gets 401 from the ``mcp`` package's bearer middleware before the MCP transport or a
  tool sees it. The token is compared in constant time (:class:`StaticTokenVerifier`).
- a request with an ``Origin`` header, i.e. one a browser sent for a web page, gets 403
  even with the token (MCP clients are programs and send none); the package's
  DNS-rebinding check also refuses a ``Host`` that is not loopback (421).
"""

from __future__ import annotations

import hmac

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings

from . import code
from .server import build_server
from .session import Connection

CLIENT_ID = "trustbridge-mcp-http"
"""The one principal every holder of the token is (sessions are not told apart by it)."""


class StaticTokenVerifier:
    """The ``mcp`` package's ``TokenVerifier`` for one fixed token."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("empty bearer token")
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        """An access token for ``token`` when it is the configured one, else None (→ 401).

        ``hmac.compare_digest`` takes time independent of where the strings differ.
        """
        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(token="", client_id=CLIENT_ID, scopes=[])


def security_settings() -> TransportSecuritySettings:
    """Loopback ``Host`` only, and no ``Origin`` at all: the package's default would let
    any page served from ``http://127.0.0.1:*`` or ``http://localhost:*`` in."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=[],
    )


async def run_http(conn: Connection, port: int, token: str, host: str = "127.0.0.1") -> None:
    """Serve MCP over streamable HTTP at ``http://host:port/mcp`` until cancelled (uvicorn
    handles SIGINT/SIGTERM); then close ``conn``.

    Args:
        conn: the bridge connection every HTTP client's tool calls share.
        port: TCP port to listen on.
        token: the bearer token every request must carry (non-empty).
        host: the address to bind; 127.0.0.1 (design.md §8).
    """
    import uvicorn

    server = build_server(conn)
    # The package's bearer middleware is switched on by AuthSettings; it has no OAuth
    # server here (no auth_server_provider) and publishes no resource metadata
    # (resource_server_url None), so issuer_url is only a required field.
    app = server.streamable_http_app(
        host=host, transport_security=security_settings(),
        auth=AuthSettings(issuer_url=f"http://{host}:{port}", resource_server_url=None),
        token_verifier=StaticTokenVerifier(token))
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    try:
        await uvicorn.Server(config).serve()
    finally:
        with anyio.CancelScope(shield=True):
            await code.close_runtime(conn)  # its worker, if browser_exec started one
            await conn.close()
