"""Deciding and writing: one reconcile of one PodCliqueSet, owner by owner: ensure each owner's claims
(create, adopt), clean up stale ones, read templates, write Events, account for what was done."""
