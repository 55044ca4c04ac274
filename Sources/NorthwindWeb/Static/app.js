// Northwind's only script: live updates, search as you type, and the phone-order form. No libraries.
"use strict";

const csrf = () => document.body.dataset.csrf || "";
const debounce = (fn, ms) => { let t; return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); }; };

// A field someone has changed and not yet sent.
const edited = (field) => field.type === "checkbox" || field.type === "radio" ? field.checked !== field.defaultChecked
  : field.tagName === "SELECT" ? [...field.options].some((o) => o.selected !== o.defaultSelected) : field.value !== field.defaultValue;

// Replace every live region of this page with the same region from a fresh copy of `url`.
// A region holding the focused element, or a field someone has typed into, is left alone, so nobody loses what
// they are typing.
async function refreshFrom(url, ids) {
  const response = await fetch(url, { headers: { "Accept": "text/html" }, credentials: "same-origin" });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  document.querySelectorAll("[data-live][id]").forEach((region) => {
    if (ids && !ids.includes(region.id)) return;
    if (region.contains(document.activeElement) && document.activeElement !== document.body) return;
    if ([...region.querySelectorAll("input, select, textarea")].some(edited)) return;
    const replacement = fresh.getElementById(region.id);
    if (replacement) region.innerHTML = replacement.innerHTML;
  });
  document.dispatchEvent(new CustomEvent("northwind:refreshed"));
}

// guide: begin live-js
// Live updates: the server sends a `change` event naming the tables each commit touched.
function listenForChanges() {
  const tables = (document.body.dataset.liveTables || "").split(/\s+/).filter(Boolean);
  if (!tables.length || !window.EventSource) return;
  const refresh = debounce(() => refreshFrom(location.href), 150);
  const source = new EventSource("/events");
  source.addEventListener("change", (event) => {
    const change = JSON.parse(event.data);
    if (change.tables.some((t) => tables.includes(t))) refresh();
  });
}
// guide: end live-js

// Search as you type: forms marked data-live-search re-render their results region.
function liveSearch(form) {
  const target = form.dataset.liveSearch;
  const run = debounce(() => {
    const params = new URLSearchParams(new FormData(form));
    for (const [key, value] of [...params]) if (value === "") params.delete(key);
    const url = form.action + (params.toString() ? "?" + params : "");
    history.replaceState(null, "", url);
    refreshFrom(url, [target]);
  }, 250);
  form.addEventListener("input", run);
  form.addEventListener("change", run);
}

async function api(path, options = {}) {
  const headers = { "Accept": "application/json", "X-CSRF-Token": csrf(), ...(options.body ? { "Content-Type": "application/json" } : {}) };
  const response = await fetch(path, { credentials: "same-origin", ...options, headers });
  const body = response.status === 204 ? null : await response.json();
  if (!response.ok) {
    const error = new Error(body && body.detail ? body.detail : response.statusText);
    error.status = response.status;
    throw error;
  }
  return body;
}

function option(value, label) {
  const element = document.createElement("option");
  element.value = value;
  if (label) element.label = label;
  return element;
}

