// A classic (non-module) script that runs where the page's modules cannot: browsers refuse to
// load ES modules from file://, so an exported page opened from disk would otherwise stay on
// "Checking the survey…" forever. It only explains; it never answers or sends anything.
"use strict";

(function () {
  var statusEl = document.getElementById("status");

  function explain(state, title, lines) {
    document.body.dataset.state = state;
    var heading = document.getElementById("title");
    heading.textContent = title;
    var box = document.createElement("div");
    box.className = "refusal";
    box.setAttribute("role", "alert");
    lines.forEach(function (line) {
      var p = document.createElement("p");
      p.textContent = line;
      box.appendChild(p);
    });
    statusEl.replaceChildren(box);
  }

  if (window.location.protocol === "file:") {
    explain("file", "This page must be opened from a web server", [
      "It was opened from a file on this computer (" + window.location.href + "), and " +
        "browsers do not run the page's code from files. Nothing was randomized or sent.",
      "What the survey's operator must do: put this folder on a web server (any static " +
        "host, with HTTPS), start the survey server with `ldpsurvey serve --allow-origin` " +
        "set to that site's address (scheme, host and port, no path), and give respondents " +
        "the page's address on that site. To try " +
        "it on this computer: run `python3 -m http.server 8080 --bind 127.0.0.1` in this " +
        "folder, open the address it prints, and pass that address (without a path) to " +
        "--allow-origin.",
    ]);
    return;
  }
  var main = document.querySelector('script[type="module"]');
  if (main) {
    main.addEventListener("error", function () {
      explain("error", "This page could not load", [
        "Its code did not load (a file is missing from this copy of the page, or the " +
          "browser is too old for ES modules). Nothing was randomized or sent.",
      ]);
    });
  }
})();
