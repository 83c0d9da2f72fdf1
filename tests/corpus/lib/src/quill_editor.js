import Quill from "quill"; import "quill/dist/quill.snow.css";
document.getElementById("root").innerHTML = '<div id="ed" style="height:120px"></div>';
const q = new Quill("#ed", { theme: "snow" }); q.root.setAttribute("aria-label", "Message");
q.on("text-change", () => record(q.getText().trim()));
