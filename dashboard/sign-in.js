// The sign-in page: e-mail and password against the user pool, then on to the page asked for.
// A file of its own, not an inline script: the Content-Security-Policy allows script-src 'self' only.
import { signIn, signedInEmail } from "./app.js";
const next = new URLSearchParams(location.search).get("next");
const destination = next && /^[\w-]+\.html(\?[^#]*)?$/.test(next) ? next : "connection.html";
if (signedInEmail()) location.replace(destination);
const form = document.getElementById("signin");
const error = document.getElementById("signin-error");
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.textContent = "";
  const email = form.elements.email.value.trim();
  const password = form.elements.password.value;
  if (!email || !password) {
    error.textContent = "Enter both your e-mail and your password.";
    (email ? form.elements.password : form.elements.email).focus();
    return;
  }
  try {
    await signIn(email, password);
    location.replace(destination);
  } catch (exc) {
    error.textContent = exc.message;
    form.elements.password.focus();
  }
});
