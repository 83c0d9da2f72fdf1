// page.find across a tab's frames (issue 14 item 5). NOT BUILT YET.
import { PageError } from '../page/errors.js';

export async function findInTab(_api, _tabs, _tabId, _params) {
  throw new PageError('BAD_REQUEST', 'page.find is not available yet.');
}
