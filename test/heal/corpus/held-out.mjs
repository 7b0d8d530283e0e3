// Held-out heal corpus (issue 28): page pairs written after the scorer's weights and rules were set, for the
// patterns the first corpus lacked: rows whose first plain cell is a value other rows share, locale switches,
// re-sorted tables with more than 12 look-alike rows, a section moved with a look-alike left behind, text turned
// into an icon with an accessible name, and many simultaneous changes (some of which must be refused). Each pair
// is a public page structure written for this file. Same shape as cases.mjs; run by test/heal/held-out.test.ts.

/** A page in a language; `lang` is what an i18n framework sets on `<html>`. */
const doc = (title, body, lang = 'en') => `<!doctype html><html lang="${lang}"><head><title>${title}</title><style>
body { font-family: sans-serif; margin: 16px; } button, a, input { margin: 4px; } td, th { padding: 4px 8px; }
.card { border: 1px solid #ccc; padding: 8px; margin: 8px; width: 280px; display: inline-block; vertical-align: top; }
</style></head><body>${body}</body></html>`

/** A cart as a list: the product name is a link, so the first plain text of an item is its price. */
const cartList = (items) =>
  `<main><h1>Cart</h1><ul class="cart">` +
  items
    .map(
      ([name, price], i) =>
        `<li class="line"><a href="/p/${name.toLowerCase().replace(/ /g, '-')}">${name}</a>` +
        `<span class="price">${price}</span><button class="remove" id="remove-${i + 1}">Remove</button></li>`,
    )
    .join('') +
  `</ul></main>`

/** An order table: name in a link, then price and stock, then the action; `id` numbers the lines or drops. */
const orderTable = (rows, { ids = true, actionFirst = false } = {}) =>
  `<main><h1>Basket</h1><table><thead><tr>${actionFirst ? '<th></th>' : ''}<th>Product</th><th>Price</th>` +
  `<th>Stock</th>${actionFirst ? '' : '<th></th>'}</tr></thead><tbody>` +
  rows
    .map(([name, price, stock], i) => {
      const action = `<td><button class="btn-remove"${ids ? ` id="line-${i + 1}"` : ''}>Remove</button></td>`
      const cells = `<td><a href="/p/${name.toLowerCase().replace(/ /g, '-')}">${name}</a></td><td>${price}</td><td>${stock}</td>`
      return `<tr>${actionFirst ? action + cells : cells + action}</tr>`
    })
    .join('') +
  `</tbody></table></main>`

const PRODUCTS = [
  ['Oak desk', '$240.00', 'In stock'],
  ['Pine shelf', '$80.00', 'In stock'],
  ['Walnut chair', '$120.00', 'Low'],
  ['Birch stool', '$80.00', 'In stock'],
  ['Maple bench', '$120.00', 'In stock'],
  ['Ash table', '$240.00', 'Low'],
]

/** Orders awaiting approval: 24 look-alike rows, the order number in the first cell. */
const ORDERS = Array.from({ length: 24 }, (_, i) => ({
  no: `ORD-${1001 + i}`,
  customer: ['Ada', 'Brook', 'Cyd', 'Dee', 'Eli', 'Fay'][i % 6] + ' ' + ['Lane', 'Moss', 'Reed', 'Park'][i % 4],
  total: `${(17 * (i + 3)) % 90}.00`,
}))

const approvals = (orders, { testIds = true, totalFirst = false } = {}) =>
  `<main><h1>Approvals</h1><table class="grid"><thead><tr>` +
  (totalFirst ? '<th>Total</th><th>Order</th><th>Customer</th>' : '<th>Order</th><th>Customer</th><th>Total</th>') +
  `<th></th></tr></thead><tbody>` +
  orders
    .map((o) => {
      const cells = totalFirst
        ? `<td>${o.total}</td><th scope="row">${o.no}</th><td>${o.customer}</td>`
        : `<th scope="row">${o.no}</th><td>${o.customer}</td><td>${o.total}</td>`
      const tid = testIds ? ` data-testid="approve-${o.no}"` : ''
      return `<tr>${cells}<td><button class="approve"${tid}>Approve</button><button class="hold">Hold</button></td></tr>`
    })
    .join('') +
  `</tbody></table></main>`

