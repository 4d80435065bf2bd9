// Building DOM nodes without HTML strings. Everything the server returns may hold text written by
// a model or a tool (hostile), so data only ever becomes text nodes, attribute values or
// properties; nothing is parsed as HTML.

const PROPERTIES = new Set(["value", "checked", "disabled", "hidden", "selected", "open"]);

// h("button", {class: "primary", onclick: fn}, "Approve") -> <button class="primary">Approve</button>
// Children may be nodes, strings, numbers, arrays of those, or null/undefined/false (skipped).
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") {
      el.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : value;
    } else if (key === "text") {
      el.textContent = String(value);
    } else if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "style") {
      for (const [name, v] of Object.entries(value)) el.style.setProperty(name, v);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (PROPERTIES.has(key)) {
      el[key] = value;
    } else if (key === "href") {
      el.setAttribute("href", safeHref(value));
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

// Only links inside this UI ("#/...") or to this server ("/..."): a URL taken from data can never
// become a javascript: or off-site link.
export function safeHref(value) {
  const text = String(value);
  if (text.startsWith("#") || (text.startsWith("/") && !text.startsWith("//"))) return text;
  return "#";
}

export function append(el, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

// Replaces the children of `el`.
export function render(el, ...children) {
  clear(el);
  return append(el, children);
}

// A link to a page of this UI; path segments are URI-encoded, so an id cannot change the route.
export function link(text, ...segments) {
  return h("a", {href: route(...segments)}, text);
}

export function route(...segments) {
  return "#/" + segments.map((s) => encodeURIComponent(String(s))).join("/");
}

// A <label> + control pair in a .field wrapper; `control` gets a generated id when it has none.
let nextId = 0;
export function field(label, control, hint) {
  if (!control.id) control.id = "f" + ++nextId;
  const parts = [h("label", {for: control.id}, label), control];
  if (hint) {
    const hintId = control.id + "-hint";
    control.setAttribute("aria-describedby", hintId);
    parts.push(h("span", {class: "hint", id: hintId}, hint));
  }
  return h("div", {class: "field"}, parts);
}

export function uniqueId(prefix) {
  return prefix + ++nextId;
}

// A text block that keeps white space and line breaks; long text is cut with a button to show all.
export function textBlock(text, limit = 4000) {
  const full = text === null || text === undefined ? "" : String(text);
  const pre = h("pre", {class: "text"}, full.length > limit ? full.slice(0, limit) : full);
  if (full.length <= limit) return pre;
  const more = h("button", {type: "button", class: "link-button"},
                 `Show all ${full.length.toLocaleString()} characters`);
  more.addEventListener("click", () => {
    pre.textContent = full;
    more.remove();
  });
  return h("div", {}, pre, more);
}

// A small coloured label for a status word (its class is derived from a fixed list, never from
// the data itself).
const STATUS_CLASSES = new Set(["running", "interrupted", "waiting", "completed", "failed", "quarantined",
                                "queued", "applied", "rejected", "proposal", "no_improvement",
                                "error", "ok", "succeeded", "promoted", "rolled_back", "better",
                                "worse", "same"]);
export function badge(text, kind) {
  const word = String(kind ?? text ?? "");
  const cls = STATUS_CLASSES.has(word) ? "badge badge-" + word : "badge";
  return h("span", {class: cls}, text ?? "");
}

// An error box for a failed request or action.
export function errorBox(error) {
  const code = error && error.code ? error.code + ": " : "";
  const message = error && error.message ? error.message : String(error);
  return h("div", {class: "error-box", role: "alert"}, code + message);
}

export function emptyRow(columns, text) {
  return h("tr", {class: "empty"}, h("td", {colspan: String(columns)}, text));
}