// The phone order: customer lookup, a new customer in place, product lookup, live totals and availability.
function phoneOrder(form) {
  const products = new Map(); // datalist text -> product
  const customers = new Map();
  const productList = document.getElementById("product-options");
  const customerList = document.getElementById("customer-options");
  const customerInput = document.getElementById("customer");
  const customerName = document.getElementById("customer-name");
  const tbody = form.querySelector("#lines tbody");
  const money = (cents) => (cents / 100).toFixed(2);
  const cents = (text) => Math.round(parseFloat(text) * 100);

  const lookupCustomers = debounce(async () => {
    const q = customerInput.value.trim();
    const found = await api("/api/v1/customers?limit=15&q=" + encodeURIComponent(q));
    customerList.replaceChildren(...found.items.map((c) => { customers.set(c.code, c); return option(c.code, c.companyName); }));
    showCustomer();
  }, 200);
  const showCustomer = () => {
    const c = customers.get(customerInput.value.trim().toUpperCase());
    customerName.textContent = c ? c.companyName + (c.city ? ", " + c.city : "") : "";
  };
  customerInput.addEventListener("input", () => { showCustomer(); lookupCustomers(); });

  document.getElementById("create-customer").addEventListener("click", async () => {
    const status = document.getElementById("new-customer-status");
    const body = {
      code: document.getElementById("new-customer-code").value.trim().toUpperCase(),
      companyName: document.getElementById("new-customer-company").value.trim(),
      phone: document.getElementById("new-customer-phone").value.trim() || null,
    };
    try {
      const created = await api("/api/v1/customers", { method: "POST", body: JSON.stringify(body) });
      customers.set(created.code, created);
      customerInput.value = created.code;
      showCustomer();
      status.textContent = "Created " + created.companyName + ".";
      document.getElementById("new-customer").open = false;
      customerInput.focus();
    } catch (error) {
      status.textContent = error.message;
    }
  });

  const lookupProducts = debounce(async (input) => {
    const q = input.value.trim();
    if (!q || products.has(q)) return;
    const found = await api("/api/v1/products/search?limit=15&q=" + encodeURIComponent(q));
    productList.replaceChildren(...found.items.map((p) => {
      const text = p.name + " (#" + p.id + ")";
      products.set(text, p);
      return option(text, p.unitPrice + " · " + p.unitsInStock + " in stock");
    }));
    update();
  }, 200);

  function update() {
    let total = 0;
    tbody.querySelectorAll("tr.line").forEach((row) => {
      const input = row.querySelector("[name=product]");
      const product = products.get(input.value.trim());
      row.querySelector("[name=productID]").value = product ? product.id : "";
      const quantity = parseInt(row.querySelector("[name=quantity]").value, 10) || 0;
      const discount = parseFloat(row.querySelector("[name=discount]").value) || 0;
      const lineTotal = product ? Math.round(cents(product.unitPrice) * quantity * (100 - discount) / 100) : 0;
      total += lineTotal;
      row.querySelector(".line-total").textContent = product ? money(lineTotal) : "";
      const availability = row.querySelector(".line-availability");
      if (!product) availability.textContent = "";
      else if (product.unitsInStock >= quantity) availability.textContent = "In stock (" + product.unitsInStock + ")";
      else availability.textContent = "Short by " + (quantity - product.unitsInStock);
    });
    const freight = cents(document.getElementById("freight").value) || 0;
    document.getElementById("order-total").textContent = money(total + freight);
  }

  form.addEventListener("input", (event) => {
    if (event.target.name === "product") lookupProducts(event.target);
    update();
  });
  document.getElementById("add-line").addEventListener("click", () => {
    const row = tbody.querySelector("tr.line").cloneNode(true);
    row.querySelectorAll("input").forEach((i) => { i.value = i.name === "quantity" ? "1" : i.name === "discount" ? "0" : ""; });
    row.querySelectorAll(".line-total, .line-availability").forEach((c) => { c.textContent = ""; });
    tbody.appendChild(row);
    row.querySelector("[name=product]").focus();
  });
  tbody.addEventListener("click", (event) => {
    if (!event.target.classList.contains("remove-line")) return;
    const rows = tbody.querySelectorAll("tr.line");
    if (rows.length > 1) event.target.closest("tr").remove();
    update();
  });
  if (customerInput.value) lookupCustomers();
  update();
}

