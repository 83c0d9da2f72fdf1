import React from "react"; import { createRoot } from "react-dom/client"; import Select from "react-select";
const opts = ["Apple", "Banana", "Cherry"].map(v => ({ value: v, label: v }));
createRoot(document.getElementById("root")).render(<label>Fruit<Select aria-label="Fruit" options={opts} onChange={o => record(o.value)} /></label>);
