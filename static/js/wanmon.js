/* wanmon pages: draw the Plotly figures a page carries (json_script "wanmon-figures") or loads from another
   page (data-figures-url), follow clicks on chart points that carry a link, and refresh fragments and figures
   every minute without a reload.
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

  // The y scale a user chose for a chart (log or linear) survives the minute refresh.
  function yScale(el, meta) {
    return el.getAttribute("data-yscale") || (meta.log_default ? "log" : "linear");
  }

  // Under a chart: the log/linear toggle and the links to the same data in the explorer and as CSV.
  function chartLinks(el, meta) {
    if (el.nextElementSibling && el.nextElementSibling.classList.contains("chart-links")) return;
    var bar = document.createElement("p");
    bar.className = "chart-links";
    if (meta.log_toggle) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "log-toggle";
      button.textContent = "log scale";
      button.setAttribute("aria-pressed", String(yScale(el, meta) === "log"));
      button.addEventListener("click", function () {
        var scale = yScale(el, meta) === "log" ? "linear" : "log";
        el.setAttribute("data-yscale", scale);
        button.setAttribute("aria-pressed", String(scale === "log"));
        window.Plotly.relayout(el, { "yaxis.type": scale, "yaxis.autorange": true });
      });
      bar.appendChild(button);
    }
    var links = meta.links || {};
    [["explore", "Open in explorer"], ["csv", "CSV"]].forEach(function (item) {
      if (!links[item[0]]) return;
      var a = document.createElement("a");
      a.href = links[item[0]];
      a.className = "chart-" + item[0];
      a.textContent = item[1];
      bar.appendChild(a);
    });
    if (bar.childNodes.length) el.parentNode.insertBefore(bar, el.nextSibling);
  }

  // Zooming a time chart puts its range in the address (start, end: wall-clock times of the page's zone, which
  // the server reads so): the view can be shared and reloaded at that width; a reset restores the address.
  var initialSearch = window.location.search;

  function zoomToUrl(event) {
    var url = new URL(window.location.href);
    if (event["xaxis.range[0]"] && event["xaxis.range[1]"]) {
      url.searchParams.delete("range");
      url.searchParams.set("start", String(event["xaxis.range[0]"]).slice(0, 19).replace(" ", "T"));
      url.searchParams.set("end", String(event["xaxis.range[1]"]).slice(0, 19).replace(" ", "T"));
    } else if (event["xaxis.autorange"]) {
      url.search = initialSearch;
    } else {
      return;
    }
    window.history.replaceState(null, "", url.toString());
  }

  function draw(name, figure) {
    var el = document.querySelector('[data-figure="' + name + '"]');
    if (!el || !window.Plotly || !figure) return;
    var config = Object.assign({}, CONFIG, { scrollZoom: el.hasAttribute("data-scroll-zoom") });
    var meta = (figure.layout && figure.layout.meta) || {};
    if (meta.log_toggle && figure.layout.yaxis) figure.layout.yaxis.type = yScale(el, meta);
    window.Plotly.react(el, figure.data, figure.layout, config);
    chartLinks(el, meta);
    if (!el.hasAttribute("data-bound")) {
      el.setAttribute("data-bound", "1");
      if (figure.layout && figure.layout.xaxis && figure.layout.xaxis.type === "date") {
        el.on("plotly_relayout", zoomToUrl);
      }
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

  // A page's JSON form (?format=json): its fragments (HTML) and figures.
  function fetchPayload(url) {
    url.searchParams.set("format", "json");
    return fetch(url.toString(), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (response.redirected) throw new Error("session ended, log in again");
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      });
  }

  function apply(payload) {
    var fragments = payload.fragments || {};
    Object.keys(fragments).forEach(function (name) {
      var el = document.querySelector('[data-fragment="' + name + '"]');
      if (el) el.innerHTML = fragments[name];
    });
    drawAll(payload.figures);
  }

  function refresh() {
    if (!root || busy) return Promise.resolve(false);
    busy = true;
    return fetchPayload(new URL(window.location.href))
      .then(function (payload) {
        apply(payload);
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

  // Charts another page draws (the incident page's are the dashboard's): loaded once this page is shown.
  Array.prototype.forEach.call(document.querySelectorAll("[data-figures-url]"), function (el) {
    fetchPayload(new URL(el.getAttribute("data-figures-url"), window.location.href))
      .then(apply)
      .catch(function (error) { el.textContent = "The charts could not be loaded: " + error.message; });
  });

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
