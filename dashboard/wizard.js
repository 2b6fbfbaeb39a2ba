import { announce, api, el, formatDate, page, reconnectLink, sentence, signedInEmail, stageWords } from "./app.js";
import { clearColumnQuestions, columnsOf } from "./mapping.js";
import { productPicker } from "./product-picker.js";

// The launch wizard: seven steps, one shown at a time, each against the real API. Each step has its
// own address (#data, #sync, ...), so the browser's Back and Forward move between steps. What the user
// has chosen so far lives in `state` and the forms, and is kept as a draft in the browser's storage
// under the signed-in user: a reload, or the wizard opened again after the tab was closed, returns to
// the same step with what was typed.
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
  launch: null, // {key, idempotencyKey}: the settings of the last launch and its Idempotency-Key
  currency: null,
  holdoutSeed: null, // the first preview's holdout seed (a string), kept so the launch uploads what it counted
};
const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Steps and their navigation
// ---------------------------------------------------------------------------------------------

let current = null; // the step shown

/** Show ``step``: a new address in the browser's history (so Back returns here), then the step. */
function go(step) {
  state.reached = Math.max(state.reached, STEPS.indexOf(step));
  saveDraft(step);
  if (location.hash === `#${step}`) show(step);
  else location.hash = step; // the hashchange below shows it
}