const settings = (t, lang) =>
  doc(
    t.title,
    `<header><nav aria-label="${t.nav}"><a href="#home" id="nav-home">${t.home}</a><a href="#orders" id="nav-orders">${t.orders}</a>` +
      `<a href="#help" id="nav-help">${t.help}</a></nav></header>` +
      `<main><h1>${t.title}</h1><form id="settings" class="panel"><label for="display">${t.display}</label>` +
      `<input id="display" name="display"><div class="actions"><button type="button" id="cancel" class="btn">${t.cancel}</button>` +
      `<button type="submit" id="save" class="btn primary">${t.save}</button></div></form>` +
      `<div role="tablist"><button role="tab" id="tab-1" aria-selected="true">${t.profile}</button>` +
      `<button role="tab" id="tab-2" aria-selected="false">${t.billing}</button>` +
      `<button role="tab" id="tab-3" aria-selected="false">${t.security}</button></div></main>`,
    lang,
  )

const EN = {
  title: 'Settings',
  nav: 'Main',
  home: 'Home',
  orders: 'Orders',
  help: 'Help',
  display: 'Display name',
  cancel: 'Cancel',
  save: 'Save',
  profile: 'Profile',
  billing: 'Billing',
  security: 'Security',
}
const DE = {
  title: 'Einstellungen',
  nav: 'Hauptmenü',
  home: 'Startseite',
  orders: 'Bestellungen',
  help: 'Hilfe',
  display: 'Anzeigename',
  cancel: 'Abbrechen',
  save: 'Speichern',
  profile: 'Profil',
  billing: 'Abrechnung',
  security: 'Sicherheit',
}
const FR = {
  title: 'Paramètres',
  nav: 'Principal',
  home: 'Accueil',
  orders: 'Commandes',
  help: 'Aide',
  display: 'Nom affiché',
  cancel: 'Annuler',
  save: 'Enregistrer',
  profile: 'Profil',
  billing: 'Facturation',
  security: 'Sécurité',
}
const JA = {
  title: '設定',
  nav: 'メイン',
  home: 'ホーム',
  orders: '注文',
  help: 'ヘルプ',
  display: '表示名',
  cancel: 'キャンセル',
  save: '保存',
  profile: 'プロフィール',
  billing: '請求',
  security: 'セキュリティ',
}

const newsletter = (id) =>
  `<form class="signup"><label>Email <input type="email" name="email"></label>` +
  `<button type="submit" class="btn"${id}>Subscribe</button></form>`

const files = (names, button) =>
  `<main><h1>Files</h1>` +
  names
    .map(
      (n) =>
        `<div class="card file"><h3>${n}</h3><div class="toolbar" role="toolbar">${button('Rename', n)}${button('Download', n)}${button('Delete', n)}</div></div>`,
    )
    .join('') +
  `</main>`

const textButton = (label) => `<button type="button" class="tool tool-${label.toLowerCase()}">${label}</button>`
const iconButton = (attr) => (label) =>
  `<button type="button" class="Tb_x${label.length}q" ${attr}="${label}"><svg width="16" height="16"><use href="#i-${label.toLowerCase()}"></use></svg></button>`

