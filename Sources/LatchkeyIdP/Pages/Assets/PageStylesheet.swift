/// The one stylesheet of the browser pages (``PagePath/stylesheet``): system fonts only,
/// readable from a phone to a desktop, visible keyboard focus, and colours that keep
/// WCAG 2.2 AA contrast (1.4.3) in light and dark schemes.
enum PageStylesheet {
    static let source = #"""
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #f6f7f9; --card: #ffffff; --muted: #4a5360;
        --accent: #1f5fbf; --accent-fg: #ffffff; --error: #a4161a; --border: #c9ced6; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e8eaed; --bg: #14171b; --card: #1d2127; --muted: #b4bcc8; --accent: #8ab4f8;
          --accent-fg: #0b1320; --error: #ff8a80; --border: #3c434d; }
}
* { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; font-size: 100%; line-height: 1.5; }
body { margin: 0; color: var(--fg); background: var(--bg); }
header { padding: 0.75rem 1rem; border-bottom: 1px solid var(--border); }
.provider { margin: 0; font-weight: 600; }
main { max-width: 28rem; margin: 2rem auto; padding: 1.5rem; background: var(--card); border: 1px solid var(--border); border-radius: 0.75rem; }
@media (max-width: 30rem) { main { margin: 0; border-radius: 0; border-width: 0 0 1px 0; } }
h1 { font-size: 1.5rem; line-height: 1.25; margin: 0 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; margin: 1rem 0 0.5rem; }
p, dd { overflow-wrap: anywhere; }
.field { margin: 0 0 1rem; }
.field label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
.field.check { display: flex; gap: 0.5rem; align-items: center; }
.field.check label { display: inline; margin: 0; }
input[type=text], input[type=email], input:not([type]) { width: 100%; font: inherit; padding: 0.6rem 0.7rem; color: var(--fg);
  background: var(--bg); border: 1px solid var(--border); border-radius: 0.5rem; }
button { font: inherit; font-weight: 600; padding: 0.65rem 1.1rem; border-radius: 0.5rem; border: 1px solid var(--accent);
  background: var(--accent); color: var(--accent-fg); cursor: pointer; min-height: 2.75rem; }
button.secondary { background: transparent; color: var(--accent); }
button:disabled { opacity: 0.6; cursor: progress; }
.actions { display: flex; flex-wrap: wrap; gap: 0.75rem; margin-top: 1rem; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.status { color: var(--muted); min-height: 1.5em; }
.error { color: var(--error); font-weight: 600; }
.hint { color: var(--muted); font-size: 0.95rem; }
#step-form p { white-space: pre-line; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; unicode-bidi: isolate; }
a { color: var(--accent); }
.warning { border-left: 4px solid var(--error); padding-left: 0.75rem; }
[hidden] { display: none !important; }
"""#
}
