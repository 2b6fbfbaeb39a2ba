import { announce, api, el, formatDate, page } from "./app.js";

const STATES = {
  active: ["ok", "Connected"],
  not_connected: ["info", "Not connected"],
  token_invalid: ["bad", "Access lost: connect again to restore it"],
  inactive: ["info", "Disconnected"],
};

async function load() {
  const status = await api("/platform-ads/status");
  const [kind, text] = STATES[status.status] ?? ["bad", status.status.replaceAll("_", " ")];
  document.getElementById("state").replaceChildren(el("span", { class: `badge ${kind}` }, text));
  const details = document.getElementById("details");
  const rows = [
    ["Ad account", status.adAccountName && `${status.adAccountName} (${status.adAccountId})`],
    ["Business", status.businessName],
    ["Connected", status.connectedAt && formatDate(status.connectedAt)],
    ["Access last checked", status.lastValidatedAt && formatDate(status.lastValidatedAt)],
    ["Access expires", status.tokenExpiresAt && formatDate(status.tokenExpiresAt)],
  ].filter(([, value]) => value);
  details.replaceChildren(...rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
  details.hidden = rows.length === 0;
  document.getElementById("connect").hidden = status.connected;
  document.getElementById("disconnect").hidden = !status.connected;
}

document.getElementById("connect").addEventListener("click", async () => {
  try {
    const { authorizationUrl } = await api("/platform-ads/connect", { method: "POST" });
    location.assign(authorizationUrl);
  } catch (exc) {
    announce(exc.message, "error");
  }
});

document.getElementById("disconnect").addEventListener("click", async () => {
  if (!confirm("Disconnect the ad account? Audiences stop syncing; those already on the platform stay there.")) return;
  try {
    await api("/platform-ads/disconnect", { method: "POST" });
    announce("The ad account is disconnected.", "success");
    await load();
  } catch (exc) {
    announce(exc.message, "error");
  }
});

page(async () => {
  const result = new URLSearchParams(location.search).get("connected");
  if (result === "1") announce("The ad account is connected.", "success");
  await load().catch((exc) => announce(exc.message, "error"));
});
