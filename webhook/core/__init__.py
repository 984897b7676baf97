"""The pure core: models, validation rules, claim naming and derivation, patch building.

Nothing here imports a web framework, a server or the Kubernetes client; the shells around it do.
"""
