import React from "react"; import { createRoot } from "react-dom/client"; import * as Sw from "@radix-ui/react-switch";
createRoot(document.getElementById("root")).render(<div><label htmlFor="am">Airplane mode</label><Sw.Root id="am" onCheckedChange={v => record(v)} style={{ width: 42, height: 25 }}><Sw.Thumb /></Sw.Root></div>);
