"""Property-based tests: no input makes the webhooks answer 500, raise, hang or corrupt a pod."""
