import { announce, api, el, formatDate, page } from "./app.js";

const tbody = document.getElementById("audiences");
// Text says the state; the badge colour only repeats it.
const KINDS = { active: "ok", ready: "ok", failed: "bad", deleted: "info" };

async function load() {
  const { audiences } = await api("/platform-ads/audiences");
  tbody.replaceChildren(
    ...(audiences.length
      ? audiences.map(row)
      : [el("tr", {}, el("td", { colspan: 9 }, "No audiences yet: connect an ad account, then create one from the wizard or the API."))]),
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
      progress,
      audience.status === "failed" && audience.failure
        ? el("span", { class: "remedy" }, ` ${audience.failure.message}${audience.failure.remedy ? ` What to do: ${audience.failure.remedy}` : ""}`)
        : null)),
    cell("Size", `${audience.userCount.toLocaleString()} users`),
    cell("Objective", audience.objective),
    cell("Lookalike", lookalike),
    cell("Campaign", campaign(audience)),
    cell("Sync", syncSchedule(audience)),
    cell("Created", formatDate(audience.createdAt)),
    cell("Actions", el("span", { class: "actions" },
      audience.status === "failed"
        ? el("button", { type: "button", "aria-label": `Try again: ${name}`, onclick: () => retry(audience) }, "Try again")
        : null,
      canRefresh(audience)
        ? el("button", { type: "button", class: "secondary", "aria-label": `Refresh now: ${name}`, onclick: () => refresh(audience) }, "Refresh now")
        : null,
      audience.advert && !["rolled_back"].includes(audience.advert.state)
        ? el("button", { type: "button", class: "danger", "aria-label": `Delete advert of ${name}`, onclick: () => removeAdvert(audience) }, "Delete advert")
        : null,
      audience.hasSnapshot
        ? el("button", { type: "button", class: "secondary", "aria-label": `Download CSV of ${name}`, onclick: () => download(audience) }, "Download CSV")
        : null,
      el("button", { type: "button", class: "danger", "aria-label": `Delete ${name}`, onclick: () => remove(audience) }, "Delete"),
    )),
  );
}

const ADVERT_STATES = { creating: "being created", paused: "paused", active: "active", rolling_back: "being rolled back", rolled_back: "rolled back: nothing left on the platform", failed: "failed" };

/** Publish advert's campaign: its id and state in words, and what a failed rollback left behind. */
function campaign(audience) {
  const advert = audience.advert;
  if (!advert) return "—";
  const made = advert.objects.find((o) => o.kind === "campaign" && o.platformId);
  const left = advert.objects.filter((o) => o.state === "delete_failed");
  return el("span", {},
    made ? el("code", {}, made.platformId) : "",
    made ? " " : "",
    `(${ADVERT_STATES[advert.state] ?? advert.state.replaceAll("_", " ")})`,
    advert.failure ? el("span", { class: "remedy" }, ` ${advert.failure.message}${advert.failure.remedy ? ` What to do: ${advert.failure.remedy}` : ""}`) : null,
    left.length ? el("span", { class: "remedy" }, ` Left on the platform: ${left.map((o) => `${o.kind} ${o.platformId}`).join(", ")}; delete them in the ads manager.`) : null,
  );
}

/** A segment audience's schedule (``sync``, once the service syncs audiences); a list has none. */
function syncSchedule(audience) {
  const sync = audience.sync;
  if (!sync) return audience.segment ? "—" : "None: made from a list";
  const parts = [sync.frequency === "off" ? "Off" : `${sync.frequency[0].toUpperCase()}${sync.frequency.slice(1)}`];
  if (sync.current) parts.push("syncing now");
  else if (sync.nextSyncAt) parts.push(`next ${formatDate(sync.nextSyncAt)}`);
  if (sync.lastRun) {
    const run = sync.lastRun;
    parts.push(`last ${run.outcome}${run.finishedAt ? ` ${formatDate(run.finishedAt)}` : ""}`);
    if (run.failure) parts.push(`${run.failure.message}${run.failure.remedy ? ` What to do: ${run.failure.remedy}` : ""}`);
  }
  return parts.join(" · ");
}

/** Refresh now re-scores a segment audience; the service says it can (``sync`` is on the audience). */
function canRefresh(audience) {
  return Boolean(audience.segment) && "sync" in audience && audience.status === "active";
}

async function refresh(audience) {
  try {
    await api(`/platform-ads/audiences/${encodeURIComponent(audience.audienceId)}/refresh`, { method: "POST" });
    announce(`“${audience.name}” is being refreshed: it is scored again with the current model and its members replaced.`, "success");
    await load();
  } catch (exc) {
    announce(exc.message, "error");
  }
}

/** A new attempt of a failed activation once its cause is fixed: it resumes after the last batch the
 * platform acknowledged (the retry endpoint; the original request is not sent again). */
async function retry(audience) {
  try {
    await api(`/platform-ads/activations/${encodeURIComponent(audience.audienceId)}/retry`, { method: "POST" });
    announce(`“${audience.name}” is being activated again: it resumes where the last attempt stopped.`, "success");
    await load();
  } catch (exc) {
    announce(exc.message, "error");
  }
}

async function removeAdvert(audience) {
  const question = `Delete the advert of “${audience.name}”? Its campaign, ad set, creative and ad are deleted on the platform and stop delivering. This cannot be undone; the audience stays.`;
  if (!confirm(question)) return;
  try {
    await api(`/platform-ads/audiences/${encodeURIComponent(audience.audienceId)}/advert?confirm=true`, { method: "DELETE" });
    announce(`The advert of “${audience.name}” is deleted.`, "success");
    await load();
  } catch (exc) {
    announce(exc.message, "error");
  }
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
