import React from "react"; import { createRoot } from "react-dom/client"; import { Checkbox, FormControlLabel } from "@mui/material";
createRoot(document.getElementById("root")).render(<FormControlLabel control={<Checkbox onChange={e => record(e.target.checked)} />} label="Remember me" />);
