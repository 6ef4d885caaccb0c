// Characters a reader cannot see, or that change how what follows them reads: control
// characters, format characters (bidi overrides and isolates, zero-width spaces and joiners,
// the BOM, tag characters), line and paragraph separators, private-use characters. An
// approver must read what the tool will get: each is shown as ⟨U+XXXX⟩ and flagged
// (DESIGN §9). Newlines stay newlines; tabs stay tabs.
import { el } from "./shared.js";

const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}]/u;
const HIDDEN_ALL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}]/gu;
const KEPT = new Set(["\n", "\t"]);

export function codepoint(ch) {
  return "U+" + ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
}

// The hidden characters in a text, or in every key and string of a JSON value.
export function hiddenIn(value) {
  const found = [];
  const walk = (v) => {
    if (typeof v === "string") { for (const m of v.matchAll(HIDDEN_ALL)) if (!KEPT.has(m[0])) found.push(codepoint(m[0])); }
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) { walk(k); walk(x); }
  };
  walk(value);
  return found;
}

// Text as nodes: plain runs as text, each hidden character as a visible, marked ⟨U+XXXX⟩.
export function revealed(text) {
  const nodes = [];
  let plain = "";
  for (const ch of String(text)) {
    if (HIDDEN.test(ch) && !KEPT.has(ch)) {
      if (plain) { nodes.push(document.createTextNode(plain)); plain = ""; }
      nodes.push(el("mark", { class: "hidden-char", "data-testid": "hidden-char", title: "a character that is not visible or changes the text's direction" }, "⟨" + codepoint(ch) + "⟩"));
    } else plain += ch;
  }
  if (plain) nodes.push(document.createTextNode(plain));
  return nodes;
}

// JSON shown as it is, but with strings' hidden characters revealed rather than escaped away
// or left to act (JSON.stringify escapes C0 controls as \u00XX and keeps U+202E raw).
export function revealedJson(value) {
  if (typeof value === "string") return revealed(value);
  const text = JSON.stringify(value, null, 2)
    .replace(/\\(\\|u([0-9a-fA-F]{4}))/g, (whole, _, hex) => {
      if (!hex) return whole;  // an escaped backslash, not the start of an escape
      const ch = String.fromCharCode(parseInt(hex, 16));
      return HIDDEN.test(ch) && !KEPT.has(ch) ? ch : whole;
    });
  return revealed(text);
}

// JSON to edit: the same value, with each hidden character written as a \uXXXX escape, so
// the editor shows it and parsing the text gives it back unchanged.
export function escapedJson(value) {
  return JSON.stringify(value, null, 2).replace(HIDDEN_ALL, (ch) => (KEPT.has(ch) ? ch : ch.split("").map((u) => "\\u" + u.charCodeAt(0).toString(16).padStart(4, "0")).join("")));
}
