// Calls `tick` every `intervalMs` (waiting for the previous call to finish), pauses while the
// tab is hidden, and stops for good on stop().

export function poll(tick, intervalMs) {
  let timer = null, stopped = false;
  const run = async () => {
    timer = null;
    if (stopped) return;
    if (!document.hidden) {
      try { await tick(); } catch (err) { console.warn(err); }
    }
    if (!stopped) timer = setTimeout(run, typeof intervalMs === 'function' ? intervalMs() : intervalMs);
  };
  const wake = () => { if (!document.hidden && timer !== null) { clearTimeout(timer); run(); } };
  document.addEventListener('visibilitychange', wake);
  run();
  return {
    stop() { stopped = true; if (timer !== null) clearTimeout(timer); document.removeEventListener('visibilitychange', wake); },
    now() { if (timer !== null) { clearTimeout(timer); run(); } },
  };
}
