"""What one call of the code runtime answers: :class:`ExecResult`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ExecResult:
    """What one :meth:`CodeRuntime.run` (or :meth:`CodeRuntime.more`) answers.

    Attributes:
        output: printed text (stdout and stderr interleaved as written), this page of it.
        value: repr of the last expression's value (None: no expression, or it was None),
            cut to the output budget.
        error: the traceback (the user's frames only), or why the call ended (timeout,
            a worker that died); None on success.
        timed_out: the call ran past its timeout and was stopped.
        cancelled: the caller cancelled the call (only for results built by callers that
            catch the CancelledError; :meth:`CodeRuntime.run` re-raises it).
        reset: state was lost: :attr:`reset_before`, or the worker was killed or died
            during this call (:attr:`timed_out`, :attr:`died`).
        reset_before: this call ran in a fresh worker: the previous one had died between
            calls or was killed after a cancel, so the state of earlier calls is gone.
        died: the worker process died during this call (``error`` says how).
        cursor: pass to :meth:`CodeRuntime.more` for the next page; None: nothing more.
        total_chars: characters printed in all by the call (including any dropped).
        duration_ms: wall time of the call, ms (0 for a :meth:`~CodeRuntime.more` page).
        offset: where this page starts in the call's output, characters.
        dropped_chars: printed characters not kept (beyond ``MAX_KEPT_CHARS``).
        error_code: the wire code of a TrustbridgeError the code let escape, if any.
        timeout_s: the timeout the call ran with, s (after capping).
        late_output: text written between calls (by a thread or child process of an
            earlier call, after that call ended), received before this call ended; never
            part of ``output``; the first ``LATE_KEPT_CHARS`` characters.
        late_chars: characters of such text in all (``late_output`` is cut beyond
            ``LATE_KEPT_CHARS``).
        exit_status: the code raised SystemExit: the status a program would exit with
            (0 for ``sys.exit()``, n for ``sys.exit(n)``, 1 for anything else); None
            otherwise.
        exit_message: for ``sys.exit("text")``: the text a program would print.
    """

    output: str = ""
    value: str | None = None
    error: str | None = None
    timed_out: bool = False
    cancelled: bool = False
    reset: bool = False
    cursor: str | None = None
    total_chars: int = 0
    duration_ms: float = 0.0
    offset: int = 0
    dropped_chars: int = 0
    error_code: str | None = None
    timeout_s: float | None = None
    reset_before: bool = False
    died: bool = False
    late_output: str = ""
    late_chars: int = 0
    exit_status: int | None = None
    exit_message: str | None = None

    @property
    def ok(self) -> bool:
        """No exception, timeout or cancellation."""
        return self.error is None and not self.timed_out and not self.cancelled
