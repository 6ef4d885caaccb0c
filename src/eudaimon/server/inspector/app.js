// The eudaimon inspector: plain JavaScript modules, no build step, nothing fetched but this
// server's API. This module routes between pages and wires up the header; each page is a
// module of its own (runs.js, run.js, dashboard.js, threads.js, inbox.js), helpers live in shared.js.
import { apiKey, go, loadWhoami, notice, session, setApiKey, setRouter, watchHealth } from "./shared.js";
import { runsPage } from "./runs.js";
import { runPage } from "./run.js";
import { dashboardPage } from "./dashboard.js";
import { threadPage, threadsPage } from "./threads.js";
import { schedulesPage } from "./schedules.js";
import { inboxPage } from "./inbox.js";

let stopPage = () => {};

function route() {
  stopPage();
  stopPage = () => {};
  const main = document.getElementById("main");
  const path = decodeURIComponent(location.pathname).slice(session.root.length) || "/";
  let match;
  if ((match = path.match(/^\/runs\/(.+)$/))) stopPage = runPage(main, match[1]);
  else if ((match = path.match(/^\/threads\/(.+)$/))) stopPage = threadPage(main, match[1]);
  else if (path === "/threads") stopPage = threadsPage(main);
  else if (path === "/dashboard") stopPage = dashboardPage(main);
  else if (path === "/schedules") stopPage = schedulesPage(main);
  else if (path === "/inbox") stopPage = inboxPage(main);
  else stopPage = runsPage(main);
  for (const a of document.querySelectorAll("header nav a")) {
    const here = a.getAttribute("href") === session.root + (path.startsWith("/runs") ? "/" : path);
    if (here) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
}

function start() {
  session.root = (document.body.dataset.root || "").replace(/\/$/, "");
  setRouter(route);
  const input = document.getElementById("api-key");
  input.value = apiKey();
  document.getElementById("key-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    setApiKey(input.value);
    notice(input.value ? "API key kept for this browser session" : "API key cleared");
    await loadWhoami();
    route();
  });
  for (const a of document.querySelectorAll("header nav a")) {
    a.addEventListener("click", (event) => { event.preventDefault(); go(a.getAttribute("href").slice(session.root.length) || "/"); });
  }
  window.addEventListener("popstate", route);
  watchHealth();
  loadWhoami().then(route);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
