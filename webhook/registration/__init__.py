"""The release's webhook configurations as objects of the API: their caBundle kept by the
certificate controller, and their removal by ``webhook unregister`` (the chart's pre-delete hook)."""
