"""Who shares which claims: names, owners, placement, the claims owners and pods get, name families.
The webhooks and the reconciler derive every claim from here."""
