// The demo host page's own script: how a host hands purser a token. Here
// the token comes in the address's fragment (purser up prints such a link;
// the fragment never reaches a server): it is kept in this tab and removed
// from the address bar. A real host would fetch one from its own backend.
"use strict";
(function () {
  // The key the Gmail page (/mail) reads the tab's token from, too.
  const key = "purser.token";
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) {
    sessionStorage.setItem(key, fromHash);
    history.replaceState(null, "", location.pathname + location.search);
  }
  window.PurserSettings = {
    getToken: () => sessionStorage.getItem(key) || "",
    theme: "system",
  };
})();
