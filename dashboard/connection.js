import { announce, api, el, formatDate, page } from "./app.js";

const STATES = {
  active: ["ok", "Connected"],
  not_connected: ["info", "Not connected"],
  token_invalid: ["bad", "Access lost: connect again to restore it"],
  inactive: ["info", "Disconnected"],
};

// The token's health from the last check (or a call the platform refused), in words.
const HEALTH = {
  valid: "Valid",
  expiring: "Expiring soon: connect again before it ends",
  invalid: "Refused by the platform: connect again to restore access",
  unknown: "Not checked yet",
};

async function load() {
  const status = await api("/platform-ads/status");
  // A connection whose token the platform refused is still "active" until the user reconnects; it
  // cannot reach the platform, so it reads as lost and offers to connect again.
  const lost = status.connected && status.tokenHealth === "invalid";
  const [kind, text] = lost ? STATES.token_invalid : STATES[status.status] ?? ["bad", status.status.replaceAll("_", " ")];
  document.getElementById("state").replaceChildren(el("span", { class: `badge ${kind}` }, text));
  const details = document.getElementById("details");
  const rows = [
    ["Ad account", status.adAccountName && `${status.adAccountName} (${status.adAccountId})`],
    ["Business", status.businessName],
    ["Connected", status.connectedAt && formatDate(status.connectedAt)],
    ["Disconnected", !status.connected && status.disconnectedAt && formatDate(status.disconnectedAt)],
    ["Access", status.connected && status.tokenHealth && `${HEALTH[status.tokenHealth] ?? status.tokenHealth}${status.validationError ? ` (${status.validationError})` : ""}`],
    ["Access last checked", status.lastValidatedAt && formatDate(status.lastValidatedAt)],
    ["Access expires", status.tokenExpiresAt && formatDate(status.tokenExpiresAt)],
  ].filter(([, value]) => value);
  details.replaceChildren(...rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
  details.hidden = rows.length === 0;
  document.getElementById("connect").hidden = status.connected && !lost;
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
