"""The validating webhook's decisions on PodCliqueSets as a ValidatingAdmissionPolicy (CEL the API
server evaluates itself), generated from the rules, texts and Go types the webhook uses.

``command`` assembles and prints the policy from ``decoding`` (what the webhook could not read),
``rules`` (create time and UPDATE) and ``authorization`` (templates of other namespaces), all
written with ``cel``.
"""
