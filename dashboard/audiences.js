import { announce, api, el, formatDate, page, reconnectLink } from "./app.js";

const tbody = document.getElementById("audiences");
// Text says the state; the badge colour only repeats it.
const KINDS = { active: "ok", ready: "ok", failed: "bad", deleted: "info", deleted_on_platform: "bad" };

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
      // Failed, or deleted on the platform (in its ads manager): what happened and what to do.
      ["failed", "deleted_on_platform"].includes(audience.status) && audience.failure
        ? el("span", { class: "remedy" }, ` ${audience.failure.message}${audience.failure.remedy ? ` What to do: ${audience.failure.remedy}` : ""}`)
        : null),
      changedOnPlatform(audience)),
    cell("Size", size(audience)),
    cell("Objective", audience.objective),
    cell("Lookalike", lookalike),
    cell("Campaign", campaign(audience)),
    cell("Sync", el("span", {}, syncSchedule(audience), audience.sync ? scheduleEditor(audience) : null)),
    cell("Created", formatDate(audience.createdAt)),
    cell("Actions", el("span", { class: "actions" },
      audience.status === "failed" ? reconnectLink(audience.failure, `Reconnect on the Ad account page: ${name}`) : null,
      audience.status === "failed"
        ? el("button", { type: "button", "aria-label": `Try again: ${name}`, onclick: () => retry(audience) }, "Try again")
        : null,
      canRefresh(audience)
        ? el("button", { type: "button", class: "secondary", "aria-label": `Refresh now: ${name}`, onclick: () => refresh(audience) }, "Refresh now")
        : null,
      audience.advert && !["rolled_back"].includes(audience.advert.state)
        ? el("button", { type: "button", class: "danger", "aria-label": `Delete advert of ${name}`, onclick: () => removeAdvert(audience) }, "Delete advert")
        : null,
      el("button", { type: "button", class: "secondary", "aria-label": `Lift of ${name}`, onclick: () => showLift(audience) }, "Lift"),
      audience.hasSnapshot
        ? el("button", { type: "button", class: "secondary", "aria-label": `Download CSV of ${name}`, onclick: () => download(audience) }, "Download CSV")
        : null,
      el("button", { type: "button", class: "danger", "aria-label": `Delete ${name}`, onclick: () => remove(audience) }, "Delete"),
    )),
  );
}

/** What was changed on the platform's side (renamed, paused, a budget, a pixel or Page no longer seen),
 * found by the scheduled check or a refresh: the service shows it and never changes it back. */
function changedOnPlatform(audience) {
  const changes = audience.platformChanges ?? [];
  if (!changes.length) return null;
  return el("div", { class: "remedy platform-changes" },
    el("strong", {}, "Changed on the platform:"),
    el("ul", {}, ...changes.map((change) =>
      el("li", {}, `${change.message}${change.remedy ? ` What to do: ${change.remedy}` : ""}`))));
}

const ADVERT_STATES = { creating: "being created", paused: "paused", active: "active", rolling_back: "being rolled back", rolled_back: "rolled back: nothing left on the platform", failed: "failed", deleted_on_platform: "deleted on the platform" };

/** Publish advert's campaign: its id and state in words, the advert's headline and primary text, and what a
 * failed rollback left behind. */
function campaign(audience) {
  const advert = audience.advert;
  if (!advert) return "—";
  const made = advert.objects.find((o) => o.kind === "campaign" && o.platformId);
  const left = advert.objects.filter((o) => o.state === "delete_failed");
  return el("span", {},
    made ? el("code", {}, made.platformId) : "",
    made ? " " : "",
    `(${ADVERT_STATES[advert.state] ?? advert.state.replaceAll("_", " ")})`,
    // The advert's own words as published: text, whatever characters the marketer typed.
    advert.headline ? el("span", { class: "advert-text" }, ` “${advert.headline}”`) : null,
    advert.primaryText ? el("span", { class: "advert-text" }, ` ${advert.primaryText}`) : null,
    advert.failure ? el("span", { class: "remedy" }, ` ${advert.failure.message}${advert.failure.remedy ? ` What to do: ${advert.failure.remedy}` : ""}`) : null,
    left.length ? el("span", { class: "remedy" }, ` Left on the platform: ${left.map((o) => `${o.kind} ${o.platformId}`).join(", ")}; delete them in the ads manager.`) : null,
  );
}

