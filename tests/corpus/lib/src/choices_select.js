import Choices from "choices.js"; import "choices.js/public/assets/styles/choices.min.css";
document.getElementById("root").innerHTML = '<label for="s">Language</label><select id="s"><option value="">Pick</option><option>English</option><option>French</option><option>German</option></select>';
const el = document.getElementById("s"); new Choices(el); el.addEventListener("change", () => record(el.value));
