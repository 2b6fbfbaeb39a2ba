import { announce, api, el, formatDate, page } from "./app.js";

// The launch wizard: seven steps, one shown at a time, each against the real API. What the user has
// chosen so far lives in `state`; going back keeps it.
const STEPS = ["data", "sync", "readiness", "destination", "targeting", "setup", "activation"];
const state = {
  reached: 0,
  files: null, // the File objects of this session's upload
  uploadId: null,
  syncId: null,
  version: null,
  destination: "publish",
  preview: null,
  audienceId: null,
  active: null, // {key, audience}: the activated audience and the settings it was made with
  currency: null,
  products: [],
};
const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Steps and their navigation
// ---------------------------------------------------------------------------------------------

function go(step, { focus = true } = {}) {
  const index = STEPS.indexOf(step);
  state.reached = Math.max(state.reached, index);
  for (const id of STEPS) $(id).hidden = id !== step;
  if (focus) announce(""); // what the last step said is not news on this one
  renderSteps(step);
  history.replaceState(null, "", `#${step}`);
  if (focus) $(`${step}-title`).focus();
  ENTER[step]?.();
}

function renderSteps(current) {
  const titles = ["Data source", "Sync", "Readiness", "Destination", "Targeting", "Destination setup", "Activation"];
  $("steps").replaceChildren(
    ...STEPS.map((id, index) => {
      const text = `${index + 1}. ${titles[index]}`;
      if (id === current) return el("li", {}, el("a", { href: `#${id}`, "aria-current": "step" }, text));
      if (index > state.reached) return el("li", { class: "later" }, el("span", {}, text, el("span", { class: "visually-hidden" }, " (not reached yet)")));
      return el("li", {}, el("a", { href: `#${id}`, onclick: (event) => { event.preventDefault(); go(id); } }, text));
    }),
  );
}

for (const button of document.querySelectorAll("[data-goto]")) {
  button.addEventListener("click", () => go(button.dataset.goto));
}

function fail(exc) {
  announce(exc.message, "error");
  $("status").focus();
}

// ---------------------------------------------------------------------------------------------
// 1. Data source: three files PUT to presigned links, with one progress bar for all of them
// ---------------------------------------------------------------------------------------------

const KINDS = ["customers", "products", "orders"];

async function showCurrentData() {
  const source = await api("/platform-ads/data-source");
  const current = source.current;
  $("use-current").hidden = !current;
  $("data-current").textContent = current
    ? `Your current data: ${current.rowCounts.customers.toLocaleString()} customers, ${current.rowCounts.products.toLocaleString()} products and ${current.rowCounts.orders.toLocaleString()} orders, synced ${formatDate(current.createdAt)}. Upload new files, or use it as it is.`
    : "No data is synced yet.";
  return source;
}

$("upload-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const missing = KINDS.find((kind) => !form.elements[kind].files.length);
  if (missing) {
    announce(`Choose the ${missing} file: all three files are needed.`, "error");
    form.elements[missing].focus();
    return;
  }
  const files = Object.fromEntries(KINDS.map((kind) => [kind, form.elements[kind].files[0]]));
  $("upload").disabled = true;
  try {
    const links = await api("/platform-ads/data-source/uploads", { method: "POST", body: { format: "csv" } });
    const tooBig = KINDS.find((kind) => files[kind].size > links.maxFileBytes);
    if (tooBig) {
      throw new Error(`The ${tooBig} file is ${files[tooBig].size.toLocaleString()} bytes; the limit is ${links.maxFileBytes.toLocaleString()}. Keep the recent history and try again.`);
    }
    await uploadAll(links, files);
    state.files = files;
    state.uploadId = links.uploadId;
    readProductIds(files.products);
    await startSync({ uploadId: links.uploadId });
  } catch (exc) {
    fail(exc);
  } finally {
    $("upload").disabled = false;
  }
});

async function uploadAll(links, files) {
  const total = KINDS.reduce((sum, kind) => sum + files[kind].size, 0);
  const sent = Object.fromEntries(KINDS.map((kind) => [kind, 0]));
  const bar = $("upload-bar");
  const show = () => {
    const done = Object.values(sent).reduce((a, b) => a + b, 0);
    bar.value = total ? Math.round((done / total) * 100) : 100;
    $("upload-progress-text").textContent = `${bar.value}% · ${kib(done)} of ${kib(total)} sent`;
  };
  $("upload-progress").hidden = false;
  show();
  for (const link of links.files) {
    await put(link, files[link.kind], (loaded) => {
      sent[link.kind] = loaded;
      show();
    });
    sent[link.kind] = files[link.kind].size;
    show();
  }
}

