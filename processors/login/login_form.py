"""LoginForm: the HTML forms of a login page, and the one submission a browser would make.

:func:`find_forms` reads every ``<form>`` of a page with the standard library's HTML parser
(a login page is one small page per host, off the hot path): its action, method and the
name/value pairs a browser sends — ``input`` values (hidden ones too, i.e. CSRF tokens; checked
checkboxes and radios only; not file/reset/image inputs), ``textarea`` contents, each ``select``'s
selected (else first) option — plus its first named submit button. :func:`choose_form` picks the
login form and :func:`build_submission` fills the credential's fields in. Pure, thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

_NO_VALUE_TYPES = frozenset({"file", "reset", "image"})
_BUTTON_TYPES = frozenset({"submit", "button", "image", "reset"})


@dataclass
class LoginForm:
    """One form of a page. ``fields`` in document order; ``submit`` the first named submit."""

    action: str
    method: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    has_password: bool = False
    submit: tuple[str, str] | None = None

    def names(self) -> set[str]:
        """The field names of the form."""
        return {name for name, _ in self.fields}


@dataclass(frozen=True)
class Submission:
    """The request that submits a form: ``uri`` (with the query for GET), method and body."""

    uri: str
    method: str
    body: str
    content_type: str


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[LoginForm] = []
        self._form: LoginForm | None = None
        self._select: str | None = None
        self._select_value: str | None = None
        self._first_option: str | None = None
        self._textarea: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "form":
            self._form = LoginForm(a.get("action", ""), (a.get("method") or "get").upper())
            self.forms.append(self._form)
            return
        form = self._form
        if form is None:
            return
        name = a.get("name", "")
        kind = a.get("type", "text").lower()
        if tag == "input":
            if kind == "password":
                form.has_password = True
            if kind in _BUTTON_TYPES:
                if kind == "submit" and name and form.submit is None:
                    form.submit = (name, a.get("value", ""))
                return
            if not name or kind in _NO_VALUE_TYPES:
                return
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    form.fields.append((name, a.get("value", "on")))
                return
            form.fields.append((name, a.get("value", "")))
        elif tag == "button" and kind == "submit" and name and form.submit is None:
            form.submit = (name, a.get("value", ""))
        elif tag == "select" and name:
            self._select, self._select_value, self._first_option = name, None, None
        elif tag == "option" and self._select is not None:
            value = a.get("value", "")
            if self._first_option is None:
                self._first_option = value
            if "selected" in a and self._select_value is None:
                self._select_value = value
        elif tag == "textarea" and name:
            self._textarea, self._text = name, []

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        form = self._form
        if form is None:
            return
        if tag == "select" and self._select is not None:
            value = self._select_value if self._select_value is not None else self._first_option
            if value is not None:
                form.fields.append((self._select, value))
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            form.fields.append((self._textarea, "".join(self._text)))
            self._textarea = None
        elif tag == "form":
            self._form = None


def find_forms(html: str) -> list[LoginForm]:
    """Every form of ``html``, in document order."""
    parser = _FormParser()
    parser.feed(html)
    parser.close()
    return parser.forms


def choose_form(forms: list[LoginForm], wanted: set[str]) -> LoginForm | None:
    """The form holding the most of the ``wanted`` field names; among equals (or when none
    has any), the first with a password input, else the first form; None if no form."""
    if not forms:
        return None
    return max(forms, key=lambda f: (len(f.names() & wanted), f.has_password, -forms.index(f)))


def build_submission(
    page_uri: str,
    form: LoginForm | None,
    values: dict[str, str],
    action: str | None = None,
    method: str | None = None,
) -> Submission:
    """The submission of ``form`` (read from ``page_uri``) with ``values`` set over its own
    fields; without a form only ``values`` go to ``action`` (or ``page_uri``) by POST."""
    pairs: list[tuple[str, str]] = []
    if form is not None:
        set_names: set[str] = set()
        for name, value in form.fields:
            if name in values:
                if name not in set_names:
                    pairs.append((name, values[name]))
                    set_names.add(name)
                continue
            pairs.append((name, value))
        pairs += [(n, v) for n, v in values.items() if n not in set_names]
        if form.submit is not None and form.submit[0] not in values:
            pairs.append(form.submit)
        target = action if action is not None else form.action
        verb = method or form.method
    else:
        pairs = list(values.items())
        target = action if action is not None else page_uri
        verb = method or "POST"
    uri = urljoin(page_uri, target or page_uri)
    uri = urlunsplit(urlsplit(uri)._replace(fragment=""))
    body = urlencode(pairs)
    if verb == "GET":
        parts = urlsplit(uri)
        return Submission(urlunsplit(parts._replace(query=body)), "GET", "", "")
    return Submission(uri, "POST", body, "application/x-www-form-urlencoded")