/** The step at the address, or the furthest one reached when the address names a later step. */
function stepAt(hash) {
  const wanted = hash.replace(/^#/, "");
  const index = STEPS.indexOf(wanted);
  return index >= 0 && index <= state.reached ? wanted : STEPS[state.reached];
}

window.addEventListener("hashchange", () => {
  const step = stepAt(location.hash);
  if (`#${step}` !== location.hash) history.replaceState(null, "", `#${step}`);
  show(step);
});

function show(step, { focus = true } = {}) {
  current = step;
  for (const id of STEPS) $(id).hidden = id !== step;
  if (focus) announce(""); // what the last step said is not news on this one
  renderSteps(step);
  saveDraft(step);
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
      return el("li", {}, el("a", { href: `#${id}` }, text));
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
// The draft: what was chosen and typed, per signed-in user, in localStorage (it outlives the tab)
// ---------------------------------------------------------------------------------------------

const KEPT = ["reached", "uploadId", "syncId", "version", "destination", "audienceId", "launch", "holdoutSeed", "finished"];
const FORMS = ["targeting-form", "setup-form", "destination-form"];
const draftKey = () => `dashboard.wizard.${signedInEmail() ?? "signed-out"}`;
let restoredModel = null; // the draft's model, chosen once the model list has loaded

function saveDraft(step = current) {
  if (!step || !signedInEmail()) return;
  const fields = {};
  for (const form of FORMS) {
    for (const input of $(form).elements) {
      if (!input.name) continue;
      if (input.type === "radio") { if (input.checked) fields[input.name] = input.value; }
      else if (input.type === "checkbox") fields[input.name] = input.checked;
      else fields[input.name] = input.value;
    }
  }
  const kept = Object.fromEntries(KEPT.map((key) => [key, state[key]]));
  localStorage.setItem(draftKey(), JSON.stringify({ step, state: kept, fields }));
}

/** The signed-in user's draft put back into `state` and the forms; the step it was on, or null. */
function restoreDraft() {
  let draft = null;
  try {
    draft = JSON.parse(localStorage.getItem(draftKey()) || "null");
  } catch {
    /* a damaged draft is the same as none */
  }
  if (!draft) return null;
  if (draft.state.finished && location.hash !== "#activation") {
    forgetDraft(); // that launch is done: the wizard starts afresh unless its result is asked for
    return null;
  }
  Object.assign(state, draft.state);
  restoredModel = draft.fields.model ?? null;
  for (const form of FORMS) {
    for (const input of $(form).elements) {
      if (!input.name || !(input.name in draft.fields)) continue;
      const value = draft.fields[input.name];
      if (input.type === "radio") input.checked = input.value === value;
      else if (input.type === "checkbox") input.checked = Boolean(value);
      else input.value = value;
    }
  }
  if ($("countries").value) $("countries").dataset.typed = "1"; // the user's, or a suggestion they kept
  applyDestination();
  return draft.step;
}

function forgetDraft() {
  localStorage.removeItem(draftKey());
}

for (const form of FORMS) {
  $(form).addEventListener("input", () => saveDraft());
  $(form).addEventListener("change", () => saveDraft());
}

// ---------------------------------------------------------------------------------------------
// 1. Data source: three files POSTed to presigned forms, with one progress bar for all of them
// ---------------------------------------------------------------------------------------------

const KINDS = ["customers", "products", "orders"];

/** What the hosted checkout's paid orders added to a version (they join every sync), in words to follow
 * its counts, or "" when they added nothing: without it, "1,001 customers" from a file of 1,000 rows. */
function fromCheckout(version) {
  const { customers = 0, orders = 0 } = version.fromCheckout ?? {};
  if (!orders) return "";
  const paid = `${orders.toLocaleString()} ${orders === 1 ? "order" : "orders"} paid on the hosted checkout`;
  const buyers = customers
    ? ` and ${customers.toLocaleString()} ${customers === 1 ? "buyer" : "buyers"} there not in your customers file`
    : "";
  return `, with ${paid}${buyers}`;
}

async function showCurrentData() {
  const source = await api("/platform-ads/data-source");
  const current = source.current;
  $("use-current").hidden = !current;
  $("data-current").textContent = current
    ? `Your current data: ${current.rowCounts.customers.toLocaleString()} customers, ${current.rowCounts.products.toLocaleString()} products and ${current.rowCounts.orders.toLocaleString()} orders${fromCheckout(current)}, synced ${formatDate(current.createdAt)}. Upload new files, or use it as it is.`
    : source.versions.length
      // Synced data is in use once its purchase model's training ends (a first sync even if it refuses
      // the data); a first sync refused before that rule is not.
      ? ["pending", "running"].includes(source.versions[0].training.purchase?.state)
        ? `Your data synced ${formatDate(source.versions[0].createdAt)} is in use once its purchase model's training ends.`
        : "No synced data is in use yet. Upload the files again to put them in use."
      : "No data is synced yet.";
  return source;
}

$("upload-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  $("upload-error").textContent = "";
  for (const input of form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
  const missing = KINDS.find((kind) => !form.elements[kind].files.length);
  if (missing) return refuseFile(missing, `Choose the ${missing} file: all three files are needed.`);
  const files = Object.fromEntries(KINDS.map((kind) => [kind, form.elements[kind].files[0]]));
  const jsonLines = KINDS.filter((kind) => isJsonLines(files[kind]));
  const format = jsonLines.length === KINDS.length ? "jsonl" : "csv";
  if (jsonLines.length && format === "csv") {
    const odd = KINDS.find((kind) => isJsonLines(files[kind]) !== jsonLines.length > 1); // the one unlike the others
    const named = KINDS.map((kind) => `the ${kind} file is ${isJsonLines(files[kind]) ? "JSON Lines" : "CSV"}`);
    return refuseFile(odd, `Choose three CSV files or three JSON Lines files: ${named.join(", ")}.`);
  }
  for (const kind of KINDS) {
    const problem = await emptyFileProblem(kind, files[kind], format);
    if (problem) return refuseFile(kind, problem);
  }
  const encodings = {};
  for (const kind of KINDS) {
    encodings[kind] = await encodingOf(kind, files[kind]);
    if (!encodings[kind]) return; // its question is on the page now
  }
  const identities = Object.fromEntries(KINDS.map((kind) => [kind, fileIdentity(files[kind])]));
  const mappings = {};
  $("upload").disabled = true;
  try {
    for (const kind of KINDS) files[kind] = await asUtf8(files[kind], encodings[kind]);
    for (const kind of format === "csv" ? KINDS : []) { // JSON Lines objects name the service's columns
      const columns = await columnsOf(kind, files[kind], identities[kind], $("upload-error"));
      if (!columns) return; // its question is on the page now
      if (Object.keys(columns).length) mappings[kind] = columns;
    }
    const links = await api("/platform-ads/data-source/uploads", { method: "POST", body: { format } });
    const tooBig = KINDS.find((kind) => files[kind].size > links.maxFileBytes);
    if (tooBig) {
      throw new Error(`The ${tooBig} file is ${files[tooBig].size.toLocaleString()} bytes; the limit is ${links.maxFileBytes.toLocaleString()}. Keep the recent history and try again.`);
    }
    await uploadAll(links, files);
    $("encoding-questions").replaceChildren();
    clearColumnQuestions();
    state.files = files;
    state.uploadId = links.uploadId;
    await startSync({ uploadId: links.uploadId, ...(Object.keys(mappings).length ? { mappings } : {}) });
  } catch (exc) {
    fail(exc);
  } finally {
    $("upload").disabled = false;
  }
});

// ---------------------------------------------------------------------------------------------
// The encoding question: a file that is not UTF-8 was saved in a legacy code page, and which one
// cannot be told from its bytes alone. The marketer picks the reading in which their customers'
// names look right; the browser then sends the file as UTF-8, which is all the sync reads.
// ---------------------------------------------------------------------------------------------

const ENCODINGS = [
  ["windows-1252", "Western European (Windows-1252): English, French, German, Spanish, Italian, Dutch…"],
  ["windows-1250", "Central European (Windows-1250): Polish, Czech, Slovak, Hungarian, Croatian…"],
  ["windows-1251", "Cyrillic (Windows-1251): Russian, Ukrainian, Bulgarian, Serbian…"],
  ["windows-1253", "Greek (Windows-1253)"],
  ["windows-1254", "Turkish (Windows-1254)"],
  ["windows-1257", "Baltic (Windows-1257): Lithuanian, Latvian, Estonian"],
  ["shift_jis", "Japanese (Shift JIS)"],
  ["gbk", "Chinese, simplified (GBK)"],
  ["big5", "Chinese, traditional (Big5)"],
  ["euc-kr", "Korean (EUC-KR)"],
];
const chosenEncodings = {}; // kind -> {file: its identity, encoding}
const fileIdentity = (file) => `${file.name}|${file.size}|${file.lastModified}`;

/** The file's encoding: UTF-8 (with or without its byte order mark), UTF-16 by its byte order mark,
 * or the one the marketer chose for this very file; null after asking the question. */
async function encodingOf(kind, file) {
  const head = new Uint8Array(await file.slice(0, 64 * 1024).arrayBuffer());
  if (head[0] === 0xff && head[1] === 0xfe) return "utf-16le";
  if (head[0] === 0xfe && head[1] === 0xff) return "utf-16be";
  if (decodesAsUtf8(head, file.size > head.length)) return "utf-8";
  const chosen = chosenEncodings[kind];
  if (chosen && chosen.file === fileIdentity(file) && chosen.encoding) return chosen.encoding;
  askEncoding(kind, file, head);
  return null;
}

function decodesAsUtf8(bytes, cut) {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: cut }); // a cut may split a character
    return true;
  } catch {
    return false;
  }
}

