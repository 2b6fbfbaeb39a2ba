import { announce, api, el, formatDate, page, sentence, stageWords } from "./app.js";

// Words carry every verdict; the badge colour only repeats them.
const TRAINING = { pending: ["info", "Waiting to train"], running: ["info", "Training"], succeeded: ["ok", "Trained"], failed: ["bad", "Training failed"] };
// A metric's verdict in words (the API's metricWords); the badge colour only repeats it.
const VERDICT = { good: ["ok", "Good"], fair: ["info", "Fair"], poor: ["bad", "Weak"], info: ["info", "For reference"] };
let following = false;

async function load() {
  const listed = await api("/dashboard/models");
  const container = document.getElementById("models");
  if (!listed.models.length) {
    container.replaceChildren(el("section", { class: "card" },
      el("h2", {}, "No models yet"),
      listed.purchaseTraining?.state === "failed"
        ? el("p", {}, "No model could be trained on your synced data: the Retrain card above says why and what to do.")
        : el("p", {}, "Models train from your shop's data: ", el("a", { href: "wizard.html" }, "upload and sync it in the launch wizard"), ".")));
  } else {
    container.replaceChildren(...listed.models.map(card));
  }
  const used = listed.models.filter((m) => m.wizard.used).map((m) => m.name);
  document.getElementById("wizard-models").textContent = !listed.models.length
    ? ""
    : used.length
      ? `The launch wizard targets with ${used.join(" and ")}: a purchase model trained on your synced shop data. Every other model below serves your shop's API only; each says why.`
      : "No model here is used by the launch wizard yet: it needs a purchase model trained on your synced shop data, which the wizard's sync trains.";
  const running = listed.models.filter((m) => m.training && ["pending", "running"].includes(m.training.state));
  // Data in force that the training refused itself (too short, too few orders) would be refused again.
  const refusedInForce = Boolean(listed.purchaseTraining?.refused && listed.purchaseTraining.inForce);
  document.getElementById("retrain").disabled = !listed.currentDatasetVersion || running.length > 0 || refusedInForce;
  document.getElementById("training-summary").textContent = trainingSummary(listed, running);
  const untrained = listed.purchaseTraining?.state === "failed" && listed.purchaseTraining.inForce;
  return { running: running.length > 0, version: listed.currentDatasetVersion, newest: listed.newestDatasetVersion, untrained };
}

/** Which synced data is in use, in words: a sync is used (audiences, segments, Retrain) once its
 * purchase model's training ends, so a newer sync still training or whose training refused it is said
 * apart from the data in force; data in force with no model trained on it (a young shop's first sync,
 * in force though too short to train on) says why and what to do. */
function trainingSummary(listed, running) {
  const inForce = listed.currentDatasetVersion;
  const newest = listed.newestDatasetVersion;
  if (!newest) return "No data is synced yet: sync it in the launch wizard first.";
  const waiting = newest !== inForce;
  if (running.length) {
    const until = !waiting
      ? ""
      : inForce
        ? ` Until the purchase model is trained on the new sync, the data synced before (version ${inForce}) stays in use.`
        : " The synced data is in use once the purchase model's training ends.";
    return `Training now: ${running.map((m) => m.name).join(" and ")}. This page follows it.${until}`;
  }
  const training = listed.purchaseTraining;
  if (!waiting && training?.state === "failed") {
    const off = training.refused ? " Retrain is off: it would train on the same data and refuse it for the same reason." : "";
    return `The data in force is version ${inForce}: it is in use for the checkout's catalog and audiences, but no model could be trained on it. ${sentence(training.error ?? "the purchase model's training failed")} What to do: ${training.remedy ?? "retrain; if it fails again, sync corrected files."}${off}`;
  }
  if (!waiting) return `The data in force is version ${inForce}.`;
  return inForce
    ? `The latest sync (version ${newest}) is not in use: the purchase model could not be trained on it (see below). The data synced before, version ${inForce}, is still in use for audiences, segments and Retrain.`
    : `No data is in use yet: the purchase model could not be trained on the data synced (version ${newest}). Sync corrected files in the launch wizard: its sync step says what the training needs.`;
}