function kib(bytes) {
  return bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024).toLocaleString()} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** PUT one file to its presigned link; XMLHttpRequest because fetch reports no upload progress. */
function put(link, file, progress) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open(link.method, link.url);
    request.setRequestHeader("Content-Type", link.contentType);
    request.upload.onprogress = (event) => progress(event.loaded);
    request.onload = () =>
      request.status >= 200 && request.status < 300
        ? resolve()
        : reject(new Error(`The ${link.kind} file was refused by storage (HTTP ${request.status}). Upload the files again; each link lasts 15 minutes.`));
    request.onerror = () => reject(new Error(`The ${link.kind} file could not be sent. Check your connection, then upload the files again.`));
    request.send(file);
  });
}

/** The product ids of the products file just uploaded, offered as suggestions on the targeting step. */
async function readProductIds(file) {
  const [header, ...lines] = (await file.text()).split(/\r?\n/).filter(Boolean);
  const columns = header.split(",").map((c) => c.trim().replace(/^"|"$/g, ""));
  const id = columns.indexOf("product_id");
  const name = columns.indexOf("name");
  if (id < 0) return;
  state.products = lines.slice(0, 500).map((line) => {
    const cells = line.split(",");
    return [cells[id], name >= 0 ? cells[name] : ""];
  });
  $("product-ids").replaceChildren(...state.products.map(([value, label]) => el("option", { value }, label || value)));
}

$("use-current").addEventListener("click", async () => {
  try {
    const source = await api("/platform-ads/data-source");
    state.syncId = null;
    state.version = source.current.version;
    go("sync");
    await followSync(null);
  } catch (exc) {
    fail(exc);
  }
});

// ---------------------------------------------------------------------------------------------
// 2. Sync: the report (rows read and kept, rejected rows), accept, then both models' training
// ---------------------------------------------------------------------------------------------

async function startSync(body) {
  const sync = await api("/platform-ads/data-source/sync", { method: "POST", body });
  state.syncId = sync.syncId;
  state.version = null;
  go("sync");
  await followSync(sync.syncId);
}

const TRAINING = { pending: "Waiting", running: "Training", succeeded: "Trained", failed: "Failed" };

async function followSync(syncId) {
  $("sync-next").disabled = true;
  $("rejected").hidden = true;
  $("training").replaceChildren();
  $("sync-state").textContent = "Checking the files…";
  for (;;) {
    const source = await api("/platform-ads/data-source");
    const sync = syncId ? source.syncs.find((s) => s.syncId === syncId) : null;
    if (sync) renderSync(sync);
    if (sync && sync.state === "review") return;
    if (sync && sync.state === "failed") return;
    const version = source.versions.find((v) => v.version === (sync ? sync.datasetVersion : state.version));
    if (version) {
      state.version = version.version;
      if (renderTraining(version)) return;
    }
    await sleep(1000);
  }
}

function renderSync(sync) {
  const rows = Object.entries(sync.rowsRead);
  $("sync-counts-table").hidden = rows.length === 0;
  const rejectedBy = {};
  // Rows are counted per kind (customers, ...); rejected rows name the file (customers.csv, ...).
  for (const row of sync.rejectedRows) {
    const kind = row.file.split(".")[0];
    rejectedBy[kind] = (rejectedBy[kind] ?? 0) + 1;
  }
  $("sync-counts").replaceChildren(
    ...rows.map(([file, read]) => el("tr", {},
      el("td", { "data-label": "File" }, file),
      el("td", { "data-label": "Rows read" }, read.toLocaleString()),
      el("td", { "data-label": "Rows kept" }, sync.state === "synced" || sync.state === "review" ? (read - (rejectedBy[file] ?? 0)).toLocaleString() : "—"),
    )),
  );
  const words = {
    validating: "Checking the files…",
    review: `${sync.rejectedCount.toLocaleString()} ${sync.rejectedCount === 1 ? "row was" : "rows were"} rejected, so nothing is stored yet. Review them below: keep the good rows, or upload corrected files.`,
    failed: `The sync failed: ${sync.error?.message ?? "the files could not be read."} ${sync.error?.remedy ? `What to do: ${sync.error.remedy}` : "Upload corrected files."}`,
    synced: sync.rejectedCount
      ? `Synced, keeping the good rows (${sync.rejectedCount.toLocaleString()} rejected). The models are training on it.`
      : "Synced: every row was kept. The models are training on it.",
  };
  $("sync-state").textContent = words[sync.state] ?? sync.state;
  if (sync.state === "failed") announce(words.failed, "error");
  $("rejected").hidden = sync.state !== "review";
  if (sync.state === "review") {
    $("rejected-summary").textContent = sync.rejectedRows.length < sync.rejectedCount
      ? `The first ${sync.rejectedRows.length} of ${sync.rejectedCount.toLocaleString()}:`
      : `All ${sync.rejectedCount.toLocaleString()}:`;
    $("rejected-rows").replaceChildren(
      ...sync.rejectedRows.map((row) => el("tr", {},
        el("td", { "data-label": "File" }, row.file),
        el("td", { "data-label": "Line" }, String(row.row)),
        el("td", { "data-label": "Column" }, row.field),
        el("td", { "data-label": "Why" }, row.reason),
      )),
    );
  }
}

