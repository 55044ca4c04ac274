// Northwind's only script: live updates, search as you type, and the phone-order form. No libraries.
"use strict";

const csrf = () => document.body.dataset.csrf || "";
const debounce = (fn, ms) => { let t; return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); }; };

// Replace every live region of this page with the same region from a fresh copy of `url`.
// A region holding the focused element is left alone, so nobody loses what they are typing.
async function refreshFrom(url, ids) {
  const response = await fetch(url, { headers: { "Accept": "text/html" }, credentials: "same-origin" });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  document.querySelectorAll("[data-live][id]").forEach((region) => {
    if (ids && !ids.includes(region.id)) return;
    if (region.contains(document.activeElement) && document.activeElement !== document.body) return;
    const replacement = fresh.getElementById(region.id);
    if (replacement) region.innerHTML = replacement.innerHTML;
  });
  document.dispatchEvent(new CustomEvent("northwind:refreshed"));
}

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
  if (!response.ok) throw new Error(body && body.detail ? body.detail : response.statusText);
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
});
