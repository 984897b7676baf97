"""The reconciler's view of the cluster: informers of PodCliqueSets, their children and their claims,
the index from each object to its PodCliqueSet, compact claim records, which children are current,
and the live reads of owners that decisions the caches must not make alone rest on."""