/** Show both models' training; true once both have finished. */
function renderTraining(version) {
  const trainings = Object.values(version.training);
  $("training").replaceChildren(
    ...trainings.map((t) => el("li", {},
      el("span", { class: `badge ${t.state === "succeeded" ? "ok" : t.state === "failed" ? "bad" : "info"}` }, TRAINING[t.state] ?? t.state),
      " ",
      el("strong", {}, t.modelName),
      t.stage && t.state === "running" ? ` · ${t.stage.replaceAll("_", " ")}` : "",
      t.error ? el("p", { class: "remedy" }, `${t.error} What to do: upload the files again; if it fails twice, contact support.`) : null,
    )),
  );
  const done = trainings.length > 0 && trainings.every((t) => t.state === "succeeded" || t.state === "failed");
  const purchase = version.training.purchase;
  if (done) {
    $("sync-next").disabled = purchase?.state !== "succeeded";
    $("sync-state").textContent = purchase?.state === "succeeded"
      ? `Your data is synced (${version.rowCounts.customers.toLocaleString()} customers) and the models are trained.`
      : "The purchase model could not be trained on this data: see below, then upload the files again.";
    announce(purchase?.state === "succeeded" ? "The models are trained: continue to readiness." : $("sync-state").textContent,
      purchase?.state === "succeeded" ? "success" : "error");
  }
  return done;
}

$("accept-rejected").addEventListener("click", () =>
  startSync({ uploadId: state.uploadId, acceptRejectedRows: true }).catch(fail),
);
$("sync-next").addEventListener("click", () => go("readiness"));

// ---------------------------------------------------------------------------------------------
// 3. Readiness: the checklist, pass, fail or unknown in words, each failure with what to do
// ---------------------------------------------------------------------------------------------

const MARKS = { pass: ["ok", "Pass"], fail: ["bad", "Fail"], unknown: ["info", "Unknown"] };
const GROUPS = { connection: "Connection", ad_account: "Ad account", data: "Data and models", publish_advert: "Publish advert" };
let readiness = null;
let readinessLoad = null;

function loadReadiness() {
  readiness = null;
  readinessLoad = api("/platform-ads/readiness?modelName=shop-purchase").then(showReadiness);
  return readinessLoad;
}

function showReadiness(answer) {
  readiness = answer;
  const failing = readiness.items.filter((item) => item.status !== "pass").length;
  $("readiness-summary").textContent = readiness.ready
    ? "Everything passes: you can go on."
    : `${failing} of ${readiness.items.length} items need attention; each says what to do.`;
  $("readiness-items").replaceChildren(
    ...readiness.items.map((item) => {
      const [kind, word] = MARKS[item.status] ?? ["info", item.status];
      return el("li", {},
        el("span", { class: `badge ${kind}` }, word),
        " ",
        el("strong", {}, `${GROUPS[item.group] ?? item.group}: ${item.id.replaceAll("_", " ")}`),
        el("p", {}, item.evidence),
        item.remedy ? el("p", { class: "remedy" }, `What to do: ${item.remedy}`) : null,
      );
    }),
  );
}

$("recheck").addEventListener("click", () =>
  loadReadiness().then(() => announce("Checked again.")).catch(fail),
);
$("readiness-next").addEventListener("click", async () => {
  await readinessLoad?.catch(() => null);
  if (readiness?.ready) {
    go("destination");
    return;
  }
  announce("Some items fail: do what each failing item says, then press Check again.", "error");
  $("readiness-summary").scrollIntoView();
});

