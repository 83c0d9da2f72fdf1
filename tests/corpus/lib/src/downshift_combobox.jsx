import React, { useState } from "react"; import { createRoot } from "react-dom/client"; import { useCombobox } from "downshift";
const all = ["Black", "Blue", "Green", "Red"];
function App() { const [items, setItems] = useState(all);
  const { isOpen, getLabelProps, getInputProps, getMenuProps, getItemProps, highlightedIndex } = useCombobox({ items,
    onInputValueChange: ({ inputValue }) => setItems(all.filter(i => i.toLowerCase().startsWith((inputValue || "").toLowerCase()))),
    onSelectedItemChange: ({ selectedItem }) => record(selectedItem) });
  return <div><label {...getLabelProps()}>Color</label><input {...getInputProps()} /><ul {...getMenuProps()}>{isOpen && items.map((it, i) => <li key={it} {...getItemProps({ item: it, index: i })} style={{ background: highlightedIndex === i ? "#def" : "" }}>{it}</li>)}</ul></div>; }
createRoot(document.getElementById("root")).render(<App />);
