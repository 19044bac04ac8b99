"""Behaviours: the scripts run in a loaded page to make it fetch what a reader would see, and
the script that lists the rendered DOM's links.

- :data:`SCROLL_JS` scrolls to the bottom and returns the document height: repeated until the
  height stops growing (infinite scroll, lazy images) or ``max_scrolls``.
- :data:`CLICK_MORE_JS` clicks a visible element (each at most five times) that loads more
  content in place — a button (or ``role=button``, or a link to ``#``/``javascript:``) whose text says
  "more" — and returns whether it clicked. Links to other pages are never clicked (they are
  outlinks, not behaviours).
- :data:`AUTOPLAY_JS` mutes and plays every ``video``/``audio`` element (loading one whose
  ``preload`` held it back), so the page requests its media; returns how many it started.
  :data:`PAUSE_MEDIA_JS` pauses them again once their requests were made.
- :data:`EXPAND_JS` opens what a reader would open in place, each element once: closed
  ``details``, elements with ``aria-expanded=false``, unselected ``role=tab``; returns how many it
  opened. A link to another page is never clicked.
- :data:`TEXT_JS` returns the rendered page's visible text (``innerText`` of the body).
- :data:`LINKS_JS` returns ``[url, hop, context]`` for the rendered DOM: ``a``/``area`` hrefs
  (L), frames and iframes, images (``src`` and every ``srcset`` candidate), scripts, media,
  ``embed``/``object`` and stylesheet/icon/preload links (E); other ``link`` hrefs (L).

Pure data: thread-safe.
"""

# ruff: noqa: E501  (the page scripts below are JavaScript, kept as written)
from __future__ import annotations

SCROLL_JS = """() => {
  const el = document.scrollingElement || document.documentElement;
  window.scrollTo(0, el.scrollHeight);
  return el.scrollHeight;
}"""

FITS_JS = """() => {
  const el = document.scrollingElement || document.documentElement;
  return el.scrollHeight <= window.innerHeight + 2;
}"""
"""True when the page fits in the viewport: there is nothing to scroll to."""

CLICK_MORE_JS = r"""() => {
  const words = /^\s*(load|show|see|view|read)?\s*more\b|\bmore\s*(results|items|posts|stories)?\s*$/i;
  const nodes = document.querySelectorAll('button, [role=button], input[type=button], a');
  for (const el of nodes) {
    const clicks = Number(el.dataset.crawlerClicks || 0);
    if (clicks >= 5) continue;
    const text = (el.innerText || el.value || '').trim();
    if (!text || text.length > 40 || !words.test(text)) continue;
    if (el.tagName === 'A') {
      const href = (el.getAttribute('href') || '').trim();
      if (href && href !== '#' && !href.toLowerCase().startsWith('javascript:')) continue;
    }
    if (el.disabled || !(el.offsetWidth || el.offsetHeight || el.getClientRects().length)) continue;
    el.dataset.crawlerClicks = String(clicks + 1);
    el.click();
    return true;
  }
  return false;
}"""

LINKS_JS = r"""() => {
  const out = [];
  const add = (u, hop, ctx) => { if (u && typeof u === 'string') out.push([u, hop, ctx]); };
  const abs = (u) => { try { return new URL(u, document.baseURI).href; } catch (e) { return ''; } };
  for (const a of document.querySelectorAll('a[href], area[href]')) add(a.href, 'L', a.localName + '/@href');
  for (const f of document.querySelectorAll('iframe[src], frame[src]')) add(f.src, 'E', f.localName + '/@src');
  for (const i of document.querySelectorAll('img[src], video[src], audio[src], source[src], embed[src], input[type=image][src]'))
    add(i.src, 'E', i.localName + '/@src');
  for (const v of document.querySelectorAll('video[poster]')) add(abs(v.getAttribute('poster')), 'E', 'video/@poster');
  for (const o of document.querySelectorAll('object[data]')) add(o.data, 'E', 'object/@data');
  for (const s of document.querySelectorAll('script[src]')) add(s.src, 'E', 'script/@src');
  for (const s of document.querySelectorAll('[srcset]')) {
    for (const part of (s.getAttribute('srcset') || '').split(',')) {
      const u = part.trim().split(/\s+/)[0];
      if (u) add(abs(u), 'E', s.localName + '/@srcset');
    }
  }
  for (const l of document.querySelectorAll('link[href]')) {
    const rel = (l.rel || '').toLowerCase();
    const embed = /stylesheet|icon|preload|modulepreload|manifest/.test(rel);
    add(l.href, embed ? 'E' : 'L', 'link/@href');
  }
  return out;
}"""

AUTOPLAY_JS = """() => {
  let started = 0;
  for (const m of document.querySelectorAll('video, audio')) {
    if (m.dataset.crawlerPlayed) continue;
    m.dataset.crawlerPlayed = '1';
    m.muted = true;
    if (m.preload === 'none') m.preload = 'auto';
    try {
      const p = m.play();
      if (p && p.catch) p.catch(() => {});
      started += 1;
    } catch (e) { /* a broken element is skipped */ }
  }
  return started;
}"""

PAUSE_MEDIA_JS = """() => {
  for (const m of document.querySelectorAll('video, audio')) { try { m.pause(); } catch (e) {} }
}"""

EXPAND_JS = r"""() => {
  const visible = (el) => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  const leaves = (el) => {
    const a = el.closest('a[href]');
    if (!a) return false;
    const href = (a.getAttribute('href') || '').trim().toLowerCase();
    return !!href && !href.startsWith('#') && !href.startsWith('javascript:');
  };
  let opened = 0;
  for (const d of document.querySelectorAll('details:not([open])')) {
    if (d.dataset.crawlerOpened) continue;
    d.dataset.crawlerOpened = '1';
    d.open = true;
    opened += 1;
  }
  const targets = document.querySelectorAll(
    '[aria-expanded=false], [role=tab]:not([aria-selected=true])');
  for (const el of targets) {
    if (el.dataset.crawlerOpened || el.disabled || !visible(el) || leaves(el)) continue;
    el.dataset.crawlerOpened = '1';
    try { el.click(); opened += 1; } catch (e) { /* a handler that throws opens nothing */ }
  }
  return opened;
}"""

TEXT_JS = """() => (document.body ? document.body.innerText : '') || ''"""
