// The mapping step of the data source (issue 23): a file whose header is neither the service's own
// columns nor a shop export the service recognises (GET /platform-ads/data-source: columns, layouts)
// is shown as its headers beside the service's columns, each guessed where its name allows, with its
// first rows; the marketer confirms or changes the matching, and the sync reads the file with it. The
// sync keeps the matching, so the organization's next sync starts from it (mappings).
//
// The header and the first rows are read here for the preview only: the sync reads the whole file
// with the engine's own CSV sniffer (docs/data-plane.md).

import { api, el } from "./app.js";

const PREVIEW_ROWS = 3;
const DELIMITERS = [",", ";", "\t", "|"];

// Other names merchants' files give the service's columns (lower case, letters and digits only).
const SYNONYMS = {
  user_id: ["customerid", "customer", "customerno", "customernumber", "clientid", "client", "userid", "buyerid", "memberid", "accountid", "kundennummer"],
  email: ["emailaddress", "mail", "customeremail", "emailadresse", "courriel"],
  first_name: ["firstname", "givenname", "forename", "prenom", "vorname"],
  last_name: ["lastname", "surname", "familyname", "nom", "nachname"],
  phone: ["telephone", "tel", "phonenumber", "mobile", "mobilephone", "cell", "telefon"],
  country: ["countrycode", "land", "pays", "countryiso"],
  state: ["province", "region", "county", "statecode", "provincecode"],
  city: ["town", "ville", "stadt", "locality"],
  postcode: ["zip", "zipcode", "postalcode", "postcode", "plz", "codepostal"],
  date_of_birth: ["dob", "birthday", "birthdate", "dateofbirth", "geburtsdatum"],
  gender: ["sex", "geschlecht"],
  marketing_consent: ["acceptsmarketing", "acceptsemailmarketing", "optin", "newsletter", "subscribed"],
  product_id: ["sku", "productcode", "itemid", "itemcode", "article", "articleno", "productid", "product", "item"],
  name: ["title", "productname", "itemname", "description", "productdescription"],
  category: ["type", "producttype", "department", "collection", "productcategory", "categories"],
  price: ["unitprice", "regularprice", "listprice", "retailprice"],
  order_id: ["ordernumber", "orderno", "order", "orderid", "invoice", "invoicenumber", "transactionid"],
  quantity: ["qty", "units", "quantityordered", "count", "menge"],
  amount: ["total", "linetotal", "revenue", "subtotal", "value", "sales", "lineamount", "totalprice", "betrag"],
  timestamp: ["date", "orderdate", "createdat", "created", "purchasedate", "datetime", "time", "ordertime", "orderedon", "placedat"],
};

let source = null; // the data source as the API gives it, read once per page
const asked = {}; // kind -> the identity of the file whose question is on the page

const squash = (text) => text.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");

async function dataSource() {
  source ??= await api("/platform-ads/data-source");
  return source;
}

/**
 * The columns of one file to send with the sync: {} when the file needs no mapping (the service's
 * own columns, or a shop export the sync recognises), the marketer's matching (header -> service
 * column, "" for one not read) once they have confirmed it, or null while its question is on the page.
 * ``file`` is UTF-8 text by now; ``identity`` names the file the marketer chose (its question is
 * answered only for that very file).
 */
export async function columnsOf(kind, file, identity, errorLine) {
  const { header, rows } = preview(await file.slice(0, 64 * 1024).text());
  const cells = header.map((cell) => cell.trim()).filter(Boolean);
  const { columns, layouts, mappings } = await dataSource();
  const recognised = layouts.some((layout) => layout.signature.every((cell) => cells.includes(cell)));
  // Another file's own columns (a file in the wrong slot) are the sync's to name, not a mapping's.
  const ownColumns = Object.values(columns).some((kindColumns) => isServiceHeader(kindColumns, cells));
  if (recognised || ownColumns) {
    $(`columns-${kind}`)?.remove();
    return {};
  }
  if (asked[kind] === identity && $(`columns-${kind}`)) {
    const problem = mappingProblem(kind, columns[kind]);
    if (!problem) return chosenMapping(kind);
    errorLine.textContent = problem;
    return null;
  }
  asked[kind] = identity;
  ask(kind, file, cells, rows, columns[kind], mappings[kind] ?? {});
  errorLine.textContent = `Match the columns of the ${kind} file (above), then press Upload and sync again.`;
  return null;
}

/** Whether every cell is one of the service's names for the file's columns, with the required ones. */
function isServiceHeader(columns, cells) {
  const names = new Map(columns.flatMap((c) => [[c.name, c], ...c.aliases.map((a) => [a, c])]));
  if (!cells.every((cell) => names.has(cell))) return false;
  return columns.filter((c) => c.required).every((c) => cells.some((cell) => names.get(cell) === c));
}

/** Each header cell's likeliest service column: the one saved last time, else the column whose name,
 * alias or usual other name it is (or contains), each service column given to one cell at most. */
export function guess(cells, columns, saved = {}) {
  const taken = new Set();
  const chosen = {};
  for (const cell of cells) {
    if (cell in saved && (!saved[cell] || !taken.has(saved[cell]))) {
      chosen[cell] = saved[cell];
      if (saved[cell]) taken.add(saved[cell]);
    }
  }
  const scored = [];
  for (const cell of cells.filter((c) => !(c in chosen))) {
    const word = squash(cell);
    for (const column of columns) {
      const names = [column.name, ...column.aliases, ...(SYNONYMS[column.name] ?? [])].map(squash);
      const exact = names.includes(word);
      const near = !exact && word.length >= 3 && names.some((n) => n.length >= 3 && (word.includes(n) || n.includes(word)));
      if (exact || near) scored.push({ cell, column: column.name, score: exact ? 2 : 1, position: names.findIndex((n) => n === word || word.includes(n) || n.includes(word)) });
    }
  }
  scored.sort((a, b) => b.score - a.score || a.position - b.position);
  for (const { cell, column } of scored) {
    if (cell in chosen || taken.has(column)) continue;
    chosen[cell] = column;
    taken.add(column);
  }
  return Object.fromEntries(cells.map((cell) => [cell, chosen[cell] ?? ""]));
}