// How long ago a model was trained, in words: "0 days ago" read as a fault on a model just trained.
function age(days) {
  if (days < 1) return "less than a day ago";
  if (days < 1.95) return "a day ago";
  return `${days.toLocaleString(undefined, { maximumFractionDigits: 1 })} days ago`;
}

function card(model) {
  const id = `model-${model.name}`;
  const f = model.freshness;
  const verdict = f.recommendedRetrain ? ["bad", "Retrain recommended"] : f.isStale ? ["bad", "Stale"] : ["ok", "Fresh"];
  const d = model.drift;
  const drift = d.checkedAt === null
    ? el("p", {}, el("span", { class: "badge info" }, "Not measured"), " Drift has not been checked since this version was trained; the daily check measures it on newer data.")
    : el("p", {},
      el("span", { class: `badge ${d.drifted ? "bad" : "ok"}` }, d.drifted ? "Drifted" : "No drift"),
      ` Largest feature shift (PSI) ${d.maxFeaturePsi.toFixed(2)}, threshold ${d.psiThreshold}; checked ${formatDate(d.checkedAt)}.`);
  const psiRows = Object.entries(d.featurePsi);
  const [trainingKind, trainingWord] = model.training ? TRAINING[model.training.state] ?? ["info", model.training.state] : [];
  return el("section", { class: "card model", "aria-labelledby": id },
    el("h2", { id }, model.name),
    el("dl", { class: "facts" },
      el("dt", {}, "Kind"), el("dd", {}, model.type === "purchase" ? "Purchase likelihood" : "Recommendations"),
      el("dt", {}, "Version"), el("dd", {}, el("code", {}, model.version)),
      el("dt", {}, "Trained"), el("dd", { class: "trained" }, `${formatDate(model.trainedAt)} (${age(f.ageDays)})`),
      el("dt", {}, "Trained on"), el("dd", {}, model.datasetVersion ? `dataset ${model.datasetVersion}` : "uploaded files"),
      el("dt", {}, "Training users"), el("dd", { class: "training-users" }, model.trainingUserCount.toLocaleString()),
      model.horizonDays ? el("dt", {}, "Horizon") : null, model.horizonDays ? el("dd", {}, `${model.horizonDays} days`) : null,
      el("dt", {}, "Predictions served"), el("dd", {}, `${model.totalPredictions.toLocaleString()}${model.lastPredictionDate ? `, last ${formatDate(model.lastPredictionDate)}` : ""}`),
    ),
    el("p", { class: `wizard-use ${model.wizard.used ? "used" : ""}` },
      el("span", { class: `badge ${model.wizard.used ? "ok" : "info"}` }, model.wizard.used ? "In the launch wizard" : "API only"),
      " ", model.wizard.reason),
    el("h3", {}, "How well it predicts"),
    model.qualityGate
      ? el("p", { class: "quality-gate" },
        el("span", { class: `badge ${model.qualityGate.passed ? "ok" : "bad"}` }, model.qualityGate.passed ? "Beats the simple methods" : "Below a simple method"),
        " ", model.qualityGate.sentence,
        model.qualityGate.passed
          ? " That is why this version serves: a retrained version is made current only when it beats the strongest simple method on the latest orders; otherwise this one stays."
          : " It serves as the shop's first model, so the launch wizard has one; a retrained version replaces it as soon as one beats that method.")
      : null,
    model.metricWords.length
      ? el("div", { class: "table-wrap" }, el("table", { class: "metrics stack" },
        el("caption", { class: "hint" }, "Measured on the latest orders the model did not train on."),
        el("thead", {}, el("tr", {}, ...["Measure", "Value", "What it means", "Verdict"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, ...model.metricWords.map((m) => {
          const [badge, word] = VERDICT[m.kind] ?? ["info", m.kind];
          return el("tr", { "data-metric": m.name },
            el("td", { "data-label": "Measure" }, m.label),
            el("td", { "data-label": "Value" }, m.shown),
            el("td", { "data-label": "What it means" }, m.meaning),
            el("td", { "data-label": "Verdict" }, el("span", {}, el("span", { class: `badge ${badge}` }, word), " ", m.verdict)));
        }))))
      : el("p", {}, "No metrics were recorded for this version."),
    el("h3", {}, "Freshness"),
    el("p", { class: "freshness" }, el("span", { class: `badge ${verdict[0]}` }, verdict[1]), " ",
      f.reasons.length ? f.reasons.map((r) => r[0].toUpperCase() + r.slice(1)).join("; ") + "." : `Trained within ${f.staleAfterDays} days${d.checkedAt ? ", and no feature drifted beyond the threshold" : ""}.`),
    f.recommendedRetrain ? el("p", { class: "remedy" }, "What to do: sync your latest files in the launch wizard, or retrain on the current data above.") : null,
    el("h3", {}, "Drift"),
    drift,
    psiRows.length
      ? el("table", {},
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Feature"), el("th", { scope: "col" }, "PSI"), el("th", { scope: "col" }, "Above threshold"))),
        el("tbody", {}, ...psiRows.map(([name, psi]) => el("tr", {}, el("td", {}, name), el("td", {}, psi.toFixed(3)), el("td", {}, psi > d.psiThreshold ? "Yes" : "No")))))
      : null,
    model.training
      ? el("p", { class: "training" }, el("strong", {}, model.training.inForce ? "On the data in force: " : `On the latest sync (${model.training.datasetVersion}, not in use): `), el("span", { class: `badge ${trainingKind}` }, trainingWord),
        model.training.state === "running" && model.training.stage ? ` · ${stageWords(model.training.stage)}` : "",
        model.training.error ? ` · ${model.training.error} What to do: ${model.training.remedy ?? "retrain; if it fails again, sync corrected files."}` : "")
      : null,
  );
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reload until no training is under way (and, after a retrain, until its sync ``syncId`` is trained,
 * in force or not), then say how it ended. */
async function follow(syncId = null) {
  if (following) return;
  following = true;
  try {
    for (;;) {
      const { running, version, newest, untrained } = await load();
      // The newest sync trained but not put in force: its purchase model failed (the summary says so).
      if (!running && (!syncId || newest === syncId) && newest !== version) {
        announce("Training failed: the purchase model could not be trained on the latest sync, so the data in force stays as it was. See below.", "error");
        return;
      }
      // In force, but no model could be trained on it (nothing better was in force): the summary says why.
      if (!running && (!syncId || newest === syncId) && untrained) {
        announce(`Training failed: ${document.getElementById("training-summary").textContent}`, "error");
        return;
      }
      if (!running && (!syncId || version === syncId)) break;
      if (syncId && version !== syncId) {
        const { syncs } = await api("/platform-ads/data-source");
        const sync = syncs.find((s) => s.syncId === syncId);
        if (sync && sync.state === "failed") {
          announce(`The retrain stopped: ${sync.error?.message ?? "the data could not be read."} What to do: ${sync.error?.remedy || "sync the files again in the launch wizard."}`, "error");
          await load();
          return;
        }
      }
      await sleep(1500);
    }
    announce("Training finished: the models below are the new versions.", "success");
  } finally {
    following = false;
  }
}

document.getElementById("retrain").addEventListener("click", async () => {
  const button = document.getElementById("retrain");
  button.disabled = true;
  try {
    const sync = await api("/dashboard/models/retrain", { method: "POST" });
    announce("Retraining started: both models are training on the current data.");
    await follow(sync.syncId);
  } catch (exc) {
    announce(exc.message, "error");
    button.disabled = false;
  }
});

page(async () => {
  try {
    if ((await load()).running) await follow();
  } catch (exc) {
    document.getElementById("models").replaceChildren(el("p", {}, "The models could not be loaded: see the message above."));
    announce(exc.message, "error");
  }
});