/** A segment audience's schedule (``sync``, once the service syncs audiences); a list has none. */
function syncSchedule(audience) {
  const sync = audience.sync;
  if (!sync) return audience.segment ? "—" : "None: made from a list";
  const parts = [sync.frequency === "off" ? "Off" : `${sync.frequency[0].toUpperCase()}${sync.frequency.slice(1)}`];
  if (sync.allowStaleModel) parts.push("even with a stale model");
  if (sync.current) parts.push("syncing now");
  else if (sync.nextSyncAt) parts.push(`next ${formatDate(sync.nextSyncAt)}`);
  if (sync.lastRun) {
    const run = sync.lastRun;
    parts.push(`last ${run.outcome}${run.finishedAt ? ` ${formatDate(run.finishedAt)}` : ""}`);
    if (run.failure) parts.push(`${run.failure.message}${run.failure.remedy ? ` What to do: ${run.failure.remedy}` : ""}`);
  }
  return parts.join(" · ");
}

const FREQUENCIES = [["daily", "Daily"], ["weekly", "Weekly"], ["off", "Off: only when I press Refresh now"]];

/** A segment audience's sync settings, edited in place: how often, and whether a stale model may be
 * used (``POST /platform-ads/audiences/{id}/sync``). */
function scheduleEditor(audience) {
  const id = audience.audienceId;
  const frequency = el("select", { id: `sync-frequency-${id}`, name: "frequency" },
    ...FREQUENCIES.map(([value, text]) => el("option", { value, selected: audience.sync.frequency === value ? "" : null }, text)));
  const stale = el("input", { type: "checkbox", id: `sync-stale-${id}`, name: "allowStaleModel", checked: audience.sync.allowStaleModel ? "" : null });
  const form = el("form", { class: "schedule", novalidate: "" },
    el("label", { for: frequency.id }, "How often"),
    frequency,
    el("label", { class: "choice", for: stale.id }, stale,
      el("span", {}, "Sync even when the model is stale", el("br"),
        el("span", { class: "hint" }, "Otherwise a sync with a model past its freshness limit is refused until it is retrained."))),
    el("div", { class: "actions" }, el("button", { type: "submit", class: "secondary" }, "Save schedule")),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    saveSchedule(audience, { frequency: frequency.value, allowStaleModel: stale.checked });
  });
  return el("details", { class: "schedule" },
    el("summary", {}, "Change schedule", el("span", { class: "visually-hidden" }, ` of ${audience.name}`)),
    form);
}

async function saveSchedule(audience, settings) {
  try {
    const saved = await api(`/platform-ads/audiences/${encodeURIComponent(audience.audienceId)}/sync`, { method: "POST", body: settings });
    const sync = saved.sync;
    const when = sync.frequency === "off"
      ? "syncs only when you press Refresh now"
      : `syncs ${sync.frequency}, next ${formatDate(sync.nextSyncAt)}`;
    announce(`“${audience.name}” ${when}${sync.allowStaleModel ? ", even with a stale model" : ""}.`, "success");
    await load();
  } catch (exc) {
    announce(exc.message, "error");
  }
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
    if (exc.action === "delete_advert") offerToDeleteBoth(audience);
  }
}

/** The refusal's remedy as one button: delete the advert that targets the audience, then the audience. */
function offerToDeleteBoth(audience) {
  const button = el("button", { type: "button", class: "danger", onclick: () => deleteBoth(audience) }, "Delete the advert, then the audience");
  document.getElementById("status").append(" ", button);
  button.focus();
}

async function deleteBoth(audience) {
  const question = `Delete the advert of “${audience.name}” (its campaign, ad set, creative and ad stop delivering), then “${audience.name}” itself, on the ad platform too? This cannot be undone.`;
  if (!confirm(question)) return;
  const path = `/platform-ads/audiences/${encodeURIComponent(audience.audienceId)}`;
  try {
    await api(`${path}/advert?confirm=true`, { method: "DELETE" });
    await api(`${path}?confirm=true`, { method: "DELETE" });
    announce(`“${audience.name}” and its advert are deleted.`, "success");
    await load();
  } catch (exc) {
    announce(exc.message, "error");
    await load();
  }
}

