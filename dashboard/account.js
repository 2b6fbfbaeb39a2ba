import { announce, api, el, formatDate, page } from "./app.js";

// The account page: close the organization's account after typing its name, then follow the
// deletion phase by phase until it is done (GET/POST /platform-ads/account/closure).
const CLOSURE = "/platform-ads/account/closure";
const form = document.getElementById("close-form");
const input = document.getElementById("confirm-name");
const confirmError = document.getElementById("confirm-error");
const STATE_TEXT = { done: "Done", running: "In progress", pending: "Waiting", skipped: "Not asked for" };
const STATE_KIND = { done: "ok", running: "info", pending: "info", skipped: "info" };
let organizationName = null;
let polling = null;

async function load() {
  show(await api(CLOSURE));
}

function show(account) {
  const closure = account.closure;
  // Kept while a closure runs (to resume it); gone with the organization once it is closed.
  organizationName = closure?.state === "completed" ? null : (account.organizationName ?? organizationName);
  document.getElementById("org-name").textContent = organizationName
    ? `You are signed in to ${organizationName}.`
    : "This account is closed: the organization and its data are deleted.";
  document.getElementById("name-to-type").textContent = organizationName ?? "";
  document.getElementById("close-card").hidden = Boolean(closure) || !organizationName;
  document.getElementById("progress-card").hidden = !closure;
  if (closure) showClosure(closure);
}

function showClosure(closure) {
  const done = closure.phases.filter((p) => p.state === "done" || p.state === "skipped").length;
  const deleted = closure.phases.reduce((sum, p) => sum + p.deleted, 0);
  const progress = document.getElementById("closure-progress");
  progress.max = closure.phases.length;
  progress.value = done;
  const state = document.getElementById("closure-state");
  if (closure.state === "completed") {
    state.textContent = `Closed on ${formatDate(closure.finishedAt)}: ${deleted.toLocaleString()} items, files and audiences deleted. Nothing of the organization is left; you can sign out.`;
  } else if (closure.state === "failed") {
    state.textContent = `Closing stopped after ${done} of ${closure.phases.length} steps. What was deleted stays deleted.`;
  } else {
    state.textContent = `Deleting: ${done} of ${closure.phases.length} steps done, ${deleted.toLocaleString()} deleted so far.`;
  }
  document.getElementById("phases").replaceChildren(
    ...closure.phases.map((p) =>
      el("li", {},
        el("span", { class: `badge ${STATE_KIND[p.state]}` }, STATE_TEXT[p.state]), " ",
        el("strong", {}, p.label),
        p.state === "skipped" ? null : el("p", {}, `${p.deleted.toLocaleString()} deleted`)),
    ),
  );
  const failed = closure.state === "failed";
  document.getElementById("closure-failure").hidden = !failed;
  document.getElementById("closure-error").textContent = failed ? closure.error : "";
  document.getElementById("closure-remedy").textContent = failed ? closure.remedy : "";
  document.getElementById("resume-keep").hidden = !(failed && closure.deletePlatformAudiences && closure.phase === "platform");
  if (closure.state === "running") poll();
  else stopPolling();
}

function poll() {
  if (polling) return;
  polling = setInterval(async () => {
    try {
      const account = await api(CLOSURE);
      show(account);
      if (account.closure?.state === "completed") announce("The account is closed and its data deleted.", "success");
      if (account.closure?.state === "failed") announce(account.closure.error, "error");
    } catch (exc) {
      stopPolling();
      announce(exc.message, "error");
    }
  }, 1000);
}

function stopPolling() {
  clearInterval(polling);
  polling = null;
}

async function close(deletePlatformAudiences, confirmName) {
  const account = await api(CLOSURE, { method: "POST", body: { confirmName, deletePlatformAudiences } });
  show(account);
  announce("Closing the account: its data is being deleted.");
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  confirmError.textContent = "";
  input.removeAttribute("aria-invalid");
  if (!input.value.trim()) {
    input.setAttribute("aria-invalid", "true");
    confirmError.textContent = `Type the organization's name (${organizationName}) to close the account.`;
    input.focus();
    return;
  }
  try {
    await close(document.getElementById("delete-platform").checked, input.value);
  } catch (exc) {
    // The API checks the name: its message says why and what to type.
    input.setAttribute("aria-invalid", "true");
    confirmError.textContent = exc.message;
    input.focus();
  }
});

for (const [id, keepPlatform] of [["resume", false], ["resume-keep", true]]) {
  document.getElementById(id).addEventListener("click", async () => {
    try {
      const current = (await api(CLOSURE)).closure;
      // The name was typed when the closure was asked for; resuming continues that decision.
      await close(keepPlatform ? false : current.deletePlatformAudiences, organizationName);
    } catch (exc) {
      announce(exc.message, "error");
    }
  });
}

page(() => load().catch((exc) => announce(exc.message, "error")));
