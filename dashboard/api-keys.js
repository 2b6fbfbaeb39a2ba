import { announce, api, el, formatDate, page } from "./app.js";

const form = document.getElementById("create");
const tbody = document.getElementById("keys");

async function load() {
  const { keys } = await api("/dashboard/api-keys");
  tbody.replaceChildren(
    ...(keys.length ? keys.map(row) : [el("tr", {}, el("td", { colspan: 8 }, "No keys yet: create one above."))]),
  );
}

function row(key) {
  const revoked = Boolean(key.revokedAt);
  const cell = (label, ...content) => el("td", { "data-label": label }, ...content);
  return el(
    "tr",
    {},
    cell("Label", key.label),
    cell("Prefix", el("code", {}, key.prefix)),
    cell("Status", revoked
      ? el("span", {}, el("span", { class: "badge bad" }, "Revoked"), ` ${formatDate(key.revokedAt)}`)
      : el("span", { class: "badge ok" }, "Active")),
    cell("Created", formatDate(key.createdAt)),
    cell("Last used", formatDate(key.lastUsedAt)),
    cell("Today", String(key.usage.today) + (key.dailyQuota ? ` of ${key.dailyQuota}` : "")),
    cell("Total", String(key.usage.total)),
    revoked ? el("td", {}) : cell("Actions", el("button", {
      type: "button", class: "danger", "aria-label": `Revoke key ${key.label} (${key.prefix})`,
      onclick: () => revoke(key),
    }, "Revoke")),
  );
}

async function revoke(key) {
  if (!confirm(`Revoke “${key.label}” (${key.prefix})? Calls with it are refused from now on; this cannot be undone.`)) return;
  try {
    await api(`/dashboard/api-keys/${encodeURIComponent(key.keyId)}`, { method: "DELETE" });
    // The key just created and still shown to copy: a revoked key is nothing to keep.
    const shown = document.getElementById("new-key-value");
    if (shown.textContent.startsWith(`${key.prefix}_`)) {
      shown.textContent = "";
      document.getElementById("new-key").hidden = true;
    }
    announce(`Key “${key.label}” is revoked.`, "success");
    await load();
  } catch (exc) {
    announce(exc.message, "error");
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const label = form.elements.label.value.trim();
  const quota = form.elements.quota.value;
  if (!label) {
    announce("Give the key a label (1 to 64 characters) so you can tell it apart later.", "error");
    form.elements.label.setAttribute("aria-invalid", "true");
    form.elements.label.focus();
    return;
  }
  form.elements.label.removeAttribute("aria-invalid");
  // The API refuses these too, but names its own field (dailyQuota), which this page never shows.
  if (quota && !/^[1-9][0-9]*$/.test(quota.trim())) {
    announce("The daily limit is a whole number of predictions, 1 or more; leave it empty for no limit.", "error");
    form.elements.quota.setAttribute("aria-invalid", "true");
    form.elements.quota.focus();
    return;
  }
  form.elements.quota.removeAttribute("aria-invalid");
  try {
    const body = { label };
    if (quota) body.dailyQuota = Number(quota);
    const created = await api("/dashboard/api-keys", { method: "POST", body });
    document.getElementById("new-key-value").textContent = created.key;
    document.getElementById("new-key").hidden = false;
    announce(`Key “${created.label}” is created. Copy it now: it is shown only once.`, "success");
    form.reset();
    document.getElementById("copy").focus();
    await load();
  } catch (exc) {
    announce(exc.message, "error");
  }
});

document.getElementById("copy").addEventListener("click", async () => {
  const value = document.getElementById("new-key-value").textContent;
  try {
    await navigator.clipboard.writeText(value);
    announce("The key is copied to your clipboard.", "success");
  } catch {
    getSelection().selectAllChildren(document.getElementById("new-key-value"));
    announce("Copying was blocked by the browser: the key is selected, press Ctrl+C (⌘C) to copy it.", "error");
  }
});

async function loadUsage() {
  const model = document.getElementById("usage-model").value;
  const report = await api(`/dashboard/usage${model ? `?model=${encodeURIComponent(model)}` : ""}`);
  const select = document.getElementById("usage-model");
  for (const name of Object.keys(report.totals.byModel)) {
    if (![...select.options].some((o) => o.value === name)) select.append(el("option", { value: name }, name));
  }
  document.getElementById("usage-total").textContent =
    `${report.totals.predictions.toLocaleString()} predictions from ${report.from} to ${report.to} (UTC)` +
    (report.model ? `, model ${report.model}` : "") + ".";
  const perDay = new Map();
  for (const row of report.rows) perDay.set(row.date, (perDay.get(row.date) ?? 0) + row.predictions);
  const highest = Math.max(1, ...perDay.values());
  const chart = document.getElementById("usage-chart");
  chart.replaceChildren(
    ...([...perDay].sort().map(([day, count]) =>
      el("li", {},
        el("span", { class: "bar-label" }, day),
        el("span", { class: "bar", style: `inline-size: ${(100 * count) / highest}%` }),
        el("span", { class: "bar-value" }, count.toLocaleString())))),
  );
  if (!perDay.size) chart.replaceChildren(el("li", {}, "No predictions in this period."));
  document.getElementById("usage-rows").replaceChildren(
    ...report.rows.map((row) => el("tr", {},
      el("td", { "data-label": "Day" }, row.date),
      el("td", { "data-label": "Key" }, `${row.label} (${row.prefix})`),
      el("td", { "data-label": "Model" }, row.model),
      el("td", { "data-label": "Predictions" }, row.predictions.toLocaleString()))),
  );
}

document.getElementById("usage-model").addEventListener("change", () =>
  loadUsage().catch((exc) => announce(exc.message, "error")),
);

page(() => Promise.all([load(), loadUsage()]).catch((exc) => announce(exc.message, "error")));
