"""The claim reconciler: keeps, for every PodCliqueSet, exactly the shared ResourceClaims its pods
reference (BEHAVIOUR.md §4). Importing the package loads nothing heavy: the command line imports
its settings only."""