/** The question for one file: each plausible reading of a line that has the non-ASCII bytes. */
function askEncoding(kind, file, head) {
  const sample = sampleLine(head);
  const readings = ENCODINGS.map(([encoding, label]) => {
    const text = new TextDecoder(encoding).decode(sample);
    const letters = (text.match(/[^\x00-\x7f]/gu) ?? []).filter((c) => /\p{L}/u.test(c)).length;
    const odd = (text.match(/[\u0080-\u009f\ufffd]/gu) ?? []).length;
    return { encoding, label, text, score: letters - 5 * odd };
  }).filter((r) => r.score > 0).sort((a, b) => b.score - a.score).slice(0, 4);
  chosenEncodings[kind] = { file: fileIdentity(file), encoding: null };
  const name = `encoding-${kind}`;
  const fieldset = el("fieldset", { id: name, class: "encoding" },
    el("legend", {}, `Which language is the ${kind} file (${file.name}) in?`),
    el("p", { class: "hint" }, "It was not saved as UTF-8, so its accented letters can be read several ways. Choose the line that shows your customers' names right:"),
    ...readings.map((r, i) => el("label", { class: "choice" },
      el("input", { type: "radio", name, value: r.encoding, onchange: () => { chosenEncodings[kind].encoding = r.encoding; } }),
      el("span", {}, el("strong", {}, r.label), el("br"), el("span", { class: "sample" }, `“${r.text.trim()}”`)))),
    readings.length ? null : el("p", {}, "None of the usual encodings reads it: save it again from your spreadsheet program as “CSV UTF-8”."),
  );
  $(name)?.remove();
  $("encoding-questions").append(fieldset);
  $("upload-error").textContent = `Say which language the ${kind} file is in (above), then press Upload and sync again.`;
  fieldset.querySelector("input")?.focus();
}

/** The first line (at most 160 bytes of it) that has a byte outside ASCII, as bytes. */
function sampleLine(bytes) {
  const at = bytes.findIndex((b) => b >= 0x80);
  let start = at;
  while (start > 0 && bytes[start - 1] !== 0x0a && at - start < 80) start -= 1;
  let end = at;
  while (end < bytes.length && bytes[end] !== 0x0a && bytes[end] !== 0x0d && end - start < 160) end += 1;
  return bytes.slice(start, end);
}

/** The file as UTF-8 (decoded from ``encoding`` as it streams, never whole as text). */
async function asUtf8(file, encoding) {
  if (encoding === "utf-8") return file;
  const utf8 = file.stream().pipeThrough(new TextDecoderStream(encoding)).pipeThrough(new TextEncoderStream());
  const blob = await new Response(utf8).blob();
  return new File([blob], file.name, { type: "text/csv" });
}

/** Refuse the upload before anything is sent, next to the file at fault. */
function refuseFile(kind, message) {
  const input = $(`file-${kind}`);
  $("upload-error").textContent = message;
  input.setAttribute("aria-invalid", "true");
  input.focus();
}

/** Whether the file is JSON Lines by its name, as the sync tells (one object a line), else CSV. */
const isJsonLines = (file) => /\.(jsonl|ndjson|json)$/i.test(file.name);

/** Why a file cannot be synced as it is, read from its first bytes: empty, or a CSV header and no rows. */
async function emptyFileProblem(kind, file, format) {
  if (file.size === 0) return `The ${kind} file (${file.name}) is empty. Export your ${kind} again, with their rows, and choose that file.`;
  const head = await file.slice(0, 64 * 1024).text();
  const lines = head.split(/\r\n|\n|\r/).filter((line) => line.trim() !== "");
  if (lines.length === 0) return `The ${kind} file (${file.name}) has no text in it. Export your ${kind} again and choose that file.`;
  if (format === "csv" && lines.length === 1 && file.size <= head.length) {
    return `The ${kind} file (${file.name}) has only its header row and no ${kind}. Export your ${kind} again, with their rows, and choose that file.`;
  }
  return null;
}

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
    await send(link, files[link.kind], (loaded) => {
      sent[link.kind] = Math.min(loaded, files[link.kind].size); // the form's own fields are sent too
      show();
    });
    sent[link.kind] = files[link.kind].size;
    show();
  }
}

function kib(bytes) {
  return bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024).toLocaleString()} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * POST one file to its presigned form: the signed fields first, the file last (S3 reads the fields
 * up to the file). XMLHttpRequest because fetch reports no upload progress. S3 holds the upload to
 * the form's policy, so a file over the size limit is refused by S3 itself.
 */
function send(link, file, progress) {
  const form = new FormData();
  for (const [name, value] of Object.entries(link.fields)) form.append(name, value);
  form.append("file", file);
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open(link.method, link.url);
    request.upload.onprogress = (event) => progress(event.loaded);
    request.onload = () =>
      request.status >= 200 && request.status < 300
        ? resolve()
        : reject(new Error(`The ${link.kind} file was refused by storage (HTTP ${request.status}). Upload the files again; each link lasts 15 minutes.`));
    request.onerror = () => reject(new Error(`The ${link.kind} file could not be sent. Check your connection, then upload the files again.`));
    request.send(form);
  });
}

async function useCurrentData() {
  try {
    const source = await api("/platform-ads/data-source");
    state.syncId = null;
    state.version = source.current.version;
    go("sync");
  } catch (exc) {
    fail(exc);
  }
}

