// Find without a full snapshot (issue 14 item 5, page.find).
// NOT BUILT YET.
import { PageError } from './errors.js';

export function find(_doc, _msg, _ctx) {
  throw new PageError('BAD_REQUEST', 'page.find is not available yet.');
}
