import { maskPans } from '../input-rules';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { html } from './html';
import { languageOf, WORDS } from './i18n';
import { CSS, loginPage, page, type View, viewFor } from './layout';
import { formOf, redirect, sendHtml, sendText } from './respond';
import { postApproveRun, postDraft, RUN_PATH } from './payouts';
import { postJobRun, routePage } from './routes';
import { EXCEPTION_PATH, postBulk, postExceptionAction } from './work';
import type { ConsoleDeps, LoginLimiter, Request } from './types';
import {
  cookiesOf,
  createSession,
  crossSite,
  csrfMatches,
  endSession,
  LANGUAGE_COOKIE,
  overTls,
  type Session,
  SESSION_COOKIE,
  SESSION_HOURS,
  sessionCookie,
  sessionOf,
} from './session';

export type { ConsoleDeps, LoginLimiter, Request } from './types';

/** Failed logins per client address: 5 at once, then one every 12 seconds. */
export const LOGIN_LIMIT = { burst: 5, perSecond: 1 / 12 } as const;

export type ConsoleHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

const htmx = () => {
  const require = createRequire(import.meta.url);
  return readFileSync(require.resolve('htmx.org/dist/htmx.min.js'), 'utf8');
};

export function createConsole(deps: ConsoleDeps): ConsoleHandler {
  const script = htmx();
  const limiter = deps.loginLimiter;
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/console' && !url.pathname.startsWith('/console/')) return false;
    if (url.pathname === '/console/assets/htmx.min.js') {
      sendText(res, 200, script, 'text/javascript; charset=utf-8', 'public, max-age=3600');
      return true;
    }
    if (url.pathname === '/console/assets/console.css') {
      sendText(res, 200, CSS, 'text/css; charset=utf-8', 'public, max-age=3600');
      return true;
    }
    const cookies = cookiesOf(req);
    const r: Request = {
      req,
      res,
      url,
      lang: languageOf(cookies.get(LANGUAGE_COOKIE), req.headers['accept-language']),
      secure: overTls(req, deps.trust),
      sessionId: cookies.get(SESSION_COOKIE),
    };
    if (url.pathname === '/console/login') await login(deps, r, limiter);
    else await signedIn(deps, r);
    return true;
  };
}

async function login(deps: ConsoleDeps, r: Request, limiter: LoginLimiter): Promise<void> {
  const w = WORDS[r.lang];
  if (r.req.method === 'GET' || r.req.method === 'HEAD') return sendHtml(r.res, 200, loginPage(r.lang, null));
  if (r.req.method !== 'POST') return sendHtml(r.res, 405, loginPage(r.lang, null), { allow: 'GET, POST' });
  const client = r.req.socket.remoteAddress ?? 'unknown';
  if (crossSite(r.req)) {
    deps.log.warn('console login from another site refused', { client, origin: r.req.headers.origin ?? null });
    return sendHtml(r.res, 403, loginPage(r.lang, w.csrf));
  }
  if (limiter.exhausted(client)) return sendHtml(r.res, 429, loginPage(r.lang, w.tooMany), { 'retry-after': '60' });
  const form = await formOf(r.req, 4096);
  const token = (form instanceof URLSearchParams && form.get('token')?.trim()) || '';
  const made = token ? await createSession(deps.sql, await deps.directory(), token, deps.auditorToken) : null;
  if (!made) {
    limiter.take(client);
    deps.log.warn('console login refused', { client });
    return sendHtml(r.res, 401, loginPage(r.lang, w.loginFailed));
  }
  deps.log.info('console login', { person: made.session.person.id, role: made.session.person.role });
  redirect(r.res, '/console', { 'set-cookie': sessionCookie(made.id, r.secure, SESSION_HOURS * 3600) });
}

async function currentSession(deps: ConsoleDeps, r: Request): Promise<Session | null> {
  return sessionOf(deps.sql, await deps.directory(), r.sessionId, deps.auditorToken);
}

/** Every other path: a session first (else the login page, or 403 for a POST), then the CSRF check of a POST. */
async function signedIn(deps: ConsoleDeps, r: Request): Promise<void> {
  const w = WORDS[r.lang];
  const session = await currentSession(deps, r);
  const method = r.req.method ?? 'GET';
  if (!session) {
    if (method === 'POST') return sendHtml(r.res, 403, loginPage(r.lang, w.csrf));
    return redirect(r.res, '/console/login');
  }
  const view = viewFor(r.lang, deps.timezone, session.person, session.csrf, r.url.pathname);
  if (method === 'GET' || method === 'HEAD') return routePage(deps, r, view);
  if (method !== 'POST') return sendHtml(r.res, 405, page(view, w.forbidden, html``), { allow: 'GET, POST' });
  const form = await formOf(r.req);
  if (form === 'too_large')
    return sendHtml(r.res, 413, page(view, '413', html`<p role="alert" class="error">${w.tooLarge}</p>`));
  // bytes that are not UTF-8 are refused, not kept as U+FFFD in a note (src/request-body.ts)
  if (form === 'not_utf8')
    return sendHtml(r.res, 400, page(view, '400', html`<p role="alert" class="error">${w.notUtf8}</p>`));
  if (!form || !csrfMatches(form.get('_csrf') ?? undefined, session)) {
    deps.log.warn('console POST without a valid CSRF token refused', {
      person: session.person.id,
      path: r.url.pathname,
    });
    return sendHtml(r.res, 403, page(view, w.forbidden, html`<p role="alert" class="error">${w.csrf}</p>`));
  }
  // a field given twice is not guessed at (the first taken, the second dropped): refused, as the APIs do
  const twice = [...new Set(form.keys())].find((k) => form.getAll(k).length > 1);
  if (twice !== undefined)
    return sendHtml(
      r.res,
      400,
      page(view, '400', html`<p role="alert" class="error">${maskPans(twice)}: give it once</p>`),
    );
  return postAction(deps, r, view, form);
}

async function postAction(deps: ConsoleDeps, r: Request, view: View, form: URLSearchParams): Promise<void> {
  const path = r.url.pathname;
  if (path === '/console/logout') {
    await endSession(deps.sql, r.sessionId);
    return redirect(r.res, '/console/login', { 'set-cookie': sessionCookie('', r.secure, 0) });
  }
  if (path === '/console/language') {
    const lang = form.get('lang') === 'uk' ? 'uk' : 'en';
    const back = form.get('back') ?? '/console';
    const safe = /^\/console(\/[A-Za-z0-9/_%.-]*)?$/.test(back) ? back : '/console';
    const cookie = `${LANGUAGE_COOKIE}=${lang}; Path=/console; SameSite=Strict; Max-Age=31536000${r.secure ? '; Secure' : ''}`;
    return redirect(r.res, safe, { 'set-cookie': cookie });
  }
  if (path === '/console/jobs/run') return postJobRun(deps, r, view, form);
  if (path === '/console/exceptions/bulk') return postBulk(deps, r, view, form);
  const x = EXCEPTION_PATH.exec(path);
  if (x?.[2]) return postExceptionAction(deps, r, view, x[1]!, x[2], form);
  if (path === '/console/payout-runs/draft') return postDraft(deps, r, view, form);
  const run = RUN_PATH.exec(path);
  if (run?.[2] === 'approve') return postApproveRun(deps, r, view, run[1]!);
  sendHtml(r.res, 404, page(view, '404', html``));
}
