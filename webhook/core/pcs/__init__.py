"""The validating webhooks: PodCliqueSets (Grove's rules and the checks beyond them) and scales."""