// ---------------------------------------------------------------------------------------------
// 4. Destination choice
// ---------------------------------------------------------------------------------------------

$("destination-next").addEventListener("click", () => {
  state.destination = document.querySelector("input[name=destination]:checked").value;
  $("advert-fields").hidden = state.destination !== "publish";
  $("launch").textContent = state.destination === "publish" ? "Launch and publish the advert" : "Launch and open the ads manager";
  go("targeting");
});

// ---------------------------------------------------------------------------------------------
// 5. Targeting: model, product, rule; a live size estimate and score histogram from the preview
// ---------------------------------------------------------------------------------------------

const RULE_LABELS = { top_percent: "Percent of users", top_n: "Number of users", threshold: "Minimum score (0 to 1)" };
let previewTimer = null;
let previewSerial = 0;

async function loadModels() {
  if ($("model").options.length) return;
  $("model").replaceChildren(el("option", { value: "shop-purchase" }, "Likely buyers of a product (shop-purchase)"));
}

function segment() {
  const form = $("targeting-form");
  return {
    modelName: form.elements.model.value,
    productId: form.elements.product.value.trim(),
    rule: form.elements.rule.value,
    value: Number(form.elements.value.value),
  };
}

/** What is wrong with the segment as typed, in words, or null. */
function segmentProblem(spec) {
  if (!spec.productId) return "Enter a product ID from your products file to see who is likely to buy it.";
  if (!Number.isFinite(spec.value) || $("rule-value").value === "") return `Enter the ${RULE_LABELS[spec.rule].toLowerCase()}.`;
  if (spec.rule === "top_percent" && !(spec.value > 0 && spec.value <= 100)) return "Enter a percentage above 0 and at most 100.";
  if (spec.rule === "top_n" && !(spec.value >= 1 && Number.isInteger(spec.value))) return "Enter a whole number of users, at least 1.";
  return null;
}

function schedulePreview() {
  clearTimeout(previewTimer);
  $("targeting-next").disabled = true;
  previewTimer = setTimeout(() => runPreview().catch(fail), 350);
}

async function runPreview() {
  const spec = segment();
  const problem = segmentProblem(spec);
  const serial = ++previewSerial;
  state.preview = null;
  if (problem) {
    $("preview-summary").textContent = problem;
    $("preview-warnings").replaceChildren();
    $("histogram-figure").hidden = true;
    return;
  }
  $("preview").setAttribute("aria-busy", "true");
  try {
    const preview = await api("/platform-ads/targeting/preview", { method: "POST", body: spec });
    if (serial !== previewSerial) return; // a newer preview is on its way
    state.preview = preview;
    renderPreview(preview);
  } catch (exc) {
    if (serial !== previewSerial) return;
    $("preview-summary").textContent = `Error: ${exc.message}`;
    $("preview-warnings").replaceChildren();
    $("histogram-figure").hidden = true;
  } finally {
    $("preview").setAttribute("aria-busy", "false");
  }
}

function renderPreview(preview) {
  const cut = preview.cutScore === null ? "" : ` (scores of ${preview.cutScore.toFixed(3)} and above)`;
  $("preview-summary").textContent =
    `${preview.size.toLocaleString()} of ${preview.scoredUsers.toLocaleString()} scored users are in the segment${cut}. ` +
    `${preview.coverage.usable.toLocaleString()} of them have an e-mail or phone the platform can match: that is what would be uploaded.`;
  $("preview-warnings").replaceChildren(...preview.warnings.map((w) => el("li", {}, el("strong", {}, "Warning: "), w.message)));
  const { edges, allUsers, segment: inSegment } = preview.histogram;
  const most = Math.max(1, ...allUsers);
  $("histogram").replaceChildren(
    ...allUsers.map((count, i) => el("li", {},
      el("span", { class: "bar-label" }, `${edges[i].toFixed(2)}–${edges[i + 1].toFixed(2)}`),
      el("span", { class: "bar-track", "aria-hidden": "true" },
        el("span", { class: "bar all", style: `inline-size: ${(count / most) * 100}%` }),
        el("span", { class: "bar", style: `inline-size: ${(inSegment[i] / most) * 100}%` }),
      ),
      el("span", { class: "bar-value" }, `${inSegment[i].toLocaleString()} of ${count.toLocaleString()}`),
    )),
  );
  $("histogram-figure").hidden = false;
  const usable = preview.size > 0 && preview.coverage.usable > 0;
  $("targeting-next").disabled = !usable;
}

