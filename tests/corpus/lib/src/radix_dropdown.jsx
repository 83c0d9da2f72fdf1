import React from "react"; import { createRoot } from "react-dom/client"; import * as DM from "@radix-ui/react-dropdown-menu";
createRoot(document.getElementById("root")).render(<DM.Root><DM.Trigger>Options</DM.Trigger><DM.Portal><DM.Content style={{ background: "#fff", border: "1px solid #999", padding: 4 }}>
  {["New tab", "Duplicate", "Delete"].map(x => <DM.Item key={x} onSelect={() => record(x)}>{x}</DM.Item>)}</DM.Content></DM.Portal></DM.Root>);
