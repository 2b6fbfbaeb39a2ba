import { announce, api, el, formatDate, page } from "./app.js";

const siteForm = document.getElementById("site-form");
const period = document.getElementById("period");
let site = null;

const count = (n) => n.toLocaleString();

// --- Events sent ---------------------------------------------------------------------------------

async function loadReport() {
  const report = await api(`/platform-ads/events?days=${encodeURIComponent(period.value)}`);
  const { total } = report;
  const notSentFrom = (source) => report.bySource.some((row) => row.source === source && row.notSent);
  const extra = [
    total.rejected ? `${count(total.rejected)} rejected` : null,
    total.skipped ? `${count(total.skipped)} skipped` : null,
    total.notSent ? `${count(total.notSent)} not sent` : null,
  ].filter(Boolean);
  document.getElementById("events-total").textContent =
    `${count(total.sent)} events sent from ${report.firstDay} to ${report.lastDay} (UTC)` +
    (extra.length ? `; ${extra.join(", ")}.` : ".") +
    (notSentFrom("site")
      ? " Not sent from your shop's pages: they arrived while no ad account could take them (not connected, its access lost, or the platform down), and they are lost."
      : "") +
    (notSentFrom("checkout")
      ? " Not sent from the hosted checkout: paid while no ad account (or its pixel) could take them; your next sync of the shop's data sends those paid in the 7 days before it."
      : "") +
    (total.notSent
      ? " If the Ad account page says the account is not connected or its access is lost, connect it again there."
      : "") +
    (total.sent + total.rejected + total.skipped + total.notSent === 0
      ? " Nothing yet: sync your shop's data while the ad account is connected, or paste the snippet below into your shop's pages."
      : "");
  renderChart(report.perDay);
  const cell = (label, ...content) => el("td", { "data-label": label }, ...content);
  const numbers = (row) => [
    cell("Sent", count(row.sent)),
    cell("Rejected", count(row.rejected)),
    cell("Skipped", count(row.skipped)),
    cell("Not sent", count(row.notSent)),
  ];
  document.getElementById("by-source").replaceChildren(
    ...(report.bySource.length
      ? report.bySource.map((row) =>
        el("tr", {}, cell("Source", row.sourceLabel), cell("Event", row.eventName), ...numbers(row)))
      : [el("tr", {}, el("td", { colspan: 6 }, "No events in this period."))]),
  );
  const days = report.perDay.filter((day) => day.events.length).reverse();
  document.getElementById("per-day").replaceChildren(
    ...(days.length
      ? days.flatMap((day) => day.events.map((row) =>
        el("tr", {}, cell("Day", day.date), cell("Source", row.sourceLabel), cell("Event", row.eventName), ...numbers(row))))
      : [el("tr", {}, el("td", { colspan: 7 }, "No events in this period."))]),
  );
  renderRejections(report.rejections);
}

function renderChart(perDay) {
  const highest = Math.max(1, ...perDay.map((day) => day.total.sent));
  document.getElementById("events-chart").replaceChildren(
    ...perDay.map((day) =>
      el("li", {},
        el("span", { class: "bar-label" }, day.date),
        el("span", { class: "bar", style: `inline-size: ${(100 * day.total.sent) / highest}%` }),
        el("span", { class: "bar-value" }, `${count(day.total.sent)} sent`))),
  );
}

function renderRejections(rejections) {
  const list = document.getElementById("rejections");
  if (!rejections.length) {
    list.replaceChildren(el("li", {}, "No event was rejected in this period."));
    return;
  }
  list.replaceChildren(...rejections.map((item) => {
    const what = [item.eventName ?? "An event", item.eventId ? `(id ${item.eventId})` : null].filter(Boolean).join(" ");
    const codes = [
      item.platformCode != null ? `code ${item.platformCode}${item.platformSubcode != null ? `/${item.platformSubcode}` : ""}` : null,
      item.fbtraceId ? `reference ${item.fbtraceId}` : null,
    ].filter(Boolean).join(", ");
    return el("li", { class: "rejection" },
      el("p", {}, el("strong", {}, what), ` · ${item.sourceLabel} · ${formatDate(item.at)}`),
      el("p", {}, item.explanation),
      el("p", {}, el("strong", {}, "What to do: "), item.remedy),
      el("p", { class: "remedy" },
        item.platformCode != null ? "The platform said: " : "The check that failed: ",
        item.reason, codes ? ` (${codes})` : ""));
  }));
}

