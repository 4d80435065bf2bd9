// What every page shares: announcing results, polling while the page is shown, and running an
// action from a button with its errors shown next to it.
import {errorBox, h, render} from "./dom.js";

// Says `text` in the status line (a polite live region, so screen readers hear it too).
export function announce(text) {
  const status = document.getElementById("status");
  if (!status) return;
  status.textContent = "";
  // A new text node each time, so the same message twice is announced twice.
  window.setTimeout(() => { status.textContent = text; }, 10);
}

// Calls `fn` now and then every `ms` while `signal` is not aborted. The next call is scheduled
// after the previous one finished, so a slow server never gets overlapping requests; while the
// tab is hidden it waits until the tab is visible again.
export function poll(fn, ms, signal) {
  let timer = null;
  const tick = async () => {
    if (signal.aborted) return;
    if (document.hidden) {
      document.addEventListener("visibilitychange", tick, {once: true});
      return;
    }
    try {
      await fn();
    } catch (e) {
      if (e.name === "AbortError") return;
    }
    if (!signal.aborted) timer = window.setTimeout(tick, ms);
  };
  signal.addEventListener("abort", () => window.clearTimeout(timer));
  tick();
}

// Wires `button` to run `action` (async). While it runs the button is disabled; a failure is
// shown in `errorSlot` (an element) and announced; success announces `done` (a string or a
// function of the result).
export function onAction(button, action, {errorSlot, done, confirmText} = {}) {
  button.addEventListener("click", async (event) => {
    event.preventDefault();
    if (confirmText && !window.confirm(confirmText)) return;
    button.disabled = true;
    if (errorSlot) render(errorSlot);
    try {
      const result = await action();
      const message = typeof done === "function" ? done(result) : done;
      if (message) announce(message);
    } catch (e) {
      if (e.name === "AbortError") return;
      if (errorSlot) render(errorSlot, errorBox(e));
      announce("Failed: " + (e.message || String(e)));
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

// Same for a <form>: `action` receives the form's FormData.
export function onSubmit(form, action, options = {}) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const submit = form.querySelector("button[type=submit]");
    if (options.confirmText && !window.confirm(options.confirmText)) return;
    if (submit) submit.disabled = true;
    if (options.errorSlot) render(options.errorSlot);
    try {
      const result = await action(new FormData(form));
      const message = typeof options.done === "function" ? options.done(result) : options.done;
      if (message) announce(message);
    } catch (e) {
      if (e.name === "AbortError") return;
      if (options.errorSlot) render(options.errorSlot, errorBox(e));
      announce("Failed: " + (e.message || String(e)));
    } finally {
      if (submit) submit.disabled = false;
    }
  });
  return form;
}

// A page heading with optional elements on its right.
export function pageHeader(title, ...extra) {
  return h("div", {class: "page-header"}, h("h1", {}, title), extra.length ? h("div", {class: "page-tools"}, extra) : null);
}

// A section with a heading (h2) whose id labels it.
let sectionCount = 0;
export function section(title, ...children) {
  const id = "s" + ++sectionCount;
  return h("section", {"aria-labelledby": id, class: "card"}, h("h2", {id}, title), children);
}

// Loads data with `load()` into `slot`: shows "Loading…" first, the result of `show(data)`
// afterwards, or the error.
export async function loadInto(slot, load, show) {
  render(slot, h("p", {class: "muted"}, "Loading…"));
  try {
    const data = await load();
    render(slot, show(data));
    return data;
  } catch (e) {
    if (e.name === "AbortError") return null;
    render(slot, errorBox(e));
    return null;
  }
}