/** @type {import('./cases.mjs').HealCase[]} */
export const HELD_OUT = [
  // ── 1. rows whose first plain value is shared ────────────────────────────────────────────────────────────
  {
    id: 'ho-cart-same-price-row-deleted',
    category: 'duplicate cell values',
    note: 'a line above was deleted and the positional ids shifted: #remove-3 is now another product at the same price',
    before: doc(
      'Cart',
      cartList([
        ['Red mug', '$12.00'],
        ['Blue mug', '$9.00'],
        ['Green mug', '$12.00'],
        ['Black mug', '$12.00'],
        ['White mug', '$15.00'],
      ]),
    ),
    after: doc(
      'Cart',
      cartList([
        ['Blue mug', '$9.00'],
        ['Green mug', '$12.00'],
        ['Black mug', '$12.00'],
        ['White mug', '$15.00'],
      ]),
    ),
    locator: [['locator', '#remove-3']],
    expect: '#remove-2',
  },
  {
    id: 'ho-table-name-in-link-ids-dropped',
    category: 'duplicate cell values',
    note: 'line ids dropped and rows sorted by name; three rows share each price',
    before: doc('Basket', orderTable(PRODUCTS)),
    after: doc(
      'Basket',
      orderTable(
        [...PRODUCTS].sort((a, b) => a[0].localeCompare(b[0])),
        { ids: false },
      ),
    ),
    locator: [['locator', '#line-4']],
    // Birch stool sorts second after Ash table.
    expect: 'tbody tr:nth-child(2) button',
  },
  {
    id: 'ho-table-learned-row-now-twice',
    category: 'duplicate cell values',
    note: 'the learned product now has two lines (two sizes) and the ids are gone: its row key is not unique, refuse',
    before: doc('Basket', orderTable(PRODUCTS)),
    after: doc(
      'Basket',
      orderTable(
        [
          ...PRODUCTS.slice(0, 3),
          ['Birch stool', '$80.00', 'In stock'],
          ['Birch stool', '$95.00', 'Low'],
          ...PRODUCTS.slice(4),
        ],
        { ids: false },
      ),
    ),
    locator: [['locator', '#line-4']],
    expect: 'refuse',
  },
  // ── 2. locale switches ───────────────────────────────────────────────────────────────────────────────────
  {
    id: 'ho-locale-de-save',
    category: 'locale switch',
    note: 'the page is now German: Save is Speichern; id, classes and path unchanged',
    before: settings(EN, 'en'),
    after: settings(DE, 'de'),
    locator: [['getByRole', 'button', { name: 'Save', exact: true }]],
    expect: '#save',
  },
  {
    id: 'ho-locale-fr-nav-link',
    category: 'locale switch',
    note: 'French: the Orders link reads Commandes, same href',
    before: settings(EN, 'en'),
    after: settings(FR, 'fr'),
    locator: [['getByRole', 'link', { name: 'Orders', exact: true }]],
    expect: '#nav-orders',
  },
  {
    id: 'ho-locale-ja-tab',
    category: 'locale switch',
    note: 'Japanese: the Billing tab reads 請求, same id',
    before: settings(EN, 'en'),
    after: settings(JA, 'ja'),
    locator: [['getByRole', 'tab', { name: 'Billing', exact: true }]],
    expect: '#tab-2',
  },
  {
    id: 'ho-locale-de-text-locator',
    category: 'locale switch',
    note: 'German, the locator by text: Cancel is Abbrechen',
    before: settings(EN, 'en'),
    after: settings(DE, 'de'),
    locator: [['getByText', 'Cancel', { exact: true }]],
    expect: '#cancel',
  },
  {
    id: 'ho-same-locale-delete-where-save-was',
    category: 'locale switch',
    note: 'no translation: Save is gone and a Delete button took its id, classes and place: a real change, refuse',
    before: settings(EN, 'en'),
    after: settings({ ...EN, save: 'Delete' }, 'en'),
    locator: [['getByRole', 'button', { name: 'Save', exact: true }]],
    expect: 'refuse',
  },
  // ── 3. re-sorted tables, more than 12 look-alike rows ────────────────────────────────────────────────────
  {
    id: 'ho-resorted-columns-reordered',
    category: 're-sorted table',
    note: 'test ids dropped, the Total column moved first and the rows re-sorted newest first',
    before: doc('Approvals', approvals(ORDERS)),
    after: doc('Approvals', approvals([...ORDERS].reverse(), { testIds: false, totalFirst: true })),
    locator: [['getByTestId', 'approve-ORD-1003']],
    // ORD-1003 is the third of 24; reversed, the 22nd.
    expect: 'tbody tr:nth-child(22) .approve',
  },
  {
    id: 'ho-resorted-positional-locator',
    category: 're-sorted table',
    note: 'a positional locator (third row) after a re-sort by customer: it finds another order silently',
    before: doc('Approvals', approvals(ORDERS)),
    after: doc(
      'Approvals',
      approvals(
        [...ORDERS].sort((a, b) => a.customer.localeCompare(b.customer) || a.no.localeCompare(b.no)),
        { testIds: false },
      ),
    ),
    locator: [
      ['locator', 'tbody tr'],
      ['nth', 2],
      ['getByRole', 'button', { name: 'Approve' }],
    ],
    expect: `tbody tr:nth-child(${
      [...ORDERS]
        .sort((a, b) => a.customer.localeCompare(b.customer) || a.no.localeCompare(b.no))
        .findIndex((o) => o.no === 'ORD-1003') + 1
    }) .approve`,
  },
  // ── 4. moved, with a look-alike left behind ──────────────────────────────────────────────────────────────
  {
    id: 'ho-moved-to-footer-lookalike-left',
    category: 'moved with look-alike',
    note: 'the newsletter form moved from the sidebar to the footer (test id dropped); a podcast Subscribe stays in the sidebar',
    before: doc(
      'Blog',
      `<main><h1>Posts</h1><p>Hello.</p></main><aside><h2>Stay in touch</h2>${newsletter(' id="newsletter-subscribe" data-testid="subscribe"')}</aside>` +
        '<footer><p>© Blog</p></footer>',
    ),
    after: doc(
      'Blog',
      `<main><h1>Posts</h1><p>Hello.</p></main><aside><h2>Stay in touch</h2>${newsletter(' id="podcast-subscribe"')}</aside>` +
        `<footer><h2>Newsletter</h2>${newsletter(' id="newsletter-subscribe"')}<p>© Blog</p></footer>`,
    ),
    locator: [['getByTestId', 'subscribe']],
    expect: 'footer button',
  },
  {
    id: 'ho-moved-lookalike-name-kept',
    category: 'moved with look-alike',
    note: 'moved to the footer and lost its id and test id, but kept name=newsletter; the sidebar keeps a podcast Subscribe',
    before: doc(
      'Blog',
      `<main><h1>Posts</h1></main><aside><h2>Stay in touch</h2>${newsletter(' name="newsletter" id="newsletter-subscribe" data-testid="subscribe"')}</aside>` +
        '<footer><p>© Blog</p></footer>',
    ),
    after: doc(
      'Blog',
      `<main><h1>Posts</h1></main><aside><h2>Stay in touch</h2>${newsletter(' name="podcast"')}</aside>` +
        `<footer><h2>Newsletter</h2>${newsletter(' name="newsletter"')}<p>© Blog</p></footer>`,
    ),
    locator: [['getByTestId', 'subscribe']],
    expect: 'footer button',
  },
  {
    id: 'ho-moved-lookalike-no-identity',
    category: 'moved with look-alike',
    note: 'moved to the footer and kept nothing of its own; the sidebar now holds a podcast form just like it: refuse',
    before: doc(
      'Blog',
      `<main><h1>Posts</h1></main><aside><h2>Stay in touch</h2>${newsletter(' id="newsletter-subscribe" data-testid="subscribe"')}</aside>` +
        '<footer><p>© Blog</p></footer>',
    ),
    after: doc(
      'Blog',
      `<main><h1>Posts</h1></main><aside><h2>Podcast</h2>${newsletter('')}</aside>` +
        `<footer><h2>Newsletter</h2>${newsletter('')}<p>© Blog</p></footer>`,
    ),
    locator: [['getByTestId', 'subscribe']],
    expect: 'refuse',
  },
  // ── 5. text replaced by an icon with an accessible name ──────────────────────────────────────────────────
  {
    id: 'ho-icon-aria-label-twin-cards',
    category: 'icon button with accessible name',
    note: 'Delete became a trash icon with aria-label="Delete", classes hashed; a twin card has the same toolbar',
    before: doc('Files', files(['report.pdf', 'invoice.pdf'], textButton)),
    after: doc('Files', files(['report.pdf', 'invoice.pdf'], iconButton('aria-label'))),
    locator: [['locator', '.card:first-of-type .tool-delete']],
    expect: '.card:nth-child(2) [aria-label=Delete]',
  },
  {
    id: 'ho-icon-title-by-text',
    category: 'icon button with accessible name',
    note: 'Download became an icon with title="Download"; the test located it by its text',
    before: doc('Files', files(['notes.txt'], textButton)),
    after: doc('Files', files(['notes.txt'], iconButton('title'))),
    locator: [['getByText', 'Download', { exact: true }]],
    expect: '[title=Download]',
  },
  // ── 6. everything changed at once ────────────────────────────────────────────────────────────────────────
  {
    id: 'ho-everything-changed',
    category: 'many changes',
    note: 'label synonym, container, classes, id, href and role all changed: refuse, never a wrong pick',
    before: doc(
      'Account',
      '<header><nav><a href="/invoices" id="invoices-link" class="nav-link">View invoices</a><a href="/team" id="team-link" class="nav-link">View team</a></nav></header><main><h1>Account</h1></main>',
    ),
    after: doc(
      'Account',
      '<header><div class="Menu_root__9f"><button class="Menu_item__x1" role="menuitem" id="mi-billing">Billing history</button><button class="Menu_item__x1" role="menuitem" id="mi-people">People</button></div></header><main><h1>Account</h1></main>',
    ),
    locator: [['locator', '#invoices-link']],
    expect: 'refuse',
  },
  {
    id: 'ho-everything-changed-lookalike',
    category: 'many changes',
    note: 'the export button became a menu link elsewhere; a look-alike Export button for another report stays',
    before: doc(
      'Reports',
      '<main><h1>Reports</h1><section aria-label="Sales"><h2>Sales</h2><button id="export-sales" class="btn export">Export</button></section><section aria-label="Costs"><h2>Costs</h2><button id="export-costs" class="btn export">Export</button></section></main>',
    ),
    after: doc(
      'Reports',
      '<main><h1>Reports</h1><section aria-label="Revenue"><h2>Revenue</h2><a href="/revenue.csv" class="lnk" download>Download CSV</a></section><section aria-label="Costs"><h2>Costs</h2><button id="export-costs" class="btn export">Export</button></section></main>',
    ),
    locator: [['locator', '#export-sales']],
    expect: 'refuse',
  },
]

