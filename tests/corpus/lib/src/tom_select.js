import TomSelect from "tom-select"; import "tom-select/dist/css/tom-select.css";
document.getElementById("root").innerHTML = '<label for="ts">Framework</label><select id="ts"><option value="">Pick</option><option>Django</option><option>Rails</option><option>Laravel</option></select>';
new TomSelect("#ts", { onChange: v => record(v) });
