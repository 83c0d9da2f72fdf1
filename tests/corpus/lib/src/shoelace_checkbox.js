import "@shoelace-style/shoelace/dist/components/checkbox/checkbox.js";
document.getElementById("root").innerHTML = '<sl-checkbox id="c">Send me the newsletter</sl-checkbox>';
document.getElementById("c").addEventListener("sl-change", e => record(e.target.checked));
