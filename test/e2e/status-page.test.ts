/**
 * The status page in a real browser: Debian's headless Chromium driven by playwright-core,
 * against the real server with real traffic. The numbers the page shows equal the `/metrics`
 * exposition at the same moment; a chart's last point moves with more traffic; a SIGKILLed
 * worker shows as gone, then ready again; the page works with JavaScript off; no request leaves
 * the machine. Screenshots at 360 and 1440 px, light and dark, go to test-results/status-page/
 * (not committed).
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { ROOT, call, generateStore, haveBinary, mlpInput, post, sample, scrape, startTsserve } from './harness.js';
import type { Tsserve } from './harness.js';
import { until } from '../support/until.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.join(ROOT, 'test-results', 'status-page');

/** Requests the page made to anything but loopback (each was aborted). */
const outside: string[] = [];

async function open(browser: Browser, url: string, opts: Parameters<Browser['newPage']>[0] = {}): Promise<Page> {
  const page = await browser.newPage(opts);
  await page.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.hostname === '127.0.0.1' || u.hostname === 'localhost') return route.continue();
    outside.push(u.toString());
    return route.abort();
  });
  await page.goto(url);
  return page;
}

const cellText = (page: Page, p: string): Promise<string> =>
  page.locator(`[data-path="${p}"]`).innerText({ timeout: 10_000 });

describe('the status page (real server, headless Chromium)', function () {
  this.timeout(180_000);
  let server: Tsserve;
  let browser: Browser;

  before(async function () {
    if (!fs.existsSync(CHROMIUM) || !haveBinary(CHROMIUM)) {
      console.log('SKIPPED: chromium not found — install the Debian package `chromium` (apt-get install -y chromium)');
      this.skip();
    }
    server = await startTsserve({ store: generateStore(['mlp']), args: ['--models', 'mlp=mlp'] });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
    fs.mkdirSync(SHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    server?.kill();
  });

  it('should show the requests, workers and queue /metrics and the management API show at the same moment', async () => {
    for (let i = 0; i < 5; i++)
      expect((await post(`${server.inference}/predictions/mlp`, mlpInput(i))).status).to.equal(200);
    const page = await open(browser, `${server.management}/`);
    const want = String(
      sample(
        await scrape(server),
        'ts_inference_requests_total{model_name="mlp",model_version="default",hostname="' +
          hostname(await scrape(server)) +
          '"}',
      ),
    );
    await until(async () => (await cellText(page, 'models/mlp/requests')) === want || null, {
      message: `the page's mlp requests to read ${want}`,
      observe: () => cellText(page, 'models/mlp/requests'),
    });
    const described = (await call('GET', `${server.management}/models/mlp`)).json as Array<{
      workers: Array<{ id: string; pid: number; status: string }>;
      jobQueueStatus: { remainingCapacity: number; pendingRequests: number };
    }>;
    const w = described[0]!.workers[0]!;
    expect(await cellText(page, 'models/mlp/workers')).to.match(
      new RegExp(`^${w.id} pid ${w.pid} READY \\d+(m \\d+)?s$`),
    );
    expect(await cellText(page, 'models/mlp/queue')).to.equal(
      `${described[0]!.jobQueueStatus.pendingRequests} / ${described[0]!.jobQueueStatus.remainingCapacity}`,
    );
    expect(await cellText(page, 'models/mlp/restarts')).to.equal('0');
    await page.close();
  });

  it("should move the requests/s chart's last point to a non-zero rate while traffic is sent", async () => {
    const page = await open(browser, `${server.management}/`);
    const line = (): Promise<string> => page.locator('svg[data-chart="requestsPerS"]').innerHTML();
    await until(async () => (await line()).includes('polyline') || null, { message: 'a drawn requests/s line' });
    const before = await line();
    // Traffic goes on (a request each probe, at most one per 50 ms) until the page shows a non-zero
    // last point: one burst makes a single second's point, which a loaded machine's 1 s poll can miss.
    let sent = 0;
    await until(
      async () => {
        await post(`${server.inference}/predictions/mlp`, mlpInput(sent++));
        const t = await page.locator('output[data-chart-last="requestsPerS"]').innerText();
        return (await line()) !== before && t !== '0 req/s' && t !== '–' ? t : null;
      },
      { message: 'the chart to move while requests are sent', observe: () => `${sent} requests sent` },
    );
    await page.close();
  });

  it('should show a SIGKILLed worker gone, counted as a restart, then ready again', async () => {
    const page = await open(browser, `${server.management}/`);
    const described = (await call('GET', `${server.management}/models/mlp`)).json as Array<{
      workers: Array<{ pid: number }>;
    }>;
    const pid = described[0]!.workers[0]!.pid;
    process.kill(pid, 'SIGKILL');
    await until(async () => (await cellText(page, 'models/mlp/restarts')) === '1' || null, {
      message: 'restarts 1 on the page',
      observe: () => cellText(page, 'models/mlp/workers'),
    });
    await until(
      async () => {
        const t = await cellText(page, 'models/mlp/workers');
        return /READY/.test(t) && !t.includes(`pid ${pid} `) ? t : null;
      },
      { message: 'a new READY worker on the page', timeoutMs: 60_000 },
    );
    await page.close();
  });

  it('should be the whole table with JavaScript off, and reachable by keyboard', async () => {
    const ctx = await browser.newContext({ javaScriptEnabled: false });
    const page = await ctx.newPage();
    await page.goto(`${server.management}/`);
    expect(await page.locator('h1').innerText()).to.equal('tsserve status');
    expect(await page.locator('caption').first().innerText()).to.match(/^Every registered model/);
    expect(await cellText(page, 'models/mlp/name')).to.equal('mlp');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).to.equal('Skip to the figures');
    await ctx.close();
  });

  it('should render at 360 and 1440 px in light and dark without a horizontal page scroll, screenshots saved', async () => {
    for (const width of [360, 1440])
      for (const colorScheme of ['light', 'dark'] as const) {
        const page = await open(browser, `${server.management}/`, { viewport: { width, height: 900 }, colorScheme });
        await until(async () => (await page.locator('html').getAttribute('data-updated')) ?? null, {
          message: 'a first refresh from /status.json',
        });
        const scroll = await page.evaluate(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        );
        expect(scroll, `${width} px ${colorScheme}`).to.equal(0);
        await page.screenshot({ path: path.join(SHOTS, `status-${width}-${colorScheme}.png`), fullPage: true });
        await page.close();
      }
  });

  it('should have made no request to anything but loopback', () => {
    expect(outside).to.deep.equal([]);
  });
});

/** The hostname label the server puts on its series. */
function hostname(text: string): string {
  return /ts_inference_requests_total\{[^}]*hostname="([^"]*)"/.exec(text)?.[1] ?? '';
}
