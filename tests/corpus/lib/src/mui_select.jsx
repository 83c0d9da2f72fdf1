import React, { useState } from "react"; import { createRoot } from "react-dom/client"; import { FormControl, InputLabel, Select, MenuItem } from "@mui/material";
function App() { const [v, set] = useState("");
  return <FormControl style={{ width: 200 }}><InputLabel id="age-l">Age</InputLabel><Select labelId="age-l" label="Age" value={v} onChange={e => { set(e.target.value); record(e.target.value); }}>
    <MenuItem value="Ten">Ten</MenuItem><MenuItem value="Twenty">Twenty</MenuItem><MenuItem value="Thirty">Thirty</MenuItem></Select></FormControl>; }
createRoot(document.getElementById("root")).render(<App />);