$("targeting-form").addEventListener("input", schedulePreview);
$("targeting-form").addEventListener("submit", (event) => event.preventDefault());
$("rule").addEventListener("change", () => {
  $("rule-value-label").textContent = RULE_LABELS[$("rule").value];
});
$("targeting-next").addEventListener("click", () => {
  if (!state.preview) return;
  const product = state.preview.productId;
  $("audience-name").value ||= `Likely buyers of ${product}`;
  $("campaign-name").value ||= `Likely buyers of ${product}`;
  go("setup");
});

// ---------------------------------------------------------------------------------------------
// 6. Destination setup (docs/service-contract.md §4.7)
// ---------------------------------------------------------------------------------------------

async function loadSetup() {
  const [status, checkout] = await Promise.all([
    api("/platform-ads/status"),
    state.destination === "publish" ? api("/platform-ads/checkout-link") : null,
  ]);
  state.currency = status.currency ?? null;
  $("budget-label").textContent = state.currency ? `Daily budget (${state.currency})` : "Daily budget";
  $("budget-hint").textContent = state.currency
    ? `In the ad account's currency, ${state.currency}: for example 20.00.`
    : "In the ad account's currency: for example 20.00.";
  if (checkout) {
    const offered = new Set(checkout.routes);
    $("checkout-route").querySelector("option[value=checkout_link]").disabled = !offered.has("checkout_link");
    $("checkout-route-hint").textContent = offered.has("checkout_link")
      ? "The quick-pay checkout takes people straight to payment for this product."
      : `Only the product page is offered: ${checkout.reason ?? "no checkout link is set up."}`;
  }
  toggleObjective();
}

function objective() {
  return document.querySelector("input[name=objective]:checked").value;
}

function toggleObjective() {
  const prospecting = objective() === "prospecting";
  $("lookalike-fields").hidden = !prospecting;
  if (prospecting) seedCheck().catch(fail);
}

async function seedCheck() {
  const country = $("lookalike-country").value;
  $("seed-check").textContent = `Counting your likely buyers in ${country}…`;
  const preview = await api("/platform-ads/targeting/preview", {
    method: "POST",
    body: { ...segment(), objective: "prospecting", lookalikeCountry: country },
  });
  const seed = preview.seed;
  $("seed-check").textContent = seed.reached
    ? `Enough to seed a lookalike: ${seed.usableInCountry.toLocaleString()} of the segment can be matched in ${country} (at least ${seed.minimum} needed).`
    : `Not enough to seed a lookalike: ${seed.usableInCountry.toLocaleString()} of the segment can be matched in ${country}, and at least ${seed.minimum} are needed. Widen the segment in Targeting, or choose another country.`;
}

for (const radio of document.querySelectorAll("input[name=objective]")) radio.addEventListener("change", toggleObjective);
$("lookalike-country").addEventListener("change", () => seedCheck().catch(fail));

/** The first problem of the setup form, as [field, what to do], or null. */
function setupProblem(form) {
  const needed = [["audienceName", "Give the audience a name."]];
  if (state.destination === "publish") {
    needed.push(
      ["campaignName", "Give the campaign a name."],
      ["dailyBudget", "Enter a daily budget above 0, for example 20.00."],
      ["headline", "Write the advert's headline."],
      ["destinationUrl", "Enter the product page's address, starting with https://."],
    );
  }
  for (const [name, remedy] of needed) {
    if (!form.elements[name].value.trim()) return [name, remedy];
  }
  if (state.destination === "publish") {
    if (!(Number(form.elements.dailyBudget.value) > 0)) return ["dailyBudget", "Enter a daily budget above 0, for example 20.00."];
    if (!/^https:\/\/[^\s/]+\.[^\s]+$/.test(form.elements.destinationUrl.value.trim())) {
      return ["destinationUrl", "The destination URL must be a full https:// address of your store, for example https://shop.example.com/products/p1."];
    }
  }
  return null;
}

$("setup-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.target;
  const problem = setupProblem(form);
  for (const input of form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
  if (problem) {
    const [name, remedy] = problem;
    $("setup-error").textContent = remedy;
    form.elements[name].setAttribute("aria-invalid", "true");
    form.elements[name].focus();
    return;
  }
  $("setup-error").textContent = "";
  go("activation");
  activate().catch(fail);
});