period.addEventListener("change", () => loadReport().catch((exc) => announce(exc.message, "error")));

// --- The shop's pages: domains, test code, site key, snippet -------------------------------------

function renderSite(view) {
  site = view;
  siteForm.elements.domains.value = view.domains.join("\n");
  siteForm.elements.testEventCode.value = view.testEventCode ?? "";
  const facts = [
    ["Site key", view.siteKey ? el("code", {}, view.siteKey) : "None: create one to get the snippet."],
    ["Created", view.siteKeyCreatedAt ? formatDate(view.siteKeyCreatedAt) : null],
    ["Previous key works until", view.previousKeyExpiresAt ? formatDate(view.previousKeyExpiresAt) : null],
    ["Sends to", el("code", {}, view.endpoint)],
  ].filter(([, value]) => value);
  document.getElementById("key-facts").replaceChildren(
    ...facts.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]),
  );
  document.getElementById("issue-key").textContent = view.siteKey ? "Rotate key" : "Create site key";
  document.getElementById("revoke-key").hidden = !view.siteKey;
  document.getElementById("snippet-block").hidden = !view.snippet;
  document.getElementById("snippet").textContent = view.snippet ?? "";
  document.getElementById("test-state").textContent = view.testEventCode
    ? `Your shop's pages' events now carry the test code ${view.testEventCode}.`
    : "No test code is set: your shop's pages' events go to the pixel as usual.";
}

async function loadSite() {
  renderSite(await api("/platform-ads/events/site"));
}

siteForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const domains = siteForm.elements.domains.value.split(/[\n,]+/).map((d) => d.trim()).filter(Boolean);
  const field = siteForm.elements.domains;
  try {
    const saved = await api("/platform-ads/events/site", {
      method: "POST",
      body: { domains, testEventCode: siteForm.elements.testEventCode.value.trim() || null },
    });
    field.removeAttribute("aria-invalid");
    renderSite(saved);
    announce(saved.domains.length
      ? `Saved: pages of ${saved.domains.join(", ")} may send events.`
      : "Saved: no domain is declared, so no page may send events.", "success");
  } catch (exc) {
    field.setAttribute("aria-invalid", "true");
    announce(exc.message, "error");
  }
});

document.getElementById("issue-key").addEventListener("click", async () => {
  const rotating = Boolean(site?.siteKey);
  if (rotating && !confirm("Rotate the site key? A new key and snippet are made; the current key keeps working for 24 hours, then pages still using it stop sending events.")) return;
  try {
    renderSite(await api("/platform-ads/events/site/key", { method: "POST" }));
    announce(rotating
      ? "The site key is rotated: paste the new snippet into your shop's pages within 24 hours."
      : "The site key is created: paste the snippet into your shop's pages.", "success");
  } catch (exc) {
    announce(exc.message, "error");
  }
});

document.getElementById("revoke-key").addEventListener("click", async () => {
  if (!confirm("Revoke the site key? Your shop's pages stop sending events at once (the old key too, if you rotated it) until you create a new key and paste its snippet.")) return;
  try {
    renderSite(await api("/platform-ads/events/site/key", { method: "DELETE" }));
    announce("The site key is revoked: your shop's pages no longer send events.", "success");
  } catch (exc) {
    announce(exc.message, "error");
  }
});

document.getElementById("copy-snippet").addEventListener("click", async () => {
  const snippet = document.getElementById("snippet");
  try {
    await navigator.clipboard.writeText(snippet.textContent);
    announce("The snippet is copied to your clipboard.", "success");
  } catch {
    getSelection().selectAllChildren(snippet);
    announce("Copying was blocked by the browser: the snippet is selected, press Ctrl+C (⌘C) to copy it.", "error");
  }
});

page(() => Promise.all([loadReport(), loadSite()]).catch((exc) => announce(exc.message, "error")));
