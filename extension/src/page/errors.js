// An error with a wire code (design.md §6), thrown by page code and sent back as
// {code, message, details, nextStep?}. Details hold only safe facts: ids, roles, counts.
// nextStep, when given, replaces the bridge's default advice for the code.

export class PageError extends Error {
  constructor(code, message, details = {}, nextStep = undefined) {
    super(message);
    this.code = code;
    this.details = details;
    if (nextStep) this.nextStep = nextStep;
  }

  toWire() {
    const wire = { code: this.code, message: this.message, details: this.details };
    if (this.nextStep) wire.nextStep = this.nextStep;
    return wire;
  }
}

/** Any thrown value as a wire error. */
export function toWireError(err) {
  if (err instanceof PageError) return err.toWire();
  return { code: 'INTERNAL_ERROR', message: `Page agent failure: ${err && err.message ? err.message : String(err)}`, details: {} };
}
