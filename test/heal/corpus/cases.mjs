// The heal corpus: before/after page pairs of real-world UI changes, each with the element a heal must reach in
// the "after" page (a CSS selector only the scorer's judge uses, never the healer) or "refuse". Hand-written after
// the kinds of change seen in real front-end history: renamed and generated ids, hashed classes, dropped test ids,
// tag swaps, copy edits, wrappers, moves, reorders, repeated rows, responsive duplicates, icon-only controls,
// big pages, removals that leave a look-alike, and locators that still resolve but to another element.
// Plain JavaScript so that the bench (bench/heal-corpus.mjs) and the test (corpus.test.ts) share it.

/** A page with a little layout, so that boxes and visibility are real. */
const doc = (title, body, style = '') => `<!doctype html><html><head><title>${title}</title><style>
body { font-family: sans-serif; margin: 16px; } button, a, input { margin: 4px; } .card { border: 1px solid #ccc; padding: 8px; margin: 8px; width: 300px; display: inline-block; vertical-align: top; }
.mobile { display: none; } table { border-collapse: collapse; } td, th { padding: 4px 8px; } ${style}
</style></head><body>${body}</body></html>`

const header = (extra = '') =>
  `<header><nav aria-label="Main"><a href="#home" id="nav-home">Home</a><a href="#orders" id="nav-orders">Orders</a>` +
  `<a href="#help" id="nav-help">Help</a>${extra}</nav></header>`

const users = (names, button = (n, i) => `<button class="remove" id="remove-${i + 1}">Remove</button>`) =>
  `<table><thead><tr><th>Name</th><th>Email</th><th>Role</th><th></th></tr></thead><tbody>` +
  names
    .map(
      (n, i) =>
        `<tr><td>${n}</td><td>${n.toLowerCase()}@example.com</td><td>${i % 2 ? 'Admin' : 'Member'}</td><td>${button(n, i)}</td></tr>`,
    )
    .join('') +
  `</tbody></table>`

const settingsForm = (save) =>
  `<main><h1>Settings</h1><form id="settings" class="panel"><label for="display">Display name</label>` +
  `<input id="display" name="display"><label for="tz">Time zone</label><select id="tz" name="tz"><option>UTC</option></select>` +
  `<div class="actions"><button type="button" class="btn">Cancel</button>${save}</div></form></main>`

const product = (name, sku, addAttrs = `id="add-${sku}"`) =>
  `<div class="card product"><h3>${name}</h3><p class="price">$12.00</p><button class="add" ${addAttrs}>Add to cart</button>` +
  `<button class="wish">Add to wishlist</button></div>`

const bigRows = (n, target, targetButton) => {
  const rows = []
  for (let i = 0; i < n; i++) {
    const inv = `INV-${String(i).padStart(4, '0')}`
    const approve = i === target ? targetButton : `<button class="approve">Approve</button>`
    rows.push(
      `<tr><td>${inv}</td><td><a href="#${inv}">Open</a></td><td><span class="amount">${i * 3}.00</span></td>` +
        `<td>${approve}<button class="reject">Reject</button></td></tr>`,
    )
  }
  return `<main><h1>Invoices</h1><table><tbody>${rows.join('')}</tbody></table></main>`
}

const fields = (labels) =>
  `<main><h1>Profile</h1><form id="profile">` +
  labels
    .map(
      (l, i) =>
        `<label for="field-${i + 1}">${l}</label><input id="field-${i + 1}" name="${l.toLowerCase().replace(/ /g, '_')}">`,
    )
    .join('') +
  `<button type="submit">Save profile</button></form></main>`

const tabs = (names) =>
  `<main><h1>Account</h1><div role="tablist">` +
  names.map((n, i) => `<button role="tab" id="tab-${i + 1}" aria-selected="${i === 0}">${n}</button>`).join('') +
  `</div><section role="tabpanel">Panel</section></main>`

const toolbar = (buttons) =>
  `<div class="toolbar" role="toolbar">${buttons.join('')}</div><div contenteditable="true">Text</div>`

const iconButtons = (trash) =>
  `<main><h1>Files</h1><ul class="files"><li><span>report.pdf</span>` +
  `<button class="icon-btn" aria-label="Edit"><svg width="16" height="16"><use href="#icon-pencil"></use></svg></button>` +
  `<button class="icon-btn" aria-label="Share"><svg width="16" height="16"><use href="#icon-share"></use></svg></button>` +
  `${trash}</li></ul></main>`

/** @typedef {Array<[string, ...unknown[]]>} Steps */
/**
 * @typedef {{ id: string, category: string, note: string, before: string, after: string, locator: Steps,
 *   expect: string }} HealCase
 */