$("use-current").addEventListener("click", useCurrentData);

// ---------------------------------------------------------------------------------------------
// 2. Sync: the report (rows read and kept, rejected rows), accept, then both models' training
// ---------------------------------------------------------------------------------------------

async function startSync(body) {
  const sync = await api("/platform-ads/data-source/sync", { method: "POST", body });
  state.syncId = sync.syncId;
  state.version = null;
  go("sync"); // its step follows the sync
}

const TRAINING = { pending: "Waiting", running: "Training", succeeded: "Trained", failed: "Failed" };
let following = 0; // the latest follow of the sync step: an older one stops

/** Follow the sync (or, with none, the training of the data in force) until it has an outcome, while
 * the sync step is shown. */
async function followSync() {
  const mine = ++following;
  const syncId = state.syncId;
  $("sync-next").disabled = true;
  $("rejected").hidden = true;
  $("match-keys").hidden = true;
  $("sync-failed").hidden = true;
  $("sync-continue").hidden = false;
  $("training").replaceChildren();
  state.syncSummary = null; // this follow's sync, if any, says what it kept
  $("sync-state").textContent = "Checking the files…";
  for (;;) {
    const source = await api("/platform-ads/data-source");
    if (mine !== following || current !== "sync") return;
    const sync = syncId ? source.syncs.find((s) => s.syncId === syncId) : null;
    if (sync) renderSync(sync, source.current);
    if (sync && sync.state === "review") return;
    if (sync && sync.state === "failed") return;
    const version = source.versions.find((v) => v.version === (sync ? sync.datasetVersion : state.version));
    if (version) {
      state.version = version.version;
      saveDraft();
      renderMatchKeys(version);
      if (renderTraining(version, source.current)) return;
    }
    await sleep(1000);
  }
}

/** A sync that failed: what went wrong, what to do, and the way back, in one place. */
function showSyncFailure(sync, inForce) {
  $("sync-state").textContent = "The sync stopped: nothing of these files was stored.";
  $("sync-failed-what").textContent = sync.error?.message ?? "The files could not be read.";
  $("sync-failed-remedy").textContent = `What to do: ${sync.error?.remedy || "export the files again and choose them."}`;
  $("sync-use-current").hidden = !inForce;
  $("sync-continue").hidden = true;
  $("sync-failed").hidden = false;
  $("sync-choose-files").focus();
}

$("sync-choose-files").addEventListener("click", () => {
  $("upload-form").reset();
  go("data");
});
$("sync-use-current").addEventListener("click", useCurrentData);

function renderSync(sync, inForce) {
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
    synced: sync.rejectedCount
      ? `Synced, keeping the good rows (${sync.rejectedCount.toLocaleString()} rejected).`
      : "Synced: every row was kept.",
  };
  const read = Object.entries(sync.recognised ?? {}).map(([kind, what]) => `the ${kind} file as ${what}`);
  // What the sync kept and how it read the files stays on the page once the models are trained
  // (renderTraining adds the training's outcome to it rather than replacing it).
  state.syncSummary = (words[sync.state] ?? sync.state) + (read.length ? ` Read ${read.join(", ")}.` : "");
  $("sync-state").textContent = state.syncSummary + (sync.state === "synced" ? " The models are training on it." : "");
  if (sync.state === "failed") showSyncFailure(sync, inForce);
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

// The customers file's match keys (GET /platform-ads/data-source, matchKeys), as a marketer names them.
const MATCH_KEYS = {
  email: "E-mail",
  phone: "Phone",
  first_name: "First name",
  last_name: "Last name",
  city: "City",
  state: "State or region",
  postcode: "Postcode (ZIP)",
  country: "Country",
  date_of_birth: "Date of birth",
  gender: "Gender",
  external_id: "External id (your shop's customer id)",
  madid: "Mobile advertiser id",
};

const share = (part, whole) => (whole ? `${Math.round((100 * part) / whole)}%` : "0%");

/** The version's coverage per match key, and in words what it means for the match (issue 23, item 2):
 * who can be uploaded at all, and what the keys the file lacks would add. */
function renderMatchKeys(version) {
  const keys = version.matchKeys ?? {};
  const customers = version.rowCounts.customers;
  $("match-keys").hidden = Object.keys(keys).length === 0;
  if ($("match-keys").hidden) return;
  $("match-caption").textContent = `Customers with each match key, of ${customers.toLocaleString()}`;
  $("match-key-rows").replaceChildren(
    ...Object.entries(MATCH_KEYS).map(([key, name]) => {
      const { given = 0, usable = 0 } = keys[key] ?? {};
      return el("tr", {},
        el("td", { "data-label": "Match key" }, name),
        el("td", { "data-label": "Customers who gave it" }, `${given.toLocaleString()} (${share(given, customers)})`),
        el("td", { "data-label": "Usable by the platform" }, `${usable.toLocaleString()} (${share(usable, customers)})`),
      );
    }),
  );
  const matchable = version.matchableCustomers;
  $("match-summary").textContent = matchable == null
    ? ""
    : `${matchable.toLocaleString()} of ${customers.toLocaleString()} customers (${share(matchable, customers)}) have a usable e-mail or phone, so an audience can send them; the others cannot be sent, whatever else they have.`;
  const missing = Object.entries(MATCH_KEYS)
    .filter(([key]) => !(keys[key]?.usable > 0) && key !== "email" && key !== "phone")
    .map(([, name]) => name.toLowerCase());
  $("match-effect").textContent =
    "What more keys do: the platform looks for each person with every key sent together, so a customer " +
    "it cannot find by e-mail may still be found by phone, or by name with city, postcode and country; " +
    "date of birth and gender tell apart people who share a name. The platform does not publish how much " +
    "each key adds to the match rate: sending every key you have is its general guidance. " +
    (missing.length
      ? `Your file has none usable for: ${missing.join(", ")}. Add those columns to your customers file to give it more to match on.`
      : "Your file has every key the platform takes.");
}

