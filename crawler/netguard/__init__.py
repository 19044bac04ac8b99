"""netguard: which addresses a crawl may connect to (no fetch into private networks).

:func:`nonpublic_reason` classifies an address; :class:`AddressPolicy` adds what the order and
its seeds allow. FetchHTTP's socket layer, the PreconditionEnforcer and the browser's
sub-resource fetches all ask the same policy (``ProcessorContext.addresses``).
"""

from crawler.netguard.address_class import embedded_ipv4, nonpublic_reason, parse_address
from crawler.netguard.address_policy import (
    REFUSAL_NOTE,
    AddressPolicy,
    AddressRefusedError,
    host_of_surt_prefix,
    parse_networks,
)

__all__ = [
    "REFUSAL_NOTE",
    "AddressPolicy",
    "AddressRefusedError",
    "embedded_ipv4",
    "host_of_surt_prefix",
    "nonpublic_reason",
    "parse_address",
    "parse_networks",
]
