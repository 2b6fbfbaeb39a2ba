import { announce, api, el, formatDate, page } from "./app.js";

const STATES = {
  active: ["ok", "Taking card payments"],
  onboarding: ["info", "Set-up not finished"],
  inactive: ["info", "Disconnected"],
  not_connected: ["info", "Not connected"],
};

async function load() {
  const status = await api("/payments/status");
  // Onboarding with card payments enabled at the provider is a reconnect waiting for its return.
  const reconnecting = status.status === "onboarding" && status.chargesEnabled;
  const [kind, text] = reconnecting ? ["info", "Reconnecting"] : STATES[status.status] ?? ["bad", status.status];
  document.getElementById("state").replaceChildren(el("span", { class: `badge ${kind}` }, text));
  document.getElementById("message").textContent = status.remedy ? `${status.message} ${status.remedy}` : status.message;
  const rows = [
    ["Business", status.businessName],
    ["Account", status.accountHint && `ending in ${status.accountHint}`],
    ["Country", status.country],
    ["Currency", status.defaultCurrency && status.defaultCurrency.toUpperCase()],
    ["Card payments", status.connected ? (status.chargesEnabled ? "Enabled" : "Not enabled yet") : null],
    ["Payouts", status.connected ? (status.payoutsEnabled ? "Enabled" : "Not enabled yet") : null],
    ["Connected", status.connectedAt && formatDate(status.connectedAt)],
    ["Last checked", status.checkedAt && formatDate(status.checkedAt)],
    ["Disconnected", status.status === "inactive" && status.disconnectedAt && formatDate(status.disconnectedAt)],
  ].filter(([, value]) => value);
  const details = document.getElementById("details");
  details.replaceChildren(...rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
  details.hidden = rows.length === 0;
  document.getElementById("missing").replaceChildren(...status.missing.map((need) => el("li", {}, need)));
  document.getElementById("missing-block").hidden = status.missing.length === 0;
  const connect = document.getElementById("connect");
  connect.hidden = status.status === "active";
  // After a disconnect the same account is resumed (its id is kept); a different one only on request.
  const resumable = status.status === "inactive" && Boolean(status.accountHint);
  connect.textContent = status.status === "onboarding"
    ? "Continue setup"
    : (resumable ? "Reconnect" : "Connect a payments account");
  document.getElementById("connect-new").hidden = !resumable;
  document.getElementById("disconnect").hidden = !status.connected;
}

const OUTCOMES = { expired: "Expired unpaid", failed: "Payment failed" };
const REFUNDS = {
  full: (order) => `Refunded in full (${order.refundedAmount})`,
  partial: (order) => `Partly refunded: ${order.refundedAmount} of ${order.amount}`,
};

const DISPUTES = {
  warning_needs_response: "an inquiry, needs your response",
  warning_under_review: "an inquiry, under review",
  warning_closed: "an inquiry, closed",
  needs_response: "needs your response",
  under_review: "under review",
  won: "won",
  lost: "lost",
  prevented: "prevented",
};

/** A chargeback in words: Disputed, the amount and status, the reason, and what to do about it. */
function dispute(order) {
  if (!order.disputeStatus) return "No";
  const status = DISPUTES[order.disputeStatus] ?? order.disputeStatus.replaceAll("_", " ");
  const reason = order.disputeReason ? ` (${order.disputeReason.replaceAll("_", " ")})` : "";
  return `Disputed: ${order.disputedAmount}, ${status}${reason}. ${order.disputeNextStep}`;
}

function cell(label, ...content) {
  return el("td", { "data-label": label }, ...content);
}

/** Fill a table's body with rows, or show its empty state instead. */
function fill(name, rows) {
  document.getElementById(name).replaceChildren(...rows);
  document.getElementById(`${name}-block`).hidden = rows.length === 0;
  document.getElementById(`${name}-empty`).hidden = rows.length !== 0;
}

async function loadOrders() {
  const { orders, unpaid } = await api("/payments/orders");
  fill("orders", orders.map((order) => el(
    "tr",
    {},
    cell("Product", order.productName),
    cell("Quantity", String(order.quantity)),
    cell("Amount", order.amount),
    cell("Paid", formatDate(order.paidAt)),
    cell("Refunded", REFUNDS[order.refunded]?.(order) ?? "No"),
    cell("Dispute", dispute(order)),
  )));
  fill("unpaid", unpaid.map((checkout) => el(
    "tr",
    {},
    cell("Product", checkout.productName),
    cell("Quantity", String(checkout.quantity)),
    cell("Amount", checkout.amount),
    cell("Outcome", OUTCOMES[checkout.state] ?? checkout.state),
    cell(
      "Cards refused",
      checkout.failedAttempts
        ? `${checkout.failedAttempts} refused. Last: ${checkout.lastFailureReason ?? checkout.lastFailure}`
        : "None",
    ),
    cell("Started", formatDate(checkout.createdAt)),
    cell("Ended", formatDate(checkout.updatedAt)),
  )));
}

async function connect(body) {
  try {
    const { onboardingUrl } = await api("/payments/connect", { method: "POST", body });
    location.assign(onboardingUrl);
  } catch (exc) {
    announce(exc.message, "error");
  }
}

document.getElementById("connect").addEventListener("click", () => connect(undefined));

document.getElementById("connect-new").addEventListener("click", () => {
  const lost = "Connect a different payments account? A new account is set up with the payment provider; "
    + "the one connected before stays yours there, but this service no longer uses it.";
  if (confirm(lost)) connect({ newAccount: true });
});

document.getElementById("disconnect").addEventListener("click", async () => {
  const lost = "Disconnect the payments account? Checkouts still open are closed and adverts linking to the "
    + "hosted checkout can no longer take payments. Your account stays yours with the payment provider.";
  if (!confirm(lost)) return;
  try {
    await api("/payments/disconnect", { method: "POST" });
    announce("The payments account is disconnected.", "success");
    await load();
  } catch (exc) {
    announce(exc.message, "error");
  }
});

page(async () => {
  if (new URLSearchParams(location.search).get("returned") === "1") {
    announce("You are back from the payment provider: here is where your account stands.", "success");
  }
  await Promise.all([
    load().catch((exc) => announce(exc.message, "error")),
    loadOrders().catch((exc) => announce(exc.message, "error")),
  ]);
});