/** The version's trainings; true once both have finished, and then whether the sync is now the data in
 * use. A sync is put in use (audiences, segments, Retrain) when its purchase model's training ends,
 * unless it refused the data while better data was in force, so a failed one says which data is in
 * use: this sync (a first sync, or a failure that is no verdict on the data) with why no model was
 * trained on it, or ``inForce``, the data synced before. */
function renderTraining(version, inForce) {
  const trainings = Object.values(version.training);
  $("training").replaceChildren(
    ...trainings.map((t) => el("li", {},
      el("span", { class: `badge ${t.state === "succeeded" ? "ok" : t.state === "failed" ? "bad" : "info"}` }, TRAINING[t.state] ?? t.state),
      " ",
      el("strong", {}, t.modelName),
      t.stage && t.state === "running" ? ` · ${stageWords(t.stage)}` : "",
      t.error ? el("p", { class: "remedy" }, `${t.error} What to do: ${t.remedy ?? "upload the files again; if it fails twice, contact support."}`) : null,
    )),
  );
  const done = trainings.length > 0 && trainings.every((t) => t.state === "succeeded" || t.state === "failed");
  const purchase = version.training.purchase;
  if (done) {
    $("sync-next").disabled = purchase?.state !== "succeeded";
    const summary = state.syncSummary ? `${state.syncSummary} ` : "";
    $("sync-state").textContent = purchase?.state === "succeeded"
      ? `${summary}Your data is synced (${version.rowCounts.customers.toLocaleString()} customers and ${version.rowCounts.orders.toLocaleString()} orders${fromCheckout(version)}) and the models are trained.`
      : `${summary}${untrained(version, inForce, purchase)}`;
    announce(purchase?.state === "succeeded" ? "The models are trained: continue to readiness." : $("sync-state").textContent,
      purchase?.state === "succeeded" ? "success" : "error");
  }
  return done;
}

/** After a sync whose purchase training failed: which data is in use and, when it is this sync, why no
 * model was trained on it and what to do. */
