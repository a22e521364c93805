/* evalkit page: shared helpers, data decoding and page state. Plain ES2017, no library, no network. */
"use strict";

const EK = {};

EK.TYPES = { f4: Float32Array, i4: Int32Array, u2: Uint16Array, u1: Uint8Array };

/* Every {t, b} object of the data is a little-endian typed array in base64. */
EK.decode = function decode(value) {
  if (Array.isArray(value)) return value.map(decode);
  if (value && typeof value === "object") {
    if (typeof value.t === "string" && typeof value.b === "string" && Object.keys(value).length === 2) {
      const text = atob(value.b);
      const bytes = new Uint8Array(text.length);
      for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
      return new EK.TYPES[value.t](bytes.buffer);
    }
    const out = {};
    for (const key of Object.keys(value)) out[key] = decode(value[key]);
    return out;
  }
  return value;
};

/* el("td", {class: "x", title: "..."}, child, "text", ...): DOM nodes; text is never parsed as HTML. */
EK.el = function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
};

EK.svg = function svg(tag, attrs, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) if (value !== null && value !== undefined) node.setAttribute(key, String(value));
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
};

EK.num = function num(value, digits) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (!Number.isFinite(value)) return value > 0 ? "∞" : "-∞";
  if (Number.isInteger(value) && Math.abs(value) >= 1000) return String(value);
  return value.toFixed(digits === undefined ? 4 : digits);
};

EK.signed = function signed(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  return (value > 0 ? "+" : "") + value.toFixed(4);
};

EK.pvalue = function pvalue(p, digits) {
  if (p === null || p === undefined || Number.isNaN(p)) return "n/a";
  return p >= 0.001 || p === 0 ? p.toFixed(digits || 4) : p.toExponential(1);
};

EK.PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
  "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"];
EK.colour = (i) => EK.PALETTE[i % EK.PALETTE.length];

EK.clear = function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; };

/* A floating tooltip shared by the page: EK.tip(node, () => text). */
EK.tip = function tip(node, text) {
  const box = document.getElementById("tooltip");
  node.addEventListener("mouseenter", () => { box.textContent = typeof text === "function" ? text() : text; box.hidden = !box.textContent; });
  node.addEventListener("mousemove", (e) => {
    const x = Math.min(e.clientX + 14, window.innerWidth - box.offsetWidth - 8);
    const y = e.clientY + 16 + box.offsetHeight > window.innerHeight ? e.clientY - box.offsetHeight - 10 : e.clientY + 16;
    box.style.left = x + "px"; box.style.top = y + "px";
  });
  node.addEventListener("mouseleave", () => { box.hidden = true; });
};

/* Query terms for highlighting: lower-cased words of 3+ letters that are not stop words. */
EK.STOP = new Set(("the and for are but not you all any can had her was one our out has have this that with from they " +
  "will would there their what which when who whom been were into than then them these those its it's also just more " +
  "most some such only very does did doing about after again against because before being between both each few further " +
  "how other over same should through under until while why your yours http https www com").split(" "));
EK.terms = function terms(text) {
  const out = new Set();
  for (const word of (text || "").toLowerCase().match(/[\p{L}\p{N}]+/gu) || []) {
    if (word.length >= 3 && !EK.STOP.has(word)) out.add(word);
  }
  return out;
};

/* Text as nodes with the query's terms in <mark> (a word matches when it equals a term or starts with one 5+ long). */
EK.highlight = function highlight(text, terms) {
  const parts = [];
  if (!terms || terms.size === 0) return [text];
  const re = /[\p{L}\p{N}]+/gu;
  let last = 0, match;
  while ((match = re.exec(text)) !== null) {
    const word = match[0].toLowerCase();
    let hit = terms.has(word);
    if (!hit && word.length >= 5) for (const t of terms) if (t.length >= 5 && word.startsWith(t)) { hit = true; break; }
    if (hit) {
      if (match.index > last) parts.push(text.slice(last, match.index));
      parts.push(EK.el("mark", {}, match[0]));
      last = match.index + match[0].length;
    }
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
};

EK.state = { a: 0, b: 0, metric: "", filter: "all", order: "gold", search: "", page: 0, pageSize: 50, selected: -1 };
EK.listeners = [];
EK.onChange = (fn) => EK.listeners.push(fn);
EK.changed = (what) => { for (const fn of EK.listeners) fn(what); };