const team = (people) =>
  `<main><h1>Team</h1><ul class="members">` +
  people
    .map(
      ([role, name], i) =>
        `<li class="member"><span class="role">${role}</span> <strong>${name}</strong> <button class="kick" id="kick-${i + 1}">Remove</button></li>`,
    )
    .join('') +
  `</ul></main>`

const variants = (rows, ids) =>
  `<main><h1>Variants</h1><table><tbody>` +
  rows
    .map(
      ([sku, color, size], i) =>
        `<tr data-sku="${sku}"><td>${color}</td><td>${size}</td><td><button class="restock"${ids ? ` id="restock-${i + 1}"` : ''}>Restock</button></td></tr>`,
    )
    .join('') +
  `</tbody></table></main>`

const VARIANTS = [
  ['TS-RED-S', 'Red', 'S'],
  ['TS-RED-M', 'Red', 'M'],
  ['TS-BLU-S', 'Blue', 'S'],
  ['TS-BLU-M', 'Blue', 'M'],
  ['TS-GRN-M', 'Green', 'M'],
]

const invoices = (list, testIds) =>
  `<main><h1>Invoices</h1><table><tbody>` +
  list
    .map(
      (n) =>
        `<tr><td><a href="/inv/${n}">INV-${n}</a></td><td>${(n * 7) % 13}00.00</td><td>Due</td><td><button class="pay"${testIds ? ` data-testid="pay-${n}"` : ''}>Pay</button></td></tr>`,
    )
    .join('') +
  `</tbody></table></main>`