function untrained(version, inForce, purchase) {
  if (inForce && inForce.version === version.version) {
    // In use all the same: nothing better was in force (a young shop's first sync, its history too short
    // to train on), or the failure is no verdict on the data (orders with a gap, a crash).
    const why = sentence(purchase?.error ?? "the purchase model's training failed");
    return `Your data is in use for the checkout's catalog and audiences (${version.rowCounts.customers.toLocaleString()} customers), but no model could be trained on it. ${why} What to do: ${purchase?.remedy ?? "retrain from the Models page later."}`;
  }
  const failed = "The purchase model could not be trained on this data: see below, then upload the files again.";
  if (inForce) {
    return `${failed} This sync replaced nothing: your data synced ${formatDate(inForce.createdAt)} (${inForce.rowCounts.customers.toLocaleString()} customers) is still the data in use.`;
  }
  return `${failed} No data is in use yet.`;
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

function applyDestination() {
  state.destination = document.querySelector("input[name=destination]:checked").value;
  $("advert-fields").hidden = state.destination !== "publish";
  $("launch").textContent = state.destination === "publish" ? "Launch and publish the advert" : "Launch and open the ads manager";
}

$("destination-form").addEventListener("change", applyDestination);
$("destination-form").addEventListener("submit", (event) => event.preventDefault());
$("destination-next").addEventListener("click", () => {
  applyDestination();
  go("targeting");
});

// ---------------------------------------------------------------------------------------------
// 5. Targeting: model, product, rule; a live size estimate and score histogram from the preview
// ---------------------------------------------------------------------------------------------

const RULE_LABELS = { top_percent: "Percent of users", top_n: "Number of users", threshold: "Minimum score (0 to 1)" };
let previewTimer = null;
let previewSerial = 0;

/** The purchase models trained on synced data: those whose scores a segment can cut. */
async function loadModels() {
  if ($("model").options.length) return;
  const { models } = await api("/dashboard/models");
  const usable = models.filter((m) => m.wizard.used); // the Models page says why the others are not
  $("model").replaceChildren(
    ...(usable.length ? usable : [{ name: "shop-purchase" }]).map((m) =>
      el("option", { value: m.name }, m.version ? `${m.name} (trained ${formatDate(m.trainedAt)})` : m.name)),
  );
  if (restoredModel && [...$("model").options].some((o) => o.value === restoredModel)) $("model").value = restoredModel;
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
  if (!spec.productId) return "Choose a product (type its name or id) to see who is likely to buy it.";
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
    const preview = await api("/platform-ads/targeting/preview", { method: "POST", body: { ...spec, ...holdout() } });
    if (serial !== previewSerial) return; // a newer preview is on its way
    state.holdoutSeed ??= preview.holdout.seed;
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

/** The holdout the launch uses (the activation's default share), with the seed of the first preview. */
function holdout() {
  return state.holdoutSeed ? { holdoutSeed: state.holdoutSeed } : {};
}

function renderPreview(preview) {
  const cut = preview.cutScore === null ? "" : ` (scores of ${preview.cutScore.toFixed(3)} and above)`;
  const h = preview.holdout;
  const held = h.heldOut
    ? ` ${h.heldOut.toLocaleString()} of the segment (${h.percent} %, picked at random within each score band) are held out, so the advert's lift can be measured against similar people who did not see it.`
    : "";
  $("preview-summary").textContent =
    `${preview.size.toLocaleString()} of ${preview.scoredUsers.toLocaleString()} scored users are in the segment${cut}. ` +
    `${preview.coverage.usable.toLocaleString()} of them have an e-mail or phone the platform can match.${held} ` +
    `${h.uploadedUsable.toLocaleString()} ${h.uploadedUsable === 1 ? "user" : "users"} will be uploaded` +
    (h.heldOut ? ": those not held out who have an e-mail or phone." : ".");
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
  suggestCountries(preview.countries);
  const usable = preview.size > 0 && preview.holdout.uploadedUsable > 0;
  $("targeting-next").disabled = !usable;
}

/** Where the users to upload are, offered as the countries to advertise in until the user types their own. */
function suggestCountries(countries) {
  if ($("countries").dataset.typed === "1" || !countries.length) return;
  $("countries").value = countries.map((c) => c.country).join(", ");
  saveDraft();
}

$("countries").addEventListener("input", () => {
  $("countries").dataset.typed = "1";
});

$("targeting-form").addEventListener("input", schedulePreview);
const products = productPicker({
  input: $("product"),
  listbox: $("product-options"),
  chosen: $("product-chosen"),
  status: $("product-search-status"),
  onChoose: () => {
    saveDraft();
    schedulePreview();
  },
});
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
  // The targeting form's product when the page was reloaded on this step (its preview is not kept).
  const product = state.preview?.productId || segment().productId;
  const routes = state.destination === "publish"
    ? `/platform-ads/checkout-routes${product ? `?productId=${encodeURIComponent(product)}` : ""}`
    : null;
  const [status, checkout] = await Promise.all([api("/platform-ads/status"), routes ? api(routes) : null]);
  state.currency = status.currency ?? null;
  $("budget-label").textContent = state.currency ? `Daily budget (${state.currency})` : "Daily budget";
  $("budget-hint").textContent = state.currency
    ? `In the ad account's currency, ${state.currency}: for example 20.00.`
    : "In the ad account's currency: for example 20.00.";
  if (checkout) {
    // The hosted checkout is offered once the payments account takes card payments and the synced
    // products list the product with a price; until then the hint says what to do
    // (docs/service-contract.md §4.7).
    const hosted = checkout.routes.includes("hosted_checkout");
    const option = $("checkout-route").querySelector("option[value=hosted_checkout]");
    option.disabled = !hosted;
    if (!hosted && $("checkout-route").value === "hosted_checkout") $("checkout-route").value = "product_page";
    $("checkout-route-hint").replaceChildren(
      ...(hosted
        ? [`The hosted quick-pay checkout takes shoppers straight to payment for this product, paid into your payments account: ${checkout.checkoutUrl ?? ""}`]
        : checkout.cause === "product"
          ? [`Only the product page is offered: ${checkout.reason} ${checkout.remedy}`]
          : [
              `Only the product page is offered: ${checkout.reason} To offer the hosted quick-pay checkout, `,
              el("a", { href: "payments.html" }, "connect a payments account on the Payments page"),
              " and finish the payment provider's set-up, then come back to this step.",
            ]),
    );
  }
  toggleObjective();
}

function objective() {
  return document.querySelector("input[name=objective]:checked").value;
}

function toggleObjective() {
  const prospecting = objective() === "prospecting";
  $("lookalike-fields").hidden = !prospecting;
  $("countries-field").hidden = prospecting; // a lookalike delivers in its own country
  if (prospecting) seedCheck();
}

let seedChecked = null; // the latest seed check: resolves to { seed, text }, or null when it could not be made
let seedChecks = 0; // how many checks were started: only the latest may write its answer

/**
 * Count the segment's likely buyers in the chosen lookalike country. Checks overlap when the user
 * changes the objective and the country quickly; an answer that arrives after a newer check began
 * is dropped, so the text on the page always belongs to the country on the page.
 */
function seedCheck() {
  const check = ++seedChecks;
  const latest = () => check === seedChecks;
  seedChecked = countSeed(latest).catch((exc) => {
    if (latest()) $("seed-check").textContent = `The seed could not be counted: ${exc.message}`;
    return null;
  });
  return seedChecked;
}

async function countSeed(latest) {
  const country = $("lookalike-country").value;
  $("seed-check").textContent = `Counting your likely buyers in ${country}…`;
  const preview = await api("/platform-ads/targeting/preview", {
    method: "POST",
    body: { ...segment(), ...holdout(), objective: "prospecting", lookalikeCountry: country },
  });
  const seed = preview.seed;
  const text = seed.reached
    ? `Enough to seed a lookalike: ${seed.usableInCountry.toLocaleString()} of the users to upload can be matched in ${country} (at least ${seed.minimum} needed).`
    : `Not enough to seed a lookalike: ${seed.usableInCountry.toLocaleString()} of the users to upload can be matched in ${country}, and at least ${seed.minimum} are needed. Widen the segment in Targeting, or choose another country.`;
  if (latest()) $("seed-check").textContent = text;
  return { seed, text };
}

for (const radio of document.querySelectorAll("input[name=objective]")) radio.addEventListener("change", toggleObjective);
// A changed answer is a new attempt: the last refusal no longer applies.
$("setup-form").addEventListener("change", () => {
  $("setup-error").textContent = "";
  for (const input of $("setup-form").querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
});
$("lookalike-country").addEventListener("change", () => seedCheck());

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
    if (objective() === "retargeting" && !(countries().length && countries().every((c) => /^[A-Z]{2}$/.test(c)))) {
      return ["countries", "Enter the countries to advertise in as two-letter codes separated by commas, for example GB, US."];
    }
    if (!/^https:\/\/[^\s/]+\.[^\s]+$/.test(form.elements.destinationUrl.value.trim())) {
      return ["destinationUrl", "The destination URL must be a full https:// address of your store, for example https://shop.example.com/products/p1."];
    }
  }
  return null;
}

