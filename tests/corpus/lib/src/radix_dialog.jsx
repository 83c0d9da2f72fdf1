import React from "react"; import { createRoot } from "react-dom/client"; import * as D from "@radix-ui/react-dialog";
createRoot(document.getElementById("root")).render(<D.Root><D.Trigger>Edit profile</D.Trigger><D.Portal><D.Overlay style={{ position: "fixed", inset: 0, background: "rgba(0,0,0,.4)" }} /><D.Content style={{ position: "fixed", top: 100, left: 100, background: "#fff", padding: 20 }}><D.Title>Edit profile</D.Title><D.Description>Change it.</D.Description>
  <button onClick={() => record("saved")}>Save changes</button></D.Content></D.Portal></D.Root>);
