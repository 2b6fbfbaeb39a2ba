// The dashboard's shared code: configuration, sign-in against the Cognito user pool, API calls.
// Plain ES module, no build step: each page imports what it needs.

const SESSION_KEY = "dashboard.session";
let configPromise = null;

/** The deployment's settings, written next to the pages at deploy time (locally by `make dev`). */
export function config() {
  configPromise ??= fetch("config.json", { cache: "no-store" }).then((r) => {
    if (!r.ok) throw new Error("config.json is missing: redeploy the dashboard or restart `make dev`.");
    return r.json();
  });
  return configPromise;
}

function readSession() {
  try {
    const session = JSON.parse(sessionStorage.getItem(SESSION_KEY) || "null");
    if (session && session.expiresAt > Date.now() + 30_000) return session;
  } catch {
    /* a damaged entry is the same as none */
  }
  return null;
}

export function signedInEmail() {
  return readSession()?.email ?? null;
}

/** USER_PASSWORD_AUTH with InitiateAuth: the same call a deployed pool takes. */
export async function signIn(email, password) {
  const cfg = await config();
  const response = await fetch(cfg.cognitoEndpoint, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-amz-json-1.1",
      "X-Amz-Target": "AWSCognitoIdentityProviderService.InitiateAuth",
    },
    body: JSON.stringify({
      AuthFlow: "USER_PASSWORD_AUTH",
      ClientId: cfg.userPoolClientId,
      AuthParameters: { USERNAME: email, PASSWORD: password },
    }),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok || !body.AuthenticationResult) {
    const kind = String(body.__type || "").split("#").pop();
    if (kind === "NotAuthorizedException" || kind === "UserNotFoundException") {
      throw new Error("The e-mail or password is wrong. Check both and try again.");
    }
    if (body.ChallengeName) {
      throw new Error(`This account needs ${body.ChallengeName} first; ask your administrator to finish setting it up.`);
    }
    throw new Error(`Sign-in failed (${kind || response.status}). Try again in a minute.`);
  }
  const result = body.AuthenticationResult;
  sessionStorage.setItem(
    SESSION_KEY,
    JSON.stringify({ email, idToken: result.IdToken, expiresAt: Date.now() + result.ExpiresIn * 1000 }),
  );
}

export function signOut() {
  sessionStorage.removeItem(SESSION_KEY);
  location.href = "index.html";
}

/** Ask for the password again in a dialog over the page, which stays as it was. */
function reauthenticate() {
  const dialog = document.getElementById("signin-dialog");
  const form = dialog.querySelector("form");
  const error = dialog.querySelector("[role=alert]");
  form.elements.email.value = readSessionEmail() || "";
  error.textContent = "";
  return new Promise((resolve) => {
    form.onsubmit = async (event) => {
      event.preventDefault();
      error.textContent = "";
      try {
        await signIn(form.elements.email.value.trim(), form.elements.password.value);
        form.elements.password.value = "";
        dialog.close();
        renderUser();
        resolve();
      } catch (exc) {
        error.textContent = exc.message;
      }
    };
    dialog.showModal();
    (form.elements.email.value ? form.elements.password : form.elements.email).focus();
  });
}

function readSessionEmail() {
  try {
    return JSON.parse(sessionStorage.getItem(SESSION_KEY) || "null")?.email;
  } catch {
    return null;
  }
}

/** Call the API as the signed-in user; an expired or missing session asks to sign in and retries. */
export async function api(path, { method = "GET", body, headers: extra = {} } = {}) {
  const cfg = await config();
  for (;;) {
    const session = readSession();
    if (!session) {
      await reauthenticate();
      continue;
    }
    const headers = { ...extra, Authorization: `Bearer ${session.idToken}` };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(cfg.apiUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new Error("The service could not be reached. Check your connection and try again.");
    }
    if (response.status === 401) {
      // Keep the e-mail to pre-fill the dialog; the expired token is never sent again.
      sessionStorage.setItem(SESSION_KEY, JSON.stringify({ email: session.email, expiresAt: 0 }));
      await reauthenticate();
      continue;
    }
    const text = await response.text();
    const data = text ? JSON.parse(text) : null;
    if (response.status === 403 && data?.error?.code === "account_closed") {
      // The organization is gone: nothing on any page can work, so say so instead.
      sessionStorage.removeItem(SESSION_KEY);
      location.replace("closed.html");
      return new Promise(() => {});
    }
    if (!response.ok) {
      const error = new Error(describeError(data, response.status));
      error.action = data?.error?.action ?? null; // a fix the page can offer as a button
      throw error;
    }
    return data;
  }
}