$("setup-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  // The lookalike comes first in the form, so its seed is checked first.
  let problem = null;
  if (objective() === "prospecting") {
    const checked = await (seedChecked ?? seedCheck());
    if (!checked) problem = ["lookalikeCountry", $("seed-check").textContent];
    else if (!checked.seed.reached) problem = ["lookalikeCountry", checked.text];
  }
  problem ??= setupProblem(form);
  for (const input of form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
  if (problem) {
    const [name, remedy] = problem;
    $("setup-error").textContent = remedy;
    form.elements[name].setAttribute("aria-invalid", "true");
    form.elements[name].focus();
    return;
  }
  $("setup-error").textContent = "";
  state.audienceId = null;
  state.finished = false;
  go("activation");
  activate().catch(fail);
});

// ---------------------------------------------------------------------------------------------
// 7. Activation: a live progress bar through the steps, then the result with its links
// ---------------------------------------------------------------------------------------------

// The activation's own steps (GET /platform-ads/activations/{audienceId}), in words.
const STEP_TEXT = {
  select_users: "Select the segment's users",
  normalise_and_hash: "Normalise and hash their e-mails and phones",
  create_custom_audience: "Create the custom audience on the platform",
  upload_batches: "Upload the users in batches",
  wait_for_seed: "Wait for the platform to process the audience",
  create_lookalike: "Create the lookalike audience",
  publish_advert: "Publish the advert: campaign, ad set, creative and ad (paused)",
  generate_campaign: "Prepare the ads manager with the audience selected",
  mark_active: "Mark the audience active",
};
const WAITING = {
  throttled: "the platform asked us to slow down; it resumes by itself",
  seed_processing: "the platform is still processing the audience",
  worker_busy: "another worker holds this audience; it resumes by itself",
};
const OBJECT_NAMES = {
  custom_audience: "Custom audience id", lookalike: "Lookalike audience id", campaign: "Campaign id",
  adset: "Ad set id", adcreative: "Creative id", ad: "Ad id",
};

/** The activation request: the audience from the segment, and what to make of it once it is live. */
function activationBody() {
  const f = $("setup-form").elements;
  const prospecting = objective() === "prospecting";
  const body = { name: f.audienceName.value.trim(), segment: segment(), objective: prospecting ? "prospecting" : "retargeting", ...holdout() };
  if (prospecting) {
    body.lookalikeSize = Number(f.lookalikeSize.value);
    body.lookalikeCountry = f.lookalikeCountry.value;
    // A value-based seed: each row carries the customer's predicted value (README, "Value-based seeds").
    if (f.valueBased.checked) body.valueBased = true;
  }
  if (state.destination === "publish") body.publish = advertBody();
  else body.generateCampaign = true;
  return body;
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
  if (objective() === "retargeting") body.countries = countries();
  return body;
}

function countries() {
  return $("countries").value.split(/[\s,;]+/).map((c) => c.trim().toUpperCase()).filter(Boolean);
}

/** Start the activation and follow it to its result. The same body goes with the same
 * Idempotency-Key, so a launch sent twice makes one audience; changed settings make a new key and a
 * new audience. */
async function activate() {
  const body = activationBody();
  const key = JSON.stringify(body);
  if (!state.launch || state.launch.key !== key) state.launch = { key, idempotencyKey: crypto.randomUUID() };
  resetActivation("Starting…");
  let audience;
  try {
    audience = await api("/platform-ads/activations", {
      method: "POST",
      body,
      headers: { "Idempotency-Key": state.launch.idempotencyKey },
    });
  } catch (exc) {
    return stopped(exc.message);
  }
  state.audienceId = audience.audienceId;
  saveDraft();
  return follow(audience.audienceId);
}

/** Try again after a failure: a new attempt of the same activation (the retry endpoint), which
 * resumes after the last batch the platform acknowledged instead of sending the request again. */
async function retry() {
  resetActivation("Trying again…");
  try {
    await api(`/platform-ads/activations/${encodeURIComponent(state.audienceId)}/retry`, { method: "POST" });
  } catch (exc) {
    $("activation-retry").hidden = false;
    return stopped(exc.message);
  }
  return follow(state.audienceId);
}

function resetActivation(text) {
  $("result").hidden = true;
  $("activation-retry").hidden = true;
  $("activation-error").textContent = "";
  $("activation-steps").replaceChildren();
  $("activation-bar").value = 0;
  $("activation-percent").textContent = text;
}

let followingActivation = 0; // the latest follow: an older one stops

