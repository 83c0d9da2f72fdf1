import flatpickr from "flatpickr"; import "flatpickr/dist/flatpickr.css";
document.getElementById("root").innerHTML = '<label>Check-in <input id="d" placeholder="Select date"></label>';
flatpickr("#d", { allowInput: true, onChange: (sel, str) => record(str) });
