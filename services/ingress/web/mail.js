// The Gmail page: shows whether the signed-in user's Gmail is connected,
// sends them to Google's consent page to connect it, and disconnects it.
// The token is the one the chat page keeps in this tab's sessionStorage:
// the tab's confirmed account (a link's token for another account is kept
// only once the person said yes), which the page names.
"use strict";

const token = window.sessionStorage.getItem("purser.token") || "";
const $ = (id) => document.getElementById(id);

// accountName is who the token says it is for; the server checks it.
function accountName(t) {
  try {
    const part = t.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const claims = JSON.parse(atob(part.padEnd(part.length + ((4 - (part.length % 4)) % 4), "=")));
    if (typeof claims.sub === "string" && typeof claims.tenant === "string") return claims.sub + " (" + claims.tenant + ")";
  } catch {
    // not a token this page can read
  }
  return "an account whose token cannot be read";
}

async function api(method, path) {
  const resp = await fetch(path, { method, headers: { Authorization: "Bearer " + token } });
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error(body.detail || body.error || "HTTP " + resp.status);
  return body;
}

function show(connected) {
  $("mail-status").textContent = connected ? "Gmail connected" : "Gmail not connected";
  $("mail-connect").hidden = connected;
  $("mail-disconnect").hidden = !connected;
}

async function refresh() {
  try {
    show((await api("GET", "/v1/mail")).connected);
  } catch (err) {
    $("mail-status").textContent = "unavailable";
    $("mail-message").textContent = err.message;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  if (!token) {
    $("mail-status").textContent = "not signed in";
    $("mail-signin").hidden = false;
    return;
  }
  $("mail-account-name").textContent = accountName(token);
  $("mail-account").hidden = false;
  $("mail-connect").addEventListener("click", async () => {
    try {
      const { url } = await api("GET", "/v1/mail/connect");
      window.location.assign(url); // Google sends the user back to /v1/mail/callback
    } catch (err) {
      $("mail-message").textContent = err.message;
    }
  });
  $("mail-disconnect").addEventListener("click", async () => {
    try {
      const { warning } = await api("DELETE", "/v1/mail");
      $("mail-message").textContent = warning || "Gmail is disconnected: purser deleted its access and asked Google to revoke it.";
      show(false);
    } catch (err) {
      $("mail-message").textContent = err.message;
    }
  });
  refresh();
});
