"""Go, as Grove's webhook sees values: decoding into typed structs, ``Semantic.DeepEqual``,
``json.Marshal`` and ``%q`` printing, quantities, ``strconv.Atoi`` and apimachinery's field errors.

The bottom layer of the core: Go's behaviour and Go types described as data (the DRA structs in
``dra``; Grove's own read off the model, ``gotypes.of_model``), and no rule of its own."""
