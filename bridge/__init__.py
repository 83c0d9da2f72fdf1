"""trustbridge bridge: WebSocket hub, routing policy, protocol and agent surfaces."""
