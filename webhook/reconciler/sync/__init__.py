"""Deciding and writing: one reconcile of one PodCliqueSet, owner by owner."""
