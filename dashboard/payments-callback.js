// Where the payment provider's onboarding sends the browser back.
// A file of its own, not an inline script: the Content-Security-Policy allows script-src 'self' only.
import { announce, api, page } from "./app.js";
// The payment provider sends the browser back here: with the state when the account holder left its
// pages, or with refresh=1 when the link had expired or was already used (then a new link is made).
page(async () => {
  const query = new URLSearchParams(location.search);
  const state = query.get("state");
  // The state is single-use: take it out of the address bar and the history before using it.
  history.replaceState(null, "", "payments-callback.html");
  try {
    if (query.get("refresh") === "1") {
      const { onboardingUrl } = await api("/payments/connect", { method: "POST" });
      location.replace(onboardingUrl);
      return;
    }
    if (!state) {
      announce("This link is missing the payment provider's answer. Start again on the Payments page.", "error");
      return;
    }
    await api("/payments/connect/callback", { method: "POST", body: { state } });
    location.replace("payments.html?returned=1");
  } catch (exc) {
    announce(`${exc.message} To try again, press Connect on the Payments page.`, "error");
    document.getElementById("status").focus();
  }
});
