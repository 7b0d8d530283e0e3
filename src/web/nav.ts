/** Client-side navigation: a new history entry, then the router draws the page. */
export function navigate(path: string): void {
  history.pushState(null, '', path)
  window.dispatchEvent(new Event('fw:navigate'))
}
