import { announce, api, el, page } from "./app.js";

// The wizard's steps are added as their API endpoints land; the first reads the readiness checklist.
const MARKS = { pass: ["ok", "Pass"], fail: ["bad", "Fail"], unknown: ["info", "Unknown"] };
const GROUPS = { connection: "Connection", ad_account: "Ad account", data: "Data and models", publish_advert: "Publish advert" };

async function loadReadiness() {
  const readiness = await api("/platform-ads/readiness");
  const failing = readiness.items.filter((item) => item.status !== "pass").length;
  document.getElementById("readiness-summary").textContent = readiness.ready
    ? "Everything passes: you can go on."
    : `${failing} of ${readiness.items.length} items need attention; each says what to do.`;
  document.getElementById("readiness-items").replaceChildren(
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

document.getElementById("recheck").addEventListener("click", () =>
  loadReadiness().then(() => announce("Checked again.")).catch((exc) => announce(exc.message, "error")),
);

page(() => loadReadiness().catch((exc) => announce(exc.message, "error")));
