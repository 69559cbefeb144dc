// Syntax highlighting of generated scripts: highlight.js's core with only
// the Python grammar, bundled (no CDN).
import hljs from "highlight.js/lib/core";
import python from "highlight.js/lib/languages/python";

hljs.registerLanguage("python", python);

/** HTML of `code` highlighted as Python (highlight.js escapes the text). */
export function highlightPython(code: string): string {
  return hljs.highlight(code, { language: "python", ignoreIllegals: true }).value;
}
