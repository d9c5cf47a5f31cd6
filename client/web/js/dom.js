// A tiny element builder: text always goes in as text (never parsed as HTML).

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function replace(container, ...children) {
  container.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
}

const adopted = new Set();

/** Adds a lazily loaded module's CSS to the document, once, as a constructed style sheet. */
export function adoptStyle(css) {
  if (adopted.has(css)) return;
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  adopted.add(css);
}
