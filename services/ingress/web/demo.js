// The demo host page's own script: how a host hands purser a token. Here
// the token comes in the address's fragment (purser up prints such a link;
// the fragment never reaches a server): it is kept in this tab and removed
// from the address bar. A link can carry anyone's token, so one for another
// account than the tab's replaces it only after the person says yes. A real
// host would fetch one from its own backend.
"use strict";
(function () {
  // The key the Gmail page (/mail) reads the tab's token from, too.
  const key = "purser.token";
  // account is who a token says it is for ("user (tenant)"), "" when it
  // cannot be read; the server checks every token.
  const account = (t) => {
    try {
      const part = t.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
      const c = JSON.parse(atob(part.padEnd(part.length + ((4 - (part.length % 4)) % 4), "=")));
      return typeof c.sub === "string" && typeof c.tenant === "string" ? c.sub + " (" + c.tenant + ")" : "";
    } catch {
      return "";
    }
  };
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) {
    history.replaceState(null, "", location.pathname + location.search);
    const current = sessionStorage.getItem(key);
    const next = account(fromHash), now = current ? account(current) : "";
    if (!current || (next && next === now) ||
        window.confirm("The link you opened signs this tab in as " + (next || "an account whose token cannot be read") +
          ".\nThis tab is signed in as " + (now || "an account whose token cannot be read") +
          ".\n\nSwitch accounts? Only if the link is yours: what you do here next, connecting Gmail included, is done as that account.")) {
      if (current && next !== now) {
        // What the chat kept for the account it leaves is not sent again
        // as someone else.
        for (const k of ["purser.conversation", "purser.outbox", "purser.decided"]) sessionStorage.removeItem(k);
      }
      sessionStorage.setItem(key, fromHash);
    }
  }
  // The widget says when the assistant changed the person's money data; a
  // real host would read its figures again here. The demo says so.
  const words = { added: "added", updated: "changed", deleted: "deleted", imported: "imported" };
  window.addEventListener("purser:changed", (ev) => {
    const d = ev.detail || {};
    const line = document.getElementById("ledger-updated");
    if (!line || !words[d.change]) return;
    const what = d.what === "import" ? "a statement" : "an expense";
    line.textContent = "Updated just now: " + what + " " + words[d.change] + " by the assistant.";
    line.dataset.change = d.change;
  });
  window.PurserSettings = {
    getToken: () => sessionStorage.getItem(key) || "",
    theme: "system",
  };
})();
