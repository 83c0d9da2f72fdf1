import React from "react"; import { createRoot } from "react-dom/client"; import { Autocomplete, TextField } from "@mui/material";
createRoot(document.getElementById("root")).render(<Autocomplete style={{ width: 300 }} options={["The Godfather", "Pulp Fiction", "Casablanca"]} onChange={(e, v) => record(v)} renderInput={p => <TextField {...p} label="Movie" />} />);
