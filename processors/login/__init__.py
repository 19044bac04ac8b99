"""Form logins: a host's HTML login form submitted once, before its other URIs are fetched."""

from processors.login.form_credential import FormCredential
from processors.login.form_login import FormLogin

__all__ = ["FormCredential", "FormLogin"]