/** The API's error shape: {message, error: {code, message, field, remedy}}; say what to do next. */
function describeError(data, status) {
  if (status === 429 && !data?.error) {
    // API Gateway's own throttle of the route ({"message": "Too Many Requests"}), not the service's.
    return "The service is taking too many requests right now. Wait a few seconds, then try again.";
  }
  const message = (data && data.message) || `The request failed (HTTP ${status}).`;
  const remedy = data?.error?.remedy;
  return remedy && !message.includes(remedy) ? `${message} ${remedy}` : message;
}

function renderUser() {
  const who = document.getElementById("signed-in-as");
  if (who) who.textContent = signedInEmail() ? `Signed in as ${signedInEmail()}` : "";
}

const PAGES = [
  ["connection.html", "Ad account"],
  ["payments.html", "Payments"],
  ["wizard.html", "Launch wizard"],
  ["audiences.html", "Audiences"],
  ["events.html", "Events"],
  ["models.html", "Models"],
  ["api-keys.html", "API keys"],
  ["account.html", "Account"],
];

/** The header, navigation and sign-in dialog every signed-in page shares. */
function chrome() {
  const here = location.pathname.split("/").pop() || "index.html";
  const links = PAGES.map(([href, text]) =>
    el("li", {}, el("a", { href, "aria-current": href === here ? "page" : null }, text)),
  );
  document.body.prepend(
    el("a", { class: "skip", href: "#main" }, "Skip to content"),
    el(
      "header",
      { class: "top" },
      el("span", { class: "brand" }, "Predictions dashboard"),
      el("nav", { "aria-label": "Main" }, el("ul", {}, ...links)),
      el(
        "div",
        { class: "user" },
        el("span", { id: "signed-in-as" }),
        el("button", { type: "button", id: "sign-out", onclick: signOut }, "Sign out"),
      ),
    ),
  );
  const dialog = el(
    "dialog",
    { id: "signin-dialog", "aria-labelledby": "signin-dialog-title" },
    el(
      "form",
      { method: "dialog", novalidate: "" },
      el("h2", { id: "signin-dialog-title" }, "Sign in to continue"),
      el("p", { class: "hint" }, "Your session has ended. Sign in again: this page keeps what you were doing."),
      el("label", { for: "dialog-email" }, "E-mail"),
      el("input", { id: "dialog-email", name: "email", type: "email", autocomplete: "username", required: "" }),
      el("label", { for: "dialog-password" }, "Password"),
      el("input", { id: "dialog-password", name: "password", type: "password", autocomplete: "current-password", required: "" }),
      el("p", { role: "alert" }),
      el("div", { class: "actions" }, el("button", { type: "submit" }, "Sign in")),
    ),
  );
  // Escape would leave the page with no session: the dialog stays until the user signs in or out.
  dialog.addEventListener("cancel", (event) => event.preventDefault());
  document.body.append(dialog);
}

/** Every signed-in page: header, sign-in when needed, then the page's own start. */
export async function page(start) {
  chrome();
  if (!readSession()) await reauthenticate();
  renderUser();
  await start();
}

/** Announce a result to everyone (screen readers too) in the page's status region. */
export function announce(message, kind = "info") {
  const status = document.getElementById("status");
  status.dataset.kind = kind;
  status.textContent = (kind === "error" ? "Error: " : "") + message;
}

/** A failure's text as a sentence: capitalised, ending with a full stop ("training failed unexpectedly"). */
// A training's stage in words: the ids the training job reports (shared/ml/training.py, training_job.py).
const STAGES = {
  "loading data": "reading the synced data",
  encode: "reading the orders",
  features: "describing each customer's buying",
  tune: "weighing its parts on an earlier window",
  fit: "learning from the orders",
  evaluate: "testing on the latest orders",
  refit: "learning from the latest orders too",
  export: "writing the model",
  registering: "making it current",
};

/** The training stage ``stage`` in words (an id this page does not know, as it is). */
export function stageWords(stage) {
  return STAGES[stage] ?? stage.replaceAll("_", " ");
}

export function sentence(text) {
  return `${text[0].toUpperCase()}${text.slice(1)}${text.endsWith(".") ? "" : "."}`;
}

export function formatDate(iso) {
  return iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "—";
}

// The failures whose remedy ends in reconnecting the ad account (shared/platform/errors.py).
const RECONNECT_CODES = new Set([
  "platform_reconnect_required",
  "platform_permissions",
  "platform_no_ad_accounts",
  "platform_business_account_required",
]);

/** A link to the Ad account page when a failure's remedy is to reconnect the ad account (its code is one
 * of RECONNECT_CODES), else null. `label` is the link's accessible name, if not its text. */
export function reconnectLink(failure, label) {
  if (!RECONNECT_CODES.has(failure?.code)) return null;
  return el("a", { href: "connection.html", ...(label ? { "aria-label": label } : {}) }, "Reconnect on the Ad account page");
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    // Through the CSS object model: a style attribute is inline style, which the page's
    // Content-Security-Policy (style-src 'self') refuses.
    else if (key === "style") node.style.cssText = value;
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}
