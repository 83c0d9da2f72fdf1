import "@shoelace-style/shoelace/dist/components/select/select.js"; import "@shoelace-style/shoelace/dist/components/option/option.js";
document.getElementById("root").innerHTML = '<sl-select id="s" label="Size"><sl-option value="small">Small</sl-option><sl-option value="medium">Medium</sl-option><sl-option value="large">Large</sl-option></sl-select>';
document.getElementById("s").addEventListener("sl-change", e => record(e.target.value));
