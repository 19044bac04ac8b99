"""``crawler profile create OUT --url LOGIN_URL --field NAME=VALUE --field-env NAME=VAR ...``:
a browser profile made by a scripted login, for ``browser.profile``.

Chromium loads the login page, the form is filled and submitted
(``processors.browser.profile_login``, loaded by dotted path: the CLI does not import the
processors), and the browser's cookies and localStorage are written to ``OUT`` (Playwright's
storage-state JSON, mode 0600: it holds the session). ``--field-env`` takes a value from an
environment variable, so a password stays out of the shell's history and the process list.
Exit codes: 0 written, 1 the login failed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from pathlib import Path
from typing import TextIO


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``profile`` verb's arguments (``profile create ...``)."""
    verbs = parser.add_subparsers(dest="profile_command", required=True, metavar="ACTION")
    create = verbs.add_parser(
        "create", help="log in with headless Chromium and save its cookies and localStorage"
    )
    create.add_argument("out", type=Path, metavar="OUT", help="the profile file to write (JSON)")
    create.add_argument("--url", required=True, help="the page with the login form")
    create.add_argument(
        "--field",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a form field to fill, e.g. --field user=alice",
    )
    create.add_argument(
        "--field-env",
        action="append",
        default=[],
        metavar="NAME=VAR",
        help="a form field filled from environment variable VAR, e.g. --field-env pass=SITE_PW",
    )
    create.add_argument("--success-regex", help="the page after the login must match this")
    create.add_argument("--failure-regex", help="the login failed if the page matches this")
    create.add_argument(
        "--executable", default="/usr/bin/chromium", help="Chromium binary (default %(default)s)"
    )
    create.add_argument("--timeout-s", type=float, default=60.0, help="time for the login")


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Make the profile (see the module docstring); the exit code."""
    fields: dict[str, str] = {}
    for given in args.field:
        name, sep, value = given.partition("=")
        if not sep or not name:
            print(f"--field {given!r}: expected NAME=VALUE", file=err)
            return 2
        fields[name] = value
    for given in args.field_env:
        name, sep, var = given.partition("=")
        if not sep or not name or not var:
            print(f"--field-env {given!r}: expected NAME=ENVIRONMENT_VARIABLE", file=err)
            return 2
        if var not in os.environ:
            print(f"--field-env {given!r}: environment variable {var} is not set", file=err)
            return 2
        fields[name] = os.environ[var]
    if not args.url.lower().startswith(("http://", "https://")):
        print(f"--url {args.url!r}: not an http(s) URL", file=err)
        return 2
    for option, pattern in (
        ("--success-regex", args.success_regex),
        ("--failure-regex", args.failure_regex),
    ):
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                print(f"{option} {pattern!r}: {exc}", file=err)
                return 2
    if not Path(args.executable).exists():
        print(
            f"--executable {args.executable}: not found (Debian: apt-get install chromium)",
            file=err,
        )
        return 2
    login = importlib.import_module("processors.browser.profile_login")
    profile = importlib.import_module("processors.browser.browser_profile")
    try:
        state = login.make_profile(
            args.executable,
            args.url,
            fields,
            timeout_s=args.timeout_s,
            success_regex=args.success_regex,
            failure_regex=args.failure_regex,
        )
    except login.ProfileLoginError as exc:
        print(str(exc), file=err)
        return 1
    try:
        profile.save_profile(args.out, state)
    except OSError as exc:
        print(f"{args.out}: cannot write: {exc.strerror or exc}", file=err)
        return 2
    cookies, origins = len(state.get("cookies", [])), len(state.get("origins", []))
    print(
        f"profile written: {args.out} ({cookies} cookie(s), localStorage of {origins} origin(s)); "
        "mode 0600: it holds the session, keep it secret",
        file=out,
    )
    return 0