// ---------------------------------------------------------------------------------------------
// 7. Activation: a live progress bar through the steps, then the result with its links
// ---------------------------------------------------------------------------------------------

function stagesFor(prospecting) {
  return [
    ["create", "Create the custom audience on the platform"],
    ["upload", "Upload the users, hashed, in batches"],
    ...(prospecting ? [["lookalike", "Create the lookalike audience"]] : []),
    state.destination === "publish"
      ? ["publish", "Publish the advert: campaign, ad set, creative and ad (paused)"]
      : ["link", "Prepare the ads manager with the audience selected"],
  ];
}

let stages = [];
const STAGE_WORDS = { done: "Done", running: "In progress", waiting: "Waiting", failed: "Failed" };

function renderStages(states, detail = {}) {
  $("activation-steps").replaceChildren(
    ...stages.map(([id, text]) => {
      const now = states[id] ?? "waiting";
      const kind = { done: "ok", failed: "bad" }[now] ?? "info";
      return el("li", { "aria-current": now === "running" ? "step" : null },
        el("span", { class: `badge ${kind}` }, STAGE_WORDS[now]), " ", text, detail[id] ? ` · ${detail[id]}` : "");
    }),
  );
  const done = stages.filter(([id]) => states[id] === "done").length;
  const partial = stages.reduce((sum, [id]) => sum + (states[id] === "running" ? (detail.fraction?.[id] ?? 0.3) : 0), 0);
  const percent = Math.round(((done + partial) / stages.length) * 100);
  $("activation-bar").value = percent;
  $("activation-percent").textContent = `${percent}% done`;
}

async function activate() {
  const form = $("setup-form");
  const prospecting = objective() === "prospecting";
  stages = stagesFor(prospecting);
  $("result").hidden = true;
  $("activation-retry").hidden = true;
  $("activation-error").textContent = "";
  renderStages({ create: "running" });
  const body = {
    name: form.elements.audienceName.value.trim(),
    segment: segment(),
    objective: prospecting ? "prospecting" : "retargeting",
  };
  if (prospecting) {
    body.lookalikeSize = Number(form.elements.lookalikeSize.value);
    body.lookalikeCountry = form.elements.lookalikeCountry.value;
  }
  // Launching again after a publish error, with the same audience settings, publishes again only.
  const key = JSON.stringify(body);
  if (state.active && state.active.key === key) {
    renderStages({ create: "done", upload: "done", lookalike: "done" });
    return state.destination === "publish" ? publish(state.active.audience) : generate(state.active.audience);
  }
  state.active = null;
  let audience;
  try {
    audience = await api("/platform-ads/activations", { method: "POST", body });
  } catch (exc) {
    return stopped({ create: "failed" }, exc.message);
  }
  state.audienceId = audience.audienceId;
  audience = await followActivation(audience.audienceId, prospecting);
  if (!audience) return;
  state.active = { key, audience };
  if (state.destination === "publish") await publish(audience);
  else await generate(audience);
}

/** Poll the audience until it is active (true) or failed; the bar follows its batches. */
async function followActivation(audienceId, prospecting) {
  for (;;) {
    const { audiences } = await api("/platform-ads/audiences");
    const audience = audiences.find((a) => a.audienceId === audienceId);
    if (!audience) return stopped({ create: "failed" }, "The audience disappeared while it was being activated. Start the launch again.");
    const p = audience.progress;
    const uploaded = p && p.batchesTotal ? p.batchesDone / p.batchesTotal : 0;
    const detail = {
      upload: p && p.batchesTotal ? `${p.batchesDone} of ${p.batchesTotal} batches, ${audience.userCount.toLocaleString()} users` : "",
      fraction: { upload: uploaded },
    };
    if (audience.status === "failed") {
      const failure = audience.failure;
      const at = !audience.platformCustomAudienceId ? "create" : uploaded < 1 ? "upload" : "lookalike";
      return stopped(
        { create: at === "create" ? "failed" : "done", upload: at === "upload" ? "failed" : at === "lookalike" ? "done" : "waiting", lookalike: at === "lookalike" ? "failed" : "waiting" },
        `${failure?.message ?? "The activation failed."} ${failure?.remedy ? `What to do: ${failure.remedy}` : "Start the launch again."}`,
        detail,
      );
    }
    const after = state.destination === "publish" ? "publish" : "link";
    if (audience.status === "active") {
      renderStages({ create: "done", upload: "done", lookalike: "done", [after]: "running" }, detail);
      return audience;
    }
    if (!audience.platformCustomAudienceId) renderStages({ create: "running" }, detail);
    else if (uploaded < 1 || !prospecting) renderStages({ create: "done", upload: "running" }, detail);
    else renderStages({ create: "done", upload: "done", lookalike: "running" }, detail);
    await sleep(700);
  }
}

