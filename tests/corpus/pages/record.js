// The page-side record every corpus page shares (scripts/corpus_diff.py reads it).
// window.__outcome: the task's result as the page saw it; window.__untrusted: how many
// pointer/key events the page received with isTrusted false (a synthetic route).
window.__outcome = null;
window.__untrusted = 0;
for (const type of ["pointerdown", "mousedown", "mouseup", "click", "keydown", "keyup", "beforeinput"]) {
  document.addEventListener(type, (e) => { if (!e.isTrusted) window.__untrusted++; }, true);
}
window.record = (value) => {
  window.__outcome = value;
  const out = document.getElementById("out");
  if (out) out.textContent = "Outcome: " + String(value);
};
