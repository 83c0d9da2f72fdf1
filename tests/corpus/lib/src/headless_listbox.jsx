import React, { useState } from "react"; import { createRoot } from "react-dom/client";
import { Listbox, ListboxButton, ListboxOption, ListboxOptions, Label, Field } from "@headlessui/react";
function App() { const [v, setV] = useState("Wade");
  return <Field><Label>Assignee</Label><Listbox value={v} onChange={x => { setV(x); record(x); }}>
    <ListboxButton>{v}</ListboxButton><ListboxOptions anchor="bottom">{["Wade", "Arlene", "Devon"].map(p => <ListboxOption key={p} value={p}>{p}</ListboxOption>)}</ListboxOptions></Listbox></Field>; }
createRoot(document.getElementById("root")).render(<App />);
