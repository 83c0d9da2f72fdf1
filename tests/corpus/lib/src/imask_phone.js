import IMask from "imask";
document.getElementById("root").innerHTML = '<label>Phone <input id="p"></label>';
const m = IMask(document.getElementById("p"), { mask: "+{1} (000) 000-0000" }); m.on("accept", () => record(m.value));
