// A custom browser behaviour (browser.behaviours: [path/to/this.js], relative to the order).
//
// The file holds one function expression. It runs in every page the browser loads, after the
// built-in behaviours, and is awaited: the page is done with it when its promise settles, or
// after browser.behaviour_timeout_s (then the crawl.log line says behaviour:<file name>:timeout;
// an exception says behaviour:<file name>:error). Requests it causes are captured like any of
// the page's; links it reveals become outlinks.
//
// ctx.url                       the page's URL
// await ctx.sleep(ms)
// await ctx.scrollToBottom()    scroll to the end of the document, wait a moment
// await ctx.click(elOrSelector) click it; false if absent, hidden or a link to another page
// await ctx.clickAll(selector, limit = 50)   click each match once; how many were clicked
//
// This one opens the comment threads of a page and loads each "older comments" page.
async (ctx) => {
  await ctx.clickAll('button.show-comments, .comments summary');
  for (let i = 0; i < 10; i++) {
    if (!(await ctx.click('button.older-comments'))) break;
    await ctx.sleep(500);
  }
}
