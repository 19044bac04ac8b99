"""Scrapy on the synthetic web, with the crawler's politeness (``scrapy_web.py``).

``python bench/web/run_scrapy.py --minutes 4 --hosts 10000`` (after ``make bench-crawl-setup``;
it adds dnspython to ``.bench-venv``). Starts the same nginx and dnsmasq as ``run_web.py``,
runs ``scrapy runspider`` for ``--minutes`` (``CLOSESPIDER_TIMEOUT``) and reports responses/s,
CPU-ms per response (Scrapy's process), nginx's CPU-ms per response, peak RSS and nginx's TLS
connections, to ``bench/out/web/results-scrapy.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import gen_web  # noqa: E402
import services  # noqa: E402

OUT = ROOT / "bench" / "out" / "web"
VENV = ROOT / ".bench-venv"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=4.0)
    ap.add_argument("--hosts", type=int, default=10_000)
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--port", type=int, default=8443)
    ap.add_argument("--dns-port", type=int, default=5353)
    args = ap.parse_args()
    subprocess.run(
        [str(VENV / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
         "dnspython==2.9.2"],
        check=True,
    )  # fmt: skip
    web = OUT / f"web-{args.hosts}x{args.pages}"
    gen_web.generate(web, args.hosts, args.pages, args.port)
    certs = services.make_certificates(OUT / "tls")
    nginx = services.Nginx(OUT / "nginx", web, args.port, certs)
    dnsmasq = services.Dnsmasq(OUT / "dnsmasq", args.dns_port)
    job = OUT / "job-scrapy"
    shutil.rmtree(job, ignore_errors=True)
    job.mkdir(parents=True)
    seeds = job / "seeds.txt"
    seeds.write_text(
        "".join(
            f"https://{gen_web.host_label(i)}.web.test:{args.port}/\n" for i in range(args.hosts)
        )
    )
    argv = [
        str(VENV / "bin" / "scrapy"), "runspider", str(HERE / "scrapy_web.py"),
        "-a", f"starts_file={seeds}", "-a", f"out={job / 'bodies'}",
        "-s", f"CLOSESPIDER_TIMEOUT={int(args.minutes * 60)}",
        # process-level settings (the spider's custom_settings come too late for the reactor)
        "-s", "TWISTED_DNS_RESOLVER=scrapy_web.LocalResolver",
        "-s", "REACTOR_THREADPOOL_MAXSIZE=20",
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(HERE), DNS_SERVER=f"127.0.0.1:{args.dns_port}")
    nginx.start()
    dnsmasq.start()
    peak = 0.0
    try:
        ng0 = nginx.cpu_s()
        started = time.monotonic()
        with (job / "scrapy.log").open("wb") as log:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=job)
        while True:
            pid, _status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            try:
                for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        peak = max(peak, int(line.split()[1]) / 1024)
            except OSError:
                pass
            time.sleep(2)
        wall = time.monotonic() - started
        nginx_cpu = nginx.cpu_s() - ng0
    finally:
        nginx.stop()
        dnsmasq.stop()
    text = (job / "scrapy.log").read_text(errors="replace")
    m = re.findall(r"'downloader/response_count': (\d+)", text)
    responses = int(m[-1]) if m else 0
    cpu = usage.ru_utime + usage.ru_stime
    result = {
        "label": "scrapy",
        "wall_s": round(wall, 1),
        "responses": responses,
        "responses_per_s": round(responses / wall, 1),
        "cpu_ms_per_response": round(1000 * cpu / max(1, responses), 3),
        "nginx_cpu_ms_per_response": round(1000 * nginx_cpu / max(1, responses), 3),
        "peak_rss_mb": round(max(peak, usage.ru_maxrss / 1024), 1),
        "nginx_connections": services.connection_counts(nginx.access_log),
        "load_avg_at_end": os.getloadavg(),
    }
    (OUT / "results-scrapy.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    shutil.rmtree(job / "bodies", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
