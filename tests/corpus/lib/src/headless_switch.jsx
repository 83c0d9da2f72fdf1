import React, { useState } from "react"; import { createRoot } from "react-dom/client"; import { Switch, Field, Label } from "@headlessui/react";
function App() { const [on, set] = useState(false);
  return <Field><Switch checked={on} onChange={v => { set(v); record(v); }} style={{ width: 44, height: 24, background: on ? "#36c" : "#ccc" }} /><Label>Enable alerts</Label></Field>; }
createRoot(document.getElementById("root")).render(<App />);