/** Poll the activation's status into the progress bar until it succeeds or fails (or the step is left). */
async function follow(audienceId) {
  const mine = ++followingActivation;
  for (;;) {
    const status = await api(`/platform-ads/activations/${encodeURIComponent(audienceId)}`);
    if (mine !== followingActivation || current !== "activation") return null;
    renderActivation(status);
    if (status.state === "succeeded") return showResult(status);
    if (status.state === "failed") {
      const error = status.error ?? { message: "The activation failed." };
      stopped(`${error.message}${error.remedy ? ` What to do: ${error.remedy}` : " Try again."}`);
      const link = reconnectLink(error);
      if (link) $("activation-error").append(" ", link);
      $("activation-retry").hidden = false;
      return null;
    }
    await sleep(700);
  }
}

function renderActivation(status) {
  const at = status.steps.indexOf(status.step);
  const p = status.progress;
  $("activation-steps").replaceChildren(
    ...status.steps.map((step, i) => {
      const now = status.step === "done" || i < at ? "done"
        : i === at ? (status.state === "failed" ? "failed" : status.state === "waiting" ? "waiting-now" : "running")
          : "waiting";
      const kind = { done: "ok", failed: "bad" }[now] ?? "info";
      const word = { done: "Done", failed: "Failed", running: "In progress", "waiting-now": "Waiting", waiting: "To do" }[now];
      let detail = "";
      if (step === "upload_batches" && p.batchesTotal) detail = ` · ${p.usersUploaded.toLocaleString()} of ${p.rowsTotal.toLocaleString()} users, batch ${p.batchesDone} of ${p.batchesTotal}`;
      if (step === "select_users" && p.usersTotal) detail = ` · ${p.usersTotal.toLocaleString()} users`;
      if (now === "waiting-now" && status.waitingFor) detail += ` · ${WAITING[status.waitingFor] ?? status.waitingFor}`;
      return el("li", { "aria-current": now === "running" || now === "waiting-now" ? "step" : null },
        el("span", { class: `badge ${kind}` }, word), " ", STEP_TEXT[step] ?? step.replaceAll("_", " "), detail);
    }),
  );
  $("activation-bar").value = p.percent;
  $("activation-percent").textContent = `${p.percent}% done`;
}

function stopped(message) {
  $("activation-error").textContent = `Error: ${message}`;
  announce("The launch stopped: the error below says what to do.", "error");
  return null;
}

function showResult(status) {
  state.finished = true;
  saveDraft();
  $("activation-bar").value = 100;
  $("activation-percent").textContent = "100% done";
  const ids = status.platformObjects.filter((o) => o.platformId && o.state !== "deleted");
  const published = ids.some((o) => o.kind === "ad");
  $("result-summary").textContent = published
    ? `The advert is published for “${status.name}”, paused: nothing is spent until you switch it on in the ads manager.`
    : `“${status.name}” is on the platform with ${status.progress.usersUploaded.toLocaleString()} users. Build the advert in the ads manager, which opens with the audience selected.`;
  $("result-ids").replaceChildren(...ids.flatMap((o) => [el("dt", {}, OBJECT_NAMES[o.kind] ?? o.kind), el("dd", {}, el("code", {}, o.platformId))]));
  const links = [];
  if (status.adsManagerUrl) links.push(el("a", { class: "button", href: status.adsManagerUrl, target: "_blank", rel: "noopener" }, "Open in the ads manager"));
  links.push(el("a", { class: "button secondary", href: "audiences.html" }, "See it in Audiences"));
  $("result-links").replaceChildren(...links);
  $("result").hidden = false;
  announce("The launch is complete.", "success");
  $("result-title").focus();
  if (published && !status.adsManagerUrl) addAdsManagerLink(status.audienceId);
}

/** Publish advert's result links to the ads manager too (the audience's link shows the campaign there). */
async function addAdsManagerLink(audienceId) {
  const link = await api(`/platform-ads/audiences/${encodeURIComponent(audienceId)}/ads-manager-link`).catch(() => null);
  if (link) $("result-links").prepend(el("a", { class: "button", href: link.url, target: "_blank", rel: "noopener" }, "Open in the ads manager"));
}

$("retry-publish").addEventListener("click", () => retry().catch(fail));

// ---------------------------------------------------------------------------------------------

const ENTER = {
  data: () => showCurrentData().catch(fail),
  sync: () => {
    if (!state.syncId && !state.version) return go("data"); // nothing to follow: choose the files
    return followSync().catch(fail);
  },
  readiness: () => loadReadiness().catch(fail),
  targeting: async () => {
    const restored = $("product").value.trim(); // from the draft, before the marketer types
    await loadModels().catch(fail);
    $("rule-value-label").textContent = RULE_LABELS[$("rule").value];
    // A restored product is named again (unless the marketer has typed since the step opened).
    if (restored && $("product").value.trim() === restored) products.refresh();
    schedulePreview();
  },
  setup: () => loadSetup().catch(fail),
  activation: () => {
    if (!state.audienceId) return null; // the launch is on its way (activate follows it)
    resetActivation("Reading the launch's progress…");
    return follow(state.audienceId).catch(fail);
  },
};

$("start-over").addEventListener("click", () => {
  forgetDraft();
  location.replace("wizard.html");
});

page(async () => {
  const drafted = restoreDraft();
  // The readiness checklist needs nothing earlier, so a link may open it directly.
  if (location.hash === "#readiness") state.reached = Math.max(state.reached, STEPS.indexOf("readiness"));
  const start = stepAt(location.hash || `#${drafted ?? "data"}`);
  history.replaceState(null, "", `#${start}`);
  show(start, { focus: false });
});
