"""The validating webhook's decisions on PodCliqueSets as a ValidatingAdmissionPolicy (CEL the API
server evaluates itself), generated from the rules, texts and Go types the webhook uses.

``manifest`` assembles the policy from ``rules`` (create time), ``immutability`` (UPDATE),
``decoding`` (what the webhook could not read) and ``authorization`` (templates of other
namespaces), written with ``cel`` and ``gotypes``; ``command`` prints it.
"""
