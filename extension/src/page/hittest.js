// Hit test at a viewport point (issue 15 item 1, MouseAction).
// NOT BUILT YET.
import { PageError } from './errors.js';

export function hitTest(_doc, _msg, _ctx) {
  throw new PageError('BAD_REQUEST', 'Hit testing is not available yet.');
}