/** @type {HealCase[]} */
export const CASES = [
  // ── ids renamed ────────────────────────────────────────────────────────────────────────────────────────
  {
    id: 'id-renamed-save',
    category: 'id renamed',
    note: 'save-settings became settings-save',
    before: doc('Settings', settingsForm('<button type="submit" id="save-settings" class="btn primary">Save</button>')),
    after: doc('Settings', settingsForm('<button type="submit" id="settings-save" class="btn primary">Save</button>')),
    locator: [['locator', '#save-settings']],
    expect: '#settings-save',
  },
  {
    id: 'id-renamed-nav-link',
    category: 'id renamed',
    note: 'nav-orders became menu-orders among look-alike nav links',
    before: doc('Home', header() + '<main><h1>Welcome</h1></main>'),
    after: doc('Home', header().replace('id="nav-orders"', 'id="menu-orders"') + '<main><h1>Welcome</h1></main>'),
    locator: [['locator', '#nav-orders']],
    expect: '#menu-orders',
  },
  {
    id: 'id-renamed-input',
    category: 'id renamed',
    note: 'username input id prefixed',
    before: doc(
      'Log in',
      '<main><h1>Log in</h1><form id="login"><label for="username">Username</label><input id="username" name="username"><label for="password">Password</label><input id="password" type="password" name="password"><button type="submit">Log in</button></form></main>',
    ),
    after: doc(
      'Log in',
      '<main><h1>Log in</h1><form id="login"><label for="login-username">Username</label><input id="login-username" name="username"><label for="login-password">Password</label><input id="login-password" type="password" name="password"><button type="submit">Log in</button></form></main>',
    ),
    locator: [['locator', '#username']],
    expect: '#login-username',
  },
  // ── generated ids shift (the locator still resolves, to another element) ─────────────────────────────
  {
    id: 'generated-id-shift-input',
    category: 'silent mis-resolution',
    note: 'a field inserted first: #field-3 is now Last name, Email moved to #field-4',
    before: doc('Profile', fields(['First name', 'Last name', 'Email'])),
    after: doc('Profile', fields(['Title', 'First name', 'Last name', 'Email'])),
    locator: [['locator', '#field-3']],
    expect: '#field-4',
  },
  {
    id: 'generated-id-shift-menu',
    category: 'silent mis-resolution',
    note: 'menu items numbered: #menu-item-2 was Rename, now Duplicate',
    before: doc(
      'Menu',
      '<main><h1>Project</h1><ul role="menu"><li role="menuitem" id="menu-item-1">Open</li><li role="menuitem" id="menu-item-2">Rename</li><li role="menuitem" id="menu-item-3">Delete</li></ul></main>',
    ),
    after: doc(
      'Menu',
      '<main><h1>Project</h1><ul role="menu"><li role="menuitem" id="menu-item-1">Open</li><li role="menuitem" id="menu-item-2">Duplicate</li><li role="menuitem" id="menu-item-3">Rename</li><li role="menuitem" id="menu-item-4">Delete</li></ul></main>',
    ),
    locator: [['locator', '#menu-item-2']],
    expect: '#menu-item-3',
  },
  // ── classes ────────────────────────────────────────────────────────────────────────────────────────────
  {
    id: 'hashed-class-css-modules',
    category: 'hashed or renamed classes',
    note: 'CSS-modules hash changed on rebuild',
    before: doc(
      'Log in',
      '<main><h1>Log in</h1><form><input name="email" placeholder="Email"><button class="Button_primary__x7Hq2" type="submit">Sign in</button><button class="Button_link__p0Qa1" type="button">Forgot password?</button></form></main>',
    ),
    after: doc(
      'Log in',
      '<main><h1>Log in</h1><form><input name="email" placeholder="Email"><button class="Button_primary__9kLm1" type="submit">Sign in</button><button class="Button_link__Zz81c" type="button">Forgot password?</button></form></main>',
    ),
    locator: [['locator', '.Button_primary__x7Hq2']],
    expect: 'button[type=submit]',
  },
  {
    id: 'hashed-class-css-in-js',
    category: 'hashed or renamed classes',
    note: 'emotion class names regenerated',
    before: doc(
      'Checkout',
      '<main><h1>Shipping</h1><div class="css-1q2w3e"><button class="css-a1b2c3">Back</button><button class="css-4r5t6y">Continue</button></div></main>',
    ),
    after: doc(
      'Checkout',
      '<main><h1>Shipping</h1><div class="css-8u7y6t"><button class="css-z9y8x7">Back</button><button class="css-0p9o8i">Continue</button></div></main>',
    ),
    locator: [['locator', '.css-4r5t6y']],
    expect: 'button.css-0p9o8i',
  },
  {
    id: 'renamed-class-bem',
    category: 'hashed or renamed classes',
    note: 'btn-submit became button--primary',
    before: doc(
      'Contact',
      '<main><h1>Contact us</h1><form class="contact"><textarea name="message"></textarea><button class="btn-submit" type="submit">Send message</button></form></main>',
    ),
    after: doc(
      'Contact',
      '<main><h1>Contact us</h1><form class="contact"><textarea name="message"></textarea><button class="button button--primary" type="submit">Send message</button></form></main>',
    ),
    locator: [['locator', 'form.contact .btn-submit']],
    expect: 'form.contact button',
  },
  // ── test ids ───────────────────────────────────────────────────────────────────────────────────────────
  {
    id: 'testid-removed',
    category: 'test id removed or renamed',
    note: 'data-testid dropped in a refactor; wishlist button is a look-alike',
    before: doc('Mug', `<main><h1>Blue mug</h1>${product('Blue mug', 'mug', 'data-testid="add-to-cart"')}</main>`),
    after: doc('Mug', `<main><h1>Blue mug</h1>${product('Blue mug', 'mug', '')}</main>`),
    locator: [['getByTestId', 'add-to-cart']],
    expect: 'button.add',
  },
  {
    id: 'testid-renamed',
    category: 'test id removed or renamed',
    note: 'user-menu became account-menu',
    before: doc(
      'App',
      header('<button data-testid="user-menu" class="avatar">Account</button>') + '<main><h1>Dashboard</h1></main>',
    ),
    after: doc(
      'App',
      header('<button data-testid="account-menu" class="avatar">Account</button>') + '<main><h1>Dashboard</h1></main>',
    ),
    locator: [['getByTestId', 'user-menu']],
    expect: '[data-testid=account-menu]',
  },
  // ── tags ───────────────────────────────────────────────────────────────────────────────────────────────
  {
    id: 'tag-a-to-button',
    category: 'tag change',
    note: 'an anchor styled as a button became a real button',
    before: doc(
      'Reports',
      '<main><h1>Reports</h1><div class="bar"><a href="#" class="btn export">Export</a><a href="#" class="btn">Print</a></div></main>',
    ),
    after: doc(
      'Reports',
      '<main><h1>Reports</h1><div class="bar"><button class="btn export">Export</button><button class="btn">Print</button></div></main>',
    ),
    locator: [['locator', 'a.export']],
    expect: 'button.export',
  },
  {
    id: 'tag-div-role-to-button',
    category: 'tag change',
    note: 'div role=button chip became a button',
    before: doc(
      'Search',
      '<main><h1>Results</h1><div role="button" tabindex="0" class="chip">Filters</div><div role="button" tabindex="0" class="chip">Sort</div></main>',
    ),
    after: doc(
      'Search',
      '<main><h1>Results</h1><button class="chip">Filters</button><button class="chip">Sort</button></main>',
    ),
    locator: [['locator', 'div.chip'], ['first']],
    expect: 'button.chip',
  },
  // ── text ───────────────────────────────────────────────────────────────────────────────────────────────
  {
    id: 'text-copy-edit',
    category: 'text change',
    note: 'Place order became Place your order',
    before: doc(
      'Checkout',
      '<main><h1>Checkout</h1><form id="checkout"><button type="button">Cancel</button><button type="submit" class="primary">Place order</button></form></main>',
    ),
    after: doc(
      'Checkout',
      '<main><h1>Checkout</h1><form id="checkout"><button type="button">Cancel</button><button type="submit" class="primary">Place your order</button></form></main>',
    ),
    locator: [['getByRole', 'button', { name: 'Place order', exact: true }]],
    expect: 'button.primary',
  },
  {
    id: 'text-synonym',
    category: 'text change',
    note: 'Log in became Sign in',
    before: doc(
      'Home',
      '<header><a href="#pricing">Pricing</a><a href="#login" class="cta">Log in</a><a href="#signup" class="cta">Sign up</a></header><main><h1>Welcome</h1></main>',
    ),
    after: doc(
      'Home',
      '<header><a href="#pricing">Pricing</a><a href="#login" class="cta">Sign in</a><a href="#signup" class="cta">Sign up</a></header><main><h1>Welcome</h1></main>',
    ),
    locator: [['getByText', 'Log in', { exact: true }]],
    expect: 'a[href="#login"]',
  },
  // ── wrappers, moves, reorders ──────────────────────────────────────────────────────────────────────────
  {
    id: 'wrapper-tooltip',
    category: 'wrapper',
    note: 'a tooltip wrapper broke a child combinator',
    before: doc(
      'Editor',
      '<main><h1>Draft</h1><div class="toolbar"><button class="save">Save draft</button><button class="publish">Publish</button></div></main>',
    ),
    after: doc(
      'Editor',
      '<main><h1>Draft</h1><div class="toolbar"><button class="save">Save draft</button><span class="tooltip-wrapper" title="Publish now"><button class="publish">Publish</button></span></div></main>',
    ),
    locator: [['locator', '.toolbar > button.publish']],
    expect: 'button.publish',
  },
  {
    id: 'wrapper-input-group',
    category: 'wrapper',
    note: 'an input group around the handle field',
    before: doc(
      'Sign up',
      '<main><h1>Sign up</h1><form id="signup"><label for="handle">Handle</label><input id="handle" name="handle"><label for="bio">Bio</label><input id="bio" name="bio"></form></main>',
    ),
    after: doc(
      'Sign up',
      '<main><h1>Sign up</h1><form id="signup"><label for="handle">Handle</label><div class="input-group"><span>@</span><input id="handle-input" name="handle"></div><label for="bio">Bio</label><input id="bio" name="bio"></form></main>',
    ),
    locator: [['locator', 'form > input[name=handle]']],
    expect: 'input[name=handle]',
  },
  {
    id: 'moved-to-danger-zone',
    category: 'move',
    note: 'Delete project moved from the footer into a danger-zone section',
    before: doc(
      'Project',
      '<main id="settings"><h1>Project settings</h1><label>Name <input name="name"></label><div class="footer"><button class="secondary">Archive project</button><button class="danger">Delete project</button></div></main>',
    ),
    after: doc(
      'Project',
      '<main id="settings"><h1>Project settings</h1><label>Name <input name="name"></label><div class="footer"><button class="secondary">Archive project</button></div><section class="danger-zone"><h2>Danger zone</h2><p>This cannot be undone.</p><button class="danger">Delete project</button></section></main>',
    ),
    locator: [['locator', '#settings > .footer > button.danger']],
    expect: 'section button.danger',
  },
  {
    id: 'moved-search-to-header',
    category: 'move',
    note: 'search box moved from the sidebar to the header',
    before: doc(
      'Docs',
      '<header><a href="#">Docs</a></header><aside><input type="search" name="q" placeholder="Search docs"></aside><main><h1>Guide</h1></main>',
    ),
    after: doc(
      'Docs',
      '<header><a href="#">Docs</a><input type="search" name="q" placeholder="Search docs"></header><aside></aside><main><h1>Guide</h1></main>',
    ),
    locator: [['locator', 'aside input[type=search]']],
    expect: 'header input',
  },
  {
    id: 'reorder-toolbar-nth',
    category: 'sibling reorder',
    note: 'Italic moved from second to third: nth-child(2) now finds Bold',
    before: doc(
      'Editor',
      toolbar([
        '<button class="fmt" aria-label="Bold">B</button>',
        '<button class="fmt" aria-label="Italic">I</button>',
        '<button class="fmt" aria-label="Underline">U</button>',
      ]),
    ),
    after: doc(
      'Editor',
      toolbar([
        '<button class="fmt" aria-label="Underline">U</button>',
        '<button class="fmt" aria-label="Bold">B</button>',
        '<button class="fmt" aria-label="Italic">I</button>',
      ]),
    ),
    locator: [['locator', '.toolbar button:nth-child(2)']],
    expect: '[aria-label=Italic]',
  },
  {
    id: 'reorder-dialog-actions',
    category: 'sibling reorder',
    note: 'Save and Cancel swapped: first-child now finds Cancel',
    before: doc(
      'Edit',
      '<dialog open aria-label="Edit name"><input name="name"><div class="actions"><button class="btn">Save</button><button class="btn">Cancel</button></div></dialog>',
    ),
    after: doc(
      'Edit',
      '<dialog open aria-label="Edit name"><input name="name"><div class="actions"><button class="btn">Cancel</button><button class="btn">Save</button></div></dialog>',
    ),
    locator: [['locator', 'div.actions > button:first-child']],
    expect: 'div.actions > button:last-child',
  },
  // ── decoys ─────────────────────────────────────────────────────────────────────────────────────────────
  {
    id: 'decoy-two-searches',
    category: 'decoy',
    note: 'a site search and a table filter; the filter lost its id',
    before: doc(
      'Orders',
      '<header><input type="search" placeholder="Search" name="site-q"></header><main><h1>Orders</h1><section aria-label="Orders table"><input type="search" id="table-filter" placeholder="Search" name="filter"><table><tr><td>#1</td></tr></table></section></main>',
    ),
    after: doc(
      'Orders',
      '<header><input type="search" placeholder="Search" name="site-q"></header><main><h1>Orders</h1><section aria-label="Orders table"><input type="search" placeholder="Search" name="filter"><table><tr><td>#1</td></tr></table></section></main>',
    ),
    locator: [['locator', '#table-filter']],
    expect: 'section input',
  },
  {
    id: 'decoy-two-save-panels',
    category: 'decoy',
    note: 'two Save buttons, profile and password panels; ids removed',
    before: doc(
      'Account',
      '<main><h1>Account</h1><form id="profile-form"><h2>Profile</h2><input name="name"><button id="profile-save">Save</button></form><form id="password-form"><h2>Password</h2><input type="password" name="pw"><button id="password-save">Save</button></form></main>',
    ),
    after: doc(
      'Account',
      '<main><h1>Account</h1><form id="profile-form"><h2>Profile</h2><input name="name"><button>Save</button></form><form id="password-form"><h2>Password</h2><input type="password" name="pw"><button>Save</button></form></main>',
    ),
    locator: [['locator', '#profile-save']],
    expect: '#profile-form button',
  },
  // ── repeated rows and cards ────────────────────────────────────────────────────────────────────────────
  {
    id: 'repeated-rows-ids-dropped',
    category: 'repeated rows',
    note: 'row ids dropped: five identical Remove buttons, told apart by the name cell',
    before: doc('Users', `<main><h1>Users</h1>${users(['Alice', 'Bob', 'Carol', 'Dave', 'Erin'])}</main>`),
    after: doc(
      'Users',
      `<main><h1>Users</h1>${users(['Alice', 'Bob', 'Carol', 'Dave', 'Erin'], () => '<button class="remove">Remove</button>')}</main>`,
    ),
    locator: [['locator', '#remove-3']],
    expect: 'tr:nth-child(3) button',
  },
  {
    id: 'repeated-todo-testids-dropped',
    category: 'repeated rows',
    note: 'todo items lost their test ids',
    before: doc(
      'Todos',
      '<main><h1>Todos</h1><ul>' +
        ['Buy milk', 'Call mum', 'Pay rent', 'Water plants']
          .map(
            (t, i) =>
              `<li><span>${t}</span><button data-testid="edit-todo-${i}" class="edit">Edit</button><button class="del">Delete</button></li>`,
          )
          .join('') +
        '</ul></main>',
    ),
    after: doc(
      'Todos',
      '<main><h1>Todos</h1><ul>' +
        ['Buy milk', 'Call mum', 'Pay rent', 'Water plants']
          .map((t) => `<li><span>${t}</span><button class="edit">Edit</button><button class="del">Delete</button></li>`)
          .join('') +
        '</ul></main>',
    ),
    locator: [['getByTestId', 'edit-todo-2']],
    expect: 'li:nth-child(3) button.edit',
  },
  {
    id: 'repeated-cards-ids-dropped',
    category: 'repeated rows',
    note: 'product grid: Add to cart ids dropped',
    before: doc(
      'Shop',
      `<main><h1>Mugs</h1>${product('Red mug', 'red')}${product('Blue mug', 'blue')}${product('Green mug', 'green')}</main>`,
    ),
    after: doc(
      'Shop',
      `<main><h1>Mugs</h1>${product('Red mug', 'red', '')}${product('Blue mug', 'blue', '')}${product('Green mug', 'green', '')}</main>`,
    ),
    locator: [['locator', '#add-blue']],
    expect: '.product:nth-of-type(2) button.add',
  },
  // ── hidden responsive duplicates ───────────────────────────────────────────────────────────────────────
  {
    id: 'hidden-duplicate-nav',
    category: 'hidden duplicate',
    note: 'desktop and hidden mobile nav; ids removed from both',
    before: doc(
      'Home',
      '<nav class="desktop"><a href="#features">Features</a><a href="#pricing" id="nav-pricing">Pricing</a></nav><nav class="mobile"><a href="#features">Features</a><a href="#pricing" id="m-nav-pricing">Pricing</a></nav><main><h1>Home</h1></main>',
    ),
    after: doc(
      'Home',
      '<nav class="desktop"><a href="#features">Features</a><a href="#pricing">Pricing</a></nav><nav class="mobile"><a href="#features">Features</a><a href="#pricing">Pricing</a></nav><main><h1>Home</h1></main>',
    ),
    locator: [['locator', '#nav-pricing']],
    expect: 'nav.desktop a[href="#pricing"]',
  },
  {
    id: 'hidden-duplicate-cta',
    category: 'hidden duplicate',
    note: 'Sign up CTA renamed test id in the header and in a hidden drawer copy rendered first',
    before: doc(
      'Home',
      '<div class="mobile drawer"><a class="cta" data-testid="m-signup" href="#signup">Sign up</a></div><header><a href="#login">Log in</a><a class="cta" data-testid="signup-cta" href="#signup">Sign up</a></header><main><h1>Home</h1></main>',
    ),
    after: doc(
      'Home',
      '<div class="mobile drawer"><a class="cta" data-testid="cta-signup" href="#signup">Sign up</a></div><header><a href="#login">Log in</a><a class="cta" data-testid="cta-signup" href="#signup">Sign up</a></header><main><h1>Home</h1></main>',
    ),
    locator: [['getByTestId', 'signup-cta']],
    expect: 'header a.cta',
  },
  // ── icon-only controls ─────────────────────────────────────────────────────────────────────────────────
  {
    id: 'icon-only-svg-use',
    category: 'icon-only button',
    note: 'trash button lost its aria-label; only the svg sprite names it',
    before: doc(
      'Files',
      iconButtons(
        '<button class="icon-btn" aria-label="Delete"><svg width="16" height="16"><use href="#icon-trash"></use></svg></button>',
      ),
    ),
    after: doc(
      'Files',
      iconButtons(
        '<button class="icon-btn danger"><svg width="16" height="16"><use href="#icon-trash"></use></svg></button>',
      ),
    ),
    locator: [['getByRole', 'button', { name: 'Delete' }]],
    expect: 'button.danger',
  },
  {
    id: 'icon-only-font-awesome',
    category: 'icon-only button',
    note: 'font awesome 4 to 6: fa-pencil became fa-pen-to-square, id dropped',
    before: doc(
      'Post',
      '<main><h1>Post</h1><div class="actions"><button id="edit-btn" class="btn-icon"><i class="fa fa-pencil"></i></button><button class="btn-icon"><i class="fa fa-trash"></i></button><button class="btn-icon"><i class="fa fa-share"></i></button></div></main>',
    ),
    after: doc(
      'Post',
      '<main><h1>Post</h1><div class="actions"><button class="btn-icon"><i class="fa-solid fa-pen-to-square"></i></button><button class="btn-icon"><i class="fa-solid fa-trash"></i></button><button class="btn-icon"><i class="fa-solid fa-share"></i></button></div></main>',
    ),
    locator: [['locator', '#edit-btn']],
    expect: '.actions button:first-child',
  },
  {
    id: 'icon-only-title',
    category: 'icon-only button',
    note: 'gear link known by its title; id renamed',
    before: doc(
      'App',
      '<header><a href="#">Home</a><a href="#settings" id="settings-link" title="Settings" class="icon"><svg width="16" height="16"><circle r="6" cx="8" cy="8"></circle></svg></a><a href="#help" title="Help" class="icon"><svg width="16" height="16"><rect width="12" height="12"></rect></svg></a></header>',
    ),
    after: doc(
      'App',
      '<header><a href="#">Home</a><a href="#settings" id="nav-settings" title="Settings" class="icon"><svg width="16" height="16"><circle r="6" cx="8" cy="8"></circle></svg></a><a href="#help" title="Help" class="icon"><svg width="16" height="16"><rect width="12" height="12"></rect></svg></a></header>',
    ),
    locator: [['locator', '#settings-link']],
    expect: '#nav-settings',
  },
  // ── big pages ──────────────────────────────────────────────────────────────────────────────────────────
  {
    id: 'big-page-3k-row-approve',
    category: 'big page',
    note: '600 invoice rows (about 3,600 elements); the Approve of INV-0420 lost its id',
    before: doc('Invoices', bigRows(600, 420, '<button class="approve" id="approve-420">Approve</button>')),
    after: doc('Invoices', bigRows(600, 420, '<button class="approve">Approve</button>')),
    locator: [['locator', '#approve-420']],
    expect: 'tbody tr:nth-child(421) button.approve',
  },
  {
    id: 'big-page-5k-id-renamed',
    category: 'big page',
    note: '830 rows (about 5,000 elements); a toolbar button id renamed',
    before: doc(
      'Invoices',
      '<div class="bar"><button id="bulk-approve">Approve selected</button><button>Reject selected</button></div>' +
        bigRows(830, -1, ''),
    ),
    after: doc(
      'Invoices',
      '<div class="bar"><button id="approve-selected">Approve selected</button><button>Reject selected</button></div>' +
        bigRows(830, -1, ''),
    ),
    locator: [['locator', '#bulk-approve']],
    expect: '#approve-selected',
  },
  // ── removed, a single look-alike left: must refuse ─────────────────────────────────────────────────────
  {
    id: 'removed-delete-deactivate',
    category: 'removed, single look-alike',
    note: 'Delete account removed; Deactivate account looks the same',
    before: doc(
      'Account',
      '<main><h1>Account</h1><section class="danger"><h2>Danger zone</h2><button class="btn danger" id="delete-account">Delete account</button><button class="btn danger" id="deactivate-account">Deactivate account</button></section></main>',
    ),
    after: doc(
      'Account',
      '<main><h1>Account</h1><section class="danger"><h2>Danger zone</h2><button class="btn danger" id="deactivate-account">Deactivate account</button></section></main>',
    ),
    locator: [['locator', '#delete-account']],
    expect: 'refuse',
  },
  {
    id: 'removed-other-form-submit',
    category: 'removed, single look-alike',
    note: "the newsletter form's Submit removed; the contact form's Submit remains",
    before: doc(
      'Footer',
      '<main><h1>Contact</h1><form id="contact"><h2>Write to us</h2><textarea name="msg"></textarea><button type="submit" class="btn">Submit</button></form><form id="newsletter"><h2>Newsletter</h2><input name="email"><button type="submit" class="btn" id="newsletter-submit">Submit</button></form></main>',
    ),
    after: doc(
      'Footer',
      '<main><h1>Contact</h1><form id="contact"><h2>Write to us</h2><textarea name="msg"></textarea><button type="submit" class="btn">Submit</button></form><form id="newsletter"><h2>Newsletter</h2><input name="email"></form></main>',
    ),
    locator: [['locator', '#newsletter-submit']],
    expect: 'refuse',
  },
  {
    id: 'removed-export-csv',
    category: 'removed, single look-alike',
    note: 'Export CSV removed; Export PDF remains',
    before: doc(
      'Reports',
      '<main><h1>Reports</h1><div class="bar"><button class="btn export" id="export-csv">Export CSV</button><button class="btn export">Export PDF</button></div></main>',
    ),
    after: doc(
      'Reports',
      '<main><h1>Reports</h1><div class="bar"><button class="btn export">Export PDF</button></div></main>',
    ),
    locator: [['locator', '#export-csv']],
    expect: 'refuse',
  },
  {
    id: 'removed-row',
    category: 'removed, single look-alike',
    note: "Alice's row removed; Bob's Remove is identical",
    before: doc('Users', `<main><h1>Users</h1>${users(['Alice', 'Bob'])}</main>`),
    after: doc(
      'Users',
      `<main><h1>Users</h1>${users(['Bob'], () => '<button class="remove" id="remove-2">Remove</button>')}</main>`,
    ),
    locator: [['locator', '#remove-1']],
    expect: 'refuse',
  },
  {
    id: 'removed-approve-reject',
    category: 'removed, single look-alike',
    note: 'Approve removed from a review; Reject remains',
    before: doc(
      'Review',
      '<main><h1>Pull request</h1><div class="review"><button class="btn" id="approve">Approve</button><button class="btn">Reject</button></div></main>',
    ),
    after: doc(
      'Review',
      '<main><h1>Pull request</h1><div class="review"><button class="btn">Reject</button></div></main>',
    ),
    locator: [['locator', '#approve']],
    expect: 'refuse',
  },
  {
    id: 'removed-sso-provider',
    category: 'removed, single look-alike',
    note: 'Sign in with Google removed; Sign in with GitHub remains',
    before: doc(
      'Log in',
      '<main><h1>Log in</h1><div class="sso"><button class="sso-btn" id="sso-google">Sign in with Google</button><button class="sso-btn">Sign in with GitHub</button></div></main>',
    ),
    after: doc(
      'Log in',
      '<main><h1>Log in</h1><div class="sso"><button class="sso-btn">Sign in with GitHub</button></div></main>',
    ),
    locator: [['locator', '#sso-google']],
    expect: 'refuse',
  },
  {
    id: 'removed-coupon-field',
    category: 'removed, single look-alike',
    note: 'Coupon code field removed; Gift card field remains',
    before: doc(
      'Cart',
      '<main><h1>Cart</h1><form id="cart"><label for="coupon">Coupon code</label><input id="coupon" name="coupon" class="code"><label for="gift">Gift card</label><input id="gift" name="gift" class="code"></form></main>',
    ),
    after: doc(
      'Cart',
      '<main><h1>Cart</h1><form id="cart"><label for="gift">Gift card</label><input id="gift" name="gift" class="code"></form></main>',
    ),
    locator: [['locator', '#coupon']],
    expect: 'refuse',
  },
  {
    id: 'removed-policy-link',
    category: 'removed, single look-alike',
    note: 'Privacy policy link removed; Cookie policy remains',
    before: doc(
      'Home',
      '<main><h1>Home</h1></main><footer><a href="#privacy" id="privacy">Privacy policy</a><a href="#cookies">Cookie policy</a></footer>',
    ),
    after: doc('Home', '<main><h1>Home</h1></main><footer><a href="#cookies">Cookie policy</a></footer>'),
    locator: [['locator', '#privacy']],
    expect: 'refuse',
  },
  {
    id: 'removed-nothing-alike',
    category: 'removed',
    note: 'the promo banner button removed entirely',
    before: doc(
      'Home',
      '<div class="promo"><p>50% off</p><button id="claim">Claim offer</button></div><main><h1>Home</h1><a href="#shop">Shop</a></main>',
    ),
    after: doc('Home', '<main><h1>Home</h1><a href="#shop">Shop</a></main>'),
    locator: [['locator', '#claim']],
    expect: 'refuse',
  },
  // ── silent mis-resolution ──────────────────────────────────────────────────────────────────────────────
  {
    id: 'misresolved-tab-moved',
    category: 'silent mis-resolution',
    note: '#tab-2 was Billing; tabs reordered, Billing is #tab-3',
    before: doc('Account', tabs(['Profile', 'Billing', 'Security'])),
    after: doc('Account', tabs(['Profile', 'Shipping', 'Billing', 'Security'])),
    locator: [['locator', '#tab-2']],
    expect: '#tab-3',
  },
  {
    id: 'misresolved-row-shift',
    category: 'silent mis-resolution',
    note: "a row inserted on top: the second row's Remove now belongs to Alice, not Bob",
    before: doc(
      'Users',
      `<main><h1>Users</h1>${users(['Alice', 'Bob', 'Carol'], () => '<button class="remove">Remove</button>')}</main>`,
    ),
    after: doc(
      'Users',
      `<main><h1>Users</h1>${users(['Aaron', 'Alice', 'Bob', 'Carol'], () => '<button class="remove">Remove</button>')}</main>`,
    ),
    locator: [['locator', 'tbody tr:nth-child(2) button.remove']],
    expect: 'tbody tr:nth-child(3) button.remove',
  },
  {
    id: 'misresolved-first-card',
    category: 'silent mis-resolution',
    note: 'sort order changed: the first card is no longer the Blue mug',
    before: doc('Shop', `<main><h1>Mugs</h1>${product('Blue mug', 'blue', '')}${product('Red mug', 'red', '')}</main>`),
    after: doc('Shop', `<main><h1>Mugs</h1>${product('Red mug', 'red', '')}${product('Blue mug', 'blue', '')}</main>`),
    locator: [['locator', '.product button.add'], ['first']],
    expect: '.product:nth-of-type(2) button.add',
  },
  {
    id: 'misresolved-no-alternative',
    category: 'silent mis-resolution',
    note: '#primary-action was Delete project; now it is Duplicate project and Delete is gone',
    before: doc(
      'Project',
      '<main><h1>Project</h1><button id="primary-action" class="btn">Delete project</button><button class="btn">Rename project</button></main>',
    ),
    after: doc(
      'Project',
      '<main><h1>Project</h1><button id="primary-action" class="btn">Duplicate project</button><button class="btn">Rename project</button></main>',
    ),
    locator: [['locator', '#primary-action']],
    expect: 'refuse',
  },
  // ── nothing to heal: the right element, found as written ───────────────────────────────────────────────
  {
    id: 'unchanged-dynamic-text',
    category: 'unchanged',
    note: 'a cart counter whose text changes every run must not be taken for another element',
    before: doc(
      'Shop',
      '<header><a href="#cart" id="cart-count" class="badge">3 items</a><a href="#account">Account</a></header><main><h1>Shop</h1></main>',
    ),
    after: doc(
      'Shop',
      '<header><a href="#cart" id="cart-count" class="badge">5 items</a><a href="#account">Account</a></header><main><h1>Shop</h1></main>',
    ),
    locator: [['locator', '#cart-count']],
    expect: '#cart-count',
  },
  {
    id: 'unchanged-layout-shift',
    category: 'unchanged',
    note: 'a banner pushed everything down; the locator still finds the right button',
    before: doc('Checkout', '<main><h1>Checkout</h1><button id="pay" class="primary">Pay now</button></main>'),
    after: doc(
      'Checkout',
      '<div style="height: 120px">Free shipping this week</div><main><h1>Checkout</h1><button id="pay" class="primary">Pay now</button></main>',
    ),
    locator: [['locator', '#pay']],
    expect: '#pay',
  },
]
