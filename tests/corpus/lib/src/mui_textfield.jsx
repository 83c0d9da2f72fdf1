import React from "react"; import { createRoot } from "react-dom/client"; import { TextField } from "@mui/material";
createRoot(document.getElementById("root")).render(<TextField label="Username" onChange={e => record(e.target.value)} />);