/** The question for one file: a row per header cell with its guessed column and its first values. */
function ask(kind, file, cells, rows, columns, saved) {
  const guessed = guess(cells, columns, saved);
  const fromSaved = cells.some((cell) => cell in saved);
  const required = columns.filter((c) => c.required).map((c) => c.name);
  const id = `columns-${kind}`;
  const table = el("table", { class: "stack mapping" },
    el("caption", { class: "hint" }, `The columns of ${file.name}, and the first ${Math.min(rows.length, PREVIEW_ROWS)} rows`),
    el("thead", {}, el("tr", {},
      el("th", { scope: "col" }, "Your column"),
      el("th", { scope: "col" }, "Read as"),
      el("th", { scope: "col" }, "First rows"))),
    el("tbody", {}, ...cells.map((cell, i) => {
      const select = el("select", { id: `${id}-${i}`, "data-cell": cell },
        el("option", { value: "" }, "Not used"),
        ...columns.map((c) => el("option", { value: c.name }, c.required ? `${c.name} (required)` : c.name)));
      select.value = guessed[cell];
      const values = rows.map((row) => row[cell] ?? "").filter((v) => v !== "");
      return el("tr", {},
        el("th", { scope: "row", "data-label": "Your column" }, el("label", { for: `${id}-${i}` }, cell)),
        el("td", { "data-label": "Read as" }, select),
        el("td", { "data-label": "First rows", class: "sample" }, values.join(" · ")));
    })));
  const fieldset = el("fieldset", { id, class: "mapping" },
    el("legend", {}, `Match the columns of the ${kind} file (${file.name})`),
    el("p", { class: "hint" }, fromSaved
      ? "This is how you matched this file's columns last time. Check it, change what is not right, then press Upload and sync."
      : `This file's columns are not the ones the service reads, nor a shop export it knows. Choose what each column holds (guessed from its name where possible), or Not used. Needed: ${required.join(", ")}.`),
    el("div", { class: "table-wrap" }, table),
  );
  $(id)?.remove();
  $("encoding-questions").after(fieldset);
  fieldset.querySelector("select")?.focus();
}

function chosenMapping(kind) {
  const mapping = {};
  for (const select of document.querySelectorAll(`#columns-${kind} select`)) mapping[select.dataset.cell] = select.value;
  return mapping;
}

/** What is wrong with the matching on the page: a required column not chosen, or one chosen twice. */
function mappingProblem(kind, columns) {
  const chosen = Object.values(chosenMapping(kind)).filter(Boolean);
  const missing = columns.filter((c) => c.required && !chosen.includes(c.name)).map((c) => c.name);
  const twice = [...new Set(chosen.filter((c, i) => chosen.indexOf(c) !== i))];
  const selects = [...document.querySelectorAll(`#columns-${kind} select`)];
  for (const select of selects) select.removeAttribute("aria-invalid");
  if (twice.length) {
    const clashing = selects.filter((s) => s.value === twice[0]);
    for (const select of clashing) select.setAttribute("aria-invalid", "true");
    clashing[1]?.focus();
    return `In the ${kind} file, two columns are read as ${twice[0]}: choose one of them, and another or Not used for the other.`;
  }
  if (missing.length) {
    selects[0]?.focus();
    return `In the ${kind} file, choose the column that holds ${missing.join(", ")}: the sync needs ${missing.length === 1 ? "it" : "them"}.`;
  }
  return null;
}

/** The header and first rows of CSV text, for the preview: the separator the header uses most (outside
 * quotes), cells unquoted as CSV quotes them. Rows are objects keyed by the header's cells. */
export function preview(text) {
  const firstLine = text.replace(/^\ufeff/, "").split(/\r\n|\n|\r/, 1)[0] ?? "";
  const outside = firstLine.replace(/"[^"]*"/g, "");
  const delimiter = DELIMITERS.map((d) => [d, outside.split(d).length]).sort((a, b) => b[1] - a[1])[0][0];
  const records = parse(text.replace(/^\ufeff/, ""), delimiter, PREVIEW_ROWS + 2);
  const [head = [], ...body] = records;
  const rows = body.filter((r) => r.some((c) => c.trim())).slice(0, PREVIEW_ROWS)
    .map((r) => Object.fromEntries(head.map((cell, i) => [cell.trim(), (r[i] ?? "").trim()])));
  return { header: head, rows };
}

function parse(text, delimiter, limit) {
  const records = [];
  let record = [], cell = "", quoted = false;
  for (let i = 0; i < text.length && records.length < limit; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i += 1; }
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"' && cell.trim() === "") { cell = ""; quoted = true; } // a quote after spaces opens the cell, as the sync reads it
    else if (c === delimiter) { record.push(cell); cell = ""; }
    else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i += 1;
      record.push(cell); records.push(record); record = []; cell = "";
    } else cell += c;
  }
  if ((cell || record.length) && records.length < limit) { record.push(cell); records.push(record); }
  return records;
}

/** Forget the questions (the files were sent). */
export function clearColumnQuestions() {
  for (const kind of Object.keys(asked)) $(`columns-${kind}`)?.remove();
  source = null; // the next sync reads the matching this one saved
}

function $(id) {
  return document.getElementById(id);
}