// ---------------------------------------------------------------------------------------------
// Lift: the uploaded group against its holdout (GET /platform-ads/audiences/{id}/lift)
// ---------------------------------------------------------------------------------------------

const VERDICTS = {
  uplift: ["ok", "Uplift"],
  downlift: ["bad", "Downlift"],
  no_difference: ["info", "No difference found"],
  not_enough_data: ["info", "Not enough data yet"],
};
const GROUP_NAMES = { uploaded: "Uploaded", holdout: "Held out" };

const liftSection = document.getElementById("lift");
const liftReport = document.getElementById("lift-report");

/** The audience's size in words: the users sent to the platform, those chosen but not sent (no
 * usable e-mail or phone: the lift's uploaded group still counts them) and the holdout. */
function size(audience) {
  const parts = [`${audience.userCount.toLocaleString()} users`];
  if (audience.usersNotSent) {
    parts.push(`${audience.usersNotSent.toLocaleString()} not sent: no usable e-mail or phone`);
  }
  if (audience.holdout) {
    parts.push(`${audience.holdout.holdoutUsers.toLocaleString()} held out to measure lift`);
  }
  return parts.join(" · ");
}

async function showLift(audience) {
  document.getElementById("lift-title").textContent = `Lift of “${audience.name}”`;
  liftReport.replaceChildren(el("p", {}, "Measuring…"));
  liftSection.hidden = false;
  let report;
  try {
    report = await api(`/platform-ads/audiences/${encodeURIComponent(audience.audienceId)}/lift`);
  } catch (exc) {
    liftReport.replaceChildren(el("p", { id: "lift-unavailable" }, `The lift cannot be measured: ${exc.message}`));
    document.getElementById("lift-title").focus();
    return;
  }
  liftReport.replaceChildren(...liftContent(report, audience));
  document.getElementById("lift-title").focus();
}

document.getElementById("lift-close").addEventListener("click", () => {
  liftSection.hidden = true;
  document.getElementById("reload").focus();
});

const pct = (v) => `${(100 * v).toFixed(1)} %`;
const points = (v) => `${v >= 0 ? "+" : "−"}${Math.abs(100 * v).toFixed(1)} points`;
const money = (v) => v.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const signedMoney = (v) => `${v >= 0 ? "+" : "−"}${money(Math.abs(v))}`;
const count = (n) => n.toLocaleString();

/** A figure in words: value, its 95 % interval and the users it rests on. */
function estimate(e, format) {
  return `${format(e.value)} (95 % interval ${format(e.low)} to ${format(e.high)}; ${count(e.users)} users)`;
}

function liftContent(report, audience) {
  const [kind, verdict] = VERDICTS[report.verdict] ?? ["info", report.verdict.replaceAll("_", " ")];
  const groups = [report.uploaded, report.holdout];
  // The uploaded group is everyone chosen for it, also users who could not be sent (no usable e-mail
  // or phone): it can be larger than the audience's size, which counts the users sent.
  const notSent = audience.usersNotSent
    ? ". The uploaded group counts everyone chosen for it, also users who could not be sent for want of a usable e-mail or phone, so it can be larger than the audience's size"
    : "";
  const facts = [
    ["Window", `${formatDate(report.windowStart)} to ${formatDate(report.windowEnd)} (${report.days.toFixed(1)} days)`],
    ["Users", `${count(report.uploaded.users)} in the uploaded group, ${count(report.holdout.users)} held out (${report.holdoutPercent} % holdout, seed ${report.holdoutSeed})${notSent}`],
    ["Orders", `${count(report.ordersInWindow)} of product ${report.productId} in the window`],
    ["Purchase rate difference", estimate(report.difference.purchaseRate, points)],
    ["Revenue per user difference", estimate(report.difference.revenuePerUser, signedMoney)],
  ];
  return [
    el("p", { id: "lift-verdict" }, el("span", { class: `badge ${kind}` }, verdict), " ", el("span", { id: "lift-summary" }, report.summary)),
    el("dl", { class: "facts", id: "lift-facts" }, ...facts.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)])),
    groupChart("lift-rate", "Purchase rate, uploaded vs held out", groups, (g) => g.purchaseRate, pct,
      (g) => `${count(g.buyers)} buyers of ${count(g.users)} users`),
    groupChart("lift-revenue", "Revenue per user, uploaded vs held out", groups, (g) => g.revenuePerUser, money,
      (g) => `${count(g.users)} users`),
    calibrationChart(report),
    calibrationTable(report),
  ];
}

