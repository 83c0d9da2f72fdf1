import "@shoelace-style/shoelace/dist/components/input/input.js";
document.getElementById("root").innerHTML = '<sl-input id="i" label="Nickname"></sl-input>';
document.getElementById("i").addEventListener("sl-input", e => record(e.target.value));
