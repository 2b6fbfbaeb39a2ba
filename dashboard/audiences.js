import { announce, api, el, formatDate, page } from "./app.js";

const tbody = document.getElementById("audiences");
// Text says the state; the badge colour only repeats it.
const KINDS = { active: "ok", ready: "ok", failed: "bad", deleted: "info" };

async function load() {
  const { audiences } = await api("/platform-ads/audiences");
  tbody.replaceChildren(
    ...(audiences.length
      ? audiences.map(row)
      : [el("tr", {}, el("td", { colspan: 7 }, "No audiences yet: connect an ad account, then create one from the wizard or the API."))]),
  );
}

function row(audience) {
  const cell = (label, ...content) => el("td", { "data-label": label }, ...content);
  const lookalike = audience.lookalike
    ? `${audience.lookalike.sizePercent}% in ${audience.lookalike.country} (${audience.lookalike.status.replaceAll("_", " ")})`
    : "—";
  const progress = audience.progress && audience.progress.batchesTotal
    ? ` · ${audience.progress.batchesDone} of ${audience.progress.batchesTotal} batches sent`
    : "";
  const name = audience.name;
  return el(
    "tr",
    {},
    cell("Name", name),
    cell("Status", el("span", {},
      el("span", { class: `badge ${KINDS[audience.status] ?? "info"}` }, audience.status.replaceAll("_", " ")),
      progress)),
    cell("Size", `${audience.userCount.toLocaleString()} users`),
    cell("Objective", audience.objective),
    cell("Lookalike", lookalike),
    cell("Created", formatDate(audience.createdAt)),
    cell("Actions", el("span", { class: "actions" },
      audience.hasSnapshot
        ? el("button", { type: "button", class: "secondary", "aria-label": `Download CSV of ${name}`, onclick: () => download(audience) }, "Download CSV")
        : null,
      el("button", { type: "button", class: "danger", "aria-label": `Delete ${name}`, onclick: () => remove(audience) }, "Delete"),
    )),
  );
}

async function download(audience) {
  try {
    const link = await api(`/platform-ads/audiences/${encodeURIComponent(audience.audienceId)}/snapshot`);
    const anchor = el("a", { href: link.url, download: link.filename });
    document.body.append(anchor);
    anchor.click();
    anchor.remove();
    announce(`Downloading ${link.filename}.`, "success");
  } catch (exc) {
    announce(exc.message, "error");
  }
}

async function remove(audience) {
  const question = `Delete “${audience.name}”? It is removed from the ad platform too${audience.lookalike ? ", with its lookalike" : ""}; ads using it stop reaching these people. This cannot be undone.`;
  if (!confirm(question)) return;
  try {
    // The person confirmed above; the API asks for that answer explicitly.
    await api(`/platform-ads/audiences/${encodeURIComponent(audience.audienceId)}?confirm=true`, { method: "DELETE" });
    announce(`“${audience.name}” is deleted.`, "success");
    await load();
  } catch (exc) {
    announce(exc.message, "error");
  }
}

document.getElementById("reload").addEventListener("click", () =>
  load().then(() => announce("The list is up to date.")).catch((exc) => announce(exc.message, "error")),
);

page(() => load().catch((exc) => announce(exc.message, "error")));
