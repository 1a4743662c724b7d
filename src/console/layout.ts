import type { Person } from '../people/directory';
import { type Html, html } from './html';
import { type Language, type Words, WORDS } from './i18n';

/** What every page is drawn with: the language, its words, the zone, who is looking, their session's CSRF token. */
export interface View {
  readonly lang: Language;
  readonly w: Words;
  readonly zone: string;
  readonly person: Person;
  readonly csrf: string;
  /** the path of the page (for the current link and the language switch's return) */
  readonly path: string;
}

export const viewFor = (lang: Language, zone: string, person: Person, csrf: string, path: string): View => ({
  lang,
  w: WORDS[lang],
  zone,
  person,
  csrf,
  path,
});

/** The hidden field every POST form carries (docs/console.md, "CSRF"). */
export const csrfField = (v: View) => html`<input type="hidden" name="_csrf" value="${v.csrf}">`;

const NAV = [
  ['/console', 'overview'],
  ['/console/exceptions', 'exceptions'],
  ['/console/sub-merchants', 'subMerchants'],
  ['/console/statements', 'statements'],
  ['/console/payout-runs', 'payoutRuns'],
  ['/console/jobs', 'jobs'],
] as const;

function head(title: string, lang: Language): Html {
  return html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowScriptTags":false,"allowEval":false,"responseHandling":[{"code":"204","swap":false},{"code":"[2345]..","swap":true}]}'>
<title>${title}</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/htmx.min.js" defer></script>
</head>`;
}

function languageSwitch(v: View): Html {
  const other: Language = v.lang === 'uk' ? 'en' : 'uk';
  return html`<form method="post" action="/console/language" class="inline">
${csrfField(v)}<input type="hidden" name="lang" value="${other}"><input type="hidden" name="back" value="${v.path}">
<button type="submit" lang="${other}">${other === 'uk' ? 'Українська' : 'English'}</button></form>`;
}

/** A signed-in page: navigation, who is signed in, the language switch, logout, and the content. */
export function page(v: View, title: string, content: Html): Html {
  const nav = NAV.map(
    ([href, key]) =>
      html`<li><a href="${href}"${v.path === href ? html` aria-current="page"` : ''}>${v.w[key]}</a></li>`,
  );
  return html`${head(`${title} · ${v.w.title}`, v.lang)}
<body hx-boost="true">
<a class="skip" href="#main">${v.w.skip}</a>
<header>
<nav aria-label="${v.w.title}"><ul>${nav}</ul></nav>
<div class="who"><span>${v.w.signedInAs} <strong>${v.person.name}</strong> (${v.person.role})</span>
${languageSwitch(v)}
<form method="post" action="/console/logout" class="inline">${csrfField(v)}<button type="submit">${v.w.logout}</button></form>
</div>
</header>
<main id="main">
<h1>${title}</h1>
${content}
</main>
</body>
</html>`;
}

/** The login page (no session yet: no navigation). */
export function loginPage(lang: Language, message: string | null): Html {
  const w = WORDS[lang];
  return html`${head(`${w.login} · ${w.title}`, lang)}
<body>
<main id="main" class="login">
<h1>${w.title}</h1>
${message ? html`<p role="alert" class="error">${message}</p>` : ''}
<form method="post" action="/console/login">
<label for="token">${w.token}</label>
<input id="token" name="token" type="password" autocomplete="off" required maxlength="200">
<p class="hint">${w.loginHint}</p>
<button type="submit">${w.login}</button>
</form>
</main>
</body>
</html>`;
}

/** A table: headers, rows of cells; cells that are money get the `num` class (right-aligned). */
export function table(caption: string, headers: readonly string[], rows: readonly Html[], empty: string): Html {
  if (rows.length === 0) return html`<section><h2>${caption}</h2><p>${empty}</p></section>`;
  return html`<section><h2>${caption}</h2><table><thead><tr>${headers.map(
    (h) => html`<th scope="col">${h}</th>`,
  )}</tr></thead><tbody>${rows}</tbody></table></section>`;
}

export const CSS = `
:root{font-family:system-ui,sans-serif;color:#1a1a1a;background:#fff}
body{margin:0}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1.5rem}
dl.facts dt{font-weight:600}
dl.facts dd{margin:0}
form.action,form.bulk{display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-end;margin:.75rem 0;padding:.5rem 0;border-top:1px solid #ddd}
form.action label,form.bulk label{display:flex;flex-direction:column;gap:.2rem}
header{display:flex;justify-content:space-between;align-items:center;flex-wrap:wrap;background:#14325c;color:#fff;padding:.4rem 1rem}
header a{color:#fff}
nav ul{list-style:none;display:flex;gap:1rem;margin:0;padding:0}
nav a[aria-current=page]{font-weight:bold;text-decoration:underline}
.who{display:flex;gap:.6rem;align-items:center}
.inline{display:inline}
main{padding:1rem 1.5rem;max-width:90rem}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.92rem}
th,td{border:1px solid #b7bfc9;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f5}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.text{max-width:28rem;overflow-wrap:anywhere;unicode-bidi:isolate}
.skip{position:absolute;left:-999px}
.skip:focus{left:1rem;top:1rem;background:#fff;color:#000;padding:.3rem}
button,input,select{font:inherit}
button{background:#14325c;color:#fff;border:1px solid #14325c;padding:.2rem .7rem;cursor:pointer}
header button{background:#fff;color:#14325c}
a:focus,button:focus,input:focus,select:focus{outline:3px solid #f0a500;outline-offset:1px}
.filters{display:flex;flex-wrap:wrap;gap:.6rem;align-items:end}
.filters label{display:flex;flex-direction:column;font-size:.85rem}
.error{color:#a00000;font-weight:bold}
.notice{background:#fff7d6;border:1px solid #c9a400;padding:.4rem .6rem}
.login{max-width:32rem;margin:4rem auto}
.login input{width:100%}
.hint{font-size:.85rem;color:#444}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.8rem;max-width:60rem}
`;
