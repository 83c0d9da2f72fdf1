// An error with a wire code (design.md §6), thrown by page code and sent back as
// {code, message, details}. Details hold only safe facts: ids, roles, counts.

export class PageError extends Error {
  constructor(code, message, details = {}) {
    super(message);
    this.code = code;
    this.details = details;
  }

  toWire() {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** Any thrown value as a wire error. */
export function toWireError(err) {
  if (err instanceof PageError) return err.toWire();
  return { code: 'INTERNAL_ERROR', message: `Page agent failure: ${err && err.message ? err.message : String(err)}`, details: {} };
}
