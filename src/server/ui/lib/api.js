// Calls to mend serve's JSON API (docs/http_api.md). When the server answers 401 the user is asked
// for the token once; it is kept in sessionStorage (this tab only, gone when the tab closes) and
// sent as "Authorization: Bearer" with every later call. Bodies are always JSON: the server
// refuses state-changing requests of any other type, which is its cross-site protection.

const TOKEN_KEY = "mend.token";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
  tokenListeners.forEach((fn) => fn());
}

const tokenListeners = [];
export function onTokenChange(fn) {
  tokenListeners.push(fn);
}

// One dialog for every request that met a 401 at the same time.
let pendingPrompt = null;

function askForToken(message) {
  if (pendingPrompt) return pendingPrompt;
  const dialog = document.getElementById("token-dialog");
  const form = document.getElementById("token-form");
  const input = document.getElementById("token-input");
  const error = document.getElementById("token-error");
  const cancel = document.getElementById("token-cancel");
  error.textContent = message;
  input.value = "";
  pendingPrompt = new Promise((resolve) => {
    const finish = (ok) => {
      form.removeEventListener("submit", onSubmit);
      cancel.removeEventListener("click", onCancel);
      dialog.removeEventListener("cancel", onCancel);
      if (dialog.open) dialog.close();
      pendingPrompt = null;
      resolve(ok);
    };
    const onSubmit = (event) => {
      event.preventDefault();
      const token = input.value.trim();
      if (!token) return;
      sessionStorage.setItem(TOKEN_KEY, token);
      tokenListeners.forEach((fn) => fn());
      finish(true);
    };
    const onCancel = (event) => {
      event.preventDefault();
      finish(false);
    };
    form.addEventListener("submit", onSubmit);
    cancel.addEventListener("click", onCancel);
    dialog.addEventListener("cancel", onCancel);
    dialog.showModal();
    input.focus();
  });
  return pendingPrompt;
}

async function errorOf(response) {
  let code = "HTTP_" + response.status;
  let message = response.statusText || "request failed";
  try {
    const body = await response.json();
    if (body && body.error) {
      code = String(body.error.code || code);
      message = String(body.error.message || message);
    }
  } catch {
    // Not JSON: keep the HTTP status as the error.
  }
  return new ApiError(response.status, code, message);
}

// Sends one request. `body` (an object) makes it a JSON request; state-changing methods always
// carry a JSON body. Resolves to the parsed JSON (or the text with {text: true}); rejects with an
// ApiError (status 0 when the server could not be reached) or an AbortError.
export async function api(path, {method = "GET", body, text = false, signal} = {}) {
  const changing = method !== "GET" && method !== "HEAD";
  for (let tries = 0; tries < 5; tries++) {
    const token = storedToken();
    const headers = {Accept: text ? "text/plain" : "application/json"};
    if (token) headers.Authorization = "Bearer " + token;
    let payload;
    if (body !== undefined || (changing && method !== "DELETE")) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(body ?? {});
    }
    let response;
    try {
      response = await fetch(path, {method, headers, body: payload, signal, cache: "no-store",
                                    credentials: "same-origin", redirect: "error"});
    } catch (e) {
      if (e.name === "AbortError") throw e;
      throw new ApiError(0, "UNAVAILABLE", "the server did not answer: " + e.message);
    }
    if (response.status === 401) {
      const ok = await askForToken(token ? "That token was not accepted. Try again." : "");
      if (!ok) throw new ApiError(401, "UNAUTHENTICATED", "this server needs its token");
      continue;
    }
    if (!response.ok) throw await errorOf(response);
    if (text) return response.text();
    if (response.status === 204) return {};
    return response.json();
  }
  throw new ApiError(401, "UNAUTHENTICATED", "the token was not accepted");
}

export const get = (path, options = {}) => api(path, options);
export const post = (path, body = {}, options = {}) => api(path, {...options, method: "POST", body});
export const del = (path, options = {}) => api(path, {...options, method: "DELETE"});

// "/api/v1/runs" + {status: "failed", agent: ""} -> "/api/v1/runs?status=failed" (empty values
// are left out).
export function withQuery(path, params) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== undefined && value !== null && value !== "") query.set(key, String(value));
  }
  const text = query.toString();
  return text ? path + "?" + text : path;
}

export function apiPath(...segments) {
  return "/api/v1/" + segments.map((s) => encodeURIComponent(String(s))).join("/");
}
