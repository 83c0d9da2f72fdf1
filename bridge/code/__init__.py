"""The persistent code runtime (issue 19, docs/code.md): Python code run in a worker
process per session, with ``browser`` and ``tab`` bound to the async SDK over a relay of
the session's own bridge connection.

:mod:`.runtime` (:class:`CodeRuntime`, :class:`ExecResult`: the parent's side),
:mod:`.worker` (``python -m trustbridge.bridge.code.worker``), :mod:`.process` (starting and
killing it), :mod:`.relay` (the worker's
``BridgeClient`` stand-in and the message shapes), :mod:`.output` (what is kept of a
call's output). It is local trusted code, NOT a sandbox.
"""

from .runtime import CodeRuntime, ExecResult

__all__ = ["CodeRuntime", "ExecResult"]
