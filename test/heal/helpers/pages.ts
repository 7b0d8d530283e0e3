/**
 * The checkout page the healing tests learn on, and the mutations they run against. Every clickable element
 * records itself in `body[data-clicked]`, so a test can tell which element a heal really clicked.
 */
export const CHECKOUT = `<!doctype html>
<html>
<head>
  <title>Checkout</title>
  <style>
    body { font-family: sans-serif; margin: 20px; }
    .card { border: 1px solid #ccc; padding: 12px; margin: 12px 0; width: 420px; }
    .actions { margin-top: 12px; }
    label, input { display: block; margin: 4px 0; }
  </style>
</head>
<body>
  <header><nav><a href="#home">Home</a> <a href="#orders">Orders</a> <a href="#help">Help</a></nav></header>
  <main>
    <h1>Checkout</h1>
    <form id="checkout" class="card" onsubmit="return false">
      <label for="email">Email</label>
      <input id="email" name="email" type="email" placeholder="you@example.com">
      <label for="card">Card number</label>
      <input id="card" name="card" type="text" autocomplete="cc-number">
      <div class="actions">
        <button type="button" id="cancel" class="btn btn-secondary" onclick="mark('cancel')">Cancel</button>
        <button type="submit" id="pay" name="pay" class="btn btn-primary" data-testid="pay"
          onclick="mark('pay')">Place order</button>
      </div>
    </form>
    <form id="newsletter" class="card" onsubmit="return false">
      <label for="news-email">Newsletter</label>
      <input id="news-email" name="news-email" type="email" placeholder="you@example.com">
      <div class="actions">
        <button type="submit" id="subscribe" name="subscribe" class="btn btn-primary"
          onclick="mark('subscribe')">Subscribe</button>
      </div>
    </form>
  </main>
  <footer><p>© Shop</p></footer>
  <script>function mark(what) { document.body.dataset.clicked = what }</script>
</body>
</html>`

const PAY = `<button type="submit" id="pay" name="pay" class="btn btn-primary" data-testid="pay"
          onclick="mark('pay')">Place order</button>`
const CANCEL = '<button type="button" id="cancel" class="btn btn-secondary" onclick="mark(\'cancel\')">Cancel</button>'

function replace(html: string, from: string, to: string): string {
  if (!html.includes(from)) throw new Error(`mutation does not apply: ${from}`)
  return html.replace(from, to)
}

/** The mutations of the test matrix, each applied to the learned page. */
export const MUTATIONS = {
  idRenamed: (h: string) => replace(h, 'id="pay"', 'id="submit-order"'),
  classesChanged: (h: string) =>
    replace(h, 'class="btn btn-primary" data-testid', 'class="button button--cta" data-testid'),
  textTweaked: (h: string) => replace(h, '>Place order</button>', '>Place your order</button>'),
  wrapperAdded: (h: string) => replace(h, PAY, `<span class="tooltip" title="Pays now">${PAY}</span>`),
  moved: (h: string) =>
    replace(replace(h, PAY, ''), '<label for="email">Email</label>', `${PAY}\n      <label for="email">Email</label>`),
  siblingsReordered: (h: string) => replace(h, `${CANCEL}\n        ${PAY}`, `${PAY}\n        ${CANCEL}`),
  testIdRemoved: (h: string) => replace(h, ' data-testid="pay"', ''),
  labelTweaked: (h: string) =>
    replace(h, '<label for="email">Email</label>', '<label for="email">E-mail address</label>'),
  /**
   * The newsletter button becomes a look-alike of the pay button (same text, classes and type), and the pay
   * button loses its id and test id: only its form, name and neighbours tell it apart.
   */
  lookAlikeElsewhere: (h: string) =>
    replace(
      replace(h, 'id="pay" name="pay" class="btn btn-primary" data-testid="pay"', 'name="pay" class="btn btn-primary"'),
      '>Subscribe</button>',
      '>Place order</button>',
    ),
  /** `lookAlikeElsewhere` without `name="pay"` either: nothing of the pay button's own identity is left. */
  lookAlikeNoIdentity: (h: string) =>
    replace(
      replace(h, 'id="pay" name="pay" class="btn btn-primary" data-testid="pay"', 'class="btn btn-primary"'),
      '>Subscribe</button>',
      '>Place order</button>',
    ),
  /** A second, identical checkout form: nothing but position tells the two pay buttons apart. */
  identicalTwin: (h: string) => {
    const bare = replace(replace(h, ' data-testid="pay"', ''), ' id="pay"', '').replace(' id="checkout"', '')
    const start = bare.indexOf('<form class="card"')
    const end = bare.indexOf('</form>', start) + '</form>'.length
    const twin = bare
      .slice(start, end)
      .replace("mark('pay')", "mark('twin')")
      .replace(/ id="[^"]*"/g, '')
    return bare.slice(0, start) + twin + '\n    ' + bare.slice(start)
  },
  removed: (h: string) => replace(h, PAY, ''),
  /** The pay button arrives 1.5 s after load, later than the probe waits. */
  late: (h: string) => {
    const add = `document.querySelector('.actions').insertAdjacentHTML('beforeend', ${JSON.stringify(PAY)})`
    return replace(replace(h, PAY, ''), '</body>', `<script>setTimeout(() => ${add}, 1500)</script>\n</body>`)
  },
  /** A transparent layer over the page: the button is there, found and visible, but cannot be clicked. */
  covered: (h: string) =>
    replace(h, '<footer>', '<div style="position: fixed; inset: 0; background: transparent"></div>\n  <footer>'),
  hidden: (h: string) => replace(h, 'data-testid="pay"', 'data-testid="pay" hidden'),
  hiddenAndRenamed: (h: string) =>
    replace(
      h,
      'id="pay" name="pay" class="btn btn-primary" data-testid="pay"',
      'id="pay-v2" name="pay" class="btn btn-primary" hidden',
    ),
} satisfies Record<string, (html: string) => string>
