import { api, el } from "./app.js";

// The targeting step's product field as a combobox (WAI-ARIA 1.2 "list autocomplete"): what the
// marketer types searches the synced catalog by product id and name (GET
// /platform-ads/data-source/products), the matches are offered in a listbox under the field, and the
// arrow keys, Enter and Escape work as in any combobox. Choosing a product puts its id in the field
// (what the preview reads) and its name under it. An id typed in full needs no choice.

const SEARCH_DELAY_MS = 200;
const SHOWN = 20;

/** Make ``input`` a combobox over ``listbox``; ``chosen`` shows the chosen product's name, ``status``
 * how many products match (read out politely); ``onChoose`` runs after a product is chosen. */
export function productPicker({ input, listbox, chosen, status, onChoose }) {
  let timer = null;
  let serial = 0;
  let options = [];
  let active = -1;
  let searched = null; // the text of the search the options answer
  let exactShown = false; // that text is a product's id: nothing to choose

  const open = (yes) => {
    listbox.hidden = !yes;
    input.setAttribute("aria-expanded", String(yes));
    if (!yes) setActive(-1);
  };

  function setActive(index) {
    active = index;
    options.forEach((option, at) => option.setAttribute("aria-selected", String(at === index)));
    if (index >= 0) {
      input.setAttribute("aria-activedescendant", options[index].id);
      options[index].scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }

  function choose(product) {
    input.value = product.productId;
    showChosen(product);
    open(false);
    onChoose?.();
  }

  function showChosen(product) {
    chosen.textContent = product
      ? `${product.name ?? "(no name)"}${product.category ? ` · ${product.category}` : ""}`
      : "";
  }

  async function search() {
    const mine = ++serial;
    const text = input.value.trim();
    const answer = await api(
      `/platform-ads/data-source/products?search=${encodeURIComponent(text)}&limit=${SHOWN}`,
    );
    if (mine !== serial) return; // a newer search is on its way
    searched = text;
    const exact = answer.products.find((p) => p.productId === text);
    exactShown = Boolean(exact);
    showChosen(exact ?? null);
    options = answer.products.map((product, at) =>
      el("li", { id: `product-option-${at}`, role: "option", "aria-selected": "false", onclick: () => choose(product) },
        el("span", { class: "option-name" }, product.name ?? "(no name)"),
        " ",
        el("span", { class: "option-id" }, product.productId),
      ));
    listbox.replaceChildren(...options);
    active = -1;
    status.textContent = answer.catalogSize === 0
      ? "No catalog to search: sync your products file, then search by name or id."
      : answer.matches === 0
        ? `No product's name or id contains "${text}".`
        : answer.matches > answer.products.length
          ? `${answer.matches.toLocaleString()} products match; the first ${answer.products.length} are listed. Type more to narrow them.`
          : `${answer.matches.toLocaleString()} ${answer.matches === 1 ? "product matches" : "products match"}.`;
    open(options.length > 0 && document.activeElement === input && !exact);
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(() => search().catch(() => open(false)), SEARCH_DELAY_MS);
  }

  input.addEventListener("input", schedule);
  // Back in the field: the same text's options again, without asking (and without losing the active one).
  input.addEventListener("focus", () => {
    if (input.value.trim() === searched) open(options.length > 0 && !exactShown);
    else schedule();
  });
  input.addEventListener("blur", () => setTimeout(() => open(false), 150)); // a click on an option lands first
  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (!options.length) return;
      if (listbox.hidden) open(true);
      const step = event.key === "ArrowDown" ? 1 : -1;
      setActive(active < 0 && step < 0 ? options.length - 1 : (active + step + options.length) % options.length);
    } else if (event.key === "Enter" && !listbox.hidden && active >= 0) {
      event.preventDefault();
      options[active].click();
    } else if (event.key === "Escape" && !listbox.hidden) {
      event.preventDefault();
      open(false);
    }
  });
  listbox.addEventListener("mousedown", (event) => event.preventDefault()); // keep the focus in the field

  return {
    refresh: () => {
      searched = null; // ask again: the catalog may be another version's
      schedule();
    },
  };
}
