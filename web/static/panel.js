// approvebot panel: live updates for pages that read fine without this script.
// It listens to /ui/events (server-sent events) and puts the server's HTML for a request
// in place: new requests at the top of the pending list, a decided request replaced by
// its decided form. It counts the time left down, and keeps whatever you are typing.
"use strict";
(function () {
  var body = document.body;
  var status = document.getElementById("live-status");
  var banner = document.getElementById("banner");

  function announce(text) {
    if (status) { status.textContent = text; }
  }

  function showBanner(text) {
    if (!banner) { return; }
    banner.textContent = text;
    banner.hidden = false;
  }

  function fromHTML(html) {
    var t = document.createElement("template");
    t.innerHTML = html.trim();
    return t.content.firstElementChild;
  }

  // busy reports whether the user is in the middle of something inside el.
  function busy(el) {
    var a = document.activeElement;
    if (a && el.contains(a) && a.tagName === "INPUT") { return true; }
    var inputs = el.querySelectorAll("input[type=text]");
    for (var i = 0; i < inputs.length; i++) {
      if (inputs[i].value !== "") { return true; }
    }
    return false;
  }

  function updateCount() {
    var list = document.getElementById("pending-list");
    var count = document.getElementById("pending-count");
    var empty = document.getElementById("pending-empty");
    if (!list) { return; }
    var n = list.querySelectorAll('.req[data-state="pending"]').length;
    if (count) {
      count.textContent = String(n);
      count.setAttribute("aria-label", n + " waiting");
    }
    if (empty) { empty.hidden = list.querySelector(".req") !== null; }
    document.title = (n > 0 ? "(" + n + ") " : "") + document.title.replace(/^\(\d+\) /, "");
  }

  function titleOf(el) {
    var h = el.querySelector("h2");
    var code = el.querySelector(".summary code");
    return (h ? h.textContent : "") + (code ? ": " + code.textContent : "");
  }

  function onRequest(html) {
    var fresh = fromHTML(html);
    if (!fresh || !fresh.id) { return; }
    var old = document.getElementById(fresh.id);
    if (old) {
      if (old.dataset.state === fresh.dataset.state) { return; }
      old.replaceWith(fresh);
      announce(titleOf(fresh));
    } else {
      var list = document.getElementById("pending-list");
      if (!list || fresh.dataset.state !== "pending") { return; }
      list.insertBefore(fresh, list.firstElementChild);
      announce("New request. " + titleOf(fresh));
    }
    tick();
    updateCount();
  }

  function onCards(html) {
    var fresh = fromHTML(html);
    if (!fresh || !fresh.id) { return; }
    var old = document.getElementById(fresh.id);
    if (old) { old.replaceWith(fresh); }
  }

  function onResync() {
    var main = document.getElementById("main");
    if (main && busy(main)) {
      showBanner("This page may be out of date. Reload it when you are done typing.");
      return;
    }
    window.location.reload();
  }

  function connect(url) {
    if (!window.EventSource) { return; }
    var es = new EventSource(url);
    es.addEventListener("request", function (e) { onRequest(e.data); });
    es.addEventListener("cards", function (e) { onCards(e.data); });
    es.addEventListener("resync", function () { es.close(); onResync(); });
    es.addEventListener("signedout", function () {
      es.close();
      showBanner("You were signed out. Reload the page to sign in again.");
    });
    es.addEventListener("open", function () { if (banner) { banner.hidden = true; } });
    es.addEventListener("error", function () {
      if (es.readyState === EventSource.CLOSED) {
        showBanner("Live updates stopped. Reload the page to see what changed.");
      }
    });
  }

  function fmtLeft(ms) {
    if (ms <= 0) { return "expired"; }
    var s = Math.round(ms / 1000);
    var m = Math.floor(s / 60);
    s = s % 60;
    if (m >= 60) { return Math.floor(m / 60) + "h " + String(m % 60).padStart(2, "0") + "m left"; }
    if (m > 0) { return m + "m " + String(s).padStart(2, "0") + "s left"; }
    return s + "s left";
  }

  function tick() {
    var now = Date.now();
    var els = document.querySelectorAll("time[data-expires]");
    for (var i = 0; i < els.length; i++) {
      var ms = Date.parse(els[i].dataset.expires) - now;
      var text = fmtLeft(ms);
      if (els[i].textContent !== text) { els[i].textContent = text; }
      els[i].parentElement.classList.toggle("urgent", ms < 30000);
    }
  }

  // A decision sent from a request's own page comes back to it.
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (f.elements && f.elements["return"] && document.querySelector("[data-request]")) {
      f.elements["return"].value = "request";
    }
  });

  if (body.dataset.events) { connect(body.dataset.events); }
  tick();
  window.setInterval(tick, 1000);
})();