const INVOICES = Array.from({ length: 30 }, (_, i) => 2040 + i)

const form = (lang, submit, cancel, extra = '') =>
  doc(
    'Contact',
    `<main><h1>${lang === 'es' ? 'Contacto' : 'Contact'}</h1><form id="contact"><label>Email <input name="email"></label>` +
      `<button type="button" id="cancel" class="btn">${cancel}</button><button type="submit" id="send" class="btn primary">${submit}</button>${extra}</form></main>`,
    lang,
  )

const docs = (icons) =>
  `<main><h1>Documents</h1><ul>` +
  ['Plan', 'Budget', 'Roadmap']
    .map(
      (d, i) =>
        `<li id="doc-${i + 1}"><span>${d}</span> ` +
        (icons
          ? `<a class="c_${i}x" href="/doc/${i + 1}/edit" aria-label="Edit"><svg width="14" height="14"><use href="#pencil"></use></svg></a>`
          : `<a class="edit-link" href="/doc/${i + 1}/edit">Edit</a>`) +
        `</li>`,
    )
    .join('') +
  `</ul></main>`

/**
 * A second held-out batch, written after the changes for the first one were made and run once as written: a check
 * that those changes generalise to structures they were not developed on.
 */
export const HELD_OUT_2 = [
  {
    id: 'ho2-team-same-role-member-left',
    category: 'duplicate cell values',
    note: 'the name is in <strong>, after a role several members share; a member above left and the ids shifted',
    before: doc(
      'Team',
      team([
        ['Engineer', 'Ana Ruiz'],
        ['Designer', 'Bo Chen'],
        ['Engineer', 'Cy Diaz'],
        ['Engineer', 'Di Ewe'],
      ]),
    ),
    after: doc(
      'Team',
      team([
        ['Designer', 'Bo Chen'],
        ['Engineer', 'Cy Diaz'],
        ['Engineer', 'Di Ewe'],
      ]),
    ),
    locator: [['locator', '#kick-3']],
    expect: '#kick-2',
  },
  {
    id: 'ho2-variants-keyed-by-data-sku',
    category: 'duplicate cell values',
    note: 'colours and sizes repeat, only data-sku identifies a variant; ids dropped and rows re-ordered',
    before: doc('Variants', variants(VARIANTS, true)),
    after: doc('Variants', variants([...VARIANTS].reverse(), false)),
    locator: [['locator', '#restock-2']],
    expect: 'tr[data-sku="TS-RED-M"] button',
  },
  {
    id: 'ho2-locale-es-submit',
    category: 'locale switch',
    note: 'Spanish: Send is Enviar, Cancel is Cancelar; ids unchanged',
    before: form('en', 'Send', 'Cancel'),
    after: form('es', 'Enviar', 'Cancelar'),
    locator: [['getByRole', 'button', { name: 'Send', exact: true }]],
    expect: '#send',
  },
  {
    id: 'ho2-locale-de-other-button-in-place',
    category: 'locale switch',
    note: 'German, and Send is gone: a Löschen (delete) button without its id stands in its place: refuse',
    before: form('en', 'Send', 'Cancel'),
    after: doc(
      'Kontakt',
      '<main><h1>Kontakt</h1><form id="contact"><label>E-Mail <input name="email"></label><button type="button" id="cancel" class="btn">Abbrechen</button><button type="button" id="clear" class="btn danger">Löschen</button></form></main>',
      'de',
    ),
    locator: [['getByRole', 'button', { name: 'Send', exact: true }]],
    expect: 'refuse',
  },
  {
    id: 'ho2-invoices-sorted-by-amount',
    category: 're-sorted table',
    note: '30 invoices, the number in a link; test ids dropped and the table sorted by amount',
    before: doc('Invoices', invoices(INVOICES, true)),
    after: doc(
      'Invoices',
      invoices(
        [...INVOICES].sort((a, b) => ((a * 7) % 13) - ((b * 7) % 13) || a - b),
        false,
      ),
    ),
    locator: [['getByTestId', 'pay-2051']],
    expect: 'tr:has(a[href="/inv/2051"]) button',
  },
  {
    id: 'ho2-checkout-moved-to-bar',
    category: 'moved with look-alike',
    note: 'Checkout moved from the cart sidebar to a bottom bar with its id; an express Checkout took its class in the sidebar',
    before: doc(
      'Cart',
      '<main><h1>Cart</h1><p>2 items</p></main><aside><h2>Summary</h2><p>Total $30</p><button id="checkout" class="checkout-btn">Checkout</button></aside>',
    ),
    after: doc(
      'Cart',
      '<main><h1>Cart</h1><p>2 items</p></main><aside><h2>Summary</h2><p>Total $30</p><button id="express" class="checkout-btn">Checkout</button></aside><div class="bar"><button id="checkout" class="bar-btn">Checkout</button></div>',
    ),
    locator: [['locator', 'aside .checkout-btn']],
    expect: '#checkout',
  },
  {
    id: 'ho2-edit-link-to-icon',
    category: 'icon button with accessible name',
    note: 'Edit links became pencil icons with aria-label="Edit", classes hashed; three look-alike rows',
    before: doc('Documents', docs(false)),
    after: doc('Documents', docs(true)),
    locator: [['locator', '#doc-2 .edit-link']],
    expect: '#doc-2 a',
  },
  {
    id: 'ho2-report-download-gone',
    category: 'many changes',
    note: 'Download report is gone; a Download invoice link and a Print report button are elsewhere: refuse',
    before: doc(
      'Report',
      '<main><h1>Report</h1><div class="actions"><button id="dl-report" class="btn">Download report</button><button id="share" class="btn">Share</button></div></main>',
    ),
    after: doc(
      'Report',
      '<main><h1>Report</h1><section aria-label="Billing"><a href="/invoice.pdf" class="l1">Download invoice</a></section><div class="tools"><button class="t2">Print report</button><button id="share" class="btn">Share</button></div></main>',
    ),
    locator: [['locator', '#dl-report']],
    expect: 'refuse',
  },
]
