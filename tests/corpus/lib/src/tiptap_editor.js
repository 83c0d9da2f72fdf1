import { Editor } from "@tiptap/core"; import StarterKit from "@tiptap/starter-kit";
document.getElementById("root").innerHTML = '<div id="ed" style="border:1px solid #999;min-height:60px"></div>';
const ed = new Editor({ element: document.getElementById("ed"), extensions: [StarterKit], editorProps: { attributes: { "aria-label": "Post content", role: "textbox" } },
  onUpdate: ({ editor }) => record(editor.getText()) });