// The quote editor: edits are named undo steps; the quote saves by itself a few seconds after the last change and
// when the page closes; the undo history is saved with it, so it outlives the tab. Another person's take-over makes
// the page read-only and says who.
function quoteEditor(root) {
  const number = root.dataset.number;
  const doc = JSON.parse(root.dataset.document);
  const autosaveMs = (parseInt(root.dataset.autosave, 10) || 15) * 1000;
  const copy = (value) => JSON.parse(JSON.stringify(value));
  // Equal as values, whatever the order of their keys (the store sends them sorted).
  const canonical = (value) => Array.isArray(value) ? value.map(canonical)
    : value && typeof value === "object" ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical(value[key])])) : value;
  const same = (a, b) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
  let base = copy(doc.content);
  let content = copy(doc.content);
  let history = doc.history || { undo: [], redo: [] };
  let totals = doc.lineTotals || {};
  let readOnly = root.hasAttribute("data-readonly");
  let dirty = false, saving = false, timer = null, failures = 0;
  const stateText = document.getElementById("save-state");
  const tbody = root.querySelector("#quote-lines tbody");
  const undoButton = document.getElementById("undo");
  const redoButton = document.getElementById("redo");
  const money = (cents) => (cents / 100).toFixed(2);
  const stored = "quote-draft:" + number;
  const products = new Map();

  // UIDocument's states: the store's (closed, inConflict, editingDisabled) and the page's own (a save on its way,
  // a save that failed), shown together as data-state for scripts and tests.
  let storeState = doc.state || [];
  function showState(failing) {
    const names = [...storeState, ...(saving ? ["progressAvailable"] : []), ...(failing ? ["savingError"] : [])];
    root.dataset.state = names.join(" ") || "normal";
  }

  function say(text, problem) {
    stateText.textContent = text;
    stateText.classList.toggle("error", !!problem);
    showState(!!problem && failures > 0);
  }

  // `label` heads the cell on a phone, where the table's own headings are hidden.
  function cell(child, className, label) {
    const td = document.createElement("td");
    if (className) td.className = className;
    if (label) td.dataset.label = label;
    if (typeof child === "string") td.textContent = child; else if (child) td.append(child);
    return td;
  }

  function input(type, value, label, onChange) {
    const element = document.createElement("input");
    element.type = type;
    element.value = value;
    element.setAttribute("aria-label", label);
    element.disabled = readOnly;
    if (type === "number") element.min = "0";
    element.addEventListener("change", () => onChange(element.value));
    return element;
  }

  function lineRow(line) {
    const row = document.createElement("tr");
    row.dataset.line = line.lineID;
    const current = () => row.line;
    const remove = document.createElement("button");
    remove.type = "button";
    remove.textContent = "Remove";
    remove.className = "remove-line";
    remove.addEventListener("click", () => {
      const position = content.lines.findIndex((l) => l.lineID === line.lineID);
      record("Remove " + line.productName, [{ field: "line", lineID: line.lineID, before: JSON.stringify({ line: current(), position }), after: null }]);
    });
    row.append(
      cell(line.productName, "", "Product"),
      cell(input("number", line.quantity, "Quantity of " + line.productName, (value) =>
        record("Change quantity of " + line.productName, [{ field: "quantity", lineID: line.lineID, before: String(current().quantity), after: value }])), "num", "Quantity"),
      cell(input("text", money(line.unitPrice), "Unit price of " + line.productName, (value) =>
        record("Change price of " + line.productName, [{ field: "unitPrice", lineID: line.lineID, before: String(current().unitPrice), after: String(Math.round(parseFloat(value) * 100)) }])), "num", "Unit price"),
      cell(input("number", Math.round(line.discount * 1000) / 10, "Discount of " + line.productName + " in percent", (value) =>
        record("Change discount of " + line.productName, [{ field: "discount", lineID: line.lineID, before: String(current().discount), after: String((parseFloat(value) || 0) / 100) }])), "num", "Discount %"),
      cell("", "num line-total", "Total"),
      cell(remove)
    );
    return row;
  }

  function render() {
    const validUntil = document.getElementById("quote-validUntil");
    const notes = document.getElementById("quote-notes");
    validUntil.value = content.validUntil;
    if (document.activeElement !== notes) notes.value = content.notes;
    validUntil.disabled = notes.disabled = readOnly;
    // Rows are kept and updated in place, so that a field keeps its focus while the rest follows.
    const rows = new Map([...tbody.querySelectorAll("tr[data-line]")].map((row) => [row.dataset.line, row]));
    const wanted = content.lines.map((line) => {
      const row = rows.get(line.lineID) && rows.get(line.lineID).querySelector("input") ? rows.get(line.lineID) : lineRow(line);
      const inputs = row.querySelectorAll("input");
      const values = [line.quantity, money(line.unitPrice), Math.round(line.discount * 1000) / 10];
      inputs.forEach((element, index) => {
        if (element !== document.activeElement) element.value = values[index];
        element.disabled = readOnly;
      });
      row.querySelector(".remove-line").disabled = readOnly;
      const changed = !same(line, base.lines.find((l) => l.lineID === line.lineID));
      row.querySelector(".line-total").textContent = changed ? "…" : (totals[line.lineID] || "");
      row.line = line;
      return row;
    });
    if (wanted.length !== tbody.children.length || wanted.some((row, index) => tbody.children[index] !== row)) tbody.replaceChildren(...wanted);
    const total = document.getElementById("quote-total");
    total.textContent = same(content, base) && doc.total ? doc.total : "…";
    const last = (stack) => stack[stack.length - 1];
    undoButton.disabled = readOnly || !history.undo.length;
    redoButton.disabled = readOnly || !history.redo.length;
    undoButton.textContent = history.undo.length ? "Undo " + last(history.undo).name : "Undo";
    redoButton.textContent = history.redo.length ? "Redo " + last(history.redo).name : "Redo";
    document.querySelectorAll("#add-product, #add-line").forEach((element) => { element.disabled = readOnly; });
    // Only the holder converts: a page that became read-only (taken over) loses the button too.
    const convert = document.getElementById("convert");
    if (convert) convert.hidden = readOnly;
  }

  // Applies a step's changes, forwards (after) or backwards (before).
  function apply(changes, forwards) {
    for (const change of forwards ? changes : [...changes].reverse()) {
      const value = forwards ? change.after : change.before;
      if (change.field === "line") {
        content.lines = content.lines.filter((l) => l.lineID !== change.lineID);
        if (value != null) {
          const { line, position } = JSON.parse(value);
          content.lines.splice(Math.min(position, content.lines.length), 0, line);
        }
        continue;
      }
      const line = change.lineID ? content.lines.find((l) => l.lineID === change.lineID) : content;
      if (!line) continue;
      if (change.field === "quantity" || change.field === "unitPrice") line[change.field] = parseInt(value, 10) || 0;
      else if (change.field === "discount") line.discount = parseFloat(value) || 0;
      else line[change.field] = value;
    }
  }

  // guide: begin undo-js
  function record(name, changes) {
    if (readOnly) return;
    apply(changes, true);
    history.undo.push({ name, changes });
    if (history.undo.length > 100) history.undo.shift();
    history.redo = [];
    changed();
  }
  // guide: end undo-js

  function step(from, to, forwards) {
    if (readOnly || !from.length) return;
    const taken = from.pop();
    apply(taken.changes, forwards);
    to.push(taken);
    changed();
  }

  function changed() {
    dirty = true;
    localStorage.setItem(stored, JSON.stringify({ revision: doc.revision, base, content, history }));
    say("Unsaved changes");
    render();
    clearTimeout(timer);
    timer = setTimeout(save, autosaveMs);
  }

  // The store's answer to a save, with the edits made since it was sent (from `sent` to `mine`) put back over it.
  function mergeEdits(sent, mine, server) {
    const result = copy(server);
    for (const field of ["customerCode", "validUntil", "notes"]) if (!same(mine[field], sent[field])) result[field] = mine[field];
    const before = new Map(sent.lines.map((line) => [line.lineID, line]));
    const kept = new Set(mine.lines.map((line) => line.lineID));
    result.lines = result.lines.filter((line) => !before.has(line.lineID) || kept.has(line.lineID));
    for (const line of mine.lines) {
      const index = result.lines.findIndex((l) => l.lineID === line.lineID);
      const was = before.get(line.lineID);
      if (!was) { if (index < 0) result.lines.push(copy(line)); continue; }
      if (index < 0) continue;
      for (const key of ["quantity", "unitPrice", "discount"]) if (line[key] !== was[key]) result.lines[index][key] = line[key];
    }
    return result;
  }

  function takenOver(detail) {
    readOnly = true;
    storeState = [...new Set([...storeState, "editingDisabled"])];
    clearTimeout(timer);
    const notice = document.getElementById("quote-taken");
    notice.textContent = detail;
    notice.hidden = false;
    say(dirty ? "Not saved: read-only now" : "Saved", dirty);
    render();
  }

  async function save(keepalive) {
    if (!dirty || readOnly || (saving && !keepalive)) return;
    saving = true;
    const sent = copy(content);
    say("Saving…");
    try {
      const saved = await api("/quotes/" + encodeURIComponent(number) + "/draft", {
        method: "POST", keepalive: !!keepalive, body: JSON.stringify({ base, content: sent, history }),
      });
      Object.assign(doc, saved);
      storeState = saved.state || [];
      totals = saved.lineTotals;
      base = copy(saved.content);
      // Edits made while the save was on its way go over what the store answered, field by field.
      content = same(content, sent) ? copy(saved.content) : mergeEdits(sent, content, saved.content);
      dirty = !same(content, saved.content);
      failures = 0;
      if (!dirty) localStorage.removeItem(stored);
      say(dirty ? "Unsaved changes" : saved.madeVersion ? "Saved, and a version kept" : "Saved");
      render();
      if (dirty) { clearTimeout(timer); timer = setTimeout(save, autosaveMs); }
    } catch (error) {
      if (error.status === 409) return takenOver(error.message);
      failures += 1;
      const wait = Math.min(60, 2 ** failures);
      say("Not saved: " + error.message + (error.status === 422 ? "" : " Trying again in " + wait + " s."), true);
      if (error.status !== 422) { clearTimeout(timer); timer = setTimeout(save, wait * 1000); }
    } finally {
      saving = false;
      showState(failures > 0);
    }
  }

  async function ping() {
    if (readOnly) return;
    try {
      await api("/quotes/" + encodeURIComponent(number) + "/ping", { method: "POST", body: "{}" });
    } catch (error) {
      if (error.status === 409) takenOver(error.message);
    }
  }

  document.getElementById("quote-validUntil").addEventListener("change", (event) =>
    record("Change validity", [{ field: "validUntil", lineID: null, before: content.validUntil, after: event.target.value }]));
  document.getElementById("quote-notes").addEventListener("change", (event) =>
    record("Change notes", [{ field: "notes", lineID: null, before: content.notes, after: event.target.value }]));
  undoButton.addEventListener("click", () => step(history.undo, history.redo, false));
  redoButton.addEventListener("click", () => step(history.redo, history.undo, true));
  document.addEventListener("keydown", (event) => {
    if (!(event.ctrlKey || event.metaKey) || event.key.toLowerCase() !== "z" || ["INPUT", "TEXTAREA"].includes(event.target.tagName)) return;
    event.preventDefault();
    if (event.shiftKey) step(history.redo, history.undo, true); else step(history.undo, history.redo, false);
  });

  const productInput = document.getElementById("add-product");
  productInput.addEventListener("input", debounce(async () => {
    const q = productInput.value.trim();
    if (!q || products.has(q)) return;
    const found = await api("/api/v1/products/search?limit=15&q=" + encodeURIComponent(q));
    document.getElementById("product-options").replaceChildren(...found.items.filter((p) => !p.discontinued).map((p) => {
      const text = p.name + " (#" + p.id + ")";
      products.set(text, p);
      return option(text, p.unitPrice);
    }));
  }, 200));
  document.getElementById("add-line").addEventListener("click", () => {
    const product = products.get(productInput.value.trim());
    if (!product) { say("Pick a product from the list first.", true); return; }
    const line = { lineID: crypto.randomUUID(), productID: product.id, productName: product.name, quantity: 1, unitPrice: Math.round(parseFloat(product.unitPrice) * 100), discount: 0 };
    record("Add " + product.name, [{ field: "line", lineID: line.lineID, before: null, after: JSON.stringify({ line, position: content.lines.length }) }]);
    productInput.value = "";
  });

  // A draft this browser kept, from a visit whose last save never arrived, comes back as unsaved changes (saved
  // three-way from where it started). While someone else edits, it stays kept for later.
  const kept = JSON.parse(localStorage.getItem(stored) || "null");
  showState(false);
  if (kept && !same(kept.content, content) && !readOnly) {
    base = kept.base || base;
    content = kept.content;
    history = kept.history;
    changed();
  } else {
    if (!kept || same(kept.content, content)) localStorage.removeItem(stored);
    render();
  }
  // Saving a version or converting starts from what the page shows: unsaved changes are saved first.
  document.querySelectorAll("#save-version, #convert").forEach((form) => form.addEventListener("submit", async (event) => {
    if (!dirty) return;
    event.preventDefault();
    clearTimeout(timer);
    await save();
    if (!dirty) form.submit();
  }));
  setInterval(ping, 20000);
  // Closing the page saves what is unsaved, and lets the quote go for the next person.
  window.addEventListener("pagehide", () => {
    save(true);
    if (!readOnly) fetch("/quotes/" + encodeURIComponent(number) + "/close", { method: "POST", keepalive: true, credentials: "same-origin", headers: { "X-CSRF-Token": csrf() } });
  });
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") save(true); });
}

