"""Who shares which claims: names, placement by labels, the owners and their walk, the claims each
owner must have, the claims each pod gets, name families, template sources. The webhooks and the
reconciler derive every claim from here."""
