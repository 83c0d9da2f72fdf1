"""trustbridge bridge: WebSocket hub, routing policy, protocol and agent surfaces."""

if __name__ in ("bridge", "supervisor"):  # the old name: trustbridge/_names.py
    from trustbridge._names import refuse_old_name

    refuse_old_name(__name__)
