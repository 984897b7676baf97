"""The validating webhook for PodCliqueSets: Grove's create-time rules, its immutability rules on
UPDATE, the checks beyond Grove (warnings), and the handler that applies them."""