/** Horizontal bars with their 95 % interval drawn over them; the text beside each says it all. */
function groupChart(id, title, groups, pick, format, detail) {
  const top = Math.max(...groups.map((g) => pick(g).high), 1e-9);
  const width = (v) => `${Math.max(0, Math.min(100, (100 * v) / top))}%`;
  return el("figure", { id },
    el("figcaption", {}, `${title} (bars: the value; lines: the 95 % interval)`),
    el("ol", { class: "bars lift" }, ...groups.map((g) => {
      const e = pick(g);
      return el("li", {},
        el("span", {}, GROUP_NAMES[g.group] ?? g.group),
        el("span", { class: "bar-track", "aria-hidden": "true" },
          el("span", { class: `bar${g.group === "holdout" ? " all" : ""}`, style: `inline-size: ${width(e.value)}` }),
          el("span", { class: "interval", style: `inset-inline-start: ${width(e.low)}; inline-size: calc(${width(e.high)} - ${width(e.low)})` })),
        el("span", { class: "bar-value" }, `${format(e.value)} (95 % interval ${format(e.low)} to ${format(e.high)}; ${detail(g)})`));
    })));
}

/** The calibration drawn: per decile, the predicted rate (solid) and the actual one (striped, with its
 * interval). The table after it holds the same numbers in words, so the bars are hidden from screen readers. */
function calibrationChart(report) {
  const top = Math.max(...report.calibration.flatMap((d) => [d.predictedRate, d.actualRate.high]), 1e-9);
  const width = (v) => `${Math.max(0, Math.min(100, (100 * v) / top))}%`;
  return el("figure", { id: "lift-calibration-chart" },
    el("figcaption", {}, "Calibration by score decile: predicted (solid bar) against actual (striped bar; line: its 95 % interval). The table below has the numbers."),
    el("ol", { class: "bars calibration", "aria-hidden": "true" }, ...report.calibration.map((d) =>
      el("li", {},
        el("span", {}, `Decile ${d.decile}`),
        el("span", { class: "pair" },
          el("span", { class: "bar-track" }, el("span", { class: "bar", style: `inline-size: ${width(d.predictedRate)}` })),
          el("span", { class: "bar-track" },
            el("span", { class: "bar all", style: `inline-size: ${width(d.actualRate.value)}` }),
            el("span", { class: "interval", style: `inset-inline-start: ${width(d.actualRate.low)}; inline-size: calc(${width(d.actualRate.high)} - ${width(d.actualRate.low)})` })))))));
}

/** The model's own calibration in the same window: predicted against actual purchase rate by decile. */
function calibrationTable(report) {
  const horizon = report.modelHorizonDays ? ` (the model predicts purchases within ${report.modelHorizonDays} days)` : "";
  const rows = report.calibration.map((d) => el("tr", {},
    el("td", { "data-label": "Decile" }, String(d.decile)),
    el("td", { "data-label": "Users" }, count(d.users)),
    el("td", { "data-label": "Scores" }, `${d.scoreLow.toFixed(3)} to ${d.scoreHigh.toFixed(3)}`),
    el("td", { "data-label": "Predicted" }, pct(d.predictedRate)),
    el("td", { "data-label": "Actual" }, `${pct(d.actualRate.value)} (95 % interval ${pct(d.actualRate.low)} to ${pct(d.actualRate.high)})`),
  ));
  return el("div", { class: "table-wrap" },
    el("table", { class: "stack", id: "lift-calibration" },
      el("caption", {}, `Calibration by score decile, best-scored first: predicted against actual purchase rate in the window${horizon}`),
      el("thead", {}, el("tr", {}, ...["Decile", "Users", "Scores", "Predicted", "Actual"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...rows)));
}

document.getElementById("reload").addEventListener("click", () =>
  load().then(() => announce("The list is up to date.")).catch((exc) => announce(exc.message, "error")),
);

page(() => load().catch((exc) => announce(exc.message, "error")));