// Importing a package: check it first (a dry run), then import it, showing what it adds and updates.
function importForm(form) {
  let bytes = null;
  const plan = document.getElementById("import-plan");
  const failed = document.getElementById("import-error");
  const done = document.getElementById("import-done");
  async function send(dryRun) {
    failed.hidden = done.hidden = true;
    const response = await fetch("/documents/import?dryRun=" + (dryRun ? "1" : "0"), {
      method: "POST", body: bytes, credentials: "same-origin",
      headers: { "Accept": "application/json", "Content-Type": "application/zip", "X-CSRF-Token": csrf() },
    });
    const body = await response.json();
    if (!response.ok) {
      plan.hidden = true;
      failed.textContent = body.detail || response.statusText;
      failed.hidden = false;
      return;
    }
    document.getElementById("import-title").textContent = body.title;
    document.getElementById("import-lines").replaceChildren(...body.lines.map((line) => {
      const item = document.createElement("li");
      item.textContent = line.trim();
      return item;
    }));
    plan.hidden = false;
    document.getElementById("import-now").hidden = body.imported;
    if (body.imported) { done.textContent = "Imported."; done.hidden = false; }
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const file = document.getElementById("package").files[0];
    if (!file) return;
    bytes = await file.arrayBuffer();
    send(true);
  });
  document.getElementById("import-now").addEventListener("click", () => send(false));
}

// A slider shows its value beside it as it moves (the settings page's sliders).
document.addEventListener("input", (event) => {
  if (event.target.type !== "range") return;
  const shown = document.getElementById(event.target.id + "-shown");
  if (shown) shown.value = event.target.value;
});

document.addEventListener("DOMContentLoaded", () => {
  listenForChanges();
  document.querySelectorAll("form[data-live-search]").forEach(liveSearch);
  document.querySelectorAll("form[data-confirm]").forEach((form) =>
    form.addEventListener("submit", (event) => { if (!confirm(form.dataset.confirm)) event.preventDefault(); }));
  const order = document.getElementById("new-order");
  if (order) phoneOrder(order);
  const quote = document.getElementById("quote-editor");
  if (quote) quoteEditor(quote);
  const importing = document.getElementById("import-form");
  if (importing) importForm(importing);
});
