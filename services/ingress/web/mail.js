// The Gmail page: shows whether the signed-in user's Gmail is connected,
// sends them to Google's consent page to connect it, and disconnects it.
// The token is the one the chat page keeps in this tab's sessionStorage.
"use strict";

const token = window.sessionStorage.getItem("purser.token") || "";
const $ = (id) => document.getElementById(id);

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
