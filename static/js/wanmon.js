/* wanmon pages: draw the Plotly figures a page carries (json_script "wanmon-figures"), follow clicks
   on chart points that carry a link, and refresh fragments and figures every minute without a reload.
   Plain JavaScript, no external requests: plotly.js is served from /static/ like this file. */
(function () {
  "use strict";

  var CONFIG = {
    displaylogo: false,
    responsive: true,
    displayModeBar: "hover",
    modeBarButtonsToRemove: ["lasso2d", "select2d", "autoScale2d", "toggleSpikelines", "sendDataToCloud"],
    toImageButtonOptions: { format: "png", scale: 2 }
  };

  function draw(name, figure) {
    var el = document.querySelector('[data-figure="' + name + '"]');
    if (!el || !window.Plotly || !figure) return;
    var config = Object.assign({}, CONFIG, { scrollZoom: el.hasAttribute("data-scroll-zoom") });
    window.Plotly.react(el, figure.data, figure.layout, config);
    if (!el.hasAttribute("data-bound")) {
      el.setAttribute("data-bound", "1");
      el.on("plotly_click", function (event) {
        var point = event.points && event.points[0];
        var url = point && point.customdata;
        if (Array.isArray(url)) url = url[0];
        if (typeof url === "string" && url.charAt(0) === "/") window.location.href = url;
      });
    }
    el.setAttribute("data-drawn", "1");
  }

  function drawAll(figures) {
    Object.keys(figures || {}).forEach(function (name) { draw(name, figures[name]); });
  }

  var statusEl = document.getElementById("refresh-status");
  var zone = document.body.getAttribute("data-tz") || "UTC";

  function say(text, failed) {
    if (!statusEl) return;
    statusEl.textContent = text;
    statusEl.classList.toggle("failed", !!failed);
  }

  function clock(iso) {
    try {
      return new Intl.DateTimeFormat("en-GB", {
        timeZone: zone, hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false
      }).format(new Date(iso));
    } catch (e) {
      return iso;
    }
  }

  var root = document.querySelector("[data-refresh]");
  var busy = false;
  var count = 0;

  function refresh() {
    if (!root || busy) return Promise.resolve(false);
    busy = true;
    var url = new URL(window.location.href);
    url.searchParams.set("format", "json");
    return fetch(url.toString(), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (response.redirected) throw new Error("session ended, log in again");
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (payload) {
        var fragments = payload.fragments || {};
        Object.keys(fragments).forEach(function (name) {
          var el = document.querySelector('[data-fragment="' + name + '"]');
          if (el) el.innerHTML = fragments[name];
        });
        drawAll(payload.figures);
        count += 1;
        root.setAttribute("data-refreshes", String(count));
        say("updated " + clock(payload.generated_at));
        return true;
      })
      .catch(function (error) {
        say("refresh failed: " + error.message, true);
        return false;
      })
      .finally(function () { busy = false; });
  }

  var source = document.getElementById("wanmon-figures");
  if (source) drawAll(JSON.parse(source.textContent));
  if (root) {
    var seconds = parseInt(root.getAttribute("data-refresh"), 10) || 60;
    say("auto-refresh every " + seconds + " s");
    window.setInterval(function () { if (!document.hidden) refresh(); }, seconds * 1000);
    document.addEventListener("visibilitychange", function () { if (!document.hidden) refresh(); });
  }
  window.wanmon = { refresh: refresh, draw: draw };
})();
