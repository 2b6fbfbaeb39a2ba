// Where the platform's login dialog sends the browser back with its code (or an error).
// A file of its own, not an inline script: the Content-Security-Policy allows script-src 'self' only.
import { announce, api, page } from "./app.js";
// The platform sends the browser here with code and state (or an error); the API checks that
// the state was issued to this user and exchanges the code.
page(async () => {
  const query = new URLSearchParams(location.search);
  const state = query.get("state");
  const body = { state, code: query.get("code"), error: query.get("error"), errorReason: query.get("error_reason") };
  if (!state || !(body.code || body.error)) {
    announce("This link is missing the platform's answer. Start again with Connect on the ad account page.", "error");
    return;
  }
  // The code is single-use: take it out of the address bar and the history before using it.
  history.replaceState(null, "", "connect-callback.html");
  try {
    await api("/platform-ads/connect/callback", {
      method: "POST",
      body: Object.fromEntries(Object.entries(body).filter(([, value]) => value)),
    });
    location.replace("connection.html?connected=1");
  } catch (exc) {
    announce(`${exc.message} To try again, press Connect on the ad account page.`, "error");
    document.getElementById("status").focus();
  }
});
