import React from "react"; import { createRoot } from "react-dom/client"; import * as S from "@radix-ui/react-select";
createRoot(document.getElementById("root")).render(<S.Root onValueChange={v => record(v)}><S.Trigger aria-label="Food"><S.Value placeholder="Select a food" /></S.Trigger><S.Portal><S.Content position="popper" style={{ background: "#fff", border: "1px solid #999" }}><S.Viewport>
  {["Apple", "Broccoli", "Carrot"].map(x => <S.Item key={x} value={x.toLowerCase()}><S.ItemText>{x}</S.ItemText></S.Item>)}</S.Viewport></S.Content></S.Portal></S.Root>);
