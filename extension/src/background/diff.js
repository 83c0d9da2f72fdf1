// Line diff of two outline snapshots, for `page.snapshot {mode: "diff"}`.
//
// Refs are stable for the same element, so an unchanged element prints the same line and
// a change of name, state or value shows as one removed and one added line. Each group of
// changes is preceded by its unchanged ancestor lines (fewer leading spaces), so the agent
// sees where it happened:
//     - form "Login" [ref=e3]
//   -   - button "Save" [ref=e7]
//   +   - button "Save" [disabled] [ref=e7]
// Lines are prefixed "  " (context), "- " (removed), "+ " (added); the first line is a
// "#" summary. The line diff is jsdiff's Myers diff, bounded by MAX_EDIT so a page that
// changed completely costs no more than printing it again.

import { diffArrays } from 'diff';

const MAX_EDIT = 4000;

function indentOf(line) {
  let n = 0;
  while (n < line.length && line.charCodeAt(n) === 32) n++;
  return n;
}

/** Ancestor lines of `lines[index]`: each earlier line with less indentation. */
function ancestors(lines, index) {
  const out = [];
  let want = index < lines.length ? indentOf(lines[index]) : 0;
  for (let i = index - 1; i >= 0 && want > 0; i--) {
    const d = indentOf(lines[i]);
    if (d < want) {
      out.unshift(lines[i]);
      want = d;
    }
  }
  return out;
}

/**
 * @param {string[]|null} before  the previous complete snapshot's lines, or null (none)
 * @param {string[]} after        the new snapshot's lines
 * @returns {{lines: string[], added: number, removed: number}}
 */
export function diffOutline(before, after) {
  if (!before) {
    return {
      lines: ['# no previous snapshot of this tab in this session: the full snapshot follows', ...after],
      added: after.length, removed: 0,
    };
  }
  const parts = diffArrays(before, after, { maxEditLength: MAX_EDIT });
  if (!parts) {
    return {
      // The baseline is the last *complete* snapshot of this tab in this session; a
      // truncated one (not followed to its end) never replaces it, so after a navigation
      // the baseline may still be the previous page.
      lines: [`# too different from the baseline (the last complete snapshot of this tab in this session: ${before.length} lines, now ${after.length}) to diff: the full snapshot follows`, ...after],
      added: after.length, removed: before.length,
    };
  }
  const out = [];
  let added = 0;
  let removed = 0;
  let iNew = 0;
  let lastContext = new Set();
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k];
    if (!part.added && !part.removed) {
      iNew += part.value.length;
      lastContext = new Set();
      continue;
    }
    if (!lastContext.size) {
      const context = ancestors(after, iNew);
      for (const line of context) out.push('  ' + line);
      lastContext = new Set(context);
    }
    for (const line of part.value) out.push((part.added ? '+ ' : '- ') + line);
    if (part.added) {
      added += part.value.length;
      iNew += part.value.length;
    } else {
      removed += part.value.length;
    }
  }
  const summary = added || removed
    ? `# changes since the previous snapshot: ${added} line(s) added, ${removed} removed`
    : '# no changes since the previous snapshot';
  return { lines: [summary, ...out], added, removed };
}