function stopped(states, message, detail = {}) {
  renderStages(states, detail);
  $("activation-error").textContent = `Error: ${message}`;
  announce("The launch stopped: the error below says what to do.", "error");
  return null;
}

function advertBody() {
  const f = $("setup-form").elements;
  const body = {
    campaignName: f.campaignName.value.trim(),
    dailyBudget: f.dailyBudget.value.trim(),
    headline: f.headline.value.trim(),
    destinationUrl: f.destinationUrl.value.trim(),
    checkoutRoute: f.checkoutRoute.value,
    productId: segment().productId,
  };
  if (f.description.value.trim()) body.description = f.description.value.trim();
  return body;
}

async function publish(audience) {
  const done = { create: "done", upload: "done", lookalike: "done" };
  renderStages({ ...done, publish: "running" });
  $("activation-error").textContent = "";
  $("activation-retry").hidden = true;
  let published;
  try {
    published = await api(`/platform-ads/audiences/${encodeURIComponent(audience.audienceId)}/advert`, {
      method: "POST",
      body: advertBody(),
    });
  } catch (exc) {
    stopped({ ...done, publish: "failed" }, exc.message);
    $("activation-retry").hidden = false;
    return;
  }
  renderStages({ ...done, publish: "done" });
  const link = await api(`/platform-ads/audiences/${encodeURIComponent(audience.audienceId)}/ads-manager-link`).catch(() => null);
  const names = { campaign: "Campaign", adset: "Ad set", adcreative: "Creative", ad: "Ad" };
  showResult(
    published.state === "paused"
      ? `${published.message} Nothing is spent until you switch it on in the ads manager.`
      : published.message,
    published.objects.filter((o) => o.platformId).map((o) => [`${names[o.kind] ?? o.kind} id`, o.platformId]),
    link,
    published.warnings,
  );
}

async function generate(audience) {
  const done = { create: "done", upload: "done", lookalike: "done" };
  try {
    const link = await api(`/platform-ads/audiences/${encodeURIComponent(audience.audienceId)}/ads-manager-link`);
    renderStages({ ...done, link: "done" });
    showResult(
      `The audience is on the platform with ${audience.userCount.toLocaleString()} users. ${link.message}`,
      link.platformAudienceIds.map((id, i) => [i === 0 ? "Custom audience id" : "Lookalike audience id", id]),
      link,
      [],
    );
  } catch (exc) {
    stopped({ ...done, link: "failed" }, exc.message);
  }
}

function showResult(summary, ids, link, warnings) {
  $("activation-bar").value = 100;
  $("activation-percent").textContent = "100% done";
  $("result-summary").textContent = summary;
  $("result-ids").replaceChildren(...ids.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, el("code", {}, value))]));
  $("result-links").replaceChildren(
    ...(link ? [el("a", { class: "button", href: link.url, target: "_blank", rel: "noopener" }, "Open in the ads manager")] : []),
    el("a", { class: "button secondary", href: "audiences.html" }, "See it in Audiences"),
  );
  if (warnings.length) $("result-summary").append(el("ul", {}, ...warnings.map((w) => el("li", {}, `Note: ${w}`))));
  $("result").hidden = false;
  announce("The launch is complete.", "success");
  $("result-title").focus();
}

$("retry-publish").addEventListener("click", () => {
  if (state.active) publish(state.active.audience).catch(fail);
});

// ---------------------------------------------------------------------------------------------

const ENTER = {
  data: () => showCurrentData().catch(fail),
  readiness: () => loadReadiness().catch(fail),
  targeting: () => {
    loadModels();
    $("rule-value-label").textContent = RULE_LABELS[$("rule").value];
    schedulePreview();
  },
  setup: () => loadSetup().catch(fail),
};

page(async () => {
  const wanted = location.hash.slice(1);
  // Deep links go only to the steps that need nothing earlier.
  go(wanted === "readiness" ? "readiness" : "data", { focus: false });
});
