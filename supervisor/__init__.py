"""trustbridge supervisor: launches the browser, stamps frame tokens, runs the input driver."""

if __name__ in ("bridge", "supervisor"):  # the old name: trustbridge/_names.py
    from trustbridge._names import refuse_old_name

    refuse_old_name(__name__)
