"""trustbridge supervisor: launches the browser, stamps frame tokens, runs the input driver."""
